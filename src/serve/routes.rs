//! The endpoints (`cli.md`, "`discuss serve`"), the token check in front
//! of all of them but `/healthz`, and one log line per request.

use super::app::{App, Logged, authenticate_now};
use super::http::{error_response, json_object, json_response, query_pairs, single};
use super::operator::{fields_of, operator_write, strings, typed};
use crate::credentials::{self, Principal};
use crate::error::{Error, ErrorCode, Result};
use crate::output::{FleetView, KillSwitchView, QuotaView};
use crate::session::Session;
use crate::tools::Caller;
use crate::tools::mcp::{AsSession, McpServer};
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, Uri, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Instant;

/// A request's token, kept so that a refusal of it forgets the principal
/// the server remembered for it (the check itself goes by its token id).
#[derive(Clone)]
struct Presented(Arc<str>);

pub(super) fn router(app: App) -> Router {
    let session = Arc::clone(&app.session);
    let mcp = StreamableHttpService::new(
        move || {
            Ok(McpServer::new(
                Arc::new(Arc::clone(&session)) as Arc<dyn AsSession>,
                None,
            ))
        },
        Arc::new(LocalSessionManager::default()),
        app.mcp.clone(),
    );
    let guarded = Router::new()
        .route(
            "/mcp",
            axum::routing::post_service(mcp)
                .layer(middleware::from_fn_with_state(app.clone(), mcp_body))
                .get(mcp_without_stream)
                .delete(mcp_without_stream),
        )
        .route("/v1/tools/{tool}", post(tool))
        .route("/v1/discussions", get(list))
        .route("/v1/discussions/{id}", get(discussion))
        .route("/v1/inbox", get(inbox))
        .route("/v1/turn", get(turn))
        .route("/v1/search", get(super::search::find))
        .route("/v1/events", get(super::events::stream))
        .route("/v1/kill-switch", post(kill_switch))
        .route("/v1/fleets/{fleet}/agents", post(fleet))
        .route("/v1/quota", post(quota))
        .route("/v1/approvals", get(super::approvals::list))
        .route("/v1/approvals/{id}", post(super::approvals::decide))
        .route_layer(middleware::from_fn_with_state(app.clone(), authenticate))
        .route_layer(middleware::from_fn_with_state(app.clone(), check_origin));
    let console = super::console::router()
        .route_layer(middleware::from_fn_with_state(app.clone(), check_origin));
    Router::new()
        .route("/healthz", get(healthz))
        .merge(guarded)
        .merge(console)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(app.clone(), limit_body))
        .layer(middleware::from_fn(log))
        .layer(middleware::from_fn_with_state(app.clone(), trace))
        .with_state(app)
}

/// A request's route as the router names it: a discussion's id is
/// `{id}`; any path the router does not know is `/{unknown}` (the path a
/// stranger sends is not repeated).
fn route_of(path: &str) -> String {
    const FIXED: [&str; 10] = [
        "/healthz",
        "/mcp",
        "/v1/discussions",
        "/v1/inbox",
        "/v1/turn",
        "/v1/search",
        "/v1/events",
        "/v1/kill-switch",
        "/v1/quota",
        "/v1/approvals",
    ];
    if FIXED.contains(&path) {
        return path.to_owned();
    }
    if let Some(tool) = path.strip_prefix("/v1/tools/")
        && crate::tools::find(tool).is_some()
    {
        return path.to_owned();
    }
    if path
        .strip_prefix("/v1/discussions/")
        .is_some_and(|id| !id.contains('/'))
    {
        return "/v1/discussions/{id}".to_owned();
    }
    if path
        .strip_prefix("/v1/approvals/")
        .is_some_and(|id| !id.contains('/'))
    {
        return "/v1/approvals/{id}".to_owned();
    }
    if path.starts_with("/v1/fleets/") && path.ends_with("/agents") {
        return "/v1/fleets/{fleet}/agents".to_owned();
    }
    if let Some(route) = super::console::route_of(path) {
        return route.to_owned();
    }
    "/{unknown}".to_owned()
}

