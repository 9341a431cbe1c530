//! The derived state of one discussion.

use super::envelope::{MessageType, Policy};
use crate::record::Record;
use crate::spend::{Spend, Usage};
use serde_json::Value;

/// As the contract names it: `"open"`, `"closed"`, ...
impl serde::Serialize for Status {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Status {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Status, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Status::parse(&name).ok_or_else(|| serde::de::Error::custom("not a status"))
    }
}

/// Derived status; the order of the variants is the seed's precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    Invalid,
    Closed,
    Deadman,
    Expired,
    Exhausted,
    Active,
    Open,
}

impl Status {
    pub const ALL: [Status; 7] = [
        Status::Invalid,
        Status::Closed,
        Status::Deadman,
        Status::Expired,
        Status::Exhausted,
        Status::Active,
        Status::Open,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Invalid => "invalid",
            Status::Closed => "closed",
            Status::Deadman => "deadman",
            Status::Expired => "expired",
            Status::Exhausted => "exhausted",
            Status::Active => "active",
            Status::Open => "open",
        }
    }

    pub fn parse(name: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// Terminal statuses never reopen (`invalid` included: it fails closed).
    pub fn is_terminal(self) -> bool {
        !matches!(self, Status::Active | Status::Open)
    }

    /// Whether a discussion in this status can ever be in one of `wanted`:
    /// a terminal status never changes, except into `invalid` when lines
    /// are appended.
    pub fn may_become(self, wanted: &[Status]) -> bool {
        wanted.contains(&self)
            || !self.is_terminal()
            || (wanted.contains(&Status::Invalid) && self != Status::Invalid)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptState {
    Reserved,
    Started,
    Completed,
    Failed,
    Deadman,
}

impl AttemptState {
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptState::Reserved => "reserved",
            AttemptState::Started => "started",
            AttemptState::Completed => "completed",
            AttemptState::Failed => "failed",
            AttemptState::Deadman => "deadman",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingKind {
    Malformed,
    Foreign,
    Fork,
    DuplicateOrdinal,
    ContradictoryReceipts,
    MalformedRoot,
    /// A record stamped more than the allowed skew ahead of the reader's
    /// time: left out until the clock catches up (`ledger.md`, "Clock skew").
    ClockSkew,
    /// A grant or denial of an approval request that was not pending, or
    /// a request that does not fit: it decides nothing.
    ContradictoryApproval,
}

impl FindingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Malformed => "malformed",
            FindingKind::Foreign => "foreign",
            FindingKind::Fork => "fork",
            FindingKind::DuplicateOrdinal => "duplicate_ordinal",
            FindingKind::ContradictoryReceipts => "contradictory_receipts",
            FindingKind::MalformedRoot => "malformed_root",
            FindingKind::ClockSkew => "clock_skew",
            FindingKind::ContradictoryApproval => "contradictory_approval",
        }
    }

    /// Whether the finding makes the discussion `invalid` (fail closed).
    pub fn invalidates(self) -> bool {
        !matches!(
            self,
            FindingKind::Malformed
                | FindingKind::Foreign
                | FindingKind::ClockSkew
                | FindingKind::ContradictoryApproval
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub kind: FindingKind,
    /// The message concerned (for a receipt: the message it names, if any).
    pub message_id: Option<String>,
    /// The ledger record that raised the finding.
    pub record_id: String,
    pub line: usize,
    pub detail: String,
}

/// What the root fixed for the whole discussion.
#[derive(Debug, Clone, PartialEq)]
pub struct Root {
    pub message_id: String,
    pub fleet_id: String,
    pub asker: String,
    pub peer: String,
    pub policy: Policy,
    pub created_at_ms: i64,
    /// `created_at_ms + timeout_ms`.
    pub deadline_ms: i64,
}

impl Root {
    /// The other participant of `agent`.
    pub fn other(&self, agent: &str) -> &str {
        if agent == self.asker {
            &self.peer
        } else {
            &self.asker
        }
    }
}

/// A valid message of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub turn: u32,
    pub message_id: String,
    pub from_agent_id: String,
    pub to_agent_id: String,
    pub kind: MessageType,
    pub reply_to_message_id: Option<String>,
    pub attempt_id: Option<String>,
    pub close: bool,
    pub body: Value,
    pub at_ms: i64,
    /// Who recorded it: `by`, on the writer's word, and the token a
    /// `serve` caller was verified by (`Record::token_id`). Empty and
    /// `None` in a lean derivation, which keeps no contents.
    pub by: String,
    pub token_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub attempt_id: String,
    pub agent_id: String,
    pub turn: u32,
    pub head_message_id: String,
    pub state: AttemptState,
    pub reserved_at_ms: i64,
    /// Clamped to the conversation deadline.
    pub deadline_ms: i64,
    pub started_at_ms: Option<i64>,
    pub ended_at_ms: Option<i64>,
    pub reply_message_id: Option<String>,
    pub reason: Option<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub pid: Option<u32>,
    pub detail: Option<String>,
    /// A `completed`, `failed` or `deadman` receipt has been recorded.
    pub terminal_receipt: bool,
    /// What the turn reported it cost, on its terminal receipt.
    pub usage: Option<Usage>,
    /// Its terminal receipt says its usage report could not be read.
    pub usage_unreadable: bool,
    /// The live session told of the turn (`wake --into`): `"tmux:%N"`.
    pub into: Option<String>,
    /// When the pointer was typed there.
    pub delivered_at_ms: Option<i64>,
    /// When the session's agent took the turn (`started` with `via:
    /// "pickup"`).
    pub picked_up_at_ms: Option<i64>,
}

/// Which budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    Turns,
    Tokens,
    Cost,
    /// Not a budget used up: a turn's usage report could not be read
    /// while a spend budget was set, and the budget fails closed.
    UsageUnreadable,
}

