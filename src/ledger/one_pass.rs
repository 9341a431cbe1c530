//! Every discussion's records from one pass over the ledger in line order
//! (`verify`, a list that writes the summary): a discussion is
//! handed on once its last line has been read, so memory holds the
//! discussions under way at one point of the ledger, not the ledger. Each
//! backend says where a discussion ends: a file's index, a database's
//! own count of its rows.

use super::check::{LineCheck, LineChecker, Link, UnreadableLine, record_or_unreadable};
use super::hash::IdHashMap;
use super::lines::{LineFeed, operations_on_both_cores};
use crate::record::Record;
use std::io;

/// Why a pass gave up.
#[derive(Debug)]
pub(crate) enum PassFailed {
    /// The lines could not be read.
    Read(io::Error),
    /// A record came after the last line its discussion was said to have.
    Misindexed,
}

/// A pass in line order over the lines `feed` gives (`bytes` of them),
/// parsed on both cores where that is worth it: each discussion goes to
/// `each` once `pass` ends it. With a `checker`, every line is checked on
/// the way and what it found is returned (`feed` reads the lines again
/// for the few ids that may repeat): `verify` reads each line once.
pub(crate) fn in_line_order<L: Fn(&str) -> Option<u64>>(
    bytes: u64,
    mut feed: impl FnMut(&mut LineFeed<'_>) -> io::Result<(u64, u64)>,
    mut pass: OnePass<L>,
    mut checker: Option<LineChecker>,
    mut each: impl FnMut(&str, &[&Record]),
) -> Result<Option<LineCheck>, PassFailed> {
    // The chain's digests only for a check: a list has no use for them.
    let checking = checker.is_some();
    let read = |_, line_no, line: &[u8]| {
        let (record, mark) = record_or_unreadable(line_no, line);
        ((record, checking.then(|| Link::of(line))), mark)
    };
    let take = |(line, link): (Result<Record, UnreadableLine>, Option<Link>)| {
        if let (Some(checker), Some(link)) = (&mut checker, link) {
            checker.line(&line, &link);
        }
        pass.take(line.ok(), &mut each);
    };
    let streamed =
        operations_on_both_cores(bytes, &mut feed, read, take).map_err(PassFailed::Read)?;
    pass.finish(&mut each)
        .map_err(|Misindexed| PassFailed::Misindexed)?;
    checker
        .map(|checker| checker.finish(streamed, bytes, feed))
        .transpose()
        .map_err(PassFailed::Read)
}

/// The discussions under way in a pass over the ledger.
pub(crate) struct OnePass<L> {
    /// The last line of a discussion (or of the discussions sharing its
    /// key in a file's index).
    last_line: L,
    /// The last line the pass covers: it takes no record after it.
    covered_lines: u64,
    under_way: IdHashMap<String, Vec<Record>>,
    /// A record came past the last line it was said to have: where
    /// discussions end was told wrong, and the pass gives up.
    misindexed: bool,
}

/// Where a discussion ends was told wrong: a record came after it.
#[derive(Debug)]
pub(crate) struct Misindexed;

impl<L: Fn(&str) -> Option<u64>> OnePass<L> {
    pub(crate) fn new(last_line: L, covered_lines: u64) -> OnePass<L> {
        OnePass {
            last_line,
            covered_lines,
            under_way: IdHashMap::default(),
            misindexed: false,
        }
    }

    /// The next record of a whole operation (`None`: a line that is none);
    /// `each` gets a discussion's records once its last line came.
    pub(crate) fn take(&mut self, record: Option<Record>, each: &mut impl FnMut(&str, &[&Record])) {
        let Some(record) = record else { return };
        if record.line as u64 > self.covered_lines {
            return;
        }
        let Some(id) = record.discussion_id() else {
            return;
        };
        let last = (self.last_line)(id);
        if self.misindexed || last.is_none_or(|last| record.line as u64 > last) {
            self.misindexed = true;
            return;
        }
        let ends = last == Some(record.line as u64);
        let records = match self.under_way.get_mut(id) {
            Some(records) => records,
            None => self.under_way.entry(id.to_owned()).or_default(),
        };
        records.push(record);
        if ends {
            // Another discussion of the same key (a collision in a file's
            // index) waits for the end of the pass.
            let id = records[0].discussion_id().unwrap_or_default().to_owned();
            if let Some((id, records)) = self.under_way.remove_entry(&id) {
                each(&id, &records.iter().collect::<Vec<_>>());
            }
        }
    }

    /// At the end of the pass: the discussions still under way (of keys
    /// that collide) go to `each`.
    pub(crate) fn finish(self, mut each: impl FnMut(&str, &[&Record])) -> Result<(), Misindexed> {
        if self.misindexed {
            return Err(Misindexed);
        }
        for (id, records) in self.under_way {
            each(&id, &records.iter().collect::<Vec<_>>());
        }
        Ok(())
    }
}
