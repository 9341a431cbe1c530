//! Seals of the chained ledger (`ledger seal`, `verify --seal`): a line's
//! number and digest kept somewhere else, optionally signed with Ed25519,
//! so that a ledger cut back below it, or rewritten and chained anew, is
//! told apart from the one that was sealed.

use crate::error::{Error, ErrorCode, Result};
use crate::record::chain::{self, Digest};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A seal as `ledger seal` prints it and `verify --seal` reads it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Seal {
    /// Where the ledger was, as it was shown (for a person: not checked).
    pub ledger: String,
    pub line: u64,
    /// The line's digest, hex.
    pub sha256: String,
    /// The SHA-256 of the digests of lines 1 to `line` in order, hex: the
    /// seal holds every one of those lines, not only its own (a seal
    /// without it, of an older `discuss`, holds only its line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain_sha256: Option<String>,
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
}

/// How a public key is written: `ed25519:` and 64 hex digits.
const PUBLIC_PREFIX: &str = "ed25519:";
/// The first line of a key file; the seed follows on the second.
const KEY_HEADER: &str = "discuss ed25519 signing key (keep it secret)";
/// A seal file, a key file: never more than this.
const MAX_FILE: u64 = 64 << 10;

impl Seal {
    /// What is signed: every field a verifier relies on, one per line, so
    /// that no two seals sign the same bytes.
    fn message(&self) -> Vec<u8> {
        match &self.chain_sha256 {
            Some(chain) => format!(
                "discuss seal v2\nline {}\nsha256 {}\nchain_sha256 {chain}\nat {}\n",
                self.line, self.sha256, self.at
            ),
            None => format!(
                "discuss seal v1\nline {}\nsha256 {}\nat {}\n",
                self.line, self.sha256, self.at
            ),
        }
        .into_bytes()
    }

    /// Signs the seal with `key`.
    pub(crate) fn sign(mut self, key: &SigningKey) -> Seal {
        let signature = key.sign(&self.message());
        self.signature = Some(chain::hex(&signature.to_bytes()));
        self.public_key = Some(public_key_text(&key.verifying_key()));
        self
    }

    /// The digest the seal names.
    pub(crate) fn digest(&self) -> Result<Digest> {
        chain::parse_hex(self.sha256.as_bytes()).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidArgument,
                "the seal's sha256 is not 64 lowercase hex digits",
            )
        })
    }

    /// The digest of every line up to the sealed one, when the seal holds it.
    pub(crate) fn chain_digest(&self) -> Result<Option<Digest>> {
        self.chain_sha256
            .as_deref()
            .map(|hex| {
                chain::parse_hex(hex.as_bytes()).ok_or_else(|| {
                    Error::new(
                        ErrorCode::InvalidArgument,
                        "the seal's chain_sha256 is not 64 lowercase hex digits",
                    )
                })
            })
            .transpose()
    }

    /// The seal in `path`, read as `ledger seal` writes one.
    pub(crate) fn read(path: &Path) -> Result<Seal> {
        let bytes = crate::regular_file::read_regular(path, MAX_FILE).map_err(|e| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("cannot read the seal {}: {e}", path.display()),
            )
        })?;
        let seal: Seal = serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "{} is not a seal of `discuss ledger seal`: {e}",
                    path.display()
                ),
            )
        })?;
        if seal.line == 0 {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the seal names line 0: lines are numbered from 1",
            ));
        }
        seal.digest()?;
        seal.chain_digest()?;
        Ok(seal)
    }

    /// Checks the signature: against `pinned` (`--public-key`) when given,
    /// which an unsigned seal or another key fails; else against the key
    /// the seal carries, if it is signed. The key that verified it.
    pub(crate) fn check_signature(&self, pinned: Option<&VerifyingKey>) -> Result<Option<String>> {
        let mismatch = |why: &str| Error::new(ErrorCode::SealMismatch, why.to_owned());
        let (signature, carried) = match (&self.signature, &self.public_key) {
            (Some(signature), Some(key)) => (signature, parse_public_key(key)?),
            (None, None) if pinned.is_none() => return Ok(None),
            (None, None) => {
                return Err(mismatch(
                    "the seal is not signed, and --public-key asks for a signature",
                ));
            }
            _ => {
                return Err(mismatch(
                    "the seal has a signature or a key without the other",
                ));
            }
        };
        if let Some(pinned) = pinned
            && *pinned != carried
        {
            return Err(mismatch(
                "the seal was signed with another key than --public-key",
            ));
        }
        let signature = chain::parse_hex_bytes::<64>(signature.as_bytes())
            .map(|bytes| Signature::from_bytes(&bytes))
            .ok_or_else(|| mismatch("the seal's signature is not 128 lowercase hex digits"))?;
        carried
            .verify(&self.message(), &signature)
            .map_err(|_| mismatch("the seal's signature does not verify: the seal was altered"))?;
        Ok(Some(public_key_text(&carried)))
    }
}

pub(crate) fn public_key_text(key: &VerifyingKey) -> String {
    format!("{PUBLIC_PREFIX}{}", chain::hex(key.as_bytes()))
}

