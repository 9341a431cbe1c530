//! Derived data that makes a command cost what its discussion costs, not
//! what the whole ledger costs. All of it is a cache: rebuilt from the
//! ledger when missing, stale or damaged, checked against the ledger before
//! it is trusted, and updated under the ledger's exclusive lock by the
//! writer that appends. Deleting it changes nothing but speed.
//!
//! Three of the five files that may sit next to the ledger are this cache
//! (the others: `<ledger>.torn`, where a torn tail is moved, and
//! `<ledger>.importing`, which stands while an import is under way):
//!
//! - `<ledger>.index`, the base: every discussion line up to a point, as
//!   fixed-size entries sorted by (discussion key, offset), then the
//!   discussion ids. Written whole (temporary file, `fsync`, rename), never
//!   changed in place, so a lookup is a binary search with `pread`.
//! - `<ledger>.checkpoint`: where the cache stands in the ledger (length,
//!   line count, hash of the last covered line), the global state (fleets,
//!   kill-switch, quotas, the last hour of reservations), and the entries
//!   and discussion ids of the lines after the base (`new_ids.rs`).
//!   Rewritten by every writer (in place when it is the writer's own file,
//!   else by a rename: `private_file.rs`); when it holds more than
//!   `MERGE_AT` entries they are merged into a new base.
//! - `<ledger>.summary`: a list row for every discussion of the base
//!   (`summary.rs`), written beside it when a list derives them all.
//!
//! Where the cache stands is a `Mark` (length, line count, where the last
//! covered line starts and its hash): the one fingerprint the checkpoint,
//! and a stream of the records, check the ledger against.
//!
//! A crash between the ledger's `fsync` and the checkpoint leaves a
//! checkpoint that covers less than the ledger: the next command reads the
//! lines after it. A checkpoint or base that does not match the ledger is
//! rebuilt. A key collision is harmless: records are checked by their id.

mod index_file;
mod new_ids;
pub(crate) use new_ids::NewIds;
mod peek;
mod persist;
mod rebuild;
pub(crate) mod summary;

use super::private_file::{
    TEMP_MARK, open_derived, read_derived, rewrite_in_place, temporary_beside,
};
use crate::global::Global;
use crate::ledger::failpoint;
use crate::ledger::hash::hash64;
use crate::ledger::lines::parse_lines;
use crate::ledger::live::LiveSet;
use crate::ledger::summary::{Summarize, Summary};
use crate::record::Record;
use index_file::{
    BASE_HEADER, BaseInfo, BaseStream, ENTRY, MergeSorted, read_base_header, write_base,
};
pub(crate) use index_file::{LineRef, idempotency_index_key, key_of};
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use peek::peek_as_serde;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use summary::SummaryWriter;

/// Entries after the base before they are merged into a new one.
pub(crate) const MERGE_AT: usize = 4096;
const CHECKPOINT_MAGIC: &[u8; 8] = b"DSCCKP02";

/// A point in the ledger: all whole operations before `covered`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Mark {
    pub covered: u64,
    pub lines: u64,
    pub last_line_start: u64,
    pub last_line_hash: u64,
}

/// Which base a checkpoint builds on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
struct BaseRef {
    mark: Mark,
    entries: u64,
    header_hash: u64,
}

#[derive(Serialize, Deserialize)]
struct CheckpointBody {
    dev: u64,
    ino: u64,
    /// The ledger's ctime (seconds, nanoseconds) when the checkpoint was
    /// written. Every write to the ledger changes it, and no user can set
    /// it: a ledger edited in place, even to the same length, no longer
    /// matches, and the cache is rebuilt rather than trusted.
    #[serde(default)]
    ledger_ctime: (i64, i64),
    mark: Mark,
    last_at_ms: Option<i64>,
    global: Global,
    base: BaseRef,
    #[serde(default)]
    live: LiveSet,
    /// How many entries follow the JSON (`ENTRY` bytes each); the new
    /// ids (`NewIds`) follow them.
    entries: u64,
}

/// The index could not be trusted while reading through it.
#[derive(Debug)]
pub(crate) struct Damaged;

