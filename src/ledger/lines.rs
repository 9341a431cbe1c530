//! Complete lines and whole operations: the rules every reader shares.
//!
//! A line counts only once its `\n` is written. An operation of several
//! lines counts only once all of its lines are there: its first line
//! announces how many (`op_lines`) and every line names the operation it
//! belongs to (`op_id`), so a final operation cut short is torn as a whole.
//! Only lines that claim membership are ever held back: a line that does
//! not ends the operation before it, which is then a finding
//! (`operation_overrun`), never a reason to hide what follows.

use crate::record::{OpMark, Record};
use memchr::memchr_iter;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
/// Bytes read at a time when streaming the ledger.
const CHUNK: usize = 256 << 10;

/// Streams the complete lines among the first `len` bytes of `file`, a
/// chunk at a time, so memory never holds the whole ledger: `f` gets each
/// line's first byte, its 1-based number and its bytes without `\n`.
/// Returns the end of the last complete line and how many there are.
pub(crate) fn stream_lines(
    file: &File,
    len: u64,
    f: impl FnMut(u64, u64, &[u8]),
) -> io::Result<(u64, u64)> {
    stream_lines_from(file, (0, 0), len, f)
}

/// `stream_lines` of bytes in memory (the fuzz target's ledgers): a
/// `LineFeed` source as a file is one.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn lines_in_memory(bytes: &[u8], line: &mut LineFeed<'_>) -> io::Result<(u64, u64)> {
    let (mut start, mut line_no) = (0, 0);
    for end in memchr_iter(b'\n', bytes) {
        line_no += 1;
        line(start as u64, line_no, &bytes[start..end]);
        start = end + 1;
    }
    Ok((start as u64, line_no))
}

/// `stream_lines` from byte `from.0`, the start of line `from.1 + 1`.
pub(crate) fn stream_lines_from(
    file: &File,
    (from, lines_before): (u64, u64),
    len: u64,
    mut f: impl FnMut(u64, u64, &[u8]),
) -> io::Result<(u64, u64)> {
    // No more than is read: a follower reading a few new lines (hundreds
    // of them at once in `serve`) holds a few pages, not a whole chunk.
    // Read into again in place: cleared once, not before every read.
    let mut buf = vec![0u8; CHUNK.min((len.saturating_sub(from)) as usize)];
    // The bytes of a line not yet ended, at the start of `buf`.
    let mut carried = 0;
    let mut buf_start = from; // ledger offset of buf[0]
    let mut read_to = from;
    let mut line_no = lines_before;
    while read_to < len {
        if carried == buf.len() {
            // A line longer than the buffer.
            buf.resize((buf.len() * 2).max(CHUNK), 0);
        }
        let want = ((len - read_to) as usize).min(buf.len() - carried);
        file.read_exact_at(&mut buf[carried..carried + want], read_to)?;
        read_to += want as u64;
        let filled = carried + want;
        let mut start = 0usize;
        for end in memchr_iter(b'\n', &buf[..filled]) {
            line_no += 1;
            f(buf_start + start as u64, line_no, &buf[start..end]);
            start = end + 1;
        }
        buf.copy_within(start..filled, 0);
        carried = filled - start;
        buf_start += start as u64;
    }
    Ok((buf_start, line_no))
}

/// The line of `file` starting at byte `offset`, read a chunk at a time
/// and at most `limit` bytes of it: its bytes without the `\n`, and
/// whether its `\n` was found (not: the file or the limit ended first).
pub(crate) fn read_line_at(file: &File, offset: u64, limit: u64) -> io::Result<(Vec<u8>, bool)> {
    // Read straight into the line, a little first: most lines are under a
    // KiB, and each byte read is a byte cleared and a byte the kernel copies
    // (a 64 KiB chunk a line was 4 % of a cold rebuild's instructions).
    let mut chunk = 2 * 1024;
    let mut line = Vec::new();
    let mut at = offset;
    while (line.len() as u64) < limit {
        let from = line.len();
        line.resize(from + chunk, 0);
        let n = file.read_at(&mut line[from..], at)?;
        if let Some(end) = memchr::memchr(b'\n', &line[from..from + n]) {
            line.truncate(from + end);
            return Ok((line, true));
        }
        line.truncate(from + n);
        if n == 0 {
            break;
        }
        at += n as u64;
        chunk = (chunk * 2).min(64 * 1024);
    }
    Ok((line, false))
}