/// A server span for each request (when traces are on), continuing an
/// incoming `traceparent`: named for its method and route, with its
/// status; the tool calls it makes nest under it.
async fn trace(State(app): State<App>, mut request: Request, next: Next) -> Response {
    use opentelemetry::trace::FutureExt as _;
    let header = request
        .headers()
        .get("traceparent")
        .and_then(|value| value.to_str().ok());
    let route = route_of(request.uri().path());
    let method = request.method().as_str().to_owned();
    let span = crate::traces::start(
        format!("{method} {route}"),
        opentelemetry::trace::SpanKind::Server,
        crate::traces::Parent::Header(header),
    );
    if !span.is_on() {
        return next.run(request).await;
    }
    span.set("http.request.method", method);
    span.set("http.route", route);
    span.set("url.scheme", if app.tls { "https" } else { "http" });
    // The path as the route names it: a discussion's id, never a query.
    span.set(
        "url.path",
        crate::escape::printable(request.uri().path(), false).into_owned(),
    );
    let cx = span.context();
    // For handlers whose work runs on a task of its own (MCP's transport).
    request.extensions_mut().insert(cx.clone());
    let response = next.run(request).with_context(cx).await;
    let status = response.status().as_u16();
    span.set("http.response.status_code", i64::from(status));
    if status >= 500 {
        span.fail(&status.to_string());
    }
    response
}

/// One line per request on stderr: method, path, status, milliseconds,
/// agent. Never a token, a query string or a body. A request whose client
/// went away before its answer logs 499 (what it did, it finished).
async fn log(request: Request, next: Next) -> Response {
    let mut line = LogLine {
        started: Instant::now(),
        method: request.method().to_string(),
        path: crate::escape::printable(request.uri().path(), false).into_owned(),
        status: None,
        agent: None,
    };
    let response = next.run(request).await;
    line.status = Some(response.status().as_u16());
    line.agent = response.extensions().get::<Logged>().map(|l| l.0.clone());
    response
}

/// Written when the request ends, answered or dropped.
struct LogLine {
    started: Instant,
    method: String,
    path: String,
    status: Option<u16>,
    agent: Option<String>,
}

impl Drop for LogLine {
    fn drop(&mut self) {
        say!(
            "{} {} {} {}ms {}",
            self.method,
            self.path,
            self.status.unwrap_or(499),
            self.started.elapsed().as_millis(),
            self.agent.as_deref().unwrap_or("-")
        );
    }
}

/// A body declared over the limit is answered 413 before a byte of it is
/// read, on every path (the MCP endpoint's too).
async fn limit_body(State(app): State<App>, request: Request, next: Next) -> Response {
    if super::http::declared_length(request.headers())
        .is_some_and(|n| n > app.max_body_bytes as u64)
    {
        return error_response(&super::http::too_large(app.max_body_bytes));
    }
    next.run(request).await
}

/// `POST /mcp`'s body read here, within the limit and UTF-8, so that a
/// body over it (sent without a length) or bytes that are no text are the
/// contract's error object (413 `payload_too_large`, 415
/// `unsupported_media_type`), as on every other endpoint, before the MCP
/// transport sees it.
async fn mcp_body(State(app): State<App>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, app.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(_) => return error_response(&super::http::too_large(app.max_body_bytes)),
    };
    if let Err(e) = std::str::from_utf8(&bytes) {
        return error_response(
            &Error::new(
                ErrorCode::UnsupportedMediaType,
                format!("the body is not UTF-8 ({e}): /mcp takes JSON-RPC messages as JSON"),
            )
            .hint("send Content-Type: application/json with a UTF-8 body"),
        );
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// `403 forbidden` for a `Host` or `Origin` that is not this server's
/// (`origin.rs`), before the token is looked at.
async fn check_origin(State(app): State<App>, request: Request, next: Next) -> Response {
    if let Err(err) = app.allowed.check(request.headers(), request.uri()) {
        return error_response(&err);
    }
    next.run(request).await
}

/// The bearer token's principal, put in the request for the handlers (and
/// the MCP server); 401 for anything else, never saying why.
async fn authenticate(State(app): State<App>, mut request: Request, next: Next) -> Response {
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_owned())
        });
    // The tool calls and readers check a token seen before in their own
    // read; everything else (streams, MCP, the operator's) reads first.
    let path = request.uri().path();
    let gated = path.starts_with("/v1/tools/")
        || path.starts_with("/v1/discussions")
        || path == "/v1/inbox"
        || path == "/v1/turn";
    let digest = token.as_deref().map(credentials::digest);
    let seen = match (&digest, gated) {
        (Some(digest), true) => app.lock_known().get(digest).cloned(),
        _ => None,
    };
    let principal = match seen {
        Some(principal) => Ok(principal),
        None => {
            let token = token.clone();
            app.blocking(move |session| authenticate_now(session, token.as_deref()))
                .await
        }
    };
    if let (Ok(principal), Some(digest)) = (&principal, digest) {
        app.lock_known().insert(digest, principal.clone());
    }
    let principal = match principal {
        Ok(principal) => principal,
        // A ledger that cannot be read is said as it is (503, 500).
        Err(err) if err.code != ErrorCode::Unauthorized => return error_response(&err),
        Err(_) => return error_response(&credentials::unauthorized()),
    };
    let logged = Logged::of(&principal);
    request.extensions_mut().insert(principal);
    if let Some(token) = token.filter(|_| gated) {
        request.extensions_mut().insert(Presented(token.into()));
    }
    let mut response = next.run(request).await;
    response.extensions_mut().insert(logged);
    response
}

