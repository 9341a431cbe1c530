//! The ledger file: shared-locked reads, exclusive-locked
//! read-validate-append steps, torn-tail repair and `fsync` before success.

use super::record::Record;
use super::snapshot::Snapshot;
use super::{failpoint, filesystem};
use crate::error::{Error, ErrorCode, Result};
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Ledger {
    path: PathBuf,
    allow_network_fs: bool,
}

impl Ledger {
    pub fn new(path: PathBuf) -> Self {
        Ledger {
            path,
            allow_network_fs: false,
        }
    }

    /// Opens the ledger even on a network filesystem (`--allow-network-fs`).
    pub fn allow_network_fs(mut self, allow: bool) -> Self {
        self.allow_network_fs = allow;
        self
    }

    pub fn network_fs_allowed(&self) -> bool {
        self.allow_network_fs
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where torn tails are kept: `<ledger>.torn`.
    pub fn torn_path(&self) -> PathBuf {
        let mut name = self.path.as_os_str().to_owned();
        name.push(".torn");
        PathBuf::from(name)
    }

    /// Reads the ledger under a shared lock. A ledger that does not exist
    /// yet reads as empty; reading never creates it.
    pub fn read(&self) -> Result<Snapshot> {
        let mut file = match File::open(&self.path) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Snapshot::default());
            }
            Err(err) => return Err(self.io_error(&err)),
        };
        self.refuse_network_fs(&file)?;
        file.lock_shared().map_err(|e| self.io_error(&e))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| self.unreadable(&e))?;
        Ok(Snapshot::parse(&bytes))
    }

    /// One read-validate-append step under the exclusive lock.
    ///
    /// `plan` sees the current snapshot and returns the records to append
    /// (possibly none) and a result. All records are written with one
    /// `write`, then `fsync`ed; only then is the result returned.
    pub fn append<T>(&self, plan: impl FnOnce(&Snapshot) -> Result<(Vec<Record>, T)>) -> Result<T> {
        let mut file = self.open_for_append()?;
        file.lock().map_err(|e| self.io_error(&e))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| self.unreadable(&e))?;
        let mut snapshot = Snapshot::parse(&bytes);
        let (records, result) = plan(&snapshot)?;
        if records.is_empty() {
            return Ok(result);
        }
        if snapshot.torn_tail > 0 {
            let keep = bytes.len() - snapshot.torn_tail;
            self.move_torn_tail(&file, &bytes[keep..], keep as u64)?;
            snapshot.torn_tail = 0;
        }
        let lines = Record::operation_lines(&records);
        let before = file.metadata().map_err(|e| self.io_error(&e))?.len();
        failpoint::hit("append.before_write").map_err(|e| self.io_error(&e))?;
        if let Err(err) = write_durably(&mut file, lines.as_bytes()) {
            // Cut back what may have reached the file, so no later append
            // glues onto half a line. Should that fail too, the lines left
            // are an operation cut short, which readers ignore and the next
            // writer moves to `<ledger>.torn`.
            let _ = file.set_len(before).and_then(|()| file.sync_data());
            return Err(self.io_error(&err));
        }
        // Only a crash can happen here in tests: the operation is durable,
        // and the lock goes when the process does.
        let _ = failpoint::hit("append.after_fsync");
        Ok(result)
    }

    fn open_for_append(&self) -> Result<File> {
        let mut options = OpenOptions::new();
        options.read(true).append(true).mode(0o600);
        match options.open(&self.path) {
            Ok(file) => {
                self.refuse_network_fs(&file)?;
                return Ok(file);
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(self.io_error(&err)),
        }
        let parent = self
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|e| Error::io(parent.display(), &e))?;
        // Refuse before creating anything there.
        let folder = File::open(parent).map_err(|e| Error::io(parent.display(), &e))?;
        self.refuse_network_fs(&folder)?;
        // create_new decides which of several racing writers created the
        // file; the creator makes its directory entry durable.
        match options.clone().create_new(true).open(&self.path) {
            Ok(file) => {
                File::open(parent)
                    .and_then(|dir| dir.sync_all())
                    .map_err(|e| Error::io(parent.display(), &e))?;
                Ok(file)
            }
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                options.open(&self.path).map_err(|e| self.io_error(&e))
            }
            Err(err) => Err(self.io_error(&err)),
        }
    }

    /// Appends a torn tail to `<ledger>.torn` (followed by `\n`, so tails
    /// kept from several crashes stay apart) and truncates the ledger back
    /// to its last complete line.
    fn move_torn_tail(&self, ledger: &File, tail: &[u8], keep: u64) -> Result<()> {
        let torn_path = self.torn_path();
        let mut torn = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&torn_path)
            .map_err(|e| Error::io(torn_path.display(), &e))?;
        let mut kept = tail.to_vec();
        kept.push(b'\n');
        torn.write_all(&kept)
            .and_then(|()| torn.sync_data())
            .map_err(|e| Error::io(torn_path.display(), &e))?;
        ledger
            .set_len(keep)
            .and_then(|()| ledger.sync_data())
            .map_err(|e| self.io_error(&e))
    }

    /// `network_filesystem` unless `--allow-network-fs` was given.
    fn refuse_network_fs(&self, file: &File) -> Result<()> {
        if self.allow_network_fs {
            return Ok(());
        }
        let Some(name) = filesystem::network_fs_of(file).map_err(|e| self.io_error(&e))? else {
            return Ok(());
        };
        Err(Error::new(
            ErrorCode::NetworkFilesystem,
            format!(
                "the ledger {} is on a network filesystem ({name}), where file locks and appends are not reliable",
                self.path.display()
            ),
        )
        .detail("path", self.path.display().to_string())
        .detail("filesystem", name)
        .hint("keep the ledger on a local disk (--ledger / DISCUSS_LEDGER)")
        .hint("or accept the risk with --allow-network-fs (DISCUSS_ALLOW_NETWORK_FS=1)"))
    }

    fn io_error(&self, err: &std::io::Error) -> Error {
        Error::io(self.path.display(), err)
    }

    /// The ledger exists but cannot be read (a directory, a device error).
    fn unreadable(&self, err: &std::io::Error) -> Error {
        Error::new(
            ErrorCode::LedgerUnreadable,
            format!("cannot read the ledger {}: {err}", self.path.display()),
        )
        .detail("path", self.path.display().to_string())
        .hint("check --ledger / DISCUSS_LEDGER points at the ledger file")
    }
}

/// One `write` of all lines of an operation, then `fdatasync`, with the
/// fail points of the tests between the steps.
fn write_durably(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    failpoint::partial_write(file, bytes)?;
    file.write_all(bytes)?;
    failpoint::hit("append.before_fsync")?;
    file.sync_data()
}
