//! The ledger file: shared-locked reads, exclusive-locked
//! read-validate-append steps, torn-tail repair and `fsync` before success.

pub(crate) mod cache;
mod filesystem;
mod group;
mod import;
pub(super) mod private_file;
mod read;
mod storage;
mod syscalls;
use read::{keyed_of, records_of};
use syscalls::{Lock, lock, write_lines};

use crate::error::{Error, ErrorCode, Result};
use crate::ledger::excerpt::{Excerpt, Plan};
use crate::ledger::failpoint;
use crate::ledger::lines::{read_line_at, read_line_before};
use crate::ledger::summary::Summarize;
use crate::record::{Record, chain};
use cache::Cache;
use cache::summary;
use rustix::fs::OFlags;
use std::fs::{DirBuilder, File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, FileExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The file a stream read (device, inode), and the mark of where it
/// stopped: a ledger truncated and grown again past that point is told
/// apart by its last line, not by its length alone.
#[derive(Debug)]
struct StreamEnd {
    identity: (u64, u64),
    mark: cache::Mark,
}

/// What a reader found at the ledger's path.
enum Opened {
    Missing,
    /// An interrupted import waits to be undone, and the writer lock could
    /// not be had in time.
    Busy,
    Ready(File),
}

/// How far behind the ledger a cache may be and still be caught up by
/// reading the lines after it; further behind, it is rebuilt.
const CATCH_UP_LIMIT: u64 = 8 << 20;

#[derive(Debug, Clone)]
pub(crate) struct FileLedger {
    path: PathBuf,
    allow_network_fs: bool,
    /// With it, the cache keeps a summary of every discussion
    /// (`cache/summary.rs`).
    summarize: Option<Summarize>,
    /// Where `stream_records` stopped: a follower whose ledger was replaced
    /// or rewritten must not go on as if it were the same.
    streamed_from: std::sync::Arc<std::sync::Mutex<Option<StreamEnd>>>,
    /// The cache this process last saved after a write. The next write of a
    /// long-lived process (`serve`) takes it back instead of reading and
    /// parsing the checkpoint, while that checkpoint is still the file it
    /// wrote and the ledger has not changed since.
    kept: std::sync::Arc<std::sync::Mutex<Option<SavedCache>>>,
    /// This process's writers, one at a time, in groups that share the
    /// lock and one sync (`group.rs`).
    writers: std::sync::Arc<group::Writers>,
}

/// A saved cache, and what must not have changed for it to be taken back.
struct SavedCache {
    /// The checkpoint's first bytes: its magic and the hash of the rest
    /// (it is rewritten in place: its inode and times say less).
    checkpoint: [u8; 16],
    /// The ledger: device, inode, size, change time.
    ledger: (u64, u64, u64, i64, i64),
    cache: Cache,
}

impl std::fmt::Debug for SavedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SavedCache(..)")
    }
}

impl FileLedger {
    pub(crate) fn new(path: PathBuf) -> Self {
        FileLedger {
            path,
            allow_network_fs: false,
            summarize: None,
            streamed_from: Default::default(),
            kept: Default::default(),
            writers: Default::default(),
        }
    }

    fn checkpoint_stamp(&self) -> Option<[u8; 16]> {
        use std::os::unix::fs::FileExt;
        let file = private_file::open_derived(&Cache::checkpoint_path(&self.path))?;
        let mut head = [0u8; 16];
        file.read_exact_at(&mut head, 0).ok()?;
        Some(head)
    }

    fn ledger_stamp(file: &File) -> Option<(u64, u64, u64, i64, i64)> {
        use std::os::unix::fs::MetadataExt;
        let meta = file.metadata().ok()?;
        Some((
            meta.dev(),
            meta.ino(),
            meta.len(),
            meta.ctime(),
            meta.ctime_nsec(),
        ))
    }

    /// After a write's cache was saved, under the lock: kept for the next.
    fn keep(&self, cache: Cache, file: &File) {
        let kept = match (self.checkpoint_stamp(), Self::ledger_stamp(file)) {
            (Some(checkpoint), Some(ledger)) if !cache.is_dirty() => Some(SavedCache {
                checkpoint,
                ledger,
                cache,
            }),
            _ => None,
        };
        *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = kept;
    }

