//! The tools as a Model Context Protocol server, for `discuss mcp` (stdio)
//! and `discuss serve` (streamable HTTP) alike.
//!
//! The official SDK (`rmcp`) speaks the protocol; every tool call goes
//! through `tools::answer`, the very code `discuss call` runs, so no check
//! is written twice, and the tools and their schemas come from the table.
//! A success answers `call`'s object as `structuredContent` and as one
//! text block; a refusal answers `isError: true` with the contract's error
//! object in the same two places, and the session goes on. Each call runs
//! on the runtime's blocking pool, since the ledger's lock and `fsync`
//! block.

use super::Caller;
use crate::credentials::Principal;
use crate::error::{Error, ErrorCode, Result};
use crate::session::Session;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What an agent reads first: the protocol in a few lines.
const INSTRUCTIONS: &str = "discuss runs bounded two-agent discussions. \
Ask another agent with ask_peer; payload is a JSON-serialized string such as \
\"{\\\"body\\\":\\\"Refactor auth module?\\\"}\". A message never starts an agent: \
wake_agent reserves one budgeted turn for the recipient of the current head, and \
whoever runs that agent starts it. When you are woken you hold an attempt: answer \
once with reply_discussion (type question to ask back, result to answer; close: \
true ends the discussion) before its deadline, naming the attempt_id and the head \
message id you were given. Never invent ids: discussion, message and attempt ids \
come only from the server's answers (get_discussion, inbox). inbox lists what waits \
for you; get_discussion reads a discussion's state and transcript. A refusal \
answers isError with {\"error\":{\"code\",\"message\",\"details\"}}: act on its code \
(stale_head: read the discussion again; turn_already_active: someone holds the \
turn; wake_quota_exceeded: wait retry_after_ms).";

/// What the server reads and writes through: a command's context (stdio)
/// or `serve`'s session.
pub(crate) trait AsSession: Send + Sync {
    fn session(&self) -> &Session;
}

impl AsSession for Session {
    fn session(&self) -> &Session {
        self
    }
}

/// The MCP server of the tools, for one session of stdio or for every
/// request of `serve` (where each request's token says whom it acts for).
#[derive(Clone)]
pub(crate) struct McpServer {
    session: Arc<dyn AsSession>,
    /// `mcp --agent`: the agent every call acts for.
    agent: Option<String>,
    /// The tools with `from_agent_id` and the like required, and with them
    /// optional (a server pinned to an agent).
    tools: Arc<Vec<Tool>>,
    pinned_tools: Arc<Vec<Tool>>,
    /// What the client asked of `notifications/message` (`logging/setLevel`).
    pub(crate) wants: Arc<Wants>,
}

impl McpServer {
    pub(crate) fn new(session: Arc<dyn AsSession>, agent: Option<String>) -> McpServer {
        McpServer {
            session,
            agent,
            tools: Arc::new(tools(false)),
            pinned_tools: Arc::new(tools(true)),
            wants: Arc::default(),
        }
    }

    /// Whom a request acts for: the token's principal over HTTP, else the
    /// agent the server was started for.
    fn caller(&self, context: &RequestContext<RoleServer>) -> Whom {
        let principal = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Principal>());
        // The request's span (`serve`'s), which the transport's task does
        // not carry as the current context.
        let span = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<opentelemetry::Context>())
            .cloned();
        match principal {
            Some(principal) => Whom {
                span,
                agent: principal.acting_agent().map(str::to_owned),
                own_only: true,
                principal: Some(principal.clone()),
            },
            None => Whom {
                span,
                agent: self.agent.clone(),
                own_only: false,
                principal: None,
            },
        }
    }

    /// One tool call through `tools::answer`, on the blocking pool.
    async fn answer(&self, tool: String, request: Map<String, Value>, whom: Whom) -> Result<Value> {
        let session = Arc::clone(&self.session);
        // A request's span, where the transport kept it (`serve`).
        let cx = whom
            .span
            .clone()
            .unwrap_or_else(opentelemetry::Context::current);
        tokio::task::spawn_blocking(move || {
            let _entered = cx.attach();
            let caller = Caller {
                agent: whom.agent.as_deref(),
                own_only: whom.own_only && whom.agent.is_some(),
            };
            let session = session.session();
            match &whom.principal {
                Some(principal) => crate::session::as_principal(session, principal, false, || {
                    crate::tools::answer(session, &tool, request, caller)
                }),
                None => crate::tools::answer(session, &tool, request, caller),
            }
        })
        .await
        .unwrap_or_else(|e| {
            Err(Error::new(
                ErrorCode::Internal,
                format!("the tool call did not finish: {e}"),
            ))
        })
    }
}

