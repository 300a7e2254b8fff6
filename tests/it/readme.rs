//! The README and the guide tell the truth: their ```console transcripts run as tests,
//! README.md first and then docs/ in the order of docs/SUMMARY.md, in one fresh project
//! beside `../shared` (the repository's pipeline.toml, collections, pinned evaluations,
//! check snapshots and release script), and each command's output must match what the
//! page prints. Every other transcript is marked as an illustration (```text), and the
//! command table of docs/commands.md is checked against `--help`.
//!
//! Expected output is stdout and stderr together, as a terminal shows them. Elisions,
//! as in trycmd: a line `...` stands for any number of lines (none included), `[..]`
//! inside a line for any text in that line (timings, paths). A block preceded by
//! `<!-- readme-test: any-order -->` matches its lines in any order (a make prints steps
//! as they finish, which varies from run to run). A command must exit 0; a transcript
//! that shows a failure says so with `; echo "exit status $?"`.

use std::path::{Path, PathBuf};
use std::process::Command;

const ANY_ORDER: &str = "<!-- readme-test: any-order -->";

/// A page of the docs: its path from the repository's root, and its text.
struct Page {
    path: String,
    text: String,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> Page {
    let text = std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    Page { path: path.to_string(), text }
}

/// Every `.md` file under `dir`, as paths from the repository's root.
fn markdown_under(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path: PathBuf = entry.unwrap().path();
        if path.is_dir() {
            markdown_under(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path.strip_prefix(root()).unwrap().to_string_lossy().into_owned());
        }
    }
}

/// README.md, then the chapters of docs/ in the order docs/SUMMARY.md links them (each
/// once), then SUMMARY.md itself. A page of docs/ that SUMMARY.md does not link is an
/// error: its transcripts would run in no defined order.
fn pages() -> Vec<Page> {
    let summary = read("docs/SUMMARY.md");
    let mut order: Vec<String> = Vec::new();
    for link in summary.text.split("](").skip(1).filter_map(|rest| rest.split(')').next()) {
        let path = format!("docs/{}", link.split('#').next().unwrap());
        if path.ends_with(".md") && !order.contains(&path) {
            order.push(path);
        }
    }
    let mut on_disk = Vec::new();
    markdown_under(&root().join("docs"), &mut on_disk);
    on_disk.sort();
    let unlisted: Vec<&String> =
        on_disk.iter().filter(|p| !order.contains(p) && *p != "docs/SUMMARY.md").collect();
    assert!(unlisted.is_empty(), "docs/SUMMARY.md does not link {unlisted:?}");
    let missing: Vec<&String> = order.iter().filter(|p| !on_disk.contains(p)).collect();
    assert!(missing.is_empty(), "docs/SUMMARY.md links pages that do not exist: {missing:?}");
    let mut pages = vec![read("README.md")];
    pages.extend(order.iter().map(|p| read(p)));
    pages.push(summary);
    pages
}

/// One command of a transcript and the output its page shows for it.
#[derive(Debug)]
struct Step {
    /// The page (its path from the repository's root).
    file: String,
    /// The page's line of the `$ ` line (1-based).
    line: usize,
    command: String,
    expected: Vec<String>,
    any_order: bool,
}

/// A fenced block: its info string, first line (1-based) and lines.
struct Block {
    info: String,
    line: usize,
    lines: Vec<String>,
    any_order: bool,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    let mut previous = "";
    for (i, line) in text.lines().enumerate() {
        match open.take() {
            Some(block) if line.trim_start().starts_with("```") => out.push(block),
            Some(mut block) => {
                block.lines.push(line.to_string());
                open = Some(block);
            }
            None if line.trim_start().starts_with("```") => {
                let info = line.trim_start().trim_start_matches('`').trim().to_string();
                open = Some(Block {
                    info,
                    line: i + 2,
                    lines: Vec::new(),
                    any_order: previous.trim() == ANY_ORDER,
                });
            }
            None => {}
        }
        if !line.trim().is_empty() {
            previous = line;
        }
    }
    out
}

