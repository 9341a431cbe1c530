//! Ledgers with injected problems give the findings ledger.md prescribes.

use crate::common::*;
use serde_json::{Value, json};

fn message(dsc: &str, id: &str, fleet: &str, from: &str, to: &str, payload: &str) -> String {
    json!({"v":1,"kind":"message","id":id,"at_ms":T0,"by":"other-tool","fleet_id":fleet,
        "from_agent_id":from,"to_agent_id":to,"correlation_id":dsc,"payload":payload})
    .to_string()
        + "\n"
}

fn reply_envelope(dsc: &str, turn: u32, reply_to: &str, attempt: &str) -> String {
    json!({"schema":"discussion/v1","discussion_id":dsc,"turn":turn,"type":"result",
        "reply_to_message_id":reply_to,"attempt_id":attempt,"close":false,"body":{}})
    .to_string()
}

fn finding_kinds(show: &Value) -> Vec<String> {
    show["integrity_findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_foreign_message_is_excluded_without_invalidating() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    env.append_raw(&message(
        &dsc,
        "msg_foreign",
        "fleet-alpha",
        "agent-c",
        "agent-a",
        &reply_envelope(&dsc, 2, &root, &att),
    ));
    env.append_raw(&message(
        &dsc,
        "msg_other_fleet",
        "fleet-beta",
        "agent-b",
        "agent-a",
        &reply_envelope(&dsc, 2, &root, &att),
    ));
    let show = env.show(&dsc);
    assert_eq!(finding_kinds(&show), ["foreign", "foreign"]);
    assert_eq!(show["status"], "active");
    assert_eq!(show["transcript"].as_array().unwrap().len(), 1);
    // The real reply still works.
    env.reply(&dsc, "agent-b", &att, &root, "result", true);
    assert_eq!(env.status(&dsc), "closed");
}

#[test]
fn a_malformed_envelope_is_excluded_without_invalidating() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&[]);
    env.append_raw(&message(
        &dsc,
        "msg_bad",
        "fleet-alpha",
        "agent-b",
        "agent-a",
        "{not an envelope",
    ));
    env.append_raw(&message(
        &dsc,
        "msg_schema",
        "fleet-alpha",
        "agent-b",
        "agent-a",
        r#"{"schema":"discussion/v9"}"#,
    ));
    let show = env.show(&dsc);
    assert_eq!(finding_kinds(&show), ["malformed", "malformed"]);
    assert_eq!(show["integrity_findings"][0]["message_id"], "msg_bad");
    assert_eq!(show["status"], "open");
}

#[test]
fn a_receipt_for_an_unknown_attempt_is_contradictory() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&[]);
    let line = json!({"v":1,"kind":"receipt","id":"rcp_x","at_ms":T0,"by":"x","receipt":"discussion.attempt.failed",
        "discussion_id":dsc,"attempt_id":"att_nobody","agent_id":"agent-b","reason":"spawn_failed"});
    env.append_raw(&format!("{line}\n"));
    let show = env.show(&dsc);
    assert_eq!(finding_kinds(&show), ["contradictory_receipts"]);
    assert_eq!(show["status"], "invalid");
}

#[test]
fn a_duplicate_reservation_of_a_turn_is_a_duplicate_ordinal() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    env.wake(&dsc, "agent-b", &root);
    let line = json!({"v":1,"kind":"receipt","id":"rcp_dup","at_ms":T0,"by":"x","receipt":"discussion.attempt.reserved",
        "discussion_id":dsc,"attempt_id":"att_dup","agent_id":"agent-b","turn":2,"head_message_id":root,"deadline_ms":T0+1000});
    env.append_raw(&format!("{line}\n"));
    let show = env.show(&dsc);
    assert_eq!(finding_kinds(&show), ["duplicate_ordinal"]);
    assert_eq!(show["status"], "invalid");
}

#[test]
fn a_second_root_or_a_missing_root_is_malformed_root() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&[]);
    let root_payload = env
        .records()
        .iter()
        .find(|r| r["kind"] == "message")
        .unwrap()["payload"]
        .as_str()
        .unwrap()
        .to_owned();
    env.append_raw(&message(
        &dsc,
        "msg_root2",
        "fleet-alpha",
        "agent-a",
        "agent-b",
        &root_payload,
    ));
    let show = env.show(&dsc);
    assert_eq!(finding_kinds(&show), ["malformed_root"]);
    assert_eq!(show["status"], "invalid");

    let orphan = "dsc_orphan";
    let line = json!({"v":1,"kind":"receipt","id":"rcp_o","at_ms":T0,"by":"x","receipt":"discussion.escalated","discussion_id":orphan});
    env.append_raw(&format!("{line}\n"));
    let show = env.show(orphan);
    assert_eq!(show["status"], "invalid");
    assert_eq!(finding_kinds(&show), ["malformed_root"]);
    assert_eq!(show["participants"], json!([]));
}

