//! `discuss mcp` driven as agent hosts drive it: the official Rust SDK's
//! client over a child process, and raw JSON-RPC lines where the test is
//! about the wire (malformed lines, protocol revisions, shutdown).

use crate::common::*;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Map, Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

type Client = RunningService<RoleClient, ()>;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A client session with `discuss mcp` on the test's ledger, opened with
/// `initialize` (protocol 2025-11-25, what hosts speak today).
async fn connect(env: &Env, agent: Option<&str>) -> Client {
    connect_with(env, agent, ClientLifecycleMode::Initialize).await
}

/// The same, opened the way `lifecycle` says: `Discover` is the current
/// revision, 2026-07-28, which has no `initialize`.
async fn connect_with(env: &Env, agent: Option<&str>, lifecycle: ClientLifecycleMode) -> Client {
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let command = tokio::process::Command::new(bin).configure(|cmd| {
        cmd.env_clear()
            .env("DISCUSS_LEDGER", env.ledger())
            .env("DISCUSS_NOW", env.now_ms.to_string())
            .env("DISCUSS_ACTOR", "tester")
            .arg("mcp");
        if let Some(agent) = agent {
            cmd.args(["--agent", agent]);
        }
    });
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    ().serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("the server initializes")
}

async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .expect("a tool call is never a protocol error")
}

/// The structured answer of a success, checked against its text block.
fn ok(result: &CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    let text = result.content[0]
        .as_text()
        .expect("one text block")
        .text
        .clone();
    assert_eq!(result.content.len(), 1);
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), structured);
    structured
}

/// The contract's error object of a refusal, checked against its text.
fn refused(result: &CallToolResult, code: &str) -> Value {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    let text = result.content[0]
        .as_text()
        .expect("one text block")
        .text
        .clone();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), structured);
    assert_eq!(structured["error"]["code"], code, "{structured}");
    assert!(structured["error"]["message"].is_string());
    structured["error"].clone()
}

fn ask(from: &str, to: &str, extra: Value) -> Value {
    let mut request = json!({"from_agent_id": from, "to_agent_id": to, "fleet_id": "fleet-alpha",
        "payload": "{\"body\":\"Refactor auth module?\"}"});
    if let Value::Object(extra) = extra {
        request.as_object_mut().unwrap().extend(extra);
    }
    request
}

