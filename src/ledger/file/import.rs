//! Importing into a file ledger: all or nothing across a crash, with the
//! `<ledger>.importing` marker.

use super::{CATCH_UP_LIMIT, FileLedger, Lock, cache, lock, private_file};
use crate::error::{Error, Result};
use crate::ledger::failpoint;
use crate::ledger::lines::{read_line_before, stream_lines};
use crate::record::{Record, chain};
use rustix::fs::OFlags;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

impl FileLedger {
    /// Appends the lines of `source` (checked beforehand: complete lines,
    /// whole operations) under the writer lock, leaving out those
    /// `source.decide` says to, and `fsync`s them. All or nothing across a
    /// crash: a marker (`<ledger>.importing`, the length before) is made
    /// durable first and removed last, and whoever opens the ledger next
    /// while it stands cuts the ledger back to that length (those lines
    /// were never acknowledged, and the imported file still has them).
    pub(crate) fn import(
        &self,
        source: &crate::ledger::import::Source<'_>,
    ) -> Result<crate::ledger::import::Imported> {
        let (mut file, _) = self.open_for_append()?;
        lock(&file, Lock::Exclusive, None).map_err(|e| self.io_error(&e))?;
        let old = self.len_of(&file)?;
        self.refuse_foreign(&file, old)?;
        let (mut cache, (), whole) = self.trusted(&file, old, |_| Some(()))?;
        if whole < old {
            self.move_torn_tail(&file, whole, old)?;
        }
        let mut existing = Vec::new();
        stream_lines(&file, whole, |_, line_no, line| {
            if let Ok(record) = Record::parse(line, line_no as usize)
                && source.wants(&record.id)
            {
                existing.push((record.id, line.to_vec()));
            }
        })
        .map_err(|e| self.unreadable(&e))?;
        let skip = source.decide(existing)?;
        let mut prev = match whole {
            0 => chain::before_first_line(),
            _ => {
                chain::digest_of(&read_line_before(&file, whole).map_err(|e| self.unreadable(&e))?)
            }
        };
        let boundary = source.boundary(&skip, &mut prev)?;
        self.mark_import(whole)?;
        let mut lines = 0u64;
        let written = (|| -> std::io::Result<u64> {
            let mut copied = 0;
            if let Some(boundary) = &boundary {
                file.write_all(boundary.as_bytes())?;
                copied += boundary.len() as u64;
            }
            copied += if skip.is_empty() {
                copy_chunks(source.file, source.len, &mut file, &mut lines)?
            } else {
                copy_lines(source, &skip, &mut file, &mut lines)?
            };
            failpoint::hit("append.before_fsync")?;
            file.sync_data()?;
            Ok(copied)
        })();
        let copied = match written {
            Ok(copied) => copied,
            Err(err) => {
                let _ = file.set_len(whole).and_then(|()| file.sync_data());
                let _ = self.unmark_import();
                return Err(self.io_error(&err));
            }
        };
        self.unmark_import()?;
        // The cache reads the new lines as another tool's; past what it
        // catches up in memory, the next command rebuilds it, streaming.
        if copied <= CATCH_UP_LIMIT && cache.catch_up(&file, whole + copied).is_ok() {
            cache.save();
        }
        Ok(crate::ledger::import::Imported {
            imported: lines,
            skipped: skip.len() as u64,
        })
    }

    /// `<ledger>.importing`: stands while a file import is under way.
    pub(super) fn import_marker(&self) -> PathBuf {
        cache::with_suffix(&self.path, ".importing")
    }

