//! Files a caller names (a supervised turn's usage file, `serve`'s TLS
//! material, a file to import), read without trusting what stands at the
//! path: opened without blocking, so a FIFO never holds the reader, and
//! read only when it is a regular file, so a device is never read forever.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Why a file was not opened or read.
#[derive(Debug)]
pub(crate) enum Unread {
    Io(io::Error),
    NotRegular,
    /// It holds more than this many bytes.
    TooLarge(u64),
    /// A secret that its group or others may read (its mode).
    Exposed(u32),
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::Io(e) => write!(f, "{e}"),
            Unread::NotRegular => f.write_str("not a regular file"),
            Unread::TooLarge(max) => write!(f, "over {max} bytes"),
            Unread::Exposed(mode) => write!(
                f,
                "its mode {mode:04o} lets others than its owner read it, and it is a secret"
            ),
        }
    }
}

/// `path` opened for reading, when it is a regular file.
pub(crate) fn open_regular(path: &Path) -> Result<File, Unread> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(Unread::Io)?;
    if !file.metadata().map_err(Unread::Io)?.is_file() {
        return Err(Unread::NotRegular);
    }
    Ok(file)
}

/// The whole of the regular file at `path`, at most `max` bytes.
pub(crate) fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, Unread> {
    read_all(open_regular(path)?, max)
}

/// `read_regular` of a secret: refused when its group or others may read
/// or write it, as ssh refuses such a private key.
pub(crate) fn read_secret(path: &Path, max: u64) -> Result<Vec<u8>, Unread> {
    use std::os::unix::fs::PermissionsExt as _;
    let file = open_regular(path)?;
    let mode = file.metadata().map_err(Unread::Io)?.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(Unread::Exposed(mode));
    }
    read_all(file, max)
}

fn read_all(file: File, max: u64) -> Result<Vec<u8>, Unread> {
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(Unread::Io)?;
    if bytes.len() as u64 > max {
        return Err(Unread::TooLarge(max));
    }
    Ok(bytes)
}
