//! Reading a file ledger whole: every discussion mapped (from the index,
//! the live set or the summary), the lines checked, the records streamed
//! in order, and the lines exported byte for byte.

use super::cache::summary::{self, SummaryLine, SummaryWriter};
use super::cache::{Cache, key_of};
use super::{FileLedger, Opened, STREAMED_TAIL, StreamEnd};
use crate::error::{Error, Result};
use crate::ledger::check::{LineCheck, LineChecker, check_lines};
use crate::ledger::excerpt::Keyed;
use crate::ledger::lines::{
    LineFeed, operations_ahead, operations_of, record_and_mark, stream_lines, stream_lines_from,
    worth_a_second_core,
};
use crate::ledger::one_pass::{OnePass, PassFailed, in_line_order};
use crate::ledger::spent::Spent;
use crate::ledger::summary::{Summarize, Untrusted};
use crate::record::Record;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;

impl FileLedger {
    /// Maps every discussion of the ledger, one at a time, under a shared
    /// lock: `map` gets the newest `at_ms` of the ledger, the discussion id
    /// and its records. Memory holds one discussion's records at a time,
    /// whatever the size of the ledger.
    pub(crate) fn map_discussions<T>(
        &self,
        mut map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Vec<T>> {
        let Some(file) = self.open_shared()? else {
            return Ok(Vec::new());
        };
        let (_, mapped) = self
            .read_through_cache(&file, None, |cache| map_all(cache, &file, &mut map))?
            .expect("an unbounded wait always gets the lock");
        Ok(mapped)
    }

    /// As `map_discussions`, but only over the discussions that may be
    /// `open` or `active` at the instant `now` gives for the newest `at_ms`
    /// (`cache::live`): a handful, whatever the size of the ledger. `None`
    /// when the cache cannot tell which, and `map_discussions` must do.
    pub(crate) fn map_live<T>(
        &self,
        now: impl Fn(Option<i64>) -> i64,
        mut map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Option<Vec<T>>> {
        let Some(file) = self.open_shared()? else {
            return Ok(Some(Vec::new()));
        };
        let (_, mapped) = self
            .read_through_cache(&file, None, |cache| {
                let Some(ids) = cache.live.candidates(now(cache.last_at_ms)) else {
                    return Some(None);
                };
                map_ids(cache, &file, ids, &mut map).map(Some)
            })?
            .expect("an unbounded wait always gets the lock");
        Ok(mapped)
    }

    /// As `map_discussions`, for readers of many discussions (`list`), but
    /// from the summary (`cache/summary.rs`): `from_row` gets the row of
    /// each discussion that nothing touched since the base and that is
    /// settled at the instant `now` gives; the others, a handful, are
    /// derived from their records through `map`. Without a summary that
    /// can be trusted, every discussion is derived, and the summary is
    /// written for the next reader.
    pub(crate) fn map_summaries<T>(
        &self,
        now: impl Fn(Option<i64>) -> i64,
        mut from_row: impl FnMut(&str) -> Result<Option<T>, Untrusted>,
        mut map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<Vec<T>> {
        let Some(file) = self.open_shared()? else {
            return Ok(Vec::new());
        };
        let read = |cache: &Cache| {
            let (Some(summarize), Some(base)) = (self.summarize, cache.summary_base()) else {
                return map_all(cache, &file, &mut map);
            };
            let now_ms = now(cache.last_at_ms);
            match from_summary(cache, &file, base, now_ms, &mut from_row, &mut map) {
                Ok(mapped) => Some(mapped),
                Err(Untrusted) => summarize_all(
                    cache,
                    &file,
                    (base, summarize),
                    now_ms,
                    &mut from_row,
                    &mut map,
                ),
            }
        };
        let (_, mapped) = self
            .read_through_cache(&file, None, read)?
            .expect("an unbounded wait always gets the lock");
        Ok(mapped)
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

    /// `check_lines` and `map_discussions` in one pass over the ledger
    /// (`verify`): each line is parsed once, on both cores, then checked
    /// and handed on to its discussion, where two passes parsed it twice.
    pub(crate) fn check_and_map<T>(
        &self,
        checker: LineChecker,
        mut map: impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
    ) -> Result<(LineCheck, Vec<T>)> {
        let Some(file) = self.open_shared()? else {
            return Ok((LineCheck::default(), Vec::new()));
        };
        let (_, found) = self
            .read_through_cache(&file, None, |cache| {
                check_and_map_all(cache, &file, checker.clone(), &mut map)
            })?
            .expect("an unbounded wait always gets the lock");
        Ok(found)
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
            && earlier.end == from.0
            && from.0 > 0
        {
            if earlier.identity != identity {
                return Err(self.changed_under_reader(from, "was replaced by another file"));
            }
            let mut tail = vec![0; earlier.tail.len()];
            let same = len >= from.0
                && file
                    .read_exact_at(&mut tail, from.0 - earlier.tail.len() as u64)
                    .is_ok()
                && tail == earlier.tail;
            if !same {
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

    /// Keeps the bytes just before `end`, read right after the stream: a
    /// file that no longer has them (cut while it was read) stops the
    /// stream, rather than leaving nothing to compare with later.
    fn remember_stream(&self, file: &File, identity: (u64, u64), at: (u64, u64)) -> Result<()> {
        let end = at.0;
        let kept = STREAMED_TAIL.min(end);
        let mut tail = vec![0; kept as usize];
        let whole = file.read_exact_at(&mut tail, end - kept).is_ok()
            && (end == 0 || tail.last() == Some(&b'\n'));
        if !whole {
            return Err(self.changed_under_reader(at, "was truncated while it was read"));
        }
        *self.streamed_from.lock().unwrap_or_else(|e| e.into_inner()) = Some(StreamEnd {
            identity,
            end,
            tail,
        });
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

/// Every discussion mapped, or `None` when the index turns out damaged.
fn map_all<T>(
    cache: &Cache,
    file: &File,
    map: &mut impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
) -> Option<Vec<T>> {
    let mut mapped = Vec::new();
    in_one_pass(cache, file, |id, records| {
        mapped.extend(map(cache.last_at_ms, id, records).map(|t| (id.to_owned(), t)));
    })
    .ok()?;
    Some(by_id(mapped))
}

/// Every line checked and every discussion mapped in one pass, or `None`
/// when the index turns out damaged (or the file cannot be read: the
/// reader tries again once the cache is rebuilt).
fn check_and_map_all<T>(
    cache: &Cache,
    file: &File,
    checker: LineChecker,
    map: &mut impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
) -> Option<(LineCheck, Vec<T>)> {
    // Under the shared lock: no writer moves the end meanwhile.
    let len = file.metadata().ok()?.len();
    let mut mapped = Vec::new();
    let check = in_line_order(
        len,
        |line: &mut LineFeed<'_>| stream_lines(file, len, line),
        file_pass(cache).ok()?,
        Some(checker),
        |id: &str, records: &[&Record]| {
            mapped.extend(map(cache.last_at_ms, id, records).map(|t| (id.to_owned(), t)));
        },
    )
    .ok()??;
    Some((check, by_id(mapped)))
}

/// What was mapped discussion by discussion, in the order of their ids
/// (the order of `map_ids` over `discussion_ids`).
fn by_id<T>(mut mapped: Vec<(String, T)>) -> Vec<T> {
    mapped.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    mapped.into_iter().map(|(_, t)| t).collect()
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

/// Every discussion through the summary of base `base`; `Err` when the
/// summary (or the index) cannot be trusted.
fn from_summary<T>(
    cache: &Cache,
    file: &File,
    base: u64,
    now_ms: i64,
    from_row: &mut impl FnMut(&str) -> std::result::Result<Option<T>, Untrusted>,
    map: &mut impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
) -> std::result::Result<Vec<T>, Untrusted> {
    let touched = cache.touched_after_base();
    let mut mapped = Vec::new();
    let mut derive = |id: &str, mapped: &mut Vec<T>| {
        let derived = cache
            .with_records(file, id, |records| map(cache.last_at_ms, id, records))
            .map_err(|_| Untrusted)?;
        mapped.extend(derived.flatten());
        Ok(())
    };
    summary::read(cache.ledger_path(), base, |id, settled_from_ms, row| {
        if touched.contains(id) {
            Ok(()) // derived below, with every discussion new since the base
        } else if settled_from_ms > now_ms {
            derive(id, &mut mapped)
        } else {
            mapped.extend(from_row(row)?);
            Ok(())
        }
    })?;
    for id in touched {
        derive(id, &mut mapped)?;
    }
    Ok(mapped)
}

/// Every discussion summarized on one pass over the ledger, and the
/// summary of base `base` written on the way (when the folder takes it): a
/// discussion settled at `now_ms` answers with its new summary line, the
/// others are derived on the pass. `None` when the index is damaged.
fn summarize_all<T>(
    cache: &Cache,
    file: &File,
    (base, summarize): (u64, Summarize),
    now_ms: i64,
    from_row: &mut impl FnMut(&str) -> std::result::Result<Option<T>, Untrusted>,
    map: &mut impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
) -> Option<Vec<T>> {
    // The answers of the unsettled, few, are kept apart: a slot for one in
    // every entry would be a row's size for each. A settled discussion's
    // answer is read from its line once the summary is written (one
    // derivation, not two, and no second copy of it meanwhile).
    let mut summarized = Vec::new();
    let mut mapped = Vec::new();
    in_one_pass(cache, file, |id, records| {
        let summary = summarize(id, records);
        let settled = summary.settled_from_ms <= now_ms;
        if !settled {
            mapped.extend(map(cache.last_at_ms, id, records));
        }
        summarized.push((SummaryLine::new(id, &summary), settled));
    })
    .ok()?;
    // Room for every answer at once: grown by doubling, the last copy held
    // both the old half and the new whole at the peak of a first list.
    mapped.reserve_exact(summarized.len());
    summarized.sort_unstable_by(|a, b| a.0.id().cmp(b.0.id()));
    let mut writer = SummaryWriter::new(cache.ledger_path(), base).ok();
    for (line, settled) in summarized {
        if let Some(out) = &mut writer
            && out.push_line(&line).is_err()
        {
            writer = None;
        }
        if !settled {
            continue;
        }
        let answer = match from_row(line.row()) {
            Ok(kept) => kept,
            Err(Untrusted) => cache
                .with_records(file, line.id(), |records| {
                    map(cache.last_at_ms, line.id(), records)
                })
                .ok()?
                .flatten(),
        };
        mapped.extend(answer);
    }
    if let Some(writer) = writer {
        // A folder that is not writable costs the next reader the same.
        let _ = writer.finish();
    }
    Some(mapped)
}

/// The discussions `ids` mapped one at a time, or `None` when the index
/// turns out damaged.
fn map_ids<T>(
    cache: &Cache,
    file: &File,
    ids: impl IntoIterator<Item = impl AsRef<str>>,
    map: &mut impl FnMut(Option<i64>, &str, &[&Record]) -> Option<T>,
) -> Option<Vec<T>> {
    let mut mapped = Vec::new();
    for id in ids {
        let id = id.as_ref();
        let derived = cache
            .with_records(file, id, |records| map(cache.last_at_ms, id, records))
            .ok()?;
        mapped.extend(derived.flatten());
    }
    Some(mapped)
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
