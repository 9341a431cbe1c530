//! Supervised attempts with real child processes. Turn timeouts are 1-2 s
//! here: the supervisor measures turns with the monotonic clock, so these
//! are the only tests that spend real time.

use crate::common::*;
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> String {
    assert_cmd::cargo::cargo_bin("discuss")
        .display()
        .to_string()
}

fn wake_args<'a>(dsc: &'a str, agent: &'a str, head: &'a str, cmd: &[&'a str]) -> Vec<&'a str> {
    let mut args = wake_argv(agent, dsc, head, &["--kill-grace-ms", "300", "--"], false);
    args.extend_from_slice(cmd);
    args
}

fn supervised(env: &Env, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = env.run(&all);
    let json = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|_| panic!("stdout: {} stderr: {}", out.stdout, out.stderr));
    (out.status, json)
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok()
}

/// Waits (bounded) for an event in the ledger, not for time to pass.
fn wait_for(env: &Env, what: impl Fn(&[Value]) -> bool) {
    let until = Instant::now() + Duration::from_secs(10);
    while !what(&env.records()) {
        assert!(Instant::now() < until, "timed out waiting for the ledger");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn started_pid(env: &Env) -> i32 {
    env.records()
        .iter()
        .find(|r| r["receipt"] == "discussion.attempt.started")
        .unwrap()["pid"]
        .as_i64()
        .unwrap() as i32
}

fn spawn_supervisor(env: &Env, args: &[&str]) -> Child {
    spawn_supervisor_with(env, args, &[])
}

fn spawn_supervisor_with(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Child {
    Command::new(bin())
        .env_clear()
        .env("DISCUSS_LEDGER", env.ledger())
        .env("DISCUSS_NOW", env.now_ms.to_string())
        .env("DISCUSS_ACTOR", "tester")
        .envs(vars.iter().copied())
        .current_dir(env.dir.path())
        .arg("--json")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_child_that_replies_completes_with_the_contract_environment_and_stdin() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "5000"]);
    let script = format!(
        "cat > stdin.json; env | grep '^DISCUSS_' | sort > env.txt; echo noise; {} reply --type result --payload '{{\"body\":\"Yes\"}}' --close",
        bin()
    );
    let (status, out) = supervised(
        &env,
        &wake_args(&dsc, "agent-b", &root, &["sh", "-c", &script]),
    );
    assert_eq!(status, 0, "{out}");
    assert_eq!(out["attempt"]["outcome"], "completed");
    assert_eq!(out["attempt"]["exit_code"], 0);
    assert!(out["attempt"]["reply_message_id"].is_string());
    assert_eq!(env.status(&dsc), "closed");
    let stdin = std::fs::read_to_string(env.dir.path().join("stdin.json")).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&stdin).unwrap(),
        serde_json::json!({"body":"Refactor auth module?"})
    );
    let vars = std::fs::read_to_string(env.dir.path().join("env.txt")).unwrap();
    let att = out["attempt"]["attempt_id"].as_str().unwrap();
    for expected in [
        format!("DISCUSS_ATTEMPT_ID={att}"),
        format!("DISCUSS_DISCUSSION_ID={dsc}"),
        "DISCUSS_AGENT_ID=agent-b".to_owned(),
        format!("DISCUSS_REPLY_TO={root}"),
        "DISCUSS_TURN=2".to_owned(),
        format!("DISCUSS_LEDGER={}", env.ledger().display()),
        format!(
            "DISCUSS_DEADLINE_AT={}",
            out["attempt"]["deadline_at"].as_str().unwrap()
        ),
    ] {
        assert!(
            vars.lines().any(|l| l == expected),
            "{expected} missing from\n{vars}"
        );
    }
    let show = env.show(&dsc);
    assert!(show["attempts"][0]["pid"].as_i64().is_some());
    assert!(show["attempts"][0]["started_at"].is_string());
}

