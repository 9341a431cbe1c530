//! `discuss verify`: a clean ledger, every kind of problem, findings
//! read whole, and progress for a person only.

use crate::common::*;
use serde_json::json;

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
        // `verify`'s own report too: wrapped, its ids whole.
        let report = verify_on_a_terminal(&env, columns);
        for id in [
            dsc,
            "msg_01a22c54cff476d794bb426f69d35b4a",
            "att_01a22c54d00070000000000000000bad",
        ] {
            assert!(report.contains(id), "{id} whole at {columns}: {report}");
        }
    }
    // In a pipe, its count of everything is one line.
    let piped = env.run(&["verify"]).stdout;
    assert!(
        piped
            .lines()
            .any(|l| l.starts_with("PROBLEMS: ") && l.ends_with(" invalid discussion")),
        "{piped}"
    );
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

/// `verify`'s report on a terminal `columns` wide, every line checked to
/// fit (its progress, erased where the report begins, left out).
fn verify_on_a_terminal(env: &Env, columns: usize) -> String {
    let screen = on_a_terminal(
        env,
        "xterm",
        &format!("stty cols {columns}; discuss --color never verify"),
    );
    let report = screen.rsplit("\u{1b}[2K").next().unwrap_or_default();
    for line in report.lines() {
        assert!(line.chars().count() <= columns, "at {columns}: {line:?}");
    }
    report.to_owned()
}

#[test]
fn a_clean_report_fits_the_terminal_and_keeps_the_chains_digest_whole() {
    let env = Env::new();
    env.discussion(&[]);
    let piped = env.run(&["verify"]).stdout;
    let digest = piped.split("sha256:").nth(1).unwrap_or_default();
    let digest: String = digest.chars().take_while(char::is_ascii_hexdigit).collect();
    assert_eq!(digest.len(), 64, "{piped}");
    assert_eq!(piped.lines().count(), 2, "a line each in a pipe: {piped}");
    for columns in [80usize, 200] {
        let report = verify_on_a_terminal(&env, columns);
        assert!(
            report.contains(&format!("sha256:{digest}")),
            "at {columns}: {report}"
        );
        let wrapped = columns == 80;
        assert_eq!(
            report.lines().count() > 2,
            wrapped,
            "at {columns}: {report}"
        );
    }
}

/// `verify` reads each line once: checked, and handed to its discussion.
/// On one core and with the parse shared by both (three lines a batch,
/// so many batches each way) it finds every problem, and the same; of a
/// file and of a database (which has no torn tail). So does the first
/// list that has to derive every discussion.
#[test]
fn one_read_finds_every_problem_on_one_core_and_on_two() {
    let env = Env::new();
    let mut ids = Vec::new();
    for _ in 0..4 {
        let (dsc, root) = env.discussion(&[]);
        let att = env.wake(&dsc, "agent-b", &root);
        env.reply(&dsc, "agent-b", &att, &root, "question", false);
        ids.push(dsc);
    }
    let n = env.records().len() as u64;
    let fleet = |id: &str, at: i64, marks: &str| {
        format!(
            r#"{{"v":1,"kind":"fleet","id":"{id}","at_ms":{at},"by":"other-tool","op":"add","fleet_id":"fleet-beta","agent_id":"agent-x"{marks}}}"#
        ) + "\n"
    };
    let escalated = json!({"v":1,"kind":"receipt","id":"rcp_x","at_ms":T0,"by":"x",
        "receipt":"discussion.escalated","discussion_id":ids[1]});
    // In one go: a database takes them as one import.
    env.append_raw(
        &[
            "garbage\n".to_owned(),
            fleet("rec_twice", T0, ""),
            fleet("rec_twice", T0, ""),
            fleet("rec_early", T0 - 61_000, ""),
            fleet("rec_stray", T0, r#","op_id":"rec_gone""#),
            format!("{escalated}\n"),
        ]
        .concat(),
    );
    // An operation cut short, then a torn line: the torn tail.
    let cut = fleet("rec_cut", T0, r#","op_lines":3,"op_id":"rec_cut""#);
    let torn = if env.is_postgres() {
        0
    } else {
        env.append_raw(&cut);
        env.append_raw("{\"torn");
        cut.len() + 6
    };

    let one = env.run(&["--json", "verify"]);
    assert_eq!(one.status, 7, "{}", one.stderr);
    let report = one.json();
    assert_eq!(report["records"], n + 5);
    assert_eq!(report["discussions"], 4);
    assert_eq!(report["unreadable_lines"][0]["line"], n + 1);
    assert_eq!(report["torn_tail_bytes"], torn);
    let findings: Vec<(String, u64)> = report["ledger_findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().into(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        findings,
        vec![
            ("duplicate_id".into(), n + 3),
            ("time_backwards".into(), n + 4),
            ("operation_stray_line".into(), n + 5),
        ]
    );
    let invalid: Vec<&str> = report["invalid_discussions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["discussion_id"].as_str().unwrap())
        .collect();
    assert_eq!(invalid, vec![ids[1].as_str()]);

    let on_both_cores = [
        ("DISCUSS_AHEAD_FROM_BYTES", "0"),
        ("DISCUSS_BATCH_LINES", "3"),
    ];
    let two = env.run_with(&on_both_cores, &["--json", "verify"], "");
    assert_eq!((two.status, &two.stdout), (one.status, &one.stdout));

    // The first list with nothing derived kept reads the same one pass.
    env.drop_derived();
    let listed = env.run(&["--json", "list"]);
    assert_eq!(listed.status, 0, "{}", listed.stderr);
    let rows = listed.json()["discussions"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 4);
    for row in &rows {
        let invalid = row["discussion_id"] == ids[1].as_str();
        assert_eq!(row["status"] == "invalid", invalid, "{row}");
    }
    env.drop_derived();
    let listed_on_two = env.run_with(&on_both_cores, &["--json", "list"], "");
    assert_eq!(listed_on_two.stdout, listed.stdout);
}
