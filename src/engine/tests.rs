//! Tests of the engine's plans and the derivation they feed, through an
//! in-memory ledger (`Sim`): each operation planned, its records appended,
//! the discussion derived again. Property tests check that valid
//! operations never invalidate a discussion, terminals never change, and
//! the engine agrees with a reference model.

use crate::discussion::*;
use crate::engine::{AskRequest, AttemptEnd, EndReason, ReplyRequest, Stamp, WakeRequest};
use crate::engine::{plan_ask, plan_attempt_end, plan_reply, plan_started, plan_wake};
use crate::global::Global;
use crate::record::Record;
use crate::record::{Receipt, ReceiptKind};
use crate::spend::{Usage, Usd};
use proptest::prelude::*;

/// An in-memory ledger driven through the engine's plans.
struct Sim {
    records: Vec<Record>,
    now: i64,
    dsc: String,
    /// When set, the next operation's write is cut at this fraction of its
    /// bytes, as a crash would; its records never arrive.
    crash: Option<f64>,
    /// What the next reply or attempt end reports the turn cost.
    usage: Option<Usage>,
}

impl Sim {
    fn new(max_turns: i64, timeout_ms: i64, turn_timeout_ms: i64) -> Sim {
        Sim::with_budgets(max_turns, timeout_ms, turn_timeout_ms, None, None)
    }

    fn with_budgets(
        max_turns: i64,
        timeout_ms: i64,
        turn_timeout_ms: i64,
        max_tokens: Option<u64>,
        max_cost_nanos: Option<u64>,
    ) -> Sim {
        let max_tokens = max_tokens.map(serde_json::Value::from);
        let max_cost =
            max_cost_nanos.map(|n| serde_json::Value::from(Usd::from_nanos(n).to_string()));
        let request = AskRequest::new(
            "a",
            &["b".into()],
            "f",
            "{}",
            max_turns,
            timeout_ms,
            turn_timeout_ms,
            false,
        )
        .and_then(|r| r.with_budgets(max_tokens.as_ref(), max_cost.as_ref()))
        .unwrap();
        let mut sim = Sim {
            records: Vec::new(),
            now: 1_000_000,
            dsc: request.discussion_id.clone(),
            crash: None,
            usage: None,
        };
        sim.records.extend(crate::engine::plan_fleet(
            &Global::default(),
            crate::record::FleetOp::Add,
            "f",
            &["a".into(), "b".into()],
            &sim.stamp(),
        ));
        let global = Global::derive(&sim.records);
        let (new, _) = plan_ask(&global, &request, &sim.stamp()).unwrap();
        sim.push(new);
        sim
    }

    fn stamp(&self) -> Stamp {
        Stamp {
            at_ms: self.now,
            by: "sim".into(),
            token_id: None,
        }
    }

    fn push(&mut self, new: Vec<Record>) {
        if new.is_empty() {
            return; // nothing to write, like `Ledger::append`
        }
        if let Some(fraction) = self.crash.take() {
            self.crash_while_writing(&new, fraction);
            return;
        }
        for mut record in new {
            record.line = self.records.len() + 1;
            self.records.push(record);
        }
    }

    /// Writes the ledger with `new` cut short and replays it: the replay
    /// must hold exactly the records from before.
    fn crash_while_writing(&self, new: &[Record], fraction: f64) {
        let mut bytes: Vec<u8> = self
            .records
            .iter()
            .flat_map(|r| r.to_line().into_bytes())
            .collect();
        let before = bytes.len();
        let op = Record::operation_lines(new, &mut crate::record::chain::before_first_line());
        let cut = ((op.len() as f64 * fraction) as usize).min(op.len() - 1);
        bytes.extend_from_slice(&op.as_bytes()[..cut]);
        let replayed = crate::fuzzing::Snapshot::parse(&bytes);
        let ids = |records: &[Record]| records.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
        assert_eq!(
            ids(&replayed.records),
            ids(&self.records),
            "a cut at {cut} of {}",
            op.len()
        );
        assert_eq!(replayed.torn_tail, bytes.len() - before);
    }

