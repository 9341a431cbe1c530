//! Group commit for the writers of one process (`serve`): while one holds
//! the ledger's lock, the others queue; the holder hands the open, locked
//! file and its warm cache to the next instead of syncing and unlocking,
//! and the last of a group syncs once for all of them. Nobody hears of
//! success before the sync that covers what it wrote (or what it read
//! that was written in the group) has returned.

use super::cache::Cache;
use std::fs::File;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// How many steps one group may take before it syncs and lets go of the
/// lock anyway: other processes, and readers, wait for a group to end.
pub(super) const MAX_STEPS: u32 = 32;

/// The ledger as a group holds it: locked by this process, written past
/// its last sync.
pub(super) struct OpenGroup {
    pub file: File,
    /// This group made the file: removed again if nothing is written.
    pub created: bool,
    pub cache: Cache,
    /// The length of the file, and where its whole operations end (what
    /// lies between is a torn tail, moved away before the first write).
    pub len: u64,
    pub whole: u64,
    /// Where the ledger ended when the group began: what a failed sync
    /// cuts back to.
    pub start: u64,
    /// The number of the group's first step, and how many it took.
    pub first: u64,
    pub steps: u32,
    /// Whether a step wrote since the last sync.
    pub unsynced: bool,
    /// A write failed and was cut back: the group ends, its cache is not
    /// kept.
    pub broken: bool,
    /// The digest of the line ending at `whole`, which the next line's
    /// `prev` names: read once a group, when it first writes.
    pub prev: Option<crate::record::chain::Digest>,
}

/// An I/O error kept to tell each writer of a failed group.
pub(super) struct Failure {
    from: u64,
    through: u64,
    /// How many of its steps have not heard of it yet: it is dropped when
    /// the last has.
    unheard: u64,
    raw: Option<i32>,
    kind: std::io::ErrorKind,
    message: String,
}

impl Failure {
    pub(super) fn new(from: u64, through: u64, err: &std::io::Error) -> Failure {
        Failure {
            from,
            through,
            unheard: through + 1 - from,
            raw: err.raw_os_error(),
            kind: err.kind(),
            message: err.to_string(),
        }
    }

    pub(super) fn error(&self) -> std::io::Error {
        match self.raw {
            Some(code) => std::io::Error::from_raw_os_error(code),
            None => std::io::Error::new(self.kind, self.message.clone()),
        }
    }
}

#[derive(Default)]
struct Synced {
    /// Every step up to this one was synced or failed.
    through: u64,
    /// The failed groups some of whose steps have not heard of it.
    failures: Vec<Failure>,
}

/// The queue of one process's writers of one ledger.
pub(super) struct Writers {
    queued: AtomicUsize,
    /// How a group's writes are made durable (`syscalls::sync`; tests
    /// count the syncs, or fail one, through `FileLedger::syncing_with`).
    pub sync: fn(&File) -> std::io::Result<()>,
    held: Mutex<Held>,
    synced: Mutex<Synced>,
    synced_changed: Condvar,
}

impl Default for Writers {
    fn default() -> Writers {
        Writers {
            queued: AtomicUsize::new(0),
            sync: super::syscalls::sync,
            held: Mutex::default(),
            synced: Mutex::default(),
            synced_changed: Condvar::new(),
        }
    }
}

impl std::fmt::Debug for Writers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Writers(..)")
    }
}

#[derive(Default)]
pub(super) struct Held {
    pub open: Option<OpenGroup>,
    /// The last step number handed out.
    pub steps: u64,
}

impl Writers {
    /// Writers whose groups are made durable by `sync` (the tests').
    #[cfg(test)]
    pub(super) fn syncing_with(sync: fn(&File) -> std::io::Result<()>) -> Writers {
        Writers {
            sync,
            ..Writers::default()
        }
    }

    /// Waits for this process's turn to write.
    pub(super) fn enter(&self) -> MutexGuard<'_, Held> {
        self.queued.fetch_add(1, Ordering::SeqCst);
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        self.queued.fetch_sub(1, Ordering::SeqCst);
        held
    }

    /// Whether another writer of this process waits for its turn.
    pub(super) fn someone_waits(&self) -> bool {
        self.waiting() > 0
    }

    /// How many writers of this process wait for their turn.
    pub(super) fn waiting(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
    }

    /// Every step through `through` synced, or failed with `failure`.
    pub(super) fn settle(&self, through: u64, failure: Option<Failure>) {
        let mut synced = self.synced.lock().unwrap_or_else(|e| e.into_inner());
        synced.through = synced.through.max(through);
        synced.failures.extend(failure);
        drop(synced);
        self.synced_changed.notify_all();
    }

    /// Waits until the group of step `step` was synced; the error of that
    /// sync when it failed. Every step is waited for once.
    pub(super) fn wait_synced(&self, step: u64) -> Result<(), std::io::Error> {
        let mut synced = self.synced.lock().unwrap_or_else(|e| e.into_inner());
        while synced.through < step {
            synced = self
                .synced_changed
                .wait(synced)
                .unwrap_or_else(|e| e.into_inner());
        }
        let Some(at) = synced
            .failures
            .iter()
            .position(|failure| (failure.from..=failure.through).contains(&step))
        else {
            return Ok(());
        };
        let failure = &mut synced.failures[at];
        failure.unheard -= 1;
        let err = failure.error();
        if failure.unheard == 0 {
            synced.failures.swap_remove(at);
        }
        Err(err)
    }
}