#[test]
fn the_server_says_who_it_is_and_its_schemas_are_the_seeds() {
    let env = Env::new();
    runtime().block_on(async {
        let client = connect(&env, None).await;
        let info = client.peer_info().expect("initialized");
        let server = info.server_info.as_ref().unwrap();
        assert_eq!(server.name, "discuss");
        assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
        let instructions = info.instructions.clone().unwrap();
        for words in [
            "ask_peer",
            "wake_agent",
            "reply_discussion",
            "Never invent ids",
        ] {
            assert!(instructions.contains(words), "{words}");
        }
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "ask_peer",
                "wake_agent",
                "reply_discussion",
                "get_discussion",
                "list_discussions",
                "inbox"
            ]
        );
        let call_tools = discuss::call_tools();
        for tool in &tools {
            let schema = Value::Object((*tool.input_schema).clone());
            assert_eq!(schema["type"], "object", "{}", tool.name);
            assert_eq!(schema["additionalProperties"], false, "{}", tool.name);
            assert!(tool.description.as_ref().is_some_and(|d| d.len() > 60));
            // Exactly the fields `call` takes: one list of fields for both.
            let (_, fields) = call_tools
                .iter()
                .find(|(name, _)| *name == tool.name)
                .unwrap();
            let mut declared: Vec<&str> = schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            let mut taken = fields.to_vec();
            declared.sort_unstable();
            taken.sort_unstable();
            assert_eq!(declared, taken, "{}", tool.name);
        }
        let schema = |name: &str| {
            let tool = tools.iter().find(|t| t.name == name).unwrap();
            Value::Object((*tool.input_schema).clone())
        };
        let ask = schema("ask_peer");
        let range = |field: &str| {
            (
                ask["properties"][field]["minimum"].clone(),
                ask["properties"][field]["maximum"].clone(),
            )
        };
        assert_eq!(range("max_turns"), (json!(2), json!(32)));
        assert_eq!(range("timeout_ms"), (json!(1000), json!(900_000)));
        assert_eq!(range("turn_timeout_ms"), (json!(1000), json!(300_000)));
        assert_eq!(ask["properties"]["payload"]["type"], "string");
        assert_eq!(ask["properties"]["wake_peer"]["type"], "boolean");
        assert_eq!(
            ask["required"],
            json!(["from_agent_id", "to_agent_id", "fleet_id", "payload"])
        );
        let reply = schema("reply_discussion");
        assert_eq!(
            reply["properties"]["type"]["enum"],
            json!(["question", "result"])
        );
        assert_eq!(reply["properties"]["close"]["type"], "boolean");
        assert_eq!(
            schema("get_discussion")["properties"]["include_receipts"]["type"],
            "boolean"
        );
        assert_eq!(schema("inbox")["required"], json!(["agent_id"]));
        // Hints for hosts: readers are read-only (no approval needed to
        // read), writes only append, nothing reaches beyond the ledger.
        for tool in &tools {
            let notes = tool.annotations.as_ref().expect("annotations");
            let reader = matches!(&*tool.name, "get_discussion" | "list_discussions" | "inbox");
            assert_eq!(notes.read_only_hint, Some(reader), "{}", tool.name);
            assert_eq!(notes.destructive_hint, Some(false), "{}", tool.name);
            assert_eq!(notes.idempotent_hint, Some(reader), "{}", tool.name);
            assert_eq!(notes.open_world_hint, Some(false), "{}", tool.name);
            let output = tool.output_schema.as_ref().expect("outputSchema");
            assert_eq!(output["type"], "object", "{}", tool.name);
            let output = Value::Object((**output).clone());
            let [answer, refusal] = output["anyOf"].as_array().unwrap().as_slice() else {
                panic!("{}: an answer or a refusal", tool.name)
            };
            assert!(
                !answer["required"].as_array().unwrap().is_empty(),
                "{}",
                tool.name
            );
            assert_eq!(refusal["required"], json!(["error"]), "{}", tool.name);
        }
        client.cancel().await.unwrap();
    });
}

/// `value` has what `schema` (an output schema) says it has: every
/// required field, each declared field of a declared type, and the same
/// of the items of declared arrays. (The Python and TypeScript SDKs'
/// clients in `.ci/run` validate with full JSON Schema.)
fn conforms(schema: &Value, value: &Value, at: &str) {
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    if !types.is_empty() {
        assert!(
            types.contains(&kind) || (kind == "integer" && types.contains(&"number")),
            "{at}: {kind} where the schema says {types:?}"
        );
    }
    if let Some(any) = schema["anyOf"].as_array() {
        assert!(
            any.iter()
                .any(|s| std::panic::catch_unwind(|| conforms(s, value, at)).is_ok()),
            "{at}: none of anyOf"
        );
    }
    if let Some(required) = schema["required"].as_array() {
        for field in required {
            let field = field.as_str().unwrap();
            assert!(value.get(field).is_some(), "{at}: {field} is missing");
        }
    }
    if let (Some(properties), Value::Object(fields)) = (schema["properties"].as_object(), value) {
        for (name, sub) in properties {
            if let Some(v) = fields.get(name) {
                conforms(sub, v, &format!("{at}.{name}"));
            }
        }
    }
    if let (Some(items), Value::Array(values)) = (schema.get("items"), value) {
        for (i, v) in values.iter().enumerate() {
            conforms(items, v, &format!("{at}[{i}]"));
        }
    }
}

#[test]
fn a_whole_four_turn_discussion_through_the_tools_on_both_revisions() {
    four_turns(
        ClientLifecycleMode::Initialize,
        ProtocolVersion::V_2025_11_25,
    );
    four_turns(
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        ProtocolVersion::V_2026_07_28,
    );
}