/// The cache of one ledger, loaded or rebuilt.
pub(crate) struct Cache {
    path: PathBuf,
    dev: u64,
    ino: u64,
    pub mark: Mark,
    pub last_at_ms: Option<i64>,
    pub global: Global,
    /// The discussions that may still be open or active (`live.rs`).
    pub live: LiveSet,
    base: BaseRef,
    base_file: Option<File>,
    ids_range: (u64, u64, u64),
    /// What the base's entries hash to, as its header says.
    entries_hash: u64,
    delta: Vec<LineRef>,
    new_ids: NewIds,
    dirty: bool,
    /// How the command layer summarizes a discussion: with it, a merge
    /// carries the summary over to the new base (`summary.rs`).
    pub summarize: Option<Summarize>,
}

/// A checkpoint holds the global state and at most a merge's worth of
/// entries; anything larger is not one.
const MAX_CHECKPOINT_BYTES: u64 = 256 << 20;

pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The line that ends (with its `\n`) at byte `end`, and where it starts.
pub(super) fn line_ending_at(ledger: &File, end: u64) -> io::Result<(u64, Vec<u8>)> {
    let mut start = end - 1;
    let mut tail: Vec<u8> = Vec::new();
    loop {
        let from = start.saturating_sub(64 * 1024);
        let mut chunk = vec![0u8; (start - from) as usize];
        ledger.read_exact_at(&mut chunk, from)?;
        if let Some(pos) = memchr::memrchr(b'\n', &chunk) {
            chunk.drain(..=pos);
            chunk.extend_from_slice(&tail);
            return Ok((from + pos as u64 + 1, chunk));
        }
        chunk.extend_from_slice(&tail);
        tail = chunk;
        if from == 0 {
            return Ok((0, tail));
        }
        start = from;
    }
}

impl Mark {
    /// The mark of the first `covered` bytes, `lines` lines, of `ledger`.
    pub(crate) fn at(ledger: &File, covered: u64, lines: u64) -> io::Result<Mark> {
        if covered == 0 {
            return Ok(Mark::default());
        }
        let (start, line) = line_ending_at(ledger, covered)?;
        Ok(Mark {
            covered,
            lines,
            last_line_start: start,
            last_line_hash: hash64(&line),
        })
    }

    /// Whether the mark still describes `ledger`, `len` bytes long: it is
    /// that long at least and its last covered line is the same, a whole
    /// line. What every derived file and stream checks the ledger against.
    pub(crate) fn holds(&self, ledger: &File, len: u64) -> bool {
        if self.covered == 0 {
            return self.lines == 0;
        }
        if self.covered > len || self.last_line_start >= self.covered {
            return false;
        }
        let mut line = vec![0u8; (self.covered - self.last_line_start) as usize];
        let mut before = [b'\n'];
        let ok = ledger
            .read_exact_at(&mut line, self.last_line_start)
            .is_ok()
            && (self.last_line_start == 0
                || ledger
                    .read_exact_at(&mut before, self.last_line_start - 1)
                    .is_ok());
        ok && before[0] == b'\n'
            && line.last() == Some(&b'\n')
            && hash64(&line[..line.len() - 1]) == self.last_line_hash
    }
}

impl Cache {
    pub(crate) fn index_path(ledger: &Path) -> PathBuf {
        with_suffix(ledger, ".index")
    }

    pub(crate) fn checkpoint_path(ledger: &Path) -> PathBuf {
        with_suffix(ledger, ".checkpoint")
    }