    /// The clock jumps back; like the commands, the stamp never goes below
    /// the newest record that is not more than the allowed skew ahead.
    fn jump_back(&mut self, ms: i64) {
        let clock = self.now - ms;
        let limit = clock + crate::clock::MAX_SKEW_MS;
        let last = self
            .records
            .iter()
            .map(|r| r.at_ms)
            .filter(|&t| t <= limit)
            .max()
            .unwrap_or(0);
        self.now = clock.max(last);
    }

    /// A record from a host whose clock is `offset_ms` ahead: the
    /// kill-switch engaged, or a deadman receipt for this discussion's
    /// newest attempt. Returns whether it names this discussion.
    fn skewed(&mut self, offset_ms: i64, kill_switch: bool) -> bool {
        let stamp = Stamp {
            at_ms: self.now + offset_ms,
            by: "skewed-host".into(),
            token_id: None,
        };
        let body = if kill_switch {
            crate::record::Body::KillSwitch(crate::record::KillSwitch {
                engaged: true,
                reason: Some("from the future".into()),
                scope: None,
            })
        } else {
            let attempt_id = self
                .state()
                .attempts
                .last()
                .map_or("att_none".into(), |a| a.attempt_id.clone());
            crate::record::Body::Receipt(Box::new(Receipt {
                receipt: ReceiptKind::Deadman.name().into(),
                discussion_id: self.dsc.clone(),
                attempt_id: Some(attempt_id),
                reason: Some("deadline".into()),
                ..Receipt::default()
            }))
        };
        let mut record = stamp.record(crate::ids::RECEIPT, body);
        record.line = self.records.len() + 1;
        self.records.push(record);
        !kill_switch
    }

    /// A scoped kill-switch record (`which`: 0 the fleet, 1 the asker, 2
    /// the peer, 3 the discussion, 4 an agent of no part in it).
    fn switch(&mut self, which: u8, engaged: bool) {
        use crate::record::Scope;
        let scope = match which {
            0 => Scope::Fleet("f".into()),
            1 => Scope::Agent("a".into()),
            2 => Scope::Agent("b".into()),
            3 => Scope::Discussion(self.dsc.clone()),
            _ => Scope::Agent("z".into()),
        };
        let new = crate::engine::plan_kill_switch(
            engaged,
            engaged.then(|| "halt".to_owned()),
            Some(scope),
            &self.stamp(),
        );
        self.push(new);
    }

    /// What `escalations deliver` records first: the escalation of a
    /// discussion that ended by time, when it is due.
    fn record_due(&mut self) {
        let (new, _) =
            crate::engine::plan_due_escalation(&self.dsc, &self.mine(), &self.stamp()).unwrap();
        self.push(new);
    }

    /// The global state as the commands see it at the sim's time.
    fn global(&self) -> Global {
        Global::derive(&self.records).at(self.now).into_owned()
    }

    fn mine(&self) -> Vec<&Record> {
        self.records
            .iter()
            .filter(|r| r.discussion_id() == Some(self.dsc.as_str()))
            .collect()
    }

    fn state(&self) -> Discussion {
        derive(&self.dsc, &self.mine(), self.now).unwrap()
    }

    fn wake(&mut self) -> Option<String> {
        let state = self.state();
        let head = state.head()?.clone();
        let request = WakeRequest::new(&head.to_agent_id, &self.dsc, &head.message_id).ok()?;
        let global = self.global();
        let (new, woken) = plan_wake(&global, &self.mine(), &request, &self.stamp()).ok()?;
        self.push(new);
        match woken {
            crate::engine::Woken::Reserved(reserved) => Some(reserved.1.attempt_id),
            // No gate is set in these tests.
            crate::engine::Woken::ApprovalRequested(_) => None,
        }
    }

    fn live(&self) -> Option<Attempt> {
        self.state().live_attempt().cloned()
    }

