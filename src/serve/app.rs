//! What every endpoint of `serve` shares: the session, the limits, the
//! one ledger watcher of the event streams, the tokens seen, a token's
//! check against the ledger, and who a request's log line names.

use crate::credentials::{self, Principal};
use crate::error::{Error, ErrorCode, Result};
use crate::session::Session;
use crate::tools::mcp::AsSession;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use std::sync::Arc;

/// What every handler shares.
#[derive(Clone)]
pub(super) struct App {
    pub session: Arc<Session>,
    pub max_body_bytes: usize,
    /// Turns true when the server stops: streams end.
    pub stopping: tokio::sync::watch::Receiver<bool>,
    /// Event streams open, per server and per token.
    pub streams: Arc<super::watch::Limits>,
    /// The one watcher of the ledger that event streams wait on.
    pub watcher: Arc<super::watch::Watcher>,
    /// The `Host`s and `Origin`s requests may carry.
    pub allowed: Arc<super::Allowed>,
    pub mcp: StreamableHttpServerConfig,
    /// Tokens seen, by digest, with their principal: a tool call of one of
    /// them is checked in the operation's own read (`gated`) instead of a
    /// read of its own.
    pub known: Arc<std::sync::Mutex<std::collections::HashMap<String, Principal>>>,
    /// The server speaks TLS: the console's cookie is `Secure`.
    pub tls: bool,
}

impl AsSession for Arc<Session> {
    fn session(&self) -> &Session {
        self
    }
}

impl App {
    pub(super) fn new(
        session: Arc<Session>,
        options: &super::Options,
        stopping: tokio::sync::watch::Receiver<bool>,
    ) -> App {
        let max_body_bytes = options.max_body_bytes;
        // Stateless (no session kept between requests, so any server of a
        // ledger answers any request), JSON answers for plain calls, every
        // Host accepted (tokens guard every request), the body limit ours.
        let mcp = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_allowed_hosts(Vec::<String>::new())
            .with_max_request_body_bytes(max_body_bytes);
        let watcher = Arc::new(super::watch::Watcher::start(
            Arc::clone(&session),
            stopping.clone(),
        ));
        App {
            session,
            max_body_bytes,
            stopping,
            streams: super::watch::Limits::new(options.max_streams, options.max_streams_per_token),
            watcher,
            allowed: Arc::new(options.allowed.clone()),
            mcp,
            known: Arc::default(),
            tls: options.tls.is_some(),
        }
    }

    /// Cancelled at the stop: MCP answers in flight end.
    pub(super) fn mcp_cancellation(&self) -> impl Fn() + use<> {
        let token = self.mcp.cancellation_token.clone();
        move || token.cancel()
    }

    /// Runs `work` on the blocking pool (the ledger's lock, `fsync` and
    /// the database block). It runs to its end even when the client goes
    /// away, so a write is whole or not made at all.
    pub(super) async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Session) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let session = Arc::clone(&self.session);
        // The request's span (`routes::trace`) goes on with the work, on
        // the thread that does it.
        let cx = opentelemetry::Context::current();
        tokio::task::spawn_blocking(move || {
            let _entered = cx.attach();
            work(&session)
        })
        .await
        .unwrap_or_else(|e| {
            Err(Error::new(
                ErrorCode::Internal,
                format!("the request did not finish: {e}"),
            ))
        })
    }
}

impl App {
    pub(super) fn lock_known(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Principal>> {
        self.known.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Who made a request, for its log line.
#[derive(Clone)]
pub(super) struct Logged(pub(super) String);

impl Logged {
    pub(super) fn of(principal: &Principal) -> Logged {
        Logged(match principal.role {
            crate::record::Role::Operator => format!("{} (operator)", principal.agent_id),
            crate::record::Role::Agent => principal.agent_id.clone(),
        })
    }
}

/// The principal of `token` as the ledger says now, in a read of its own.
pub(super) fn authenticate_now(session: &Session, token: Option<&str>) -> Result<Principal> {
    let view = session.ledger.view(&[])?;
    let now = session.now(view.last_at_ms());
    credentials::authenticate(&view.global(now), token, now)
}
