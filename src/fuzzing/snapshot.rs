//! The reference replay: the parsed contents of a ledger's bytes at one
//! moment, every record by the plain parser, that the fuzz target and the
//! engine's tests hold the readers' faster ways against.

use crate::ledger::UnreadableLine;
use crate::ledger::lines::parse_lines;
use crate::record::Record;

#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    pub records: Vec<Record>,
    pub unreadable: Vec<UnreadableLine>,
    /// Bytes after the last `\n`: a torn write that was never acknowledged.
    pub torn_tail: usize,
    /// The largest `at_ms` seen; new records never go below it.
    pub last_at_ms: Option<i64>,
}

impl Snapshot {
    /// Parses complete lines. A final line without `\n` is a torn tail and
    /// is never acted on; so are the complete lines of a final operation
    /// whose own lines say it is missing some (the rest of its single
    /// `write` never arrived). Both count in `torn_tail`.
    pub(crate) fn parse(bytes: &[u8]) -> Snapshot {
        let (lines, end) = parse_lines(bytes, 0, 1);
        let mut snapshot = Snapshot {
            torn_tail: bytes.len() - end as usize,
            ..Snapshot::default()
        };
        for line in lines {
            match line.record {
                Ok(record) => snapshot.records.push(record),
                Err(detail) => snapshot.unreadable.push(UnreadableLine {
                    line: line.line_no as usize,
                    detail,
                }),
            }
        }
        snapshot.last_at_ms = snapshot.records.iter().map(|r| r.at_ms).max();
        snapshot
    }

    /// The records of one discussion, in ledger order.
    pub(crate) fn discussion(&self, discussion_id: &str) -> Vec<&Record> {
        self.records
            .iter()
            .filter(|r| r.discussion_id() == Some(discussion_id))
            .collect()
    }

    /// Ids of all discussions named in the ledger, in order of first mention.
    pub(crate) fn discussion_ids(&self) -> Vec<&str> {
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

    #[test]
    fn an_operation_cut_short_is_torn_as_a_whole() {
        use crate::record::{Body, KillSwitch};
        let record = |id: &str| Record {
            id: id.into(),
            at_ms: 9,
            by: "x".into(),
            body: Body::KillSwitch(KillSwitch {
                engaged: false,
                reason: None,
                scope: None,
            }),
            line: 0,
            idempotency: None,
            op_id: None,
            token_id: None,
        };
        let mut prev = crate::record::chain::before_first_line();
        let first = Record::operation_lines(&[record("rec_1")], &mut prev);
        let op = Record::operation_lines(
            &[record("rec_2"), record("rec_3"), record("rec_4")],
            &mut prev,
        );
        assert!(op.starts_with(r#"{"v":1,"kind":"kill_switch","id":"rec_2","#));
        let marks: Vec<&str> = op.lines().collect();
        // Each line ends with its link in the chain, after its marks.
        let marks: Vec<&str> = marks
            .iter()
            .map(|line| line.split(r#","prev":"sha256:"#).next().unwrap())
            .collect();
        assert!(marks[0].ends_with(r#""op_lines":3,"op_id":"rec_2""#));
        assert!(marks[1].ends_with(r#""op_id":"rec_2""#));
        assert!(marks[2].ends_with(r#""op_id":"rec_2""#));
        let whole = format!("{first}{op}");
        assert_eq!(Snapshot::parse(whole.as_bytes()).records.len(), 4);
        assert_eq!(Snapshot::parse(whole.as_bytes()).torn_tail, 0);
        // Every cut inside the operation, at a line end or not, tears all of it.
        for cut in first.len()..whole.len() {
            let snapshot = Snapshot::parse(&whole.as_bytes()[..cut]);
            assert_eq!(snapshot.records.len(), 1, "cut at {cut}");
            assert_eq!(snapshot.torn_tail, cut - first.len(), "cut at {cut}");
        }
    }

    #[test]
    fn a_line_that_claims_others_hides_nothing() {
        let line = |id: &str, extra: &str| {
            format!(
                r#"{{"v":1,"kind":"kill_switch","id":"{id}","at_ms":9,"by":"x","engaged":false,"reason":null{extra}}}"#
            ) + "\n"
        };
        // An edited line announcing 1000 lines, with or without an op_id,
        // then ordinary lines to the end: every line counts, none is torn.
        for claim in [r#","op_lines":1000"#, r#","op_lines":1000,"op_id":"rec_1""#] {
            let bytes = line("rec_1", claim) + &line("rec_2", "") + &line("rec_3", "");
            let snapshot = Snapshot::parse(bytes.as_bytes());
            assert_eq!(snapshot.records.len(), 3, "{claim}");
            assert_eq!(snapshot.torn_tail, 0, "{claim}");
        }
        // A line claiming to belong to another operation hides nothing either.
        let bytes = line("rec_1", "") + &line("rec_2", r#","op_id":"rec_9""#) + &line("rec_3", "");
        assert_eq!(Snapshot::parse(bytes.as_bytes()).records.len(), 3);
    }
}
