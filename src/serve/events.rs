//! `GET /v1/events`: the event stream as server-sent events. Each record
//! is one event, `id:` its cursor (the record's line), `event: record`,
//! `data:` the object `events --json` prints. A client that reconnects
//! with `Last-Event-ID` (or `after=`) gets exactly the records after it,
//! from any server of the ledger: lines are the ledger's own numbers.
//!
//! A stream is a task, not a thread: it reads a batch of records on the
//! blocking pool only when the server's one watcher of the ledger
//! (`Watcher`) has seen it change, and sends the batch at the client's
//! pace, so a client that does not read holds no thread and memory stays
//! bounded. Streams are bounded per server and per token, and each ends
//! within a second of its token being revoked or expiring.

use super::app::App;
use super::http::{error_response, query_pairs, single};
use super::watch::{Seen, Slot};
use crate::credentials::Principal;
use crate::error::{Error, ErrorCode, Result};
use crate::operations::events::EventStream;
use crate::output::EventView;
use crate::session::Session;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A comment this often keeps idle streams (and proxies) open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// How often a stream checks its token (revoked, expired) when nothing
/// else happens.
const TOKEN_CHECK: Duration = Duration::from_secs(1);
/// The discussions a stream holds the records of at once (more are read
/// back from the ledger when they move again).
const MOST_HELD: usize = 64;
/// Events read in one batch on the blocking pool: the most a stream holds
/// in memory beyond its channel.
const BATCH: usize = 256;
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
        let slot = app.streams.take(&principal.token_id)?;
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
        let events = EventStream::new(discussion, agent, viewer, after, MOST_HELD);
        Ok::<_, Error>((events, slot))
    };
    let (events, slot) = match opened.await {
        Ok(opened) => opened,
        Err(err) => return error_response(&err),
    };
    let (sender, receiver) = tokio::sync::mpsc::channel::<std::io::Result<Bytes>>(BUFFERED);
    tokio::spawn(follow(app, principal, events, sender, slot));
    super::http::event_stream(receiver)
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

/// One batch read on the blocking pool: the events to send, and whether
/// the read stopped because the batch was full (more to read at once).
struct Batch {
    events: EventStream,
    at: Option<(u64, u64)>,
    sent: Vec<Bytes>,
    full: bool,
    /// The read failed (a database restarting): tried again each second.
    failed: bool,
    /// The stream's token, and whether the read met its revocation: the
    /// stream ends exactly there, in the ledger's order.
    token_id: String,
    revoked: bool,
    /// The earliest instant a discussion shown may end by time (an end
    /// told by the stream itself, `event: status`).
    next_due_ms: Option<i64>,
}

/// Reads and sends until the client goes away, the server stops, or the
/// token stops being good.
async fn follow(
    app: App,
    principal: Principal,
    events: EventStream,
    sender: tokio::sync::mpsc::Sender<std::io::Result<Bytes>>,
    slot: Slot,
) {
    let _slot = slot;
    let mut seen = app.watcher.subscribe();
    let mut stopping = app.stopping.clone();
    let mut ticks = tokio::time::interval(TOKEN_CHECK);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut batch = Some(Batch {
        events,
        at: None,
        sent: Vec::new(),
        full: false,
        failed: false,
        token_id: principal.token_id.clone(),
        revoked: false,
        next_due_ms: None,
    });
    let mut quiet_since = Instant::now();
    let mut read_now = true;
    loop {
        if *stopping.borrow() || !token_is_good(&app, &principal, &seen.borrow()) {
            return;
        }
        if read_now {
            seen.borrow_and_update();
            let Some(taken) = batch.take() else { return };
            let session = Arc::clone(&app.session);
            // On the server's few reader threads, whatever the number of
            // streams: an append that wakes 600 streams starts no thread.
            // The batch is sent after the read is done: a client that
            // reads slowly holds back only its own stream.
            let Some(mut read) = app.watcher.read(move || read_batch(&session, taken)).await else {
                return;
            };
            for event in read.sent.drain(..) {
                if sender.send(Ok(event)).await.is_err() {
                    return;
                }
                quiet_since = Instant::now();
            }
            if read.revoked {
                return;
            }
            read_now = read.full;
            batch = Some(read);
            if read_now {
                continue;
            }
        }
        tokio::select! {
            changed = seen.changed() => {
                if changed.is_err() {
                    return;
                }
                read_now = true;
            }
            _ = ticks.tick() => {
                let now = app.session.clock.now_ms();
                read_now = batch
                    .as_ref()
                    .is_some_and(|b| b.failed || b.next_due_ms.is_some_and(|due| due <= now));
                if quiet_since.elapsed() >= KEEP_ALIVE {
                    if sender.send(Ok(Bytes::from_static(b": keep-alive\n\n"))).await.is_err() {
                        return;
                    }
                    quiet_since = Instant::now();
                }
            }
            _ = stopping.changed() => return,
            () = sender.closed() => return,
        }
    }
}

