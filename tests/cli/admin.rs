//! The ledger-wide commands: `fleet`, `kill-switch` (and what it blocks).

use crate::common::*;
use serde_json::{Value, json};

#[test]
fn kill_switch_blocks_writes_but_never_reads() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let state = env.ok(&["kill-switch", "on", "--reason", "runaway"]);
    assert_eq!(state["engaged"], true);
    assert_eq!(state["reason"], "runaway");
    assert_eq!(state["changed_by"], "tester");
    env.fails(&ask_args(&[]), "kill_switch_engaged", 6);
    env.fails(
        &wake_argv("agent-b", &dsc, &root, &[], false),
        "kill_switch_engaged",
        6,
    );
    assert_eq!(env.status(&dsc), "open");
    assert_eq!(env.ok(&["kill-switch"])["engaged"], true);
    assert_eq!(env.ok(&["kill-switch", "off"])["engaged"], false);
    env.wake(&dsc, "agent-b", &root);
}

#[test]
fn fleet_membership_is_idempotent() {
    let env = Env::new();
    env.ok(&["fleet", "add", "f1", "a", "b"]);
    let before = env.ledger_bytes();
    let v = env.ok(&["fleet", "add", "f1", "b", "a"]);
    assert_eq!(v["agents"], json!(["a", "b"]));
    assert_eq!(env.ledger_bytes(), before, "nothing to record twice");
    env.ok(&["fleet", "add", "f2", "c"]);
    let list = env.ok(&["fleet", "list"]);
    assert_eq!(
        list,
        json!({"fleets":[{"fleet_id":"f1","agents":["a","b"]},{"fleet_id":"f2","agents":["c"]}]})
    );
    env.ok(&["fleet", "remove", "f2", "c"]);
    env.fails(&["fleet", "list", "f2"], "unknown_fleet", 4);
}

/// A discussion `from` → `to` in `fleet`: its id and root.
fn asked(env: &Env, from: &str, to: &str, fleet: &str) -> (String, String) {
    let out = env.ok(&[
        "ask",
        "--from",
        from,
        "--to",
        to,
        "--fleet",
        fleet,
        "--payload",
        r#"{"body":"?"}"#,
    ]);
    (
        out["discussion_id"].as_str().unwrap().to_owned(),
        out["root_message_id"].as_str().unwrap().to_owned(),
    )
}

/// The scope a switch's refusal of `args` names (`None`: it went
/// through); the ledger unchanged by a refusal.
fn refused_by(env: &Env, args: &[&str]) -> Option<Value> {
    let before = env.ledger_bytes();
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = env.run(&all);
    if out.status == 0 {
        return None;
    }
    assert_eq!(out.status, 6, "{args:?}: {}", out.stderr);
    assert_eq!(env.ledger_bytes(), before);
    let error = out.error();
    assert_eq!(error["code"], "kill_switch_engaged", "{error}");
    assert!(error["details"]["reason"].is_string(), "{error}");
    Some(error["details"]["scope"].clone())
}

/// A discussion `from` → `to` with `to`'s turn reserved (for a reply),
/// and another with its head free (for a wake).
struct Case {
    from: &'static str,
    to: &'static str,
    fleet: &'static str,
    replying: (String, String, String),
    waking: (String, String),
}

impl Case {
    fn new(env: &Env, from: &'static str, to: &'static str, fleet: &'static str) -> Case {
        let (dsc, root) = asked(env, from, to, fleet);
        let att = env.wake(&dsc, to, &root);
        Case {
            from,
            to,
            fleet,
            replying: (dsc, root, att),
            waking: asked(env, from, to, fleet),
        }
    }

    /// Which of ask, wake and reply a switch refuses, by the scope named.
    fn refusals(&self, env: &Env) -> [Option<Value>; 3] {
        let (dsc, root, att) = &self.replying;
        let (free, free_root) = &self.waking;
        [
            refused_by(
                env,
                &[
                    "ask",
                    "--from",
                    self.from,
                    "--to",
                    self.to,
                    "--fleet",
                    self.fleet,
                    "--payload",
                    "{}",
                ],
            ),
            refused_by(env, &wake_argv(self.to, free, free_root, &[], false)),
            refused_by(env, &reply_args(dsc, self.to, att, root, "result", "{}")),
        ]
    }
}

