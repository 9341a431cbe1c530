//! Spend budgets (`ask --max-tokens/--max-cost-usd`, `reply --usage`):
//! exact sums, exhaustion naming the budget, bad values refused, and the
//! usage of supervised turns (the usage file, an agent CLI's JSON).

use crate::common::*;
use serde_json::{Value, json};

fn bin() -> String {
    assert_cmd::cargo::cargo_bin("discuss")
        .display()
        .to_string()
}

/// Wakes the head's recipient of `dsc` and replies with `usage`; returns
/// the reply's answer.
fn turn(env: &Env, dsc: &str, kind: &str, usage: &str, close: bool) -> Value {
    let show = env.show(dsc);
    let head = show["head"]["message_id"].as_str().unwrap().to_owned();
    let agent = show["head"]["to_agent_id"].as_str().unwrap().to_owned();
    let att = env.wake(dsc, &agent, &head);
    let mut args = reply_args(dsc, &agent, &att, &head, kind, r#"{"body":"ok"}"#);
    args.extend(["--usage", usage]);
    if close {
        args.push("--close");
    }
    env.ok(&args)
}

fn escalations(env: &Env) -> Vec<Value> {
    env.records()
        .into_iter()
        .filter(|r| r["receipt"] == "discussion.escalated")
        .collect()
}

#[test]
fn money_sums_exactly_and_the_cost_budget_exhausts_with_one_escalation() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&["--max-turns", "8", "--max-cost-usd", "0.3"]);
    let asked = env.show(&dsc);
    assert_eq!(asked["policy"]["max_cost_usd"], json!(0.3));
    assert_eq!(asked["policy"]["max_tokens"], Value::Null);
    assert_eq!(
        asked["spend"],
        json!({"input_tokens": 0, "output_tokens": 0, "tokens": 0, "cost_usd": 0})
    );
    let first = turn(
        &env,
        &dsc,
        "question",
        r#"{"cost_usd":0.1,"input_tokens":7}"#,
        false,
    );
    assert_eq!(first["status"], "open");
    // 0.1 + 0.2 is 0.3 exactly: the budget is reached, not missed by a
    // float's last digit.
    let second = turn(
        &env,
        &dsc,
        "question",
        r#"{"cost_usd":0.2,"output_tokens":5}"#,
        false,
    );
    assert_eq!(second["status"], "exhausted");
    let show = env.show(&dsc);
    assert_eq!(
        show["spend"],
        json!({"input_tokens": 7, "output_tokens": 5, "tokens": 12, "cost_usd": 0.3})
    );
    assert_eq!(show["escalation"]["reason"], "cost");
    assert_eq!(show["escalation"]["delivery"]["state"], "pending");
    assert_eq!(
        show["attempts"][1]["usage"],
        json!({"output_tokens": 5, "cost_usd": 0.2})
    );
    let stored = escalations(&env);
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["reason"], "cost");
    let completed: Vec<Value> = env
        .records()
        .into_iter()
        .filter(|r| r["receipt"] == "discussion.attempt.completed")
        .map(|r| r["usage"].clone())
        .collect();
    assert_eq!(
        completed,
        vec![
            json!({"input_tokens": 7, "cost_usd": 0.1}),
            json!({"output_tokens": 5, "cost_usd": 0.2})
        ]
    );
    // Exhausted is terminal: no more wakes.
    let head = show["head"]["message_id"].as_str().unwrap();
    env.fails(
        &wake_argv("agent-b", &dsc, head, &[], false),
        "discussion_terminal",
        5,
    );
    let rows = env.ok(&["list"]);
    let row = &rows["discussions"][0];
    assert_eq!(
        (row["tokens"].clone(), row["cost_usd"].clone()),
        (json!(12), json!(0.3))
    );
    // The event stream carries each turn's usage.
    let events = env.run(&["--json", "events", "--discussion", &dsc]);
    let reported: Vec<Value> = events
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["receipt"] == "discussion.attempt.completed")
        .map(|e| e["usage"].clone())
        .collect();
    assert_eq!(reported, completed);
    // A rebuilt cache (or state row) lists the same spend.
    env.drop_derived();
    assert_eq!(env.ok(&["list"]), rows);
}

