//! What a command sees of the ledger through the cache: the global state,
//! the newest time, and the records of the discussions it named.

use super::cache::Cache;
use super::record::Record;
use crate::global::Global;
use std::borrow::Cow;

pub struct View {
    pub(super) cache: Cache,
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

impl View {
    /// Fleets, the kill-switch, quotas and recent reservations, as a
    /// reader at `now_ms` sees them (changes stamped ahead of it undone).
    pub fn global(&self, now_ms: i64) -> Cow<'_, Global> {
        self.cache.global.at(now_ms)
    }

    /// The global state as folded, changes ahead of any clock included.
    pub fn global_folded(&self) -> &Global {
        &self.cache.global
    }

    /// For `Ledger::append_keyed`: what the ledger holds under the key.
    pub fn keyed(&self) -> Option<&Keyed> {
        self.keyed.as_ref()
    }

    /// The largest `at_ms` in the ledger; new records never go below it.
    pub fn last_at_ms(&self) -> Option<i64> {
        self.cache.last_at_ms
    }

    /// The records of one of the discussions the view was made for, in
    /// ledger order.
    pub fn discussion(&self, discussion_id: &str) -> Vec<&Record> {
        self.records
            .iter()
            .filter(|r| r.discussion_id() == Some(discussion_id))
            .collect()
    }

    /// Every discussion id in the ledger, sorted (for "did you mean");
    /// none when the index turns out damaged (a hint is not worth failing
    /// the command for; the next command rebuilds it).
    pub fn discussion_ids(&self) -> Vec<String> {
        self.cache.discussion_ids().unwrap_or_default()
    }
}
