//! The index and checkpoint are a cache: every command answers the same
//! with them, without them, and with them stale or damaged.

use crate::common::*;
use serde_json::Value;
use std::path::PathBuf;

mod damaged;

fn cache_files(env: &Env) -> [PathBuf; 3] {
    let ledger = env.ledger().display().to_string();
    [
        PathBuf::from(format!("{ledger}.index")),
        PathBuf::from(format!("{ledger}.checkpoint")),
        PathBuf::from(format!("{ledger}.summary")),
    ]
}

fn delete_cache(env: &Env) {
    for file in cache_files(env) {
        let _ = std::fs::remove_file(file);
    }
}

/// A ledger with every status, global state of every kind, a line another
/// tool wrote that is not a record, and more discussions than one.
fn busy_ledger(env: &mut Env) -> Vec<String> {
    env.fleet();
    env.ok(&["quota", "set", "7", "--agent", "agent-b"]);
    env.ok(&["quota", "set", "40"]);
    let mut ids = Vec::new();
    // closed
    let (closed, root) = env.discussion(&[]);
    let attempt = env.wake(&closed, "agent-b", &root);
    env.reply(&closed, "agent-b", &attempt, &root, "result", true);
    ids.push(closed);
    // exhausted, with its escalation
    let (exhausted, root) = env.discussion(&["--max-turns", "2"]);
    let attempt = env.wake(&exhausted, "agent-b", &root);
    env.reply(&exhausted, "agent-b", &attempt, &root, "result", false);
    ids.push(exhausted);
    // deadman and expired, by moving the clock
    let (deadman, root) = env.discussion(&["--turn-timeout-ms", "5000", "--timeout-ms", "60000"]);
    env.wake(&deadman, "agent-b", &root);
    let (expired, _) = env.discussion(&["--timeout-ms", "30000", "--turn-timeout-ms", "10000"]);
    // Half a second off the minute, so relative times never sit on a boundary.
    env.advance(61_500);
    env.append_raw("not a record\n");
    // a question answered, then active
    let (active, root) = env.discussion(&[]);
    let attempt = env.wake(&active, "agent-b", &root);
    let question = env.reply(&active, "agent-b", &attempt, &root, "question", false);
    env.wake(&active, "agent-a", &question);
    ids.push(active);
    ids.push(deadman);
    ids.push(expired);
    let (open, _) = env.discussion(&[]);
    ids.push(open);
    env.ok(&["kill-switch", "on", "--reason", "maintenance"]);
    env.ok(&["kill-switch", "off"]);
    ids
}

/// What every reader prints, exit status included.
fn answers(env: &Env, ids: &[String]) -> Vec<(Vec<String>, i32, String, String)> {
    answers_with(env, ids, &[])
}

/// As `answers`, with more of the environment set.
fn answers_with(
    env: &Env,
    ids: &[String],
    more: &[(&str, &str)],
) -> Vec<(Vec<String>, i32, String, String)> {
    answers_of(env, every_reader(ids), more)
}

/// An id one character off `id`: a discussion the ledger does not have.
fn near_miss(id: &str) -> String {
    let last = if id.ends_with('0') { '1' } else { '0' };
    format!("{}{last}", &id[..id.len() - 1])
}

