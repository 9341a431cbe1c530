//! The README's examples run as written: on a ledger of their own, never
//! the user's default one.

use crate::common::*;

#[test]
fn quickstart_runs_a_whole_discussion_on_a_ledger_of_its_own() {
    let env = Env::new();
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let bin_dir = bin.parent().unwrap();
    let home = env.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/quickstart.sh");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .env("HOME", &home)
        .env("DISCUSS_NOW", T0.to_string())
        .env("COLUMNS", "120")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("agent-b: question -> open"), "{stdout}");
    assert!(stdout.contains("agent-a: result -> open"), "{stdout}");
    assert!(stdout.contains("agent-b: result -> closed"), "{stdout}");
    assert!(
        !home.join(".local/state/discuss").exists(),
        "the user's default ledger is never touched"
    );
    let named = stdout
        .lines()
        .next()
        .unwrap()
        .strip_prefix("ledger: ")
        .unwrap();
    let text = std::fs::read_to_string(named).unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("discussion.attempt.completed"))
            .count(),
        3
    );
}

#[test]
fn supervised_example_holds_a_multi_turn_discussion_between_two_scripted_agents() {
    let env = Env::new();
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/supervised.sh");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("DISCUSS", &bin)
        .env("DISCUSS_LEDGER", env.ledger())
        .env("DISCUSS_NOW", T0.to_string())
        .env("COLUMNS", "120")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("agent-b saw: {\"body\":\"Refactor auth module?\"}"),
        "{stderr}"
    );
    assert!(
        stderr.contains("agent-a saw: {\"body\":\"Which module first, session or token?\"}"),
        "{stderr}"
    );
    let records = env.records();
    let dsc = records.iter().find(|r| r["kind"] == "message").unwrap()["correlation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let show = env.show(&dsc);
    assert_eq!(show["status"], "closed");
    assert_eq!(show["transcript"].as_array().unwrap().len(), 4);
    let started = records
        .iter()
        .filter(|r| r["receipt"] == "discussion.attempt.started")
        .count();
    assert_eq!(started, 3, "three supervised turns");
}

/// Runs an example script with `discuss` at `bin` and the ledger `ledger`.
fn run_example(env: &Env, name: &str, bin: &std::path::Path, ledger: &str) -> std::process::Output {
    example(env, name, bin, ledger).output().unwrap()
}

/// An example script to run under bash, in a cleared environment but for
/// `discuss` at `bin` (also on the `PATH`), the ledger `ledger`, a home of
/// its own and the tests' clock.
fn example(env: &Env, name: &str, bin: &std::path::Path, ledger: &str) -> std::process::Command {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name);
    let home = env.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut command = std::process::Command::new("bash");
    command
        .arg(&script)
        .env_clear()
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", bin.parent().unwrap().display()),
        )
        .env("HOME", &home)
        .env("DISCUSS", bin)
        .env("DISCUSS_LEDGER", ledger)
        .env("DISCUSS_NOW", T0.to_string())
        .env("COLUMNS", "120");
    command
}