/// The commands of a page's ```console blocks, in order.
fn steps(page: &Page) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for block in blocks(&page.text).into_iter().filter(|b| b.info == "console") {
        let first = steps.len();
        for (i, line) in block.lines.iter().enumerate() {
            if let Some(command) = line.strip_prefix("$ ") {
                let file = page.path.clone();
                steps.push(Step {
                    file,
                    line: block.line + i,
                    command: command.to_string(),
                    expected: Vec::new(),
                    any_order: block.any_order,
                });
            } else {
                let step = steps.get_mut(first..).and_then(|s| s.last_mut());
                let step = step.unwrap_or_else(|| {
                    panic!(
                        "{}:{}: a console block starts with a `$ ` line",
                        page.path,
                        block.line + i
                    )
                });
                step.expected.push(line.trim_end().to_string());
            }
        }
    }
    steps
}

/// `line` matches `pattern`, where `[..]` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let pieces: Vec<&str> = pattern.split("[..]").collect();
    if pieces.len() == 1 {
        return pattern == line;
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if !line.starts_with(first) || !line[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// `actual` matches `expected` line by line, `...` standing for any lines.
fn in_order(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((dots, rest)) if dots == "..." => {
            (0..=actual.len()).any(|skip| in_order(rest, &actual[skip..]))
        }
        Some((pattern, rest)) => {
            actual.first().is_some_and(|line| line_matches(pattern, line))
                && in_order(rest, &actual[1..])
        }
    }
}

/// Every expected line matches a line of its own in `actual`, in any order; with no
/// `...` there is no other line. Exact lines are placed first, so a `[..]` line never
/// takes the line an exact one needs.
fn any_order(expected: &[String], actual: &[&str]) -> bool {
    let mut free: Vec<bool> = vec![true; actual.len()];
    let mut patterns: Vec<&String> = expected.iter().filter(|l| *l != "...").collect();
    patterns.sort_by_key(|p| p.contains("[..]"));
    for pattern in &patterns {
        match (0..actual.len()).find(|&i| free[i] && line_matches(pattern, actual[i])) {
            Some(i) => free[i] = false,
            None => return false,
        }
    }
    expected.iter().any(|l| l == "...") || patterns.len() == actual.len()
}

/// A project folder beside `../shared` holding what the repository ships, with the
/// test's okb as `./target/release/okb` and first on PATH.
fn project() -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = repo.join("../shared").canonicalize().expect("../shared beside the project");
    let dir = tempfile::Builder::new()
        .prefix("okb-readme-")
        .tempdir_in(shared.parent().unwrap())
        .unwrap();
    for item in ["pipeline.toml", "collections", "evals", "checks", "examples/ci"] {
        copy(&repo.join(item), &dir.path().join(item));
    }
    let bin = dir.path().join("target/release");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_okb"), bin.join("okb")).unwrap();
    dir
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    if from.is_dir() {
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    }
}

