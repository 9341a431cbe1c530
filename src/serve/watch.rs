//! What every event stream of a server shares: the one watcher of the
//! ledger that streams wait on (its version, and every token's state),
//! and the bounds on streams open, per server and per token.

use crate::error::{Error, ErrorCode, Result};
use crate::global::CredentialState;
use crate::session::Session;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// How often the watcher looks at the ledger for a change.
const POLL: Duration = Duration::from_millis(100);

/// What the watcher last saw of the ledger: a count that moves with each
/// change, and every token's state, so that streams check their token
/// without a read of their own.
#[derive(Clone, Default)]
pub(super) struct Seen {
    pub(super) changes: u64,
    pub(super) credentials: Arc<BTreeMap<String, CredentialState>>,
}

/// The server's one watcher of the ledger: a thread that looks at the
/// ledger's version ten times a second and, when it moved, reads the
/// tokens' state once for every stream.
pub(super) struct Watcher {
    seen: watch::Receiver<Seen>,
    /// The streams' reads, handed to the readers.
    reads: std::sync::Mutex<std::sync::mpsc::Sender<Read>>,
}

/// One read of a stream, run by a reader thread.
type Read = Box<dyn FnOnce() + Send>;

/// The threads that run the streams' reads: each read is short, and a
/// woken stream waits its turn for a few milliseconds; a thread of the
/// blocking pool for each read grew the pool with the streams, since a
/// pool thread that has just finished is not always idle when the next
/// read comes.
const READERS: usize = 4;

impl Watcher {
    pub(super) fn start(session: Arc<Session>, stopping: watch::Receiver<bool>) -> Watcher {
        let (publish, seen) = watch::channel(Seen::default());
        let _ = std::thread::Builder::new()
            .name("discuss-watch".into())
            .spawn(move || {
                let mut version = None;
                let mut changes = 0;
                while !*stopping.borrow() {
                    let now = session.ledger.version();
                    // A version that cannot be told (a database away) is
                    // read again each time: a change may hide behind it.
                    if (now != version || now.is_none())
                        && let Ok(credentials) = credentials_of(&session)
                    {
                        changes += 1;
                        version = now;
                        publish.send_replace(Seen {
                            changes,
                            credentials: Arc::new(credentials),
                        });
                    }
                    std::thread::sleep(POLL);
                }
            });
        let (reads, jobs) = std::sync::mpsc::channel::<Read>();
        let jobs = Arc::new(Mutex::new(jobs));
        for i in 0..READERS {
            let jobs = Arc::clone(&jobs);
            let _ = std::thread::Builder::new()
                .name(format!("discuss-read-{i}"))
                .spawn(move || {
                    loop {
                        // The lock is held only while waiting for a job.
                        let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        match job {
                            Ok(job) => job(),
                            // The watcher is gone: the server stops.
                            Err(_) => return,
                        }
                    }
                });
        }
        Watcher {
            seen,
            reads: Mutex::new(reads),
        }
    }

    /// Runs `read` on a reader thread; `None` when the readers are gone.
    pub(super) async fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Read = Box::new(move || {
            let _ = answer.send(read());
        });
        self.reads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(job)
            .ok()?;
        answered.await.ok()
    }

    pub(super) fn subscribe(&self) -> watch::Receiver<Seen> {
        self.seen.clone()
    }
}

fn credentials_of(session: &Session) -> Result<BTreeMap<String, CredentialState>> {
    let view = session.ledger.view(&[])?;
    let now = session.now(view.last_at_ms());
    Ok(view.global(now).credentials.clone())
}

/// Event streams open, on the server and per token.
pub(super) struct Limits {
    most: usize,
    most_per_token: usize,
    open: Mutex<(usize, HashMap<String, usize>)>,
}

/// One open stream, given back when it ends.
pub(super) struct Slot {
    limits: Arc<Limits>,
    token_id: String,
}

impl Limits {
    pub(super) fn new(most: usize, most_per_token: usize) -> Arc<Limits> {
        Arc::new(Limits {
            most,
            most_per_token,
            open: Mutex::default(),
        })
    }

    /// A slot for a stream of `token_id`: 503 `server_busy` past the
    /// server's bound, 429 `too_many_streams` past the token's, each with
    /// a time to come back.
    pub(super) fn take(self: &Arc<Limits>, token_id: &str) -> Result<Slot> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let (all, per_token) = &mut *open;
        if *all >= self.most {
            return Err(Error::new(
                ErrorCode::ServerBusy,
                format!(
                    "the server has {} event streams open, as many as it takes",
                    self.most
                ),
            )
            .detail("reason", "max_streams")
            .detail("limit", self.most)
            .detail("retry_after_ms", 1_000)
            .hint("try again shortly; --max-streams on the server sets the bound"));
        }
        let mine = per_token.entry(token_id.to_owned()).or_default();
        if *mine >= self.most_per_token {
            return Err(Error::new(
                ErrorCode::TooManyStreams,
                format!(
                    "this token has {} event streams open, as many as one token may",
                    self.most_per_token
                ),
            )
            .detail("limit", self.most_per_token)
            .detail("retry_after_ms", 1_000)
            .hint("close a stream first; one stream with no filter carries every record the token may read"));
        }
        *mine += 1;
        *all += 1;
        Ok(Slot {
            limits: Arc::clone(self),
            token_id: token_id.to_owned(),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.limits.open.lock().unwrap_or_else(|e| e.into_inner());
        let (all, per_token) = &mut *open;
        *all = all.saturating_sub(1);
        if let Some(mine) = per_token.get_mut(&self.token_id) {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                per_token.remove(&self.token_id);
            }
        }
    }
}
