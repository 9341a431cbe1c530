//! Derived data that makes a command cost what its discussion costs, not
//! what the whole ledger costs. All of it is a cache: rebuilt from the
//! ledger when missing, stale or damaged, checked against the ledger before
//! it is trusted, and updated under the ledger's exclusive lock by the
//! writer that appends. Deleting it changes nothing but speed.
//!
//! Two files sit next to the ledger:
//!
//! - `<ledger>.index`, the base: every discussion line up to a point, as
//!   fixed-size entries sorted by (discussion key, offset), then the
//!   discussion ids. Written whole (temporary file, `fsync`, rename), never
//!   changed in place, so a lookup is a binary search with `pread`.
//! - `<ledger>.checkpoint`: where the cache stands in the ledger (length,
//!   line count, hash of the last covered line), the global state (fleets,
//!   kill-switch, quotas, the last hour of reservations), and the entries
//!   of the lines after the base. Rewritten (rename) by every writer; when
//!   it holds more than `MERGE_AT` entries they are merged into a new base.
//!
//! A crash between the ledger's `fsync` and the checkpoint leaves a
//! checkpoint that covers less than the ledger: the next command reads the
//! lines after it. A checkpoint or base that does not match the ledger is
//! rebuilt. A key collision is harmless: records are checked by their id.

use super::failpoint;
use super::hash::hash64;
use super::lines::{OpTracker, parse_lines, stream_lines};
use super::record::{RESERVED, Record};
use crate::global::Global;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Entries after the base before they are merged into a new one.
pub const MERGE_AT: usize = 4096;
const ENTRY: usize = 24;
const BASE_MAGIC: &[u8; 8] = b"DSCIDX01";
const BASE_HEADER: usize = 96;
const CHECKPOINT_MAGIC: &[u8; 8] = b"DSCCKP01";

/// One discussion line of the ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRef {
    /// `hash64` of the discussion id.
    pub key: u64,
    pub offset: u64,
    /// Length without the `\n`.
    pub len: u32,
    pub line: u32,
}

impl LineRef {
    fn to_bytes(self) -> [u8; ENTRY] {
        let mut b = [0u8; ENTRY];
        b[..8].copy_from_slice(&self.key.to_le_bytes());
        b[8..16].copy_from_slice(&self.offset.to_le_bytes());
        b[16..20].copy_from_slice(&self.len.to_le_bytes());
        b[20..].copy_from_slice(&self.line.to_le_bytes());
        b
    }

    fn from_bytes(b: &[u8]) -> LineRef {
        let word = |r: std::ops::Range<usize>| {
            let mut a = [0u8; 8];
            a[..r.len()].copy_from_slice(&b[r]);
            u64::from_le_bytes(a)
        };
        LineRef {
            key: word(0..8),
            offset: word(8..16),
            len: word(16..20) as u32,
            line: word(20..24) as u32,
        }
    }
}

pub fn key_of(discussion_id: &str) -> u64 {
    hash64(discussion_id.as_bytes())
}

/// A point in the ledger: all whole operations before `covered`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
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
    mark: Mark,
    last_at_ms: Option<i64>,
    global: Global,
    base: BaseRef,
    new_ids: BTreeSet<String>,
}

/// The index could not be trusted while reading through it.
#[derive(Debug)]
pub struct Damaged;

