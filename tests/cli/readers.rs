//! Operator and script readers: list, inbox, verify, wait; human output
//! snapshots; a broken pipe.

use crate::common::*;
use serde_json::json;
use std::process::{Command, Stdio};

#[test]
fn list_filters_and_orders_newest_first_without_writing() {
    let mut env = Env::new();
    let (first, root) = env.discussion(&[]);
    env.advance(1_000);
    let (second, _) = env.discussion(&[]);
    env.advance(1_000);
    let att = env.wake(&first, "agent-b", &root);
    env.reply(&first, "agent-b", &att, &root, "result", true);
    let before = env.ledger_bytes();
    let all = env.ok(&["list"]);
    let ids: Vec<&str> = all["discussions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["discussion_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [first.as_str(), second.as_str()],
        "the closed one was updated last"
    );
    let row = &all["discussions"][0];
    assert_eq!(row["status"], "closed");
    assert_eq!(row["participants"], json!(["agent-a", "agent-b"]));
    assert_eq!(row["turns_used"], 2);
    assert_eq!(row["max_turns"], 4);
    assert_eq!(row["head_to_agent_id"], "agent-a");
    assert_eq!(row["escalated"], false);
    assert_eq!(row["fleet_id"], "fleet-alpha");
    let open = env.ok(&["list", "--status", "open"]);
    assert_eq!(open["discussions"].as_array().unwrap().len(), 1);
    let terminal = env.ok(&["list", "--status", "terminal"]);
    assert_eq!(terminal["discussions"][0]["discussion_id"], first.as_str());
    assert_eq!(
        env.ok(&["list", "--agent", "agent-c"])["discussions"],
        json!([])
    );
    assert_eq!(
        env.ok(&["list", "--fleet", "fleet-beta"])["discussions"],
        json!([])
    );
    env.fails(&["list", "--status", "sleeping"], "invalid_argument", 3);
    assert_eq!(env.ledger_bytes(), before, "list writes nothing");
}

#[test]
fn inbox_shows_what_an_agent_could_be_woken_for_and_writes_nothing() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    env.advance(1);
    let (busy, busy_root) = env.discussion(&[]);
    let attempt = env.wake(&busy, "agent-b", &busy_root);
    let before = env.ledger_bytes();
    let inbox = env.ok(&["inbox", "--agent", "agent-b"]);
    let rows = inbox["discussions"].as_array().unwrap();
    let ids: Vec<&str> = rows
        .iter()
        .map(|d| d["discussion_id"].as_str().unwrap())
        .collect();
    let mut expected = [busy.as_str(), dsc.as_str()];
    expected.sort_unstable();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted, expected,
        "open discussions addressed to agent-b, and its live turn"
    );
    // The live turn's row carries what a reply needs.
    let busy_row = rows
        .iter()
        .find(|r| r["discussion_id"] == busy.as_str())
        .unwrap();
    assert_eq!(busy_row["status"], "active");
    assert_eq!(busy_row["live_attempt_id"], attempt.as_str());
    let shown = env.show(&busy);
    assert_eq!(
        busy_row["live_attempt_deadline_at"],
        shown["attempts"][0]["deadline_at"]
    );
    let open_row = rows
        .iter()
        .find(|r| r["discussion_id"] == dsc.as_str())
        .unwrap();
    assert_eq!(open_row["live_attempt_id"], serde_json::Value::Null);
    assert_eq!(
        open_row["live_attempt_deadline_at"],
        serde_json::Value::Null
    );
    // list carries the same fields.
    let listed = env.ok(&["list", "--status", "active"]);
    assert_eq!(
        listed["discussions"][0]["live_attempt_id"],
        attempt.as_str()
    );
    assert_eq!(
        env.ok(&["inbox", "--agent", "agent-a"])["discussions"],
        json!([])
    );
    assert_eq!(
        env.ledger_bytes(),
        before,
        "inbox writes nothing and wakes nothing"
    );
    assert_eq!(env.status(&dsc), "open");
    // Once the turn lapses it is no one's to answer.
    env.advance(61_000);
    let inbox = env.ok(&["inbox", "--agent", "agent-b"]);
    assert_eq!(inbox["discussions"].as_array().unwrap().len(), 1);
    assert_eq!(inbox["discussions"][0]["discussion_id"], dsc.as_str());
    assert_eq!(env.status(&busy), "deadman");
    let _ = root;
}