#[test]
fn the_token_budget_counts_input_and_output_and_a_closing_reply_still_closes() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&["--max-turns", "8", "--max-tokens", "1000"]);
    let first = turn(
        &env,
        &dsc,
        "question",
        r#"{"input_tokens":600,"output_tokens":399}"#,
        false,
    );
    assert_eq!(first["status"], "open");
    let second = turn(&env, &dsc, "question", r#"{"input_tokens":1}"#, false);
    assert_eq!(second["status"], "exhausted");
    assert_eq!(env.show(&dsc)["escalation"]["reason"], "tokens");

    // The reply that crosses the budget and closes: closed wins, no escalation.
    let (closing, _) = env.ask(&["--max-turns", "8", "--max-tokens", "10"]);
    let answer = turn(&env, &closing, "result", r#"{"output_tokens":50}"#, true);
    assert_eq!(answer["status"], "closed");
    let show = env.show(&closing);
    assert_eq!(show["escalation"], Value::Null);
    assert_eq!(show["spend"]["tokens"], 50);
}

#[test]
fn turns_and_tokens_running_out_together_escalate_as_turns() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&["--max-turns", "2", "--max-tokens", "10"]);
    let answer = turn(&env, &dsc, "question", r#"{"input_tokens":10}"#, false);
    assert_eq!(answer["status"], "exhausted");
    let stored = escalations(&env);
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["reason"], "turns");
}

