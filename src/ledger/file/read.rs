//! Reading a file ledger whole: its discussions as `mapping` reads them
//! (through the index, the live set and the summary), the lines checked,
//! the records streamed in order, and the lines exported byte for byte.

use super::cache::summary::{self, SummaryWriter};
use super::cache::{Cache, Damaged, Mark, key_of};
use super::{FileLedger, Opened, StreamEnd};
use crate::error::{Error, Result};
use crate::ledger::check::{LineCheck, LineChecker, check_lines};
use crate::ledger::excerpt::Keyed;
use crate::ledger::lines::{
    LineFeed, operations_ahead, operations_of, record_and_mark, stream_lines, stream_lines_from,
    worth_a_second_core,
};
use crate::ledger::mapping::Discussions;
use crate::ledger::one_pass::{OnePass, PassFailed, in_line_order};
use crate::ledger::spent::Spent;
use crate::ledger::summary::{Summarize, SummaryLine, Untrusted};
use crate::record::Record;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;

impl FileLedger {
    /// Runs `read` on the discussions of the ledger (`mapping`), under a
    /// shared lock; the summary lines it keeps are written for the next
    /// reader (when the folder takes them). `empty` before the first write.
    pub(crate) fn discussions<T>(
        &self,
        empty: impl FnOnce() -> T,
        mut read: impl FnMut(&mut FileDiscussions<'_>) -> Result<T, Damaged>,
    ) -> Result<T> {
        let Some(file) = self.open_shared()? else {
            return Ok(empty());
        };
        let (_, got) = self
            .read_through_cache(&file, None, |cache| {
                let mut discussions = FileDiscussions {
                    cache,
                    file: &file,
                    summarize: self.summarize,
                };
                read(&mut discussions).ok()
            })?
            .expect("an unbounded wait always gets the lock");
        Ok(got)
    }

    /// Every line of the ledger, streamed: how many records, the lines that
    /// are not records, the torn tail, and the findings about lines
    /// (operations, duplicate ids, time) as seen at `now_ms` (what `verify`
    /// reports). `progress` hears (bytes read, bytes in all) now and then.
    pub(crate) fn check_lines(
        &self,
        checker: LineChecker,
        progress: impl FnMut(u64, u64),
    ) -> Result<LineCheck> {
        let Some(file) = self.open_shared()? else {
            return Ok(LineCheck::default());
        };
        let len = self.len_of(&file)?;
        check_lines(
            |line| crate::ledger::lines::stream_lines(&file, len, line),
            len,
            checker,
            progress,
        )
        .map_err(|e| self.unreadable(&e))
    }

    /// Every discussion id the ledger names, sorted.
    pub(crate) fn discussion_ids(&self) -> Result<Vec<String>> {
        let Some(file) = self.open_shared()? else {
            return Ok(Vec::new());
        };
        let (_, ids) = self
            .read_through_cache(&file, None, |cache| cache.discussion_ids().ok())?
            .expect("an unbounded wait always gets the lock");
        Ok(ids)
    }

    /// The records of whole operations from byte `from.0` (the start of
    /// line `from.1 + 1`) to the end, in order, to `take`; where they end.
    pub(crate) fn stream_records(
        &self,
        from: (u64, u64),
        mut take: impl FnMut(Record, &mut Spent) -> Result<()>,
    ) -> Result<(u64, u64)> {
        // No lock: lines are only ever appended, only whole operations are
        // handed on, and `take` may read the ledger itself (`events` does),
        // which may need the exclusive lock to rebuild the cache.
        let Opened::Ready(file) = self.open_reading(None)? else {
            if from.0 > 0 {
                return Err(self.changed_under_reader(from, "was removed"));
            }
            return Ok(from);
        };
        let meta = file.metadata().map_err(|e| self.io_error(&e))?;
        let identity = (
            std::os::unix::fs::MetadataExt::dev(&meta),
            std::os::unix::fs::MetadataExt::ino(&meta),
        );
        let len = meta.len();
        if let Some(earlier) = &*self.streamed_from.lock().unwrap_or_else(|e| e.into_inner())
            && earlier.mark.covered == from.0
            && from.0 > 0
        {
            if earlier.identity != identity {
                return Err(self.changed_under_reader(from, "was replaced by another file"));
            }
            if !earlier.mark.holds(&file, len) {
                return Err(self.changed_under_reader(
                    from,
                    "was rewritten (truncated, or replaced in place)",
                ));
            }
        }
        if len < from.0 {
            // Only bytes after the last whole operation may ever go (a
            // torn tail): a shorter ledger was truncated or replaced.
            return Err(self.changed_under_reader(
                from,
                &format!("got shorter ({len} bytes): it was truncated or replaced"),
            ));
        }
        if len == from.0 {
            self.remember_stream(&file, identity, from)?;
            return Ok(from);
        }
        // A long stretch is parsed on a second core while `take` works,
        // and the records `take` is done with are dropped there.
        let (mut spent, home) = if worth_a_second_core(len - from.0) {
            let (spent, home) = Spent::sent_home();
            (spent, Some(home))
        } else {
            (Spent::here(), None)
        };
        let mut refused = None;
        let take_one = |record: Option<Record>| {
            if let (None, Some(record)) = (&refused, record)
                && let Err(err) = take(record, &mut spent)
            {
                refused = Some(err);
            }
        };
        let feed = |line: &mut LineFeed<'_>| stream_lines_from(&file, from, len, line);
        let streamed = match home {
            Some(home) => {
                let read = move |_, line_no, line: &[u8]| {
                    if line_no % 256 == 0 {
                        home.drop_returned();
                    }
                    record_and_mark(line_no, line)
                };
                operations_ahead(feed, read, take_one)
            }
            None => {
                let read = |_, line_no, line: &[u8]| record_and_mark(line_no, line);
                operations_of(feed, read, take_one)
            }
        }
        .map_err(|e| self.unreadable(&e))?;
        if let Some(err) = refused {
            return Err(err);
        }
        self.remember_stream(&file, identity, (streamed.end, streamed.lines))?;
        Ok((streamed.end, streamed.lines))
    }

    /// Keeps the mark of where the stream stopped, read right after it: a
    /// file that no longer ends a line there (cut while it was read) stops
    /// the stream, rather than leaving nothing to compare with later.
    fn remember_stream(&self, file: &File, identity: (u64, u64), at: (u64, u64)) -> Result<()> {
        let mark = Mark::at(file, at.0, at.1)
            .ok()
            .filter(|mark| mark.holds(file, at.0));
        let Some(mark) = mark else {
            return Err(self.changed_under_reader(at, "was truncated while it was read"));
        };
        *self.streamed_from.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(StreamEnd { identity, mark });
        Ok(())
    }

    /// The ledger's size: it changes with every write.
    pub(crate) fn version(&self) -> Option<u64> {
        std::fs::metadata(&self.path).map(|m| m.len()).ok()
    }

    /// Where to stream from to get every record after line `after`: the
    /// start of the whole operation that holds it, found through the index
    /// (a stream skips what it reads up to `after`); the start of the
    /// ledger when it cannot be told.
    pub(crate) fn position_of_line(&self, after: u64) -> Result<(u64, u64)> {
        if after == 0 {
            return Ok((0, 0));
        }
        let Some(file) = self.open_shared()? else {
            return Ok((0, 0));
        };
        let found = self.read_through_cache(&file, None, |cache| {
            let mut line = after;
            // An operation is a few lines: its first is never far back.
            for _ in 0..16 {
                let Some((offset, at)) = cache.line_at_or_before(line).ok()? else {
                    return Some((0, 0));
                };
                let (text, whole) =
                    crate::ledger::lines::read_line_at(&file, offset, 1 << 20).ok()?;
                let record = Record::parse(&text, at as usize).ok().filter(|_| whole)?;
                if record.op_id.is_none() {
                    return Some((offset, at - 1));
                }
                line = at.checked_sub(1)?;
            }
            Some((0, 0))
        })?;
        Ok(found.map_or((0, 0), |(_, position)| position))
    }

    /// How many complete lines, and the file's size.
    pub(crate) fn counts(&self) -> Result<(u64, u64)> {
        let Some(file) = self.open_shared()? else {
            return Ok((0, 0));
        };
        let len = self.len_of(&file)?;
        let (_, covered) = self
            .read_through_cache(&file, None, |cache| Some(cache.mark))?
            .expect("an unbounded wait always gets the lock");
        // The complete lines of a torn tail count too: `export` writes them.
        let mut tail = vec![0u8; (len - covered.covered) as usize];
        file.read_exact_at(&mut tail, covered.covered)
            .map_err(|e| self.unreadable(&e))?;
        Ok((
            covered.lines + memchr::memchr_iter(b'\n', &tail).count() as u64,
            len,
        ))
    }

    /// Writes the complete lines, byte for byte; how many.
    pub(crate) fn export(&self, out: &mut dyn Write) -> Result<u64> {
        let Some(file) = self.open_shared()? else {
            return Ok(0);
        };
        let len = self.len_of(&file)?;
        let mut failed = None;
        let (_, lines) = crate::ledger::lines::stream_lines(&file, len, |_, _, line| {
            if failed.is_none()
                && let Err(err) = out.write_all(line).and_then(|()| out.write_all(b"\n"))
            {
                failed = Some(err);
            }
        })
        .map_err(|e| self.unreadable(&e))?;
        if let Some(err) = failed {
            return Err(Error::io("the export", &err));
        }
        Ok(lines)
    }
}

/// The discussions of a file ledger under its shared lock, through its
/// cache (`mapping::Discussions`).
pub(crate) struct FileDiscussions<'a> {
    cache: &'a Cache,
    file: &'a File,
    summarize: Option<Summarize>,
}

