//! tmux, driven as a program (`tmux -S SOCKET …`): a pane's stable id, its
//! screen, and one line typed into it as literal keys, then Enter.

use crate::error::{Error, ErrorCode, Result};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How often a pane's screen is read while waiting for it to be quiet.
const QUIET_POLL: Duration = Duration::from_millis(50);
/// Between the pointer's keys and Enter: a TUI that takes a burst of keys
/// as a paste still submits the line.
const ENTER_AFTER: Duration = Duration::from_millis(150);

/// A tmux server: the default one, or the one at `socket` (`-S`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Tmux {
    pub socket: Option<PathBuf>,
}

/// Why a pointer was not typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotTyped {
    /// The screen kept changing for the whole time allowed.
    NeverQuiet,
    /// The pane (or its server) is gone.
    Vanished(String),
}

impl NotTyped {
    pub(crate) fn detail(&self) -> String {
        match self {
            NotTyped::NeverQuiet => "the pane never went quiet".into(),
            NotTyped::Vanished(why) => format!("the pane vanished: {why}"),
        }
    }
}

impl Tmux {
    fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        if let Some(socket) = &self.socket {
            command.arg("-S").arg(socket);
        }
        command.stdin(Stdio::null());
        command
    }

    /// Runs tmux with `args`; its stdout, or what it said on stderr.
    fn run(&self, args: &[&str]) -> std::result::Result<String, String> {
        let out = self
            .command()
            .args(args)
            .output()
            .map_err(|e| format!("tmux could not be run: {e}"))?;
        // tmux 3.3 exits 0 for a target it cannot find and answers for
        // another pane: what it says on stderr is the refusal.
        let said = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        if out.status.success() && said.is_empty() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else if said.is_empty() {
            Err(format!("tmux exited with {}", out.status))
        } else {
            Err(said)
        }
    }

    /// The stable id (`%N`) of the pane `target` names (`%12`, `work:2.1`,
    /// `=work:editor.0`); `unknown_target` when there is none.
    pub(crate) fn pane_id(&self, target: &str) -> Result<String> {
        let refused = |why: String| {
            Error::new(
                ErrorCode::UnknownTarget,
                format!(
                    "no tmux pane {}: {}",
                    crate::escape::printable(target, false),
                    crate::escape::printable(&why, false)
                ),
            )
            .detail("into", format!("tmux:{target}"))
            .hint("list the panes: `tmux list-panes -a -F '#{pane_id} #{session_name}:#{window_index}.#{pane_index}'`")
        };
        // `display-message` answers for the current pane when the target's
        // window or pane is not there (tmux 3.3, exit 0); `list-panes`
        // refuses it.
        self.run(&["list-panes", "-t", target, "-F", "#{pane_id}"])
            .map_err(refused)?;
        let id = self
            .run(&["display-message", "-p", "-t", target, "#{pane_id}"])
            .map_err(refused)?;
        let id = id.trim();
        if !id.starts_with('%') || id.len() < 2 || !id[1..].bytes().all(|b| b.is_ascii_digit()) {
            return Err(refused(format!("tmux answered {id:?} for its pane id")));
        }
        Ok(id.to_owned())
    }

    /// What the pane shows now, with its cursor (typing moves it).
    fn screen(&self, pane: &str) -> std::result::Result<String, String> {
        let cursor = self.run(&[
            "display-message",
            "-p",
            "-t",
            pane,
            "#{cursor_x},#{cursor_y}",
        ])?;
        let shown = self.run(&["capture-pane", "-p", "-t", pane])?;
        Ok(format!("{cursor}\n{shown}"))
    }

    /// Waits until `pane`'s screen has not changed for `quiet`, for at
    /// most `limit`.
    pub(crate) fn wait_quiet(
        &self,
        pane: &str,
        quiet: Duration,
        limit: Duration,
    ) -> std::result::Result<(), NotTyped> {
        let started = Instant::now();
        let mut last = self.screen(pane).map_err(NotTyped::Vanished)?;
        let mut since = Instant::now();
        loop {
            if since.elapsed() >= quiet {
                return Ok(());
            }
            if started.elapsed() >= limit {
                return Err(NotTyped::NeverQuiet);
            }
            std::thread::sleep(QUIET_POLL.min(quiet));
            let now = self.screen(pane).map_err(NotTyped::Vanished)?;
            if now != last {
                last = now;
                since = Instant::now();
            }
        }
    }

    /// Types `line` into `pane` as literal keys, then Enter as a key of
    /// its own.
    pub(crate) fn type_line(&self, pane: &str, line: &str) -> std::result::Result<(), NotTyped> {
        self.run(&["send-keys", "-t", pane, "-l", "--", line])
            .map_err(NotTyped::Vanished)?;
        std::thread::sleep(ENTER_AFTER);
        self.run(&["send-keys", "-t", pane, "Enter"])
            .map_err(NotTyped::Vanished)?;
        Ok(())
    }
}
