//! `discuss serve`'s refusals: each bad request's contract error and HTTP
//! status, what a stranger or a bad token learns (nothing), and the health
//! check's secrets.

use super::*;

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

// One table of bad requests, each with the status and code it gets and
// the ledger checked unchanged after it: long, and read as a list.
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
    // /mcp alike: a chunked body over the limit, and bytes that are not
    // UTF-8, get the contract's error object, not the transport's text.
    let mcp_headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("transfer-encoding", "chunked"),
    ];
    let streamed = server.request("POST", "/mcp", Some(&b), &mcp_headers, Some(&chunked));
    refused(&env, &before, &streamed, 413, "payload_too_large");
    let latin1 = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"x\":\"\xe9\"}";
    let bytes = [
        format!("{:x}\r\n", latin1.len()).as_bytes(),
        latin1,
        b"\r\n0\r\n\r\n",
    ]
    .concat();
    let text = server.request("POST", "/mcp", Some(&b), &mcp_headers, Some(&bytes));
    let error = refused(&env, &before, &text, 415, "unsupported_media_type");
    assert!(
        error["message"].as_str().unwrap().contains("UTF-8"),
        "{error}"
    );
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
    // An agent nothing knows: refused unless the request asks for it.
    let typo = json!({"wakes_per_hour": 3, "agent_id": "agent-bb"});
    let unknown = server.post("/v1/quota", Some(&operator), &typo);
    refused(&env, &capped, &unknown, 404, "not_in_fleet");
    let hints = unknown.json()["error"]["hints"].to_string();
    assert!(
        hints.contains("allow_unknown_agent"),
        "the field is named: {hints}"
    );
    let asked = json!({"wakes_per_hour": 3, "agent_id": "agent-bb", "allow_unknown_agent": "yes"});
    refused(
        &env,
        &capped,
        &server.post("/v1/quota", Some(&operator), &asked),
        400,
        "invalid_argument",
    );
    let asked = json!({"wakes_per_hour": 3, "agent_id": "agent-bb", "allow_unknown_agent": true});
    let agents = ok(&server.post("/v1/quota", Some(&operator), &asked))["agents"].clone();
    assert!(
        agents
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["agent_id"] == "agent-bb"),
        "{agents}"
    );
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
    let before = env.ledger_bytes();
    let bad_switch = server.post(
        "/v1/kill-switch",
        Some(&operator),
        &json!({"engaged": "yes"}),
    );
    refused(&env, &before, &bad_switch, 400, "invalid_argument");
    let before = env.ledger_bytes();
    let mistyped = server.post(
        "/v1/kill-switch",
        Some(&operator),
        &json!({"engaged": true, "reason": "typo", "scope": {"fleet": "fleet-alpah"}}),
    );
    refused(&env, &before, &mistyped, 404, "unknown_fleet");
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
    let before = env.ledger_bytes();
    let bad_fleet = server.post(
        "/v1/fleets/fleet-beta/agents",
        Some(&operator),
        &json!({"add": ["-bad"]}),
    );
    refused(&env, &before, &bad_fleet, 400, "invalid_id");
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

/// A write whose body arrives after its token was revoked writes nothing:
/// the token is checked again under the writer's lock, in the step that
/// appends, whether the write is an operator endpoint's, a console
/// control's or an MCP tool call's. Each request's headers are taken (the
/// server asks for the body: its checks of the headers are behind it),
/// then the token is revoked, then the body comes.
#[test]
fn a_body_that_arrives_after_its_token_was_revoked_writes_nothing() {
    let env = Env::new();
    env.fleet();
    let (dsc, root) = env.ask(&[]);
    let server = Served::start(&env, &[]);
    let revoke = |env: &Env, agent: &str| {
        let id = token_id_of(env, agent);
        env.ok(&["token", "revoke", &id]);
        env.ledger_bytes()
    };
    let json = [("content-type", "application/json")];

    let ops = token(&env, &["ops", "--operator"]);
    let mut revoked = Vec::new();
    let late = server.request_with_late_body(
        "POST",
        "/v1/kill-switch",
        Some(&ops),
        &json,
        br#"{"engaged":true,"reason":"late"}"#,
        &mut || revoked = revoke(&env, "ops"),
    );
    refused(&env, &revoked, &late, 401, "unauthorized");

    let console = token(&env, &["ops2", "--operator"]);
    let cookie = format!("discuss_console={console}");
    let host = format!("127.0.0.1:{}", server.port);
    let origin = format!("http://{host}");
    let late = server.request_with_late_body(
        "POST",
        "/console/kill-switch",
        None,
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("host", &host),
            ("origin", &origin),
            ("cookie", &cookie),
        ],
        b"engaged=true&scope=global&reason=late",
        &mut || revoked = revoke(&env, "ops2"),
    );
    assert_eq!(late.status, 401, "{}", late.text());
    assert_eq!(env.ledger_bytes(), revoked);

    let b = token(&env, &["agent-b"]);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "wake_agent", "arguments": {"agent_id": "agent-b",
            "discussion_id": dsc, "expected_head_message_id": root}}})
    .to_string();
    let late = server.request_with_late_body(
        "POST",
        "/mcp",
        Some(&b),
        &[
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        call.as_bytes(),
        &mut || revoked = revoke(&env, "agent-b"),
    );
    assert!(late.text().contains("unauthorized"), "{}", late.text());
    assert_eq!(env.ledger_bytes(), revoked);
    assert_eq!(env.show(&dsc)["status"], "open", "no turn was reserved");
}