/// The cache of one ledger, loaded or rebuilt.
pub struct Cache {
    path: PathBuf,
    dev: u64,
    ino: u64,
    pub mark: Mark,
    pub last_at_ms: Option<i64>,
    pub global: Global,
    base: BaseRef,
    base_file: Option<File>,
    ids_range: (u64, u64, u64),
    delta: Vec<LineRef>,
    new_ids: BTreeSet<String>,
    dirty: bool,
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The line that ends (with its `\n`) at byte `end`, and where it starts.
fn line_ending_at(ledger: &File, end: u64) -> io::Result<(u64, Vec<u8>)> {
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

fn mark_at(ledger: &File, covered: u64, lines: u64) -> io::Result<Mark> {
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

/// Whether `mark` still describes the ledger: it is that long at least and
/// its last covered line is the same.
fn mark_holds(ledger: &File, len: u64, mark: &Mark) -> bool {
    if mark.covered == 0 {
        return mark.lines == 0;
    }
    if mark.covered > len || mark.last_line_start >= mark.covered {
        return false;
    }
    let mut line = vec![0u8; (mark.covered - mark.last_line_start) as usize];
    let mut before = [b'\n'];
    let ok = ledger
        .read_exact_at(&mut line, mark.last_line_start)
        .is_ok()
        && (mark.last_line_start == 0
            || ledger
                .read_exact_at(&mut before, mark.last_line_start - 1)
                .is_ok());
    ok && before[0] == b'\n'
        && line.last() == Some(&b'\n')
        && hash64(&line[..line.len() - 1]) == mark.last_line_hash
}

fn create_private(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

fn base_header(
    dev: u64,
    ino: u64,
    mark: &Mark,
    entries: u64,
    ids: (u64, u64, u64),
) -> [u8; BASE_HEADER] {
    let mut h = [0u8; BASE_HEADER];
    h[..8].copy_from_slice(BASE_MAGIC);
    let fields = [
        dev,
        ino,
        mark.covered,
        mark.lines,
        mark.last_line_start,
        mark.last_line_hash,
        entries,
        ids.0,
        ids.1,
        ids.2,
    ];
    for (i, f) in fields.iter().enumerate() {
        h[8 + i * 8..16 + i * 8].copy_from_slice(&f.to_le_bytes());
    }
    let sum = hash64(&h[..88]);
    h[88..96].copy_from_slice(&sum.to_le_bytes());
    h
}

struct BaseInfo {
    dev: u64,
    ino: u64,
    mark: Mark,
    entries: u64,
    /// Offset, length and hash of the discussion ids.
    ids: (u64, u64, u64),
    header_hash: u64,
}

fn read_base_header(file: &File) -> Option<BaseInfo> {
    let mut h = [0u8; BASE_HEADER];
    file.read_exact_at(&mut h, 0).ok()?;
    if &h[..8] != BASE_MAGIC {
        return None;
    }
    let field = |i: usize| u64::from_le_bytes(h[8 + i * 8..16 + i * 8].try_into().unwrap());
    if hash64(&h[..88]) != field(10) {
        return None;
    }
    // A base cut short (or grown) is not the one its header describes.
    let end = field(7).checked_add(field(8))?;
    if file.metadata().ok()?.len() != end
        || field(7) != BASE_HEADER as u64 + field(6) * ENTRY as u64
    {
        return None;
    }
    Some(BaseInfo {
        dev: field(0),
        ino: field(1),
        mark: Mark {
            covered: field(2),
            lines: field(3),
            last_line_start: field(4),
            last_line_hash: field(5),
        },
        entries: field(6),
        ids: (field(7), field(8), field(9)),
        header_hash: hash64(&h),
    })
}

impl Cache {
    pub fn index_path(ledger: &Path) -> PathBuf {
        with_suffix(ledger, ".index")
    }

    pub fn checkpoint_path(ledger: &Path) -> PathBuf {
        with_suffix(ledger, ".checkpoint")
    }

    /// The cache of a ledger that does not exist yet; never saved.
    pub fn empty(path: &Path) -> Cache {
        Cache {
            path: path.to_path_buf(),
            dev: 0,
            ino: 0,
            mark: Mark::default(),
            last_at_ms: None,
            global: Global::default(),
            base: BaseRef::default(),
            base_file: None,
            ids_range: (0, 0, 0),
            delta: Vec::new(),
            new_ids: BTreeSet::new(),
            dirty: false,
        }
    }

    /// The cache as the files hold it, if they match the ledger.
    pub fn load(path: &Path, ledger: &File) -> Option<Cache> {
        let meta = ledger.metadata().ok()?;
        let mut bytes = Vec::new();
        File::open(Cache::checkpoint_path(path))
            .ok()?
            .read_to_end(&mut bytes)
            .ok()?;
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
        let entries = &bytes[24 + json_len..];
        if body.dev != meta.dev() || body.ino != meta.ino() || entries.len() % ENTRY != 0 {
            return None;
        }
        if !mark_holds(ledger, meta.len(), &body.mark) {
            return None;
        }
        let (base_file, ids_range) = if body.base.entries == 0 && body.base.mark.covered == 0 {
            (None, (0, 0, 0))
        } else {
            let file = File::open(Cache::index_path(path)).ok()?;
            let info = read_base_header(&file)?;
            let matches = info.dev == body.dev
                && info.ino == body.ino
                && info.mark == body.base.mark
                && info.entries == body.base.entries
                && info.header_hash == body.base.header_hash;
            if !matches {
                return None;
            }
            (Some(file), info.ids)
        };
        Some(Cache {
            path: path.to_path_buf(),
            dev: body.dev,
            ino: body.ino,
            mark: body.mark,
            last_at_ms: body.last_at_ms,
            global: body.global,
            base: body.base,
            base_file,
            ids_range,
            delta: entries
                .chunks_exact(ENTRY)
                .map(LineRef::from_bytes)
                .collect(),
            new_ids: body.new_ids,
            dirty: false,
        })
    }

    /// Builds the cache from the whole ledger, streaming it, and writes the
    /// base. The caller holds the exclusive lock.
    pub fn rebuild(path: &Path, ledger: &File) -> io::Result<Cache> {
        let meta = ledger.metadata()?;
        let (gathered, covered, lines) = scan_all(ledger, meta.len())?;
        let mark = mark_at(ledger, covered, lines)?;
        let mut entries = gathered.entries;
        entries.sort_unstable_by_key(|e| (e.key, e.offset));
        let mut ids: Vec<String> = gathered.ids.into_iter().collect();
        ids.sort_unstable();
        let mut cache = Cache {
            path: path.to_path_buf(),
            dev: meta.dev(),
            ino: meta.ino(),
            mark,
            last_at_ms: gathered.last_at_ms,
            global: gathered.global,
            base: BaseRef::default(),
            base_file: None,
            ids_range: (0, 0, 0),
            delta: Vec::new(),
            new_ids: BTreeSet::new(),
            dirty: true,
        };
        let total = entries.len() as u64;
        match write_base(
            path,
            cache.dev,
            cache.ino,
            &mark,
            entries.iter().copied(),
            total,
            &ids,
        ) {
            Ok(base) => cache.use_base(base),
            Err(_) => {
                // The folder is not writable (an operator reading someone
                // else's ledger, a full disk): answer from memory instead.
                cache.delta = entries;
                cache.new_ids = ids.into_iter().collect();
                cache.dirty = false;
            }
        }
        if let Some(last) = cache.last_at_ms {
            cache.global.forget_reservations_before(last);
        }
        Ok(cache)
    }

    fn use_base(&mut self, (file, info): (File, BaseInfo)) {
        self.base = BaseRef {
            mark: info.mark,
            entries: info.entries,
            header_hash: info.header_hash,
        };
        self.ids_range = info.ids;
        self.base_file = Some(file);
    }

    /// Reads the whole operations after the cache's mark (written by a
    /// writer that crashed before updating the cache, or by another tool)
    /// and folds them in. Returns where the whole operations end: the bytes
    /// after it are a torn tail.
    pub fn catch_up(&mut self, ledger: &File, len: u64) -> io::Result<u64> {
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
    pub fn written(&mut self, start: u64, bytes: &[u8], records: &[Record]) {
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
        if let Some(id) = record.discussion_id() {
            self.delta.push(LineRef {
                key: key_of(id),
                offset: start,
                len: len as u32,
                line: line_no as u32,
            });
            if !self.new_ids.contains(id) {
                self.new_ids.insert(id.to_string());
            }
        }
        self.global.apply(record);
        self.last_at_ms = Some(
            self.last_at_ms
                .map_or(record.at_ms, |t| t.max(record.at_ms)),
        );
    }

    /// The records of `discussion_id`, in ledger order.
    pub fn records_of(&self, ledger: &File, discussion_id: &str) -> Result<Vec<Record>, Damaged> {
        let key = key_of(discussion_id);
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
            match record.discussion_id() {
                Some(id) if id == discussion_id => records.push(record),
                Some(id) if key_of(id) == key => {} // another id, same key
                _ => return Err(Damaged),
            }
        }
        Ok(records)
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

    /// Every discussion id the ledger names.
    pub fn discussion_ids(&self) -> Result<Vec<String>, Damaged> {
        let mut ids: BTreeSet<String> = self.new_ids.clone();
        ids.extend(self.discussion_ids_of_base(self.base_file.as_ref())?);
        Ok(ids.into_iter().collect())
    }

    /// Writes the checkpoint (merging into a new base first when the
    /// entries after the base are many). A failure leaves a stale or
    /// missing cache, which the next command notices: it never fails the
    /// command that wrote the ledger.
    pub fn save(&mut self) {
        if !self.dirty {
            return;
        }
        if failpoint::hit("cache.before_save").is_err() {
            return;
        }
        if self.delta.len() > failpoint::merge_at(MERGE_AT) && self.merge().is_err() {
            return;
        }
        if self.write_checkpoint().is_ok() {
            self.dirty = false;
        }
    }

    fn write_checkpoint(&mut self) -> io::Result<()> {
        if let Some(last) = self.last_at_ms {
            self.global.forget_reservations_before(last);
        }
        let body = CheckpointBody {
            dev: self.dev,
            ino: self.ino,
            mark: self.mark,
            last_at_ms: self.last_at_ms,
            global: self.global.clone(),
            base: self.base,
            new_ids: self.new_ids.clone(),
        };
        let json = serde_json::to_vec(&body).map_err(io::Error::other)?;
        let mut rest = Vec::with_capacity(8 + json.len() + self.delta.len() * ENTRY);
        rest.extend_from_slice(&(json.len() as u64).to_le_bytes());
        rest.extend_from_slice(&json);
        for entry in &self.delta {
            rest.extend_from_slice(&entry.to_bytes());
        }
        let mut bytes = Vec::with_capacity(16 + rest.len());
        bytes.extend_from_slice(CHECKPOINT_MAGIC);
        bytes.extend_from_slice(&hash64(&rest).to_le_bytes());
        bytes.extend_from_slice(&rest);
        let target = Cache::checkpoint_path(&self.path);
        let temp = with_suffix(&target, &format!(".{}", std::process::id()));
        let result = create_private(&temp)
            .and_then(|mut f| f.write_all(&bytes))
            .and_then(|()| std::fs::rename(&temp, &target));
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        result
    }

    /// A new base: the old one's entries and ids merged with the newer.
    fn merge(&mut self) -> io::Result<()> {
        let mut delta = std::mem::take(&mut self.delta);
        delta.sort_unstable_by_key(|e| (e.key, e.offset));
        let old = self.base_file.take();
        let old_entries = self.base.entries;
        let mut ids: BTreeSet<String> = std::mem::take(&mut self.new_ids);
        match self.discussion_ids_of_base(old.as_ref()) {
            Ok(old_ids) => ids.extend(old_ids),
            Err(Damaged) => {
                self.base_file = old;
                self.new_ids = ids;
                self.delta = delta;
                return Err(io::Error::other("the base's ids are damaged"));
            }
        }
        let ids: Vec<String> = ids.into_iter().collect();
        let stream = BaseStream::new(old.as_ref(), old_entries);
        let merged = MergeSorted {
            a: stream.peekable(),
            b: delta.iter().copied().peekable(),
        };
        let total = old_entries + delta.len() as u64;
        match write_base(
            &self.path, self.dev, self.ino, &self.mark, merged, total, &ids,
        ) {
            Ok(base) => {
                self.use_base(base);
                Ok(())
            }
            Err(err) => {
                self.base_file = old;
                self.delta = delta;
                self.new_ids = ids.into_iter().collect();
                Err(err)
            }
        }
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

/// The entries of a base file, in order, read in chunks.
struct BaseStream<'a> {
    file: Option<&'a File>,
    next: u64,
    total: u64,
    buf: Vec<LineRef>,
    pos: usize,
}

impl<'a> BaseStream<'a> {
    fn new(file: Option<&'a File>, total: u64) -> Self {
        BaseStream {
            file,
            next: 0,
            total,
            buf: Vec::new(),
            pos: 0,
        }
    }
}

impl Iterator for BaseStream<'_> {
    type Item = LineRef;
    fn next(&mut self) -> Option<LineRef> {
        if self.pos == self.buf.len() {
            let file = self.file?;
            if self.next >= self.total {
                return None;
            }
            let count = (self.total - self.next).min(16_384);
            let mut b = vec![0u8; count as usize * ENTRY];
            // A base that cannot be read ends the stream early; `write_base`
            // then counts fewer entries than it expects and gives up.
            file.read_exact_at(&mut b, BASE_HEADER as u64 + self.next * ENTRY as u64)
                .ok()?;
            self.buf = b.chunks_exact(ENTRY).map(LineRef::from_bytes).collect();
            self.pos = 0;
            self.next += count;
        }
        self.pos += 1;
        Some(self.buf[self.pos - 1])
    }
}

struct MergeSorted<A: Iterator<Item = LineRef>, B: Iterator<Item = LineRef>> {
    a: std::iter::Peekable<A>,
    b: std::iter::Peekable<B>,
}

impl<A: Iterator<Item = LineRef>, B: Iterator<Item = LineRef>> Iterator for MergeSorted<A, B> {
    type Item = LineRef;
    fn next(&mut self) -> Option<LineRef> {
        match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) if (x.key, x.offset) <= (y.key, y.offset) => self.a.next(),
            (Some(_), Some(_)) | (None, _) => self.b.next(),
            (Some(_), None) => self.a.next(),
        }
    }
}

/// Writes a base (temporary file, `fsync`, rename, `fsync` of the folder)
/// and returns it opened for reading.
fn write_base(
    path: &Path,
    dev: u64,
    ino: u64,
    mark: &Mark,
    entries: impl Iterator<Item = LineRef>,
    total: u64,
    ids: &[String],
) -> io::Result<(File, BaseInfo)> {
    let target = Cache::index_path(path);
    let temp = with_suffix(&target, &format!(".{}", std::process::id()));
    let result = (|| {
        let file = create_private(&temp)?;
        let mut out = BufWriter::with_capacity(1 << 20, &file);
        out.write_all(&[0u8; BASE_HEADER])?;
        let mut written = 0u64;
        for entry in entries {
            out.write_all(&entry.to_bytes())?;
            written += 1;
        }
        if written != total {
            return Err(io::Error::other("the old base could not be read whole"));
        }
        let ids_offset = BASE_HEADER as u64 + written * ENTRY as u64;
        let mut section = Vec::new();
        for id in ids {
            section.extend_from_slice(id.as_bytes());
            section.push(b'\n');
        }
        out.write_all(&section)?;
        out.flush()?;
        drop(out);
        let ids = (ids_offset, section.len() as u64, hash64(&section));
        file.write_all_at(&base_header(dev, ino, mark, written, ids), 0)?;
        file.sync_all()?;
        std::fs::rename(&temp, &target)?;
        if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
            File::open(parent)?.sync_all()?;
        }
        let file = File::open(&target)?;
        let info = read_base_header(&file).ok_or_else(|| io::Error::other("base header"))?;
        Ok((file, info))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// What a scan of the ledger gathers.
#[derive(Default)]
struct Gathered {
    entries: Vec<LineRef>,
    ids: HashSet<String>,
    global: Global,
    last_at_ms: Option<i64>,
}

/// The fields of a line the index needs, read without building the whole
/// record; the payload is skipped, not copied.
#[derive(Deserialize)]
struct Peek<'a> {
    v: u64,
    #[serde(borrow)]
    kind: Cow<'a, str>,
    at_ms: i64,
    #[serde(default, borrow)]
    correlation_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    discussion_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    receipt: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    agent_id: Option<Cow<'a, str>>,
    #[serde(default)]
    op_lines: Option<u64>,
}

/// What one line adds, held back while its operation is incomplete.
/// `exact` tells whether it comes from a whole parse of the line.
struct Effect {
    entry: Option<(LineRef, String)>,
    global: Option<Record>,
    at_ms: Option<i64>,
    /// A reservation peeked at: (agent, at_ms).
    reservation: Option<(String, i64)>,
    offset: u64,
    exact: bool,
}

/// Facts taken from peeked lines, checked by a whole parse at the end:
/// only the few that decide the result need it.
#[derive(Default)]
struct Unchecked {
    /// The line that gave the latest `at_ms`, if it was only peeked at.
    last_at: Option<u64>,
    /// The last line that opened an operation of several lines.
    last_opener: Option<(u64, bool)>,
    /// Reservations peeked at: (offset, agent, at_ms), newest last.
    reservations: Vec<(u64, String, i64)>,
    /// How many make it time to forget those out of the last hour.
    forget_at: usize,
}

/// One pass over the whole ledger, a chunk at a time: the discussion lines
/// as entries, the global state, the ids, the last `at_ms`. It gives the
/// same answers as parsing every record (`Snapshot::parse`), faster: most
/// lines are only peeked at; lines that change the global state are parsed
/// whole; and the few peeked facts the result depends on (the latest time,
/// the last operation's first line, the last hour of reservations) are
/// checked by a whole parse at the end. Should one not hold, the pass is
/// made again parsing every line.
fn scan_all(ledger: &File, len: u64) -> io::Result<(Gathered, u64, u64)> {
    if let Some(result) = scan(ledger, len, false)? {
        return Ok(result);
    }
    Ok(scan(ledger, len, true)?.expect("an exact scan has nothing to check"))
}

fn scan(ledger: &File, len: u64, exact: bool) -> io::Result<Option<(Gathered, u64, u64)>> {
    let mut gathered = Gathered::default();
    let mut unchecked = Unchecked {
        forget_at: 8192,
        ..Unchecked::default()
    };
    let mut tracker = OpTracker::default();
    let mut pending: Vec<Effect> = Vec::new();
    let (end, line_count) = stream_lines(ledger, len, |offset, line_no, line| {
        let (effect, op_lines) = read_line(line, offset, line_no, exact);
        if op_lines.is_some_and(|n| n > 1) {
            unchecked.last_opener = Some((offset, effect.exact));
            // A new operation: whatever was held back belongs before any
            // cut, as in `parse_lines`.
            for effect in pending.drain(..) {
                commit(&mut gathered, &mut unchecked, effect);
            }
        }
        tracker.line(offset, line_no, op_lines);
        pending.push(effect);
        if !tracker.is_open() {
            for effect in pending.drain(..) {
                commit(&mut gathered, &mut unchecked, effect);
            }
        }
    })?;
    let (covered, lines) = match tracker.cut() {
        Some((start, line)) => (start, line - 1),
        None => (end, line_count),
    };
    if exact {
        return Ok(Some((gathered, covered, lines)));
    }
    // The checks: each peeked fact the result depends on must be what a
    // whole parse of its line says.
    if let Some((offset, false)) = unchecked.last_opener
        && read_record(ledger, offset)?.is_none_or(|(_, op_lines)| op_lines.is_none_or(|n| n < 2))
    {
        return Ok(None);
    }
    if let Some(offset) = unchecked.last_at
        && read_record(ledger, offset)?
            .is_none_or(|(record, _)| Some(record.at_ms) != gathered.last_at_ms)
    {
        return Ok(None);
    }
    let last = gathered.last_at_ms.unwrap_or(i64::MIN);
    for (offset, agent, at_ms) in &unchecked.reservations {
        if *at_ms <= last.saturating_sub(crate::global::QUOTA_WINDOW_MS) {
            continue;
        }
        match read_record(ledger, *offset)? {
            Some((record, _)) if record.at_ms == *at_ms => {
                let same = matches!(&record.body, super::Body::Receipt(r)
                    if r.receipt == RESERVED && r.agent_id.as_deref() == Some(agent.as_str()));
                if !same {
                    return Ok(None);
                }
                gathered.global.apply(&record);
            }
            _ => return Ok(None),
        }
    }
    Ok(Some((gathered, covered, lines)))
}

/// The record on the line at `offset`, with its `op_lines`.
fn read_record(ledger: &File, offset: u64) -> io::Result<Option<(Record, Option<u64>)>> {
    let mut line = Vec::new();
    let mut at = offset;
    loop {
        let mut chunk = vec![0u8; 64 * 1024];
        let n = ledger.read_at(&mut chunk, at)?;
        if n == 0 {
            return Ok(None);
        }
        if let Some(pos) = memchr::memchr(b'\n', &chunk[..n]) {
            line.extend_from_slice(&chunk[..pos]);
            return Ok(Record::parse_with_op_lines(&line, 0).ok());
        }
        line.extend_from_slice(&chunk[..n]);
        at += n as u64;
    }
}

fn commit(gathered: &mut Gathered, unchecked: &mut Unchecked, effect: Effect) {
    if let Some((entry, id)) = effect.entry {
        gathered.entries.push(entry);
        if !gathered.ids.contains(&id) {
            gathered.ids.insert(id);
        }
    }
    if let Some(record) = effect.global {
        gathered.global.apply(&record);
    }
    if let Some(at_ms) = effect.at_ms
        && gathered.last_at_ms.is_none_or(|t| at_ms > t)
    {
        gathered.last_at_ms = Some(at_ms);
        unchecked.last_at = (!effect.exact).then_some(effect.offset);
    }
    if let Some((agent, at_ms)) = effect.reservation {
        unchecked.reservations.push((effect.offset, agent, at_ms));
        // Only the last hour counts: forget what fell out of it, now and
        // then, so memory stays small however long the ledger.
        if unchecked.reservations.len() >= unchecked.forget_at {
            let horizon = gathered
                .last_at_ms
                .unwrap_or(i64::MIN)
                .saturating_sub(crate::global::QUOTA_WINDOW_MS);
            unchecked.reservations.retain(|(_, _, t)| *t > horizon);
            unchecked.forget_at = (unchecked.reservations.len() * 2).max(8192);
        }
    }
}

/// One line: peeked at when it can be, parsed whole when it must be.
/// Returns what it adds and its `op_lines`.
fn read_line(line: &[u8], offset: u64, line_no: u64, exact: bool) -> (Effect, Option<u64>) {
    let entry = |id: &str| {
        (
            LineRef {
                key: key_of(id),
                offset,
                len: line.len() as u32,
                line: line_no as u32,
            },
            id.to_string(),
        )
    };
    let mut effect = Effect {
        entry: None,
        global: None,
        at_ms: None,
        reservation: None,
        offset,
        exact: true,
    };
    let peeked = if exact {
        None
    } else {
        peek_message(line).or_else(|| serde_json::from_slice::<Peek>(line).ok())
    };
    let whole = match &peeked {
        Some(peek) => {
            peek.v != 1 || matches!(peek.kind.as_ref(), "fleet" | "kill_switch" | "quota")
        }
        None => true,
    };
    if whole {
        return match Record::parse_with_op_lines(line, line_no as usize) {
            Ok((record, op_lines)) => {
                effect.entry = record.discussion_id().map(entry);
                effect.at_ms = Some(record.at_ms);
                effect.global = Some(record);
                (effect, op_lines)
            }
            Err(_) => (effect, None),
        };
    }
    let peek = peeked.expect("peeked");
    effect.exact = false;
    effect.at_ms = Some(peek.at_ms);
    match peek.kind.as_ref() {
        "message" => effect.entry = peek.correlation_id.as_deref().map(entry),
        "receipt" => {
            effect.entry = peek.discussion_id.as_deref().map(entry);
            if peek.receipt.as_deref() == Some(RESERVED)
                && let Some(agent) = peek.agent_id
            {
                effect.reservation = Some((agent.into_owned(), peek.at_ms));
            }
        }
        _ => {}
    }
    (effect, peek.op_lines)
}

/// The fast way through a message line as `discuss` writes it: the fields
/// before `payload` are parsed as JSON on their own and the payload is not
/// read at all. Only a line whose payload is its last field takes this
/// way; any other gets `None` and is peeked at whole. A line that is not
/// valid JSON after all is indexed anyway and skipped when read back, as
/// replay skips it.
fn peek_message(line: &[u8]) -> Option<Peek<'static>> {
    const PREFIX: &[u8] = br#"{"v":1,"kind":"message","#;
    const PAYLOAD: &[u8] = br#","payload":""#;
    if !line.starts_with(PREFIX) || !line.ends_with(b"\"}") {
        return None;
    }
    let at = memchr::memmem::find(line, PAYLOAD)?;
    // The payload must run to the end: no quote inside it that is not
    // escaped, or another field follows it (one this way would not see).
    let payload = &line[at + PAYLOAD.len()..line.len() - 2];
    let unescaped_quote = memchr::memchr_iter(b'"', payload).any(|q| {
        let backslashes = payload[..q]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        backslashes % 2 == 0
    });
    if unescaped_quote || payload.iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1 {
        return None;
    }
    let mut head = Vec::with_capacity(at + 1);
    head.extend_from_slice(&line[..at]);
    head.push(b'}');
    let peek: Peek = serde_json::from_slice(&head).ok()?;
    Some(Peek {
        v: peek.v,
        kind: Cow::Borrowed("message"),
        at_ms: peek.at_ms,
        correlation_id: peek.correlation_id.map(|c| Cow::Owned(c.into_owned())),
        discussion_id: None,
        receipt: None,
        agent_id: None,
        op_lines: None,
    })
}
