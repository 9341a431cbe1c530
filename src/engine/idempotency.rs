//! Retry-safe writes (`--idempotency-key`): a script that lost an answer
//! retries with the same key and gets the original result instead of a
//! second discussion, reservation or reply.
//!
//! The key and a digest of the request go on the first record of the
//! operation (`idempotency_key`, `request_digest`). Under the writer lock,
//! before anything is planned, the ledger is asked for the key: not there,
//! the operation is planned as usual and carries it; there with the same
//! digest, nothing is written and the original result is derived from the
//! ledger as it stood right after that operation; there with another
//! digest, `idempotency_conflict`. Keys are kept for the life of the ledger.

use crate::error::{Error, ErrorCode, Result};
use crate::ledger::hash::hash64;
use crate::ledger::{Idempotency, Keyed, Record};

/// The longest idempotency key.
pub const MAX_KEY_BYTES: usize = 128;

/// Checks a key's form: 1 to 128 characters of `[A-Za-z0-9._:-]`.
pub fn check_key(key: &str) -> Result<()> {
    let ok = (1..=MAX_KEY_BYTES).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    if ok {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::InvalidArgument,
        format!("idempotency key {key:?} is not 1 to 128 characters of [A-Za-z0-9._:-]"),
    )
    .detail("field", "idempotency_key")
    .hint_each(
        "e.g. --idempotency-key build-4711:review",
        "e.g. \"idempotency_key\": \"build-4711:review\"",
    ))
}

/// What a request is, for telling a retry from another request: the
/// command and every argument that shapes what it writes.
pub fn digest(parts: &[&str]) -> String {
    let mut joined = Vec::new();
    for part in parts {
        joined.extend_from_slice(&(part.len() as u64).to_le_bytes());
        joined.extend_from_slice(part.as_bytes());
    }
    format!("{:016x}", hash64(&joined))
}

/// The key and digest of one request, when it has a key.
pub fn tag(key: Option<&str>, digest: &str) -> Option<Idempotency> {
    key.map(|key| Idempotency {
        key: key.to_owned(),
        digest: digest.to_owned(),
    })
}

/// The earlier operation under the request's key, if there is one and it
/// was the same request; `idempotency_conflict` if it was another.
pub fn earlier<'a>(
    keyed: Option<&'a Keyed>,
    tag: Option<&Idempotency>,
) -> Result<Option<&'a Keyed>> {
    let (Some(keyed), Some(tag)) = (keyed, tag) else {
        return Ok(None);
    };
    let same = keyed
        .first
        .idempotency
        .as_ref()
        .is_some_and(|i| i.digest == tag.digest);
    if same {
        return Ok(Some(keyed));
    }
    let mut err = Error::new(
        ErrorCode::IdempotencyConflict,
        format!(
            "idempotency key {:?} was used on line {} for another request",
            tag.key, keyed.first.line
        ),
    )
    .detail("idempotency_key", tag.key.as_str())
    .detail("record_id", keyed.first.id.as_str())
    .hint("a retry must repeat the original arguments; a new request needs a new key");
    if let Some(id) = keyed.first.discussion_id() {
        err = err.detail("discussion_id", id);
    }
    Err(err)
}

/// Marks the first of an operation's records with the request's key.
pub fn mark(records: &mut [Record], tag: Option<Idempotency>) {
    if let Some(first) = records.first_mut() {
        first.idempotency = tag;
    }
}

/// The discussion of the keyed operation as it stood right after it was
/// written, derived at that operation's time: what its command answered.
pub fn as_written(keyed: &Keyed) -> Result<crate::discussion::Discussion> {
    let id = keyed.first.discussion_id().ok_or_else(|| {
        Error::new(
            ErrorCode::IdempotencyConflict,
            format!(
                "idempotency key on line {} belongs to a record of no discussion",
                keyed.first.line
            ),
        )
        .detail("record_id", keyed.first.id.as_str())
    })?;
    crate::discussion::derive(id, &keyed.as_written(), keyed.first.at_ms).ok_or_else(|| {
        Error::new(
            ErrorCode::Internal,
            format!("the discussion {id} of an idempotency key cannot be derived"),
        )
    })
}