    /// The cache as the files hold it, if they match the ledger.
    pub(crate) fn load(path: &Path, ledger: &File) -> Option<Cache> {
        let meta = ledger.metadata().ok()?;
        let bytes = read_derived(&Cache::checkpoint_path(path), MAX_CHECKPOINT_BYTES)?;
        if bytes.len() < 24 || &bytes[..8] != CHECKPOINT_MAGIC {
            return None;
        }
        let sum = u64::from_le_bytes(bytes[8..16].try_into().ok()?);
        if hash64(&bytes[16..]) != sum {
            return None;
        }
        let json_len = u64::from_le_bytes(bytes[16..24].try_into().ok()?) as usize;
        let json = bytes.get(24..24usize.checked_add(json_len)?)?;
        let body: CheckpointBody = serde_json::from_slice(json).ok()?;
        // Saved by an earlier version, which skipped records this one
        // folds.
        if !body.global.folds_everything() {
            return None;
        }
        let entries_len = usize::try_from(body.entries).ok()?.checked_mul(ENTRY)?;
        let (entries, new_ids) = bytes[24 + json_len..].split_at_checked(entries_len)?;
        if body.dev != meta.dev()
            || body.ino != meta.ino()
            || body.ledger_ctime != (meta.ctime(), meta.ctime_nsec())
        {
            return None;
        }
        let new_ids = NewIds::from_bytes(new_ids)?;
        if !body.mark.holds(ledger, meta.len()) {
            return None;
        }
        let (base_file, ids_range, entries_hash) =
            if body.base.entries == 0 && body.base.mark.covered == 0 {
                (None, (0, 0, 0), 0)
            } else {
                let file = open_derived(&Cache::index_path(path))?;
                let info = read_base_header(&file)?;
                let matches = info.dev == body.dev
                    && info.ino == body.ino
                    && info.mark == body.base.mark
                    && info.entries == body.base.entries
                    && info.header_hash == body.base.header_hash;
                if !matches {
                    return None;
                }
                (Some(file), info.ids, info.entries_hash)
            };
        Some(Cache {
            path: path.to_path_buf(),
            dev: body.dev,
            ino: body.ino,
            mark: body.mark,
            last_at_ms: body.last_at_ms,
            global: body.global,
            live: body.live,
            base: body.base,
            base_file,
            ids_range,
            entries_hash,
            delta: entries
                .chunks_exact(ENTRY)
                .map(LineRef::from_bytes)
                .collect(),
            new_ids,
            dirty: false,
            summarize: None,
        })
    }

    /// Builds the cache from the whole ledger, streaming it, and writes the
    /// base. The caller holds the exclusive lock.
    pub(crate) fn rebuild(path: &Path, ledger: &File) -> io::Result<Cache> {
        let (gathered, covered, lines) = rebuild::scan_all(ledger, ledger.metadata()?.len())?;
        Cache::of_gathered(path, ledger, gathered, (covered, lines))
    }

    /// The cache of what a scan of the first `covered` bytes (`lines`
    /// lines) gathered, its base written.
    fn of_gathered(
        path: &Path,
        ledger: &File,
        gathered: rebuild::Gathered,
        (covered, lines): (u64, u64),
    ) -> io::Result<Cache> {
        let meta = ledger.metadata()?;
        let mark = Mark::at(ledger, covered, lines)?;
        let mut entries = gathered.entries;
        entries.sort_unstable_by_key(|e| (e.key, e.offset));
        let sorted = || entries.iter().copied();
        let ids = gathered.ids.into_sorted();
        let mut cache = Cache {
            path: path.to_path_buf(),
            dev: meta.dev(),
            ino: meta.ino(),
            mark,
            last_at_ms: gathered.last_at_ms,
            global: gathered.global,
            live: gathered.live,
            base: BaseRef::default(),
            base_file: None,
            ids_range: (0, 0, 0),
            entries_hash: 0,
            delta: Vec::new(),
            new_ids: NewIds::default(),
            dirty: true,
            summarize: None,
        };
        cache.remove_leftovers();
        let total = entries.len() as u64;
        match write_base(path, cache.dev, cache.ino, &mark, sorted(), total, &ids) {
            Ok(base) => cache.use_base(base),
            Err(_) => {
                // The folder is not writable (an operator reading someone
                // else's ledger, a full disk): answer from memory instead.
                cache.delta = sorted().collect();
                cache.new_ids = ids.iter().map(String::as_str).collect();
                cache.dirty = false;
            }
        }
        cache.global.forget_old_reservations();
        Ok(cache)
    }

