//! `discuss search` (and `GET /v1/search`): answers checked against a
//! reference made here from each discussion's derived transcript (a scan:
//! string values' words, lower-cased, phrases adjacent), with the filters,
//! the limit and the order; the index deleted and made again, caught up
//! after writes and past a torn line; an agent token finding only its
//! own. On a file and, with the suite's PostgreSQL run, on a database.

use crate::common::http::Served;
use crate::common::{Env, reply_args};
use crate::serve::token;
use serde_json::{Value, json};

const WORDS: [&str; 16] = [
    "auth",
    "refactor",
    "token",
    "refresh",
    "deploy",
    "Straße",
    "ÉTÉ",
    "日本語",
    "v2",
    "cache",
    "flaky",
    "lunch",
    "review",
    "merge",
    "rollback",
    "incident",
];

/// A deterministic corpus: discussions of a → b (fleet-alpha) and c → a
/// (fleet-beta), each with a root and up to two replies, bodies drawn
/// from `WORDS`, some closed.
fn corpus(env: &Env) -> Vec<String> {
    env.fleet();
    env.ok(&["fleet", "add", "fleet-beta", "agent-c", "agent-a"]);
    let mut seed: u64 = 7;
    let mut next = move |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    let body = |next: &mut dyn FnMut(usize) -> usize| {
        let words: Vec<&str> = (0..3 + next(6)).map(|_| WORDS[next(WORDS.len())]).collect();
        // Keys never count; nested strings do.
        json!({"body": words.join(" "), "auth_key_never": 1,
            "notes": [format!("see {}", WORDS[next(WORDS.len())])]})
        .to_string()
    };
    let mut ids = Vec::new();
    for i in 0..18 {
        let (from, to, fleet) = if i % 3 == 2 {
            ("agent-c", "agent-a", "fleet-beta")
        } else {
            ("agent-a", "agent-b", "fleet-alpha")
        };
        let root = body(&mut next);
        let asked = env.ok(&[
            "ask",
            "--from",
            from,
            "--to",
            to,
            "--fleet",
            fleet,
            "--payload",
            &root,
        ]);
        let dsc = asked["discussion_id"].as_str().unwrap().to_owned();
        let mut head = asked["root_message_id"].as_str().unwrap().to_owned();
        let (mut speaker, mut other) = (to, from);
        for turn in 0..next(3) {
            let attempt = env.wake(&dsc, speaker, &head);
            let reply = body(&mut next);
            let mut args = reply_args(&dsc, speaker, &attempt, &head, "question", &reply);
            if turn == 1 {
                args.push("--close");
            }
            head = env.ok(&args)["message_id"].as_str().unwrap().to_owned();
            std::mem::swap(&mut speaker, &mut other);
        }
        ids.push(dsc);
    }
    ids
}

/// The reference: every message of the derived transcripts that holds
/// every term, newest first (ties in ledger order), as `(discussion,
/// message)`.
fn reference(env: &Env, terms: &[&[&str]], keep: impl Fn(&Value) -> bool) -> Vec<(String, String)> {
    fn words(text: &str) -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    }
    fn strings(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
            Value::Object(o) => o.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let mut found: Vec<(String, i64, usize, String)> = Vec::new();
    let listed = env.ok(&["list"]);
    let order: Vec<String> = env
        .records()
        .iter()
        .filter(|r| r["kind"] == "message")
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    for row in listed["discussions"].as_array().unwrap() {
        let shown = env.show(row["discussion_id"].as_str().unwrap());
        if !keep(&shown) {
            continue;
        }
        for m in shown["transcript"].as_array().unwrap() {
            let mut texts = Vec::new();
            strings(&m["payload"], &mut texts);
            let all = words(&texts.join("\n"));
            let holds = terms.iter().all(|term| {
                let term: Vec<String> = term.iter().map(|w| w.to_lowercase()).collect();
                all.windows(term.len()).any(|w| w == term.as_slice())
            });
            if holds {
                let id = m["message_id"].as_str().unwrap().to_owned();
                let at = jiff::Timestamp::from_str(m["at"].as_str().unwrap()).unwrap();
                let line = order.iter().position(|o| *o == id).unwrap();
                found.push((
                    shown["discussion_id"].as_str().unwrap().to_owned(),
                    at.as_millisecond(),
                    line,
                    id,
                ));
            }
        }
    }
    found.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
    found.into_iter().map(|(d, _, _, m)| (d, m)).collect()
}