    fn reply(&mut self, kind: &str, close: bool) -> bool {
        let Some(attempt) = self.live() else {
            return false;
        };
        let request = ReplyRequest::new(
            &attempt.agent_id,
            &self.dsc,
            &attempt.attempt_id,
            &attempt.head_message_id,
            kind,
            "{}",
            close,
        )
        .unwrap()
        .with_usage(self.usage.take());
        let global = self.global();
        match plan_reply(&global, &self.mine(), &request, &self.stamp()) {
            Ok((new, _)) => {
                self.push(new);
                true
            }
            Err(_) => false,
        }
    }

    fn end(&mut self, deadman: bool) {
        let Some(attempt) = self.state().attempts.last().cloned() else {
            return;
        };
        let end = AttemptEnd {
            usage_unreadable: false,
            reason: if deadman {
                EndReason::Deadline
            } else {
                EndReason::ExitedWithoutReply
            },
            exit_code: Some(1),
            signal: None,
            detail: None,
            usage: self.usage.take(),
        };
        if let Ok((new, _)) = plan_attempt_end(
            &self.dsc,
            &attempt.attempt_id,
            &end,
            &self.mine(),
            &self.stamp(),
        ) {
            self.push(new);
        }
    }

    fn start(&mut self) {
        let Some(attempt) = self.live() else { return };
        let (new, ()) = plan_started(
            &crate::global::Global::default(),
            &self.dsc,
            &attempt.attempt_id,
            42,
            &self.mine(),
            &self.stamp(),
        )
        .unwrap();
        self.push(new);
    }

    fn raw_receipt(&mut self, receipt: Receipt) {
        let record = self.stamp().record(
            crate::ids::RECEIPT,
            crate::record::Body::Receipt(Box::new(receipt)),
        );
        self.push(vec![record]);
    }
}

#[test]
fn live_until_the_deadline_millisecond_then_deadman() {
    let mut sim = Sim::new(4, 100_000, 5_000);
    sim.wake().unwrap();
    let deadline = sim.state().attempts[0].deadline_ms;
    assert_eq!(deadline, sim.now + 5_000);
    assert_eq!(
        derive(&sim.dsc, &sim.mine(), deadline - 1).unwrap().status,
        Status::Active
    );
    let at = derive(&sim.dsc, &sim.mine(), deadline).unwrap();
    assert_eq!(at.status, Status::Deadman);
    assert_eq!(at.terminal, Some((Status::Deadman, deadline)));
    assert_eq!(at.attempts[0].ended_at_ms, Some(deadline));
}

#[test]
fn expired_exactly_at_the_conversation_deadline() {
    let sim = Sim::new(4, 10_000, 5_000);
    let deadline = sim.state().root.unwrap().deadline_ms;
    assert_eq!(
        derive(&sim.dsc, &sim.mine(), deadline - 1).unwrap().status,
        Status::Open
    );
    assert_eq!(
        derive(&sim.dsc, &sim.mine(), deadline).unwrap().status,
        Status::Expired
    );
}

#[test]
fn deadman_beats_expired_at_the_same_instant() {
    let mut sim = Sim::new(4, 10_000, 10_000);
    sim.now += 3_000;
    sim.wake().unwrap();
    let state = sim.state();
    let deadline = state.root.as_ref().unwrap().deadline_ms;
    assert_eq!(
        state.attempts[0].deadline_ms, deadline,
        "clamped to the conversation deadline"
    );
    assert_eq!(
        derive(&sim.dsc, &sim.mine(), deadline).unwrap().terminal,
        Some((Status::Deadman, deadline))
    );
}

#[test]
fn a_late_failed_receipt_of_a_lapsed_attempt_is_recorded_as_deadman() {
    let mut sim = Sim::new(4, 100_000, 5_000);
    sim.wake().unwrap();
    sim.now += 6_000;
    sim.end(false);
    let state = sim.state();
    assert!(state.findings.is_empty(), "{:?}", state.findings);
    assert_eq!(state.status, Status::Deadman);
    assert_eq!(state.attempts[0].state, AttemptState::Deadman);
    let last = sim.records.last().unwrap();
    let crate::record::Body::Receipt(receipt) = &last.body else {
        panic!()
    };
    assert_eq!(
        receipt.receipt,
        ReceiptKind::Deadman.name(),
        "the plan records deadman past the deadline"
    );
}

