//! Approval gates (`gate set|clear|list`, `approve`, `deny`, `approvals`,
//! `wake --wait-approval`, `GET/POST /v1/approvals`): a wake a gate
//! covers reserves nothing, charges nothing and records one request; a
//! grant lets exactly one reservation of that head through; a denial or
//! an expiry refuses it. On a file and, with the suite's PostgreSQL run,
//! on a database.

use crate::common::http::Served;
use crate::common::{Env, reply_args, wake_argv};
use crate::serve::token;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn head_of(env: &Env, dsc: &str) -> (String, String) {
    let show = env.show(dsc);
    (
        show["head"]["message_id"].as_str().unwrap().to_owned(),
        show["head"]["to_agent_id"].as_str().unwrap().to_owned(),
    )
}

/// Wakes the head's recipient and answers with a question: one turn.
fn turn(env: &Env, dsc: &str, usage: Option<&str>) {
    let (head, agent) = head_of(env, dsc);
    let attempt = env.wake(dsc, &agent, &head);
    let mut args = reply_args(dsc, &agent, &attempt, &head, "question", r#"{"body":"ok"}"#);
    if let Some(usage) = usage {
        args.extend(["--usage", usage]);
    }
    env.ok(&args);
}

/// A wake of the head refused as `approval_required`: its approval id.
/// Checks that it wrote at most the request (`writes`: whether it must).
fn refused_for_approval(env: &Env, dsc: &str, writes: bool) -> String {
    let (head, agent) = head_of(env, dsc);
    let before = env.records().len();
    let out = env.run(&wake_argv(&agent, dsc, &head, &[], true));
    assert_eq!(out.status, 6, "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    let error = out.error();
    assert_eq!(error["code"], "approval_required", "{error}");
    assert_eq!(error["details"]["discussion_id"], dsc);
    let records = env.records();
    assert_eq!(records.len(), before + usize::from(writes), "{error}");
    let id = error["details"]["approval_id"].as_str().unwrap().to_owned();
    if writes {
        let request = records.last().unwrap();
        assert_eq!(request["receipt"], "discussion.approval.requested");
        assert_eq!(request["id"], id.as_str());
        assert_eq!(request["head_message_id"], head.as_str());
        assert_eq!(request["agent_id"], agent.as_str());
    }
    assert!(
        error["hints"]
            .to_string()
            .contains(&format!("discuss approve {id}")),
        "{error}"
    );
    id
}

fn receipts(env: &Env, name: &str) -> Vec<Value> {
    env.records()
        .into_iter()
        .filter(|r| r["receipt"] == name)
        .collect()
}

#[test]
fn a_gated_wake_reserves_nothing_charges_nothing_and_asks_once() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&[]);
    env.ok(&["gate", "set", "--agent", "agent-b", "--always"]);
    let id = refused_for_approval(&env, &dsc, true);
    // The same head again while pending: the same id, nothing written.
    assert_eq!(refused_for_approval(&env, &dsc, false), id);
    let show = env.show(&dsc);
    assert_eq!(show["status"], "open", "a pending approval is not a status");
    assert_eq!(show["turns_used"], 1);
    assert_eq!(show["attempts"].as_array().unwrap().len(), 0);
    let approval = &show["approval"];
    assert_eq!(approval["approval_id"], id.as_str());
    assert_eq!(approval["state"], "pending");
    assert_eq!(approval["turn"], 2);
    assert_eq!(approval["rule"]["scope"], json!({"agent": "agent-b"}));
    assert_eq!(approval["rule"]["always"], true);
    assert_eq!(approval["spend"], json!({"tokens": 0, "cost_usd": 0}));
    assert_eq!(approval["decided_at"], Value::Null);
    // The approval timeout (15 min) is past the conversation deadline
    // (5 min): the deadline comes first.
    assert_eq!(
        approval["expires_at"],
        show["policy"]["conversation_deadline_at"]
    );
    for list in [env.ok(&["list"]), env.ok(&["inbox", "--agent", "agent-b"])] {
        assert_eq!(list["discussions"][0]["awaiting_approval"], true, "{list}");
    }
    let pending = env.ok(&["approvals"]);
    assert_eq!(pending["approvals"][0]["approval_id"], id.as_str());
    assert_eq!(pending["approvals"][0]["discussion_id"], dsc.as_str());
    // A wake of another agent is not covered.
    env.ok(&["gate", "clear", "--agent", "agent-b"]);
    assert_eq!(env.ok(&["gate", "list"]), json!({"gates": []}));
    let (head, _) = head_of(&env, &dsc);
    env.wake(&dsc, "agent-b", &head);
}

