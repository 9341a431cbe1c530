//! `discuss serve` through real clients: plain HTTP on `std` sockets for
//! every endpoint and error status, `curl` over TLS, the event stream read
//! as it arrives, and the official Rust MCP SDK's streamable HTTP client.

use crate::common::http::{Reply, Served};
use crate::common::*;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

mod connections;
mod errors;
mod mcp;
mod streams;
pub(crate) use connections::certificate;

/// A token issued with the CLI, as `token issue` prints it.
pub(crate) fn token(env: &Env, args: &[&str]) -> String {
    let mut all = vec!["token", "issue"];
    all.extend_from_slice(args);
    let out = env.run(&all);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let token = out.stdout.trim().to_owned();
    assert!(
        token.starts_with("dsk_") && token.len() >= 4 + 64,
        "{token}"
    );
    token
}

fn ask_body(from: &str, to: &str) -> Value {
    json!({"from_agent_id": from, "to_agent_id": to, "fleet_id": "fleet-alpha",
        "payload": "{\"body\":\"Refactor auth module?\"}"})
}

fn ok(reply: &Reply) -> Value {
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.header("content-type"), Some("application/json"));
    reply.json()
}

/// `status` with the contract's `code`, and the ledger as it was.
fn refused(env: &Env, before: &[u8], reply: &Reply, status: u16, code: &str) -> Value {
    assert_eq!(reply.status, status, "{}", reply.text());
    assert_eq!(reply.code(), code, "{}", reply.text());
    assert_eq!(env.ledger_bytes(), before, "a refusal changed the ledger");
    reply.json()["error"].clone()
}

#[test]
fn two_agents_hold_a_whole_discussion_over_http_each_as_itself() {
    let env = Env::new();
    env.fleet();
    let (a, b) = (token(&env, &["agent-a"]), token(&env, &["agent-b"]));
    let server = Served::start(&env, &[]);

    let asked = ok(&server.post(
        "/v1/tools/ask_peer",
        Some(&a),
        &ask_body("agent-a", "agent-b"),
    ));
    let dsc = asked["discussion_id"].as_str().unwrap().to_owned();
    let head = asked["head_message_id"].as_str().unwrap().to_owned();
    // What the CLI answers for the same discussion.
    assert_eq!(
        ok(&server.get(&format!("/v1/discussions/{dsc}"), Some(&a))),
        env.show(&dsc)
    );

    // b's inbox is its own without naming it; a's is empty.
    let inbox = ok(&server.get("/v1/inbox", Some(&b)));
    assert_eq!(inbox["discussions"][0]["discussion_id"], dsc.as_str());
    assert_eq!(
        ok(&server.get("/v1/inbox", Some(&a)))["discussions"],
        json!([])
    );

    let woke = ok(&server.post(
        "/v1/tools/wake_agent",
        Some(&b),
        &json!({"agent_id": "agent-b", "discussion_id": dsc, "expected_head_message_id": head}),
    ));
    let attempt = woke["attempt"]["attempt_id"].as_str().unwrap().to_owned();
    let replied = ok(&server.post(
        "/v1/tools/reply_discussion",
        Some(&b),
        &json!({"agent_id": "agent-b", "discussion_id": dsc, "attempt_id": attempt,
            "reply_to_message_id": head, "type": "result", "payload": "{\"body\":\"yes\"}",
            "close": true}),
    ));
    assert_eq!(replied["status"], "closed");
    let shown = ok(&server.get(
        &format!("/v1/discussions/{dsc}?include_receipts=false"),
        Some(&a),
    ));
    assert_eq!(shown["status"], "closed");
    assert!(shown.get("attempts").is_none_or(|a| a == &json!([])) || shown["receipts"].is_null());
    assert_eq!(env.status(&dsc), "closed");

    let (status, log) = server.stop();
    assert_eq!(status, 0);
    // One line a request: method, path, status, milliseconds, agent.
    let requests: Vec<&String> = log.iter().filter(|l| l.contains("/v1/")).collect();
    assert_eq!(requests.len(), 7, "{log:?}");
    assert!(
        requests[0].starts_with("POST /v1/tools/ask_peer 200 ")
            && requests[0].ends_with("ms agent-a"),
        "{}",
        requests[0]
    );
    assert!(
        requests[4].starts_with("POST /v1/tools/wake_agent 200 ")
            && requests[4].ends_with(" agent-b"),
        "{}",
        requests[4]
    );
    for secret in [&a, &b] {
        assert!(
            !log.iter().any(|l| l.contains(secret.as_str())),
            "a token in the log"
        );
    }
}