#[test]
fn a_child_that_exits_without_reply_fails_and_is_not_retried() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "5000"]);
    let (status, out) = supervised(
        &env,
        &wake_args(&dsc, "agent-b", &root, &["sh", "-c", "exit 3"]),
    );
    assert_eq!(status, 8);
    assert_eq!(out["attempt"]["outcome"], "failed");
    assert_eq!(out["attempt"]["reason"], "exited_without_reply");
    assert_eq!(out["attempt"]["exit_code"], 3);
    let show = env.show(&dsc);
    assert_eq!(show["status"], "open");
    assert_eq!(show["turns_used"], 2, "the failed turn is charged");
    assert_eq!(
        show["attempts"].as_array().unwrap().len(),
        1,
        "never retried"
    );
}

#[test]
fn a_command_that_cannot_start_is_spawn_failed() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let (status, out) = supervised(
        &env,
        &wake_args(&dsc, "agent-b", &root, &["/no/such/agent"]),
    );
    assert_eq!(status, 8);
    assert_eq!(out["attempt"]["reason"], "spawn_failed");
    assert!(
        out["attempt"]["detail"]
            .as_str()
            .unwrap()
            .contains("No such file"),
        "{out}"
    );
    assert!(
        !env.records()
            .iter()
            .any(|r| r["receipt"] == "discussion.attempt.started")
    );
}

#[test]
fn the_deadline_kills_a_term_ignoring_child_and_its_grandchild() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "1000"]);
    let script = "trap '' TERM; sleep 60 & echo $! > grandchild.pid; sleep 60";
    let started = Instant::now();
    let (status, out) = supervised(
        &env,
        &wake_args(&dsc, "agent-b", &root, &["sh", "-c", script]),
    );
    assert!(started.elapsed() < Duration::from_secs(8));
    assert_eq!(status, 9, "{out}");
    assert_eq!(out["attempt"]["outcome"], "deadman");
    assert_eq!(out["attempt"]["reason"], "deadline");
    assert_eq!(
        out["attempt"]["signal"], 9,
        "TERM was ignored, KILL ended it"
    );
    let child = started_pid(&env);
    let grandchild: i32 = std::fs::read_to_string(env.dir.path().join("grandchild.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!alive(child), "child {child} is gone, not even a zombie");
    assert!(
        !alive(grandchild),
        "grandchild {grandchild} is gone, not even a zombie"
    );
    assert_eq!(env.status(&dsc), "deadman");
    let deadman = env
        .records()
        .iter()
        .filter(|r| r["receipt"] == "discussion.attempt.deadman")
        .count();
    assert_eq!(deadman, 1);
}

#[test]
fn the_kill_switch_during_a_run_kills_the_child() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "20000"]);
    let mut supervisor =
        spawn_supervisor(&env, &wake_args(&dsc, "agent-b", &root, &["sleep", "60"]));
    wait_for(&env, |r| {
        r.iter()
            .any(|r| r["receipt"] == "discussion.attempt.started")
    });
    env.ok(&["kill-switch", "on", "--reason", "test"]);
    let status = supervisor.wait().unwrap();
    let mut stdout = String::new();
    std::io::Read::read_to_string(supervisor.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert_eq!(status.code(), Some(8));
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["attempt"]["reason"], "kill_switch");
    assert!(!alive(started_pid(&env)));
}

#[test]
fn sigint_to_the_supervisor_ends_the_attempt_as_interrupted() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "20000"]);
    let mut supervisor =
        spawn_supervisor(&env, &wake_args(&dsc, "agent-b", &root, &["sleep", "60"]));
    wait_for(&env, |r| {
        r.iter()
            .any(|r| r["receipt"] == "discussion.attempt.started")
    });
    let pid = rustix::process::Pid::from_child(&supervisor);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let status = supervisor.wait().unwrap();
    assert_eq!(status.code(), Some(8));
    assert!(!alive(started_pid(&env)));
    let show = env.show(&dsc);
    assert_eq!(show["attempts"][0]["state"], "failed");
    assert_eq!(show["attempts"][0]["reason"], "interrupted");
}

