//! Concurrent writers: the lock makes a wake atomic, and quotas hold under
//! concurrency. `DISCUSS_RACE_ROUNDS` sets the number of rounds (25 by
//! default, 200 in `.ci/run`).

use crate::common::*;
use serde_json::Value;
use std::process::{Child, Command, Stdio};

const WAKERS: usize = 16;

fn rounds(default: usize) -> usize {
    std::env::var("DISCUSS_RACE_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

fn spawn_wake(env: &Env, dsc: &str, head: &str) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("discuss"))
        .env_clear()
        .env("DISCUSS_LEDGER", env.ledger())
        .env("DISCUSS_NOW", env.now_ms.to_string())
        .env("DISCUSS_ACTOR", "racer")
        .args([
            "--json",
            "wake",
            "--agent",
            "agent-b",
            "--discussion",
            dsc,
            "--expected-head",
            head,
        ])
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
    let rounds = rounds(25);
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
