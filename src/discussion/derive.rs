//! Records of one discussion + now → its state (`ledger.md`, "Deriving a
//! discussion"). Pure: no I/O, no clock.
//!
//! The fold replays records in ledger order at their `at_ms` (a record whose
//! `at_ms` is below its predecessor's is taken at the predecessor's time),
//! with two kinds of virtual events between them: the deadline of the live
//! attempt and the conversation deadline. A virtual event at time `d` comes
//! before any record at `d` or later, because "live" means `now < deadline`.
//! `now` below the last record's time is taken as that time: what the
//! ledger says has happened has happened. A record stamped more than the
//! allowed skew ahead of `now` has not happened yet for this reader: it is
//! left out with a `clock_skew` finding, so one far-future stamp cannot
//! expire a discussion or freeze its time.

use super::envelope::{Envelope, MessageType, Policy};
use super::state::*;
use crate::ledger::hash::{IdHashMap, IdHashSet};
use crate::record::{Body, Record};
use crate::record::{Message, Receipt, ReceiptKind};
use crate::spend::{Spend, Usage};

mod after_each;
mod approvals;
mod escalation;
mod live;
pub use after_each::StatusAfterEach;

/// Derives the discussion `id` from its records (in ledger order). `None`
/// when no record names it.
pub fn derive(id: &str, all: &[&Record], now_ms: i64) -> Option<Discussion> {
    derive_keeping(id, all, now_ms, true)
}

/// The status `derive` gives (`verify` looks only for the invalid
/// discussions among all of them), by `derive_lean`.
pub fn derive_status(id: &str, all: &[&Record], now_ms: i64) -> Option<Status> {
    derive_lean(id, all, now_ms).map(|d| d.status)
}

/// `derive` without keeping the messages' bodies (each `null`) or copies
/// of the receipts on the way: the same status, root, transcript entries,
/// attempts, findings and spend, all a row shows (`list`), for less.
pub fn derive_lean(id: &str, all: &[&Record], now_ms: i64) -> Option<Discussion> {
    derive_keeping(id, all, now_ms, false)
}

/// `derive`, keeping the contents or not (`Fold::contents`).
fn derive_keeping(id: &str, all: &[&Record], now_ms: i64, contents: bool) -> Option<Discussion> {
    let limit = now_ms.saturating_add(crate::clock::MAX_SKEW_MS);
    let (records, ahead): (Vec<&Record>, Vec<&Record>) =
        all.iter().copied().partition(|r| r.at_ms <= limit);
    let Some(first) = records.first() else {
        // Only records from the future: a discussion that has not begun
        // yet for this reader.
        return None;
    };
    let mut fold = Fold::new(id, first.at_ms, contents);
    for record in &ahead {
        fold.finding(
            FindingKind::ClockSkew,
            record,
            None,
            format!(
                "stamped {}, more than {} s ahead of {}: left out until then",
                crate::clock::format_ms(record.at_ms),
                crate::clock::MAX_SKEW_MS / 1000,
                crate::clock::format_ms(now_ms)
            ),
        );
    }
    let records = &records[..];
    let envelopes: Vec<Option<Result<Envelope, String>>> = records
        .iter()
        .map(|r| envelope_of(r, id, contents))
        .collect();
    fold.choose_root(records, &envelopes);

    // Without a root there is nothing to fold against: the one
    // malformed_root finding says it all.
    let clock = if fold.root_record.is_some() {
        fold.steps(records, &envelopes)
    } else {
        first.at_ms
    };
    fold.d.updated_at_ms = records.iter().map(|r| r.at_ms).fold(clock, i64::max);
    fold.advance(now_ms.max(clock));
    Some(fold.finish())
}

/// A message's envelope; its body only when the fold keeps `contents`.
fn envelope_of(record: &Record, id: &str, contents: bool) -> Option<Result<Envelope, String>> {
    match &record.body {
        Body::Message(m) if contents => Some(Envelope::parse(&m.payload, id)),
        Body::Message(m) => Some(Envelope::parse_without_body(&m.payload, id)),
        _ => None,
    }
}

fn is_well_formed_ask(envelope: Option<&Result<Envelope, String>>) -> bool {
    matches!(envelope, Some(Ok(env)) if env.kind == MessageType::Ask)
}

/// What of the root a step checks against, copied (not the root's
/// strings, cloned at every step).
#[derive(Clone, Copy)]
struct Limits {
    policy: Policy,
    deadline_ms: i64,
}

