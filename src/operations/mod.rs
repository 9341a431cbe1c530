//! The application's operations, one level above the engine: what every
//! front-end (the clap commands, `call`, MCP and `serve`) performs on a
//! session's ledger. Ask, wake and reply run their engine plan under the
//! writer lock (`write_once`, retry-safe with an idempotency key); reads
//! derive one discussion (`read`) or list them (`lists`). Nothing here
//! parses arguments or renders output.

pub(crate) mod admin;
pub(crate) mod approvals;
pub(crate) mod ask;
pub(crate) mod escalations;
pub(crate) mod events;
pub(crate) mod lists;
pub(crate) mod live;
pub(crate) mod read;
pub(crate) mod reply;
pub(crate) mod wake;
pub(crate) mod watch;

use crate::error::{Error, ErrorCode, Result};
use crate::ledger::Excerpt;
use crate::session::Session;

/// The discussion an id given on the command line names: the id itself
/// when it is a whole one (or names a discussion exactly), else the one
/// discussion it is a prefix of, when it has at least `dsc_` and four more
/// characters; `ambiguous_id` when several start with it. An id that names
/// nothing is returned as it is, for the command's own `unknown_discussion`.
pub(crate) fn resolve_discussion(session: &Session, given: &str) -> Result<String> {
    if !is_prefix_like(given) {
        return Ok(given.to_owned());
    }
    let ids = session.ledger.discussion_ids_starting(given)?;
    if ids.iter().any(|id| id == given) {
        return Ok(given.to_owned());
    }
    let matches: Vec<&String> = ids.iter().filter(|id| id.starts_with(given)).collect();
    match matches.as_slice() {
        [] => Ok(given.to_owned()),
        [one] => Ok((*one).clone()),
        many => Err(ambiguous(
            given,
            &many.iter().map(|id| id.as_str()).collect::<Vec<_>>(),
        )),
    }
}

/// Whether `given` is looked up as a prefix: `dsc_` and at least four
/// more characters, shorter than a whole id.
pub(crate) fn is_prefix_like(given: &str) -> bool {
    /// `dsc_` and a UUIDv7 in hex: what `discuss` writes.
    const WHOLE: usize = 36;
    /// The shortest prefix looked up: `dsc_` and four characters.
    const SHORTEST: usize = 8;
    given.len() < WHOLE && given.len() >= SHORTEST && given.starts_with(crate::ids::DISCUSSION)
}

/// `ambiguous_id` for a prefix of several discussion ids.
pub(crate) fn ambiguous(given: &str, matches: &[&str]) -> Error {
    Error::new(
        ErrorCode::AmbiguousId,
        format!("{given} is the start of {} discussion ids", matches.len()),
    )
    .detail("prefix", given)
    .detail(
        "candidates",
        matches.iter().take(10).copied().collect::<Vec<_>>(),
    )
    .hint_each(
        "give more of the id (`discuss list` shows them whole)",
        "give more of the id (list_discussions shows them whole)",
    )
}

/// Adds a "did you mean" hint to an `unknown_discussion` error: the
/// ledger's discussion id that the given one is a prefix of, or the one
/// within three edits (a typo, a dropped character).
///
/// Never call it while a write is under way: it reads the ledger.
pub(crate) fn near_match(mut err: Error, session: &Session, given: &str) -> Error {
    if err.code != ErrorCode::UnknownDiscussion {
        return err;
    }
    // A hint is not worth failing the command for.
    let ids = session.ledger.discussion_ids().unwrap_or_default();
    let location = session.ledger.location();
    if ids.iter().any(|id| id == given) {
        // The ledger has its lines, and derivation left them all out:
        // they are stamped too far ahead of this clock (`ledger.md`).
        err.message = format!(
            "discussion {given} is in the ledger {location}, but its records are stamped more than {} s ahead of this clock; they count once the clock catches up",
            crate::clock::MAX_SKEW_MS / 1000
        );
        return err
            .detail("ledger", location)
            .detail("ahead_of_clock", true)
            .hint("check the clocks of the hosts that write this ledger (and DISCUSS_NOW)");
    }
    let prefixed: Vec<&str> = ids
        .iter()
        .map(String::as_str)
        .filter(|id| id.starts_with(given))
        .collect();
    let near = if prefixed.len() == 1 {
        Some(prefixed[0])
    } else {
        ids.iter()
            .map(|id| (edit_distance(id, given), id.as_str()))
            .filter(|(d, _)| *d <= 3)
            .min()
            .map(|(_, id)| id)
    };
    let err = match near {
        Some(id) => err.hint(format!("did you mean {id}?")),
        None => err.hint_each(
            "`discuss list` shows the discussions in this ledger",
            "list_discussions shows the discussions in this ledger",
        ),
    };
    err.hint(format!("looked in {location}"))
        .detail("ledger", location)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// A retry-safe write (`--idempotency-key`): under the writer lock, an
/// earlier operation under `key` is answered by `replay` (the same
/// request) or refused (another request, `idempotency_conflict`), writing
/// nothing; else `plan` decides the records, and the first carries the key.
/// Returns the answer and whether it was replayed.
fn write_once<T>(
    session: &Session,
    discussion_ids: &[&str],
    agents: &[&str],
    key: Option<&str>,
    digest: &str,
    replay: impl FnOnce(&crate::ledger::Keyed) -> Result<T>,
    plan: impl FnOnce(&Excerpt) -> Result<(Vec<crate::ledger::Record>, T)>,
) -> Result<(T, bool)> {
    use crate::engine::idempotency;
    let tag = idempotency::tag(key, digest);
    let scope = crate::ledger::Scope {
        discussions: discussion_ids,
        agents,
        idempotency_key: key,
        global: false,
    };
    session.ledger.append_scoped(scope, |view| {
        if let Some(earlier) = idempotency::earlier(view.keyed(), tag.as_ref())? {
            return Ok((Vec::new(), (replay(earlier)?, true)));
        }
        let (mut records, answer) = plan(view)?;
        // An approval request is a refusal that writes: it never carries
        // the key, so the retry once it is granted reserves.
        let refusal = records.first().is_some_and(|r| {
            matches!(&r.body, crate::ledger::Body::Receipt(receipt)
                if receipt.kind() == Some(crate::record::ReceiptKind::ApprovalRequested))
        });
        if !refusal {
            idempotency::mark(&mut records, tag);
        }
        Ok((records, (answer, false)))
    })
}
