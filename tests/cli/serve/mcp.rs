//! MCP over streamable HTTP through the official Rust SDK's client.

use super::*;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

async fn client(
    server: &Served,
    token: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    client_with(
        server,
        token,
        rmcp::service::ClientLifecycleMode::Initialize,
    )
    .await
}

async fn client_with(
    server: &Served,
    token: &str,
    lifecycle: rmcp::service::ClientLifecycleMode,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    use rmcp::service::ClientServiceExt;
    let config = StreamableHttpClientTransportConfig::with_uri(format!(
        "http://127.0.0.1:{}/mcp",
        server.port
    ))
    .auth_header(token);
    let transport = StreamableHttpClientTransport::from_config(config);
    ().serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("the server initializes")
}

#[test]
fn both_protocol_revisions_are_spoken_over_http() {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::ClientLifecycleMode;
    let env = Env::new();
    env.fleet();
    let b = token(&env, &["agent-b"]);
    let (dsc, _) = env.ask(&[]);
    let server = Served::start(&env, &[]);
    runtime().block_on(async {
        for (lifecycle, expected) in [
            (
                ClientLifecycleMode::Initialize,
                ProtocolVersion::V_2025_11_25,
            ),
            (
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
                ProtocolVersion::V_2026_07_28,
            ),
        ] {
            let session = client_with(&server, &b, lifecycle).await;
            assert_eq!(session.peer_info().unwrap().protocol_version, expected);
            let inbox = call(&session, "inbox", json!({})).await;
            assert_eq!(
                inbox.structured_content.unwrap()["discussions"][0]["discussion_id"],
                dsc.as_str()
            );
            session.cancel().await.unwrap();
        }
    });
}

async fn call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    tool: &str,
    arguments: Value,
) -> rmcp::model::CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!()
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .expect("a tool call is never a protocol error")
}

#[test]
fn the_rust_sdk_runs_a_whole_discussion_over_streamable_http_as_its_tokens_agent() {
    let env = Env::new();
    env.fleet();
    let (a, b) = (token(&env, &["agent-a"]), token(&env, &["agent-b"]));
    let server = Served::start(&env, &[]);
    runtime().block_on(async {
        let for_a = client(&server, &a).await;
        let for_b = client(&server, &b).await;
        // As with `mcp --agent`: the token's agent stands in for
        // inbox's agent_id, which is then optional.
        let tools = for_a.list_all_tools().await.unwrap();
        let inbox = tools.iter().find(|t| t.name == "inbox").unwrap();
        assert_eq!(inbox.input_schema["required"], json!([]), "{:?}", inbox.input_schema);

        let asked = call(&for_a, "ask_peer", json!({"from_agent_id": "agent-a", "to_agent_id": "agent-b", "fleet_id": "fleet-alpha",
            "payload": "{\"body\":\"Refactor auth module?\"}", "max_tokens": 5000, "max_cost_usd": 0.5})).await;
        assert_eq!(asked.is_error, Some(false), "{asked:?}");
        let asked = asked.structured_content.unwrap();
        let dsc = asked["discussion_id"].as_str().unwrap();
        let head = asked["head_message_id"].as_str().unwrap();
        // b cannot ask as a; b is woken and answers.
        let spoofed = call(&for_b, "ask_peer", json!({"from_agent_id": "agent-a", "to_agent_id": "agent-b",
            "fleet_id": "fleet-alpha", "payload": "{}"})).await;
        assert_eq!(spoofed.is_error, Some(true));
        assert_eq!(spoofed.structured_content.unwrap()["error"]["code"], "agent_mismatch");
        let inbox = call(&for_b, "inbox", json!({})).await.structured_content.unwrap();
        assert_eq!(inbox["discussions"][0]["discussion_id"], dsc);
        let woke = call(&for_b, "wake_agent", json!({"agent_id": "agent-b", "discussion_id": dsc,
            "expected_head_message_id": head})).await.structured_content.unwrap();
        let attempt = woke["attempt"]["attempt_id"].as_str().unwrap();
        let replied = call(&for_b, "reply_discussion", json!({"agent_id": "agent-b", "discussion_id": dsc, "attempt_id": attempt,
            "reply_to_message_id": head, "type": "result", "payload": "{\"body\":\"yes\"}", "close": true,
            "usage": {"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.012}})).await;
        assert_eq!(replied.is_error, Some(false), "{replied:?}");
        let shown = call(&for_a, "get_discussion", json!({"discussion_id": dsc})).await.structured_content.unwrap();
        assert_eq!(shown["status"], "closed");
        assert_eq!(shown["policy"]["max_cost_usd"], json!(0.5));
        assert_eq!(shown["spend"], json!({"input_tokens": 1200, "output_tokens": 300, "tokens": 1500, "cost_usd": 0.012}));
        assert_eq!(shown, env.show(dsc));
        for_a.cancel().await.unwrap();
        for_b.cancel().await.unwrap();
    });
    // Every record a call wrote names the token that vouched for it.
    let (a_id, b_id) = (token_id_of(&env, "agent-a"), token_id_of(&env, "agent-b"));
    let mut vouched = 0;
    for record in env.records() {
        let expected = match (record["kind"].as_str(), record["from_agent_id"].as_str()) {
            (Some("message"), Some("agent-a")) => &a_id,
            (Some("message" | "receipt"), _) => &b_id,
            _ => continue,
        };
        assert_eq!(record["token_id"], expected.as_str(), "{record}");
        vouched += 1;
    }
    assert_eq!(
        vouched, 4,
        "the root, the reservation, the reply, its receipt"
    );
    // Without a token the endpoint answers 401, as the others do.
    let refused = server.post(
        "/mcp",
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    assert_eq!(refused.status, 401);
    assert_eq!(refused.header("www-authenticate"), Some("Bearer"));
    assert_eq!(server.stop().0, 0);
}
