//! The ledger in PostgreSQL, on a real server (`common/postgres.rs`): the
//! same answers as a file, moving a ledger between the two byte for byte,
//! and what only a database can do to a writer — a client killed in the
//! middle of a transaction, a server stopped under it, one that never
//! answers, TLS. (The rest of the suite runs against a database too, with
//! `DISCUSS_TEST_LEDGER=postgres`.)

use crate::common::postgres::Cluster;
use crate::common::*;
use proptest::prelude::*;
use serde_json::Value;
use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A database ledger, or `None` (the test is skipped with a message, and
/// fails under CI=true) when this machine has no PostgreSQL.
fn database() -> Option<Env> {
    Env::postgres()
}

/// Server-made ids and times differ between two ledgers fed the same
/// commands: ids become their order of first appearance, and times (keys
/// ending in `_at`, `_ms`, `at_ms`) are dropped, so what remains is what
/// must be equal.
struct Normalizer {
    ids: HashMap<String, String>,
    location: String,
}

impl Normalizer {
    fn new(env: &Env) -> Normalizer {
        Normalizer {
            ids: HashMap::new(),
            location: env.ledger().display().to_string(),
        }
    }

    fn text(&mut self, text: &str) -> String {
        let text = text.replace(&self.location, "<ledger>");
        let mut out = String::new();
        let mut rest = text.as_str();
        'scan: while !rest.is_empty() {
            // An RFC 3339 time, as the tool writes them.
            let b = rest.as_bytes();
            let digits = |r: std::ops::Range<usize>| {
                r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit))
            };
            if b.len() >= 20 && digits(0..4) && b[4] == b'-' && b[10] == b'T' && digits(11..13) {
                let end = rest.find('Z').filter(|&z| z <= 24);
                if let Some(end) = end {
                    out.push_str("<time>");
                    rest = &rest[end + 1..];
                    continue 'scan;
                }
            }
            for prefix in ["dsc_", "msg_", "att_", "rcp_", "rec_"] {
                let whole = prefix.len() + 32;
                if rest.starts_with(prefix)
                    && rest.len() >= whole
                    && rest[prefix.len()..whole]
                        .bytes()
                        .all(|b| b.is_ascii_hexdigit())
                {
                    let next = self.ids.len();
                    let id = self
                        .ids
                        .entry(rest[..whole].to_owned())
                        .or_insert_with(|| format!("{prefix}#{next}"));
                    out.push_str(id);
                    rest = &rest[whole..];
                    continue 'scan;
                }
            }
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
        out
    }

    /// One JSON object, or JSON lines as an array, times (and the chain's
    /// digests of them) dropped.
    fn json(&mut self, text: &str) -> Value {
        let text = self.text(text);
        let mut value = match serde_json::from_str::<Value>(&text) {
            Ok(value) => value,
            Err(_) => match text.lines().map(serde_json::from_str).collect() {
                Ok(lines) => Value::Array(lines),
                Err(_) => Value::String(text),
            },
        };
        drop_times(&mut value);
        value
    }
}

fn drop_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, _| {
                // `prev` digests the line before, ids and times included.
                !(key.ends_with("_at")
                    || key.ends_with("_ms")
                    || key == "at"
                    || key == "updated"
                    || key == "prev"
                    || key == "last_sha256")
            });
            map.values_mut().for_each(drop_times);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_times),
        _ => {}
    }
}

#[derive(Debug, Clone)]
enum Op {
    Ask { turns: u32 },
    Wake,
    WakeOnRoot,
    Reply { close: bool, question: bool },
    Advance(i64),
    KillSwitch(bool),
    Quota(u32),
    Read(&'static str),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (2u32..5).prop_map(|turns| Op::Ask { turns }),
        4 => Just(Op::Wake),
        1 => Just(Op::WakeOnRoot),
        4 => (prop::bool::weighted(0.2), any::<bool>())
            .prop_map(|(close, question)| Op::Reply { close, question }),
        2 => (0i64..400_000).prop_map(Op::Advance),
        1 => any::<bool>().prop_map(Op::KillSwitch),
        1 => (0u32..3).prop_map(Op::Quota),
        2 => prop::sample::select(vec!["show", "list", "inbox", "verify", "events", "info"])
            .prop_map(Op::Read),
    ]
}