#[test]
fn each_scope_refuses_exactly_what_it_covers() {
    let env = Env::new();
    env.ok(&[
        "fleet",
        "add",
        "fleet-alpha",
        "agent-a",
        "agent-b",
        "agent-c",
    ]);
    env.ok(&["fleet", "add", "fleet-beta", "agent-a", "agent-d"]);
    let none: [Option<Value>; 3] = [None, None, None];
    let all = |scope: Value| [Some(scope.clone()), Some(scope.clone()), Some(scope)];
    // Each case is made before its switch (a wake under it would be
    // refused) and used once (what goes through changes it).
    let cases = || {
        (
            Case::new(&env, "agent-a", "agent-b", "fleet-alpha"),
            Case::new(&env, "agent-d", "agent-a", "fleet-beta"),
            Case::new(&env, "agent-c", "agent-b", "fleet-alpha"),
        )
    };
    // The fleet's switch: asks in it, wakes and replies in its discussions.
    let (a_to_b, d_to_a, c_to_b) = cases();
    env.ok(&[
        "kill-switch",
        "on",
        "--fleet",
        "fleet-alpha",
        "--reason",
        "fleet loop",
    ]);
    assert_eq!(a_to_b.refusals(&env), all(json!({"fleet": "fleet-alpha"})));
    assert_eq!(c_to_b.refusals(&env), all(json!({"fleet": "fleet-alpha"})));
    assert_eq!(d_to_a.refusals(&env), none);
    env.ok(&["kill-switch", "off", "--fleet", "fleet-alpha"]);
    // The agent's switch: everything it takes part in, in any fleet.
    let (a_to_b, d_to_a, c_to_b) = cases();
    env.ok(&[
        "kill-switch",
        "on",
        "--agent",
        "agent-a",
        "--reason",
        "loops",
    ]);
    assert_eq!(a_to_b.refusals(&env), all(json!({"agent": "agent-a"})));
    assert_eq!(d_to_a.refusals(&env), all(json!({"agent": "agent-a"})));
    assert_eq!(c_to_b.refusals(&env), none);
    env.ok(&["kill-switch", "off", "--agent", "agent-a"]);
    // The discussion's switch (given by a prefix, written whole): wakes
    // and replies in it, no ask.
    let (a_to_b, d_to_a, _) = cases();
    let (dsc, _, _) = &a_to_b.replying;
    let (free, _) = &a_to_b.waking;
    env.ok(&[
        "kill-switch",
        "on",
        "--discussion",
        &dsc[..dsc.len() - 4],
        "--reason",
        "this one",
    ]);
    env.ok(&[
        "kill-switch",
        "on",
        "--discussion",
        free,
        "--reason",
        "this one too",
    ]);
    let status = env.ok(&["kill-switch", "status"]);
    assert_eq!(
        status["scopes"][0]["scope"],
        json!({"discussion": dsc}),
        "written whole"
    );
    assert_eq!(
        a_to_b.refusals(&env),
        [
            None,
            Some(json!({"discussion": free})),
            Some(json!({"discussion": dsc}))
        ]
    );
    assert_eq!(d_to_a.refusals(&env), none);
    env.ok(&["kill-switch", "off", "--discussion", dsc]);
    env.ok(&["kill-switch", "off", "--discussion", free]);
    assert_eq!(env.ok(&["kill-switch", "status"])["scopes"], json!([]));
    // Released, everything goes through.
    let (a_to_b, _, _) = cases();
    assert_eq!(a_to_b.refusals(&env), none);
}

