//! `escalations` and `escalations deliver`: each escalation handed to a
//! command once, claimed under a lease, retried after a failure, never
//! twice at once across processes, and the example delivery scripts.

use crate::common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
        .display()
        .to_string()
}

/// A discussion a → b that b's one reply exhausts (two turns); returns it.
fn exhausted(env: &Env) -> String {
    let (dsc, root) = env.ask(&["--max-turns", "2"]);
    let att = env.wake(&dsc, "agent-b", &root);
    env.ok(&reply_args(
        &dsc,
        "agent-b",
        &att,
        &root,
        "question",
        r#"{"body":"more?"}"#,
    ));
    dsc
}

fn receipts(env: &Env, name: &str) -> Vec<Value> {
    env.records()
        .into_iter()
        .filter(|r| r["receipt"] == name)
        .collect()
}

fn deliver(env: &Env, command: &[&str]) -> Outcome {
    let mut args = vec!["--json", "escalations", "deliver", "--"];
    args.extend_from_slice(command);
    env.run(&args)
}

fn spawn(env: &Env, args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("discuss"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("DISCUSS_LEDGER", env.ledger())
        .env("DISCUSS_NOW", env.now_ms.to_string())
        .env("DISCUSS_ACTOR", "deliverer")
        .current_dir(env.dir.path())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_until(what: &str, done: impl Fn() -> bool) {
    let until = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_file_script_delivers_each_escalation_once_with_its_fields() {
    let env = Env::new();
    env.fleet();
    let first = exhausted(&env);
    let second = exhausted(&env);
    let listed = env.ok(&["escalations", "--pending"]);
    assert_eq!(listed["escalations"].as_array().unwrap().len(), 2);
    assert_eq!(listed["escalations"][0]["delivery"]["state"], "pending");
    let file = env.dir.path().join("escalations.jsonl");
    let out = deliver(&env, &[&example("deliver-file.sh"), file.to_str().unwrap()]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    // A one-shot pass with --json prints exactly one object.
    assert_eq!(
        out.json(),
        json!({"delivered": 2, "failed": 0, "pending": 0, "next_attempt_at": null})
    );
    // With nothing left, it still says so: one object, exit 0.
    let again = deliver(&env, &[&example("deliver-file.sh"), file.to_str().unwrap()]);
    assert_eq!(again.status, 0, "{}", again.stderr);
    assert_eq!(
        again.json(),
        json!({"delivered": 0, "failed": 0, "pending": 0, "next_attempt_at": null})
    );
    let human = env.run(&["escalations", "deliver", "--", "true"]);
    assert_eq!(
        (human.status, human.stdout.as_str()),
        (0, "nothing pending\n")
    );
    let lines: Vec<Value> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let mut ids: Vec<&str> = lines
        .iter()
        .map(|l| l["discussion_id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    let mut expected = vec![first.as_str(), second.as_str()];
    expected.sort_unstable();
    assert_eq!(ids, expected);
    let one = &lines[0];
    for field in [
        "receipt_id",
        "at",
        "reason",
        "turns_used",
        "spend",
        "participants",
        "fleet_id",
        "last_message",
    ] {
        assert!(one.get(field).is_some(), "{field} missing from {one}");
    }
    assert_eq!(one["reason"], "turns");
    assert_eq!(one["participants"], json!(["agent-a", "agent-b"]));
    assert_eq!(one["last_message"]["payload"], json!({"body": "more?"}));
    // Delivered is never handed out again, across runs.
    let again = deliver(&env, &[&example("deliver-file.sh"), file.to_str().unwrap()]);
    assert_eq!(again.status, 0, "{}", again.stderr);
    assert_eq!(again.json()["delivered"], 0);
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 2);
    assert_eq!(receipts(&env, "discussion.escalation.delivered").len(), 2);
    let listed = env.ok(&["escalations"]);
    assert_eq!(listed["escalations"][0]["delivery"]["state"], "delivered");
    assert_eq!(
        listed["escalations"][0]["delivery"]["delivered_by"],
        "tester"
    );
    assert!(
        env.ok(&["escalations", "--pending"])["escalations"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // For a person, "none pending" is not "none".
    assert_eq!(
        env.run(&["escalations", "--pending"]).stdout,
        "no pending escalations\n"
    );
    // They never change a status.
    assert_eq!(env.status(&first), "exhausted");
    assert!(
        env.show(&first)["integrity_findings"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_failed_delivery_is_recorded_and_retried_after_its_backoff() {
    let mut env = Env::new();
    env.fleet();
    let dsc = exhausted(&env);
    let out = deliver(
        &env,
        &[
            "sh",
            "-c",
            "cat >/dev/null; echo 'chat is down' >&2; exit 3",
        ],
    );
    assert_eq!(out.status, 8, "{}", out.stderr);
    assert!(out.stderr.contains("chat is down"));
    let failed = receipts(&env, "discussion.escalation.delivery_failed");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["exit_code"], 3);
    assert_eq!(failed[0]["detail"], "chat is down");
    let shown = env.show(&dsc);
    assert_eq!(shown["escalation"]["delivery"]["state"], "retrying");
    assert_eq!(shown["escalation"]["delivery"]["failures"], 1);
    // Within the backoff (1 s after the first failure) nothing is tried.
    let file = env.dir.path().join("out.jsonl");
    let script = example("deliver-file.sh");
    let early = deliver(&env, &[&script, file.to_str().unwrap()]);
    let failed_at = failed[0]["at_ms"].as_i64().unwrap();
    // A cron job tells "waiting for a retry" from "nothing to do".
    assert_eq!(early.status, 0, "{}", early.stderr);
    assert_eq!(
        early.json(),
        json!({"delivered": 0, "failed": 0, "pending": 1,
            "next_attempt_at": iso(failed_at + 1_000)})
    );
    let human = env.run(&[
        "escalations",
        "deliver",
        "--",
        &script,
        file.to_str().unwrap(),
    ]);
    assert_eq!(human.status, 0, "{}", human.stderr);
    assert!(
        human.stdout.starts_with(&format!(
            "1 waiting for its retry at {}",
            iso(failed_at + 1_000)
        )),
        "{}",
        human.stdout
    );
    // Past it, counted from the failure's own stamp (a pinned clock still
    // moves on while a process runs).
    env.advance(failed_at + 1_000 - env.now_ms);
    let late = deliver(&env, &[&script, file.to_str().unwrap()]);
    assert_eq!(late.status, 0, "{}", late.stderr);
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 1);
    assert_eq!(
        env.show(&dsc)["escalation"]["delivery"]["state"],
        "delivered"
    );
    // A command that cannot start is a failed delivery too.
    exhausted(&env);
    let missing = deliver(&env, &["/nonexistent/notify"]);
    assert_eq!(missing.status, 8);
    assert_eq!(
        receipts(&env, "discussion.escalation.delivery_failed")
            .last()
            .unwrap()["reason"],
        "spawn_failed"
    );
}

#[test]
fn a_failed_deliverys_stderr_is_for_operators_and_agents_never_read_it() {
    let env = Env::new();
    env.fleet();
    let dsc = exhausted(&env);
    let out = deliver(
        &env,
        &[
            "sh",
            "-c",
            "echo 'curl: (7) https://hook:s3cret@chat.example' >&2; exit 7",
        ],
    );
    assert_eq!(out.status, 8, "{}", out.stderr);
    // The operator (the CLI, an operator token) sees the tail.
    let shown = env.show(&dsc);
    let tail = &shown["escalation"]["delivery"]["last_failure"];
    assert!(tail.as_str().unwrap().contains("s3cret"), "{shown}");
    let agent = env
        .run(&["token", "issue", "agent-b"])
        .stdout
        .trim()
        .to_owned();
    let operator = env
        .run(&["token", "issue", "ops", "--operator"])
        .stdout
        .trim()
        .to_owned();
    let server = crate::common::http::Served::start(&env, &[]);
    let path = format!("/v1/discussions/{dsc}");
    let seen = server.get(&path, Some(&operator)).json();
    assert_eq!(seen["escalation"]["delivery"]["last_failure"], *tail);
    // An agent, through every way it reads: the failure is counted, its
    // text is not there.
    let by_agent = server.get(&path, Some(&agent));
    assert_eq!(by_agent.status, 200, "{}", by_agent.text());
    let by_agent = by_agent.json();
    assert_eq!(by_agent["escalation"]["delivery"]["failures"], 1);
    assert!(by_agent["escalation"]["delivery"]["last_failure"].is_null());
    assert!(!by_agent.to_string().contains("s3cret"));
    let called = server.post(
        "/v1/tools/get_discussion",
        Some(&agent),
        &json!({"discussion_id": dsc}),
    );
    assert!(!called.text().contains("s3cret"), "{}", called.text());
    let mcp = env.run_stdin(
        &["mcp", "--agent", "agent-b"],
        &format!(
            "{}\n{}\n{}\n",
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_discussion","arguments":{"discussion_id": dsc}}})
        ),
    );
    assert!(mcp.stdout.contains("\"failures\":1"), "{}", mcp.stdout);
    assert!(!mcp.stdout.contains("s3cret"), "{}", mcp.stdout);
}

#[test]
fn the_kill_switch_does_not_stop_delivery() {
    let env = Env::new();
    env.fleet();
    exhausted(&env);
    env.ok(&["kill-switch", "on", "--reason", "runaway spend"]);
    let file = env.dir.path().join("out.jsonl");
    let out = deliver(&env, &[&example("deliver-file.sh"), file.to_str().unwrap()]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 1);
}

#[test]
fn the_webhook_script_posts_the_escalation() {
    let env = Env::new();
    env.fleet();
    let dsc = exhausted(&env);
    let (url, server) = crate::common::http::one_post_receiver();
    let out = deliver(&env, &[&example("deliver-webhook.sh"), &url]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let (head, body) = server.join().unwrap();
    assert!(head[0].starts_with("POST /hook "), "{head:?}");
    assert!(
        head.iter()
            .any(|h| h.eq_ignore_ascii_case("content-type: application/json\r\n"))
    );
    let posted: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(posted["discussion_id"], dsc.as_str());
    assert_eq!(posted["reason"], "turns");
    // The receiver's key to drop a repeat: the escalation's receipt id.
    let key = format!(
        "idempotency-key: {}\r\n",
        posted["receipt_id"].as_str().unwrap()
    );
    assert!(
        head.iter().any(|h| h.eq_ignore_ascii_case(&key)),
        "{head:?}"
    );
    // A server that refuses: the delivery failed, and is retried later;
    // the URL's secret is in no receipt.
    let refused = exhausted(&env);
    let out = deliver(
        &env,
        &[
            &example("deliver-webhook.sh"),
            &format!("http://hook:s3cret-in-url@127.0.0.1:{}/", closed_port()),
        ],
    );
    assert_eq!(out.status, 8);
    assert_eq!(
        env.show(&refused)["escalation"]["delivery"]["state"],
        "retrying"
    );
    let failed = receipts(&env, "discussion.escalation.delivery_failed");
    assert_eq!(failed[0]["detail"], "the webhook post failed (curl exit 7)");
    assert!(!String::from_utf8_lossy(&env.ledger_bytes()).contains("s3cret-in-url"));
}

#[test]
fn a_deliverer_that_dies_before_recording_hands_the_same_key_again_and_the_example_drops_it() {
    let mut env = Env::new();
    env.fleet();
    let dsc = exhausted(&env);
    let file = env.dir.path().join("out.jsonl");
    let keys = env.dir.path().join("keys");
    let command = format!(
        "echo \"$DISCUSS_RECEIPT_ID\" >> {}; exec {} {}",
        keys.display(),
        example("deliver-file.sh"),
        file.display()
    );
    // The deliverer is killed (SIGKILL) at its second write: the command
    // ran and exited 0 after the claim, `delivered` was never recorded.
    let crashed = env.run_with(
        &[("DISCUSS_FAILPOINTS", "append.before_write=crash@2")],
        &[
            "--json",
            "escalations",
            "deliver",
            "--",
            "sh",
            "-c",
            &command,
        ],
        "",
    );
    assert_eq!(crashed.status, -1, "killed: {}", crashed.stderr);
    assert_eq!(env.show(&dsc)["escalation"]["delivery"]["state"], "claimed");
    assert!(receipts(&env, "discussion.escalation.delivered").is_empty());
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 1);
    // Once the claim lapses, the next deliverer hands it out again: at
    // least once, with the same key, which the example drops.
    let claimed_at = receipts(&env, "discussion.escalation.claimed")[0]["at_ms"]
        .as_i64()
        .unwrap();
    env.advance(claimed_at + 5 * 60 * 1000 - env.now_ms);
    let again = deliver(&env, &["sh", "-c", &command]);
    assert_eq!(again.status, 0, "{}", again.stderr);
    assert_eq!(again.json()["delivered"], 1);
    assert!(again.stderr.contains("is in"), "{}", again.stderr);
    let receipt_id = env.show(&dsc)["escalation"]["receipt_id"].clone();
    let handed: Vec<String> = std::fs::read_to_string(&keys)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(handed.len(), 2, "handed out twice in the crash window");
    assert!(
        handed.iter().all(|k| receipt_id == k.as_str()),
        "{handed:?}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 1);
    // Recorded exactly once.
    assert_eq!(receipts(&env, "discussion.escalation.delivered").len(), 1);
}

#[test]
fn two_followers_deliver_twenty_escalations_each_exactly_once() {
    let env = Env::new();
    env.fleet();
    let outbox = env.dir.path().join("outbox");
    std::fs::create_dir(&outbox).unwrap();
    // Each delivery leaves a file of its own, named by escalation and
    // deliverer: two for one escalation would show.
    let script = format!("cat > {}/\"$DISCUSS_RECEIPT_ID.$PPID\"", outbox.display());
    let args = [
        "--json",
        "escalations",
        "deliver",
        "--follow",
        "--",
        "sh",
        "-c",
        &script,
    ];
    let followers = [spawn(&env, &args), spawn(&env, &args)];
    for _ in 0..20 {
        exhausted(&env);
    }
    let delivered = || receipts(&env, "discussion.escalation.delivered").len();
    wait_until("20 deliveries", || delivered() >= 20);
    for follower in &followers {
        rustix::process::kill_process(
            rustix::process::Pid::from_raw(follower.id() as i32).unwrap(),
            rustix::process::Signal::TERM,
        )
        .unwrap();
    }
    for follower in followers {
        let out = follower.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(delivered(), 20);
    assert_eq!(receipts(&env, "discussion.escalation.claimed").len(), 20);
    let files: Vec<PathBuf> = std::fs::read_dir(&outbox)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 20);
    let mut escalations: Vec<String> = files
        .iter()
        .map(|f| f.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    escalations.sort();
    escalations.dedup();
    assert_eq!(escalations.len(), 20, "one delivery an escalation");
}

#[test]
fn a_deliverer_killed_mid_command_holds_its_claim_until_the_lease_lapses() {
    let mut env = Env::new();
    env.fleet();
    let dsc = exhausted(&env);
    let started = env.dir.path().join("started");
    let script = format!("echo $$ > {}; sleep 60", started.display());
    let mut deliverer = spawn(
        &env,
        &[
            "--json",
            "escalations",
            "deliver",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    wait_until("the command to start", || {
        std::fs::read_to_string(&started).is_ok_and(|s| s.ends_with('\n'))
    });
    let command: i32 = std::fs::read_to_string(&started)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    deliverer.kill().unwrap();
    deliverer.wait().unwrap();
    // The command does not outlive its deliverer.
    wait_until("the command to die with it", || {
        !Path::new(&format!("/proc/{command}")).exists()
            || std::fs::read_to_string(format!("/proc/{command}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
    });
    let file = env.dir.path().join("out.jsonl");
    let script = example("deliver-file.sh");
    let held = deliver(&env, &[&script, file.to_str().unwrap()]);
    assert_eq!(env.show(&dsc)["escalation"]["delivery"]["state"], "claimed");
    let claimed_at = receipts(&env, "discussion.escalation.claimed")[0]["at_ms"]
        .as_i64()
        .unwrap();
    assert_eq!(held.status, 0, "{}", held.stderr);
    assert_eq!(
        held.json(),
        json!({"delivered": 0, "failed": 0, "pending": 1,
            "next_attempt_at": iso(claimed_at + 5 * 60 * 1000)})
    );
    env.advance(claimed_at + 5 * 60 * 1000 - env.now_ms);
    let after = deliver(&env, &[&script, file.to_str().unwrap()]);
    assert_eq!(after.status, 0, "{}", after.stderr);
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 1);
    assert_eq!(
        env.show(&dsc)["escalation"]["delivery"]["state"],
        "delivered"
    );
}

fn iso(ms: i64) -> String {
    let at = jiff::Timestamp::from_millisecond(ms).unwrap();
    format!("{}", at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ"))
}

/// A discussion a → b whose woken turn lapses: deadman once the clock
/// moves 2 s on.
fn deadman(env: &Env) -> String {
    let (dsc, root) = env.ask(&["--turn-timeout-ms", "1000"]);
    env.wake(&dsc, "agent-b", &root);
    dsc
}

#[test]
fn every_unresolved_end_escalates_once_and_closed_never() {
    let mut env = Env::new();
    env.fleet();
    let lapsed = deadman(&env);
    let (expired, _) = env.ask(&["--timeout-ms", "1000", "--turn-timeout-ms", "1000"]);
    let (closed, root) = env.ask(&[]);
    let att = env.wake(&closed, "agent-b", &root);
    env.reply(&closed, "agent-b", &att, &root, "result", true);
    let (broken, _) = env.ask(&[]);
    // A receipt that does not fit its attempt machine: invalid.
    env.append_raw(&format!(
        r#"{{"v":1,"kind":"receipt","id":"rcp_00000000000000000000000000000bad","at_ms":{},"by":"x","receipt":"discussion.attempt.completed","discussion_id":"{broken}","attempt_id":"att_0000000000000000000000000000bad0","agent_id":"agent-b","message_id":"msg_0000000000000000000000000000bad0"}}
"#,
        env.now_ms
    ));
    env.advance(2_000);
    assert_eq!(env.status(&lapsed), "deadman");
    assert_eq!(env.status(&expired), "expired");
    assert_eq!(env.status(&broken), "invalid");
    // Due, and listed as pending before anyone recorded them.
    let listed = env.ok(&["escalations", "--pending"]);
    let due: Vec<&Value> = listed["escalations"].as_array().unwrap().iter().collect();
    assert_eq!(due.len(), 3, "{listed}");
    assert!(
        due.iter()
            .all(|e| e["recorded"] == false && e["receipt_id"].is_null())
    );
    let mut reasons: Vec<&str> = due.iter().map(|e| e["reason"].as_str().unwrap()).collect();
    reasons.sort_unstable();
    assert_eq!(reasons, ["deadman", "expired", "invalid"]);
    let human = env.run(&["escalations"]).stdout;
    assert!(human.contains("a turn passed its deadline"), "{human}");
    assert!(human.contains("pending (due, not recorded yet)"), "{human}");
    // The deliverer records each, then delivers each once.
    let file = env.dir.path().join("out.jsonl");
    let out = deliver(&env, &[&example("deliver-file.sh"), file.to_str().unwrap()]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(out.json()["delivered"], 3);
    assert_eq!(receipts(&env, "discussion.escalated").len(), 3);
    for (dsc, status, reason) in [
        (&lapsed, "deadman", "deadman"),
        (&expired, "expired", "expired"),
        (&broken, "invalid", "invalid"),
    ] {
        let shown = env.show(dsc);
        assert_eq!(shown["status"], status, "the escalation changes no status");
        assert_eq!(shown["escalation"]["reason"], reason);
        assert_eq!(shown["escalation"]["delivery"]["state"], "delivered");
    }
    assert!(env.show(&closed)["escalation"].is_null());
    let lines = std::fs::read_to_string(&file).unwrap();
    assert_eq!(lines.lines().count(), 3);
    // Nothing more to record or deliver.
    let again = deliver(&env, &[&example("deliver-file.sh"), file.to_str().unwrap()]);
    assert_eq!(again.json()["delivered"], 0);
    assert_eq!(receipts(&env, "discussion.escalated").len(), 3);
    assert!(
        env.ok(&["escalations"])["escalations"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["recorded"] == true)
    );
    // Only the discussion that was invalid before is invalid: the
    // escalations and their receipts added no finding.
    let verified = env.run(&["--json", "verify"]);
    assert_eq!(verified.status, 7, "{}", verified.stderr);
    let invalid = verified.json()["invalid_discussions"].clone();
    assert_eq!(invalid.as_array().unwrap().len(), 1, "{invalid}");
    assert!(invalid.to_string().contains(&broken), "{invalid}");
}

#[test]
fn two_deliverers_racing_over_five_deadman_discussions_record_and_deliver_each_once() {
    let mut env = Env::new();
    env.fleet();
    let lapsed: Vec<String> = (0..5).map(|_| deadman(&env)).collect();
    env.advance(2_000);
    let outbox = env.dir.path().join("outbox");
    std::fs::create_dir(&outbox).unwrap();
    let script = format!("cat > {}/\"$DISCUSS_RECEIPT_ID.$$\"", outbox.display());
    let args = [
        "--json",
        "escalations",
        "deliver",
        "--",
        "sh",
        "-c",
        &script,
    ];
    let racers: Vec<Child> = (0..2).map(|_| spawn(&env, &args)).collect();
    for racer in racers {
        let out = racer.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let escalated = receipts(&env, "discussion.escalated");
    assert_eq!(escalated.len(), 5, "one escalation a discussion");
    let mut named: Vec<&str> = escalated
        .iter()
        .map(|r| r["discussion_id"].as_str().unwrap())
        .collect();
    named.sort_unstable();
    let mut expected: Vec<&str> = lapsed.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(named, expected);
    assert_eq!(receipts(&env, "discussion.escalation.delivered").len(), 5);
    let handed = std::fs::read_dir(&outbox).unwrap().count();
    assert_eq!(handed, 5, "each handed to the command once");
    assert_eq!(env.ok(&["verify"])["invalid_discussions"], json!([]));
}

#[test]
fn a_following_deliverer_hears_of_a_deadman_within_a_second_of_its_deadline() {
    let env = Env::new();
    env.fleet();
    let dsc = deadman(&env);
    let file = env.dir.path().join("out.jsonl");
    let mut follower = spawn(
        &env,
        &[
            "--json",
            "escalations",
            "deliver",
            "--follow",
            "--",
            &example("deliver-file.sh"),
            file.to_str().unwrap(),
        ],
    );
    // The turn's deadline is a second after the pinned clock's start.
    let started = Instant::now();
    wait_until("the deadman's escalation to be delivered", || {
        std::fs::read_to_string(&file).is_ok_and(|s| s.contains(&dsc))
    });
    let took = started.elapsed();
    let _ = Command::new("kill").arg(follower.id().to_string()).status();
    assert!(follower.wait().unwrap().success());
    assert!(
        took < Duration::from_millis(3_000),
        "heard of it {took:?} after start (the deadline was at 1 s)"
    );
    assert_eq!(env.show(&dsc)["escalation"]["reason"], "deadman");
}
