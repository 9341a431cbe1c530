//! What a backend keeps of each discussion for lists: a row (opaque to
//! the ledger: JSON the application writes and reads, through
//! `Summarize`) and the instant from which it holds. A file keeps them in
//! `<ledger>.summary` (`file::cache::summary`), PostgreSQL in
//! `discuss_summaries`.

use crate::record::Record;

/// What the summary keeps of one discussion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    /// From this instant on the row holds, until a new line touches the
    /// discussion.
    pub settled_from_ms: i64,
    /// The row, as one line of JSON (`null` when the discussion has none).
    pub row: String,
}

/// How the command layer summarizes a discussion from its records. The
/// ledger never reads a row; it keeps it and hands it back.
pub(crate) type Summarize = fn(&str, &[&Record]) -> Summary;

/// A summary line could not be trusted.
#[derive(Debug)]
pub(crate) struct Untrusted;

/// A discussion's summary as its line holds it, but the hash: the id, the
/// instant it is settled from and the row, separated by tabs. A reader
/// that summarizes every discussion keeps one a discussion until all are
/// there to be written in id order: one string, not an id and a row apart.
pub(crate) struct SummaryLine {
    text: String,
    id_end: u32,
    row_start: u32,
}

impl SummaryLine {
    pub(crate) fn new(id: &str, summary: &Summary) -> SummaryLine {
        let instant = summary.settled_from_ms.to_string();
        let mut text = String::with_capacity(id.len() + instant.len() + summary.row.len() + 2);
        text.push_str(id);
        text.push('\t');
        text.push_str(&instant);
        text.push('\t');
        let row_start = text.len();
        text.push_str(&summary.row);
        SummaryLine {
            text,
            id_end: id.len() as u32,
            row_start: row_start as u32,
        }
    }

    pub(crate) fn id(&self) -> &str {
        &self.text[..self.id_end as usize]
    }

    pub(crate) fn row(&self) -> &str {
        &self.text[self.row_start as usize..]
    }

    pub(crate) fn settled_from_ms(&self) -> i64 {
        let instant = &self.text[self.id_end as usize + 1..self.row_start as usize - 1];
        instant.parse().expect("written from an i64")
    }

    /// The line as the file holds it, but the hash.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }
}