#[test]
fn a_supervisor_killed_outright_takes_its_child_along_and_the_attempt_lapses() {
    let mut env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "20000"]);
    let mut supervisor =
        spawn_supervisor(&env, &wake_args(&dsc, "agent-b", &root, &["sleep", "60"]));
    wait_for(&env, |r| {
        r.iter()
            .any(|r| r["receipt"] == "discussion.attempt.started")
    });
    let child = started_pid(&env);
    supervisor.kill().unwrap();
    supervisor.wait().unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while alive(child)
        && std::fs::read_to_string(format!("/proc/{child}/stat")).is_ok_and(|s| !s.contains(") Z "))
    {
        assert!(
            Instant::now() < until,
            "child {child} outlived its supervisor"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(env.status(&dsc), "active", "nothing recorded the end yet");
    env.advance(21_000);
    assert_eq!(env.status(&dsc), "deadman");
}

#[test]
fn a_failed_final_attempt_exhausts_and_escalates_once() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--max-turns", "2"]);
    let (status, _) = supervised(&env, &wake_args(&dsc, "agent-b", &root, &["false"]));
    assert_eq!(status, 8);
    let show = env.show(&dsc);
    assert_eq!(show["status"], "exhausted");
    assert_eq!(show["escalation"]["turns_used"], 2);
    let records = env.records();
    assert_eq!(
        records
            .iter()
            .filter(|r| r["receipt"] == "discussion.escalated")
            .count(),
        1
    );
    let n = records.len();
    assert_eq!(
        records[n - 2]["receipt"],
        "discussion.attempt.failed",
        "in the same write"
    );
    assert_eq!(records[n - 1]["receipt"], "discussion.escalated");
}

