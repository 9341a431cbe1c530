//! `discuss events`: global records with their state, `--after` a cursor,
//! a ledger that changed under a follower, a database restarted under one.

use crate::common::postgres::Cluster;
use crate::common::*;
use serde_json::Value;
use std::io::BufRead;
use std::process::Command;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn events(env: &Env, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["--json", "events"];
    all.extend_from_slice(args);
    let out = env.run(&all);
    assert_eq!(out.status, 0, "{}", out.stderr);
    out.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// An incident can be audited: a halt and its release, fleet changes and
/// quotas each carry their state, in JSON and on the human line.
#[test]
fn global_records_carry_their_state() {
    let env = Env::new();
    env.ok(&["fleet", "add", "fleet-alpha", "agent-a"]);
    env.ok(&["fleet", "remove", "fleet-alpha", "agent-a"]);
    env.ok(&["kill-switch", "on", "--reason", "runaway loop"]);
    env.ok(&["kill-switch", "off"]);
    env.ok(&[
        "quota",
        "set",
        "7",
        "--agent",
        "agent-b",
        "--allow-unknown-agent",
    ]);
    env.ok(&["quota", "set", "12"]);
    let all = events(&env, &[]);
    assert_eq!(all.len(), 6);
    assert_eq!(
        (&all[0]["op"], &all[0]["fleet_id"], &all[0]["agent_id"]),
        (&"add".into(), &"fleet-alpha".into(), &"agent-a".into())
    );
    assert_eq!(all[1]["op"], "remove");
    assert_eq!(
        (&all[2]["engaged"], &all[2]["reason"]),
        (&true.into(), &"runaway loop".into())
    );
    assert_eq!(
        (&all[3]["engaged"], &all[3]["reason"]),
        (&false.into(), &Value::Null)
    );
    assert_eq!(
        (&all[4]["agent_id"], &all[4]["wakes_per_hour"]),
        (&"agent-b".into(), &7.into())
    );
    assert_eq!(
        (&all[5]["agent_id"], &all[5]["wakes_per_hour"]),
        (&Value::Null, &12.into())
    );
    let human = env.run(&["events"]).stdout;
    let lines: Vec<&str> = human.lines().collect();
    assert!(
        lines[0].contains("fleet add agent-a in fleet-alpha"),
        "{human}"
    );
    assert!(
        lines[1].contains("fleet remove agent-a in fleet-alpha"),
        "{human}"
    );
    assert!(
        lines[2].contains("kill-switch ENGAGED: runaway loop"),
        "{human}"
    );
    assert!(lines[3].contains("kill-switch released"), "{human}");
    assert!(
        lines[4].contains("quota 7 wakes/hour for agent-b"),
        "{human}"
    );
    assert!(
        lines[5].contains("quota 12 wakes/hour for every agent"),
        "{human}"
    );
}

/// `--after CURSOR` resumes exactly: the records after that line, with the
/// statuses a stream from the start shows for them.
#[test]
fn after_a_cursor_is_exactly_the_rest_of_the_stream() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "question", false);
    env.ask(&[]);
    // Operations of two lines (root and reservation; reply and receipt),
    // so some cursors fall inside one.
    env.ask(&["--wake-peer"]);
    let (other, other_root) = env.ask(&[]);
    let other_att = env.wake(&other, "agent-b", &other_root);
    env.reply(&other, "agent-b", &other_att, &other_root, "result", true);
    let all = events(&env, &[]);
    assert!(env.records().iter().any(|r| r.get("op_id").is_some()));
    for cursor in 0..=all.len() {
        let rest = events(&env, &["--after", &cursor.to_string()]);
        assert_eq!(rest, all[cursor..], "after {cursor}");
    }
    let of_one = events(&env, &["--discussion", &dsc]);
    let cut = of_one[1]["line"].as_u64().unwrap().to_string();
    assert_eq!(
        events(&env, &["--discussion", &dsc, "--after", &cut]),
        of_one[2..]
    );
    let out = env.run(&["--json", "events", "--after", "-1"]);
    assert_eq!(out.status, 2, "a cursor is a line number");
    // A long ledger's records are parsed on a second core while they are
    // streamed (a file's), or the next batch is read while this one is
    // printed (a database's, here four rows a batch): the very same
    // stream, from any cursor.
    let ahead = [
        ("DISCUSS_AHEAD_FROM_BYTES", "0"),
        ("DISCUSS_STREAM_BATCH", "4"),
    ];
    for cursor in 0..=all.len() {
        let after = cursor.to_string();
        let on_one = env.run(&["--json", "events", "--after", &after]);
        let on_two = env.run_with(&ahead, &["--json", "events", "--after", &after], "");
        assert_eq!(
            (on_two.status, &on_two.stdout),
            (0, &on_one.stdout),
            "after {cursor}"
        );
    }
}

