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
fn stream_lines(
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

/// Streams the lines of whole operations among the first `len` bytes of
/// `file`: `read` turns each complete line (first byte, 1-based number,
/// bytes) into an item and tells its `op_lines`; `take` gets the items, in
/// ledger order, once their operation is known to be whole. Returns where
/// the whole operations end and how many lines they have.
pub fn stream_operations<T>(
    file: &File,
    len: u64,
    mut read: impl FnMut(u64, u64, &[u8]) -> (T, Option<u64>),
    mut take: impl FnMut(T),
) -> io::Result<(u64, u64)> {
    let mut operations = Operations::default();
    let lines_end = stream_lines(file, len, |start, line_no, line| {
        let (item, op_lines) = read(start, line_no, line);
        operations.line(start, line_no, op_lines, item, &mut take);
    })?;
    Ok(operations.end(lines_end))
}

/// Holds back the lines of an operation of several lines until all of them
/// are there, then hands them on in ledger order. The lines of a final
/// operation cut short are never handed on.
#[derive(Debug)]
pub struct Operations<T> {
    /// The operation still missing lines: (its first byte, its first line
    /// number, lines still to come).
    open: Option<(u64, u64, u64)>,
    held: Vec<T>,
}

impl<T> Default for Operations<T> {
    fn default() -> Self {
        Operations {
            open: None,
            held: Vec::new(),
        }
    }
}

impl<T> Operations<T> {
    /// One more complete line starting at byte `start`, numbered `line_no`,
    /// read into `item`; `op_lines` when it is a record carrying that
    /// field. `take` gets every item now known to be in a whole operation.
    pub fn line(
        &mut self,
        start: u64,
        line_no: u64,
        op_lines: Option<u64>,
        item: T,
        mut take: impl FnMut(T),
    ) {
        self.open = match op_lines {
            Some(n) if n > 1 => {
                // A new operation: what was held back comes before any cut.
                self.held.drain(..).for_each(&mut take);
                Some((start, line_no, n - 1))
            }
            _ => self
                .open
                .and_then(|(s, l, to_come)| (to_come > 1).then_some((s, l, to_come - 1))),
        };
        self.held.push(item);
        if self.open.is_none() {
            self.held.drain(..).for_each(take);
        }
    }

    /// Where the whole operations end (first byte after them, how many
    /// lines they have), given where the complete lines end.
    pub fn end(&self, (lines_end, lines): (u64, u64)) -> (u64, u64) {
        match self.open {
            Some((start, line_no, _)) => (start, line_no - 1),
            None => (lines_end, lines),
        }
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
    let mut operations = Operations::default();
    let mut start = 0usize;
    let mut count = 0u64;
    for end in memchr_iter(b'\n', bytes) {
        let line_no = first_line + count;
        count += 1;
        let parsed = Record::parse_with_op_lines(&bytes[start..end], line_no as usize);
        let op_lines = parsed.as_ref().ok().and_then(|(_, n)| *n);
        let line = ParsedLine {
            start: offset + start as u64,
            len: (end - start) as u64,
            line_no,
            record: parsed.map(|(record, _)| record),
        };
        operations.line(offset + start as u64, line_no, op_lines, line, |l| {
            lines.push(l)
        });
        start = end + 1;
    }
    let (end, _) = operations.end((offset + start as u64, count));
    (lines, end)
}
