//! `discuss mcp`: the seed's tools as a Model Context Protocol server over
//! stdio, for agent hosts (Claude Code, Codex CLI, Gemini CLI, …).
//!
//! The server is `tools::mcp`'s (shared with `discuss serve`); this is its
//! stdio plumbing. The async runtime is current-thread and built by this
//! command alone.

use super::Context;
use crate::error::{Error, Result};
use crate::tools::mcp::{AsSession, McpServer};
use clap::Args;
use rmcp::ServiceExt;
use serde_json::{Value, json};
use std::sync::Arc;

// Serve the discussion tools over MCP (stdio) until stdin closes.
//
// Tools: ask_peer, wake_agent, reply_discussion, get_discussion (the
// seed's request objects exactly), list_discussions and inbox. No tool
// starts an agent: wake_agent only reserves the turn.
#[derive(Debug, Args)]
#[command(
    after_help = "Example (register with an agent host, with the ledger the agents share):\n  \
    claude mcp add discuss -e DISCUSS_LEDGER=/srv/agents/ledger.jsonl \\\n      -- discuss mcp --agent agent-a"
)]
pub(crate) struct McpArgs {
    /// Act for this agent only: ask_peer.from_agent_id and
    /// reply_discussion.agent_id must be it (agent_mismatch otherwise)
    #[arg(long, value_name = "AGENT", add = clap_complete::ArgValueCandidates::new(crate::complete::agents))]
    pub agent: Option<String>,
}

pub(crate) fn run(ctx: Context, args: &McpArgs) -> Result<u8> {
    crate::traces::long_lived();
    if let Some(agent) = &args.agent {
        crate::ids::check_name("agent_id", agent)?;
    }
    announce(&ctx);
    let ctx = Arc::new(ctx);
    let server = McpServer::new(Arc::clone(&ctx) as Arc<dyn AsSession>, args.agent.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("the MCP server's runtime", &e))?;
    let pushes = args.agent.clone().map(|agent| {
        (
            Arc::clone(&ctx) as Arc<dyn AsSession>,
            agent,
            Arc::clone(&server.wants),
        )
    });
    runtime.block_on(serve(server, pushes));
    drop(runtime);
    // Last, outside the runtime: a PostgreSQL ledger's client blocks on
    // its own runtime to say goodbye, which tokio forbids inside another.
    drop(ctx);
    Ok(0)
}

impl AsSession for Context {
    fn session(&self) -> &crate::session::Session {
        &self.session
    }
}

/// Says on stderr which ledger is served, and warns when it is the
/// default one and does not exist: a host that passes no `DISCUSS_LEDGER`
/// (most pass only HOME and PATH) would otherwise get empty answers from
/// a ledger nobody writes.
fn announce(ctx: &Context) {
    super::Announcement::of(
        ctx,
        "discuss mcp",
        ctx.defaulted_ledger,
        "set DISCUSS_LEDGER in the host's MCP server configuration (env) \
         to the ledger the other agents use",
    )
    .say(&ctx.out);
}

/// Serves one session on stdin and stdout. Between stdin and the SDK sits a
/// line filter: the SDK drops a line that is not a JSON-RPC message without
/// a word, where the protocol wants an error answer (`-32700` for a line
/// that is not JSON, `-32600` for JSON that is not a message or a line
/// over the request limit, whose rest is read and dropped). Answers of
/// both kinds leave through one writer, a whole line at a time, so stdout
/// carries only protocol messages. When stdin closes, the session ends
/// only once every request read has been answered.
async fn serve(server: McpServer, pushes: Option<Pushes>) {
    use tokio::io::{AsyncWriteExt, BufReader};
    let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, from_server) = tokio::io::duplex(1 << 16);
    let (lines, mut outgoing) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let pending = Arc::new(Pending::default());
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = outgoing.recv().await {
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                return; // the client went away
            }
        }
    });
    let answers = lines.clone();
    let answered = Arc::clone(&pending);
    tokio::spawn(async move {
        let mut from_server = BufReader::new(from_server);
        // The SDK's own answers: unbounded, as it wrote them.
        while let Ok(Some(line)) = read_line(&mut from_server, usize::MAX).await {
            let Line::Whole(line) = line else { continue };
            answered.answered(&line);
            if answers.send(line).is_err() {
                return;
            }
        }
    });
    let asked = Arc::clone(&pending);
    tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin());
        loop {
            let mut line = match read_line(&mut stdin, MAX_LINE_BYTES).await {
                Ok(Some(Line::Whole(line))) => line,
                Ok(Some(Line::TooLong)) => {
                    let _ = lines.send(error_answer(
                        -32600,
                        format!("Invalid Request: a message is at most {MAX_LINE_BYTES} bytes"),
                        Value::Null,
                    ));
                    continue;
                }
                Ok(None) | Err(_) => break,
            };
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match malformed(&line) {
                Some(error) => {
                    let _ = lines.send(error);
                }
                None => {
                    asked.asked(&line);
                    if !line.ends_with(b"\n") {
                        line.push(b'\n');
                    }
                    if to_server.write_all(&line).await.is_err() {
                        break;
                    }
                }
            }
        }
        // End of stdin: every request read is answered first, then the SDK
        // sees the end of its input and ends the session.
        // (Bounded: a request the client cancelled may get no answer.)
        let _ = tokio::time::timeout(DRAIN_LIMIT, asked.drained()).await;
        let _ = to_server.shutdown().await;
    });
    // A client that connects and leaves before initializing ends the
    // session as cleanly as one that closes stdin later.
    if let Ok(service) = server.serve((server_in, server_out)).await {
        // The agent's reserved turns, pushed while the session lasts.
        let pushing = pushes.map(|(session, agent, wants)| {
            tokio::spawn(crate::tools::push::push_turns(
                session,
                agent,
                service.peer().clone(),
                wants,
            ))
        });
        let _ = service.waiting().await;
        if let Some(pushing) = pushing {
            pushing.abort();
        }
    }
    let _ = writer.await;
}

