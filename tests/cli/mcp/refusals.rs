//! Every refusal through MCP is a tool error with the contract's code, and
//! the session goes on.

use super::*;

// One session through every refusal in turn, to show it goes on after
// each: long, and read as a list of calls and the codes they get.
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