/// Every reader of the ledger, on every discussion of `ids`.
fn every_reader(ids: &[String]) -> Vec<Vec<String>> {
    let mut commands: Vec<Vec<String>> = vec![
        // A resumed stream finds its place through the index (first: a
        // reader that finds the index damaged rebuilds it).
        vec![
            "events".into(),
            "--after".into(),
            "9".into(),
            "--json".into(),
        ],
        vec![
            "events".into(),
            "--after".into(),
            "25".into(),
            "--json".into(),
        ],
        vec!["list".into()],
        vec!["list".into(), "--json".into()],
        // Lists of many discussions, from the summary where it holds.
        vec!["list".into(), "--status".into(), "terminal".into()],
        vec![
            "list".into(),
            "--agent".into(),
            "agent-b".into(),
            "--json".into(),
        ],
        vec![
            "list".into(),
            "--fleet".into(),
            "fleet-alpha".into(),
            "--json".into(),
        ],
        vec![
            "list".into(),
            "--status".into(),
            "closed,expired,open".into(),
            "--json".into(),
        ],
        vec![
            "inbox".into(),
            "--agent".into(),
            "agent-b".into(),
            "--json".into(),
        ],
        vec!["verify".into(), "--json".into()],
        vec!["quota".into(), "show".into(), "--json".into()],
        vec!["fleet".into(), "list".into(), "--json".into()],
        vec!["kill-switch".into(), "status".into(), "--json".into()],
        // An unknown id near a real one: the hint comes from the cache.
        vec!["show".into(), near_miss(&ids[0]), "--json".into()],
        vec!["show".into(), ids[0][..12].to_string(), "--json".into()],
    ];
    for id in ids {
        commands.push(vec!["show".into(), id.clone(), "--json".into()]);
        commands.push(vec!["show".into(), id.clone()]);
        commands.push(vec![
            "wait".into(),
            id.clone(),
            "--until".into(),
            "terminal".into(),
            "--timeout-ms".into(),
            "0".into(),
            "--json".into(),
        ]);
    }
    commands
}

/// What `commands` print, run one after the other.
fn answers_of(
    env: &Env,
    commands: Vec<Vec<String>>,
    more: &[(&str, &str)],
) -> Vec<(Vec<String>, i32, String, String)> {
    commands
        .into_iter()
        .map(|args| {
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let vars: Vec<(&str, &str)> =
                [("COLUMNS", "120")].iter().chain(more).copied().collect();
            let out = env.run_with(&vars, &argv, "");
            (args, out.status, without_spans(&out.stdout), out.stderr)
        })
        .collect()
}

fn assert_same(
    expected: &[(Vec<String>, i32, String, String)],
    got: &[(Vec<String>, i32, String, String)],
    case: &str,
) {
    for (e, g) in expected.iter().zip(got) {
        assert_eq!(
            e,
            g,
            "{case}: `discuss {}` answers differently",
            e.0.join(" ")
        );
    }
}