/// What pushes turns to a session pinned to an agent: the ledger, the
/// agent, and what the client asked of log messages.
type Pushes = (Arc<dyn AsSession>, String, Arc<crate::tools::mcp::Wants>);

/// How long the requests read before stdin closed may take to be answered.
const DRAIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The longest line read from stdin: a `call` request's limit and room for
/// the JSON-RPC envelope around it.
const MAX_LINE_BYTES: usize = crate::tools::MAX_REQUEST_BYTES + 4096;

enum Line {
    Whole(Vec<u8>),
    /// Longer than the limit: read to its end and dropped.
    TooLong,
}

/// The next line of `reader`, its newline included (or the last bytes
/// before the end); `None` at the end. A line longer than `limit` is not
/// kept: memory holds at most `limit` bytes of it.
async fn read_line(
    reader: &mut (impl tokio::io::AsyncBufRead + Unpin),
    limit: usize,
) -> std::io::Result<Option<Line>> {
    use tokio::io::AsyncBufReadExt;
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(match (line.is_empty(), too_long) {
                (_, true) => Some(Line::TooLong),
                (true, false) => None,
                (false, false) => Some(Line::Whole(line)),
            });
        }
        let (taken, ended) = match memchr::memchr(b'\n', buffer) {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        if !too_long {
            if line.len() + taken > limit {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(&buffer[..taken]);
            }
        }
        reader.consume(taken);
        if ended {
            return Ok(Some(if too_long {
                Line::TooLong
            } else {
                Line::Whole(line)
            }));
        }
    }
}

/// The requests read and not yet answered, by id.
#[derive(Default)]
struct Pending {
    ids: std::sync::Mutex<std::collections::HashSet<String>>,
    changed: tokio::sync::Notify,
}

impl Pending {
    /// A request (a message with a method and an id) was read.
    fn asked(&self, line: &[u8]) {
        if let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(line)
            && message.contains_key("method")
            && let Some(id) = message.get("id")
        {
            self.ids
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(id.to_string());
        }
    }

    /// A response (a message with an id and a result or an error) went out.
    fn answered(&self, line: &[u8]) {
        if let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(line)
            && (message.contains_key("result") || message.contains_key("error"))
            && let Some(id) = message.get("id")
        {
            self.ids
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id.to_string());
            self.changed.notify_waiters();
        }
    }

    async fn drained(&self) {
        loop {
            let changed = self.changed.notified();
            if self
                .ids
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty()
            {
                return;
            }
            changed.await;
        }
    }
}

/// The JSON-RPC error answer to a line that is not a message, if it is not.
fn malformed(line: &[u8]) -> Option<Vec<u8>> {
    let (code, message, id) = match serde_json::from_slice::<Value>(line) {
        Err(e) => (-32700, format!("Parse error: {e}"), Value::Null),
        Ok(Value::Object(message)) => {
            let id = message.get("id").cloned().unwrap_or(Value::Null);
            let versioned = message.get("jsonrpc") == Some(&json!("2.0"));
            let method = message.get("method").is_some_and(Value::is_string);
            let response = message.contains_key("result") || message.contains_key("error");
            if versioned && (method || response) {
                return None;
            }
            (
                -32600,
                "Invalid Request: not a JSON-RPC 2.0 request, notification or response".into(),
                id,
            )
        }
        Ok(_) => (
            -32600,
            "Invalid Request: a message is one JSON object".into(),
            Value::Null,
        ),
    };
    Some(error_answer(code, message, id))
}

/// A JSON-RPC error answer, as one line.
fn error_answer(code: i64, message: String, id: Value) -> Vec<u8> {
    let mut answer =
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            .to_string()
            .into_bytes();
    answer.push(b'\n');
    answer
}
