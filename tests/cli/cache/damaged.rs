//! Each file of the cache damaged in every way: every reader answers as
//! it did with the cache whole.

use super::{answers_of, assert_same, busy_ledger, cache_files, near_miss};
use crate::common::*;

type Damage = Box<dyn Fn(&Vec<u8>) -> Vec<u8>>;

/// Every way a file of the cache can be damaged.
fn damages() -> Vec<(&'static str, Damage)> {
    vec![
        ("empty", Box::new(|_| Vec::new())),
        ("truncated", Box::new(|b| b[..b.len() / 2].to_vec())),
        ("zeros", Box::new(|b| vec![0; b.len()])),
        (
            "flipped bytes",
            Box::new(|b| {
                let mut b = b.clone();
                for i in (0..b.len()).step_by(7) {
                    b[i] ^= 0x5A;
                }
                b
            }),
        ),
        (
            "one entry moved",
            Box::new(|b| {
                let mut b = b.clone();
                // The first entry's offset (after the 104-byte header and
                // its 8-byte key), moved forward a little.
                if b.len() > 128 {
                    b[112] = b[112].wrapping_add(3);
                }
                b
            }),
        ),
        (
            "every line number one lower",
            Box::new(|b| {
                // Each entry's line number (its last 4 bytes) lowered by
                // one: a discussion's last line then seems to come earlier
                // than it does, so a pass that trusted it would end the
                // discussion before its last record.
                let mut b = b.clone();
                if b.starts_with(b"DSCIDX02") {
                    let entries = u64::from_le_bytes(b[56..64].try_into().unwrap()) as usize;
                    for i in 0..entries {
                        let at = 104 + i * 24 + 20;
                        let line = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
                        b[at..at + 4].copy_from_slice(&line.saturating_sub(1).to_le_bytes());
                    }
                }
                b
            }),
        ),
        (
            "two entries of different discussions swapped",
            Box::new(|b| {
                // The index's first and last entries (sorted by key, so of
                // different discussions) point at each other's lines.
                let mut b = b.clone();
                let entries = u64::from_le_bytes(b[56..64].try_into().unwrap()) as usize;
                if b.starts_with(b"DSCIDX02") && entries > 1 {
                    let (first, last) = (104 + 8, 104 + (entries - 1) * 24 + 8);
                    for i in 0..16 {
                        b.swap(first + i, last + i);
                    }
                }
                b
            }),
        ),
    ]
}

/// One reader of each kind: a stream resumed through the index, lists
/// from the summary, the live set, one discussion by id and by a near
/// miss, a wait, the global state and the whole check.
fn a_reader_of_each_kind(ids: &[String]) -> Vec<Vec<String>> {
    let near_miss = near_miss(&ids[0]);
    [
        vec!["events", "--after", "9", "--json"],
        vec!["list"],
        vec!["list", "--status", "closed,expired,open", "--json"],
        vec!["inbox", "--agent", "agent-b", "--json"],
        vec!["show", &ids[2], "--json"],
        vec!["show", &near_miss, "--json"],
        vec![
            "wait",
            &ids[0],
            "--until",
            "terminal",
            "--timeout-ms",
            "0",
            "--json",
        ],
        vec!["quota", "show", "--json"],
        vec!["verify", "--json"],
    ]
    .iter()
    .map(|args| args.iter().map(|a| a.to_string()).collect())
    .collect()
}

/// The busy ledger, its cache damaged in every way, one file of it at a
/// time (`which`: 0 the index, 1 the checkpoint, 2 the summary): each
/// reader, meeting the damage itself (the first reader repairs the cache,
/// so the whole cache is put back and damaged again before each),
/// answers as it did with the cache whole; and so does every reader of
/// the cache one of them repaired.
fn answers_with_a_damaged(which: usize) {
    let mut env = Env::new();
    let mut ids = busy_ledger(&mut env);
    let (later, _) = env.discussion(&[]);
    ids.push(later);
    env.ok(&["list"]); // writes the summary: the three files are there
    let files = cache_files(&env);
    let whole: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let readers = a_reader_of_each_kind(&ids);
    let expected = answers_of(&env, readers.clone(), &[]);
    let mut damaged_ways = 0;
    for (name, damage) in damages() {
        let damaged = damage(&whole[which]);
        if damaged == whole[which] {
            continue; // a damage of the index's entries, to another file
        }
        damaged_ways += 1;
        // One reader's repair, another for each damage, is read by all.
        let repairer = damaged_ways % readers.len();
        for (at, (reader, answer)) in readers.iter().zip(&expected).enumerate() {
            for (file, bytes) in files.iter().zip(&whole) {
                std::fs::write(file, bytes).unwrap();
            }
            std::fs::write(&files[which], &damaged).unwrap();
            let case = format!("{name} {}", files[which].display());
            let got = answers_of(&env, vec![reader.clone()], &[]);
            assert_same(std::slice::from_ref(answer), &got, &case);
            if at == repairer {
                let after = format!("{case}, after `{}` repaired it", reader.join(" "));
                assert_same(&expected, &answers_of(&env, readers.clone(), &[]), &after);
            }
        }
    }
    assert!(
        damaged_ways >= 4,
        "{damaged_ways} ways damaged {}",
        files[which].display()
    );
}

#[test]
fn readers_answer_the_same_with_a_damaged_index() {
    answers_with_a_damaged(0);
}

#[test]
fn readers_answer_the_same_with_a_damaged_checkpoint() {
    answers_with_a_damaged(1);
}

#[test]
fn readers_answer_the_same_with_a_damaged_summary() {
    answers_with_a_damaged(2);
}
