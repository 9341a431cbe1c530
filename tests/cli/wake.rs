//! `discuss wake` (the seed's `wake_agent`): its refusals in the
//! contract's order and the hourly quota it is held to.

use crate::common::*;

#[test]
fn wake_state_errors_in_contract_order() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "5000"]);
    let wake = |agent: &str, dsc: &str, head: &str| -> Argv {
        Argv::of(&wake_argv(agent, dsc, head, &[], false))
    };
    env.fails(
        &wake("agent-b", "dsc_missing", &root).words(),
        "unknown_discussion",
        4,
    );
    let err = env.fails(&wake("agent-b", &dsc, "msg_other").words(), "stale_head", 5);
    assert_eq!(err["details"]["head_message_id"], root.as_str());
    let err = env.fails(&wake("agent-a", &dsc, &root).words(), "not_recipient", 5);
    assert_eq!(err["details"]["to_agent_id"], "agent-b");
    let att = env.wake(&dsc, "agent-b", &root);
    let err = env.fails(
        &wake("agent-b", &dsc, &root).words(),
        "turn_already_active",
        5,
    );
    assert_eq!(err["details"]["attempt_id"], att.as_str());
    // stale_head is checked before turn_already_active and not_recipient.
    env.fails(&wake("agent-a", &dsc, "msg_other").words(), "stale_head", 5);
    env.advance(6_000);
    let err = env.fails(
        &wake("agent-b", &dsc, &root).words(),
        "discussion_terminal",
        5,
    );
    assert_eq!(err["details"]["status"], "deadman");
    env.ok(&["kill-switch", "on", "--reason", "stop"]);
    env.fails(
        &wake("agent-b", "dsc_missing", &root).words(),
        "kill_switch_engaged",
        6,
    );
}

#[test]
fn quota_limits_wakes_per_rolling_hour() {
    let mut env = Env::new();
    env.fleet();
    env.ok(&["quota", "set", "2", "--agent", "agent-b"]);
    let mut heads = Vec::new();
    for _ in 0..3 {
        let v = env.ok(&ask_args(&[]));
        heads.push((
            v["discussion_id"].as_str().unwrap().to_owned(),
            v["root_message_id"].as_str().unwrap().to_owned(),
        ));
    }
    env.wake(&heads[0].0, "agent-b", &heads[0].1);
    env.advance(60_000);
    env.wake(&heads[1].0, "agent-b", &heads[1].1);
    let err = env.fails(
        &[
            "wake",
            "--agent",
            "agent-b",
            "--discussion",
            &heads[2].0,
            "--expected-head",
            &heads[2].1,
        ],
        "wake_quota_exceeded",
        6,
    );
    let retry = err["details"]["retry_after_ms"].as_i64().unwrap();
    // Each process's pinned clock runs on from its start: allow a second.
    assert!((3_539_000..=3_541_000).contains(&retry), "{retry}");
    // ask --wake-peer is held to the same quota.
    env.fails(&ask_args(&["--wake-peer"]), "wake_quota_exceeded", 6);
    env.advance(retry + 1_000);
    // heads[2] expired meanwhile; a fresh discussion gets the freed wake.
    let v = env.ok(&ask_args(&[]));
    env.wake(
        v["discussion_id"].as_str().unwrap(),
        "agent-b",
        v["root_message_id"].as_str().unwrap(),
    );
    let show = env.ok(&["quota", "show"]);
    let b = show["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent_id"] == "agent-b")
        .unwrap()
        .clone();
    assert_eq!(b["wakes_per_hour"], 2);
    assert_eq!(b["wakes_last_hour"], 2);
    assert_eq!(show["default_wakes_per_hour"], 30);
}