fn follower(env: &Env) -> std::process::Child {
    env.command_std()
        .args(["--json", "events", "--follow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Reads the follower's lines until `done` says enough, within 20 s.
fn read_until(reader: &mut impl BufRead, mut done: impl FnMut(&[Value]) -> bool) -> Vec<Value> {
    let until = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while !done(&seen) {
        assert!(Instant::now() < until, "the follower printed only {seen:?}");
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        seen.push(serde_json::from_str(&line).unwrap());
    }
    seen
}

/// A ledger that got shorter, or was replaced, under a follower stops it
/// with a clear error: it never prints positions that no longer hold.
#[test]
fn a_follower_stops_when_its_ledger_shrinks_or_is_replaced() {
    for replace in [false, true] {
        let env = Env::file();
        env.fleet();
        let mut child = follower(&env);
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        for _ in 0..6 {
            env.ask(&[]);
        }
        let seen = read_until(&mut out, |seen| seen.len() == 9);
        let lines: Vec<u64> = seen.iter().map(|e| e["line"].as_u64().unwrap()).collect();
        assert_eq!(lines, (1..=9).collect::<Vec<_>>());
        // Cut to its first five lines (or swap in such a copy), then let
        // it grow past where the follower was.
        let bytes = env.ledger_bytes();
        let five: usize = bytes
            .split_inclusive(|&b| b == b'\n')
            .take(5)
            .map(<[u8]>::len)
            .sum();
        if replace {
            let copy = env.dir.path().join("copy.jsonl");
            std::fs::write(&copy, &bytes[..five]).unwrap();
            std::fs::rename(&copy, env.ledger()).unwrap();
        } else {
            std::fs::OpenOptions::new()
                .write(true)
                .open(env.ledger())
                .unwrap()
                .set_len(five as u64)
                .unwrap();
        }
        for _ in 0..8 {
            env.ask(&[]);
        }
        let status = child.wait().unwrap();
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(1), "replace {replace}: {stderr}");
        let error: Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
        assert_eq!(error["error"]["code"], "ledger_unreadable", "{stderr}");
        let what = if replace { "replaced" } else { "truncated" };
        assert!(
            error["error"]["message"].as_str().unwrap().contains(what),
            "{stderr}"
        );
        // Nothing after the change was printed with a wrong position.
        assert!(rest.is_empty(), "replace {replace}: {rest}");
    }
}

/// `events --follow` on PostgreSQL rides out a server restart: it says so
/// on stderr, reconnects, and carries on from its position, every record
/// once.
#[test]
fn a_follower_rides_out_a_database_restart() {
    let Some(cluster) = Cluster::start(&[]) else {
        return;
    };
    let mut env = Env::file();
    env.pg = Some(cluster.database());
    env.fleet();
    let mut child = follower(&env);
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    // Its notes, a line at a time, as it writes them.
    let (notes, noted) = std::sync::mpsc::channel::<String>();
    let errors = std::io::BufReader::new(child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        for line in errors.lines().map_while(Result::ok) {
            let _ = notes.send(line);
        }
    });
    env.ask(&[]);
    read_until(&mut out, |seen| seen.len() == 4);
    cluster.stop_server();
    // The server comes back once the follower has found it gone.
    let mut stderr = String::new();
    while !stderr.contains("retrying") {
        let line = noted
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("the follower never said it was retrying: {stderr}"));
        stderr.push_str(&line);
        stderr.push('\n');
    }
    cluster.start_server();
    env.ask(&[]);
    env.ask(&[]);
    let seen = read_until(&mut out, |seen| seen.len() == 2);
    let lines: Vec<u64> = seen.iter().map(|e| e["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [5, 6], "carried on from its position");
    assert!(child.try_wait().unwrap().is_none(), "still following");
    child.kill().unwrap();
    child.wait().unwrap();
    reader.join().unwrap();
    stderr.extend(noted.try_iter().map(|line| line + "\n"));
    assert!(stderr.contains("retrying"), "{stderr}");
    assert!(stderr.contains("answers again"), "{stderr}");
    let exported = env.ledger_bytes();
    assert_eq!(String::from_utf8_lossy(&exported).lines().count(), 6);
    let _ = &mut env;
}

#[test]
fn events_show_each_record_with_its_status_and_follow_new_ones() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "result", true);
    let before = env.ledger_bytes();
    let out = env.run(&["--json", "events", "--discussion", &dsc]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let events: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let statuses: Vec<&str> = events
        .iter()
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["open", "active", "closed", "closed"]);
    assert_eq!(events[0]["type"], "ask");
    assert_eq!(events[1]["receipt"], "discussion.attempt.reserved");
    assert_eq!(events[1]["attempt_id"], att.as_str());
    assert_eq!(events[3]["receipt"], "discussion.attempt.completed");
    assert_eq!(env.ledger_bytes(), before, "reading writes nothing");
    // Everything, fleet records included, in ledger order.
    let all = env.run(&["--json", "events"]).stdout;
    let lines: Vec<u64> = all
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["line"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(lines, (1..=lines.len() as u64).collect::<Vec<_>>());
    // A discussion let go once settled is read back when a line comes
    // for it later: its status is still derived from its whole history.
    let mut env = env;
    env.advance(10 * 60_000);
    for id in ["rcp_late_1", "rcp_late_2"] {
        env.append_raw(
            &(serde_json::json!({"v":1,"kind":"receipt","id":id,"at_ms":env.now_ms,"by":"other",
                "receipt":"discussion.attempt.started","discussion_id":dsc,"attempt_id":att})
            .to_string()
                + "\n"),
        );
    }
    let late = env.run(&["--json", "events", "--discussion", &dsc]).stdout;
    let late: Vec<serde_json::Value> = late
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(late.len(), 6);
    assert_eq!(late[4]["status"], "invalid", "{:?}", late[4]);
    assert_eq!(late[5]["status"], env.status(&dsc));
    // --follow: a record written meanwhile shows up.
    let mut follower = Command::new(assert_cmd::cargo::cargo_bin("discuss"))
        .env_clear()
        .env("DISCUSS_LEDGER", env.ledger())
        .env("DISCUSS_NOW", env.now_ms.to_string())
        .args(["--json", "events", "--follow", "--agent", "agent-b"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (new, _) = env.ask(&[]);
    let mut reader = std::io::BufReader::new(follower.stdout.take().unwrap());
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut seen = false;
    while !seen {
        assert!(
            std::time::Instant::now() < until,
            "the new record never showed"
        );
        let mut line = String::new();
        std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
        seen = line.contains(&new) && line.contains("\"status\":\"open\"");
    }
    follower.kill().unwrap();
    follower.wait().unwrap();
}

#[test]
fn a_follower_is_told_of_a_deadman_that_no_record_says_within_a_second() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "1000"]);
    env.wake(&dsc, "agent-b", &root);
    let (quiet, _) = env.ask(&[]);
    for json in [true, false] {
        let mut args = vec!["events", "--follow"];
        if json {
            args.insert(0, "--json");
        }
        let mut child = env
            .command_std()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        // The attempt's deadline is a second after the pinned start.
        let told = loop {
            let line = lines.next().expect("the follower goes on").unwrap();
            if json {
                let event: Value = serde_json::from_str(&line).unwrap();
                if event["event"] == "status" {
                    break event.to_string();
                }
            } else if line.contains(&dsc) && line.trim_start().starts_with('-') {
                break line;
            }
        };
        let took = started.elapsed();
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            took < Duration::from_millis(2_500),
            "told {took:?} after the start (the deadline was at 1 s)"
        );
        if json {
            let event: Value = serde_json::from_str(&told).unwrap();
            assert_eq!(event["discussion_id"], dsc.as_str());
            assert_eq!(event["status"], "deadman");
            assert!(event["at"].as_str().unwrap().ends_with('Z'));
            assert_eq!(event.as_object().unwrap().len(), 4, "{event}");
        } else {
            assert!(told.ends_with("deadman"), "{told}");
        }
        // Once: the other discussion is not told of (it is open).
        assert!(!told.contains(&quiet));
    }
}