#[test]
fn verify_is_clean_then_reports_every_kind_of_problem() {
    let env = Env::file();
    let (dsc, _) = env.discussion(&[]);
    let clean = env.ok(&["verify"]);
    assert_eq!(clean["ok"], true);
    assert_eq!(clean["discussions"], 1);
    let human = env.run(&["verify"]);
    assert_eq!(human.status, 0);
    assert!(human.stdout.starts_with("ok: "), "{}", human.stdout);
    env.append_raw("garbage\n");
    let line = json!({"v":1,"kind":"receipt","id":"rcp_x","at_ms":T0,"by":"x","receipt":"discussion.escalated","discussion_id":dsc});
    env.append_raw(&format!("{line}\n{{\"torn"));
    let out = env.run(&["--json", "verify"]);
    assert_eq!(out.status, 7);
    let report = out.json();
    assert_eq!(report["ok"], false);
    assert_eq!(
        report["unreadable_lines"][0]["line"], 5,
        "3 fleet records and the root come first"
    );
    assert_eq!(report["torn_tail_bytes"], 6);
    assert_eq!(
        report["invalid_discussions"][0]["discussion_id"],
        dsc.as_str()
    );
    assert_eq!(
        report["invalid_discussions"][0]["integrity_findings"][0]["kind"],
        "contradictory_receipts"
    );
}

#[test]
fn wait_returns_when_the_status_is_reached_or_times_out() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let out = env.run(&["--json", "wait", &dsc, "--until", "open"]);
    assert_eq!(out.status, 0);
    assert_eq!(out.json()["status"], "open");
    let out = env.run(&[
        "--json",
        "wait",
        &dsc,
        "--until",
        "terminal",
        "--timeout-ms",
        "150",
    ]);
    assert_eq!(out.status, 10);
    assert_eq!(out.error()["code"], "wait_timeout");
    assert_eq!(out.error()["details"]["status"], "open");
    // A waiter in the background sees a reply written meanwhile.
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let waiter = Command::new(bin)
        .env_clear()
        .env("DISCUSS_LEDGER", env.ledger())
        .env("DISCUSS_NOW", env.now_ms.to_string())
        .args([
            "--json",
            "wait",
            &dsc,
            "--until",
            "closed,exhausted",
            "--timeout-ms",
            "20000",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "result", true);
    let out = waiter.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["status"], "closed");
    env.fails(
        &["wait", "dsc_none", "--until", "open", "--timeout-ms", "10"],
        "unknown_discussion",
        4,
    );
}