/// Whether the stream's token is still active, as the watcher last read
/// the ledger and at this instant (an expiry needs no write).
pub(super) fn token_is_good(app: &App, principal: &Principal, seen: &Seen) -> bool {
    if seen.changes == 0 {
        // The watcher has not read the ledger yet: the request's own
        // check of the token stands.
        return true;
    }
    // A token the watcher has not read yet was issued after its last
    // read: the request's own check stands until it has (a revocation of
    // it is met in the stream's own reading, in ledger order).
    let now = crate::session::reader_time(app.session.clock.now_ms(), None);
    seen.credentials
        .get(&principal.token_id)
        .is_none_or(|c| c.state(now) == "active")
}

/// Reads the records after the stream's cursor, at most `BATCH` events.
fn read_batch(session: &Session, mut batch: Batch) -> Batch {
    // From the operation that holds the cursor (or, should that not be
    // found now, from the start: the stream skips up to the cursor).
    let at = match batch.at {
        Some(at) => at,
        None => session
            .ledger
            .position_of_line(batch.events.cursor())
            .unwrap_or((0, 0)),
    };
    let full = || Error::new(ErrorCode::Internal, "batch full");
    let mut sent = std::mem::take(&mut batch.sent);
    let events = &mut batch.events;
    let (token_id, revoked) = (&batch.token_id, &mut batch.revoked);
    let read = session.ledger.stream_records(at, |record, spent| {
        // Stopped before a record is handled, so the cursor names the
        // last one sent and the next batch starts right after it.
        if sent.len() >= BATCH {
            spent.give(record);
            return Err(full());
        }
        // Nothing written after the token's revocation is sent with it.
        if let crate::record::Body::Credential(credential) = &record.body
            && credential.op == crate::record::CredentialOp::Revoke
            && credential.token_id == *token_id
            && record.line as u64 > events.cursor()
        {
            *revoked = true;
            spent.give(record);
            return Err(Error::new(ErrorCode::Unauthorized, "revoked"));
        }
        let mut emit = |event: &crate::operations::events::Event<'_>| {
            let data = serde_json::to_string(&EventView::of(event))
                .map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))?;
            sent.push(Bytes::from(format!(
                "id: {}\nevent: record\ndata: {data}\n\n",
                event.record.line
            )));
            Ok(())
        };
        events.record(session, record, spent, &mut emit)
    });
    match read {
        Ok(next) => {
            batch.at = Some(next);
            batch.full = false;
            batch.failed = false;
        }
        // Full, or a ledger that cannot be read now (a database
        // restarting): read again from the cursor.
        Err(_) => {
            batch.at = None;
            batch.full = !batch.revoked && sent.len() >= BATCH;
            batch.failed = !batch.revoked && !batch.full;
        }
    }
    // Ends by time of discussions shown: told once, without an `id:` (no
    // record stands behind them, so no cursor moves).
    if !batch.revoked && !batch.full {
        let now = session.clock.now_ms();
        if batch.events.next_due().is_some_and(|due| due <= now) {
            let _ = batch.events.overdue(session, now, &mut |end| {
                let data = serde_json::to_string(&crate::output::TimedEndView(end))
                    .map_err(|e| Error::new(ErrorCode::Internal, e.to_string()))?;
                sent.push(Bytes::from(format!("event: status\ndata: {data}\n\n")));
                Ok(())
            });
        }
        batch.next_due_ms = batch.events.next_due();
    }
    batch.sent = sent;
    batch
}
