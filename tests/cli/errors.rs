//! Every error code of the core commands: code, exit status, and a ledger
//! left byte-identical.

use crate::common::*;
use serde_json::json;

fn ask_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "ask",
        "--from",
        "agent-a",
        "--to",
        "agent-b",
        "--fleet",
        "fleet-alpha",
        "--payload",
        "{}",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn numeric_ranges_are_checked_just_inside_and_just_outside_both_ends() {
    let env = Env::new();
    env.fleet();
    let cases: [(&str, &str, &str, &str, &str); 3] = [
        ("--max-turns", "1", "2", "32", "33"),
        ("--timeout-ms", "999", "1000", "900000", "900001"),
        ("--turn-timeout-ms", "999", "1000", "300000", "300001"),
    ];
    for (flag, below, min, max, above) in cases {
        // turn-timeout must not exceed timeout: give room for the timeout bounds.
        let pair: &[&str] = match flag {
            "--timeout-ms" => &["--turn-timeout-ms", "1000"],
            _ => &["--timeout-ms", "900000"],
        };
        for ok in [min, max] {
            let mut args = ask_args(&[flag, ok]);
            args.extend_from_slice(pair);
            env.ok(&args);
        }
        for bad in [below, above] {
            let mut args = ask_args(&[flag, bad]);
            args.extend_from_slice(pair);
            let err = env.fails(&args, "out_of_range", 3);
            assert_eq!(err["details"]["value"].to_string(), bad);
        }
    }
    // turn-timeout just above and at the conversation timeout.
    env.fails(
        &ask_args(&["--timeout-ms", "5000", "--turn-timeout-ms", "5001"]),
        "out_of_range",
        3,
    );
    env.ok(&ask_args(&[
        "--timeout-ms",
        "5000",
        "--turn-timeout-ms",
        "5000",
    ]));
    env.fails(&ask_args(&["--max-turns", "-4"]), "out_of_range", 3);
}

#[test]
fn input_errors_are_refused_before_the_ledger_is_touched() {
    let env = Env::new();
    env.fleet();
    env.fails(
        &[
            "ask",
            "--from",
            "agent a",
            "--to",
            "agent-b",
            "--fleet",
            "fleet-alpha",
            "--payload",
            "{}",
        ],
        "invalid_id",
        3,
    );
    env.fails(
        &[
            "ask",
            "--from",
            "agent-a",
            "--to",
            "agent-b",
            "--fleet=-x",
            "--payload",
            "{}",
        ],
        "invalid_id",
        3,
    );
    env.fails(
        &[
            "ask",
            "--from",
            "agent-a",
            "--to",
            "agent-a",
            "--fleet",
            "fleet-alpha",
            "--payload",
            "{}",
        ],
        "same_agent",
        3,
    );
    env.fails(
        &[
            "ask",
            "--from",
            "agent-a",
            "--to",
            "agent-b",
            "agent-c",
            "--fleet",
            "fleet-alpha",
            "--payload",
            "{}",
        ],
        "group_not_supported",
        3,
    );
    env.fails(
        &[
            "ask",
            "--from",
            "agent-a",
            "--to",
            "agent-b,agent-c",
            "--fleet",
            "fleet-alpha",
            "--payload",
            "{}",
        ],
        "group_not_supported",
        3,
    );
    env.fails(
        &[
            "ask",
            "--from",
            "agent-a",
            "--to",
            "agent-b",
            "--fleet",
            "fleet-alpha",
            "--payload",
            "{nope",
        ],
        "payload_not_json",
        3,
    );
    env.fails(
        &[
            "ask",
            "--from",
            "agent-a",
            "--to",
            "agent-b",
            "--fleet",
            "fleet-alpha",
            "--payload-file",
            "/does/not/exist",
        ],
        "invalid_argument",
        3,
    );
    env.fails(
        &[
            "wake",
            "--agent",
            "agent-b",
            "--discussion",
            "nope",
            "--expected-head",
            "msg_1",
        ],
        "invalid_id",
        3,
    );
    env.fails(
        &[
            "wake",
            "--agent",
            "agent-b",
            "--discussion",
            "dsc_1",
            "--expected-head",
            "att_1",
        ],
        "invalid_id",
        3,
    );
    env.fails(&["show", "msg_1"], "invalid_id", 3);
    env.fails(&["quota", "set", "100001"], "out_of_range", 3);
    env.fails(&["quota", "set", "-1"], "out_of_range", 3);
    env.fails(
        &["kill-switch", "on", "--reason", " "],
        "invalid_argument",
        3,
    );
    let usage = env.fails(&["ask", "--from", "agent-a"], "usage", 2);
    assert!(usage["message"].as_str().unwrap().contains("--to"));
    env.fails(
        &["reply", "--type", "result", "--payload", "{}"],
        "usage",
        2,
    );
}

