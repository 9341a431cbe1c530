//! Concurrent writers: the lock makes a wake atomic, and quotas hold under
//! concurrency. `DISCUSS_RACE_ROUNDS` sets the number of rounds (10 by
//! default, 200 in `.ci/run`).

use crate::common::*;
use serde_json::Value;
use std::process::{Child, Command, Stdio};

const WAKERS: usize = 16;

/// `DISCUSS_RACE_ROUNDS`, else 10 (`.ci/run` asks for 200).
fn rounds() -> usize {
    std::env::var("DISCUSS_RACE_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10)
}

fn spawn_wake(env: &Env, dsc: &str, head: &str) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("discuss"))
        .env_clear()
        .env("DISCUSS_LEDGER", env.ledger())
        .env("DISCUSS_NOW", env.now_ms.to_string())
        .env("DISCUSS_ACTOR", "racer")
        .args(wake_argv("agent-b", dsc, head, &[], true))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for every child; returns how many won and the error codes of the
/// others.
fn outcomes(children: Vec<Child>) -> (usize, Vec<String>) {
    let mut winners = 0;
    let mut codes = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            winners += 1;
            continue;
        }
        let err: Value = serde_json::from_slice(&out.stderr).unwrap_or_else(|_| {
            panic!(
                "exit {:?}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )
        });
        codes.push(err["error"]["code"].as_str().unwrap().to_string());
    }
    (winners, codes)
}

fn reservations(env: &Env) -> Vec<Value> {
    env.records()
        .into_iter()
        .filter(|r| r["receipt"] == "discussion.attempt.reserved")
        .collect()
}

/// Sixteen processes race to wake one head, 200 rounds (one new discussion
/// each): exactly one reservation per head, never a duplicate turn.
#[test]
fn sixteen_wakers_racing_on_one_head_reserve_it_exactly_once_in_every_round() {
    let rounds = rounds();
    let env = Env::new();
    env.fleet();
    env.ok(&["quota", "set", "100000", "--agent", "agent-b"]);
    for round in 0..rounds {
        let (dsc, root) = env.ask(&[]);
        let children = (0..WAKERS).map(|_| spawn_wake(&env, &dsc, &root)).collect();
        let (winners, codes) = outcomes(children);
        assert_eq!(winners, 1, "round {round}: {codes:?}");
        assert!(
            codes.iter().all(|c| c == "turn_already_active"),
            "round {round}: {codes:?}"
        );
        assert_eq!(env.status(&dsc), "active", "round {round}");
    }
    // Over all rounds: one reservation per head, each for turn 2.
    let all = reservations(&env);
    assert_eq!(all.len(), rounds);
    let mut heads: Vec<&str> = all
        .iter()
        .map(|r| r["head_message_id"].as_str().unwrap())
        .collect();
    heads.sort_unstable();
    heads.dedup();
    assert_eq!(heads.len(), rounds, "a head reserved twice");
    assert!(all.iter().all(|r| r["turn"] == 2));
    assert_eq!(env.run(&["verify"]).status, 0);
    eprintln!("races: {rounds} rounds of {WAKERS} wakers, {rounds} reservations");
}

/// Concurrent wakes of one agent across many discussions never pass its
/// quota in any rolling 60 minutes, however the clock moves between rounds.
#[test]
fn concurrent_wakes_never_exceed_the_hourly_quota() {
    const QUOTA: usize = 5;
    let mut env = Env::new();
    env.fleet();
    env.ok(&["quota", "set", &QUOTA.to_string(), "--agent", "agent-b"]);
    // (minutes to move the clock before the round, wakes allowed in it).
    let steps = [
        (0, QUOTA),
        (1, 0),
        (30, 0),
        (28, 0),
        (2, QUOTA), // 61 minutes after the first round's reservations
        (45, 0),
        (16, QUOTA),
        (120, QUOTA),
    ];
    for (round, (minutes, allowed)) in steps.into_iter().enumerate() {
        env.advance(minutes * 60_000);
        let heads: Vec<(String, String)> = (0..WAKERS).map(|_| env.ask(&[])).collect();
        let children = heads
            .iter()
            .map(|(dsc, root)| spawn_wake(&env, dsc, root))
            .collect();
        let (winners, codes) = outcomes(children);
        assert_eq!(winners, allowed, "round {round}: {codes:?}");
        assert!(
            codes.iter().all(|c| c == "wake_quota_exceeded"),
            "round {round}: {codes:?}"
        );
    }
    // Every rolling hour of the ledger holds at most QUOTA reservations.
    let mut times: Vec<i64> = reservations(&env)
        .iter()
        .map(|r| r["at_ms"].as_i64().unwrap())
        .collect();
    times.sort_unstable();
    assert_eq!(times.len(), 4 * QUOTA);
    for (i, &t) in times.iter().enumerate() {
        let in_window = times[..=i].iter().filter(|&&s| s > t - 3_600_000).count();
        assert!(
            in_window <= QUOTA,
            "{in_window} wakes in the hour up to {t}"
        );
    }
}

