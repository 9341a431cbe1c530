//! The status after each record, for the event stream: `derive`'s answer
//! at every record without deriving the whole discussion again.

use super::{Fold, derive_lean, envelope_of, is_well_formed_ask};
use crate::discussion::envelope::MessageType;
use crate::discussion::state::*;
use crate::record::Record;

/// A discussion's status after each of its records in turn: at each
/// record, what `derive` of the records so far says at that record's
/// time, without deriving the whole discussion again (the event stream).
///
/// Once the root has come, each record is folded once, as `derive` folds
/// it. Where the fold alone cannot tell what `derive` would say (no root
/// yet; a record so far stamped more than the allowed skew after the
/// newest, which `derive` would leave out), it asks `derive`.
pub struct StatusAfterEach {
    id: String,
    /// Every record so far folded, from the root's arrival on.
    fold: Option<Fold>,
    clock: i64,
    latest_at_ms: i64,
    /// What `derive` said at the last record, when it was asked.
    derived: Option<Option<Discussion>>,
    /// The type and turn of the last record, a message with a well-formed
    /// envelope: its envelope parsed once, for the stream too.
    message: Option<(MessageType, u32)>,
}

impl StatusAfterEach {
    pub fn new(id: &str) -> StatusAfterEach {
        StatusAfterEach {
            id: id.to_owned(),
            fold: None,
            clock: i64::MIN,
            latest_at_ms: i64::MIN,
            derived: None,
            message: None,
        }
    }

    /// The type and turn of the last record taken, when it is a message
    /// whose envelope is well-formed.
    pub fn last_message(&self) -> Option<(MessageType, u32)> {
        self.message
    }

    /// Takes the next record: `records` are all of the discussion's so
    /// far, in ledger order, the new one last. The status after it, as
    /// `derive(id, records, its at_ms)` gives it (`None`: no discussion
    /// yet for that reader). Records or references to them: a list of
    /// references is only made when a whole derivation is needed.
    pub fn push<R: std::borrow::Borrow<Record>>(&mut self, records: &[R]) -> Option<Status> {
        let record = records.last()?.borrow();
        let all = || records.iter().map(R::borrow).collect::<Vec<&Record>>();
        let at_ms = record.at_ms;
        self.latest_at_ms = self.latest_at_ms.max(at_ms);
        let envelope = envelope_of(record, &self.id, false);
        self.message = match &envelope {
            Some(Ok(envelope)) => Some((envelope.kind, envelope.turn)),
            _ => None,
        };
        match &mut self.fold {
            Some(fold) => {
                self.clock = self.clock.max(at_ms);
                // The root came before: any ask now is a second one (even
                // one that repeats the root's id).
                if is_well_formed_ask(envelope.as_ref()) {
                    let root = fold.root_record.clone().unwrap_or_default();
                    fold.finding(
                        FindingKind::MalformedRoot,
                        record,
                        Some(&record.id),
                        format!("a second root; the first is {root}"),
                    );
                }
                fold.step(record, envelope.as_ref(), self.clock);
                fold.advance(self.clock);
            }
            None if is_well_formed_ask(envelope.as_ref()) => {
                // The root: what came before it is folded against it now,
                // as `derive` does.
                let records = all();
                let envelopes: Vec<_> = records
                    .iter()
                    .map(|r| envelope_of(r, &self.id, false))
                    .collect();
                let mut fold = Fold::new(&self.id, records[0].at_ms, false);
                fold.choose_root(&records, &envelopes);
                self.clock = fold.steps(&records, &envelopes);
                fold.advance(self.clock);
                self.fold = Some(fold);
            }
            None => {}
        }
        let some_ahead = self.latest_at_ms > at_ms.saturating_add(crate::clock::MAX_SKEW_MS);
        match &self.fold {
            Some(fold) if !some_ahead => {
                self.derived = None;
                Some(fold.status())
            }
            _ => {
                // Only its status and root are asked for: lean will do.
                let derived = derive_lean(&self.id, &all(), at_ms);
                let status = derived.as_ref().map(|d| d.status);
                self.derived = Some(derived);
                status
            }
        }
    }

    /// The root as of the last record taken.
    pub fn root(&self) -> Option<&Root> {
        match (&self.derived, &self.fold) {
            (Some(derived), _) => derived.as_ref()?.root.as_ref(),
            (None, Some(fold)) => fold.d.root.as_ref(),
            (None, None) => None,
        }
    }
}