#[test]
fn a_broken_pipe_is_a_quiet_success() {
    let env = Env::new();
    for _ in 0..40 {
        env.discussion(&[]);
    }
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let script = format!(
        "'{}' list | head -1 >/dev/null; echo \"${{PIPESTATUS[0]}}\"",
        bin.display()
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .env_clear()
        .env("DISCUSS_LEDGER", env.ledger())
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A ledger written once by the commands (see tests/fixtures/README.md):
/// fixed ids and times, so that screens can be compared whole.
const SCREENS: &str = include_str!("../fixtures/screens.jsonl");
/// Its discussions: closed after four turns, open, active.
const CLOSED: &str = "dsc_01a22c54cf45778d95b834b2c27f2174";
/// 30 s after the last record: every discussion is as described above.
const SCREENS_NOW: i64 = 1_780_000_070_000;

/// What people see, as they see it: `show`, `list`, `inbox` and an error
/// on a real pseudo-terminal at 80 and 200 columns, with colour on and off,
/// and in a pipe. Every line fits the terminal, colour never moves a
/// character, and each screen is a snapshot (escapes shown as `⎋`).
#[test]
fn screens_on_a_terminal_and_in_a_pipe() {
    let mut env = Env::new();
    env.append_raw(SCREENS);
    env.now_ms = SCREENS_NOW;
    let screens: [(&str, &str); 4] = [
        ("show", &format!("show {CLOSED}")),
        ("list", "list"),
        ("inbox", "inbox --agent agent-b"),
        ("error", "show dsc_01a22c54cf45778d95b834b2c27f2175"),
    ];
    // The ledger's location differs from run to run (and on a database).
    let location = env.ledger().display().to_string();
    let escapes = |text: &str| text.replace('\u{1b}', "⎋");
    for (name, args) in screens {
        for columns in [80usize, 200] {
            let screen = |colour: &str| {
                on_a_terminal(
                    &env,
                    "xterm",
                    &format!("stty cols {columns} rows 50; discuss --color {colour} {args}"),
                )
            };
            let plain = screen("never").replace(&location, "[LEDGER]");
            let coloured = screen("always").replace(&location, "[LEDGER]");
            assert!(!plain.contains('\u{1b}'), "{name}: {plain:?}");
            if name != "inbox" {
                // inbox shows only open rows, whose colour is checked in list.
                assert!(
                    coloured.contains('\u{1b}'),
                    "{name} in colour: {coloured:?}"
                );
            }
            assert_eq!(
                strip_colour(&coloured),
                plain,
                "{name} at {columns}: colour never changes the layout"
            );
            for line in plain.lines() {
                assert!(
                    line.chars().count() <= columns,
                    "{name} at {columns}: {line:?}"
                );
            }
            insta::assert_snapshot!(format!("terminal_{name}_{columns}"), plain);
            if columns == 80 {
                insta::assert_snapshot!(format!("terminal_{name}_colour"), escapes(&coloured));
            }
        }
        // In a pipe: no colour, no width, nothing wrapped or cut.
        let out = env.run(&args.split(' ').collect::<Vec<_>>());
        let piped = (out.stdout + &out.stderr).replace(&location, "[LEDGER]");
        assert!(!piped.contains('\u{1b}'), "{name}: {piped:?}");
        insta::assert_snapshot!(format!("pipe_{name}"), piped);
    }
}

#[test]
fn colour_only_when_asked_or_on_a_terminal_and_never_with_json() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&[]);
    let run = |args: &[&str], no_color: bool| {
        let mut cmd = env.command();
        if no_color {
            cmd.env("NO_COLOR", "1");
        }
        String::from_utf8(cmd.args(args).output().unwrap().stdout).unwrap()
    };
    assert!(run(&["show", &dsc, "--color", "always"], false).contains("\x1b[36mopen\x1b[0m"));
    assert!(
        run(&["show", &dsc, "--color", "always"], true).contains("\x1b["),
        "--color always overrides NO_COLOR"
    );
    assert!(
        !run(&["show", &dsc], false).contains('\x1b'),
        "not a terminal: no colour"
    );
    assert!(!run(&["show", &dsc, "--color", "never"], false).contains('\x1b'));
    assert!(
        !run(&["--json", "show", &dsc, "--color", "always"], false).contains('\x1b'),
        "never with --json"
    );
}

/// Above 1,000 rows `list` prints plain aligned columns as it goes rather
/// than laying out a boxed table in memory; `--json` is one object still.
#[test]
fn a_long_list_is_plain_aligned_columns() {
    use discuss::engine::{AskRequest, Stamp, plan_ask, plan_fleet};
    use discuss::global::Global;
    use discuss::record::Record;
    let env = Env::new();
    let stamp = Stamp {
        at_ms: T0,
        by: "tester".into(),
    };
    let mut global = Global::default();
    let mut lines = String::new();
    let fleet = plan_fleet(
        &global,
        discuss::record::FleetOp::Add,
        "fleet-alpha",
        &["agent-a".into(), "agent-b".into()],
        &stamp,
    );
    fleet.iter().for_each(|r| global.apply(r));
    lines.push_str(&Record::operation_lines(&fleet));
    for _ in 0..1_001 {
        let request = AskRequest::new(
            "agent-a",
            &["agent-b".into()],
            "fleet-alpha",
            "{}",
            4,
            300_000,
            60_000,
            false,
        )
        .unwrap();
        let (records, _) = plan_ask(&global, &request, &stamp).unwrap();
        lines.push_str(&Record::operation_lines(&records));
    }
    env.append_raw(&lines);
    let out = env.run(&["list"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let rows: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(rows.len(), 1 + 1_001);
    assert!(rows[0].starts_with("discussion  "), "{}", rows[0]);
    assert!(!out.stdout.contains('│'), "no box drawing");
    // Every column starts where its header does.
    let status_at = rows[0].find("status").unwrap();
    assert!(
        rows[1..]
            .iter()
            .all(|r| r[status_at..].starts_with("open "))
    );
    let json = env.ok(&["list"]);
    assert_eq!(json["discussions"].as_array().unwrap().len(), 1_001);
}

#[test]
fn wait_for_a_status_a_terminal_discussion_can_never_reach_returns_at_once() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "1000"]);
    env.wake(&dsc, "agent-b", &root);
    env.advance(1_500);
    assert_eq!(env.status(&dsc), "deadman");
    // No timeout: without the rule this would wait for ever.
    let out = env
        .command()
        .args(["--json", "wait", &dsc, "--until", "closed"])
        .timeout(std::time::Duration::from_secs(10))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(10), "returned at once");
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["code"], "status_unreachable");
    assert_eq!(err["error"]["details"]["status"], "deadman");
    // A terminal discussion can still turn invalid: waiting for that waits.
    let out = env.run(&[
        "--json",
        "wait",
        &dsc,
        "--until",
        "invalid",
        "--timeout-ms",
        "50",
    ]);
    assert_eq!(out.error()["code"], "wait_timeout");
    // And the status it has is reached, as ever.
    assert_eq!(
        env.run(&["--json", "wait", &dsc, "--until", "terminal"])
            .status,
        0
    );
}

