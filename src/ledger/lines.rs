//! Complete lines and whole operations: the rules every reader shares.
//!
//! A line counts only once its `\n` is written. An operation of several
//! lines (its first line carries `op_lines`) counts only once all of its
//! lines are there: a final operation cut short is torn as a whole.

use super::record::Record;
use memchr::memchr_iter;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Bytes read at a time when streaming the ledger.
const CHUNK: usize = 4 << 20;

/// Streams the complete lines among the first `len` bytes of `file`, a
/// chunk at a time, so memory never holds the whole ledger: `f` gets each
/// line's first byte, its 1-based number and its bytes without `\n`.
/// Returns the end of the last complete line and how many there are.
pub fn stream_lines(
    file: &File,
    len: u64,
    mut f: impl FnMut(u64, u64, &[u8]),
) -> io::Result<(u64, u64)> {
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK);
    let mut buf_start = 0u64; // ledger offset of buf[0]
    let mut read_to = 0u64;
    let mut line_no = 0u64;
    while read_to < len {
        let want = ((len - read_to) as usize).min(CHUNK);
        let old = buf.len();
        buf.resize(old + want, 0);
        file.read_exact_at(&mut buf[old..], read_to)?;
        read_to += want as u64;
        let mut start = 0usize;
        for end in memchr_iter(b'\n', &buf) {
            line_no += 1;
            f(buf_start + start as u64, line_no, &buf[start..end]);
            start = end + 1;
        }
        buf.drain(..start);
        buf_start += start as u64;
    }
    Ok((buf_start, line_no))
}

/// Follows operations of several lines through consecutive complete lines.
#[derive(Debug, Default, Clone, Copy)]
pub struct OpTracker {
    /// The operation still missing lines: (its first byte, its first line
    /// number, lines still to come).
    open: Option<(u64, u64, u64)>,
}

impl OpTracker {
    /// One more complete line starting at byte `start`, numbered `line_no`;
    /// `op_lines` when it is a record carrying that field.
    pub fn line(&mut self, start: u64, line_no: u64, op_lines: Option<u64>) {
        self.open = match op_lines {
            Some(n) if n > 1 => Some((start, line_no, n - 1)),
            _ => self
                .open
                .and_then(|(s, l, to_come)| (to_come > 1).then_some((s, l, to_come - 1))),
        };
    }

    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// The first byte and line number of an operation cut short.
    pub fn cut(&self) -> Option<(u64, u64)> {
        self.open.map(|(start, line, _)| (start, line))
    }
}

/// One complete line, parsed.
#[derive(Debug)]
pub struct ParsedLine {
    /// Byte offset of its first byte in the ledger.
    pub start: u64,
    /// Its length without the `\n`.
    pub len: u64,
    pub line_no: u64,
    pub record: Result<Record, String>,
}

/// Parses the complete lines of `bytes`, which starts at ledger byte
/// `offset` and line `first_line` (1-based), at an operation boundary.
/// Returns the lines of whole operations and the end of the last one; the
/// bytes after it are a torn tail.
pub fn parse_lines(bytes: &[u8], offset: u64, first_line: u64) -> (Vec<ParsedLine>, u64) {
    let mut lines = Vec::new();
    let mut tracker = OpTracker::default();
    let mut start = 0usize;
    for (index, end) in memchr_iter(b'\n', bytes).enumerate() {
        let line_no = first_line + index as u64;
        let parsed = Record::parse_with_op_lines(&bytes[start..end], line_no as usize);
        let op_lines = parsed.as_ref().ok().and_then(|(_, n)| *n);
        tracker.line(offset + start as u64, line_no, op_lines);
        lines.push(ParsedLine {
            start: offset + start as u64,
            len: (end - start) as u64,
            line_no,
            record: parsed.map(|(record, _)| record),
        });
        start = end + 1;
    }
    let mut end = offset + start as u64;
    if let Some((cut_start, cut_line)) = tracker.cut() {
        lines.retain(|l| l.line_no < cut_line);
        end = cut_start;
    }
    (lines, end)
}
