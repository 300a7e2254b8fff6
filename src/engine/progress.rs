//! A terminal progress bar for [`annotate`](super::annotate).
//!
//! ```no_run
//! # use okb::engine::{annotate, EngineCache, EngineConfig, ProgressDisplay};
//! # fn run(jobs: Vec<okb::engine::Job>, config: &EngineConfig, cache: &EngineCache) -> Result<(), okb::engine::EngineError> {
//! let bar = ProgressDisplay::new();
//! let report = annotate(jobs, config, cache, &|p| bar.update(&p))?;
//! bar.finish();
//! # Ok(()) }
//! ```

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Progress;

/// Shows engine progress on stderr when it is a terminal; does nothing otherwise, so
/// logs and CI output stay clean.
pub struct ProgressDisplay {
    bar: Option<ProgressBar>,
}

impl Default for ProgressDisplay {
    fn default() -> Self {
        Self::new()
    }
}

impl ProgressDisplay {
    /// A bar on stderr if stderr is a terminal, a silent display otherwise.
    pub fn new() -> ProgressDisplay {
        if !std::io::stderr().is_terminal() {
            return ProgressDisplay { bar: None };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        // The bar counts engine searches only: cache hits are instant and would make
        // the rate and ETA meaningless.
        let style = ProgressStyle::with_template(
            "engine {bar:30} {pos}/{len} positions  {per_sec}  ETA {eta}  {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        ProgressDisplay { bar: Some(bar) }
    }

    /// Whether a bar is being drawn.
    pub fn is_visible(&self) -> bool {
        self.bar.is_some()
    }

    /// Shows `p`.
    pub fn update(&self, p: &Progress) {
        let Some(bar) = &self.bar else { return };
        bar.set_length(p.to_analyse as u64);
        bar.set_position((p.analysed + p.failed) as u64);
        bar.set_message(format!("({} cached, {} failed)", p.cached, p.failed));
    }

    /// Leaves the final state on screen.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}