/// The line of `file` that ends at byte `end` (its `\n` at `end - 1`),
/// without its `\n`: read backwards a few KiB at a time from `end`. No
/// bytes before the first line (`end` 0).
pub(crate) fn read_line_before(file: &File, end: u64) -> io::Result<Vec<u8>> {
    if end == 0 {
        return Ok(Vec::new());
    }
    let line_end = end - 1; // the `\n`
    let mut chunk = 4 * 1024u64;
    loop {
        let from = line_end.saturating_sub(chunk);
        let mut bytes = vec![0u8; (line_end - from) as usize];
        file.read_exact_at(&mut bytes, from)?;
        if let Some(newline) = memchr::memrchr(b'\n', &bytes) {
            return Ok(bytes.split_off(newline + 1));
        }
        if from == 0 {
            return Ok(bytes);
        }
        chunk *= 4;
    }
}

/// What streaming the ledger's whole operations found.
#[derive(Debug, Default)]
pub(crate) struct Streamed {
    /// The first byte after the last whole operation: what follows it is
    /// a torn tail.
    pub end: u64,
    /// How many lines the whole operations have.
    pub lines: u64,
    /// The first byte after the last complete line.
    pub lines_end: u64,
    /// Whether complete lines were held back as an operation cut short.
    pub cut_operation: bool,
    /// Lines whose operation marks do not fit.
    pub findings: Vec<OperationFinding>,
}

/// A source of complete lines: it calls its argument with each line's
/// first byte, 1-based number and bytes, in ledger order, and returns
/// where the complete lines end and how many there are. A file is one
/// (`stream_lines`); so are the rows of a PostgreSQL ledger.
pub(crate) type LineFeed<'a> = dyn FnMut(u64, u64, &[u8]) + 'a;

/// Streams the lines of whole operations: `feed` hands every complete
/// line to the function it is given, `read` turns each (first byte,
/// 1-based number, bytes) into an item and tells its operation mark, and
/// `take` gets the items, in ledger order, once their operation is known
/// to be whole.
pub(crate) fn operations_of<T>(
    feed: impl FnOnce(&mut LineFeed<'_>) -> io::Result<(u64, u64)>,
    mut read: impl FnMut(u64, u64, &[u8]) -> (T, OpMark),
    mut take: impl FnMut(T),
) -> io::Result<Streamed> {
    let mut operations = Operations::default();
    let lines_end = feed(&mut |start, line_no, line| {
        let (item, mark) = read(start, line_no, line);
        operations.line(start, line_no, mark, item, &mut take);
    })?;
    Ok(operations.streamed(lines_end))
}

/// Lines from this many bytes on are read on a second core
/// (`operations_ahead`, `operations_on_both_cores`): below, starting a
/// thread costs more than it saves.
const AHEAD_FROM_BYTES: u64 = 4 << 20;

/// Whether `bytes` of lines are worth a second core (the tests' knob
/// `DISCUSS_AHEAD_FROM_BYTES` may say so of fewer).
/// Work that is, is bulk work: it allocates with mimalloc from then on.
pub(crate) fn worth_a_second_core(bytes: u64) -> bool {
    let worth = bytes >= super::failpoint::ahead_from_bytes(AHEAD_FROM_BYTES);
    if worth {
        crate::allocator::for_bulk_work();
    }
    worth
}

/// `operations_of` on two cores: a thread of its own reads the lines and
/// `read`s them (the parse, most of the work), while this one keeps the
/// operations whole and hands the items to `take`, in ledger order, as
/// they come. The same items, findings and end as `operations_of`.
pub(crate) fn operations_ahead<T: Send>(
    feed: impl FnOnce(&mut LineFeed<'_>) -> io::Result<(u64, u64)> + Send,
    mut read: impl FnMut(u64, u64, &[u8]) -> (T, OpMark) + Send,
    mut take: impl FnMut(T),
) -> io::Result<Streamed> {
    /// Lines handed over at a time, and batches on their way at most: a
    /// few MiB held between the two threads, whatever the ledger's size.
    const BATCH: usize = 512;
    const BATCHES_ON_THE_WAY: usize = 8;
    type Batch<T> = Vec<(u64, u64, T, OpMark)>;
    let (send, receive) = std::sync::mpsc::sync_channel::<Batch<T>>(BATCHES_ON_THE_WAY);
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            let mut batch = Vec::with_capacity(BATCH);
            let mut gone = false;
            let lines_end = feed(&mut |start, line_no, line| {
                if gone {
                    return;
                }
                let (item, mark) = read(start, line_no, line);
                batch.push((start, line_no, item, mark));
                if batch.len() == BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    gone = send.send(full).is_err();
                }
            });
            if !batch.is_empty() {
                let _ = send.send(batch);
            }
            lines_end
        });
        let mut operations = Operations::default();
        for batch in receive {
            for (start, line_no, item, mark) in batch {
                operations.line(start, line_no, mark, item, &mut take);
            }
        }
        let lines_end = match reader.join() {
            Ok(lines_end) => lines_end?,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        Ok(operations.streamed(lines_end))
    })
}