#[test]
fn a_writer_refuses_a_file_that_is_not_a_ledger_and_leaves_it_untouched() {
    let env = Env::file();
    std::fs::create_dir_all(env.ledger().parent().unwrap()).unwrap();
    let passwd =
        "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n";
    std::fs::write(env.ledger(), passwd).unwrap();
    let err = env.fails(
        &["fleet", "add", "fleet-alpha", "agent-a"],
        "ledger_unreadable",
        1,
    );
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("not a discuss ledger"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(env.ledger()).unwrap(), passwd);
    // A ledger whose very first write was torn is still a ledger.
    std::fs::write(env.ledger(), r#"{"v":1,"kind":"fle"#).unwrap();
    env.ok(&["fleet", "add", "fleet-alpha", "agent-a"]);
}

#[test]
fn verify_shows_progress_to_a_person_at_a_terminal_only() {
    let env = Env::new();
    env.discussion(&[]);
    env.ask(&[]);
    let shown = on_a_terminal(&env, "xterm", "discuss verify");
    assert!(shown.contains("verify: deriving discussions"), "{shown:?}");
    assert!(shown.contains("ok: "), "the report follows: {shown:?}");
    for (args, term) in [("--json verify", "xterm"), ("verify", "dumb")] {
        let quiet = on_a_terminal(&env, term, &format!("discuss {args}"));
        assert!(!quiet.contains("verify:"), "{args} {term}: {quiet:?}");
    }
    // In a pipe, nothing but the report.
    let out = env.run_with(&[("DISCUSS_PROGRESS_AFTER_MS", "0")], &["verify"], "");
    assert_eq!(out.status, 0);
    assert_eq!(out.stderr, "");
}

#[test]
fn rows_carry_the_head_to_wake_on_and_quiet_prints_only_ids() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    // A driver wakes straight from its inbox: the head is in the row.
    let inbox = env.ok(&["inbox", "--agent", "agent-b"]);
    assert_eq!(inbox["discussions"][0]["head_message_id"], root.as_str());
    let listed = env.ok(&["list"]);
    assert_eq!(listed["discussions"][0]["head_message_id"], root.as_str());
    // -q: the new discussion, the new attempt, one listed id a line.
    let mut ask = ASK_A_TO_B.to_vec();
    ask.extend([r#"{"body":"q"}"#, "-q"]);
    let out = env.run(&ask);
    assert_eq!(out.status, 0);
    let second = out.stdout.trim_end().to_owned();
    assert!(
        second.starts_with("dsc_") && !second.contains('\n'),
        "{:?}",
        out.stdout
    );
    let out = env.run(&[
        "wake",
        "--agent",
        "agent-b",
        "--discussion",
        &dsc,
        "--expected-head",
        &root,
        "-q",
    ]);
    assert!(
        out.stdout.starts_with("att_") && out.stdout.lines().count() == 1,
        "{:?}",
        out.stdout
    );
    // The rows of `list`, newest first: which is newer depends on the
    // milliseconds each process's clock ran on, so it is read, not assumed.
    let order: String = env.ok(&["list"])["discussions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| format!("{}\n", row["discussion_id"].as_str().unwrap()))
        .collect();
    let mut both = [second.as_str(), dsc.as_str()];
    both.sort_unstable();
    let mut listed: Vec<&str> = order.lines().collect();
    listed.sort_unstable();
    assert_eq!(listed, both);
    let out = env.run(&["list", "--quiet"]);
    assert_eq!(out.stdout, order);
    // The woken turn stays in the inbox until it is answered.
    let out = env.run(&["inbox", "--agent", "agent-b", "-q"]);
    assert_eq!(out.stdout, order);
    // -q wins over --json: ids are what a script asked for.
    let out = env.run(&["--json", "list", "-q"]);
    assert_eq!(out.stdout, order);
}

#[test]
fn a_missing_ledger_is_named_and_bare_discuss_prints_the_help() {
    let env = Env::new();
    let out = env.run(&["list"]);
    assert_eq!(out.status, 0);
    assert!(
        out.stdout
            .contains(&format!("there is no ledger at {}", env.ledger().display())),
        "{:?}",
        out.stdout
    );
    assert!(!env.ledger().exists(), "reading creates nothing");
    let out = env.run(&["inbox", "--agent", "agent-b"]);
    assert!(out.stdout.contains("no ledger at"), "{:?}", out.stdout);
    let out = env.run(&[]);
    assert_eq!(out.status, 0);
    assert!(out.stdout.contains("Usage: discuss"), "{:?}", out.stdout);
    assert!(out.stderr.is_empty());
}

#[test]
fn a_unique_prefix_names_a_discussion_and_an_ambiguous_one_is_refused() {
    let env = Env::new();
    let (a, root) = env.discussion(&[]);
    let (b, _) = env.ask(&[]);
    // UUIDv7 ids made moments apart share their first digits (the time).
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    assert!(common >= 8, "{a} {b}");
    let shared = &a[..common];
    let err = env.fails(&["show", shared], "ambiguous_id", 4);
    let candidates = err["details"]["candidates"].as_array().unwrap();
    assert!(candidates.contains(&a.as_str().into()) && candidates.contains(&b.as_str().into()));
    // One more character tells them apart, in every command that takes one.
    let unique = &a[..common + 1];
    assert_eq!(env.show(unique)["discussion_id"], a.as_str());
    let out = env.run(&["--json", "wait", unique, "--until", "open"]);
    assert_eq!(out.json()["discussion_id"], a.as_str());
    let woken = env.ok(&[
        "wake",
        "--agent",
        "agent-b",
        "--discussion",
        unique,
        "--expected-head",
        &root,
    ]);
    assert_eq!(woken["discussion_id"], a.as_str());
    let call = env.run(&[
        "call",
        "get_discussion",
        &format!(r#"{{"discussion_id":"{unique}"}}"#),
    ]);
    assert_eq!(call.json()["discussion_id"], a.as_str());
    // Too short to look up (dsc_ and fewer than four characters): unknown.
    env.fails(&["show", &a[..7]], "unknown_discussion", 4);
}

#[test]
fn show_as_markdown_has_a_heading_and_every_body_whole() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    let long = "word ".repeat(400);
    let payload =
        serde_json::json!({"plan": ["a", "b"], "note": format!("``` {long}")}).to_string();
    let mut reply = reply_args(&dsc, "agent-b", &att, &root, "result", &payload);
    reply.push("--close");
    env.ok(&reply);
    let out = env.run(&["show", &dsc, "--format", "markdown"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let md = out.stdout;
    assert!(
        md.starts_with(&format!("# Discussion `{dsc}`: closed\n")),
        "{md}"
    );
    assert!(md.contains("- **Participants:** `agent-a` → `agent-b` (fleet `fleet-alpha`)"));
    assert!(md.contains("- **Budget:** 2 of 4 turns used"));
    assert!(md.contains("\n## Turn 1 · `agent-a` → `agent-b` · ask · "));
    // A `body` string as it is; other JSON whole, in a fence that the
    // backticks inside cannot close.
    assert!(md.contains("\nRefactor auth module?\n"), "{md}");
    assert!(md.contains("## Turn 2 · `agent-b` → `agent-a` · result (closes) · "));
    assert!(md.contains("````json\n{\n  \"plan\""), "{md}");
    assert!(md.contains(long.trim_end()), "the body is never cut");
    // --json still prints the contract's object.
    let out = env.run(&["--json", "show", &dsc, "--format", "markdown"]);
    assert_eq!(out.json()["discussion_id"], dsc.as_str());
}

#[test]
fn a_finished_discussion_reads_as_finished_and_numbers_read_right() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "1999"]);
    let live = env.run(&["show", &dsc]).stdout;
    assert!(live.contains("3 remaining; 1.999s per turn"), "{live}");
    assert!(live.contains("head ") && live.contains("(in "), "{live}");
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "result", true);
    let over = env.run(&["show", &dsc]).stdout;
    assert!(
        over.contains("2 of 4 turns used; 1.999s per turn"),
        "{over}"
    );
    assert!(!over.contains("remaining"), "{over}");
    assert!(
        !over.contains("(in "),
        "no countdown to a deadline that no longer matters: {over}"
    );
    assert!(over.contains("last message "), "{over}");
    let verify = env.run(&["verify"]).stdout;
    assert!(
        verify.contains(", 1 discussion, 0 unreadable lines,"),
        "{verify}"
    );
}

#[test]
fn text_from_the_ledger_never_reaches_the_terminal_raw() {
    let env = Env::new();
    env.fleet();
    let reason = "stop\u{1b}[2J\u{1b}[31mFORGED\nerror[fake]: line";
    env.ok(&["kill-switch", "on", "--reason", reason]);
    let status = env.run(&["kill-switch"]).stdout;
    let refused = env.run(&[
        "ask",
        "--from",
        "agent-a",
        "--to",
        "agent-b",
        "--fleet",
        "fleet-alpha",
        "--payload",
        "{}",
    ]);
    for text in [&status, &refused.stderr] {
        assert!(
            !text.contains('\u{1b}'),
            "an escape sequence got through: {text:?}"
        );
        assert_eq!(
            text.lines().filter(|l| l.contains("FORGED")).count(),
            1,
            "{text:?}"
        );
        assert!(text.contains("\\u{1b}[2J"), "shown escaped: {text:?}");
    }
    assert!(
        !refused.stderr.lines().any(|l| l.starts_with("error[fake]")),
        "no forged lines"
    );
    // JSON keeps the reason as it is: it escapes for itself.
    let json = env.ok(&["kill-switch"]);
    assert_eq!(json["reason"], reason);
    env.ok(&["kill-switch", "off"]);
    // A Markdown body keeps its lines but loses its escapes.
    let (dsc, _) = env.ask(&[]);
    let mut args = ASK_A_TO_B.to_vec();
    let body = serde_json::json!({"body": "two\nlines \u{1b}]0;title\u{7}"}).to_string();
    args.push(&body);
    let dsc2 = env.ok(&args)["discussion_id"].as_str().unwrap().to_owned();
    let md = env.run(&["show", &dsc2, "--format", "markdown"]).stdout;
    assert!(md.contains("two\nlines \\u{1b}]0;title\\u{7}"), "{md:?}");
    assert!(!md.contains('\u{1b}') && !md.contains('\u{7}'));
    assert_ne!(dsc, dsc2);
}

#[test]
fn show_fits_the_terminal_and_keeps_lines_whole_in_a_pipe() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    let long = "tokens ".repeat(60);
    let payload = serde_json::json!({"body": long.trim_end()}).to_string();
    env.ok(&reply_args(
        &dsc, "agent-b", &att, &root, "question", &payload,
    ));
    for columns in [80usize, 200] {
        // script(1) runs the command in a shell: set the width there.
        let text = on_a_terminal(
            &env,
            "xterm",
            &format!("stty cols {columns}; discuss --color never show {dsc}"),
        );
        for line in text.lines() {
            assert!(
                line.chars().count() <= columns,
                "{columns} columns: {line:?}"
            );
        }
        // Every word of the body is there, none split.
        let words: Vec<&str> = text.split_whitespace().filter(|w| *w == "tokens").collect();
        assert_eq!(words.len(), 60, "{text}");
        assert!(
            text.contains(&dsc) && text.contains(&root),
            "ids whole: {text}"
        );
    }
    // In a pipe the body stays on one line, as it was written.
    let piped = env.run(&["show", &dsc]).stdout;
    assert!(
        piped.lines().any(|l| l.trim() == long.trim_end()),
        "{piped}"
    );
}

