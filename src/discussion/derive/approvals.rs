//! Approval requests in the fold: a gate's `discussion.approval.requested`
//! receipt, the grant or denial that decides it, and the reservation a
//! grant lets through. None of them changes the status; a decision of a
//! request that is not pending decides nothing (`contradictory_approval`).

use super::Fold;
use crate::discussion::state::*;
use crate::record::{Receipt, ReceiptKind, Record};

impl Fold {
    pub(super) fn on_approval(&mut self, kind: ReceiptKind, record: &Record, r: &Receipt, t: i64) {
        let outcome = match kind {
            ReceiptKind::ApprovalRequested => self.on_requested(record, r, t),
            _ => self.on_decided(kind == ReceiptKind::ApprovalGranted, record, r, t),
        };
        match outcome {
            Ok(()) => self.keep_receipt(record),
            Err(detail) => self.finding(
                FindingKind::ContradictoryApproval,
                record,
                r.head_message_id.as_deref(),
                detail,
            ),
        }
    }

    fn on_requested(&mut self, record: &Record, r: &Receipt, t: i64) -> Result<(), String> {
        let (Some(agent_id), Some(head_id), Some(turn), Some(expires_ms)) =
            (&r.agent_id, &r.head_message_id, r.turn, r.expires_ms)
        else {
            return Err(
                "an approval request without agent_id, head_message_id, turn and expires_ms".into(),
            );
        };
        if let Some(pending) = self.d.approvals.iter().find(|a| a.pending_at(t)) {
            return Err(format!(
                "an approval request while {} is pending",
                pending.approval_id
            ));
        }
        self.d.approvals.push(Approval {
            approval_id: record.id.clone(),
            agent_id: agent_id.clone(),
            head_message_id: head_id.clone(),
            turn,
            rule: r.rule.as_deref().cloned().unwrap_or_default(),
            spend: r.spend.as_deref().cloned().unwrap_or_default(),
            requested_at_ms: t,
            requested_by: record.by.clone(),
            requested_token_id: record.token_id.clone(),
            expires_ms,
            decision: None,
            used_by: None,
            delivery: Delivery::default(),
        });
        Ok(())
    }

    fn on_decided(
        &mut self,
        granted: bool,
        record: &Record,
        r: &Receipt,
        t: i64,
    ) -> Result<(), String> {
        let Some(approval_id) = &r.approval_id else {
            return Err(format!("{} without approval_id", r.receipt));
        };
        let head = self.d.head().map(|h| h.message_id.clone());
        let terminal = self.d.terminal.is_some();
        let Some(approval) = self
            .d
            .approvals
            .iter_mut()
            .find(|a| &a.approval_id == approval_id)
        else {
            return Err(format!("no approval request {approval_id}"));
        };
        if !approval.pending_at(t) || terminal || head.as_ref() != Some(&approval.head_message_id) {
            return Err(format!("{approval_id} is not pending"));
        }
        approval.decision = Some(Decision {
            granted,
            at_ms: t,
            by: record.by.clone(),
            token_id: record.token_id.clone(),
            reason: r.reason.clone(),
        });
        Ok(())
    }

    /// A reservation that names the grant it used.
    pub(super) fn on_reserved_with(&mut self, approval_id: &str, attempt_id: &str) {
        if let Some(approval) = self
            .d
            .approvals
            .iter_mut()
            .find(|a| a.approval_id == approval_id && a.grant_unused())
        {
            approval.used_by = Some(attempt_id.to_owned());
        }
    }
}
