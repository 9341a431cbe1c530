//! `discuss serve` under test: the server as a child process on a free
//! loopback port, and a plain HTTP/1.1 client on `std`'s sockets that
//! shows the wire as it is (status, headers, body, chunked or not).

use super::Env;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `discuss serve`; stopped with SIGTERM when dropped.
pub(crate) struct Served {
    child: Option<Child>,
    pub port: u16,
    /// Every line it wrote to stderr so far.
    log: Arc<Mutex<Vec<String>>>,
}

impl Served {
    /// `discuss serve --listen 127.0.0.1:0` with `extra` options, on
    /// `env`'s ledger and clock; waits for its `listening on` line.
    pub(crate) fn start(env: &Env, extra: &[&str]) -> Served {
        Served::start_with(env, extra, &[])
    }

    /// `start` with these variables in the server's environment too.
    pub(crate) fn start_with(env: &Env, extra: &[&str], vars: &[(&str, String)]) -> Served {
        let mut child = env
            .command_std()
            .envs(vars.iter().map(|(k, v)| (*k, v.as_str())))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        stderr.read_line(&mut first).unwrap();
        let port = first
            .trim()
            .strip_prefix("listening on http://127.0.0.1:")
            .or_else(|| first.trim().strip_prefix("listening on https://127.0.0.1:"))
            .unwrap_or_else(|| panic!("serve did not start: {first:?}"))
            .parse()
            .unwrap();
        let log = Arc::new(Mutex::new(vec![first.trim_end().to_owned()]));
        let lines = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in stderr.lines() {
                let Ok(line) = line else { break };
                lines.lock().unwrap().push(line);
            }
        });
        Served {
            child: Some(child),
            port,
            log,
        }
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    pub(crate) fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// Waits (at most 10 s) until a log line contains `text`.
    pub(crate) fn wait_for_log(&self, text: &str) {
        let until = Instant::now() + Duration::from_secs(10);
        while !self.log().iter().any(|l| l.contains(text)) {
            assert!(
                Instant::now() < until,
                "no log line with {text:?}: {:?}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGTERM, then the exit status and the whole log.
    pub(crate) fn stop(mut self) -> (i32, Vec<String>) {
        let mut child = self.child.take().unwrap();
        signal(&child, libc_sigterm());
        let status = child.wait().unwrap();
        // The reader thread reaches the end of stderr with the process.
        let until = Instant::now() + Duration::from_secs(5);
        while !self.log().iter().any(|l| l.starts_with("stopping")) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        (status.code().unwrap_or(-1), self.log())
    }

    pub(crate) fn get(&self, path: &str, token: Option<&str>) -> Reply {
        self.request("GET", path, token, &[], None)
    }

    /// A POST of a JSON body.
    pub(crate) fn post(&self, path: &str, token: Option<&str>, body: &Value) -> Reply {
        self.request(
            "POST",
            path,
            token,
            &[("content-type", "application/json")],
            Some(body.to_string().as_bytes()),
        )
    }

    /// One request on a new connection, `Connection: close`, read to its end.
    pub(crate) fn request(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Reply {
        self.request_paused(method, path, token, headers, body, None)
    }

    /// `request`, its body sent only once the handler waits for it (the
    /// server's `100 Continue` to `Expect: 100-continue`, sent when the
    /// body is first read: the headers' checks are behind it) and
    /// `meanwhile` has run: a client whose body arrives late.
    pub(crate) fn request_with_late_body(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: &[u8],
        meanwhile: &mut dyn FnMut(),
    ) -> Reply {
        let mut all = headers.to_vec();
        all.push(("expect", "100-continue"));
        self.request_paused(method, path, token, &all, Some(body), Some(meanwhile))
    }

    fn request_paused(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        meanwhile: Option<&mut dyn FnMut()>,
    ) -> Reply {
        let mut stream = self.connect();
        // A `host` among `headers` stands in for the usual one.
        let mut head = format!("{method} {path} HTTP/1.1\r\nconnection: close\r\n");
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
            head.push_str("host: 127.0.0.1\r\n");
        }
        if let Some(token) = token {
            head.push_str(&format!("authorization: Bearer {token}\r\n"));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if let Some(body) = body
            && !headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("transfer-encoding"))
        {
            head.push_str(&format!("content-length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        if let Some(meanwhile) = meanwhile {
            let mut interim = [0u8; 25];
            stream.read_exact(&mut interim).unwrap();
            assert_eq!(
                &interim[..],
                b"HTTP/1.1 100 Continue\r\n\r\n",
                "the server asks for the body"
            );
            meanwhile();
        }
        if let Some(body) = body {
            // A server may answer (413) and close before the body is sent.
            let _ = stream.write_all(body);
        }
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
        Reply::parse(&raw)
    }

    pub(crate) fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        stream
    }

    /// An open event stream: the request is sent, the headers read.
    pub(crate) fn events(&self, path: &str, token: &str, last_event_id: Option<u64>) -> Events {
        let mut stream = self.connect();
        let mut head = format!(
            "GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\nauthorization: Bearer {token}\r\n"
        );
        if let Some(id) = last_event_id {
            head.push_str(&format!("last-event-id: {id}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(
            status.starts_with("HTTP/1.1 200"),
            "the stream opens: {status}"
        );
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
        }
        Events { reader }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn libc_sigterm() -> i32 {
    15
}

fn signal(child: &Child, signal: i32) {
    let status = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// An HTTP answer.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    fn parse(raw: &[u8]) -> Reply {
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("no complete answer: {:?}", String::from_utf8_lossy(raw)));
        let head = String::from_utf8_lossy(&raw[..end]).into_owned();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let mut body = raw[end + 4..].to_vec();
        if headers
            .iter()
            .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"))
        {
            body = unchunk(&body);
        }
        Reply {
            status,
            headers,
            body,
        }
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", self.status, self.text()))
    }

    /// The error object's code, checking the answer is the contract's.
    pub(crate) fn code(&self) -> String {
        assert_eq!(self.header("content-type"), Some("application/json"));
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or_else(|| panic!("not an error object: {}", self.text()))
            .to_owned()
    }
}

fn unchunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = body.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size =
            usize::from_str_radix(std::str::from_utf8(&body[..end]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[end + 2..end + 2 + size]);
        body = &body[end + 2 + size + 2..];
    }
}

/// Server-sent events as they arrive (chunked transfer, one event a
/// chunk or several).
pub(crate) struct Events {
    reader: BufReader<TcpStream>,
}

/// One event: its `id:` and its `data:` as JSON.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub id: u64,
    pub data: Value,
}

impl Events {
    /// The next event (comments skipped); `None` when the stream ends.
    pub(crate) fn next(&mut self) -> Option<Event> {
        let mut id = None;
        let mut data = None;
        loop {
            let line = self.line()?;
            if line.is_empty() {
                if let (Some(id), Some(data)) = (id, data.take()) {
                    return Some(Event { id, data });
                }
                continue;
            }
            if let Some(value) = line.strip_prefix("id: ") {
                id = Some(value.parse().unwrap());
            } else if let Some(value) = line.strip_prefix("data: ") {
                data = Some(serde_json::from_str(value).unwrap());
            } else if line.starts_with(':') || line.starts_with("event: ") {
                continue;
            } else {
                panic!("not an event line: {line:?}");
            }
        }
    }

    /// The next line of the event stream, through the chunked framing.
    fn line(&mut self) -> Option<String> {
        loop {
            let mut line = String::new();
            if self.reader.read_line(&mut line).ok()? == 0 {
                return None;
            }
            let line = line.trim_end_matches(['\r', '\n']).to_owned();
            // A chunk-size line: hex digits alone.
            if !line.is_empty() && line.bytes().all(|b| b.is_ascii_hexdigit()) {
                if line == "0" {
                    return None;
                }
                continue;
            }
            return Some(line);
        }
    }
}

/// A request's head lines and its body.
pub(crate) type Posted = (Vec<String>, Vec<u8>);

/// A webhook receiver: a loopback URL whose first request is read whole
/// (its head lines and body) and answered 204; `join` the handle for them.
pub(crate) fn one_post_receiver() -> (String, std::thread::JoinHandle<Posted>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut head = Vec::new();
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
            head.push(line);
        }
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body).unwrap();
        (&stream)
            .write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
            .unwrap();
        (head, body)
    });
    (url, server)
}
