//! Live sessions (`wake --into tmux:PANE`, `discuss turn`, the Claude
//! Code hook): a private tmux server with a scripted interactive agent in
//! a pane that reads the pointer, takes the turn and replies; a pane that
//! never quiets; one killed mid-delivery; a body that is never typed; the
//! refusals that come before anything is typed. On a file and, with the
//! suite's PostgreSQL run, on a database.

use crate::common::tmux::Tmux;
use crate::common::{ASK_A_TO_B, Env};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// An interactive agent: reads each line typed into its terminal and,
/// for a pointer, takes the turn and answers with what it was asked.
const AGENT: &str = r#"#!/bin/bash
echo "agent ready"
while IFS= read -r line; do
  echo "got: $line"
  case $line in
    "discuss: turn "*" is yours "*)
      turn=$(discuss --json turn --agent agent-b) || { echo "turn failed"; continue; }
      mapfile -t argv < <(jq -r '.reply_argv[]' <<<"$turn")
      jq -c '{body: ("seen " + (.head.body.body | length | tostring) + " characters")}' <<<"$turn" \
        | "${argv[@]}" >/dev/null && echo "replied"
      ;;
  esac
done
"#;

fn agent_pane(env: &Env) -> Option<Tmux> {
    let script = env.dir.path().join("agent.sh");
    std::fs::write(&script, AGENT).unwrap();
    let tmux = Tmux::start(
        env,
        &format!("bash --norc --noprofile {}", script.display()),
    )?;
    tmux.wait_for("work", "agent ready");
    Some(tmux)
}

fn ask(env: &Env, body: &str, extra: &[&str]) -> (String, String) {
    let payload = json!({ "body": body }).to_string();
    let mut args = ASK_A_TO_B.to_vec();
    args.push(&payload);
    args.extend_from_slice(extra);
    let v = env.ok(&args);
    (
        v["discussion_id"].as_str().unwrap().to_owned(),
        v["root_message_id"].as_str().unwrap().to_owned(),
    )
}

fn wake_into(
    env: &Env,
    tmux: &Tmux,
    dsc: &str,
    head: &str,
    target: &str,
    extra: &[&str],
) -> crate::common::Outcome {
    let socket = tmux.socket.to_str().unwrap().to_owned();
    let into = format!("tmux:{target}");
    let mut args = vec![
        "--json",
        "wake",
        "--agent",
        "agent-b",
        "--discussion",
        dsc,
        "--expected-head",
        head,
        "--into",
        &into,
        "--tmux-socket",
        &socket,
        "--quiet-ms",
        "100",
    ];
    args.extend_from_slice(extra);
    env.run(&args)
}

fn receipts(env: &Env, name: &str) -> Vec<Value> {
    env.records()
        .into_iter()
        .filter(|r| r["receipt"] == name)
        .collect()
}