#[test]
fn switches_are_independent_and_a_refusal_names_the_first_that_covers_it() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    env.ok(&[
        "kill-switch",
        "on",
        "--agent",
        "agent-b",
        "--reason",
        "b loops",
    ]);
    env.ok(&[
        "kill-switch",
        "on",
        "--fleet",
        "fleet-alpha",
        "--reason",
        "alpha",
    ]);
    env.ok(&["kill-switch", "on", "--reason", "everything"]);
    let order = |expected: Value| {
        let error = env.fails(
            &wake_argv("agent-b", &dsc, &root, &[], false),
            "kill_switch_engaged",
            6,
        );
        assert_eq!(error["details"]["scope"], expected, "{error}");
    };
    // Global, then the fleet, then the asker, the peer, the discussion.
    order(json!("global"));
    let status = env.ok(&["kill-switch", "status"]);
    assert_eq!(status["engaged"], true);
    assert_eq!(status["scopes"].as_array().unwrap().len(), 2);
    // Releasing the global one leaves the others as they are.
    env.ok(&["kill-switch", "off"]);
    order(json!({"fleet": "fleet-alpha"}));
    env.ok(&["kill-switch", "off", "--fleet", "fleet-alpha"]);
    order(json!({"agent": "agent-b"}));
    // The words of the help (and the console) are taken too.
    env.ok(&[
        "kill-switch",
        "engage",
        "--fleet",
        "fleet-alpha",
        "--reason",
        "again",
    ]);
    order(json!({"fleet": "fleet-alpha"}));
    env.ok(&["kill-switch", "release", "--fleet", "fleet-alpha"]);
    order(json!({"agent": "agent-b"}));
    // For a person, "off" is said of the global switch only.
    let said = env.run(&["kill-switch"]).stdout;
    assert!(
        said.starts_with("global kill-switch off; 1 scoped switch engaged:\n  agent agent-b HALTED: b loops (since "),
        "{said}"
    );
    // Rows say it, in JSON and for a person; reading is never blocked.
    let list = env.ok(&["list"]);
    let halted = &list["discussions"][0]["halted"];
    assert_eq!(halted["scope"], json!({"agent": "agent-b"}), "{list}");
    assert_eq!(halted["reason"], "b loops");
    assert_eq!(halted["by"], "tester");
    assert!(halted["since"].is_string());
    assert_eq!(
        env.ok(&["inbox", "--agent", "agent-b"])["discussions"][0]["halted"],
        *halted
    );
    assert_eq!(env.show(&dsc)["halted"], *halted);
    let human = env.run(&["list"]).stdout;
    assert!(human.contains("open HALTED (agent)"), "{human}");
    let shown = env.run(&["show", &dsc]).stdout;
    assert!(
        shown.contains("HALTED by the kill-switch of agent agent-b: b loops"),
        "{shown}"
    );
    env.ok(&["kill-switch", "off", "--agent", "agent-b"]);
    assert!(env.show(&dsc)["halted"].is_null());
    assert!(env.ok(&["list"])["discussions"][0]["halted"].is_null());
    env.wake(&dsc, "agent-b", &root);
    // A discussion that does not exist is refused, not halted.
    env.fails(
        &[
            "kill-switch",
            "on",
            "--discussion",
            "dsc_0000000000000000000000000000dead",
            "--reason",
            "x",
        ],
        "unknown_discussion",
        4,
    );
    // Two scopes at once are a usage error; an empty reason is refused.
    let out = env.run(&[
        "kill-switch",
        "on",
        "--agent",
        "a",
        "--fleet",
        "f",
        "--reason",
        "x",
    ]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    env.fails(
        &["kill-switch", "on", "--agent", "agent-a", "--reason", " "],
        "invalid_argument",
        3,
    );
    env.fails(
        &["kill-switch", "on", "--agent", "not an id", "--reason", "x"],
        "invalid_id",
        3,
    );
}

#[test]
fn deadlines_run_on_while_halted_and_switch_changes_are_events() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "1000"]);
    env.wake(&dsc, "agent-b", &root);
    env.ok(&[
        "kill-switch",
        "on",
        "--discussion",
        &dsc,
        "--reason",
        "hold",
    ]);
    env.advance(2_000);
    assert_eq!(env.status(&dsc), "deadman");
    // A terminal discussion is not shown as halted.
    assert!(!env.run(&["list"]).stdout.contains("HALTED"));
    let events = env.run(&["--json", "events"]).stdout;
    let switch: Vec<Value> = events
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["kind"] == "kill_switch")
        .collect();
    assert_eq!(switch.len(), 1);
    assert_eq!(switch[0]["scope"], json!({"discussion": dsc}));
    assert_eq!(switch[0]["engaged"], true);
    let human = env.run(&["events"]).stdout;
    assert!(
        human.contains(&format!("kill-switch of discussion {dsc} ENGAGED: hold")),
        "{human}"
    );
}

