//! Running a delivery command (`escalations deliver -- CMD`): in a process
//! group of its own that does not outlive the deliverer (the guardian, as
//! for a supervised agent), cut off at a timeout, its stderr's tail kept
//! for the `delivery_failed` receipt. A stop signal to the deliverer does
//! not reach it: the command in flight finishes.

use super::guardian::Guardian;
use super::{POLL, kill_group};
use rustix::process::Signal;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How much of a command's stderr a failed delivery keeps.
const STDERR_TAIL: usize = 2048;
/// Between SIGTERM and SIGKILL of a command past its time.
const GRACE: Duration = Duration::from_secs(2);

/// How a delivery command ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum HandoffEnd {
    Exited,
    TimedOut,
    SpawnFailed(String),
}

#[derive(Debug, Clone)]
pub(crate) struct Handoff {
    pub end: HandoffEnd,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// The last bytes of its stderr (which also went to the deliverer's).
    pub stderr_tail: String,
}

impl Handoff {
    pub(crate) fn succeeded(&self) -> bool {
        self.end == HandoffEnd::Exited && self.exit_code == Some(0)
    }
}

/// Runs `command` with `stdin` written to it and `envs` set, for at most
/// `timeout`.
pub(crate) fn hand_off(
    command: &[String],
    stdin: &str,
    envs: &[(String, String)],
    timeout: Duration,
) -> Handoff {
    let failed = |why: String| Handoff {
        end: HandoffEnd::SpawnFailed(why),
        exit_code: None,
        signal: None,
        stderr_tail: String::new(),
    };
    let guardian = match Guardian::start() {
        Ok(guardian) => guardian,
        Err(e) => return failed(format!("starting the guardian: {e}")),
    };
    let group = guardian.group();
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..])
        .envs(envs.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(group.as_raw_nonzero().get());
    // Its stdout goes to the deliverer's stderr: the deliverer's stdout
    // carries only its own results.
    cmd.stdout(
        std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_or_else(|_| Stdio::null(), Stdio::from),
    );
    super::dies_with_this_process(&mut cmd);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            kill_group(group, Signal::KILL);
            guardian.reap();
            return failed(format!("{}: {e}", command[0]));
        }
    };
    if let Some(mut pipe) = child.stdin.take() {
        let text = stdin.to_owned();
        std::thread::spawn(move || {
            let _ = pipe.write_all(text.as_bytes());
        });
    }
    let tail = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut kept: Vec<u8> = Vec::new();
            let mut buffer = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                let _ = std::io::stderr().write_all(&buffer[..n]);
                kept.extend_from_slice(&buffer[..n]);
                if kept.len() > STDERR_TAIL {
                    kept.drain(..kept.len() - STDERR_TAIL);
                }
            }
            String::from_utf8_lossy(&kept).into_owned()
        })
    });
    let until = Instant::now() + timeout;
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if !timed_out && Instant::now() >= until {
            timed_out = true;
            kill_group(group, Signal::TERM);
        }
        if timed_out && Instant::now() >= until + GRACE {
            kill_group(group, Signal::KILL);
        }
        std::thread::sleep(POLL);
    };
    // Whatever it left behind goes with it.
    kill_group(group, Signal::KILL);
    guardian.reap();
    let stderr_tail = tail.and_then(|t| t.join().ok()).unwrap_or_default();
    Handoff {
        end: if timed_out {
            HandoffEnd::TimedOut
        } else {
            HandoffEnd::Exited
        },
        exit_code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        stderr_tail,
    }
}
