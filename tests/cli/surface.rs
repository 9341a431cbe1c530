//! The command line as people meet it, across commands: help, usage
//! errors, colour and width on a real terminal and in a pipe, text from
//! the ledger made safe, completion in a real shell, a closed pipe.

use crate::common::*;
use std::process::Command;

/// 30 s after the last record: every discussion is as described above.
const SCREENS_NOW: i64 = 1_780_000_070_000;

/// Its discussions: closed after four turns, open, active.
const CLOSED: &str = "dsc_01a22c54cf45778d95b834b2c27f2174";

/// A ledger written once by the commands (see tests/fixtures/README.md):
/// fixed ids and times, so that screens can be compared whole.
const SCREENS: &str = include_str!("../fixtures/screens.jsonl");

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

#[test]
fn text_from_the_ledger_never_reaches_the_terminal_raw() {
    let env = Env::new();
    env.fleet();
    let reason = "stop\u{1b}[2J\u{1b}[31mFORGED\nerror[fake]: line";
    env.ok(&["kill-switch", "on", "--reason", reason]);
    let status = env.run(&["kill-switch"]).stdout;
    let refused = env.run(
        &Argv::ask("agent-a", "agent-b")
            .opt("--payload", "{}")
            .words(),
    );
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

/// The commands a help lists under "Commands:" (and "help", left out).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_help_example_pastes_whole_at_80_columns() {
    let env = Env::new();
    let mut pending = vec![Vec::<String>::new()];
    let mut checked = 0;
    while let Some(path) = pending.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = env.run_with(&[("COLUMNS", "80")], &args, "").stdout;
        for sub in subcommands(&help) {
            let mut deeper = path.clone();
            deeper.push(sub);
            pending.push(deeper);
        }
        let mut in_example = false;
        let mut continued = false;
        for line in help.lines() {
            if line.starts_with("Example") {
                in_example = true;
                continued = false;
                continue;
            }
            if !in_example || line.trim().is_empty() {
                continue;
            }
            checked += 1;
            assert!(
                line.chars().count() <= 80,
                "`{}` help: a line over 80 columns: {line:?}",
                path.join(" ")
            );
            // A line that does not continue one ending in `\` starts a
            // command: a wrapped URL or path on a line of its own would
            // run the wrong thing when the first line is pasted.
            let word = line.split_whitespace().next().unwrap_or("");
            let starts_a_command = line.starts_with("  ")
                && !line.starts_with("   ")
                && ["discuss", "echo", "claude", "curl", "mkdir", "export"]
                    .iter()
                    .any(|c| word == *c || word.starts_with("TOKEN=$(discuss"));
            assert!(
                continued || starts_a_command,
                "`{} --help` at 80 columns: {line:?} neither starts a command nor continues one\n{help}",
                path.join(" ")
            );
            continued = line.trim_end().ends_with('\\');
        }
    }
    assert!(checked > 40, "only {checked} example lines were read");
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
        let v = env.ok(&Argv::ask("agent-a", "agent-c")
            .opt("--payload", "{}")
            .words());
        let id = |field: &str| v[field].as_str().unwrap().to_owned();
        (id("discussion_id"), id("root_message_id"))
    };
    let (other, other_root) = ask_c();
    env.wake(&other, "agent-c", &other_root);
    let (third, third_root) = ask_c();
    let err = env.fails(
        &wake_argv("agent-c", &third, &third_root, &[], false),
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

/// C1 controls (CSI, OSC, ST) and bidirectional overrides from a body
/// never reach the terminal raw: not in `show`, not in Markdown.
#[test]
fn c1_controls_and_bidi_overrides_never_reach_the_terminal() {
    let env = Env::new();
    env.fleet();
    let hostile = [
        "\u{9b}31m",
        "\u{9d}0;title\u{9c}",
        "\u{202e}evil\u{202c}",
        "\u{2066}x\u{2069}",
    ];
    for text in hostile {
        for body in [
            serde_json::json!({"body": text}),
            serde_json::json!({"note": text, "n": 1}),
        ] {
            let mut args = ASK_A_TO_B.to_vec();
            let payload = body.to_string();
            args.push(&payload);
            let dsc = env.ok(&args)["discussion_id"].as_str().unwrap().to_owned();
            for form in [
                &["show", dsc.as_str()][..],
                &["show", dsc.as_str(), "--format", "markdown"][..],
            ] {
                let out = env.run(form);
                assert_eq!(out.status, 0, "{}", out.stderr);
                for c in [
                    '\u{9b}', '\u{9c}', '\u{9d}', '\u{202e}', '\u{202c}', '\u{2066}', '\u{2069}',
                ] {
                    assert!(
                        !out.stdout.contains(c),
                        "{form:?} printed U+{:04X} raw: {:?}",
                        c as u32,
                        out.stdout
                    );
                }
                assert!(
                    out.stdout.contains("\\u{"),
                    "escaped, not dropped: {}",
                    out.stdout
                );
            }
        }
    }
}

#[test]
fn at_80_columns_list_keeps_whom_to_wake_and_events_and_show_wrap_their_own_lines() {
    let env = Env::new();
    let long = "agent-with-a-rather-long-name-for-testing";
    env.ok(&["fleet", "add", "fleet-alpha", "agent-a", long]);
    let (dsc, _) = {
        let asked = env.ok(&[
            "ask",
            "--from",
            "agent-a",
            "--to",
            long,
            "--fleet",
            "fleet-alpha",
            "--payload",
            r#"{"body":"Refactor the auth module?"}"#,
        ]);
        (asked["discussion_id"].as_str().unwrap().to_owned(), ())
    };
    for width in [80, 60] {
        let list = strip_colour(&on_a_terminal(
            &env,
            "xterm",
            &format!("stty cols {width}; discuss list"),
        ));
        let row = list.lines().find(|l| l.starts_with("dsc_")).unwrap();
        // At 80 `next` stays (whom to wake); narrower, what is left out
        // is named.
        if width == 80 {
            assert!(row.ends_with(long), "`next` stays at {width}: {list}");
        } else {
            assert!(list.contains("next"), "{list}");
        }
        assert!(list.contains("(left out at this width:"), "{list}");
        for line in list.lines() {
            assert!(line.chars().count() <= width, "{width}: {line:?}\n{list}");
        }
        let events = strip_colour(&on_a_terminal(
            &env,
            "xterm",
            &format!("stty cols {width}; discuss events"),
        ));
        for line in events.lines() {
            assert!(line.chars().count() <= width, "{width}: {line:?}\n{events}");
        }
        // Words whole: the long name is on one line.
        assert!(events.contains(long), "{events}");
        let show = strip_colour(&on_a_terminal(
            &env,
            "xterm",
            &format!("stty cols {width}; discuss show {dsc}"),
        ));
        let header: Vec<&str> = show.lines().take_while(|l| !l.is_empty()).collect();
        for line in &header {
            assert!(line.chars().count() <= width, "{width}: {line:?}\n{show}");
        }
        assert!(show.contains(long), "{show}");
    }
    // In a pipe nothing is wrapped or left out.
    let piped = env.run(&["events"]).stdout;
    assert!(
        piped
            .lines()
            .any(|l| l.contains(&dsc) && l.ends_with("open") && l.chars().count() > 80),
        "{piped}"
    );
    let piped = env.run(&["list"]).stdout;
    assert!(!piped.contains("left out"), "{piped}");
}
