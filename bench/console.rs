//! The console's budgets (`cli.md`, "The console"), measured on a
//! generated ledger of a million records (about 80,000 discussions), on a
//! file and, with `--postgres`, on a database:
//!
//! - the overview (`GET /`) read anew: its first answer, then the median
//!   and the longest of 11 more, each after its page copy has gone stale;
//! - the weight of each page with its stylesheet and script;
//! - the server's resident memory with no console open and with N open
//!   (each one its stream of changes and one read of the overview);
//! - an append (a CLI `ask`) reaching N open consoles: each waits for its
//!   `changed` event and reads the overview again, as the page's script
//!   does; the time until the last has the new count.
//!
//! Usage (release binaries, as bench/README.md says):
//!   target/release/examples/console [--records N] [--consoles N]
//!       [--postgres ADMIN_URL]

#[path = "server.rs"]
mod server;

use server::{Ledger, Server, new_database};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

struct Options {
    records: usize,
    consoles: usize,
    postgres: Option<String>,
}

fn options() -> Options {
    let mut o = Options {
        records: 1_000_000,
        consoles: 200,
        postgres: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().expect("a value");
        match arg.as_str() {
            "--records" => o.records = value().parse().unwrap(),
            "--consoles" => o.consoles = value().parse().unwrap(),
            "--postgres" => o.postgres = Some(value()),
            other => panic!("unknown option {other}"),
        }
    }
    o
}

fn main() {
    let o = options();
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().unwrap().parent().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ledger.jsonl");
    let generated = std::process::Command::new(exe.parent().unwrap().join("generate"))
        .arg(o.records.to_string())
        .stdout(std::fs::File::create(&file).unwrap())
        .status()
        .unwrap();
    assert!(generated.success());
    println!(
        "the console on {} records, {} open consoles\n",
        o.records, o.consoles
    );
    let on_file = Ledger {
        location: file.display().to_string(),
        discuss: bin.join("discuss"),
    };
    measure(&on_file, &o, "file");
    if let Some(admin) = &o.postgres {
        let database = Ledger {
            location: new_database(admin, "console"),
            discuss: bin.join("discuss"),
        };
        let started = Instant::now();
        database.run(&["ledger", "import", &file.display().to_string()]);
        println!(
            "(imported into PostgreSQL in {:.1} s)\n",
            started.elapsed().as_secs_f64()
        );
        measure(&database, &o, "postgres");
    }
}

