//! `discuss wait`: a status reached, a timeout, and a status that can
//! never come.

use crate::common::*;
use std::process::{Command, Stdio};

#[test]
fn wait_returns_when_the_status_is_reached_or_times_out() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let out = env.run(&["--json", "wait", &dsc, "--until", "open"]);
    assert_eq!(out.status, 0);
    assert_eq!(out.json()["status"], "open");
    let out = env.run(&[
        "--json",
        "wait",
        &dsc,
        "--until",
        "terminal",
        "--timeout-ms",
        "150",
    ]);
    assert_eq!(out.status, 10);
    assert_eq!(out.error()["code"], "wait_timeout");
    assert_eq!(out.error()["details"]["status"], "open");
    // A waiter in the background sees a reply written meanwhile.
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let waiter = Command::new(bin)
        .env_clear()
        .env("DISCUSS_LEDGER", env.ledger())
        .env("DISCUSS_NOW", env.now_ms.to_string())
        .args([
            "--json",
            "wait",
            &dsc,
            "--until",
            "closed,exhausted",
            "--timeout-ms",
            "20000",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "result", true);
    let out = waiter.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["status"], "closed");
    env.fails(
        &["wait", "dsc_none", "--until", "open", "--timeout-ms", "10"],
        "unknown_discussion",
        4,
    );
}

#[test]
fn wait_for_a_status_a_terminal_discussion_can_never_reach_returns_at_once() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "1000"]);
    env.wake(&dsc, "agent-b", &root);
    env.advance(1_500);
    assert_eq!(env.status(&dsc), "deadman");
    // No timeout: without the rule this would wait for ever.
    let out = env
        .command()
        .args(["--json", "wait", &dsc, "--until", "closed"])
        .timeout(std::time::Duration::from_secs(10))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(10), "returned at once");
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["code"], "status_unreachable");
    assert_eq!(err["error"]["details"]["status"], "deadman");
    // A terminal discussion can still turn invalid: waiting for that waits.
    let out = env.run(&[
        "--json",
        "wait",
        &dsc,
        "--until",
        "invalid",
        "--timeout-ms",
        "50",
    ]);
    assert_eq!(out.error()["code"], "wait_timeout");
    // And the status it has is reached, as ever.
    assert_eq!(
        env.run(&["--json", "wait", &dsc, "--until", "terminal"])
            .status,
        0
    );
}
