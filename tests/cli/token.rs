//! `discuss token`: issuing refuses a typo and expires by default, and
//! no error ever repeats a token given in place of an id.

use crate::common::*;

/// 90 days in milliseconds: the default life of a token.
const NINETY_DAYS_MS: i64 = 90 * 24 * 3_600_000;

#[test]
fn an_agent_token_is_refused_for_an_agent_in_no_fleet_unless_asked_for() {
    let env = Env::new();
    env.fleet();
    env.refuses_unknown_agent(&["token", "issue", "ghost-agent-typo"], "ghost-agent-typo");
    // Asked for: issued. An operator token names who holds it, no agent.
    let issued = env.ok(&[
        "token",
        "issue",
        "ghost-agent-typo",
        "--allow-unknown-agent",
    ]);
    assert_eq!(issued["agent_id"], "ghost-agent-typo");
    env.ok(&["token", "issue", "ops", "--operator"]);
    env.ok(&["token", "issue", "agent-a"]);
}

#[test]
fn tokens_expire_after_ninety_days_unless_told_otherwise() {
    let env = Env::new();
    env.fleet();
    let issued = env.ok(&["token", "issue", "agent-a"]);
    let list = env.ok(&["token", "list"]);
    let row = list["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["token_id"] == issued["token_id"])
        .unwrap()
        .clone();
    let issued_at = row["issued_at"]
        .as_str()
        .unwrap()
        .parse::<jiff::Timestamp>()
        .unwrap()
        .as_millisecond();
    assert_eq!(row["expires_at"], iso(issued_at + NINETY_DAYS_MS), "{row}");
    let forever = env.ok(&["token", "issue", "agent-a", "--no-expiry"]);
    assert!(forever["expires_at"].is_null(), "{forever}");
    let hour = env.ok(&["token", "issue", "agent-a", "--expires-in-hours", "1"]);
    assert!(hour["expires_at"].as_str().unwrap() >= iso(T0 + 3_600_000).as_str());
    assert!(hour["expires_at"].as_str().unwrap() < iso(T0 + 3_660_000).as_str());
    // Both at once is a usage error.
    let out = env.run(&[
        "token",
        "issue",
        "agent-a",
        "--no-expiry",
        "--expires-in-hours",
        "1",
    ]);
    assert_eq!(out.status, 2, "{}", out.stderr);
}

#[test]
fn a_token_given_to_revoke_in_place_of_its_id_is_never_printed() {
    let env = Env::new();
    env.fleet();
    let token = env
        .run(&["token", "issue", "agent-a"])
        .stdout
        .trim()
        .to_owned();
    assert!(token.starts_with("dsk_"), "{token}");
    let secret = &token[4..];
    for json in [true, false] {
        let mut args = vec!["token", "revoke", token.as_str()];
        if json {
            args.insert(0, "--json");
        }
        let before = env.ledger_bytes();
        let out = env.run(&args);
        assert_eq!(out.status, 3, "{}", out.stderr);
        assert!(out.stderr.contains("invalid_id"), "{}", out.stderr);
        assert!(
            !out.stderr.contains(secret) && !out.stdout.contains(secret),
            "the token was printed: {}",
            out.stderr
        );
        assert!(out.stderr.contains("token list"), "{}", out.stderr);
        assert_eq!(env.ledger_bytes(), before);
    }
    // Anything else that is not an id is not repeated either; a mistyped
    // id is (it is no secret).
    let out = env.run(&["--json", "token", "revoke", "s3cret-value"]);
    assert_eq!(out.status, 3);
    assert!(!out.stderr.contains("s3cret-value"), "{}", out.stderr);
    let err = env.fails(&["token", "revoke", "tok_nosuch"], "unknown_token", 4);
    assert!(
        err["hints"][0].as_str().unwrap().contains("unique start"),
        "{err}"
    );
}

/// `token revoke` takes a unique start of an id, as other ids are taken,
/// and records the whole id; a start that two share is `ambiguous_id`
/// naming them, and one too short to mean anything is no id at all.
#[test]
fn a_token_is_revoked_by_a_unique_start_of_its_id() {
    let env = Env::new();
    env.fleet();
    for _ in 0..8 {
        env.ok(&["token", "issue", "agent-a"]);
    }
    let ids: Vec<String> = env.ok(&["token", "list"])["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["token_id"].as_str().unwrap().to_owned())
        .collect();
    // Ids begin with a time: tokens issued together share a long start.
    let (one, shorter) = (0..ids.len())
        .find_map(|i| {
            let id = &ids[i];
            (8..id.len()).find_map(|n| {
                let start = &id[..n];
                let sharing = ids.iter().filter(|other| other.starts_with(start)).count();
                (sharing == 1).then(|| (id.clone(), start.to_owned()))
            })
        })
        .unwrap();
    let shared = &shorter[..shorter.len() - 1];
    if ids.iter().filter(|id| id.starts_with(shared)).count() > 1 {
        let err = env.fails(&["token", "revoke", shared], "ambiguous_id", 4);
        assert!(
            err["details"]["candidates"].as_array().unwrap().len() > 1,
            "{err}"
        );
    }
    let revoked = env.ok(&["token", "revoke", &shorter]);
    assert_eq!(revoked["tokens"][0]["token_id"], one.as_str(), "{revoked}");
    assert_eq!(revoked["tokens"][0]["state"], "revoked", "{revoked}");
    let record = env
        .records()
        .into_iter()
        .rev()
        .find(|r| r["kind"] == "credential")
        .unwrap();
    assert_eq!(record["token_id"], one.as_str(), "the whole id: {record}");
    env.fails(&["token", "revoke", "tok_"], "invalid_id", 3);
    env.fails(&["token", "revoke", "tok_01a"], "unknown_token", 4);
}

fn iso(ms: i64) -> String {
    let at = jiff::Timestamp::from_millisecond(ms).unwrap();
    format!("{}", at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ"))
}

#[test]
fn token_list_keeps_ids_whole_on_any_terminal_and_tells_how_each_ends() {
    let mut env = Env::new();
    env.fleet();
    let ids: Vec<String> = [
        &["token", "issue", "agent-a"][..],
        &["token", "issue", "ops", "--operator", "--no-expiry"],
        &["token", "issue", "agent-b", "--expires-in-hours", "1"],
        &["token", "issue", "agent-c"],
    ]
    .iter()
    .map(|args| env.ok(args)["token_id"].as_str().unwrap().to_owned())
    .collect();
    env.ok(&["token", "revoke", &ids[3]]);
    // Two hours and half a minute: each command's clock runs on from its
    // pin by the milliseconds it takes, which must not tip a rounding.
    env.advance(2 * 3_600_000 + 30_000);
    let expected = [
        (
            &ids[0],
            "active",
            "agent-a (agent) · issued 2h00m ago by tester · expires in 89d21h",
        ),
        (
            &ids[1],
            "active",
            "ops (operator) · issued 2h00m ago by tester · never expires",
        ),
        (
            &ids[2],
            "expired",
            "agent-b (agent) · issued 2h00m ago by tester · expired 1h00m ago",
        ),
        (
            &ids[3],
            "revoked",
            "agent-c (agent) · issued 2h00m ago by tester · revoked 2h00m ago",
        ),
    ];
    let piped = env.run(&["token", "list"]).stdout;
    for columns in [80usize, 200] {
        let text = on_a_terminal(
            &env,
            "xterm",
            &format!("stty cols {columns}; discuss --color never token list"),
        );
        assert_eq!(
            text, piped,
            "{columns} columns: the same blocks as in a pipe"
        );
        assert!(text.lines().all(|l| l.chars().count() <= columns), "{text}");
    }
    let lines: Vec<&str> = piped.lines().collect();
    assert_eq!(lines.len(), 8, "{piped}");
    for (block, (id, state, told)) in lines.chunks(2).zip(expected) {
        assert_eq!(block[0], format!("{id}  {state}"), "{piped}");
        assert_eq!(block[1], format!("  {told}"), "{piped}");
    }
}
