//! The escalation of a discussion in the fold: the one `discussion.escalated`
//! receipt an unresolved end gets, and the delivery receipts that say
//! whether a person has heard of it.

use super::Fold;
use crate::discussion::state::*;
use crate::record::{Receipt, ReceiptKind, Record};

impl Fold {
    /// A delivery receipt of the escalation or of an approval request
    /// (`escalation_receipt_id` names either): claims, successes and
    /// failures. They never change the status; one that does not fit (no
    /// such escalation or request, nothing claimed) is left out.
    pub(super) fn on_delivery(&mut self, kind: ReceiptKind, record: &Record, r: &Receipt, t: i64) {
        let Some(target) = r.escalation_receipt_id.as_deref() else {
            return;
        };
        let delivery = match self.d.escalation.as_mut() {
            Some(escalation) if escalation.receipt_id == target => &mut escalation.delivery,
            _ => match self
                .d
                .approvals
                .iter_mut()
                .find(|a| a.approval_id == target)
            {
                Some(approval) => &mut approval.delivery,
                None => return,
            },
        };
        if delivery.take(kind, record, r, t) {
            self.keep_receipt(record);
        }
    }

    pub(super) fn on_escalated(
        &mut self,
        record: &Record,
        r: &Receipt,
    ) -> Result<(), (FindingKind, String)> {
        if self.d.escalation.is_some() {
            return Err((
                FindingKind::ContradictoryReceipts,
                "a second escalation".into(),
            ));
        }
        // Every unresolved end escalates: an exhausted budget (the write
        // that exhausts it records it), and a deadman, an expiry or an
        // invalid discussion (the first writer that finds it due records
        // it). The reason must name the end the discussion reached.
        let reason = r.reason.as_deref().unwrap_or("turns");
        let fits = match reason {
            "deadman" => matches!(self.d.terminal, Some((Status::Deadman, _))),
            "expired" => matches!(self.d.terminal, Some((Status::Expired, _))),
            "invalid" => {
                self.d.root.is_none() || self.d.findings.iter().any(|f| f.kind.invalidates())
            }
            _ => matches!(self.d.terminal, Some((Status::Exhausted, _))),
        };
        if !fits {
            return Err((
                FindingKind::ContradictoryReceipts,
                format!("an escalation ({reason}) of a discussion that has not reached that end"),
            ));
        }
        self.d.escalation = Some(Escalation {
            receipt_id: record.id.clone(),
            at_ms: record.at_ms,
            turns_used: r.turns_used.unwrap_or(self.d.turns_used),
            reason: r.reason.clone().unwrap_or_else(|| "turns".into()),
            delivery: Delivery::default(),
        });
        Ok(())
    }
}

impl Delivery {
    /// Takes one delivery receipt at `t`; whether it fitted (a claim does
    /// not while another claim's lease or a backoff runs, nothing does
    /// once delivered).
    fn take(&mut self, kind: ReceiptKind, record: &Record, r: &Receipt, t: i64) -> bool {
        if self.delivered.is_some() {
            return false;
        }
        match kind {
            ReceiptKind::EscalationClaimed => {
                let Some(lease_until_ms) = r.deadline_ms else {
                    return false;
                };
                let claim_runs = self.claim.as_ref().is_some_and(|c| t < c.lease_until_ms);
                if claim_runs || self.retry_at_ms.is_some_and(|at| t < at) {
                    return false;
                }
                self.claim = Some(Claim {
                    receipt_id: record.id.clone(),
                    by: record.by.clone(),
                    at_ms: t,
                    lease_until_ms,
                });
            }
            ReceiptKind::EscalationDelivered => {
                self.claim = None;
                self.delivered = Some((t, record.by.clone()));
            }
            _ => {
                self.claim = None;
                self.failures += 1;
                self.retry_at_ms = Some(t.saturating_add(delivery_backoff_ms(self.failures)));
                self.last_failure = r.detail.clone().or_else(|| r.reason.clone());
            }
        }
        true
    }
}

/// How long after its `failures`-th failed delivery an escalation waits
/// before it is handed out again: 1 s, doubling, at most 10 minutes.
fn delivery_backoff_ms(failures: u32) -> i64 {
    const FIRST_MS: i64 = 1_000;
    const MOST_MS: i64 = 600_000;
    let doublings = failures.saturating_sub(1).min(20);
    (FIRST_MS << doublings).min(MOST_MS)
}

#[cfg(test)]
mod tests {
    use super::delivery_backoff_ms;

    #[test]
    fn a_failed_delivery_waits_one_second_doubling_to_ten_minutes() {
        let waits: Vec<i64> = [1, 2, 3, 10, 11, 1000]
            .into_iter()
            .map(delivery_backoff_ms)
            .collect();
        assert_eq!(waits, [1_000, 2_000, 4_000, 512_000, 600_000, 600_000]);
    }
}
