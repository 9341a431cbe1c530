//! `GET /v1/events`: the event stream as server-sent events. Each record
//! is one event, `id:` its cursor (the record's line), `event: record`,
//! `data:` the object `events --json` prints. A client that reconnects
//! with `Last-Event-ID` (or `after=`) gets exactly the records after it,
//! from any server of the ledger: lines are the ledger's own numbers.
//!
//! Each stream reads on a thread of the blocking pool and hands its events
//! to the connection through a small channel, so a slow client holds back
//! its own reading and memory stays bounded. It waits between reads for the
//! server's one watcher of the ledger to see it grow.

use super::http::{error_response, query_pairs, single};
use super::routes::App;
use crate::credentials::Principal;
use crate::error::{Error, ErrorCode, Result};
use crate::operations::events::EventStream;
use crate::output::EventView;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::Response;
use std::time::Duration;

/// A comment this often keeps idle streams (and proxies) open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// How often the ledger is looked at for new records.
const POLL: Duration = Duration::from_millis(100);
/// The discussions a stream holds the records of at once (more are read
/// back from the ledger when they move again).
const MOST_HELD: usize = 64;
/// Events buffered for a client that reads slowly.
const BUFFERED: usize = 64;

pub(super) async fn stream(
    State(app): State<App>,
    axum::Extension(principal): axum::Extension<Principal>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let opened = async {
        let pairs = query_pairs(uri.query(), &["discussion", "agent", "after"])?;
        let discussion = single(&pairs, "discussion")?.map(str::to_owned);
        let agent = single(&pairs, "agent")?.map(str::to_owned);
        if let Some(agent) = &agent {
            crate::ids::check_name("agent", agent)?;
        }
        // A reconnecting client's own cursor wins over the URL's.
        let after = match headers.get("last-event-id") {
            Some(value) => cursor(value.to_str().unwrap_or("-"), "Last-Event-ID")?,
            None => match single(&pairs, "after")? {
                Some(after) => cursor(after, "after")?,
                None => 0,
            },
        };
        let discussion = match discussion {
            Some(id) => {
                crate::ids::check_server_id("discussion", crate::ids::DISCUSSION, &id)?;
                let viewer = principal.acting_agent().map(str::to_owned);
                Some(
                    app.blocking(move |session| {
                        let Some(viewer) = viewer else {
                            return crate::operations::resolve_discussion(session, &id);
                        };
                        // An agent token: its own discussions only, and one
                        // it takes no part in reads as one that does not exist.
                        let caller = crate::tools::Caller {
                            agent: Some(&viewer),
                            own_only: true,
                        };
                        let seen = crate::tools::resolve_for(session, &id, caller).and_then(|id| {
                            let (discussion, _) = crate::operations::read::load(session, &id)?;
                            crate::tools::hide_unless_taking_part(&discussion, &viewer)?;
                            Ok(id)
                        });
                        seen.map_err(crate::tools::as_stranger)
                    })
                    .await?,
                )
            }
            None => None,
        };
        let viewer = principal.acting_agent().map(str::to_owned);
        Ok::<_, Error>(EventStream::new(
            discussion, agent, viewer, after, MOST_HELD,
        ))
    };
    let events = match opened.await {
        Ok(events) => events,
        Err(err) => return error_response(&err),
    };
    let (sender, receiver) = tokio::sync::mpsc::channel::<std::io::Result<Bytes>>(BUFFERED);
    let session = std::sync::Arc::clone(&app.session);
    let stopping = app.stopping.clone();
    tokio::task::spawn_blocking(move || follow(&session, events, &sender, stopping));
    let body = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(receiver));
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

fn cursor(text: &str, field: &str) -> Result<u64> {
    text.trim().parse::<u64>().map_err(|_| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("{field} is a cursor (a record's line, 0 or more), not {text:?}"),
        )
        .detail("field", field)
    })
}

/// Reads and sends until the client goes away or the server stops.
fn follow(
    session: &crate::session::Session,
    mut events: EventStream,
    sender: &tokio::sync::mpsc::Sender<std::io::Result<Bytes>>,
    stopping: tokio::sync::watch::Receiver<bool>,
) {
    // From the operation that holds the cursor (or, should that not be
    // found now, from the start: the stream skips up to the cursor).
    let mut at = session
        .ledger
        .position_of_line(events.cursor())
        .unwrap_or((0, 0));
    let mut version = None;
    let mut quiet_since = std::time::Instant::now();
    let gone = || Error::new(ErrorCode::IoError, "the client went away");
    loop {
        if *stopping.borrow() {
            return;
        }
        let now = session.ledger.version();
        if now != version || version.is_none() {
            let mut sent = false;
            let mut emit = |event: &crate::operations::events::Event<'_>| {
                let data = serde_json::to_string(&EventView::of(event))
                    .map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))?;
                let event = format!("id: {}\nevent: record\ndata: {data}\n\n", event.record.line);
                sent = true;
                sender
                    .blocking_send(Ok(Bytes::from(event)))
                    .map_err(|_| gone())
            };
            match session.ledger.stream_records(at, |record, spent| {
                events.record(session, record, spent, &mut emit)
            }) {
                Ok(next) => {
                    at = next;
                    version = now;
                }
                Err(err) if sender.is_closed() => {
                    let _ = err;
                    return;
                }
                // A ledger that cannot be read now (a database restarting)
                // is tried again; the cursor keeps what was sent.
                Err(_) => {}
            }
            if sent {
                quiet_since = std::time::Instant::now();
            }
        }
        if quiet_since.elapsed() >= KEEP_ALIVE {
            if sender
                .blocking_send(Ok(Bytes::from_static(b": keep-alive\n\n")))
                .is_err()
            {
                return;
            }
            quiet_since = std::time::Instant::now();
        }
        if sender.is_closed() {
            return;
        }
        std::thread::sleep(POLL);
    }
}