/// One ledger and what its commands answered so far.
struct Side {
    env: Env,
    norm: Normalizer,
    dsc: Option<String>,
    root: Option<String>,
    attempt: Option<(String, String, String)>,
}

impl Side {
    fn new(env: Env) -> Side {
        Side {
            norm: Normalizer::new(&env),
            env,
            dsc: None,
            root: None,
            attempt: None,
        }
    }

    /// Runs `args` with --json; (exit status, normalized stdout, stderr).
    fn run(&mut self, args: &[&str]) -> (i32, Value, Value) {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = self.env.run(&all);
        let stdout = self.norm.json(&out.stdout);
        let stderr = self.norm.json(&out.stderr);
        (out.status, stdout, stderr)
    }

    fn head(&mut self) -> Option<(String, String)> {
        let dsc = self.dsc.clone()?;
        let shown = self.env.run(&["--json", "show", &dsc]).json();
        Some((
            shown["head"]["message_id"].as_str()?.to_owned(),
            shown["head"]["to_agent_id"].as_str()?.to_owned(),
        ))
    }

    fn step(&mut self, op: &Op) -> (i32, Value, Value) {
        match op {
            Op::Ask { turns } => {
                let turns = turns.to_string();
                let mut args = ASK_A_TO_B.to_vec();
                args.extend([r#"{"body":"Refactor auth?"}"#, "--max-turns", &turns]);
                let answer = self.run(&args);
                // The ids as written, for the later steps of this side.
                if let Some(outcome) = self.last_ids() {
                    (self.dsc, self.root) = (Some(outcome.0), Some(outcome.1));
                }
                answer
            }
            Op::Wake | Op::WakeOnRoot => {
                let Some((head, agent)) = self.head() else {
                    return self.run(&["kill-switch", "status"]);
                };
                let head = match op {
                    Op::WakeOnRoot => self.root.clone().unwrap_or(head),
                    _ => head,
                };
                let dsc = self.dsc.clone().unwrap();
                let out = self.env.run(&wake_argv(&agent, &dsc, &head, &[], true));
                if out.status == 0 {
                    let attempt = out.json()["attempt"]["attempt_id"]
                        .as_str()
                        .unwrap()
                        .to_owned();
                    self.attempt = Some((attempt, agent, head));
                }
                (
                    out.status,
                    self.norm.json(&out.stdout),
                    self.norm.json(&out.stderr),
                )
            }
            Op::Reply { close, question } => {
                let (Some(dsc), Some((attempt, agent, head))) =
                    (self.dsc.clone(), self.attempt.clone())
                else {
                    return self.run(&["quota", "show"]);
                };
                let mut args = vec![
                    "reply",
                    "--agent",
                    &agent,
                    "--discussion",
                    &dsc,
                    "--attempt",
                    &attempt,
                    "--reply-to",
                    &head,
                    "--type",
                    if *question { "question" } else { "result" },
                    "--payload",
                    r#"{"body":"ok"}"#,
                ];
                if *close {
                    args.push("--close");
                }
                self.run(&args)
            }
            Op::Advance(ms) => {
                self.env.advance(*ms);
                (0, Value::Null, Value::Null)
            }
            Op::KillSwitch(true) => self.run(&["kill-switch", "on", "--reason", "drill"]),
            Op::KillSwitch(false) => self.run(&["kill-switch", "off"]),
            Op::Quota(n) => self.run(&["quota", "set", &n.to_string(), "--agent", "agent-b"]),
            Op::Read(what) => {
                let dsc = self.dsc.clone().unwrap_or_else(|| "dsc_none".into());
                match *what {
                    "show" => self.run(&["show", &dsc]),
                    "list" => self.run(&["list"]),
                    "inbox" => self.run(&["inbox", "--agent", "agent-b"]),
                    "verify" => self.run(&["verify"]),
                    "events" => self.run(&["events"]),
                    _ => {
                        let (status, mut info, err) = self.run(&["ledger", "info"]);
                        // Sizes differ with the ids' digits; kinds do not.
                        info.as_object_mut().map(|m| m.remove("kind"));
                        info.as_object_mut().map(|m| m.remove("bytes"));
                        (status, info, err)
                    }
                }
            }
        }
    }

    /// The discussion and root of the newest `ask`, from the ledger.
    fn last_ids(&self) -> Option<(String, String)> {
        let listed = self.env.run(&["--json", "list"]).json();
        let newest = listed["discussions"].as_array()?.first()?.clone();
        let dsc = newest["discussion_id"].as_str()?.to_owned();
        if self.dsc.as_deref() == Some(dsc.as_str()) {
            return None;
        }
        let shown = self.env.run(&["--json", "show", &dsc]).json();
        let root = shown["transcript"][0]["message_id"].as_str()?.to_owned();
        Some((dsc, root))
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// Random commands against a file and a database side by side: every
    /// exit status, answer and error agrees, and both ledgers hold the
    /// same lines, ids and times aside.
    #[test]
    fn a_file_and_a_database_answer_every_command_alike(ops in prop::collection::vec(op(), 1..14)) {
        let Some(database) = database() else { return Ok(()) };
        let mut sides = [Side::new(Env::file()), Side::new(database)];
        for side in &mut sides {
            side.env.fleet();
        }
        for op in &ops {
            let [file, db] = &mut sides;
            let on_file = file.step(op);
            let on_db = db.step(op);
            prop_assert_eq!(&on_file, &on_db, "{:?}", op);
        }
        let [file, db] = &mut sides;
        let lines = |side: &mut Side| -> Vec<Value> {
            let bytes = String::from_utf8(side.env.ledger_bytes()).unwrap();
            bytes.lines().map(|l| side.norm.json(l)).collect()
        };
        prop_assert_eq!(lines(file), lines(db));
    }
}

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

/// A client killed (`kill -9`) after its INSERT and before its COMMIT
/// leaves nothing behind, and the lock it held is free for the next
/// writer at once; many writers killed at random lose nothing that was
/// acknowledged.
#[test]
fn kill_9_of_clients_loses_nothing_acknowledged() {
    let Some(db) = database() else { return };
    let (dsc, root) = db.discussion(&[]);
    let before = db.ledger_bytes();
    for point in ["append.before_write", "append.before_fsync"] {
        let out = db.run_with(
            &[("DISCUSS_FAILPOINTS", &format!("{point}=crash"))],
            &wake_args(&dsc, &root),
            "",
        );
        assert_eq!(out.status, -1, "{point}: killed");
        assert_eq!(db.ledger_bytes(), before, "{point}: nothing written");
    }
    let started = Instant::now();
    db.wake(&dsc, "agent-b", &root);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the killed clients' lock was released"
    );

    // Twenty-four writers at once, every third killed as soon as started.
    let mut children = Vec::new();
    for i in 0..24 {
        let child = db
            .command_std()
            .args(ASK_A_TO_B)
            .arg(format!(r#"{{"body":"question {i}"}}"#))
            .args(["--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        children.push((i % 3 == 0, child));
    }
    let mut acknowledged = Vec::new();
    for (kill, mut child) in children {
        if kill {
            let _ = child.kill();
        }
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
            acknowledged.push(answer["discussion_id"].as_str().unwrap().to_owned());
        } else {
            assert!(
                out.status.code().is_none(),
                "only the killed fail: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    assert!(
        acknowledged.len() >= 16,
        "{} acknowledged",
        acknowledged.len()
    );
    let listed = db.ok(&["list"]);
    let ids: Vec<&str> = listed["discussions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["discussion_id"].as_str().unwrap())
        .collect();
    for id in &acknowledged {
        assert!(ids.contains(&id.as_str()), "{id} was acknowledged and lost");
    }
    assert_eq!(db.run(&["verify"]).status, 0);
}

/// The server stopped while a writer is between its INSERT and its
/// COMMIT: the writer fails with `ledger_unavailable`, never reports
/// success, and nothing of it is there once the server is back. While the
/// server is down, commands fail at once with the same code.
#[test]
fn a_server_stopped_mid_operation_fails_the_command_and_writes_nothing() {
    let Some(cluster) = Cluster::start(&[]) else {
        return;
    };
    let mut env = Env::file();
    env.pg = Some(cluster.database());
    let (dsc, root) = env.discussion(&[]);
    let before = env.ledger_bytes();
    let writer = env
        .command_std()
        .env("DISCUSS_FAILPOINTS", "append.before_fsync=stop")
        .args(wake_args(&dsc, &root))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_stopped(writer.id());
    cluster.stop_server();
    let down = env.run(&["--json", "show", &dsc]);
    assert_eq!(down.status, 1);
    assert_eq!(down.error()["code"], "ledger_unavailable");
    assert!(
        !down.error()["message"]
            .as_str()
            .unwrap()
            .contains("password")
    );
    let resumed = Command::new("kill")
        .args(["-CONT", &writer.id().to_string()])
        .status()
        .unwrap();
    assert!(resumed.success());
    let out = writer.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "no answer on failure");
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["code"], "ledger_unavailable", "{err}");
    cluster.start_server();
    assert_eq!(env.ledger_bytes(), before);
    assert_eq!(env.status(&dsc), "open");
    env.wake(&dsc, "agent-b", &root);
}

/// `wake` of agent-b on `head`, answered in JSON.
fn wake_args<'a>(dsc: &'a str, head: &'a str) -> [&'a str; 8] {
    [
        "--json",
        "wake",
        "--agent",
        "agent-b",
        "--discussion",
        dsc,
        "--expected-head",
        head,
    ]
}

/// Waits (bounded) until the process is stopped by its fail point.
fn wait_until_stopped(pid: u32) {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
        if state == Some('T') {
            return;
        }
        assert!(
            Instant::now() < until,
            "the writer never reached its fail point"
        );
        std::thread::yield_now();
    }
}

/// A database that cannot be reached is `ledger_unavailable` (exit 1)
/// within `connect_timeout`, also when something accepts the connection
/// and never answers; the URL's password is never shown.
#[test]
fn an_unreachable_database_fails_within_the_connect_timeout() {
    let env = Env::file();
    // Nothing listens on a port just freed.
    let port = closed_port();
    let refused = env
        .command()
        .env(
            "DISCUSS_LEDGER",
            format!("postgresql://ann:s3cret@127.0.0.1:{port}/fleet"),
        )
        .args(["--json", "fleet", "add", "f", "a"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let err: Value = serde_json::from_slice(&refused.stderr).unwrap();
    assert_eq!(err["error"]["code"], "ledger_unavailable");
    let text = String::from_utf8_lossy(&refused.stderr);
    assert!(!text.contains("s3cret"), "{text}");
    assert!(text.contains("ann:***@"), "{text}");

    // A listener that accepts and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let started = Instant::now();
    let hung = env
        .command()
        .env(
            "DISCUSS_LEDGER",
            format!("postgresql://ann@127.0.0.1:{port}/fleet?connect_timeout=1"),
        )
        .args(["--json", "list"])
        .output()
        .unwrap();
    let took = started.elapsed();
    assert_eq!(hung.status.code(), Some(1));
    let err: Value = serde_json::from_slice(&hung.stderr).unwrap();
    assert_eq!(err["error"]["code"], "ledger_unavailable", "{err}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
    drop(silent);
}

/// A supervised agent gets the database's URL as `DISCUSS_LEDGER` and
/// replies through it; `wait` sees the result.
#[test]
fn a_supervised_agent_replies_through_the_database() {
    let Some(db) = database() else { return };
    let (dsc, root) = db.discussion(&[]);
    let script = r#"discuss --json reply --agent "$DISCUSS_AGENT_ID" --discussion "$DISCUSS_DISCUSSION_ID" --attempt "$DISCUSS_ATTEMPT_ID" --reply-to "$DISCUSS_REPLY_TO" --type result --close --payload '{"body":"done"}' >/dev/null && case "$DISCUSS_LEDGER" in postgresql://*) exit 0;; *) exit 9;; esac"#;
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let path = format!("{}:/usr/bin:/bin", bin.parent().unwrap().display());
    let out = db
        .command()
        .env("PATH", path)
        .args(wake_args(&dsc, &root))
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(db.status(&dsc), "closed");
    let waited = db.ok(&["wait", &dsc, "--until", "closed", "--timeout-ms", "2000"]);
    assert_eq!(waited["status"], "closed");
}

/// Over TLS: a server that accepts only TLS connections is reached with
/// `sslmode=require` (the certificate not checked, as libpq does), with
/// `verify-ca` and `verify-full` against the CA that signed its
/// certificate; a CA that did not sign it is refused, and so is a
/// connection without TLS.
#[test]
fn tls_with_sslmode_require_and_verify_ca() {
    let Some(probe) = Cluster::start(&[]) else {
        return;
    };
    drop(probe);
    let certs = tempfile::tempdir().unwrap();
    let at = |name: &str| certs.path().join(name);
    // A CA, a server certificate it signs for 127.0.0.1, and a stranger CA.
    let openssl = |args: &[&str]| {
        let made = Command::new("openssl")
            .args(args)
            .current_dir(certs.path())
            .output()
            .expect("openssl runs");
        assert!(
            made.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&made.stderr)
        );
    };
    std::fs::write(
        at("ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    for ca in ["ca", "stranger"] {
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &format!("/CN={ca}"),
            "-keyout",
            &format!("{ca}.key"),
            "-out",
            &format!("{ca}.crt"),
        ]);
    }
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=discuss-test",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ]);
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "ext",
        "-out",
        "server.crt",
    ]);
    let (cert, key) = (at("server.crt"), at("server.key"));
    let cluster = Cluster::start(&[]).unwrap();
    let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(cluster.data()).unwrap());
    for (from, to) in [(&cert, "server.crt"), (&key, "server.key")] {
        let target = cluster.data().join(to);
        std::fs::copy(from, &target).unwrap();
        std::os::unix::fs::chown(&target, Some(owner), None).unwrap();
        std::fs::set_permissions(&target, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
    }
    cluster.configure("ssl = on\n");
    // Only TLS from 127.0.0.1.
    std::fs::write(
        cluster.data().join("pg_hba.conf"),
        "local all all trust\nhostssl all all 127.0.0.1/32 trust\n",
    )
    .unwrap();
    cluster.stop_server();
    cluster.start_server();
    let url = cluster.database();
    let mut env = Env::file();
    let ca = at("ca.crt");
    for mode in [
        "sslmode=require".to_owned(),
        format!("sslmode=verify-ca&sslrootcert={}", ca.display()),
        format!("sslmode=verify-full&sslrootcert={}", ca.display()),
    ] {
        env.pg = Some(format!("{url}?{mode}"));
        env.fleet();
        assert_eq!(env.ok(&["ledger", "info"])["kind"], "postgres", "{mode}");
    }
    // A certificate no trusted CA signed is refused.
    env.pg = Some(format!(
        "{url}?sslmode=verify-ca&sslrootcert={}",
        at("stranger.crt").display()
    ));
    let out = env.run(&["--json", "fleet", "list"]);
    assert_eq!(out.error()["code"], "ledger_unavailable", "{}", out.stderr);
    assert!(out.stderr.contains("certificate"), "{}", out.stderr);
    env.pg = Some(format!("{url}?sslmode=disable"));
    let out = env.run(&["--json", "fleet", "list"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert_eq!(
        out.error()["code"],
        "ledger_unavailable",
        "refused: {}",
        out.stderr
    );
}

/// The grants `docs/scale-out.md` gives are enough: an agent role with
/// SELECT and INSERT on the lines and SELECT and UPDATE on the state runs
/// a whole discussion once the owner made the tables; a role that may only
/// read reads, and its write is refused (`io_error`, SQLSTATE 42501) with
/// nothing written.
#[test]
fn the_documented_grants_are_enough_and_a_reader_cannot_write() {
    let Some(cluster) = crate::common::postgres::shared() else {
        return;
    };
    let mut owner = Env::file();
    let url = cluster.database();
    owner.pg = Some(url.clone());
    owner.fleet();
    let database = url.rsplit('/').next().unwrap().to_owned();
    let (agent, reader) = (format!("{database}_agent"), format!("{database}_reader"));
    cluster.sql(
        &database,
        &format!(
            "CREATE ROLE {agent} LOGIN; CREATE ROLE {reader} LOGIN;
             GRANT CONNECT ON DATABASE {database} TO {agent}, {reader};
             GRANT SELECT, INSERT ON discuss_lines TO {agent};
             GRANT SELECT, UPDATE ON discuss_state TO {agent};
             GRANT SELECT, INSERT, UPDATE, DELETE ON discuss_summaries TO {agent};
             GRANT SELECT ON discuss_lines, discuss_state, discuss_summaries TO {reader};"
        ),
    );
    let as_role = |role: &str| {
        let mut env = Env::file();
        env.pg = Some(url.replacen("postgres@", &format!("{role}@"), 1));
        env
    };
    let agent_env = as_role(&agent);
    let (dsc, root) = agent_env.ask(&[]);
    let attempt = agent_env.wake(&dsc, "agent-b", &root);
    agent_env.reply(&dsc, "agent-b", &attempt, &root, "result", true);
    assert_eq!(agent_env.status(&dsc), "closed");

    let reader_env = as_role(&reader);
    assert_eq!(reader_env.status(&dsc), "closed");
    // The agent's writes kept the summaries, which the reader's list reads.
    let listed = reader_env.ok(&["list"]);
    assert_eq!(listed["discussions"][0]["status"], "closed");
    let state: String = ::postgres::Client::connect(&url, ::postgres::NoTls)
        .unwrap()
        .query_one("SELECT summary FROM discuss_state", &[])
        .unwrap()
        .get(0);
    let lines = serde_json::from_str::<Value>(&state).unwrap()["summarized"].clone();
    assert!(lines.as_u64().is_some_and(|n| n > 0), "{state}");
    assert_eq!(reader_env.run(&["verify"]).status, 0);
    let mut args = ASK_A_TO_B.to_vec();
    args.push(r#"{"body":"may I?"}"#);
    let err = reader_env.fails(&args, "io_error", 1);
    assert_eq!(err["details"]["sqlstate"], "42501", "{err}");
}

/// Lists read `discuss_summaries` (kept by each write) and agree with a
/// full replay: at once, after the clock lapses open and active
/// discussions with no new line, and after an import (which leaves the
/// summaries behind until the next list writes them anew).
#[test]
fn lists_from_the_summaries_agree_with_a_full_replay() {
    let Some(mut env) = database() else {
        return;
    };
    env.fleet();
    let (closed, root) = env.discussion(&[]);
    let attempt = env.wake(&closed, "agent-b", &root);
    env.reply(&closed, "agent-b", &attempt, &root, "result", true);
    let (active, root) = env.discussion(&[]);
    env.wake(&active, "agent-b", &root);
    let (open, _) = env.discussion(&[]);
    let lists: Vec<Vec<&str>> = vec![
        vec!["list", "--json"],
        vec!["list", "--status", "terminal", "--json"],
        vec!["list", "--agent", "agent-b", "--json"],
        vec!["inbox", "--agent", "agent-b", "--json"],
    ];
    let run = |env: &Env| -> Vec<String> { lists.iter().map(|a| env.run(a).stdout).collect() };
    // A full replay: the state row dropped, so the summaries are not
    // complete for any line, and every discussion is derived.
    let replayed = |env: &Env| -> Vec<String> {
        lists
            .iter()
            .map(|a| {
                env.drop_derived();
                env.run(a).stdout
            })
            .collect()
    };
    let url = env.pg.clone().unwrap();
    let summarized = || {
        let mut client = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
        let state: String = client
            .query_one("SELECT summary FROM discuss_state", &[])
            .unwrap()
            .get(0);
        let lines: i64 = client
            .query_one("SELECT count(*) FROM discuss_lines", &[])
            .unwrap()
            .get(0);
        let rows: i64 = client
            .query_one("SELECT count(*) FROM discuss_summaries", &[])
            .unwrap()
            .get(0);
        let state: Value = serde_json::from_str(&state).unwrap();
        (state["summarized"].as_i64() == Some(lines), rows)
    };
    assert_eq!(summarized(), (true, 3), "every write keeps the summaries");
    assert_eq!(run(&env), replayed(&env), "at once");
    // A list after the replays wrote the summaries anew.
    env.run(&["list"]);
    assert_eq!(summarized(), (true, 3));
    env.advance(16 * 60_000);
    assert_eq!(run(&env), replayed(&env), "after the clock moved");
    assert_eq!(env.status(&open), "expired");
    assert_eq!(env.status(&active), "deadman");
    // An import leaves them behind; the next list writes them again.
    env.run(&["list"]);
    let other = Env::file();
    other.fleet();
    other.ask(&[]);
    let out = env.run_stdin(
        &["ledger", "import", "-"],
        &String::from_utf8(other.ledger_bytes()).unwrap(),
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(!summarized().0, "an import leaves the summaries behind");
    let after_import = run(&env);
    assert_eq!(summarized(), (true, 4), "the list wrote them anew");
    assert_eq!(after_import, replayed(&env), "after an import");
    assert_eq!(env.status(&closed), "closed");
}

/// Readers never wait for writers: a list right after an import (when the
/// summaries are behind and it would write them) answers at once while a
/// writer holds the ledger's lock with its transaction open, and the
/// summaries are written by a later list.
#[test]
fn a_list_never_waits_behind_a_writer() {
    let Some(db) = database() else { return };
    let source = Env::file();
    source.fleet();
    for _ in 0..20 {
        source.ask(&[]);
    }
    let file = source.ledger();
    db.ok(&["ledger", "import", file.to_str().unwrap()]);
    let (dsc, root) = {
        let mut ask = ASK_A_TO_B.to_vec();
        ask.push("{}");
        let v = db.ok(&ask);
        (
            v["discussion_id"].as_str().unwrap().to_owned(),
            v["root_message_id"].as_str().unwrap().to_owned(),
        )
    };
    db.ok(&["ledger", "import", "-"]); // nothing: still the summaries behind
    let mut writer = db
        .command_std()
        .env("DISCUSS_FAILPOINTS", "append.before_fsync=stop")
        .args(wake_args(&dsc, &root))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until_stopped(writer.id());
    let started = Instant::now();
    let listed = db.ok(&["list"]);
    let took = started.elapsed();
    assert_eq!(listed["discussions"].as_array().unwrap().len(), 21);
    assert!(
        took < Duration::from_secs(2),
        "the list waited {took:?} behind the writer"
    );
    let resumed = Command::new("kill")
        .args(["-CONT", &writer.id().to_string()])
        .status()
        .unwrap();
    assert!(resumed.success());
    assert!(writer.wait().unwrap().success());
    assert_eq!(
        db.ok(&["list"])["discussions"].as_array().unwrap().len(),
        21
    );
    assert_eq!(db.status(&dsc), "active");
}

/// `discuss_lines` is the truth: with the state table dropped readers
/// fold the lines themselves (and the next write makes it again); a state
/// row that counts lines that were deleted is not believed.
#[test]
fn derived_tables_are_never_believed_over_the_lines() {
    let Some(db) = database() else { return };
    let url = db.pg.clone().unwrap();
    let sql = |statement: &str| {
        let mut client = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
        client.batch_execute(statement).unwrap();
    };
    let (dsc, _) = db.discussion(&[]);
    let before = db.ledger_bytes();
    let shown = db.show(&dsc);
    sql("DROP TABLE discuss_state");
    assert_eq!(db.show(&dsc), shown, "show folds the lines");
    assert_eq!(db.ledger_bytes(), before, "export writes every line");
    assert_eq!(db.ok(&["verify"])["records"], 4);
    assert_eq!(db.ok(&["list"])["discussions"].as_array().unwrap().len(), 1);
    // A write makes the state again, and counts every line.
    db.ok(&["fleet", "add", "fleet-beta", "agent-x"]);
    assert_eq!(db.ok(&["ledger", "info"])["lines"], 5);
    // Lines deleted under the state row: what they said is gone too.
    let fleets = db.ok(&["fleet", "list"]);
    assert_eq!(fleets["fleets"].as_array().unwrap().len(), 2, "{fleets}");
    sql("DELETE FROM discuss_lines WHERE line_no = 5");
    let fleets = db.ok(&["fleet", "list"]);
    assert_eq!(
        fleets["fleets"].as_array().unwrap().len(),
        1,
        "fleet-beta is gone: {fleets}"
    );
    db.fails(
        &[
            "ask",
            "--from",
            "agent-x",
            "--to",
            "agent-a",
            "--fleet",
            "fleet-beta",
            "--payload",
            "{}",
        ],
        "unknown_fleet",
        4,
    );
    assert_eq!(db.ok(&["ledger", "info"])["lines"], 4);
    assert_eq!(db.ledger_bytes(), before);
}

/// A database restart during a supervised turn does not end it: the agent
/// keeps running, and how the turn ended is recorded once the database is
/// back (here it comes back after the agent exited), then the supervisor
/// exits with that outcome.
#[test]
fn a_supervisor_rides_out_a_database_restart() {
    let Some(cluster) = Cluster::start(&[]) else {
        return;
    };
    let mut env = Env::file();
    env.pg = Some(cluster.database());
    env.now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "30000"]);
    let mark = env.dir.path().join("agent-finished");
    let agent = format!("sleep 2; echo done > {}", mark.display());
    let supervisor = env
        .command_std()
        .args([
            "--json",
            "wake",
            "--agent",
            "agent-b",
            "--discussion",
            &dsc,
            "--expected-head",
            &root,
            "--",
            "sh",
            "-c",
            &agent,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Down once the turn has started, until after the agent exits.
    let until = Instant::now() + Duration::from_secs(20);
    while !String::from_utf8_lossy(&env.ledger_bytes()).contains("discussion.attempt.started") {
        assert!(Instant::now() < until, "the turn never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    cluster.stop_server();
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        mark.exists(),
        "the agent ran to its end while the database was down"
    );
    cluster.start_server();
    let out = supervisor.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(8),
        "failed (exited without reply): {stderr}"
    );
    assert!(
        stderr.contains("cannot be reached; the agent keeps running"),
        "{stderr}"
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["attempt"]["outcome"], "failed", "{answer}");
    assert_eq!(
        answer["attempt"]["reason"], "exited_without_reply",
        "{answer}"
    );
    let shown = env.show(&dsc);
    assert_eq!(shown["attempts"][0]["state"], "failed", "{shown}");
    assert_eq!(shown["attempts"][0]["reason"], "exited_without_reply");
    let _ = &mut env;
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

/// A primary and a synchronous streaming standby, both real servers; the
/// ledger's URL names both hosts with `target_session_attrs=read-write`.
/// Writers run; the primary's host crashes; the standby is promoted; the
/// writers carry on against it after `ledger_unavailable` for the calls
/// in flight. Every acknowledged operation is on the new primary, and
/// `verify` is clean there.
#[test]
fn a_failover_to_the_promoted_standby_keeps_every_acknowledged_write() {
    let Some(primary) = Cluster::start(&[]) else {
        return;
    };
    let standby = primary.standby();
    // From here a commit is acknowledged once the standby has it too.
    primary.sql(
        "postgres",
        "ALTER SYSTEM SET synchronous_standby_names = '*'",
    );
    primary.sql("postgres", "SELECT pg_reload_conf()");
    let url = primary.database();
    let name = url.rsplit('/').next().unwrap().to_owned();
    let both = format!(
        "postgresql://postgres@127.0.0.1:{},127.0.0.1:{}/{name}?target_session_attrs=read-write&connect_timeout=2",
        primary.port, standby.port
    );
    let mut env = Env::file();
    env.pg = Some(both);
    env.fleet();
    let acknowledged = std::sync::Mutex::new(Vec::<String>::new());
    let promoted = std::sync::atomic::AtomicBool::new(false);
    let after_promotion = std::sync::atomic::AtomicUsize::new(0);
    let refusals = std::sync::Mutex::new(Vec::<String>::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            let (env, acknowledged, promoted, after_promotion, refusals) =
                (&env, &acknowledged, &promoted, &after_promotion, &refusals);
            scope.spawn(move || {
                let until = Instant::now() + Duration::from_secs(90);
                while after_promotion.load(std::sync::atomic::Ordering::SeqCst) < 20 {
                    assert!(Instant::now() < until, "the writers never carried on");
                    let was_promoted = promoted.load(std::sync::atomic::Ordering::SeqCst);
                    let out = env.run(
                        &Argv::ask("agent-a", "agent-b")
                            .opt("--payload", "{}")
                            .flag("--json")
                            .words(),
                    );
                    if out.status == 0 {
                        let id = out.json()["discussion_id"].as_str().unwrap().to_owned();
                        acknowledged.lock().unwrap().push(id);
                        if was_promoted {
                            after_promotion.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                    } else {
                        let code = out.error()["code"].as_str().unwrap_or_default().to_owned();
                        refusals.lock().unwrap().push(code);
                    }
                }
            });
        }
        // Once writes are going through (a count of them, not a time).
        let until = Instant::now() + Duration::from_secs(60);
        while acknowledged.lock().unwrap().len() < 20 {
            assert!(Instant::now() < until, "no writes went through");
            std::thread::yield_now();
        }
        primary.crash_server();
        standby.promote();
        promoted.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let refusals = refusals.into_inner().unwrap();
    assert!(
        refusals.iter().all(|code| code == "ledger_unavailable"),
        "{refusals:?}"
    );
    let acknowledged = acknowledged.into_inner().unwrap();
    let listed = env.ok(&["list"]);
    let on_the_new_primary: std::collections::HashSet<&str> = listed["discussions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["discussion_id"].as_str().unwrap())
        .collect();
    for id in &acknowledged {
        assert!(
            on_the_new_primary.contains(id.as_str()),
            "{id} was acknowledged and lost"
        );
    }
    assert_eq!(env.ok(&["verify"])["ok"], true);
}
