//! The console (`cli.md`, "The console"): `serve` answering people. Pages
//! rendered on the server from the same answers the API gives (`list`,
//! `show`, `kill-switch status`, `quota show`, `token list`), a cookie
//! that carries the token (never a page, a URL or a log), and a small
//! script that refreshes a page's live parts when the ledger changes and
//! ticks its countdowns.
//!
//! - here: the routes, the sign-in, the same-origin check of every
//!   state change, and the headers every answer carries;
//! - `data`: what each page shows, read on the blocking pool, and the
//!   one copy of a page that all open consoles of one viewer share until
//!   the ledger changes;
//! - `pages`: the HTML (maud: escaped by default, checked when compiled).

mod data;
mod pages;
mod search;

use super::app::App;
use super::http::{query_pairs, single, status_of};
use crate::credentials::Principal;
use crate::error::{Error, ErrorCode, Result};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use std::time::Duration;

/// The cookie that carries the signed-in token.
const COOKIE: &str = "discuss_console";

/// Every answer's policy: scripts, styles and connections of this origin
/// only, no inline script, no frames, forms posted here only.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

pub(super) fn router() -> Router<App> {
    Router::new()
        .route("/", get(overview))
        .route("/login", get(login_form).post(sign_in))
        .route("/logout", post(sign_out))
        .route("/discussions", get(discussions))
        .route("/discussions/{id}", get(discussion))
        .route("/search", get(search::page))
        .route("/console/changes", get(changes))
        .route("/console/kill-switch", post(kill_switch))
        .route("/console/tokens/revoke", post(revoke))
        .route("/console/approvals", post(decide))
        .route("/assets/console.css", get(stylesheet))
        .route("/assets/console.js", get(script))
        .layer(axum::Extension(std::sync::Arc::new(data::Cache::default())))
        .layer(middleware::from_fn(protect))
}

/// The routes `routes::route_of` names in a span (a discussion's id is
/// `{id}`).
pub(super) fn route_of(path: &str) -> Option<&'static str> {
    const FIXED: [&str; 11] = [
        "/",
        "/login",
        "/logout",
        "/discussions",
        "/search",
        "/console/changes",
        "/console/kill-switch",
        "/console/tokens/revoke",
        "/console/approvals",
        "/assets/console.css",
        "/assets/console.js",
    ];
    if let Some(found) = FIXED.iter().find(|fixed| **fixed == path) {
        return Some(found);
    }
    path.strip_prefix("/discussions/")
        .filter(|id| !id.contains('/'))
        .map(|_| "/discussions/{id}")
}

/// The headers of every console answer: the policy, no sniffing, no
/// referrer to other origins (`no-referrer` would make a browser send
/// `Origin: null` with the console's own forms), no caching of pages that
/// show the ledger.
async fn protect(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

/// The token in the request's cookie.
fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, token)| token.trim().to_owned())
        .filter(|token| !token.is_empty())
}