// One busy ledger taken through each way the cache can be wrong (missing,
// rebuilt on both cores, stale, replaced, another's), the answers
// compared each time with the first: one story, kept in one place. The
// damaged files have tests of their own below, which run alongside.
#[test]
fn readers_answer_the_same_with_a_missing_stale_or_foreign_cache() {
    let mut env = Env::new();
    let ids = busy_ledger(&mut env);
    let [index, checkpoint, summary] = cache_files(&env);
    assert!(
        index.exists() && checkpoint.exists(),
        "writers keep the cache"
    );
    let expected = answers(&env, &ids);
    let statuses: Vec<String> = ids.iter().map(|id| env.status(id)).collect();
    assert_eq!(
        statuses,
        [
            "closed",
            "exhausted",
            "active",
            "deadman",
            "expired",
            "open"
        ]
    );

    // Missing: rebuilt by the first reader, which also removes what a crash
    // in the middle of rewriting the cache would have left.
    delete_cache(&env);
    let leftover = PathBuf::from(format!("{}.index.4242", env.ledger().display()));
    std::fs::write(&leftover, b"half an index").unwrap();
    assert_same(&expected, &answers(&env, &ids), "no cache");
    assert!(
        index.exists() && checkpoint.exists() && summary.exists(),
        "a reader rebuilds the cache, and a list writes the summary"
    );
    assert!(!leftover.exists(), "a crash's leftover is removed");

    // Rebuilt as a long ledger is, its lines peeked at by both cores in
    // turns (here three lines a batch: many batches each way).
    delete_cache(&env);
    let on_both_cores = [
        ("DISCUSS_AHEAD_FROM_BYTES", "0"),
        ("DISCUSS_BATCH_LINES", "3"),
    ];
    assert_same(
        &expected,
        &answers_with(&env, &ids, &on_both_cores),
        "rebuilt on both cores",
    );

    // Stale: a checkpoint from before the last writes is caught up.
    let old_checkpoint = std::fs::read(&checkpoint).unwrap();
    let old_index = std::fs::read(&index).unwrap();
    let old_summary = std::fs::read(&summary).unwrap();
    let before = env.ledger_bytes();
    let (later, _) = env.discussion(&[]);
    let mut ids_later = ids.clone();
    ids_later.push(later);
    let expected_later = answers(&env, &ids_later);
    std::fs::write(&checkpoint, &old_checkpoint).unwrap();
    std::fs::write(&index, &old_index).unwrap();
    std::fs::write(&summary, &old_summary).unwrap();
    assert_same(
        &expected_later,
        &answers(&env, &ids_later),
        "stale checkpoint",
    );
    assert!(env.ledger_bytes().starts_with(&before));

    // The ledger's bytes replaced in place by longer, different ones (the
    // same file, so the same inode): the cache no longer describes it.
    let mut other = Env::new();
    let other_ids = busy_ledger(&mut other);
    let (extra, _) = other.discussion(&[]);
    let mut all_other = other_ids.clone();
    all_other.push(extra);
    env.ok(&["list"]); // a good cache of the old content, the summary too
    let saved = env.ledger_bytes();
    std::fs::write(env.ledger(), other.ledger_bytes()).unwrap();
    let theirs = answers(&other, &all_other);
    let ours = answers(&env, &all_other);
    for (t, o) in theirs.iter().zip(&ours) {
        // Paths differ between the two; everything else is the same.
        let strip = |s: &str| {
            s.replace(&other.dir.path().display().to_string(), "")
                .replace(&env.dir.path().display().to_string(), "")
        };
        assert_eq!(
            (t.1, strip(&t.2), strip(&t.3)),
            (o.1, strip(&o.2), strip(&o.3)),
            "replaced ledger: {:?}",
            t.0
        );
    }
    std::fs::write(env.ledger(), saved).unwrap();

    // A cache of another ledger, copied over this one's.
    let mut other = Env::new();
    busy_ledger(&mut other);
    other.ok(&["list"]); // writes its summary
    for (theirs, ours) in cache_files(&other).iter().zip(cache_files(&env)) {
        std::fs::copy(theirs, ours).unwrap();
    }
    assert_same(
        &expected_later,
        &answers(&env, &ids_later),
        "another ledger's cache",
    );
}

/// Writers decide the same with and without the cache: the same refusals,
/// the same acceptances, on copies of one ledger.
#[test]
fn writers_decide_the_same_with_and_without_the_cache() {
    let mut env = Env::new();
    let ids = busy_ledger(&mut env);
    let (dsc, root) = env.discussion(&[]);
    let active = &ids[2];
    let active_head = env.show(active)["head"]["message_id"]
        .as_str()
        .unwrap()
        .to_string();
    let writes: Vec<Vec<&str>> = vec![
        wake_argv("agent-b", &dsc, &root, &[], false),
        wake_argv("agent-b", &ids[0], &root, &[], false),
        wake_argv("agent-a", active, &active_head, &[], false),
        wake_argv("agent-b", &dsc[..20], &root, &[], false),
        [&ASK_A_TO_B[..], &["{}"]].concat(),
        vec![
            "ask",
            "--from",
            "agent-a",
            "--to",
            "agent-z",
            "--fleet",
            "fleet-alpha",
            "--payload",
            "{}",
        ],
        vec!["fleet", "add", "fleet-alpha", "agent-a"],
        vec!["kill-switch", "on", "--reason", "x"],
    ];
    for (i, write) in writes.iter().enumerate() {
        let mut args = vec!["--json"];
        args.extend(write);
        let before = env.ledger_bytes();
        let with = env.run(&args);
        let written = env.ledger_bytes().len() - before.len();
        // The same write on the same ledger, without the cache.
        std::fs::write(env.ledger(), &before).unwrap();
        delete_cache(&env);
        let without = env.run(&args);
        assert_eq!(with.status, without.status, "write {i}: {write:?}");
        assert_eq!(
            normalize(&with.stderr),
            normalize(&without.stderr),
            "write {i}: {write:?}"
        );
        assert_eq!(
            normalize(&with.stdout),
            normalize(&without.stdout),
            "write {i}: {write:?}"
        );
        assert_eq!(
            env.ledger_bytes().len() - before.len(),
            written,
            "write {i}: {write:?}"
        );
    }
}