impl Budget {
    pub fn as_str(self) -> &'static str {
        match self {
            Budget::Turns => "turns",
            Budget::Tokens => "tokens",
            Budget::Cost => "cost",
            Budget::UsageUnreadable => "usage_unreadable",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Escalation {
    pub receipt_id: String,
    pub at_ms: i64,
    pub turns_used: u32,
    /// `turns`, `tokens` or `cost` (`turns` on receipts written before
    /// spend budgets).
    pub reason: String,
    /// Whether a person has heard of it (`escalations deliver`).
    pub delivery: Delivery,
}

/// An escalation's delivery, folded from its delivery receipts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Delivery {
    /// The latest claim that no delivery receipt has ended yet.
    pub claim: Option<Claim>,
    /// Failed deliveries so far.
    pub failures: u32,
    /// When, after the latest failure, it may be handed out again.
    pub retry_at_ms: Option<i64>,
    pub last_failure: Option<String>,
    /// When it was delivered, and by whom (the first success).
    pub delivered: Option<(i64, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub receipt_id: String,
    pub by: String,
    pub at_ms: i64,
    pub lease_until_ms: i64,
}

/// How far an escalation's delivery got, at some instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryState {
    Pending,
    /// A claim's lease runs.
    Claimed,
    /// Waiting out the backoff after a failure.
    Retrying,
    Delivered,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Claimed => "claimed",
            DeliveryState::Retrying => "retrying",
            DeliveryState::Delivered => "delivered",
        }
    }
}

impl Delivery {
    /// Its state at `now_ms`.
    pub fn state(&self, now_ms: i64) -> DeliveryState {
        if self.delivered.is_some() {
            DeliveryState::Delivered
        } else if self
            .claim
            .as_ref()
            .is_some_and(|c| now_ms < c.lease_until_ms)
        {
            DeliveryState::Claimed
        } else if self.retry_at_ms.is_some_and(|r| now_ms < r) {
            DeliveryState::Retrying
        } else {
            DeliveryState::Pending
        }
    }