/// The cookie that signs in with `token`, or (`None`) the one that signs
/// out. `Secure` when the server speaks TLS.
fn cookie(app: &App, token: Option<&str>) -> HeaderValue {
    let secure = if app.tls { "; Secure" } else { "" };
    let value = match token {
        Some(token) => format!("{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/{secure}"),
        None => format!("{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0{secure}"),
    };
    // A token is base64url or hex (`credentials::new_token`); anything
    // else was refused before a cookie is made of it.
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// A `303 See Other` to `location` (a path of this server).
fn see_other(location: &str) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(location) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

/// To the sign-in page; signing out a cookie whose token is no longer
/// good.
fn to_login(app: &App, sign_out: bool) -> Response {
    let mut response = see_other("/login");
    if sign_out {
        response
            .headers_mut()
            .insert(header::SET_COOKIE, cookie(app, None));
    }
    response
}

fn html(status: StatusCode, page: maud::Markup) -> Response {
    let mut response = Response::new(Body::from(page.into_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

/// An error as a page, with the HTTP status of its class.
fn error_page(err: &Error, principal: Option<&Principal>) -> Response {
    html(status_of(err.code), pages::error(err, principal))
}

/// The principal of the request's cookie, checked against the ledger as
/// it is now (a revoked or expired token is signed out here); else the
/// answer to give instead.
async fn signed_in(app: &App, headers: &HeaderMap) -> std::result::Result<Principal, Response> {
    let Some(token) = cookie_token(headers) else {
        return Err(to_login(app, false));
    };
    match principal_of(app, token).await {
        Ok(principal) => Ok(principal),
        Err(err) if err.code == ErrorCode::Unauthorized => Err(to_login(app, true)),
        Err(err) => Err(error_page(&err, None)),
    }
}

/// The principal of `token` as the ledger says now (a read of its own on
/// the blocking pool), or `unauthorized`.
async fn principal_of(app: &App, token: String) -> Result<Principal> {
    app.blocking(move |session| super::app::authenticate_now(session, Some(&token)))
        .await
}

/// Runs `page` for a signed-in viewer, its log line naming them.
async fn viewed<F: Future<Output = Response>>(
    app: &App,
    headers: &HeaderMap,
    page: impl FnOnce(Principal) -> F,
) -> Response {
    let principal = match signed_in(app, headers).await {
        Ok(principal) => principal,
        Err(response) => return response,
    };
    let logged = super::app::Logged::of(&principal);
    let mut response = page(principal).await;
    response.extensions_mut().insert(logged);
    response
}

/// A state change must come from a page of this server: `Origin` (which
/// browsers send with every POST) present and the server's own, whatever
/// `--allowed-origin` lets call the tools.
fn same_origin(app: &App, headers: &HeaderMap, uri: &Uri) -> Result<()> {
    app.allowed.check_own_origin(headers, uri)
}

/// A form body (`application/x-www-form-urlencoded`) within the limit, its
/// fields among `known`.
async fn form(app: &App, body: Body, known: &[&str]) -> Result<Vec<(String, String)>> {
    let bytes: Bytes = axum::body::to_bytes(body, app.max_body_bytes)
        .await
        .map_err(|_| super::http::too_large(app.max_body_bytes))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| Error::new(ErrorCode::InvalidArgument, "the form is not UTF-8"))?;
    query_pairs(Some(text), known)
}

async fn login_form(State(app): State<App>, headers: HeaderMap) -> Response {
    // Signed in already: the overview.
    if cookie_token(&headers).is_some() && signed_in(&app, &headers).await.is_ok() {
        return see_other("/");
    }
    html(StatusCode::OK, pages::login(None))
}

/// `POST /login` with `token=…`: the cookie when the token is good now.
async fn sign_in(State(app): State<App>, headers: HeaderMap, uri: Uri, body: Body) -> Response {
    if let Err(err) = same_origin(&app, &headers, &uri) {
        return error_page(&err, None);
    }
    let token = match form(&app, body, &["token"]).await {
        Ok(fields) => single(&fields, "token")
            .ok()
            .flatten()
            .map(|t| t.trim().to_owned()),
        Err(err) => return error_page(&err, None),
    };
    let Some(token) = token.filter(|t| !t.is_empty()) else {
        return html(
            StatusCode::BAD_REQUEST,
            pages::login(Some("Paste a token (dsk_…) to sign in.")),
        );
    };
    match principal_of(&app, token.clone()).await {
        Ok(principal) => {
            let mut response = see_other("/");
            response
                .headers_mut()
                .insert(header::SET_COOKIE, cookie(&app, Some(&token)));
            response
                .extensions_mut()
                .insert(super::app::Logged::of(&principal));
            response
        }
        Err(err) if err.code == ErrorCode::Unauthorized => html(
            StatusCode::UNAUTHORIZED,
            pages::login(Some(
                "That token does not sign in: it is unknown, revoked or expired.",
            )),
        ),
        Err(err) => error_page(&err, None),
    }
}

/// `POST /logout`, from a page of this server: a link or an image on
/// another site cannot sign an operator out.
async fn sign_out(State(app): State<App>, headers: HeaderMap, uri: Uri) -> Response {
    if let Err(err) = same_origin(&app, &headers, &uri) {
        return error_page(&err, None);
    }
    to_login(&app, true)
}

/// The pages read (`data::Cache`), the console's own.
type Pages = axum::Extension<std::sync::Arc<data::Cache>>;

/// `/`: the fleet at a glance.
async fn overview(State(app): State<App>, cache: Pages, headers: HeaderMap) -> Response {
    let shown = app.clone();
    viewed(&app, &headers, move |principal| async move {
        match data::page(&shown, &cache.0, &principal, data::Page::Overview).await {
            Ok(page) => html(StatusCode::OK, pages::overview(&page, &principal)),
            Err(err) => error_page(&err, Some(&principal)),
        }
    })
    .await
}

/// `/discussions?status=&agent=&fleet=&page=`: the list, newest first.
async fn discussions(
    State(app): State<App>,
    cache: Pages,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let shown = app.clone();
    viewed(&app, &headers, move |principal| async move {
        let filter = match data::Filter::of(uri.query()) {
            Ok(filter) => filter,
            Err(err) => return error_page(&err, Some(&principal)),
        };
        match data::page(
            &shown,
            &cache.0,
            &principal,
            data::Page::List(filter.clone()),
        )
        .await
        {
            Ok(page) => html(StatusCode::OK, pages::list(&page, &filter, &principal)),
            Err(err) => error_page(&err, Some(&principal)),
        }
    })
    .await
}

/// `/discussions/{id}`: one discussion (an agent's own only).
async fn discussion(
    State(app): State<App>,
    cache: Pages,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let shown = app.clone();
    viewed(&app, &headers, move |principal| async move {
        match data::page(&shown, &cache.0, &principal, data::Page::Discussion(id)).await {
            Ok(page) => html(StatusCode::OK, pages::discussion(&page, &principal)),
            Err(err) => error_page(&err, Some(&principal)),
        }
    })
    .await
}

/// `/console/changes`: an event each time the ledger changes (`changed`),
/// which the page answers by reading itself again; `signed-out` when the
/// token stops being good, then the end. It carries no record: what a
/// viewer may see is decided by the page it reads.
async fn changes(State(app): State<App>, headers: HeaderMap) -> Response {
    let principal = match signed_in(&app, &headers).await {
        Ok(principal) => principal,
        Err(_) => {
            return error_page(&crate::credentials::unauthorized(), None);
        }
    };
    let (sender, receiver) = tokio::sync::mpsc::channel::<std::io::Result<Bytes>>(4);
    tokio::spawn(follow_changes(app, principal, sender));
    super::http::event_stream(receiver)
}

/// Sends `changed` at each change the server's watcher sees (within its
/// tenth of a second), a comment every 15 s, and ends at the token's
/// revocation or expiry (within a second), or at the server's stop.
async fn follow_changes(
    app: App,
    principal: Principal,
    sender: tokio::sync::mpsc::Sender<std::io::Result<Bytes>>,
) {
    let mut seen = app.watcher.subscribe();
    let mut stopping = app.stopping.clone();
    let mut ticks = tokio::time::interval(Duration::from_secs(1));
    let mut keep_alive = tokio::time::interval(Duration::from_secs(15));
    // The first change seen is the state the page was rendered from.
    seen.borrow_and_update();
    if sender
        .send(Ok(Bytes::from_static(b"retry: 1000\n\n")))
        .await
        .is_err()
    {
        return;
    }
    loop {
        let event: &'static [u8] = tokio::select! {
            changed = seen.changed() => {
                if changed.is_err() {
                    return;
                }
                let good = super::events::token_is_good(&app, &principal, &seen.borrow_and_update());
                if good { b"event: changed\ndata: {}\n\n" } else { b"event: signed-out\ndata: {}\n\n" }
            }
            _ = ticks.tick() => {
                if super::events::token_is_good(&app, &principal, &seen.borrow()) {
                    continue;
                }
                b"event: signed-out\ndata: {}\n\n"
            }
            _ = keep_alive.tick() => b": still here\n\n",
            _ = stopping.changed() => return,
            () = sender.closed() => return,
        };
        if sender.send(Ok(Bytes::from_static(event))).await.is_err() {
            return;
        }
        if event.starts_with(b"event: signed-out") {
            return;
        }
    }
}

/// Where a control sends the browser back: a path of this server the form
/// named, else the overview.
fn back_to(fields: &[(String, String)]) -> String {
    single(fields, "back")
        .ok()
        .flatten()
        .filter(|path| path.starts_with('/') && !path.starts_with("//") && !path.contains('\\'))
        .unwrap_or("/")
        .to_owned()
}

/// An operator's change from a form: same origin, the cookie's operator,
/// then `write` with the token's id as the author; back to the page.
async fn control(
    app: App,
    headers: HeaderMap,
    uri: Uri,
    body: Body,
    known: &'static [&'static str],
    write: impl FnOnce(&crate::session::Session, &[(String, String)]) -> Result<()> + Send + 'static,
) -> Response {
    if let Err(err) = same_origin(&app, &headers, &uri) {
        return error_page(&err, None);
    }
    let shown = app.clone();
    viewed(&app, &headers, move |principal| async move {
        if !principal.is_operator() {
            let err = Error::new(
                ErrorCode::Forbidden,
                "only an operator changes switches and tokens and decides approvals",
            )
            .hint("sign in with an operator token (discuss token issue NAME --operator)");
            return error_page(&err, Some(&principal));
        }
        let fields = match form(&shown, body, known).await {
            Ok(fields) => fields,
            Err(err) => return error_page(&err, Some(&principal)),
        };
        let back = back_to(&fields);
        let author = principal.clone();
        let written = shown
            .blocking(move |session| {
                crate::session::as_principal(session, &author, true, || write(session, &fields))
            })
            .await;
        match written {
            Ok(()) => see_other(&back),
            Err(err) => error_page(&err, Some(&principal)),
        }
    })
    .await
}

/// `POST /console/kill-switch`: `engaged=true|false`, `scope=global|fleet|
/// agent|discussion`, `target=` (the fleet, agent or discussion),
/// `reason=`.
async fn kill_switch(State(app): State<App>, headers: HeaderMap, uri: Uri, body: Body) -> Response {
    const KNOWN: &[&str] = &["engaged", "scope", "target", "reason", "back"];
    control(app, headers, uri, body, KNOWN, |session, fields| {
        let field = |name: &str| single(fields, name).ok().flatten().map(str::trim);
        let engaged = match field("engaged") {
            Some("true") => true,
            Some("false") => false,
            _ => {
                return Err(
                    Error::new(ErrorCode::InvalidArgument, "engaged is true or false")
                        .detail("field", "engaged"),
                );
            }
        };
        let target = field("target").unwrap_or("").to_owned();
        let scope = match field("scope").unwrap_or("global") {
            // A name typed with "everything" chosen: never the whole fleet
            // halted while a name is filled in.
            "global" if engaged && !target.is_empty() => {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!(
                        "\"everything\" was chosen with the name {} typed: nothing was halted",
                        crate::escape::printable(&target, false)
                    ),
                )
                .detail("field", "target")
                .hint("choose a fleet, an agent or a discussion to halt that name alone, or clear the name to halt everything"));
            }
            "global" => None,
            "fleet" => Some(crate::record::Scope::Fleet(target)),
            "agent" => Some(crate::record::Scope::Agent(target)),
            "discussion" => Some(crate::record::Scope::Discussion(target)),
            other => {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!(
                        "scope is global, fleet, agent or discussion, not {:?}",
                        crate::escape::printable(other, false)
                    ),
                )
                .detail("field", "scope"));
            }
        };
        let reason = field("reason").filter(|r| !r.is_empty()).map(str::to_owned);
        crate::operations::admin::set_kill_switch(session, engaged, reason, scope).map(|_| ())
    })
    .await
}

