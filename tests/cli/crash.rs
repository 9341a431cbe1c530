//! Crash safety, proven the way SQLite proves it: kill the writer at every
//! fail point of the append path, cut the tail at every byte, fail writes
//! and fsyncs, and kill writers at random. The fail points exist because the
//! test build turns on the `failpoints` feature (see `Cargo.toml`).

use crate::common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};

/// `ask --wake-peer` writes two lines in one operation: the root and its
/// reservation.
fn ask_and_wake(payload: &str) -> Vec<String> {
    let mut args: Vec<String> = ASK_A_TO_B.iter().map(|s| s.to_string()).collect();
    args.push(payload.into());
    args.push("--wake-peer".into());
    args
}

/// How many times each record id occurs in the ledger's complete lines.
fn id_counts(env: &Env) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for record in env.records() {
        *counts
            .entry(record["id"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    counts
}

/// A ledger with acknowledged operations of every kind: fleet, ask, wake,
/// reply. Returns the discussion and the ids of every record written.
fn acknowledged(env: &Env) -> (String, Vec<String>) {
    let (dsc, root) = env.discussion(&[]);
    let attempt = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &attempt, &root, "question", false);
    let ids = env
        .records()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    (dsc, ids)
}

fn run_killed_at(env: &Env, failpoints: &str, partial: Option<usize>, args: &[String]) {
    let mut cmd = env.command();
    cmd.env("DISCUSS_FAILPOINTS", failpoints)
        .arg("--json")
        .args(args);
    if let Some(cut) = partial {
        cmd.env("DISCUSS_FAILPOINT_PARTIAL", cut.to_string());
    }
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.signal(),
        Some(libc_sigkill()),
        "{failpoints}: the writer must die by SIGKILL; stdout {:?} stderr {:?}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "a killed writer reported something");
}

fn libc_sigkill() -> i32 {
    9
}

/// After a crash: the ledger replays, acknowledged records are there once,
/// the next write succeeds and leaves a ledger `verify` finds clean.
/// Returns how many lines of the interrupted operation survived.
fn check_after_crash(env: &Env, dsc: &str, acknowledged: &[String], payload_marker: &str) -> usize {
    let before = env.show(dsc);
    let counts = id_counts(env);
    for id in acknowledged {
        assert_eq!(counts.get(id), Some(&1), "acknowledged record {id}");
    }
    // The next operation succeeds and repairs whatever was torn.
    env.ok(&["fleet", "add", "fleet-alpha", "agent-d"]);
    let verify = env.run(&["--json", "verify"]);
    assert_eq!(
        verify.status, 0,
        "verify after one more write: {}",
        verify.stdout
    );
    assert_eq!(env.show(dsc)["status"], before["status"]);
    assert_eq!(env.show(dsc)["transcript"], before["transcript"]);
    let counts = id_counts(env);
    for id in acknowledged {
        assert_eq!(counts.get(id), Some(&1), "acknowledged record {id}");
    }
    // Lines of the interrupted operation: its root names the marker, its
    // reservation names the root's discussion.
    let records = env.records();
    let Some(root) = records.iter().find(|r| {
        r["payload"]
            .as_str()
            .is_some_and(|p| p.contains(payload_marker))
    }) else {
        return 0;
    };
    let new_dsc = root["correlation_id"].as_str().unwrap();
    let lines = records
        .iter()
        .filter(|r| r["correlation_id"] == new_dsc || r["discussion_id"] == new_dsc)
        .count();
    assert_eq!(env.status(new_dsc), "active", "a whole ask --wake-peer");
    lines
}

#[test]
fn a_writer_killed_at_any_crash_point_loses_nothing_acknowledged_and_no_half_operation() {
    // (fail point, lines of the interrupted operation that must survive).
    // A process kill loses nothing already written: the page cache keeps
    // it, so an operation killed after its write is wholly there.
    let points = [
        ("append.before_write", 0),
        ("append.partial_write", 0),
        ("append.before_fsync", 2),
        ("append.after_fsync", 2),
    ];
    for (point, survivors) in points {
        let env = Env::new();
        let (dsc, ids) = acknowledged(&env);
        let payload = format!(r#"{{"body":"interrupted at {point}"}}"#);
        run_killed_at(
            &env,
            &format!("{point}=crash"),
            None,
            &ask_and_wake(&payload),
        );
        let left = check_after_crash(&env, &dsc, &ids, &format!("interrupted at {point}"));
        assert_eq!(left, survivors, "{point}");
    }
}

#[test]
fn a_write_cut_at_a_line_end_inside_an_operation_tears_the_whole_operation() {
    // Learn the exact lines of the operation from one that completes; the
    // lines of a second one have the same lengths (fixed-width ids, times).
    let probe = Env::new();
    acknowledged(&probe);
    let start = probe.ledger_bytes().len();
    probe.ok(&ask_and_wake(r#"{"body":"cut"}"#)
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    let bytes = probe.ledger_bytes();
    let op = &bytes[start..];
    let first_line_end = op.iter().position(|&b| b == b'\n').unwrap() + 1;
    assert!(first_line_end < op.len(), "the operation has two lines");
    let cuts = [
        0,
        1,
        first_line_end - 1,
        first_line_end,
        first_line_end + 1,
        op.len() - 1,
    ];
    for cut in cuts {
        let env = Env::new();
        let (dsc, ids) = acknowledged(&env);
        let before = env.ledger_bytes();
        run_killed_at(
            &env,
            "append.partial_write=crash",
            Some(cut),
            &ask_and_wake(r#"{"body":"cut"}"#),
        );
        assert_eq!(
            env.ledger_bytes().len(),
            before.len() + cut,
            "the prefix reached the file"
        );
        // Readers ignore the cut operation before any repair.
        let listed = env.ok(&["list"]);
        assert_eq!(
            listed["discussions"].as_array().unwrap().len(),
            1,
            "cut at {cut}"
        );
        assert_eq!(
            check_after_crash(&env, &dsc, &ids, r#""cut""#),
            0,
            "cut at {cut}"
        );
        if cut > 0 {
            let torn = std::fs::read(env.dir.path().join("state/ledger.jsonl.torn")).unwrap();
            assert_eq!(torn.len(), cut + 1, "the cut bytes and a newline, at {cut}");
        }
    }
}

#[test]
fn a_torn_tail_at_every_byte_offset_is_ignored_then_moved_aside() {
    let env = Env::new();
    env.discussion(&[]);
    let base = env.ledger_bytes();
    // The last record carries multi-byte characters, so some cuts fall
    // inside a UTF-8 character.
    env.ok(&[
        "ask",
        "--from",
        "agent-b",
        "--to",
        "agent-c",
        "--fleet",
        "fleet-alpha",
        "--payload",
        r#"{"body":"héllo — ✓ 🎉 ünïcödé"}"#,
    ]);
    let full = env.ledger_bytes();
    assert!(full.len() > base.len() + 100);
    // Every offset in `.ci/run` (DISCUSS_TORN_EVERY_OFFSET=1); by default
    // every offset inside or next to a multi-byte character, the first and
    // last eight, and every twentieth elsewhere.
    let every = std::env::var_os("DISCUSS_TORN_EVERY_OFFSET").is_some();
    let near_multibyte = |at: usize| {
        full[at.saturating_sub(4)..(at + 4).min(full.len())]
            .iter()
            .any(|b| *b >= 0x80)
    };
    let offsets: Vec<usize> = (base.len() + 1..full.len())
        .filter(|&at| {
            every
                || near_multibyte(at)
                || at < base.len() + 9
                || at + 9 > full.len()
                || at % 20 == 0
        })
        .collect();
    let mut cuts = 0;
    for cut in offsets.iter().copied() {
        std::fs::write(env.ledger(), &full[..cut]).unwrap();
        let _ = std::fs::remove_file(env.dir.path().join("state/ledger.jsonl.torn"));
        // A reader sees the one complete discussion and never the torn one.
        let listed = env.ok(&["list"]);
        assert_eq!(
            listed["discussions"].as_array().unwrap().len(),
            1,
            "cut at {cut}"
        );
        let verify = env.run(&["--json", "verify"]);
        assert_eq!(verify.status, 7, "verify reports the torn tail at {cut}");
        assert_eq!(verify.json()["torn_tail_bytes"], cut - base.len());
        // The next write moves the tail aside and appends after the last
        // complete line.
        env.ok(&["fleet", "add", "fleet-alpha", "agent-d"]);
        let torn = std::fs::read(env.dir.path().join("state/ledger.jsonl.torn")).unwrap();
        let mut expected = full[base.len()..cut].to_vec();
        expected.push(b'\n');
        assert_eq!(torn, expected, "cut at {cut}");
        let after = env.ledger_bytes();
        assert_eq!(&after[..base.len()], &base[..], "cut at {cut}");
        let new_line: Value = serde_json::from_slice(&after[base.len()..]).unwrap();
        assert_eq!(new_line["kind"], "fleet");
        assert_eq!(
            env.run(&["verify"]).status,
            0,
            "clean after the write at {cut}"
        );
        cuts += 1;
    }
    let line = &full[base.len()..];
    assert_eq!(cuts, offsets.len());
    if every {
        assert_eq!(cuts, line.len() - 1);
    }
    // Some cuts fell inside a UTF-8 character.
    assert!(
        offsets.iter().any(|&at| full[at] & 0xC0 == 0x80),
        "a cut inside a character"
    );
    eprintln!("torn tails: {cuts} cut offsets, each read, repaired and written after");
    assert!(
        std::str::from_utf8(line)
            .unwrap()
            .chars()
            .any(|c| c.len_utf8() == 4)
    );
}

#[test]
fn failed_writes_and_fsyncs_exit_1_and_leave_the_ledger_as_it_was() {
    let cases = [
        ("append.before_write=enospc", 28),
        ("append.partial_write=enospc", 28),
        ("append.partial_write=eio", 5),
        ("append.before_fsync=eio", 5),
        ("append.before_fsync=enospc", 28),
    ];
    for (failpoint, os_error) in cases {
        let env = Env::new();
        let (dsc, root) = env.discussion(&[]);
        let args = wake_argv("agent-b", &dsc, &root, &[], false);
        // `fails_with` also checks the ledger is byte-identical: nothing a
        // later append could glue onto.
        let error = env.fails_with(&[("DISCUSS_FAILPOINTS", failpoint)], &args, "io_error", 1);
        assert_eq!(error["details"]["os_error"], os_error, "{failpoint}");
        assert_eq!(env.status(&dsc), "open", "{failpoint}");
        // The same wake then succeeds, on a clean line of its own.
        env.wake(&dsc, "agent-b", &root);
        assert_eq!(env.run(&["verify"]).status, 0, "{failpoint}");
        assert_eq!(env.status(&dsc), "active");
    }
}

#[test]
fn a_network_filesystem_is_refused_unless_allowed() {
    let env = Env::new();
    let nfs = [("DISCUSS_FAILPOINTS", "fs.network=nfs")];
    let error = env.fails_with(
        &nfs,
        &["fleet", "add", "f", "a", "b"],
        "network_filesystem",
        1,
    );
    assert_eq!(error["details"]["filesystem"], "nfs");
    assert!(!env.ledger().exists(), "nothing is created on it");
    let out = env.run_with(&nfs, &["fleet", "add", "f", "a", "b"], "");
    assert!(out.stderr.contains("--allow-network-fs"), "{}", out.stderr);
    // Allowed by flag, or by environment (as a supervised child inherits).
    let out = env.run_with(
        &nfs,
        &["--allow-network-fs", "fleet", "add", "f", "a", "b"],
        "",
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    let allowed = [
        ("DISCUSS_FAILPOINTS", "fs.network=smb"),
        ("DISCUSS_ALLOW_NETWORK_FS", "1"),
    ];
    assert_eq!(env.run_with(&allowed, &["list"], "").status, 0);
    // Readers refuse too, on an existing ledger.
    env.fails_with(&nfs, &["list"], "network_filesystem", 1);
}

/// Random `kill -9` storm: writers race, half of them are killed at random
/// moments. `DISCUSS_STORM_KILLS` sets the number of kills (40 by default,
/// 200 in `.ci/run`).
#[test]
fn a_storm_of_kill_9_loses_no_acknowledged_ask() {
    let target: usize = std::env::var("DISCUSS_STORM_KILLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(40);
    let env = Env::new();
    env.fleet();
    env.ok(&["quota", "set", "100000", "--agent", "agent-b"]);
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let mut rng = Rng::seeded();
    let mut kills = 0;
    let mut spawned = 0;
    let mut acknowledged: Vec<(String, bool)> = Vec::new();
    while kills < target {
        assert!(
            spawned < target * 20,
            "kills do not land: {kills} of {spawned}"
        );
        let batch: Vec<(Child, bool, bool)> = (0..8)
            .map(|i| {
                let wake_peer = i % 2 == 1;
                let mut cmd = Command::new(&bin);
                cmd.env_clear()
                    .env("DISCUSS_LEDGER", env.ledger())
                    .env("DISCUSS_NOW", env.now_ms.to_string())
                    .env("DISCUSS_ACTOR", "storm")
                    .arg("--json")
                    .args(ASK_A_TO_B)
                    .arg(format!(r#"{{"body":"storm {spawned} {i}"}}"#))
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                if wake_peer {
                    cmd.arg("--wake-peer");
                }
                (cmd.spawn().unwrap(), wake_peer, rng.below(2) == 0)
            })
            .collect();
        spawned += batch.len();
        let mut waiting = Vec::new();
        for (mut child, wake_peer, doomed) in batch {
            if doomed {
                std::thread::sleep(std::time::Duration::from_micros(rng.below(4_000)));
                child.kill().unwrap();
            }
            waiting.push((child, wake_peer));
        }
        for (child, wake_peer) in waiting {
            let out = child.wait_with_output().unwrap();
            match (out.status.code(), out.status.signal()) {
                (Some(0), _) => {
                    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                    acknowledged.push((v["discussion_id"].as_str().unwrap().into(), wake_peer));
                }
                (None, Some(9)) => kills += 1,
                other => panic!("{other:?}: {}", String::from_utf8_lossy(&out.stderr)),
            }
        }
    }
    // One more write repairs a torn tail, if a kill left one.
    env.ok(&["fleet", "add", "fleet-alpha", "agent-d"]);
    let verify = env.run(&["--json", "verify"]);
    assert_eq!(verify.status, 0, "{}", verify.stdout);
    let listed = env.ok(&["list"]);
    let statuses: HashMap<String, String> = listed["discussions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["discussion_id"].as_str().unwrap().to_string(),
                d["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (dsc, wake_peer) in &acknowledged {
        let expected = if *wake_peer { "active" } else { "open" };
        assert_eq!(
            statuses.get(dsc).map(String::as_str),
            Some(expected),
            "{dsc}"
        );
    }
    // Killed writers may have finished their write first; nothing else is
    // there, and nothing is there twice.
    assert!(statuses.len() >= acknowledged.len());
    assert!(statuses.len() <= spawned);
    assert!(id_counts(&env).values().all(|&n| n == 1));
    eprintln!(
        "kill storm: {kills} kills, {spawned} writers, {} acknowledged, {} discussions",
        acknowledged.len(),
        statuses.len()
    );
}

/// xorshift64*, seeded from the clock; the seed is printed so a failing
/// storm can be replayed with `DISCUSS_STORM_SEED`.
struct Rng(u64);

impl Rng {
    fn seeded() -> Rng {
        let seed = std::env::var("DISCUSS_STORM_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
                    | 1
            });
        eprintln!("DISCUSS_STORM_SEED={seed}");
        Rng(seed)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}
