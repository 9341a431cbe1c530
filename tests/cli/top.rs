//! `discuss top` in a real tmux (a private server): at 80×24 and 200×50,
//! what needs a person first, a write from another process shown within
//! a second, the keys that grant, halt and release as the CLI records
//! them, a discussion opened with Enter, and every way out (q, Ctrl-C,
//! SIGTERM: exit 0; a panic) leaving the terminal as it was; `NO_COLOR`;
//! refused without a terminal. On a file and, with the suite's PostgreSQL
//! run, on a database.

use crate::common::tmux::Tmux;
use crate::common::{ASK_A_TO_B, Env, wake_argv};
use serde_json::json;
use std::time::{Duration, Instant};

/// `discuss top` in a window of `width`×`height`, kept when it exits; a
/// shell around it writes its exit status to `top.exit` in the test's
/// folder (tmux 3.3 does not always tell a dead pane's status).
fn top(env: &Env, width: u16, height: u16, with: &str) -> Option<Tmux> {
    let status = env.dir.path().join("top.exit");
    let _ = std::fs::remove_file(&status);
    let command = format!(
        "env {with} discuss top; echo $? > {}; sleep 60",
        status.display()
    );
    let tmux = Tmux::start_sized(env, &command, width, height)?;
    tmux.wait_for("work", "q quit");
    Some(tmux)
}

/// The process of `discuss top` in the pane (the shell's child).
fn top_pid(tmux: &Tmux) -> String {
    let shell = tmux.format("work", "#{pane_pid}");
    let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
    children
        .split_whitespace()
        .next()
        .expect("top runs under the shell")
        .to_owned()
}