    /// When a deliverer may next claim it, seen at `now_ms`: now when it
    /// is pending, else when its claim's lease or its backoff runs out.
    pub fn next_attempt_ms(&self, now_ms: i64) -> i64 {
        match self.state(now_ms) {
            DeliveryState::Claimed => self.claim.as_ref().map_or(now_ms, |c| c.lease_until_ms),
            DeliveryState::Retrying => self.retry_at_ms.unwrap_or(now_ms),
            DeliveryState::Pending | DeliveryState::Delivered => now_ms,
        }
    }

    /// Whether a deliverer may claim it at `now_ms`.
    pub fn claimable(&self, now_ms: i64) -> bool {
        self.state(now_ms) == DeliveryState::Pending
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Discussion {
    pub id: String,
    /// `None` when the root is missing or unusable (the status is `invalid`).
    pub root: Option<Root>,
    pub status: Status,
    /// The frozen terminal state and when it was reached (not for `invalid`).
    pub terminal: Option<(Status, i64)>,
    pub turns_used: u32,
    pub transcript: Vec<Entry>,
    pub attempts: Vec<Attempt>,
    /// Accepted receipts, in ledger order.
    pub receipts: Vec<Record>,
    pub escalation: Option<Escalation>,
    pub findings: Vec<Finding>,
    pub updated_at_ms: i64,
    /// The sum of the usage its attempts reported.
    pub spend: Spend,
    /// A turn under a spend budget ended with a usage report that could
    /// not be read: the budget failed closed.
    pub usage_unreadable: bool,
    /// Approval requests of its gates, in ledger order.
    pub approvals: Vec<Approval>,
}

/// One approval request, and its decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Approval {
    pub approval_id: String,
    pub agent_id: String,
    pub head_message_id: String,
    /// The turn the wake would charge.
    pub turn: u32,
    /// The gate's rule and the spend so far, as recorded.
    pub rule: serde_json::Value,
    pub spend: serde_json::Value,
    pub requested_at_ms: i64,
    pub requested_by: String,
    pub requested_token_id: Option<String>,
    pub expires_ms: i64,
    pub decision: Option<Decision>,
    /// The reservation a grant let through.
    pub used_by: Option<String>,
    /// How far handing the request to a person got (`escalations deliver`).
    pub delivery: Delivery,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub granted: bool,
    pub at_ms: i64,
    pub by: String,
    pub token_id: Option<String>,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalState {
    Pending,
    Granted,
    Denied,
    /// Undecided at `expires_ms`: read as denied (fail closed).
    Expired,
}

impl ApprovalState {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalState::Pending => "pending",
            ApprovalState::Granted => "granted",
            ApprovalState::Denied => "denied",
            ApprovalState::Expired => "expired",
        }
    }
}

impl Approval {
    pub fn state(&self, now_ms: i64) -> ApprovalState {
        match &self.decision {
            Some(d) if d.granted => ApprovalState::Granted,
            Some(_) => ApprovalState::Denied,
            None if now_ms >= self.expires_ms => ApprovalState::Expired,
            None => ApprovalState::Pending,
        }
    }

    /// Undecided and not yet expired at `now_ms`.
    pub fn pending_at(&self, now_ms: i64) -> bool {
        self.state(now_ms) == ApprovalState::Pending
    }

    /// A grant no reservation has used yet.
    pub fn grant_unused(&self) -> bool {
        self.decision.as_ref().is_some_and(|d| d.granted) && self.used_by.is_none()
    }
}

