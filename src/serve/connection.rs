//! One connection, HTTP/1.1 or HTTP/2, bounded in silence: a client that
//! sends nothing (no bytes, a TLS handshake and then nothing, an HTTP/2
//! preface and no request) or stays silent with no request in flight is
//! cut after the header timeout, so that idle sockets cannot hold every
//! connection slot.

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

/// What an HTTP/2 client sends first.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Requests one HTTP/2 connection may have open at once.
const MAX_CONCURRENT_STREAMS: u32 = 200;
/// How long a connection told to close may take to finish its answers.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// The protocol a connection speaks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Protocol {
    Http1,
    Http2,
    /// Not known yet: told by the first bytes (a plain connection).
    Sniffed,
}

/// Requests in flight on one connection, and when it last had one.
#[derive(Default)]
struct Activity {
    in_flight: AtomicUsize,
    /// Milliseconds since `epoch()` when the last request began or ended.
    last_ms: AtomicU64,
}

/// One request in flight: counted until its answer's body is done.
struct InFlight(Arc<Activity>);

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    epoch().elapsed().as_millis() as u64
}

impl Activity {
    fn begin(self: &Arc<Activity>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.last_ms.store(now_ms(), Ordering::SeqCst);
        InFlight(Arc::clone(self))
    }

    /// How long the connection has had no request in flight, if none.
    fn idle_for(&self) -> Option<Duration> {
        (self.in_flight.load(Ordering::SeqCst) == 0).then(|| {
            Duration::from_millis(now_ms().saturating_sub(self.last_ms.load(Ordering::SeqCst)))
        })
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.last_ms.store(now_ms(), Ordering::SeqCst);
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// An answer's body that keeps its request counted until it is done (an
/// event stream's, for as long as it is open).
struct Counted {
    body: axum::body::Body,
    _in_flight: InFlight,
}

impl hyper::body::Body for Counted {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// Serves `io` until it closes, a stop is asked (`stopping`), or it stays
/// silent with no request in flight for `idle_limit`.
pub(super) async fn serve<I>(
    io: I,
    protocol: Protocol,
    router: axum::Router,
    idle_limit: Duration,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let started = Instant::now();
    let (io, protocol) = match protocol {
        Protocol::Sniffed => match tokio::time::timeout(idle_limit, sniff(io)).await {
            Ok(Some(sniffed)) => sniffed,
            // Silent (or gone) before a first request: cut.
            _ => return,
        },
        known => (Prefixed::new(Vec::new(), io), known),
    };
    let activity = Arc::new(Activity::default());
    activity.last_ms.store(now_ms(), Ordering::SeqCst);
    let counting = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let in_flight = counting.begin();
        let router = hyper_util::service::TowerToHyperService::new(router.clone());
        async move {
            let answer = hyper::service::Service::call(&router, request).await?;
            Ok::<_, std::convert::Infallible>(answer.map(|body| Counted {
                body,
                _in_flight: in_flight,
            }))
        }
    });
    let io = TokioIo::new(io);
    let mut connection: Pin<Box<dyn Connection>> = match protocol {
        Protocol::Http2 => {
            let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
            builder
                .timer(TokioTimer::new())
                .max_concurrent_streams(MAX_CONCURRENT_STREAMS);
            Box::pin(builder.serve_connection(io, service))
        }
        _ => {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(idle_limit.saturating_sub(started.elapsed()));
            Box::pin(builder.serve_connection(io, service).with_upgrades())
        }
    };
    let check = (idle_limit / 4).clamp(Duration::from_millis(10), Duration::from_millis(250));
    loop {
        tokio::select! {
            _ = connection.as_mut() => return,
            _ = stopping.changed() => break,
            () = tokio::time::sleep(check) => {
                if activity.idle_for().is_some_and(|idle| idle >= idle_limit) {
                    break;
                }
            }
        }
    }
    // Told to close: answers in flight finish (a stop waits longer, up to
    // its drain limit, for the connections it tracks).
    connection.as_mut().shut_down();
    let grace = if *stopping.borrow() {
        super::DRAIN_LIMIT
    } else {
        CLOSE_GRACE
    };
    let _ = tokio::time::timeout(grace, connection.as_mut()).await;
}

/// Either protocol's connection, to shut it down gracefully.
trait Connection: std::future::Future<Output = Result<(), hyper::Error>> + Send {
    fn shut_down(self: Pin<&mut Self>);
}

impl<I, S> Connection for hyper::server::conn::http2::Connection<I, S, TokioExecutor>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming> + Send,
    S::Future: Send + 'static,
    S::ResBody: Send + 'static,
    <S::ResBody as hyper::body::Body>::Data: Send,
    <S::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    fn shut_down(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

impl<I, S> Connection for hyper::server::conn::http1::UpgradeableConnection<I, S>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming> + Send,
    S::Future: Send,
    S::ResBody: Send + 'static,
    <S::ResBody as hyper::body::Body>::Data: Send,
    <S::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    fn shut_down(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

/// Reads a plain connection's first bytes: HTTP/2's preface, or anything
/// else (HTTP/1.1). `None` when it closes first.
async fn sniff<I: AsyncRead + Unpin>(mut io: I) -> Option<(Prefixed<I>, Protocol)> {
    let mut first = Vec::with_capacity(PREFACE.len());
    let mut buffer = [0u8; 24];
    while first.len() < PREFACE.len() && PREFACE.starts_with(&first) {
        let wanted = PREFACE.len() - first.len();
        let read = io.read(&mut buffer[..wanted]).await.ok()?;
        if read == 0 {
            return None;
        }
        first.extend_from_slice(&buffer[..read]);
    }
    let protocol = if first == PREFACE {
        Protocol::Http2
    } else {
        Protocol::Http1
    };
    Some((Prefixed::new(first, io), protocol))
}

/// A connection whose first bytes were read already: they are read again
/// first.
pub(super) struct Prefixed<I> {
    prefix: Vec<u8>,
    at: usize,
    io: I,
}

impl<I> Prefixed<I> {
    fn new(prefix: Vec<u8>, io: I) -> Prefixed<I> {
        Prefixed { prefix, at: 0, io }
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for Prefixed<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.at < self.prefix.len() {
            let rest = &self.prefix[self.at..];
            let n = rest.len().min(buf.remaining());
            buf.put_slice(&rest[..n]);
            self.at += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Prefixed<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