#[test]
fn reply_from_stdout_posts_json_or_text_and_refuses_empty_or_oversized_output() {
    let env = Env::new();
    let stdout_wake = |dsc: &str, root: &str, script: &str, close: bool| {
        let mut args = vec![
            "wake",
            "--agent",
            "agent-b",
            "--discussion",
            dsc,
            "--expected-head",
            root,
            "--reply-from-stdout",
        ];
        if close {
            args.push("--close-on-reply");
        }
        args.extend(["--", "sh", "-c", script]);
        supervised(&env, &args)
    };
    let (dsc, root) = env.discussion(&[]);
    let (status, out) = stdout_wake(&dsc, &root, r#"echo '{"answer":42}'"#, true);
    assert_eq!(status, 0, "{out}");
    let show = env.show(&dsc);
    assert_eq!(show["status"], "closed");
    assert_eq!(
        show["transcript"][1]["payload"],
        serde_json::json!({"answer":42})
    );
    assert_eq!(show["transcript"][1]["type"], "result");

    let (dsc, root) = env.discussion(&[]);
    let (status, _) = stdout_wake(&dsc, &root, "printf 'plain words'", false);
    assert_eq!(status, 0);
    let show = env.show(&dsc);
    assert_eq!(show["status"], "open");
    assert_eq!(
        show["transcript"][1]["payload"],
        serde_json::json!({"text":"plain words"})
    );

    let (dsc, root) = env.discussion(&[]);
    let (status, out) = stdout_wake(&dsc, &root, "true", false);
    assert_eq!(status, 8);
    assert_eq!(out["attempt"]["reason"], "empty_output");

    let (dsc, root) = env.discussion(&[]);
    let (status, out) = stdout_wake(&dsc, &root, "head -c 70000 /dev/zero | tr '\\0' x", false);
    assert_eq!(status, 8);
    assert_eq!(out["attempt"]["reason"], "output_too_large");

    // A non-zero exit posts nothing.
    let (dsc, root) = env.discussion(&[]);
    let (status, out) = stdout_wake(&dsc, &root, "echo '{}'; exit 2", false);
    assert_eq!(status, 8);
    assert_eq!(out["attempt"]["reason"], "exited_without_reply");
}

#[test]
fn ask_with_wake_peer_runs_the_first_turn() {
    let env = Env::new();
    env.fleet();
    let out = env.run(&[
        "--json",
        "ask",
        "--from",
        "agent-a",
        "--to",
        "agent-b",
        "--fleet",
        "fleet-alpha",
        "--payload",
        "{}",
        "--wake-peer",
        "--reply-from-stdout",
        "--close-on-reply",
        "--",
        "echo",
        "done",
    ]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let v = out.json();
    assert_eq!(v["status"], "closed");
    assert_eq!(v["attempt"]["outcome"], "completed");
    assert_eq!(v["head_message_id"], v["attempt"]["reply_message_id"]);
    // A command without --wake-peer is refused before anything is written.
    env.fails(
        &Argv::ask("agent-a", "agent-b")
            .opt("--payload", "{}")
            .opt("--", "true")
            .words(),
        "invalid_argument",
        3,
    );
}

/// Waits (bounded) until none of `pids` is alive (zombies count as dead);
/// returns how long that took.
fn all_dead_within(pids: &[i32], limit: Duration) -> Duration {
    let start = Instant::now();
    let dead = |pid: &i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| s.contains(") Z "))
    };
    while !pids.iter().all(dead) {
        let living: Vec<_> = pids.iter().filter(|p| !dead(p)).collect();
        assert!(
            start.elapsed() < limit,
            "still alive after {limit:?}: {living:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    start.elapsed()
}

fn pids_in(env: &Env, names: &[&str]) -> Vec<i32> {
    names
        .iter()
        .map(|name| {
            let path = env.dir.path().join(name);
            let until = Instant::now() + Duration::from_secs(10);
            loop {
                if let Ok(text) = std::fs::read_to_string(&path)
                    && let Ok(pid) = text.trim().parse()
                {
                    return pid;
                }
                assert!(Instant::now() < until, "{name} never written");
                std::thread::sleep(Duration::from_millis(10));
            }
        })
        .collect()
}

/// Takes the ledger's writer lock as another writer would, appends a
/// record under it, and returns the lock, still held.
fn hold_lock_after_appending(env: &Env) -> std::fs::File {
    use std::io::Write;
    let mut held = std::fs::OpenOptions::new()
        .append(true)
        .open(env.ledger())
        .unwrap();
    held.lock().unwrap();
    let line = format!(
        r#"{{"v":1,"kind":"fleet","id":"rec_held","at_ms":{},"by":"other","op":"add","fleet_id":"fleet-alpha","agent_id":"agent-c"}}"#,
        env.now_ms
    );
    writeln!(held, "{line}").unwrap();
    held.sync_data().unwrap();
    held
}

#[test]
fn a_supervisor_killed_outright_takes_the_whole_group_along() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "60000"]);
    // The shape of real agents: a shell that starts helpers and waits.
    let script = "sleep 300 & echo $! > p1.tmp && mv p1.tmp p1; \
                  sleep 300 & echo $! > p2.tmp && mv p2.tmp p2; wait";
    let mut supervisor = spawn_supervisor(
        &env,
        &wake_args(&dsc, "agent-b", &root, &["sh", "-c", script]),
    );
    let helpers = pids_in(&env, &["p1", "p2"]);
    wait_for(&env, |r| {
        r.iter()
            .any(|r| r["receipt"] == "discussion.attempt.started")
    });
    let shell = started_pid(&env);
    supervisor.kill().unwrap(); // SIGKILL: no handler of ours runs
    supervisor.wait().unwrap();
    let mut all = helpers.clone();
    all.push(shell);
    let took = all_dead_within(&all, Duration::from_secs(1));
    eprintln!("the group was gone {took:?} after the supervisor");
}

