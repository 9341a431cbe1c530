//! `discuss list` and `discuss inbox`: filters, order, the head to wake
//! on, ids only (`-q`), and rows on a terminal and in a pipe.

use crate::common::*;
use serde_json::json;

#[test]
fn list_filters_and_orders_newest_first_without_writing() {
    let mut env = Env::new();
    let (first, root) = env.discussion(&[]);
    env.advance(1_000);
    let (second, _) = env.discussion(&[]);
    env.advance(1_000);
    let att = env.wake(&first, "agent-b", &root);
    env.reply(&first, "agent-b", &att, &root, "result", true);
    let before = env.ledger_bytes();
    let all = env.ok(&["list"]);
    let ids: Vec<&str> = all["discussions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["discussion_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [first.as_str(), second.as_str()],
        "the closed one was updated last"
    );
    let row = &all["discussions"][0];
    assert_eq!(row["status"], "closed");
    assert_eq!(row["participants"], json!(["agent-a", "agent-b"]));
    assert_eq!(row["turns_used"], 2);
    assert_eq!(row["max_turns"], 4);
    assert_eq!(row["head_to_agent_id"], "agent-a");
    assert_eq!(row["escalated"], false);
    assert_eq!(row["fleet_id"], "fleet-alpha");
    let open = env.ok(&["list", "--status", "open"]);
    assert_eq!(open["discussions"].as_array().unwrap().len(), 1);
    let terminal = env.ok(&["list", "--status", "terminal"]);
    assert_eq!(terminal["discussions"][0]["discussion_id"], first.as_str());
    assert_eq!(
        env.ok(&["list", "--agent", "agent-c"])["discussions"],
        json!([])
    );
    assert_eq!(
        env.ok(&["list", "--fleet", "fleet-beta"])["discussions"],
        json!([])
    );
    env.fails(&["list", "--status", "sleeping"], "invalid_argument", 3);
    assert_eq!(env.ledger_bytes(), before, "list writes nothing");
}

#[test]
fn inbox_shows_what_an_agent_could_be_woken_for_and_writes_nothing() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    env.advance(1);
    let (busy, busy_root) = env.discussion(&[]);
    let attempt = env.wake(&busy, "agent-b", &busy_root);
    let before = env.ledger_bytes();
    let inbox = env.ok(&["inbox", "--agent", "agent-b"]);
    let rows = inbox["discussions"].as_array().unwrap();
    let ids: Vec<&str> = rows
        .iter()
        .map(|d| d["discussion_id"].as_str().unwrap())
        .collect();
    let mut expected = [busy.as_str(), dsc.as_str()];
    expected.sort_unstable();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted, expected,
        "open discussions addressed to agent-b, and its live turn"
    );
    // The live turn's row carries what a reply needs.
    let busy_row = rows
        .iter()
        .find(|r| r["discussion_id"] == busy.as_str())
        .unwrap();
    assert_eq!(busy_row["status"], "active");
    assert_eq!(busy_row["live_attempt_id"], attempt.as_str());
    let shown = env.show(&busy);
    assert_eq!(
        busy_row["live_attempt_deadline_at"],
        shown["attempts"][0]["deadline_at"]
    );
    let open_row = rows
        .iter()
        .find(|r| r["discussion_id"] == dsc.as_str())
        .unwrap();
    assert_eq!(open_row["live_attempt_id"], serde_json::Value::Null);
    assert_eq!(
        open_row["live_attempt_deadline_at"],
        serde_json::Value::Null
    );
    // list carries the same fields.
    let listed = env.ok(&["list", "--status", "active"]);
    assert_eq!(
        listed["discussions"][0]["live_attempt_id"],
        attempt.as_str()
    );
    assert_eq!(
        env.ok(&["inbox", "--agent", "agent-a"])["discussions"],
        json!([])
    );
    assert_eq!(
        env.ledger_bytes(),
        before,
        "inbox writes nothing and wakes nothing"
    );
    assert_eq!(env.status(&dsc), "open");
    // Once the turn lapses it is no one's to answer.
    env.advance(61_000);
    let inbox = env.ok(&["inbox", "--agent", "agent-b"]);
    assert_eq!(inbox["discussions"].as_array().unwrap().len(), 1);
    assert_eq!(inbox["discussions"][0]["discussion_id"], dsc.as_str());
    assert_eq!(env.status(&busy), "deadman");
    let _ = root;
}