/// The caller a principal makes: an agent token acts as its agent alone.
fn caller(principal: &Principal) -> Caller<'_> {
    Caller {
        agent: principal.acting_agent(),
        own_only: !principal.is_operator(),
    }
}

/// `tools::answer` for `principal`, on the blocking pool. Its token is
/// checked in the operation's own read (under the lock, for a write);
/// when the operation read nothing that could check it (a refusal of its
/// input, a list from the summaries), in a read of its own before any
/// answer is given.
async fn call(
    app: &App,
    principal: Principal,
    presented: Option<Presented>,
    tool: &'static str,
    request: Map<String, Value>,
) -> Response {
    let known = Arc::clone(&app.known);
    let answer = app
        .blocking(move |session| {
            checked_answer(session, &principal, presented, tool, request, &known)
        })
        .await;
    match answer {
        Ok(answer) => json_response(&answer),
        // The one refusal of a bad token, whatever the operation said.
        Err(err) if err.code == ErrorCode::Unauthorized => {
            error_response(&credentials::unauthorized())
        }
        Err(err) => error_response(&err),
    }
}

/// `tools::answer` for `principal`, its token checked (`call`).
fn checked_answer(
    session: &Session,
    principal: &Principal,
    presented: Option<Presented>,
    tool: &'static str,
    request: Map<String, Value>,
    known: &std::sync::Mutex<std::collections::HashMap<String, Principal>>,
) -> Result<Value> {
    let Some(Presented(token)) = presented else {
        return crate::tools::answer(session, tool, request, caller(principal));
    };
    let answer = crate::session::as_principal(session, principal, false, || {
        crate::tools::answer(session, tool, request, caller(principal))
    });
    if matches!(&answer, Err(err) if err.code == ErrorCode::Unauthorized) {
        known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&credentials::digest(&token));
    }
    answer
}

async fn healthz(State(app): State<App>) -> Response {
    let read = app
        .blocking(|session| {
            session.ledger.view(&[])?;
            Ok(json!({
                "ok": true,
                "ledger": {"kind": session.ledger.kind(), "location": session.ledger.location()},
            }))
        })
        .await;
    match read {
        Ok(answer) => json_response(&answer),
        Err(err) => {
            let mut response = error_response(&err);
            *response.status_mut() = axum::http::StatusCode::SERVICE_UNAVAILABLE;
            response
        }
    }
}

/// `POST /v1/tools/{tool}`: `discuss call TOOL`'s request and answer.
async fn tool(
    State(app): State<App>,
    Path(name): Path<String>,
    axum::Extension(principal): axum::Extension<Principal>,
    presented: Option<axum::Extension<Presented>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let presented = presented.map(|p| p.0);
    let Some(tool) = crate::tools::find(&name) else {
        let err = Error::new(ErrorCode::NotFound, format!("no tool {name:?}"))
            .detail("tool", name.as_str())
            .hint(format!("tools: {}", crate::tools::names()));
        return refusal(&app, presented, principal, err).await;
    };
    let request = json_object(&headers, body, app.max_body_bytes).await;
    call_or_refuse(&app, principal, presented, tool.name, request).await
}

/// A refusal of a request before its operation ran: a token trusted from
/// before is checked first, so a revoked one hears only 401.
async fn refusal(
    app: &App,
    presented: Option<Presented>,
    principal: Principal,
    err: Error,
) -> Response {
    if let Some(Presented(token)) = presented {
        let found = app
            .blocking(move |session| authenticate_now(session, Some(&token)))
            .await;
        match found {
            Ok(found) if found == principal => {}
            Err(err) if err.code != ErrorCode::Unauthorized => return error_response(&err),
            _ => return error_response(&credentials::unauthorized()),
        }
    }
    error_response(&err)
}

/// `call` with a request read from the HTTP request, or the `refusal` of
/// what could not be read.
async fn call_or_refuse(
    app: &App,
    principal: Principal,
    presented: Option<Presented>,
    tool: &'static str,
    request: Result<Map<String, Value>>,
) -> Response {
    match request {
        Ok(request) => call(app, principal, presented, tool, request).await,
        Err(err) => refusal(app, presented, principal, err).await,
    }
}