impl Limits {
    fn of(root: &Root) -> Limits {
        Limits {
            policy: root.policy,
            deadline_ms: root.deadline_ms,
        }
    }
}

struct Fold {
    d: Discussion,
    root_record: Option<String>,
    root_ready: bool,
    /// Messages that a valid message answers. (Hashed by `hash64`, not
    /// SipHash: a fold per discussion, a million records a pass.)
    answered: IdHashSet<String>,
    /// Turns taken by valid messages or reservations.
    claimed_turns: IdHashSet<u32>,
    attempt_index: IdHashMap<String, usize>,
    live: Option<usize>,
    /// Whether the discussion keeps what only its readers need: the
    /// messages' bodies and the receipts themselves. A fold for statuses
    /// alone (`StatusAfterEach`) keeps neither, and copies neither.
    contents: bool,
}

impl Fold {
    fn new(id: &str, at_ms: i64, contents: bool) -> Fold {
        Fold {
            d: Discussion {
                id: id.to_owned(),
                root: None,
                status: Status::Open,
                terminal: None,
                turns_used: 0,
                transcript: Vec::new(),
                attempts: Vec::new(),
                receipts: Vec::new(),
                escalation: None,
                findings: Vec::new(),
                updated_at_ms: at_ms,
                spend: Spend::default(),
                usage_unreadable: false,
                approvals: Vec::new(),
            },
            root_record: None,
            root_ready: false,
            answered: IdHashSet::default(),
            claimed_turns: IdHashSet::default(),
            attempt_index: IdHashMap::default(),
            live: None,
            contents,
        }
    }

    /// What the fold keeps of a message's body.
    fn body(&self, envelope: &Envelope) -> serde_json::Value {
        if self.contents {
            envelope.body.clone()
        } else {
            serde_json::Value::Null
        }
    }

    /// Who recorded a message (`by`, and the token that vouched for it):
    /// only where the contents are kept, like its body (a lean derivation
    /// copies none of them).
    fn author(&self, record: &Record) -> (String, Option<String>) {
        if self.contents {
            (record.by.clone(), record.token_id.clone())
        } else {
            (String::new(), None)
        }
    }

    /// Keeps a receipt the discussion shows.
    fn keep_receipt(&mut self, record: &Record) {
        if self.contents {
            self.d.receipts.push(record.clone());
        }
    }

    fn finding(
        &mut self,
        kind: FindingKind,
        record: &Record,
        message_id: Option<&str>,
        detail: impl Into<String>,
    ) {
        self.d.findings.push(Finding {
            kind,
            message_id: message_id.map(str::to_owned),
            record_id: record.id.clone(),
            line: record.line,
            detail: detail.into(),
        });
    }

    /// Exactly one well-formed `ask` is the root; any other outcome is a
    /// `malformed_root` finding. A root with a usable policy is still folded
    /// (for display) even when it is flagged.
    fn choose_root(&mut self, records: &[&Record], envelopes: &[Option<Result<Envelope, String>>]) {
        let mut roots = records.iter().zip(envelopes).filter_map(|(r, e)| match e {
            Some(Ok(env)) if env.kind == MessageType::Ask => Some((*r, env)),
            _ => None,
        });
        let Some((record, envelope)) = roots.next() else {
            self.finding(
                FindingKind::MalformedRoot,
                records[0],
                None,
                "no well-formed root message (turn 1, type ask)",
            );
            return;
        };
        for (extra, _) in roots {
            self.finding(
                FindingKind::MalformedRoot,
                extra,
                Some(&extra.id),
                format!("a second root; the first is {}", record.id),
            );
        }
        let Body::Message(message) = &record.body else {
            return;
        };
        if let Some(problem) = envelope.root_problem() {
            self.finding(
                FindingKind::MalformedRoot,
                record,
                Some(&record.id),
                problem,
            );
        }
        if message.from_agent_id == message.to_agent_id {
            self.finding(
                FindingKind::MalformedRoot,
                record,
                Some(&record.id),
                "root is addressed to its own sender",
            );
        }
        self.root_record = Some(record.id.clone());
    }

