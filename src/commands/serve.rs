//! `discuss serve --listen HOST:PORT`: the tools over HTTP for agents that
//! hold no ledger (`crate::serve` does the serving).

use super::Context;
use crate::error::{Error, ErrorCode, Result};
use clap::Args;
use std::path::PathBuf;

// Serve the tools over HTTP: MCP (streamable HTTP) at /mcp, the tools at
// /v1/tools/TOOL, readers, an event stream (SSE) and operator endpoints,
// each request with a bearer token (`discuss token issue`).
//
// Keeps no state of its own: every request is the CLI's operation on the
// same ledger, so several servers may front one PostgreSQL ledger.
//
// People open / in a browser: a live console of the fleet, signed in with
// a token at /login (an operator's engages halts and revokes tokens).
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  \
    TOKEN=$(discuss token issue agent-b)\n  \
    discuss serve --listen 127.0.0.1:8470 &\n  \
    curl -s -H \"Authorization: Bearer $TOKEN\" http://127.0.0.1:8470/v1/inbox")]
pub(crate) struct ServeArgs {
    /// The address to listen on (port 0: any free port, printed)
    #[arg(long, value_name = "HOST:PORT")]
    pub listen: String,
    /// TLS: the certificate chain (PEM)
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// TLS: the private key (PEM)
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Connections open at once; more are answered 503 and closed
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub max_connections: u32,
    /// The largest request body; a larger one is answered 413 unread
    #[arg(long, value_name = "N", default_value_t = 524_288)]
    pub max_body_bytes: u64,
    /// How long a client may take to send a request's headers (and TLS
    /// handshake), and how long a connection may stay silent with no
    /// request in flight, before it is cut
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    pub header_timeout_ms: u64,
    /// Event streams (/v1/events) open at once; more are answered 503
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub max_streams: u32,
    /// Event streams one token may hold open at once; more are answered 429
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub max_streams_per_token: u32,
    /// Listen beyond loopback without TLS (tokens then cross the network in
    /// clear)
    #[arg(long)]
    pub allow_plain_http: bool,
    /// A Host the server answers to, NAME or NAME:PORT (repeatable); on
    /// loopback, loopback names are taken besides; beyond it, only these
    /// once one is given
    #[arg(long, value_name = "HOST")]
    pub allowed_host: Vec<String>,
    /// A browser Origin taken besides the server's own, as
    /// scheme://host[:port] (repeatable), for a browser-based MCP host
    #[arg(long, value_name = "ORIGIN")]
    pub allowed_origin: Vec<String>,
}

pub(crate) fn run(ctx: Context, args: &ServeArgs) -> Result<u8> {
    crate::traces::long_lived();
    let range = |name: &str, value: u64, (low, high): (u64, u64)| {
        if (low..=high).contains(&value) {
            return Ok(());
        }
        Err(Error::new(
            ErrorCode::OutOfRange,
            format!("--{name} must be between {low} and {high}"),
        )
        .detail("field", name.replace('-', "_"))
        .detail("value", value))
    };
    range("max-connections", args.max_connections.into(), (1, 65_536))?;
    range("max-body-bytes", args.max_body_bytes, (1_024, 64 << 20))?;
    range("header-timeout-ms", args.header_timeout_ms, (10, 600_000))?;
    range("max-streams", args.max_streams.into(), (1, 65_536))?;
    range(
        "max-streams-per-token",
        args.max_streams_per_token.into(),
        (1, 65_536),
    )?;
    let options = crate::serve::Options {
        listen: args.listen.clone(),
        tls: args.tls_cert.clone().zip(args.tls_key.clone()),
        max_connections: args.max_connections as usize,
        max_body_bytes: args.max_body_bytes as usize,
        header_timeout: std::time::Duration::from_millis(args.header_timeout_ms),
        max_streams: args.max_streams as usize,
        max_streams_per_token: args.max_streams_per_token as usize,
        allow_plain_http: args.allow_plain_http,
        allowed: crate::serve::Allowed {
            loopback: false,
            hosts: lower(&args.allowed_host),
            origins: args
                .allowed_origin
                .iter()
                .map(|o| checked_origin(o))
                .collect::<Result<_>>()?,
        },
    };
    // A server started in a shell without DISCUSS_LEDGER serves an empty
    // default, where every sign-in fails as an unknown token: say so, once
    // the socket is bound.
    let announcement = super::Announcement::of(
        &ctx,
        "discuss serve",
        true,
        "no token is known there, so every request will be 401: start the server with \
         --ledger (or DISCUSS_LEDGER) naming the ledger its agents' tokens were issued on",
    );
    crate::serve::run(ctx.session, options, || announcement.say(&ctx.out))?;
    Ok(0)
}

fn lower(values: &[String]) -> Vec<String> {
    values
        .iter()
        .map(|v| v.trim().to_ascii_lowercase())
        .collect()
}

/// An `--allowed-origin`: `http://` or `https://` and a host, with no path.
fn checked_origin(origin: &str) -> Result<String> {
    let lowered = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    let authority = lowered
        .strip_prefix("http://")
        .or_else(|| lowered.strip_prefix("https://"));
    match authority {
        Some(authority) if !authority.is_empty() && !authority.contains('/') => Ok(lowered),
        _ => Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("--allowed-origin {origin:?} is not an origin"),
        )
        .detail("field", "allowed_origin")
        .hint("an origin is scheme://host[:port], as a browser sends it: https://console.example")),
    }
}
