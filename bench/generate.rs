//! Writes a realistic ledger of about N records to stdout: a fleet of
//! agents, then finished discussions of several turns (asks, reservations,
//! started receipts, questions and results, failed turns, closes,
//! exhaustion with its escalation), many in flight at once so their lines
//! interleave as they do in a busy fleet. Every record comes from the
//! engine's own plans, so the ledger is one `discuss` itself would write.
//!
//!   cargo run --release --example generate -- 1000000 > ledger.jsonl
//!
//! The same arguments give the same shape (ids and times differ).

use discuss::discussion::derive;
use discuss::engine::{
    AskRequest, AttemptEnd, EndReason, ReplyRequest, Stamp, WakeRequest, plan_ask,
    plan_attempt_end, plan_fleet, plan_quota, plan_reply, plan_started, plan_wake,
};
use discuss::global::Global;
use discuss::record::FleetOp;
use discuss::record::Record;
use std::io::{BufWriter, Write};

const AGENTS: usize = 40;
const IN_FLIGHT: usize = 12;
const FLEET: &str = "fleet-bench";

struct Generator {
    global: Global,
    now: i64,
    rng: u64,
    out: BufWriter<std::io::StdoutLock<'static>>,
    written: usize,
    /// The digest of the last line written: lines are chained as
    /// `discuss` chains them.
    prev: discuss::record::chain::Digest,
}

struct Live {
    id: String,
    records: Vec<Record>,
    a: String,
    b: String,
}

impl Generator {
    fn stamp(&mut self) -> Stamp {
        // About 3 s apart on average: a fleet that writes a million
        // records in a month.
        self.now += 1 + (self.next() % 6_000) as i64;
        Stamp {
            at_ms: self.now,
            by: "bench".into(),
            token_id: None,
        }
    }

    fn next(&mut self) -> u64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn write(&mut self, records: &[Record]) {
        self.out
            .write_all(Record::operation_lines(records, &mut self.prev).as_bytes())
            .unwrap();
        self.written += records.len();
        for record in records {
            self.global.apply(record);
        }
    }

    /// A body of prose, 60 to 460 characters, as agents write.
    fn body(&mut self, kind: &str) -> String {
        const WORDS: &[&str] = &[
            "refactor",
            "the",
            "auth",
            "module",
            "token",
            "cache",
            "expiry",
            "should",
            "we",
            "keep",
            "session",
            "rotation",
            "tests",
            "cover",
            "edge",
            "case",
            "latency",
            "budget",
            "é",
            "naïve",
            "✓",
            "migration",
            "rollback",
            "plan",
            "reviewed",
        ];
        let len = 60 + (self.next() % 400) as usize;
        let mut text = String::new();
        while text.len() < len {
            let w = WORDS[(self.next() % WORDS.len() as u64) as usize];
            text.push_str(w);
            text.push(' ');
        }
        serde_json::json!({ "kind": kind, "body": text.trim_end() }).to_string()
    }

    fn start(&mut self, n: u64) -> Live {
        let a = format!("agent-{:02}", n % AGENTS as u64);
        let b = format!("agent-{:02}", (n * 7 + 1 + self.next() % 5) % AGENTS as u64);
        let b = if a == b {
            format!("agent-{:02}", (n + 1) % AGENTS as u64)
        } else {
            b
        };
        let max_turns = 3 + (self.next() % 6) as i64;
        let body = self.body("ask");
        let request = AskRequest::new(
            &a,
            std::slice::from_ref(&b),
            FLEET,
            &body,
            max_turns,
            900_000,
            300_000,
            false,
        )
        .unwrap();
        let stamp = self.stamp();
        let (records, _) = plan_ask(&self.global, &request, &stamp).unwrap();
        self.write(&records);
        Live {
            id: request.discussion_id.clone(),
            records,
            a,
            b,
        }
    }

