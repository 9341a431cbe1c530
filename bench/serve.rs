//! `discuss serve` measured side by side with the CLI, in one run:
//! `get_discussion` and the write tools from 16 concurrent HTTP clients
//! (keep-alive connections) against 16 concurrent CLI processes on the same
//! kind of ledger (`ask_peer`, then `wake_agent` on each discussion asked), a `wake_agent` through `serve` on PostgreSQL against a
//! CLI `wake` on a file, and the server's resident memory, threads and
//! `/healthz` latency idle and with 600 open event streams.
//!
//! Usage (release binaries, built as bench/README.md says):
//!   target/release/examples/serve [--postgres ADMIN_URL] [--requests N]
//!       [--writes N] [--streams N]

#[path = "server.rs"]
mod server;

use server::{Connection, Ledger, Server, new_database};
use std::io::{BufRead, Write};
use std::time::Instant;

const CLIENTS: usize = 16;

struct Options {
    postgres: Option<String>,
    requests: usize,
    writes: usize,
    streams: usize,
}

fn options() -> Options {
    let mut o = Options {
        postgres: None,
        requests: 8_000,
        writes: 640,
        streams: 600,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().expect("a value");
        match arg.as_str() {
            "--postgres" => o.postgres = Some(value()),
            "--requests" => o.requests = value().parse().unwrap(),
            "--writes" => o.writes = value().parse().unwrap(),
            "--streams" => o.streams = value().parse().unwrap(),
            other => panic!("unknown option {other}"),
        }
    }
    o
}

fn main() {
    let o = options();
    let exe = std::env::current_exe().unwrap();
    let discuss = exe.parent().unwrap().parent().unwrap().join("discuss");
    let dir = tempfile::tempdir().unwrap();
    let file = Ledger {
        location: dir.path().join("ledger.jsonl").display().to_string(),
        discuss: discuss.clone(),
    };
    println!("discuss serve, {CLIENTS} concurrent clients, side by side in one run\n");
    let twin = Ledger {
        location: dir.path().join("twin.jsonl").display().to_string(),
        discuss: discuss.clone(),
    };
    let on_file = measure(&file, &twin, &o, "file");
    let on_postgres = o.postgres.as_ref().map(|admin| {
        let at = |suffix| Ledger {
            location: new_database(admin, suffix),
            discuss: discuss.clone(),
        };
        measure(&at("serve"), &at("cli"), &o, "postgres")
    });
    println!();
    if let Some(pg) = &on_postgres {
        println!(
            "wake_agent through serve on PostgreSQL: {:.2} ms; CLI wake on a file: {:.2} ms ({:.2}x)",
            pg.serve_wake_ms,
            on_file.cli_wake_ms,
            pg.serve_wake_ms / on_file.cli_wake_ms
        );
    }
}

struct Measured {
    serve_wake_ms: f64,
    cli_wake_ms: f64,
}

