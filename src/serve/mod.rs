//! `discuss serve`: the tools over HTTP, for agents and MCP hosts on
//! machines that hold no ledger.
//!
//! Stateless: every request is the CLI's operation (`tools::answer`,
//! `operations`) on the same ledger, run on the runtime's blocking pool,
//! so any number of servers may front one PostgreSQL ledger and CLI users
//! may write beside them. Each request but `/healthz` needs a bearer token
//! (`discuss token issue`); its principal decides whom the request acts
//! for. The pieces:
//!
//! - here: the listener, TLS, the connection limit, the header timeout,
//!   and the graceful stop on SIGINT/SIGTERM;
//! - `routes`: the endpoints, the token check and the request log;
//! - `http`: error answers by HTTP status, bodies read within the limit,
//!   query strings;
//! - `events`: the event stream (SSE) with its cursors;
//! - `console`: the pages for people, signed in with a cookie.

mod app;
mod approvals;
mod connection;
mod console;
mod events;
mod http;
mod operator;
mod origin;
mod routes;
pub(crate) mod search;
mod watch;

use crate::error::{Error, ErrorCode, Result};
use crate::session::Session;
use connection::Protocol;
pub(crate) use origin::Allowed;
use std::net::{SocketAddr, TcpListener as StdListener, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// What `serve` was asked for, checked.
pub(crate) struct Options {
    pub listen: String,
    /// The certificate chain and the key, both PEM.
    pub tls: Option<(PathBuf, PathBuf)>,
    pub max_connections: usize,
    pub max_body_bytes: usize,
    pub header_timeout: Duration,
    pub max_streams: usize,
    pub max_streams_per_token: usize,
    pub allow_plain_http: bool,
    /// The `Host`s and `Origin`s taken (`loopback` is set once bound).
    pub allowed: Allowed,
}

/// How long requests in flight may take to finish once a stop is asked.
pub(super) const DRAIN_LIMIT: Duration = Duration::from_secs(10);

/// Serves until SIGINT or SIGTERM, then finishes what is in flight.
/// Serves until a stop signal; `started` runs once the socket is bound
/// and its TLS material read (what a start refuses is said before it),
/// right after the `listening on` line.
pub(crate) fn run(mut session: Session, options: Options, started: impl FnOnce()) -> Result<()> {
    session.ledger = session.ledger.streaming_in_small_batches();
    let tls = match &options.tls {
        Some((cert, key)) => Some(tls_acceptor(cert, key)?),
        None => None,
    };
    let listener = bind(&options, tls.is_some())?;
    let local = listener
        .local_addr()
        .map_err(|e| Error::io("the listening socket", &e))?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    // The first line, which scripts read the port from; then the rest.
    say!("listening on {scheme}://{local}");
    started();
    let mut options = options;
    options.allowed.loopback = listener
        .local_addr()
        .is_ok_and(|address| address.ip().is_loopback());
    let session = Arc::new(session);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("discuss-serve")
        .build()
        .map_err(|e| Error::io("the server's runtime", &e))?;
    let served = runtime.block_on(serve(Arc::clone(&session), listener, tls, options));
    // Streams still reading are cut here; nothing they do writes.
    runtime.shutdown_timeout(Duration::from_secs(1));
    // Last, outside the runtime: a PostgreSQL ledger's client blocks on
    // its own runtime to say goodbye, which tokio forbids inside another.
    drop(session);
    served
}

/// The listening socket, refused when it would send tokens in clear over
/// a network by accident.
fn bind(options: &Options, tls: bool) -> Result<StdListener> {
    let invalid = |why: String| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("--listen {}: {why}", options.listen),
        )
        .detail("field", "listen")
        .detail("value", options.listen.as_str())
    };
    let addresses: Vec<SocketAddr> = options
        .listen
        .to_socket_addrs()
        .map_err(|e| {
            // `8470` or `:8470`: a port without its host.
            let port = options.listen.trim_start_matches(':');
            let port = if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
                port
            } else {
                "8470"
            };
            invalid(format!("not a HOST:PORT address ({e})")).hint(format!(
                "--listen 127.0.0.1:{port} (this host only), or 0.0.0.0:{port} for every interface (with --tls-cert and --tls-key)"
            ))
        })?
        .collect();
    let Some(first) = addresses.first() else {
        return Err(invalid("names no address".into()));
    };
    if !tls && !options.allow_plain_http && !addresses.iter().all(|a| a.ip().is_loopback()) {
        return Err(invalid(
            "is beyond loopback, and without TLS tokens would cross the network in clear".into(),
        )
        .hint("give --tls-cert PEM --tls-key PEM, or --allow-plain-http behind a TLS proxy"));
    }
    let listener = StdListener::bind(first).map_err(|e| {
        Error::new(
            ErrorCode::IoError,
            format!("cannot listen on {}: {e}", options.listen),
        )
        .detail("listen", options.listen.as_str())
    })?;
    listener
        .set_nonblocking(true)
        .map_err(|e| Error::io("the listening socket", &e))?;
    // A deeper queue of connections not yet accepted than std's 128: when
    // an append refreshes 200 open consoles at once, a full queue drops a
    // SYN and that page waits a second for the client's retry. (Listening
    // again on a listening socket only changes its backlog; the kernel
    // caps it at `net.core.somaxconn`.)
    rustix::net::listen(&listener, ACCEPT_BACKLOG)
        .map_err(|e| Error::io("the listening socket", &e.into()))?;
    Ok(listener)
}