    /// Every record in ledger order, each at the latest time so far (a
    /// record stamped before its predecessor is taken at that one's time);
    /// that time after the last.
    fn steps(
        &mut self,
        records: &[&Record],
        envelopes: &[Option<Result<Envelope, String>>],
    ) -> i64 {
        let mut clock = records.first().map_or(i64::MIN, |r| r.at_ms);
        for (record, envelope) in records.iter().zip(envelopes) {
            clock = clock.max(record.at_ms);
            self.step(record, envelope.as_ref(), clock);
        }
        clock
    }

    /// One record at time `t`, after the deadlines before it.
    fn step(&mut self, record: &Record, envelope: Option<&Result<Envelope, String>>, t: i64) {
        self.advance(t);
        match (&record.body, envelope) {
            (Body::Message(message), Some(envelope)) => {
                self.on_message(record, message, envelope, t)
            }
            (Body::Receipt(receipt), _) => self.on_receipt(record, receipt, t),
            _ => {}
        }
    }

    /// Applies virtual events (deadlines) up to and including time `t`.
    fn advance(&mut self, t: i64) {
        let Some(root) = &self.d.root else { return };
        let conversation_deadline = root.deadline_ms;
        while self.d.terminal.is_none() {
            let attempt_deadline = self.live.map(|i| self.d.attempts[i].deadline_ms);
            let next =
                attempt_deadline.map_or(conversation_deadline, |d| d.min(conversation_deadline));
            if next > t {
                return;
            }
            let mut reached = Vec::new();
            if attempt_deadline == Some(next) {
                let attempt = &mut self.d.attempts[self.live.take().expect("a live attempt")];
                attempt.state = AttemptState::Deadman;
                attempt.ended_at_ms = Some(next);
                attempt.reason = Some("deadline".into());
                reached.push(Status::Deadman);
            }
            if next == conversation_deadline {
                reached.push(Status::Expired);
            }
            for status in reached {
                self.reach(status, next);
            }
        }
    }

    /// The first terminal state is frozen; one reached at the same instant
    /// replaces it only when it has higher precedence.
    fn reach(&mut self, status: Status, at_ms: i64) {
        match self.d.terminal {
            None => self.d.terminal = Some((status, at_ms)),
            Some((current, when)) if when == at_ms && status < current => {
                self.d.terminal = Some((status, at_ms))
            }
            Some(_) => {}
        }
    }

    fn on_message(
        &mut self,
        record: &Record,
        message: &Message,
        envelope: &Result<Envelope, String>,
        t: i64,
    ) {
        let envelope = match envelope {
            Ok(envelope) => envelope,
            Err(problem) => {
                return self.finding(
                    FindingKind::Malformed,
                    record,
                    Some(&record.id),
                    problem.clone(),
                );
            }
        };
        if envelope.kind == MessageType::Ask {
            if self.root_record.as_deref() == Some(record.id.as_str()) && !self.root_ready {
                self.start(record, message, envelope, t);
            }
            return; // a second root was flagged by choose_root
        }
        let Some(root) = &self.d.root else {
            return self.finding(
                FindingKind::ContradictoryReceipts,
                record,
                Some(&record.id),
                "a reply before the root",
            );
        };
        let limits = Limits::of(root);
        let participants_ok = (message.from_agent_id == root.asker
            && message.to_agent_id == root.peer)
            || (message.from_agent_id == root.peer && message.to_agent_id == root.asker);
        if message.fleet_id != root.fleet_id || !participants_ok {
            let detail = format!(
                "{} -> {} in fleet {} is not between the participants {} and {} of fleet {}",
                message.from_agent_id,
                message.to_agent_id,
                message.fleet_id,
                root.asker,
                root.peer,
                root.fleet_id
            );
            return self.finding(FindingKind::Foreign, record, Some(&record.id), detail);
        }
        let reply_to = envelope.reply_to_message_id.clone().unwrap_or_default();
        let attempt_id = envelope.attempt_id.clone().unwrap_or_default();
        if self.answered.contains(&reply_to) {
            return self.finding(
                FindingKind::Fork,
                record,
                Some(&record.id),
                format!("a second answer to {reply_to}"),
            );
        }
        if self.claimed_message_turn(envelope.turn) {
            return self.finding(
                FindingKind::DuplicateOrdinal,
                record,
                Some(&record.id),
                format!("turn {} is already taken by a message", envelope.turn),
            );
        }
        let head = self.d.head().map(|h| h.message_id.clone());
        let matching = self.live.filter(|&i| {
            let a = &self.d.attempts[i];
            a.attempt_id == attempt_id
                && a.agent_id == message.from_agent_id
                && a.head_message_id == reply_to
                && a.turn == envelope.turn
                && head.as_deref() == Some(reply_to.as_str())
        });
        let Some(index) = matching else {
            return self.finding(
                FindingKind::ContradictoryReceipts,
                record,
                Some(&record.id),
                format!(
                    "reply of {} to {reply_to} at turn {} has no matching live attempt {attempt_id}",
                    message.from_agent_id, envelope.turn
                ),
            );
        };
        self.answered.insert(reply_to.clone());
        let (by, token_id) = self.author(record);
        self.d.transcript.push(Entry {
            turn: envelope.turn,
            message_id: record.id.clone(),
            from_agent_id: message.from_agent_id.clone(),
            to_agent_id: message.to_agent_id.clone(),
            kind: envelope.kind,
            reply_to_message_id: Some(reply_to),
            attempt_id: Some(attempt_id),
            close: envelope.close,
            body: self.body(envelope),
            at_ms: t,
            by,
            token_id,
        });
        let attempt = &mut self.d.attempts[index];
        attempt.state = AttemptState::Completed;
        attempt.ended_at_ms = Some(t);
        attempt.reply_message_id = Some(record.id.clone());
        self.live = None;
        if envelope.close {
            self.reach(Status::Closed, t);
        } else if self.d.turns_used >= limits.policy.max_turns {
            self.reach(Status::Exhausted, t);
        }
    }