/// A public key as `ledger keygen` prints it (`ed25519:HEX`), or the file
/// that holds one (the key file's `.pub`).
pub(crate) fn public_key_from(text_or_path: &str) -> Result<VerifyingKey> {
    if text_or_path.starts_with(PUBLIC_PREFIX) {
        return parse_public_key(text_or_path);
    }
    let bytes =
        crate::regular_file::read_regular(Path::new(text_or_path), MAX_FILE).map_err(|e| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("--public-key is neither ed25519:HEX nor a readable file ({e})"),
            )
        })?;
    parse_public_key(String::from_utf8_lossy(&bytes).trim())
}

fn parse_public_key(text: &str) -> Result<VerifyingKey> {
    let invalid = || {
        Error::new(
            ErrorCode::InvalidArgument,
            "a public key is ed25519: and 64 lowercase hex digits",
        )
    };
    let hex = text.strip_prefix(PUBLIC_PREFIX).ok_or_else(invalid)?;
    let bytes = chain::parse_hex_bytes::<32>(hex.as_bytes()).ok_or_else(invalid)?;
    VerifyingKey::from_bytes(&bytes).map_err(|_| invalid())
}

/// A new signing key written to `path` (created, never replaced; readable
/// by its owner only) and its public key beside it (`path.pub`).
pub(crate) fn generate_key(path: &Path) -> Result<SigningKey> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let key = SigningKey::from_bytes(&crate::credentials::random_bytes::<32>()?);
    let create = |path: &Path, mode: u32| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => Error::new(
                    ErrorCode::InvalidArgument,
                    format!("{} exists: a key is never replaced", path.display()),
                )
                .hint("choose another --output, or remove the old key yourself"),
                _ => Error::io(path.display(), &e),
            })
    };
    let public = public_path(path);
    if public.exists() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("{} exists: a key is never replaced", public.display()),
        ));
    }
    let mut file = create(path, 0o600)?;
    file.write_all(format!("{KEY_HEADER}\n{}\n", chain::hex(key.as_bytes())).as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(path.display(), &e))?;
    let mut file = create(&public, 0o644)?;
    file.write_all(format!("{}\n", public_key_text(&key.verifying_key())).as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(public.display(), &e))?;
    Ok(key)
}

/// Where `generate_key` writes the public key of the key at `path`.
pub(crate) fn public_path(path: &Path) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".pub");
    name.into()
}

/// The signing key in `path`, as `generate_key` wrote it.
pub(crate) fn read_key(path: &Path) -> Result<SigningKey> {
    let bytes = crate::regular_file::read_secret(path, MAX_FILE).map_err(|e| {
        let err = Error::new(
            ErrorCode::InvalidArgument,
            format!("cannot use the key {}: {e}", path.display()),
        );
        match e {
            crate::regular_file::Unread::Exposed(_) => err.detail("field", "key").hint(format!(
                "chmod 600 {} (anyone who read it may have signed seals: make a new key if so)",
                path.display()
            )),
            _ => err,
        }
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines();
    let seed = match (lines.next(), lines.next()) {
        (Some(KEY_HEADER), Some(seed)) => chain::parse_hex_bytes::<32>(seed.trim().as_bytes()),
        _ => None,
    };
    let seed = seed.ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("{} is not a key of `discuss ledger keygen`", path.display()),
        )
    })?;
    Ok(SigningKey::from_bytes(&seed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seal() -> Seal {
        Seal {
            ledger: "l".into(),
            line: 3,
            sha256: chain::hex(&chain::digest_of(b"x")),
            chain_sha256: Some(chain::hex(&chain::digest_of(b"y"))),
            at: "2026-12-04T00:00:00Z".into(),
            signature: None,
            public_key: None,
        }
    }

    #[test]
    fn a_signed_seal_verifies_and_any_change_does_not() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let signed = seal().sign(&key);
        let public = key.verifying_key();
        assert_eq!(
            signed.check_signature(Some(&public)).unwrap(),
            Some(public_key_text(&public))
        );
        assert!(signed.check_signature(None).is_ok());
        let moved = Seal {
            line: 4,
            ..signed.clone()
        };
        assert_eq!(
            moved.check_signature(None).unwrap_err().code,
            ErrorCode::SealMismatch
        );
        // The whole chain's digest is signed too: it can be neither
        // changed nor dropped to make a seal of its line only.
        for chain_sha256 in [Some(chain::hex(&chain::digest_of(b"z"))), None] {
            let altered = Seal {
                chain_sha256,
                ..signed.clone()
            };
            assert_eq!(
                altered.check_signature(None).unwrap_err().code,
                ErrorCode::SealMismatch
            );
        }
        let other = SigningKey::from_bytes(&[8; 32]).verifying_key();
        assert_eq!(
            signed.check_signature(Some(&other)).unwrap_err().code,
            ErrorCode::SealMismatch
        );
        assert_eq!(
            seal().check_signature(Some(&public)).unwrap_err().code,
            ErrorCode::SealMismatch
        );
        assert_eq!(seal().check_signature(None).unwrap(), None);
    }
}
