//! `discuss serve`'s event streams: resumed after a cursor on any server,
//! long ledgers, ends at a token's revocation or expiry, bounds per token
//! and server, HTTP/2.

use super::*;

#[test]
fn the_event_stream_resumes_exactly_after_its_cursor_on_any_server_of_the_ledger() {
    let env = Env::new();
    env.fleet();
    let operator = token(&env, &["ops", "--operator"]);
    let first = Served::start(&env, &[]);
    let second = Served::start(&env, &[]);
    // A writer goes on while the stream is read, dropped and resumed.
    let writer = {
        let ledger = env.ledger();
        let now = env.now_ms;
        std::thread::spawn(move || {
            for _ in 0..12 {
                let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("discuss"))
                    .env_clear()
                    .env("DISCUSS_LEDGER", &ledger)
                    .env("DISCUSS_NOW", now.to_string())
                    .args(ASK_A_TO_B)
                    .arg("{\"body\":\"q\"}")
                    .output()
                    .unwrap();
                assert!(out.status.success());
            }
        })
    };
    let mut seen = Vec::new();
    let mut events = first.events("/v1/events", &operator, None);
    while seen.len() < 6 {
        seen.push(events.next().unwrap());
    }
    drop(events);
    // Back on the other server, from the last id seen.
    let last = seen.last().unwrap().id;
    let mut events = second.events("/v1/events", &operator, Some(last));
    writer.join().unwrap();
    let total = env.records().len();
    while seen.len() < total {
        seen.push(events.next().unwrap());
    }
    // Exactly the ledger's records, in order, none twice, none missed, the
    // very objects `events --json` prints.
    let printed: Vec<Value> = env
        .run(&["events", "--json"])
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<u64> = seen.iter().map(|e| e.id).collect();
    assert_eq!(ids, (1..=total as u64).collect::<Vec<_>>());
    let data: Vec<Value> = seen.iter().map(|e| e.data.clone()).collect();
    assert_eq!(data, printed);
    // after= in the URL is the same cursor; the header wins over it.
    let mut from_url = first.events(&format!("/v1/events?after={}", total - 1), &operator, None);
    assert_eq!(from_url.next().unwrap().id, total as u64);
    let mut both = first.events("/v1/events?after=1", &operator, Some(total as u64 - 2));
    assert_eq!(both.next().unwrap().id, total as u64 - 1);
    // The CLI resumes the same way.
    let after = env.run(&["events", "--json", "--after", &(total - 2).to_string()]);
    assert_eq!(after.stdout.lines().count(), 2);
}

/// A stream from the first line of a ledger longer than one batch of a
/// server's reads (256 rows on PostgreSQL) gets every record once, in
/// order, across the batches.
#[test]
fn a_stream_from_the_first_line_reads_a_long_ledger_across_batches() {
    let env = Env::new();
    env.fleet();
    for _ in 0..300 {
        let mut args = ASK_A_TO_B.to_vec();
        args.push("{\"body\":\"q\"}");
        env.ok(&args);
    }
    let operator = token(&env, &["ops", "--operator"]);
    let server = Served::start(&env, &[]);
    let total = env.records().len();
    assert!(total > 300, "{total} records");
    let mut events = server.events("/v1/events", &operator, None);
    let ids: Vec<u64> = (0..total).map(|_| events.next().unwrap().id).collect();
    assert_eq!(ids, (1..=total as u64).collect::<Vec<_>>());
}

#[test]
fn an_open_stream_ends_at_its_tokens_revocation_and_carries_nothing_written_after() {
    let env = Env::new();
    env.fleet();
    let (dsc, _) = env.ask(&[]);
    let b = token(&env, &["agent-b"]);
    let server = Served::start(&env, &[]);
    let mut events = server.events("/v1/events", &b, None);
    assert_eq!(events.next().unwrap().data["discussion_id"], dsc.as_str());
    env.ok(&["token", "revoke", &token_id_of(&env, "agent-b")]);
    let (after, _) = env.ask(&[]);
    let started = Instant::now();
    while let Some(event) = events.next() {
        assert_ne!(
            event.data["discussion_id"],
            after.as_str(),
            "a record written after the revocation was sent"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the stream ended after {:?}",
        started.elapsed()
    );
    // And the token opens no new one.
    assert_eq!(server.get("/v1/events", Some(&b)).status, 401);
}

#[test]
fn an_open_stream_ends_within_a_second_of_its_tokens_expiry() {
    let mut env = Env::new();
    env.fleet();
    env.ask(&[]);
    let b = token(&env, &["agent-b", "--expires-in-hours", "1"]);
    // The server's clock starts 1.5 s before the expiry.
    env.advance(3_600_000 - 1_500);
    let server = Served::start(&env, &[]);
    let mut events = server.events("/v1/events", &b, None);
    let opened = Instant::now();
    assert!(events.next().is_some());
    while events.next().is_some() {}
    let ended = opened.elapsed();
    assert!(
        ended > Duration::from_millis(500) && ended < Duration::from_millis(3_500),
        "the stream ended after {ended:?}"
    );
}

/// An event stream's request on a connection of its own, the answer's
/// status line and headers read.
fn open_raw_stream(server: &Served, token: &str) -> (u16, Vec<String>, std::net::TcpStream) {
    let mut stream = server.connect();
    write!(
        stream,
        "GET /v1/events HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {token}\r\n\r\n"
    )
    .unwrap();
    let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
    let mut status = String::new();
    std::io::BufRead::read_line(&mut reader, &mut status).unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        headers.push(line.trim_end().to_ascii_lowercase());
    }
    let code = status.split(' ').nth(1).unwrap().parse().unwrap();
    (code, headers, stream)
}

