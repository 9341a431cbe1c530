//! An excerpt of the ledger, what a command reads of it whatever its kind: the global state,
//! the newest time, and the records of the discussions it named.

use crate::error::Result;
use crate::global::Global;
use crate::record::Record;
use std::borrow::Cow;

pub(crate) struct Excerpt {
    pub(super) global: Global,
    pub(super) last_at_ms: Option<i64>,
    pub(super) records: Vec<Record>,
    pub(super) keyed: Option<Keyed>,
}

/// What the ledger holds under an idempotency key: the first record that
/// carries it and every record of that record's discussion.
#[derive(Debug, Clone)]
pub struct Keyed {
    pub first: Record,
    pub discussion: Vec<Record>,
}

impl Keyed {
    /// The records of the discussion as they stood right after the keyed
    /// operation: everything before it, its first line, and the later
    /// lines that name it as their operation.
    pub fn as_written(&self) -> Vec<&Record> {
        self.discussion
            .iter()
            .filter(|r| r.line <= self.first.line || r.op_id.as_deref() == Some(&self.first.id))
            .collect()
    }
}

impl Excerpt {
    /// Fleets, the kill-switch, quotas and recent reservations, as a
    /// reader at `now_ms` sees them (changes stamped ahead of it undone).
    pub(crate) fn global(&self, now_ms: i64) -> Cow<'_, Global> {
        self.global.at(now_ms)
    }

    /// The global state as folded, changes ahead of any clock included.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn global_folded(&self) -> &Global {
        &self.global
    }

    /// For `Ledger::append_keyed`: what the ledger holds under the key.
    pub(crate) fn keyed(&self) -> Option<&Keyed> {
        self.keyed.as_ref()
    }

    /// The largest `at_ms` in the ledger; new records never go below it.
    pub(crate) fn last_at_ms(&self) -> Option<i64> {
        self.last_at_ms
    }

    /// The records of one of the discussions the view was made for, in
    /// ledger order.
    pub(crate) fn discussion(&self, discussion_id: &str) -> Vec<&Record> {
        self.records
            .iter()
            .filter(|r| r.discussion_id() == Some(discussion_id))
            .collect()
    }
}

impl Excerpt {
    /// The view of a ledger with nothing in it yet.
    pub(super) fn empty() -> Excerpt {
        Excerpt {
            global: Global::default(),
            last_at_ms: None,
            records: Vec::new(),
            keyed: None,
        }
    }
}

/// What a writer decides under the lock: from the view, the records to
/// append (none for a refusal or a replay) and its answer.
pub(crate) trait Plan<T>: FnOnce(&Excerpt) -> Result<(Vec<Record>, T)> {}

impl<T, F: FnOnce(&Excerpt) -> Result<(Vec<Record>, T)>> Plan<T> for F {}

/// What a write touches. A backend that lets unrelated writes run side by
/// side (PostgreSQL) serializes a write only with those that touch the
/// same discussion, spend the same agent's wake quota or use the same
/// idempotency key; a global write (fleets, quotas, the kill-switch:
/// what every write reads) with every write. The file serializes all.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Scope<'a> {
    /// The discussions whose records the plan reads and may append to.
    pub discussions: &'a [&'a str],
    /// The agents the plan may reserve a turn for (their hourly quota).
    pub agents: &'a [&'a str],
    /// The key whose earlier operation the plan is shown (`Excerpt::keyed`).
    pub idempotency_key: Option<&'a str>,
    /// The plan may write what every write reads.
    pub global: bool,
}

impl Scope<'_> {
    /// Whether `records` stay within the scope: a record of a discussion
    /// not named, a reservation for an agent not named, or a global record
    /// in a scope that is not global is a plan that broke its word.
    pub(crate) fn holds(&self, records: &[Record]) -> bool {
        records.iter().all(|record| match &record.body {
            crate::record::Body::Message(_) | crate::record::Body::Receipt(_) => {
                let discussion = record.discussion_id().unwrap_or_default();
                let in_scope = self.global || self.discussions.contains(&discussion);
                let reserves_for = match &record.body {
                    crate::record::Body::Receipt(receipt)
                        if receipt.kind() == Some(crate::record::ReceiptKind::Reserved) =>
                    {
                        receipt.agent_id.as_deref()
                    }
                    _ => None,
                };
                in_scope
                    && reserves_for.is_none_or(|agent| self.global || self.agents.contains(&agent))
            }
            _ => self.global,
        })
    }
}