/// Runs `command` in `dir` with sh, stderr into stdout; returns the output and status.
fn run(dir: &Path, command: &str) -> (String, i32) {
    let path = format!(
        "{}:{}",
        dir.join("target/release").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1\n{command}"))
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env_remove("OKB_MIRROR")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .unwrap();
    (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code().unwrap_or(-1))
}

#[test]
fn the_readme_transcripts_run_and_print_what_the_readme_shows() {
    let dir = project();
    let steps: Vec<Step> = pages().iter().flat_map(steps).collect();
    assert!(steps.len() >= 10, "{steps:?}");
    let mut failures = Vec::new();
    for step in &steps {
        let (output, status) = run(dir.path(), &step.command);
        let actual: Vec<&str> = output.lines().map(str::trim_end).collect();
        let matched = if step.any_order {
            any_order(&step.expected, &actual)
        } else {
            in_order(&step.expected, &actual)
        };
        if status != 0 || !matched {
            failures.push(format!(
                "{}:{}: $ {}\n--- exit status {status}; the page shows:\n{}\n--- okb printed:\n{output}",
                step.file,
                step.line,
                step.command,
                step.expected.join("\n")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} commands of the README and docs/ drifted:\n\n{}",
        failures.len(),
        steps.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_other_transcript_is_marked_as_an_illustration() {
    for page in pages() {
        for block in blocks(&page.text) {
            let prompts = block.lines.iter().any(|l| l.starts_with("$ "));
            assert!(
                !prompts || block.info == "console" || block.info == "text",
                "{}:{}: a transcript is ```console (run by this test) or ```text (an illustration), not ```{}",
                page.path,
                block.line,
                block.info
            );
        }
    }
}

#[test]
fn the_matching_rules_catch_drift() {
    let lines = |s: &str| s.lines().map(String::from).collect::<Vec<_>>();
    let expected = lines("    Building games (2898 games) in [..]s\n...\n    Finished [..]");
    assert!(in_order(
        &expected,
        &["    Building games (2898 games) in 0.15s", "x", "y", "    Finished 3 steps"]
    ));
    assert!(
        !in_order(&expected, &["    Building games (2897 games) in 0.15s", "    Finished 3 steps"]),
        "a changed count"
    );
    assert!(!in_order(&expected, &["    Building games (2898 games) in 0.15s"]), "a missing line");
    assert!(!in_order(&lines("a\nb"), &["a", "b", "c"]), "an extra line without ...");
    assert!(
        any_order(&lines("b\na"), &["a", "b"])
            && !any_order(&lines("b\na"), &["a", "b", "c"])
            && !any_order(&lines("a\na"), &["a", "b"])
    );
    assert!(line_matches("in [..]ms", "in 38ms") && !line_matches("in [..]ms", "in 1.02s"));
}

/// The long options `okb <command> --help` lists, and its short ones.
fn flags_of(command: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_okb")).args(command).arg("--help").output().unwrap();
    assert!(out.status.success(), "okb {command:?} --help");
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    help.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .flat_map(|l| {
            l.split([',', ' ', '=', '<'])
                .filter(|w| w.starts_with('-') && w.len() > 1)
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The command table's rows (docs/commands.md, the first paragraph after its heading
/// "## The command line"): each `okb …` code span of the first column.
fn table_commands() -> Vec<String> {
    let page = read("docs/commands.md");
    let section = page
        .text
        .split("\n## The command line\n")
        .nth(1)
        .expect("docs/commands.md has a section \"## The command line\"");
    let table = section.split("\n\n").map(str::trim).find(|p| !p.is_empty()).unwrap();
    assert!(
        table.starts_with("| command |"),
        "the section \"## The command line\" of docs/commands.md starts with its table"
    );
    table
        .lines()
        .filter_map(|row| row.strip_prefix("| `okb "))
        .flat_map(|row| {
            let first = row.split(" | ").next().unwrap_or("");
            format!("`okb {first}")
                .split('`')
                .skip(1)
                .step_by(2)
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .filter(|span| span.starts_with("okb "))
        .collect()
}

#[test]
fn the_command_table_lists_every_command_and_only_flags_okb_has() {
    let commands = table_commands();
    let out = Command::new(env!("CARGO_BIN_EXE_okb")).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let listed: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap()
        .lines()
        // A command's line is indented by two spaces; its wrapped description, by more.
        .filter_map(|l| {
            l.strip_prefix("  ")
                .filter(|l| !l.starts_with(' '))
                .and_then(|l| l.split_whitespace().next())
        })
        .filter(|c| *c != "help")
        .collect();
    for name in &listed {
        assert!(
            commands.iter().any(|c| c.split_whitespace().nth(1) == Some(name)),
            "the command table of docs/commands.md lacks `okb {name}`"
        );
    }
    let mut wrong = Vec::new();
    for span in &commands {
        let words: Vec<&str> = span.split_whitespace().skip(1).collect();
        // The subcommand path: words before the first flag or argument.
        let path: Vec<&str> = words
            .iter()
            .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase()))
            .copied()
            .take(2)
            .collect();
        let path: Vec<&str> = if path.len() == 2
            && !matches!(path[0], "engine" | "export" | "review" | "query" | "state")
        {
            path[..1].to_vec()
        } else {
            path
        };
        let known = flags_of(&path);
        for flag in words
            .iter()
            .flat_map(|w| w.split(['[', ']', '|', '/', '…', '\\']))
            .filter(|w| w.starts_with('-') && w.len() > 1)
        {
            if !known.iter().any(|k| k == flag) {
                wrong.push(format!("`{span}`: okb {} has no {flag}", path.join(" ")));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
