//! The ids of the discussions with lines after the base, as the checkpoint
//! keeps them: one buffer of `id\n` lines, in the order first written.
//! Every command loads and saves the checkpoint, and these are most of it
//! (up to `MERGE_AT` of them): as a set of strings they cost an allocation
//! each way for each id, a millisecond of an `ask` at 1,500 of them.

use crate::ledger::hash::{KeyHashMap, hash64};
use std::collections::BTreeSet;

#[derive(Debug, Default)]
pub(crate) struct NewIds {
    /// `id\n` each: UTF-8 checked once, when read from the checkpoint.
    text: String,
    /// Where the first id of each `hash64` starts; made at the first
    /// `insert`, which a command that only reads never makes.
    by_hash: Option<KeyHashMap<u32>>,
}

impl NewIds {
    /// The ids `bytes` holds (`id\n` each), as `as_bytes` gave them.
    pub(super) fn from_bytes(bytes: &[u8]) -> Option<NewIds> {
        if !(bytes.is_empty() || bytes.ends_with(b"\n")) {
            return None;
        }
        Some(NewIds {
            text: String::from_utf8(bytes.to_vec()).ok()?,
            by_hash: None,
        })
    }

    pub(super) fn as_bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> {
        self.text.split_terminator('\n')
    }

    /// Sorted, to walk beside the summary's lines.
    pub(crate) fn sorted(&self) -> BTreeSet<&str> {
        self.iter().collect()
    }

    pub(super) fn insert(&mut self, id: &str) {
        let mut by_hash = self.by_hash.take().unwrap_or_else(|| {
            let mut by_hash = KeyHashMap::default();
            let mut at = 0;
            for known in self.iter() {
                by_hash.entry(hash64(known.as_bytes())).or_insert(at as u32);
                at += known.len() + 1;
            }
            by_hash
        });
        let end = self.text.len() as u32;
        let first = *by_hash.entry(hash64(id.as_bytes())).or_insert(end);
        // Another id with the same hash (rare): the whole list decides.
        let at_first = &self.text.as_bytes()[first as usize..];
        let known = first != end
            && ((at_first.starts_with(id.as_bytes()) && at_first.get(id.len()) == Some(&b'\n'))
                || self.iter().any(|known| known == id));
        if !known {
            self.text.push_str(id);
            self.text.push('\n');
        }
        self.by_hash = Some(by_hash);
    }
}

impl<'a> FromIterator<&'a str> for NewIds {
    fn from_iter<I: IntoIterator<Item = &'a str>>(ids: I) -> NewIds {
        let mut new_ids = NewIds::default();
        for id in ids {
            new_ids.insert(id);
        }
        new_ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_id_is_kept_once_in_the_order_first_written_and_reads_back() {
        let mut ids = NewIds::from_bytes(b"dsc_b\ndsc_a\n").unwrap();
        for id in ["dsc_a", "dsc_c", "dsc_b", "dsc_", "dsc_c", "dsc_aa"] {
            ids.insert(id);
        }
        let all: Vec<&str> = ids.iter().collect();
        assert_eq!(all, ["dsc_b", "dsc_a", "dsc_c", "dsc_", "dsc_aa"]);
        let again = NewIds::from_bytes(ids.as_bytes()).unwrap();
        assert_eq!(again.iter().collect::<Vec<_>>(), all);
        assert_eq!(
            again.sorted().into_iter().collect::<Vec<_>>(),
            ["dsc_", "dsc_a", "dsc_aa", "dsc_b", "dsc_c"]
        );
        assert!(NewIds::from_bytes(b"dsc_a").is_none(), "a torn last line");
        assert!(NewIds::from_bytes(b"\xff\n").is_none(), "not UTF-8");
    }
}