#[test]
fn a_deadline_is_kept_while_another_process_holds_the_ledger_lock() {
    let env = Env::file();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "1000"]);
    let mut supervisor =
        spawn_supervisor(&env, &wake_args(&dsc, "agent-b", &root, &["sleep", "60"]));
    wait_for(&env, |r| {
        r.iter()
            .any(|r| r["receipt"] == "discussion.attempt.started")
    });
    let child = started_pid(&env);
    // Another writer takes the lock, appends, and keeps the lock past the
    // deadline: the supervisor sees the ledger grow while it is locked.
    let held = hold_lock_after_appending(&env);
    let took = all_dead_within(&[child], Duration::from_millis(2500));
    assert!(
        supervisor.try_wait().unwrap().is_none(),
        "the supervisor waits for the lock to record the end"
    );
    drop(held);
    let out = supervisor.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(9), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["attempt"]["outcome"], "deadman");
    eprintln!("the agent was stopped {took:?} into the held lock");
}

#[test]
fn wait_with_a_timeout_does_not_wait_longer_for_a_held_lock() {
    let env = Env::file();
    let (dsc, _) = env.discussion(&[]);
    let held = hold_lock_after_appending(&env);
    let start = Instant::now();
    let mut waiter = spawn_supervisor(
        &env,
        &["wait", &dsc, "--until", "closed", "--timeout-ms", "300"],
    );
    while waiter.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(3) {
            waiter.kill().unwrap();
            panic!("wait --timeout-ms 300 still waits for the lock after 3 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = start.elapsed();
    drop(held);
    let out = waiter.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(10), "{out:?}");
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["code"], "wait_timeout");
    assert!(took < Duration::from_millis(1500), "took {took:?}");
}

#[test]
fn clean_env_passes_on_only_what_is_named() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "5000"]);
    let run = |clean: &[&str], file: &str| {
        let script = format!("env > {file}");
        let mut args = vec!["--json", "wake", "--agent", "agent-b", "--discussion", &dsc];
        args.extend(["--expected-head", &root]);
        args.extend_from_slice(clean);
        args.extend(["--", "sh", "-c", &script]);
        let out = env.run_with(
            &[
                ("PATH", "/usr/bin:/bin"),
                ("API_SECRET", "s3cr3t"),
                ("KEEP_ME", "yes"),
            ],
            &args,
            "",
        );
        assert_eq!(out.status, 8, "exits without reply: {}", out.stderr);
        std::fs::read_to_string(env.dir.path().join(file)).unwrap()
    };
    let inherited = run(&[], "inherited.txt");
    assert!(
        inherited.contains("API_SECRET=s3cr3t"),
        "by default all is inherited"
    );
    // The failed turn was charged; the head is unchanged, so wake again.
    let clean = run(&["--clean-env", "--env", "KEEP_ME"], "clean.txt");
    assert!(!clean.contains("API_SECRET"), "{clean}");
    assert!(clean.contains("KEEP_ME=yes"), "{clean}");
    let folder = std::path::Path::new(&bin())
        .parent()
        .unwrap()
        .display()
        .to_string();
    assert!(
        clean.contains(&format!("PATH=/usr/bin:/bin:{folder}\n")),
        "{clean}"
    );
    assert!(clean.contains("DISCUSS_ATTEMPT_ID="), "{clean}");
    assert!(clean.contains("DISCUSS_ACTOR=tester"), "{clean}");
    // --env without --clean-env is a usage error.
    let out = env.run(&wake_argv(
        "agent-b",
        &dsc,
        &root,
        &["--env", "X", "--", "true"],
        false,
    ));
    assert_eq!(out.status, 2);
}

