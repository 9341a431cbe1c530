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
//! - The checkpoint, rewritten by every write, is rewritten in place when
//!   the file there is this process's own: a regular file of one link,
//!   owned by it and private to it (`rewrite_in_place`). A new inode and a
//!   rename were a seventh of an `ask` on ext4. Anything else there is
//!   replaced as above, never written through.

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

/// Rewrites the file at `path` with `bytes` where it stands, when it is a
/// regular file of one link, owned by this process's user and private to
/// it, reached without a symlink; `Ok(false)` (nothing written) when it is
/// anything else, or missing: the caller replaces it instead. Under the
/// writer's lock, so no reader sees it half written; a crash in the middle
/// leaves bytes whose hash does not hold, which a reader takes for no
/// checkpoint at all.
pub(super) fn rewrite_in_place(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    use std::os::unix::fs::{FileExt, MetadataExt};
    let own = |meta: &std::fs::Metadata| {
        meta.file_type().is_file()
            && meta.nlink() == 1
            && meta.uid() == rustix::process::geteuid().as_raw()
            && meta.mode() & 0o077 == 0
    };
    // Looked at before it is opened: a planted device is never opened.
    let Ok(seen) = std::fs::symlink_metadata(path) else {
        return Ok(false);
    };
    if !own(&seen) {
        return Ok(false);
    }
    let Ok(file) = no_follow_no_block().write(true).open(path) else {
        return Ok(false);
    };
    let meta = file.metadata()?;
    if !own(&meta) || (meta.dev(), meta.ino()) != (seen.dev(), seen.ino()) {
        return Ok(false);
    }
    file.write_all_at(bytes, 0)?;
    file.set_len(bytes.len() as u64)?;
    Ok(true)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn private(path: &Path, bytes: &[u8]) {
        std::fs::write(path, bytes).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    #[test]
    fn a_private_file_of_one_link_is_rewritten_where_it_stands() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpoint");
        private(&path, b"an older and longer content");
        let inode = std::fs::metadata(&path).unwrap().ino();
        assert!(rewrite_in_place(&path, b"newer").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"newer");
        assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode);
    }

    #[test]
    fn anything_else_is_neither_opened_nor_written() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        private(&at("secret"), b"secret");
        std::fs::hard_link(at("secret"), at("hard link")).unwrap();
        std::os::unix::fs::symlink(at("secret"), at("symlink")).unwrap();
        std::fs::write(at("shared"), b"shared").unwrap();
        std::fs::set_permissions(at("shared"), std::fs::Permissions::from_mode(0o640)).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            at("fifo"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        for name in ["missing", "hard link", "symlink", "shared", "fifo"] {
            assert!(!rewrite_in_place(&at(name), b"x").unwrap(), "{name}");
        }
        assert_eq!(std::fs::read(at("secret")).unwrap(), b"secret");
        assert_eq!(std::fs::read(at("shared")).unwrap(), b"shared");
    }
}
