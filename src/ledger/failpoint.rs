//! Test-only fail points in the append path, modelled on SQLite's crash and
//! I/O-error tests. They exist only under the cargo feature `failpoints`,
//! which the test suite turns on; in any other build every function here is
//! an empty inline function, so release builds carry none of it.
//!
//! `DISCUSS_FAILPOINTS="point=action[,point=action]"` arms them, where
//! `action` is `crash` (the process sends itself SIGKILL, as `kill -9`
//! would), `stop` (it stops itself until a SIGCONT), `enospc` or `eio`
//! (the step fails with that OS error). The points (on a PostgreSQL
//! ledger, "write" is the INSERT and "fsync" the COMMIT):
//!
//! - `append.before_write`: the ledger is locked and the lines are ready;
//! - `append.partial_write`: only a prefix of the lines has been written
//!   (`DISCUSS_FAILPOINT_PARTIAL=N` bytes, default half);
//! - `append.before_fsync`: all lines are written, none is synced;
//! - `append.after_fsync`: the lines are durable, the lock is still held;
//! - `import.after_chunk`: a file import has written one more chunk
//!   (`DISCUSS_IMPORT_CHUNK` bytes); `crash@N` crashes after the N-th;
//! - `fs.network=<name>`: the ledger's filesystem reads as that network
//!   filesystem;
//! - `supervisor.before_started`: a supervised turn is reserved and its
//!   agent spawned, `started` not yet recorded (the ledger unlocked);
//! - `top.draw`: `discuss top` draws a frame (`panic` makes it panic).

use std::io;

/// Fires the fail point `point` when it is armed.
#[inline(always)]
pub(crate) fn hit(point: &str) -> io::Result<()> {
    #[cfg(feature = "failpoints")]
    if let Some(action) = armed(point) {
        // `action@N`: only at the N-th time the point is reached.
        if let Some((action, nth)) = action.split_once('@') {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static REACHED: AtomicUsize = AtomicUsize::new(0);
            let reached = REACHED.fetch_add(1, Ordering::Relaxed) + 1;
            if nth.parse() != Ok(reached) {
                return Ok(());
            }
            return fire(action);
        }
        return fire(&action);
    }
    let _ = point;
    Ok(())
}

/// Under an armed `append.partial_write`, writes a prefix of `bytes` and
/// fires; otherwise does nothing.
#[inline(always)]
pub(super) fn partial_write(file: &mut std::fs::File, bytes: &[u8]) -> io::Result<()> {
    #[cfg(feature = "failpoints")]
    if let Some(action) = armed("append.partial_write") {
        use std::io::Write;
        let cut = std::env::var("DISCUSS_FAILPOINT_PARTIAL")
            .ok()
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(bytes.len() / 2)
            .min(bytes.len());
        file.write_all(&bytes[..cut])?;
        return fire(&action);
    }
    let _ = (file, bytes);
    Ok(())
}

/// The network filesystem `fs.network` pretends the ledger is on.
#[inline(always)]
pub(super) fn pretended_network_fs() -> Option<String> {
    #[cfg(feature = "failpoints")]
    if let Some(name) = armed("fs.network") {
        return Some(name);
    }
    None
}

/// How long work runs before its progress shows; tests set it to nothing
/// with `DISCUSS_PROGRESS_AFTER_MS`.
pub(crate) fn quiet_for(default: std::time::Duration) -> std::time::Duration {
    #[cfg(feature = "failpoints")]
    if let Some(ms) = number("DISCUSS_PROGRESS_AFTER_MS") {
        return std::time::Duration::from_millis(ms);
    }
    default
}

/// From how many bytes on a file's records are parsed on a second core
/// while they are streamed (`lines::operations_ahead`); tests make it 0
/// with `DISCUSS_AHEAD_FROM_BYTES` to take that path on a small ledger.
pub(crate) fn ahead_from_bytes(default: u64) -> u64 {
    #[cfg(feature = "failpoints")]
    if let Some(n) = number("DISCUSS_AHEAD_FROM_BYTES") {
        return n;
    }
    default
}