#[test]
fn an_agent_token_cannot_speak_or_read_for_another_agent() {
    let env = Env::new();
    env.fleet();
    let (dsc, root) = env.ask(&[]); // a → b
    let c = token(&env, &["agent-c"]);
    let b = token(&env, &["agent-b"]);
    let server = Served::start(&env, &[]);
    let before = env.ledger_bytes();

    let spoofed = server.post(
        "/v1/tools/ask_peer",
        Some(&c),
        &ask_body("agent-a", "agent-b"),
    );
    refused(&env, &before, &spoofed, 403, "agent_mismatch");
    let woken_for_b = server.post(
        "/v1/tools/wake_agent",
        Some(&c),
        &json!({"agent_id": "agent-b", "discussion_id": dsc, "expected_head_message_id": root}),
    );
    refused(&env, &before, &woken_for_b, 403, "agent_mismatch");
    let inbox_of_b = server.get("/v1/inbox?agent=agent-b", Some(&c));
    refused(&env, &before, &inbox_of_b, 403, "agent_mismatch");
    let read = server.get(&format!("/v1/discussions/{dsc}"), Some(&c));
    refused(&env, &before, &read, 404, "unknown_discussion");
    let through_the_tool = server.post(
        "/v1/tools/get_discussion",
        Some(&c),
        &json!({"discussion_id": dsc}),
    );
    refused(&env, &before, &through_the_tool, 404, "unknown_discussion");
    // Lists are filtered to its own discussions, whatever it asks for.
    for path in ["/v1/discussions", "/v1/discussions?agent=agent-a"] {
        assert_eq!(
            ok(&server.get(path, Some(&c)))["discussions"],
            json!([]),
            "{path}"
        );
    }
    assert_eq!(
        ok(&server.get("/v1/discussions", Some(&b)))["discussions"][0]["discussion_id"],
        dsc.as_str()
    );
    // So is the event stream: c sees nothing, not even the fleet records.
    let mut events = server.events("/v1/events", &b, None);
    assert_eq!(events.next().unwrap().data["discussion_id"], dsc.as_str());
    // The operator endpoints take an operator token.
    let halt = server.post(
        "/v1/kill-switch",
        Some(&b),
        &json!({"engaged": true, "reason": "x"}),
    );
    refused(&env, &before, &halt, 403, "forbidden");
}