#[test]
fn envelope_limit_counts_utf8_bytes_of_the_whole_envelope() {
    let env = Env::new();
    env.fleet();
    // Measure the envelope around an empty string body.
    env.ok(&ask_args(&[])
        .iter()
        .map(|a| if *a == "{}" { r#"{"t":""}"# } else { a })
        .collect::<Vec<_>>());
    let overhead = env.records().last().unwrap()["payload"]
        .as_str()
        .unwrap()
        .len();
    let room = 65_536 - overhead;
    // Fill it with two-byte characters, plus one ASCII byte when odd.
    let fill = |extra: usize| {
        let text = format!("{}{}", "é".repeat(room / 2), "x".repeat(room % 2 + extra));
        json!({ "t": text }).to_string()
    };
    let exact = fill(0);
    let path = env.dir.path().join("body.json");
    std::fs::write(&path, &exact).unwrap();
    let path = path.to_str().unwrap();
    let out = env.ok(&[
        "ask",
        "--from",
        "agent-a",
        "--to",
        "agent-b",
        "--fleet",
        "fleet-alpha",
        "--payload-file",
        path,
    ]);
    let stored = env.records().last().unwrap()["payload"]
        .as_str()
        .unwrap()
        .len();
    assert_eq!(
        stored, 65_536,
        "the accepted envelope is exactly at the limit"
    );
    assert!(out["discussion_id"].is_string());
    std::fs::write(path, fill(1)).unwrap();
    let err = env.fails(
        &[
            "ask",
            "--from",
            "agent-a",
            "--to",
            "agent-b",
            "--fleet",
            "fleet-alpha",
            "--payload-file",
            path,
        ],
        "payload_too_large",
        3,
    );
    assert_eq!(err["details"]["envelope_bytes"], 65_537);
    // Through stdin too.
    let out = env.run_stdin(
        &[
            "--json",
            "ask",
            "--from",
            "agent-a",
            "--to",
            "agent-b",
            "--fleet",
            "fleet-alpha",
            "--payload-file",
            "-",
        ],
        &exact,
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
}

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
fn ask_state_errors_in_contract_order() {
    let env = Env::new();
    env.fails(&ask_args(&[]), "unknown_fleet", 4);
    env.ok(&["fleet", "add", "fleet-alpha", "agent-a"]);
    let err = env.fails(&ask_args(&[]), "not_in_fleet", 4);
    assert_eq!(err["details"]["agent_ids"], json!(["agent-b"]));
    env.ok(&["kill-switch", "on", "--reason", "maintenance"]);
    // The kill-switch is checked first, before the fleet.
    env.fails(
        &[
            "ask",
            "--from",
            "agent-a",
            "--to",
            "agent-b",
            "--fleet",
            "no-such",
            "--payload",
            "{}",
        ],
        "kill_switch_engaged",
        6,
    );
    env.ok(&["kill-switch", "off"]);
    env.ok(&["fleet", "add", "fleet-alpha", "agent-b"]);
    env.ok(&ask_args(&[]));
    // Removing an agent stops new asks but not discussions under way.
    env.ok(&["fleet", "remove", "fleet-alpha", "agent-b"]);
    env.fails(&ask_args(&[]), "not_in_fleet", 4);
}

#[test]
fn wake_state_errors_in_contract_order() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "5000"]);
    let wake = |agent: &str, dsc: &str, head: &str| -> Vec<String> {
        [
            "wake",
            "--agent",
            agent,
            "--discussion",
            dsc,
            "--expected-head",
            head,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let run = |env: &Env, args: Vec<String>, code: &str, exit: i32| {
        env.fails(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            code,
            exit,
        )
    };
    run(
        &env,
        wake("agent-b", "dsc_missing", &root),
        "unknown_discussion",
        4,
    );
    let err = run(&env, wake("agent-b", &dsc, "msg_other"), "stale_head", 5);
    assert_eq!(err["details"]["head_message_id"], root.as_str());
    let err = run(&env, wake("agent-a", &dsc, &root), "not_recipient", 5);
    assert_eq!(err["details"]["to_agent_id"], "agent-b");
    let att = env.wake(&dsc, "agent-b", &root);
    let err = run(&env, wake("agent-b", &dsc, &root), "turn_already_active", 5);
    assert_eq!(err["details"]["attempt_id"], att.as_str());
    // stale_head is checked before turn_already_active and not_recipient.
    run(&env, wake("agent-a", &dsc, "msg_other"), "stale_head", 5);
    env.advance(6_000);
    let err = run(&env, wake("agent-b", &dsc, &root), "discussion_terminal", 5);
    assert_eq!(err["details"]["status"], "deadman");
    env.ok(&["kill-switch", "on", "--reason", "stop"]);
    run(
        &env,
        wake("agent-b", "dsc_missing", &root),
        "kill_switch_engaged",
        6,
    );
}

#[test]
fn reply_state_errors_in_contract_order() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "5000"]);
    let reply = |agent: &str, dsc: &str, att: &str, to: &str| -> Vec<String> {
        [
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
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let run = |env: &Env, args: Vec<String>, code: &str, exit: i32| {
        env.fails(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            code,
            exit,
        )
    };
    run(
        &env,
        reply("agent-b", "dsc_missing", "att_x", &root),
        "unknown_discussion",
        4,
    );
    run(
        &env,
        reply("agent-b", &dsc, "att_x", &root),
        "unknown_attempt",
        4,
    );
    let att = env.wake(&dsc, "agent-b", &root);
    run(
        &env,
        reply("agent-a", &dsc, &att, &root),
        "not_attempt_agent",
        5,
    );
    run(
        &env,
        reply("agent-b", &dsc, &att, "msg_other"),
        "stale_head",
        5,
    );
    let msg = env.reply(&dsc, "agent-b", &att, &root, "question", false);
    let err = run(
        &env,
        reply("agent-b", &dsc, &att, &msg),
        "attempt_not_live",
        5,
    );
    assert_eq!(err["details"]["state"], "completed");
    // A lapsed attempt makes the discussion deadman: terminal comes first.
    let att2 = env.wake(&dsc, "agent-a", &msg);
    env.advance(6_000);
    let err = run(
        &env,
        reply("agent-a", &dsc, &att2, &msg),
        "discussion_terminal",
        5,
    );
    assert_eq!(err["details"]["status"], "deadman");
    env.ok(&["kill-switch", "on", "--reason", "stop"]);
    run(
        &env,
        reply("agent-a", &dsc, &att2, &msg),
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

#[test]
fn kill_switch_blocks_writes_but_never_reads() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let state = env.ok(&["kill-switch", "on", "--reason", "runaway"]);
    assert_eq!(state["engaged"], true);
    assert_eq!(state["reason"], "runaway");
    assert_eq!(state["changed_by"], "tester");
    env.fails(&ask_args(&[]), "kill_switch_engaged", 6);
    env.fails(
        &[
            "wake",
            "--agent",
            "agent-b",
            "--discussion",
            &dsc,
            "--expected-head",
            &root,
        ],
        "kill_switch_engaged",
        6,
    );
    assert_eq!(env.status(&dsc), "open");
    assert_eq!(env.ok(&["kill-switch"])["engaged"], true);
    assert_eq!(env.ok(&["kill-switch", "off"])["engaged"], false);
    env.wake(&dsc, "agent-b", &root);
}

/// Errors for a person: `error[code]: message` and `hint:` lines on stderr,
/// nothing on stdout, as written here (inline snapshots; ids as `[dsc]`,
/// `[msg]`).
#[test]
fn errors_without_json_are_human_with_hints() {
    let env = Env::new();
    env.fleet();
    let human = |args: &[&str], status: i32| {
        let out = env.run(args);
        assert_eq!(out.status, status, "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{}", out.stdout);
        out.stderr
    };
    let ask = |to: &'static str, fleet: &'static str, payload: &'static str| {
        [
            "ask",
            "--from",
            "agent-a",
            "--to",
            to,
            "--fleet",
            fleet,
            "--payload",
            payload,
        ]
    };
    insta::assert_snapshot!(human(&ask("agent-b", "nope", "{}"), 4), @r"
    error[unknown_fleet]: no fleet nope
    hint: register the agents first: `discuss fleet add nope agent-a agent-b`
    ");
    insta::assert_snapshot!(human(&ask("agent-a", "fleet-alpha", "{}"), 3), @r"
    error[same_agent]: agent-a cannot ask itself
    hint: a discussion is between two distinct agents
    ");
    insta::assert_snapshot!(human(&ask("agent-b", "fleet-alpha", "not json"), 3), @r#"
    error[payload_not_json]: payload is not JSON: expected ident at line 1 column 2
    hint: pass a JSON value, e.g. --payload '{"body":"Refactor auth module?"}'
    "#);
    insta::assert_snapshot!(human(&["list", "--status", "nonsense"], 3), @r#"
    error[invalid_argument]: unknown status "nonsense"
    hint: statuses: open, active, closed, deadman, expired, exhausted, invalid, terminal
    "#);
    let (dsc, _) = env.discussion(&[]);
    let stale = human(
        &[
            "wake",
            "--agent",
            "agent-b",
            "--discussion",
            &dsc,
            "--expected-head",
            "msg_0190f0b0a0b07000800000000000abcd",
        ],
        5,
    );
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"(dsc|msg)_[0-9a-f]{32}", "[$1]");
    settings.bind(|| {
        insta::assert_snapshot!(stale, @r"
        error[stale_head]: [dsc] has no message [msg]; its head is [msg]
        hint: read the head first: `discuss show [dsc]`
        ");
    });
}

#[test]
fn io_and_unreadable_ledgers() {
    let env = Env::file();
    std::fs::create_dir_all(env.ledger()).unwrap();
    env.fails(&["show", "dsc_1"], "ledger_unreadable", 1);
    // A directory is the same code for writers as for readers.
    env.fails(&["fleet", "add", "f", "a"], "ledger_unreadable", 1);
    let bad_clock = env
        .command()
        .args(["--json", "show", "dsc_1"])
        .env("DISCUSS_NOW", "someday")
        .output()
        .unwrap();
    assert_eq!(bad_clock.status.code(), Some(3));
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

#[test]
fn fleet_membership_is_idempotent() {
    let env = Env::new();
    env.ok(&["fleet", "add", "f1", "a", "b"]);
    let before = env.ledger_bytes();
    let v = env.ok(&["fleet", "add", "f1", "b", "a"]);
    assert_eq!(v["agents"], json!(["a", "b"]));
    assert_eq!(env.ledger_bytes(), before, "nothing to record twice");
    env.ok(&["fleet", "add", "f2", "c"]);
    let list = env.ok(&["fleet", "list"]);
    assert_eq!(
        list,
        json!({"fleets":[{"fleet_id":"f1","agents":["a","b"]},{"fleet_id":"f2","agents":["c"]}]})
    );
    env.ok(&["fleet", "remove", "f2", "c"]);
    env.fails(&["fleet", "list", "f2"], "unknown_fleet", 4);
}

#[test]
fn unknown_discussion_suggests_a_near_match() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let typo = format!("{}x", &dsc[..dsc.len() - 1]);
    let err = env.fails(&["show", &typo], "unknown_discussion", 4);
    assert_eq!(err["hints"][0], format!("did you mean {dsc}?"));
    // A unique prefix is no typo: it names the discussion (cli.md, id
    // prefixes).
    let prefix = &dsc[..12];
    let woken = env.ok(&[
        "wake",
        "--agent",
        "agent-b",
        "--discussion",
        prefix,
        "--expected-head",
        &root,
    ]);
    assert_eq!(woken["discussion_id"], dsc.as_str());
    let err = env.fails(&["show", "dsc_0000"], "unknown_discussion", 4);
    assert!(err["hints"][0].as_str().unwrap().contains("discuss list"));
}

/// Runs `discuss` with an endless stdin; returns (exit status, stderr JSON,
/// how long it took). The writer stops when the reader goes away.
fn with_endless_stdin(env: &Env, args: &[&str]) -> (i32, serde_json::Value, std::time::Duration) {
    use std::io::Write;
    use std::process::Stdio;
    let start = std::time::Instant::now();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("discuss"))
        .env_clear()
        .env("DISCUSS_LEDGER", env.ledger())
        .env("DISCUSS_NOW", env.now_ms.to_string())
        .env("DISCUSS_ACTOR", "tester")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk = vec![b' '; 1 << 16];
        // Bounded: 1 GiB at most, far past any limit.
        for _ in 0..(1 << 14) {
            if stdin.write_all(&chunk).is_err() {
                return;
            }
        }
    });
    let out = child.wait_with_output().unwrap();
    let took = start.elapsed();
    writer.join().unwrap();
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    (out.status.code().unwrap(), err["error"].clone(), took)
}

#[test]
fn endless_inputs_are_refused_after_the_limit() {
    let env = Env::new();
    env.fleet();
    let before = env.ledger_bytes();
    let mut args = ASK_A_TO_B[..7].to_vec();
    args.extend(["--payload-file", "/dev/zero"]);
    env.fails(&args, "payload_too_large", 3);
    let mut args = vec!["--json"];
    args.extend_from_slice(&ASK_A_TO_B[..7]);
    args.extend(["--payload-file", "-"]);
    let (status, err, took) = with_endless_stdin(&env, &args);
    assert_eq!(
        (status, err["code"].as_str()),
        (3, Some("payload_too_large"))
    );
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
    let (status, err, took) = with_endless_stdin(&env, &["call", "ask_peer", "-"]);
    assert_eq!(
        (status, err["code"].as_str()),
        (3, Some("payload_too_large"))
    );
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
    assert_eq!(env.ledger_bytes(), before);
}

#[test]
fn deep_payloads_are_invalid_input_with_a_clear_message() {
    let env = Env::new();
    env.fleet();
    for depth in 118..=131 {
        let body = "[".repeat(depth) + &"]".repeat(depth);
        let mut args = ASK_A_TO_B.to_vec();
        args.push(&body);
        let err = env.fails(&args, "invalid_argument", 3);
        assert_eq!(err["details"]["depth"], depth, "{err}");
        assert!(err["message"].as_str().unwrap().contains("levels deep"));
    }
    // The deepest allowed body goes through ask, show and call alike.
    let body = "[".repeat(100) + &"]".repeat(100);
    let mut args = ASK_A_TO_B.to_vec();
    args.push(&body);
    let dsc = env.ok(&args)["discussion_id"].as_str().unwrap().to_owned();
    assert_eq!(env.show(&dsc)["status"], "open");
    let out = env.run(&[
        "call",
        "get_discussion",
        &format!(r#"{{"discussion_id":"{dsc}"}}"#),
    ]);
    assert_eq!(out.status, 0, "{}", out.stderr);
}
