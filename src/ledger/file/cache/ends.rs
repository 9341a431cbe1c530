//! Where each discussion ends, found by a quick look at every line: the
//! first list after the cache is gone derives every discussion and builds
//! the cache in one pass over the ledger (`rebuild::scan_deriving`), which
//! must know the last line of each discussion to hand it on there.
//!
//! The look is not a parse: it takes the string after each key
//! `"correlation_id":"` or `"discussion_id":"` as a discussion's id. It
//! can name a line of a discussion that the line is not of (a nested key,
//! a message's `discussion_id`): that discussion is then handed on later
//! than it could be, never wrongly. It can miss a line's discussion (a key
//! written with spaces or escapes): the pass then meets a record past the
//! last line it was told of, and gives up for the usual rebuild.

use super::index_file::key_of;
use super::peek::peek;
use crate::ledger::hash::KeyHashMap;
use crate::ledger::lines::stream_lines;
use memchr::memmem::Finder;
use std::fs::File;
use std::io;

/// The last line (1-based) that names each discussion key, over the
/// complete lines of the first `len` bytes of `ledger`, and how many
/// lines name one.
pub(super) fn last_lines(ledger: &File, len: u64) -> io::Result<(KeyHashMap<u32>, u64)> {
    let look = Look::new();
    let mut last = KeyHashMap::default();
    let mut naming = 0;
    stream_lines(ledger, len, |_, line_no, line| {
        let line_no = line_no as u32;
        let mut names = false;
        look.each_named(line, |key| {
            last.insert(key, line_no);
            names = true;
        });
        naming += u64::from(names);
    })?;
    Ok((last, naming))
}

/// The searchers of a look at lines.
struct Look {
    correlation: Finder<'static>,
    discussion: Finder<'static>,
}

/// How `discuss` begins the lines of the two kinds that name discussions.
const MESSAGE: &[u8] = b"{\"v\":1,\"kind\":\"message\",";
const RECEIPT: &[u8] = b"{\"v\":1,\"kind\":\"receipt\",";

impl Look {
    fn new() -> Look {
        Look {
            correlation: Finder::new(b"\"correlation_id\":\""),
            discussion: Finder::new(b"\"discussion_id\":\""),
        }
    }

    /// Calls `named` with the key of each discussion `line` names: of a
    /// line as `discuss` writes a message or a receipt, the first id under
    /// the key its kind reads (the record's own keys come before any
    /// nested object there); of any other line, every id under either key.
    fn each_named(&self, line: &[u8], mut named: impl FnMut(u64)) {
        let first_only = |finder: &Finder<'_>, named: &mut dyn FnMut(u64)| {
            if let Some(at) = finder.find(line) {
                id_at(line, at + finder.needle().len(), named);
            }
        };
        if line.starts_with(MESSAGE) {
            first_only(&self.correlation, &mut named);
        } else if line.starts_with(RECEIPT) {
            first_only(&self.discussion, &mut named);
        } else {
            for finder in [&self.correlation, &self.discussion] {
                for at in finder.find_iter(line) {
                    if !id_at(line, at + finder.needle().len(), &mut named) {
                        return;
                    }
                }
            }
        }
    }
}

/// Names the id that starts at byte `from` of `line`; `false` when it has
/// escapes, and the line's ids were named as a parse reads them instead.
fn id_at(line: &[u8], from: usize, named: &mut dyn FnMut(u64)) -> bool {
    let value = &line[from..];
    match memchr::memchr2(b'"', b'\\', value) {
        Some(end) if value[end] == b'"' => {
            if let Ok(id) = std::str::from_utf8(&value[..end]) {
                named(key_of(id));
            }
            true
        }
        _ => {
            if let Some(peeked) = peek(line) {
                for id in [&peeked.correlation_id, &peeked.discussion_id]
                    .into_iter()
                    .flatten()
                {
                    named(key_of(id));
                }
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(line: &str) -> Vec<u64> {
        let mut keys = Vec::new();
        Look::new().each_named(line.as_bytes(), |key| keys.push(key));
        keys
    }

    #[test]
    fn a_message_names_its_correlation_and_a_receipt_its_discussion() {
        let message = r#"{"v":1,"kind":"message","id":"msg_1","at_ms":1,"from_agent_id":"a","to_agent_id":"b","correlation_id":"dsc_1","payload":"{\"discussion_id\":\"dsc_2\"}","op_id":"msg_1"}"#;
        assert_eq!(named(message), [key_of("dsc_1")]);
        let receipt = r#"{"v":1,"kind":"receipt","id":"rcp_1","at_ms":1,"receipt":"discussion.attempt.started","discussion_id":"dsc_3","attempt_id":"att_1","agent_id":"a"}"#;
        assert_eq!(named(receipt), [key_of("dsc_3")]);
        let fleet = r#"{"v":1,"kind":"fleet","id":"rec_1","at_ms":1,"op":"add","fleet_id":"f","agent_id":"a"}"#;
        assert!(named(fleet).is_empty());
    }

    /// An id with escapes is read as the index reads it.
    #[test]
    fn an_escaped_id_is_decoded() {
        let receipt = r#"{"v":1,"kind":"receipt","id":"rcp_1","at_ms":1,"receipt":"x","discussion_id":"dsc_\u0041"}"#;
        assert_eq!(named(receipt), [key_of("dsc_A")]);
    }

    /// A line as `discuss` writes one names its first id under its kind's
    /// key; any other line, every id under either key (more than its own
    /// is harmless: that discussion is handed on later).
    #[test]
    fn lines_of_another_shape_name_every_id() {
        let written = r#"{"v":1,"kind":"receipt","id":"r","at_ms":1,"discussion_id":"dsc_8","x":{"discussion_id":"dsc_9"}}"#;
        assert_eq!(named(written), [key_of("dsc_8")]);
        let other = r#"{"kind":"receipt","v":1,"id":"r","at_ms":1,"x":{"discussion_id":"dsc_9"},"correlation_id":"dsc_7","discussion_id":"dsc_8"}"#;
        assert_eq!(
            named(other),
            [key_of("dsc_7"), key_of("dsc_9"), key_of("dsc_8")]
        );
    }
}
