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