#[test]
fn a_grant_lets_exactly_one_reservation_of_its_head_through() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&["--max-turns", "6"]);
    env.ok(&["gate", "set", "--agent", "agent-b", "--always"]);
    let id = refused_for_approval(&env, &dsc, true);
    let granted = env.ok(&["approve", &id, "--reason", "fine"]);
    assert_eq!(granted["state"], "granted");
    assert_eq!(granted["decided_by"], "tester");
    assert_eq!(granted["reason"], "fine");
    assert_eq!(granted["discussion_id"], dsc.as_str());
    // Deciding twice.
    env.fails(&["approve", &id], "approval_not_pending", 5);
    env.fails(&["deny", &id, "--reason", "no"], "approval_not_pending", 5);
    let (head, _) = head_of(&env, &dsc);
    let attempt = env.wake(&dsc, "agent-b", &head);
    let reserved = receipts(&env, "discussion.attempt.reserved");
    assert_eq!(reserved[0]["approval_id"], id.as_str());
    assert_eq!(reserved[0]["attempt_id"], attempt.as_str());
    env.ok(&reply_args(
        &dsc,
        "agent-b",
        &attempt,
        &head,
        "question",
        r#"{"body":"more?"}"#,
    ));
    // agent-a is not gated; the next head for agent-b asks anew.
    turn(&env, &dsc, None);
    let again = refused_for_approval(&env, &dsc, true);
    assert_ne!(again, id, "a grant is used once");
    assert_eq!(env.show(&dsc)["approval"]["state"], "pending");
}

#[test]
fn a_denial_refuses_that_head_and_leaves_the_discussion_as_it_is() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&[]);
    env.ok(&["gate", "set", "--always"]);
    let id = refused_for_approval(&env, &dsc, true);
    // A denial needs its reason.
    let out = env.run(&["deny", &id]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    env.fails(&["deny", &id, "--reason", "  "], "invalid_argument", 3);
    // A kill-switch never blocks a decision.
    env.ok(&["kill-switch", "on", "--reason", "incident"]);
    let denied = env.ok(&["deny", &id, "--reason", "too costly"]);
    assert_eq!(denied["state"], "denied");
    assert_eq!(denied["decided_by"], "tester");
    env.ok(&["kill-switch", "off"]);
    let (head, agent) = head_of(&env, &dsc);
    let error = env.fails(
        &wake_argv(&agent, &dsc, &head, &[], false),
        "approval_denied",
        6,
    );
    assert_eq!(error["details"]["approval_id"], id.as_str());
    assert_eq!(error["details"]["reason"], "too costly");
    assert_eq!(env.status(&dsc), "open");
    assert_eq!(env.show(&dsc)["approval"]["state"], "denied");
    // An id nobody recorded, and one that is not an id at all.
    env.fails(
        &["approve", "rcp_0000000000000000000000000000dead"],
        "unknown_approval",
        4,
    );
    env.fails(&["approve", "bogus"], "invalid_id", 3);
    env.fails(&["approve", &id], "approval_not_pending", 5);
}

#[test]
fn an_undecided_request_expires_reads_as_denied_and_the_next_wake_asks_again() {
    let mut env = Env::new();
    let (dsc, _) = env.discussion(&[]);
    env.ok(&[
        "gate",
        "set",
        "--fleet",
        "fleet-alpha",
        "--from-turn",
        "2",
        "--approval-timeout-ms",
        "1000",
    ]);
    let id = refused_for_approval(&env, &dsc, true);
    env.advance(2_000);
    let show = env.show(&dsc);
    assert_eq!(show["approval"]["state"], "expired");
    assert_eq!(
        env.ok(&["list"])["discussions"][0]["awaiting_approval"],
        false
    );
    assert_eq!(env.ok(&["approvals"]), json!({"approvals": []}));
    env.fails(&["approve", &id], "approval_not_pending", 5);
    let again = refused_for_approval(&env, &dsc, true);
    assert_ne!(again, id);
    let expired = env.ok(&["approvals", "--state", "expired"]);
    assert_eq!(expired["approvals"][0]["approval_id"], id.as_str());
}

