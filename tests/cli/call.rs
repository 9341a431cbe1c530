//! `discuss call`: the seed's request objects, verbatim.

use crate::common::*;
use serde_json::{Value, json};

fn call(env: &Env, tool: &str, request: Value) -> crate::common::Outcome {
    env.run(&["call", tool, &request.to_string()])
}

#[test]
fn the_quickstart_of_the_seed_runs_through_call() {
    let env = Env::new();
    env.fleet();
    let out = call(
        &env,
        "ask_peer",
        json!({
            "from_agent_id": "agent-a", "to_agent_id": "agent-b", "fleet_id": "fleet-alpha",
            "payload": "{\"body\":\"Refactor auth module?\"}", "max_turns": 4, "timeout_ms": 300000,
            "turn_timeout_ms": 60000, "wake_peer": false
        }),
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    let ask = out.json();
    let dsc = ask["discussion_id"].as_str().unwrap();
    let root = ask["root_message_id"].as_str().unwrap();
    let wake = call(
        &env,
        "wake_agent",
        json!({"agent_id":"agent-b","discussion_id":dsc,"expected_head_message_id":root}),
    )
    .json();
    let att = wake["attempt"]["attempt_id"].as_str().unwrap();
    let reply = env.run_stdin(
        &["call", "reply_discussion", "-"],
        &json!({
            "agent_id":"agent-b","discussion_id":dsc,"attempt_id":att,"reply_to_message_id":root,
            "type":"result","payload":"{\"body\":\"Yes, proceed.\"}","close":true
        })
        .to_string(),
    );
    assert_eq!(reply.status, 0, "{}", reply.stderr);
    assert_eq!(reply.json()["status"], "closed");
    let state = call(
        &env,
        "get_discussion",
        json!({"discussion_id": dsc, "include_receipts": true}),
    )
    .json();
    assert_eq!(state["status"], "closed");
    assert_eq!(
        state["transcript"][1]["payload"],
        json!({"body":"Yes, proceed."})
    );
    assert!(state["transcript"][0]["receipts"].is_array());
    let bare = call(
        &env,
        "get_discussion",
        json!({"discussion_id": dsc, "include_receipts": false}),
    )
    .json();
    assert!(bare["transcript"][0].get("receipts").is_none());
}

#[test]
fn call_refuses_unknown_fields_and_bad_types_as_json() {
    let env = Env::new();
    env.fleet();
    let before = env.ledger_bytes();
    let out = call(
        &env,
        "wake_agent",
        json!({"agent_id":"agent-b","discussion_id":"dsc_1","expected_head_message_id":"msg_1","urgent":true}),
    );
    assert_eq!(out.status, 3);
    assert_eq!(out.error()["code"], "unknown_field");
    assert_eq!(out.error()["details"]["field"], "urgent");
    let out = call(
        &env,
        "ask_peer",
        json!({"from_agent_id":"agent-a","to_agent_id":"agent-b","fleet_id":"fleet-alpha","payload":{"body":"x"}}),
    );
    assert_eq!(out.error()["code"], "invalid_argument");
    let out = call(
        &env,
        "ask_peer",
        json!({"from_agent_id":"agent-a","to_agent_id":["agent-b","agent-c"],"fleet_id":"fleet-alpha","payload":"{}"}),
    );
    assert_eq!(out.error()["code"], "group_not_supported");
    let out = call(
        &env,
        "ask_peer",
        json!({"from_agent_id":"agent-a","to_agent_id":"agent-b","fleet_id":"fleet-alpha","payload":"not json"}),
    );
    assert_eq!(out.error()["code"], "payload_not_json");
    let out = call(
        &env,
        "ask_peer",
        json!({"from_agent_id":"agent-a","to_agent_id":"agent-b","fleet_id":"fleet-alpha","payload":"{}","max_turns":33}),
    );
    assert_eq!(
        (out.status, out.error()["code"].as_str().unwrap()),
        (3, "out_of_range")
    );
    let out = call(
        &env,
        "reply_discussion",
        json!({"agent_id":"agent-b","discussion_id":"dsc_1","attempt_id":"att_1","reply_to_message_id":"msg_1","type":"answer","payload":"{}"}),
    );
    assert_eq!(out.error()["code"], "invalid_argument");
    let out = call(&env, "get_discussion", json!({"discussion_id":"dsc_nope"}));
    assert_eq!(
        (out.status, out.error()["code"].as_str().unwrap()),
        (4, "unknown_discussion")
    );
    let out = env.run(&["call", "summon_agent", "{}"]);
    assert_eq!(out.error()["code"], "invalid_argument");
    let out = env.run(&["call", "get_discussion", "{oops"]);
    assert_eq!(out.error()["code"], "invalid_argument");
    let out = env.run(&["call"]);
    assert_eq!(
        (out.status, out.error()["code"].as_str().unwrap()),
        (2, "usage")
    );
    assert_eq!(env.ledger_bytes(), before);
}

#[test]
fn idempotent_retries_of_ask_wake_and_reply_write_once() {
    let env = Env::new();
    env.fleet();
    let mut ask = ASK_A_TO_B.to_vec();
    ask.extend([
        r#"{"body":"once"}"#,
        "--wake-peer",
        "--idempotency-key",
        "job-1:ask",
    ]);
    let first = env.ok(&ask);
    let bytes = env.ledger_bytes();
    let again = env.ok(&ask);
    assert_eq!(again["replayed"], true);
    assert_eq!(env.ledger_bytes(), bytes, "a retry writes nothing");
    let mut original = first.clone();
    original["replayed"] = true.into();
    assert_eq!(again, original, "the original answer");
    let dsc = first["discussion_id"].as_str().unwrap().to_owned();
    let root = first["root_message_id"].as_str().unwrap().to_owned();
    let att = first["attempt"]["attempt_id"].as_str().unwrap().to_owned();
    // The same key with another body is a conflict, and writes nothing.
    let mut other = ASK_A_TO_B.to_vec();
    other.extend([
        r#"{"body":"twice"}"#,
        "--wake-peer",
        "--idempotency-key",
        "job-1:ask",
    ]);
    let err = env.fails(&other, "idempotency_conflict", 5);
    assert_eq!(err["details"]["discussion_id"], dsc.as_str());

    let mut reply = reply_args(
        &dsc,
        "agent-b",
        &att,
        &root,
        "question",
        r#"{"body":"which module?"}"#,
    );
    reply.extend(["--idempotency-key", "job-1:reply"]);
    let replied = env.ok(&reply);
    let bytes = env.ledger_bytes();
    let again = env.ok(&reply);
    assert_eq!(again["replayed"], true);
    assert_eq!(again["message_id"], replied["message_id"]);
    assert_eq!(env.ledger_bytes(), bytes);
    let head = replied["message_id"].as_str().unwrap().to_owned();

    let wake = [
        "wake",
        "--agent",
        "agent-a",
        "--discussion",
        &dsc,
        "--expected-head",
        &head,
        "--idempotency-key",
        "job-1:wake",
    ];
    let woken = env.ok(&wake);
    let att2 = woken["attempt"]["attempt_id"].as_str().unwrap().to_owned();
    let reply2 = [
        "reply",
        "--agent",
        "agent-a",
        "--discussion",
        &dsc,
        "--attempt",
        &att2,
        "--reply-to",
        &head,
        "--type",
        "result",
        "--payload",
        r#"{"body":"auth"}"#,
        "--close",
    ];
    env.ok(&reply2);
    // Long after, with the discussion closed, the wake's retry still gets
    // its original reservation and reserves nothing.
    let bytes = env.ledger_bytes();
    let again = env.ok(&wake);
    assert_eq!(again["replayed"], true);
    assert_eq!(again["attempt"], woken["attempt"]);
    assert_eq!(env.ledger_bytes(), bytes);
    // A key is one request's: used by another command, it conflicts.
    let mut wake_with_reply_key = wake.to_vec();
    *wake_with_reply_key.last_mut().unwrap() = "job-1:reply";
    env.fails(&wake_with_reply_key, "idempotency_conflict", 5);
    // Keys are kept in the ledger, not in the cache (a file's index and
    // checkpoint, a database's state row).
    env.drop_derived();
    assert_eq!(env.ok(&wake)["attempt"], woken["attempt"]);
    assert_eq!(
        env.ok(&["list"])["discussions"].as_array().unwrap().len(),
        1
    );
}

#[test]
fn a_lost_answer_is_retried_without_a_second_discussion() {
    let env = Env::new();
    env.fleet();
    let mut ask = vec!["--json"];
    ask.extend_from_slice(&ASK_A_TO_B);
    ask.extend([r#"{"body":"hi"}"#, "--idempotency-key", "lost-1"]);
    // stdout is full: the discussion is stored, the answer is lost.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let lost = std::process::Command::new(assert_cmd::cargo::cargo_bin("discuss"))
        .env_clear()
        .env("DISCUSS_LEDGER", env.ledger())
        .env("DISCUSS_NOW", env.now_ms.to_string())
        .env("DISCUSS_ACTOR", "tester")
        .args(&ask)
        .stdout(full)
        .output()
        .unwrap();
    assert_ne!(
        lost.status.code(),
        Some(0),
        "the answer could not be written"
    );
    assert_eq!(
        env.ok(&["list"])["discussions"].as_array().unwrap().len(),
        1
    );
    let out = env.run(&ask);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(out.json()["replayed"], true);
    assert_eq!(
        env.ok(&["list"])["discussions"].as_array().unwrap().len(),
        1
    );
}

#[test]
fn idempotency_keys_through_call_and_bad_keys() {
    let env = Env::new();
    env.fleet();
    let request = r#"{"from_agent_id":"agent-a","to_agent_id":"agent-b","fleet_id":"fleet-alpha","payload":"{\"body\":\"x\"}","idempotency_key":"call-1"}"#;
    let first = env.run(&["call", "ask_peer", request]);
    assert_eq!(first.status, 0, "{}", first.stderr);
    let again = env.run(&["call", "ask_peer", request]);
    assert_eq!(again.status, 0);
    assert_eq!(again.json()["replayed"], true);
    assert_eq!(again.json()["discussion_id"], first.json()["discussion_id"]);
    let other = request.replace(r#"\"x\""#, r#"\"y\""#);
    let out = env.run(&["call", "ask_peer", &other]);
    assert_eq!(out.status, 5);
    assert_eq!(out.error()["code"], "idempotency_conflict");
    for bad in ["", "has space", &"k".repeat(129), "slash/no"] {
        let mut ask = ASK_A_TO_B.to_vec();
        ask.extend([r#"{"body":"x"}"#, "--idempotency-key", bad]);
        env.fails(&ask, "invalid_argument", 3);
    }
    let ok_key = "A.b_c:d-9".to_owned() + &"k".repeat(119);
    let mut ask = ASK_A_TO_B.to_vec();
    ask.extend([r#"{"body":"x"}"#, "--idempotency-key", &ok_key]);
    env.ok(&ask);
}
