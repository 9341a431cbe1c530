//! Every status reached through the CLI, with the clock moved, not slept.

use crate::common::*;

#[test]
fn open_then_active_then_closed() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    assert_eq!(env.status(&dsc), "open");
    let att = env.wake(&dsc, "agent-b", &root);
    assert_eq!(env.status(&dsc), "active");
    let msg = env.reply(&dsc, "agent-b", &att, &root, "result", true);
    let show = env.show(&dsc);
    assert_eq!(show["status"], "closed");
    assert_eq!(show["head"]["message_id"], msg.as_str());
    assert_eq!(show["turns_used"], 2);
    assert_eq!(show["turns_remaining"], 2);
    assert_eq!(
        show["participants"],
        serde_json::json!(["agent-a", "agent-b"])
    );
    assert_eq!(show["attempts"][0]["state"], "completed");
    assert_eq!(show["attempts"][0]["reply_message_id"], msg.as_str());
    assert_eq!(show["escalation"], serde_json::Value::Null);
}

#[test]
fn a_question_back_alternates_the_recipient() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    let q = env.reply(&dsc, "agent-b", &att, &root, "question", false);
    let show = env.show(&dsc);
    assert_eq!(show["status"], "open");
    assert_eq!(show["head"]["to_agent_id"], "agent-a");
    // Now agent-a holds the head; agent-b is not its recipient.
    env.fails(
        &wake_argv("agent-b", &dsc, &q, &[], false),
        "not_recipient",
        5,
    );
    let att2 = env.wake(&dsc, "agent-a", &q);
    env.reply(&dsc, "agent-a", &att2, &q, "result", true);
    let show = env.show(&dsc);
    assert_eq!(show["status"], "closed");
    let turns: Vec<i64> = show["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["turn"].as_i64().unwrap())
        .collect();
    assert_eq!(turns, vec![1, 2, 3]);
}

#[test]
fn deadman_when_the_turn_deadline_passes_and_it_stays_deadman() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "5000"]);
    env.wake(&dsc, "agent-b", &root);
    // The pinned clock runs on after each process starts, so CLI tests keep
    // a margin around deadlines; exact boundaries are unit-tested.
    env.advance(4_000);
    assert_eq!(env.status(&dsc), "active");
    env.advance(2_000);
    let show = env.show(&dsc);
    assert_eq!(show["status"], "deadman");
    assert_eq!(show["attempts"][0]["state"], "deadman");
    assert_eq!(show["attempts"][0]["reason"], "deadline");
    // Past the conversation deadline too: still deadman, never expired.
    env.advance(3_600_000);
    assert_eq!(env.status(&dsc), "deadman");
}

#[test]
fn expired_when_the_conversation_deadline_passes_idle() {
    let mut env = Env::new();
    let (dsc, _) = env.discussion(&["--timeout-ms", "10000", "--turn-timeout-ms", "5000"]);
    env.advance(9_000);
    assert_eq!(env.status(&dsc), "open");
    env.advance(2_000);
    assert_eq!(env.status(&dsc), "expired");
    // A wake on it says why it ended and which option sets that limit.
    let root = env.show(&dsc)["head"]["message_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let err = env.fails(
        &wake_argv("agent-b", &dsc, &root, &[], false),
        "discussion_terminal",
        5,
    );
    let message = err["message"].as_str().unwrap();
    assert!(
        message.contains("expired: its conversation deadline passed at 2026-11-30T00:00:10."),
        "{err}"
    );
    assert!(
        err["hints"][0].as_str().unwrap().contains("--timeout-ms"),
        "{err}"
    );
    // Its escalation counts one turn, the root, in the singular.
    let out = env.run(&["escalations"]);
    assert!(out.stdout.contains("after 1 turn "), "{}", out.stdout);
    assert!(!out.stdout.contains("1 turns"), "{}", out.stdout);
}

#[test]
fn a_write_on_a_deadman_or_exhausted_discussion_says_which_limit_it_met() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "5000"]);
    env.wake(&dsc, "agent-b", &root);
    env.advance(6_000);
    let err = env.fails(
        &wake_argv("agent-b", &dsc, &root, &[], false),
        "discussion_terminal",
        5,
    );
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("a turn passed its deadline"),
        "{err}"
    );
    assert!(
        err["hints"][0]
            .as_str()
            .unwrap()
            .contains("--turn-timeout-ms"),
        "{err}"
    );
    let (dsc, root) = env.discussion(&["--max-turns", "2"]);
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "question", false);
    let head = env.show(&dsc)["head"]["message_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(env.status(&dsc), "exhausted");
    let err = env.fails(
        &wake_argv("agent-a", &dsc, &head, &[], false),
        "discussion_terminal",
        5,
    );
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("its budget was spent"),
        "{err}"
    );
    assert!(
        err["hints"][0].as_str().unwrap().contains("--max-turns"),
        "{err}"
    );
}

#[test]
fn attempt_deadline_is_clamped_to_the_conversation_deadline_and_deadman_wins_the_tie() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&["--timeout-ms", "10000", "--turn-timeout-ms", "10000"]);
    env.advance(4_000);
    env.wake(&dsc, "agent-b", &root);
    let show = env.show(&dsc);
    assert_eq!(
        show["attempts"][0]["deadline_at"],
        show["policy"]["conversation_deadline_at"]
    );
    env.advance(7_000);
    // Both deadlines fall at the same instant: deadman > expired.
    assert_eq!(env.status(&dsc), "deadman");
}

