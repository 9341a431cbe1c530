//! `discuss search`: the messages whose body holds every term of a query,
//! newest first, within the filters; what an index proposes is checked
//! against the derived discussion (its transcript leaves out malformed
//! and foreign messages), so both backends answer alike.

use super::Query;
use super::index::Candidate;
use crate::discussion::{Discussion, Status};
use crate::error::{Error, ErrorCode, Result};
use crate::session::Session;
use std::collections::HashMap;

/// `--limit`: 20 by default, 1 to 1,000.
pub(crate) const DEFAULT_LIMIT: usize = 20;
pub(crate) const MOST_LIMIT: usize = 1_000;

/// A search and its filters.
#[derive(Debug, Clone)]
pub(crate) struct SearchRequest {
    pub query: Query,
    pub fleet: Option<String>,
    /// A participant, as in `list`.
    pub agent: Option<String>,
    pub statuses: Vec<Status>,
    pub limit: usize,
    /// An agent token's search: its own discussions only.
    pub reader: Option<String>,
}

impl SearchRequest {
    pub(crate) fn new(
        text: &str,
        fleet: Option<String>,
        agent: Option<String>,
        statuses: &[String],
        limit: Option<i64>,
    ) -> Result<SearchRequest> {
        let limit = limit.unwrap_or(DEFAULT_LIMIT as i64);
        crate::discussion::envelope::check_range("limit", limit, (1, MOST_LIMIT as i64))?;
        if let Some(fleet) = &fleet {
            crate::ids::check_name("fleet_id", fleet)?;
        }
        if let Some(agent) = &agent {
            crate::ids::check_name("agent_id", agent)?;
        }
        Ok(SearchRequest {
            query: Query::parse(text)?,
            fleet,
            agent,
            statuses: crate::operations::lists::parse_statuses(statuses)?,
            limit: limit as usize,
            reader: None,
        })
    }
}

/// One message found.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub discussion_id: String,
    pub message_id: String,
    pub turn: u32,
    pub from_agent_id: String,
    pub at_ms: i64,
    pub snippet: String,
    line: u64,
}

/// The messages of `request`, newest first (ties in ledger order), and
/// the instant they were derived at.
pub(crate) fn search(session: &Session, request: &SearchRequest) -> Result<(Vec<Found>, i64)> {
    let now = session.now(None);
    if !session.ledger.exists()? {
        return Ok((Vec::new(), now));
    }
    let page = (request.limit * 4).max(64);
    let mut found: Vec<Found> = Vec::new();
    let mut loaded: HashMap<String, Option<Discussion>> = HashMap::new();
    let mut skip = 0;
    loop {
        let candidates = candidates(session, &request.query, skip, page)?;
        for candidate in &candidates {
            let discussion = match loaded.get(&candidate.discussion_id) {
                Some(known) => known.as_ref(),
                None => {
                    let read =
                        match crate::operations::read::load(session, &candidate.discussion_id) {
                            Ok((discussion, _)) => Some(discussion).filter(|d| request.admits(d)),
                            Err(err) if err.code == ErrorCode::UnknownDiscussion => None,
                            Err(err) => return Err(err),
                        };
                    loaded
                        .entry(candidate.discussion_id.clone())
                        .or_insert(read)
                        .as_ref()
                }
            };
            let Some(discussion) = discussion else {
                continue;
            };
            let Some(entry) = discussion
                .transcript
                .iter()
                .find(|m| m.message_id == candidate.message_id)
            else {
                continue;
            };
            let text = super::body_text(&entry.body);
            let Some(at) = request.query.find(&text) else {
                continue;
            };
            found.push(Found {
                discussion_id: discussion.id.clone(),
                message_id: entry.message_id.clone(),
                turn: entry.turn,
                from_agent_id: entry.from_agent_id.clone(),
                at_ms: entry.at_ms,
                snippet: super::snippet(&text, at),
                line: candidate.line,
            });
        }
        if found.len() >= request.limit || candidates.len() < page {
            break;
        }
        skip += page;
    }
    found.sort_by(|a, b| b.at_ms.cmp(&a.at_ms).then(a.line.cmp(&b.line)));
    found.truncate(request.limit);
    Ok((found, now))
}

impl SearchRequest {
    /// Whether a message of `discussion` may be answered: its status,
    /// fleet and participants as asked, and the reader taking part.
    fn admits(&self, discussion: &Discussion) -> bool {
        let root = discussion.root.as_ref();
        let takes_part = |agent: &str| root.is_some_and(|r| r.asker == agent || r.peer == agent);
        (self.statuses.is_empty() || self.statuses.contains(&discussion.status))
            && self
                .fleet
                .as_deref()
                .is_none_or(|f| root.is_some_and(|r| r.fleet_id == f))
            && self.agent.as_deref().is_none_or(takes_part)
            && self.reader.as_deref().is_none_or(takes_part)
    }
}

/// `invalid_argument` for a search text that is missing.
pub(crate) fn missing_text() -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        "what to search for? q is missing",
    )
    .detail("field", "q")
}

/// Messages that may hold every term of `query`, newest first: the file's
/// index beside it, or the database's full-text search.
fn candidates(
    session: &Session,
    query: &Query,
    skip: usize,
    take: usize,
) -> Result<Vec<Candidate>> {
    match (session.ledger.as_file(), session.ledger.as_postgres()) {
        (Some(file), _) => super::index::candidates(file.path(), query, skip, take),
        (None, Some(pg)) => super::database::candidates(pg, query, skip, take),
        (None, None) => Ok(Vec::new()),
    }
}
