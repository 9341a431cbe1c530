//! `discuss search` on a database: the rows of `discuss_search` are the
//! search's own words as lexemes with their positions, and a query is the
//! same lexemes (`'a' & ('b' <-> 'c')`): no parser or configuration of the
//! server's comes between, so both backends agree.

use super::Query;
use super::index::Candidate;
use crate::error::Result;
use crate::ledger::{PgLedger, SearchDoc};

/// A word as a lexeme of a `tsvector` or `tsquery` literal.
fn lexeme(word: &str) -> String {
    format!("'{}'", word.replace('\\', "\\\\").replace('\'', "''"))
}

/// The `tsvector` literal of a body: each word at its position (1-based;
/// PostgreSQL keeps positions up to 16,383).
fn tsvector_of(text: &str) -> String {
    super::words(text)
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

/// The row of a line, when it is a message whose envelope parses.
fn document_of(line: &[u8], line_no: i64) -> Option<SearchDoc> {
    let record = crate::record::Record::parse(line, line_no as usize).ok()?;
    let crate::record::Body::Message(message) = &record.body else {
        return None;
    };
    let discussion_id = message.correlation_id.clone()?;
    let envelope =
        crate::discussion::envelope::Envelope::parse(&message.payload, &discussion_id).ok()?;
    Some(SearchDoc {
        discussion_id,
        record_id: record.id.clone(),
        at_ms: record.at_ms,
        tsvector: tsvector_of(&super::body_text(&envelope.body)),
    })
}

/// The messages that may hold every term of `query`, newest first.
pub(super) fn candidates(
    pg: &PgLedger,
    query: &Query,
    skip: usize,
    take: usize,
) -> Result<Vec<Candidate>> {
    Ok(pg
        .search(&document_of, &tsquery_of(query), skip, take)?
        .into_iter()
        .map(|hit| Candidate {
            discussion_id: hit.discussion_id,
            message_id: hit.record_id,
            at_ms: hit.at_ms,
            line: hit.line_no as u64,
        })
        .collect())
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