/// `operations_of` with the reading shared by both cores: this thread
/// splits the lines into batches and offers each to a second thread,
/// reading it itself when that one is still busy, and the items go to
/// `take` in ledger order. So the two share the work whatever `take`
/// costs: the rebuild's light peeks leave nearly every batch to the
/// helper, `verify`'s derivation most of them. The same items, findings
/// and end as `operations_of`, which it is for lines of fewer `bytes` than
/// are worth a second core (`worth_a_second_core`).
pub(crate) fn operations_on_both_cores<T: Send>(
    bytes: u64,
    feed: impl FnOnce(&mut LineFeed<'_>) -> io::Result<(u64, u64)>,
    read: impl Fn(u64, u64, &[u8]) -> (T, OpMark) + Sync,
    take: impl FnMut(T),
) -> io::Result<Streamed> {
    if !worth_a_second_core(bytes) {
        return operations_of(feed, read, take);
    }
    std::thread::scope(|scope| {
        let (to_helper, batches) = std::sync::mpsc::sync_channel::<LineBatch<T>>(OFFERED_AT_MOST);
        // Room for every answer the helper may owe: it never waits on
        // this thread while this thread waits for it.
        let (helper_out, read_by_helper) =
            std::sync::mpsc::sync_channel::<LineBatch<T>>(MOST_PENDING + 2);
        let read = &read;
        let helper = scope.spawn(move || {
            for mut batch in batches {
                batch.read_all(read);
                if helper_out.send(batch).is_err() {
                    return;
                }
            }
        });
        let mut shared = Shared {
            lines_a_batch: super::failpoint::batch_lines(LineBatch::<T>::LINES),
            #[cfg(feature = "failpoints")]
            fixed_turns: super::failpoint::batch_lines_set().then_some(0),
            read,
            to_helper,
            read_by_helper,
            pending: std::collections::VecDeque::new(),
            batch: LineBatch::default(),
            spare: Vec::new(),
            operations: Operations::default(),
            take,
        };
        let lines_end = feed(&mut |start, line_no, line| shared.line(start, line_no, line));
        let streamed = lines_end.map(|lines_end| shared.finish(lines_end));
        if let Err(panic) = helper.join() {
            std::panic::resume_unwind(panic);
        }
        streamed
    })
}

/// A line `read`: where it starts, its number, the item and its mark.
type Read<T> = (u64, u64, T, OpMark);

/// Batches read or being read and not yet handed on, at most: past it,
/// this thread waits for the helper's oldest one. Room for the offered
/// ones and a few of this thread's own.
const MOST_PENDING: usize = 12;

/// Batches kept to be filled again, at most.
const SPARE_AT_MOST: usize = 2;

/// Batches offered to the helper and not yet taken, at most: enough that
/// it has work queued while this thread reads a batch of its own or
/// derives a burst of discussions that end together (with one, it sat
/// idle a third of a rebuild; with three, a fifth of a first list's pass).
const OFFERED_AT_MOST: usize = 8;

/// Lines copied out of the read buffer to be read on another thread, and
/// once read, what they were read into. A batch handed on is filled
/// again: its memory stays the pages it had, not new ones the system
/// must clear.
struct LineBatch<T> {
    bytes: Vec<u8>,
    /// (start, number, end in `bytes`) of each line.
    lines: Vec<(u64, u64, usize)>,
    read: Vec<Read<T>>,
}

impl<T> Default for LineBatch<T> {
    fn default() -> Self {
        LineBatch {
            bytes: Vec::new(),
            lines: Vec::new(),
            read: Vec::new(),
        }
    }
}

impl<T> LineBatch<T> {
    /// Lines a batch holds: enough to make handing one over cheap, few
    /// enough that a few of them are a few MiB.
    const LINES: usize = 1024;

    fn read_all(&mut self, read: impl Fn(u64, u64, &[u8]) -> (T, OpMark)) {
        let mut from = 0;
        for &(start, line_no, to) in &self.lines {
            let (item, mark) = read(start, line_no, &self.bytes[from..to]);
            from = to;
            self.read.push((start, line_no, item, mark));
        }
    }
}

/// A batch not yet handed on, in ledger order.
enum Pending<T> {
    /// Read by this thread.
    Mine(LineBatch<T>),
    /// Offered to the helper: its answers come in the order offered.
    Helpers,
}

/// The state of `operations_on_both_cores` on this thread.
struct Shared<'r, T, R, F> {
    lines_a_batch: usize,
    /// Tests' fixed schedule (`DISCUSS_BATCH_LINES`): every third batch is
    /// this thread's, whether the helper is busy or not. Only in a build
    /// with the tests' fail points.
    #[cfg(feature = "failpoints")]
    fixed_turns: Option<usize>,
    read: &'r R,
    to_helper: std::sync::mpsc::SyncSender<LineBatch<T>>,
    read_by_helper: std::sync::mpsc::Receiver<LineBatch<T>>,
    pending: std::collections::VecDeque<Pending<T>>,
    /// The lines of the batch being gathered.
    batch: LineBatch<T>,
    /// Batches handed on, emptied, to be filled again.
    spare: Vec<LineBatch<T>>,
    operations: Operations<T>,
    take: F,
}

