//! The tables a PostgreSQL ledger keeps, made by the first write.

use super::*;

pub(super) const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS discuss_lines (
    line_no bigint PRIMARY KEY CHECK (line_no > 0),
    line bytea NOT NULL,
    record_id text COLLATE "C",
    discussion_id text COLLATE "C",
    idempotency_key text COLLATE "C"
);
CREATE INDEX IF NOT EXISTS discuss_lines_by_discussion
    ON discuss_lines (discussion_id, line_no) WHERE discussion_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS discuss_lines_by_idempotency_key
    ON discuss_lines (idempotency_key, line_no) WHERE idempotency_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS discuss_state (
    one_row boolean PRIMARY KEY DEFAULT true CHECK (one_row),
    format integer NOT NULL,
    lines bigint NOT NULL,
    bytes bigint NOT NULL,
    summary text NOT NULL
);
INSERT INTO discuss_state (format, lines, bytes, summary)
    VALUES (1, 0, 0, '{}') ON CONFLICT DO NOTHING;
"#;

/// What lists read instead of deriving every discussion (the file cache's
/// `<ledger>.summary`): a discussion's row once settled, and the instant it
/// is settled from. Writers keep the rows of the discussions they touch;
/// made on a database of an earlier version by its next write.
pub(super) const SUMMARIES: &str = r#"
CREATE TABLE IF NOT EXISTS discuss_summaries (
    discussion_id text COLLATE "C" PRIMARY KEY,
    settled_from_ms bigint NOT NULL,
    row text NOT NULL
);
"#;

pub(super) const UPSERT_SUMMARIES: &str = "INSERT INTO discuss_summaries (discussion_id, settled_from_ms, row) \
    SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[]) \
    ON CONFLICT (discussion_id) DO UPDATE \
    SET settled_from_ms = EXCLUDED.settled_from_ms, row = EXCLUDED.row";

/// An operation's lines and the state row, in one statement: the
/// lines' rows in $1–$5 (as `INSERT_LINES`), the state row's lines, bytes
/// and summary in $6–$8, written only where it still has $9 lines.
pub(super) const WRITE_OPERATION: &str = "WITH new_lines AS (INSERT INTO discuss_lines \
    (line_no, line, record_id, discussion_id, idempotency_key) \
    SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::text[], $4::text[], $5::text[])) \
    UPDATE discuss_state SET lines = $6, bytes = $7, summary = $8 WHERE lines = $9";

/// `WRITE_OPERATION` with the summaries of the discussions it touched in
/// $10–$12 (as `UPSERT_SUMMARIES`).
pub(super) const WRITE_OPERATION_WITH_SUMMARIES: &str = "WITH new_lines AS (INSERT INTO discuss_lines \
    (line_no, line, record_id, discussion_id, idempotency_key) \
    SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::text[], $4::text[], $5::text[])), \
    new_summaries AS (INSERT INTO discuss_summaries (discussion_id, settled_from_ms, row) \
    SELECT * FROM unnest($10::text[], $11::bigint[], $12::text[]) \
    ON CONFLICT (discussion_id) DO UPDATE \
    SET settled_from_ms = EXCLUDED.settled_from_ms, row = EXCLUDED.row) \
    UPDATE discuss_state SET lines = $6, bytes = $7, summary = $8 WHERE lines = $9";

/// The lines after a state row's, up to the newest: bounded at both ends,
/// and by their count ($2 - $1), which keeps it an index range however
/// the planner weighs the table.
pub(crate) const CATCH_UP: &str = "SELECT line_no, line FROM discuss_lines \
    WHERE line_no > $1 AND line_no <= $2 ORDER BY line_no LIMIT $2 - $1";

/// Each discussion's last line among the first lines.
pub(crate) const LAST_LINE_OF_EACH: &str = "SELECT discussion_id, max(line_no) FROM discuss_lines \
    WHERE discussion_id IS NOT NULL AND line_no <= $1 GROUP BY discussion_id";

/// The records of some discussions among the first lines.
pub(crate) const RECORDS_OF: &str = "SELECT line_no, line FROM discuss_lines \
    WHERE discussion_id = ANY($1) AND line_no <= $2 ORDER BY line_no";