/// The lines of a batch that `lines::operations_on_both_cores` hands from
/// one core to the other; tests make it small with `DISCUSS_BATCH_LINES`
/// to hand many on a small ledger.
pub(crate) fn batch_lines(default: usize) -> usize {
    positive_or("DISCUSS_BATCH_LINES", default)
}

/// Whether the tests set `DISCUSS_BATCH_LINES`: then the two cores of
/// `lines::operations_on_both_cores` take the batches in fixed turns, so
/// every way of interleaving them is taken on every run.
#[cfg(feature = "failpoints")]
pub(crate) fn batch_lines_set() -> bool {
    number::<usize>("DISCUSS_BATCH_LINES").is_some()
}

/// The rows a command's stream of a database reads at a time; tests make
/// it small with `DISCUSS_STREAM_BATCH` to read ahead on a small ledger.
pub(crate) fn stream_batch(default: i64) -> i64 {
    positive_or("DISCUSS_STREAM_BATCH", default)
}

/// The chunk a file import copies at a time; tests make it small with
/// `DISCUSS_IMPORT_CHUNK` to crash between many chunks
/// (`import.after_chunk`, after each one is written).
pub(super) fn import_chunk(default: usize) -> usize {
    positive_or("DISCUSS_IMPORT_CHUNK", default)
}

/// How many discussions the live set holds (`cache::live`); tests make it
/// small with `DISCUSS_CACHE_LIVE_CAPACITY` to reach the fallback.
pub(super) fn live_capacity(default: usize) -> usize {
    positive_or("DISCUSS_CACHE_LIVE_CAPACITY", default)
}

/// `DISCUSS_CACHE_MERGE_AT=N` under the feature: merge the checkpoint's
/// entries into a new index past N, so tests reach a merge in a few writes.
#[inline(always)]
pub(super) fn merge_at(default: usize) -> usize {
    #[cfg(feature = "failpoints")]
    if let Some(n) = number("DISCUSS_CACHE_MERGE_AT") {
        return n;
    }
    default
}

/// The positive number a test set in the environment variable `name`,
/// or `default` (always, in a build without the fail points).
#[cfg_attr(not(feature = "failpoints"), allow(unused_variables))]
fn positive_or<T: std::str::FromStr + PartialOrd + Default>(name: &str, default: T) -> T {
    #[cfg(feature = "failpoints")]
    if let Some(n) = number(name).filter(|n: &T| *n > T::default()) {
        return n;
    }
    default
}

/// The number a test set in the environment variable `name`, if any.
#[cfg(feature = "failpoints")]
fn number<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok()?.parse().ok()
}

#[cfg(feature = "failpoints")]
fn armed(point: &str) -> Option<String> {
    let spec = std::env::var("DISCUSS_FAILPOINTS").ok()?;
    spec.split(',').find_map(|entry| {
        let (name, action) = entry.split_once('=')?;
        (name.trim() == point).then(|| action.trim().to_string())
    })
}

#[cfg(feature = "failpoints")]
fn fire(action: &str) -> io::Result<()> {
    use rustix::io::Errno;
    use rustix::process::{Signal, getpid, kill_process};
    match action {
        "crash" => {
            // SIGKILL cannot be caught: nothing after this line runs, exactly
            // as when an operator or the OOM killer sends `kill -9`.
            let _ = kill_process(getpid(), Signal::KILL);
            std::process::abort()
        }
        "stop" => {
            // Stopped until a SIGCONT: the test does something meanwhile
            // (stops the database server), then lets the step go on.
            kill_process(getpid(), Signal::STOP).map_err(io::Error::from)
        }
        "enospc" => Err(Errno::NOSPC.into()),
        "eio" => Err(Errno::IO.into()),
        // `discuss top` restores the terminal on a panic too.
        "panic" => panic!("the fail point asked for a panic"),
        other => panic!("unknown fail point action {other:?}"),
    }
}