impl<T, R: Fn(u64, u64, &[u8]) -> (T, OpMark), F: FnMut(T)> Shared<'_, T, R, F> {
    fn line(&mut self, start: u64, line_no: u64, line: &[u8]) {
        self.batch.bytes.extend_from_slice(line);
        self.batch
            .lines
            .push((start, line_no, self.batch.bytes.len()));
        if self.batch.lines.len() == self.lines_a_batch {
            // The next batch has the room this one needed: no growing.
            let room = self.spare.pop().unwrap_or_else(|| LineBatch {
                bytes: Vec::with_capacity(self.batch.bytes.capacity()),
                lines: Vec::with_capacity(self.lines_a_batch),
                read: Vec::with_capacity(self.lines_a_batch),
            });
            let batch = std::mem::replace(&mut self.batch, room);
            match self.offer(batch) {
                Ok(()) => self.pending.push_back(Pending::Helpers),
                Err(mut batch) => {
                    batch.read_all(self.read);
                    self.pending.push_back(Pending::Mine(batch));
                }
            }
            self.hand_on_what_is_read(false);
        }
    }

    /// Gives `batch` to the helper, or back when this thread reads it.
    fn offer(&mut self, batch: LineBatch<T>) -> Result<(), LineBatch<T>> {
        use std::sync::mpsc::TrySendError;
        #[cfg(feature = "failpoints")]
        if let Some(turn) = &mut self.fixed_turns {
            *turn += 1;
            if *turn % 3 == 0 {
                return Err(batch);
            }
            // (A helper that panicked: this thread reads on, and the panic
            // goes on at the join.)
            return self.to_helper.send(batch).map_err(|e| e.0);
        }
        self.to_helper.try_send(batch).map_err(|e| match e {
            TrySendError::Full(batch) | TrySendError::Disconnected(batch) => batch,
        })
    }

    /// Hands on the pending batches from the oldest while they are read:
    /// waiting for the helper's when `all` or when too many are pending.
    fn hand_on_what_is_read(&mut self, all: bool) {
        while let Some(oldest) = self.pending.front() {
            let batch = match oldest {
                Pending::Mine(_) => match self.pending.pop_front() {
                    Some(Pending::Mine(batch)) => batch,
                    _ => unreachable!("the oldest is this thread's"),
                },
                Pending::Helpers => {
                    let wait = all || self.pending.len() > MOST_PENDING;
                    let answer = if wait {
                        self.read_by_helper.recv().ok()
                    } else {
                        self.read_by_helper.try_recv().ok()
                    };
                    match answer {
                        Some(batch) => {
                            self.pending.pop_front();
                            batch
                        }
                        // Not yet read; or no answer at all, from a helper
                        // that panicked, which the join passes on.
                        None if wait => {
                            self.pending.pop_front();
                            continue;
                        }
                        None => return,
                    }
                }
            };
            self.hand_on(batch);
        }
    }

    /// Hands on the lines of a batch that was read, and keeps it to be
    /// filled again.
    fn hand_on(&mut self, mut batch: LineBatch<T>) {
        for (start, line_no, item, mark) in batch.read.drain(..) {
            self.operations
                .line(start, line_no, mark, item, &mut self.take);
        }
        // A couple to fill next are enough: each batch handed on is the
        // room of one to come; more would only hold memory.
        if self.spare.len() < SPARE_AT_MOST {
            batch.bytes.clear();
            batch.lines.clear();
            self.spare.push(batch);
        }
    }

    fn finish(mut self, lines_end: (u64, u64)) -> Streamed {
        self.hand_on_what_is_read(true);
        let mut last = std::mem::take(&mut self.batch);
        last.read_all(self.read);
        self.hand_on(last);
        self.operations.streamed(lines_end)
    }
}

