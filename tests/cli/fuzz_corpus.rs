//! The fuzz target's corpus (fuzz/corpus/replay), replayed on stable in
//! every `cargo test`, so CI covers what fuzzing found without nightly.
//! Run the fuzzer itself with `cargo +nightly fuzz run replay` (docs/reliability.md).

use discuss::fuzzing::{replay, replay_variants};

#[test]
fn the_fuzz_corpus_replays_without_panicking() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/replay");
    let mut inputs = 0;
    let mut records = 0;
    let mut discussions = 0;
    for entry in std::fs::read_dir(&folder).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let summary = replay_variants(&bytes);
        records += summary.records;
        discussions += summary.discussions;
        inputs += 1;
    }
    assert!(inputs >= 8, "the corpus is committed: {inputs} inputs");
    assert!(
        records > 0 && discussions > 0,
        "the corpus holds real ledgers"
    );
}

#[test]
fn the_seed_ledger_replays_as_it_was_written() {
    let bytes = include_bytes!("../../fuzz/corpus/replay/full-lifecycle.jsonl");
    let summary = replay(bytes);
    assert_eq!(summary.records, 17);
    assert_eq!(summary.discussions, 3);
    assert_eq!((summary.unreadable, summary.torn_tail), (0, 0));
    let torn = include_bytes!("../../fuzz/corpus/replay/torn-tail.jsonl");
    let last_line = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let torn_summary = replay(torn);
    assert_eq!(torn_summary.records, 16);
    assert_eq!(torn_summary.torn_tail, bytes.len() - 9 - last_line);
}