fn wait_until(what: &str, done: impl Fn() -> bool) {
    let until = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_woken_session_gets_one_pointer_takes_the_turn_and_replies() {
    let env = Env::new();
    env.fleet();
    // A body full of what a shell or a terminal would act on.
    let body = "$(touch pwned) `touch pwned2`; rm -rf ~ \u{1b}[2J\u{1b}]0;title\u{7} \r\n exit";
    let (dsc, root) = ask(&env, body, &[]);
    let Some(tmux) = agent_pane(&env) else { return };
    let out = wake_into(&env, &tmux, &dsc, &root, "work", &[]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let woken = out.json();
    let pane = tmux.run(&["display-message", "-p", "-t", "work", "#{pane_id}"]);
    let pane = String::from_utf8_lossy(&pane.stdout).trim().to_owned();
    assert_eq!(
        woken["attempt"]["into"],
        format!("tmux:{pane}"),
        "the pane's stable id"
    );
    assert!(woken["attempt"]["delivered_at"].is_string(), "{woken}");
    assert!(
        woken["attempt"]["picked_up_at"].is_null() || woken["attempt"]["picked_up_at"].is_string()
    );
    let screen = tmux.wait_for("work", "replied");
    // One pointer, typed once, and nothing of the body.
    let pointer = format!("got: discuss: turn 2 of {dsc} is yours until ");
    assert_eq!(screen.matches(&pointer).count(), 1, "{screen}");
    assert!(
        screen.contains("; run: discuss turn --agent agent-b"),
        "{screen}"
    );
    assert!(
        !screen.contains("pwned") && !screen.contains("rm -rf"),
        "{screen}"
    );
    assert!(!env.dir.path().join("pwned").exists() && !env.dir.path().join("pwned2").exists());
    // The ledger has the whole story: reserved into the pane, delivered,
    // picked up, completed by the session's reply.
    let reserved = receipts(&env, "discussion.attempt.reserved");
    assert_eq!(reserved[0]["into"], format!("tmux:{pane}"));
    assert_eq!(receipts(&env, "discussion.attempt.delivered").len(), 1);
    let started = receipts(&env, "discussion.attempt.started");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["via"], "pickup");
    let shown = env.show(&dsc);
    assert_eq!(shown["turns_used"], 2);
    assert_eq!(shown["head"]["from_agent_id"], "agent-b");
    assert_eq!(
        shown["transcript"][1]["payload"],
        json!({"body": format!("seen {} characters", body.chars().count())})
    );
    let attempt = &shown["attempts"][0];
    assert_eq!(attempt["state"], "completed");
    assert!(attempt["delivered_at"].is_string() && attempt["picked_up_at"].is_string());
    // A person reading it sees where it went and when it was taken.
    let human = env.run(&["show", &dsc]).stdout;
    assert!(
        human.contains(&format!("into tmux:{pane}, delivered ")),
        "{human}"
    );
    assert!(human.contains(", picked up "), "{human}");
}

#[test]
fn a_pane_or_server_that_is_not_there_is_refused_before_anything_is_charged() {
    let env = Env::new();
    env.fleet();
    let (dsc, root) = ask(&env, "hello", &[]);
    let Some(tmux) = Tmux::start(&env, "cat") else {
        return;
    };
    let before = env.ledger_bytes();
    for target in ["nowhere", "%99", "work:7.3"] {
        let out = wake_into(&env, &tmux, &dsc, &root, target, &[]);
        assert_eq!(out.status, 4, "{target}: {}", out.stderr);
        assert_eq!(out.error()["code"], "unknown_target");
        assert_eq!(out.error()["details"]["into"], format!("tmux:{target}"));
    }
    // No server at the socket.
    let gone = env.dir.path().join("no-server");
    let out = env.run(&[
        "--json",
        "wake",
        "--agent",
        "agent-b",
        "--discussion",
        &dsc,
        "--expected-head",
        &root,
        "--into",
        "tmux:work",
        "--tmux-socket",
        gone.to_str().unwrap(),
    ]);
    assert_eq!(out.status, 4, "{}", out.stderr);
    assert_eq!(out.error()["code"], "unknown_target");
    // Usage: not tmux, a bad template, --into with a command.
    for extra in [
        vec!["--into-text", "{body}"],
        vec!["--into-text", "line\u{1b}[2J"],
        vec!["--quiet-ms", "60001"],
    ] {
        let out = wake_into(&env, &tmux, &dsc, &root, "work", &extra);
        assert!(
            out.status == 2 || out.status == 3,
            "{extra:?}: {}",
            out.stderr
        );
    }
    let out = env.run(&[
        "wake",
        "--agent",
        "agent-b",
        "--discussion",
        &dsc,
        "--expected-head",
        &root,
        "--into",
        "screen:1",
    ]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    let out = env.run(&[
        "wake",
        "--agent",
        "agent-b",
        "--discussion",
        &dsc,
        "--expected-head",
        &root,
        "--into",
        "tmux:work",
        "--",
        "true",
    ]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    assert_eq!(env.ledger_bytes(), before, "nothing written");
    assert_eq!(env.show(&dsc)["turns_used"], 1);
}

#[test]
fn halts_gates_and_quotas_refuse_before_anything_is_typed() {
    let env = Env::new();
    env.fleet();
    let Some(tmux) = agent_pane(&env) else { return };
    let (dsc, root) = ask(&env, "hello", &[]);
    env.ok(&[
        "kill-switch",
        "on",
        "--agent",
        "agent-b",
        "--reason",
        "stop",
    ]);
    let out = wake_into(&env, &tmux, &dsc, &root, "work", &[]);
    assert_eq!(out.status, 6);
    assert_eq!(out.error()["code"], "kill_switch_engaged");
    env.ok(&["kill-switch", "off", "--agent", "agent-b"]);
    env.ok(&["gate", "set", "--agent", "agent-b", "--always"]);
    let out = wake_into(&env, &tmux, &dsc, &root, "work", &[]);
    assert_eq!(out.status, 6);
    assert_eq!(out.error()["code"], "approval_required");
    env.ok(&["gate", "clear", "--agent", "agent-b"]);
    env.ok(&["quota", "set", "0", "--agent", "agent-b"]);
    let out = wake_into(&env, &tmux, &dsc, &root, "work", &[]);
    assert_eq!(out.status, 6);
    assert_eq!(out.error()["code"], "wake_quota_exceeded");
    assert!(
        !tmux.screen("work").contains("got:"),
        "{}",
        tmux.screen("work")
    );
    assert!(receipts(&env, "discussion.attempt.reserved").is_empty());
}

#[test]
fn a_pane_that_never_quiets_or_vanishes_ends_the_turn_failed_and_charged() {
    let env = Env::new();
    env.fleet();
    let Some(tmux) = Tmux::start(&env, "cat") else {
        return;
    };
    let busy = tmux.window("while :; do date +%s%N; sleep 0.02; done");
    // Half of a 4 s turn: the pane has 2 s to go quiet.
    let (dsc, root) = ask(&env, "hello", &["--turn-timeout-ms", "4000"]);
    let out = wake_into(&env, &tmux, &dsc, &root, &busy, &[]);
    assert_eq!(out.status, 8, "{}", out.stderr);
    let error = out.error();
    assert_eq!(error["code"], "delivery_failed");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("never went quiet"),
        "{error}"
    );
    let shown = env.show(&dsc);
    assert_eq!(shown["turns_used"], 2, "charged");
    assert_eq!(shown["attempts"][0]["state"], "failed");
    assert_eq!(shown["attempts"][0]["reason"], "delivery_failed");
    assert!(shown["attempts"][0]["delivered_at"].is_null());
    assert_eq!(shown["status"], "open", "the head waits for another wake");

    // Killed while the wake waits for it to quiet.
    let doomed = tmux.window("while :; do date +%s%N; sleep 0.02; done");
    let head = shown["head"]["message_id"].as_str().unwrap().to_owned();
    let socket = tmux.socket.to_str().unwrap().to_owned();
    let into = format!("tmux:{doomed}");
    let child = env
        .command_std()
        .args([
            "--json",
            "wake",
            "--agent",
            "agent-b",
            "--discussion",
            &dsc,
            "--expected-head",
            &head,
            "--into",
            &into,
            "--tmux-socket",
            &socket,
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the second reservation", || {
        receipts(&env, "discussion.attempt.reserved").len() == 2
    });
    assert!(tmux.run(&["kill-pane", "-t", &doomed]).status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(8));
    let error: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("vanished"),
        "{error}"
    );
    let shown = env.show(&dsc);
    assert_eq!(shown["attempts"][1]["reason"], "delivery_failed");
    assert_eq!(shown["turns_used"], 3);
}

#[test]
fn wait_stays_to_the_end_and_a_halt_withdraws_the_turn_in_the_pane() {
    let env = Env::new();
    env.fleet();
    let Some(tmux) = agent_pane(&env) else { return };
    let (dsc, root) = ask(&env, "hello", &[]);
    let out = wake_into(&env, &tmux, &dsc, &root, "work", &["--wait"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(out.json()["attempt"]["outcome"], "completed");
    // A pane where nobody answers: the halt ends the turn, and the pane
    // is told once.
    let quiet = tmux.window("cat >/dev/null");
    let head = env.show(&dsc)["head"]["message_id"]
        .as_str()
        .unwrap()
        .to_owned();
    env.ok(&[
        "reply",
        "--agent",
        "agent-a",
        "--discussion",
        &dsc,
        "--attempt",
        &env.wake(&dsc, "agent-a", &head),
        "--reply-to",
        &head,
        "--type",
        "question",
        "--payload",
        r#"{"body":"again?"}"#,
    ]);
    let head = env.show(&dsc)["head"]["message_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let socket = tmux.socket.to_str().unwrap().to_owned();
    let into = format!("tmux:{quiet}");
    let child = env
        .command_std()
        .args([
            "--json",
            "wake",
            "--agent",
            "agent-b",
            "--discussion",
            &dsc,
            "--expected-head",
            &head,
            "--into",
            &into,
            "--tmux-socket",
            &socket,
            "--quiet-ms",
            "50",
            "--wait",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    tmux.wait_for(&quiet, "is yours until");
    // Told and not picked up: plain in the inbox, the list and events.
    let delivery = || {
        env.ok(&["inbox", "--agent", "agent-b"])["discussions"][0]["live_attempt_delivery"].clone()
    };
    wait_until("the delivery to be recorded", || delivery() == "delivered");
    let human = env.run(&["inbox", "--agent", "agent-b"]).stdout;
    assert!(human.contains("told its session, not picked up"), "{human}");
    let events = env.run(&["events"]).stdout;
    assert!(
        events.contains(&format!("reserved agent-b into tmux:{quiet}")),
        "{events}"
    );
    assert!(
        events.contains(&format!("delivered agent-b into tmux:{quiet}")),
        "{events}"
    );
    env.ok(&["turn", "--agent", "agent-b"]);
    assert_eq!(delivery(), "picked_up");
    assert!(
        env.run(&["events"])
            .stdout
            .contains("started agent-b by pickup")
    );
    env.ok(&[
        "kill-switch",
        "on",
        "--discussion",
        &dsc,
        "--reason",
        "enough",
    ]);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(8),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ended: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ended["attempt"]["outcome"], "failed");
    assert_eq!(ended["attempt"]["reason"], "kill_switch");
    let screen = tmux.wait_for(&quiet, "was withdrawn (halted)");
    assert_eq!(
        screen.matches("discuss: turn 4 of").count(),
        2,
        "the pointer and the withdrawal: {screen}"
    );
    assert_eq!(screen.matches("is yours until").count(), 1, "{screen}");
}

#[test]
fn turn_answers_the_live_turn_records_one_pickup_and_waits_for_a_wake_only() {
    let mut env = Env::new();
    env.fleet();
    let out = env.run(&["--json", "turn", "--agent", "agent-b"]);
    assert_eq!(out.status, 4);
    assert_eq!(out.error()["code"], "no_live_turn");
    let (dsc, root) = ask(&env, "review this", &[]);
    // A message is not a wake: the wait runs out.
    let out = env.run(&["--json", "turn", "--agent", "agent-b", "--wait-ms", "300"]);
    assert_eq!(out.status, 10, "{}", out.stderr);
    assert_eq!(out.error()["code"], "wait_timeout");
    // A wake in another process ends the wait.
    let waiting = env
        .command_std()
        .args(["--json", "turn", "--wait-ms", "20000"])
        .env("DISCUSS_AGENT_ID", "agent-b")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let attempt = env.wake(&dsc, "agent-b", &root);
    let out = waiting.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let turn: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(turn["discussion_id"], dsc.as_str());
    assert_eq!(turn["attempt"]["attempt_id"], attempt.as_str());
    assert_eq!(turn["attempt"]["state"], "started");
    assert_eq!(
        turn["head"],
        json!({"message_id": root, "from_agent_id": "agent-a",
        "type": "ask", "body": {"body": "review this"}})
    );
    let argv: Vec<&str> = turn["reply_argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(argv[0].starts_with('/'), "{argv:?}");
    assert_eq!(
        argv[argv.len() - 4..],
        ["--type", "result", "--payload-file", "-"]
    );
    // Again: the same turn, nothing more recorded.
    let again = env.ok(&["turn", "--agent", "agent-b"]);
    assert_eq!(again["attempt"]["attempt_id"], attempt.as_str());
    assert_eq!(receipts(&env, "discussion.attempt.started").len(), 1);
    // The printed command answers the turn as it is.
    let reply = std::process::Command::new(argv[0])
        .args(&argv[1..])
        .env_clear()
        .env("DISCUSS_LEDGER", env.ledger())
        .env("DISCUSS_NOW", env.now_ms.to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    reply
        .stdin
        .as_ref()
        .unwrap()
        .write_all(br#"{"body":"done"}"#)
        .unwrap();
    assert!(reply.wait_with_output().unwrap().status.success());
    assert_eq!(env.show(&dsc)["attempts"][0]["state"], "completed");
    // A lapsed turn is never picked up.
    let (dsc2, root2) = ask(&env, "second", &["--turn-timeout-ms", "1000"]);
    env.wake(&dsc2, "agent-b", &root2);
    env.advance(5_000);
    let out = env.run(&["--json", "turn", "--agent", "agent-b"]);
    assert_eq!(out.status, 4, "{}", out.stderr);
    assert_eq!(out.error()["code"], "no_live_turn");
}

#[test]
fn the_claude_code_hook_blocks_a_stop_with_the_turn_once_and_never_loops() {
    let env = Env::new();
    env.fleet();
    let hook = |event: &str| {
        env.run_with(
            &[("DISCUSS_AGENT_ID", "agent-b")],
            &["turn", "--hook", "claude-code"],
            event,
        )
    };
    let stop = r#"{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":false}"#;
    let stop_again = r#"{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":true}"#;
    // No turn: nothing on stdout, exit 0.
    let out = hook(stop);
    assert_eq!((out.status, out.stdout.as_str()), (0, ""), "{}", out.stderr);
    // Malformed: a line on stderr, nothing on stdout, exit 0.
    let out = hook("not json");
    assert_eq!((out.status, out.stdout.as_str()), (0, ""));
    assert!(out.stderr.contains("not JSON"), "{}", out.stderr);
    let (dsc, root) = ask(&env, "review this", &[]);
    let attempt = env.wake(&dsc, "agent-b", &root);
    // SessionStart adds context naming the turn.
    let out = hook(r#"{"hook_event_name":"SessionStart","source":"startup"}"#);
    assert_eq!(out.status, 0);
    let context: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        context["hookSpecificOutput"]["hookEventName"],
        "SessionStart"
    );
    let text = context["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        text.contains(&format!("turn 2 of {dsc} is yours")),
        "{text}"
    );
    // A Stop while the turn is live and not picked up... it was, by the
    // SessionStart answer: with stop_hook_active, not named again.
    let out = hook(stop_again);
    assert_eq!((out.status, out.stdout.as_str()), (0, ""), "no loop");
    // A Stop without stop_hook_active names it (the agent is not yet
    // continuing for it).
    let out = hook(stop);
    let blocked: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(blocked["decision"], "block");
    let reason = blocked["reason"].as_str().unwrap();
    assert!(reason.contains(&format!("--attempt {attempt}")), "{reason}");
    assert_eq!(receipts(&env, "discussion.attempt.started").len(), 1);
    assert_eq!(
        receipts(&env, "discussion.attempt.started")[0]["via"],
        "pickup"
    );
    // Another event: nothing.
    let out = hook(r#"{"hook_event_name":"PreToolUse","tool_name":"Bash"}"#);
    assert_eq!((out.status, out.stdout.as_str()), (0, ""));
}

#[test]
fn over_http_an_agent_token_takes_its_own_turn_and_the_pickup_is_recorded() {
    use crate::common::http::Served;
    use crate::serve::token;
    let env = Env::new();
    env.fleet();
    let b = token(&env, &["agent-b"]);
    let a = token(&env, &["agent-a"]);
    let server = Served::start(&env, &[]);
    let none = server.get("/v1/turn", Some(&b));
    assert_eq!(none.status, 404, "{}", none.text());
    assert_eq!(none.json()["error"]["code"], "no_live_turn");
    let bad = server.get("/v1/turn?wait_ms=soon", Some(&b));
    assert_eq!(bad.status, 400);
    let (dsc, root) = ask(&env, "over the wire", &[]);
    let attempt = env.wake(&dsc, "agent-b", &root);
    // Another agent's token cannot take it.
    let other = server.get("/v1/turn?agent=agent-b", Some(&a));
    assert_eq!(other.status, 403, "{}", other.text());
    assert_eq!(other.json()["error"]["code"], "agent_mismatch");
    let taken = server.get("/v1/turn?wait_ms=1000", Some(&b));
    assert_eq!(taken.status, 200, "{}", taken.text());
    let turn = taken.json();
    assert_eq!(turn["attempt"]["attempt_id"], attempt.as_str());
    assert_eq!(turn["head"]["body"], json!({"body": "over the wire"}));
    let started = receipts(&env, "discussion.attempt.started");
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["via"], "pickup");
    assert!(
        started[0]["token_id"].is_string(),
        "the pickup names the token: {}",
        started[0]
    );
    env.ok(&[
        "reply",
        "--agent",
        "agent-b",
        "--discussion",
        &dsc,
        "--attempt",
        &attempt,
        "--reply-to",
        &root,
        "--type",
        "result",
        "--payload",
        r#"{"body":"done"}"#,
    ]);
    // A wait that a wake ends, in another request.
    let (dsc2, root2) = ask(&env, "second", &[]);
    let waiting = {
        let port = server.port;
        let b = b.clone();
        std::thread::spawn(move || {
            let stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            use std::io::{Read, Write};
            let mut stream = stream;
            write!(stream, "GET /v1/turn?wait_ms=20000 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {b}\r\nConnection: close\r\n\r\n").unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).unwrap();
            answer
        })
    };
    let second = env.wake(&dsc2, "agent-b", &root2);
    let answer = waiting.join().unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(&second), "{answer}");
}

/// `examples/claude-code/`: every hook the settings file installs runs
/// `discuss turn --hook claude-code` as Claude Code would (the event on
/// stdin, the session's environment), and the launcher starts `claude`
/// with those settings as the agent.
#[test]
fn the_claude_code_example_installs_hooks_that_answer_and_a_launcher_that_names_the_agent() {
    let env = Env::new();
    env.fleet();
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/claude-code");
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("settings.json")).unwrap())
            .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let path = format!("{}:/usr/bin:/bin", bin.parent().unwrap().display());
    let run_hook = |command: &str, event: &Value| {
        let mut child = std::process::Command::new("sh")
            .args(["-c", command])
            .env_clear()
            .env("PATH", &path)
            .env("DISCUSS_LEDGER", env.ledger())
            .env("DISCUSS_NOW", env.now_ms.to_string())
            .env("DISCUSS_AGENT_ID", "agent-b")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(event.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{command}");
        String::from_utf8(out.stdout).unwrap()
    };
    let (dsc, root) = ask(&env, "from the example", &[]);
    env.wake(&dsc, "agent-b", &root);
    let hooks = settings["hooks"].as_object().unwrap();
    for name in ["SessionStart", "UserPromptSubmit", "Stop", "SubagentStop"] {
        let command = hooks[name][0]["hooks"][0]["command"].as_str().unwrap();
        assert!(
            command.starts_with("discuss turn --hook claude-code"),
            "{command}"
        );
        let event = json!({"session_id": "s", "hook_event_name": name, "stop_hook_active": false});
        let said: Value = serde_json::from_str(&run_hook(command, &event)).unwrap();
        let text = match name {
            "Stop" | "SubagentStop" => said["reason"].as_str().unwrap().to_owned(),
            _ => said["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .unwrap()
                .to_owned(),
        };
        assert!(
            text.contains(&format!("turn 2 of {dsc} is yours")),
            "{name}: {text}"
        );
    }
    // The launcher: `claude` (a stand-in that shows what it was given)
    // started with the settings, as the agent, on the fleet's ledger.
    let fake = env.dir.path().join("bin");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::write(
        fake.join("claude"),
        "#!/bin/sh\necho \"agent=$DISCUSS_AGENT_ID ledger=$DISCUSS_LEDGER args=$*\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(fake.join("claude"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = std::process::Command::new(folder.join("launch.sh"))
        .args(["agent-b", "--model", "sonnet"])
        .env_clear()
        .env("PATH", format!("{}:{path}", fake.display()))
        .env("DISCUSS_LEDGER", env.ledger())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert_eq!(
        said.trim(),
        format!(
            "agent=agent-b ledger={} args=--settings {}/settings.json --model sonnet",
            env.ledger().display(),
            folder.display()
        )
    );
}
