//! A ledger that proves itself: every line names the SHA-256 of the line
//! before it (checked here with SHA-256 computed in the test, not by
//! discuss), `verify` finds each kind of tampering at its line, a seal
//! catches what a chain rewritten whole hides, and records written
//! through `serve` say which token wrote them.

use crate::common::http::Served;
use crate::common::*;
use serde_json::{Value, json};

/// Asserts every line's `prev` is the SHA-256 of the line before it (of no
/// bytes for the first); the digest of the last line.
fn assert_chained(bytes: &[u8]) -> String {
    let mut before = sha256_hex(b"");
    for (i, line) in lines_of(bytes).iter().enumerate() {
        let record: Value = serde_json::from_slice(line).unwrap();
        assert_eq!(
            record["prev"],
            format!("sha256:{before}"),
            "line {} names the line before it",
            i + 1
        );
        before = sha256_hex(line);
    }
    before
}

/// A ledger file rewritten by hand is read without the cache of before.
fn forget_the_cache(env: &Env) {
    for derived in ["index", "checkpoint", "summary"] {
        let _ = std::fs::remove_file(env.ledger().with_extension(format!("jsonl.{derived}")));
    }
}

/// `verify --json`'s exit status and ledger findings.
fn findings(env: &Env) -> (i32, Vec<Value>) {
    let out = env.run(&["--json", "verify"]);
    let report = out.json();
    (
        out.status,
        report["ledger_findings"].as_array().unwrap().clone(),
    )
}

/// A file ledger with three discussions, one of them answered: nine
/// lines or more.
fn busy_file() -> Env {
    let env = Env::file();
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "question", false);
    env.ask(&[]);
    env.ask(&[]);
    env
}