/// Ids and times the second run makes anew.
fn normalize(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(pos) = ["msg_", "att_", "rcp_", "rec_", "dsc_"]
        .iter()
        .filter_map(|p| rest.find(p))
        .min()
    {
        out.push_str(&rest[..pos]);
        let id_len = rest[pos + 4..]
            .bytes()
            .take_while(|b| b.is_ascii_hexdigit())
            .count();
        out.push_str("<id>");
        rest = &rest[pos + 4 + id_len..];
    }
    out.push_str(rest);
    // Times: two runs may stamp a millisecond apart.
    out.chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect()
}

/// Past `MERGE_AT` entries the checkpoint's entries are merged into a new
/// index; answers stay the same through merges (the threshold is lowered
/// for the test).
#[test]
fn merging_into_a_new_index_changes_no_answer() {
    let mut env = Env::new();
    let ids = busy_ledger(&mut env);
    let index = &cache_files(&env)[0];
    let merge = [("DISCUSS_CACHE_MERGE_AT", "5")];
    let mut sizes = Vec::new();
    let mut all = ids.clone();
    for _ in 0..12 {
        let out = env.run_with(
            &merge,
            &[
                "--json",
                "ask",
                "--from",
                "agent-a",
                "--to",
                "agent-c",
                "--fleet",
                "fleet-alpha",
                "--payload",
                "{}",
            ],
            "",
        );
        assert_eq!(out.status, 0, "{}", out.stderr);
        all.push(out.json()["discussion_id"].as_str().unwrap().to_string());
        sizes.push(std::fs::metadata(index).unwrap().len());
    }
    sizes.dedup();
    assert!(
        sizes.len() >= 2,
        "the index was rewritten by merges: {sizes:?}"
    );
    let merged = answers(&env, &all);
    delete_cache(&env);
    assert_same(&merged, &answers(&env, &all), "after merges");
}

/// Human output with its relative times ("in 4m59s", "1m01s ago") made
/// one token: two runs a millisecond apart may round a span differently.
/// Padding and rules are collapsed, as a span's width may change a column.
fn without_spans(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        // A span: digits and unit letters, starting with a digit.
        if chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric()) {
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_digit() || "smhd".contains(chars[j])) {
                j += 1;
            }
            let token: String = chars[i..j].iter().collect();
            let is_span = token.ends_with(['s', 'm', 'h', 'd'])
                && (j == chars.len() || !chars[j].is_alphanumeric());
            if is_span {
                out.push('~');
                i = j;
                continue;
            }
        }
        let c = chars[i];
        if matches!(c, ' ' | '─' | '═') && out.ends_with(c) {
            i += 1;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

#[test]
fn a_same_length_edit_in_place_is_noticed() {
    let env = Env::new();
    let (dsc, root) = env.discussion(&[]);
    env.ok(&["quota", "set", "5", "--agent", "agent-b"]);
    // Not the last line: the cache checks that one already.
    env.ok(&["fleet", "add", "fleet-beta", "agent-x"]);
    // The cache now holds quota 5; an operator's edit in place makes it 0,
    // same length, same inode.
    assert_eq!(env.show(&dsc)["status"], "open");
    let text = String::from_utf8(env.ledger_bytes()).unwrap();
    let edited = text.replace(r#""wakes_per_hour":5"#, r#""wakes_per_hour":0"#);
    assert_eq!(edited.len(), text.len());
    assert_ne!(edited, text);
    let ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(env.ledger()).unwrap());
    std::fs::write(env.ledger(), &edited).unwrap();
    let same = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(env.ledger()).unwrap());
    assert_eq!(ino, same);
    let err = env.fails(
        &wake_argv("agent-b", &dsc, &root, &[], false),
        "wake_quota_exceeded",
        6,
    );
    assert_eq!(err["details"]["wakes_per_hour"], 0);
}