#[test]
fn exhausted_on_the_last_turn_escalates_exactly_once() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&["--max-turns", "2"]);
    let att = env.wake(&dsc, "agent-b", &root);
    let out = env.ok(&reply_args(&dsc, "agent-b", &att, &root, "question", "{}"));
    assert_eq!(out["status"], "exhausted");
    let show = env.show(&dsc);
    assert_eq!(show["status"], "exhausted");
    assert_eq!(show["turns_remaining"], 0);
    assert_eq!(show["escalation"]["turns_used"], 2);
    let escalations = env
        .records()
        .iter()
        .filter(|r| r["receipt"] == "discussion.escalated")
        .count();
    assert_eq!(escalations, 1);
    // The escalation is in the same write: it directly follows the completed receipt.
    let records = env.records();
    let n = records.len();
    assert_eq!(records[n - 2]["receipt"], "discussion.attempt.completed");
    assert_eq!(records[n - 1]["receipt"], "discussion.escalated");
    // Later deadlines change nothing.
    env.advance(10_000_000);
    assert_eq!(env.status(&dsc), "exhausted");
    let head = show["head"]["message_id"].as_str().unwrap();
    env.fails(
        &wake_argv("agent-a", &dsc, head, &[], false),
        "discussion_terminal",
        5,
    );
}

#[test]
fn closed_stays_closed_after_every_deadline() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&["--timeout-ms", "2000", "--turn-timeout-ms", "1000"]);
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "result", true);
    env.advance(1_000_000);
    let show = env.show(&dsc);
    assert_eq!(show["status"], "closed");
    // Frozen at the closing reply, whatever happened after.
    assert_eq!(show["terminal_at"], show["transcript"][1]["at"]);
    assert!(
        show["terminal_at"]
            .as_str()
            .unwrap()
            .starts_with("2026-11-30T00:00:00.")
    );
}

#[test]
fn invalid_when_a_fork_is_injected() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "question", false);
    // Another tool appends a second answer to the root.
    let envelope = serde_json::json!({"schema":"discussion/v1","discussion_id":dsc,"turn":3,"type":"result",
        "reply_to_message_id":root,"attempt_id":att,"close":false,"body":{}});
    let line = serde_json::json!({"v":1,"kind":"message","id":"msg_fork","at_ms":T0,"by":"x","fleet_id":"fleet-alpha",
        "from_agent_id":"agent-b","to_agent_id":"agent-a","correlation_id":dsc,"payload":envelope.to_string()});
    env.append_raw(&format!("{line}\n"));
    let show = env.show(&dsc);
    assert_eq!(show["status"], "invalid");
    assert_eq!(show["integrity_findings"][0]["kind"], "fork");
    assert_eq!(show["integrity_findings"][0]["message_id"], "msg_fork");
    assert_eq!(show["integrity_findings"][0]["line"], env.records().len());
    // Writes to an invalid discussion are refused.
    let head = show["head"]["message_id"].as_str().unwrap();
    env.fails(
        &wake_argv("agent-a", &dsc, head, &[], false),
        "discussion_invalid",
        7,
    );
}

#[test]
fn ask_with_wake_peer_reserves_in_the_same_write() {
    let env = Env::new();
    env.fleet();
    let before = env.records().len();
    let out = env.ok(&Argv::ask("agent-a", "agent-b")
        .opt("--payload", "1")
        .flag("--wake-peer")
        .words());
    assert_eq!(out["status"], "active");
    assert_eq!(out["attempt"]["turn"], 2);
    assert_eq!(out["attempt"]["agent_id"], "agent-b");
    let records = env.records();
    assert_eq!(records.len(), before + 2);
    assert_eq!(
        records[before + 1]["receipt"],
        "discussion.attempt.reserved"
    );
    assert_eq!(records[before]["at_ms"], records[before + 1]["at_ms"]);
}

#[test]
fn a_clock_behind_the_ledger_never_writes_a_smaller_at_ms() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    env.advance(-50_000);
    env.wake(&dsc, "agent-b", &root);
    let records = env.records();
    let times: Vec<i64> = records
        .iter()
        .map(|r| r["at_ms"].as_i64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
}

#[test]
fn show_without_receipts_drops_the_arrays() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "result", true);
    let with = env.show(&dsc);
    let root_receipts = with["transcript"][0]["receipts"].as_array().unwrap();
    let kinds: Vec<&str> = root_receipts
        .iter()
        .map(|r| r["receipt"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "discussion.attempt.reserved",
            "discussion.attempt.completed"
        ]
    );
    let reply_receipts = with["transcript"][1]["receipts"].as_array().unwrap();
    assert_eq!(reply_receipts.len(), 1);
    assert_eq!(reply_receipts[0]["receipt"], "discussion.attempt.completed");
    let without = env.ok(&["show", &dsc, "--no-receipts"]);
    assert!(without["transcript"][0].get("receipts").is_none());
    assert!(without["transcript"][1].get("receipts").is_none());
}