#[test]
fn the_conditions_of_a_rule_and_their_ranges() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&["--max-turns", "8"]);
    for (args, code, exit) in [
        (vec!["gate", "set", "--agent", "agent-b"], "usage", 2),
        (
            vec![
                "gate",
                "set",
                "--agent",
                "agent-b",
                "--fleet",
                "fleet-alpha",
                "--always",
            ],
            "usage",
            2,
        ),
        (vec!["gate", "set", "--from-turn", "1"], "out_of_range", 3),
        (vec!["gate", "set", "--from-turn", "33"], "out_of_range", 3),
        (
            vec!["gate", "set", "--over-cost-usd", "0"],
            "out_of_range",
            3,
        ),
        (
            vec!["gate", "set", "--over-cost-usd", "-1"],
            "out_of_range",
            3,
        ),
        (vec!["gate", "set", "--over-tokens", "0"], "out_of_range", 3),
        (
            vec!["gate", "set", "--always", "--approval-timeout-ms", "999"],
            "out_of_range",
            3,
        ),
        (
            vec![
                "gate",
                "set",
                "--always",
                "--approval-timeout-ms",
                "86400001",
            ],
            "out_of_range",
            3,
        ),
    ] {
        env.fails(&args, code, exit);
    }
    // From turn 3, or once the discussion's spend reaches 1000 tokens.
    env.ok(&[
        "gate",
        "set",
        "--agent",
        "agent-b",
        "--from-turn",
        "5",
        "--over-tokens",
        "1000",
    ]);
    let gates = env.ok(&["gate", "list"]);
    let rule = &gates["gates"][0];
    assert_eq!(rule["scope"], json!({"agent": "agent-b"}));
    assert_eq!(rule["from_turn"], 5);
    assert_eq!(rule["over_tokens"], 1000);
    assert_eq!(rule["approval_timeout_ms"], 900_000);
    assert_eq!(rule["set_by"], "tester");
    // Turn 2 of agent-b: under both conditions.
    turn(
        &env,
        &dsc,
        Some(r#"{"input_tokens":600,"output_tokens":500}"#),
    );
    // Turn 3 is agent-a's: not covered.
    turn(&env, &dsc, None);
    // Turn 4 of agent-b: 1100 tokens spent.
    refused_for_approval(&env, &dsc, true);
    assert_eq!(
        env.show(&dsc)["approval"]["spend"],
        json!({"tokens": 1100, "cost_usd": 0})
    );
}

#[test]
fn ask_with_wake_peer_under_a_gate_creates_the_discussion_then_asks() {
    let env = Env::new();
    env.fleet();
    env.ok(&["gate", "set", "--agent", "agent-b", "--always"]);
    let args = crate::common::ask_args(&["--wake-peer"]);
    let mut all = vec!["--json"];
    all.extend_from_slice(&args);
    let out = env.run(&all);
    assert_eq!(out.status, 6, "{}", out.stderr);
    let error = out.error();
    assert_eq!(error["code"], "approval_required");
    let dsc = error["details"]["discussion_id"].as_str().unwrap();
    let show = env.show(dsc);
    assert_eq!(show["status"], "open");
    assert_eq!(show["approval"]["state"], "pending");
    assert_eq!(
        show["approval"]["approval_id"],
        error["details"]["approval_id"]
    );
    assert!(receipts(&env, "discussion.attempt.reserved").is_empty());
}