#[test]
fn sixteen_clients_racing_wake_agent_on_one_head_have_one_winner() {
    let env = Env::new();
    env.fleet();
    let (dsc, root) = env.ask(&[]);
    let b = token(&env, &["agent-b"]);
    let server = Served::start(&env, &[]);
    let body =
        json!({"agent_id": "agent-b", "discussion_id": dsc, "expected_head_message_id": root});
    let replies: Vec<Reply> = std::thread::scope(|scope| {
        let racers: Vec<_> = (0..16)
            .map(|_| scope.spawn(|| server.post("/v1/tools/wake_agent", Some(&b), &body)))
            .collect();
        racers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let winners = replies.iter().filter(|r| r.status == 200).count();
    assert_eq!(
        winners,
        1,
        "{:?}",
        replies.iter().map(Reply::text).collect::<Vec<_>>()
    );
    for loser in replies.iter().filter(|r| r.status != 200) {
        assert_eq!(loser.status, 409, "{}", loser.text());
        assert_eq!(loser.code(), "turn_already_active");
    }
    let reserved = env
        .records()
        .iter()
        .filter(|r| r["receipt"] == "discussion.attempt.reserved")
        .count();
    assert_eq!(reserved, 1);
}

#[test]
fn a_client_that_goes_away_mid_request_changes_nothing_unacknowledged_and_a_retry_gets_the_original()
 {
    let env = Env::new();
    env.fleet();
    let a = token(&env, &["agent-a"]);
    let server = Served::start(&env, &[]);
    let keyed = |key: &str| {
        let mut body = ask_body("agent-a", "agent-b");
        body["idempotency_key"] = json!(key);
        body
    };
    let send = |body: &Value, cut: Option<usize>| {
        let text = body.to_string();
        let mut stream = server.connect();
        let head = format!(
            "POST /v1/tools/ask_peer HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {a}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            text.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream
            .write_all(&text.as_bytes()[..cut.unwrap_or(text.len())])
            .unwrap();
        stream
    };
    // Half a body, then gone: nothing is written.
    let before = env.ledger_bytes();
    let half = keyed("cut-1");
    let stream = send(&half, Some(20));
    stream.shutdown(std::net::Shutdown::Both).unwrap();
    drop(stream);
    let fresh = ok(&server.post("/v1/tools/ask_peer", Some(&a), &half));
    assert_ne!(fresh["replayed"], true, "the cut request wrote nothing");
    assert_eq!(
        env.records().len(),
        1 + before.iter().filter(|b| **b == b'\n').count()
    );
    // A whole request whose answer is never read: once durable it stays,
    // and the retry is answered with the original.
    let whole = keyed("unread-1");
    let stream = send(&whole, None);
    let until = Instant::now() + Duration::from_secs(10);
    while !env
        .records()
        .iter()
        .any(|r| r["idempotency_key"] == "unread-1")
    {
        assert!(Instant::now() < until, "the write was made");
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(stream);
    let retried = ok(&server.post("/v1/tools/ask_peer", Some(&a), &whole));
    assert_eq!(retried["replayed"], true, "{retried}");
    let roots = env
        .records()
        .iter()
        .filter(|r| r["kind"] == "message")
        .count();
    assert_eq!(roots, 2);
}

#[test]
fn a_write_after_the_ledger_changed_under_the_server_sees_the_change() {
    let env = Env::new();
    env.fleet();
    let a = token(&env, &["agent-a"]);
    let server = Served::start(&env, &[]);
    let ask = ask_body("agent-a", "agent-b");
    ok(&server.post("/v1/tools/ask_peer", Some(&a), &ask));
    // Another writer (the CLI) between two of the server's writes.
    env.ask(&[]);
    ok(&server.post("/v1/tools/ask_peer", Some(&a), &ask));
    // A line another tool appends: the kill-switch, engaged.
    let halt = format!(
        "{{\"v\":1,\"kind\":\"kill_switch\",\"id\":\"rec_0000000000000000000000000000feed\",\"at_ms\":{},\"by\":\"other\",\"engaged\":true,\"reason\":\"by hand\"}}\n",
        env.now_ms
    );
    env.append_raw(&halt);
    let before = env.ledger_bytes();
    let refused_ask = server.post("/v1/tools/ask_peer", Some(&a), &ask);
    refused(&env, &before, &refused_ask, 503, "kill_switch_engaged");
    let verify = env.run(&["verify", "--json"]);
    assert_eq!(verify.status, 0, "{}", verify.stdout);
    assert_eq!(
        env.ok(&["list"])["discussions"].as_array().unwrap().len(),
        3
    );
}

/// A token's id, from `token list`.
fn token_id_of(env: &Env, agent: &str) -> String {
    let list = env.ok(&["token", "list"]);
    list["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|t| t["agent_id"] == agent)
        .unwrap()["token_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn an_operator_halts_one_agent_through_serve_and_an_agent_token_cannot() {
    let env = Env::new();
    env.fleet();
    let (dsc, root) = env.ask(&[]);
    let operator = token(&env, &["ops", "--operator"]);
    let b = token(&env, &["agent-b"]);
    let server = Served::start(&env, &[]);
    let before = env.ledger_bytes();
    let halt = json!({"engaged": true, "reason": "b loops", "scope": {"agent": "agent-b"}});
    let refused_halt = server.post("/v1/kill-switch", Some(&b), &halt);
    refused(&env, &before, &refused_halt, 403, "forbidden");
    let bad = server.post(
        "/v1/kill-switch",
        Some(&operator),
        &json!({"engaged": true, "reason": "x", "scope": {"team": "t"}}),
    );
    refused(&env, &before, &bad, 400, "invalid_argument");
    let state = ok(&server.post("/v1/kill-switch", Some(&operator), &halt));
    assert_eq!(state["engaged"], false, "the global switch is untouched");
    assert_eq!(state["scopes"][0]["scope"], json!({"agent": "agent-b"}));
    assert_eq!(state["scopes"][0]["changed_by"], "tester");
    let status = env.ok(&["kill-switch", "status"]);
    assert_eq!(status["scopes"][0]["reason"], "b loops");
    let before = env.ledger_bytes();
    let woken = server.post(
        "/v1/tools/wake_agent",
        Some(&b),
        &json!({"agent_id": "agent-b", "discussion_id": dsc, "expected_head_message_id": root}),
    );
    let error = refused(&env, &before, &woken, 503, "kill_switch_engaged");
    assert_eq!(error["details"]["scope"], json!({"agent": "agent-b"}));
    let read = ok(&server.get(&format!("/v1/discussions/{dsc}"), Some(&b)));
    assert_eq!(read["halted"]["scope"], json!({"agent": "agent-b"}));
    ok(&server.post(
        "/v1/kill-switch",
        Some(&operator),
        &json!({"engaged": false, "scope": {"agent": "agent-b"}}),
    ));
    ok(&server.post(
        "/v1/tools/wake_agent",
        Some(&b),
        &json!({"agent_id": "agent-b", "discussion_id": dsc, "expected_head_message_id": root}),
    ));
}