#[test]
fn a_reply_after_the_deadline_is_contradictory() {
    let mut sim = Sim::new(4, 100_000, 5_000);
    let attempt = sim.wake().unwrap();
    let head = sim.state().head().unwrap().message_id.clone();
    sim.now += 5_000;
    // Forge what a careless tool might append: a reply past the deadline.
    let request = ReplyRequest::new("b", &sim.dsc, &attempt, &head, "result", "{}", true).unwrap();
    let envelope = request.envelope(2).unwrap();
    let message = sim.stamp().record(
        crate::ids::MESSAGE,
        crate::record::Body::Message(crate::record::Message {
            fleet_id: "f".into(),
            from_agent_id: "b".into(),
            to_agent_id: "a".into(),
            correlation_id: Some(sim.dsc.clone()),
            payload: envelope,
        }),
    );
    sim.push(vec![message]);
    let state = sim.state();
    assert_eq!(state.status, Status::Invalid);
    assert_eq!(state.findings[0].kind, FindingKind::ContradictoryReceipts);
}

#[test]
fn failing_the_last_turn_exhausts_and_escalates_once() {
    let mut sim = Sim::new(2, 100_000, 5_000);
    sim.wake().unwrap();
    sim.end(false);
    let state = sim.state();
    assert_eq!(state.status, Status::Exhausted);
    assert_eq!(state.escalation.as_ref().unwrap().turns_used, 2);
    // A second escalation is contradictory.
    let dsc = sim.dsc.clone();
    sim.raw_receipt(Receipt {
        receipt: ReceiptKind::Escalated.name().into(),
        discussion_id: dsc,
        ..Receipt::default()
    });
    let state = sim.state();
    assert_eq!(state.status, Status::Invalid);
    assert_eq!(state.findings[0].detail, "a second escalation");
}

#[test]
fn closing_on_the_last_turn_is_closed_not_exhausted() {
    let mut sim = Sim::new(2, 100_000, 5_000);
    sim.wake().unwrap();
    assert!(sim.reply("result", true));
    let state = sim.state();
    assert_eq!(state.status, Status::Closed);
    assert!(state.escalation.is_none());
}

#[test]
fn an_escalation_of_an_open_discussion_is_contradictory() {
    let mut sim = Sim::new(4, 100_000, 5_000);
    let dsc = sim.dsc.clone();
    sim.raw_receipt(Receipt {
        receipt: ReceiptKind::Escalated.name().into(),
        discussion_id: dsc,
        ..Receipt::default()
    });
    assert_eq!(sim.state().status, Status::Invalid);
}

#[test]
fn a_second_reservation_while_one_is_live_is_contradictory() {
    let mut sim = Sim::new(4, 100_000, 5_000);
    sim.wake().unwrap();
    let state = sim.state();
    let head = state.head().unwrap().message_id.clone();
    let dsc = sim.dsc.clone();
    sim.raw_receipt(Receipt {
        receipt: ReceiptKind::Reserved.name().into(),
        discussion_id: dsc,
        attempt_id: Some("att_second".into()),
        agent_id: Some("b".into()),
        turn: Some(3),
        head_message_id: Some(head),
        deadline_ms: Some(sim.now + 1_000),
        ..Receipt::default()
    });
    let state = sim.state();
    assert_eq!(state.status, Status::Invalid);
    assert!(
        state.findings[0].detail.contains("while attempt"),
        "{:?}",
        state.findings
    );
}

#[test]
fn a_failed_receipt_for_a_completed_attempt_is_contradictory() {
    let mut sim = Sim::new(4, 100_000, 5_000);
    let attempt = sim.wake().unwrap();
    assert!(sim.reply("question", false));
    let dsc = sim.dsc.clone();
    sim.raw_receipt(Receipt {
        receipt: ReceiptKind::Failed.name().into(),
        discussion_id: dsc,
        attempt_id: Some(attempt),
        reason: Some("late".into()),
        ..Receipt::default()
    });
    assert_eq!(sim.state().status, Status::Invalid);
}