#[test]
fn a_garbage_line_never_stops_replay() {
    let env = Env::new();
    env.fleet();
    env.append_raw("this is not json\n[1,2]\n{\"v\":7,\"kind\":\"message\"}\n");
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "result", true);
    let show = env.show(&dsc);
    assert_eq!(show["status"], "closed");
    assert!(show["integrity_findings"].as_array().unwrap().is_empty());
    let bytes = String::from_utf8(env.ledger_bytes()).unwrap();
    assert!(
        bytes.contains("this is not json\n"),
        "garbage is kept as it is"
    );
}

#[test]
fn a_torn_tail_is_ignored_by_readers_and_moved_aside_by_the_next_writer() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let torn =
        r#"{"v":1,"kind":"receipt","id":"rcp_torn","at_ms":1,"by":"x","receipt":"discussion.attem"#;
    env.append_raw(torn);
    let before = env.ledger_bytes();
    assert_eq!(env.status(&dsc), "open");
    assert_eq!(env.ledger_bytes(), before, "reading never repairs");
    // A refused write leaves the torn tail where it is.
    env.fails(
        &wake_argv("agent-a", &dsc, &root, &[], false),
        "not_recipient",
        5,
    );
    env.wake(&dsc, "agent-b", &root);
    let torn_file = std::fs::read_to_string(env.ledger().with_extension("jsonl.torn")).unwrap();
    assert_eq!(torn_file, format!("{torn}\n"));
    let bytes = env.ledger_bytes();
    assert!(bytes.ends_with(b"\n"));
    assert!(!String::from_utf8_lossy(&bytes).contains("rcp_torn"));
    assert_eq!(env.status(&dsc), "active");
    // A second torn tail is appended to the same file, never overwriting.
    env.append_raw("{\"half");
    env.ok(&["fleet", "add", "fleet-alpha", "agent-z"]);
    let torn_file = std::fs::read_to_string(env.ledger().with_extension("jsonl.torn")).unwrap();
    assert_eq!(torn_file, format!("{torn}\n{{\"half\n"));
}

#[test]
fn ledger_and_folder_modes() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.fleet();
    let file_mode = std::fs::metadata(env.ledger())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    let dir_mode = std::fs::metadata(env.ledger().parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(file_mode, 0o600);
    assert_eq!(dir_mode, 0o700);
}

/// Replaces the ledger's line `n` (1-based) by `edit(line)`.
fn edit_line(env: &Env, n: usize, edit: impl Fn(&str) -> String) {
    let text = String::from_utf8(env.ledger_bytes()).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[n - 1] = edit(&lines[n - 1]);
    std::fs::write(env.ledger(), lines.join("\n") + "\n").unwrap();
}

fn ledger_findings(env: &Env) -> (i32, Vec<Value>) {
    let out = env.run(&["--json", "verify"]);
    let findings = out.json()["ledger_findings"].as_array().unwrap().clone();
    (out.status, findings)
}

#[test]
fn a_line_edited_to_claim_the_lines_after_it_hides_nothing() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "question", false);
    // The root's line; what follows is a reservation and a reply.
    let root_line = 1 + env
        .records()
        .iter()
        .position(|r| r["id"] == root.as_str())
        .unwrap();
    edit_line(&env, root_line, |l| {
        l.replacen("{", r#"{"op_lines":1000,"#, 1)
    });
    let edited = env.ledger_bytes();
    assert_eq!(env.show(&dsc)["transcript"].as_array().unwrap().len(), 2);
    // A writer afterwards moves no complete line out of the ledger.
    env.ok(&["fleet", "add", "fleet-beta", "agent-x"]);
    let after = env.ledger_bytes();
    assert!(
        after.starts_with(&edited),
        "a complete line left the ledger"
    );
    assert!(!env.ledger().with_extension("jsonl.torn").exists());
    assert_eq!(env.show(&dsc)["transcript"].as_array().unwrap().len(), 2);
    let (status, findings) = ledger_findings(&env);
    assert_eq!(status, 7, "verify reports the overrun");
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert_eq!(findings[0]["kind"], "operation_overrun");
    assert_eq!(findings[0]["line"], root_line);
    // The edit itself: the next line names the root line as it was.
    assert_eq!(findings[1]["kind"], "chain_broken");
    assert_eq!(findings[1]["line"], root_line + 1);
}

