//! `discuss serve` through real clients: plain HTTP on `std` sockets for
//! every endpoint and error status, `curl` over TLS, the event stream read
//! as it arrives, and the official Rust MCP SDK's streamable HTTP client.

use crate::common::http::{Reply, Served};
use crate::common::*;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

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

/// The error object of a refusal, with the discussion id it names
/// replaced, to compare a stranger's answers with those for no discussion.
fn error_shape(reply: &Reply, id: &str) -> String {
    reply.json()["error"].to_string().replace(id, "DSC")
}

#[test]
fn a_discussion_an_agent_takes_no_part_in_reads_exactly_as_one_that_does_not_exist() {
    let env = Env::new();
    env.fleet();
    // Two discussions a → b: their ids share a long prefix (UUIDv7).
    let (dsc, root) = env.ask(&["--idempotency-key", "key-of-a"]);
    let (other, _) = env.ask(&[]);
    let common: String = dsc
        .chars()
        .zip(other.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect();
    assert!(common.len() >= 8, "{dsc} {other}");
    let c = token(&env, &["agent-c"]);
    let a = token(&env, &["agent-a"]);
    let server = Served::start(&env, &[]);
    let before = env.ledger_bytes();
    // What c is told of a discussion that does not exist at all.
    let nowhere = "dsc_0000000000000000000000000000beef";
    let missing = server.get(&format!("/v1/discussions/{nowhere}"), Some(&c));
    refused(&env, &before, &missing, 404, "unknown_discussion");
    let expected = error_shape(&missing, nowhere);
    assert!(!expected.contains("hints"), "{expected}");
    // Named whole, by a prefix of one, by an ambiguous prefix, one
    // character off: the same answer, naming nothing of a's discussions.
    let off_by_one = format!(
        "{}{}",
        &dsc[..dsc.len() - 1],
        if dsc.ends_with('0') { '1' } else { '0' }
    );
    for given in [
        dsc.clone(),
        dsc[..dsc.len() - 4].to_owned(),
        common.clone(),
        off_by_one,
    ] {
        let read = server.get(&format!("/v1/discussions/{given}"), Some(&c));
        refused(&env, &before, &read, 404, "unknown_discussion");
        assert_eq!(error_shape(&read, &given), expected, "{given}");
        let text = read.text();
        assert!(!text.contains(&dsc) || given == dsc, "{text}");
        assert!(!text.contains(&other), "{text}");
        for (path, body) in [
            ("/v1/tools/get_discussion", json!({"discussion_id": given})),
            (
                "/v1/tools/wake_agent",
                json!({"agent_id": "agent-c", "discussion_id": given,
                    "expected_head_message_id": "msg_0000000000000000000000000000beef"}),
            ),
            (
                "/v1/tools/reply_discussion",
                json!({"agent_id": "agent-c", "discussion_id": given,
                    "attempt_id": "att_0000000000000000000000000000beef",
                    "reply_to_message_id": root, "type": "result", "payload": "{}"}),
            ),
        ] {
            let answer = server.post(path, Some(&c), &body);
            refused(&env, &before, &answer, 404, "unknown_discussion");
            assert_eq!(error_shape(&answer, &given), expected, "{path} {given}");
            assert!(!answer.text().contains("agent-a") && !answer.text().contains("agent-b"));
            assert!(!answer.text().contains(&root), "{}", answer.text());
        }
        let events = server.get(&format!("/v1/events?discussion={given}"), Some(&c));
        refused(&env, &before, &events, 404, "unknown_discussion");
        assert_eq!(error_shape(&events, &given), expected, "events {given}");
    }
    // A key that a's ask used, reused by c: refused without naming where.
    let mut body = ask_body("agent-c", "agent-b");
    body["idempotency_key"] = json!("key-of-a");
    let conflict = server.post("/v1/tools/ask_peer", Some(&c), &body);
    refused(&env, &before, &conflict, 409, "idempotency_conflict");
    assert!(!conflict.text().contains(&dsc), "{}", conflict.text());
    assert!(
        !conflict.text().contains("record_id"),
        "{}",
        conflict.text()
    );
    // A participant still resolves its own prefixes, and is told of an
    // ambiguous one with its own candidates.
    let own = ok(&server.get(
        &format!("/v1/discussions/{}", &dsc[..dsc.len() - 4]),
        Some(&a),
    ));
    assert_eq!(own["discussion_id"], dsc.as_str());
    let ambiguous = server.get(&format!("/v1/discussions/{common}"), Some(&a));
    assert_eq!(ambiguous.status, 404, "{}", ambiguous.text());
    assert_eq!(ambiguous.code(), "ambiguous_id");
    // And a participant that is not the head's recipient keeps the usual
    // answer: it takes part.
    let not_for_a = server.post(
        "/v1/tools/wake_agent",
        Some(&a),
        &json!({"agent_id": "agent-a", "discussion_id": dsc, "expected_head_message_id": root}),
    );
    refused(&env, &before, &not_for_a, 409, "not_recipient");
}

#[test]
fn a_request_without_a_good_token_is_refused_alike_and_says_nothing_of_why() {
    let mut env = Env::new();
    env.fleet();
    let good = token(&env, &["agent-a"]);
    let revoked = token(&env, &["agent-a"]);
    let expiring = token(&env, &["agent-a", "--expires-in-hours", "1"]);
    let list = env.ok(&["token", "list"]);
    let revoked_id = list["tokens"][1]["token_id"].as_str().unwrap().to_owned();
    env.ok(&["token", "revoke", &revoked_id]);
    // Two hours on: the third has expired.
    env.advance(2 * 3_600_000);
    let server = Served::start(&env, &[]);
    let before = env.ledger_bytes();
    let mut bodies = Vec::new();
    // One hex digit changed; never the same digit again (1 time in 16 the
    // last one is already `0`).
    let last = if good.ends_with('0') { '1' } else { '0' };
    let tampered = format!("{}{last}", &good[..good.len() - 1]);
    for header in [
        None,
        Some(format!("Bearer {revoked}")),
        Some(format!("Bearer {expiring}")),
        Some(format!("Bearer {tampered}")),
        Some("Bearer".to_owned()),
        Some(format!("Basic {good}")),
    ] {
        let headers: Vec<(&str, &str)> = header
            .iter()
            .map(|h| ("authorization", h.as_str()))
            .collect();
        let reply = server.request("GET", "/v1/inbox", None, &headers, None);
        refused(&env, &before, &reply, 401, "unauthorized");
        assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
        bodies.push(reply.text());
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]), "{bodies:?}");
    assert_eq!(server.get("/v1/inbox", Some(&good)).status, 200);
    env.fleet();
    let ask = json!({"from_agent_id": "agent-a", "to_agent_id": "agent-b", "fleet_id": "fleet-alpha", "payload": "{}"});
    ok(&server.post("/v1/tools/ask_peer", Some(&good), &ask));
    // Revocation is seen by the next request, a write (checked under its
    // lock) as a read.
    let good_id = list["tokens"][0]["token_id"].as_str().unwrap().to_owned();
    env.ok(&["token", "revoke", &good_id]);
    let revoked_now = env.ledger_bytes();
    // First while the server still trusts it from before: a request that is
    // bad in itself hears only 401 too.
    let bad = server.request(
        "POST",
        "/v1/tools/ask_peer",
        Some(&good),
        &[("content-type", "application/json")],
        Some(b"{"),
    );
    refused(&env, &revoked_now, &bad, 401, "unauthorized");
    let bogus = server.post("/v1/tools/bogus", Some(&good), &json!({}));
    refused(&env, &revoked_now, &bogus, 401, "unauthorized");
    let query = server.get("/v1/discussions?bogus=1", Some(&good));
    refused(&env, &revoked_now, &query, 401, "unauthorized");
    refused(
        &env,
        &revoked_now,
        &server.post("/v1/tools/ask_peer", Some(&good), &ask),
        401,
        "unauthorized",
    );
    refused(
        &env,
        &revoked_now,
        &server.get("/v1/inbox", Some(&good)),
        401,
        "unauthorized",
    );
    let dsc = env
        .records()
        .iter()
        .find_map(|r| r["correlation_id"].as_str().map(str::to_owned))
        .unwrap();
    refused(
        &env,
        &revoked_now,
        &server.get(&format!("/v1/discussions/{dsc}"), Some(&good)),
        401,
        "unauthorized",
    );
    // /healthz alone needs none.
    let health = ok(&server.get("/healthz", None));
    assert_eq!(health["ok"], true);
    assert_eq!(
        health["ledger"]["kind"],
        if env.is_postgres() {
            "postgres"
        } else {
            "file"
        }
    );
    let (_, log) = server.stop();
    // No token anywhere: not in the log, the ledger, events or token list.
    let events = env.run(&["events", "--json"]).stdout;
    let listed = env.run(&["token", "list", "--json"]).stdout;
    let ledger = String::from_utf8_lossy(&env.ledger_bytes()).into_owned();
    for secret in [&good, &revoked, &expiring] {
        assert!(!log.iter().any(|l| l.contains(secret.as_str())));
        for text in [&events, &listed, &ledger] {
            assert!(!text.contains(secret.as_str()));
        }
        assert!(!events.contains("sha256"));
    }
    assert_eq!(env.ok(&["token", "list"])["tokens"][2]["state"], "expired");
}