/// `GET /v1/discussions/{id}[?include_receipts=false]`: `show --json`.
async fn discussion(
    State(app): State<App>,
    Path(id): Path<String>,
    axum::Extension(principal): axum::Extension<Principal>,
    presented: Option<axum::Extension<Presented>>,
    uri: Uri,
) -> Response {
    let request = (|| {
        let pairs = query_pairs(uri.query(), &["include_receipts"])?;
        let mut request = Map::new();
        request.insert("discussion_id".into(), id.into());
        if let Some(include) = single(&pairs, "include_receipts")? {
            request.insert(
                "include_receipts".into(),
                boolean("include_receipts", include)?,
            );
        }
        Ok::<_, Error>(request)
    })();
    call_or_refuse(
        &app,
        principal,
        presented.map(|p| p.0),
        "get_discussion",
        request,
    )
    .await
}

fn boolean(field: &str, text: &str) -> Result<Value> {
    match text {
        "true" => Ok(true.into()),
        "false" => Ok(false.into()),
        _ => Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("{field} is true or false, not {text:?}"),
        )
        .detail("field", field)),
    }
}

/// `GET /v1/discussions?status=S&agent=A&fleet=F`: `list --json`.
async fn list(
    State(app): State<App>,
    axum::Extension(principal): axum::Extension<Principal>,
    presented: Option<axum::Extension<Presented>>,
    uri: Uri,
) -> Response {
    let request = (|| {
        let pairs = query_pairs(uri.query(), &["status", "agent", "fleet"])?;
        let mut request = Map::new();
        let statuses: Vec<Value> = pairs
            .iter()
            .filter(|(k, _)| k == "status")
            .map(|(_, v)| Value::from(v.as_str()))
            .collect();
        request.insert("status".into(), statuses.into());
        if let Some(agent) = single(&pairs, "agent")? {
            request.insert("agent_id".into(), agent.into());
        }
        if let Some(fleet) = single(&pairs, "fleet")? {
            request.insert("fleet_id".into(), fleet.into());
        }
        Ok::<_, Error>(request)
    })();
    call_or_refuse(
        &app,
        principal,
        presented.map(|p| p.0),
        "list_discussions",
        request,
    )
    .await
}

/// `GET /v1/inbox[?agent=A]`: an agent token's own; the operator names one.
async fn inbox(
    State(app): State<App>,
    axum::Extension(principal): axum::Extension<Principal>,
    presented: Option<axum::Extension<Presented>>,
    uri: Uri,
) -> Response {
    let request = (|| {
        let pairs = query_pairs(uri.query(), &["agent"])?;
        let mut request = Map::new();
        if let Some(agent) = single(&pairs, "agent")? {
            request.insert("agent_id".into(), agent.into());
        }
        Ok::<_, Error>(request)
    })();
    call_or_refuse(&app, principal, presented.map(|p| p.0), "inbox", request).await
}

/// `GET /v1/turn[?wait_ms=N][&agent=A]`: `turn --json` (an agent
/// token's own turn; the operator names one), recording the pickup; none
/// after the wait is 404 `no_live_turn`.
async fn turn(
    State(app): State<App>,
    axum::Extension(principal): axum::Extension<Principal>,
    presented: Option<axum::Extension<Presented>>,
    uri: Uri,
) -> Response {
    let request = (|| {
        let pairs = query_pairs(uri.query(), &["agent", "wait_ms"])?;
        let mut request = Map::new();
        if let Some(agent) = single(&pairs, "agent")? {
            request.insert("agent_id".into(), agent.into());
        }
        if let Some(wait) = single(&pairs, "wait_ms")? {
            let ms = wait.parse::<u64>().map_err(|_| {
                Error::new(
                    ErrorCode::InvalidArgument,
                    format!("wait_ms is a number of ms, not {wait:?}"),
                )
                .detail("field", "wait_ms")
            })?;
            request.insert("wait_ms".into(), ms.into());
        }
        Ok::<_, Error>(request)
    })();
    call_or_refuse(
        &app,
        principal,
        presented.map(|p| p.0),
        "take_turn",
        request,
    )
    .await
}