    fn claimed_message_turn(&self, turn: u32) -> bool {
        self.d.transcript.iter().any(|e| e.turn == turn)
    }

    fn start(&mut self, record: &Record, message: &Message, envelope: &Envelope, t: i64) {
        self.root_ready = true;
        let Some(policy) = envelope.policy else {
            return;
        };
        self.d.root = Some(Root {
            message_id: record.id.clone(),
            fleet_id: message.fleet_id.clone(),
            asker: message.from_agent_id.clone(),
            peer: message.to_agent_id.clone(),
            policy,
            created_at_ms: t,
            deadline_ms: t.saturating_add(policy.timeout_ms),
        });
        self.d.turns_used = 1;
        self.claimed_turns.insert(1);
        let (by, token_id) = self.author(record);
        self.d.transcript.push(Entry {
            turn: 1,
            message_id: record.id.clone(),
            from_agent_id: message.from_agent_id.clone(),
            to_agent_id: message.to_agent_id.clone(),
            kind: MessageType::Ask,
            reply_to_message_id: None,
            attempt_id: None,
            close: false,
            body: self.body(envelope),
            at_ms: t,
            by,
            token_id,
        });
    }

    fn on_receipt(&mut self, record: &Record, receipt: &Receipt, t: i64) {
        let Some(limits) = self.d.root.as_ref().map(Limits::of) else {
            return self.contradiction(record, receipt, "a receipt before the root".into());
        };
        let outcome = match receipt.kind() {
            Some(ReceiptKind::Reserved) => self.on_reserved(receipt, limits, t),
            Some(
                kind @ (ReceiptKind::Started
                | ReceiptKind::Completed
                | ReceiptKind::Failed
                | ReceiptKind::Deadman),
            ) => self.on_attempt_receipt(kind, receipt, limits, t),
            Some(ReceiptKind::Escalated) => self.on_escalated(record, receipt),
            Some(
                kind @ (ReceiptKind::EscalationClaimed
                | ReceiptKind::EscalationDelivered
                | ReceiptKind::EscalationDeliveryFailed),
            ) => {
                self.on_delivery(kind, record, receipt, t);
                return;
            }
            Some(ReceiptKind::Delivered) => {
                self.on_pointer_delivered(record, receipt, t);
                return;
            }
            Some(
                kind @ (ReceiptKind::ApprovalRequested
                | ReceiptKind::ApprovalGranted
                | ReceiptKind::ApprovalDenied),
            ) => {
                self.on_approval(kind, record, receipt, t);
                return;
            }
            None => Err((
                FindingKind::ContradictoryReceipts,
                format!("unknown receipt {:?}", receipt.receipt),
            )),
        };
        match outcome {
            Ok(()) => self.keep_receipt(record),
            Err((kind, detail)) => {
                self.finding(kind, record, receipt.message_id.as_deref(), detail)
            }
        }
    }

    fn contradiction(&mut self, record: &Record, receipt: &Receipt, detail: String) {
        self.finding(
            FindingKind::ContradictoryReceipts,
            record,
            receipt.message_id.as_deref(),
            detail,
        );
    }

