//! What every backend keeps of a record beyond its line, folded one way:
//! the global state (fleets, switches, quotas, tokens, reservations), the
//! live set (`live.rs`) and the newest `at_ms`. The file cache folds a
//! line appended after its checkpoint, the cache's rebuild every line
//! parsed whole, and PostgreSQL's state row each line it numbers; each
//! keeps the three where it keeps them, and folds them here.

use super::live::LiveSet;
use crate::global::Global;
use crate::record::Record;

/// The three folds of one backend's state, borrowed for one record.
pub(crate) struct Fold<'a> {
    pub global: &'a mut Global,
    pub live: &'a mut LiveSet,
    pub last_at_ms: &'a mut Option<i64>,
}

impl Fold<'_> {
    pub(crate) fn record(self, record: &Record) {
        if let Some(id) = record.discussion_id() {
            self.live.touch(id, record.at_ms);
        }
        self.global.apply(record);
        *self.last_at_ms = Some(
            self.last_at_ms
                .map_or(record.at_ms, |t| t.max(record.at_ms)),
        );
    }
}
