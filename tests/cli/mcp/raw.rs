//! `discuss mcp` talked to in raw lines: both protocol revisions, malformed
//! and oversized lines, calls read before stdin closes, its usage errors
//! and the ledger it names.

use super::*;

/// `discuss mcp` as a plain child, talked to in raw lines.
struct Raw {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Raw {
    fn start(env: &Env) -> Raw {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("discuss"))
            .env_clear()
            .env("DISCUSS_LEDGER", env.ledger())
            .env("DISCUSS_ACTOR", "tester")
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Raw {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn receive(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }

    fn initialize(&mut self, version: &str) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
            .to_string(),
        );
        let answer = self.receive();
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        answer
    }

    /// Closes stdin; returns the exit status and whatever else was printed.
    fn close(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.stdout, &mut rest).unwrap();
        (self.child.wait().unwrap().code(), rest)
    }
}

#[test]
fn both_protocol_revisions_malformed_lines_and_a_clean_end() {
    let env = Env::new();
    env.fleet();
    // The revision with initialize that hosts speak today (the current
    // one, without it, is in the four-turn test).
    let mut raw = Raw::start(&env);
    let answer = raw.initialize("2025-11-25");
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(answer["result"]["serverInfo"]["name"], "discuss");
    // A malformed line is answered with a JSON-RPC error; the session goes on.
    raw.send("this is not json");
    let error = raw.receive();
    assert_eq!(
        (error["error"]["code"].clone(), error["id"].clone()),
        (json!(-32700), Value::Null)
    );
    raw.send(r#"{"id":7,"hello":"world"}"#);
    let error = raw.receive();
    assert_eq!(
        (error["error"]["code"].clone(), error["id"].clone()),
        (json!(-32600), json!(7))
    );
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "list_discussions", "arguments": {}}})
        .to_string(),
    );
    let listed = raw.receive();
    assert_eq!(listed["id"], 2);
    assert_eq!(
        listed["result"]["structuredContent"],
        json!({"discussions": []})
    );
    let (status, rest) = raw.close();
    assert_eq!(status, Some(0), "stdin closed: exit 0");
    assert_eq!(rest, "", "stdout carries only protocol messages");

    // A client that connects and leaves at once, or mid-handshake.
    let raw = Raw::start(&env);
    assert_eq!(raw.close(), (Some(0), String::new()));
    let mut raw = Raw::start(&env);
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#);
    let (status, _) = raw.close();
    assert_eq!(status, Some(0));
}

/// A line over the request limit is answered `-32600` and dropped whole,
/// without being held in memory; the session goes on.
#[test]
fn an_oversized_line_is_refused_and_the_session_goes_on() {
    let env = Env::file();
    env.fleet();
    let mut raw = Raw::start(&env);
    raw.initialize("2025-11-25");
    // 8 MiB of one line, in pieces.
    {
        let stdin = raw.stdin.as_mut().unwrap();
        let piece = vec![b'a'; 1 << 20];
        for _ in 0..8 {
            stdin.write_all(&piece).unwrap();
        }
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }
    let answer = raw.receive();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most"),
        "{answer}"
    );
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "list_discussions", "arguments": {}}})
        .to_string(),
    );
    let listed = raw.receive();
    assert_eq!(listed["id"], 2);
    assert_eq!(listed["result"]["isError"], false, "{listed}");
    // The same at the end of stdin, without a newline.
    raw.stdin
        .as_mut()
        .unwrap()
        .write_all(&vec![b'{'; 2 << 20])
        .unwrap();
    let (status, rest) = raw.close();
    assert_eq!(status, Some(0));
    let last: Value = serde_json::from_str(rest.lines().last().unwrap()).unwrap();
    assert_eq!(last["error"]["code"], -32600, "{rest}");
}

/// Every call that was read is answered, even when stdin closes while it
/// waits for the ledger (here: behind a writer stopped with the lock).
#[test]
fn calls_read_before_stdin_closes_are_all_answered() {
    let env = Env::file();
    env.discussion(&[]);
    let mut holder = env
        .command_std()
        .env("DISCUSS_FAILPOINTS", "append.before_fsync=stop")
        .args(["fleet", "add", "fleet-alpha", "agent-z"])
        .spawn()
        .unwrap();
    let pid = holder.id();
    wait_until_stopped(pid);
    let mut raw = Raw::start(&env);
    raw.initialize("2025-11-25");
    for id in 2..12 {
        let (tool, arguments) = (
            "ask_peer",
            json!({"from_agent_id": "agent-a", "to_agent_id": "agent-b",
            "fleet_id": "fleet-alpha", "payload": format!("{{\"n\":{id}}}")}),
        );
        raw.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}})
            .to_string(),
        );
    }
    // stdin closes while every call waits for the lock; then it is let go.
    drop(raw.stdin.take());
    // Longer than the SDK waits for calls in flight once its input ends.
    std::thread::sleep(Duration::from_secs(6));
    let resumed = Command::new("kill")
        .args(["-CONT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(resumed.success());
    assert!(holder.wait().unwrap().success());
    let (status, rest) = raw.close();
    assert_eq!(status, Some(0));
    let mut ids: Vec<i64> = rest
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l)
                .unwrap_or_else(|e| panic!("a whole message ({e}): {l}"))
        })
        .map(|m| {
            assert_eq!(m["result"]["isError"], false, "{m}");
            m["id"].as_i64().unwrap()
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (2..12).collect::<Vec<_>>(), "{rest}");
    // And what they wrote is there: ten writes answered, ten written
    // (counted as lines: this server's clock is the wall clock's).
    let roots = env
        .records()
        .iter()
        .filter(|r| r["kind"] == "message")
        .count();
    assert_eq!(roots, 11);
}

/// `mcp` answers JSON whatever `--json` says, its usage errors too (as
/// `call`'s): a host logs stderr, and a program reads it.
#[test]
fn a_usage_error_of_mcp_is_json() {
    let env = Env::new();
    let out = env.run(&["mcp", "--agnet", "agent-a"]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    let error = out.error();
    assert_eq!(error["code"], "usage", "{error}");
    assert!(
        error["details"]["usage"]
            .as_str()
            .is_some_and(|u| u.starts_with("discuss mcp"))
    );
}

/// `discuss mcp` says on stderr which ledger it serves, and warns when
/// that is the default one and it does not exist (a host that passes no
/// DISCUSS_LEDGER would otherwise get empty answers for ever).
#[test]
fn mcp_names_its_ledger_and_warns_of_an_empty_default() {
    let env = Env::file();
    let out = env.run(&["mcp"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let location = env.ledger().display().to_string();
    assert!(
        out.stderr
            .contains(&format!("serves the file ledger {location}")),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    assert!(
        out.stdout.is_empty(),
        "stdout carries only protocol messages"
    );
    // As a host that passes only HOME and PATH starts it.
    let home = env.dir.path().join("home");
    let output = std::process::Command::new(assert_cmd::cargo::cargo_bin("discuss"))
        .env_clear()
        .env("HOME", &home)
        .env("PATH", "/usr/bin:/bin")
        .arg("mcp")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let default = home.join(".local/state/discuss/ledger.jsonl");
    assert!(stderr.contains(&default.display().to_string()), "{stderr}");
    assert!(
        stderr.lines().any(|line| line.starts_with(
            "warning: the default ledger (no --ledger or DISCUSS_LEDGER named one) does not exist"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("note: warning"), "{stderr}");
    assert!(stderr.contains("DISCUSS_LEDGER"), "{stderr}");
    assert!(!default.exists(), "reading creates nothing");
}