#[test]
fn a_switch_must_name_something_left_to_move() {
    let mut env = Env::new();
    env.fleet();
    // Mistyped names halt nothing: refused (and nothing written).
    let error = env.fails(
        &[
            "kill-switch",
            "on",
            "--fleet",
            "fleet-alpah",
            "--reason",
            "x",
        ],
        "unknown_fleet",
        4,
    );
    assert_eq!(error["details"]["fleet_id"], "fleet-alpah", "{error}");
    let error = env.fails(
        &["kill-switch", "on", "--agent", "agent-z", "--reason", "x"],
        "not_in_fleet",
        4,
    );
    assert_eq!(error["details"]["agent_id"], "agent-z", "{error}");
    // Releasing is never refused (a switch an earlier version let in).
    env.ok(&["kill-switch", "off", "--fleet", "fleet-alpah"]);
    // A fleet emptied since, and agents removed since, still have a
    // discussion that can move: their switches are taken, and hold it.
    let (dsc, root) = env.ask(&["--timeout-ms", "60000"]);
    env.ok(&[
        "fleet",
        "remove",
        "fleet-alpha",
        "agent-a",
        "agent-b",
        "agent-c",
    ]);
    env.fails(&["fleet", "list", "fleet-alpha"], "unknown_fleet", 4);
    for scope in [["--fleet", "fleet-alpha"], ["--agent", "agent-a"]] {
        env.ok(&["kill-switch", "on", scope[0], scope[1], "--reason", "x"]);
        let refused = env.fails(
            &wake_argv("agent-b", &dsc, &root, &[], false),
            "kill_switch_engaged",
            6,
        );
        assert_eq!(
            refused["details"]["scope"],
            json!({scope[0].trim_start_matches("--"): scope[1]}),
            "{refused}"
        );
        env.ok(&["kill-switch", "off", scope[0], scope[1]]);
    }
    // Once it has ended, nothing is left to halt.
    // (A pinned clock runs on from its pin within each command.)
    env.advance(61_000);
    assert_eq!(env.status(&dsc), "expired");
    env.fails(
        &[
            "kill-switch",
            "on",
            "--fleet",
            "fleet-alpha",
            "--reason",
            "x",
        ],
        "unknown_fleet",
        4,
    );
    env.fails(
        &["kill-switch", "on", "--agent", "agent-a", "--reason", "x"],
        "not_in_fleet",
        4,
    );
    // Nor in the discussion itself.
    let error = env.fails(
        &["kill-switch", "on", "--discussion", &dsc, "--reason", "x"],
        "discussion_terminal",
        5,
    );
    assert_eq!(error["details"]["status"], "expired", "{error}");
    env.ok(&["kill-switch", "off", "--discussion", &dsc]);
}

#[test]
fn a_quota_for_an_agent_nothing_knows_is_refused_unless_asked_for() {
    let env = Env::new();
    env.fleet();
    // A typo would leave the agent meant without its cap.
    env.refuses_unknown_agent(&["quota", "set", "5", "--agent", "agent-bb"], "agent-bb");
    // Asked for, it is set: an agent may get its cap before it joins.
    let set = env.ok(&[
        "quota",
        "set",
        "--tokens-per-hour",
        "1000",
        "--agent",
        "agent-new",
        "--allow-unknown-agent",
    ]);
    let agents = set["agents"].as_array().unwrap();
    assert!(
        agents
            .iter()
            .any(|a| a["agent_id"] == "agent-new" && a["tokens_per_hour"] == 1000),
        "{set}"
    );
    // Only with an agent; an agent in a fleet needs no leave.
    let out = env.run(&["quota", "set", "5", "--allow-unknown-agent"]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    env.ok(&["quota", "set", "5", "--agent", "agent-b"]);
    // An agent removed from its fleet keeps its open discussion, and its
    // quota can still be set for the wakes in it.
    env.ask(&[]);
    env.ok(&["fleet", "remove", "fleet-alpha", "agent-b"]);
    env.ok(&["quota", "set", "3", "--agent", "agent-b"]);
}
