//! Every error code of the core commands: code, exit status, and a ledger
//! left byte-identical.

use crate::common::*;

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
fn input_errors_are_refused_before_the_ledger_is_touched() {
    let env = Env::new();
    env.fleet();
    env.fails(
        &Argv::ask("agent a", "agent-b")
            .opt("--payload", "{}")
            .words(),
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
        &Argv::ask("agent-a", "agent-a")
            .opt("--payload", "{}")
            .words(),
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
        &Argv::ask("agent-a", "agent-b,agent-c")
            .opt("--payload", "{}")
            .words(),
        "group_not_supported",
        3,
    );
    env.fails(
        &Argv::ask("agent-a", "agent-b")
            .opt("--payload", "{nope")
            .words(),
        "payload_not_json",
        3,
    );
    env.fails(
        &Argv::ask("agent-a", "agent-b")
            .opt("--payload-file", "/does/not/exist")
            .words(),
        "invalid_argument",
        3,
    );
    env.fails(
        &wake_argv("agent-b", "nope", "msg_1", &[], false),
        "invalid_id",
        3,
    );
    env.fails(
        &wake_argv("agent-b", "dsc_1", "att_1", &[], false),
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
        &wake_argv(
            "agent-b",
            &dsc,
            "msg_0190f0b0a0b07000800000000000abcd",
            &[],
            false,
        ),
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

/// On a database that cannot be reached, a reader does not say that
/// "nothing was written"; a writer does.
#[test]
fn a_failed_read_does_not_speak_of_writes() {
    let env = Env::file();
    let port = closed_port();
    let url = format!("postgresql://ann@127.0.0.1:{port}/fleet");
    let read = env.run_with(&[("DISCUSS_LEDGER", &url)], &["--json", "list"], "");
    assert_eq!(read.error()["code"], "ledger_unavailable");
    assert!(
        !read.stderr.contains("nothing was written"),
        "{}",
        read.stderr
    );
    let write = env.run_with(
        &[("DISCUSS_LEDGER", &url)],
        &["--json", "fleet", "add", "f", "a"],
        "",
    );
    assert_eq!(write.error()["code"], "ledger_unavailable");
    assert!(
        write.stderr.contains("nothing was written"),
        "{}",
        write.stderr
    );
}