#[test]
fn wake_wait_approval_waits_for_the_grant_or_fails_closed_at_the_expiry() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&[]);
    env.ok(&["gate", "set", "--always", "--approval-timeout-ms", "60000"]);
    let (head, agent) = head_of(&env, &dsc);
    let waiter = env
        .command_std()
        .args(wake_argv(&agent, &dsc, &head, &["--wait-approval"], true))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    let id = loop {
        if let Some(request) = receipts(&env, "discussion.approval.requested").first() {
            break request["id"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < until, "the waiting wake asked");
        std::thread::yield_now();
    };
    env.ok(&["approve", &id]);
    let out = waiter.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let woken: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(woken["attempt"]["state"], "reserved");
    assert_eq!(
        receipts(&env, "discussion.attempt.reserved")[0]["approval_id"],
        id.as_str()
    );

    // Nobody decides within a second: the waiting wake is refused.
    let env = Env::new();
    let (dsc, _) = env.discussion(&[]);
    env.ok(&["gate", "set", "--always", "--approval-timeout-ms", "1000"]);
    let (head, agent) = head_of(&env, &dsc);
    let out = env.run(&wake_argv(&agent, &dsc, &head, &["--wait-approval"], true));
    assert_eq!(out.status, 6, "{}", out.stderr);
    let error = out.error();
    assert_eq!(error["code"], "approval_denied", "{error}");
    assert_eq!(error["details"]["reason"], "expired");
    assert!(receipts(&env, "discussion.attempt.reserved").is_empty());
    assert_eq!(receipts(&env, "discussion.approval.requested").len(), 1);
}

#[test]
fn over_http_only_an_operator_token_lists_and_decides() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&[]);
    env.ok(&["gate", "set", "--always"]);
    let operator = token(&env, &["alice", "--operator"]);
    let agent = token(&env, &["agent-b"]);
    let server = Served::start(&env, &[]);
    let (head, _) = head_of(&env, &dsc);
    // A wake through the tools: 409, the request recorded.
    let wake = server.post(
        "/v1/tools/wake_agent",
        Some(&agent),
        &json!({"agent_id": "agent-b", "discussion_id": dsc, "expected_head_message_id": head}),
    );
    assert_eq!(wake.status, 409, "{:?}", wake.body);
    let refusal = wake.json();
    assert_eq!(refusal["error"]["code"], "approval_required");
    let id = refusal["error"]["details"]["approval_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // An agent token learns nothing and decides nothing.
    let before = env.ledger_bytes();
    assert_eq!(server.get("/v1/approvals", Some(&agent)).status, 403);
    let post = server.post(
        &format!("/v1/approvals/{id}"),
        Some(&agent),
        &json!({"decision": "grant"}),
    );
    assert_eq!(post.status, 403);
    assert_eq!(env.ledger_bytes(), before);
    let listed = server.get("/v1/approvals?state=pending", Some(&operator));
    assert_eq!(listed.status, 200);
    assert_eq!(listed.json()["approvals"][0]["approval_id"], id.as_str());
    for (body, status) in [
        (json!({"decision": "maybe"}), 400),
        (json!({"decision": "deny"}), 400),
        (json!({"decision": "grant", "extra": 1}), 400),
    ] {
        let refused = server.post(&format!("/v1/approvals/{id}"), Some(&operator), &body);
        assert_eq!(refused.status, status, "{body}: {:?}", refused.body);
    }
    assert_eq!(env.ledger_bytes(), before);
    let unknown = server.post(
        "/v1/approvals/rcp_0000000000000000000000000000dead",
        Some(&operator),
        &json!({"decision": "grant"}),
    );
    assert_eq!(unknown.status, 404);
    let decided = server.post(
        &format!("/v1/approvals/{id}"),
        Some(&operator),
        &json!({"decision": "grant", "reason": "ok"}),
    );
    assert_eq!(decided.status, 200, "{:?}", decided.body);
    assert_eq!(decided.json()["state"], "granted");
    let grant = receipts(&env, "discussion.approval.granted");
    assert_eq!(grant[0]["approval_id"], id.as_str());
    let operator_id = env.ok(&["token", "list"])["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["agent_id"] == "alice")
        .unwrap()["token_id"]
        .clone();
    assert_eq!(grant[0]["token_id"], operator_id);
    let again = server.post(
        &format!("/v1/approvals/{id}"),
        Some(&operator),
        &json!({"decision": "deny", "reason": "late"}),
    );
    assert_eq!(again.status, 409);
    assert_eq!(again.json()["error"]["code"], "approval_not_pending");
}

#[test]
fn a_decision_of_a_request_that_is_not_pending_is_a_finding_never_invalid() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&[]);
    env.ok(&["gate", "set", "--always"]);
    let id = refused_for_approval(&env, &dsc, true);
    env.ok(&["approve", &id]);
    // Another tool grants it again, and grants a request nobody made.
    let line = |approval: &str, n: u32| {
        format!(
            "{}\n",
            json!({"v": 1, "kind": "receipt", "id": format!("rcp_0000000000000000000000000000000{n}"),
                "at_ms": env.now_ms + 5, "by": "other-tool",
                "receipt": "discussion.approval.granted", "discussion_id": dsc,
                "approval_id": approval})
        )
    };
    env.append_raw(&(line(&id, 1) + &line("rcp_00000000000000000000000000000bad", 2)));
    let show = env.show(&dsc);
    assert_eq!(show["status"], "open");
    let findings = show["integrity_findings"].as_array().unwrap();
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert!(
        findings
            .iter()
            .all(|f| f["kind"] == "contradictory_approval")
    );
    let out = env.run(&["--json", "verify"]);
    assert_eq!(out.status, 7, "{}", out.stdout);
    // The grant still lets its one reservation through.
    let (head, _) = head_of(&env, &dsc);
    env.wake(&dsc, "agent-b", &head);
}

