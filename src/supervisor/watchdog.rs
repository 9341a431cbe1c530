//! The watchdog: the thread that stops the agent's group at its deadline,
//! on an interrupt, or when told to (the kill-switch).
//!
//! It runs beside the supervisor's main thread so that a kill is never
//! late because that thread waits for the ledger lock (another process may
//! hold it for seconds): the deadline is kept by a thread that never
//! touches the ledger, and the ending is recorded when the lock comes.

use crate::engine::EndReason;
use rustix::process::{Pid, Signal};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the deadline and the interrupt flag are looked at.
const TICK: Duration = Duration::from_millis(10);

/// Set by the signal handler: the signal that asked the supervisor to stop.
pub(super) static SIGNALLED: AtomicI32 = AtomicI32::new(0);

pub(super) struct Watchdog {
    tell: Sender<Order>,
    fired: Arc<Mutex<Option<EndReason>>>,
    thread: Option<JoinHandle<()>>,
}

enum Order {
    /// Stop the group now, for this reason.
    Fire(EndReason),
    /// The attempt is over: stand down without signalling anything.
    StandDown,
}

impl Watchdog {
    /// Watches process group `group` until `deadline`; stopping it means
    /// SIGTERM, then SIGKILL after `grace`.
    pub(super) fn start(group: Pid, deadline: Instant, grace: Duration) -> Watchdog {
        let (tell, orders) = mpsc::channel();
        let fired = Arc::new(Mutex::new(None));
        let record = Arc::clone(&fired);
        let thread = std::thread::spawn(move || {
            let reason = loop {
                if SIGNALLED.load(Ordering::SeqCst) != 0 {
                    break EndReason::Interrupted;
                }
                if Instant::now() >= deadline {
                    break EndReason::Deadline;
                }
                match orders.recv_timeout(TICK) {
                    Ok(Order::Fire(reason)) => break reason,
                    Ok(Order::StandDown) | Err(RecvTimeoutError::Disconnected) => return,
                    Err(RecvTimeoutError::Timeout) => {}
                }
            };
            *record.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
            super::kill_group(group, Signal::TERM);
            // The grace period ends early only when the attempt is over.
            let until = Instant::now() + grace;
            loop {
                match orders.recv_timeout(until.saturating_duration_since(Instant::now())) {
                    Ok(Order::StandDown) | Err(RecvTimeoutError::Disconnected) => return,
                    Ok(Order::Fire(_)) => continue,
                    Err(RecvTimeoutError::Timeout) => break,
                }
            }
            super::kill_group(group, Signal::KILL);
        });
        Watchdog {
            tell,
            fired,
            thread: Some(thread),
        }
    }

    /// Stops the group now (unless it is being stopped already).
    pub(super) fn fire(&self, reason: EndReason) {
        let _ = self.tell.send(Order::Fire(reason));
    }

    /// Why the group was stopped, if it was.
    pub(super) fn fired(&self) -> Option<EndReason> {
        *self.fired.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends the watch once the agent has exited, and says why the group
    /// was stopped, if it was. After this no signal is sent by the
    /// watchdog, so the caller may kill what is left of the group.
    pub(super) fn stand_down(mut self) -> Option<EndReason> {
        let _ = self.tell.send(Order::StandDown);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.fired()
    }
}
