//! The guardian: a tiny process that outlives a supervisor killed outright
//! and takes the agent's whole process group down with it.
//!
//! The parent-death signal reaches only the direct child, so an agent
//! started through a shell, `npx` or `uv run` would leave its own children
//! running, re-parented to init, while the ledger lapses into `deadman`.
//! The guardian closes that gap:
//!
//! - It is the supervisor's first child, started from the same binary, in a
//!   process group of its own that it leads. The agent's command then joins
//!   that group, so the group id is known before the agent exists and can
//!   never be reused while the guardian lives.
//! - Its stdin is the read end of a pipe whose only writer is the
//!   supervisor. When the supervisor dies, by any signal, the kernel closes
//!   the writer, the guardian's read returns end-of-file, and it sends
//!   SIGKILL to its whole group, itself included.
//! - It ignores SIGINT, SIGTERM and SIGHUP, so the supervisor's own
//!   SIGTERM to the group at a deadline leaves it standing until the
//!   SIGKILL that ends the attempt.
//!
//! Its one limit: a process that leaves the group (`setsid`, `setpgid`)
//! is out of reach of any group signal, the guardian's included.

use rustix::process::Pid;
use std::io::{PipeWriter, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

/// The hidden first argument that makes `discuss` the guardian.
pub(crate) const ARG: &str = "__discuss-guardian";

/// The inode of the pipe the supervisor hands the guardian as stdin: how
/// the guardian knows a supervisor started it (a person typing
/// `discuss __discuss-guardian` has no such pipe).
const PIPE_VAR: &str = "DISCUSS_GUARDIAN_PIPE";

/// A running guardian and the pipe that keeps it waiting.
pub(crate) struct Guardian {
    child: Child,
    /// Held open for as long as the supervisor lives; never written to.
    _lifeline: PipeWriter,
}

impl Guardian {
    /// Starts the guardian in a new process group of its own.
    pub(crate) fn start() -> std::io::Result<Guardian> {
        let (reader, lifeline) = std::io::pipe()?;
        let pipe = rustix::fs::fstat(&reader)?.st_ino;
        // The running image itself, even if its file was replaced since
        // (an upgrade while an agent runs).
        let mut command = Command::new("/proc/self/exe");
        command
            .arg(ARG)
            .env_clear()
            .env(PIPE_VAR, pipe.to_string())
            .stdin(Stdio::from(reader))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        // SAFETY: pre_exec is unsafe (the closure runs between fork and
        // exec); signal() is async-signal-safe, as that code must be, and
        // has no safe API (rustix has none). Ignored dispositions survive
        // exec.
        unsafe {
            command.pre_exec(|| {
                for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                    if libc::signal(signal, libc::SIG_IGN) == libc::SIG_ERR {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let child = command.spawn()?;
        Ok(Guardian {
            child,
            _lifeline: lifeline,
        })
    }

    /// The process group the agent's command joins: the guardian's.
    pub(crate) fn group(&self) -> Pid {
        Pid::from_child(&self.child)
    }

    /// Reaps the guardian once the group has been killed.
    pub(crate) fn reap(mut self) {
        let _ = self.child.wait();
    }
}

/// The guardian's whole life: wait for the supervisor's end, then kill the
/// group. Returns the exit status (it is normally killed before).
pub(crate) fn run() -> u8 {
    if let Err(why) = started_by_a_supervisor() {
        say!(
            "error[usage]: {ARG} is part of supervised runs (discuss wake -- CMD), not a command: {why}; it signals nothing"
        );
        return crate::error::ErrorCode::Usage.exit_status();
    }
    let mut stdin = std::io::stdin().lock();
    let mut byte = [0u8; 64];
    // Nothing is ever written: any return (end-of-file, an error) means the
    // supervisor is gone.
    loop {
        match stdin.read(&mut byte) {
            Ok(0) => break,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
            Ok(_) => continue,
        }
    }
    // Our own process group, the guardian itself included: one it leads
    // (checked at start; a leader's group never changes).
    let _ = rustix::process::kill_current_process_group(rustix::process::Signal::KILL);
    1
}

/// Whether this process is the guardian a supervisor started: it leads
/// its own process group (so the group it would kill is the agent's, never
/// a shell's), and its stdin is the very pipe the supervisor made.
fn started_by_a_supervisor() -> Result<(), &'static str> {
    let leads = rustix::process::getpgrp() == rustix::process::getpid();
    if !leads {
        return Err("it does not lead its process group");
    }
    let expected: Option<u64> = std::env::var(PIPE_VAR).ok().and_then(|v| v.parse().ok());
    let stdin = rustix::fs::fstat(std::io::stdin()).map_err(|_| "its stdin cannot be read")?;
    let is_pipe = rustix::fs::FileType::from_raw_mode(stdin.st_mode) == rustix::fs::FileType::Fifo;
    match expected {
        Some(inode) if is_pipe && stdin.st_ino == inode => Ok(()),
        _ => Err("its stdin is not the supervisor's pipe"),
    }
}