    /// The kept cache, under the exclusive lock, when neither the
    /// checkpoint nor the ledger changed since it was saved.
    fn take_kept(&self, file: &File) -> Option<Cache> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        let unchanged = self.checkpoint_stamp() == Some(kept.checkpoint)
            && Self::ledger_stamp(file) == Some(kept.ledger);
        unchanged.then_some(kept.cache)
    }

    /// Keeps a summary of every discussion, made by `summarize`.
    pub(crate) fn summarize_with(mut self, summarize: Summarize) -> Self {
        self.summarize = Some(summarize);
        self
    }

    /// Opens the ledger even on a network filesystem (`--allow-network-fs`).
    pub(crate) fn allow_network_fs(mut self, allow: bool) -> Self {
        self.allow_network_fs = allow;
        self
    }

    pub(crate) fn network_fs_allowed(&self) -> bool {
        self.allow_network_fs
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Where torn tails are kept: `<ledger>.torn`.
    pub(crate) fn torn_path(&self) -> PathBuf {
        cache::with_suffix(&self.path, ".torn")
    }

    /// Whether a discuss cache stands beside the file: it is a ledger in use.
    pub(crate) fn has_cache(&self) -> bool {
        Cache::index_path(&self.path).exists() || Cache::checkpoint_path(&self.path).exists()
    }

    /// Every file kept beside the ledger: the torn tails, the cache (index,
    /// checkpoint, summary) and the import marker.
    pub(crate) fn derived_paths(&self) -> [PathBuf; 5] {
        [
            self.torn_path(),
            Cache::index_path(&self.path),
            Cache::checkpoint_path(&self.path),
            summary::summary_path(&self.path),
            self.import_marker(),
        ]
    }

    /// The cache's view of the ledger under a shared lock, with the records
    /// of `discussion_ids`. A ledger that does not exist yet reads as empty;
    /// reading never creates it. When the cache must be rebuilt, the lock
    /// becomes exclusive for that.
    pub(crate) fn view(&self, discussion_ids: &[&str]) -> Result<Excerpt> {
        let view = self.view_waiting(discussion_ids, None)?;
        Ok(view.expect("an unbounded wait always gets the lock"))
    }

    /// As `view`, but waits for the lock no later than `until`: `None` when
    /// a writer still holds it then. For those who must not be late (a
    /// supervisor's kill-switch check, `wait --timeout-ms`).
    pub(crate) fn view_within(
        &self,
        discussion_ids: &[&str],
        until: Instant,
    ) -> Result<Option<Excerpt>> {
        self.view_waiting(discussion_ids, Some(until))
    }

    fn view_waiting(
        &self,
        discussion_ids: &[&str],
        until: Option<Instant>,
    ) -> Result<Option<Excerpt>> {
        let file = match self.open_reading(until)? {
            Opened::Missing => return Ok(Some(Excerpt::empty())),
            Opened::Busy => return Ok(None),
            Opened::Ready(file) => file,
        };
        if !lock(&file, Lock::Shared, until).map_err(|e| self.io_error(&e))? {
            return Ok(None);
        }
        let read = self.read_through_cache(&file, until, |cache| {
            records_of(cache, &file, discussion_ids)
        })?;
        Ok(read.map(|(cache, records)| Excerpt {
            global: cache.global,
            last_at_ms: cache.last_at_ms,
            records,
            keyed: None,
        }))
    }

    /// The ledger opened for reading under a shared lock, or `None` when it
    /// does not exist yet (reading never creates it).
    fn open_shared(&self) -> Result<Option<File>> {
        let Opened::Ready(file) = self.open_reading(None)? else {
            return Ok(None);
        };
        lock(&file, Lock::Shared, None).map_err(|e| self.io_error(&e))?;
        Ok(Some(file))
    }

    /// The ledger opened for reading, unlocked, or `None` when it does not
    /// exist yet.
    fn open_existing(&self) -> Result<Option<File>> {
        // O_NONBLOCK: a FIFO in the ledger's place must not hang the open.
        let file = match OpenOptions::new()
            .read(true)
            .custom_flags(OFlags::NONBLOCK.bits() as i32)
            .open(&self.path)
        {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(self.io_error(&err)),
        };
        self.refuse_irregular(&file)?;
        self.refuse_network_fs(&file)?;
        Ok(Some(file))
    }

    /// The ledger opened for a reader: `open_existing`, after undoing an
    /// import that a crash interrupted (waiting for the writer lock no
    /// later than `until`: `Busy` when it could not be had), and refused
    /// when it is not a ledger (a reader pointed at a README says so, and
    /// writes no cache beside it).
    fn open_reading(&self, until: Option<Instant>) -> Result<Opened> {
        let Some(file) = self.open_existing()? else {
            return Ok(Opened::Missing);
        };
        if !self.finish_interrupted_import(&file, until)? {
            return Ok(Opened::Busy);
        }
        self.refuse_foreign(&file, self.len_of(&file)?)?;
        Ok(Opened::Ready(file))
    }

    /// `ledger_unreadable` for a non-empty file whose first complete line is
    /// not a v1 record: `--ledger` pointed at some other file, which a
    /// writer must leave untouched. A file with no complete line yet is a
    /// ledger whose first write was torn.
    fn refuse_foreign(&self, file: &File, len: u64) -> Result<()> {
        // A record's line is at most a few hundred KiB (a 64 KiB envelope,
        // escaped); a first "line" longer than this is no record.
        const MAX_FIRST_LINE: u64 = 1 << 20;
        if len == 0 {
            return Ok(());
        }
        let (first, whole) =
            read_line_at(file, 0, MAX_FIRST_LINE).map_err(|e| self.unreadable(&e))?;
        if !whole && (first.len() as u64) < MAX_FIRST_LINE {
            return Ok(()); // only a torn first line
        }
        let why = match Record::parse(&first, 1) {
            Ok(_) => return Ok(()),
            Err(why) if first.len() as u64 >= MAX_FIRST_LINE => {
                format!("its first line is over {MAX_FIRST_LINE} bytes ({why})")
            }
            Err(why) => why,
        };
        Err(Error::new(
            ErrorCode::LedgerUnreadable,
            format!(
                "{} is not a discuss ledger: its first line is not a v1 record ({why}); it was left untouched",
                self.path.display()
            ),
        )
        .detail("path", self.path.display().to_string())
        .hint("point --ledger / DISCUSS_LEDGER at a ledger, or at a path where one may be created"))
    }

    /// `ledger_unreadable` for a FIFO, device, socket or directory in the
    /// ledger's place: only a regular file is a ledger.
    fn refuse_irregular(&self, file: &File) -> Result<()> {
        let kind = file.metadata().map_err(|e| self.io_error(&e))?.file_type();
        if kind.is_file() {
            return Ok(());
        }
        let what = if kind.is_dir() {
            "a directory"
        } else if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        Err(self.not_regular(what))
    }

    fn not_regular(&self, what: &str) -> Error {
        Error::new(
            ErrorCode::LedgerUnreadable,
            format!(
                "the ledger {} is {what}, not a regular file",
                self.path.display()
            ),
        )
        .detail("path", self.path.display().to_string())
        .hint("point --ledger / DISCUSS_LEDGER at a ledger file (or where one may be created)")
    }

    /// Reads through the cache under the shared lock held on `file`. When
    /// the cache is missing, too far behind, or `read` finds it damaged, the
    /// lock becomes exclusive, the cache is rebuilt, read and saved. `None`
    /// when the exclusive lock could not be had by `until`.
    fn read_through_cache<T>(
        &self,
        file: &File,
        until: Option<Instant>,
        mut read: impl FnMut(&Cache) -> Option<T>,
    ) -> Result<Option<(Cache, T)>> {
        let len = self.len_of(file)?;
        if let Some((cache, _)) = self.caught_up(file, len)?
            && let Some(got) = read(&cache)
        {
            return Ok(Some((cache, got)));
        }
        // Rebuilding writes the cache: only under the exclusive lock.
        file.unlock().map_err(|e| self.io_error(&e))?;
        if !lock(file, Lock::Exclusive, until).map_err(|e| self.io_error(&e))? {
            return Ok(None);
        }
        let len = self.len_of(file)?;
        let (mut cache, got, _) = self.trusted(file, len, read)?;
        cache.save();
        Ok(Some((cache, got)))
    }
    /// One read-validate-append step under the exclusive lock; with an
    /// idempotency key, the view also holds what the ledger has under it
    /// (`Excerpt::keyed`).
    ///
    /// `plan` sees the view with the records of `discussion_ids` and
    /// returns the records to append (possibly none) and a result. All
    /// records are written with one `write`, then `fsync`ed; only then is
    /// the result returned. The cache is updated last, still under the lock.
    pub(crate) fn append_keyed<T>(
        &self,
        discussion_ids: &[&str],
        idempotency_key: Option<&str>,
        plan: impl Plan<T>,
    ) -> Result<T> {
        let mut held = self.writers.enter();
        let mut open = match held.open.take() {
            Some(open) => open,
            None => self.open_group(held.steps + 1)?,
        };
        held.steps += 1;
        let step = held.steps;
        let stepped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.step(&mut open, discussion_ids, idempotency_key, plan)
        }));
        open.steps += 1;
        let last = stepped.is_err()
            || open.broken
            || open.steps >= group::MAX_STEPS
            || !self.writers.someone_waits();
        if last {
            self.end_group(open, step);
        } else {
            held.open = Some(open);
        }
        drop(held);
        let synced = self.writers.wait_synced(step);
        let result = stepped.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        synced.map_err(|e| self.io_error(&e))?;
        result
    }

    /// The ledger locked for a group of writes whose first step is `first`,
    /// with its cache: the one kept from this process's last write when
    /// nothing changed since, else the cache's files caught up (or rebuilt).
    fn open_group(&self, first: u64) -> Result<group::OpenGroup> {
        let (file, created, len) = loop {
            let (file, created) = self.open_for_append()?;
            lock(&file, Lock::Exclusive, None).map_err(|e| self.io_error(&e))?;
            let len = self.len_of(&file)?;
            // A ledger its creator removed again (it wrote nothing) while
            // this one waited for the lock: open the path anew. Only an
            // empty one is ever removed, so a ledger with lines is not
            // looked up again (no stat on a write's path).
            if len > 0 || self.still_named(&file) {
                break (file, created, len);
            }
        };
        self.refuse_foreign(&file, len)?;
        let (cache, whole) = match self.take_kept(&file) {
            Some(cache) => (cache, len),
            None => match self.caught_up(&file, len)? {
                Some(caught_up) => caught_up,
                None => self.rebuilt(&file, len)?,
            },
        };
        Ok(group::OpenGroup {
            file,
            created,
            cache,
            len,
            whole,
            start: whole,
            first,
            steps: 0,
            unsynced: false,
            broken: false,
            prev: None,
        })
    }

    /// One write of a group: `plan` sees the records of `discussion_ids`
    /// (and under `idempotency_key`), and what it returns is written,
    /// not yet synced.
    fn step<T>(
        &self,
        open: &mut group::OpenGroup,
        discussion_ids: &[&str],
        idempotency_key: Option<&str>,
        plan: impl Plan<T>,
    ) -> Result<T> {
        let read = |cache: &Cache, file: &File| {
            let records = records_of(cache, file, discussion_ids)?;
            let keyed = match idempotency_key {
                Some(key) => keyed_of(cache, file, key)?,
                None => None,
            };
            Some((records, keyed))
        };
        let (records, keyed) = match read(&open.cache, &open.file) {
            Some(got) => got,
            None => {
                let (cache, whole) = self.rebuilt(&open.file, open.len)?;
                open.cache = cache;
                open.whole = whole;
                open.prev = None;
                read(&open.cache, &open.file).ok_or_else(|| self.index_mismatch())?
            }
        };
        // The global state moves into the view and back: no copy.
        let view = Excerpt {
            global: std::mem::take(&mut open.cache.global),
            last_at_ms: open.cache.last_at_ms,
            records,
            keyed,
        };
        let planned = plan(&view);
        open.cache.global = view.global;
        let (records, result) = planned?;
        if records.is_empty() {
            return Ok(result);
        }
        if open.whole < open.len {
            self.move_torn_tail(&open.file, open.whole, open.len)?;
            open.len = open.whole;
        }
        let mut prev = match open.prev {
            Some(prev) => prev,
            None => read_line_before(&open.file, open.whole)
                .map(|line| match open.whole {
                    0 => chain::before_first_line(),
                    _ => chain::digest_of(&line),
                })
                .map_err(|e| self.unreadable(&e))?,
        };
        let lines = Record::operation_lines(&records, &mut prev);
        failpoint::hit("append.before_write").map_err(|e| self.io_error(&e))?;
        if let Err(err) = write_lines(&mut open.file, lines.as_bytes()) {
            // Cut back what may have reached the file, so no later append
            // glues onto half a line. Should that fail too, the lines left
            // are an operation cut short, which readers ignore and the next
            // writer moves to `<ledger>.torn`.
            let _ = open
                .file
                .set_len(open.whole)
                .and_then(|()| open.file.sync_data());
            open.broken = true;
            return Err(self.io_error(&err));
        }
        open.cache.written(open.whole, lines.as_bytes(), &records);
        open.whole += lines.len() as u64;
        open.len = open.whole;
        open.unsynced = true;
        open.prev = Some(prev);
        Ok(result)
    }

    fn sync_group(&self, file: &File) -> std::io::Result<()> {
        (self.writers.sync)(file)
    }

    /// This handle's groups made durable by `sync` (tests count the syncs,
    /// or fail one).
    #[cfg(test)]
    pub(super) fn syncing_with(mut self, sync: fn(&File) -> std::io::Result<()>) -> Self {
        self.writers = std::sync::Arc::new(group::Writers::syncing_with(sync));
        self
    }

    /// The last step of a group: one sync for all it wrote, then the cache
    /// saved and kept, the lock let go, and every step through `through`
    /// told. A failed sync cuts the ledger back to where the group began.
    fn end_group(&self, mut open: group::OpenGroup, through: u64) {
        // A ledger this group created and nothing was written to (every
        // write refused) is removed, under the lock: a refused write
        // leaves no empty ledger behind (which `verify` would pass).
        if open.created && !open.unsynced && self.len_of(&open.file).is_ok_and(|len| len == 0) {
            if self.still_named(&open.file) {
                // Its cache first (made when the group opened): a cache
                // beside no ledger would make a later one look used.
                for derived in &self.derived_paths()[1..4] {
                    let _ = std::fs::remove_file(derived);
                }
                let _ = std::fs::remove_file(&self.path);
            }
            self.writers.settle(through, None);
            return;
        }
        let synced = if open.unsynced {
            self.sync_group(&open.file)
        } else {
            Ok(())
        };
        let failure = match synced {
            Ok(()) => {
                // Only a crash can happen here in tests: the operations are
                // durable, the cache not yet saved, the lock still held.
                let _ = failpoint::hit("append.after_fsync");
                open.cache.save();
                if !open.broken {
                    self.keep(open.cache, &open.file);
                }
                None
            }
            Err(err) => {
                let _ = open
                    .file
                    .set_len(open.start)
                    .and_then(|()| open.file.sync_data());
                Some(group::Failure::new(open.first, through, &err))
            }
        };
        self.writers.settle(through, failure);
    }

    /// The cache as its files hold it, caught up with the ledger's first
    /// `len` bytes, and where the ledger's whole operations end (what
    /// follows is a torn tail); `None` when it is missing, far behind, or
    /// does not match the ledger.
    fn caught_up(&self, file: &File, len: u64) -> Result<Option<(Cache, u64)>> {
        let Some(mut cache) = Cache::load(&self.path, file)
            .filter(|cache| len.saturating_sub(cache.mark.covered) <= CATCH_UP_LIMIT)
        else {
            return Ok(None);
        };
        cache.summarize = self.summarize;
        let whole = cache.catch_up(file, len).map_err(|e| self.unreadable(&e))?;
        Ok(Some((cache, whole)))
    }

    /// Under the exclusive lock: the cache caught up with the ledger, or
    /// rebuilt when it is missing or `read` finds it damaged; what `read`
    /// got from it; and where the ledger's whole operations end.
    fn trusted<T>(
        &self,
        file: &File,
        len: u64,
        mut read: impl FnMut(&Cache) -> Option<T>,
    ) -> Result<(Cache, T, u64)> {
        if let Some((cache, whole)) = self.caught_up(file, len)?
            && let Some(got) = read(&cache)
        {
            return Ok((cache, got, whole));
        }
        let (cache, whole) = self.rebuilt(file, len)?;
        let got = read(&cache).ok_or_else(|| self.index_mismatch())?;
        Ok((cache, got, whole))
    }

    /// Under the exclusive lock: the cache rebuilt from the ledger's first
    /// `len` bytes, and where its whole operations end.
    fn rebuilt(&self, file: &File, len: u64) -> Result<(Cache, u64)> {
        let mut cache = Cache::rebuild(&self.path, file).map_err(|e| self.unreadable(&e))?;
        cache.summarize = self.summarize;
        let whole = cache.catch_up(file, len).map_err(|e| self.unreadable(&e))?;
        Ok((cache, whole))
    }

    fn index_mismatch(&self) -> Error {
        Error::new(
            ErrorCode::Internal,
            format!(
                "the index rebuilt from {} does not match it",
                self.path.display()
            ),
        )
    }

    fn len_of(&self, file: &File) -> Result<u64> {
        Ok(file.metadata().map_err(|e| self.io_error(&e))?.len())
    }

    /// The ledger opened to append, created if missing (and whether this
    /// call created it); only a regular file (one `create_new` made always
    /// is).
    fn open_for_append(&self) -> Result<(File, bool)> {
        let (file, existed) = self.open_or_create()?;
        self.refuse_irregular(&file)?;
        if existed {
            // A new ledger's folder was checked before it was made.
            self.refuse_network_fs(&file)?;
            self.finish_interrupted_import(&file, None)?;
        }
        Ok((file, !existed))
    }

    /// Whether the ledger's path still names `file` (it was not removed,
    /// or replaced, since `file` was opened).
    fn still_named(&self, file: &File) -> bool {
        use std::os::unix::fs::MetadataExt as _;
        match (std::fs::metadata(&self.path), file.metadata()) {
            (Ok(named), Ok(held)) => named.dev() == held.dev() && named.ino() == held.ino(),
            _ => false,
        }
    }

    /// The ledger opened to append, and whether it was there already.
    fn open_or_create(&self) -> Result<(File, bool)> {
        let mut options = OpenOptions::new();
        options
            .read(true)
            .append(true)
            .mode(0o600)
            .custom_flags(OFlags::NONBLOCK.bits() as i32);
        match options.open(&self.path) {
            Ok(file) => return Ok((file, true)),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            // The same answer as a reader's (a directory cannot be opened
            // to write, so it is never seen as one here).
            Err(err) if err.kind() == std::io::ErrorKind::IsADirectory => {
                return Err(self.not_regular("a directory"));
            }
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
                Ok((file, false))
            }
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                let file = options.open(&self.path).map_err(|e| self.io_error(&e))?;
                Ok((file, false))
            }
            Err(err) => Err(self.io_error(&err)),
        }
    }

    /// Appends a torn tail (bytes `keep..len`) to `<ledger>.torn`, followed
    /// by `\n` so tails kept from several crashes stay apart, and truncates
    /// the ledger back to `keep`, the end of its last whole operation.
    fn move_torn_tail(&self, ledger: &File, keep: u64, len: u64) -> Result<()> {
        let mut tail = vec![0u8; (len - keep) as usize];
        ledger
            .read_exact_at(&mut tail, keep)
            .map_err(|e| self.unreadable(&e))?;
        tail.push(b'\n');
        let torn_path = self.torn_path();
        // Never through a planted symlink, FIFO or device: refused instead.
        private_file::append_private(&torn_path, &tail)
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

    /// A ledger that changed under a reader in a way an append-only ledger
    /// never does: positions read so far no longer mean anything.
    fn changed_under_reader(&self, from: (u64, u64), what: &str) -> Error {
        Error::new(
            ErrorCode::LedgerUnreadable,
            format!(
                "the ledger {} {what} after {} lines ({} bytes) were read: a ledger is only ever appended to, so the positions read so far no longer hold; stopped",
                self.path.display(),
                from.1,
                from.0
            ),
        )
        .detail("path", self.path.display().to_string())
        .detail("line", from.1)
        .hint("start again from the beginning (or --after a line you know) once the ledger is what it should be")
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

#[cfg(test)]
mod tests;