    /// Makes the marker durable: the ledger's length before the import.
    fn mark_import(&self, before: u64) -> Result<()> {
        let marker = self.import_marker();
        let failed = |e: std::io::Error| Error::io(marker.display(), &e);
        let _ = std::fs::remove_file(&marker);
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(OFlags::NOFOLLOW.bits() as i32)
            .open(&marker)
            .map_err(failed)?;
        file.write_all(format!("{before}\n").as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(failed)?;
        self.sync_folder()
    }

    fn unmark_import(&self) -> Result<()> {
        let marker = self.import_marker();
        std::fs::remove_file(&marker).map_err(|e| Error::io(marker.display(), &e))?;
        self.sync_folder()
    }

    fn sync_folder(&self) -> Result<()> {
        let folder = match self.path.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => folder,
            _ => Path::new("."),
        };
        File::open(folder)
            .and_then(|dir| dir.sync_all())
            .map_err(|e| Error::io(folder.display(), &e))
    }

    /// After an import that did not finish (its process died), the ledger
    /// is cut back to where it was before it, under the writer lock.
    /// `false` when the lock could not be had by `until` (an import is
    /// under way, or another process holds the lock).
    pub(super) fn finish_interrupted_import(
        &self,
        file: &File,
        until: Option<Instant>,
    ) -> Result<bool> {
        let marker = self.import_marker();
        if std::fs::symlink_metadata(&marker).is_err() {
            return Ok(true);
        }
        if !lock(file, Lock::Exclusive, until).map_err(|e| self.io_error(&e))? {
            return Ok(false);
        }
        // Under the lock: the importer is gone (or finished meanwhile).
        let before = private_file::read_derived(&marker, 64)
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| text.trim().parse::<u64>().ok());
        if let Some(before) = before {
            let len = self.len_of(file)?;
            if len > before {
                // Opened for reading: the cut needs a handle that may write.
                OpenOptions::new()
                    .write(true)
                    .open(&self.path)
                    .and_then(|w| w.set_len(before).and_then(|()| w.sync_data()))
                    .map_err(|e| self.io_error(&e))?;
            }
        }
        if std::fs::symlink_metadata(&marker).is_ok() {
            self.unmark_import()?;
        }
        file.unlock().map_err(|e| self.io_error(&e))?;
        Ok(true)
    }
}

/// The chunk an import copies at a time (smaller under the tests' fail
/// points, to crash between many of them).
fn import_chunk() -> usize {
    failpoint::import_chunk(4 << 20)
}

/// Copies `len` bytes of `source` to `ledger` a chunk at a time; the
/// bytes copied, and the lines counted into `lines`.
fn copy_chunks(
    source: &File,
    len: u64,
    ledger: &mut File,
    lines: &mut u64,
) -> std::io::Result<u64> {
    let mut chunk = vec![0u8; import_chunk()];
    let mut copied = 0u64;
    while copied < len {
        let n = ((len - copied) as usize).min(chunk.len());
        source.read_exact_at(&mut chunk[..n], copied)?;
        *lines += memchr::memchr_iter(b'\n', &chunk[..n]).count() as u64;
        ledger.write_all(&chunk[..n])?;
        copied += n as u64;
        failpoint::hit("import.after_chunk")?;
    }
    Ok(copied)
}

/// Copies the lines of `source` whose offsets are not in `skip`.
fn copy_lines(
    source: &crate::ledger::import::Source<'_>,
    skip: &std::collections::HashSet<u64>,
    ledger: &mut File,
    lines: &mut u64,
) -> std::io::Result<u64> {
    let mut pending: Vec<u8> = Vec::with_capacity(import_chunk());
    let mut copied = 0u64;
    let mut failed = None;
    stream_lines(source.file, source.len, |offset, _, line| {
        if failed.is_some() || skip.contains(&offset) {
            return;
        }
        pending.extend_from_slice(line);
        pending.push(b'\n');
        *lines += 1;
        if pending.len() >= import_chunk() {
            copied += pending.len() as u64;
            failed = ledger
                .write_all(&pending)
                .and_then(|()| failpoint::hit("import.after_chunk"))
                .err();
            pending.clear();
        }
    })?;
    if let Some(err) = failed {
        return Err(err);
    }
    copied += pending.len() as u64;
    ledger.write_all(&pending)?;
    Ok(copied)
}
