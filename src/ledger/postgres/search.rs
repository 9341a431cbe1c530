//! The database's own full-text search, for `discuss search`:
//! `discuss_search` holds a `tsvector` of each message's words (made by
//! the search, as lexemes with positions) with a GIN index; it is made
//! with the tables and caught up by each search from the lines written
//! since (`discuss_search_state`), one search at a time.

use super::*;

/// A message's row of `discuss_search`: its `tsvector` as a literal.
pub(crate) struct SearchDoc {
    pub discussion_id: String,
    pub record_id: String,
    pub at_ms: i64,
    pub tsvector: String,
}

/// A row that matched: where its message is.
pub(crate) struct SearchHit {
    pub discussion_id: String,
    pub record_id: String,
    pub at_ms: i64,
    pub line_no: i64,
}

pub(super) const SEARCH_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS discuss_search (
    line_no bigint PRIMARY KEY,
    discussion_id text COLLATE "C" NOT NULL,
    record_id text COLLATE "C" NOT NULL,
    at_ms bigint NOT NULL,
    words tsvector NOT NULL
);
CREATE INDEX IF NOT EXISTS discuss_search_words ON discuss_search USING gin (words);
CREATE TABLE IF NOT EXISTS discuss_search_state (
    one_row boolean PRIMARY KEY DEFAULT true CHECK (one_row),
    lines bigint NOT NULL
);
INSERT INTO discuss_search_state (lines) VALUES (0) ON CONFLICT DO NOTHING;
"#;

/// Searches take this lock to catch the index up one at a time.
const SEARCH_LOCK_KEY: i64 = 0x6469_7363_7573_7331;

/// The most lines a catch-up reads in one statement.
const CATCH_UP_BATCH: i64 = 20_000;

impl PgLedger {
    /// The rows whose words match the `tsquery` literal, newest first
    /// (ties in ledger order): `take` of them after the first `skip`, once
    /// the table holds every line (`document_of` makes a line's row).
    pub(crate) fn search(
        &self,
        document_of: &dyn Fn(&[u8], i64) -> Option<SearchDoc>,
        tsquery: &str,
        skip: usize,
        take: usize,
    ) -> Result<Vec<SearchHit>> {
        self.session(|client| {
            let mut tx = client.transaction()?;
            tx.execute_typed(
                "SELECT pg_advisory_xact_lock($1)",
                &[(&SEARCH_LOCK_KEY, Type::INT8)],
            )?;
            tx.batch_execute(SEARCH_SCHEMA)?;
            let done: i64 = tx
                .query_typed_one("SELECT lines FROM discuss_search_state", &[])?
                .get(0);
            let newest: i64 = tx
                .query_typed_one("SELECT coalesce(max(line_no), 0) FROM discuss_lines", &[])?
                .get(0);
            let mut from = done;
            while from < newest {
                let to = (from + CATCH_UP_BATCH).min(newest);
                let rows =
                    tx.query_typed(schema::CATCH_UP, &[(&from, Type::INT8), (&to, Type::INT8)])?;
                let (mut lines, mut discussions, mut ids, mut ats, mut words) =
                    (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
                for row in &rows {
                    let line_no: i64 = row.get(0);
                    let line: Vec<u8> = row.get(1);
                    let Some(doc) = document_of(&line, line_no) else {
                        continue;
                    };
                    lines.push(line_no);
                    discussions.push(doc.discussion_id);
                    ids.push(doc.record_id);
                    ats.push(doc.at_ms);
                    words.push(doc.tsvector);
                }
                tx.execute_typed(
                    "INSERT INTO discuss_search (line_no, discussion_id, record_id, at_ms, words) \
                     SELECT l, d, r, a, w::tsvector FROM unnest($1::bigint[], $2::text[], \
                     $3::text[], $4::bigint[], $5::text[]) AS t(l, d, r, a, w) \
                     ON CONFLICT (line_no) DO NOTHING",
                    &[
                        (&lines, Type::INT8_ARRAY),
                        (&discussions, Type::TEXT_ARRAY),
                        (&ids, Type::TEXT_ARRAY),
                        (&ats, Type::INT8_ARRAY),
                        (&words, Type::TEXT_ARRAY),
                    ],
                )?;
                from = to;
            }
            if from != done {
                tx.execute_typed(
                    "UPDATE discuss_search_state SET lines = $1",
                    &[(&from, Type::INT8)],
                )?;
            }
            let (skip, take) = (skip as i64, take.max(1) as i64);
            let rows = tx.query_typed(
                "SELECT discussion_id, record_id, at_ms, line_no FROM discuss_search \
                 WHERE words @@ $1::tsquery ORDER BY at_ms DESC, line_no LIMIT $2 OFFSET $3",
                &[
                    (&tsquery, Type::TEXT),
                    (&take, Type::INT8),
                    (&skip, Type::INT8),
                ],
            )?;
            tx.commit()?;
            Ok(rows
                .iter()
                .map(|row| SearchHit {
                    discussion_id: row.get(0),
                    record_id: row.get(1),
                    at_ms: row.get(2),
                    line_no: row.get(3),
                })
                .collect())
        })
    }
}
