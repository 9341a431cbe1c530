//! The event stream (`events`, `serve`'s `/v1/events`): the ledger's
//! records in order with their discussion's status after each, filtered,
//! resumable after a cursor (a record's line). Reading never writes.

use crate::discussion::{MessageType, Status, StatusAfterEach};
use crate::error::Result;
use crate::ledger::Record;
use crate::ledger::hash::{IdHashMap, IdHashSet};
use crate::ledger::spent::Spent;
use crate::session::Session;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What the stream remembers: the records of discussions that may still
/// change, to derive each one's status after each record.
pub(crate) struct EventStream {
    discussion: Option<String>,
    agent: Option<String>,
    /// Reads bound to one agent (a `serve` agent token): only the records
    /// of its discussions, and no global record.
    viewer: Option<String>,
    open: IdHashMap<String, Held>,
    /// The most discussions `open` holds: past it, the one that moved
    /// longest ago is let go (read back from the ledger if it moves again),
    /// so a stream's memory is bounded whatever the ledger holds.
    most_held: usize,
    /// When each discussion in `open` is terminal whatever comes: its
    /// conversation deadline, soonest first. Past it in the stream's time,
    /// its records are let go (a later line reads them back).
    settles: BinaryHeap<Reverse<(i64, String)>>,
    /// Every discussion held so far: one not among them has no records
    /// before this one (the stream starts at the first line).
    seen: IdHashSet<String>,
    /// The last line handled: a batch cut short by a lost database is
    /// read again from its start, and nothing is printed twice.
    through: usize,
    /// Started after a cursor: a discussion first met may have records
    /// before it, read from the ledger for its status.
    resumed: bool,
    /// Discussions this stream has shown that are not terminal yet, with
    /// the earliest instant they may end by time alone (a live attempt's
    /// deadline, the conversation's): such an end has no record, so the
    /// stream tells it itself (`overdue`), once.
    watched: IdHashMap<String, i64>,
}

/// A discussion the stream has shown reached `deadman` or `expired` by
/// time, with no record to say so.
pub(crate) struct TimedEnd {
    pub discussion_id: String,
    pub status: Status,
    /// When it reached that status.
    pub at_ms: i64,
}

/// A discussion the stream holds: its records so far, and its status
/// after each, folded as they come.
struct Held {
    records: Vec<Record>,
    status: StatusAfterEach,
}

/// A record that passes, as the stream tells it.
pub(crate) struct Event<'r> {
    pub record: &'r Record,
    /// Its discussion's status after it (`None`: a global record, or a
    /// discussion not begun for this reader).
    pub status: Option<Status>,
    /// A message's type and turn, when its envelope is well-formed.
    pub message: Option<(MessageType, u32)>,
}

/// What is done with each record that passes.
pub(crate) type Emit<'e> = dyn FnMut(&Event<'_>) -> Result<()> + 'e;

impl EventStream {
    /// A stream of the records after line `after` (0: from the first),
    /// of `discussion` only, of the discussions `agent` takes part in
    /// only, and of those `viewer` takes part in only, when given.
    /// It holds at most `most_held` discussions' records at once.
    pub(crate) fn new(
        discussion: Option<String>,
        agent: Option<String>,
        viewer: Option<String>,
        after: u64,
        most_held: usize,
    ) -> EventStream {
        EventStream {
            discussion,
            agent,
            viewer,
            open: IdHashMap::default(),
            most_held: most_held.max(1),
            settles: BinaryHeap::new(),
            seen: IdHashSet::default(),
            through: usize::try_from(after).unwrap_or(usize::MAX),
            resumed: after > 0,
            watched: IdHashMap::default(),
        }
    }

    /// The last line handled (at first, the cursor it was started after).
    pub(crate) fn cursor(&self) -> u64 {
        self.through as u64
    }

    /// Handles the next record read: emitted when it passes the filters.
    /// What the stream does not keep goes to `spent`.
    pub(crate) fn record(
        &mut self,
        session: &Session,
        record: Record,
        spent: &mut Spent,
        emit: &mut Emit<'_>,
    ) -> Result<()> {
        if record.line <= self.through {
            spent.give(record);
            return Ok(());
        }
        let line = record.line;
        self.handle(session, record, spent, emit)?;
        self.through = line;
        Ok(())
    }