/// `POST /v1/kill-switch {"engaged":bool,"reason":string}`.
async fn kill_switch(
    State(app): State<App>,
    axum::Extension(principal): axum::Extension<Principal>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    operator_write(app, principal, headers, body, |session, request| {
        fields_of(&request, &["engaged", "reason", "scope"])?;
        let engaged =
            typed(&request, "engaged", "true or false", Value::as_bool)?.ok_or_else(|| {
                Error::new(ErrorCode::InvalidArgument, "engaged is required")
                    .detail("field", "engaged")
            })?;
        let reason = typed(&request, "reason", "a string", Value::as_str)?.map(str::to_owned);
        // "global", absent or null: the global switch; else one of
        // {"fleet":F}, {"agent":A}, {"discussion":D}.
        let scope = match request.get("scope") {
            None | Some(Value::Null) => None,
            Some(Value::String(global)) if global == "global" => None,
            Some(given) => Some(
                serde_json::from_value::<crate::record::Scope>(given.clone()).map_err(|_| {
                    Error::new(
                        ErrorCode::InvalidArgument,
                        "scope must be \"global\" or one of {\"fleet\":F}, {\"agent\":A}, {\"discussion\":D}",
                    )
                    .detail("field", "scope")
                })?,
            ),
        };
        let global = crate::operations::admin::set_kill_switch(session, engaged, reason, scope)?;
        Ok(KillSwitchView::from(&global))
    })
    .await
}

/// `POST /v1/fleets/{fleet}/agents {"add":[…],"remove":[…]}`.
async fn fleet(
    State(app): State<App>,
    Path(fleet): Path<String>,
    axum::Extension(principal): axum::Extension<Principal>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    operator_write(app, principal, headers, body, move |session, request| {
        fields_of(&request, &["add", "remove"])?;
        let (add, remove) = (strings(&request, "add")?, strings(&request, "remove")?);
        let global = crate::operations::admin::change_fleet(session, &fleet, &add, &remove)?;
        Ok(FleetView {
            agents: global
                .members(&fleet)
                .map(|m| m.iter().cloned().collect())
                .unwrap_or_default(),
            fleet_id: fleet,
        })
    })
    .await
}

/// `POST /v1/quota {"wakes_per_hour":N,"tokens_per_hour":N,
/// "cost_usd_per_day":X,"agent_id":A,"allow_unknown_agent":bool}` (at
/// least one of the first three): `quota set`.
async fn quota(
    State(app): State<App>,
    axum::Extension(principal): axum::Extension<Principal>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    operator_write(app, principal, headers, body, |session, request| {
        fields_of(
            &request,
            &[
                "wakes_per_hour",
                "tokens_per_hour",
                "cost_usd_per_day",
                "agent_id",
                "allow_unknown_agent",
            ],
        )?;
        let wakes = typed(&request, "wakes_per_hour", "an integer", Value::as_i64)?;
        let allow_unknown_agent = typed(
            &request,
            "allow_unknown_agent",
            "true or false",
            Value::as_bool,
        )?
        .unwrap_or(false);
        let agent = typed(&request, "agent_id", "a string", Value::as_str)?;
        let given = |field: &str| request.get(field).filter(|v| !v.is_null());
        if let Some(cost @ Value::String(_)) = given("cost_usd_per_day") {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "cost_usd_per_day must be a number, e.g. 5.0",
            )
            .detail("field", "cost_usd_per_day")
            .detail("value", cost.clone()));
        }
        let quotas = crate::operations::admin::QuotaRequest {
            wakes_per_hour: wakes,
            tokens_per_hour: given("tokens_per_hour"),
            cost_usd_per_day: given("cost_usd_per_day"),
            allow_unknown_agent,
        };
        // Hints in the request's terms (its fields, not the CLI's flags).
        let (global, now) = crate::operations::admin::set_quota(session, agent, &quotas)
            .map_err(Error::for_tools)?;
        Ok(QuotaView::of(&global, now))
    })
    .await
}

async fn not_found(uri: Uri) -> Response {
    error_response(
        &Error::new(
            ErrorCode::NotFound,
            format!(
                "no endpoint {}",
                crate::escape::printable(uri.path(), false)
            ),
        )
        .hint("endpoints: /healthz, /mcp, /v1/tools/TOOL, /v1/discussions, /v1/inbox, /v1/events"),
    )
}

/// `GET` and `DELETE /mcp`: a stateless server offers no stream of its
/// own and no session to end (the transport allows 405 for both); the
/// answer is the contract's error object, as for every other path.
async fn mcp_without_stream(method: axum::http::Method) -> Response {
    let mut response = error_response(
        &Error::new(
            ErrorCode::MethodNotAllowed,
            format!("{method} is not taken by /mcp: this server is stateless, with no stream or session of its own"),
        )
        .hint("send each JSON-RPC message with POST /mcp"),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, axum::http::HeaderValue::from_static("POST"));
    response
}

async fn method_not_allowed(method: axum::http::Method, uri: Uri) -> Response {
    error_response(&Error::new(
        ErrorCode::MethodNotAllowed,
        format!(
            "{method} is not taken by {}",
            crate::escape::printable(uri.path(), false)
        ),
    ))
}