    /// One step of a live discussion; false once it is terminal.
    fn step(&mut self, live: &mut Live) -> bool {
        let stamp = self.stamp();
        let refs: Vec<&Record> = live.records.iter().collect();
        let state = derive(&live.id, &refs, stamp.at_ms).unwrap();
        if state.status.is_terminal() {
            return false;
        }
        let new = if let Some(attempt) = state.live_attempt().cloned() {
            let roll = self.next() % 100;
            if roll < 30 && !state.receipts.iter().any(|r| {
                matches!(&r.body, discuss::record::Body::Receipt(x)
                    if x.attempt_id.as_deref() == Some(&attempt.attempt_id) && x.receipt.ends_with("started"))
            }) {
                plan_started(&Default::default(), &live.id, &attempt.attempt_id, 4242, &refs, &stamp).unwrap().0
            } else if roll < 36 {
                let end = AttemptEnd {
                    reason: EndReason::ExitedWithoutReply,
                    exit_code: Some(1),
                    signal: None,
                    detail: None,
                    usage: None,
                    usage_unreadable: false,
                };
                plan_attempt_end(&live.id, &attempt.attempt_id, &end, &refs, &stamp)
                    .unwrap()
                    .0
            } else {
                let last_turn = state.turns_remaining() == 0;
                let close = last_turn && !self.next().is_multiple_of(3) || self.next().is_multiple_of(8);
                let kind = if close || self.next().is_multiple_of(2) { "result" } else { "question" };
                let body = self.body(kind);
                let request = ReplyRequest::new(
                    &attempt.agent_id,
                    &live.id,
                    &attempt.attempt_id,
                    &attempt.head_message_id,
                    kind,
                    &body,
                    close,
                )
                .unwrap();
                plan_reply(&self.global, &refs, &request, &stamp).unwrap().0
            }
        } else {
            let head = state.head().unwrap().clone();
            let agent = if head.to_agent_id == live.a {
                &live.a
            } else {
                &live.b
            };
            let request = WakeRequest::new(agent, &live.id, &head.message_id).unwrap();
            plan_wake(&self.global, &refs, &request, &stamp).unwrap().0
        };
        drop(refs);
        self.write(&new);
        live.records.extend(new);
        true
    }
}

fn main() {
    let target: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("usage: generate RECORDS");
    let mut generator = Generator {
        global: Global::default(),
        now: 1_795_996_800_000 - 40 * 86_400_000,
        rng: 0x9E37_79B9_7F4A_7C15,
        out: BufWriter::with_capacity(1 << 20, std::io::stdout().lock()),
        written: 0,
        prev: discuss::record::chain::before_first_line(),
    };
    let agents: Vec<String> = (0..AGENTS).map(|i| format!("agent-{i:02}")).collect();
    let stamp = generator.stamp();
    let fleet = plan_fleet(&generator.global, FleetOp::Add, FLEET, &agents, &stamp);
    generator.write(&fleet);
    let stamp = generator.stamp();
    generator.write(&plan_quota(
        None,
        &discuss::engine::Quotas {
            wakes_per_hour: Some(100_000),
            ..Default::default()
        },
        &stamp,
    ));
    let mut started = 0u64;
    let mut live: Vec<Live> = Vec::new();
    while generator.written < target {
        if live.len() < IN_FLIGHT {
            live.push(generator.start(started));
            started += 1;
            continue;
        }
        let pick = (generator.next() % live.len() as u64) as usize;
        let mut discussion = live.swap_remove(pick);
        if generator.step(&mut discussion) {
            live.push(discussion);
        }
        // Reservations of the last hour are all the quota needs.
        if generator.written.is_multiple_of(4096) {
            let now = generator.now;
            for times in generator.global.reservations.values_mut() {
                times.retain(|&t| t > now - 3_600_000);
            }
        }
    }
    generator.out.flush().unwrap();
    eprintln!("{} records, {started} discussions", generator.written);
}