/// A line read as a record (`None` when it is not one) and what it says
/// of its operation: the `read` of `operations_of` for those who want
/// the records.
pub(crate) fn record_and_mark(line_no: u64, line: &[u8]) -> (Option<Record>, OpMark) {
    match Record::parse_with_mark(line, line_no as usize) {
        Ok((record, mark)) => (Some(record), mark),
        Err(_) => (None, OpMark::Alone),
    }
}

/// A line whose operation mark does not fit the lines around it: an
/// operation that announced more lines than claim to belong to it before
/// another line came (`operation_overrun`), or a line that claims to
/// belong to an operation that is not under way (`operation_stray_line`).
/// The lines involved are kept and replayed like any other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OperationFinding {
    pub kind: &'static str,
    pub line: u64,
    pub detail: String,
}

/// The operation still missing lines.
#[derive(Debug)]
struct PendingOperation {
    op_id: String,
    start: u64,
    line_no: u64,
    lines: u64,
    seen: u64,
}

/// Holds back the lines of an operation of several lines until all of them
/// are there, then hands them on in ledger order. The lines of a final
/// operation cut short are never handed on.
#[derive(Debug)]
pub(crate) struct Operations<T> {
    open: Option<PendingOperation>,
    held: Vec<T>,
    /// The last line with `op_lines` but no `op_id`: (its line number,
    /// lines it announced, lines still to come).
    announced: Option<(u64, u64, u64)>,
    pub findings: Vec<OperationFinding>,
}

impl<T> Default for Operations<T> {
    fn default() -> Self {
        Operations {
            open: None,
            held: Vec::new(),
            announced: None,
            findings: Vec::new(),
        }
    }
}

