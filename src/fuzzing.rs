//! The entry point of the fuzz target `fuzz/fuzz_targets/replay.rs` and of
//! the test that replays its corpus on stable (`tests/fuzz_corpus.rs`).
//!
//! It does with arbitrary bytes everything a reader does with a ledger:
//! parse, derive every discussion at several instants, derive the global
//! state, render the JSON of `show` and the human text. None of it may panic.

use crate::commands::list::all_discussions;
use crate::discussion::derive;
use crate::global::Global;
use crate::ledger::Snapshot;
use crate::output::{Output, discussion_human, discussion_json};

/// What one replay found, so a test can check it replayed something.
#[derive(Debug, Default, PartialEq)]
pub struct Replay {
    pub records: usize,
    pub unreadable: usize,
    pub torn_tail: usize,
    pub discussions: usize,
}

pub fn replay(bytes: &[u8]) -> Replay {
    let snapshot = Snapshot::parse(bytes);
    let global = Global::derive(&snapshot.records);
    let last = snapshot.last_at_ms.unwrap_or(0);
    for agent in global.reservations.keys() {
        let _ = global.check_quota(agent, last);
    }
    let _ = global.check_kill_switch();
    let out = Output::new(false, crate::cli::ColorChoice::Never);
    // Before, at and long after the last record: deadlines fire in between.
    for now in [
        last.saturating_sub(1),
        last,
        last.saturating_add(86_400_000),
    ] {
        for discussion in all_discussions(&snapshot, now) {
            let json = discussion_json(&discussion, true);
            assert!(json.is_object());
            let _ = discussion_human(&out, &discussion, now);
        }
    }
    let ids = snapshot.discussion_ids();
    for id in &ids {
        let records = snapshot.discussion(id);
        assert!(derive(id, &records, i64::MAX).is_some());
        assert!(derive(id, &records, i64::MIN).is_some());
    }
    Replay {
        records: snapshot.records.len(),
        unreadable: snapshot.unreadable.len(),
        torn_tail: snapshot.torn_tail,
        discussions: ids.len(),
    }
}