/// `ledger` through `serve`, and a `twin` of the same kind, set up alike,
/// for the CLI's writes: each kind of writer starts from a ledger of the
/// same size (a file's per-write cost grows with its unmerged index).
/// Every figure of the report in the order it prints them: long, and read
/// from top to bottom.
fn measure(ledger: &Ledger, twin: &Ledger, o: &Options, kind: &str) -> Measured {
    for each in [ledger, twin] {
        each.run(&["fleet", "add", "fleet-alpha", "agent-a", "agent-b"]);
        each.run(&["quota", "set", "100000"]);
    }
    // The CLI's writes first, on the twin: 16 processes at a time.
    let writes = o.writes;
    let cli_heads = std::sync::Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..CLIENTS {
            scope.spawn(|| {
                for _ in 0..writes / CLIENTS {
                    let asked = twin.run(&[
                        "ask",
                        "--json",
                        "--from",
                        "agent-a",
                        "--to",
                        "agent-b",
                        "--fleet",
                        "fleet-alpha",
                        "--payload",
                        "{\"body\":\"Refactor auth module?\"}",
                    ]);
                    cli_heads.lock().unwrap().push(head_of(&asked));
                }
            });
        }
    });
    let cli_writes = (writes / CLIENTS * CLIENTS) as f64 / started.elapsed().as_secs_f64();
    let a = ledger.run(&["token", "issue", "agent-a"]).trim().to_owned();
    let b = ledger.run(&["token", "issue", "agent-b"]).trim().to_owned();
    let ops = ledger
        .run(&["token", "issue", "ops", "--operator"])
        .trim()
        .to_owned();
    let max = (o.streams + 2 * CLIENTS + 8).to_string();
    let streams_allowed = o.streams.to_string();
    let server = Server::start(
        ledger,
        &[
            "--max-connections",
            &max,
            "--max-streams",
            &streams_allowed,
            "--max-streams-per-token",
            &streams_allowed,
        ],
    );
    let asked = ask_json();
    let first = server.call("POST", "/v1/tools/ask_peer", &a, Some(&asked));
    let dsc = json_field(&first, "discussion_id");
    let idle_rss = server.rss_kib();
    let idle_threads = server.threads();
    let idle_health = server.healthz_ms();

    // The write tools: ask_peer from 16 clients, as many as the CLI's;
    // then wake_agent on each discussion they asked.
    let http_heads = std::sync::Mutex::new(Vec::new());
    let elapsed = concurrently(
        writes,
        |conn| {
            let answer = conn.request("POST", "/v1/tools/ask_peer", &a, Some(&asked));
            http_heads.lock().unwrap().push(head_of(&answer));
        },
        &server,
    );
    let http_writes = (writes / CLIENTS * CLIENTS) as f64 / elapsed;
    let elapsed = concurrently(
        writes,
        |conn| {
            let (dsc, head) = http_heads.lock().unwrap().pop().unwrap();
            conn.request(
                "POST",
                "/v1/tools/wake_agent",
                &b,
                Some(&wake_json(&dsc, &head)),
            );
        },
        &server,
    );
    let http_wakes = (writes / CLIENTS * CLIENTS) as f64 / elapsed;
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..CLIENTS {
            scope.spawn(|| {
                for _ in 0..writes / CLIENTS {
                    let (dsc, head) = cli_heads.lock().unwrap().pop().unwrap();
                    let (dsc, head) = (dsc.as_str(), head.as_str());
                    twin.run(&cli_wake(dsc, head));
                }
            });
        }
    });
    let cli_wakes = (writes / CLIENTS * CLIENTS) as f64 / started.elapsed().as_secs_f64();

    // get_discussion: 16 clients on keep-alive connections.
    let path = format!("/v1/discussions/{dsc}");
    let reads = o.requests;
    let elapsed = concurrently(
        reads,
        |conn| {
            conn.request("GET", &path, &a, None);
        },
        &server,
    );
    let reads_per_s = reads as f64 / elapsed;

    // One wake at a time: through serve, and with the CLI.
    let heads: Vec<(String, String)> = (0..100)
        .map(|_| head_of(&server.call("POST", "/v1/tools/ask_peer", &a, Some(&asked))))
        .collect();
    let (through_serve, through_cli) = heads.split_at(50);
    let mut conn = server.connect();
    let started = Instant::now();
    for (dsc, head) in through_serve {
        conn.request(
            "POST",
            "/v1/tools/wake_agent",
            &b,
            Some(&wake_json(dsc, head)),
        );
    }
    let serve_wake_ms = started.elapsed().as_secs_f64() * 1000.0 / through_serve.len() as f64;
    let started = Instant::now();
    for (dsc, head) in through_cli {
        ledger.run(&cli_wake(dsc, head));
    }
    let cli_wake_ms = started.elapsed().as_secs_f64() * 1000.0 / through_cli.len() as f64;

    // Open event streams following the ledger from its last line, each
    // read up to its first event (one more ask), as idle followers are;
    // then as many from its first line, each read to its end.
    let last = ledger.run(&["ledger", "info", "--json"]);
    let last: u64 = serde_json::from_str::<serde_json::Value>(&last).unwrap()["lines"]
        .as_u64()
        .unwrap();
    let mut streams = Vec::new();
    for _ in 0..o.streams {
        streams.push(open_stream(&server, &ops, last));
    }
    server.call("POST", "/v1/tools/ask_peer", &a, Some(&asked));
    for stream in &mut streams {
        read_event(stream);
    }
    let streams_rss = server.rss_kib();
    let streams_threads = server.threads();
    let streams_health = server.healthz_ms();
    drop(streams);
    let mut streams = Vec::new();
    for _ in 0..o.streams {
        streams.push(open_stream(&server, &ops, 0));
    }
    for stream in &mut streams {
        for _ in 0..=last {
            read_event(stream);
        }
    }
    let replay_rss = server.rss_kib();
    drop(streams);
    server.stop();

    println!("{kind} ledger:");
    println!("  get_discussion over HTTP: {reads_per_s:>8.0} calls/s ({reads} calls)");
    println!(
        "  ask_peer over HTTP:       {http_writes:>8.0} calls/s; 16 CLI processes: {cli_writes:.0} calls/s ({:.2}x)",
        http_writes / cli_writes
    );
    println!(
        "  wake_agent over HTTP:     {http_wakes:>8.0} calls/s; 16 CLI processes: {cli_wakes:.0} calls/s ({:.2}x)",
        http_wakes / cli_wakes
    );
    println!("  wake, one at a time:      serve {serve_wake_ms:.2} ms, CLI {cli_wake_ms:.2} ms");
    println!(
        "  serve resident: idle {:.1} MiB, with {} open streams {:.1} MiB ({:.1} MiB once {} more streams from line 1 read all {} lines)",
        idle_rss as f64 / 1024.0,
        o.streams,
        streams_rss as f64 / 1024.0,
        replay_rss as f64 / 1024.0,
        o.streams,
        last + 1
    );
    println!(
        "  serve threads: idle {idle_threads}, with {} open streams {streams_threads}; /healthz median {:.2} ms (max {:.2}) idle, {:.2} ms (max {:.2}) with the streams open",
        o.streams, idle_health.0, idle_health.1, streams_health.0, streams_health.1
    );
    Measured {
        serve_wake_ms,
        cli_wake_ms,
    }
}