    fn handle(
        &mut self,
        session: &Session,
        record: Record,
        spent: &mut Spent,
        emit: &mut Emit<'_>,
    ) -> Result<()> {
        let Some(id) = record.discussion_id() else {
            if self.discussion.is_none() && self.agent.is_none() && self.viewer.is_none() {
                emit(&Event {
                    record: &record,
                    status: None,
                    message: None,
                })?;
            }
            spent.give(record);
            return Ok(());
        };
        if self.discussion.as_deref().is_some_and(|d| d != id) {
            spent.give(record);
            return Ok(());
        }
        // Let go of what is settled by now, in the stream's time.
        while let Some(Reverse((at, _))) = self.settles.peek()
            && *at <= record.at_ms
        {
            let Some(Reverse((_, settled))) = self.settles.pop() else {
                break;
            };
            if let Some(held) = self.open.remove(&settled) {
                spent.give_all(held.records);
            }
        }
        // Owned only for a discussion newly held: most records belong to
        // one held already, and are looked up by the borrowed id.
        let fresh = (!self.open.contains_key(id)).then(|| id.to_owned());
        if let Some(id) = &fresh {
            // Let go earlier: what came before, from the ledger.
            let before: Vec<Record> = if self.seen.insert(id.clone()) && !self.resumed {
                Vec::new()
            } else {
                let line = record.line;
                let view = session.ledger.view(&[id])?;
                view.discussion(id)
                    .into_iter()
                    .filter(|r| r.line < line)
                    .cloned()
                    .collect()
            };
            if self.open.len() >= self.most_held {
                let stalest = self
                    .open
                    .iter()
                    .min_by_key(|(_, held)| held.records.last().map_or(0, |r| r.line))
                    .map(|(id, _)| id.clone());
                if let Some(held) = stalest.and_then(|stalest| self.open.remove(&stalest)) {
                    spent.give_all(held.records);
                }
            }
            let mut held = Held {
                records: Vec::with_capacity(before.len() + 1),
                status: StatusAfterEach::new(id),
            };
            for record in before {
                held.records.push(record);
                held.status.push(&held.records);
            }
            self.open.insert(id.clone(), held);
        }
        let held = self.open.get_mut(id).expect("held, or just inserted");
        let at = record.at_ms;
        held.records.push(record);
        let status = held.status.push(&held.records);
        let root = held.status.root();
        if let Some(id) = fresh {
            // Newly held: settled by its conversation deadline (every
            // attempt's is within it), or at once without a root.
            let settles = root.map_or(at, |r| r.deadline_ms);
            self.settles.push(Reverse((settles, id)));
        }
        for agent in [&self.agent, &self.viewer].into_iter().flatten() {
            let takes_part = root.is_some_and(|r| r.asker == *agent || r.peer == *agent);
            if !takes_part {
                return Ok(());
            }
        }
        // Shown: watched for an end by time until a status says it ended.
        let last = held.records.last().expect("one record");
        match (status, root) {
            (Some(status), Some(root)) if !status.is_terminal() => {
                let reserved = match &last.body {
                    crate::ledger::Body::Receipt(r)
                        if r.kind() == Some(crate::record::ReceiptKind::Reserved) =>
                    {
                        r.deadline_ms
                    }
                    _ => None,
                };
                let due = reserved.map_or(root.deadline_ms, |d| d.min(root.deadline_ms));
                let id = last.discussion_id().unwrap_or_default().to_owned();
                let entry = self.watched.entry(id).or_insert(due);
                *entry = (*entry).min(due);
            }
            _ => {
                if let Some(id) = last.discussion_id() {
                    self.watched.remove(id);
                }
            }
        }
        emit(&Event {
            record: held.records.last().expect("one record"),
            status,
            message: held.status.last_message(),
        })
    }
}

impl EventStream {
    /// The earliest instant a watched discussion may end by time.
    pub(crate) fn next_due(&self) -> Option<i64> {
        self.watched.values().min().copied()
    }

    /// Tells each watched discussion that has reached `deadman` or
    /// `expired` by `now_ms` with no record to say so (derived from the
    /// ledger now), once; the others are watched on until their next
    /// deadline.
    pub(crate) fn overdue(
        &mut self,
        session: &Session,
        now_ms: i64,
        tell: &mut dyn FnMut(&TimedEnd) -> Result<()>,
    ) -> Result<()> {
        let due: Vec<String> = self
            .watched
            .iter()
            .filter(|&(_, &at)| at <= now_ms)
            .map(|(id, _)| id.clone())
            .collect();
        for id in due {
            let view = session.ledger.view(&[&id])?;
            let derived = crate::discussion::derive(&id, &view.discussion(&id), now_ms);
            match derived {
                Some(d) if matches!(d.status, Status::Deadman | Status::Expired) => {
                    self.watched.remove(&id);
                    tell(&TimedEnd {
                        at_ms: d.terminal.map_or(now_ms, |(_, at)| at),
                        status: d.status,
                        discussion_id: id,
                    })?;
                }
                Some(d) if !d.status.is_terminal() => {
                    let next = d
                        .live_attempt()
                        .map_or(i64::MAX, |a| a.deadline_ms)
                        .min(d.root.as_ref().map_or(i64::MAX, |r| r.deadline_ms));
                    self.watched.insert(id, next.max(now_ms + 1));
                }
                _ => {
                    self.watched.remove(&id);
                }
            }
        }
        Ok(())
    }
}
