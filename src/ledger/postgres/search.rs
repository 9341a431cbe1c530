//! `discuss search` on a database: the database's own full-text search.
//! `discuss_search` holds a `tsvector` of each message's words (the
//! search's own words, as lexemes with their positions: no parser or
//! configuration of the server's comes between, so both backends agree)
//! with a GIN index; it is made with the tables and caught up by each
//! search from the lines written since (`discuss_search_state`).

use super::*;
use crate::search::Query;
use crate::search::index::Candidate;

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

/// A word as a lexeme of a `tsvector` or `tsquery` literal.
fn lexeme(word: &str) -> String {
    format!("'{}'", word.replace('\\', "\\\\").replace('\'', "''"))
}

/// The `tsvector` literal of a body: each word at its position (1-based;
/// PostgreSQL keeps positions up to 16,383).
fn tsvector_of(text: &str) -> String {
    crate::search::words(text)
        .enumerate()
        .map(|(i, (_, _, word))| format!("{}:{}", lexeme(&word), (i + 1).min(16_383)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `tsquery` literal of a query: every term, a phrase's words
/// adjacent in order.
fn tsquery_of(query: &Query) -> String {
    query
        .terms
        .iter()
        .map(|words| {
            let phrase: Vec<String> = words.iter().map(|w| lexeme(w)).collect();
            format!("({})", phrase.join(" <-> "))
        })
        .collect::<Vec<_>>()
        .join(" & ")
}

impl PgLedger {
    /// The messages that hold every term of `query`, newest first (ties
    /// in ledger order): `take` of them after the first `skip`, once the
    /// index holds every line.
    pub(crate) fn search_candidates(
        &self,
        query: &Query,
        skip: usize,
        take: usize,
    ) -> Result<Vec<Candidate>> {
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
                    let Some((discussion_id, record_id, at_ms, text)) = message_of(&line, line_no)
                    else {
                        continue;
                    };
                    lines.push(line_no);
                    discussions.push(discussion_id);
                    ids.push(record_id);
                    ats.push(at_ms);
                    words.push(tsvector_of(&text));
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
                    (&tsquery_of(query), Type::TEXT),
                    (&take, Type::INT8),
                    (&skip, Type::INT8),
                ],
            )?;
            tx.commit()?;
            Ok(rows
                .iter()
                .map(|row| Candidate {
                    discussion_id: row.get(0),
                    message_id: row.get(1),
                    at_ms: row.get(2),
                    line: row.get::<_, i64>(3) as u64,
                })
                .collect())
        })
    }
}

/// A line's message: its discussion, id, time and the text of its body,
/// when its envelope parses.
fn message_of(line: &[u8], line_no: i64) -> Option<(String, String, i64, String)> {
    let record = crate::record::Record::parse(line, line_no as usize).ok()?;
    let crate::record::Body::Message(message) = &record.body else {
        return None;
    };
    let discussion_id = message.correlation_id.clone()?;
    let envelope =
        crate::discussion::envelope::Envelope::parse(&message.payload, &discussion_id).ok()?;
    Some((
        discussion_id,
        record.id.clone(),
        record.at_ms,
        crate::search::body_text(&envelope.body),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_carry_the_words_as_lexemes() {
        assert_eq!(
            tsvector_of("Auth, auth it's"),
            "'auth':1 'auth':2 'it':3 's':4"
        );
        let query = Query::parse(r#"token "auth refactor""#).unwrap();
        assert_eq!(tsquery_of(&query), "('token') & ('auth' <-> 'refactor')");
    }
}