    fn on_reserved(
        &mut self,
        r: &Receipt,
        limits: Limits,
        t: i64,
    ) -> Result<(), (FindingKind, String)> {
        let contradiction = |detail: String| Err((FindingKind::ContradictoryReceipts, detail));
        let (Some(attempt_id), Some(agent_id), Some(turn), Some(head_id), Some(deadline_ms)) = (
            &r.attempt_id,
            &r.agent_id,
            r.turn,
            &r.head_message_id,
            r.deadline_ms,
        ) else {
            return contradiction(
                "a reservation without attempt_id, agent_id, turn, head_message_id and deadline_ms"
                    .into(),
            );
        };
        if self.attempt_index.contains_key(attempt_id) {
            return contradiction(format!("attempt {attempt_id} is reserved twice"));
        }
        if self.claimed_turns.contains(&turn) {
            return Err((
                FindingKind::DuplicateOrdinal,
                format!("turn {turn} is already claimed"),
            ));
        }
        if let Some((status, _)) = self.d.terminal {
            return contradiction(format!("a reservation on a {} discussion", status.as_str()));
        }
        if let Some(live) = self.live {
            return contradiction(format!(
                "a reservation while attempt {} is live",
                self.d.attempts[live].attempt_id
            ));
        }
        let head = self.d.head().expect("a started discussion has a head");
        if &head.message_id != head_id {
            return contradiction(format!(
                "the reservation names {head_id}, but the head is {}",
                head.message_id
            ));
        }
        if &head.to_agent_id != agent_id {
            return contradiction(format!(
                "{agent_id} is not the recipient of the head ({})",
                head.to_agent_id
            ));
        }
        if turn != self.d.turns_used + 1 || turn > limits.policy.max_turns {
            return contradiction(format!(
                "turn {turn} does not follow {} turns used of {}",
                self.d.turns_used, limits.policy.max_turns
            ));
        }
        let deadline = deadline_ms
            .min(t.saturating_add(limits.policy.turn_timeout_ms))
            .min(limits.deadline_ms);
        self.claimed_turns.insert(turn);
        self.d.turns_used += 1;
        self.attempt_index
            .insert(attempt_id.clone(), self.d.attempts.len());
        self.live = Some(self.d.attempts.len());
        self.d.attempts.push(Attempt {
            attempt_id: attempt_id.clone(),
            agent_id: agent_id.clone(),
            turn,
            head_message_id: head_id.clone(),
            state: AttemptState::Reserved,
            reserved_at_ms: t,
            deadline_ms: deadline,
            started_at_ms: None,
            ended_at_ms: None,
            reply_message_id: None,
            reason: None,
            exit_code: None,
            signal: None,
            pid: None,
            detail: None,
            terminal_receipt: false,
            usage: None,
            usage_unreadable: false,
            into: r.into.clone(),
            delivered_at_ms: None,
            picked_up_at_ms: None,
        });
        if let Some(approval_id) = &r.approval_id {
            self.on_reserved_with(approval_id, attempt_id);
        }
        Ok(())
    }

