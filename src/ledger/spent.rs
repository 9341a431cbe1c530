//! Records a stream's taker is done with, sent back to be dropped on the
//! thread that parsed them. mimalloc frees a block quickly on the thread
//! that allocated it; a block freed on another thread goes onto an atomic
//! list that its owner must collect. With `events` parsing on a second
//! core and dropping every record on the first, that hand-over was a
//! sixth of the stream's CPU (measured in the git history of `docs/performance.md`, step 28).

use crate::record::Record;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};

/// Records sent back at once: one send for many, and few enough that
/// memory holds no more than the batches already on their way.
const AT_ONCE: usize = 1024;

/// Bundles on their way back, at most: past it, records are dropped
/// where they are (never a wait on the reader).
const ON_THE_WAY: usize = 4;

/// Where a taker puts the records it is done with.
pub(crate) struct Spent {
    held: Vec<Record>,
    home: Option<SyncSender<Vec<Record>>>,
}

/// The reading thread's end: it drops what comes back.
pub(crate) struct SpentHome {
    returned: Receiver<Vec<Record>>,
}

impl Spent {
    /// Records are dropped where they are spent: read on this thread.
    pub(crate) fn here() -> Spent {
        Spent {
            held: Vec::new(),
            home: None,
        }
    }

    /// Records read on another thread, which holds the `SpentHome`.
    pub(crate) fn sent_home() -> (Spent, SpentHome) {
        let (home, returned) = sync_channel(ON_THE_WAY);
        let spent = Spent {
            held: Vec::with_capacity(AT_ONCE),
            home: Some(home),
        };
        (spent, SpentHome { returned })
    }

    pub(crate) fn give(&mut self, record: Record) {
        if self.home.is_none() {
            return;
        }
        self.held.push(record);
        if self.held.len() >= AT_ONCE {
            self.send();
        }
    }

    pub(crate) fn give_all(&mut self, records: Vec<Record>) {
        if self.home.is_some() {
            for record in records {
                self.give(record);
            }
        }
    }

    fn send(&mut self) {
        let Some(home) = &self.home else {
            return;
        };
        let bundle = std::mem::replace(&mut self.held, Vec::with_capacity(AT_ONCE));
        match home.try_send(bundle) {
            Ok(()) => {}
            // A reader that is busy or done: dropped here after all.
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {}
        }
    }
}

impl SpentHome {
    /// Drops what came back (called between batches by the reader).
    pub(crate) fn drop_returned(&self) {
        while let Ok(bundle) = self.returned.try_recv() {
            drop(bundle);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(line: usize) -> Record {
        let text = format!(
            r#"{{"v":1,"kind":"kill_switch","id":"k{line}","at_ms":1,"by":"op","engaged":true}}"#
        );
        Record::parse(text.as_bytes(), line).expect("a record")
    }

    #[test]
    fn spent_records_go_home_in_bundles_and_never_wait() {
        let (mut spent, home) = Spent::sent_home();
        for line in 0..AT_ONCE - 1 {
            spent.give(record(line));
        }
        assert!(home.returned.try_recv().is_err(), "not a bundle yet");
        spent.give(record(AT_ONCE));
        let bundle = home.returned.try_recv().expect("a bundle");
        assert_eq!(bundle.len(), AT_ONCE);
        assert_eq!(bundle.last().map(|r| r.line), Some(AT_ONCE));
        // A home that takes nothing: the records are dropped where they
        // are, and giving goes on.
        for line in 0..AT_ONCE * (ON_THE_WAY + 2) {
            spent.give(record(line));
        }
        let mut bundles = 0;
        while home.returned.try_recv().is_ok() {
            bundles += 1;
        }
        assert_eq!(bundles, ON_THE_WAY);
        drop(home);
        spent.give_all((0..AT_ONCE).map(record).collect());
        assert!(spent.held.len() < AT_ONCE);
    }

    #[test]
    fn records_read_here_are_dropped_at_once() {
        let mut spent = Spent::here();
        spent.give_all((0..AT_ONCE * 2).map(record).collect());
        assert!(spent.held.is_empty());
    }
}