impl<T> Operations<T> {
    /// One more complete line starting at byte `start`, numbered `line_no`,
    /// read into `item`, with what it says of its operation. `take` gets
    /// every item now known to be in a whole operation.
    pub(crate) fn line(
        &mut self,
        start: u64,
        line_no: u64,
        mark: OpMark,
        item: T,
        mut take: impl FnMut(T),
    ) {
        self.announced = self
            .announced
            .and_then(|(line, lines, to_come)| (to_come > 1).then_some((line, lines, to_come - 1)));
        if let Some(open) = &mut self.open {
            if matches!(&mark, OpMark::Member { op_id } if *op_id == open.op_id) {
                self.held.push(item);
                open.seen += 1;
                if open.seen == open.lines {
                    self.open = None;
                    self.held.drain(..).for_each(take);
                }
                return;
            }
            // This line does not claim to belong: the operation ends here,
            // short, and its lines are replayed like any others.
            self.findings.push(OperationFinding {
                kind: "operation_overrun",
                line: open.line_no,
                detail: format!(
                    "announces {} lines (op_lines) but only {} belong to it before line {line_no}",
                    open.lines, open.seen
                ),
            });
            self.open = None;
            self.held.drain(..).for_each(&mut take);
        }
        match mark {
            OpMark::Opens { op_id, lines } => {
                self.open = Some(PendingOperation {
                    op_id,
                    start,
                    line_no,
                    lines,
                    seen: 1,
                });
                self.held.push(item);
            }
            OpMark::Member { op_id } => {
                self.findings.push(OperationFinding {
                    kind: "operation_stray_line",
                    line: line_no,
                    detail: format!(
                        "claims to belong to operation {op_id}, which is not under way"
                    ),
                });
                take(item);
            }
            OpMark::Announces { lines } => {
                self.announced = Some((line_no, lines, lines - 1));
                take(item);
            }
            OpMark::Alone => take(item),
        }
    }

    /// At the end of the ledger: a line that announced more lines than
    /// follow it is a finding (nothing was held back for it).
    pub(crate) fn finish(&mut self) {
        if let Some((line, lines, to_come)) = self.announced.take() {
            self.findings.push(OperationFinding {
                kind: "operation_overrun",
                line,
                detail: format!(
                    "announces {lines} lines (op_lines) but only {} follow it",
                    lines - 1 - to_come
                ),
            });
        }
    }

    /// What the stream found, at the end of the ledger, given where the
    /// complete lines end.
    fn streamed(mut self, lines_end: (u64, u64)) -> Streamed {
        let (end, lines) = self.end(lines_end);
        self.finish();
        Streamed {
            end,
            lines,
            lines_end: lines_end.0,
            cut_operation: end < lines_end.0,
            findings: self.findings,
        }
    }

    /// Where the whole operations end (first byte after them, how many
    /// lines they have), given where the complete lines end.
    pub(crate) fn end(&self, (lines_end, lines): (u64, u64)) -> (u64, u64) {
        match &self.open {
            Some(open) => (open.start, open.line_no - 1),
            None => (lines_end, lines),
        }
    }
}

