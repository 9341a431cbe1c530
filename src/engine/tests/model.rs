//! The reference model: the rules of `ledger.md` for one discussion,
//! written apart from `derive.rs`, and a property test that drives the
//! engine (through `Sim`) and the model with the same random operations.

use super::Sim;
use crate::discussion::*;
use crate::spend::{Usage, Usd};
use proptest::prelude::*;

/// The rules of `ledger.md` for one discussion a → b, written apart from
/// `derive.rs`: a few counters, one deadline, and the terminal states.
#[derive(Debug)]
struct Model {
    max_turns: u32,
    conversation_deadline: i64,
    turn_timeout_ms: i64,
    turns_used: u32,
    /// The deadline of the attempt that has not ended by a receipt.
    attempt: Option<i64>,
    replies: usize,
    /// A terminal state a record reached (closed, exhausted, deadman).
    recorded: Option<(Status, i64)>,
    /// Whether the latest attempt has its terminal receipt.
    ended: bool,
    /// The spend budgets, and what the turns reported (tokens, nanos).
    max_tokens: Option<u64>,
    max_cost_nanos: Option<u64>,
    tokens: u64,
    cost_nanos: u64,
    /// The scoped switches engaged, by `Sim::switch`'s numbering.
    halted: [bool; 5],
    /// The reason of a deadman's or an expiry's escalation, once recorded.
    escalated_by_time: Option<&'static str>,
}

impl Model {
    /// Whether a switch covers this discussion's wakes and replies (the
    /// fleet's, either participant's, its own; not another agent's).
    fn covered(&self) -> bool {
        self.halted[..4].iter().any(|&h| h)
    }

    fn terminal(&self, now: i64) -> Option<(Status, i64)> {
        if self.recorded.is_some() {
            return self.recorded;
        }
        match self.attempt {
            // Deadman wins over expired when both deadlines fall together.
            Some(deadline) if deadline <= now => Some((Status::Deadman, deadline)),
            Some(_) => None,
            None if self.conversation_deadline <= now => {
                Some((Status::Expired, self.conversation_deadline))
            }
            None => None,
        }
    }

    fn live(&self, now: i64) -> Option<i64> {
        self.attempt.filter(|_| self.terminal(now).is_none())
    }

    fn status(&self, now: i64) -> Status {
        match (self.terminal(now), self.live(now)) {
            (Some((status, _)), _) => status,
            (None, Some(_)) => Status::Active,
            (None, None) => Status::Open,
        }
    }

    fn can_wake(&self, now: i64) -> bool {
        !self.covered()
            && self.terminal(now).is_none()
            && self.attempt.is_none()
            && self.turns_used < self.max_turns
    }

    fn wake(&mut self, now: i64) {
        self.turns_used += 1;
        self.ended = false;
        self.attempt = Some((now + self.turn_timeout_ms).min(self.conversation_deadline));
    }

    /// The live attempt ends at `now`: replied (maybe closing) or failed,
    /// reporting `spend`.
    fn end(&mut self, now: i64, replied: bool, close: bool, spend: (u64, u64)) {
        self.attempt = None;
        self.spent(spend);
        if replied {
            self.replies += 1;
        }
        let budget_spent = self.max_tokens.is_some_and(|m| self.tokens >= m)
            || self.max_cost_nanos.is_some_and(|m| self.cost_nanos >= m);
        if close {
            self.recorded = Some((Status::Closed, now));
        } else if self.turns_used == self.max_turns || budget_spent {
            self.recorded = Some((Status::Exhausted, now));
        }
    }

    /// The latest attempt's terminal receipt reports `spend`.
    fn spent(&mut self, (tokens, nanos): (u64, u64)) {
        self.ended = true;
        self.tokens += tokens;
        self.cost_nanos += nanos;
    }

    /// Which budget the escalation names: turns, then tokens, then cost.
    fn reason(&self) -> &'static str {
        if self.turns_used >= self.max_turns {
            "turns"
        } else if self.max_tokens.is_some_and(|m| self.tokens >= m) {
            "tokens"
        } else {
            "cost"
        }
    }
}

#[derive(Debug, Clone)]
enum ModelOp {
    Wake,
    Start,
    /// Each with what the turn reports it cost: (tokens, nano-dollars).
    Reply {
        close: bool,
        spend: (u64, u64),
    },
    Fail((u64, u64)),
    Deadman((u64, u64)),
    Advance(i64),
    JumpBack(i64),
    /// The next write operation is cut at this fraction by a crash.
    Crash(f64),
    /// Another host, this far ahead, writes a record (`Sim::skewed`).
    Skewed {
        offset_ms: i64,
        kill_switch: bool,
    },
    /// A scoped switch engaged or released (`Sim::switch`).
    Switch {
        which: u8,
        engaged: bool,
    },
    /// A deliverer's pass records the due escalation, if any.
    RecordDue,
}