/// Every figure of the console's report, in the order it prints them:
/// long, and read from top to bottom.
fn measure(ledger: &Ledger, o: &Options, kind: &str) {
    let token = ledger.run(&["token", "issue", "bench-ops", "--operator"]);
    let cookie = format!("discuss_console={}", token.trim());
    // The summary made once, as any first list after a rebuild makes it.
    ledger.run(&["list", "--status", "closed", "--json"]);
    let server = Server::start(ledger, &["--max-connections", "1024"]);
    let page = |path: &str| -> (f64, String) {
        let started = Instant::now();
        let html = server
            .connect()
            .request_with("GET", path, &[("cookie", &cookie)], None);
        (started.elapsed().as_secs_f64() * 1000.0, html)
    };
    let (first, overview) = page("/");
    let mut times: Vec<f64> = (0..11)
        .map(|_| {
            // Past the half second a page copy is kept.
            std::thread::sleep(Duration::from_millis(600));
            page("/").0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!("{kind}: the overview read anew");
    println!(
        "  first {first:.0} ms, then median {:.0} ms, longest {:.0} ms",
        times[5], times[10]
    );

    let assets: usize = ["/assets/console.css", "/assets/console.js"]
        .iter()
        .map(|a| page(a).1.len())
        .sum();
    let some_id = overview
        .split("href=\"/discussions/")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or("")
        .to_owned();
    println!("{kind}: page weight with its assets ({assets} bytes of them)");
    for path in [
        "/".to_owned(),
        "/discussions".to_owned(),
        format!("/discussions/{some_id}"),
    ] {
        let html = page(&path).1.len();
        println!("  {path}: {:.1} KB", (html + assets) as f64 / 1024.0);
    }

    // Memory on a server of its own: idle after one overview read and a
    // second of rest (the reads above left the allocator holding more),
    // then with the consoles open, each its stream and one page read.
    server.stop();
    let server = Server::start(ledger, &["--max-connections", "1024"]);
    server
        .connect()
        .request_with("GET", "/", &[("cookie", &cookie)], None);
    std::thread::sleep(Duration::from_secs(1));
    let idle = server.rss_kib();
    let consoles: Vec<Console> = (0..o.consoles)
        .map(|_| {
            let console = Console::open(&server, &cookie);
            server
                .connect()
                .request_with("GET", "/", &[("cookie", &cookie)], None);
            console
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    let open = server.rss_kib();
    println!(
        "{kind}: resident memory {:.1} MiB with no console, {:.1} MiB with {} open: {:.1} MiB more",
        idle as f64 / 1024.0,
        open as f64 / 1024.0,
        o.consoles,
        (open.saturating_sub(idle)) as f64 / 1024.0
    );

    let open_before = count_open(&overview);
    let started = Instant::now();
    let written = std::thread::scope(|scope| {
        let readers: Vec<_> = consoles
            .into_iter()
            .map(|mut console| {
                let (server, cookie) = (&server, &cookie);
                scope.spawn(move || {
                    console.next_change();
                    let told = Instant::now();
                    // The page reads itself again until it shows the append.
                    loop {
                        let html =
                            server
                                .connect()
                                .request_with("GET", "/", &[("cookie", cookie)], None);
                        if count_open(&html) > open_before {
                            return (told, Instant::now());
                        }
                    }
                })
            })
            .collect();
        ledger.run(&[
            "ask",
            "--from",
            "agent-01",
            "--to",
            "agent-02",
            "--fleet",
            "fleet-bench",
            "--payload",
            "{\"body\":\"console bench\"}",
        ]);
        let written = started.elapsed();
        let ms = |at: Instant| (at - started).as_secs_f64() * 1000.0;
        let (mut told, mut shown): (Vec<f64>, Vec<f64>) = readers
            .into_iter()
            .map(|r| r.join().unwrap())
            .map(|(t, s)| (ms(t), ms(s)))
            .unzip();
        told.sort_by(f64::total_cmp);
        shown.sort_by(f64::total_cmp);
        (written, told, shown)
    });
    let (written, told, shown) = written;
    println!(
        "{kind}: an append seen by {} open consoles, from the start of the ask (which took {:.0} ms):",
        o.consoles,
        written.as_secs_f64() * 1000.0,
    );
    println!(
        "  told of the change after {:.0}-{:.0} ms; the page read again after {:.0} ms (first), {:.0} (median), {:.0} (last)\n",
        told[0],
        told[told.len() - 1],
        shown[0],
        shown[shown.len() / 2],
        shown[shown.len() - 1]
    );
    server.stop();
}

/// The number on the overview's `open` tile.
fn count_open(html: &str) -> usize {
    html.split("status-open\" href=\"/discussions?status=open\"><span class=\"n\">")
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// An open console: its stream of changes.
struct Console {
    reader: BufReader<TcpStream>,
}

impl Console {
    fn open(server: &Server, cookie: &str) -> Console {
        let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "GET /console/changes HTTP/1.1\r\nhost: 127.0.0.1\r\ncookie: {cookie}\r\n\r\n"
        )
        .unwrap();
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(line.starts_with("HTTP/1.1 200"), "{line}");
        Console { reader }
    }

    /// Reads until the next `changed` event.
    fn next_change(&mut self) {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                self.reader.read_line(&mut line).unwrap() > 0,
                "the stream ended"
            );
            if line.contains("event: changed") {
                return;
            }
        }
    }
}