impl Discussions for FileDiscussions<'_> {
    type Stop = Damaged;

    fn newest(&self) -> Option<i64> {
        self.cache.last_at_ms
    }

    fn live(&self, now_ms: i64) -> Option<Vec<String>> {
        let ids = self.cache.live.candidates(now_ms)?;
        Some(ids.into_iter().map(str::to_owned).collect())
    }

    fn each_of(
        &mut self,
        ids: &[&str],
        each: &mut dyn FnMut(&str, &[&Record]),
    ) -> Result<(), Damaged> {
        for &id in ids {
            self.cache
                .with_records(self.file, id, |records| each(id, records))?;
        }
        Ok(())
    }

    fn each(
        &mut self,
        checker: Option<LineChecker>,
        each: &mut dyn FnMut(&str, &[&Record]),
    ) -> Result<Option<LineCheck>, Damaged> {
        let Some(checker) = checker else {
            return in_one_pass(self.cache, self.file, each)
                .map_err(|_| Damaged)
                .map(|()| None);
        };
        // Under the shared lock: no writer moves the end meanwhile. Lines
        // after those the cache covers are checked too.
        let file = self.file;
        let len = file.metadata().map_err(|_| Damaged)?.len();
        let feed = |line: &mut LineFeed<'_>| stream_lines(file, len, line);
        let pass = file_pass(self.cache).map_err(|_| Damaged)?;
        in_line_order(len, feed, pass, Some(checker), each).map_err(|_| Damaged)
    }

    fn summarize(&self) -> Option<Summarize> {
        self.summarize
            .filter(|_| self.cache.summary_base().is_some())
    }

    fn kept(
        &mut self,
        row: &mut dyn FnMut(&str, i64, &str) -> Result<(), Untrusted>,
    ) -> Result<Result<Vec<String>, Untrusted>, Damaged> {
        let Some(base) = self.cache.summary_base() else {
            return Ok(Err(Untrusted));
        };
        // The lines of discussions touched after the base are older than
        // the ledger: they are derived.
        let touched = self.cache.touched_after_base();
        let read = summary::read(
            self.cache.ledger_path(),
            base,
            |id, settled_from_ms, text| {
                if touched.contains(id) {
                    return Ok(());
                }
                row(id, settled_from_ms, text)
            },
        );
        Ok(read.map(|()| touched.into_iter().map(str::to_owned).collect()))
    }

    /// Written as they come (each dropped once written), then renamed
    /// into place.
    fn keep(&mut self, lines: &mut dyn Iterator<Item = SummaryLine>) {
        let base = self.cache.summary_base();
        let path = self.cache.ledger_path();
        let mut writer = base.and_then(|base| SummaryWriter::new(path, base).ok());
        for line in lines {
            if let Some(out) = &mut writer
                && out.push_line(&line).is_err()
            {
                writer = None;
            }
        }
        if let Some(writer) = writer {
            // A folder that is not writable costs the next reader the same.
            let _ = writer.finish();
        }
    }
}