/// Above 1,000 rows `list` prints plain aligned columns as it goes rather
/// than laying out a boxed table in memory; `--json` is one object still.
#[test]
fn a_long_list_is_plain_aligned_columns() {
    use discuss::engine::{AskRequest, Stamp, plan_ask, plan_fleet};
    use discuss::global::Global;
    use discuss::record::Record;
    let env = Env::new();
    let stamp = Stamp {
        at_ms: T0,
        by: "tester".into(),
        token_id: None,
    };
    let mut global = Global::default();
    let mut lines = String::new();
    let mut prev = discuss::record::chain::before_first_line();
    let fleet = plan_fleet(
        &global,
        discuss::record::FleetOp::Add,
        "fleet-alpha",
        &["agent-a".into(), "agent-b".into()],
        &stamp,
    );
    fleet.iter().for_each(|r| global.apply(r));
    lines.push_str(&Record::operation_lines(&fleet, &mut prev));
    for _ in 0..1_001 {
        let request = AskRequest::new(
            "agent-a",
            &["agent-b".into()],
            "fleet-alpha",
            "{}",
            4,
            300_000,
            60_000,
            false,
        )
        .unwrap();
        let (records, _) = plan_ask(&global, &request, &stamp).unwrap();
        lines.push_str(&Record::operation_lines(&records, &mut prev));
    }
    env.append_raw(&lines);
    let out = env.run(&["list"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let rows: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(rows.len(), 1 + 1_001);
    assert!(rows[0].starts_with("discussion  "), "{}", rows[0]);
    assert!(!out.stdout.contains('│'), "no box drawing");
    // Every column starts where its header does.
    let status_at = rows[0].find("status").unwrap();
    assert!(
        rows[1..]
            .iter()
            .all(|r| r[status_at..].starts_with("open "))
    );
    let json = env.ok(&["list"]);
    assert_eq!(json["discussions"].as_array().unwrap().len(), 1_001);
}

#[test]
fn rows_carry_the_head_to_wake_on_and_quiet_prints_only_ids() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    // A driver wakes straight from its inbox: the head is in the row.
    let inbox = env.ok(&["inbox", "--agent", "agent-b"]);
    assert_eq!(inbox["discussions"][0]["head_message_id"], root.as_str());
    let listed = env.ok(&["list"]);
    assert_eq!(listed["discussions"][0]["head_message_id"], root.as_str());
    // -q: the new discussion, the new attempt, one listed id a line.
    let mut ask = ASK_A_TO_B.to_vec();
    ask.extend([r#"{"body":"q"}"#, "-q"]);
    let out = env.run(&ask);
    assert_eq!(out.status, 0);
    let second = out.stdout.trim_end().to_owned();
    assert!(
        second.starts_with("dsc_") && !second.contains('\n'),
        "{:?}",
        out.stdout
    );
    let out = env.run(&wake_argv("agent-b", &dsc, &root, &["-q"], false));
    assert!(
        out.stdout.starts_with("att_") && out.stdout.lines().count() == 1,
        "{:?}",
        out.stdout
    );
    // The rows of `list`, newest first: which is newer depends on the
    // milliseconds each process's clock ran on, so it is read, not assumed.
    let order: String = env.ok(&["list"])["discussions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| format!("{}\n", row["discussion_id"].as_str().unwrap()))
        .collect();
    let mut both = [second.as_str(), dsc.as_str()];
    both.sort_unstable();
    let mut listed: Vec<&str> = order.lines().collect();
    listed.sort_unstable();
    assert_eq!(listed, both);
    let out = env.run(&["list", "--quiet"]);
    assert_eq!(out.stdout, order);
    // The woken turn stays in the inbox until it is answered.
    let out = env.run(&["inbox", "--agent", "agent-b", "-q"]);
    assert_eq!(out.stdout, order);
    // -q wins over --json: ids are what a script asked for.
    let out = env.run(&["--json", "list", "-q"]);
    assert_eq!(out.stdout, order);
}

#[test]
fn list_is_one_line_a_row_at_80_columns_with_or_without_colour() {
    let env = Env::new();
    env.fleet();
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(env.ask(&[]).0);
    }
    let screen = |colour: &str| {
        on_a_terminal(
            &env,
            "xterm",
            &format!("stty cols 80; discuss --color {colour} list"),
        )
    };
    let plain = screen("never");
    let coloured = screen("always");
    assert!(coloured.contains("\u{1b}[36mopen\u{1b}[0m"), "{coloured:?}");
    let strip = |s: &str| s.replace("\u{1b}[36m", "").replace("\u{1b}[0m", "");
    assert_eq!(strip(&coloured), plain, "colour never changes the layout");
    assert_eq!(
        plain.lines().count(),
        1 + ids.len(),
        "one line a row: {plain}"
    );
    for line in plain.lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
    // The shortened ids still name their discussions.
    let first = plain
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    assert!(first.len() < ids[0].len(), "{first}");
    assert_eq!(env.show(&first)["discussion_id"], ids[3].as_str());
    // In a pipe the ids are whole.
    let piped = env.run(&["list"]).stdout;
    assert!(ids.iter().all(|id| piped.contains(id.as_str())), "{piped}");
    // Shortened ids are unique in the whole ledger, not only in the rows
    // shown: with a discussion left out of the list, each still resolves.
    let root = env.show(&ids[0])["head"]["message_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let att = env.wake(&ids[0], "agent-b", &root);
    env.reply(&ids[0], "agent-b", &att, &root, "result", true);
    let open = on_a_terminal(
        &env,
        "xterm",
        "stty cols 60; discuss --color never list --status open",
    );
    let shown: Vec<&str> = open
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.starts_with("dsc_"))
        .collect();
    assert_eq!(shown.len(), 3, "{open}");
    assert!(open.contains("(left out at this width: updated"), "{open}");
    for short in shown {
        assert!(short.len() < 36, "{open}");
        let named = env.show(short)["discussion_id"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            named.starts_with(short) && named != ids[0],
            "{short} named {named}"
        );
    }
}

#[test]
fn the_human_inbox_shows_a_live_turn_with_the_ids_to_reply_with() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let waiting = env.run(&["inbox", "--agent", "agent-b"]).stdout;
    assert!(waiting.contains(&dsc), "{waiting}");
    assert!(!waiting.contains("live turn"), "{waiting}");
    let att = env.wake(&dsc, "agent-b", &root);
    let live = env.run(&["inbox", "--agent", "agent-b"]).stdout;
    assert!(
        live.contains(&format!(
            "live turn of agent-b in {dsc}: --attempt {att} --reply-to {root}, until"
        )),
        "{live}"
    );
    // `list` keeps to its rows.
    assert!(!env.run(&["list"]).stdout.contains("live turn"));
}