/// What a turn reports: often nothing, else some tokens and tenths or
/// twentieths of a dollar (sums a float would get wrong).
fn spend() -> impl Strategy<Value = (u64, u64)> {
    prop_oneof![
        1 => Just((0, 0)),
        3 => (0u64..400, prop::sample::select(vec![0u64, 50_000_000, 100_000_000, 200_000_000])),
    ]
}

fn model_op() -> impl Strategy<Value = ModelOp> {
    prop_oneof![
        4 => Just(ModelOp::Wake),
        1 => Just(ModelOp::Start),
        4 => (prop::bool::weighted(0.15), spend()).prop_map(|(close, spend)| ModelOp::Reply { close, spend }),
        1 => spend().prop_map(ModelOp::Fail),
        1 => spend().prop_map(ModelOp::Deadman),
        3 => (0i64..10_000).prop_map(ModelOp::Advance),
        1 => (20_000i64..200_000).prop_map(ModelOp::Advance),
        1 => (0i64..20_000).prop_map(ModelOp::JumpBack),
        2 => (0.0f64..1.0).prop_map(ModelOp::Crash),
        // A day to ten years ahead: no case advances that far.
        1 => (86_400_000i64..315_360_000_000, any::<bool>())
            .prop_map(|(offset_ms, kill_switch)| ModelOp::Skewed { offset_ms, kill_switch }),
        2 => (0u8..5, prop::bool::weighted(0.4))
            .prop_map(|(which, engaged)| ModelOp::Switch { which, engaged }),
        2 => Just(ModelOp::RecordDue),
    ]
}

