//! `ledger import` of a file: which of its records the ledger holds
//! already (importing a backup twice must not duplicate a record, and the
//! ledger is append-only, so a duplicate could never be undone), and for a
//! file ledger the marker that makes an import all or nothing across a
//! crash.

use super::lines::stream_lines;
use crate::engine::Stamp;
use crate::error::{Error, ErrorCode, Result};
use crate::record::chain::{self, Digest, Prev};
use crate::record::{Body, ImportMark, Record};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::os::unix::fs::FileExt;

/// The lines to import and the record ids they carry.
pub(crate) struct Source<'a> {
    pub file: &'a File,
    pub len: u64,
    /// Take only records whose ids are new (`--skip-existing`).
    pub skip_existing: bool,
    /// Time and author of the `kind:"import"` line, when one is written.
    pub stamp: Stamp,
    /// Record id → (offset, length) of its line in the source.
    ids: HashMap<String, (u64, usize)>,
}

/// What an import did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Imported {
    pub imported: u64,
    pub skipped: u64,
}

impl<'a> Source<'a> {
    /// Reads the record id of every line (a line that is no record has
    /// none, and is imported as it is, to become a finding).
    pub(crate) fn scan(
        file: &'a File,
        len: u64,
        skip_existing: bool,
        stamp: Stamp,
    ) -> Result<Source<'a>> {
        let mut ids = HashMap::new();
        stream_lines(file, len, |offset, line_no, line| {
            if let Ok(record) = Record::parse(line, line_no as usize) {
                ids.entry(record.id).or_insert((offset, line.len()));
            }
        })
        .map_err(|e| Error::io("the file to import", &e))?;
        Ok(Source {
            file,
            len,
            skip_existing,
            stamp,
            ids,
        })
    }

    /// The line that goes before the imported ones when they do not
    /// continue the ledger's chain from `prev` (the digest of its last
    /// line): a `kind:"import"` line naming how many follow and where
    /// their own chain starts again (`record::ImportMark`), so that
    /// `verify` does not read an honest import as tampering. `None` when
    /// they continue it (an export imported into an empty ledger): every
    /// byte stays as it was. `prev` becomes the marker's digest.
    pub(crate) fn boundary(
        &self,
        skip: &HashSet<u64>,
        prev: &mut Digest,
    ) -> Result<Option<String>> {
        let mut expected = *prev;
        let mut lines = 0u64;
        let mut restarts = Vec::new();
        // What each excused line names: the first one's, then each later
        // restart's.
        let mut restart_prevs = Vec::new();
        let mut continues = true;
        stream_lines(self.file, self.len, |offset, _, line| {
            if skip.contains(&offset) {
                return;
            }
            let named = chain::prev_of(line);
            let follows = match named {
                Prev::Names(digest) => digest == expected,
                Prev::Unchained => true,
                Prev::Malformed => false,
            };
            if lines == 0 {
                continues = follows;
                restart_prevs.push(named_hex(named));
                if !follows {
                    restarts.push(0);
                }
            } else if !follows {
                restarts.push(lines);
                restart_prevs.push(named_hex(named));
            }
            expected = chain::digest_of(line);
            lines += 1;
        })
        .map_err(|e| Error::io("the file to import", &e))?;
        if continues && restarts.is_empty() {
            return Ok(None);
        }
        let marker = self.stamp.record(
            crate::ids::IMPORT,
            Body::Import(ImportMark {
                lines,
                chain_restarts: restarts,
                restart_prevs: Some(restart_prevs),
            }),
        );
        Ok(Some(Record::operation_lines(&[marker], prev)))
    }

    /// Whether a record of the ledger with this id matters to the import.
    pub(crate) fn wants(&self, id: &str) -> bool {
        self.ids.contains_key(id)
    }

    pub(crate) fn ids(&self) -> impl Iterator<Item = &str> {
        self.ids.keys().map(String::as_str)
    }

    /// Given the ledger's records that carry ids of the import (id and
    /// stored line), the offsets of the source lines to leave out; or the
    /// refusal: any such id without `skip_existing`, or with it a line
    /// that differs from the stored one. The first in the source is named.
    pub(crate) fn decide(&self, existing: Vec<(String, Vec<u8>)>) -> Result<HashSet<u64>> {
        let mut found: Vec<(u64, usize, String, Vec<u8>)> = existing
            .into_iter()
            .filter_map(|(id, stored)| {
                let (offset, len) = *self.ids.get(&id)?;
                Some((offset, len, id, stored))
            })
            .collect();
        found.sort_by_key(|(offset, ..)| *offset);
        let refuse = |id: &str, why: &str| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("the ledger already holds record {id}: {why}; nothing was written"),
            )
            .detail("record_id", id)
        };
        if !self.skip_existing {
            if let Some((_, _, id, _)) = found.first() {
                return Err(refuse(
                    id,
                    &format!(
                        "{} of the file's records are in it (importing a backup twice, or into the ledger it came from?)",
                        found.len()
                    ),
                )
                .detail("existing", found.len())
                .hint("--skip-existing imports only the records whose ids are new"));
            }
            return Ok(HashSet::new());
        }
        let mut skipped = HashSet::new();
        for (offset, len, id, stored) in found {
            let mut line = vec![0; len];
            self.file
                .read_exact_at(&mut line, offset)
                .map_err(|e| Error::io("the file to import", &e))?;
            if line != stored {
                return Err(refuse(&id, "the file's line for it differs from the stored one")
                    .hint("a record id names one line for ever: the file is not a copy of this ledger's records"));
            }
            skipped.insert(offset);
        }
        Ok(skipped)
    }
}

/// A line's `prev` as an import line names it: hex, or `None` for one
/// without (a malformed one is named as no digest, which nothing matches).
fn named_hex(prev: Prev) -> Option<String> {
    match prev {
        Prev::Names(digest) => Some(chain::hex(&digest)),
        Prev::Unchained => None,
        Prev::Malformed => Some(String::new()),
    }
}
