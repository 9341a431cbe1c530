//! A private tmux server for a test (`tmux -S SOCKET`, no config): panes
//! running a command in the test's environment, read with `capture-pane`,
//! typed into with `send-keys`, killed at the end.

use super::Env;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub(crate) struct Tmux {
    pub socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmux {
    /// A server with one session `work` (200×50) running `command` in
    /// `env`'s ledger, clock and this build's `discuss` on its PATH;
    /// `None` (skipped) without tmux unless CI asks for it.
    pub(crate) fn start(env: &Env, command: &str) -> Option<Tmux> {
        Tmux::start_sized(env, command, 200, 50)
    }

    /// `start` with a window of `width`×`height`.
    pub(crate) fn start_sized(env: &Env, command: &str, width: u16, height: u16) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("CI needs tmux for the live-session tests, and it is missing");
            }
            eprintln!("SKIPPED: no tmux here; CI=true makes this a failure");
            return None;
        }
        let dir = super::scratch("discuss-tmux");
        let tmux = Tmux {
            socket: dir.path().join("sock"),
            _dir: dir,
        };
        let bin = assert_cmd::cargo::cargo_bin("discuss");
        let path = format!("{}:/usr/bin:/bin", bin.parent().unwrap().display());
        let out = Command::new("tmux")
            .env_clear()
            .env("PATH", &path)
            .env("TERM", "xterm-256color")
            .env("HOME", env.dir.path())
            .env("DISCUSS_LEDGER", env.ledger())
            .env("DISCUSS_NOW", env.now_ms.to_string())
            .env("DISCUSS_ACTOR", "session")
            .current_dir(env.dir.path())
            .arg("-S")
            .arg(&tmux.socket)
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "work",
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
            ])
            .arg(command)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(tmux)
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap()
    }

    /// What pane `target` shows.
    pub(crate) fn screen(&self, target: &str) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-J", "-t", target]).stdout)
            .into_owned()
    }

    /// Waits (20 s at most) until pane `target` shows `text`; the screen.
    pub(crate) fn wait_for(&self, target: &str, text: &str) -> String {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.screen(target);
            if screen.contains(text) {
                return screen;
            }
            assert!(Instant::now() < until, "{text:?} never showed:\n{screen}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What pane `target` shows, row by row as on the screen (no joining
    /// of wrapped lines).
    pub(crate) fn rows(&self, target: &str) -> Vec<String> {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", target]).stdout)
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// A format of pane `target` (`#{pane_dead_status}` and the like).
    pub(crate) fn format(&self, target: &str, format: &str) -> String {
        String::from_utf8_lossy(
            &self
                .run(&["display-message", "-p", "-t", target, format])
                .stdout,
        )
        .trim()
        .to_owned()
    }

    /// What pane `target` shows, with its colours and attributes as escape
    /// sequences.
    pub(crate) fn screen_with_escapes(&self, target: &str) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-e", "-t", target]).stdout)
            .into_owned()
    }

    /// A new window running `command`; its pane's id.
    pub(crate) fn window(&self, command: &str) -> String {
        let out = self.run(&[
            "new-window",
            "-P",
            "-F",
            "#{pane_id}",
            "-t",
            "work",
            command,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}
