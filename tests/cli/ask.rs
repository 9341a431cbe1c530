//! `discuss ask` (the seed's `ask_peer`): its ranges, limits and
//! payloads, and its refusals in the contract's order.

use crate::common::*;
use serde_json::json;

#[test]
fn numeric_ranges_are_checked_just_inside_and_just_outside_both_ends() {
    let env = Env::new();
    env.fleet();
    let cases: [(&str, &str, &str, &str, &str); 3] = [
        ("--max-turns", "1", "2", "32", "33"),
        ("--timeout-ms", "999", "1000", "900000", "900001"),
        ("--turn-timeout-ms", "999", "1000", "300000", "300001"),
    ];
    for (flag, below, min, max, above) in cases {
        // turn-timeout must not exceed timeout: give room for the timeout bounds.
        let pair: &[&str] = match flag {
            "--timeout-ms" => &["--turn-timeout-ms", "1000"],
            _ => &["--timeout-ms", "900000"],
        };
        for ok in [min, max] {
            let mut args = ask_args(&[flag, ok]);
            args.extend_from_slice(pair);
            env.ok(&args);
        }
        for bad in [below, above] {
            let mut args = ask_args(&[flag, bad]);
            args.extend_from_slice(pair);
            let err = env.fails(&args, "out_of_range", 3);
            assert_eq!(err["details"]["value"].to_string(), bad);
        }
    }
    // turn-timeout just above and at the conversation timeout.
    env.fails(
        &ask_args(&["--timeout-ms", "5000", "--turn-timeout-ms", "5001"]),
        "out_of_range",
        3,
    );
    env.ok(&ask_args(&[
        "--timeout-ms",
        "5000",
        "--turn-timeout-ms",
        "5000",
    ]));
    env.fails(&ask_args(&["--max-turns", "-4"]), "out_of_range", 3);
}