/// An event stream of the ledger after line `after`, its headers read.
fn open_stream(server: &Server, token: &str, after: u64) -> Connection {
    let mut conn = server.connect();
    write!(
        conn.stream,
        "GET /v1/events?after={after} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {token}\r\n\r\n"
    )
    .unwrap();
    loop {
        let mut line = String::new();
        conn.reader.read_line(&mut line).unwrap();
        if line == "\r\n" {
            return conn;
        }
    }
}

/// Reads through the next event's `data:` line.
fn read_event(conn: &mut Connection) {
    loop {
        let mut line = String::new();
        assert!(
            conn.reader.read_line(&mut line).unwrap() > 0,
            "the stream ended"
        );
        if line.starts_with("data: ") {
            return;
        }
    }
}

fn ask_json() -> String {
    r#"{"from_agent_id":"agent-a","to_agent_id":"agent-b","fleet_id":"fleet-alpha","payload":"{\"body\":\"Refactor auth module?\"}"}"#.to_owned()
}

/// A wake of agent-b on `dsc` at `head`.
/// The CLI's wake of agent-b on `head`, as `wake_json` is serve's.
fn cli_wake<'a>(dsc: &'a str, head: &'a str) -> [&'a str; 7] {
    [
        "wake",
        "--agent",
        "agent-b",
        "--discussion",
        dsc,
        "--expected-head",
        head,
    ]
}

fn wake_json(dsc: &str, head: &str) -> String {
    format!(
        "{{\"agent_id\":\"agent-b\",\"discussion_id\":\"{dsc}\",\"expected_head_message_id\":\"{head}\"}}"
    )
}

/// The discussion an ask answered with, and its head.
fn head_of(asked: &str) -> (String, String) {
    (
        json_field(asked, "discussion_id"),
        json_field(asked, "head_message_id"),
    )
}

fn json_field(text: &str, field: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    value[field]
        .as_str()
        .unwrap_or_else(|| panic!("{text}"))
        .to_owned()
}

/// `total` calls spread over 16 threads, each with its own connection;
/// the seconds they took.
fn concurrently(total: usize, call: impl Fn(&mut Connection) + Sync, server: &Server) -> f64 {
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..CLIENTS {
            scope.spawn(|| {
                let mut conn = server.connect();
                for _ in 0..total / CLIENTS {
                    call(&mut conn);
                }
            });
        }
    });
    started.elapsed().as_secs_f64()
}

impl Server {
    fn call(&self, method: &str, path: &str, token: &str, body: Option<&str>) -> String {
        self.connect().request(method, path, token, body)
    }

    /// `/healthz` answered 50 times on one connection: the median and
    /// the longest, in milliseconds.
    fn healthz_ms(&self) -> (f64, f64) {
        let mut conn = self.connect();
        let mut times: Vec<f64> = (0..50)
            .map(|_| {
                let started = Instant::now();
                conn.request("GET", "/healthz", "", None);
                started.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        (times[times.len() / 2], times[times.len() - 1])
    }
}
