//! The ledger-wide commands: `fleet`, `kill-switch` (and what it blocks).

use crate::common::*;
use serde_json::json;

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