#[test]
fn supervised_example_fails_with_the_status_of_a_turn_that_did_not_complete() {
    let env = Env::new();
    // A `discuss` whose `reply` fails: each agent's turn ends without one.
    let wrapper_dir = env.dir.path().join("wrapped");
    std::fs::create_dir_all(&wrapper_dir).unwrap();
    let wrapper = wrapper_dir.join("discuss");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nif [ \"$1\" = reply ]; then echo 'reply refused here' >&2; exit 1; fi\nexec {} \"$@\"\n",
            assert_cmd::cargo::cargo_bin("discuss").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = run_example(
        &env,
        "supervised.sh",
        &wrapper,
        env.ledger().to_str().unwrap(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(8), "{stderr}");
    assert!(
        stderr.contains("turn of agent-b did not complete"),
        "{stderr}"
    );
    let records = env.records();
    assert!(
        records
            .iter()
            .any(|r| r["receipt"] == "discussion.attempt.failed"),
        "the failed turn is recorded"
    );
}

#[test]
fn the_examples_never_print_a_database_password() {
    let Some(env) = Env::postgres() else {
        assert!(std::env::var("CI").is_err(), "CI=true needs PostgreSQL");
        eprintln!("skipped: no PostgreSQL server binaries here");
        return;
    };
    // The test cluster trusts every connection: the password is ignored.
    let url = env
        .pg
        .clone()
        .unwrap()
        .replacen("postgres@", "postgres:s3cretPW@", 1);
    assert!(url.contains("s3cretPW"), "{url}");
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    for name in ["quickstart.sh", "supervised.sh"] {
        let out = run_example(&env, name, &bin, &url);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {stdout}\n{stderr}");
        let first = stdout.lines().next().unwrap();
        assert!(
            first.starts_with("ledger: postgresql://postgres:***@"),
            "{first}"
        );
        assert!(
            !stdout.contains("s3cretPW") && !stderr.contains("s3cretPW"),
            "{name} printed the password:\n{stdout}\n{stderr}"
        );
    }
}

/// `examples/seal.sh`: seals kept in a folder of their own; a later run
/// checks the last seal first, so a history rewritten between two runs
/// stops the next one (seal_mismatch, exit 7).
#[test]
fn the_seal_example_keeps_seals_elsewhere_and_catches_a_rewrite() {
    let env = Env::file();
    env.discussion(&[]);
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    let key = env.dir.path().join("seal.key");
    env.ok(&["ledger", "keygen", "--output", key.to_str().unwrap()]);
    let seals = env.dir.path().join("elsewhere/seals");
    let ledger = env.ledger().display().to_string();
    let run = || {
        example(&env, "seal.sh", &bin, &ledger)
            .arg(&key)
            .arg(&seals)
            .output()
            .unwrap()
    };
    let first = run();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(String::from_utf8_lossy(&first.stdout).starts_with("sealed: {"));
    let latest = seals.join("latest.json");
    env.ok(&[
        "verify",
        "--seal",
        latest.to_str().unwrap(),
        "--public-key",
        &format!("{}.pub", key.display()),
    ]);
    env.ask(&[]);
    assert!(run().status.success(), "a grown ledger is sealed again");
    // The first line rewritten, every line chained anew by hand.
    let mut lines = lines_of(&env.ledger_bytes());
    let mut first: serde_json::Value = serde_json::from_slice(&lines[0]).unwrap();
    first["by"] = "forger".into();
    lines[0] = format!("{first}\n").into_bytes();
    std::fs::write(env.ledger(), rechain(&lines)).unwrap();
    let stopped = run();
    assert_eq!(stopped.status.code(), Some(7));
    assert!(
        String::from_utf8_lossy(&stopped.stderr).contains("seal_mismatch"),
        "{}",
        String::from_utf8_lossy(&stopped.stderr)
    );
}

/// `examples/traces.sh`: a local receiver, one supervised turn, and the
/// spans it received printed as a tree, the agent's reply nested under
/// its turn under the wake.
#[test]
fn the_traces_example_prints_the_nested_spans_of_a_supervised_turn() {
    let env = Env::file();
    let bin = assert_cmd::cargo::cargo_bin("discuss");
    // The script makes a ledger of its own (the one given is not used).
    let ledger = env.ledger().display().to_string();
    let out = run_example(&env, "traces.sh", &bin, &ledger);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("wake_agent"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        lines[at + 1].starts_with("  invoke_agent agent-b "),
        "{stdout}"
    );
    assert!(
        lines[at + 1].contains("discuss.attempt.state=completed"),
        "{stdout}"
    );
    assert!(
        lines[at + 2].starts_with("    reply_discussion"),
        "{stdout}"
    );
    assert!(lines.iter().any(|l| l.starts_with("ask_peer")), "{stdout}");
}
