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
        // Nothing of the URL is shown before the client has parsed it: a
        // password may sit anywhere a hand-rolled split would not look.
        let invalid = |why: String| {
            let scheme = url.split_once("://").map_or("postgresql", |(s, _)| s);
            Error::new(
                ErrorCode::InvalidArgument,
                format!("the {scheme}:// ledger URL is not one the client can use (not shown: it may hold a password): {why}"),
            )
            .hint("libpq URL syntax: postgresql://user@host:port/dbname?sslmode=require")
        };
        // As the client reads it: the credentials end at the first `@`,
        // the parameters start at the first `?` after them.
        let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
        let after_credentials = rest.find('@').map_or(0, |at| at + 1);
        let query_at = rest[after_credentials..]
            .find('?')
            .map(|at| url.len() - rest.len() + after_credentials + at);
        let (base, query) = match query_at {
            Some(at) => (&url[..at], &url[at + 1..]),
            None => (url, ""),
        };
        let mut kept: Vec<String> = Vec::new();
        let mut sslmode = None;
        let mut verify = Verify::Nothing;
        let mut require = false;
        let mut root_cert = None;
        let mut timeout_given = false;
        let mut name_given = false;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
            // Keys and values are percent-decoded by the client too
            // (`ssl%6dode` is `sslmode`).
            let key = percent_decode(raw_key);
            let value = percent_decode(raw_value);
            match key.as_str() {
                "sslmode" => {
                    let client = match value.as_str() {
                        "disable" | "prefer" | "require" => value.as_str(),
                        "allow" => "prefer",
                        "verify-ca" | "verify-full" => "require",
                        other => return Err(invalid(format!("unknown sslmode {other:?}"))),
                    };
                    require = value == "require";
                    verify = match value.as_str() {
                        "verify-ca" => Verify::Authority,
                        "verify-full" => Verify::AuthorityAndHost,
                        _ => Verify::Nothing,
                    };
                    kept.push(format!("sslmode={client}"));
                    sslmode = Some(value);
                }
                "sslrootcert" => root_cert = Some(PathBuf::from(value)),
                _ => {
                    timeout_given |= key == "connect_timeout";
                    name_given |= key == "application_name";
                    kept.push(pair.to_owned());
                }
            }
        }
        if require && root_cert.is_some() {
            // libpq: `require` with a root certificate checks the CA.
            verify = Verify::Authority;
        }
        if !timeout_given {
            kept.push(format!("connect_timeout={DEFAULT_CONNECT_TIMEOUT_S}"));
        }
        if !name_given {
            kept.push("application_name=discuss".into());
        }
        let rebuilt = format!("{base}?{}", kept.join("&"));
        let config = Config::from_str(&rebuilt).map_err(|e| invalid(e.to_string()))?;
        Ok(Location {
            url: url.to_owned(),
            shown: shown(&config, sslmode.as_deref()),
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
        let ca = match self.verify {
            Verify::AuthorityAndHost => {
                return Ok(builder
                    .with_root_certificates(self.roots()?)
                    .with_no_client_auth());
            }
            Verify::Authority => Some(
                WebPkiServerVerifier::builder_with_provider(
                    Arc::new(self.roots()?),
                    Arc::clone(&provider),
                )
                .build()?,
            ),
            Verify::Nothing => None,
        };
        let config = builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Lenient { ca, provider }));
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