#[test]
fn list_is_one_line_a_row_at_80_columns_with_or_without_colour() {
    let env = Env::new();
    env.fleet();
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(env.ask(&[]).0);
    }
    let screen = |colour: &str| {
        on_a_terminal(
            &env,
            "xterm",
            &format!("stty cols 80; discuss --color {colour} list"),
        )
    };
    let plain = screen("never");
    let coloured = screen("always");
    assert!(coloured.contains("\u{1b}[36mopen\u{1b}[0m"), "{coloured:?}");
    let strip = |s: &str| s.replace("\u{1b}[36m", "").replace("\u{1b}[0m", "");
    assert_eq!(strip(&coloured), plain, "colour never changes the layout");
    assert_eq!(
        plain.lines().count(),
        1 + ids.len(),
        "one line a row: {plain}"
    );
    for line in plain.lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
    // The shortened ids still name their discussions.
    let first = plain
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    assert!(first.len() < ids[0].len(), "{first}");
    assert_eq!(env.show(&first)["discussion_id"], ids[3].as_str());
    // In a pipe the ids are whole.
    let piped = env.run(&["list"]).stdout;
    assert!(ids.iter().all(|id| piped.contains(id.as_str())), "{piped}");
    // Shortened ids are unique in the whole ledger, not only in the rows
    // shown: with a discussion left out of the list, each still resolves.
    let root = env.show(&ids[0])["head"]["message_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let att = env.wake(&ids[0], "agent-b", &root);
    env.reply(&ids[0], "agent-b", &att, &root, "result", true);
    let open = on_a_terminal(
        &env,
        "xterm",
        "stty cols 60; discuss --color never list --status open",
    );
    let shown: Vec<&str> = open
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(shown.len(), 3, "{open}");
    for short in shown {
        assert!(short.len() < 36, "{open}");
        let named = env.show(short)["discussion_id"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            named.starts_with(short) && named != ids[0],
            "{short} named {named}"
        );
    }
}

