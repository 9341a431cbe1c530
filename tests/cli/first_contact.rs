//! What a newcomer, a CI job and an MCP agent meet in their first minutes
//! (issue 21): mistyped locations, usage errors, wrong paths, the woken
//! agent's turn, and messages that say what happened.

use crate::common::*;

/// A location that looks like a URL of another scheme, or a libpq
/// key/value string, is refused before anything is created.
#[test]
fn a_mistyped_url_never_becomes_a_file_ledger() {
    let env = Env::file();
    for location in [
        "postgresq://agent@db/fleet",
        "postgresql:/agent@db/fleet",
        "postgres:/db",
        "http://db.internal/fleet",
        "sqlite:///tmp/x.db",
        "host=db dbname=fleet password=SECRET",
        " dbname=fleet",
    ] {
        for args in [
            &["--json", "fleet", "add", "f", "a", "b"][..],
            &["--json", "list"][..],
            &["--json", "verify"][..],
        ] {
            let out = env.run_with(&[("DISCUSS_LEDGER", location)], args, "");
            assert_eq!(out.status, 3, "{location} {args:?}: {}", out.stderr);
            assert_eq!(out.error()["code"], "invalid_argument", "{location}");
            assert!(!out.stderr.contains("SECRET"), "{}", out.stderr);
            assert!(!out.stderr.contains("agent@db"), "{}", out.stderr);
        }
        let human = env.run_with(
            &[("DISCUSS_LEDGER", location)],
            &["fleet", "add", "f", "a"],
            "",
        );
        assert!(
            human.stderr.starts_with("error[invalid_argument]: "),
            "{}",
            human.stderr
        );
    }
    // Nothing was created in the working folder (where a relative path
    // would have put a ledger), nor beside it.
    let created: Vec<_> = std::fs::read_dir(env.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(created.is_empty(), "{created:?}");
    // A file path with a colon that is not `SCHEME:/` stays a file.
    let out = env.run_with(
        &[("DISCUSS_LEDGER", "notes:v1.jsonl")],
        &["fleet", "add", "f", "a"],
        "",
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(env.dir.path().join("notes:v1.jsonl").exists());
}

/// No spelling of a database password reaches a person: not in errors,
/// not in `ledger info`, human or JSON; `PGPASSWORD` is never read back.
#[test]
fn database_passwords_are_never_shown() {
    let env = Env::file();
    // Nothing listens on a port just freed: every command fails to connect
    // and names the location it tried.
    let port = closed_port();
    let urls = [
        format!("postgresql://ann:pa/SECRET@127.0.0.1:{port}/db"),
        format!("postgresql://ann:pa?SECRET@127.0.0.1:{port}/db"),
        format!("postgresql://ann:SECRET@127.0.0.1:{port}/db?connect_timeout=1"),
        format!("postgres://127.0.0.1:{port}/db?user=ann&password=SECRET"),
        format!("postgres://127.0.0.1:{port}/db?user=ann&pass%77ord=SECRET"),
        format!("postgres://127.0.0.1:{port}/db?password=SECRET1&user=ann&password=SECRET2"),
        format!("postgres://ann:SECRET@127.0.0.1:{port}/db?frobnicate=SECRET"),
    ];
    for url in &urls {
        for args in [
            &["--json", "ledger", "info"][..],
            &["ledger", "info"][..],
            &["--json", "fleet", "add", "f", "a"][..],
            &["show", "dsc_0123"][..],
        ] {
            let out = env.run_with(
                &[("DISCUSS_LEDGER", url), ("PGPASSWORD", "SECRET")],
                args,
                "",
            );
            assert_ne!(out.status, 0, "{url} {args:?}");
            let all = format!("{}{}", out.stdout, out.stderr);
            assert!(!all.contains("SECRET"), "{url} {args:?}: {all}");
        }
    }
}

/// Usage errors read as errors: one message line, the usage as the help
/// writes it (options given by the environment are not shown as required),
/// tips as hints; no escaped line breaks, on a terminal or in a pipe.
#[test]
fn usage_errors_on_a_terminal_and_in_a_pipe() {
    let env = Env::file();
    let cases = [
        ("unknown_command", "shwo x"),
        ("missing_arguments", "ask --from agent-a"),
        (
            "bad_value",
            "ask --from a --to b --fleet f --payload {} --max-turns many",
        ),
    ];
    for (name, args) in cases {
        for columns in [80usize, 200] {
            let screen = on_a_terminal(
                &env,
                "xterm",
                &format!("stty cols {columns} rows 50; discuss --color never {args}"),
            );
            for line in screen.lines() {
                assert!(
                    line.chars().count() <= columns,
                    "{name} at {columns}: {line:?}"
                );
            }
            assert!(!screen.contains("\\n"), "{name}: {screen}");
            insta::assert_snapshot!(format!("usage_{name}_{columns}"), screen);
        }
        let out = env.run(&args.split(' ').collect::<Vec<_>>());
        assert_eq!(out.status, 2, "{name}");
        assert!(out.stdout.is_empty());
        assert!(!out.stderr.contains("\\n"), "{name}: {}", out.stderr);
        // DISCUSS_LEDGER is set, and still not shown as a required option.
        assert!(!out.stderr.contains("--ledger"), "{name}: {}", out.stderr);
        assert!(out.stderr.starts_with("error[usage]: "), "{}", out.stderr);
        insta::assert_snapshot!(format!("usage_{name}_pipe"), out.stderr);
        // In JSON: the message on one line, the usage in the details.
        let mut json_args = vec!["--json"];
        json_args.extend(args.split(' '));
        let error = env.run(&json_args).error();
        assert_eq!(error["code"], "usage");
        assert!(
            !error["message"].as_str().unwrap().contains('\n'),
            "{error}"
        );
        assert!(
            error["details"]["usage"]
                .as_str()
                .unwrap()
                .starts_with("discuss"),
            "{error}"
        );
    }
    let out = env.run(&["shwo", "x"]);
    assert!(
        out.stderr
            .contains("hint: a similar subcommand exists: 'show'"),
        "{}",
        out.stderr
    );
}

/// A wrong ledger path fails where CI looks, and every "nothing here"
/// answer names the location it looked at.
#[test]
fn wrong_ledger_paths_do_not_pass_quietly() {
    let env = Env::new();
    let location = env.ledger().display().to_string();
    // verify of a ledger that does not exist fails, naming it.
    let err = env.fails(&["verify"], "ledger_unreadable", 1);
    assert_eq!(err["details"]["ledger"], location.as_str());
    let out = env.run(&["verify"]);
    assert_eq!(out.status, 1);
    assert!(out.stderr.contains(&location), "{}", out.stderr);
    // events says on stderr that there is nothing there (stdout stays a
    // stream of records).
    let out = env.run(&["events"]);
    assert_eq!((out.status, out.stdout.as_str()), (0, ""));
    assert!(
        out.stderr
            .contains(&format!("there is no ledger at {location}")),
        "{}",
        out.stderr
    );
    let out = env.run(&["--json", "events"]);
    assert_eq!((out.status, out.stdout.as_str()), (0, ""));
    assert!(out.stderr.contains("no ledger at"), "{}", out.stderr);
    // Once there is a ledger: an empty list names it, and so does show.
    env.fleet();
    let out = env.run(&["list"]);
    assert_eq!(out.stdout, format!("no discussions in {location}\n"));
    let out = env.run(&["inbox", "--agent", "agent-b"]);
    assert_eq!(
        out.stdout,
        format!("nothing waits for agent-b in {location}\n")
    );
    let err = env.fails(&["show", "dsc_0123456789"], "unknown_discussion", 4);
    assert_eq!(err["details"]["ledger"], location.as_str());
    let out = env.run(&["show", "dsc_0123456789"]);
    assert!(
        out.stderr.contains(&format!("hint: looked in {location}")),
        "{}",
        out.stderr
    );
    env.ok(&["verify"]);
}

/// A reader pointed at a file that is not a ledger says so and creates
/// nothing beside it; a directory is the same `ledger_unreadable` for
/// readers and writers.
#[test]
fn readers_of_a_file_that_is_not_a_ledger_refuse_it_and_create_nothing() {
    let env = Env::file();
    let readme = env.dir.path().join("README.md");
    std::fs::write(&readme, "# notes\n\nnot a ledger\n").unwrap();
    let folder = env.dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    for location in [&readme, &folder] {
        for args in [
            &["list"][..],
            &["list", "--status", "closed"][..],
            &["inbox", "--agent", "a"][..],
            &["show", "dsc_0123456789"][..],
            &["verify"][..],
            &["events"][..],
            &["ledger", "export"][..],
            &["fleet", "add", "f", "a"][..],
        ] {
            let mut all = vec!["--json"];
            all.extend_from_slice(args);
            let out = env.run_with(&[("DISCUSS_LEDGER", location.to_str().unwrap())], &all, "");
            assert_eq!(out.status, 1, "{location:?} {args:?}: {}", out.stderr);
            assert_eq!(
                out.error()["code"],
                "ledger_unreadable",
                "{location:?} {args:?}"
            );
            assert!(
                out.error()["message"]
                    .as_str()
                    .unwrap()
                    .contains(location.to_str().unwrap())
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(&readme).unwrap(),
        "# notes\n\nnot a ledger\n"
    );
    let mut names: Vec<_> = std::fs::read_dir(env.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["README.md", "folder"],
        "no cache beside a file that is not a ledger"
    );
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
}

/// `discuss mcp` says on stderr which ledger it serves, and warns when
/// that is the default one and it does not exist (a host that passes no
/// DISCUSS_LEDGER would otherwise get empty answers for ever).
#[test]
fn mcp_names_its_ledger_and_warns_of_an_empty_default() {
    let env = Env::file();
    let out = env.run(&["mcp"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let location = env.ledger().display().to_string();
    assert!(
        out.stderr
            .contains(&format!("serves the file ledger {location}")),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    assert!(
        out.stdout.is_empty(),
        "stdout carries only protocol messages"
    );
    // As a host that passes only HOME and PATH starts it.
    let home = env.dir.path().join("home");
    let output = std::process::Command::new(assert_cmd::cargo::cargo_bin("discuss"))
        .env_clear()
        .env("HOME", &home)
        .env("PATH", "/usr/bin:/bin")
        .arg("mcp")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let default = home.join(".local/state/discuss/ledger.jsonl");
    assert!(stderr.contains(&default.display().to_string()), "{stderr}");
    assert!(
        stderr.contains("warning: that is the default ledger and it does not exist"),
        "{stderr}"
    );
    assert!(stderr.contains("DISCUSS_LEDGER"), "{stderr}");
    assert!(!default.exists(), "reading creates nothing");
}

/// A mistyped head is not a race, message and attempt ids take unique
/// prefixes, and a discussion stamped ahead of the clock says so.
#[test]
fn ids_that_name_nothing_say_so() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let wake = |head: &str| {
        [
            "wake",
            "--agent",
            "agent-b",
            "--discussion",
            &dsc,
            "--expected-head",
            head,
        ]
        .map(str::to_owned)
    };
    let typo = env.fails(
        &wake("msg_00000000").each_ref().map(String::as_str),
        "stale_head",
        5,
    );
    assert_eq!(typo["details"]["known"], false, "{typo}");
    assert!(
        typo["message"]
            .as_str()
            .unwrap()
            .contains("has no message msg_00000000"),
        "{typo}"
    );
    // A unique prefix of the head names it.
    let woken = env.ok(&wake(&root[..12]).each_ref().map(String::as_str));
    let attempt = woken["attempt"]["attempt_id"].as_str().unwrap().to_owned();
    assert_eq!(woken["attempt"]["head_message_id"], root.as_str());
    let replied = env.ok(&reply_args(
        &dsc,
        "agent-b",
        &attempt[..12],
        &root[..12],
        "question",
        "{}",
    ));
    assert_eq!(replied["turn"], 2);
    let record = env
        .records()
        .into_iter()
        .rfind(|r| r["kind"] == "message")
        .unwrap();
    let envelope: serde_json::Value =
        serde_json::from_str(record["payload"].as_str().unwrap()).unwrap();
    assert_eq!(
        envelope["reply_to_message_id"],
        root.as_str(),
        "ids are written whole"
    );
    assert_eq!(envelope["attempt_id"], attempt.as_str());
    // The root is an older message now: the head moved, a real race.
    let moved = env.fails(
        &[
            "wake",
            "--agent",
            "agent-a",
            "--discussion",
            &dsc,
            "--expected-head",
            &root,
        ],
        "stale_head",
        5,
    );
    assert_eq!(moved["details"]["known"], true, "{moved}");
    assert!(
        moved["message"].as_str().unwrap().contains("moved"),
        "{moved}"
    );
    // A record two hours ahead of this clock: known to the ledger, left
    // out of derivation, and said so (not "did you mean" the same id).
    let ahead = "dsc_01a2ffffffff7000800000000000ahead";
    let future = serde_json::json!({"v":1,"kind":"message","id":"msg_01a2ffffffff7000800000000000ahe1",
        "at_ms": env.now_ms + 7_200_000, "by":"other-host","fleet_id":"fleet-alpha",
        "from_agent_id":"agent-a","to_agent_id":"agent-b","correlation_id":ahead,
        "payload": serde_json::json!({"schema":"discussion/v1","discussion_id":ahead,"turn":1,
            "type":"ask","reply_to_message_id":null,"attempt_id":null,"close":false,
            "policy":{"max_turns":4,"timeout_ms":300000,"turn_timeout_ms":60000},
            "body":{}}).to_string()});
    env.append_raw(&format!("{future}\n"));
    let err = env.fails(&["show", ahead], "unknown_discussion", 4);
    assert_eq!(err["details"]["ahead_of_clock"], true, "{err}");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("ahead of this clock"),
        "{err}"
    );
    assert!(!err.to_string().contains("did you mean"), "{err}");
    env.advance(7_200_000);
    assert_eq!(
        env.status(ahead),
        "open",
        "it counts once the clock catches up"
    );
}

/// A reply forged without an attempt into the open discussion of the
/// screens' ledger (fixed ids and times), and a line whose envelope does
/// not parse: two findings with long details.
const FORGED: &str = concat!(
    r#"{"v":1,"kind":"message","id":"msg_01a22c54d00070000000000000f0a9ed","at_ms":1780000050000,"by":"someone-else","fleet_id":"fleet-alpha","from_agent_id":"agent-b","to_agent_id":"agent-reviewer","correlation_id":"dsc_01a22c54cff476d794bb426e7f9c48d8","payload":"{\"schema\":\"discussion/v1\",\"discussion_id\":\"dsc_01a22c54cff476d794bb426e7f9c48d8\",\"turn\":2,\"type\":\"result\",\"reply_to_message_id\":\"msg_01a22c54cff476d794bb426f69d35b4a\",\"attempt_id\":\"att_01a22c54d00070000000000000000bad\",\"close\":true,\"body\":{\"body\":\"approved\"}}"}"#,
    "\n",
    r#"{"v":1,"kind":"message","id":"msg_01a22c54d00870000000000000000bad","at_ms":1780000051000,"by":"someone-else","fleet_id":"fleet-alpha","from_agent_id":"agent-reviewer","to_agent_id":"agent-b","correlation_id":"dsc_01a22c54cff476d794bb426e7f9c48d8","payload":"{\"schema\":\"discussion/v1\",\"turn\":\"three\"}"}"#,
    "\n"
);

/// Integrity findings are blocks like the transcript's: ids whole, the
/// detail wrapped to the terminal at word boundaries, never in a pipe.
#[test]
fn findings_read_whole_on_a_terminal_and_in_a_pipe() {
    let mut env = Env::new();
    env.append_raw(include_str!("../fixtures/screens.jsonl"));
    env.append_raw(FORGED);
    env.now_ms = 1_780_000_070_000;
    let dsc = "dsc_01a22c54cff476d794bb426e7f9c48d8";
    let location = env.ledger().display().to_string();
    assert_eq!(env.status(dsc), "invalid");
    let findings = env.show(dsc)["integrity_findings"]
        .as_array()
        .unwrap()
        .len();
    assert!(findings >= 2, "{findings}");
    for columns in [80usize, 200] {
        let screen = on_a_terminal(
            &env,
            "xterm",
            &format!("stty cols {columns} rows 80; discuss --color never show {dsc}"),
        )
        .replace(&location, "[LEDGER]");
        for line in screen.lines() {
            assert!(line.chars().count() <= columns, "at {columns}: {line:?}");
        }
        // Ids are never split across lines.
        for id in [
            "msg_01a22c54d00070000000000000f0a9ed",
            "msg_01a22c54d00870000000000000000bad",
            // In the detail itself.
            "att_01a22c54d00070000000000000000bad",
        ] {
            assert!(screen.contains(id), "{id} whole at {columns}: {screen}");
        }
        insta::assert_snapshot!(format!("findings_{columns}"), screen);
    }
    let out = env.run(&["show", dsc]);
    let blocks = out.stdout[out.stdout.find("Integrity findings").unwrap()..].to_owned();
    assert_eq!(blocks.matches(" · line ").count(), findings, "{blocks}");
    // In a pipe a detail is one line, whatever its length.
    assert!(
        blocks.contains("at turn 2 has no matching live attempt att_"),
        "{blocks}"
    );
    insta::assert_snapshot!("findings_pipe", blocks);
}

/// The small things a newcomer trips on.
#[test]
fn papercuts() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--idempotency-key", "first-ask"]);
    // `call` without a request on a terminal says where it reads from
    // instead of waiting in silence.
    let screen = on_a_terminal(
        &env,
        "xterm",
        "discuss call get_discussion; echo \"exit $?\"",
    );
    assert!(
        screen.contains("reads the request object from stdin, which is a terminal"),
        "{screen}"
    );
    assert!(screen.contains("exit 2"), "{screen}");
    // A replayed ask of a discussion that moved on suggests no wake.
    env.wake(&dsc, "agent-b", &root);
    let mut ask = ASK_A_TO_B.to_vec();
    ask.extend([
        r#"{"body":"Refactor auth module?"}"#,
        "--idempotency-key",
        "first-ask",
    ]);
    let replayed = env.run(&ask);
    assert_eq!(replayed.status, 0, "{}", replayed.stderr);
    assert!(replayed.stdout.contains("replayed"), "{}", replayed.stdout);
    assert!(
        !replayed.stdout.contains("next: discuss wake"),
        "{}",
        replayed.stdout
    );
    // A fresh ask still says what comes next.
    let mut fresh = ASK_A_TO_B.to_vec();
    fresh.push("{}");
    assert!(env.run(&fresh).stdout.contains("next: discuss wake"));
    // Counts read as English.
    env.ok(&["quota", "set", "1", "--agent", "agent-c"]);
    let ask_c = || {
        let v = env.ok(&[
            "ask",
            "--from",
            "agent-a",
            "--to",
            "agent-c",
            "--fleet",
            "fleet-alpha",
            "--payload",
            "{}",
        ]);
        let id = |field: &str| v[field].as_str().unwrap().to_owned();
        (id("discussion_id"), id("root_message_id"))
    };
    let (other, other_root) = ask_c();
    env.wake(&other, "agent-c", &other_root);
    let (third, third_root) = ask_c();
    let err = env.fails(
        &[
            "wake",
            "--agent",
            "agent-c",
            "--discussion",
            &third,
            "--expected-head",
            &third_root,
        ],
        "wake_quota_exceeded",
        6,
    );
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("was woken once in the last hour"),
        "{err}"
    );
    // --help names every tool `call` takes; the man page every exit code.
    let help = env.run(&["--help"]).stdout;
    for tool in [
        "ask_peer",
        "wake_agent",
        "reply_discussion",
        "get_discussion",
        "list_discussions",
        "inbox",
    ] {
        assert!(help.contains(tool), "{tool}: {help}");
    }
    let (_, man) = discuss::assets::man_pages()
        .into_iter()
        .find(|(name, _)| name == "discuss.1")
        .unwrap();
    let man = String::from_utf8(man).unwrap();
    assert!(man.contains("ledger_unavailable"), "{man}");
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
