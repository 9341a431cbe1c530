//! Live sessions in the fold: a reservation made `--into` a terminal pane
//! and the `discussion.attempt.delivered` receipt that says its pointer
//! was typed there. (The pickup is a `started` receipt with `via:
//! "pickup"`, folded with the other attempt receipts.)

use super::Fold;
use crate::record::{Receipt, Record};

impl Fold {
    /// The pointer of a turn reserved `--into` a session was typed. Like
    /// an escalation's delivery receipts it never changes a status and is
    /// never a finding: one that does not fit (no such attempt, not made
    /// `--into`, already delivered, the attempt ended) is left out.
    pub(super) fn on_pointer_delivered(&mut self, record: &Record, r: &Receipt, t: i64) {
        let Some(&index) = r
            .attempt_id
            .as_ref()
            .and_then(|id| self.attempt_index.get(id))
        else {
            return;
        };
        let live = self.live == Some(index);
        let attempt = &mut self.d.attempts[index];
        if !live || attempt.into.is_none() || attempt.delivered_at_ms.is_some() {
            return;
        }
        attempt.delivered_at_ms = Some(t);
        self.keep_receipt(record);
    }
}