#[test]
fn each_stream_is_coloured_by_its_own_terminal_and_dumb_terminals_get_none() {
    let env = Env::new();
    env.discussion(&[]);
    let dir = env.dir.path();
    let sh = |command: &str, term: &str| on_a_terminal(&env, term, command);
    let bin = "discuss";
    // stdout to a file, stderr on the terminal: the error is coloured.
    let screen = sh(
        &format!("{bin} show dsc_nope > {}/out.txt", dir.display()),
        "xterm",
    );
    assert!(screen.contains("\u{1b}[1;31merror"), "{screen:?}");
    // stderr to a file, stdout on the terminal: the file has no colour.
    sh(
        &format!("{bin} show dsc_nope 2> {}/err.txt", dir.display()),
        "xterm",
    );
    let logged = std::fs::read_to_string(dir.join("err.txt")).unwrap();
    assert!(
        logged.starts_with("error[unknown_discussion]"),
        "{logged:?}"
    );
    // TERM=dumb: no colour anywhere.
    let dumb = sh(&format!("{bin} list; {bin} show dsc_nope"), "dumb");
    assert!(!dumb.contains('\u{1b}'), "{dumb:?}");
    assert!(dumb.contains("open") && dumb.contains("error[unknown_discussion]"));
}

#[test]
fn help_lists_the_commands_own_options_first_and_keeps_examples_copyable() {
    let env = Env::new();
    let help = env
        .run_with(&[("COLUMNS", "80")], &["wake", "--help"], "")
        .stdout;
    let own = help.find("--expected-head").unwrap();
    let global = help
        .find("Global options:")
        .expect("a heading of their own");
    assert!(
        own < global && help.find("--ledger").unwrap() > global,
        "{help}"
    );
    let top = env.run_with(&[("COLUMNS", "80")], &["--help"], "").stdout;
    assert!(
        top.lines()
            .any(|l| l.trim() == r#"--payload '{"body":"Refactor auth module?"}'"#),
        "the example's JSON on one line: {top}"
    );
}

#[test]
fn events_show_each_record_with_its_status_and_follow_new_ones() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "result", true);
    let before = env.ledger_bytes();
    let out = env.run(&["--json", "events", "--discussion", &dsc]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let events: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let statuses: Vec<&str> = events
        .iter()
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["open", "active", "closed", "closed"]);
    assert_eq!(events[0]["type"], "ask");
    assert_eq!(events[1]["receipt"], "discussion.attempt.reserved");
    assert_eq!(events[1]["attempt_id"], att.as_str());
    assert_eq!(events[3]["receipt"], "discussion.attempt.completed");
    assert_eq!(env.ledger_bytes(), before, "reading writes nothing");
    // Everything, fleet records included, in ledger order.
    let all = env.run(&["--json", "events"]).stdout;
    let lines: Vec<u64> = all
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["line"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(lines, (1..=lines.len() as u64).collect::<Vec<_>>());
    // A discussion let go once settled is read back when a line comes
    // for it later: its status is still derived from its whole history.
    let mut env = env;
    env.advance(10 * 60_000);
    for id in ["rcp_late_1", "rcp_late_2"] {
        env.append_raw(
            &(serde_json::json!({"v":1,"kind":"receipt","id":id,"at_ms":env.now_ms,"by":"other",
                "receipt":"discussion.attempt.started","discussion_id":dsc,"attempt_id":att})
            .to_string()
                + "\n"),
        );
    }
    let late = env.run(&["--json", "events", "--discussion", &dsc]).stdout;
    let late: Vec<serde_json::Value> = late
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(late.len(), 6);
    assert_eq!(late[4]["status"], "invalid", "{:?}", late[4]);
    assert_eq!(late[5]["status"], env.status(&dsc));
    // --follow: a record written meanwhile shows up.
    let mut follower = Command::new(assert_cmd::cargo::cargo_bin("discuss"))
        .env_clear()
        .env("DISCUSS_LEDGER", env.ledger())
        .env("DISCUSS_NOW", env.now_ms.to_string())
        .args(["--json", "events", "--follow", "--agent", "agent-b"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (new, _) = env.ask(&[]);
    let mut reader = std::io::BufReader::new(follower.stdout.take().unwrap());
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut seen = false;
    while !seen {
        assert!(
            std::time::Instant::now() < until,
            "the new record never showed"
        );
        let mut line = String::new();
        std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
        seen = line.contains(&new) && line.contains("\"status\":\"open\"");
    }
    follower.kill().unwrap();
    follower.wait().unwrap();
}

/// Completion in a real bash, through the script `discuss completions
/// bash` prints: a Tab offers the open and active discussions, ids from a
/// typed prefix, agents and fleets, all read from the ledger.
#[test]
fn bash_completes_ids_agents_and_fleets_from_the_ledger() {
    let mut env = Env::new();
    env.append_raw(SCREENS);
    env.now_ms = SCREENS_NOW;
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let script = r#"
source <(discuss completions bash)
tab() {
    COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_TYPE=9; COMPREPLY=()
    _clap_complete_discuss discuss "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf '%s\n' "${COMPREPLY[@]}"
}
echo '# show'; tab discuss show ''
echo '# prefix'; tab discuss wake --discussion dsc_01a22c54cf45
echo '# agents'; tab discuss ask --from agent-
echo '# fleets'; tab discuss list --fleet ''
echo '# status'; tab discuss list --status ex
echo '# until'; tab discuss wait dsc_x --until open,ac
"#;
    let out = Command::new("bash")
        .args(["-c", script])
        .env_clear()
        .env("DISCUSS_LEDGER", env.ledger())
        .env("DISCUSS_NOW", env.now_ms.to_string())
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", bin.parent().unwrap().display()),
        )
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let section = |name: &str| -> Vec<String> {
        text.split(&format!("# {name}\n"))
            .nth(1)
            .unwrap_or("")
            .split("\n# ")
            .next()
            .unwrap_or("")
            .lines()
            .map(|l| l.trim().to_owned())
            .collect()
    };
    let show = section("show");
    // The open and the active discussion; not the closed one.
    assert!(
        show.contains(&"dsc_01a22c54cff476d794bb426e7f9c48d8".to_owned()),
        "{text}"
    );
    assert!(
        show.contains(&"dsc_01a22c54cffb706290486e9f5bf94ef6".to_owned()),
        "{text}"
    );
    assert!(!show.contains(&CLOSED.to_owned()), "{text}");
    assert_eq!(section("prefix"), vec![CLOSED.to_owned()], "{text}");
    assert_eq!(
        section("agents"),
        vec!["agent-a", "agent-b", "agent-reviewer"],
        "{text}"
    );
    assert_eq!(section("fleets"), vec!["fleet-alpha"], "{text}");
    assert_eq!(section("status"), vec!["expired", "exhausted"], "{text}");
    assert_eq!(section("until"), vec!["open,active"], "{text}");
}