#[test]
fn every_line_names_the_sha256_of_the_line_before_it() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "question", false);
    let last = assert_chained(&env.ledger_bytes());
    let report = env.ok(&["verify"]);
    let lines = lines_of(&env.ledger_bytes()).len();
    assert_eq!(
        report["chain"],
        json!({"lines_chained": lines, "first_chained_line": 1, "last_line": lines,
            "last_sha256": last, "imported_restarts": 0})
    );
    // A line another tool appends without `prev` is accepted; the next
    // line discuss writes names it.
    let foreign = json!({"v":1,"kind":"kill_switch","id":"rec_foreign","at_ms":T0,"by":"tool",
        "engaged":false,"reason":null});
    env.append_raw(&format!("{foreign}\n"));
    env.ask(&[]);
    let bytes = env.ledger_bytes();
    let all = lines_of(&bytes);
    let foreign_at = all
        .iter()
        .position(|l| l.starts_with(br#"{"v":1,"kind":"kill_switch""#))
        .unwrap();
    let after: Value = serde_json::from_slice(&all[foreign_at + 1]).unwrap();
    assert_eq!(
        after["prev"],
        format!("sha256:{}", sha256_hex(&all[foreign_at]))
    );
    let report = env.ok(&["verify"]);
    assert_eq!(report["ledger_findings"], json!([]), "{report}");
    assert_eq!(report["chain"]["lines_chained"], all.len() - 1);
}

#[test]
fn a_ledger_written_before_chaining_is_unchained_not_broken() {
    let env = Env::file();
    let (dsc, root) = env.discussion(&[]);
    // The same records as an older discuss wrote them: no `prev`.
    let old: String = lines_of(&env.ledger_bytes())
        .iter()
        .map(|line| {
            let mut record: Value = serde_json::from_slice(line).unwrap();
            record.as_object_mut().unwrap().remove("prev");
            format!("{record}\n")
        })
        .collect();
    std::fs::write(env.ledger(), &old).unwrap();
    forget_the_cache(&env);
    let report = env.ok(&["verify"]);
    assert_eq!(
        report["chain"],
        json!({"lines_chained": 0, "first_chained_line": null, "last_line": 4,
            "last_sha256": sha256_hex(lines_of(old.as_bytes()).last().unwrap()),
            "imported_restarts": 0})
    );
    let human = env.run(&["verify"]);
    assert!(
        human.stdout.contains("chain: no line is chained"),
        "{}",
        human.stdout
    );
    // The next write chains on from the last old line.
    env.wake(&dsc, "agent-b", &root);
    let bytes = env.ledger_bytes();
    let lines = lines_of(&bytes);
    let next: Value = serde_json::from_slice(&lines[4]).unwrap();
    assert_eq!(next["prev"], format!("sha256:{}", sha256_hex(&lines[3])));
    assert_eq!(env.ok(&["verify"])["chain"]["first_chained_line"], 5);
}

#[test]
fn each_kind_of_tampering_is_found_at_its_line() {
    let env = busy_file();
    let original = env.ledger_bytes();
    let lines = lines_of(&original);
    assert!(lines.len() >= 9, "{} lines", lines.len());
    let tamper = |lines: Vec<Vec<u8>>| {
        std::fs::write(env.ledger(), lines.concat()).unwrap();
        forget_the_cache(&env);
        let (status, found) = findings(&env);
        assert_eq!(status, 7, "{found:?}");
        found
            .iter()
            .filter(|f| f["kind"] == "chain_broken")
            .map(|f| f["line"].as_u64().unwrap())
            .collect::<Vec<u64>>()
    };
    // Line `k + 1` (1-based) in the middle of the ledger.
    let k = lines.len() / 2;
    let n = k as u64 + 1;
    // One byte changed, the line still valid JSON and its discussion
    // valid: the next line names the line as it was.
    let mut edited = lines.clone();
    let at = edited[k]
        .windows(13)
        .position(|w| w == br#""by":"tester""#)
        .unwrap();
    edited[k][at + 6] = b'T';
    assert_eq!(tamper(edited), vec![n + 1], "an edited line {n}");
    // A line removed: the line after it names it.
    let mut removed = lines.clone();
    removed.remove(k);
    assert_eq!(tamper(removed), vec![n]);
    // Two lines swapped.
    let mut swapped = lines.clone();
    swapped.swap(k, k + 1);
    assert_eq!(tamper(swapped), vec![n, n + 1, n + 2]);
    let last = lines.len() as u64;
    // A line inserted before the last: a copy of another line's bytes.
    let mut inserted = lines.clone();
    inserted.insert(lines.len() - 1, lines[1].clone());
    assert!(tamper(inserted).contains(&last), "the inserted line");
    // The first line removed: the new first names a line that is gone.
    let mut cut = lines.clone();
    cut.remove(0);
    assert_eq!(tamper(cut)[0], 1);
    std::fs::write(env.ledger(), &original).unwrap();
    assert_eq!(findings(&env), (0, vec![]));
}

#[test]
fn a_rewritten_and_rechained_history_is_caught_only_by_the_seal() {
    let env = busy_file();
    let seal_path = env.dir.path().join("seal.json");
    let seal = env.ok(&["ledger", "seal"]);
    let lines = lines_of(&env.ledger_bytes());
    assert_eq!(seal["line"], lines.len());
    assert_eq!(seal["sha256"], sha256_hex(lines.last().unwrap()));
    assert_eq!(seal["at"], "2026-11-30T00:00:00.000Z", "{seal}");
    assert!(seal.get("signature").is_none());
    std::fs::write(&seal_path, seal.to_string()).unwrap();
    let held = env.ok(&["verify", "--seal", seal_path.to_str().unwrap()]);
    assert_eq!(held["seal"]["line"], lines.len(), "{held}");
    // Later writes keep the seal good: it names a line, not the end.
    env.ask(&[]);
    env.ok(&["verify", "--seal", seal_path.to_str().unwrap()]);

    // A forger rewrites who wrote line 4 and chains every line anew: the chain
    // holds, only the seal tells.
    let mut forged = lines_of(&env.ledger_bytes());
    let text = String::from_utf8(forged[3].clone()).unwrap();
    let rewritten = text.replacen(r#""by":"tester""#, r#""by":"forger""#, 1);
    assert_ne!(rewritten, text);
    forged[3] = rewritten.into_bytes();
    std::fs::write(env.ledger(), rechain(&forged)).unwrap();
    let (status, found) = findings(&env);
    assert_eq!((status, found), (0, vec![]), "the chain alone cannot tell");
    let err = env.fails(
        &["verify", "--seal", seal_path.to_str().unwrap()],
        "seal_mismatch",
        7,
    );
    assert_eq!(err["details"]["line"], lines.len(), "{err}");
    // A ledger cut back below the sealed line.
    std::fs::write(env.ledger(), rechain(&lines[..lines.len() - 2])).unwrap();
    let err = env.fails(
        &["verify", "--seal", seal_path.to_str().unwrap()],
        "seal_mismatch",
        7,
    );
    assert!(
        err["message"].as_str().unwrap().contains("cut back"),
        "{err}"
    );
}

#[test]
fn a_signed_seal_verifies_with_its_key_and_not_with_one_byte_changed() {
    let env = busy_file();
    let key = env.dir.path().join("seal.key");
    let key_arg = key.to_str().unwrap();
    let made = env.ok(&["ledger", "keygen", "--output", key_arg]);
    let public = made["public_key"].as_str().unwrap().to_owned();
    assert!(
        public.starts_with("ed25519:") && public.len() == 8 + 64,
        "{made}"
    );
    let pub_file = format!("{key_arg}.pub");
    assert_eq!(std::fs::read_to_string(&pub_file).unwrap().trim(), public);
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the key is its owner's alone");
    }
    // A key is never replaced.
    env.fails(
        &["ledger", "keygen", "--output", key_arg],
        "invalid_argument",
        3,
    );
    // A key others can read is refused, as ssh refuses one, and nothing
    // is sealed with it.
    for mode in [0o644, 0o640, 0o604, 0o660] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
        let err = env.fails(&["ledger", "seal", "--key", key_arg], "invalid_argument", 3);
        assert!(
            err["hints"][0].as_str().unwrap().contains("chmod 600"),
            "{mode:o}: {err}"
        );
        assert!(!err.to_string().contains("signature"), "{err}");
    }
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o400)).unwrap();
    }
    let seal = env.ok(&["ledger", "seal", "--key", key_arg]);
    assert_eq!(seal["public_key"], public.as_str());
    let signature = seal["signature"].as_str().unwrap().to_owned();
    assert_eq!(signature.len(), 128);
    let seal_path = env.dir.path().join("seal.json");
    let seal_arg = seal_path.to_str().unwrap();
    std::fs::write(&seal_path, seal.to_string()).unwrap();
    let held = env.ok(&["verify", "--seal", seal_arg, "--public-key", &pub_file]);
    assert_eq!(held["seal"]["signed_by"], public.as_str());
    assert_eq!(held["seal"]["key_pinned"], true);
    let held = env.ok(&["verify", "--seal", seal_arg, "--public-key", &public]);
    assert_eq!(held["seal"]["key_pinned"], true);

    // One hex digit of the signature changed.
    let mut changed = seal.clone();
    let flipped = if signature.starts_with('0') { "1" } else { "0" };
    changed["signature"] = format!("{flipped}{}", &signature[1..]).into();
    std::fs::write(&seal_path, changed.to_string()).unwrap();
    env.fails(&["verify", "--seal", seal_arg], "seal_mismatch", 7);
    // The sealed line moved, the signature kept.
    let mut moved = seal.clone();
    moved["line"] = (seal["line"].as_u64().unwrap() - 1).into();
    std::fs::write(&seal_path, moved.to_string()).unwrap();
    env.fails(&["verify", "--seal", seal_arg], "seal_mismatch", 7);
    // Another key pinned, or none on the seal when one is asked for.
    let other = env.dir.path().join("other.key");
    let other_public =
        env.ok(&["ledger", "keygen", "--output", other.to_str().unwrap()])["public_key"]
            .as_str()
            .unwrap()
            .to_owned();
    std::fs::write(&seal_path, seal.to_string()).unwrap();
    env.fails(
        &["verify", "--seal", seal_arg, "--public-key", &other_public],
        "seal_mismatch",
        7,
    );
    let unsigned = env.ok(&["ledger", "seal"]);
    std::fs::write(&seal_path, unsigned.to_string()).unwrap();
    env.fails(
        &["verify", "--seal", seal_arg, "--public-key", &public],
        "seal_mismatch",
        7,
    );
    // Not a seal, not a key: the contract's invalid_argument.
    std::fs::write(&seal_path, "{}").unwrap();
    env.fails(&["verify", "--seal", seal_arg], "invalid_argument", 3);
    env.fails(
        &["ledger", "seal", "--key", &pub_file],
        "invalid_argument",
        3,
    );
    // A broken chain is not sealed.
    let mut lines = lines_of(&env.ledger_bytes());
    lines.remove(4);
    std::fs::write(env.ledger(), lines.concat()).unwrap();
    env.fails(&["ledger", "seal"], "integrity_findings", 7);
}