#[test]
fn event_streams_are_bounded_per_token_and_per_server_with_a_time_to_come_back() {
    let env = Env::new();
    env.fleet();
    let a = token(&env, &["agent-a"]);
    let b = token(&env, &["agent-b"]);
    let c = token(&env, &["agent-c"]);
    let server = Served::start(
        &env,
        &["--max-streams", "3", "--max-streams-per-token", "2"],
    );
    let mut open = Vec::new();
    for _ in 0..2 {
        let (code, _, stream) = open_raw_stream(&server, &b);
        assert_eq!(code, 200);
        open.push(stream);
    }
    let (code, headers, _) = open_raw_stream(&server, &b);
    assert_eq!(code, 429, "{headers:?}");
    assert!(
        headers.contains(&"retry-after: 1".to_owned()),
        "{headers:?}"
    );
    let refused = server.get("/v1/events", Some(&b));
    assert_eq!(refused.code(), "too_many_streams");
    let (code, _, stream) = open_raw_stream(&server, &a);
    assert_eq!(code, 200);
    open.push(stream);
    let (code, headers, _) = open_raw_stream(&server, &c);
    assert_eq!(code, 503, "{headers:?}");
    assert!(
        headers.contains(&"retry-after: 1".to_owned()),
        "{headers:?}"
    );
    let busy = server.get("/v1/events", Some(&c));
    assert_eq!(busy.code(), "server_busy");
    assert_eq!(busy.json()["error"]["details"]["reason"], "max_streams");
    // The other endpoints answer all the while.
    assert_eq!(server.get("/healthz", None).status, 200);
    assert_eq!(server.get("/v1/inbox", Some(&c)).status, 200);
    // A stream closed gives its slot back.
    drop(open.pop());
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let (code, _, stream) = open_raw_stream(&server, &c);
        if code == 200 {
            drop(stream);
            break;
        }
        assert!(Instant::now() < until, "the slot never came back");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The server's thread count, from /proc.
fn threads_of(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Opens `per_connection` event streams on each of `connections` HTTP/2
/// connections, each answered within 10 s, and holds them open on
/// `runtime` until `release` is sent: how many were opened (200) and
/// refused (429 with `Retry-After: 1`).
fn hold_http2_streams(
    runtime: &tokio::runtime::Runtime,
    port: u16,
    token: &str,
    (connections, per_connection): (usize, usize),
) -> ((usize, usize), tokio::sync::oneshot::Sender<()>) {
    let (counted, counts) = std::sync::mpsc::channel();
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let token = token.to_owned();
    runtime.spawn(async move {
        let (mut held, mut clients) = (Vec::new(), Vec::new());
        let (mut opened, mut refused) = (0, 0);
        for _ in 0..connections {
            let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .unwrap();
            let (mut client, connection) = h2::client::handshake(tcp).await.unwrap();
            tokio::spawn(connection);
            for _ in 0..per_connection {
                let request = ::http::Request::get(format!("http://127.0.0.1:{port}/v1/events"))
                    .header("authorization", format!("Bearer {token}"))
                    .body(())
                    .unwrap();
                client = client.ready().await.unwrap();
                let (response, _) = client.send_request(request, true).unwrap();
                let response = tokio::time::timeout(Duration::from_secs(10), response)
                    .await
                    .expect("every stream is answered at once")
                    .unwrap();
                match response.status().as_u16() {
                    200 => opened += 1,
                    429 => {
                        assert_eq!(response.headers()["retry-after"], "1");
                        refused += 1;
                    }
                    other => panic!("status {other}"),
                }
                held.push(response);
            }
            clients.push(client);
        }
        counted.send((opened, refused)).unwrap();
        let _ = released.await;
        drop((held, clients));
    });
    let counts = counts
        .recv_timeout(Duration::from_secs(60))
        .expect("the streams were opened");
    (counts, release)
}

/// `/healthz` and another agent's inbox, each answered 200 within a second.
fn answers_at_once(server: &Served, other: &str) {
    for (path, token) in [("/healthz", None), ("/v1/inbox", Some(other))] {
        let started = Instant::now();
        let answer = server.get(path, token);
        assert_eq!(answer.status, 200, "{path}: {}", answer.text());
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{path} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn six_hundred_http2_streams_on_three_connections_leave_the_server_answering() {
    let env = Env::new();
    env.fleet();
    env.ask(&[]);
    let b = token(&env, &["agent-b"]);
    let c = token(&env, &["agent-c"]);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // At the defaults, one token's 600 streams on 3 connections: 8 open,
    // the rest refused at once, and the server answers everyone else.
    let server = Served::start(&env, &["--max-connections", "8"]);
    let (counts, release) = hold_http2_streams(&runtime, server.port, &b, (3, 200));
    assert_eq!(counts, (8, 592), "the token's bound holds");
    answers_at_once(&server, &c);
    let _ = release.send(());
    drop(server);
    // With the bounds raised, 600 streams open at once: the server holds
    // no thread a stream, and still answers at once.
    let server = Served::start(
        &env,
        &[
            "--max-connections",
            "8",
            "--max-streams",
            "600",
            "--max-streams-per-token",
            "600",
        ],
    );
    let idle_threads = threads_of(server.pid());
    let (counts, release) = hold_http2_streams(&runtime, server.port, &b, (3, 200));
    assert_eq!(counts, (600, 0));
    answers_at_once(&server, &c);
    // Opened one after another, each on a thread of the blocking pool for
    // its token check and first read, which the pool keeps a while: a few
    // threads, where a thread a stream held all 600 open.
    let opened_threads = threads_of(server.pid());
    assert!(
        opened_threads <= idle_threads + 16,
        "{opened_threads} threads with 600 streams open, {idle_threads} idle"
    );
    // An append wakes all 600 at once: they read four at a time, on a
    // few threads of the blocking pool (a thread finishing a read is not
    // always idle yet when the next read starts, so the pool may grow by
    // a few more; a thread a stream would be 600).
    env.ask(&[]);
    let mut most = threads_of(server.pid());
    let until = Instant::now() + Duration::from_millis(1_500);
    while Instant::now() < until {
        most = most.max(threads_of(server.pid()));
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        most <= opened_threads + 16,
        "{most} threads with 600 streams open and woken, {opened_threads} before they woke"
    );
    answers_at_once(&server, &c);
    let _ = release.send(());
}

#[test]
fn the_event_stream_tells_of_a_deadman_no_record_says() {
    let env = Env::new();
    env.fleet();
    let (dsc, root) = env.ask(&["--turn-timeout-ms", "1000"]);
    env.wake(&dsc, "agent-b", &root);
    let b = token(&env, &["agent-b"]);
    let server = Served::start(&env, &[]);
    let mut stream = server.connect();
    write!(
        stream,
        "GET /v1/events HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {b}\r\n\r\n"
    )
    .unwrap();
    let started = Instant::now();
    let mut reader = std::io::BufReader::new(stream);
    let mut status_block = Vec::new();
    loop {
        let mut line = String::new();
        assert!(std::io::BufRead::read_line(&mut reader, &mut line).unwrap() > 0);
        let line = line.trim_end().to_owned();
        if line == "event: status" {
            status_block.push(line);
            let mut data = String::new();
            std::io::BufRead::read_line(&mut reader, &mut data).unwrap();
            status_block.push(data.trim_end().to_owned());
            break;
        }
        // An `id:` line right before it would belong to a record.
        if line.starts_with("id: ") {
            status_block.clear();
        }
    }
    assert!(
        started.elapsed() < Duration::from_millis(3_000),
        "told after {:?}",
        started.elapsed()
    );
    let data: Value =
        serde_json::from_str(status_block[1].strip_prefix("data: ").unwrap()).unwrap();
    assert_eq!(
        (
            data["event"].as_str(),
            data["discussion_id"].as_str(),
            data["status"].as_str()
        ),
        (Some("status"), Some(dsc.as_str()), Some("deadman"))
    );
}

#[test]
fn a_token_issued_while_the_server_runs_opens_a_stream_at_once() {
    let env = Env::new();
    env.fleet();
    let (dsc, _) = env.ask(&[]);
    let server = Served::start(&env, &[]);
    // The server's watcher reads the ledger at once when it starts (and
    // every 100 ms it changes): give it time to have read it before this
    // token existed, as a long-running server has.
    server.get("/healthz", None);
    std::thread::sleep(Duration::from_millis(300));
    let b = token(&env, &["agent-b"]);
    let mut events = server.events("/v1/events", &b, None);
    let first = events.next().expect("the stream goes on");
    assert_eq!(first.data["discussion_id"], dsc.as_str());
}
