//! A database that stops, restarts or fails over to its standby, and
//! clients killed mid-write: nothing acknowledged is lost, nothing
//! unacknowledged is half-written.

use super::*;

/// A client killed (`kill -9`) after its INSERT and before its COMMIT
/// leaves nothing behind, and the lock it held is free for the next
/// writer at once; many writers killed at random lose nothing that was
/// acknowledged.
#[test]
fn kill_9_of_clients_loses_nothing_acknowledged() {
    let Some(db) = database() else { return };
    let (dsc, root) = db.discussion(&[]);
    let before = db.ledger_bytes();
    for point in ["append.before_write", "append.before_fsync"] {
        let out = db.run_with(
            &[("DISCUSS_FAILPOINTS", &format!("{point}=crash"))],
            &wake_argv("agent-b", &dsc, &root, &[], true),
            "",
        );
        assert_eq!(out.status, -1, "{point}: killed");
        assert_eq!(db.ledger_bytes(), before, "{point}: nothing written");
    }
    let started = Instant::now();
    db.wake(&dsc, "agent-b", &root);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the killed clients' lock was released"
    );

    // Twenty-four writers at once, every third killed as soon as started.
    let mut children = Vec::new();
    for i in 0..24 {
        let child = db
            .command_std()
            .args(ASK_A_TO_B)
            .arg(format!(r#"{{"body":"question {i}"}}"#))
            .args(["--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        children.push((i % 3 == 0, child));
    }
    let mut acknowledged = Vec::new();
    for (kill, mut child) in children {
        if kill {
            let _ = child.kill();
        }
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
            acknowledged.push(answer["discussion_id"].as_str().unwrap().to_owned());
        } else {
            assert!(
                out.status.code().is_none(),
                "only the killed fail: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    assert!(
        acknowledged.len() >= 16,
        "{} acknowledged",
        acknowledged.len()
    );
    let listed = db.ok(&["list"]);
    let ids: Vec<&str> = listed["discussions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["discussion_id"].as_str().unwrap())
        .collect();
    for id in &acknowledged {
        assert!(ids.contains(&id.as_str()), "{id} was acknowledged and lost");
    }
    assert_eq!(db.run(&["verify"]).status, 0);
}

/// The server stopped while a writer is between its INSERT and its
/// COMMIT: the writer fails with `ledger_unavailable`, never reports
/// success, and nothing of it is there once the server is back. While the
/// server is down, commands fail at once with the same code.
#[test]
fn a_server_stopped_mid_operation_fails_the_command_and_writes_nothing() {
    let Some(cluster) = Cluster::start(&[]) else {
        return;
    };
    let mut env = Env::file();
    env.pg = Some(cluster.database());
    let (dsc, root) = env.discussion(&[]);
    let before = env.ledger_bytes();
    let writer = env
        .command_std()
        .env("DISCUSS_FAILPOINTS", "append.before_fsync=stop")
        .args(wake_argv("agent-b", &dsc, &root, &[], true))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_stopped(writer.id());
    cluster.stop_server();
    let down = env.run(&["--json", "show", &dsc]);
    assert_eq!(down.status, 1);
    assert_eq!(down.error()["code"], "ledger_unavailable");
    assert!(
        !down.error()["message"]
            .as_str()
            .unwrap()
            .contains("password")
    );
    let resumed = Command::new("kill")
        .args(["-CONT", &writer.id().to_string()])
        .status()
        .unwrap();
    assert!(resumed.success());
    let out = writer.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "no answer on failure");
    let err: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["code"], "ledger_unavailable", "{err}");
    cluster.start_server();
    assert_eq!(env.ledger_bytes(), before);
    assert_eq!(env.status(&dsc), "open");
    env.wake(&dsc, "agent-b", &root);
}

/// A database that cannot be reached is `ledger_unavailable` (exit 1)
/// within `connect_timeout`, also when something accepts the connection
/// and never answers; the URL's password is never shown.
#[test]
fn an_unreachable_database_fails_within_the_connect_timeout() {
    let env = Env::file();
    // Nothing listens on a port just freed.
    let port = closed_port();
    let refused = env
        .command()
        .env(
            "DISCUSS_LEDGER",
            format!("postgresql://ann:s3cret@127.0.0.1:{port}/fleet"),
        )
        .args(["--json", "fleet", "add", "f", "a"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let err: Value = serde_json::from_slice(&refused.stderr).unwrap();
    assert_eq!(err["error"]["code"], "ledger_unavailable");
    let text = String::from_utf8_lossy(&refused.stderr);
    assert!(!text.contains("s3cret"), "{text}");
    assert!(text.contains("ann:***@"), "{text}");

    // A listener that accepts and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let started = Instant::now();
    let hung = env
        .command()
        .env(
            "DISCUSS_LEDGER",
            format!("postgresql://ann@127.0.0.1:{port}/fleet?connect_timeout=1"),
        )
        .args(["--json", "list"])
        .output()
        .unwrap();
    let took = started.elapsed();
    assert_eq!(hung.status.code(), Some(1));
    let err: Value = serde_json::from_slice(&hung.stderr).unwrap();
    assert_eq!(err["error"]["code"], "ledger_unavailable", "{err}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
    drop(silent);
}

/// A database restart during a supervised turn does not end it: the agent
/// keeps running, and how the turn ended is recorded once the database is
/// back (here it comes back after the agent exited), then the supervisor
/// exits with that outcome.
#[test]
fn a_supervisor_rides_out_a_database_restart() {
    let Some(cluster) = Cluster::start(&[]) else {
        return;
    };
    let mut env = Env::file();
    env.pg = Some(cluster.database());
    env.now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let (dsc, root) = env.discussion(&["--turn-timeout-ms", "30000"]);
    let mark = env.dir.path().join("agent-finished");
    let agent = format!("sleep 2; echo done > {}", mark.display());
    let supervisor = env
        .command_std()
        .args(wake_argv(
            "agent-b",
            &dsc,
            &root,
            &["--", "sh", "-c", &agent],
            true,
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Down once the turn has started, until after the agent exits.
    let until = Instant::now() + Duration::from_secs(20);
    while !String::from_utf8_lossy(&env.ledger_bytes()).contains("discussion.attempt.started") {
        assert!(Instant::now() < until, "the turn never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    cluster.stop_server();
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        mark.exists(),
        "the agent ran to its end while the database was down"
    );
    cluster.start_server();
    let out = supervisor.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(8),
        "failed (exited without reply): {stderr}"
    );
    assert!(
        stderr.contains("cannot be reached; the agent keeps running"),
        "{stderr}"
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["attempt"]["outcome"], "failed", "{answer}");
    assert_eq!(
        answer["attempt"]["reason"], "exited_without_reply",
        "{answer}"
    );
    let shown = env.show(&dsc);
    assert_eq!(shown["attempts"][0]["state"], "failed", "{shown}");
    assert_eq!(shown["attempts"][0]["reason"], "exited_without_reply");
    let _ = &mut env;
}

/// A primary and a synchronous streaming standby, both real servers; the
/// ledger's URL names both hosts with `target_session_attrs=read-write`.
/// Writers run; the primary's host crashes; the standby is promoted; the
/// writers carry on against it after `ledger_unavailable` for the calls
/// in flight. Every acknowledged operation is on the new primary, and
/// `verify` is clean there.
#[test]
fn a_failover_to_the_promoted_standby_keeps_every_acknowledged_write() {
    let Some(primary) = Cluster::start(&[]) else {
        return;
    };
    let standby = primary.standby();
    // From here a commit is acknowledged once the standby has it too.
    primary.sql(
        "postgres",
        "ALTER SYSTEM SET synchronous_standby_names = '*'",
    );
    primary.sql("postgres", "SELECT pg_reload_conf()");
    let url = primary.database();
    let name = url.rsplit('/').next().unwrap().to_owned();
    let both = format!(
        "postgresql://postgres@127.0.0.1:{},127.0.0.1:{}/{name}?target_session_attrs=read-write&connect_timeout=2",
        primary.port, standby.port
    );
    let mut env = Env::file();
    env.pg = Some(both);
    env.fleet();
    let acknowledged = std::sync::Mutex::new(Vec::<String>::new());
    let promoted = std::sync::atomic::AtomicBool::new(false);
    let after_promotion = std::sync::atomic::AtomicUsize::new(0);
    let refusals = std::sync::Mutex::new(Vec::<String>::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            let (env, acknowledged, promoted, after_promotion, refusals) =
                (&env, &acknowledged, &promoted, &after_promotion, &refusals);
            scope.spawn(move || {
                let until = Instant::now() + Duration::from_secs(90);
                while after_promotion.load(std::sync::atomic::Ordering::SeqCst) < 20 {
                    assert!(Instant::now() < until, "the writers never carried on");
                    let was_promoted = promoted.load(std::sync::atomic::Ordering::SeqCst);
                    let out = env.run(
                        &Argv::ask("agent-a", "agent-b")
                            .opt("--payload", "{}")
                            .flag("--json")
                            .words(),
                    );
                    if out.status == 0 {
                        let id = out.json()["discussion_id"].as_str().unwrap().to_owned();
                        acknowledged.lock().unwrap().push(id);
                        if was_promoted {
                            after_promotion.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                    } else {
                        let code = out.error()["code"].as_str().unwrap_or_default().to_owned();
                        refusals.lock().unwrap().push(code);
                    }
                }
            });
        }
        // Once writes are going through (a count of them, not a time).
        let until = Instant::now() + Duration::from_secs(60);
        while acknowledged.lock().unwrap().len() < 20 {
            assert!(Instant::now() < until, "no writes went through");
            std::thread::yield_now();
        }
        primary.crash_server();
        standby.promote();
        promoted.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let refusals = refusals.into_inner().unwrap();
    assert!(
        refusals.iter().all(|code| code == "ledger_unavailable"),
        "{refusals:?}"
    );
    let acknowledged = acknowledged.into_inner().unwrap();
    let listed = env.ok(&["list"]);
    let on_the_new_primary: std::collections::HashSet<&str> = listed["discussions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["discussion_id"].as_str().unwrap())
        .collect();
    for id in &acknowledged {
        assert!(
            on_the_new_primary.contains(id.as_str()),
            "{id} was acknowledged and lost"
        );
    }
    assert_eq!(env.ok(&["verify"])["ok"], true);
}