/// Sixteen writers at once, each a process of its own: one chain, every
/// line naming the line before it, and time never going backwards from
/// one line to the next (on a database, lines are numbered after their
/// writers planned them side by side).
/// Each writer's clock is a second behind the one before it, so that the
/// order writers are numbered in shows in `at_ms`.
fn racing_writers_leave_one_intact_chain(env: Env) {
    env.fleet();
    std::thread::scope(|scope| {
        for i in 0..16i64 {
            let env = &env;
            scope.spawn(move || {
                let now = (T0 + 20_000 - 1_000 * i).to_string();
                let mut args = ASK_A_TO_B.to_vec();
                args.extend(["{\"body\":\"racing\"}", "--json"]);
                let out = env.run_with(&[("DISCUSS_NOW", &now)], &args, "");
                assert_eq!(out.status, 0, "{}", out.stderr);
            });
        }
    });
    let bytes = env.ledger_bytes();
    assert_chained(&bytes);
    let times: Vec<i64> = lines_of(&bytes)
        .iter()
        .map(|l| {
            serde_json::from_slice::<Value>(l).unwrap()["at_ms"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(times.len(), 3 + 16);
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "at_ms in line order: {times:?}"
    );
    assert_eq!(findings(&env), (0, vec![]));
}

#[test]
fn racing_writers_leave_one_intact_chain_on_a_file() {
    racing_writers_leave_one_intact_chain(Env::file());
}

#[test]
fn racing_writers_leave_one_intact_chain_on_a_database() {
    let Some(db) = Env::postgres() else { return };
    racing_writers_leave_one_intact_chain(db);
}

/// A row edited in the database is a finding at its line: the chain's at
/// the line after it, and the state's at the last line, whose digest and
/// bytes the state row kept; never a wrapped number.
#[test]
fn a_row_edited_in_the_database_is_a_finding_at_its_line() {
    let Some(db) = Env::postgres() else { return };
    db.discussion(&[]);
    db.ask(&[]);
    let lines = lines_of(&db.ledger_bytes()).len() as i64;
    let mut client =
        ::postgres::Client::connect(db.pg.as_ref().unwrap(), ::postgres::NoTls).unwrap();
    let lengthen = |client: &mut ::postgres::Client, line: i64| {
        client
            .execute(
                "UPDATE discuss_lines SET line = convert_to(replace(convert_from(line, 'UTF8'), \
                 '\"by\":\"tester\"', '\"by\":\"tester, edited by hand\"'), 'UTF8') \
                 WHERE line_no = $1",
                &[&line],
            )
            .unwrap()
    };
    assert_eq!(lengthen(&mut client, lines), 1);
    let out = db.run(&["--json", "verify"]);
    assert_eq!(out.status, 7, "{}", out.stdout);
    let report = out.json();
    assert_eq!(report["torn_tail_bytes"], 0, "{report}");
    let kinds: Vec<(&str, u64)> = report["ledger_findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].as_str().unwrap(), f["line"].as_u64().unwrap()))
        .collect();
    let last = lines as u64;
    assert_eq!(
        kinds,
        vec![("chain_broken", last), ("rows_edited", last)],
        "{report}"
    );
    // A row in the middle: the line after it tells.
    assert_eq!(lengthen(&mut client, 2), 1);
    let report = db.run(&["--json", "verify"]).json();
    assert!(
        report["ledger_findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "chain_broken" && f["line"] == 3),
        "{report}"
    );
}

#[test]
fn records_written_through_serve_carry_the_verified_token_id() {
    let env = Env::new();
    env.fleet();
    let issued = env.ok(&["token", "issue", "agent-a"]);
    let (token, token_id) = (
        issued["token"].as_str().unwrap().to_owned(),
        issued["token_id"].as_str().unwrap().to_owned(),
    );
    let server = Served::start(&env, &[]);
    let asked = server.post(
        "/v1/tools/ask_peer",
        Some(&token),
        &json!({"from_agent_id": "agent-a", "to_agent_id": "agent-b", "fleet_id": "fleet-alpha",
            "payload": "{\"body\":\"over HTTP\"}"}),
    );
    assert_eq!(asked.status, 200, "{}", asked.text());
    let dsc = asked.json()["discussion_id"].as_str().unwrap().to_owned();
    drop(server);
    // The CLI's own write beside it carries none.
    let (cli_dsc, _) = env.ask(&[]);
    let records = env.records();
    let root = records
        .iter()
        .find(|r| r["correlation_id"] == dsc.as_str())
        .unwrap();
    assert_eq!(root["token_id"], token_id.as_str(), "{root}");
    let cli_root = records
        .iter()
        .find(|r| r["correlation_id"] == cli_dsc.as_str())
        .unwrap();
    assert!(cli_root.get("token_id").is_none(), "{cli_root}");
    // Never the token itself.
    assert!(!String::from_utf8_lossy(&env.ledger_bytes()).contains(&token));
    let shown = env.show(&dsc);
    assert_eq!(shown["transcript"][0]["token_id"], token_id.as_str());
    assert_eq!(shown["transcript"][0]["by"], root["by"]);
    assert_eq!(env.show(&cli_dsc)["transcript"][0]["token_id"], Value::Null);
    let human = env.run(&["show", &dsc]);
    assert!(
        human.stdout.contains(&format!("(token {token_id})")),
        "{}",
        human.stdout
    );
}

/// The line a forger puts in place of `line`: an import line that names
/// the line before it, as long as `line` (its `by` padded, so that a
/// database's byte count holds), excusing the next line's `prev` by name
/// when `names_what_it_excuses`.
fn forged_import_line(before: &[u8], line: &[u8], names_what_it_excuses: bool) -> Vec<u8> {
    let make = |by: &str| {
        let mut mark = json!({
            "v": 1, "kind": "import", "id": "imp_01a251269f2276f9a747774232bcf6e4",
            "at_ms": T0, "by": by, "lines": 1, "chain_restarts": [],
        });
        if names_what_it_excuses {
            mark["restart_prevs"] = json!([sha256_hex(line)]);
        }
        mark["prev"] = format!("sha256:{}", sha256_hex(before)).into();
        let mut bytes = serde_json::to_vec(&mark).unwrap();
        bytes.push(b'\n');
        bytes
    };
    let short = make("");
    assert!(short.len() <= line.len(), "the forged line fits");
    make(&"x".repeat(line.len() - short.len()))
}

/// A sealed history edited at one line, the next line turned into an import
/// line to excuse the break: the chain finds a mark that names nothing it
/// excuses; one that names it passes the chain (a forger who can write can
/// name any digest), and never the seal, which holds every line up to its
/// own. On a database the forger edits rows and keeps their byte count.
fn a_forged_import_line_cannot_pass_a_seal(env: Env) {
    let (dsc, root) = env.discussion(&[]);
    // The harmless line the forger turns into an import line.
    env.ok(&[
        "fleet",
        "add",
        "fleet-beta-for-the-quarterly-review-of-payments",
        "agent-d-who-reads-the-quarterly-review",
    ]);
    let att = env.wake(&dsc, "agent-b", &root);
    env.reply(&dsc, "agent-b", &att, &root, "question", false);
    let key = env.dir.path().join("seal.key");
    let made = env.ok(&["ledger", "keygen", "--output", key.to_str().unwrap()]);
    let public = made["public_key"].as_str().unwrap().to_owned();
    let seal = env.ok(&["ledger", "seal", "--key", key.to_str().unwrap()]);
    let seal_path = env.dir.path().join("seal.json");
    std::fs::write(&seal_path, seal.to_string()).unwrap();
    let seal_arg = seal_path.to_str().unwrap();
    env.ok(&["verify", "--seal", seal_arg, "--public-key", &public]);

    let honest = lines_of(&env.ledger_bytes());
    let root_at = honest
        .iter()
        .position(|l| String::from_utf8_lossy(l).contains(&root))
        .unwrap();
    let mut edited = String::from_utf8(honest[root_at].clone()).unwrap();
    edited = edited.replacen(r#""by":"tester""#, r#""by":"forger""#, 1);
    assert_ne!(edited.as_bytes(), honest[root_at]);
    for names_what_it_excuses in [false, true] {
        let mut forged = honest.clone();
        forged[root_at] = edited.clone().into_bytes();
        forged[root_at + 1] = forged_import_line(
            &forged[root_at],
            &honest[root_at + 1],
            names_what_it_excuses,
        );
        match &env.pg {
            None => {
                std::fs::write(env.ledger(), forged.concat()).unwrap();
                forget_the_cache(&env);
            }
            Some(url) => {
                let mut client = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
                for at in [root_at, root_at + 1] {
                    let row = forged[at].strip_suffix(b"\n").unwrap();
                    let line_no = at as i64 + 1;
                    client
                        .execute(
                            "UPDATE discuss_lines SET line = $1 WHERE line_no = $2",
                            &[&row, &line_no],
                        )
                        .unwrap();
                }
            }
        }
        let (status, found) = findings(&env);
        if names_what_it_excuses {
            assert_eq!(
                (status, &found),
                (0, &vec![]),
                "the chain alone cannot tell"
            );
        } else {
            assert_eq!(status, 7, "{found:?}");
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!(found[0]["kind"], "chain_broken");
            assert_eq!(found[0]["line"], root_at + 3, "{found:?}");
        }
        let err = env.fails(
            &["verify", "--seal", seal_arg, "--public-key", &public],
            "seal_mismatch",
            7,
        );
        assert!(err["message"].as_str().unwrap().contains("do not"), "{err}");
    }
}

#[test]
fn a_forged_import_line_cannot_pass_a_seal_on_a_file() {
    a_forged_import_line_cannot_pass_a_seal(Env::file());
}

#[test]
fn a_forged_import_line_cannot_pass_a_seal_on_a_database() {
    let Some(db) = Env::postgres() else { return };
    a_forged_import_line_cannot_pass_a_seal(db);
}
