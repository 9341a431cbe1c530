//! The parsed contents of the ledger at one moment.

use super::record::Record;
use memchr::memchr_iter;

/// A line that is kept in the ledger but is not a record.
#[derive(Debug, Clone, PartialEq)]
pub struct UnreadableLine {
    pub line: usize,
    pub detail: String,
}

#[derive(Debug, Default)]
pub struct Snapshot {
    pub records: Vec<Record>,
    pub unreadable: Vec<UnreadableLine>,
    /// Bytes after the last `\n`: a torn write that was never acknowledged.
    pub torn_tail: usize,
    /// The largest `at_ms` seen; new records never go below it.
    pub last_at_ms: Option<i64>,
}

impl Snapshot {
    /// Parses complete lines; a final line without `\n` is counted as a torn
    /// tail and never acted on.
    pub fn parse(bytes: &[u8]) -> Snapshot {
        let mut snapshot = Snapshot::default();
        let mut start = 0;
        for (index, end) in memchr_iter(b'\n', bytes).enumerate() {
            let line_no = index + 1;
            match Record::parse(&bytes[start..end], line_no) {
                Ok(record) => {
                    snapshot.last_at_ms = Some(
                        snapshot
                            .last_at_ms
                            .map_or(record.at_ms, |t| t.max(record.at_ms)),
                    );
                    snapshot.records.push(record);
                }
                Err(detail) => snapshot.unreadable.push(UnreadableLine {
                    line: line_no,
                    detail,
                }),
            }
            start = end + 1;
        }
        snapshot.torn_tail = bytes.len() - start;
        snapshot
    }

    /// The records of one discussion, in ledger order.
    pub fn discussion(&self, discussion_id: &str) -> Vec<&Record> {
        self.records
            .iter()
            .filter(|r| r.discussion_id() == Some(discussion_id))
            .collect()
    }

    /// Ids of all discussions named in the ledger, in order of first mention.
    pub fn discussion_ids(&self) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        self.records
            .iter()
            .filter_map(Record::discussion_id)
            .filter(|id| seen.insert(*id))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_going_after_garbage_and_ignores_a_torn_tail() {
        let good = r#"{"v":1,"kind":"kill_switch","id":"rec_1","at_ms":7,"by":"x","engaged":true,"reason":"r"}"#;
        let bytes = format!("garbage\n{good}\n{{\"v\":1,\"ki");
        let snapshot = Snapshot::parse(bytes.as_bytes());
        assert_eq!(snapshot.records.len(), 1);
        assert_eq!(snapshot.records[0].line, 2);
        assert_eq!(snapshot.unreadable.len(), 1);
        assert_eq!(snapshot.unreadable[0].line, 1);
        assert_eq!(snapshot.torn_tail, "{\"v\":1,\"ki".len());
        assert_eq!(snapshot.last_at_ms, Some(7));
    }
}