/// The lines that carry an idempotency key among the first lines.
pub(crate) const KEYED: &str = "SELECT line_no, line FROM discuss_lines \
    WHERE idempotency_key = $1 AND line_no <= $2 ORDER BY line_no";

/// A batch of lines of a stream, after a line (a batch of rows, not of
/// numbers: a gap a hand edit left is read past in one).
pub(crate) const STREAM: &str = "SELECT line_no, line FROM discuss_lines WHERE line_no > $1 \
    ORDER BY line_no LIMIT $2";

/// The discussion ids in a range (those starting with a prefix).
pub(crate) const IDS_BETWEEN: &str = "SELECT DISTINCT discussion_id FROM discuss_lines \
    WHERE discussion_id >= $1 AND discussion_id < $2 ORDER BY 1";

/// The statements a command runs to find its lines: none may read the
/// table whole on any plan (`tests/cli/postgres/moves.rs` checks them with
/// `EXPLAIN` on an imported ledger, with its statistics and without).
pub(crate) const LOOKUPS: [(&str, &str); 5] = [
    ("catch-up", CATCH_UP),
    ("records of discussions", RECORDS_OF),
    ("idempotency key", KEYED),
    ("stream after a line", STREAM),
    ("ids in a range", IDS_BETWEEN),
];

/// An import's rows, in COPY's binary format.
pub(super) const COPY_LINES: &str = "COPY discuss_lines \
    (line_no, line, record_id, discussion_id, idempotency_key) FROM STDIN (FORMAT binary)";

pub(super) const INSERT_LINES: &str = "INSERT INTO discuss_lines \
    (line_no, line, record_id, discussion_id, idempotency_key) \
    SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::text[], $4::text[], $5::text[])";

/// Which tables are there, and what this role may do with the summaries'.
pub(super) struct Tables {
    /// `discuss_lines`: a ledger (the lines are the truth; the rest is
    /// derived from them).
    pub(super) ledger: bool,
    /// `discuss_state`: what is folded of the lines (made again when
    /// missing; readers then fold every line).
    pub(super) state: bool,
    /// `discuss_summaries` (a database of an earlier version has none).
    pub(super) summaries: bool,
    /// The summaries may be read (else lists derive every discussion).
    pub(super) read_summaries: bool,
    /// The summaries may be written, or made (else writers leave them
    /// behind the ledger, and lists derive until a role that may writes
    /// them): a role granted only what earlier versions needed writes on.
    pub(super) write_summaries: bool,
}

/// What `Tables` is read from: five booleans.
macro_rules! tables_columns {
    () => {
        "to_regclass('discuss_lines') IS NOT NULL, \
         to_regclass('discuss_state') IS NOT NULL, \
         to_regclass('discuss_summaries') IS NOT NULL, \
         CASE WHEN to_regclass('discuss_summaries') IS NULL THEN false \
              ELSE has_table_privilege('discuss_summaries', 'SELECT') END, \
         CASE WHEN to_regclass('discuss_summaries') IS NULL \
              THEN has_schema_privilege(current_schema(), 'CREATE') \
              ELSE has_table_privilege('discuss_summaries', 'SELECT,INSERT,UPDATE,DELETE') END"
    };
}

pub(super) fn tables_exist(tx: &mut Transaction<'_>) -> Step<Tables> {
    let row = tx.query_typed_one(concat!("SELECT ", tables_columns!()), &[])?;
    Ok(Tables::from_row(&row, 0))
}

/// `LOCK_KEY` shared, and then which tables are there, in one round trip.
/// (The tables are read with the statement's snapshot, taken before the
/// lock was granted: a first write that made them meanwhile is not seen,
/// and this writer takes the path of a first write, which looks again.)
pub(super) fn shared_lock_and_tables(tx: &mut Transaction<'_>, key: i64) -> Step<Tables> {
    let row = tx.query_typed_one(
        concat!(
            "SELECT pg_advisory_xact_lock_shared($1)::text, ",
            tables_columns!()
        ),
        &[(&key, Type::INT8)],
    )?;
    Ok(Tables::from_row(&row, 1))
}

impl Tables {
    fn from_row(row: &postgres::Row, first: usize) -> Tables {
        Tables {
            ledger: row.get(first),
            state: row.get(first + 1),
            summaries: row.get(first + 2),
            read_summaries: row.get(first + 3),
            write_summaries: row.get(first + 4),
        }
    }
}