/// Runs `discuss --json ARGS` as its own process (its own connection on
/// a database); (success, stdout JSON or the error's code).
fn racer(env: &Env, args: &[String]) -> (bool, Value) {
    let out = env.command_std().arg("--json").args(args).output().unwrap();
    if out.status.success() {
        (true, serde_json::from_slice(&out.stdout).unwrap())
    } else {
        let err: Value = serde_json::from_slice(&out.stderr).unwrap_or_else(|_| {
            panic!("{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        });
        (false, err["error"]["code"].clone())
    }
}

fn words(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// A fleet of `WAKERS` pairs (`w0` ⇄ `p0`, …) with room in their quotas.
fn pairs(env: &Env) {
    let mut add = words(&["fleet", "add", "fleet-alpha"]);
    for i in 0..WAKERS {
        add.push(format!("w{i}"));
        add.push(format!("p{i}"));
    }
    let add: Vec<&str> = add.iter().map(String::as_str).collect();
    env.ok(&add);
    env.ok(&["quota", "set", "100000"]);
}

/// One whole discussion of `i`'s pair, each step its own process: ask,
/// wake, reply --close. Whether all three were acknowledged.
fn whole_discussion(env: &Env, i: usize) -> bool {
    let (from, to) = (format!("w{i}"), format!("p{i}"));
    let (ok, asked) = racer(env, &Argv::ask(&from, &to).opt("--payload", "{}").owned());
    if !ok {
        return false;
    }
    let (dsc, head) = (
        asked["discussion_id"].as_str().unwrap().to_owned(),
        asked["head_message_id"].as_str().unwrap().to_owned(),
    );
    let (ok, woken) = racer(env, &words(&wake_argv(&to, &dsc, &head, &[], false)));
    if !ok {
        return false;
    }
    let attempt = woken["attempt"]["attempt_id"].as_str().unwrap().to_owned();
    racer(
        env,
        &words(&[
            "reply",
            "--agent",
            &to,
            "--discussion",
            &dsc,
            "--attempt",
            &attempt,
            "--reply-to",
            &head,
            "--type",
            "result",
            "--payload",
            "{}",
            "--close",
        ]),
    )
    .0
}

/// Sixteen writers side by side, each on discussions of its own (on a
/// database: sixteen connections, none waiting for another's
/// discussion), and a follower started before them: it prints every line
/// of the final export exactly once, in order; every discussion is
/// closed and `verify` is clean.
#[test]
fn sixteen_writers_side_by_side_and_a_follower_that_misses_nothing() {
    let env = Env::new();
    pairs(&env);
    let mut follower = env
        .command_std()
        .args(["--json", "events", "--follow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let each = rounds().div_ceil(8);
    std::thread::scope(|scope| {
        for i in 0..WAKERS {
            let env = &env;
            scope.spawn(move || {
                for _ in 0..each {
                    assert!(whole_discussion(env, i), "writer {i}");
                }
            });
        }
    });
    let exported = env.run(&["ledger", "export"]).stdout;
    let expected: Vec<Value> = exported
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut lines = std::io::BufReader::new(follower.stdout.take().unwrap());
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut seen: Vec<Value> = Vec::new();
    while seen.len() < expected.len() {
        assert!(
            std::time::Instant::now() < until,
            "the follower printed {} of {}",
            seen.len(),
            expected.len()
        );
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut lines, &mut line).unwrap() == 0 {
            break;
        }
        seen.push(serde_json::from_str(&line).unwrap());
    }
    let _ = follower.kill();
    let _ = follower.wait();
    let numbers: Vec<u64> = seen.iter().map(|e| e["line"].as_u64().unwrap()).collect();
    assert_eq!(numbers, (1..=expected.len() as u64).collect::<Vec<_>>());
    let followed: Vec<&Value> = seen.iter().map(|e| &e["record_id"]).collect();
    let written: Vec<&Value> = expected.iter().map(|r| &r["id"]).collect();
    assert_eq!(
        followed, written,
        "the follower's records are the export's, in order"
    );
    let closed = env.ok(&["list", "--status", "closed"]);
    assert_eq!(
        closed["discussions"].as_array().unwrap().len(),
        WAKERS * each
    );
    assert_eq!(env.ok(&["verify"])["ok"], true);
}

/// Sixteen processes send one ask under one idempotency key at once: one
/// discussion is written, and every one of them answers it.
#[test]
fn one_idempotency_key_raced_by_sixteen_writes_once() {
    let env = Env::new();
    env.fleet();
    for round in 0..rounds().div_ceil(5) {
        let key = format!("race-{round}");
        let answers: Vec<(bool, Value)> = std::thread::scope(|scope| {
            let racers: Vec<_> = (0..WAKERS)
                .map(|_| {
                    let (env, key) = (&env, &key);
                    scope.spawn(move || {
                        let args = Argv::ask("agent-a", "agent-b")
                            .opt("--payload", "{}")
                            .opt("--idempotency-key", key);
                        racer(env, &args.owned())
                    })
                })
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        assert!(answers.iter().all(|(ok, _)| *ok), "{answers:?}");
        let ids: std::collections::BTreeSet<&str> = answers
            .iter()
            .map(|(_, a)| a["discussion_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids.len(), 1, "one discussion per key: {ids:?}");
        let replayed = answers
            .iter()
            .filter(|(_, a)| a["replayed"] == true)
            .count();
        assert_eq!(replayed, WAKERS - 1);
    }
    let roots = env
        .records()
        .into_iter()
        .filter(|r| r["kind"] == "message")
        .count();
    assert_eq!(roots, rounds().div_ceil(5));
}

/// Writers run while the kill-switch is engaged: every write that starts
/// after `kill-switch on` has returned is refused with
/// `kill_switch_engaged`, on whatever connection it runs.
#[test]
fn a_kill_switch_is_seen_by_every_write_that_starts_after_it() {
    let env = Env::new();
    pairs(&env);
    let engaged: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let started = std::sync::atomic::AtomicUsize::new(0);
    let after = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for i in 0..WAKERS {
            let (env, engaged, started, after) = (&env, &engaged, &started, &after);
            scope.spawn(move || {
                // Until every writer has written twice after the switch.
                let mut since = 0;
                while since < 2 {
                    let begun = std::time::Instant::now();
                    let seen_engaged = engaged.get().is_some_and(|at| *at < begun);
                    let args = Argv::ask(&format!("w{i}"), &format!("p{i}")).opt("--payload", "{}");
                    let (ok, answer) = racer(env, &args.owned());
                    started.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    if seen_engaged {
                        assert!(
                            !ok,
                            "a write begun after the switch was engaged went through"
                        );
                        assert_eq!(answer, "kill_switch_engaged");
                        since += 1;
                        after.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    } else {
                        assert!(ok || answer == "kill_switch_engaged", "{answer}");
                    }
                }
            });
        }
        // Once the writers are under way (not a time: a count of writes).
        while started.load(std::sync::atomic::Ordering::SeqCst) < WAKERS {
            std::thread::yield_now();
        }
        let out = env.run(&["--json", "kill-switch", "on", "--reason", "race"]);
        assert_eq!(out.status, 0, "{}", out.stderr);
        engaged.set(std::time::Instant::now()).unwrap();
    });
    assert!(after.load(std::sync::atomic::Ordering::SeqCst) >= 2 * WAKERS);
    assert_eq!(env.ok(&["verify"])["ok"], true);
}