#[test]
fn bad_requests_get_the_contract_error_with_its_http_status_and_change_nothing() {
    let env = Env::new();
    env.fleet();
    let (dsc, root) = env.ask(&[]);
    let b = token(&env, &["agent-b"]);
    let operator = token(&env, &["ops", "--operator"]);
    let server = Served::start(&env, &["--max-body-bytes", "2048"]);
    let before = env.ledger_bytes();
    let json = [("content-type", "application/json")];
    let post = |path: &str, body: &[u8]| server.request("POST", path, Some(&b), &json, Some(body));

    refused(
        &env,
        &before,
        &post("/v1/tools/ask_peer", b"{\"from_agent_id\":"),
        400,
        "invalid_argument",
    );
    refused(
        &env,
        &before,
        &post("/v1/tools/ask_peer", b"[1,2]"),
        400,
        "invalid_argument",
    );
    refused(
        &env,
        &before,
        &post("/v1/tools/ask_peer", b"{\"from_agent_id\":\"\xff\"}"),
        400,
        "invalid_argument",
    );
    let text = server.request(
        "POST",
        "/v1/tools/inbox",
        Some(&b),
        &[("content-type", "text/plain")],
        Some(b"{}"),
    );
    refused(&env, &before, &text, 415, "unsupported_media_type");
    refused(
        &env,
        &before,
        &post("/v1/tools/bogus", b"{}"),
        404,
        "not_found",
    );
    refused(
        &env,
        &before,
        &post("/v1/tools/inbox", b"{\"bogus\":1}"),
        400,
        "unknown_field",
    );
    refused(
        &env,
        &before,
        &server.get("/v1/nowhere", Some(&b)),
        404,
        "not_found",
    );
    refused(
        &env,
        &before,
        &server.get("/v1/tools/inbox", Some(&b)),
        405,
        "method_not_allowed",
    );
    refused(
        &env,
        &before,
        &server.get("/v1/discussions?bogus=1", Some(&b)),
        400,
        "unknown_field",
    );
    refused(
        &env,
        &before,
        &server.get("/v1/discussions?status=nope", Some(&b)),
        400,
        "invalid_argument",
    );
    refused(
        &env,
        &before,
        &server.get(
            &format!("/v1/discussions/{dsc}?include_receipts=maybe"),
            Some(&b),
        ),
        400,
        "invalid_argument",
    );
    refused(
        &env,
        &before,
        &server.get(
            "/v1/discussions/dsc_0000000000000000000000000000dead",
            Some(&b),
        ),
        404,
        "unknown_discussion",
    );
    refused(
        &env,
        &before,
        &server.get("/v1/events?after=-1", Some(&b)),
        400,
        "invalid_argument",
    );
    // Over the limit: refused from Content-Length before the body is read,
    // and when a chunked body passes the limit.
    let big = format!("{{\"payload\":\"{}\"}}", "x".repeat(4096));
    let declared = post("/v1/tools/ask_peer", big.as_bytes());
    refused(&env, &before, &declared, 413, "payload_too_large");
    let mut chunked = format!("{:x}\r\n{big}\r\n0\r\n\r\n", big.len()).into_bytes();
    let streamed = server.request(
        "POST",
        "/v1/tools/ask_peer",
        Some(&b),
        &[
            ("content-type", "application/json"),
            ("transfer-encoding", "chunked"),
        ],
        Some(&chunked),
    );
    refused(&env, &before, &streamed, 413, "payload_too_large");
    chunked.clear();
    // State conflicts: 409; policy: 429 with Retry-After, 503 for the switch.
    let stale = post(
        "/v1/tools/wake_agent",
        json!({"agent_id": "agent-b", "discussion_id": dsc, "expected_head_message_id": "msg_0000000000000000000000000000dead"}).to_string().as_bytes(),
    );
    refused(&env, &before, &stale, 409, "stale_head");
    let quota = server.post(
        "/v1/quota",
        Some(&operator),
        &json!({"wakes_per_hour": 1, "agent_id": "agent-b"}),
    );
    assert_eq!(ok(&quota)["agents"][0]["wakes_per_hour"], 1);
    // Spend caps by the same endpoint; a cap given as text is refused.
    let caps = server.post(
        "/v1/quota",
        Some(&operator),
        &json!({"tokens_per_hour": 90000, "cost_usd_per_day": 2.5, "agent_id": "agent-c"}),
    );
    let caps = ok(&caps);
    let c = caps["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent_id"] == "agent-c")
        .unwrap();
    assert_eq!(
        (c["tokens_per_hour"].clone(), c["cost_usd_per_day"].clone()),
        (json!(90000), json!(2.5))
    );
    let capped = env.ledger_bytes();
    let text = server.post(
        "/v1/quota",
        Some(&operator),
        &json!({"cost_usd_per_day": "2.5"}),
    );
    refused(&env, &capped, &text, 400, "invalid_argument");
    let (other, other_root) = env.ask(&[]);
    let first = json!({"agent_id": "agent-b", "discussion_id": other, "expected_head_message_id": other_root});
    ok(&server.post("/v1/tools/wake_agent", Some(&b), &first));
    let wake =
        json!({"agent_id": "agent-b", "discussion_id": dsc, "expected_head_message_id": root})
            .to_string();
    let limited = env.ledger_bytes();
    let over = post("/v1/tools/wake_agent", wake.as_bytes());
    refused(&env, &limited, &over, 429, "wake_quota_exceeded");
    // An hour, in seconds, rounded up.
    let retry_ms = over.json()["error"]["details"]["retry_after_ms"]
        .as_u64()
        .unwrap();
    assert_eq!(
        over.header("retry-after"),
        Some(retry_ms.div_ceil(1000).to_string().as_str())
    );
    ok(&server.post(
        "/v1/kill-switch",
        Some(&operator),
        &json!({"engaged": true, "reason": "drill"}),
    ));
    let halted = env.ledger_bytes();
    refused(
        &env,
        &halted,
        &post("/v1/tools/wake_agent", wake.as_bytes()),
        503,
        "kill_switch_engaged",
    );
    let released = ok(&server.post(
        "/v1/kill-switch",
        Some(&operator),
        &json!({"engaged": false}),
    ));
    assert_eq!(released["engaged"], false);
    let bad_switch = server.post(
        "/v1/kill-switch",
        Some(&operator),
        &json!({"engaged": "yes"}),
    );
    refused(
        &env,
        &env.ledger_bytes(),
        &bad_switch,
        400,
        "invalid_argument",
    );
    let fleet = ok(&server.post(
        "/v1/fleets/fleet-beta/agents",
        Some(&operator),
        &json!({"add": ["agent-x", "agent-y"], "remove": []}),
    ));
    assert_eq!(fleet["agents"], json!(["agent-x", "agent-y"]));
    assert_eq!(
        env.ok(&["fleet", "list", "fleet-beta"])["fleets"][0]["agents"],
        json!(["agent-x", "agent-y"])
    );
    let bad_fleet = server.post(
        "/v1/fleets/fleet-beta/agents",
        Some(&operator),
        &json!({"add": ["-bad"]}),
    );
    refused(&env, &env.ledger_bytes(), &bad_fleet, 400, "invalid_id");
    // What is not HTTP at all, a header line past hyper's limit, a request
    // line of nonsense: each answered or dropped, never a crash.
    for garbage in [
        b"\x00\xff\xfe garbage\r\n\r\n".to_vec(),
        format!(
            "GET /healthz HTTP/1.1\r\nx-long: {}\r\n\r\n",
            "a".repeat(1 << 20)
        )
        .into_bytes(),
        b"NOT A REQUEST LINE\r\n\r\n".to_vec(),
        b"GET /healthz HTTP/1.1\r\ncontent-length: -5\r\n\r\n".to_vec(),
    ] {
        let mut stream = server.connect();
        let _ = stream.write_all(&garbage);
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let text = String::from_utf8_lossy(&answer);
        assert!(text.is_empty() || text.starts_with("HTTP/1.1 4"), "{text}");
    }
    // Still serving after all of it.
    assert_eq!(server.get("/healthz", None).status, 200);
    assert_eq!(server.stop().0, 0);
}