    /// Removes temporary files a crash left behind mid-rewrite
    /// (`<ledger>.index.tmp…`, `<ledger>.checkpoint.tmp…`, and the
    /// `.<pid>` names of earlier versions). Only called
    /// under the exclusive lock, when no other writer can be making one.
    fn remove_leftovers(&self) {
        let (Some(folder), Some(name)) = (self.path.parent(), self.path.file_name()) else {
            return;
        };
        let folder = if folder.as_os_str().is_empty() {
            Path::new(".")
        } else {
            folder
        };
        let Ok(entries) = std::fs::read_dir(folder) else {
            return;
        };
        let name = name.to_string_lossy();
        for entry in entries.flatten() {
            let file = entry.file_name();
            let file = file.to_string_lossy();
            let leftover = [".index.", ".checkpoint.", ".summary."].iter().any(|kind| {
                file.strip_prefix(name.as_ref())
                    .and_then(|rest| rest.strip_prefix(kind))
                    .is_some_and(|rest| {
                        let pid = !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit());
                        let temp = rest.strip_prefix(TEMP_MARK).is_some_and(|r| {
                            !r.is_empty() && r.bytes().all(|b| b.is_ascii_alphanumeric())
                        });
                        pid || temp
                    })
            });
            if leftover {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }

    fn use_base(&mut self, (file, info): (File, BaseInfo)) {
        self.base = BaseRef {
            mark: info.mark,
            entries: info.entries,
            header_hash: info.header_hash,
        };
        self.ids_range = info.ids;
        self.entries_hash = info.entries_hash;
        self.base_file = Some(file);
    }

    /// Reads the whole operations after the cache's mark (written by a
    /// writer that crashed before updating the cache, or by another tool)
    /// and folds them in. Returns where the whole operations end: the bytes
    /// after it are a torn tail.
    pub(crate) fn catch_up(&mut self, ledger: &File, len: u64) -> io::Result<u64> {
        if len <= self.mark.covered {
            return Ok(self.mark.covered);
        }
        let mut bytes = vec![0u8; (len - self.mark.covered) as usize];
        ledger.read_exact_at(&mut bytes, self.mark.covered)?;
        let (lines, end) = parse_lines(&bytes, self.mark.covered, self.mark.lines + 1);
        let count = lines.len() as u64;
        let last = lines.last().map(|l| (l.start, l.len));
        for line in lines {
            if let Ok(record) = line.record {
                self.fold(&record, line.start, line.len, line.line_no);
            }
        }
        if let Some((start, line_len)) = last {
            let offset = (start - self.mark.covered) as usize;
            self.mark = Mark {
                covered: end,
                lines: self.mark.lines + count,
                last_line_start: start,
                last_line_hash: hash64(&bytes[offset..offset + line_len as usize]),
            };
            self.dirty = true;
        }
        Ok(end)
    }

    /// Folds in the lines one writer just appended at `start`.
    pub(crate) fn written(&mut self, start: u64, bytes: &[u8], records: &[Record]) {
        let mut line_start = 0usize;
        for (record, end) in records.iter().zip(memchr::memchr_iter(b'\n', bytes)) {
            self.mark.lines += 1;
            let line_no = self.mark.lines;
            self.fold(
                record,
                start + line_start as u64,
                (end - line_start) as u64,
                line_no,
            );
            self.mark.last_line_start = start + line_start as u64;
            self.mark.last_line_hash = hash64(&bytes[line_start..end]);
            line_start = end + 1;
        }
        self.mark.covered = start + bytes.len() as u64;
        self.dirty = true;
    }

    fn fold(&mut self, record: &Record, start: u64, len: u64, line_no: u64) {
        if let Some(idempotency) = &record.idempotency {
            self.delta.push(LineRef {
                key: idempotency_index_key(&idempotency.key),
                offset: start,
                len: len as u32,
                line: line_no as u32,
            });
        }
        if let Some(id) = record.discussion_id() {
            self.delta.push(LineRef {
                key: key_of(id),
                offset: start,
                len: len as u32,
                line: line_no as u32,
            });
            self.new_ids.insert(id);
        }
        crate::ledger::fold::Fold {
            global: &mut self.global,
            live: &mut self.live,
            last_at_ms: &mut self.last_at_ms,
        }
        .record(record);
    }

    /// The records of `discussion_id`, in ledger order.
    pub(crate) fn records_of(
        &self,
        ledger: &File,
        discussion_id: &str,
    ) -> Result<Vec<Record>, Damaged> {
        let key = key_of(discussion_id);
        self.records_at(ledger, key, |record| match record.discussion_id() {
            Some(id) if id == discussion_id => Some(true),
            Some(id) if key_of(id) == key => Some(false), // another id, same key
            _ => None,
        })
    }

    /// `f` of the records of `discussion_id`; `None` when it has none (its
    /// lines were not records after all).
    pub(crate) fn with_records<R>(
        &self,
        ledger: &File,
        discussion_id: &str,
        f: impl FnOnce(&[&Record]) -> R,
    ) -> Result<Option<R>, Damaged> {
        let records = self.records_of(ledger, discussion_id)?;
        let refs: Vec<&Record> = records.iter().collect();
        Ok((!refs.is_empty()).then(|| f(&refs)))
    }

    /// The records that carry the idempotency key `idempotency_key` (one,
    /// unless another tool wrote it twice), in ledger order.
    pub(crate) fn records_with_key(
        &self,
        ledger: &File,
        idempotency_key: &str,
    ) -> Result<Vec<Record>, Damaged> {
        let key = idempotency_index_key(idempotency_key);
        self.records_at(ledger, key, |record| match &record.idempotency {
            Some(i) if i.key == idempotency_key => Some(true),
            Some(i) if idempotency_index_key(&i.key) == key => Some(false),
            _ => None,
        })
    }

    /// The records on the lines indexed under `key`, in ledger order: those
    /// `belongs` says are wanted (`Some(true)`), without those it says share
    /// the key by chance (`Some(false)`); a line it disowns (`None`) means
    /// the index is damaged.
    fn records_at(
        &self,
        ledger: &File,
        key: u64,
        belongs: impl Fn(&Record) -> Option<bool>,
    ) -> Result<Vec<Record>, Damaged> {
        let mut refs = self.base_entries(key).map_err(|_| Damaged)?;
        refs.extend(self.delta.iter().filter(|e| e.key == key));
        refs.sort_unstable_by_key(|e| e.offset);
        let mut records = Vec::with_capacity(refs.len());
        for entry in refs {
            if entry.offset + u64::from(entry.len) >= self.mark.covered {
                return Err(Damaged);
            }
            // The byte before the line, the line and its `\n`.
            let from = entry.offset.saturating_sub(1);
            let mut buf = vec![0u8; (entry.offset - from) as usize + entry.len as usize + 1];
            ledger.read_exact_at(&mut buf, from).map_err(|_| Damaged)?;
            let line = &buf[(entry.offset - from) as usize..buf.len() - 1];
            let bounded = (entry.offset == 0 || buf[0] == b'\n') && buf.last() == Some(&b'\n');
            if !bounded || memchr::memchr(b'\n', line).is_some() {
                return Err(Damaged);
            }
            // A line no reader takes as a record is skipped, as replay does.
            let Ok(record) = Record::parse(line, entry.line as usize) else {
                continue;
            };
            match belongs(&record) {
                Some(true) => records.push(record),
                Some(false) => {}
                None => return Err(Damaged),
            }
        }
        Ok(records)
    }

    /// The number of the last line indexed under each key, from the whole
    /// index read in order: when a pass over the ledger has read it, the
    /// discussions of that key have no record left to come. (A base that
    /// cannot be read gives fewer: those discussions wait for the end of
    /// the pass.) `Damaged` when the base's entries are not those it
    /// was written with.
    pub(crate) fn last_line_of_each_key(
        &self,
    ) -> Result<crate::ledger::hash::KeyHashMap<u32>, Damaged> {
        let mut last = crate::ledger::hash::KeyHashMap::default();
        let mut base = self.base_stream();
        for entry in base.by_ref().chain(self.delta.iter().copied()) {
            let line = last.entry(entry.key).or_insert(entry.line);
            *line = (*line).max(entry.line);
        }
        if !base.intact() {
            return Err(Damaged);
        }
        Ok(last)
    }

    /// The base's entries, in order.
    fn base_stream(&self) -> BaseStream<'_> {
        BaseStream::new(
            self.base_file.as_ref(),
            (self.base.entries, self.entries_hash),
        )
    }