/// The usage a turn reports, when it reports any.
fn usage_of((tokens, nanos): (u64, u64)) -> Option<Usage> {
    ((tokens, nanos) != (0, 0)).then(|| Usage {
        input_tokens: Some(tokens),
        output_tokens: None,
        cost_usd: Some(Usd::from_nanos(nanos)),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Random operations, clock jumps (forward past deadlines, and back),
    /// records from hosts far ahead and crashes in the middle of writes, run against the engine and the
    /// reference model: every derived state and every accept/refuse agrees.
    /// Long on purpose: one property, an arm per kind of step.
    #[test]
    fn the_engine_agrees_with_the_reference_model(
        max_turns in 2u32..6,
        timeout_ms in 5_000i64..80_000,
        max_tokens in prop::option::of(100u64..1_500),
        max_cost_nanos in prop::option::of(prop::sample::select(vec![300_000_000u64, 450_000_000, 1_000_000_000])),
        ops in prop::collection::vec(model_op(), 1..60),
    ) {
        let turn_timeout_ms = (timeout_ms / 3).max(1_000);
        let mut sim = Sim::with_budgets(i64::from(max_turns), timeout_ms, turn_timeout_ms, max_tokens, max_cost_nanos);
        let mut model = Model {
            max_turns,
            conversation_deadline: sim.now + timeout_ms,
            turn_timeout_ms,
            // The root is turn 1.
            turns_used: 1,
            attempt: None,
            replies: 0,
            recorded: None,
            ended: true,
            max_tokens,
            max_cost_nanos,
            tokens: 0,
            cost_nanos: 0,
            halted: [false; 5],
            escalated_by_time: None,
        };
        // Records of this discussion stamped ahead: each is one clock_skew
        // finding, and nothing else.
        let mut skewed = 0;
        for op in ops {
            let now = sim.now;
            let crashing = sim.crash.is_some();
            match op {
                ModelOp::Wake => {
                    let accepted = sim.wake().is_some();
                    prop_assert_eq!(accepted, model.can_wake(now), "wake at {}", now);
                    if accepted && !crashing {
                        model.wake(now);
                    }
                }
                ModelOp::Start => sim.start(),
                ModelOp::Reply { close, spend } => {
                    sim.usage = usage_of(spend);
                    let accepted = sim.reply("result", close);
                    prop_assert_eq!(accepted, model.live(now).is_some() && !model.covered(), "reply at {}", now);
                    if accepted && !crashing {
                        model.end(now, true, close, spend);
                    }
                }
                ModelOp::Fail(spend) | ModelOp::Deadman(spend) => {
                    let deadman = matches!(op, ModelOp::Deadman(_));
                    let live = model.live(now).is_some();
                    sim.usage = usage_of(spend);
                    sim.end(deadman);
                    if !crashing {
                        if live && deadman {
                            model.attempt = None;
                            model.spent(spend);
                            model.recorded = Some((Status::Deadman, now));
                        } else if live {
                            model.end(now, false, false, spend);
                        } else if !model.ended {
                            // A lapsed attempt's late end still reports its cost.
                            model.spent(spend);
                        }
                    }
                }
                ModelOp::Advance(ms) => sim.now += ms,
                ModelOp::JumpBack(ms) => sim.jump_back(ms),
                ModelOp::Crash(fraction) => sim.crash = Some(fraction),
                ModelOp::Skewed { offset_ms, kill_switch } => {
                    skewed += usize::from(sim.skewed(offset_ms, kill_switch));
                }
                ModelOp::Switch { which, engaged } => {
                    sim.switch(which, engaged);
                    if !crashing {
                        model.halted[usize::from(which)] = engaged;
                    }
                }
                ModelOp::RecordDue => {
                    sim.record_due();
                    let due = match model.terminal(now) {
                        Some((Status::Deadman, _)) => Some("deadman"),
                        Some((Status::Expired, _)) => Some("expired"),
                        _ => None,
                    };
                    if !crashing && model.escalated_by_time.is_none() {
                        model.escalated_by_time = due;
                    }
                }
            }
            if !matches!(op, ModelOp::Crash(_)) {
                // A crash armed for an operation that wrote nothing is
                // not carried over to the next one.
                sim.crash = None;
            }
            let now = sim.now;
            let state = sim.state();
            prop_assert_eq!(state.status, model.status(now), "at {}: {:?}", now, model);
            prop_assert_eq!(state.terminal, model.terminal(now));
            prop_assert_eq!(state.turns_used, model.turns_used);
            prop_assert_eq!(state.transcript.len(), 1 + model.replies);
            prop_assert_eq!(state.live_attempt().map(|a| a.deadline_ms), model.live(now));
            // Exhausted: escalated by its own write. Deadman and expired:
            // once a deliverer recorded it. Never otherwise.
            let escalated = state.status == Status::Exhausted
                || (model.escalated_by_time.is_some()
                    && matches!(state.status, Status::Deadman | Status::Expired));
            prop_assert_eq!(state.escalation.is_some(), escalated, "{:?}", model);
            prop_assert_eq!((state.spend.tokens(), state.spend.cost_usd.nanos()), (model.tokens, model.cost_nanos));
            if let Some(escalation) = &state.escalation {
                let reason = match state.status {
                    Status::Exhausted => model.reason(),
                    _ => model.escalated_by_time.unwrap_or("none"),
                };
                prop_assert_eq!(escalation.reason.as_str(), reason);
            }
            prop_assert!(
                state.findings.iter().all(|f| f.kind == FindingKind::ClockSkew),
                "{:?}",
                state.findings
            );
            prop_assert_eq!(state.findings.len(), skewed);
            // The cache's live set, fed the same records, never misses the
            // discussion while it is open or active (`cache::live`).
            if matches!(state.status, Status::Open | Status::Active) {
                let mut live = crate::ledger::live::LiveSet::default();
                for record in &sim.records {
                    if let Some(id) = record.discussion_id() {
                        live.touch(id, record.at_ms);
                    }
                }
                let candidates = live.candidates(now).expect("one discussion fits");
                prop_assert!(candidates.contains(&sim.dsc.as_str()), "live at {}", now);
            }
            // What the cache keeps for lists (`list::summarize`) is, from
            // its instant on, what replay derives, and terminal as the
            // model says: a discussion open now and never touched again
            // lapses, and the kept row has it lapsed.
            let mine = sim.mine();
            let summary = crate::operations::lists::summarize(&sim.dsc, &mine);
            let kept: Option<crate::discussion::Row> = serde_json::from_str(&summary.row).unwrap();
            let settled = summary.settled_from_ms;
            for at in [settled, settled.max(now), settled + 86_400_000] {
                let derived = derive(&sim.dsc, &mine, at).map(|d| crate::discussion::Row::of(&d));
                prop_assert_eq!(&derived, &kept, "kept row at {}", at);
            }
            let kept = kept.expect("a discussion with its root has a row");
            prop_assert!(kept.status.is_terminal(), "{:?}", kept.status);
            if skewed == 0 {
                prop_assert_eq!(kept.status, model.status(settled), "settled at {}", settled);
            }
        }
    }
}