fn four_turns(lifecycle: ClientLifecycleMode, expected: ProtocolVersion) {
    let env = Env::new();
    env.fleet();
    runtime().block_on(async {
        let client = connect_with(&env, None, lifecycle).await;
        assert_eq!(client.peer_info().unwrap().protocol_version, expected);
        let tools = client.list_all_tools().await.unwrap();
        let output = |tool: &str| {
            let tool = tools.iter().find(|t| t.name == tool).unwrap();
            Value::Object((**tool.output_schema.as_ref().unwrap()).clone())
        };
        // Every answer of this discussion is what its tool's schema says.
        let checked = |tool: &str, answer: Value| {
            conforms(&output(tool), &answer, tool);
            answer
        };
        let asked = checked(
            "ask_peer",
            ok(&call(
                &client,
                "ask_peer",
                ask("agent-a", "agent-b", json!({"max_turns": 4})),
            )
            .await),
        );
        let dsc = asked["discussion_id"].as_str().unwrap().to_owned();
        let mut head = asked["root_message_id"].as_str().unwrap().to_owned();
        // Nothing woke agent-b: its inbox shows what it could be woken for.
        let inbox = checked(
            "inbox",
            ok(&call(&client, "inbox", json!({"agent_id": "agent-b"})).await),
        );
        assert_eq!(inbox["discussions"][0]["discussion_id"], dsc.as_str());
        assert_eq!(inbox["discussions"][0]["live_attempt_id"], Value::Null);
        let turns = [
            ("agent-b", "question", false),
            ("agent-a", "question", false),
            ("agent-b", "result", true),
        ];
        for (agent, kind, close) in turns {
            let woken = ok(&call(
                &client,
                "wake_agent",
                json!({"agent_id": agent,
                "discussion_id": dsc, "expected_head_message_id": head}),
            )
            .await);
            let woken = checked("wake_agent", woken);
            assert_eq!(woken["attempt"]["state"], "reserved", "wake only reserves");
            let attempt = woken["attempt"]["attempt_id"].as_str().unwrap();
            // The woken agent finds its turn in its inbox, attempt and all.
            let inbox = checked(
                "inbox",
                ok(&call(&client, "inbox", json!({"agent_id": agent})).await),
            );
            let row = &inbox["discussions"][0];
            assert_eq!(row["discussion_id"], dsc.as_str());
            assert_eq!(row["status"], "active");
            assert_eq!(row["live_attempt_id"], attempt);
            assert_eq!(
                row["live_attempt_deadline_at"],
                woken["attempt"]["deadline_at"]
            );
            assert_eq!(row["head_message_id"], head.as_str());
            let replied = ok(&call(
                &client,
                "reply_discussion",
                json!({"agent_id": agent,
                "discussion_id": dsc, "attempt_id": attempt, "reply_to_message_id": head,
                "type": kind, "payload": format!("{{\"body\":\"{kind} from {agent}\"}}"),
                "close": close}),
            )
            .await);
            let replied = checked("reply_discussion", replied);
            head = replied["message_id"].as_str().unwrap().to_owned();
        }
        let state = checked(
            "get_discussion",
            ok(&call(&client, "get_discussion", json!({"discussion_id": dsc})).await),
        );
        assert_eq!(state["status"], "closed");
        assert_eq!(state["transcript"].as_array().unwrap().len(), 4);
        assert_eq!(state["turns_used"], 4);
        // The same object `discuss call` prints.
        let cli = env.run(&[
            "call",
            "get_discussion",
            &json!({"discussion_id": dsc}).to_string(),
        ]);
        assert_eq!(cli.json(), state);
        let listed = checked(
            "list_discussions",
            ok(&call(&client, "list_discussions", json!({"status": "closed"})).await),
        );
        assert_eq!(listed["discussions"].as_array().unwrap().len(), 1);
        client.cancel().await.unwrap();
    });
}