#[test]
fn records_with_a_clock_that_went_back_are_taken_at_the_previous_time() {
    let mut sim = Sim::new(4, 100_000, 5_000);
    sim.wake().unwrap();
    let reserved_at = sim.now;
    // A reply stamped earlier than the reservation is folded at its time.
    sim.now -= 10_000;
    let mut records = sim.records.clone();
    let attempt = derive(&sim.dsc, &sim.mine(), reserved_at).unwrap().attempts[0].clone();
    let request = ReplyRequest::new(
        "b",
        &sim.dsc,
        &attempt.attempt_id,
        &attempt.head_message_id,
        "result",
        "{}",
        true,
    )
    .unwrap();
    let global = Global::derive(&records);
    let mine: Vec<&Record> = records
        .iter()
        .filter(|r| r.discussion_id() == Some(sim.dsc.as_str()))
        .collect();
    let (new, _) = plan_reply(&global, &mine, &request, &sim.stamp()).unwrap();
    records.extend(new);
    let mine: Vec<&Record> = records
        .iter()
        .filter(|r| r.discussion_id() == Some(sim.dsc.as_str()))
        .collect();
    let state = derive(&sim.dsc, &mine, sim.now).unwrap();
    assert_eq!(state.status, Status::Closed);
    assert_eq!(state.transcript[1].at_ms, reserved_at);
}

#[test]
fn started_then_completed_is_the_full_lifecycle() {
    let mut sim = Sim::new(4, 100_000, 5_000);
    sim.wake().unwrap();
    sim.start();
    assert_eq!(sim.state().attempts[0].state, AttemptState::Started);
    assert_eq!(sim.state().attempts[0].pid, Some(42));
    assert!(sim.reply("result", false));
    let state = sim.state();
    assert_eq!(state.attempts[0].state, AttemptState::Completed);
    assert_eq!(state.receipts.len(), 3);
    assert_eq!(state.status, Status::Open);
}

#[derive(Debug, Clone)]
enum Op {
    Wake,
    Start,
    Reply { question: bool, close: bool },
    Fail,
    Deadman,
    Advance(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Wake),
        1 => Just(Op::Start),
        3 => (any::<bool>(), prop::bool::weighted(0.2)).prop_map(|(question, close)| Op::Reply { question, close }),
        1 => Just(Op::Fail),
        1 => Just(Op::Deadman),
        2 => (0i64..8_000).prop_map(Op::Advance),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random sequences of valid operations never yield `invalid`, never
    /// change a terminal status, keep the budget, and escalate exactly when
    /// exhausted.
    #[test]
    fn valid_operations_never_invalidate_and_terminals_never_change(
        max_turns in 2i64..6,
        timeout_ms in 5_000i64..60_000,
        ops in prop::collection::vec(op(), 1..40),
    ) {
        let turn_timeout_ms = (timeout_ms / 3).max(1_000);
        let mut sim = Sim::new(max_turns, timeout_ms, turn_timeout_ms);
        let mut frozen: Option<(Status, i64)> = None;
        for op in ops {
            match op {
                Op::Wake => { sim.wake(); }
                Op::Start => sim.start(),
                Op::Reply { question, close } => { sim.reply(if question { "question" } else { "result" }, close); }
                Op::Fail => sim.end(false),
                Op::Deadman => sim.end(true),
                Op::Advance(ms) => sim.now += ms,
            }
            let state = sim.state();
            prop_assert_ne!(state.status, Status::Invalid, "findings: {:?}", state.findings);
            prop_assert!(state.findings.is_empty());
            prop_assert!(state.turns_used <= max_turns as u32);
            prop_assert_eq!(state.escalation.is_some(), state.status == Status::Exhausted);
            if let Some(before) = frozen {
                prop_assert_eq!(state.terminal, Some(before));
            }
            if state.status.is_terminal() {
                frozen = state.terminal;
            }
            let turns: Vec<u32> = state.transcript.iter().map(|e| e.turn).collect();
            prop_assert!(turns.windows(2).all(|w| w[0] < w[1]), "turns ordered: {:?}", turns);
        }
    }
}

/// The reference model of one discussion and the property test that holds
/// the engine to it.
mod model;