/// `inbox` and `list --status open/active` with the live set (`cache::live`)
/// of capacity `capacity` (the tests' `DISCUSS_CACHE_LIVE_CAPACITY`), and
/// what deriving every discussion (`list` without a filter) says.
fn live_readers(env: &Env, capacity: &str) -> (Vec<Value>, Vec<Value>) {
    let envs = [("DISCUSS_CACHE_LIVE_CAPACITY", capacity)];
    let rows = |args: &[&str]| -> Vec<Value> {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = env.run_with(&envs, &all, "");
        assert_eq!(out.status, 0, "{args:?}: {}", out.stderr);
        out.json()["discussions"].as_array().unwrap().clone()
    };
    let everything = rows(&["list"]);
    let expected_live: Vec<Value> = everything
        .iter()
        .filter(|r| r["status"] == "open" || r["status"] == "active")
        .cloned()
        .collect();
    let expected_inbox: Vec<Value> = everything
        .iter()
        .filter(|r| r["status"] == "open" && r["head_to_agent_id"] == "agent-b")
        .cloned()
        .collect();
    (
        vec![
            Value::Array(rows(&["list", "--status", "open", "--status", "active"])),
            Value::Array(rows(&["inbox", "--agent", "agent-b"])),
        ],
        vec![Value::Array(expected_live), Value::Array(expected_inbox)],
    )
}

