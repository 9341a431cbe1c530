//! What the benchmarks of `discuss serve` share (`bench/serve.rs`,
//! `bench/console.rs`): a ledger to run the CLI on, a database of its own,
//! the server as a child process, and a kept-alive HTTP/1.1 connection.
//! Each benchmark uses part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub(crate) struct Ledger {
    pub(crate) location: String,
    pub(crate) discuss: PathBuf,
}

impl Ledger {
    pub(crate) fn command(&self) -> Command {
        let mut command = Command::new(&self.discuss);
        command
            .env_clear()
            .env("DISCUSS_LEDGER", &self.location)
            .env("DISCUSS_ACTOR", "bench");
        command
    }

    pub(crate) fn run(&self, args: &[&str]) -> String {
        let out = self.command().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

/// A new database on the server of `admin` (a URL to its `postgres`).
pub(crate) fn new_database(admin: &str, suffix: &str) -> String {
    let name = format!("bench_serve_{}_{suffix}", std::process::id());
    let mut client = postgres::Client::connect(admin, postgres::NoTls).unwrap();
    client
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
        .unwrap();
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    match admin.rsplit_once('/') {
        Some((base, rest)) => match rest.split_once('?') {
            Some((_, query)) => format!("{base}/{name}?{query}"),
            None => format!("{base}/{name}"),
        },
        None => panic!("the admin URL names a database: {admin}"),
    }
}

pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) port: u16,
}

impl Server {
    pub(crate) fn start(ledger: &Ledger, extra: &[&str]) -> Server {
        let mut child = ledger
            .command()
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        stderr.read_line(&mut first).unwrap();
        let port = first
            .trim()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("serve did not start: {first}"));
        // The log is read (and dropped) so the server never waits on it.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Server { child, port }
    }

    pub(crate) fn connect(&self) -> Connection {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        Connection {
            reader: BufReader::new(stream.try_clone().unwrap()),
            stream,
        }
    }

    pub(crate) fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    /// The server's threads, as the kernel counts them.
    pub(crate) fn threads(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap()
    }

    pub(crate) fn stop(mut self) {
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "serve stopped with {status}");
    }
}

pub(crate) struct Connection {
    pub(crate) stream: TcpStream,
    pub(crate) reader: BufReader<TcpStream>,
}

impl Connection {
    /// One request on the kept-alive connection; the body of a 200.
    pub(crate) fn request(
        &mut self,
        method: &str,
        path: &str,
        token: &str,
        body: Option<&str>,
    ) -> String {
        let authorization = format!("Bearer {token}");
        let headers = [
            ("authorization", authorization.as_str()),
            ("content-type", "application/json"),
        ];
        self.request_with(method, path, &headers, body)
    }

    /// `request` with these headers.
    pub(crate) fn request_with(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> String {
        let body = body.unwrap_or("");
        let mut head = format!("{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n");
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        write!(
            self.stream,
            "{head}content-length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut status = String::new();
        self.reader.read_line(&mut status).unwrap();
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
        }
        let mut answer = vec![0; length];
        self.reader.read_exact(&mut answer).unwrap();
        let answer = String::from_utf8(answer).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status} {answer}");
        answer
    }
}