#[test]
fn every_refusal_is_a_tool_error_with_the_contract_code_and_the_session_goes_on() {
    let env = Env::new();
    env.fleet();
    env.ok(&["fleet", "add", "fleet-beta", "agent-x"]);
    let (dsc, root) = env.ask(&[]);
    runtime().block_on(async {
        let client = connect(&env, None).await;
        let tools = client.list_all_tools().await.unwrap();
        let wake = |agent: &str, head: &str| {
            json!({"agent_id": agent, "discussion_id": dsc,
            "expected_head_message_id": head})
        };
        let cases = [
            (
                "ask_peer",
                ask("agent-a", "agent-a", json!({})),
                "same_agent",
            ),
            (
                "ask_peer",
                ask("agent-a", "agent-b", json!({"fleet_id": "fleet-gamma"})),
                "unknown_fleet",
            ),
            (
                "ask_peer",
                ask("agent-a", "agent-x", json!({})),
                "not_in_fleet",
            ),
            (
                "ask_peer",
                ask("agent-a", "agent-b", json!({"payload": "not json"})),
                "payload_not_json",
            ),
            (
                "ask_peer",
                ask("agent-a", "agent-b", json!({"max_turns": 33})),
                "out_of_range",
            ),
            (
                "ask_peer",
                ask("agent-a", "agent-b", json!({"colour": "red"})),
                "unknown_field",
            ),
            (
                "ask_peer",
                ask(
                    "agent-a",
                    "agent-b",
                    json!({"to_agent_id": ["agent-b", "agent-c"]}),
                ),
                "group_not_supported",
            ),
            ("wake_agent", wake("agent-b", "msg_0000"), "stale_head"),
            ("wake_agent", wake("agent-a", &root), "not_recipient"),
            (
                "get_discussion",
                json!({"discussion_id": "dsc_nope"}),
                "unknown_discussion",
            ),
        ];
        for (tool, arguments, code) in cases {
            let result = call(&client, tool, arguments).await;
            if let Some(listed) = tools.iter().find(|t| t.name == tool) {
                let schema = Value::Object((**listed.output_schema.as_ref().unwrap()).clone());
                conforms(&schema, result.structured_content.as_ref().unwrap(), tool);
            }
            let error = refused(&result, code);
            // Hints speak of the request's fields, never of flags.
            for hint in error["hints"].as_array().into_iter().flatten() {
                let hint = hint.as_str().unwrap();
                let commands = [
                    "`discuss ask",
                    "`discuss wake",
                    "`discuss reply",
                    "`discuss show",
                    "`discuss list",
                ];
                assert!(!hint.contains("--"), "{code}: {hint}");
                assert!(!commands.iter().any(|c| hint.contains(c)), "{code}: {hint}");
            }
        }
        // An unknown tool is a protocol error, -32602, whose data is the
        // contract's error object; the session goes on.
        let Value::Object(empty) = json!({}) else {
            unreachable!()
        };
        let unknown = client
            .call_tool(CallToolRequestParams::new("no_such_tool").with_arguments(empty))
            .await
            .expect_err("an unknown tool is a protocol error");
        let rmcp::ServiceError::McpError(unknown) = unknown else {
            panic!("{unknown:?}")
        };
        assert_eq!(unknown.code.0, -32602, "{unknown:?}");
        assert!(unknown.message.contains("no_such_tool"), "{unknown:?}");
        assert_eq!(
            unknown.data.as_ref().unwrap()["error"]["code"],
            "invalid_argument"
        );
        ok(&call(&client, "list_discussions", json!({})).await);
        // A typo is not a race: the id names no message of the discussion.
        let typo = refused(
            &call(&client, "wake_agent", wake("agent-b", "msg_0000")).await,
            "stale_head",
        );
        assert_eq!(typo["details"]["known"], false);
        assert!(
            typo["message"]
                .as_str()
                .unwrap()
                .contains("has no message msg_0000"),
            "{typo}"
        );
        assert!(
            typo["hints"][0]
                .as_str()
                .unwrap()
                .contains("get_discussion"),
            "{typo}"
        );
        let payload = refused(
            &call(
                &client,
                "ask_peer",
                ask("agent-a", "agent-b", json!({"payload": "not json"})),
            )
            .await,
            "payload_not_json",
        );
        assert!(
            payload["hints"][0]
                .as_str()
                .unwrap()
                .contains("serialized as a string"),
            "{payload}"
        );
        let woken = ok(&call(&client, "wake_agent", wake("agent-b", &root)).await);
        let attempt = woken["attempt"]["attempt_id"].as_str().unwrap().to_owned();
        refused(
            &call(&client, "wake_agent", wake("agent-b", &root)).await,
            "turn_already_active",
        );
        let reply = |agent: &str, attempt: &str| {
            json!({"agent_id": agent, "discussion_id": dsc,
            "attempt_id": attempt, "reply_to_message_id": root, "type": "result",
            "payload": "{}", "close": true})
        };
        refused(
            &call(&client, "reply_discussion", reply("agent-b", "att_0000")).await,
            "unknown_attempt",
        );
        refused(
            &call(&client, "reply_discussion", reply("agent-a", &attempt)).await,
            "not_attempt_agent",
        );
        ok(&call(&client, "reply_discussion", reply("agent-b", &attempt)).await);
        let error = refused(
            &call(&client, "wake_agent", wake("agent-a", &root)).await,
            "discussion_terminal",
        );
        assert_eq!(error["details"]["status"], "closed");
        // Policy refusals.
        env.ok(&["quota", "set", "0", "--agent", "agent-b"]);
        let asked = ok(&call(&client, "ask_peer", ask("agent-a", "agent-b", json!({}))).await);
        let error = refused(
            &call(
                &client,
                "wake_agent",
                json!({"agent_id": "agent-b",
                "discussion_id": asked["discussion_id"],
                "expected_head_message_id": asked["root_message_id"]}),
            )
            .await,
            "wake_quota_exceeded",
        );
        assert!(error["details"].get("retry_after_ms").is_some());
        env.ok(&["kill-switch", "on", "--reason", "maintenance"]);
        refused(
            &call(&client, "ask_peer", ask("agent-a", "agent-b", json!({}))).await,
            "kill_switch_engaged",
        );
        env.ok(&["kill-switch", "off"]);
        // After all that, the session still answers.
        ok(&call(&client, "list_discussions", json!({})).await);
        client.cancel().await.unwrap();
    });
}