#[test]
fn the_health_check_never_shows_the_databases_password() {
    let Some(env) = Env::postgres() else {
        assert!(std::env::var("CI").is_err(), "CI=true needs PostgreSQL");
        eprintln!("skipped: no PostgreSQL server binaries here");
        return;
    };
    // The test cluster trusts every connection: a password is taken and
    // ignored, as a real server's would be checked.
    let url = env
        .pg
        .clone()
        .unwrap()
        .replacen("postgres@", "postgres:s3cr3t-pw@", 1);
    assert!(url.contains("s3cr3t-pw"), "{url}");
    let mut with_password = env.command_std();
    with_password.env("DISCUSS_LEDGER", &url);
    let out = with_password
        .args(["token", "issue", "agent-a", "--allow-unknown-agent"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut child = env
        .command_std()
        .env("DISCUSS_LEDGER", &url)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut first).unwrap();
    let port: u16 = first.trim().rsplit(':').next().unwrap().parse().unwrap();
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"kind\":\"postgres\""), "{answer}");
    assert!(!answer.contains("s3cr3t-pw"), "{answer}");
    let _ = std::process::Command::new("kill")
        .arg(child.id().to_string())
        .status();
    let mut log = first;
    std::io::Read::read_to_string(&mut stderr, &mut log).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(!log.contains("s3cr3t-pw"), "{log}");
}

