//! `discuss reply` (the seed's `reply_discussion`): its limits, its
//! refusals in the contract's order, and the ids it takes from a
//! supervised child's environment.

use crate::common::*;
use serde_json::json;

#[test]
fn reply_envelope_limit_is_exact_at_its_turn() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    // A reply envelope's overhead: measure it on a probe discussion's reply.
    let (probe, probe_root) = env.discussion(&[]);
    let probe_att = env.wake(&probe, "agent-b", &probe_root);
    env.ok(&[
        "reply",
        "--agent",
        "agent-b",
        "--discussion",
        &probe,
        "--attempt",
        &probe_att,
        "--reply-to",
        &probe_root,
        "--type",
        "result",
        "--payload",
        r#"{"t":""}"#,
    ]);
    let records = env.records();
    let overhead = records
        .iter()
        .rev()
        .find(|r| r["kind"] == "message")
        .unwrap()["payload"]
        .as_str()
        .unwrap()
        .len();
    let room = 65_536 - overhead;
    let body = |extra: usize| {
        json!({"t": format!("{}{}", "ü".repeat(room / 2), "y".repeat(room % 2 + extra))})
            .to_string()
    };
    let args = |payload: &str| -> Vec<String> {
        [
            "reply",
            "--agent",
            "agent-b",
            "--discussion",
            &dsc,
            "--attempt",
            &att,
            "--reply-to",
            &root,
            "--type",
            "result",
            "--payload",
            payload,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let too_big = body(1);
    let a: Vec<String> = args(&too_big);
    env.fails(
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        "payload_too_large",
        3,
    );
    let fits = body(0);
    let a: Vec<String> = args(&fits);
    env.ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let stored = env
        .records()
        .iter()
        .rev()
        .find(|r| r["kind"] == "message")
        .unwrap()["payload"]
        .as_str()
        .unwrap()
        .len();
    assert_eq!(stored, 65_536);
}

#[test]
fn reply_state_errors_in_contract_order() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "5000"]);
    let reply = |agent: &str, dsc: &str, att: &str, to: &str| -> Argv {
        Argv::of(&[
            "reply",
            "--agent",
            agent,
            "--discussion",
            dsc,
            "--attempt",
            att,
            "--reply-to",
            to,
            "--type",
            "result",
            "--payload",
            "{}",
        ])
    };
    env.fails(
        &reply("agent-b", "dsc_missing", "att_x", &root).words(),
        "unknown_discussion",
        4,
    );
    env.fails(
        &reply("agent-b", &dsc, "att_x", &root).words(),
        "unknown_attempt",
        4,
    );
    let att = env.wake(&dsc, "agent-b", &root);
    env.fails(
        &reply("agent-a", &dsc, &att, &root).words(),
        "not_attempt_agent",
        5,
    );
    env.fails(
        &reply("agent-b", &dsc, &att, "msg_other").words(),
        "stale_head",
        5,
    );
    let msg = env.reply(&dsc, "agent-b", &att, &root, "question", false);
    let err = env.fails(
        &reply("agent-b", &dsc, &att, &msg).words(),
        "attempt_not_live",
        5,
    );
    assert_eq!(err["details"]["state"], "completed");
    // A lapsed attempt makes the discussion deadman: terminal comes first.
    let att2 = env.wake(&dsc, "agent-a", &msg);
    env.advance(6_000);
    let err = env.fails(
        &reply("agent-a", &dsc, &att2, &msg).words(),
        "discussion_terminal",
        5,
    );
    assert_eq!(err["details"]["status"], "deadman");
    env.ok(&["kill-switch", "on", "--reason", "stop"]);
    env.fails(
        &reply("agent-a", &dsc, &att2, &msg).words(),
        "kill_switch_engaged",
        6,
    );
}

#[test]
fn reply_takes_its_ids_from_the_supervisor_environment() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    let out = env
        .command()
        .args([
            "--json",
            "reply",
            "--type",
            "result",
            "--payload",
            r#"{"body":"Yes, proceed."}"#,
            "--close",
        ])
        .env("DISCUSS_AGENT_ID", "agent-b")
        .env("DISCUSS_DISCUSSION_ID", &dsc)
        .env("DISCUSS_ATTEMPT_ID", &att)
        .env("DISCUSS_REPLY_TO", &root)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "closed");
    assert_eq!(v["turn"], 2);
}
