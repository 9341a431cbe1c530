//! Where the ledger is: a mistyped URL, a password, a wrong path, a
//! file that is not a ledger, a missing ledger, each said plainly and
//! nothing created.

use crate::common::*;

#[test]
fn a_writer_refuses_a_file_that_is_not_a_ledger_and_leaves_it_untouched() {
    let env = Env::file();
    std::fs::create_dir_all(env.ledger().parent().unwrap()).unwrap();
    let passwd =
        "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n";
    std::fs::write(env.ledger(), passwd).unwrap();
    let err = env.fails(
        &["fleet", "add", "fleet-alpha", "agent-a"],
        "ledger_unreadable",
        1,
    );
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("not a discuss ledger"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(env.ledger()).unwrap(), passwd);
    // A ledger whose very first write was torn is still a ledger.
    std::fs::write(env.ledger(), r#"{"v":1,"kind":"fle"#).unwrap();
    env.ok(&["fleet", "add", "fleet-alpha", "agent-a"]);
}

#[test]
fn a_missing_ledger_is_named_and_bare_discuss_prints_the_help() {
    let env = Env::new();
    let out = env.run(&["list"]);
    assert_eq!(out.status, 0);
    assert!(
        out.stdout
            .contains(&format!("there is no ledger at {}", env.ledger().display())),
        "{:?}",
        out.stdout
    );
    assert!(!env.ledger().exists(), "reading creates nothing");
    let out = env.run(&["inbox", "--agent", "agent-b"]);
    assert!(out.stdout.contains("no ledger at"), "{:?}", out.stdout);
    let out = env.run(&[]);
    assert_eq!(out.status, 0);
    assert!(out.stdout.contains("Usage: discuss"), "{:?}", out.stdout);
    assert!(out.stderr.is_empty());
}

/// A location that looks like a URL of another scheme, or a libpq
/// key/value string, is refused before anything is created.
#[test]
fn a_mistyped_url_never_becomes_a_file_ledger() {
    let env = Env::file();
    for location in [
        "postgresq://agent@db/fleet",
        "postgresql:/agent@db/fleet",
        "postgres:/db",
        "http://db.internal/fleet",
        "sqlite:///tmp/x.db",
        "host=db dbname=fleet password=SECRET",
        " dbname=fleet",
    ] {
        for args in [
            &["--json", "fleet", "add", "f", "a", "b"][..],
            &["--json", "list"][..],
            &["--json", "verify"][..],
        ] {
            let out = env.run_with(&[("DISCUSS_LEDGER", location)], args, "");
            assert_eq!(out.status, 3, "{location} {args:?}: {}", out.stderr);
            assert_eq!(out.error()["code"], "invalid_argument", "{location}");
            assert!(!out.stderr.contains("SECRET"), "{}", out.stderr);
            assert!(!out.stderr.contains("agent@db"), "{}", out.stderr);
        }
        let human = env.run_with(
            &[("DISCUSS_LEDGER", location)],
            &["fleet", "add", "f", "a"],
            "",
        );
        assert!(
            human.stderr.starts_with("error[invalid_argument]: "),
            "{}",
            human.stderr
        );
    }
    // Nothing was created in the working folder (where a relative path
    // would have put a ledger), nor beside it.
    let created: Vec<_> = std::fs::read_dir(env.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(created.is_empty(), "{created:?}");
    // A file path with a colon that is not `SCHEME:/` stays a file.
    let out = env.run_with(
        &[("DISCUSS_LEDGER", "notes:v1.jsonl")],
        &["fleet", "add", "f", "a"],
        "",
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(env.dir.path().join("notes:v1.jsonl").exists());
}

/// No spelling of a database password reaches a person: not in errors,
/// not in `ledger info`, human or JSON; `PGPASSWORD` is never read back.
#[test]
fn database_passwords_are_never_shown() {
    let env = Env::file();
    // Nothing listens on a port just freed: every command fails to connect
    // and names the location it tried.
    let port = closed_port();
    let urls = [
        format!("postgresql://ann:pa/SECRET@127.0.0.1:{port}/db"),
        format!("postgresql://ann:pa?SECRET@127.0.0.1:{port}/db"),
        format!("postgresql://ann:SECRET@127.0.0.1:{port}/db?connect_timeout=1"),
        format!("postgres://127.0.0.1:{port}/db?user=ann&password=SECRET"),
        format!("postgres://127.0.0.1:{port}/db?user=ann&pass%77ord=SECRET"),
        format!("postgres://127.0.0.1:{port}/db?password=SECRET1&user=ann&password=SECRET2"),
        format!("postgres://ann:SECRET@127.0.0.1:{port}/db?frobnicate=SECRET"),
    ];
    for url in &urls {
        for args in [
            &["--json", "ledger", "info"][..],
            &["ledger", "info"][..],
            &["--json", "fleet", "add", "f", "a"][..],
            &["show", "dsc_0123"][..],
        ] {
            let out = env.run_with(
                &[("DISCUSS_LEDGER", url), ("PGPASSWORD", "SECRET")],
                args,
                "",
            );
            assert_ne!(out.status, 0, "{url} {args:?}");
            let all = format!("{}{}", out.stdout, out.stderr);
            assert!(!all.contains("SECRET"), "{url} {args:?}: {all}");
        }
    }
}

/// A wrong ledger path fails where CI looks, and every "nothing here"
/// answer names the location it looked at.
#[test]
fn wrong_ledger_paths_do_not_pass_quietly() {
    let env = Env::new();
    let location = env.ledger().display().to_string();
    // verify of a ledger that does not exist fails, naming it.
    let err = env.fails(&["verify"], "ledger_unreadable", 1);
    assert_eq!(err["details"]["ledger"], location.as_str());
    let out = env.run(&["verify"]);
    assert_eq!(out.status, 1);
    assert!(out.stderr.contains(&location), "{}", out.stderr);
    // events says on stderr that there is nothing there (stdout stays a
    // stream of records).
    let out = env.run(&["events"]);
    assert_eq!((out.status, out.stdout.as_str()), (0, ""));
    assert!(
        out.stderr
            .contains(&format!("there is no ledger at {location}")),
        "{}",
        out.stderr
    );
    let out = env.run(&["--json", "events"]);
    assert_eq!((out.status, out.stdout.as_str()), (0, ""));
    assert!(out.stderr.contains("no ledger at"), "{}", out.stderr);
    // Once there is a ledger: an empty list names it, and so does show.
    env.fleet();
    let out = env.run(&["list"]);
    assert_eq!(out.stdout, format!("no discussions in {location}\n"));
    let out = env.run(&["inbox", "--agent", "agent-b"]);
    assert_eq!(
        out.stdout,
        format!("nothing waits for agent-b in {location}\n")
    );
    let err = env.fails(&["show", "dsc_0123456789"], "unknown_discussion", 4);
    assert_eq!(err["details"]["ledger"], location.as_str());
    let out = env.run(&["show", "dsc_0123456789"]);
    assert!(
        out.stderr.contains(&format!("hint: looked in {location}")),
        "{}",
        out.stderr
    );
    env.ok(&["verify"]);
    // A filtered list that finds nothing says what it was filtered by: a
    // mistyped agent must not read as an empty ledger.
    env.ask(&[]);
    let out = env.run(&["list", "--agent", "agent-bb", "--status", "open,active"]);
    assert_eq!(
        out.stdout,
        format!("no discussions (status open,active, agent agent-bb) in {location}\n")
    );
    let out = env.run(&["list", "--fleet", "fleet-beta"]);
    assert_eq!(
        out.stdout,
        format!("no discussions (fleet fleet-beta) in {location}\n")
    );
}

/// A reader pointed at a file that is not a ledger says so and creates
/// nothing beside it; a directory is the same `ledger_unreadable` for
/// readers and writers.
#[test]
fn readers_of_a_file_that_is_not_a_ledger_refuse_it_and_create_nothing() {
    let env = Env::file();
    let readme = env.dir.path().join("README.md");
    std::fs::write(&readme, "# notes\n\nnot a ledger\n").unwrap();
    let folder = env.dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    for location in [&readme, &folder] {
        for args in [
            &["list"][..],
            &["list", "--status", "closed"][..],
            &["inbox", "--agent", "a"][..],
            &["show", "dsc_0123456789"][..],
            &["verify"][..],
            &["events"][..],
            &["ledger", "export"][..],
            &["fleet", "add", "f", "a"][..],
        ] {
            let mut all = vec!["--json"];
            all.extend_from_slice(args);
            let out = env.run_with(&[("DISCUSS_LEDGER", location.to_str().unwrap())], &all, "");
            assert_eq!(out.status, 1, "{location:?} {args:?}: {}", out.stderr);
            assert_eq!(
                out.error()["code"],
                "ledger_unreadable",
                "{location:?} {args:?}"
            );
            assert!(
                out.error()["message"]
                    .as_str()
                    .unwrap()
                    .contains(location.to_str().unwrap())
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(&readme).unwrap(),
        "# notes\n\nnot a ledger\n"
    );
    let mut names: Vec<_> = std::fs::read_dir(env.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["README.md", "folder"],
        "no cache beside a file that is not a ledger"
    );
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
}

/// An ask refused (`unknown_fleet`, exit 4) on any ledger.
const ASK_OF_NO_FLEET: [&str; 9] = [
    "ask",
    "--from",
    "agent-a",
    "--to",
    "agent-b",
    "--fleet",
    "fleet-nope",
    "--payload",
    "{}",
];

/// A write refused on a ledger that does not exist leaves nothing behind:
/// no empty ledger (which `verify` would pass), no cache beside it; so
/// `verify` still fails as for a missing ledger and `mcp` still warns of
/// the empty default.
#[test]
fn a_refused_write_creates_no_ledger() {
    let env = Env::file();
    let err = env.fails(&ASK_OF_NO_FLEET, "unknown_fleet", 4);
    assert_eq!(err["code"], "unknown_fleet");
    env.fails(
        &[
            "kill-switch",
            "on",
            "--fleet",
            "fleet-nope",
            "--reason",
            "x",
        ],
        "unknown_fleet",
        4,
    );
    let state = env.ledger().parent().unwrap().to_owned();
    let left: Vec<String> = std::fs::read_dir(&state)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
    env.fails(&["verify"], "ledger_unreadable", 1);
    // As a host that names no ledger starts mcp, after a refused write
    // there: still the warning of a default that does not exist.
    let home = env.dir.path().join("home");
    let discuss = |args: &[&str]| {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("discuss"))
            .env_clear()
            .env("HOME", &home)
            .env("PATH", "/usr/bin:/bin")
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let refused = discuss(&["fleet", "add", "fleet-alpha", "Not A Name"]);
    assert_eq!(refused.status.code(), Some(3));
    let refused = discuss(&["quota", "set", "5", "--agent", "agent-b"]);
    assert_eq!(refused.status.code(), Some(4), "{refused:?}");
    let mcp = discuss(&["mcp"]);
    let stderr = String::from_utf8_lossy(&mcp.stderr);
    assert!(stderr.contains("does not exist yet"), "{stderr}");
    // A write that is taken makes the ledger, and its cache.
    env.ok(&["fleet", "add", "fleet-alpha", "agent-a"]);
    assert!(env.ledger().exists());
    env.ok(&["verify"]);
}

/// Writers racing on a ledger that does not exist, half of them refused:
/// every write taken is there, whichever came first (a refused creator
/// removes the file it made only while it still holds it, and a writer
/// that waited for its lock opens the path again).
#[test]
fn refused_and_taken_writes_racing_on_a_new_ledger_lose_nothing() {
    for round in 0..10 {
        let env = Env::file();
        let writers: Vec<_> = (0..8)
            .map(|i| {
                let mut command = env.command_std();
                if i % 2 == 0 {
                    command.args(["fleet", "add", "fleet-alpha", &format!("agent-{i}")]);
                } else {
                    command.args(ASK_OF_NO_FLEET);
                }
                command
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let statuses: Vec<i32> = writers
            .into_iter()
            .map(|mut w| w.wait().unwrap().code().unwrap())
            .collect();
        assert_eq!(statuses, [0, 4, 0, 4, 0, 4, 0, 4], "round {round}");
        let fleets = env.ok(&["fleet", "list"]);
        let members = fleets["fleets"][0]["agents"].as_array().unwrap().len();
        assert_eq!(members, 4, "round {round}: {fleets}");
        env.ok(&["verify"]);
    }
}
