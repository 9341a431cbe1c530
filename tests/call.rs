//! `discuss call`: the seed's request objects, verbatim.

mod common;
use common::*;
use serde_json::{Value, json};

fn call(env: &Env, tool: &str, request: Value) -> common::Outcome {
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