/// Connections the kernel queues before `serve` accepts them.
const ACCEPT_BACKLOG: i32 = 1024;

/// TLS from a PEM certificate chain and a PEM private key, offering
/// HTTP/2 and HTTP/1.1.
fn tls_acceptor(cert: &PathBuf, key: &PathBuf) -> Result<tokio_rustls::TlsAcceptor> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let unreadable = |path: &PathBuf, field: &str, why: String| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("--{field} {}: {why}", path.display()),
        )
        .detail("field", field.replace('-', "_"))
        .detail("path", path.display().to_string())
    };
    let cert_pem = read_pem_file(cert).map_err(|why| unreadable(cert, "tls-cert", why))?;
    let key_pem = read_pem_file(key).map_err(|why| unreadable(key, "tls-key", why))?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| unreadable(cert, "tls-cert", format!("not a PEM certificate ({e})")))?;
    if certs.is_empty() {
        return Err(unreadable(cert, "tls-cert", "holds no certificate".into()));
    }
    let private = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| unreadable(key, "tls-key", format!("not a PEM private key ({e})")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(certs, private))
        .map_err(|e| unreadable(cert, "tls-cert", format!("does not go with the key ({e})")))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// The most a certificate chain or key file may hold.
const MAX_PEM_BYTES: u64 = 1 << 20;

/// A PEM file's bytes: a regular file only (`regular_file`), so a FIFO
/// or a device (`/dev/zero`) in its place is refused at start rather than
/// waited on or read forever.
fn read_pem_file(path: &std::path::Path) -> std::result::Result<Vec<u8>, String> {
    use crate::regular_file::{Unread, read_regular};
    read_regular(path, MAX_PEM_BYTES).map_err(|unread| match unread {
        Unread::Io(e) => format!("cannot be read ({e})"),
        other => format!("is {other}"),
    })
}

async fn serve(
    session: Arc<Session>,
    listener: StdListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    options: Options,
) -> Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|e| Error::io("the listening socket", &e))?;
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let app = app::App::new(session, &options, stopping.clone());
    let mcp_cancel = app.mcp_cancellation();
    let router = routes::router(app);
    let mut signals = Signals::new()?;

    let slots = Arc::new(tokio::sync::Semaphore::new(options.max_connections));
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of file descriptors and the like: the next accept
                // may do; a pause keeps the loop from spinning.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = signals.next() => break,
        };
        let _ = stream.set_nodelay(true);
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            tokio::spawn(refuse(stream));
            continue;
        };
        let router = router.clone();
        let timeout = options.header_timeout;
        let stopping = stopping.clone();
        match &tls {
            None => {
                tokio::spawn(async move {
                    connection::serve(stream, Protocol::Sniffed, router, timeout, stopping).await;
                    drop(slot);
                });
            }
            Some(acceptor) => {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    // The handshake is bounded as the headers are.
                    if let Ok(Ok(stream)) =
                        tokio::time::timeout(timeout, acceptor.accept(stream)).await
                    {
                        let protocol = match stream.get_ref().1.alpn_protocol() {
                            Some(b"h2") => Protocol::Http2,
                            Some(_) => Protocol::Http1,
                            None => Protocol::Sniffed,
                        };
                        connection::serve(stream, protocol, router, timeout, stopping).await;
                    }
                    drop(slot);
                });
            }
        }
    }
    drop(listener);
    say!("stopping: no new connections; finishing the requests in flight");
    let _ = stop.send(true);
    mcp_cancel();
    // Every connection gives its slot back once its answers are done.
    let all = u32::try_from(options.max_connections).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(DRAIN_LIMIT, slots.acquire_many(all)).await;
    Ok(())
}

/// A connection past `--max-connections`: told so, and closed.
async fn refuse(mut stream: tokio::net::TcpStream) {
    let body = Error::new(
        ErrorCode::ServerBusy,
        "the server has as many connections open as it takes; try again shortly",
    )
    .detail("reason", "max_connections")
    .to_json()
    .to_string();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        let _ = stream.write_all(answer.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
    say!("- - 503 0ms - (past --max-connections)");
}

/// SIGINT and SIGTERM.
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        let listen = |kind| signal(kind).map_err(|e| Error::io("the signal handlers", &e));
        Ok(Signals {
            interrupt: listen(SignalKind::interrupt())?,
            terminate: listen(SignalKind::terminate())?,
        })
    }

    async fn next(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {},
            _ = self.terminate.recv() => {},
        }
    }
}