use std::str::FromStr;

fn searched(env: &Env, args: &[&str]) -> Vec<(String, String)> {
    let mut all = vec!["search"];
    all.extend_from_slice(args);
    env.ok(&all)["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["discussion_id"].as_str().unwrap().to_owned(),
                m["message_id"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn search_answers_what_a_scan_of_the_transcripts_finds_in_the_same_order() {
    let env = Env::new();
    corpus(&env);
    let everything = |_: &Value| true;
    for (query, terms) in [
        ("auth", vec![&["auth"][..]]),
        ("AUTH Refactor", vec![&["auth"][..], &["refactor"][..]]),
        ("\"token refresh\"", vec![&["token", "refresh"][..]]),
        ("straße", vec![&["straße"][..]]),
        ("été 日本語", vec![&["été"][..], &["日本語"][..]]),
        ("v2", vec![&["v2"][..]]),
        ("see lunch", vec![&["see"][..], &["lunch"][..]]),
        ("never", vec![&["never"][..]]),
    ] {
        let expected = reference(&env, &terms, everything);
        let mut all = expected.clone();
        all.truncate(1000);
        assert_eq!(searched(&env, &[query, "--limit", "1000"]), all, "{query}");
        let mut first = expected.clone();
        first.truncate(20);
        assert_eq!(
            searched(&env, &[query]),
            first,
            "{query}: the default limit"
        );
    }
    assert!(searched(&env, &["never"]).is_empty(), "keys are not words");
    // Filters: a participant, a fleet, a status, a limit.
    let agent_c = |d: &Value| d["participants"].to_string().contains("agent-c");
    assert_eq!(
        searched(&env, &["auth", "--agent", "agent-c", "--limit", "1000"]),
        reference(&env, &[&["auth"]], agent_c)
    );
    let beta = |d: &Value| d["fleet_id"] == "fleet-beta";
    assert_eq!(
        searched(&env, &["auth", "--fleet", "fleet-beta", "--limit", "1000"]),
        reference(&env, &[&["auth"]], beta)
    );
    let closed = |d: &Value| d["status"] == "closed";
    assert_eq!(
        searched(&env, &["review", "--status", "closed", "--limit", "1000"]),
        reference(&env, &[&["review"]], closed)
    );
    assert_eq!(searched(&env, &["auth", "--limit", "2"]).len(), 2);
    // A match says where it is and shows its words.
    let one = &env.ok(&["search", "token"])["matches"][0];
    for field in [
        "discussion_id",
        "message_id",
        "turn",
        "from_agent_id",
        "at",
        "snippet",
    ] {
        assert!(!one[field].is_null(), "{field}: {one}");
    }
    assert!(
        one["snippet"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("token"),
        "{one}"
    );
    let human = env.run(&["search", "token"]).stdout;
    assert!(
        human.contains(one["discussion_id"].as_str().unwrap()),
        "{human}"
    );
    // Refusals, each with its code and nothing written.
    let before = env.ledger_bytes();
    for (args, code) in [
        (vec!["search", "..."], 3),
        (vec!["search", "auth", "--limit", "0"], 3),
        (vec!["search", "auth", "--limit", "1001"], 3),
        (vec!["search", "auth", "--status", "asleep"], 3),
        (vec!["search", "\"open"], 3),
        (vec!["search"], 2),
    ] {
        let out = env.run(&args);
        assert_eq!(out.status, code, "{args:?}: {}", out.stderr);
    }
    assert_eq!(env.ledger_bytes(), before);
}

#[test]
fn the_index_is_derived_made_again_when_deleted_and_caught_up_after_writes() {
    let env = Env::new();
    let ids = corpus(&env);
    let first = searched(&env, &["auth", "--limit", "1000"]);
    assert!(!first.is_empty());
    // Deleted: made again, the same answers.
    drop_index(&env);
    assert_eq!(searched(&env, &["auth", "--limit", "1000"]), first);
    // A write after it: found by the next search.
    let asked = env.ok(&[
        "ask",
        "--from",
        "agent-a",
        "--to",
        "agent-b",
        "--fleet",
        "fleet-alpha",
        "--payload",
        r#"{"body":"a brand new zeppelin"}"#,
    ]);
    let found = searched(&env, &["zeppelin"]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, asked["discussion_id"].as_str().unwrap());
    // A foreign message (another fleet's agent) is never found: the
    // transcript leaves it out.
    let foreign = json!({"v":1,"kind":"message","id":"msg_01a252f0000000000000000000000001",
        "at_ms": env.now_ms + 10, "by":"mallory","fleet_id":"fleet-alpha",
        "from_agent_id":"agent-z","to_agent_id":"agent-b","correlation_id": ids[0],
        "payload": json!({"v":1,"type":"question","turn":9,"correlation_id": ids[0],
            "body":{"body":"zeppelin smuggled"}}).to_string()});
    let planted = env.dir.path().join("foreign.jsonl");
    std::fs::write(&planted, format!("{foreign}\n")).unwrap();
    env.ok(&["ledger", "import", planted.to_str().unwrap()]);
    assert_eq!(searched(&env, &["smuggled"]), vec![]);
    assert_eq!(searched(&env, &["zeppelin"]).len(), 1);
    if !env.is_postgres() {
        // A torn last line never breaks it: searched past, taken once whole.
        let ledger = env.ledger();
        let mut bytes = std::fs::read(&ledger).unwrap();
        bytes.extend_from_slice(br#"{"v":1,"kind":"message","id":"msg_torn"#);
        std::fs::write(&ledger, &bytes).unwrap();
        assert_eq!(searched(&env, &["zeppelin"]).len(), 1);
    }
}

fn drop_index(env: &Env) {
    match &env.pg {
        Some(url) => {
            let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
            client
                .batch_execute("DROP TABLE discuss_search; DROP TABLE discuss_search_state")
                .unwrap();
        }
        None => {
            let mut folder = env.ledger().into_os_string();
            folder.push(".search");
            std::fs::remove_dir_all(&folder).expect("the index was there");
        }
    }
}

#[test]
fn over_http_an_agent_token_finds_only_its_own_discussions() {
    let env = Env::new();
    corpus(&env);
    let ops = token(&env, &["ops", "--operator"]);
    let b = token(&env, &["agent-b"]);
    let server = Served::start(&env, &[]);
    let all = server.get("/v1/search?q=auth&limit=1000", Some(&ops));
    assert_eq!(all.status, 200, "{}", all.text());
    let mine = server.get("/v1/search?q=auth&limit=1000", Some(&b));
    assert_eq!(mine.status, 200, "{}", mine.text());
    let of = |reply: &crate::common::http::Reply| -> Vec<(String, String)> {
        reply.json()["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["discussion_id"].as_str().unwrap().to_owned(),
                    m["message_id"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(of(&all), searched(&env, &["auth", "--limit", "1000"]));
    let b_part = |d: &Value| d["participants"].to_string().contains("agent-b");
    assert_eq!(of(&mine), reference(&env, &[&["auth"]], b_part));
    assert!(of(&mine).len() < of(&all).len(), "agent-c's are left out");
    let bad = server.get("/v1/search?q=%20", Some(&b));
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["error"]["code"], "invalid_argument");
    let missing = server.get("/v1/search", Some(&b));
    assert_eq!(missing.status, 400);
    assert_eq!(server.get("/v1/search?q=auth", None).status, 401);
}

#[test]
fn the_console_search_box_answers_as_the_cli_for_the_signed_in_token() {
    use crate::console::get_page;
    let env = Env::new();
    corpus(&env);
    let c = token(&env, &["agent-c"]);
    let server = Served::start(&env, &[]);
    let page = get_page(&server, "/search?q=auth&limit=1000", &c);
    assert_eq!(page.status, 200, "{}", page.text());
    let html = page.text();
    let c_part = |d: &Value| d["participants"].to_string().contains("agent-c");
    let expected = reference(&env, &[&["auth"]], c_part);
    assert!(!expected.is_empty());
    for (dsc, msg) in &expected {
        assert!(
            html.contains(&format!("data-message-id=\"{msg}\"")),
            "{msg}"
        );
        assert!(
            html.contains(&format!("href=\"/discussions/{dsc}\"")),
            "{dsc}"
        );
    }
    assert_eq!(html.matches("data-message-id=").count(), expected.len());
    // Every page has the box.
    assert!(
        get_page(&server, "/", &c)
            .text()
            .contains("action=\"/search\"")
    );
    let empty = get_page(&server, "/search", &c);
    assert_eq!(empty.status, 200);
    let refused = get_page(&server, "/search?q=auth&limit=0", &c);
    assert_eq!(refused.status, 400, "{}", refused.text());
}
