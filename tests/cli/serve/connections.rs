//! `discuss serve`'s connections: slow and silent clients cut, limits, a
//! stop, TLS material refused or served.

use super::*;

#[test]
fn slow_headers_are_cut_off_and_connections_past_the_limit_are_refused() {
    let env = Env::new();
    let operator = token(&env, &["ops", "--operator"]);
    let server = Served::start(
        &env,
        &["--header-timeout-ms", "300", "--max-connections", "2"],
    );
    // Headers that never end: the server closes the connection.
    let mut slow = server.connect();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        .unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    let _ = slow.read_to_end(&mut rest);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "cut off in time"
    );
    drop(slow);
    // Two streams hold both connections; a third is told so and closed.
    let _one = server.events("/v1/events", &operator, None);
    let _two = server.events("/v1/events", &operator, None);
    let refused = server.get("/healthz", None);
    assert_eq!(refused.status, 503);
    assert_eq!(refused.code(), "server_busy");
    drop((_one, _two));
    // The slots come back once those connections close.
    let until = Instant::now() + Duration::from_secs(10);
    while server.get("/healthz", None).status != 200 {
        assert!(Instant::now() < until, "the slots came back");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_stop_finishes_what_is_in_flight_and_exits_zero() {
    let env = Env::new();
    let operator = token(&env, &["ops", "--operator"]);
    let server = Served::start(&env, &[]);
    let mut stream = server.events("/v1/events", &operator, None);
    assert_eq!(stream.next().unwrap().id, 1);
    let (status, log) = server.stop();
    assert_eq!(status, 0, "{log:?}");
    // The open stream ended with the server.
    assert!(stream.next().is_none());
    assert!(log.iter().any(|l| l.starts_with("stopping")), "{log:?}");
}

#[test]
fn serve_refuses_to_start_where_it_would_leak_or_cannot_listen() {
    let env = Env::new();
    let out = env.run(&["--json", "serve", "--listen", "0.0.0.0:0"]);
    assert_eq!(out.status, 3, "{}", out.stderr);
    assert_eq!(out.error()["code"], "invalid_argument");
    assert!(
        out.error()["hints"][0]
            .as_str()
            .unwrap()
            .contains("--tls-cert")
    );
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let out = env.run(&["--json", "serve", "--listen", &format!("127.0.0.1:{port}")]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert_eq!(out.error()["code"], "io_error");
    let out = env.run(&["--json", "serve", "--listen", "nowhere"]);
    assert_eq!(out.error()["code"], "invalid_argument");
    let out = env.run(&[
        "--json",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--max-connections",
        "0",
    ]);
    assert_eq!(out.error()["code"], "out_of_range");
    let out = env.run(&[
        "--json",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--tls-cert",
        "/nonexistent",
        "--tls-key",
        "/nonexistent",
    ]);
    assert_eq!(out.status, 3);
    assert_eq!(out.error()["details"]["field"], "tls_cert");
}

#[test]
fn tls_material_that_is_a_device_or_a_fifo_is_refused_at_start() {
    let env = Env::new();
    let fifo = env.dir.path().join("cert.pem");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let fifo = fifo.to_str().unwrap();
    // A regular certificate with a FIFO for its key is refused too.
    let cert_file = env.dir.path().join("real.pem");
    std::fs::write(&cert_file, "not yet a certificate").unwrap();
    let cert_file = cert_file.to_str().unwrap();
    for (cert, key, field) in [
        ("/dev/zero", "/dev/zero", "tls_cert"),
        (fifo, fifo, "tls_cert"),
        ("/dev/null", "/dev/null", "tls_cert"),
        (cert_file, fifo, "tls_key"),
    ] {
        let mut child = env
            .command_std()
            .args(["--json", "serve", "--listen", "127.0.0.1:0"])
            .args(["--tls-cert", cert, "--tls-key", key])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > until {
                let _ = child.kill();
                let _ = child.wait();
                panic!("serve --tls-cert {cert} neither refused nor exited in 10 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert_eq!(status.code(), Some(3), "{cert}: {stderr}");
        let error: Value = serde_json::from_str(&stderr).unwrap();
        assert_eq!(error["error"]["code"], "invalid_argument", "{stderr}");
        assert_eq!(error["error"]["details"]["field"], field, "{stderr}");
        assert!(stderr.contains("not a regular file"), "{stderr}");
    }
}

/// A certificate for localhost and 127.0.0.1 and its key, made with
/// openssl in `dir`: their paths.
pub(crate) fn certificate(dir: &std::path::Path) -> (String, String) {
    succeeds(
        std::process::Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=DNS:localhost,IP:127.0.0.1",
            ])
            .arg("-keyout")
            .arg(dir.join("key.pem"))
            .arg("-out")
            .arg(dir.join("cert.pem")),
        "openssl (.ci/run installs it)",
    );
    (
        dir.join("cert.pem").display().to_string(),
        dir.join("key.pem").display().to_string(),
    )
}

/// Reads until the server closes `stream` (or 10 s pass): how long it took.
///
/// A read is retried when a signal interrupts it: on a socket with a read
/// timeout, Linux fails it with `EINTR` even under `SA_RESTART`, and this
/// process gets a SIGCHLD (tokio's handler, from the MCP tests' clients)
/// whenever any test's child exits. Taken for a close, those cut the
/// measure short under a full suite.
fn closed_after(mut stream: impl Read) -> Duration {
    let started = Instant::now();
    let mut sink = [0u8; 4096];
    loop {
        match stream.read(&mut sink) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Ok(0) | Err(_) => return started.elapsed(),
            Ok(_) if started.elapsed() > Duration::from_secs(10) => return started.elapsed(),
            Ok(_) => {}
        }
    }
}

#[test]
fn connections_that_send_nothing_are_cut_and_give_their_slots_back() {
    let env = Env::new();
    let server = Served::start(
        &env,
        &["--max-connections", "4", "--header-timeout-ms", "1000"],
    );
    let opened = Instant::now();
    // No byte at all.
    let silent = server.connect();
    // HTTP/2's preface and a SETTINGS frame, and no request.
    let mut preface = server.connect();
    preface
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .unwrap();
    // One request on a kept-alive connection, then silence.
    let mut kept = server.connect();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let mut answer = [0u8; 12];
    kept.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");
    let another = server.connect();
    // Every slot is taken: the next is refused at once.
    assert_eq!(server.get("/healthz", None).status, 503);
    let handles: Vec<_> = [silent, preface, kept, another]
        .into_iter()
        .map(|stream| std::thread::spawn(move || closed_after(stream)))
        .collect();
    let took: Vec<Duration> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(
        took.iter().all(|took| *took < Duration::from_millis(3_000)),
        "a silent connection stayed open: {took:?}"
    );
    assert!(
        opened.elapsed() > Duration::from_millis(900),
        "not cut before the timeout: closed after {took:?}; the server's log: {:?}",
        server.log()
    );
    // Their slots are back.
    let until = Instant::now() + Duration::from_secs(5);
    while server.get("/healthz", None).status != 200 {
        assert!(Instant::now() < until, "the slots came back");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The test's TLS client trusts the certificate the test made (a
/// self-signed one, which rustls will not take as a root), whatever it is:
/// what is tested is the server's silence bound, not the certificate.
#[derive(Debug)]
struct AnyCertificate(std::sync::Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &rustls_pki_types::CertificateDer<'_>,
        _: &[rustls_pki_types::CertificateDer<'_>],
        _: &rustls_pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls_pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls_pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls_pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[test]
fn a_tls_handshake_followed_by_silence_is_cut() {
    let env = Env::new();
    let (cert, key) = certificate(env.dir.path());
    let server = Served::start(
        &env,
        &[
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
            "--max-connections",
            "2",
            "--header-timeout-ms",
            "1000",
        ],
    );
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let handles: Vec<_> = [vec![b"h2".to_vec()], vec![b"http/1.1".to_vec()]]
        .into_iter()
        .map(|alpn| {
            let mut config = rustls::ClientConfig::builder_with_provider(provider.clone())
                .with_safe_default_protocol_versions()
                .unwrap()
                .dangerous()
                .with_custom_certificate_verifier(std::sync::Arc::new(AnyCertificate(
                    provider.clone(),
                )))
                .with_no_client_auth();
            config.alpn_protocols = alpn;
            let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
            let client = rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
            let mut tls = rustls::StreamOwned::new(client, server.connect());
            while tls.conn.is_handshaking() {
                tls.conn.complete_io(&mut tls.sock).unwrap();
            }
            std::thread::spawn(move || closed_after(tls))
        })
        .collect();
    for handle in handles {
        let took = handle.join().unwrap();
        assert!(
            took < Duration::from_millis(3_000),
            "a silent TLS connection stayed open {took:?}"
        );
    }
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let ok = std::process::Command::new("curl")
            .args([
                "-sS",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "--cacert",
                &cert,
            ])
            .arg(format!("https://127.0.0.1:{}/healthz", server.port))
            .output()
            .unwrap();
        if ok.stdout == b"200" {
            break;
        }
        assert!(Instant::now() < until, "the slots came back");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn tls_serves_a_certificate_the_test_makes_to_curl() {
    let env = Env::new();
    env.fleet();
    let a = token(&env, &["agent-a"]);
    let (cert, key) = certificate(env.dir.path());
    let server = Served::start(&env, &["--tls-cert", &cert, "--tls-key", &key]);
    assert!(server.log()[0].starts_with("listening on https://"));
    let curl = |extra: &[&str]| {
        std::process::Command::new("curl")
            .args([
                "-sS",
                "--cacert",
                &cert,
                "-H",
                &format!("Authorization: Bearer {a}"),
            ])
            .args(extra)
            .arg(format!("https://127.0.0.1:{}/v1/inbox", server.port))
            .output()
            .expect("curl is installed (.ci/run installs it)")
    };
    let out = curl(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let inbox: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(inbox["discussions"], json!([]));
    // HTTP/2 by ALPN as well.
    let out = curl(&["--http2", "-o", "/dev/null", "-w", "%{http_version}"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2");
    // Plain HTTP on the TLS port gets nothing served.
    let plain = std::process::Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "5",
            &format!("http://127.0.0.1:{}/healthz", server.port),
        ])
        .output()
        .unwrap();
    assert!(!plain.status.success());
    assert_eq!(server.stop().0, 0);
}

/// `listening on URL` reaches a reader of the pipe whole: the first read
/// of `serve`'s stderr holds the line to its end. (Written a piece at a
/// time, a script that took the first chunk read `http://127` for the
/// URL: the TypeScript client's connections went to 0.0.0.127:80.) A
/// reader meets a piece only when it wakes between two writes: twenty
/// starts, of which a few did here before the line was written whole.
#[test]
fn the_listening_line_is_written_whole() {
    let env = Env::file();
    for _ in 0..20 {
        let mut server = env
            .command_std()
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = server.stderr.take().unwrap();
        let mut first = vec![0u8; 4096];
        let read = stderr.read(&mut first).unwrap();
        let _ = server.kill();
        let _ = server.wait();
        let read = String::from_utf8_lossy(&first[..read]).into_owned();
        // Its first line (the ledger's note may follow in the same read).
        let line = read.split_inclusive('\n').next().unwrap_or("");
        let port = line
            .strip_prefix("listening on http://127.0.0.1:")
            .and_then(|rest| rest.strip_suffix('\n'))
            .unwrap_or_else(|| panic!("a whole line in the first read: {line:?}"));
        assert!(port.parse::<u16>().is_ok_and(|p| p > 0), "{line:?}");
    }
}

/// `serve` says which ledger it serves, right after where it listens, and
/// warns when that ledger does not exist (every sign-in would fail as an
/// unknown token); `--listen` of a bare port is refused with an example.
#[test]
fn serve_names_its_ledger_and_warns_of_one_that_does_not_exist() {
    let env = Env::new();
    let server = Served::start(&env, &[]);
    server.wait_for_log("serves the");
    let log = server.log();
    assert!(log[0].starts_with("listening on http://"), "{log:?}");
    assert!(
        log[1].starts_with("note: discuss serve serves the "),
        "{log:?}"
    );
    if !env.is_postgres() {
        let location = env.ledger().display().to_string();
        assert_eq!(
            log[1],
            format!("note: discuss serve serves the file ledger {location}")
        );
        server.wait_for_log("warning: that ledger does not exist yet");
        assert!(log.iter().all(|l| !l.contains("note: warning")), "{log:?}");
    }
    drop(server);
    env.fleet();
    let server = Served::start(&env, &[]);
    server.wait_for_log("serves the");
    let _ = server.get("/healthz", None);
    server.wait_for_log("GET /healthz");
    assert!(
        server.log().iter().all(|l| !l.starts_with("warning:")),
        "{:?}",
        server.log()
    );
    for listen in ["8470", ":8470"] {
        let err = env.fails(&["serve", "--listen", listen], "invalid_argument", 3);
        assert!(
            err["hints"][0]
                .as_str()
                .unwrap()
                .contains("--listen 127.0.0.1:8470"),
            "{err}"
        );
    }
}
