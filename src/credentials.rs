//! `serve`'s bearer tokens: made here, stored as `credential` records that
//! hold only their SHA-256 digest, and checked against the ledger's
//! credentials in constant time.

use crate::error::{Error, ErrorCode, Result};
use crate::global::Global;
use crate::record::Role;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// What a token starts with: `dsk_` and 64 hex digits (256 random bits).
pub(crate) const TOKEN_PREFIX: &str = "dsk_";
/// The prefix of a token's id, which names it in the ledger and in lists.
pub(crate) const TOKEN_ID: &str = "tok_";
const RANDOM_BYTES: usize = 32;

/// The longest `--expires-in-hours`: ten years.
pub(crate) const MAX_EXPIRES_IN_HOURS: i64 = 87_600;
/// A token's life when `token issue` is not told otherwise: 90 days.
pub(crate) const DEFAULT_EXPIRES_IN_HOURS: i64 = 90 * 24;

/// A new token, from the kernel's random source.
pub(crate) fn new_token() -> Result<String> {
    let random: [u8; RANDOM_BYTES] = random_bytes()?;
    Ok(format!("{TOKEN_PREFIX}{}", hex(&random)))
}

/// `N` bytes from the kernel's random source (tokens, seal keys).
pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N]> {
    let mut random = [0u8; N];
    let mut filled = 0;
    while filled < N {
        filled +=
            rustix::rand::getrandom(&mut random[filled..], rustix::rand::GetRandomFlags::empty())
                .map_err(|e| Error::io("the random source", &std::io::Error::from(e)))?;
    }
    Ok(random)
}

/// The hex SHA-256 digest of `token`, as a `credential` record holds it.
pub(crate) fn digest(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

use crate::record::chain::hex;

/// Who a request acts for, once its token is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Principal {
    pub token_id: String,
    /// The agent the token was issued to.
    pub agent_id: String,
    pub role: Role,
}

impl Principal {
    pub(crate) fn is_operator(&self) -> bool {
        self.role == Role::Operator
    }

    /// The agent a request must act as: `None` for the operator.
    pub(crate) fn acting_agent(&self) -> Option<&str> {
        (!self.is_operator()).then_some(self.agent_id.as_str())
    }
}

/// The principal of `token` at `now_ms`, or `unauthorized` (missing,
/// unknown, revoked and expired alike: the answer never says which).
/// Every stored digest is compared, in constant time, whatever matched.
pub(crate) fn authenticate(global: &Global, token: Option<&str>, now_ms: i64) -> Result<Principal> {
    let presented = token.map(digest).unwrap_or_default();
    let mut found = None;
    for (token_id, credential) in &global.credentials {
        let same = presented
            .as_bytes()
            .ct_eq(credential.sha256.as_bytes())
            .unwrap_u8()
            == 1;
        if same && token.is_some() && credential.state(now_ms) == "active" {
            found = Some(Principal {
                token_id: token_id.clone(),
                agent_id: credential.agent_id.clone(),
                role: credential.role,
            });
        }
    }
    found.ok_or_else(unauthorized)
}

/// `unauthorized` unless `principal`'s token is still what it was when it
/// was verified (the same agent and role) and active at `now_ms`: the
/// check a request's read or write makes of its token in that very read,
/// under the writer's lock for a write, so a token revoked meanwhile
/// (while a slow body arrived) writes nothing.
pub(crate) fn still_good(global: &Global, principal: &Principal, now_ms: i64) -> Result<()> {
    match global.credentials.get(&principal.token_id) {
        Some(credential)
            if credential.agent_id == principal.agent_id
                && credential.role == principal.role
                && credential.state(now_ms) == "active" =>
        {
            Ok(())
        }
        _ => Err(unauthorized()),
    }
}

/// The one refusal of a request without a good token.
pub(crate) fn unauthorized() -> Error {
    Error::new(
        ErrorCode::Unauthorized,
        "a valid bearer token is required (Authorization: Bearer TOKEN)",
    )
    .hint("ask whoever holds the ledger for a token: discuss token issue AGENT")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::global::CredentialState;

    fn with(token: &str, role: Role, expires_ms: Option<i64>, revoked: bool) -> Global {
        let mut global = Global::default();
        global.credentials.insert(
            "tok_1".into(),
            CredentialState {
                agent_id: "agent-a".into(),
                role,
                sha256: digest(token),
                expires_ms,
                issued_at_ms: 0,
                issued_by: "op".into(),
                revoked_at_ms: revoked.then_some(5),
            },
        );
        global
    }

    #[test]
    fn tokens_are_long_random_and_distinct() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_ne!(a, b);
        assert!(a.starts_with(TOKEN_PREFIX));
        assert_eq!(a.len(), TOKEN_PREFIX.len() + 2 * RANDOM_BYTES);
        assert!(a[4..].bytes().all(|b| b.is_ascii_hexdigit()));
    }

    #[test]
    fn the_digest_is_sha256() {
        assert_eq!(
            digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn only_an_active_token_authenticates() {
        let token = "dsk_secret";
        let ok = authenticate(&with(token, Role::Agent, None, false), Some(token), 10).unwrap();
        assert_eq!(ok.acting_agent(), Some("agent-a"));
        let operator = with(token, Role::Operator, Some(11), false);
        assert_eq!(
            authenticate(&operator, Some(token), 10)
                .unwrap()
                .acting_agent(),
            None
        );
        for (global, presented) in [
            (with(token, Role::Agent, None, false), Some("dsk_other")),
            (with(token, Role::Agent, None, false), None),
            (with(token, Role::Agent, Some(10), false), Some(token)),
            (with(token, Role::Agent, None, true), Some(token)),
        ] {
            let err = authenticate(&global, presented, 10).unwrap_err();
            assert_eq!(err.code, ErrorCode::Unauthorized);
            assert!(!err.message.contains("secret"));
        }
    }
}