/// A discussion whose wake a gate made wait for a person; its id.
fn waiting_for_approval(env: &Env) -> String {
    env.fleet();
    env.ok(&["gate", "set", "--agent", "agent-b", "--always"]);
    let mut args = ASK_A_TO_B.to_vec();
    args.push(r#"{"body":"deploy on friday?"}"#);
    let asked = env.ok(&args);
    let dsc = asked["discussion_id"].as_str().unwrap().to_owned();
    let root = asked["root_message_id"].as_str().unwrap().to_owned();
    let out = env.run(&wake_argv("agent-b", &dsc, &root, &[], true));
    assert_eq!(out.error()["code"], "approval_required");
    dsc
}

/// How top ended: its exit status, as the shell around it wrote it.
fn exited(env: &Env, tmux: &Tmux) -> String {
    let status = env.dir.path().join("top.exit");
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(code) = std::fs::read_to_string(&status)
            && !code.trim().is_empty()
        {
            return code.trim().to_owned();
        }
        assert!(
            Instant::now() < until,
            "top did not exit:\n{}",
            tmux.screen("work")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn at_80_columns_it_shows_what_needs_a_person_first_and_its_keys_act() {
    let env = Env::new();
    let dsc = waiting_for_approval(&env);
    let Some(tmux) = top(&env, 80, 24, "") else {
        return;
    };
    let screen = tmux.screen("work");
    let lines = tmux.rows("work");
    assert!(lines[1].starts_with("Needs a person (1)"), "{screen}");
    assert!(lines[2].contains("APPROVAL turn 2 of agent-b"), "{screen}");
    assert_eq!(tmux.format("work", "#{pane_width}x#{pane_height}"), "80x24");
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{lines:?}");
    assert!(
        screen.contains("↑↓ select · Enter open · h halt · r release · g grant · d deny · q quit")
    );
    // A write from another process shows within a second.
    let started = Instant::now();
    let mut args = ASK_A_TO_B.to_vec();
    args.push(r#"{"body":"another"}"#);
    env.ok(&args);
    tmux.wait_for("work", "Discussions open 2");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    // g grants the selected request, as `approve` records it.
    tmux.run(&["send-keys", "-t", "work", "g"]);
    tmux.wait_for("work", "Needs a person (0)");
    let shown = env.show(&dsc);
    assert_eq!(shown["approval"]["state"], "granted");
    // h, a scope and a reason halt; r releases.
    tmux.run(&["send-keys", "-t", "work", "h"]);
    tmux.wait_for("work", "Halt: d discussion");
    tmux.run(&["send-keys", "-t", "work", "e"]);
    tmux.run(&["send-keys", "-t", "work", "-l", "stop the fleet"]);
    tmux.run(&["send-keys", "-t", "work", "Enter"]);
    tmux.wait_for("work", "HALTED everything: stop the fleet");
    assert_eq!(env.ok(&["kill-switch", "status"])["engaged"], json!(true));
    tmux.run(&["send-keys", "-t", "work", "r"]);
    tmux.wait_for("work", "no switch is engaged");
    assert_eq!(env.ok(&["kill-switch", "status"])["engaged"], json!(false));
    // Enter opens a discussion: its transcript and attempts.
    tmux.run(&["send-keys", "-t", "work", "Down"]);
    tmux.run(&["send-keys", "-t", "work", "Enter"]);
    let opened = tmux.wait_for("work", "Transcript");
    assert!(
        opened.contains("Attempts") && opened.contains("agent-a → agent-b (ask)"),
        "{opened}"
    );
    tmux.run(&["send-keys", "-t", "work", "Escape"]);
    tmux.wait_for("work", "Needs a person");
    // q: exit 0, the terminal as it was (the alternate screen left).
    tmux.run(&["send-keys", "-t", "work", "q"]);
    assert_eq!(exited(&env, &tmux), "0");
    assert_eq!(tmux.format("work", "#{alternate_on}"), "0");
}

#[test]
fn at_200_columns_with_colour_and_without_it() {
    let env = Env::new();
    waiting_for_approval(&env);
    let Some(tmux) = top(&env, 200, 50, "") else {
        return;
    };
    let coloured = tmux.screen_with_escapes("work");
    assert!(
        coloured.contains("\u{1b}[38;5;3m") || coloured.contains("\u{1b}[33m"),
        "the request in yellow: {coloured:?}"
    );
    tmux.run(&["send-keys", "-t", "work", "q"]);
    assert_eq!(exited(&env, &tmux), "0");
    drop(tmux);
    let Some(plain) = top(&env, 200, 50, "NO_COLOR=1") else {
        return;
    };
    let screen = plain.screen_with_escapes("work");
    assert!(screen.contains("APPROVAL turn 2 of agent-b"), "{screen}");
    assert!(!screen.contains("\u{1b}[38;5;"), "no colour: {screen:?}");
    for colour in 30..=37 {
        assert!(
            !screen.contains(&format!("\u{1b}[{colour}m")),
            "colour {colour}: {screen:?}"
        );
    }
    plain.run(&["send-keys", "-t", "work", "q"]);
    assert_eq!(exited(&env, &plain), "0");
}

#[test]
fn every_way_out_restores_the_terminal() {
    let env = Env::new();
    env.fleet();
    // Ctrl-C and SIGTERM: exit 0.
    let Some(tmux) = top(&env, 80, 24, "") else {
        return;
    };
    tmux.run(&["send-keys", "-t", "work", "C-c"]);
    assert_eq!(exited(&env, &tmux), "0");
    assert_eq!(tmux.format("work", "#{alternate_on}"), "0");
    drop(tmux);
    let Some(tmux) = top(&env, 80, 24, "") else {
        return;
    };
    let pid = top_pid(&tmux);
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    assert_eq!(exited(&env, &tmux), "0");
    assert_eq!(tmux.format("work", "#{alternate_on}"), "0");
    drop(tmux);
    // A panic: the terminal restored before the message.
    let Some(tmux) = top(&env, 80, 24, "DISCUSS_FAILPOINTS=top.draw=panic@4") else {
        return;
    };
    tmux.run(&["send-keys", "-t", "work", "j"]);
    tmux.run(&["send-keys", "-t", "work", "j"]);
    assert_eq!(exited(&env, &tmux), "101", "a panic's exit status");
    assert_eq!(tmux.format("work", "#{alternate_on}"), "0");
    assert!(
        tmux.screen("work").contains("panicked"),
        "{}",
        tmux.screen("work")
    );
    drop(tmux);
    // Its terminal gone (the tmux server killed): it ends, never spins.
    let Some(tmux) = top(&env, 80, 24, "") else {
        return;
    };
    let pid = top_pid(&tmux);
    tmux.run(&["kill-server"]);
    let until = Instant::now() + Duration::from_secs(10);
    // Ended: gone, or a zombie nobody reaped yet.
    let running = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|s| !s.trim_start().starts_with('Z'))
        })
    };
    while running() {
        assert!(Instant::now() < until, "top outlived its terminal");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Without a terminal: refused, pointing at list and events.
    let out = env.run(&["top"]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("discuss events --follow"),
        "{}",
        out.stderr
    );
}
