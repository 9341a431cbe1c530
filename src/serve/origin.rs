//! Which `Host` and `Origin` a request may carry: the protocol's guard
//! against DNS rebinding (a web page whose name was pointed at this
//! server, reaching it from a browser). Refused requests get `403
//! forbidden`, the contract's error object.
//!
//! - On a loopback listener, `Host` must be a loopback name (`localhost`,
//!   `127.0.0.0/8`, `[::1]`) at any port, or one given with
//!   `--allowed-host`; beyond loopback, any `Host` unless `--allowed-host`
//!   names the ones to take (clients reach such a server by its own name,
//!   and proxies set their own).
//! - `Origin`, when a request has one (browsers send it; agents' HTTP
//!   clients do not), must be the server's own (its authority a good
//!   `Host` as above and the request's own `Host`) or one given with
//!   `--allowed-origin`, for a browser-based MCP host.

use crate::error::{Error, ErrorCode, Result};
use axum::http::{HeaderMap, Uri, header};

/// The `Host`s and `Origin`s a server takes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Allowed {
    /// Whether the server listens on loopback only.
    pub loopback: bool,
    /// `--allowed-host`: names, or `name:port`, lower case.
    pub hosts: Vec<String>,
    /// `--allowed-origin`: `scheme://host[:port]`, lower case.
    pub origins: Vec<String>,
}

impl Allowed {
    /// `forbidden` for a request whose `Host` or `Origin` is not taken.
    pub(super) fn check(&self, headers: &HeaderMap, uri: &Uri) -> Result<()> {
        let host = host_of(headers, uri);
        if let Some(host) = &host
            && !self.host_is_allowed(host)
        {
            return Err(Error::new(
                ErrorCode::Forbidden,
                format!(
                    "the request's Host {} is not a name of this server",
                    crate::escape::printable(host, false)
                ),
            )
            .detail("reason", "host")
            .hint("--allowed-host on the server names the hosts it answers to"));
        }
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let origin = origin.to_str().unwrap_or("").trim().to_ascii_lowercase();
        if self.origins.contains(&origin) || self.is_own(&origin, host.as_deref()) {
            return Ok(());
        }
        Err(Error::new(
            ErrorCode::Forbidden,
            format!(
                "the request's Origin {} is not this server's",
                crate::escape::printable(&origin, false)
            ),
        )
        .detail("reason", "origin")
        .hint("--allowed-origin on the server allows a browser-based host's origin"))
    }

    /// `forbidden` unless the request comes from a page of this server:
    /// its `Origin` present and the server's own. `--allowed-origin` does
    /// not count: it lets a browser-based MCP host call the tools with a
    /// token of its own, never act with the console's cookie.
    pub(super) fn check_own_origin(&self, headers: &HeaderMap, uri: &Uri) -> Result<()> {
        let refused =
            |why: String| Err(Error::new(ErrorCode::Forbidden, why).detail("reason", "origin"));
        let Some(origin) = headers.get(header::ORIGIN) else {
            return refused(
                "a change from the console must come from one of its pages (no Origin was sent)"
                    .to_owned(),
            );
        };
        let origin = origin.to_str().unwrap_or("").trim().to_ascii_lowercase();
        if self.is_own(&origin, host_of(headers, uri).as_deref()) {
            return Ok(());
        }
        refused(format!(
            "a change from the console must come from one of its pages, not from {}",
            crate::escape::printable(&origin, false)
        ))
    }

    /// Whether `origin` is this server's: its authority a `Host` taken and
    /// the request's own.
    fn is_own(&self, origin: &str, host: Option<&str>) -> bool {
        let authority = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"));
        authority
            .is_some_and(|authority| self.host_is_allowed(authority) && host == Some(authority))
    }

    fn host_is_allowed(&self, authority: &str) -> bool {
        let name = hostname(authority);
        if self
            .hosts
            .iter()
            .any(|allowed| allowed == authority || allowed == name)
        {
            return true;
        }
        if self.loopback {
            return is_loopback_name(name);
        }
        self.hosts.is_empty()
    }
}

/// The request's `Host` (or its URI's authority, for HTTP/2), lower case.
fn host_of(headers: &HeaderMap, uri: &Uri) -> Option<String> {
    headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| uri.authority().map(|a| a.as_str().to_owned()))
        .map(|h| h.to_ascii_lowercase())
}

/// `name` of `name:port`, `[v6]` of `[v6]:port`.
fn hostname(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    authority.split(':').next().unwrap_or(authority)
}

fn is_loopback_name(name: &str) -> bool {
    name == "localhost"
        || name == "[::1]"
        || name
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(host) = host {
            headers.insert(header::HOST, host.parse().unwrap());
        }
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, origin.parse().unwrap());
        }
        headers
    }

    #[test]
    fn a_loopback_server_takes_loopback_names_and_its_own_origin_only() {
        let allowed = Allowed {
            loopback: true,
            ..Allowed::default()
        };
        let uri = Uri::from_static("/mcp");
        let ok = |host, origin| allowed.check(&headers(host, origin), &uri).is_ok();
        assert!(ok(Some("127.0.0.1:8470"), None));
        assert!(ok(Some("localhost:8470"), Some("http://localhost:8470")));
        assert!(ok(Some("[::1]:8470"), Some("http://[::1]:8470")));
        assert!(ok(Some("127.0.0.2"), None));
        assert!(ok(None, None));
        assert!(!ok(Some("evil.example.com"), None));
        assert!(!ok(
            Some("evil.example.com:8470"),
            Some("http://evil.example.com:8470")
        ));
        assert!(!ok(Some("127.0.0.1:8470"), Some("http://evil.example.com")));
        assert!(!ok(Some("127.0.0.1:8470"), Some("null")));
        // Another loopback port is another origin.
        assert!(!ok(Some("127.0.0.1:8470"), Some("http://127.0.0.1:9999")));
        let err = allowed
            .check(&headers(Some("evil.example.com"), None), &uri)
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::Forbidden);
    }

    #[test]
    fn configured_hosts_and_origins_are_taken_and_beyond_loopback_any_host_by_default() {
        let uri = Uri::from_static("/mcp");
        let open = Allowed::default();
        assert!(
            open.check(&headers(Some("discuss.internal:8470"), None), &uri)
                .is_ok()
        );
        assert!(
            open.check(
                &headers(Some("discuss.internal"), Some("https://discuss.internal")),
                &uri
            )
            .is_ok()
        );
        assert!(
            open.check(
                &headers(Some("discuss.internal"), Some("https://other.example")),
                &uri
            )
            .is_err()
        );
        let pinned = Allowed {
            loopback: false,
            hosts: vec!["discuss.internal".into()],
            origins: vec!["https://console.example".into()],
        };
        assert!(
            pinned
                .check(&headers(Some("discuss.internal:443"), None), &uri)
                .is_ok()
        );
        assert!(
            pinned
                .check(&headers(Some("evil.example"), None), &uri)
                .is_err()
        );
        assert!(
            pinned
                .check(
                    &headers(Some("discuss.internal"), Some("https://console.example")),
                    &uri
                )
                .is_ok()
        );
    }
}