#[test]
fn the_event_stream_resumes_exactly_after_its_cursor_on_any_server_of_the_ledger() {
    let env = Env::new();
    env.fleet();
    let operator = token(&env, &["ops", "--operator"]);
    let first = Served::start(&env, &[]);
    let second = Served::start(&env, &[]);
    // A writer goes on while the stream is read, dropped and resumed.
    let writer = {
        let ledger = env.ledger();
        let now = env.now_ms;
        std::thread::spawn(move || {
            for _ in 0..12 {
                let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("discuss"))
                    .env_clear()
                    .env("DISCUSS_LEDGER", &ledger)
                    .env("DISCUSS_NOW", now.to_string())
                    .args(ASK_A_TO_B)
                    .arg("{\"body\":\"q\"}")
                    .output()
                    .unwrap();
                assert!(out.status.success());
            }
        })
    };
    let mut seen = Vec::new();
    let mut events = first.events("/v1/events", &operator, None);
    while seen.len() < 6 {
        seen.push(events.next().unwrap());
    }
    drop(events);
    // Back on the other server, from the last id seen.
    let last = seen.last().unwrap().id;
    let mut events = second.events("/v1/events", &operator, Some(last));
    writer.join().unwrap();
    let total = env.records().len();
    while seen.len() < total {
        seen.push(events.next().unwrap());
    }
    // Exactly the ledger's records, in order, none twice, none missed, the
    // very objects `events --json` prints.
    let printed: Vec<Value> = env
        .run(&["events", "--json"])
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<u64> = seen.iter().map(|e| e.id).collect();
    assert_eq!(ids, (1..=total as u64).collect::<Vec<_>>());
    let data: Vec<Value> = seen.iter().map(|e| e.data.clone()).collect();
    assert_eq!(data, printed);
    // after= in the URL is the same cursor; the header wins over it.
    let mut from_url = first.events(&format!("/v1/events?after={}", total - 1), &operator, None);
    assert_eq!(from_url.next().unwrap().id, total as u64);
    let mut both = first.events("/v1/events?after=1", &operator, Some(total as u64 - 2));
    assert_eq!(both.next().unwrap().id, total as u64 - 1);
    // The CLI resumes the same way.
    let after = env.run(&["events", "--json", "--after", &(total - 2).to_string()]);
    assert_eq!(after.stdout.lines().count(), 2);
}

