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
use std::time::Duration;

mod raw;
mod refusals;

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

/// The structured content of an answer, which its first block, a text,
/// repeats.
fn structured(result: &CallToolResult) -> Value {
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    let text = &result.content[0].as_text().expect("one text block").text;
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), structured);
    structured
}

/// The structured answer of a success, checked against its text block.
fn ok(result: &CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(result.content.len(), 1);
    structured(result)
}

/// The contract's error object of a refusal, checked against its text.
fn refused(result: &CallToolResult, code: &str) -> Value {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let structured = structured(result);
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
                "inbox",
                "take_turn"
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

#[test]
fn a_gated_wake_through_the_tools_asks_once_and_goes_through_after_the_grant() {
    let env = Env::new();
    env.fleet();
    env.ok(&["gate", "set", "--agent", "agent-b", "--always"]);
    runtime().block_on(async {
        let client = connect(&env, None).await;
        let (dsc, root) = env.ask(&[]);
        let wake =
            json!({"agent_id": "agent-b", "discussion_id": dsc, "expected_head_message_id": root});
        let first = refused(
            &call(&client, "wake_agent", wake.clone()).await,
            "approval_required",
        );
        let id = first["details"]["approval_id"].as_str().unwrap().to_owned();
        let again = refused(
            &call(&client, "wake_agent", wake.clone()).await,
            "approval_required",
        );
        assert_eq!(
            again["details"]["approval_id"],
            id.as_str(),
            "the same request"
        );
        // ask_peer with wake_peer: the discussion, and a request of its own.
        let asked = refused(
            &call(
                &client,
                "ask_peer",
                ask("agent-a", "agent-b", json!({"wake_peer": true})),
            )
            .await,
            "approval_required",
        );
        assert!(asked["details"]["discussion_id"].is_string(), "{asked}");
        assert_ne!(asked["details"]["approval_id"], id.as_str());
        env.ok(&["approve", &id]);
        let woken = ok(&call(&client, "wake_agent", wake).await);
        let attempt = woken["attempt"]["attempt_id"].as_str().unwrap();
        let reserved = env
            .records()
            .into_iter()
            .find(|r| r["receipt"] == "discussion.attempt.reserved" && r["attempt_id"] == attempt)
            .unwrap();
        assert_eq!(reserved["approval_id"], id.as_str());
        client.cancel().await.unwrap();
    });
}