    /// `started`, `completed`, `failed` and `deadman` receipts of an attempt.
    ///
    /// An attempt that lapsed at its deadline is already `deadman`; a later
    /// `failed` or `deadman` receipt for it records how the run ended (the
    /// supervisor's clock and ours may differ by a little) without changing
    /// its state: the deadline is authoritative.
    fn on_attempt_receipt(
        &mut self,
        kind: ReceiptKind,
        r: &Receipt,
        limits: Limits,
        t: i64,
    ) -> Result<(), (FindingKind, String)> {
        let contradiction = |detail: String| Err((FindingKind::ContradictoryReceipts, detail));
        let Some(attempt_id) = &r.attempt_id else {
            return contradiction(format!("{} without attempt_id", r.receipt));
        };
        let Some(&index) = self.attempt_index.get(attempt_id) else {
            return contradiction(format!("{} for unknown attempt {attempt_id}", r.receipt));
        };
        let live = self.live == Some(index);
        let attempt = &mut self.d.attempts[index];
        if r.agent_id.as_ref().is_some_and(|a| a != &attempt.agent_id) {
            return contradiction(format!(
                "{} names {:?}, but {attempt_id} belongs to {}",
                r.receipt, r.agent_id, attempt.agent_id
            ));
        }
        if attempt.terminal_receipt {
            return contradiction(format!("{} after {attempt_id} already ended", r.receipt));
        }
        // Deadman without a receipt: it reached its deadline in the fold.
        let lapsed = attempt.state == AttemptState::Deadman && !attempt.terminal_receipt;
        let usage = match (&r.usage, kind) {
            (None, _) | (_, ReceiptKind::Started) => None,
            (Some(value), _) => match Usage::from_json(value.as_ref()) {
                Ok(usage) => Some(usage),
                Err(e) => {
                    return contradiction(format!(
                        "{} of {attempt_id} reports a usage that is not one: {}",
                        r.receipt, e.message
                    ));
                }
            },
        };
        let unreadable = kind != ReceiptKind::Started && r.usage_unreadable == Some(true);
        match kind {
            ReceiptKind::Started => {
                if attempt.started_at_ms.is_some() || !(live || lapsed) {
                    return contradiction(format!(
                        "started for {attempt_id}, which is {}",
                        attempt.state.as_str()
                    ));
                }
                attempt.started_at_ms = Some(t);
                attempt.pid = r.pid;
                if r.via.as_deref() == Some("pickup") {
                    attempt.picked_up_at_ms = Some(t);
                }
                if live {
                    attempt.state = AttemptState::Started;
                }
            }
            ReceiptKind::Completed => {
                if attempt.state != AttemptState::Completed
                    || attempt.reply_message_id != r.message_id
                {
                    return contradiction(format!(
                        "completed for {attempt_id} does not follow its reply"
                    ));
                }
                attempt.terminal_receipt = true;
                self.spent(usage, unreadable, limits, t, index);
            }
            _ => {
                let failed = r.kind() == Some(ReceiptKind::Failed);
                if !(live || lapsed) {
                    return contradiction(format!(
                        "{} for {attempt_id}, which is {}",
                        r.receipt,
                        attempt.state.as_str()
                    ));
                }
                attempt.terminal_receipt = true;
                attempt.exit_code = r.exit_code;
                attempt.signal = r.signal;
                attempt.detail = r.detail.clone();
                if lapsed {
                    if !failed {
                        attempt.reason = r.reason.clone().or(attempt.reason.take());
                    }
                    self.spent(usage, unreadable, limits, t, index);
                    return Ok(());
                }
                attempt.state = if failed {
                    AttemptState::Failed
                } else {
                    AttemptState::Deadman
                };
                attempt.ended_at_ms = Some(t);
                attempt.reason = r
                    .reason
                    .clone()
                    .or_else(|| (!failed).then(|| "deadline".to_owned()));
                self.live = None;
                if !failed {
                    self.reach(Status::Deadman, t);
                } else if self.d.turns_used >= limits.policy.max_turns {
                    self.reach(Status::Exhausted, t);
                }
                self.spent(usage, unreadable, limits, t, index);
            }
        }
        Ok(())
    }

    /// An attempt's terminal receipt reported what it cost: the spend
    /// grows, and a spend budget it reaches exhausts the discussion (a
    /// terminal state reached first, `closed` by that same reply
    /// included, stays).
    ///
    /// A report that could not be read (`usage_unreadable`) under a token
    /// or cost budget exhausts it too: the budget fails closed.
    fn spent(
        &mut self,
        usage: Option<Usage>,
        unreadable: bool,
        limits: Limits,
        t: i64,
        index: usize,
    ) {
        let budgeted = limits.policy.max_tokens.is_some() || limits.policy.max_cost_usd.is_some();
        if unreadable {
            self.d.attempts[index].usage_unreadable = true;
            if budgeted {
                self.d.usage_unreadable = true;
                self.reach(Status::Exhausted, t);
            }
        }
        let Some(usage) = usage else { return };
        self.d.attempts[index].usage = Some(usage);
        self.d.spend.add(&usage);
        if self.d.spend_reached(&limits.policy).is_some() {
            self.reach(Status::Exhausted, t);
        }
    }

    fn status(&self) -> Status {
        if self.d.root.is_none() || self.d.findings.iter().any(|f| f.kind.invalidates()) {
            Status::Invalid
        } else if let Some((status, _)) = self.d.terminal {
            status
        } else if self.live.is_some() {
            Status::Active
        } else {
            Status::Open
        }
    }

    fn finish(mut self) -> Discussion {
        self.d.status = self.status();
        self.d
    }
}
