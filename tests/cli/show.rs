//! `discuss show` (the seed's `get_discussion`): the human, Markdown and
//! JSON forms, id prefixes, and what it says of ids that name nothing.

use crate::common::*;

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
    let woken = env.ok(&wake_argv("agent-b", unique, &root, &[], false));
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
fn unknown_discussion_suggests_a_near_match() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let typo = format!("{}x", &dsc[..dsc.len() - 1]);
    let err = env.fails(&["show", &typo], "unknown_discussion", 4);
    assert_eq!(err["hints"][0], format!("did you mean {dsc}?"));
    // A unique prefix is no typo: it names the discussion (cli.md, id
    // prefixes).
    let prefix = &dsc[..12];
    let woken = env.ok(&wake_argv("agent-b", prefix, &root, &[], false));
    assert_eq!(woken["discussion_id"], dsc.as_str());
    let err = env.fails(&["show", "dsc_0000"], "unknown_discussion", 4);
    assert!(err["hints"][0].as_str().unwrap().contains("discuss list"));
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
        &wake_argv("agent-a", &dsc, &root, &[], false),
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
