//! The third round of edges (issue 20): what a hostile or careless input
//! must never do — lose an acknowledged write, show a secret, store a
//! different number, reach the terminal raw.

use crate::common::*;

/// A payload's numbers are kept exactly or refused, never changed.
#[test]
fn payload_numbers_are_kept_exactly_or_refused() {
    let env = Env::new();
    env.fleet();
    let ask = |payload: &str| {
        let mut args = ASK_A_TO_B.to_vec();
        args.push(payload);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    for payload in [
        r#"{"n":123456789012345678901234567890}"#,
        r#"{"n":0.1e-400}"#,
        r#"[3.14159265358979323846]"#,
        r#"{"big":18446744073709551616}"#,
    ] {
        let args = ask(payload);
        let err = env.fails(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            "payload_not_json",
            3,
        );
        assert!(
            payload.contains(err["details"]["value"].as_str().unwrap()),
            "{err}"
        );
        assert!(
            err["message"].as_str().unwrap().contains("exactly"),
            "{err}"
        );
    }
    // Beyond a double altogether: the parser itself refuses it.
    let args = ask(r#"{"n":1e400}"#);
    env.fails(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        "payload_not_json",
        3,
    );
    // What a double or a 64-bit integer holds is stored as written.
    let exact = r#"{"i":-9223372036854775808,"u":18446744073709551615,"f":0.1,"g":2.5e-3,"s":"123456789012345678901234567890"}"#;
    let args = ask(exact);
    let asked = env.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let shown = env.show(asked["discussion_id"].as_str().unwrap());
    let body = &shown["transcript"][0]["payload"];
    assert_eq!(body["i"], serde_json::json!(i64::MIN));
    assert_eq!(body["u"], serde_json::json!(u64::MAX));
    assert_eq!(body["f"], serde_json::json!(0.1));
    assert_eq!(body["g"], serde_json::json!(0.0025));
    // Through `call` the same.
    let request = serde_json::json!({"from_agent_id":"agent-a","to_agent_id":"agent-b",
        "fleet_id":"fleet-alpha","payload":"{\"n\":123456789012345678901234567890}"});
    let out = env.run(&["call", "ask_peer", &request.to_string()]);
    assert_eq!(out.status, 3);
    assert_eq!(out.error()["code"], "payload_not_json");
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

/// `ledger export --output` never replaces the ledger, a file it derives,
/// or another ledger in use: a writer holding the old inode would append
/// to a deleted file and report success.
#[test]
fn export_never_replaces_a_ledger_in_use() {
    let env = Env::file();
    env.discussion(&[]);
    env.ok(&["list"]); // writes the summary too
    let before = env.ledger_bytes();
    let ledger = env.ledger();
    let state = ledger.parent().unwrap().to_path_buf();
    let mut targets = vec![
        ledger.clone(),
        state.join("./ledger.jsonl"),
        state.join("../state/ledger.jsonl"),
    ];
    for suffix in [".index", ".checkpoint", ".summary"] {
        targets.push(state.join(format!("ledger.jsonl{suffix}")));
    }
    let link = env.dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&ledger, &link).unwrap();
    targets.push(link);
    for target in &targets {
        let derived_before = std::fs::read(target).ok();
        let err = env.fails(
            &["ledger", "export", "--output", target.to_str().unwrap()],
            "invalid_argument",
            3,
        );
        assert!(
            err["message"].as_str().unwrap().contains("will not export"),
            "{err}"
        );
        assert_eq!(
            std::fs::read(target).ok(),
            derived_before,
            "{target:?} untouched"
        );
    }
    assert_eq!(env.ledger_bytes(), before);
    // Another ledger in use (its cache beside it) is refused too.
    let other = Env::file();
    other.discussion(&[]);
    let err = env.fails(
        &[
            "ledger",
            "export",
            "--output",
            other.ledger().to_str().unwrap(),
        ],
        "invalid_argument",
        3,
    );
    assert!(err["message"].as_str().unwrap().contains("in use"), "{err}");
    // A backup is replaced as before.
    let backup = env.dir.path().join("backup.jsonl");
    for _ in 0..2 {
        env.ok(&["ledger", "export", "--output", backup.to_str().unwrap()]);
        assert_eq!(std::fs::read(&backup).unwrap(), before);
    }
}

/// Only regular files (or `-`) are imported: a FIFO is refused at once,
/// never waited on.
#[test]
fn import_refuses_a_fifo_without_waiting() {
    let env = Env::new();
    env.fleet();
    let fifo = env.dir.path().join("lines.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let started = std::time::Instant::now();
    let err = env.fails(
        &["ledger", "import", fifo.to_str().unwrap()],
        "invalid_argument",
        3,
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("not a regular file"),
        "{err}"
    );
}

/// `discuss __discuss-guardian` typed by hand, or started by anything but
/// a supervisor, refuses and signals nothing: the caller's shell and jobs
/// live on.
#[test]
fn the_guardian_refuses_unless_a_supervisor_started_it() {
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let bin = bin.display();
    let cases = [
        // In a script: the shell's group, which it does not lead.
        format!("{bin} __discuss-guardian </dev/null"),
        // Leading a group of its own, with a pipe that is not the
        // supervisor's (no variable, then a wrong one).
        format!("echo x | setsid {bin} __discuss-guardian"),
        format!("echo x | DISCUSS_GUARDIAN_PIPE=1 setsid {bin} __discuss-guardian"),
    ];
    for case in cases {
        let script = format!(
            "sleep 30 & job=$!; {case}; echo \"exit $?\"; kill -0 $job && echo alive; kill $job"
        );
        // A session of its own, so that a guardian that did signal its
        // group could never reach this test's.
        let out = std::process::Command::new("setsid")
            .args(["bash", "-c", &script])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stdout.contains("exit 2"), "{case}: {stdout} {stderr}");
        assert!(
            stdout.contains("alive"),
            "{case}: the caller's job was killed: {stdout}"
        );
        assert!(stderr.contains("not a command"), "{case}: {stderr}");
    }
}

/// Importing a backup twice, or into the ledger it came from, cannot
/// duplicate a record: refused whole, or with `--skip-existing` only the
/// new records taken (and still refused when a line differs).
#[test]
fn an_import_never_duplicates_a_record() {
    let env = Env::new();
    env.discussion(&[]);
    let backup = env.dir.path().join("backup.jsonl");
    std::fs::write(&backup, env.ledger_bytes()).unwrap();
    let backup_arg = backup.to_str().unwrap();
    env.discussion(&[]); // one more, after the backup
    let before = env.ledger_bytes();
    let err = env.fails(&["ledger", "import", backup_arg], "invalid_argument", 3);
    let first_id = env.records()[0]["id"].clone();
    assert_eq!(
        err["details"]["record_id"], first_id,
        "the first such id is named"
    );
    let in_backup = std::fs::read_to_string(&backup).unwrap().lines().count();
    let skipped = env.ok(&["ledger", "import", "--skip-existing", backup_arg]);
    assert_eq!(
        (&skipped["imported"], &skipped["skipped"]),
        (&0.into(), &in_backup.into()),
        "{skipped}"
    );
    assert_eq!(env.ledger_bytes(), before);
    // New records among old ones: only the new are taken, in order.
    let fresh = Env::new();
    fresh.discussion(&[]);
    let mut mixed = std::fs::read(&backup).unwrap();
    mixed.extend_from_slice(&fresh.ledger_bytes()[..]);
    let new = String::from_utf8(fresh.ledger_bytes())
        .unwrap()
        .lines()
        .count();
    let mixed_path = env.dir.path().join("mixed.jsonl");
    std::fs::write(&mixed_path, &mixed).unwrap();
    let out = env.ok(&[
        "ledger",
        "import",
        "--skip-existing",
        mixed_path.to_str().unwrap(),
    ]);
    assert_eq!(
        (&out["imported"], &out["skipped"]),
        (&new.into(), &in_backup.into()),
        "{out}"
    );
    let mut expected = before.clone();
    expected.extend_from_slice(&fresh.ledger_bytes());

    assert_eq!(env.ledger_bytes(), expected);
    // A line under a known id that differs from the stored one.
    let text = String::from_utf8(std::fs::read(&backup).unwrap()).unwrap();
    let forged = text.replacen("\"by\":\"tester\"", "\"by\":\"forger\"", 1);
    std::fs::write(&backup, forged).unwrap();
    let err = env.fails(
        &["ledger", "import", "--skip-existing", backup_arg],
        "invalid_argument",
        3,
    );
    assert!(
        err["message"].as_str().unwrap().contains("differs"),
        "{err}"
    );
}

/// A file import killed (`kill -9`) after any of its chunks leaves nothing
/// once the ledger is next opened, by a reader or a writer; the import
/// then goes through whole.
#[test]
fn a_file_import_killed_after_any_chunk_leaves_nothing() {
    let source_env = Env::file();
    source_env.fleet();
    for _ in 0..12 {
        source_env.ask(&[]);
    }
    let source = source_env.ledger();
    let size = std::fs::metadata(&source).unwrap().len();
    let chunk = 1024u64;
    let chunks = size.div_ceil(chunk);
    assert!(chunks >= 5, "{size} bytes");
    let env = Env::file();
    env.ok(&["fleet", "add", "fleet-beta", "agent-x"]);
    let before = env.ledger_bytes();
    for nth in 1..=chunks {
        let out = env.run_with(
            &[
                (
                    "DISCUSS_FAILPOINTS",
                    &format!("import.after_chunk=crash@{nth}"),
                ),
                ("DISCUSS_IMPORT_CHUNK", &chunk.to_string()),
            ],
            &["--json", "ledger", "import", source.to_str().unwrap()],
            "",
        );
        assert_eq!(out.status, -1, "killed after chunk {nth}: {}", out.stderr);
        let mut marker = env.ledger().into_os_string();
        marker.push(".importing");
        assert!(
            std::path::Path::new(&marker).exists(),
            "the marker stands after chunk {nth}"
        );
        // Every other opener: a reader first, or a writer.
        if nth % 2 == 1 {
            env.ok(&["verify"]);
        } else {
            env.ok(&["fleet", "add", "fleet-beta", "agent-x"]);
        }
        assert_eq!(env.ledger_bytes(), before, "after chunk {nth} of {chunks}");
        assert!(!std::path::Path::new(&marker).exists());
    }
    let out = env.ok(&["ledger", "import", source.to_str().unwrap()]);
    assert_eq!(out["imported"], 15);
    let mut whole = before.clone();
    whole.extend_from_slice(&std::fs::read(&source).unwrap());
    assert_eq!(env.ledger_bytes(), whole);
    env.ok(&["verify"]);
}

/// While an import runs (its marker standing, the lock held), a reader
/// with a deadline is not held past it: `wait --timeout-ms` times out on
/// time, and once the import is let go everything is there.
#[test]
fn a_running_import_holds_no_reader_past_its_deadline() {
    let source_env = Env::file();
    source_env.fleet();
    for _ in 0..6 {
        source_env.ask(&[]);
    }
    let env = Env::file();
    let (dsc, _) = env.discussion(&[]);
    let mut importer = env
        .command_std()
        .env("DISCUSS_FAILPOINTS", "import.after_chunk=stop@1")
        .env("DISCUSS_IMPORT_CHUNK", "512")
        .args(["ledger", "import", source_env.ledger().to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = importer.id();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap_or_default()
        .contains(") T ")
    {
        assert!(
            std::time::Instant::now() < until,
            "the importer never stopped"
        );
        std::thread::yield_now();
    }
    let started = std::time::Instant::now();
    let out = env.run(&[
        "--json",
        "wait",
        &dsc,
        "--until",
        "closed",
        "--timeout-ms",
        "300",
    ]);
    let took = started.elapsed();
    assert_eq!(out.status, 10, "{}", out.stderr);
    assert!(took < std::time::Duration::from_secs(3), "waited {took:?}");
    let resumed = std::process::Command::new("kill")
        .args(["-CONT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(resumed.success());
    assert!(importer.wait().unwrap().success());
    assert_eq!(
        env.ok(&["list"])["discussions"].as_array().unwrap().len(),
        7
    );
}