#[test]
fn bad_budgets_and_bad_usage_are_refused_with_exit_3_and_change_nothing() {
    let env = Env::new();
    env.fleet();
    for (flag, value, code) in [
        ("--max-tokens", "0", "out_of_range"),
        ("--max-tokens", "-5", "out_of_range"),
        ("--max-tokens", "1000000001", "out_of_range"),
        ("--max-cost-usd", "0", "out_of_range"),
        ("--max-cost-usd", "-1", "out_of_range"),
        ("--max-cost-usd", "abc", "out_of_range"),
        ("--max-cost-usd", "NaN", "out_of_range"),
        ("--max-cost-usd", "1e3", "out_of_range"),
        ("--max-cost-usd", "1000000.5", "out_of_range"),
        ("--max-cost-usd", "0.0000000001", "out_of_range"),
    ] {
        let mut args = ASK_A_TO_B.to_vec();
        args.extend([r#"{"body":"x"}"#, flag, value]);
        let error = env.fails(&args, code, 3);
        assert!(
            error["message"].as_str().unwrap().contains("max_"),
            "{error}"
        );
    }
    let (dsc, root) = env.ask(&["--max-tokens", "100"]);
    let att = env.wake(&dsc, "agent-b", &root);
    for (usage, code) in [
        (r#"{"input_tokens":-1}"#, "out_of_range"),
        (r#"{"input_tokens":1000000001}"#, "out_of_range"),
        (r#"{"input_tokens":"12"}"#, "out_of_range"),
        (r#"{"output_tokens":1.5}"#, "out_of_range"),
        (r#"{"cost_usd":-0.01}"#, "out_of_range"),
        (r#"{"cost_usd":"0.01"}"#, "out_of_range"),
        (r#"{"cost_usd":1e400}"#, "invalid_argument"),
        (r#"{"cost_usd":NaN}"#, "invalid_argument"),
        (r#"{"cost_usd":1000000.01}"#, "out_of_range"),
        (r#"{"tokens":3}"#, "unknown_field"),
        (r#"[1,2]"#, "invalid_argument"),
        ("not json", "invalid_argument"),
    ] {
        let mut args = reply_args(&dsc, "agent-b", &att, &root, "result", r#"{"body":"x"}"#);
        args.extend(["--usage", usage]);
        env.fails(&args, code, 3);
    }
}

#[test]
fn tool_calls_take_budgets_and_usage_and_refuse_bad_ones() {
    let env = Env::new();
    env.fleet();
    let call = |tool: &str, request: Value| env.run(&["call", tool, &request.to_string()]);
    let asked = call(
        "ask_peer",
        json!({"from_agent_id": "agent-a", "to_agent_id": "agent-b", "fleet_id": "fleet-alpha",
            "payload": "{\"body\":\"hi\"}", "max_tokens": 500, "max_cost_usd": 0.25}),
    );
    assert_eq!(asked.status, 0, "{}", asked.stderr);
    let asked = asked.json();
    assert_eq!(asked["policy"]["max_tokens"], 500);
    assert_eq!(asked["policy"]["max_cost_usd"], json!(0.25));
    let before = env.ledger_bytes();
    for (field, value) in [
        ("max_tokens", json!(0)),
        ("max_cost_usd", json!("0.25")),
        ("max_cost_usd", json!(-1)),
    ] {
        let mut request = json!({"from_agent_id": "agent-a", "to_agent_id": "agent-b",
            "fleet_id": "fleet-alpha", "payload": "{}"});
        request[field] = value;
        let out = call("ask_peer", request);
        assert_eq!(out.status, 3, "{field}: {}", out.stdout);
    }
    assert_eq!(env.ledger_bytes(), before);
    let dsc = asked["discussion_id"].as_str().unwrap();
    let root = asked["root_message_id"].as_str().unwrap();
    let att = env.wake(dsc, "agent-b", root);
    let woken = env.ledger_bytes();
    let reply = |usage: Value| {
        call(
            "reply_discussion",
            json!({"agent_id": "agent-b", "discussion_id": dsc, "attempt_id": att,
                "reply_to_message_id": root, "type": "question", "payload": "{}",
                "usage": usage}),
        )
    };
    let refused = reply(json!({"input_tokens": 1, "cached_tokens": 3}));
    assert_eq!(refused.status, 3);
    assert_eq!(refused.error()["code"], "unknown_field");
    assert_eq!(env.ledger_bytes(), woken);
    let done = reply(json!({"input_tokens": 400, "output_tokens": 100, "cost_usd": 0.01}));
    assert_eq!(done.status, 0, "{}", done.stdout);
    assert_eq!(done.json()["status"], "exhausted");
    assert_eq!(env.show(dsc)["escalation"]["reason"], "tokens");
}

#[test]
fn a_supervised_turn_records_its_usage_file_however_it_ends() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--max-turns", "8", "--max-cost-usd", "1"]);
    // A child that fails after saying what it cost.
    let script = r#"printf '{"input_tokens":40,"cost_usd":0.5}' > "$DISCUSS_USAGE_FILE"; exit 4"#;
    let out = env.run(&wake_argv(
        "agent-b",
        &dsc,
        &root,
        &["--", "sh", "-c", script],
        true,
    ));
    assert_eq!(out.status, 8, "{}", out.stderr);
    let show = env.show(&dsc);
    assert_eq!(show["attempts"][0]["state"], "failed");
    assert_eq!(
        show["attempts"][0]["usage"],
        json!({"input_tokens": 40, "cost_usd": 0.5})
    );
    assert_eq!(show["spend"]["cost_usd"], json!(0.5));

    // A child that replies with `discuss reply` reads its file there.
    let script = format!(
        r#"printf '{{"output_tokens":9,"cost_usd":0.25}}' > "$DISCUSS_USAGE_FILE"; {} reply --type question --payload '{{"body":"hm"}}'"#,
        bin()
    );
    let out = env.run(&wake_argv(
        "agent-b",
        &dsc,
        &root,
        &["--", "sh", "-c", &script],
        true,
    ));
    assert_eq!(out.status, 0, "{}", out.stderr);
    let show = env.show(&dsc);
    assert_eq!(
        show["attempts"][1]["usage"],
        json!({"output_tokens": 9, "cost_usd": 0.25})
    );
    assert_eq!(show["spend"]["cost_usd"], json!(0.75));

    // Garbage in the file: under a spend budget the budget fails closed.
    // The reply is taken (it was authorized when woken), its receipt
    // says the report could not be read, and the discussion is exhausted
    // with one escalation that says why.
    let head = show["head"]["message_id"].as_str().unwrap().to_owned();
    let att = env.wake(&dsc, "agent-a", &head);
    let mut args = reply_args(&dsc, "agent-a", &att, &head, "question", r#"{"body":"x"}"#);
    args.insert(0, "--json");
    let garbage = env.dir.path().join("garbage.json");
    std::fs::write(&garbage, "{\"input_tokens\": \"lots\"}").unwrap();
    let out = env.run_with(
        &[("DISCUSS_USAGE_FILE", garbage.to_str().unwrap())],
        &args,
        "",
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("is not a usage object") || out.stderr.contains("not a usage object"),
        "{}",
        out.stderr
    );
    assert_eq!(out.json()["status"], "exhausted");
    let show = env.show(&dsc);
    assert_eq!(show["status"], "exhausted");
    assert_eq!(show["attempts"][2]["state"], "completed");
    assert_eq!(show["attempts"][2]["usage"], Value::Null);
    assert_eq!(show["attempts"][2]["usage_unreadable"], true);
    assert_eq!(show["escalation"]["reason"], "usage_unreadable");
    assert_eq!(show["spend"]["cost_usd"], json!(0.75));
    let receipts: Vec<Value> = env
        .records()
        .into_iter()
        .filter(|r| r["receipt"] == "discussion.attempt.completed")
        .collect();
    assert_eq!(receipts.last().unwrap()["usage_unreadable"], true);
    let human = env.run(&["show", &dsc]).stdout;
    assert!(human.contains("usage unreadable"), "{human}");
    assert!(
        human.contains("a usage report could not be read"),
        "{human}"
    );
}

#[test]
fn an_unreadable_usage_report_fails_closed_only_under_a_spend_budget() {
    let env = Env::new();
    env.fleet();
    // An oversized file, a FIFO, garbage: each a supervised turn that
    // ends without a reply, in a discussion with a token budget.
    let scripts = [
        r#"head -c 70000 /dev/zero | tr '\0' ' ' > "$DISCUSS_USAGE_FILE"; exit 1"#,
        r#"mkfifo "$DISCUSS_USAGE_FILE"; exit 1"#,
        r#"echo '[1,2]' > "$DISCUSS_USAGE_FILE"; exit 1"#,
    ];
    for script in scripts {
        let (dsc, root) = env.ask(&["--max-turns", "8", "--max-tokens", "1000"]);
        let out = env.run(&wake_argv(
            "agent-b",
            &dsc,
            &root,
            &["--", "sh", "-c", script],
            true,
        ));
        assert_eq!(out.status, 8, "{}", out.stderr);
        assert!(out.stderr.contains("usage_unreadable"), "{}", out.stderr);
        let show = env.show(&dsc);
        assert_eq!(show["status"], "exhausted", "{script}");
        assert_eq!(show["attempts"][0]["state"], "failed");
        assert_eq!(show["attempts"][0]["usage_unreadable"], true);
        assert_eq!(show["escalation"]["reason"], "usage_unreadable");
        assert_eq!(out.json()["status"], "exhausted");
    }
    // Without a spend budget: recorded, and the discussion goes on.
    let (dsc, root) = env.ask(&["--max-turns", "8"]);
    let out = env.run(&wake_argv(
        "agent-b",
        &dsc,
        &root,
        &["--", "sh", "-c", scripts[2]],
        true,
    ));
    assert_eq!(out.status, 8, "{}", out.stderr);
    let show = env.show(&dsc);
    assert_eq!(show["status"], "open");
    assert_eq!(show["attempts"][0]["usage_unreadable"], true);
    assert!(show["escalation"].is_null());
    // No report at all under a budget: nothing recorded, the discussion
    // goes on, and `show` marks the turn.
    let (dsc, root) = env.ask(&["--max-turns", "8", "--max-cost-usd", "1"]);
    let out = env.run(&wake_argv(
        "agent-b",
        &dsc,
        &root,
        &["--", "sh", "-c", "exit 1"],
        true,
    ));
    assert_eq!(out.status, 8, "{}", out.stderr);
    let show = env.show(&dsc);
    assert_eq!(show["status"], "open");
    assert!(show["attempts"][0].get("usage_unreadable").is_none());
    let human = env.run(&["show", &dsc]).stdout;
    assert!(human.contains("no usage reported"), "{human}");
    // A reply that closes the discussion keeps it closed.
    let (dsc, root) = env.ask(&["--max-turns", "8", "--max-cost-usd", "1"]);
    let att = env.wake(&dsc, "agent-b", &root);
    let mut args = reply_args(&dsc, "agent-b", &att, &root, "result", r#"{"body":"done"}"#);
    args.extend(["--close", "--json"]);
    let garbage = env.dir.path().join("garbage2.json");
    std::fs::write(&garbage, "not json").unwrap();
    let out = env.run_with(
        &[("DISCUSS_USAGE_FILE", garbage.to_str().unwrap())],
        &args,
        "",
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    let show = env.show(&dsc);
    assert_eq!(show["status"], "closed");
    assert!(show["escalation"].is_null());
}

#[test]
fn a_turn_killed_at_its_deadline_still_records_what_it_cost() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "1000", "--max-tokens", "10"]);
    let script = r#"printf '{"output_tokens":700}' > "$DISCUSS_USAGE_FILE"; sleep 60"#;
    let args = wake_argv(
        "agent-b",
        &dsc,
        &root,
        &["--kill-grace-ms", "200", "--", "sh", "-c", script],
        true,
    );
    let out = env.run(&args);
    assert_eq!(out.status, 9, "{}", out.stderr);
    let show = env.show(&dsc);
    // Deadman wins over the budget it also passed; the cost is kept.
    assert_eq!(show["status"], "deadman");
    assert_eq!(show["attempts"][0]["usage"], json!({"output_tokens": 700}));
    assert_eq!(show["spend"]["tokens"], 700);
}

#[test]
fn reply_from_stdout_takes_an_agent_clis_result_and_usage() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--max-cost-usd", "0.02"]);
    let printed = json!({"type": "result", "subtype": "success", "result": "Yes, proceed.",
        "total_cost_usd": 0.012, "usage": {"input_tokens": 1200, "output_tokens": 300,
        "cache_read_input_tokens": 5000}});
    let script = format!("echo '{printed}'");
    let out = env.run(&wake_argv(
        "agent-b",
        &dsc,
        &root,
        &["--reply-from-stdout", "--", "sh", "-c", &script],
        true,
    ));
    assert_eq!(out.status, 0, "{}", out.stderr);
    let show = env.show(&dsc);
    assert_eq!(
        show["transcript"][1]["payload"],
        json!({"text": "Yes, proceed."})
    );
    assert_eq!(
        show["attempts"][0]["usage"],
        json!({"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.012})
    );
    assert_eq!(show["spend"]["tokens"], 1500);
}

#[test]
fn show_and_list_show_spend_against_budget_to_a_person() {
    let env = Env::new();
    let (dsc, _) = env.discussion(&[
        "--max-turns",
        "8",
        "--max-tokens",
        "5000",
        "--max-cost-usd",
        "1",
    ]);
    turn(
        &env,
        &dsc,
        "question",
        r#"{"input_tokens":1200,"output_tokens":300,"cost_usd":0.3}"#,
        false,
    );
    let human = env.run(&["show", &dsc]);
    assert!(
        human
            .stdout
            .contains("spend         1500 of 5000 tokens · $0.30 of $1.00"),
        "{}",
        human.stdout
    );
    let markdown = env.run(&["show", &dsc, "--format", "markdown"]);
    assert!(
        markdown
            .stdout
            .contains("- **Spend:** 1500 of 5000 tokens · $0.30 of $1.00"),
        "{}",
        markdown.stdout
    );
    let list = env.run(&["list"]);
    assert!(
        list.stdout.contains("2/8 · 1500 tok · $0.30"),
        "{}",
        list.stdout
    );
}

/// A discussion a → b whose root waits for b, with b woken and replied
/// with `usage`; returns the discussion.
fn spend_in_a_new_discussion(env: &Env, usage: &str) -> String {
    let (dsc, _) = env.ask(&[]);
    turn(env, &dsc, "question", usage, false);
    dsc
}

fn wake_b(env: &Env, dsc: &str) -> Outcome {
    let head = env.show(dsc)["head"]["message_id"]
        .as_str()
        .unwrap()
        .to_owned();
    env.run(&wake_argv("agent-b", dsc, &head, &[], true))
}

#[test]
fn a_token_cap_refuses_the_wake_that_would_pass_it_until_the_hour_rolls_on() {
    let mut env = Env::new();
    env.fleet();
    env.ok(&[
        "quota",
        "set",
        "--tokens-per-hour",
        "100",
        "--agent",
        "agent-b",
    ]);
    spend_in_a_new_discussion(&env, r#"{"input_tokens":60}"#);
    env.advance(60_000);
    spend_in_a_new_discussion(&env, r#"{"output_tokens":40}"#);
    let (third, root) = env.ask(&[]);
    let error = env.fails(
        &wake_argv("agent-b", &third, &root, &[], false),
        "spend_quota_exceeded",
        6,
    );
    let details = &error["details"];
    assert_eq!(details["window"], "hour");
    assert_eq!(
        (details["limit"].clone(), details["spent"].clone()),
        (json!(100), json!(100))
    );
    // Below the cap again once the first 60 tokens leave the window: an
    // hour after the receipt that reported them (a pinned clock still
    // moves on while a process runs, so times come from the ledger).
    let first_at = env
        .records()
        .iter()
        .find(|r| r["receipt"] == "discussion.attempt.completed")
        .unwrap()["at_ms"]
        .as_i64()
        .unwrap();
    let leaves_at = first_at + 3_600_000;
    let retry = details["retry_after_ms"].as_i64().unwrap();
    assert!(
        (leaves_at - env.now_ms - 5_000..=leaves_at - env.now_ms).contains(&retry),
        "{retry}"
    );
    // Other agents are not capped, and a lost cache forgets nothing.
    env.drop_derived();
    env.fails(
        &wake_argv("agent-b", &third, &root, &[], false),
        "spend_quota_exceeded",
        6,
    );
    let shown = env.ok(&["quota", "show"]);
    let b = shown["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent_id"] == "agent-b")
        .unwrap()
        .clone();
    assert_eq!(
        (b["tokens_per_hour"].clone(), b["tokens_last_hour"].clone()),
        (json!(100), json!(100))
    );
    assert_eq!(shown["default_tokens_per_hour"], Value::Null);
    // (A discussion of its own each time: an hour outlives a discussion.)
    // A second before the spend leaves the hour, and as it leaves: times
    // from the ledger, as a process's clock runs on from the pinned one.
    env.advance(leaves_at - 1_000 - env.now_ms);
    let (fourth, _) = env.ask(&[]);
    assert_eq!(
        wake_b(&env, &fourth).error()["code"],
        "spend_quota_exceeded"
    );
    env.advance(leaves_at - env.now_ms);
    let (fifth, _) = env.ask(&[]);
    assert_eq!(wake_b(&env, &fifth).status, 0);
}

#[test]
fn a_default_cost_cap_per_day_applies_to_every_agent_after_the_wake_quota() {
    let mut env = Env::new();
    env.fleet();
    env.ok(&["quota", "set", "--cost-usd-per-day", "0.3"]);
    spend_in_a_new_discussion(&env, r#"{"cost_usd":0.1}"#);
    spend_in_a_new_discussion(&env, r#"{"cost_usd":0.2}"#);
    let (dsc, root) = env.ask(&[]);
    let error = env.fails(
        &wake_argv("agent-b", &dsc, &root, &[], false),
        "spend_quota_exceeded",
        6,
    );
    assert_eq!(error["details"]["window"], "day");
    assert_eq!(error["details"]["spent"], json!(0.3));
    assert_eq!(error["details"]["limit"], json!(0.3));
    // The wake quota is checked first.
    env.ok(&["quota", "set", "2", "--agent", "agent-b"]);
    env.fails(
        &wake_argv("agent-b", &dsc, &root, &[], false),
        "wake_quota_exceeded",
        6,
    );
    env.ok(&["quota", "set", "30", "--agent", "agent-b"]);
    // Raising the cap lets it through; a day later the spend has gone.
    env.ok(&[
        "quota",
        "set",
        "--cost-usd-per-day",
        "0.31",
        "--agent",
        "agent-b",
    ]);
    let woken = wake_b(&env, &dsc);
    assert_eq!(woken.status, 0, "{}", woken.stderr);
    let last_spent = env
        .records()
        .iter()
        .filter(|r| r["receipt"] == "discussion.attempt.completed")
        .map(|r| r["at_ms"].as_i64().unwrap())
        .max()
        .unwrap();
    env.advance(last_spent + 86_400_000 - env.now_ms);
    env.ok(&[
        "quota",
        "set",
        "--cost-usd-per-day",
        "0.3",
        "--agent",
        "agent-b",
    ]);
    let (later, _) = env.ask(&[]);
    assert_eq!(wake_b(&env, &later).status, 0);
}

#[test]
fn bad_spend_caps_are_refused_with_exit_3() {
    let env = Env::new();
    env.fleet();
    for args in [
        &["quota", "set", "--tokens-per-hour", "-1"][..],
        &["quota", "set", "--tokens-per-hour", "1000000001"],
        &["quota", "set", "--cost-usd-per-day", "-0.5"],
        &["quota", "set", "--cost-usd-per-day", "lots"],
        &["quota", "set", "--cost-usd-per-day", "2000000"],
    ] {
        env.fails(args, "out_of_range", 3);
    }
    env.fails(&["quota", "set"], "usage", 2);
}

#[test]
fn sixteen_concurrent_wakes_of_a_capped_agent_pass_only_below_the_cap() {
    let env = Env::new();
    env.fleet();
    env.ok(&[
        "quota",
        "set",
        "--tokens-per-hour",
        "100",
        "--agent",
        "agent-b",
    ]);
    spend_in_a_new_discussion(&env, r#"{"input_tokens":99}"#);
    let asked: Vec<(String, String)> = (0..32).map(|_| env.ask(&[])).collect();
    let race = |discussions: &[(String, String)]| -> Vec<Outcome> {
        std::thread::scope(|scope| {
            let runs: Vec<_> = discussions
                .iter()
                .map(|(dsc, root)| {
                    let env = &env;
                    scope.spawn(move || env.run(&wake_argv("agent-b", dsc, root, &[], true)))
                })
                .collect();
            runs.into_iter().map(|run| run.join().unwrap()).collect()
        })
    };
    // Below the cap, all 16 are woken: spend is known only when turns end,
    // so the cap is passed by at most the turns already running.
    let first = race(&asked[..16]);
    assert!(
        first.iter().all(|o| o.status == 0),
        "{:?}",
        first.iter().map(|o| &o.stderr).collect::<Vec<_>>()
    );
    for ((dsc, root), woken) in asked[..16].iter().zip(&first) {
        let att = woken.json()["attempt"]["attempt_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut args = reply_args(dsc, "agent-b", &att, root, "result", r#"{"body":"ok"}"#);
        args.extend(["--usage", r#"{"output_tokens":10}"#]);
        env.ok(&args);
    }
    // At the cap, none of 16 is.
    let second = race(&asked[16..]);
    for outcome in &second {
        assert_eq!(outcome.status, 6, "{}", outcome.stderr);
        assert_eq!(outcome.error()["code"], "spend_quota_exceeded");
    }
    let reservations = env
        .records()
        .iter()
        .filter(|r| r["receipt"] == "discussion.attempt.reserved")
        .count();
    assert_eq!(reservations, 1 + 16);
}

#[test]
fn spend_and_escalations_on_a_terminal_at_80_and_200_columns() {
    let env = Env::new();
    env.fleet();
    let (dsc, _) = env.ask(&["--max-turns", "8", "--max-cost-usd", "0.3"]);
    turn(
        &env,
        &dsc,
        "question",
        r#"{"input_tokens":1200,"output_tokens":300,"cost_usd":0.3}"#,
        false,
    );
    for columns in [80, 200] {
        let shown = strip_colour(&on_a_terminal(
            &env,
            "xterm-256color",
            &format!("stty cols {columns} rows 50; discuss show {dsc}"),
        ));
        assert!(
            shown.contains("spend         1500 tokens · $0.30 of $0.30"),
            "{shown}"
        );
        assert!(shown.contains("(cost budget); pending"), "{shown}");
        let listed = strip_colour(&on_a_terminal(
            &env,
            "xterm-256color",
            &format!("stty cols {columns} rows 50; discuss escalations"),
        ));
        assert!(listed.contains(&format!("{dsc}  pending\n")), "{listed}");
        assert!(listed.contains("cost budget after 2 turns"), "{listed}");
        assert!(listed.contains("spend 1500 tok · $0.30"), "{listed}");
        for line in listed.lines() {
            assert!(line.chars().count() <= columns, "{columns}: {line:?}");
        }
    }
}

#[test]
fn a_fifo_at_the_usage_file_never_holds_the_supervisor() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "2000"]);
    // The child plants a FIFO where its usage file goes, and exits: the
    // turn ends `failed` at once, not `deadman` after a supervisor that
    // waited on a writer that never comes.
    let started = std::time::Instant::now();
    let out = env.run(&wake_argv(
        "agent-b",
        &dsc,
        &root,
        &["--", "sh", "-c", r#"mkfifo "$DISCUSS_USAGE_FILE"; exit 0"#],
        true,
    ));
    assert_eq!(out.status, 8, "{}", out.stderr);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "the supervisor waited {:?}",
        started.elapsed()
    );
    assert!(out.stderr.contains("not a regular file"), "{}", out.stderr);
    let show = env.show(&dsc);
    assert_eq!(show["attempts"][0]["state"], "failed");
    assert_eq!(show["attempts"][0]["reason"], "exited_without_reply");
    assert_eq!(show["attempts"][0]["usage_unreadable"], true);
}
