//! Opening and replacing the files beside the ledger without trusting
//! what stands at their paths: anyone who can write the ledger's folder
//! can plant a symlink, a FIFO or a device there (`ledger.md`, "File").
//!
//! - Derived files (`.index`, `.checkpoint`) are read only when they are
//!   regular files, opened without following a symlink and without
//!   blocking on a FIFO; anything else counts as missing, and the cache is
//!   rebuilt and renamed over it.
//! - New files are made under a fresh random name with exclusive creation
//!   (the `tempfile` crate), so no planted name is ever written through,
//!   then renamed into place, which replaces a planted entry rather than
//!   following it.

use rustix::fs::OFlags;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The end of a temporary file's name: `<ledger>.index.tmpXXXXXXXX`.
pub(super) const TEMP_MARK: &str = "tmp";

fn no_follow_no_block() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.custom_flags((OFlags::NOFOLLOW | OFlags::NONBLOCK).bits() as i32);
    options
}

/// The derived file at `path` opened for reading, when it is a regular
/// file reached without a symlink; `None` for anything else.
pub(super) fn open_derived(path: &Path) -> Option<File> {
    let file = no_follow_no_block().read(true).open(path).ok()?;
    let meta = file.metadata().ok()?;
    meta.file_type().is_file().then_some(file)
}

/// The whole of a derived file, when it is a regular file of at most
/// `max` bytes (a planted `/dev/zero` or a huge file reads nothing).
pub(super) fn read_derived(path: &Path, max: u64) -> Option<Vec<u8>> {
    let file = open_derived(path)?;
    let len = file.metadata().ok()?.len();
    if len > max {
        return None;
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// A new private (0600) file in `target`'s folder under a random name
/// starting `<target's name>.tmp`; `persist` renames it over `target`.
pub(super) fn temporary_beside(target: &Path) -> io::Result<tempfile::NamedTempFile> {
    let folder = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut prefix = target
        .file_name()
        .ok_or_else(|| io::Error::other("no file name"))?
        .to_owned();
    prefix.push(".");
    prefix.push(TEMP_MARK);
    tempfile::Builder::new()
        .prefix(&prefix)
        .rand_bytes(10)
        .tempfile_in(folder)
}

/// Appends `bytes` to the file at `path`, created 0600 if missing, and
/// syncs it; refuses (rather than follows) a symlink and anything that is
/// not a regular file.
pub(super) fn append_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = no_follow_no_block()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    file.write_all(bytes)?;
    file.sync_data()
}