/// One complete line, parsed.
#[derive(Debug)]
pub(crate) struct ParsedLine {
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
pub(crate) fn parse_lines(bytes: &[u8], offset: u64, first_line: u64) -> (Vec<ParsedLine>, u64) {
    let mut lines = Vec::new();
    let mut operations = Operations::default();
    let mut start = 0usize;
    let mut count = 0u64;
    for end in memchr_iter(b'\n', bytes) {
        let line_no = first_line + count;
        count += 1;
        let (record, mark) = match Record::parse_with_mark(&bytes[start..end], line_no as usize) {
            Ok((record, mark)) => (Ok(record), mark),
            Err(detail) => (Err(detail), OpMark::Alone),
        };
        let line = ParsedLine {
            start: offset + start as u64,
            len: (end - start) as u64,
            line_no,
            record,
        };
        operations.line(offset + start as u64, line_no, mark, line, |l| {
            lines.push(l)
        });
        start = end + 1;
    }
    let (end, _) = operations.end((offset + start as u64, count));
    (lines, end)
}

#[cfg(test)]
mod tests {
    /// Lines across the chunks read, lines longer than a chunk (the
    /// buffer grows) and a tail without its `\n`, streamed from each of
    /// several lines on: each line's start, number and bytes, as a plain
    /// split of the file finds them.
    #[test]
    fn streamed_lines_are_the_files_lines_across_chunks() {
        use std::io::Write;
        let mut bytes = Vec::new();
        for (i, len) in [
            10,
            super::CHUNK - 3,
            1,
            0,
            3 * super::CHUNK + 7,
            200,
            super::CHUNK,
        ]
        .into_iter()
        .enumerate()
        {
            bytes.extend(std::iter::repeat_n(b'a' + i as u8, len));
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(b"torn");
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&bytes).unwrap();
        let mut lines = Vec::new();
        let mut start = 0u64;
        for line in bytes.split(|&b| b == b'\n') {
            lines.push((start, line.to_vec()));
            start += line.len() as u64 + 1;
        }
        let torn = lines.pop().unwrap();
        for from in 0..lines.len() {
            let mut got = Vec::new();
            let end = super::stream_lines_from(
                &file,
                (lines[from].0, from as u64),
                bytes.len() as u64,
                |at, no, line| got.push((at, no, line.to_vec())),
            )
            .unwrap();
            let want: Vec<_> = (from..lines.len())
                .map(|i| (lines[i].0, i as u64 + 1, lines[i].1.clone()))
                .collect();
            assert!(got == want, "from line {from}");
            assert_eq!(end, (torn.0, lines.len() as u64));
        }
    }

    /// A line read by where it starts, whatever its length against the
    /// chunks read (a few bytes, just under and over the first chunk, many
    /// chunks): its bytes without the `\n`; a tail without one is not
    /// whole, and neither is a line longer than the limit.
    #[test]
    fn a_line_read_at_its_offset_is_the_files_line() {
        use std::io::Write;
        let lengths = [0, 5, 2047, 2048, 2049, 70_000, 300_000];
        let mut bytes = Vec::new();
        let mut starts = Vec::new();
        for (i, len) in lengths.into_iter().enumerate() {
            starts.push(bytes.len() as u64);
            bytes.extend(std::iter::repeat_n(b'a' + i as u8, len));
            bytes.push(b'\n');
        }
        let tail = bytes.len() as u64;
        bytes.extend_from_slice(b"torn");
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&bytes).unwrap();
        for (i, (&start, len)) in starts.iter().zip(lengths).enumerate() {
            let (line, whole) = super::read_line_at(&file, start, u64::MAX).unwrap();
            assert!(whole, "line {i}");
            assert_eq!(line, vec![b'a' + i as u8; len], "line {i}");
        }
        assert_eq!(
            super::read_line_at(&file, tail, u64::MAX).unwrap(),
            (b"torn".to_vec(), false)
        );
        let (cut, whole) = super::read_line_at(&file, starts[6], 100_000).unwrap();
        assert!(!whole && cut.len() >= 100_000 && cut.len() < 300_000);
        assert!(cut.iter().all(|&b| b == b'g'));
    }

    /// Every corpus ledger's complete lines one after another, three
    /// times: thousands of lines, operations across the batches handed
    /// between the cores, lines that are no records, and a cut operation
    /// at the end.
    #[test]
    fn two_cores_read_what_one_reads_across_many_batches() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/replay");
        let mut bytes = Vec::new();
        for entry in std::fs::read_dir(folder).unwrap() {
            let ledger = std::fs::read(entry.unwrap().path()).unwrap();
            let end = ledger
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            bytes.extend_from_slice(&ledger[..end]);
        }
        bytes = bytes.repeat(3);
        let cut = br#"{"v":1,"kind":"fleet","id":"rec_9","at_ms":1,"by":"x","op":"add","fleet_id":"f","agent_id":"a","op_lines":3,"op_id":"rec_9"}"#;
        bytes.extend_from_slice(cut);
        bytes.push(b'\n');
        assert!(bytes.iter().filter(|&&b| b == b'\n').count() > 5 * 1024);
        crate::fuzzing::on_two_cores_as_on_one(&bytes);
    }
}
