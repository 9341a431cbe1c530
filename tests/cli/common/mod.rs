//! Test harness: the built binary with a private ledger, a cleared
//! environment and a pinned clock that tests move instead of sleeping.
#![allow(dead_code)]

pub(crate) mod browser;
pub(crate) mod http;
pub(crate) mod postgres;
pub(crate) mod tmux;

use assert_cmd::Command;
use serde_json::Value;
use std::path::PathBuf;
use tempfile::TempDir;

/// A new private folder for a test's files (ledgers, clusters, browser
/// profiles): under `DISCUSS_TEST_SCRATCH` when set, else on the tmpfs at
/// `/dev/shm` where there is one, else in the system's temporary folder.
/// Nothing a test checks depends on the filesystem, and creating files on
/// this machine's ext4 cost the suite a fifth of its CPU (docs/decisions.md,
/// "Where the tests keep their files"); `.ci/run` runs the file tests on
/// the disk too.
pub(crate) fn scratch(prefix: &str) -> TempDir {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    if let Some(base) = std::env::var_os("DISCUSS_TEST_SCRATCH").filter(|b| !b.is_empty()) {
        return builder
            .tempdir_in(&base)
            .unwrap_or_else(|e| panic!("DISCUSS_TEST_SCRATCH={base:?}: {e}"));
    }
    builder
        .tempdir_in("/dev/shm")
        .or_else(|_| builder.tempdir())
        .expect("a temporary folder")
}

/// Runs a tool a test needs (`initdb`, `cp`, `openssl`, `curl`…) and
/// returns its output; one that does not start or fails fails the test,
/// naming `what` and showing the tool's stderr.
pub(crate) fn succeeds(command: &mut std::process::Command, what: &str) -> std::process::Output {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{what} does not run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// 2026-11-30T00:00:00Z
pub(crate) const T0: i64 = 1_795_996_800_000;

/// `ask` from agent-a to agent-b in fleet-alpha, up to the payload.
pub(crate) const ASK_A_TO_B: [&str; 8] = [
    "ask",
    "--from",
    "agent-a",
    "--to",
    "agent-b",
    "--fleet",
    "fleet-alpha",
    "--payload",
];

/// `reply` in `attempt` of `dsc`, answering `head`, up to its options.
pub(crate) fn reply_args<'a>(
    dsc: &'a str,
    agent: &'a str,
    attempt: &'a str,
    head: &'a str,
    kind: &'a str,
    payload: &'a str,
) -> Vec<&'a str> {
    vec![
        "reply",
        "--agent",
        agent,
        "--discussion",
        dsc,
        "--attempt",
        attempt,
        "--reply-to",
        head,
        "--type",
        kind,
        "--payload",
        payload,
    ]
}

/// `[--json] wake --agent A --discussion DSC --expected-head MSG`, then
/// `rest` (options, `-- CMD`).
pub(crate) fn wake_argv<'a>(
    agent: &'a str,
    dsc: &'a str,
    head: &'a str,
    rest: &[&'a str],
    json: bool,
) -> Vec<&'a str> {
    let mut args = if json { vec!["--json"] } else { Vec::new() };
    args.extend([
        "wake",
        "--agent",
        agent,
        "--discussion",
        dsc,
        "--expected-head",
        head,
    ]);
    args.extend_from_slice(rest);
    args
}

pub(crate) struct Env {
    pub dir: TempDir,
    pub now_ms: i64,
    /// The database URL when the ledger is in PostgreSQL.
    pub pg: Option<String>,
}

pub(crate) struct Outcome {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout))
    }

    /// The `{"error":{...}}` object of a failed `--json` command.
    pub(crate) fn error(&self) -> Value {
        let v: Value = serde_json::from_str(&self.stderr)
            .unwrap_or_else(|e| panic!("stderr is not JSON ({e}): {}", self.stderr));
        v["error"].clone()
    }
}

impl Env {
    /// A private ledger of the kind the run asks for: a file, or with
    /// `DISCUSS_TEST_LEDGER=postgres` a new PostgreSQL database (the whole
    /// suite runs against both kinds; CI runs it twice).
    pub(crate) fn new() -> Env {
        if std::env::var("DISCUSS_TEST_LEDGER").is_ok_and(|k| k == "postgres") {
            return Env::postgres()
                .expect("DISCUSS_TEST_LEDGER=postgres needs PostgreSQL server binaries");
        }
        Env::file()
    }