    fn base_entries(&self, key: u64) -> io::Result<Vec<LineRef>> {
        let Some(file) = &self.base_file else {
            return Ok(Vec::new());
        };
        let n = self.base.entries;
        let at = |i: u64| -> io::Result<LineRef> {
            let mut b = [0u8; ENTRY];
            file.read_exact_at(&mut b, BASE_HEADER as u64 + i * ENTRY as u64)?;
            Ok(LineRef::from_bytes(&b))
        };
        // The first entry whose key is not below `key`.
        let (mut lo, mut hi) = (0u64, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if at(mid)?.key < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut found = Vec::new();
        let mut i = lo;
        'read: while i < n {
            let count = (n - i).min(64);
            let mut b = vec![0u8; count as usize * ENTRY];
            file.read_exact_at(&mut b, BASE_HEADER as u64 + i * ENTRY as u64)?;
            for chunk in b.chunks_exact(ENTRY) {
                let entry = LineRef::from_bytes(chunk);
                if entry.key != key {
                    break 'read;
                }
                found.push(entry);
            }
            i += count;
        }
        Ok(found)
    }

    /// The latest indexed line at or before line `line`: where it starts
    /// and its number (`None` when no line is). The base is read only when
    /// the entries after it hold none, and all of it: `Damaged` when its
    /// entries are not those it was written with.
    pub(crate) fn line_at_or_before(&self, line: u64) -> Result<Option<(u64, u64)>, Damaged> {
        let at_or_before = |entry: &LineRef| u64::from(entry.line) <= line;
        let latest = self
            .delta
            .iter()
            .copied()
            .filter(at_or_before)
            .max_by_key(|entry| entry.line);
        let latest = match latest {
            Some(entry) => Some(entry),
            None => {
                let mut base = self.base_stream();
                let latest = base
                    .by_ref()
                    .filter(at_or_before)
                    .max_by_key(|entry| entry.line);
                if !base.intact() {
                    return Err(Damaged);
                }
                latest
            }
        };
        Ok(latest.map(|entry| (entry.offset, u64::from(entry.line))))
    }