/// `POST /console/tokens/revoke`: `token_id=tok_…`.
async fn revoke(State(app): State<App>, headers: HeaderMap, uri: Uri, body: Body) -> Response {
    control(
        app,
        headers,
        uri,
        body,
        &["token_id", "back"],
        |session, fields| {
            let token_id = single(fields, "token_id")?.unwrap_or("");
            crate::operations::admin::revoke_token(session, token_id).map(|_| ())
        },
    )
    .await
}

/// `POST /console/approvals`: `approval_id=`, `decision=grant|deny`,
/// `reason=` (required to deny).
async fn decide(State(app): State<App>, headers: HeaderMap, uri: Uri, body: Body) -> Response {
    const KNOWN: &[&str] = &["approval_id", "decision", "reason", "back"];
    control(app, headers, uri, body, KNOWN, |session, fields| {
        let field = |name: &str| single(fields, name).ok().flatten().map(str::trim);
        let granted = match field("decision") {
            Some("grant") => true,
            Some("deny") => false,
            _ => {
                return Err(
                    Error::new(ErrorCode::InvalidArgument, "decision is grant or deny")
                        .detail("field", "decision"),
                );
            }
        };
        let approval_id = field("approval_id").unwrap_or("");
        let reason = field("reason").map(str::to_owned);
        crate::operations::approvals::decide(session, approval_id, granted, reason).map(|_| ())
    })
    .await
}

/// The assets, inside the binary; cached for an hour (a new build's
/// pages name the same paths, so not longer).
fn asset(body: &'static str, media: &'static str) -> Response {
    let mut response = Response::new(Body::from(body));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=3600"),
    );
    response
}

async fn stylesheet() -> Response {
    asset(include_str!("console.css"), "text/css; charset=utf-8")
}

async fn script() -> Response {
    asset(include_str!("console.js"), "text/javascript; charset=utf-8")
}
