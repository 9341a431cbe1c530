//! A PostgreSQL ledger's URL: libpq's syntax, read into the client's
//! configuration, with what the client does not know itself (`sslmode`
//! `verify-ca`/`verify-full`, `sslrootcert`) turned into the TLS connector.

use crate::error::{Error, ErrorCode, Result};
use postgres::Config;
use postgres::tls::{MakeTlsConnect, TlsConnect};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_postgres_rustls::MakeRustlsConnect;

/// How long connecting may take when the URL does not say
/// (`connect_timeout`, seconds): a database that cannot be reached is
/// reported within it, never waited for.
pub(super) const DEFAULT_CONNECT_TIMEOUT_S: u32 = 5;

/// Whether `location` names a PostgreSQL database rather than a file.
pub(crate) fn is_postgres_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// What the server's certificate is checked for (libpq's `sslmode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verify {
    /// `disable`, `allow`, `prefer`, `require`: encrypted when TLS is used,
    /// the certificate not checked (as libpq, without a root certificate).
    Nothing,
    /// `verify-ca`, or `require` with `sslrootcert`: signed by a trusted CA.
    Authority,
    /// `verify-full`: that, and issued for the host connected to.
    AuthorityAndHost,
}

/// A parsed PostgreSQL location.
#[derive(Clone)]
pub(crate) struct Location {
    /// As given: what a supervised child gets as `DISCUSS_LEDGER`.
    pub url: String,
    /// For people: the password hidden.
    pub shown: String,
    pub config: Config,
    verify: Verify,
    root_cert: Option<PathBuf>,
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl Location {
    pub(crate) fn parse(url: &str) -> Result<Location> {
        let shown = redact(url);
        let invalid = |why: String| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("{shown} is not a PostgreSQL URL the client can use: {why}"),
            )
            .detail("ledger", shown.clone())
            .hint("libpq URL syntax: postgresql://user@host:port/dbname?sslmode=require")
        };
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut kept: Vec<&str> = Vec::new();
        let mut verify = Verify::Nothing;
        let mut require = false;
        let mut root_cert = None;
        let mut timeout_given = false;
        let mut name_given = false;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "sslmode" => match value {
                    "disable" | "prefer" => kept.push(pair),
                    "allow" => kept.push("sslmode=prefer"),
                    "require" => {
                        require = true;
                        kept.push(pair);
                    }
                    "verify-ca" => {
                        verify = Verify::Authority;
                        kept.push("sslmode=require");
                    }
                    "verify-full" => {
                        verify = Verify::AuthorityAndHost;
                        kept.push("sslmode=require");
                    }
                    other => return Err(invalid(format!("unknown sslmode {other:?}"))),
                },
                "sslrootcert" => root_cert = Some(PathBuf::from(percent_decode(value))),
                _ => {
                    timeout_given |= key == "connect_timeout";
                    name_given |= key == "application_name";
                    kept.push(pair);
                }
            }
        }
        if require && root_cert.is_some() {
            // libpq: `require` with a root certificate checks the CA.
            verify = Verify::Authority;
        }
        let timeout = format!("connect_timeout={DEFAULT_CONNECT_TIMEOUT_S}");
        if !timeout_given {
            kept.push(&timeout);
        }
        if !name_given {
            kept.push("application_name=discuss");
        }
        let rebuilt = format!("{base}?{}", kept.join("&"));
        let config = Config::from_str(&rebuilt).map_err(|e| invalid(e.to_string()))?;
        Ok(Location {
            url: url.to_owned(),
            shown,
            config,
            verify,
            root_cert,
        })
    }

    /// The TLS connector for this location's `sslmode`: built only if the
    /// server agrees to TLS, since the system's CA store is read then.
    pub(crate) fn tls(&self) -> LazyTls {
        LazyTls {
            verify: self.verify,
            root_cert: self.root_cert.clone(),
        }
    }
}

