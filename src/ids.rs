//! Identifier rules: caller-chosen agent and fleet ids, and the
//! server-authored `dsc_`/`msg_`/`att_`/`rcp_`/`rec_` ids.

use crate::error::{Error, ErrorCode, Result};

pub(crate) const DISCUSSION: &str = "dsc_";
pub(crate) const MESSAGE: &str = "msg_";
pub(crate) const ATTEMPT: &str = "att_";
pub(crate) const RECEIPT: &str = "rcp_";
pub(crate) const RECORD: &str = "rec_";
/// The `kind:"import"` line before imported lines (`ledger import`).
pub(crate) const IMPORT: &str = "imp_";

/// A new server-authored id: prefix plus UUIDv7 hex (time-ordered).
pub(crate) fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", uuid::Uuid::now_v7().simple())
}

/// `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`
pub(crate) fn is_valid_name(id: &str) -> bool {
    let bytes = id.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Checks an agent or fleet id given as `what` (e.g. `--from`).
pub(crate) fn check_name(what: &str, id: &str) -> Result<()> {
    if is_valid_name(id) {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::InvalidId,
            format!("{what} {id:?} is not a valid id"),
        )
        .detail("field", what)
        .detail("value", id)
        .hint("ids are 1 to 128 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit"))
    }
}

/// Checks a server-authored id: `prefix` then 1 to 128 id characters.
pub(crate) fn check_server_id(what: &str, prefix: &str, id: &str) -> Result<()> {
    let ok = id.strip_prefix(prefix).is_some_and(|rest| {
        !rest.is_empty()
            && rest.len() <= 128
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    });
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::InvalidId,
            format!("{what} {id:?} is not a {prefix}… id"),
        )
        .detail("field", what)
        .detail("value", id)
        .hint(format!(
            "{what} takes an id that discuss printed, starting with {prefix}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_pattern() {
        assert!(is_valid_name("agent-a"));
        assert!(is_valid_name("A.b_c-9"));
        assert!(is_valid_name(&"a".repeat(128)));
        assert!(!is_valid_name(&"a".repeat(129)));
        assert!(!is_valid_name(""));
        assert!(!is_valid_name("-agent"));
        assert!(!is_valid_name("agent a"));
        assert!(!is_valid_name("agént"));
    }

    #[test]
    fn server_ids_need_their_prefix() {
        let id = new_id(DISCUSSION);
        assert!(check_server_id("--discussion", DISCUSSION, &id).is_ok());
        assert!(check_server_id("--discussion", MESSAGE, &id).is_err());
        assert!(check_server_id("--discussion", DISCUSSION, "dsc_").is_err());
        assert_eq!(id.len(), 4 + 32);
    }
}
