//! The system calls of a write step, each as the file ledger makes it:
//! the lock waited for up to a deadline, one `write` of an operation's
//! lines, and `fdatasync`, the last two behind the tests' fail points.

use crate::ledger::failpoint;
use std::fs::{File, TryLockError};
use std::io::Write;
use std::time::{Duration, Instant};

#[derive(Clone, Copy)]
pub(super) enum Lock {
    Shared,
    Exclusive,
}

/// Takes the lock on `file`, waiting for it at most until `until` (for
/// ever without one). Returns whether it was taken.
pub(super) fn lock(file: &File, kind: Lock, until: Option<Instant>) -> std::io::Result<bool> {
    let Some(until) = until else {
        match kind {
            Lock::Shared => file.lock_shared()?,
            Lock::Exclusive => file.lock()?,
        }
        return Ok(true);
    };
    // flock has no timeout: try, and back off up to a few milliseconds, so
    // a waiter is at most that late once the lock is free.
    let mut pause = Duration::from_micros(200);
    loop {
        let tried = match kind {
            Lock::Shared => file.try_lock_shared(),
            Lock::Exclusive => file.try_lock(),
        };
        match tried {
            Ok(()) => return Ok(true),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(err)) => return Err(err),
        }
        let now = Instant::now();
        if now >= until {
            return Ok(false);
        }
        std::thread::sleep(pause.min(until - now));
        pause = (pause * 2).min(Duration::from_millis(5));
    }
}

/// One `write` of all lines of an operation, with the fail point of the
/// tests that cuts it short.
pub(super) fn write_lines(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    failpoint::partial_write(file, bytes)?;
    file.write_all(bytes)
}

/// `fdatasync`, after the fail point of the tests before it.
pub(super) fn sync(file: &File) -> std::io::Result<()> {
    failpoint::hit("append.before_fsync")?;
    file.sync_data()
}