impl Discussion {
    /// What the kill-switches that may halt it look at: its fleet, its
    /// asker and peer, and its id.
    pub fn covered(&self) -> crate::global::Covered<'_> {
        let root = self.root.as_ref();
        crate::global::Covered {
            fleet: root.map(|r| r.fleet_id.as_str()),
            agents: [
                root.map(|r| r.asker.as_str()),
                root.map(|r| r.peer.as_str()),
            ],
            discussion: Some(&self.id),
        }
    }

    /// What an agent reads of it (`serve`'s agent tokens, `mcp --agent`):
    /// without the tail of a failed delivery command's stderr, which is
    /// for operators (a webhook's error may carry its URL and secret).
    pub fn hide_operator_details(&mut self) {
        if let Some(escalation) = &mut self.escalation {
            escalation.delivery.last_failure = None;
        }
    }

    /// The latest approval request on the current head, if any: the one
    /// `show` tells of, and the one a wake of that head is decided by.
    pub fn approval(&self) -> Option<&Approval> {
        let head = self.head()?;
        self.approvals
            .iter()
            .rev()
            .find(|a| a.head_message_id == head.message_id)
    }

    /// The approval request that waits for a person at `now_ms`.
    pub fn awaiting_approval(&self, now_ms: i64) -> Option<&Approval> {
        self.approval()
            .filter(|a| a.pending_at(now_ms) && !self.status.is_terminal())
    }

    /// The delivery of its escalation or approval request `receipt_id`,
    /// and whether that is still to be handed out at `now_ms` (a request
    /// only while it waits for a person: one decided first is not).
    pub fn handout(&self, receipt_id: &str, now_ms: i64) -> Option<(&Delivery, bool)> {
        if let Some(e) = self
            .escalation
            .as_ref()
            .filter(|e| e.receipt_id == receipt_id)
        {
            return Some((&e.delivery, true));
        }
        let approval = self
            .approvals
            .iter()
            .find(|a| a.approval_id == receipt_id)?;
        let waiting = self
            .awaiting_approval(now_ms)
            .is_some_and(|a| a.approval_id == receipt_id);
        Some((&approval.delivery, waiting))
    }

    /// Whether `verify` reports it: invalid, or with a decision of an
    /// approval request that was not pending.
    pub fn verify_reports(&self) -> bool {
        self.status == Status::Invalid
            || self
                .findings
                .iter()
                .any(|f| f.kind == FindingKind::ContradictoryApproval)
    }

    /// The newest valid message.
    pub fn head(&self) -> Option<&Entry> {
        self.transcript.last()
    }

    /// The live attempt (there is at most one).
    pub fn live_attempt(&self) -> Option<&Attempt> {
        if self.status == Status::Active {
            self.attempts
                .iter()
                .find(|a| matches!(a.state, AttemptState::Reserved | AttemptState::Started))
        } else {
            None
        }
    }

    pub fn attempt(&self, attempt_id: &str) -> Option<&Attempt> {
        self.attempts.iter().find(|a| a.attempt_id == attempt_id)
    }

    pub fn max_turns(&self) -> u32 {
        self.root.as_ref().map_or(0, |r| r.policy.max_turns)
    }

    pub fn turns_remaining(&self) -> u32 {
        self.max_turns().saturating_sub(self.turns_used)
    }

    /// The first budget that is used up, in the order turns, tokens,
    /// cost. A budget is reached when the spend is equal to it or more.
    pub fn budget_reached(&self) -> Option<Budget> {
        let policy = self.root.as_ref()?.policy;
        if self.turns_used >= policy.max_turns {
            Some(Budget::Turns)
        } else {
            self.spend_reached(&policy)
                .or(self.usage_unreadable.then_some(Budget::UsageUnreadable))
        }
    }

    /// The spend budget that is used up, tokens before cost.
    pub fn spend_reached(&self, policy: &Policy) -> Option<Budget> {
        if policy
            .max_tokens
            .is_some_and(|max| self.spend.tokens() >= max)
        {
            Some(Budget::Tokens)
        } else if policy
            .max_cost_usd
            .is_some_and(|max| self.spend.cost_usd >= max)
        {
            Some(Budget::Cost)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Status;

    #[test]
    fn a_terminal_status_may_become_only_itself_or_invalid() {
        for status in Status::ALL {
            assert!(status.may_become(&[status]));
            let others: Vec<Status> = Status::ALL
                .into_iter()
                .filter(|s| *s != status && *s != Status::Invalid)
                .collect();
            assert_eq!(
                status.may_become(&others),
                !status.is_terminal(),
                "{status:?}"
            );
            assert!(status.may_become(&[Status::Invalid]));
        }
        assert!(!Status::Invalid.may_become(&[Status::Closed, Status::Open]));
    }
}
