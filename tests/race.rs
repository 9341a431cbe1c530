//! Concurrent writers: the lock makes a wake atomic.

mod common;
use common::*;
use std::process::{Command, Stdio};

#[test]
fn sixteen_processes_racing_to_wake_one_head_reserve_exactly_once() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let children: Vec<_> = (0..16)
        .map(|_| {
            Command::new(&bin)
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
                    &dsc,
                    "--expected-head",
                    &root,
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut winners = 0;
    let mut losers = 0;
    for child in children {
        let out = child.wait_with_output().unwrap();
        match out.status.code() {
            Some(0) => winners += 1,
            Some(5) => {
                let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
                assert_eq!(err["error"]["code"], "turn_already_active");
                losers += 1;
            }
            other => panic!(
                "unexpected exit {other:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }
    assert_eq!((winners, losers), (1, 15));
    let reservations = env
        .records()
        .iter()
        .filter(|r| r["receipt"] == "discussion.attempt.reserved")
        .count();
    assert_eq!(reservations, 1);
    assert_eq!(env.status(&dsc), "active");
}