#[test]
fn open_and_active_come_from_the_live_set_or_from_everything_and_agree() {
    for capacity in ["4096", "3", "1"] {
        let mut env = Env::new();
        let envs = [("DISCUSS_CACHE_LIVE_CAPACITY", capacity)];
        let run = |env: &Env, args: &[&str]| {
            let mut all = vec!["--json"];
            all.extend_from_slice(args);
            let out = env.run_with(&envs, &all, "");
            assert_eq!(out.status, 0, "{args:?}: {}", out.stderr);
            out.json()
        };
        run(&env, &["fleet", "add", "fleet-alpha", "agent-a", "agent-b"]);
        let ask = |env: &Env| -> (String, String) {
            let mut args = ASK_A_TO_B.to_vec();
            args.push(r#"{"body":"x"}"#);
            let v = run(env, &args);
            (
                v["discussion_id"].as_str().unwrap().into(),
                v["root_message_id"].as_str().unwrap().into(),
            )
        };
        // Old ones, long terminal by time (expired, deadman), then a
        // closed one, an active one and open ones within the last minutes.
        let (old, old_root) = ask(&env);
        run(&env, &wake_argv("agent-b", &old, &old_root, &[], false));
        ask(&env);
        env.advance(20 * 60_000);
        let (closed, closed_root) = ask(&env);
        let att = run(
            &env,
            &wake_argv("agent-b", &closed, &closed_root, &[], false),
        );
        let att = att["attempt"]["attempt_id"].as_str().unwrap().to_owned();
        run(
            &env,
            &[
                "reply",
                "--agent",
                "agent-b",
                "--discussion",
                &closed,
                "--attempt",
                &att,
                "--reply-to",
                &closed_root,
                "--type",
                "result",
                "--payload",
                "{}",
                "--close",
            ],
        );
        let (active, active_root) = ask(&env);
        run(
            &env,
            &wake_argv("agent-b", &active, &active_root, &[], false),
        );
        for _ in 0..3 {
            ask(&env);
            env.advance(60_000);
        }
        let (got, expected) = live_readers(&env, capacity);
        assert_eq!(got, expected, "capacity {capacity}");
        let live = got[0].as_array().unwrap();
        assert_eq!(live.len(), 3, "open ones (the active one lapsed): {live:?}");
        assert!(live.iter().all(|r| r["discussion_id"] != old.as_str()));
        // The same after a rebuild from scratch, and after time passes
        // everything by.
        delete_cache(&env);
        assert_eq!(live_readers(&env, capacity).0, expected);
        env.advance(16 * 60_000);
        let (got, expected) = live_readers(&env, capacity);
        assert_eq!(got, expected);
        assert_eq!(got[0], Value::Array(vec![]));
    }
}

/// The lists served from the summary (`<ledger>.summary`) agree with a
/// full replay: at once, after the clock lapses open and active
/// discussions with no new line, after a line another tool appended turns
/// a closed discussion invalid, and after merges carried the summary over
/// to new bases (which the next list then reads, without writing it).
#[test]
fn lists_from_the_summary_agree_with_a_full_replay() {
    let mut env = Env::new();
    let ids = busy_ledger(&mut env);
    let summary = cache_files(&env)[2].clone();
    let lists: Vec<Vec<&str>> = vec![
        vec!["list", "--json"],
        vec!["list", "--status", "terminal", "--json"],
        vec!["list", "--status", "open,active", "--json"],
        vec!["list", "--agent", "agent-b", "--json"],
        vec!["list", "--fleet", "fleet-alpha", "--json"],
        vec!["inbox", "--agent", "agent-b", "--json"],
    ];
    let run = |env: &Env| -> Vec<(i32, String)> {
        lists
            .iter()
            .map(|args| {
                let out = env.run(args);
                (out.status, out.stdout)
            })
            .collect()
    };
    let replayed = |env: &Env| -> Vec<(i32, String)> {
        lists
            .iter()
            .map(|args| {
                let _ = std::fs::remove_file(&summary);
                let out = env.run(args);
                (out.status, out.stdout)
            })
            .collect()
    };
    // Every discussion in the base: a rebuild, then a list writes it all.
    delete_cache(&env);
    env.ok(&["list"]);
    assert!(summary.exists(), "a list writes the summary");
    assert_eq!(run(&env), replayed(&env), "at once");
    // The open and active ones lapse with no new line.
    env.advance(16 * 60_000);
    let lapsed = run(&env);
    assert_eq!(lapsed, replayed(&env), "after the clock moved");
    assert_eq!(env.status(&ids[5]), "expired");
    assert_eq!(env.status(&ids[2]), "deadman");
    // A closed discussion turned invalid by a line imported after the base
    // (the checkpoint takes it in; the base and its summary stay): a second
    // copy of its closing reply, under an id of its own.
    let closing = env
        .records()
        .into_iter()
        .rfind(|r| r["kind"] == "message" && r["correlation_id"] == ids[0].as_str())
        .unwrap();
    let mut copy = closing.clone();
    copy["id"] = "msg_0000000000007000800000000000abcd".into();
    copy.as_object_mut().unwrap().remove("op_lines");
    copy.as_object_mut().unwrap().remove("op_id");
    let out = env.run_stdin(&["ledger", "import", "-"], &format!("{copy}\n"));
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(env.status(&ids[0]), "invalid");
    assert_eq!(run(&env), replayed(&env), "after a line turned one invalid");
    // Merges carry the summary to each new base.
    env.ok(&["list"]);
    let merge = [("DISCUSS_CACHE_MERGE_AT", "5")];
    let mut headers = Vec::new();
    for _ in 0..12 {
        let mut args = vec!["--json"];
        args.extend(ASK_A_TO_B);
        args.push("{}");
        assert_eq!(env.run_with(&merge, &args, "").status, 0);
        let text = std::fs::read_to_string(&summary).unwrap();
        headers.push(text.lines().next().unwrap().to_owned());
    }
    headers.dedup();
    assert!(
        headers.len() >= 2,
        "merges wrote new summaries: {headers:?}"
    );
    let carried = std::fs::metadata(&summary).unwrap();
    let after_merges = run(&env);
    let read = std::fs::metadata(&summary).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        (carried.ino(), carried.mtime_nsec()),
        (read.ino(), read.mtime_nsec()),
        "the carried summary is read as it is"
    );
    assert_eq!(after_merges, replayed(&env), "after merges");
}