/// libpq's two lenient checks of a server's certificate: with `ca`, that
/// a trusted CA signed it, whatever host it names (`verify-ca`); without,
/// nothing (`require` without a root certificate, as libpq). The
/// handshake's signatures are checked in both.
#[derive(Debug)]
struct Lenient {
    ca: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Lenient {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let Some(ca) = &self.ca else {
            return Ok(ServerCertVerified::assertion());
        };
        match ca.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
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
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
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

/// The location for people, rebuilt from the client's own parse of the
/// URL, so that no spelling of a password (in the user part, however it
/// is delimited, or as a parameter, repeated or percent-encoded) can be
/// shown: the password itself is never read, only whether there is one.
fn shown(config: &Config, sslmode: Option<&str>) -> String {
    use postgres::config::{Host, TargetSessionAttrs};
    let mut shown = String::from("postgresql://");
    if let Some(user) = config.get_user() {
        shown.push_str(user);
        if config.get_password().is_some() {
            shown.push_str(":***");
        }
        shown.push('@');
    } else if config.get_password().is_some() {
        shown.push_str(":***@");
    }
    let ports = config.get_ports();
    let mut sockets = Vec::new();
    let mut hosts = Vec::new();
    for (i, host) in config.get_hosts().iter().enumerate() {
        // One port for all hosts, or one each (as libpq).
        let port = ports.get(i).or(if ports.len() == 1 {
            ports.first()
        } else {
            None
        });
        match host {
            Host::Tcp(name) => hosts.push(match port {
                Some(port) => format!("{name}:{port}"),
                None => name.clone(),
            }),
            Host::Unix(path) => sockets.push(path.display().to_string()),
        }
    }
    shown.push_str(&hosts.join(","));
    shown.push('/');
    if let Some(dbname) = config.get_dbname() {
        shown.push_str(dbname);
    }
    let mut params: Vec<String> = sockets.into_iter().map(|s| format!("host={s}")).collect();
    if let Some(mode) = sslmode {
        params.push(format!("sslmode={mode}"));
    }
    if config.get_target_session_attrs() == TargetSessionAttrs::ReadWrite {
        params.push("target_session_attrs=read-write".into());
    }
    if !params.is_empty() {
        shown.push('?');
        shown.push_str(&params.join("&"));
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

    /// Every spelling of a password the client accepts: none is shown.
    #[test]
    fn passwords_are_hidden_however_they_are_written() {
        let cases = [
            (
                "postgresql://ann:SECRET@db.example:5432/fleet?sslmode=require",
                "postgresql://ann:***@db.example:5432/fleet?sslmode=require",
            ),
            // A `/` or a `?` in the password: the client reads up to the first `@`.
            (
                "postgresql://ann:pa/SECRET@host/db",
                "postgresql://ann:***@host:5432/db",
            ),
            (
                "postgresql://ann:pa?SECRET@host/db",
                "postgresql://ann:***@host:5432/db",
            ),
            (
                "postgresql://ann:pa%2FSECRET@host/db",
                "postgresql://ann:***@host:5432/db",
            ),
            (
                "postgres://db/fleet?user=ann&password=SECRET",
                "postgresql://ann:***@db:5432/fleet",
            ),
            // Percent-encoded keys are decoded by the client.
            (
                "postgres://db/fleet?user=ann&pass%77ord=SECRET",
                "postgresql://ann:***@db:5432/fleet",
            ),
            (
                "postgres://db/fleet?%70assword=SECRET&user=ann",
                "postgresql://ann:***@db:5432/fleet",
            ),
            // Repeated keys: the last wins in the client, neither is shown.
            (
                "postgres://db/f?password=SECRET&password=SECRET2&user=u",
                "postgresql://u:***@db:5432/f",
            ),
            ("postgres://:SECRET@db/f", "postgresql://:***@db:5432/f"),
            ("postgres://ann@db/x", "postgresql://ann@db:5432/x"),
            (
                "postgresql://u@a:5432,b:5433/d?target_session_attrs=read-write",
                "postgresql://u@a:5432,b:5433/d?target_session_attrs=read-write",
            ),
            (
                "postgresql:///d?host=%2Fvar%2Frun%2Fpostgresql&password=SECRET",
                "postgresql://:***@/d?host=/var/run/postgresql",
            ),
        ];
        for (url, expected) in cases {
            let location = Location::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(location.shown, expected, "{url}");
            assert!(!format!("{location:?}").contains("SECRET"), "{url}");
        }
        // A URL the client refuses is not echoed at all.
        for url in [
            "postgresql://ann:SECRET@db/x?frobnicate=1",
            "postgresql://ann:SECRET@db:notaport/x",
            "postgresql://ann:SECRET@db/x?sslmode=sometimes",
            "postgresql://ann:SECRET@db/x?password",
        ] {
            let err = Location::parse(url).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArgument, "{url}");
            let all = format!("{} {:?} {:?}", err.message, err.details, err.hints);
            assert!(!all.contains("SECRET"), "{url}: {all}");
        }
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
    }
}