/// A `MakeTlsConnect` that builds its `rustls` configuration on first use.
#[derive(Clone)]
pub(crate) struct LazyTls {
    verify: Verify,
    root_cert: Option<PathBuf>,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl LazyTls {
    fn config(&self) -> std::result::Result<ClientConfig, BoxError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()?;
        let config = match self.verify {
            Verify::Nothing => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Unchecked { provider })),
            Verify::Authority => {
                let checked =
                    WebPkiServerVerifier::builder_with_provider(Arc::new(self.roots()?), provider)
                        .build()?;
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(AnyName(checked)))
            }
            Verify::AuthorityAndHost => builder.with_root_certificates(self.roots()?),
        };
        Ok(config.with_no_client_auth())
    }

    /// The CAs trusted: `sslrootcert`, else the system's store.
    fn roots(&self) -> std::result::Result<RootCertStore, BoxError> {
        let mut roots = RootCertStore::empty();
        match &self.root_cert {
            Some(path) => {
                let certs = CertificateDer::pem_file_iter(path)
                    .and_then(|certs| certs.collect::<std::result::Result<Vec<_>, _>>())
                    .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
                for cert in certs {
                    roots.add(cert)?;
                }
            }
            None => {
                for cert in rustls_native_certs::load_native_certs().certs {
                    let _ = roots.add(cert);
                }
            }
        }
        Ok(roots)
    }
}

/// `sslmode=require` without a root certificate, as libpq: encrypted, the
/// certificate not checked (the handshake's signatures still are).
#[derive(Debug)]
struct Unchecked {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// `sslmode=verify-ca`: signed by a trusted CA, whatever host it names.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

type Rustls<S> = <MakeRustlsConnect as MakeTlsConnect<S>>::TlsConnect;

impl<S> MakeTlsConnect<S> for LazyTls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = <Rustls<S> as TlsConnect<S>>::Stream;
    type TlsConnect = LazyConnect;
    type Error = BoxError;

    fn make_tls_connect(&mut self, domain: &str) -> std::result::Result<LazyConnect, BoxError> {
        Ok(LazyConnect {
            tls: self.clone(),
            domain: domain.to_owned(),
        })
    }
}

pub(crate) struct LazyConnect {
    tls: LazyTls,
    domain: String,
}

impl<S> TlsConnect<S> for LazyConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = <Rustls<S> as TlsConnect<S>>::Stream;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = std::result::Result<Self::Stream, BoxError>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        let made = self.tls.config().and_then(|config| {
            MakeTlsConnect::<S>::make_tls_connect(&mut MakeRustlsConnect::new(config), &self.domain)
                .map_err(BoxError::from)
        });
        let connect = match made {
            Ok(connect) => connect,
            Err(err) => return Box::pin(std::future::ready(Err(err))),
        };
        let connecting = connect.connect(stream);
        Box::pin(async move { connecting.await.map_err(BoxError::from) })
    }
}

/// The URL with its password replaced by `***`, in the user part and in a
/// `password=` parameter.
pub(super) fn redact(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (base, query) = match rest.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (rest, None),
    };
    let (authority, path) = match base.find('/') {
        Some(at) => base.split_at(at),
        None => (base, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{name}:***@{host}"),
            None => format!("{user}@{host}"),
        },
        None => authority.to_owned(),
    };
    let mut shown = format!("{scheme}://{authority}{path}");
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some(("password", _)) => "password=***".to_owned(),
                _ => pair.to_owned(),
            })
            .collect();
        shown.push('?');
        shown.push_str(&pairs.join("&"));
    }
    shown
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(
            redact("postgresql://ann:s3cret@db.example:5432/fleet?sslmode=require"),
            "postgresql://ann:***@db.example:5432/fleet?sslmode=require"
        );
        assert_eq!(
            redact("postgres://db/fleet?user=ann&password=s3cret"),
            "postgres://db/fleet?user=ann&password=***"
        );
        assert_eq!(redact("postgres://ann@db/x"), "postgres://ann@db/x");
    }

    #[test]
    fn libpq_modes_the_client_lacks_are_understood() {
        let full = Location::parse("postgresql://u@h/d?sslmode=verify-full").unwrap();
        assert_eq!(full.verify, Verify::AuthorityAndHost);
        assert_eq!(
            full.config.get_connect_timeout(),
            Some(&std::time::Duration::from_secs(5))
        );
        let ca = Location::parse("postgresql://u@h/d?sslmode=require&sslrootcert=%2Ftmp%2Fca.pem")
            .unwrap();
        assert_eq!(ca.verify, Verify::Authority);
        assert_eq!(ca.root_cert, Some(PathBuf::from("/tmp/ca.pem")));
        let plain = Location::parse("postgresql://u@h/d?connect_timeout=2").unwrap();
        assert_eq!(plain.verify, Verify::Nothing);
        assert_eq!(
            plain.config.get_connect_timeout(),
            Some(&std::time::Duration::from_secs(2))
        );
        let err = Location::parse("postgresql://u@h/d?sslmode=sometimes").unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        let err = Location::parse("postgresql://u:pw@h/d?frobnicate=1").unwrap_err();
        assert!(!err.message.contains("pw"), "{}", err.message);
    }
}