#[test]
fn a_command_that_cannot_start_says_why_to_a_person() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "5000"]);
    let out = env.run(&wake_args(&dsc, "agent-b", &root, &["/no/such/agent"]));
    assert_eq!(out.status, 8);
    assert!(
        out.stdout
            .contains("spawn_failed: /no/such/agent: No such file or directory"),
        "{:?}",
        out.stdout
    );
}

/// `discuss __discuss-guardian` typed by hand, or started by anything but
/// a supervisor, refuses and signals nothing: the caller's shell and jobs
/// live on.
#[test]
fn the_guardian_refuses_unless_a_supervisor_started_it() {
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let bin = bin.display();
    let cases = [
        // In a script: the shell's group, which it does not lead.
        format!("{bin} __discuss-guardian </dev/null"),
        // Leading a group of its own, with a pipe that is not the
        // supervisor's (no variable, then a wrong one).
        format!("echo x | setsid {bin} __discuss-guardian"),
        format!("echo x | DISCUSS_GUARDIAN_PIPE=1 setsid {bin} __discuss-guardian"),
    ];
    for case in cases {
        let script = format!(
            "sleep 30 & job=$!; {case}; echo \"exit $?\"; kill -0 $job && echo alive; kill $job"
        );
        // A session of its own, so that a guardian that did signal its
        // group could never reach this test's.
        let out = std::process::Command::new("setsid")
            .args(["bash", "-c", &script])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stdout.contains("exit 2"), "{case}: {stdout} {stderr}");
        assert!(
            stdout.contains("alive"),
            "{case}: the caller's job was killed: {stdout}"
        );
        assert!(stderr.contains("not a command"), "{case}: {stderr}");
    }
}

#[test]
fn a_supervised_reply_that_exhausts_the_budget_says_so() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--max-turns", "2"]);
    let script = format!(
        r#"{} reply --type question --payload '{{"body":"more?"}}'"#,
        bin()
    );
    let out = env.run(&wake_argv(
        "agent-b",
        &dsc,
        &root,
        &["--", "sh", "-c", &script],
        false,
    ));
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(out.stdout.contains("completed"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains(&format!("{dsc} is now exhausted and escalated (turns)")),
        "{}",
        out.stdout
    );
    // The JSON says the discussion's status after the turn.
    let (dsc, root) = env.ask(&["--max-turns", "2"]);
    let out = env.run(&wake_argv(
        "agent-b",
        &dsc,
        &root,
        &["--", "sh", "-c", &script],
        true,
    ));
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(out.json()["status"], "exhausted");
    assert_eq!(out.json()["attempt"]["outcome"], "completed");
    // A turn that leaves the discussion open says nothing more.
    let (dsc, root) = env.ask(&["--max-turns", "4"]);
    let out = env.run(&wake_argv(
        "agent-b",
        &dsc,
        &root,
        &["--", "sh", "-c", &script],
        false,
    ));
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("is now"), "{}", out.stdout);
}