#[test]
fn envelope_limit_counts_utf8_bytes_of_the_whole_envelope() {
    let env = Env::new();
    env.fleet();
    // Measure the envelope around an empty string body.
    env.ok(&ask_args(&[])
        .iter()
        .map(|a| if *a == "{}" { r#"{"t":""}"# } else { a })
        .collect::<Vec<_>>());
    let overhead = env.records().last().unwrap()["payload"]
        .as_str()
        .unwrap()
        .len();
    let room = 65_536 - overhead;
    // Fill it with two-byte characters, plus one ASCII byte when odd.
    let fill = |extra: usize| {
        let text = format!("{}{}", "é".repeat(room / 2), "x".repeat(room % 2 + extra));
        json!({ "t": text }).to_string()
    };
    let exact = fill(0);
    let path = env.dir.path().join("body.json");
    std::fs::write(&path, &exact).unwrap();
    let path = path.to_str().unwrap();
    let out = env.ok(&Argv::ask("agent-a", "agent-b")
        .opt("--payload-file", path)
        .words());
    let stored = env.records().last().unwrap()["payload"]
        .as_str()
        .unwrap()
        .len();
    assert_eq!(
        stored, 65_536,
        "the accepted envelope is exactly at the limit"
    );
    assert!(out["discussion_id"].is_string());
    std::fs::write(path, fill(1)).unwrap();
    let err = env.fails(
        &Argv::ask("agent-a", "agent-b")
            .opt("--payload-file", path)
            .words(),
        "payload_too_large",
        3,
    );
    assert_eq!(err["details"]["envelope_bytes"], 65_537);
    // Through stdin too.
    let out = env.run_stdin(
        &[
            "--json",
            "ask",
            "--from",
            "agent-a",
            "--to",
            "agent-b",
            "--fleet",
            "fleet-alpha",
            "--payload-file",
            "-",
        ],
        &exact,
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
}

#[test]
fn ask_state_errors_in_contract_order() {
    let env = Env::new();
    env.fails(&ask_args(&[]), "unknown_fleet", 4);
    env.ok(&["fleet", "add", "fleet-alpha", "agent-a"]);
    let err = env.fails(&ask_args(&[]), "not_in_fleet", 4);
    assert_eq!(err["details"]["agent_ids"], json!(["agent-b"]));
    env.ok(&["kill-switch", "on", "--reason", "maintenance"]);
    // The kill-switch is checked first, before the fleet.
    env.fails(
        &[
            "ask",
            "--from",
            "agent-a",
            "--to",
            "agent-b",
            "--fleet",
            "no-such",
            "--payload",
            "{}",
        ],
        "kill_switch_engaged",
        6,
    );
    env.ok(&["kill-switch", "off"]);
    env.ok(&["fleet", "add", "fleet-alpha", "agent-b"]);
    env.ok(&ask_args(&[]));
    // Removing an agent stops new asks but not discussions under way.
    env.ok(&["fleet", "remove", "fleet-alpha", "agent-b"]);
    env.fails(&ask_args(&[]), "not_in_fleet", 4);
}

#[test]
fn deep_payloads_are_invalid_input_with_a_clear_message() {
    let env = Env::new();
    env.fleet();
    for depth in 118..=131 {
        let body = "[".repeat(depth) + &"]".repeat(depth);
        let mut args = ASK_A_TO_B.to_vec();
        args.push(&body);
        let err = env.fails(&args, "invalid_argument", 3);
        assert_eq!(err["details"]["depth"], depth, "{err}");
        assert!(err["message"].as_str().unwrap().contains("levels deep"));
    }
    // The deepest allowed body goes through ask, show and call alike.
    let body = "[".repeat(100) + &"]".repeat(100);
    let mut args = ASK_A_TO_B.to_vec();
    args.push(&body);
    let dsc = env.ok(&args)["discussion_id"].as_str().unwrap().to_owned();
    assert_eq!(env.show(&dsc)["status"], "open");
    let out = env.run(&[
        "call",
        "get_discussion",
        &format!(r#"{{"discussion_id":"{dsc}"}}"#),
    ]);
    assert_eq!(out.status, 0, "{}", out.stderr);
}

/// A payload's numbers are kept exactly or refused, never changed.
#[test]
fn payload_numbers_are_kept_exactly_or_refused() {
    let env = Env::new();
    env.fleet();
    let ask = |payload: &str| {
        let mut args = ASK_A_TO_B.to_vec();
        args.push(payload);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    for payload in [
        r#"{"n":123456789012345678901234567890}"#,
        r#"{"n":0.1e-400}"#,
        r#"[3.14159265358979323846]"#,
        r#"{"big":18446744073709551616}"#,
    ] {
        let args = ask(payload);
        let err = env.fails(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            "payload_not_json",
            3,
        );
        assert!(
            payload.contains(err["details"]["value"].as_str().unwrap()),
            "{err}"
        );
        assert!(
            err["message"].as_str().unwrap().contains("exactly"),
            "{err}"
        );
    }
    // Beyond a double altogether: the parser itself refuses it.
    let args = ask(r#"{"n":1e400}"#);
    env.fails(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        "payload_not_json",
        3,
    );
    // What a double or a 64-bit integer holds is stored as written.
    let exact = r#"{"i":-9223372036854775808,"u":18446744073709551615,"f":0.1,"g":2.5e-3,"s":"123456789012345678901234567890"}"#;
    let args = ask(exact);
    let asked = env.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let shown = env.show(asked["discussion_id"].as_str().unwrap());
    let body = &shown["transcript"][0]["payload"];
    assert_eq!(body["i"], serde_json::json!(i64::MIN));
    assert_eq!(body["u"], serde_json::json!(u64::MAX));
    assert_eq!(body["f"], serde_json::json!(0.1));
    assert_eq!(body["g"], serde_json::json!(0.0025));
    // Through `call` the same.
    let request = serde_json::json!({"from_agent_id":"agent-a","to_agent_id":"agent-b",
        "fleet_id":"fleet-alpha","payload":"{\"n\":123456789012345678901234567890}"});
    let out = env.run(&["call", "ask_peer", &request.to_string()]);
    assert_eq!(out.status, 3);
    assert_eq!(out.error()["code"], "payload_not_json");
}