#[test]
fn a_pinned_server_acts_for_its_agent_only() {
    let env = Env::new();
    env.fleet();
    runtime().block_on(async {
        let client = connect(&env, Some("agent-a")).await;
        let error = refused(
            &call(&client, "ask_peer", ask("agent-b", "agent-a", json!({}))).await,
            "agent_mismatch",
        );
        assert_eq!(error["details"]["agent_id"], "agent-a");
        let before = env.ledger_bytes();
        let (dsc, root) = env.ask(&[]);
        let woken = ok(&call(
            &client,
            "wake_agent",
            json!({"agent_id": "agent-b",
            "discussion_id": dsc, "expected_head_message_id": root}),
        )
        .await);
        refused(
            &call(
                &client,
                "reply_discussion",
                json!({"agent_id": "agent-b",
            "discussion_id": dsc, "attempt_id": woken["attempt"]["attempt_id"],
            "reply_to_message_id": root, "type": "result", "payload": "{}"}),
            )
            .await,
            "agent_mismatch",
        );
        assert!(env.ledger_bytes().len() > before.len());
        // Its own inbox by default; the schema says agent_id is optional.
        let tools = client.list_all_tools().await.unwrap();
        let inbox = tools.iter().find(|t| t.name == "inbox").unwrap();
        assert_eq!(inbox.input_schema["required"], json!([]));
        ok(&call(&client, "ask_peer", ask("agent-a", "agent-b", json!({}))).await);
        assert_eq!(
            ok(&call(&client, "inbox", json!({})).await)["discussions"],
            json!([])
        );
        client.cancel().await.unwrap();
    });
}

#[test]
fn racing_wakes_from_two_servers_have_one_winner() {
    let env = Env::new();
    env.fleet();
    runtime().block_on(async {
        let one = connect(&env, None).await;
        let two = connect(&env, None).await;
        for round in 0..5 {
            let (dsc, root) = env.ask(&[]);
            let wake = json!({"agent_id": "agent-b", "discussion_id": dsc, "expected_head_message_id": root});
            let (a, b) = tokio::join!(call(&one, "wake_agent", wake.clone()), call(&two, "wake_agent", wake));
            let winners = [&a, &b].iter().filter(|r| r.is_error == Some(false)).count();
            assert_eq!(winners, 1, "round {round}");
            let loser = if a.is_error == Some(true) { &a } else { &b };
            refused(loser, "turn_already_active");
        }
        one.cancel().await.unwrap();
        two.cancel().await.unwrap();
    });
}

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