#[test]
fn a_reply_without_its_attempt_names_the_variable_a_supervised_turn_sets() {
    let env = Env::new();
    let out = env.run(&[
        "reply",
        "--agent",
        "agent-b",
        "--discussion",
        "dsc_00000000",
        "--reply-to",
        "msg_00000000",
        "--type",
        "result",
        "--payload",
        "{}",
    ]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "a supervised turn (`discuss wake ... -- CMD`) sets DISCUSS_ATTEMPT_ID (--attempt)"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn a_switch_that_covers_the_turn_kills_its_child_and_one_that_does_not_leaves_it() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "20000"]);
    let mut supervisor =
        spawn_supervisor(&env, &wake_args(&dsc, "agent-b", &root, &["sleep", "60"]));
    wait_for(&env, |r| {
        r.iter()
            .any(|r| r["receipt"] == "discussion.attempt.started")
    });
    // Another agent's and another fleet's switches do not cover it.
    env.ok(&["fleet", "add", "fleet-other", "agent-c"]);
    env.ok(&[
        "kill-switch",
        "on",
        "--agent",
        "agent-c",
        "--reason",
        "not this one",
    ]);
    env.ok(&[
        "kill-switch",
        "on",
        "--fleet",
        "fleet-other",
        "--reason",
        "nor this",
    ]);
    let (quiet_for, step) = (Duration::from_millis(1_500), Duration::from_millis(50));
    let started = Instant::now();
    while started.elapsed() < quiet_for {
        assert!(
            supervisor.try_wait().unwrap().is_none(),
            "killed by a switch that does not cover it"
        );
        std::thread::sleep(step);
    }
    // The peer's own switch: killed within a second or so.
    let engaged = Instant::now();
    env.ok(&[
        "kill-switch",
        "on",
        "--agent",
        "agent-b",
        "--reason",
        "b loops",
    ]);
    let status = supervisor.wait().unwrap();
    assert!(
        engaged.elapsed() < Duration::from_secs(3),
        "killed {:?} after the switch",
        engaged.elapsed()
    );
    let mut stdout = String::new();
    std::io::Read::read_to_string(supervisor.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert_eq!(status.code(), Some(8));
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["attempt"]["reason"], "kill_switch");
    assert!(!alive(started_pid(&env)));
    // The turn stays charged.
    assert_eq!(env.show(&dsc)["turns_used"], 2);
}

/// A halt engaged after a turn was reserved and before the supervisor
/// recorded `started` (stopped there by a fail point): `started` is
/// refused, the agent is stopped before it does anything of its turn, and
/// the turn ends `kill_switch` at once, not at its deadline.
#[test]
fn a_halt_between_the_reservation_and_started_ends_the_turn() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "20000"]);
    let mut supervisor = spawn_supervisor_with(
        &env,
        &wake_args(&dsc, "agent-b", &root, &["sleep", "60"]),
        &[("DISCUSS_FAILPOINTS", "supervisor.before_started=stop")],
    );
    wait_until_stopped(supervisor.id());
    env.ok(&[
        "kill-switch",
        "on",
        "--discussion",
        &dsc,
        "--reason",
        "stop it",
    ]);
    let resumed = Instant::now();
    let cont = Command::new("kill")
        .args(["-CONT", &supervisor.id().to_string()])
        .status()
        .unwrap();
    assert!(cont.success());
    let status = supervisor.wait().unwrap();
    assert!(
        resumed.elapsed() < Duration::from_secs(5),
        "the turn ran {:?} after the halt",
        resumed.elapsed()
    );
    let mut stdout = String::new();
    std::io::Read::read_to_string(supervisor.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert_eq!(status.code(), Some(8), "{stdout}");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["attempt"]["reason"], "kill_switch", "{out}");
    let receipts: Vec<Value> = env
        .records()
        .into_iter()
        .filter_map(|r| r.get("receipt").cloned())
        .collect();
    assert!(
        !receipts.iter().any(|r| r == "discussion.attempt.started"),
        "started was recorded under the halt: {receipts:?}"
    );
}

/// A supervisor started by its path, with no `discuss` on the PATH: the
/// agent still finds the very binary that supervises it, as `discuss`
/// (its folder last on the child's PATH) and as `$DISCUSS_BIN`.
#[test]
fn a_child_finds_the_supervisors_own_binary() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "5000"]);
    let script = "test \"$(command -v discuss)\" = \"$DISCUSS_BIN\" || exit 5; \
                  discuss reply --type result --payload '{\"body\":\"found\"}'";
    let mut args = wake_argv("agent-b", &dsc, &root, &["--"], true);
    args.extend(["sh", "-c", script]);
    let out = env.run_with(&[("PATH", "/usr/bin:/bin")], &args, "");
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    let shown = env.show(&dsc);
    let transcript = shown["transcript"].as_array().unwrap();
    assert_eq!(
        transcript.last().unwrap()["payload"]["body"],
        "found",
        "the reply landed: {shown}"
    );
}
