//! `okb completions` and `okb man`: shell completion scripts and a man page, generated
//! from the same command-line definition that parses the arguments.

use std::io::Write;

use miette::IntoDiagnostic;

/// Arguments of `okb completions`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    ///
    ///   okb completions bash > ~/.local/share/bash-completion/completions/okb
    ///   okb completions zsh > "${fpath[1]}/_okb"
    ///   okb completions fish > ~/.config/fish/completions/okb.fish
    #[arg(value_enum, verbatim_doc_comment)]
    pub shell: clap_complete::Shell,
}

/// Prints the completion script for `command` (okb's whole command line).
pub fn completions(args: &CompletionsArgs, command: &mut clap::Command) -> miette::Result<()> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, command, "okb", &mut out);
    std::io::stdout().write_all(&out).into_diagnostic()
}

/// Prints the man page (roff) of `command`: `okb man > okb.1; man ./okb.1`.
pub fn man(command: clap::Command) -> miette::Result<()> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command).render(&mut out).into_diagnostic()?;
    std::io::stdout().write_all(&out).into_diagnostic()
}