#[test]
fn budgets_and_usage_through_mcp_with_their_schemas() {
    let env = Env::new();
    env.fleet();
    runtime().block_on(async {
        let client = connect(&env, None).await;
        let tools = client.list_all_tools().await.unwrap();
        let schema = |name: &str| {
            serde_json::to_value(&tools.iter().find(|t| t.name == name).unwrap().input_schema)
                .unwrap()
        };
        let ask_schema = schema("ask_peer");
        assert_eq!(
            ask_schema["properties"]["max_tokens"]["maximum"],
            1_000_000_000
        );
        assert_eq!(
            ask_schema["properties"]["max_cost_usd"]["type"],
            json!(["number", "null"])
        );
        let usage = &schema("reply_discussion")["properties"]["usage"];
        assert_eq!(usage["additionalProperties"], false);
        assert_eq!(usage["properties"]["cost_usd"]["minimum"], 0);

        let asked = ok(&call(
            &client,
            "ask_peer",
            ask("agent-a", "agent-b", json!({"max_cost_usd": 0.3})),
        )
        .await);
        assert_eq!(asked["policy"]["max_cost_usd"], json!(0.3));
        refused(
            &call(
                &client,
                "ask_peer",
                ask("agent-a", "agent-b", json!({"max_tokens": -4})),
            )
            .await,
            "out_of_range",
        );
        let dsc = asked["discussion_id"].as_str().unwrap();
        let head = asked["head_message_id"].as_str().unwrap();
        let woke = ok(&call(
            &client,
            "wake_agent",
            json!({"agent_id": "agent-b", "discussion_id": dsc,
            "expected_head_message_id": head}),
        )
        .await);
        let attempt = woke["attempt"]["attempt_id"].as_str().unwrap();
        let reply = |usage: Value| {
            json!({"agent_id": "agent-b", "discussion_id": dsc, "attempt_id": attempt,
            "reply_to_message_id": head, "type": "question", "payload": "{}", "usage": usage})
        };
        refused(
            &call(
                &client,
                "reply_discussion",
                reply(json!({"cost_usd": "0.1"})),
            )
            .await,
            "out_of_range",
        );
        refused(
            &call(&client, "reply_discussion", reply(json!({"cost": 0.1}))).await,
            "unknown_field",
        );
        let replied = ok(&call(&client, "reply_discussion", reply(json!({"cost_usd": 0.3}))).await);
        assert_eq!(replied["status"], "exhausted");
        let shown = ok(&call(&client, "get_discussion", json!({"discussion_id": dsc})).await);
        assert_eq!(shown["escalation"]["reason"], "cost");
        assert_eq!(shown["spend"]["cost_usd"], json!(0.3));
        let listed = ok(&call(&client, "list_discussions", json!({})).await);
        assert_eq!(listed["discussions"][0]["cost_usd"], json!(0.3));
        client.cancel().await.unwrap();
    });
}

#[test]
fn tool_calls_write_what_the_cli_would() {
    // One code path: an ask through MCP and through `call` give the same
    // answer shape and the same records, but for ids and times.
    let env = Env::new();
    env.fleet();
    let request = ask("agent-a", "agent-b", json!({"idempotency_key": "mcp-1"}));
    let via_mcp = runtime().block_on(async {
        let client = connect(&env, None).await;
        let first = ok(&call(&client, "ask_peer", request.clone()).await);
        let again = ok(&call(&client, "ask_peer", request.clone()).await);
        assert_eq!(again["replayed"], true, "retry-safe through MCP too");
        assert_eq!(again["discussion_id"], first["discussion_id"]);
        client.cancel().await.unwrap();
        first
    });
    let via_call = env.run(&["call", "ask_peer", &request.to_string()]).json();
    assert_eq!(
        via_call["discussion_id"], via_mcp["discussion_id"],
        "the same key, the same discussion"
    );
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let mut shape: Map<String, Value> = via_mcp.as_object().unwrap().clone();
    shape.insert("replayed".into(), true.into());
    assert_eq!(keys(&via_call), keys(&Value::Object(shape)));
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
    let until = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap_or_default()
        .contains(") T ")
    {
        assert!(Instant::now() < until, "the holder never stopped");
        std::thread::yield_now();
    }
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
        stderr.contains("warning: that is the default ledger and it does not exist"),
        "{stderr}"
    );
    assert!(stderr.contains("DISCUSS_LEDGER"), "{stderr}");
    assert!(!default.exists(), "reading creates nothing");
}
