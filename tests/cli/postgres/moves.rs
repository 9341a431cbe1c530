//! Ledgers moved between a file and a database byte for byte, imports all
//! or nothing, and an imported ledger read by index, never whole.

use super::*;

/// A file ledger moves into a database and back, byte for byte, with
/// every kind of line a file may hold: operations of several lines, lines
/// that are not records, a fork another tool injected.
#[test]
fn a_ledger_moves_between_a_file_and_a_database_byte_for_byte() {
    let Some(database) = database() else { return };
    let file = Env::file();
    let (dsc, root) = file.discussion(&[]);
    let attempt = file.wake(&dsc, "agent-b", &root);
    file.reply(&dsc, "agent-b", &attempt, &root, "question", false);
    file.ok(&["kill-switch", "on", "--reason", "maintenance"]);
    file.ok(&["kill-switch", "off"]);
    file.append_raw("not json at all\n{\"v\":99,\"kind\":\"future\"}\n");
    file.ask(&[]);
    let exported = file.dir.path().join("export.jsonl");
    let exported_arg = exported.to_str().unwrap();
    let answer = file.ok(&["ledger", "export", "--output", exported_arg]);
    let original = file.ledger_bytes();
    assert_eq!(std::fs::read(&exported).unwrap(), original);
    let lines = original.iter().filter(|b| **b == b'\n').count() as u64;
    assert_eq!(answer["exported"], lines);

    let imported = database.ok(&["ledger", "import", exported_arg]);
    assert_eq!(imported, serde_json::json!({"imported": lines}));
    assert_eq!(database.ledger_bytes(), original, "database export");
    let info = database.ok(&["ledger", "info"]);
    assert_eq!(info["kind"], "postgres");
    assert_eq!(info["lines"], lines);
    assert_eq!(info["bytes"], original.len() as u64);
    assert!(!info["location"].as_str().unwrap().contains("ledger.jsonl"));
    // Every reader agrees on the moved ledger.
    for args in [
        vec!["--json", "show", dsc.as_str()],
        vec!["--json", "list"],
        vec!["--json", "inbox", "--agent", "agent-a"],
        vec!["--json", "events"],
    ] {
        assert_eq!(
            file.run(&args).stdout,
            database.run(&args).stdout,
            "{args:?}"
        );
    }
    let (on_file, on_db) = (
        file.run(&["--json", "verify"]),
        database.run(&["--json", "verify"]),
    );
    assert_eq!(on_file.status, 7);
    assert_eq!(on_db.status, 7);
    let mut a = on_file.json();
    let mut b = on_db.json();
    a["ledger"] = Value::Null;
    b["ledger"] = Value::Null;
    assert_eq!(a, b);

    // And back into an empty file, from standard input.
    let back = Env::file();
    let out = back.run_stdin(
        &["--json", "ledger", "import", "-"],
        &String::from_utf8(database.ledger_bytes()).unwrap(),
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(back.ledger_bytes(), original);
    assert_eq!(
        back.run(&["--json", "list"]).stdout,
        file.run(&["--json", "list"]).stdout
    );
}

/// `import` is all or nothing: a last line without its newline or an
/// operation cut short refuses the whole file, and a crash before COMMIT
/// leaves the database as it was.
#[test]
fn an_import_is_all_or_nothing() {
    let Some(db) = database() else { return };
    db.discussion(&[]);
    let before = db.ledger_bytes();
    let source = db.dir.path().join("in.jsonl");
    let text = String::from_utf8(before.clone()).unwrap();
    let source_arg = source.to_str().unwrap();

    std::fs::write(&source, text.trim_end_matches('\n')).unwrap();
    let err = db.fails(&["ledger", "import", source_arg], "invalid_argument", 3);
    assert!(
        err["message"].as_str().unwrap().contains("newline"),
        "{err}"
    );

    // The fleet operation's first line alone: it announces two.
    let first = text.lines().next().unwrap();
    std::fs::write(&source, format!("{first}\n")).unwrap();
    let err = db.fails(&["ledger", "import", source_arg], "invalid_argument", 3);
    assert!(
        err["message"].as_str().unwrap().contains("cut short"),
        "{err}"
    );

    std::fs::write(&source, &text).unwrap();
    // Into the ledger it came from: every record is there already.
    let err = db.fails(&["ledger", "import", source_arg], "invalid_argument", 3);
    assert!(err["details"]["record_id"].is_string(), "{err}");
    let skipped = db.ok(&["ledger", "import", "--skip-existing", source_arg]);
    assert_eq!(
        (&skipped["imported"], &skipped["skipped"]),
        (&0.into(), &4.into())
    );
    assert_eq!(db.ledger_bytes(), before);
    // Into an empty database: a crash before COMMIT leaves it empty, then
    // every line comes, byte for byte.
    let Some(fresh) = database() else { return };
    let out = fresh.run_with(
        &[("DISCUSS_FAILPOINTS", "append.before_fsync=crash")],
        &["--json", "ledger", "import", source_arg],
        "",
    );
    assert_eq!(out.status, -1, "killed: {}", out.stderr);
    assert_eq!(fresh.ledger_bytes(), b"", "nothing of the import stays");
    let imported = fresh.ok(&["ledger", "import", source_arg]);
    assert_eq!(imported["imported"], 4);
    assert!(imported.get("skipped").is_none(), "{imported}");
    assert_eq!(fresh.ledger_bytes(), before);
}

/// `ledger import` leaves the database ready to serve: the table's
/// statistics are gathered in the same run, not whenever autovacuum gets
/// to it (until then the planner reads a fresh table in full).
#[test]
fn an_import_gathers_the_statistics() {
    let Some(db) = database() else { return };
    let source = Env::file();
    source.fleet();
    for _ in 0..30 {
        source.ask(&[]);
    }
    let lines = std::fs::read_to_string(source.ledger())
        .unwrap()
        .lines()
        .count();
    db.ok(&["ledger", "import", source.ledger().to_str().unwrap()]);
    let url = db.pg.clone().unwrap();
    let mut client = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
    let row = client
        .query_one(
            "SELECT reltuples::bigint FROM pg_class WHERE relname = 'discuss_lines'",
            &[],
        )
        .unwrap();
    let estimated: i64 = row.get(0);
    assert_eq!(
        estimated, lines as i64,
        "the statistics count every imported line"
    );
}

/// Right after `ledger import` of 20,000 records, every statement a
/// command runs to find its lines is an index range: with the statistics
/// the import gathered, and with none at all (as if nothing had analysed
/// the table). No plan reads the table whole, so no command waits for the
/// database to analyse itself.
#[test]
fn lookups_never_read_the_whole_table_of_an_imported_ledger() {
    let Some(db) = database() else { return };
    let source = Env::file();
    source.fleet();
    source.ok(&Argv::ask("agent-a", "agent-b")
        .opt("--payload", "{}")
        .opt("--idempotency-key", "seed")
        .words());
    let seed = std::fs::read_to_string(source.ledger()).unwrap();
    let (fleet, root) = seed.trim_end().rsplit_once('\n').unwrap();
    let root: Value = serde_json::from_str(root).unwrap();
    let (msg, dsc) = (
        root["id"].as_str().unwrap(),
        root["correlation_id"].as_str().unwrap(),
    );
    let root = serde_json::to_string(&root).unwrap();
    let mut text = format!("{fleet}\n");
    const RECORDS: usize = 20_000;
    for i in 0..RECORDS {
        let line = root
            .replace(msg, &format!("msg_{i:032x}"))
            .replace(dsc, &format!("dsc_{i:032x}"))
            .replace("\"seed\"", &format!("\"key-{i}\""));
        text.push_str(&line);
        text.push('\n');
    }
    let file = source.dir.path().join("imported.jsonl");
    std::fs::write(&file, text).unwrap();
    db.ok(&["ledger", "import", file.to_str().unwrap()]);
    let lines = (RECORDS + fleet.lines().count()) as i64;
    let mut client =
        ::postgres::Client::connect(db.pg.as_ref().unwrap(), ::postgres::NoTls).unwrap();
    let some = format!("dsc_{:032x}", RECORDS / 2);
    let params = |name: &str| -> Vec<Box<dyn ::postgres::types::ToSql + Sync>> {
        match name {
            "catch-up" => vec![Box::new(lines - 3), Box::new(lines)],
            "records of discussions" => vec![Box::new(vec![some.clone()]), Box::new(lines)],
            "idempotency key" => vec![Box::new("key-7".to_owned()), Box::new(lines)],
            "stream after a line" => vec![Box::new(lines - 5), Box::new(10_000i64)],
            // A prefix a person pastes: a few hundred ids at most start with it.
            "ids in a range" => {
                let prefix = some[..some.len() - 2].to_owned();
                vec![
                    Box::new(prefix.clone()),
                    Box::new(format!("{prefix}\u{7f}")),
                ]
            }
            other => panic!("no parameters for {other}"),
        }
    };
    let plans = |client: &mut ::postgres::Client, when: &str, only: &[&str]| {
        for (name, sql) in discuss::postgres_lookups() {
            if !only.is_empty() && !only.contains(name) {
                continue;
            }
            let values = params(name);
            let refs: Vec<&(dyn ::postgres::types::ToSql + Sync)> =
                values.iter().map(|v| v.as_ref()).collect();
            let plan: Vec<String> = client
                .query(&format!("EXPLAIN {sql}"), &refs)
                .unwrap()
                .iter()
                .map(|row| row.get(0))
                .collect();
            let plan = plan.join("\n");
            assert!(
                !plan.contains("Seq Scan on discuss_lines"),
                "{when}: {name} reads the table whole:\n{plan}"
            );
            assert!(plan.contains("Index"), "{when}: {name}:\n{plan}");
        }
    };
    plans(&mut client, "with the import's statistics", &[]);
    client
        .batch_execute(
            "DELETE FROM pg_statistic WHERE starelid = 'discuss_lines'::regclass; \
             UPDATE pg_class SET reltuples = -1 WHERE relname = 'discuss_lines'",
        )
        .unwrap();
    plans(&mut client, "without statistics", &[]);
    // The lines after the state row (what every command reads first) stay
    // a range of the index even where the planner thinks random reads
    // dear: their shape bounds them, not the statistics.
    client.batch_execute("SET random_page_cost = 40").unwrap();
    plans(
        &mut client,
        "without statistics, random reads dear",
        &["catch-up"],
    );
}

/// Line numbers a hand edit spread apart by more than a batch of a stream
/// are read past: `events` and `export` still give every line, in order.
#[test]
fn a_gap_in_the_line_numbers_is_read_past() {
    let Some(db) = database() else { return };
    db.fleet();
    db.ask(&[]);
    db.ask(&[]);
    let before = db.run(&["ledger", "export"]).stdout;
    let mut client =
        ::postgres::Client::connect(db.pg.as_ref().unwrap(), ::postgres::NoTls).unwrap();
    client
        .batch_execute(
            "UPDATE discuss_lines SET line_no = line_no + 50000 WHERE line_no > 2; \
             DELETE FROM discuss_state",
        )
        .unwrap();
    assert_eq!(db.run(&["ledger", "export"]).stdout, before);
    let events = db.run(&["--json", "events"]);
    assert_eq!(events.status, 0, "{}", events.stderr);
    let events = events.stdout;
    let numbers: Vec<u64> = events
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["line"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(numbers.len(), before.lines().count(), "{events}");
    assert_eq!(&numbers[..3], &[1, 2, 50003]);
}