    /// A private ledger file, whatever the run asks for: for the tests of
    /// what only a file has (torn tails, its cache, planted files).
    pub(crate) fn file() -> Env {
        Env {
            dir: scratch("discuss-test"),
            now_ms: T0,
            pg: None,
        }
    }

    /// A ledger in a new database of the shared test cluster; `None` when
    /// there is no PostgreSQL here (the test is then skipped, with a
    /// message, unless CI=true, where it fails).
    pub(crate) fn postgres() -> Option<Env> {
        let url = postgres::shared()?.database();
        Some(Env {
            dir: scratch("discuss-test"),
            now_ms: T0,
            pg: Some(url),
        })
    }

    pub(crate) fn is_postgres(&self) -> bool {
        self.pg.is_some()
    }

    /// The ledger's location: the file's path or the database's URL.
    pub(crate) fn ledger(&self) -> PathBuf {
        match &self.pg {
            Some(url) => PathBuf::from(url),
            None => self.dir.path().join("state/ledger.jsonl"),
        }
    }

    /// Every complete line, as stored (a database's through `ledger
    /// export`).
    pub(crate) fn ledger_bytes(&self) -> Vec<u8> {
        if self.pg.is_none() {
            return std::fs::read(self.ledger()).unwrap_or_default();
        }
        let out = self.run(&["ledger", "export"]);
        assert_eq!(out.status, 0, "ledger export: {}", out.stderr);
        out.stdout.into_bytes()
    }

    pub(crate) fn advance(&mut self, ms: i64) {
        self.now_ms += ms;
    }

    pub(crate) fn command(&self) -> Command {
        Command::from_std(self.command_std())
    }

