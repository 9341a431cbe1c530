//! `discuss ledger export|import|info`: an export never replaces a
//! ledger in use, an import is all or nothing and never duplicates.

use crate::common::*;

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
    // The new lines continue another ledger's chain: a `kind:"import"`
    // line before them says so (and how many), then they come verbatim.
    let after = env.ledger_bytes();
    assert!(after.starts_with(&before));
    let boundary_end = before.len()
        + after[before.len()..]
            .iter()
            .position(|b| *b == b'\n')
            .unwrap()
        + 1;
    let boundary: serde_json::Value =
        serde_json::from_slice(&after[before.len()..boundary_end]).unwrap();
    assert_eq!(boundary["kind"], "import", "{boundary}");
    assert_eq!(boundary["lines"], new, "{boundary}");
    assert_eq!(
        boundary["chain_restarts"],
        serde_json::json!([0]),
        "{boundary}"
    );
    assert_eq!(&after[boundary_end..], &fresh.ledger_bytes()[..]);
    let verified = env.ok(&["verify"]);
    assert_eq!(
        verified["ledger_findings"],
        serde_json::json!([]),
        "{verified}"
    );
    assert_eq!(verified["chain"]["imported_restarts"], 1, "{verified}");
    let expected = after;
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
    assert_eq!(
        env.ledger_bytes(),
        expected,
        "a refused import writes nothing"
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
    // After the `kind:"import"` line (the lines continue another chain),
    // the file's bytes as they were.
    let after = env.ledger_bytes();
    let imported = std::fs::read(&source).unwrap();
    assert!(after.starts_with(&before) && after.ends_with(&imported));
    let boundary = &after[before.len()..after.len() - imported.len()];
    assert!(
        boundary.starts_with(br#"{"v":1,"kind":"import","#) && boundary.ends_with(b"}\n"),
        "{}",
        String::from_utf8_lossy(boundary)
    );
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
    wait_until_stopped(pid);
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

/// `ledger export` to a stdout that cannot take it (a full disk) fails
/// with `io_error`, exit 1: a backup that was not written never reports
/// success, however few bytes were left in the buffer at the end.
#[test]
fn an_export_to_a_full_stdout_fails() {
    let env = Env::new();
    env.fleet();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = env
        .command_std()
        .args(["--json", "ledger", "export"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let error: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(error["error"]["code"], "io_error", "{error}");
}
