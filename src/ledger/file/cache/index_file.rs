//! `<ledger>.index`: the base of the cache. A header, then fixed-size
//! entries sorted by (discussion key, offset), then the discussion ids, one
//! a line. Written whole and renamed into place, never changed in place.
//! The header holds a hash of the entries, which whoever reads them all
//! checks: a damaged line number would otherwise go unseen.

use super::Mark;
use crate::ledger::file::private_file::temporary_beside;
use crate::ledger::hash::hash64;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

pub(super) const ENTRY: usize = 24;
const BASE_MAGIC: &[u8; 8] = b"DSCIDX02";
pub(super) const BASE_HEADER: usize = 104;
/// Entries read (and hashed) at a time.
const CHUNK: usize = 16_384;

/// The hash of a base's entries, a chunk of `CHUNK` entries at a time (the
/// last one shorter), so that a stream checks it as it reads.
fn chain_hash(so_far: u64, chunk: &[u8]) -> u64 {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&so_far.to_le_bytes());
    b[8..].copy_from_slice(&hash64(chunk).to_le_bytes());
    hash64(&b)
}

/// One discussion line of the ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineRef {
    /// `hash64` of the discussion id.
    pub key: u64,
    pub offset: u64,
    /// Length without the `\n`.
    pub len: u32,
    pub line: u32,
}

impl LineRef {
    pub(super) fn to_bytes(self) -> [u8; ENTRY] {
        let mut b = [0u8; ENTRY];
        b[..8].copy_from_slice(&self.key.to_le_bytes());
        b[8..16].copy_from_slice(&self.offset.to_le_bytes());
        b[16..20].copy_from_slice(&self.len.to_le_bytes());
        b[20..].copy_from_slice(&self.line.to_le_bytes());
        b
    }

    pub(super) fn from_bytes(b: &[u8]) -> LineRef {
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

pub(crate) fn key_of(discussion_id: &str) -> u64 {
    hash64(discussion_id.as_bytes())
}

/// The index key of the line that carries an idempotency key: a hash of
/// its own namespace, so it never meets a discussion's key but by chance
/// (which lookups tell apart by reading the line).
pub(crate) fn idempotency_index_key(idempotency_key: &str) -> u64 {
    hash64(format!("idempotency_key\n{idempotency_key}").as_bytes())
}

fn base_header(
    dev: u64,
    ino: u64,
    mark: &Mark,
    (entries, entries_hash): (u64, u64),
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
        entries_hash,
    ];
    for (i, f) in fields.iter().enumerate() {
        h[8 + i * 8..16 + i * 8].copy_from_slice(&f.to_le_bytes());
    }
    let sum = hash64(&h[..96]);
    h[96..104].copy_from_slice(&sum.to_le_bytes());
    h
}

pub(super) struct BaseInfo {
    pub(super) dev: u64,
    pub(super) ino: u64,
    pub(super) mark: Mark,
    pub(super) entries: u64,
    /// Offset, length and hash of the discussion ids.
    pub(super) ids: (u64, u64, u64),
    pub(super) entries_hash: u64,
    pub(super) header_hash: u64,
}

pub(super) fn read_base_header(file: &File) -> Option<BaseInfo> {
    let mut h = [0u8; BASE_HEADER];
    file.read_exact_at(&mut h, 0).ok()?;
    if &h[..8] != BASE_MAGIC {
        return None;
    }
    let field = |i: usize| u64::from_le_bytes(h[8 + i * 8..16 + i * 8].try_into().unwrap());
    if hash64(&h[..96]) != field(11) {
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
        entries_hash: field(10),
        header_hash: hash64(&h),
    })
}

/// The entries of a base file, in order, read in chunks. A base whose
/// entries do not hash as its header says ends before its last chunk:
/// `intact` tells, once the stream is over.
pub(super) struct BaseStream<'a> {
    file: Option<&'a File>,
    next: u64,
    total: u64,
    hashed: u64,
    expected: u64,
    buf: Vec<LineRef>,
    pos: usize,
}

impl<'a> BaseStream<'a> {
    pub(super) fn new(file: Option<&'a File>, (total, expected): (u64, u64)) -> Self {
        BaseStream {
            file,
            next: 0,
            total,
            hashed: 0,
            expected,
            buf: Vec::new(),
            pos: 0,
        }
    }

    /// Whether every entry was read and they hash as the header says
    /// (without a base file, there is nothing to doubt).
    pub(super) fn intact(&self) -> bool {
        self.file.is_none() || (self.next == self.total && self.hashed == self.expected)
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
            let count = (self.total - self.next).min(CHUNK as u64);
            let mut b = vec![0u8; count as usize * ENTRY];
            // A base that cannot be read, or is damaged, ends the stream
            // early; `write_base` then counts fewer entries than it expects
            // and gives up.
            file.read_exact_at(&mut b, BASE_HEADER as u64 + self.next * ENTRY as u64)
                .ok()?;
            self.hashed = chain_hash(self.hashed, &b);
            if self.next + count == self.total && self.hashed != self.expected {
                return None;
            }
            self.buf = b.chunks_exact(ENTRY).map(LineRef::from_bytes).collect();
            self.pos = 0;
            self.next += count;
        }
        self.pos += 1;
        Some(self.buf[self.pos - 1])
    }
}

pub(super) struct MergeSorted<A: Iterator<Item = LineRef>, B: Iterator<Item = LineRef>> {
    pub(super) a: std::iter::Peekable<A>,
    pub(super) b: std::iter::Peekable<B>,
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
pub(super) fn write_base(
    path: &Path,
    dev: u64,
    ino: u64,
    mark: &Mark,
    entries: impl Iterator<Item = LineRef>,
    total: u64,
    ids: &[String],
) -> io::Result<(File, BaseInfo)> {
    let target = super::Cache::index_path(path);
    let temp = temporary_beside(&target)?;
    let file = temp.as_file();
    let mut out = BufWriter::with_capacity(1 << 20, file);
    out.write_all(&[0u8; BASE_HEADER])?;
    let mut written = 0u64;
    let (mut hashed, mut chunk) = (0u64, Vec::with_capacity(CHUNK * ENTRY));
    for entry in entries {
        chunk.extend_from_slice(&entry.to_bytes());
        written += 1;
        if chunk.len() == CHUNK * ENTRY {
            hashed = chain_hash(hashed, &chunk);
            out.write_all(&chunk)?;
            chunk.clear();
        }
    }
    if !chunk.is_empty() {
        hashed = chain_hash(hashed, &chunk);
        out.write_all(&chunk)?;
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
    file.write_all_at(&base_header(dev, ino, mark, (written, hashed), ids), 0)?;
    file.sync_all()?;
    // The renamed file stays open: it is the one read from now on, whatever
    // is later put at its path.
    let file = temp.persist(&target).map_err(|e| e.error)?;
    if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
        File::open(parent)?.sync_all()?;
    }
    let info = read_base_header(&file).ok_or_else(|| io::Error::other("base header"))?;
    Ok((file, info))
}