/// A stream from the first line of a ledger longer than one batch of a
/// server's reads (256 rows on PostgreSQL) gets every record once, in
/// order, across the batches.
#[test]
fn a_stream_from_the_first_line_reads_a_long_ledger_across_batches() {
    let env = Env::new();
    env.fleet();
    for _ in 0..300 {
        let mut args = ASK_A_TO_B.to_vec();
        args.push("{\"body\":\"q\"}");
        env.ok(&args);
    }
    let operator = token(&env, &["ops", "--operator"]);
    let server = Served::start(&env, &[]);
    let total = env.records().len();
    assert!(total > 300, "{total} records");
    let mut events = server.events("/v1/events", &operator, None);
    let ids: Vec<u64> = (0..total).map(|_| events.next().unwrap().id).collect();
    assert_eq!(ids, (1..=total as u64).collect::<Vec<_>>());
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
fn slow_headers_are_cut_off_and_connections_past_the_limit_are_refused() {
    let env = Env::new();
    let operator = token(&env, &["ops", "--operator"]);
    let server = Served::start(
        &env,
        &["--header-timeout-ms", "300", "--max-connections", "2"],
    );
    // Headers that never end: the server closes the connection.
    let mut slow = server.connect();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        .unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    let _ = slow.read_to_end(&mut rest);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "cut off in time"
    );
    drop(slow);
    // Two streams hold both connections; a third is told so and closed.
    let _one = server.events("/v1/events", &operator, None);
    let _two = server.events("/v1/events", &operator, None);
    let refused = server.get("/healthz", None);
    assert_eq!(refused.status, 503);
    assert_eq!(refused.code(), "server_busy");
    drop((_one, _two));
    // The slots come back once those connections close.
    let until = Instant::now() + Duration::from_secs(10);
    while server.get("/healthz", None).status != 200 {
        assert!(Instant::now() < until, "the slots came back");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_stop_finishes_what_is_in_flight_and_exits_zero() {
    let env = Env::new();
    let operator = token(&env, &["ops", "--operator"]);
    let server = Served::start(&env, &[]);
    let mut stream = server.events("/v1/events", &operator, None);
    assert_eq!(stream.next().unwrap().id, 1);
    let (status, log) = server.stop();
    assert_eq!(status, 0, "{log:?}");
    // The open stream ended with the server.
    assert!(stream.next().is_none());
    assert!(log.iter().any(|l| l.starts_with("stopping")), "{log:?}");
}

#[test]
fn serve_refuses_to_start_where_it_would_leak_or_cannot_listen() {
    let env = Env::new();
    let out = env.run(&["--json", "serve", "--listen", "0.0.0.0:0"]);
    assert_eq!(out.status, 3, "{}", out.stderr);
    assert_eq!(out.error()["code"], "invalid_argument");
    assert!(
        out.error()["hints"][0]
            .as_str()
            .unwrap()
            .contains("--tls-cert")
    );
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let out = env.run(&["--json", "serve", "--listen", &format!("127.0.0.1:{port}")]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert_eq!(out.error()["code"], "io_error");
    let out = env.run(&["--json", "serve", "--listen", "nowhere"]);
    assert_eq!(out.error()["code"], "invalid_argument");
    let out = env.run(&[
        "--json",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--max-connections",
        "0",
    ]);
    assert_eq!(out.error()["code"], "out_of_range");
    let out = env.run(&[
        "--json",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--tls-cert",
        "/nonexistent",
        "--tls-key",
        "/nonexistent",
    ]);
    assert_eq!(out.status, 3);
    assert_eq!(out.error()["details"]["field"], "tls_cert");
}

#[test]
fn tls_material_that_is_a_device_or_a_fifo_is_refused_at_start() {
    let env = Env::new();
    let fifo = env.dir.path().join("cert.pem");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let fifo = fifo.to_str().unwrap();
    // A regular certificate with a FIFO for its key is refused too.
    let cert_file = env.dir.path().join("real.pem");
    std::fs::write(&cert_file, "not yet a certificate").unwrap();
    let cert_file = cert_file.to_str().unwrap();
    for (cert, key, field) in [
        ("/dev/zero", "/dev/zero", "tls_cert"),
        (fifo, fifo, "tls_cert"),
        ("/dev/null", "/dev/null", "tls_cert"),
        (cert_file, fifo, "tls_key"),
    ] {
        let mut child = env
            .command_std()
            .args(["--json", "serve", "--listen", "127.0.0.1:0"])
            .args(["--tls-cert", cert, "--tls-key", key])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > until {
                let _ = child.kill();
                let _ = child.wait();
                panic!("serve --tls-cert {cert} neither refused nor exited in 10 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert_eq!(status.code(), Some(3), "{cert}: {stderr}");
        let error: Value = serde_json::from_str(&stderr).unwrap();
        assert_eq!(error["error"]["code"], "invalid_argument", "{stderr}");
        assert_eq!(error["error"]["details"]["field"], field, "{stderr}");
        assert!(stderr.contains("not a regular file"), "{stderr}");
    }
}

/// A certificate for localhost and 127.0.0.1 and its key, made with
/// openssl in `dir`: their paths.
pub(crate) fn certificate(dir: &std::path::Path) -> (String, String) {
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ])
        .arg("-keyout")
        .arg(dir.join("key.pem"))
        .arg("-out")
        .arg(dir.join("cert.pem"))
        .output()
        .expect("openssl is installed (.ci/run installs it)");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    (
        dir.join("cert.pem").display().to_string(),
        dir.join("key.pem").display().to_string(),
    )
}

/// Reads until the server closes `stream` (or 10 s pass): how long it took.
fn closed_after(mut stream: impl Read) -> Duration {
    let started = Instant::now();
    let mut sink = [0u8; 4096];
    loop {
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => return started.elapsed(),
            Ok(_) if started.elapsed() > Duration::from_secs(10) => return started.elapsed(),
            Ok(_) => {}
        }
    }
}

#[test]
fn connections_that_send_nothing_are_cut_and_give_their_slots_back() {
    let env = Env::new();
    let server = Served::start(
        &env,
        &["--max-connections", "4", "--header-timeout-ms", "1000"],
    );
    let opened = Instant::now();
    // No byte at all.
    let silent = server.connect();
    // HTTP/2's preface and a SETTINGS frame, and no request.
    let mut preface = server.connect();
    preface
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .unwrap();
    // One request on a kept-alive connection, then silence.
    let mut kept = server.connect();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let mut answer = [0u8; 12];
    kept.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");
    let another = server.connect();
    // Every slot is taken: the next is refused at once.
    assert_eq!(server.get("/healthz", None).status, 503);
    let handles: Vec<_> = [silent, preface, kept, another]
        .into_iter()
        .map(|stream| std::thread::spawn(move || closed_after(stream)))
        .collect();
    for handle in handles {
        let took = handle.join().unwrap();
        assert!(
            took < Duration::from_millis(3_000),
            "a silent connection stayed open {took:?}"
        );
    }
    assert!(
        opened.elapsed() > Duration::from_millis(900),
        "not cut before the timeout"
    );
    // Their slots are back.
    let until = Instant::now() + Duration::from_secs(5);
    while server.get("/healthz", None).status != 200 {
        assert!(Instant::now() < until, "the slots came back");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The test's TLS client trusts the certificate the test made (a
/// self-signed one, which rustls will not take as a root), whatever it is:
/// what is tested is the server's silence bound, not the certificate.
#[derive(Debug)]
struct AnyCertificate(std::sync::Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &rustls_pki_types::CertificateDer<'_>,
        _: &[rustls_pki_types::CertificateDer<'_>],
        _: &rustls_pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls_pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls_pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls_pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[test]
fn a_tls_handshake_followed_by_silence_is_cut() {
    let env = Env::new();
    let (cert, key) = certificate(env.dir.path());
    let server = Served::start(
        &env,
        &[
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
            "--max-connections",
            "2",
            "--header-timeout-ms",
            "1000",
        ],
    );
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let handles: Vec<_> = [vec![b"h2".to_vec()], vec![b"http/1.1".to_vec()]]
        .into_iter()
        .map(|alpn| {
            let mut config = rustls::ClientConfig::builder_with_provider(provider.clone())
                .with_safe_default_protocol_versions()
                .unwrap()
                .dangerous()
                .with_custom_certificate_verifier(std::sync::Arc::new(AnyCertificate(
                    provider.clone(),
                )))
                .with_no_client_auth();
            config.alpn_protocols = alpn;
            let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
            let client = rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
            let mut tls = rustls::StreamOwned::new(client, server.connect());
            while tls.conn.is_handshaking() {
                tls.conn.complete_io(&mut tls.sock).unwrap();
            }
            std::thread::spawn(move || closed_after(tls))
        })
        .collect();
    for handle in handles {
        let took = handle.join().unwrap();
        assert!(
            took < Duration::from_millis(3_000),
            "a silent TLS connection stayed open {took:?}"
        );
    }
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let ok = std::process::Command::new("curl")
            .args([
                "-sS",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "--cacert",
                &cert,
            ])
            .arg(format!("https://127.0.0.1:{}/healthz", server.port))
            .output()
            .unwrap();
        if ok.stdout == b"200" {
            break;
        }
        assert!(Instant::now() < until, "the slots came back");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn tls_serves_a_certificate_the_test_makes_to_curl() {
    let env = Env::new();
    env.fleet();
    let a = token(&env, &["agent-a"]);
    let (cert, key) = certificate(env.dir.path());
    let server = Served::start(&env, &["--tls-cert", &cert, "--tls-key", &key]);
    assert!(server.log()[0].starts_with("listening on https://"));
    let curl = |extra: &[&str]| {
        std::process::Command::new("curl")
            .args([
                "-sS",
                "--cacert",
                &cert,
                "-H",
                &format!("Authorization: Bearer {a}"),
            ])
            .args(extra)
            .arg(format!("https://127.0.0.1:{}/v1/inbox", server.port))
            .output()
            .expect("curl is installed (.ci/run installs it)")
    };
    let out = curl(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let inbox: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(inbox["discussions"], json!([]));
    // HTTP/2 by ALPN as well.
    let out = curl(&["--http2", "-o", "/dev/null", "-w", "%{http_version}"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2");
    // Plain HTTP on the TLS port gets nothing served.
    let plain = std::process::Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "5",
            &format!("http://127.0.0.1:{}/healthz", server.port),
        ])
        .output()
        .unwrap();
    assert!(!plain.status.success());
    assert_eq!(server.stop().0, 0);
}

mod mcp {
    use super::*;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    async fn client(
        server: &Served,
        token: &str,
    ) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
        client_with(
            server,
            token,
            rmcp::service::ClientLifecycleMode::Initialize,
        )
        .await
    }

    async fn client_with(
        server: &Served,
        token: &str,
        lifecycle: rmcp::service::ClientLifecycleMode,
    ) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
        use rmcp::service::ClientServiceExt;
        let config = StreamableHttpClientTransportConfig::with_uri(format!(
            "http://127.0.0.1:{}/mcp",
            server.port
        ))
        .auth_header(token);
        let transport = StreamableHttpClientTransport::from_config(config);
        ().serve_with_lifecycle(transport, lifecycle)
            .await
            .expect("the server initializes")
    }

    #[test]
    fn both_protocol_revisions_are_spoken_over_http() {
        use rmcp::model::ProtocolVersion;
        use rmcp::service::ClientLifecycleMode;
        let env = Env::new();
        env.fleet();
        let b = token(&env, &["agent-b"]);
        let (dsc, _) = env.ask(&[]);
        let server = Served::start(&env, &[]);
        runtime().block_on(async {
            for (lifecycle, expected) in [
                (
                    ClientLifecycleMode::Initialize,
                    ProtocolVersion::V_2025_11_25,
                ),
                (
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                    ProtocolVersion::V_2026_07_28,
                ),
            ] {
                let session = client_with(&server, &b, lifecycle).await;
                assert_eq!(session.peer_info().unwrap().protocol_version, expected);
                let inbox = call(&session, "inbox", json!({})).await;
                assert_eq!(
                    inbox.structured_content.unwrap()["discussions"][0]["discussion_id"],
                    dsc.as_str()
                );
                session.cancel().await.unwrap();
            }
        });
    }

    async fn call(
        client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
        tool: &str,
        arguments: Value,
    ) -> rmcp::model::CallToolResult {
        let Value::Object(arguments) = arguments else {
            panic!()
        };
        client
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
            .await
            .expect("a tool call is never a protocol error")
    }

    #[test]
    fn the_rust_sdk_runs_a_whole_discussion_over_streamable_http_as_its_tokens_agent() {
        let env = Env::new();
        env.fleet();
        let (a, b) = (token(&env, &["agent-a"]), token(&env, &["agent-b"]));
        let server = Served::start(&env, &[]);
        runtime().block_on(async {
            let for_a = client(&server, &a).await;
            let for_b = client(&server, &b).await;
            // As with `mcp --agent`: the token's agent stands in for
            // inbox's agent_id, which is then optional.
            let tools = for_a.list_all_tools().await.unwrap();
            let inbox = tools.iter().find(|t| t.name == "inbox").unwrap();
            assert_eq!(inbox.input_schema["required"], json!([]), "{:?}", inbox.input_schema);

            let asked = call(&for_a, "ask_peer", json!({"from_agent_id": "agent-a", "to_agent_id": "agent-b", "fleet_id": "fleet-alpha",
                "payload": "{\"body\":\"Refactor auth module?\"}", "max_tokens": 5000, "max_cost_usd": 0.5})).await;
            assert_eq!(asked.is_error, Some(false), "{asked:?}");
            let asked = asked.structured_content.unwrap();
            let dsc = asked["discussion_id"].as_str().unwrap();
            let head = asked["head_message_id"].as_str().unwrap();
            // b cannot ask as a; b is woken and answers.
            let spoofed = call(&for_b, "ask_peer", json!({"from_agent_id": "agent-a", "to_agent_id": "agent-b",
                "fleet_id": "fleet-alpha", "payload": "{}"})).await;
            assert_eq!(spoofed.is_error, Some(true));
            assert_eq!(spoofed.structured_content.unwrap()["error"]["code"], "agent_mismatch");
            let inbox = call(&for_b, "inbox", json!({})).await.structured_content.unwrap();
            assert_eq!(inbox["discussions"][0]["discussion_id"], dsc);
            let woke = call(&for_b, "wake_agent", json!({"agent_id": "agent-b", "discussion_id": dsc,
                "expected_head_message_id": head})).await.structured_content.unwrap();
            let attempt = woke["attempt"]["attempt_id"].as_str().unwrap();
            let replied = call(&for_b, "reply_discussion", json!({"agent_id": "agent-b", "discussion_id": dsc, "attempt_id": attempt,
                "reply_to_message_id": head, "type": "result", "payload": "{\"body\":\"yes\"}", "close": true,
                "usage": {"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.012}})).await;
            assert_eq!(replied.is_error, Some(false), "{replied:?}");
            let shown = call(&for_a, "get_discussion", json!({"discussion_id": dsc})).await.structured_content.unwrap();
            assert_eq!(shown["status"], "closed");
            assert_eq!(shown["policy"]["max_cost_usd"], json!(0.5));
            assert_eq!(shown["spend"], json!({"input_tokens": 1200, "output_tokens": 300, "tokens": 1500, "cost_usd": 0.012}));
            assert_eq!(shown, env.show(dsc));
            for_a.cancel().await.unwrap();
            for_b.cancel().await.unwrap();
        });
        // Every record a call wrote names the token that vouched for it.
        let (a_id, b_id) = (token_id_of(&env, "agent-a"), token_id_of(&env, "agent-b"));
        let mut vouched = 0;
        for record in env.records() {
            let expected = match (record["kind"].as_str(), record["from_agent_id"].as_str()) {
                (Some("message"), Some("agent-a")) => &a_id,
                (Some("message" | "receipt"), _) => &b_id,
                _ => continue,
            };
            assert_eq!(record["token_id"], expected.as_str(), "{record}");
            vouched += 1;
        }
        assert_eq!(
            vouched, 4,
            "the root, the reservation, the reply, its receipt"
        );
        // Without a token the endpoint answers 401, as the others do.
        let refused = server.post(
            "/mcp",
            None,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        );
        assert_eq!(refused.status, 401);
        assert_eq!(refused.header("www-authenticate"), Some("Bearer"));
        assert_eq!(server.stop().0, 0);
    }
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
fn an_open_stream_ends_at_its_tokens_revocation_and_carries_nothing_written_after() {
    let env = Env::new();
    env.fleet();
    let (dsc, _) = env.ask(&[]);
    let b = token(&env, &["agent-b"]);
    let server = Served::start(&env, &[]);
    let mut events = server.events("/v1/events", &b, None);
    assert_eq!(events.next().unwrap().data["discussion_id"], dsc.as_str());
    env.ok(&["token", "revoke", &token_id_of(&env, "agent-b")]);
    let (after, _) = env.ask(&[]);
    let started = Instant::now();
    while let Some(event) = events.next() {
        assert_ne!(
            event.data["discussion_id"],
            after.as_str(),
            "a record written after the revocation was sent"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the stream ended after {:?}",
        started.elapsed()
    );
    // And the token opens no new one.
    assert_eq!(server.get("/v1/events", Some(&b)).status, 401);
}

#[test]
fn an_open_stream_ends_within_a_second_of_its_tokens_expiry() {
    let mut env = Env::new();
    env.fleet();
    env.ask(&[]);
    let b = token(&env, &["agent-b", "--expires-in-hours", "1"]);
    // The server's clock starts 1.5 s before the expiry.
    env.advance(3_600_000 - 1_500);
    let server = Served::start(&env, &[]);
    let mut events = server.events("/v1/events", &b, None);
    let opened = Instant::now();
    assert!(events.next().is_some());
    while events.next().is_some() {}
    let ended = opened.elapsed();
    assert!(
        ended > Duration::from_millis(500) && ended < Duration::from_millis(3_500),
        "the stream ended after {ended:?}"
    );
}

/// An event stream's request on a connection of its own, the answer's
/// status line and headers read.
fn open_raw_stream(server: &Served, token: &str) -> (u16, Vec<String>, std::net::TcpStream) {
    let mut stream = server.connect();
    write!(
        stream,
        "GET /v1/events HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {token}\r\n\r\n"
    )
    .unwrap();
    let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
    let mut status = String::new();
    std::io::BufRead::read_line(&mut reader, &mut status).unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        headers.push(line.trim_end().to_ascii_lowercase());
    }
    let code = status.split(' ').nth(1).unwrap().parse().unwrap();
    (code, headers, stream)
}

#[test]
fn event_streams_are_bounded_per_token_and_per_server_with_a_time_to_come_back() {
    let env = Env::new();
    env.fleet();
    let a = token(&env, &["agent-a"]);
    let b = token(&env, &["agent-b"]);
    let c = token(&env, &["agent-c"]);
    let server = Served::start(
        &env,
        &["--max-streams", "3", "--max-streams-per-token", "2"],
    );
    let mut open = Vec::new();
    for _ in 0..2 {
        let (code, _, stream) = open_raw_stream(&server, &b);
        assert_eq!(code, 200);
        open.push(stream);
    }
    let (code, headers, _) = open_raw_stream(&server, &b);
    assert_eq!(code, 429, "{headers:?}");
    assert!(
        headers.contains(&"retry-after: 1".to_owned()),
        "{headers:?}"
    );
    let refused = server.get("/v1/events", Some(&b));
    assert_eq!(refused.code(), "too_many_streams");
    let (code, _, stream) = open_raw_stream(&server, &a);
    assert_eq!(code, 200);
    open.push(stream);
    let (code, headers, _) = open_raw_stream(&server, &c);
    assert_eq!(code, 503, "{headers:?}");
    assert!(
        headers.contains(&"retry-after: 1".to_owned()),
        "{headers:?}"
    );
    let busy = server.get("/v1/events", Some(&c));
    assert_eq!(busy.code(), "server_busy");
    assert_eq!(busy.json()["error"]["details"]["reason"], "max_streams");
    // The other endpoints answer all the while.
    assert_eq!(server.get("/healthz", None).status, 200);
    assert_eq!(server.get("/v1/inbox", Some(&c)).status, 200);
    // A stream closed gives its slot back.
    drop(open.pop());
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let (code, _, stream) = open_raw_stream(&server, &c);
        if code == 200 {
            drop(stream);
            break;
        }
        assert!(Instant::now() < until, "the slot never came back");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The server's thread count, from /proc.
fn threads_of(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Opens `per_connection` event streams on each of `connections` HTTP/2
/// connections, each answered within 10 s, and holds them open on
/// `runtime` until `release` is sent: how many were opened (200) and
/// refused (429 with `Retry-After: 1`).
fn hold_http2_streams(
    runtime: &tokio::runtime::Runtime,
    port: u16,
    token: &str,
    (connections, per_connection): (usize, usize),
) -> ((usize, usize), tokio::sync::oneshot::Sender<()>) {
    let (counted, counts) = std::sync::mpsc::channel();
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let token = token.to_owned();
    runtime.spawn(async move {
        let (mut held, mut clients) = (Vec::new(), Vec::new());
        let (mut opened, mut refused) = (0, 0);
        for _ in 0..connections {
            let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .unwrap();
            let (mut client, connection) = h2::client::handshake(tcp).await.unwrap();
            tokio::spawn(connection);
            for _ in 0..per_connection {
                let request = ::http::Request::get(format!("http://127.0.0.1:{port}/v1/events"))
                    .header("authorization", format!("Bearer {token}"))
                    .body(())
                    .unwrap();
                client = client.ready().await.unwrap();
                let (response, _) = client.send_request(request, true).unwrap();
                let response = tokio::time::timeout(Duration::from_secs(10), response)
                    .await
                    .expect("every stream is answered at once")
                    .unwrap();
                match response.status().as_u16() {
                    200 => opened += 1,
                    429 => {
                        assert_eq!(response.headers()["retry-after"], "1");
                        refused += 1;
                    }
                    other => panic!("status {other}"),
                }
                held.push(response);
            }
            clients.push(client);
        }
        counted.send((opened, refused)).unwrap();
        let _ = released.await;
        drop((held, clients));
    });
    let counts = counts
        .recv_timeout(Duration::from_secs(60))
        .expect("the streams were opened");
    (counts, release)
}

/// `/healthz` and another agent's inbox, each answered 200 within a second.
fn answers_at_once(server: &Served, other: &str) {
    for (path, token) in [("/healthz", None), ("/v1/inbox", Some(other))] {
        let started = Instant::now();
        let answer = server.get(path, token);
        assert_eq!(answer.status, 200, "{path}: {}", answer.text());
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{path} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn six_hundred_http2_streams_on_three_connections_leave_the_server_answering() {
    let env = Env::new();
    env.fleet();
    env.ask(&[]);
    let b = token(&env, &["agent-b"]);
    let c = token(&env, &["agent-c"]);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // At the defaults, one token's 600 streams on 3 connections: 8 open,
    // the rest refused at once, and the server answers everyone else.
    let server = Served::start(&env, &["--max-connections", "8"]);
    let (counts, release) = hold_http2_streams(&runtime, server.port, &b, (3, 200));
    assert_eq!(counts, (8, 592), "the token's bound holds");
    answers_at_once(&server, &c);
    let _ = release.send(());
    drop(server);
    // With the bounds raised, 600 streams open at once: the server holds
    // no thread a stream, and still answers at once.
    let server = Served::start(
        &env,
        &[
            "--max-connections",
            "8",
            "--max-streams",
            "600",
            "--max-streams-per-token",
            "600",
        ],
    );
    let idle_threads = threads_of(server.pid());
    let (counts, release) = hold_http2_streams(&runtime, server.port, &b, (3, 200));
    assert_eq!(counts, (600, 0));
    answers_at_once(&server, &c);
    // Opened one after another, each on a thread of the blocking pool for
    // its token check and first read, which the pool keeps a while: a few
    // threads, where a thread a stream held all 600 open.
    let opened_threads = threads_of(server.pid());
    assert!(
        opened_threads <= idle_threads + 16,
        "{opened_threads} threads with 600 streams open, {idle_threads} idle"
    );
    // An append wakes all 600 at once: they read four at a time, on a
    // few threads of the blocking pool (a thread finishing a read is not
    // always idle yet when the next read starts, so the pool may grow by
    // a few more; a thread a stream would be 600).
    env.ask(&[]);
    let mut most = threads_of(server.pid());
    let until = Instant::now() + Duration::from_millis(1_500);
    while Instant::now() < until {
        most = most.max(threads_of(server.pid()));
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        most <= opened_threads + 16,
        "{most} threads with 600 streams open and woken, {opened_threads} before they woke"
    );
    answers_at_once(&server, &c);
    let _ = release.send(());
}

#[test]
fn a_foreign_host_or_origin_is_refused_as_the_transport_says_and_mcp_get_is_405() {
    let env = Env::new();
    env.fleet();
    let a = token(&env, &["agent-a"]);
    let server = Served::start(&env, &["--allowed-origin", "https://console.example"]);
    let own = format!("127.0.0.1:{}", server.port);
    let own_origin = format!("http://{own}");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let mcp = |host: &str, origin: Option<&str>| {
        let mut headers = vec![
            ("host", host),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ];
        if let Some(origin) = origin {
            headers.push(("origin", origin));
        }
        server.request(
            "POST",
            "/mcp",
            Some(&a),
            &headers,
            Some(initialize.as_bytes()),
        )
    };
    let before = env.ledger_bytes();
    // DNS rebinding: a page of evil.example.com pointed at this server.
    for (host, origin) in [
        ("evil.example.com", Some("http://evil.example.com")),
        ("evil.example.com:8470", None),
        (own.as_str(), Some("http://evil.example.com")),
        (own.as_str(), Some("null")),
    ] {
        let answer = mcp(host, origin);
        refused(&env, &before, &answer, 403, "forbidden");
    }
    // The server's own, a loopback name, no Origin at all, a configured one.
    for (host, origin) in [
        (own.as_str(), Some(own_origin.as_str())),
        ("localhost", None),
        (own.as_str(), None),
        (own.as_str(), Some("https://console.example")),
    ] {
        let answer = mcp(host, origin);
        assert_eq!(answer.status, 200, "{host} {origin:?}: {}", answer.text());
    }
    // The other endpoints are guarded alike; the health check is not.
    let listed = server.request(
        "GET",
        "/v1/discussions",
        Some(&a),
        &[("host", "evil.example.com")],
        None,
    );
    assert_eq!(listed.status, 403, "{}", listed.text());
    let health = server.request(
        "GET",
        "/healthz",
        None,
        &[("host", "evil.example.com")],
        None,
    );
    assert_eq!(health.status, 200);
    // GET and DELETE /mcp: 405 with the contract's error object.
    for method in ["GET", "DELETE"] {
        let answer = server.request(method, "/mcp", Some(&a), &[], None);
        assert_eq!(answer.status, 405, "{}", answer.text());
        assert_eq!(answer.code(), "method_not_allowed");
        assert_eq!(answer.header("allow"), Some("POST"));
    }
    // A bad --allowed-origin is refused at start.
    let out = env.run(&[
        "--json",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--allowed-origin",
        "console.example/path",
    ]);
    assert_eq!(out.status, 3, "{}", out.stderr);
    assert_eq!(out.error()["details"]["field"], "allowed_origin");
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

#[test]
fn the_event_stream_tells_of_a_deadman_no_record_says() {
    let env = Env::new();
    env.fleet();
    let (dsc, root) = env.ask(&["--turn-timeout-ms", "1000"]);
    env.wake(&dsc, "agent-b", &root);
    let b = token(&env, &["agent-b"]);
    let server = Served::start(&env, &[]);
    let mut stream = server.connect();
    write!(
        stream,
        "GET /v1/events HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {b}\r\n\r\n"
    )
    .unwrap();
    let started = Instant::now();
    let mut reader = std::io::BufReader::new(stream);
    let mut status_block = Vec::new();
    loop {
        let mut line = String::new();
        assert!(std::io::BufRead::read_line(&mut reader, &mut line).unwrap() > 0);
        let line = line.trim_end().to_owned();
        if line == "event: status" {
            status_block.push(line);
            let mut data = String::new();
            std::io::BufRead::read_line(&mut reader, &mut data).unwrap();
            status_block.push(data.trim_end().to_owned());
            break;
        }
        // An `id:` line right before it would belong to a record.
        if line.starts_with("id: ") {
            status_block.clear();
        }
    }
    assert!(
        started.elapsed() < Duration::from_millis(3_000),
        "told after {:?}",
        started.elapsed()
    );
    let data: Value =
        serde_json::from_str(status_block[1].strip_prefix("data: ").unwrap()).unwrap();
    assert_eq!(
        (
            data["event"].as_str(),
            data["discussion_id"].as_str(),
            data["status"].as_str()
        ),
        (Some("status"), Some(dsc.as_str()), Some("deadman"))
    );
}

#[test]
fn a_token_issued_while_the_server_runs_opens_a_stream_at_once() {
    let env = Env::new();
    env.fleet();
    let (dsc, _) = env.ask(&[]);
    let server = Served::start(&env, &[]);
    // The server's watcher reads the ledger at once when it starts (and
    // every 100 ms it changes): give it time to have read it before this
    // token existed, as a long-running server has.
    server.get("/healthz", None);
    std::thread::sleep(Duration::from_millis(300));
    let b = token(&env, &["agent-b"]);
    let mut events = server.events("/v1/events", &b, None);
    let first = events.next().expect("the stream goes on");
    assert_eq!(first.data["discussion_id"], dsc.as_str());
}