#[test]
fn verify_reports_duplicate_ids_time_going_backwards_and_future_records() {
    let mut env = Env::new();
    env.fleet();
    assert_eq!(ledger_findings(&env), (0, vec![]));
    let fleet = |id: &str, at: i64| {
        json!({"v":1,"kind":"fleet","id":id,"at_ms":at,"by":"other-tool","op":"add",
            "fleet_id":"fleet-beta","agent_id":"agent-x"})
        .to_string()
            + "\n"
    };
    let lines = env.records().len();
    env.append_raw(&fleet("rec_twice", T0));
    env.append_raw(&fleet("rec_twice", T0));
    env.append_raw(&fleet("rec_early", T0 - 61_000));
    env.append_raw(&fleet("rec_ahead", T0 + 3_600_000));
    let (status, findings) = ledger_findings(&env);
    assert_eq!(status, 7);
    let got: Vec<(String, u64)> = findings
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().into(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let n = lines as u64;
    assert_eq!(
        got,
        vec![
            ("duplicate_id".into(), n + 2),
            ("time_backwards".into(), n + 3),
            ("clock_skew".into(), n + 4),
        ]
    );
    // Once the clock has caught up, the record ahead is no longer skewed.
    env.advance(3_600_000);
    let (_, findings) = ledger_findings(&env);
    assert!(
        findings.iter().all(|f| f["kind"] != "clock_skew"),
        "{findings:?}"
    );
}

#[test]
fn a_record_from_a_year_ahead_moves_no_one_elses_time() {
    let mut env = Env::new();
    env.fleet();
    let year = 365 * 86_400_000_i64;
    // A skewed host engages the kill-switch and adds a member, a year ahead.
    env.append_raw(
        &(json!({"v":1,"kind":"kill_switch","id":"rec_future_ks","at_ms":T0 + year,
            "by":"skewed-host","engaged":true,"reason":"from the future"})
        .to_string()
            + "\n"),
    );
    // Not yet engaged for anyone here; the discussion lives in the present.
    let (dsc, root) = env.ask(&["--timeout-ms", "300000", "--turn-timeout-ms", "1000"]);
    let show = env.show(&dsc);
    assert_eq!(show["status"], "open");
    let created = show["created_at"].as_str().unwrap();
    assert!(
        created.starts_with("2026-11-30T00:00:"),
        "stamped by this clock, not the year-ahead record's: {created}"
    );
    assert_eq!(env.ok(&["kill-switch"])["engaged"], false);
    // A turn of one second lapses after one second, not a year.
    env.wake(&dsc, "agent-b", &root);
    assert_eq!(env.status(&dsc), "active");
    // Past the second, with room for the time each process runs (the pinned
    // clock goes on from where it starts).
    env.advance(1_500);
    assert_eq!(env.status(&dsc), "deadman");
    // A record of the discussion stamped ahead is a finding, not a verdict.
    let (dsc2, _) = env.ask(&[]);
    env.append_raw(
        &(json!({"v":1,"kind":"receipt","id":"rcp_future","at_ms":T0 + year,"by":"skewed-host",
            "receipt":"discussion.attempt.failed","discussion_id":dsc2,"attempt_id":"att_x",
            "reason":"deadline"})
        .to_string()
            + "\n"),
    );
    let show = env.show(&dsc2);
    assert_eq!(show["status"], "open");
    assert_eq!(finding_kinds(&show), vec!["clock_skew"]);
    // Once the clock has caught up, both records count.
    env.advance(year);
    assert_eq!(env.ok(&["kill-switch"])["engaged"], true);
    assert_eq!(
        env.status(&dsc2),
        "invalid",
        "the receipt is contradictory once it counts"
    );
}

/// Runs a command that must end within ten seconds whatever is planted.
fn bounded(env: &Env, args: &[&str]) -> Outcome {
    let output = env
        .command()
        .arg("--json")
        .args(args)
        .timeout(std::time::Duration::from_secs(10))
        .output()
        .unwrap();
    assert!(
        output.status.code().is_some(),
        "{args:?} hung and was killed"
    );
    Outcome {
        status: output.status.code().unwrap(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn beside(env: &Env, suffix: &str) -> std::path::PathBuf {
    let mut name = env.ledger().into_os_string();
    name.push(suffix);
    name.into()
}

fn mkfifo(path: &std::path::Path) {
    let _ = std::fs::remove_file(path);
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn planted_symlinks_are_never_written_through() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let victim = env.dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    for suffix in [".index", ".checkpoint"] {
        let path = beside(&env, suffix);
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink(&victim, &path).unwrap();
    }
    assert_eq!(bounded(&env, &["show", &dsc]).status, 0);
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "result", true);
    assert_eq!(env.status(&dsc), "closed");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    for suffix in [".index", ".checkpoint"] {
        let meta = std::fs::symlink_metadata(beside(&env, suffix)).unwrap();
        assert!(
            meta.file_type().is_file(),
            "{suffix} replaced by a file of its own"
        );
    }
    // A torn tail with a symlink planted at .torn: the writer refuses
    // rather than write through it, and changes nothing.
    env.append_raw(r#"{"v":1,"kin"#);
    std::os::unix::fs::symlink(&victim, beside(&env, ".torn")).unwrap();
    env.fails(&["fleet", "add", "fleet-beta", "agent-x"], "io_error", 1);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    // /dev/zero as the checkpoint reads nothing and is replaced.
    let checkpoint = beside(&env, ".checkpoint");
    std::fs::remove_file(&checkpoint).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &checkpoint).unwrap();
    assert_eq!(bounded(&env, &["show", &dsc]).status, 0);
}

/// The checkpoint is rewritten where it stands only when it is the
/// writer's own private file: a hard link to another file, or a file
/// others may read, planted in its stead is replaced, never written
/// through.
#[test]
fn a_checkpoint_not_the_writers_own_is_replaced_not_written_through() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let env = Env::file();
    let (dsc, root) = env.discussion(&[]);
    let checkpoint = beside(&env, ".checkpoint");
    let victim = env.dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::remove_file(&checkpoint).unwrap();
    std::fs::hard_link(&victim, &checkpoint).unwrap();
    env.wake(&dsc, "agent-b", &root);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    let meta = std::fs::metadata(&checkpoint).unwrap();
    assert_eq!(meta.nlink(), 1, "a checkpoint of its own");
    assert!(std::fs::read(&checkpoint).unwrap().starts_with(b"DSCCKP"));
    // One others may read is replaced by a private one.
    std::fs::set_permissions(&checkpoint, std::fs::Permissions::from_mode(0o644)).unwrap();
    env.ok(&["fleet", "add", "fleet-beta", "agent-x"]);
    let meta = std::fs::metadata(&checkpoint).unwrap();
    assert_eq!(meta.mode() & 0o077, 0, "{:o}", meta.mode());
    // Its own is rewritten where it stands.
    env.ok(&["fleet", "add", "fleet-beta", "agent-y"]);
    let again = std::fs::metadata(&checkpoint).unwrap();
    assert_eq!(again.ino(), meta.ino());
    assert_ne!(again.len(), 0);
    assert_eq!(
        env.ok(&["fleet", "list"])["fleets"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn fifos_in_place_of_the_ledger_or_its_files_are_never_waited_on() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    for suffix in [".index", ".checkpoint"] {
        mkfifo(&beside(&env, suffix));
    }
    assert_eq!(bounded(&env, &["show", &dsc]).status, 0);
    let out = bounded(&env, &wake_argv("agent-b", &dsc, &root, &[], false));
    assert_eq!(out.status, 0, "{}", out.stderr);
    // The ledger itself a FIFO: readers and writers refuse it at once and
    // create nothing beside it.
    let fifo_env = Env::new();
    std::fs::create_dir_all(fifo_env.ledger().parent().unwrap()).unwrap();
    mkfifo(&fifo_env.ledger());
    for args in [
        &["list"][..],
        &["show", &dsc][..],
        &["fleet", "add", "f", "a"][..],
    ] {
        let out = bounded(&fifo_env, args);
        assert_eq!(out.status, 1, "{args:?}: {}", out.stderr);
        assert_eq!(out.error()["code"], "ledger_unreadable", "{args:?}");
    }
    for suffix in [".index", ".checkpoint", ".torn"] {
        assert!(
            !beside(&fifo_env, suffix).exists(),
            "{suffix} created beside a FIFO"
        );
    }
}