    /// `command` as a `std::process::Command`, to spawn and signal.
    pub(crate) fn command_std(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("discuss"));
        cmd.env_clear()
            .env("DISCUSS_LEDGER", self.ledger())
            .env("DISCUSS_NOW", self.now_ms.to_string())
            .env("DISCUSS_ACTOR", "tester")
            .current_dir(self.dir.path());
        cmd
    }

    pub(crate) fn run(&self, args: &[&str]) -> Outcome {
        self.run_stdin(args, "")
    }

    pub(crate) fn run_stdin(&self, args: &[&str], stdin: &str) -> Outcome {
        self.run_with(&[], args, stdin)
    }

    /// Runs with extra environment variables (fail points, for one).
    pub(crate) fn run_with(&self, envs: &[(&str, &str)], args: &[&str], stdin: &str) -> Outcome {
        let output = self
            .command()
            .envs(envs.iter().copied())
            .args(args)
            .write_stdin(stdin)
            .output()
            .unwrap();
        Outcome {
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Runs with `--json`, expects success, returns stdout as JSON.
    pub(crate) fn ok(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = self.run(&all);
        assert_eq!(out.status, 0, "{args:?} failed: {}", out.stderr);
        out.json()
    }

    /// Runs with `--json`, expects the error `code` with `exit`, and checks
    /// that the ledger did not change. Returns the error object.
    pub(crate) fn fails(&self, args: &[&str], code: &str, exit: i32) -> Value {
        self.fails_with(&[], args, code, exit)
    }

    /// `fails` with extra environment variables.
    pub(crate) fn fails_with(
        &self,
        envs: &[(&str, &str)],
        args: &[&str],
        code: &str,
        exit: i32,
    ) -> Value {
        let before = self.ledger_bytes();
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = self.run_with(envs, &all, "");
        assert_eq!(out.status, exit, "{args:?}: stderr {}", out.stderr);
        assert!(
            out.stdout.is_empty(),
            "nothing on stdout on failure: {}",
            out.stdout
        );
        let error = out.error();
        assert_eq!(error["code"], code, "{args:?}: {error}");
        assert_eq!(self.ledger_bytes(), before, "{args:?} changed the ledger");
        error
    }

    /// `args` refused for naming `agent`, which no fleet and no live
    /// discussion knows, with the hint that `--allow-unknown-agent` takes it.
    pub(crate) fn refuses_unknown_agent(&self, args: &[&str], agent: &str) {
        let error = self.fails(args, "not_in_fleet", 4);
        assert_eq!(error["details"]["agent_id"], agent, "{error}");
        assert!(
            error["hints"].to_string().contains("--allow-unknown-agent"),
            "{error}"
        );
    }

    pub(crate) fn fleet(&self) {
        self.ok(&[
            "fleet",
            "add",
            "fleet-alpha",
            "agent-a",
            "agent-b",
            "agent-c",
        ]);
    }

    /// A fleet and a discussion a → b; returns (discussion_id, root_id).
    pub(crate) fn discussion(&self, extra: &[&str]) -> (String, String) {
        self.fleet();
        self.ask(extra)
    }

    /// A discussion a → b in the fleet that is there already; returns
    /// (discussion_id, root_id).
    pub(crate) fn ask(&self, extra: &[&str]) -> (String, String) {
        let mut args = ASK_A_TO_B.to_vec();
        args.push(r#"{"body":"Refactor auth module?"}"#);
        args.extend_from_slice(extra);
        let v = self.ok(&args);
        (
            v["discussion_id"].as_str().unwrap().into(),
            v["root_message_id"].as_str().unwrap().into(),
        )
    }

    /// Wakes `agent` on `head`; returns the attempt id.
    pub(crate) fn wake(&self, dsc: &str, agent: &str, head: &str) -> String {
        let v = self.ok(&wake_argv(agent, dsc, head, &[], false));
        v["attempt"]["attempt_id"].as_str().unwrap().into()
    }

    /// Replies in `attempt`; returns the new message id.
    pub(crate) fn reply(
        &self,
        dsc: &str,
        agent: &str,
        attempt: &str,
        head: &str,
        kind: &str,
        close: bool,
    ) -> String {
        let mut args = reply_args(dsc, agent, attempt, head, kind, r#"{"body":"ok"}"#);
        if close {
            args.push("--close");
        }
        self.ok(&args)["message_id"].as_str().unwrap().into()
    }

    pub(crate) fn show(&self, dsc: &str) -> Value {
        self.ok(&["show", dsc])
    }

    pub(crate) fn status(&self, dsc: &str) -> String {
        self.show(dsc)["status"].as_str().unwrap().into()
    }

    /// Appends raw lines to the ledger, as another tool would (to a
    /// database: `ledger import`, so whole lines only).
    pub(crate) fn append_raw(&self, text: &str) {
        use std::io::Write;
        if self.pg.is_some() {
            let out = self.run_stdin(&["ledger", "import", "-"], text);
            assert_eq!(out.status, 0, "ledger import: {}", out.stderr);
            return;
        }
        std::fs::create_dir_all(self.ledger().parent().unwrap()).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.ledger())
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    /// Removes what is derived from the ledger (a file's index and
    /// checkpoint, a database's state row): the next command rebuilds it.
    pub(crate) fn drop_derived(&self) {
        match &self.pg {
            Some(url) => {
                let mut client = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
                client.batch_execute("DELETE FROM discuss_state").unwrap();
            }
            None => {
                for suffix in [".index", ".checkpoint", ".summary"] {
                    let mut name = self.ledger().into_os_string();
                    name.push(suffix);
                    // The summary is there only once a list wrote it.
                    let _ = std::fs::remove_file(name);
                }
            }
        }
    }

    /// The ledger's records as JSON values (complete lines only).
    pub(crate) fn records(&self) -> Vec<Value> {
        String::from_utf8_lossy(&self.ledger_bytes())
            .split_inclusive('\n')
            .filter(|l| l.ends_with('\n'))
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

/// Runs the shell command line `command` on a pseudo-terminal (script(1)),
/// with `discuss` the binary under test and TERM `term`; returns all it
/// printed there, stdout and stderr together, without carriage returns.
pub(crate) fn on_a_terminal(env: &Env, term: &str, command: &str) -> String {
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let out = std::process::Command::new("script")
        .args(["-qec", command, "/dev/null"])
        .env_clear()
        .env("DISCUSS_LEDGER", env.ledger())
        .env("DISCUSS_NOW", env.now_ms.to_string())
        .env("DISCUSS_ACTOR", "tester")
        .env("DISCUSS_PROGRESS_AFTER_MS", "0")
        .env("TERM", term)
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", bin.parent().unwrap().display()),
        )
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).replace('\r', "")
}

/// `text` without its SGR colour sequences (`ESC [ ... m`).
pub(crate) fn strip_colour(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
}

/// A port on 127.0.0.1 where nothing listens (one just freed): a database
/// there refuses every connection at once.
pub(crate) fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `ask` from agent-a to agent-b with an empty body, then `extra`.
pub(crate) fn ask_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = ASK_A_TO_B.to_vec();
    args.push("{}");
    args.extend_from_slice(extra);
    args
}

/// A reply forged without an attempt into the open discussion of the
/// screens' ledger (fixed ids and times), and a line whose envelope does
/// not parse: two findings with long details.
pub(crate) const FORGED: &str = concat!(
    r#"{"v":1,"kind":"message","id":"msg_01a22c54d00070000000000000f0a9ed","at_ms":1780000050000,"by":"someone-else","fleet_id":"fleet-alpha","from_agent_id":"agent-b","to_agent_id":"agent-reviewer","correlation_id":"dsc_01a22c54cff476d794bb426e7f9c48d8","payload":"{\"schema\":\"discussion/v1\",\"discussion_id\":\"dsc_01a22c54cff476d794bb426e7f9c48d8\",\"turn\":2,\"type\":\"result\",\"reply_to_message_id\":\"msg_01a22c54cff476d794bb426f69d35b4a\",\"attempt_id\":\"att_01a22c54d00070000000000000000bad\",\"close\":true,\"body\":{\"body\":\"approved\"}}"}"#,
    "\n",
    r#"{"v":1,"kind":"message","id":"msg_01a22c54d00870000000000000000bad","at_ms":1780000051000,"by":"someone-else","fleet_id":"fleet-alpha","from_agent_id":"agent-reviewer","to_agent_id":"agent-b","correlation_id":"dsc_01a22c54cff476d794bb426e7f9c48d8","payload":"{\"schema\":\"discussion/v1\",\"turn\":\"three\"}"}"#,
    "\n"
);

/// An argument list built an option at a time, for the command lines the
/// tests write most: `Argv::ask("agent-a", "agent-b").opt("--payload",
/// "{}").words()`.
#[derive(Debug, Clone)]
pub(crate) struct Argv(Vec<String>);

impl Argv {
    pub(crate) fn of(words: &[&str]) -> Argv {
        Argv(words.iter().map(|w| w.to_string()).collect())
    }

    /// `ask` from `from` to `to` in fleet-alpha, up to the payload.
    pub(crate) fn ask(from: &str, to: &str) -> Argv {
        Argv::of(&["ask", "--from", from, "--to", to, "--fleet", "fleet-alpha"])
    }

    pub(crate) fn opt(mut self, name: &str, value: &str) -> Argv {
        self.0.push(name.to_owned());
        self.0.push(value.to_owned());
        self
    }

    pub(crate) fn flag(mut self, name: &str) -> Argv {
        self.0.push(name.to_owned());
        self
    }

    /// What `Env::run`, `ok` and `fails` take.
    pub(crate) fn words(&self) -> Vec<&str> {
        self.0.iter().map(String::as_str).collect()
    }

    /// The words, owned (for a thread of its own).
    pub(crate) fn owned(&self) -> Vec<String> {
        self.0.clone()
    }
}

/// Bytes as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256, computed here rather than by `discuss`: what a chained line's
/// `prev` must name.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

/// Waits (bounded, 20 s) until process `pid` is stopped: a fail point's
/// `stop` has been reached.
pub(crate) fn wait_until_stopped(pid: u32) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    // The state follows the command's name, which may hold ") " itself.
    let stopped = || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.rsplit(") ").next().and_then(|s| s.chars().next()) == Some('T')
    };
    while !stopped() {
        assert!(
            std::time::Instant::now() < until,
            "process {pid} never stopped at its fail point"
        );
        std::thread::yield_now();
    }
}

/// A ledger's lines, `\n` included.
pub(crate) fn lines_of(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split_inclusive(|b| *b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

/// The same lines, each `prev` named anew: a forger's whole rewrite.
pub(crate) fn rechain(lines: &[Vec<u8>]) -> Vec<u8> {
    let mut before = sha256_hex(b"");
    let mut out = Vec::new();
    for line in lines {
        let mut record: Value = serde_json::from_slice(line).unwrap();
        record["prev"] = format!("sha256:{before}").into();
        let mut line = serde_json::to_vec(&record).unwrap();
        line.push(b'\n');
        before = sha256_hex(&line);
        out.extend_from_slice(&line);
    }
    out
}