fn example(name: &str) -> String {
    format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn deliver(env: &Env, command: &[&str]) -> Value {
    let mut args = vec!["--json", "escalations", "deliver", "--"];
    args.extend_from_slice(command);
    let out = env.run(&args);
    assert!(out.status == 0 || out.status == 8, "{}", out.stderr);
    let mut pass = out.json();
    pass["status"] = out.status.into();
    pass
}

fn pass(delivered: u64, failed: u64, pending: u64, status: u64) -> Value {
    json!({"delivered": delivered, "failed": failed, "pending": pending,
        "next_attempt_at": null, "status": status})
}

#[test]
fn a_pending_request_is_handed_to_a_person_once_with_the_commands_that_decide_it() {
    let mut env = Env::new();
    let (dsc, _) = env.discussion(&[]);
    env.ok(&["gate", "set", "--agent", "agent-b", "--always"]);
    let id = refused_for_approval(&env, &dsc, true);

    // The chat example posts one message with both commands in it.
    let (url, server) = crate::common::http::one_post_receiver();
    assert_eq!(
        deliver(&env, &[&example("deliver-chat.sh"), &url]),
        pass(1, 0, 0, 0)
    );
    let (head, body) = server.join().unwrap();
    let posted: Value = serde_json::from_slice(&body).unwrap();
    let text = posted["text"].as_str().unwrap();
    assert!(
        text.starts_with("Approval needed: turn 2 of agent-b"),
        "{text}"
    );
    assert!(
        text.contains(&format!("Grant: discuss approve {id}\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!("Deny:  discuss deny {id} --reason")),
        "{text}"
    );
    assert!(text.contains(&format!("POST /v1/approvals/{id}")), "{text}");
    let key = format!("idempotency-key: {id}\r\n");
    assert!(
        head.iter().any(|h| h.eq_ignore_ascii_case(&key)),
        "{head:?}"
    );
    // Recorded once, with the escalation's receipts naming the request.
    for name in [
        "discussion.escalation.claimed",
        "discussion.escalation.delivered",
    ] {
        let written = receipts(&env, name);
        assert_eq!(written.len(), 1, "{name}");
        assert_eq!(written[0]["escalation_receipt_id"], id.as_str());
    }
    let shown = env.show(&dsc);
    assert_eq!(shown["status"], "open");
    assert_eq!(shown["approval"]["state"], "pending");
    assert_eq!(shown["approval"]["delivery"]["state"], "delivered");
    // Never handed out again: `false` would fail a delivery.
    assert_eq!(deliver(&env, &["false"]), pass(0, 0, 0, 0));

    // The object on stdin: kind, the request, and how to decide it.
    let (second, _) = env.ask(&[]);
    let second_id = refused_for_approval(&env, &second, true);
    let file = env.dir.path().join("handed.jsonl");
    let file = file.to_str().unwrap();
    assert_eq!(
        deliver(&env, &[&example("deliver-file.sh"), file]),
        pass(1, 0, 0, 0)
    );
    let handed: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(handed["kind"], "approval");
    assert_eq!(handed["approval_id"], second_id.as_str());
    assert_eq!(handed["receipt_id"], second_id.as_str());
    assert_eq!(handed["discussion_id"], second.as_str());
    assert_eq!(handed["state"], "pending");
    assert_eq!(handed["turn"], 2);
    assert_eq!(handed["participants"], json!(["agent-a", "agent-b"]));
    assert_eq!(handed["rule"]["always"], true);
    assert_eq!(handed["spend"], json!({"tokens": 0, "cost_usd": 0}));
    assert_eq!(
        handed["approve_command"],
        format!("discuss approve {second_id}")
    );
    assert_eq!(handed["http"]["path"], format!("/v1/approvals/{second_id}"));

    // A request decided before it is handed out is not handed out; one
    // whose delivery failed and is decided before its retry neither.
    let (third, _) = env.ask(&[]);
    let third_id = refused_for_approval(&env, &third, true);
    env.ok(&["approve", &third_id]);
    let (fourth, _) = env.ask(&[]);
    let fourth_id = refused_for_approval(&env, &fourth, true);
    let failed = deliver(&env, &["false"]);
    assert_eq!(
        (&failed["delivered"], &failed["failed"], &failed["pending"]),
        (&json!(0), &json!(1), &json!(1)),
        "{failed}"
    );
    assert_eq!(failed["status"], 8);
    env.ok(&["deny", &fourth_id, "--reason", "not today"]);
    env.advance(60_000);
    assert_eq!(deliver(&env, &["false"]), pass(0, 0, 0, 0));
    let claims: Vec<Value> = receipts(&env, "discussion.escalation.claimed");
    assert!(
        !claims
            .iter()
            .any(|c| c["escalation_receipt_id"] == third_id.as_str()),
        "{claims:?}"
    );
    assert_eq!(
        claims
            .iter()
            .filter(|c| c["escalation_receipt_id"] == fourth_id.as_str())
            .count(),
        1
    );
}

/// The console's overview opens with the requests that wait for a person;
/// Grant and Deny record what `approve` and `deny` would, with the
/// operator's token as the author; a request made meanwhile shows without
/// a reload; a foreign origin, an agent, a denial without a reason and a
/// second decision change nothing.
#[test]
fn the_console_overview_opens_with_what_needs_a_person_and_grants_or_denies() {
    use crate::common::browser::Browser;
    use crate::console::{get_page, listening, post_form, sign_in, token_id_of};
    const WITHIN: Duration = Duration::from_secs(10);
    let env = Env::new();
    let (first, _) = env.discussion(&[]);
    env.ok(&["gate", "set", "--agent", "agent-b", "--from-turn", "2"]);
    let first_id = refused_for_approval(&env, &first, true);
    let ops = token(&env, &["ops", "--operator"]);
    let ops_id = token_id_of(&env, "ops");
    let agent = token(&env, &["agent-a"]);
    let server = Served::start(&env, &[]);
    let Some(browser) = Browser::start(1280, 800) else {
        return;
    };
    sign_in(&browser, &server, &ops);
    listening(&browser);
    let item = |id: &str| format!("#approvals li[data-approval-id='{id}']");
    let shown = |id: &str| format!("!!document.querySelector(\"{}\")", item(id));
    browser.wait_until(&shown(&first_id), WITHIN);
    // Before every other part of the page.
    assert_eq!(
        browser.eval("return document.querySelector('main section').id"),
        "approvals"
    );
    let text = browser.eval(&format!(
        "return document.querySelector(\"{}\").innerText",
        item(&first_id)
    ));
    let text = text.as_str().unwrap();
    assert!(text.contains("Turn 2 of agent-b"), "{text}");
    assert!(text.contains("(the gate asks from turn 2)"), "{text}");
    assert!(
        text.contains(&format!("discuss approve {first_id}")),
        "{text}"
    );
    // A request made now shows on the open page.
    let (second, _) = env.ask(&[]);
    let second_id = refused_for_approval(&env, &second, true);
    browser.wait_until(&shown(&second_id), WITHIN);
    browser.screenshot("approvals-1280x800");

    // Refusals change nothing: another origin, an agent's cookie, a
    // denial without a reason, an unknown id.
    let before = env.ledger_bytes();
    let grant = format!("approval_id={first_id}&decision=grant");
    let foreign = post_form(
        &server,
        "/console/approvals",
        Some(&ops),
        Some("http://evil.example"),
        &grant,
    );
    assert_eq!(foreign.status, 403);
    let by_agent = post_form(&server, "/console/approvals", Some(&agent), None, &grant);
    assert_eq!(by_agent.status, 403, "{}", by_agent.text());
    let page = get_page(&server, "/", &agent);
    assert!(
        !page.text().contains("id=\"approvals\""),
        "an agent learns nothing of them"
    );
    let unexplained = post_form(
        &server,
        "/console/approvals",
        Some(&ops),
        None,
        &format!("approval_id={first_id}&decision=deny&reason=+"),
    );
    assert_eq!(unexplained.status, 400);
    assert!(unexplained.text().contains("invalid_argument"));
    let unknown = post_form(
        &server,
        "/console/approvals",
        Some(&ops),
        None,
        "approval_id=rcp_00000000000000000000000000&decision=grant",
    );
    assert!([400, 404].contains(&unknown.status), "{}", unknown.text());
    assert_eq!(env.ledger_bytes(), before);

    // Grant from the page: recorded as `approve` would, by the token.
    browser.click(&format!(
        "{} button[aria-label='Grant {first_id}']",
        item(&first_id)
    ));
    browser.wait_until(
        &format!("location.pathname === '/' && !{}", shown(&first_id)),
        WITHIN,
    );
    let granted = receipts(&env, "discussion.approval.granted");
    assert_eq!(granted.len(), 1);
    assert_eq!(granted[0]["approval_id"], first_id.as_str());
    assert_eq!(granted[0]["token_id"], ops_id.as_str());
    assert_eq!(env.show(&first)["approval"]["state"], "granted");
    // Deny, with the reason typed on the page.
    browser.type_into(
        &format!("{} input[name=reason]", item(&second_id)),
        "not <this> turn",
    );
    browser.click(&format!(
        "{} button[aria-label='Deny {second_id}']",
        item(&second_id)
    ));
    browser.wait_until(
        &format!("location.pathname === '/' && !{}", shown(&second_id)),
        WITHIN,
    );
    let denied = receipts(&env, "discussion.approval.denied");
    assert_eq!(denied.len(), 1);
    assert_eq!(denied[0]["reason"], "not <this> turn");
    assert_eq!(denied[0]["token_id"], ops_id.as_str());
    browser.wait_until(
        "document.getElementById('approvals').innerText.includes('No approval waits for a person.')",
        WITHIN,
    );
    // A second decision is the CLI's conflict, as a page; nothing written.
    let before = env.ledger_bytes();
    let again = post_form(&server, "/console/approvals", Some(&ops), None, &grant);
    assert_eq!(again.status, 409, "{}", again.text());
    assert!(again.text().contains("approval_not_pending"));
    assert_eq!(env.ledger_bytes(), before);
}

/// Racing decisions of one request from separate processes: one wins, the
/// others are `approval_not_pending`, and one decision is recorded.
#[test]
fn racing_decisions_of_one_request_have_one_winner() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&[]);
    env.ok(&["gate", "set", "--agent", "agent-b", "--always"]);
    let id = refused_for_approval(&env, &dsc, true);
    let children: Vec<std::process::Child> = (0..8)
        .map(|i| {
            let mut args = vec!["--json".to_owned()];
            if i % 2 == 0 {
                args.extend(["approve".into(), id.clone()]);
            } else {
                args.extend([
                    "deny".into(),
                    id.clone(),
                    "--reason".into(),
                    format!("no {i}"),
                ]);
            }
            env.command_std()
                .args(&args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let ends: Vec<std::process::Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let codes: Vec<i32> = ends.iter().map(|o| o.status.code().unwrap()).collect();
    assert_eq!(codes.iter().filter(|c| **c == 0).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 5).count(), 7, "{codes:?}");
    for end in ends.iter().filter(|o| o.status.code() == Some(5)) {
        let error: Value = serde_json::from_slice(&end.stderr).unwrap();
        assert_eq!(error["error"]["code"], "approval_not_pending");
    }
    let decided = receipts(&env, "discussion.approval.granted").len()
        + receipts(&env, "discussion.approval.denied").len();
    assert_eq!(decided, 1);
    assert!(
        env.show(&dsc)["integrity_findings"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}
