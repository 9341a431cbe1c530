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

mod access;
mod failures;
mod moves;

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
        .args(wake_argv("agent-b", &dsc, &root, &[], true))
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
        .args(wake_argv("agent-b", &dsc, &root, &[], true))
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