    /// Every discussion id the ledger names.
    pub(crate) fn discussion_ids(&self) -> Result<Vec<String>, Damaged> {
        let mut ids = self.discussion_ids_of_base(self.base_file.as_ref())?;
        ids.extend(self.new_ids.iter().map(str::to_owned));
        ids.sort_unstable();
        ids.dedup();
        Ok(ids)
    }

    /// Whether it holds more than its files do.
    pub(crate) fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// The ledger this is the cache of.
    pub(crate) fn ledger_path(&self) -> &Path {
        &self.path
    }

    /// The header hash of the base a summary must belong to; `None`
    /// without a base file (nothing to summarize against).
    pub(crate) fn summary_base(&self) -> Option<u64> {
        self.base_file.as_ref().map(|_| self.base.header_hash)
    }

    /// The discussions with lines after the base: their summary lines, if
    /// any, are older than the ledger.
    pub(crate) fn touched_after_base(&self) -> BTreeSet<&str> {
        self.new_ids.sorted()
    }

    fn discussion_ids_of_base(&self, file: Option<&File>) -> Result<Vec<String>, Damaged> {
        let Some(file) = file else {
            return Ok(Vec::new());
        };
        let (offset, len, hash) = self.ids_range;
        let mut bytes = vec![0u8; len as usize];
        file.read_exact_at(&mut bytes, offset)
            .map_err(|_| Damaged)?;
        if hash64(&bytes) != hash {
            return Err(Damaged);
        }
        let text = String::from_utf8(bytes).map_err(|_| Damaged)?;
        Ok(text.lines().map(str::to_string).collect())
    }
}
