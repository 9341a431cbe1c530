//! Progress of long work (`verify`) for a person at a terminal: a bar on
//! stderr, shown only once the work has taken a second, and never when
//! stderr is not a terminal, with `--json`, or with `TERM=dumb` (pipes, CI
//! logs and scripts see nothing).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// How long work runs before its progress is shown.
const QUIET_FOR: Duration = Duration::from_secs(1);

pub(crate) struct Progress {
    wanted: bool,
    started: Instant,
    bar: Option<ProgressBar>,
    total: u64,
    what: &'static str,
}

impl Progress {
    /// Progress through `total` units of `what` (e.g. "bytes read"); shown
    /// only to a person: not with `json`, only on a terminal.
    pub(crate) fn new(json: bool, total: u64, what: &'static str) -> Progress {
        Progress {
            wanted: Progress::shown(json),
            started: Instant::now(),
            bar: None,
            total,
            what,
        }
    }

    /// Whether progress is ever shown: to a person at a terminal, never
    /// with `--json` or `TERM=dumb`.
    pub(crate) fn shown(json: bool) -> bool {
        let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
        !json && !dumb && std::io::stderr().is_terminal()
    }

    /// The total, when it is learnt as the work goes.
    pub(crate) fn set_total(&mut self, total: u64) {
        self.total = total;
        if let Some(bar) = &self.bar {
            bar.set_length(total);
        }
    }

    /// The work has reached `position` of `total`.
    pub(crate) fn at(&mut self, position: u64) {
        if !self.wanted {
            return;
        }
        if self.bar.is_none() && self.started.elapsed() >= crate::ledger::quiet_for(QUIET_FOR) {
            let bar = ProgressBar::with_draw_target(Some(self.total), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{msg} [{bar:30}] {percent}%")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            bar.set_style(style);
            bar.set_message(self.what);
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(position);
        }
    }

    /// Clears the bar, so the report that follows stands alone.
    pub(crate) fn done(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