/// Whether the client wants `notifications/message` at level notice: it
/// does unless it set a higher level (`logging/setLevel`).
#[derive(Debug, Default)]
pub(crate) struct Wants {
    quieter_than_notice: AtomicBool,
}

impl Wants {
    pub(crate) fn set_quieter_than_notice(&self, quieter: bool) {
        self.quieter_than_notice.store(quieter, Ordering::Relaxed);
    }

    pub(crate) fn notices(&self) -> bool {
        !self.quieter_than_notice.load(Ordering::Relaxed)
    }
}

/// Whom one MCP request acts for.
struct Whom {
    /// The HTTP request's span, for the tool call's to nest under.
    span: Option<opentelemetry::Context>,
    agent: Option<String>,
    /// A `serve` token: reads bound to the agent's own discussions.
    own_only: bool,
    /// The verified token (`serve`): written on the records the call
    /// appends, and checked again in each of its reads and writes.
    principal: Option<Principal>,
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder().enable_tools().build();
        // A session of one agent (`mcp --agent`) is pushed its reserved
        // turns: as log messages (deprecated by the protocol's SEP-2577,
        // still what hosts show) and on Claude Code's channel.
        if self.agent.is_some() {
            #[allow(deprecated)]
            {
                capabilities.logging = Some(Default::default());
            }
            capabilities.experimental = Some(
                [("claude/channel".to_owned(), Default::default())]
                    .into_iter()
                    .collect(),
            );
        }
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("discuss", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        let tools = match self.caller(&context).agent {
            Some(_) => &self.pinned_tools,
            None => &self.tools,
        };
        Ok(ListToolsResult::with_all_items(tools.to_vec()))
    }

    #[allow(deprecated)] // logging/setLevel (SEP-2577), still what hosts send
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<(), ErrorData> {
        use rmcp::model::LoggingLevel::*;
        let quieter = !matches!(request.level, Debug | Info | Notice);
        self.wants.set_quieter_than_notice(quieter);
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        // An unknown tool is a protocol error (-32602), as the protocol
        // says; every refusal of a known tool is the tool's own answer.
        if crate::tools::find(&request.name).is_none() {
            let err = Error::new(
                ErrorCode::InvalidArgument,
                format!("unknown tool {:?}", request.name),
            )
            .detail("tool", request.name.as_ref())
            .hint(format!("tools: {}", crate::tools::names()));
            return Err(ErrorData::invalid_params(
                err.message.clone(),
                Some(err.to_json()),
            ));
        }
        let arguments = request.arguments.unwrap_or_default();
        let caller = self.caller(&context);
        let result = match self
            .answer(request.name.into_owned(), arguments, caller)
            .await
        {
            Ok(answer) => CallToolResult::structured(answer),
            // A refusal is the tool's answer, never a protocol error: the
            // agent reads the contract's code and the session goes on.
            Err(err) => CallToolResult::structured_error(err.to_json()),
        };
        Ok(CallToolResponse::Complete(result))
    }
}

/// The tools of the table with their annotations and schemas. Writes
/// only append to the ledger (nothing is ever overwritten or deleted), so
/// none is destructive; readers are read-only; none reaches beyond the
/// ledger.
fn tools(pinned: bool) -> Vec<Tool> {
    use rmcp::model::ToolAnnotations;
    crate::tools::TOOLS
        .iter()
        .map(|tool| {
            let read_only = tool.read_only();
            Tool::new(
                tool.name,
                tool.description,
                Arc::new(crate::tools::schema::input(tool, pinned)),
            )
            .with_annotations(
                ToolAnnotations::new()
                    .read_only(read_only)
                    .destructive(false)
                    .idempotent(read_only)
                    .open_world(false),
            )
            .with_raw_output_schema(Arc::new(crate::tools::schema::output(tool)))
        })
        .collect()
}