/// Every discussion's records, read in one pass over the ledger in order
/// (no lookup, no read of a line by itself): `each` gets a discussion's
/// records once its last indexed line has been read, so memory holds the
/// discussions under way at one point of the ledger, not the ledger. The
/// records are those `Cache::with_records` gives: the records of the
/// whole operations the cache covers that name the discussion. `Err`
/// also when the index turns out wrong about where a discussion ends.
fn in_one_pass(cache: &Cache, file: &File, each: impl FnMut(&str, &[&Record])) -> io::Result<()> {
    let covered = cache.mark.covered;
    let feed = |line: &mut LineFeed<'_>| stream_lines(file, covered, line);
    match in_line_order(covered, feed, file_pass(cache)?, None, each) {
        Ok(_) => Ok(()),
        Err(PassFailed::Read(err)) => Err(err),
        // The index was wrong about where a discussion ends: it is rebuilt.
        Err(PassFailed::Misindexed) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a record past the last line its key has in the index",
        )),
    }
}

/// A pass over the lines the cache covers, ending each discussion at the
/// last line the index has under its key.
fn file_pass(cache: &Cache) -> io::Result<OnePass<impl Fn(&str) -> Option<u64>>> {
    let last_line = cache
        .last_line_of_each_key()
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a damaged index"))?;
    let last_line_of = move |id: &str| last_line.get(&key_of(id)).map(|&line| u64::from(line));
    Ok(OnePass::new(last_line_of, cache.mark.lines))
}

/// The records of `discussion_ids`, or `None` when the index turns out
/// damaged while reading through it.
pub(super) fn records_of(
    cache: &Cache,
    file: &File,
    discussion_ids: &[&str],
) -> Option<Vec<Record>> {
    let mut ids = discussion_ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut records = Vec::new();
    for id in ids {
        records.extend(cache.records_of(file, id).ok()?);
    }
    Some(records)
}

/// The first operation that carries `idempotency_key` and the records of
/// its discussion; `Some(None)` when there is none, `None` when the index
/// turns out damaged.
pub(super) fn keyed_of(cache: &Cache, file: &File, idempotency_key: &str) -> Option<Option<Keyed>> {
    let Some(first) = cache
        .records_with_key(file, idempotency_key)
        .ok()?
        .into_iter()
        .next()
    else {
        return Some(None);
    };
    let discussion = match first.discussion_id() {
        Some(id) => cache.records_of(file, id).ok()?,
        None => Vec::new(),
    };
    Some(Some(Keyed { first, discussion }))
}
