//! The console (`cli.md`, "The console: `discuss serve` for people"), in
//! a real browser (Debian's Chromium through ChromeDriver) and on the
//! wire: the sign-in and its cookie, pages that follow the ledger without
//! a reload, an agent's body shown as text, halts and revocations from the
//! page, cross-site posts refused, an agent's narrower view, and the pages
//! at 1280×800 and 390×844, kept as screenshots in `target/tmp/console/`.

use crate::common::browser::Browser;
use crate::common::http::{Reply, Served};
use crate::common::{ASK_A_TO_B, Env, reply_args, wake_argv};
use crate::serve::token;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

const WITHIN: Duration = Duration::from_secs(10);

fn base(server: &Served) -> String {
    format!("http://127.0.0.1:{}", server.port)
}

/// A form post as a page of the server itself would send it.
pub(crate) fn post_form(
    server: &Served,
    path: &str,
    cookie: Option<&str>,
    origin: Option<&str>,
    form: &str,
) -> Reply {
    let own = base(server);
    let host = format!("127.0.0.1:{}", server.port);
    let mut headers = vec![
        ("content-type", "application/x-www-form-urlencoded"),
        ("host", &host),
    ];
    let cookie = cookie.map(|token| format!("discuss_console={token}"));
    if let Some(cookie) = &cookie {
        headers.push(("cookie", cookie));
    }
    headers.push(("origin", origin.unwrap_or(&own)));
    server.request("POST", path, None, &headers, Some(form.as_bytes()))
}

pub(crate) fn get_page(server: &Served, path: &str, token: &str) -> Reply {
    let cookie = format!("discuss_console={token}");
    server.request("GET", path, None, &[("cookie", &cookie)], None)
}

/// Signs in from the login page, by keyboard: the token field has the
/// focus, the token is typed and Enter sends it.
pub(crate) fn sign_in(browser: &Browser, server: &Served, token: &str) {
    browser.goto(&format!("{}/login", base(server)));
    browser.wait_until(
        "document.activeElement && document.activeElement.id === 'token'",
        WITHIN,
    );
    browser.keys(&format!("{token}\u{e007}"));
    browser.wait_until(
        "location.pathname === '/' && !!document.getElementById('counts')",
        WITHIN,
    );
}

/// Waits until the page's stream of changes is open.
pub(crate) fn listening(browser: &Browser) {
    browser.wait_until(
        "document.getElementById('signal').dataset.state === 'live'",
        WITHIN,
    );
}

/// Waits until `condition` holds in the page, and checks it took less
/// than `limit`.
fn shows_within(browser: &Browser, condition: &str, limit: Duration) {
    let took = browser.wait_until(condition, WITHIN);
    assert!(took < limit, "{condition} after {took:?}, past {limit:?}");
}

pub(crate) fn token_id_of(env: &Env, agent: &str) -> String {
    let tokens = env.ok(&["token", "list"]);
    tokens["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|t| t["agent_id"] == agent)
        .map(|t| t["token_id"].as_str().unwrap().to_owned())
        .unwrap()
}

#[test]
fn signing_in_keeps_the_token_in_a_cookie_that_no_page_url_script_or_log_shows() {
    let mut env = Env::new();
    env.fleet();
    let (dsc, _) = env.ask(&[]);
    let ops = token(&env, &["ops", "--operator"]);
    let server = Served::start(&env, &[]);
    let pages = [
        "/".to_owned(),
        "/discussions".to_owned(),
        format!("/discussions/{dsc}"),
    ];
    // Without a cookie, every page sends the browser to the sign-in.
    for path in &pages {
        let answer = server.get(path, None);
        assert_eq!(
            (answer.status, answer.header("location")),
            (303, Some("/login")),
            "{path}"
        );
    }
    // A token that is not good: 401, no cookie, and it is not repeated.
    let wrong = post_form(&server, "/login", None, None, "token=dsk_not_a_token");
    assert_eq!(wrong.status, 401);
    assert!(wrong.header("set-cookie").is_none());
    assert!(!wrong.text().contains("dsk_not_a_token"));
    // The cookie: HttpOnly, SameSite=Strict, Path=/, not Secure in clear.
    let signed = post_form(&server, "/login", None, None, &format!("token={ops}"));
    assert_eq!((signed.status, signed.header("location")), (303, Some("/")));
    let cookie = signed.header("set-cookie").unwrap();
    let flags: Vec<&str> = cookie.split("; ").collect();
    assert_eq!(flags[0], format!("discuss_console={ops}"));
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(flags.contains(&flag), "{flag} in {cookie}");
    }
    assert!(!flags.contains(&"Secure"), "{cookie}");

    let Some(browser) = Browser::start(1280, 800) else {
        return;
    };
    sign_in(&browser, &server, &ops);
    assert_eq!(
        browser.eval("return document.cookie"),
        json!(""),
        "scripts cannot read it"
    );
    for path in &pages {
        browser.goto(&format!("{}{path}", base(&server)));
        browser.wait_until("!!document.querySelector('main')", WITHIN);
        let html = browser.eval("return document.documentElement.outerHTML");
        assert!(
            !html.as_str().unwrap().contains(&ops),
            "the token in {path}"
        );
        assert!(!browser.url().contains(&ops));
    }
    // Signing out clears the cookie: the pages ask for a token again.
    browser.click("form[action='/logout'] button");
    browser.wait_until("location.pathname === '/login'", WITHIN);
    browser.goto(&base(&server));
    browser.wait_until("location.pathname === '/login'", WITHIN);
    sign_in(&browser, &server, &ops);
    // Revoked: signed out at the next request, the cookie cleared.
    env.ok(&["token", "revoke", &token_id_of(&env, "ops")]);
    let answer = get_page(&server, "/", &ops);
    assert_eq!(
        (answer.status, answer.header("location")),
        (303, Some("/login"))
    );
    assert!(answer.header("set-cookie").unwrap().contains("Max-Age=0"));
    browser.goto(&format!("{}/discussions", base(&server)));
    browser.wait_until("location.pathname === '/login'", WITHIN);
    let log = server.log();
    assert!(
        log.iter().any(|l| l.starts_with("POST /login 303")),
        "{log:?}"
    );
    assert!(
        log.iter().all(|l| !l.contains(&ops)),
        "the token in the log: {log:?}"
    );

    // Expired: signed out alike, by a server whose clock is past it.
    let brief = token(&env, &["agent-a", "--expires-in-hours", "1"]);
    assert_eq!(get_page(&server, "/", &brief).status, 200);
    env.advance(2 * 3_600_000);
    let late = Served::start(&env, &[]);
    let answer = get_page(&late, "/", &brief);
    assert_eq!(
        (answer.status, answer.header("location")),
        (303, Some("/login"))
    );

    // Under TLS the cookie is Secure too.
    let (cert, key) = crate::serve::certificate(env.dir.path());
    let tls = Served::start(&env, &["--tls-cert", &cert, "--tls-key", &key]);
    let ops = token(&env, &["ops2", "--operator"]);
    let out = std::process::Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-D", "-", "--cacert", &cert])
        .args(["-H", &format!("Origin: https://127.0.0.1:{}", tls.port)])
        .args(["--data-urlencode", &format!("token={ops}")])
        .arg(format!("https://127.0.0.1:{}/login", tls.port))
        .output()
        .expect("curl is installed (.ci/run installs it)");
    let head = String::from_utf8_lossy(&out.stdout).to_ascii_lowercase();
    let cookie = head
        .lines()
        .find(|l| l.starts_with("set-cookie:"))
        .unwrap_or_else(|| panic!("{head}"));
    assert!(cookie.contains("; secure"), "{cookie}");
}

#[test]
fn an_open_page_follows_the_cli_and_shows_a_turn_running_out_without_a_reload() {
    let mut env = Env::new();
    env.fleet();
    let (dsc, root) = env.ask(&["--turn-timeout-ms", "1000"]);
    let ops = token(&env, &["ops", "--operator"]);
    let Some(browser) = Browser::start(1280, 800) else {
        return;
    };
    let started = Instant::now();
    let server = Served::start(&env, &[]);
    sign_in(&browser, &server, &ops);
    browser.goto(&format!("{}/discussions/{dsc}", base(&server)));
    listening(&browser);
    assert_eq!(
        browser.eval("return document.querySelector('main').dataset.status"),
        json!("open")
    );
    assert!(
        browser
            .eval("return document.getElementById('summary').innerText")
            .as_str()
            .unwrap()
            .contains("Conversation deadline")
    );
    // A mark that a navigation would lose.
    browser.eval("window.stillHere = true; return 1");
    // The CLI wakes agent-b at the server's time: the page shows the turn
    // and its countdown, then the deadman that no record says.
    env.advance(started.elapsed().as_millis() as i64);
    env.ok(&wake_argv("agent-b", &dsc, &root, &[], false));
    // Within the second the contract allows (30-100 ms here, after the
    // write is durable).
    shows_within(
        &browser,
        "document.querySelector('main').dataset.status === 'active' && !!document.querySelector('#summary [data-deadline-at]')",
        Duration::from_secs(1),
    );
    // The turn's second, then the page's next read.
    shows_within(
        &browser,
        "document.querySelector('main').dataset.status === 'deadman'",
        Duration::from_secs(4),
    );
    // An ended discussion says when it ended, not a deadline that passed
    // or never came.
    let summary = browser.eval("return document.getElementById('summary').innerText");
    let summary = summary.as_str().unwrap();
    assert!(
        summary.contains("Ended") && !summary.contains("Conversation deadline"),
        "{summary}"
    );
    assert_eq!(
        browser.eval("return window.stillHere === true"),
        json!(true),
        "no navigation"
    );
    assert!(
        browser
            .eval("return document.getElementById('timeline').innerText")
            .as_str()
            .unwrap()
            .contains("agent-b"),
    );
    // The overview, open beside it, counts it without a reload too.
    browser.goto(&base(&server));
    listening(&browser);
    browser.eval("window.stillHere = true; return 1");
    env.advance(started.elapsed().as_millis() as i64);
    env.ask(&[]);
    shows_within(
        &browser,
        "document.querySelector('.tile.status-open .n').textContent === '1'",
        Duration::from_secs(1),
    );
    assert_eq!(
        browser.eval("return window.stillHere === true"),
        json!(true)
    );
}

#[test]
fn what_an_agent_wrote_is_shown_as_text_under_a_policy_and_nothing_leaves_the_origin() {
    let env = Env::new();
    env.fleet();
    let hostile =
        r#"{"body":"<script>window.ran = 1</script><img src=x onerror=\"window.ran = 2\">"}"#;
    let mut ask = ASK_A_TO_B.to_vec();
    ask.push(hostile);
    let asked = env.ok(&ask);
    let dsc = asked["discussion_id"].as_str().unwrap().to_owned();
    let ops = token(&env, &["ops", "--operator"]);
    let server = Served::start(&env, &[]);
    for path in ["/login", "/assets/console.js"] {
        let policy = server
            .get(path, None)
            .header("content-security-policy")
            .unwrap()
            .to_owned();
        assert!(policy.contains("script-src 'self'"), "{policy}");
        assert!(!policy.contains("unsafe-inline"), "{policy}");
    }
    let page = get_page(&server, &format!("/discussions/{dsc}"), &ops);
    assert_eq!(page.status, 200);
    assert!(page.header("content-security-policy").is_some());
    let html = page.text();
    assert!(
        html.contains("&lt;script&gt;window.ran = 1&lt;/script&gt;"),
        "{html}"
    );
    assert!(!html.contains("<img"), "{html}");
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("//cdn"));

    let Some(browser) = Browser::start(1280, 800) else {
        return;
    };
    sign_in(&browser, &server, &ops);
    browser.goto(&format!("{}/discussions/{dsc}", base(&server)));
    listening(&browser);
    assert_eq!(browser.eval("return window.ran === undefined"), json!(true));
    assert_eq!(
        browser.eval("return document.querySelectorAll('main img, main script').length"),
        json!(0)
    );
    let body = browser.eval("return document.querySelector('pre.body').textContent");
    assert!(
        body.as_str().unwrap().contains("<img src=x onerror="),
        "{body}"
    );
    // Every request the page made went to its own origin.
    let requests = browser.eval(
        "return performance.getEntriesByType('resource').map(e => e.name).concat([location.href])",
    );
    let own = base(&server);
    for url in requests.as_array().unwrap() {
        assert!(
            url.as_str().unwrap().starts_with(&own),
            "{url} is not of {own}"
        );
    }
    assert!(
        requests.as_array().unwrap().len() >= 3,
        "the stylesheet, the script, the stream: {requests}"
    );
}

/// Fills the overview's halt form (`scope` of the select, its `target`,
/// the `reason`) and submits it.
fn engage_from_the_overview(browser: &Browser, scope: &str, target: &str, reason: &str) {
    browser.eval(&format!(
        "document.querySelector('form.engage select[name=scope]').value = '{scope}'; return 1"
    ));
    browser.type_into("form.engage input[name=target]", target);
    browser.type_into("form.engage input[name=reason]", reason);
    browser.click("form.engage button[type=submit]");
}

#[test]
fn an_operator_halts_and_releases_and_revokes_from_the_page_as_the_cli_would_record() {
    let env = Env::new();
    env.fleet();
    let (dsc, _) = env.ask(&[]);
    let ops = token(&env, &["ops", "--operator"]);
    let ops_id = token_id_of(&env, "ops");
    token(&env, &["agent-c"]);
    let agent_c = token_id_of(&env, "agent-c");
    let server = Served::start(&env, &[]);
    let Some(browser) = Browser::start(1280, 800) else {
        return;
    };
    sign_in(&browser, &server, &ops);
    listening(&browser);
    // A halt of agent-b, engaged from the overview's form.
    engage_from_the_overview(&browser, "agent", "agent-b", "runaway <loop>");
    browser.wait_until(
        "!!document.querySelector('#switches li[data-scope=agent]')",
        WITHIN,
    );
    let status = env.ok(&["kill-switch", "status"]);
    assert_eq!(status["scopes"][0]["scope"], json!({"agent": "agent-b"}));
    assert_eq!(status["scopes"][0]["reason"], "runaway <loop>");
    assert_eq!(
        status["scopes"][0]["changed_by"],
        ops_id.as_str(),
        "by names the token's id"
    );
    let record = env
        .records()
        .into_iter()
        .rev()
        .find(|r| r["kind"] == "kill_switch")
        .unwrap();
    assert_eq!(
        (record["by"].as_str(), record["token_id"].as_str()),
        (Some(ops_id.as_str()), Some(ops_id.as_str()))
    );
    // The discussion page says it is halted; the wake is refused.
    browser.goto(&format!("{}/discussions/{dsc}", base(&server)));
    browser.wait_until(
        "document.getElementById('summary').innerText.includes('runaway <loop>')",
        WITHIN,
    );
    // Released from the discussion's page.
    browser.click("#summary form[action='/console/kill-switch'] button");
    browser.wait_until(
        "location.pathname.startsWith('/discussions/') && !document.querySelector('.badge.halted')",
        WITHIN,
    );
    assert_eq!(env.ok(&["kill-switch", "status"])["scopes"], json!([]));
    // A token revoked from the overview.
    browser.goto(&base(&server));
    browser.click(&format!("tr[data-token-id='{agent_c}'] button"));
    browser.wait_until(&format!("document.querySelector(\"tr[data-token-id='{agent_c}']\").innerText.includes('revoked')"), WITHIN);
    let tokens = env.ok(&["token", "list"]);
    let revoked = tokens["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["token_id"] == agent_c.as_str())
        .unwrap();
    assert_eq!(revoked["state"], "revoked");
    // A halt the overview's form refuses: on a page that says why (kept
    // as a screenshot), and the ledger as it was.
    let before = env.ledger_bytes();
    let refused = |scope: &str, target: &str, says: &str, shot: &str| {
        browser.goto(&base(&server));
        engage_from_the_overview(&browser, scope, target, "refused");
        browser.wait_until(
            &format!("document.body.innerText.includes('{says}')"),
            WITHIN,
        );
        browser.screenshot(shot);
        assert_eq!(env.ledger_bytes(), before, "{scope} {target}");
    };
    // A mistyped name.
    refused(
        "fleet",
        "fleet-alpah",
        "no fleet fleet-alpah",
        "halt-refused-1280x800",
    );
    // "everything" with a name typed: the page says to choose the name's
    // scope or clear it.
    refused(
        "global",
        "agent-b",
        "nothing was halted",
        "halt-everything-with-a-name-1280x800",
    );
    assert_eq!(env.ok(&["kill-switch", "status"])["engaged"], json!(false));
    // A bad input is the contract's error, as a page, and changes nothing.
    let refused = post_form(
        &server,
        "/console/kill-switch",
        Some(&ops),
        None,
        "engaged=true&scope=agent&target=agent-b&reason=",
    );
    assert_eq!(refused.status, 400);
    assert!(
        refused.text().contains("invalid_argument"),
        "{}",
        refused.text()
    );
    let refused = post_form(
        &server,
        "/console/tokens/revoke",
        Some(&ops),
        None,
        "token_id=tok_00000000000000000000000000000000",
    );
    assert_eq!(refused.status, 404, "{}", refused.text());
    assert_eq!(env.ledger_bytes(), before);
}

/// A page on another origin (a port of its own: same site, so the
/// `SameSite` cookie goes with it), served once.
fn hostile_page(page: String) -> (u16, std::thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = [0u8; 4096];
        let _ = stream.read(&mut request);
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
            page.len()
        );
    });
    (port, served)
}

/// A page that posts a form to the console's kill-switch as soon as it is
/// opened.
fn posting_page(target: &str) -> String {
    format!(
        "<!doctype html><form id=f method=post action=\"{target}/console/kill-switch\">\
         <input name=engaged value=true><input name=scope value=global>\
         <input name=reason value=pwned></form>\
         <script>document.getElementById('f').submit()</script>"
    )
}

#[test]
fn a_cross_site_form_post_is_refused_and_changes_nothing() {
    let env = Env::new();
    env.fleet();
    let ops = token(&env, &["ops", "--operator"]);
    let server = Served::start(&env, &[]);
    let before = env.ledger_bytes();
    // On the wire: another Origin, or none, with the operator's cookie.
    let foreign = post_form(
        &server,
        "/console/kill-switch",
        Some(&ops),
        Some("http://evil.example"),
        "engaged=true&scope=global&reason=x",
    );
    assert_eq!(foreign.status, 403);
    let mut headers = vec![("content-type", "application/x-www-form-urlencoded")];
    let cookie = format!("discuss_console={ops}");
    headers.push(("cookie", &cookie));
    let bare = server.request(
        "POST",
        "/console/kill-switch",
        None,
        &headers,
        Some(b"engaged=true&scope=global&reason=x"),
    );
    assert_eq!(bare.status, 403, "{}", bare.text());
    assert_eq!(env.ledger_bytes(), before);

    // In the browser: signed in, then a page of another origin posts.
    let Some(browser) = Browser::start(1280, 800) else {
        return;
    };
    sign_in(&browser, &server, &ops);
    let (port, served) = hostile_page(posting_page(&base(&server)));
    browser.goto(&format!("http://127.0.0.1:{port}/"));
    served.join().unwrap();
    server.wait_for_log("POST /console/kill-switch 403");
    assert_eq!(env.ok(&["kill-switch", "status"])["engaged"], json!(false));
    assert_eq!(env.ledger_bytes(), before);
}

/// `--allowed-origin` lets a browser-based MCP host call the tools with a
/// token of its own; a page of that origin never acts with the console's
/// cookie. And signing out is a post from a page of this server: a link
/// or an image elsewhere (a `GET`, or a post of another origin) leaves the
/// operator signed in.
#[test]
fn an_allowed_origin_of_the_tools_cannot_change_or_sign_out_through_the_console() {
    let env = Env::new();
    env.fleet();
    let ops = token(&env, &["ops", "--operator"]);
    let other = token(&env, &["agent-a"]);
    let mcp_host = "http://127.0.0.1:3000";
    let server = Served::start(&env, &["--allowed-origin", mcp_host]);
    let before = env.ledger_bytes();
    for (path, form) in [
        (
            "/console/kill-switch",
            "engaged=false&scope=global&reason=x".to_owned(),
        ),
        (
            "/console/kill-switch",
            "engaged=true&scope=global&reason=x".to_owned(),
        ),
        (
            "/console/tokens/revoke",
            format!("token_id={}", token_id_of(&env, "agent-a")),
        ),
    ] {
        let refused = post_form(&server, path, Some(&ops), Some(mcp_host), &form);
        assert_eq!(refused.status, 403, "{path}: {}", refused.text());
        assert!(refused.text().contains("forbidden"), "{}", refused.text());
    }
    assert_eq!(env.ledger_bytes(), before);
    assert_eq!(get_page(&server, "/", &other).status, 200, "still good");
    // The same origin still reaches the tools, as it was allowed to.
    let cookie_less = server.request(
        "POST",
        "/v1/tools/list_discussions",
        Some(&other),
        &[("content-type", "application/json"), ("origin", mcp_host)],
        Some(b"{}"),
    );
    assert_eq!(cookie_less.status, 200, "{}", cookie_less.text());

    // Signing out: a GET is no way to it, nor a post of another origin
    // (neither clears the cookie); a post from the console's page does.
    let cookie = format!("discuss_console={ops}");
    let got = server.request("GET", "/logout", None, &[("cookie", &cookie)], None);
    assert_eq!(got.status, 405, "{}", got.text());
    assert!(got.header("set-cookie").is_none());
    for origin in [mcp_host, "http://evil.example"] {
        let foreign = post_form(&server, "/logout", Some(&ops), Some(origin), "");
        assert_eq!(foreign.status, 403, "{origin}: {}", foreign.text());
        assert!(foreign.header("set-cookie").is_none());
    }
    let own = post_form(&server, "/logout", Some(&ops), None, "");
    assert_eq!((own.status, own.header("location")), (303, Some("/login")));
    assert!(own.header("set-cookie").unwrap().contains("Max-Age=0"));

    // In the browser: a page elsewhere that shows an image of /logout
    // leaves the operator on the overview.
    let Some(browser) = Browser::start(1280, 800) else {
        return;
    };
    sign_in(&browser, &server, &ops);
    let (port, served) = hostile_page(format!(
        "<!doctype html><img src=\"{}/logout\" onerror=\"document.title='tried'\">",
        base(&server)
    ));
    browser.goto(&format!("http://127.0.0.1:{port}/"));
    served.join().unwrap();
    browser.wait_until("document.title === 'tried'", WITHIN);
    server.wait_for_log("GET /logout 405");
    browser.goto(&base(&server));
    browser.wait_until(
        "location.pathname === '/' && !!document.getElementById('counts')",
        WITHIN,
    );
}

#[test]
fn an_agent_sees_its_own_discussions_only_and_changes_nothing() {
    let env = Env::new();
    env.fleet();
    let (theirs, _) = env.ask(&[]);
    let own = env.ok(&[
        "ask",
        "--from",
        "agent-c",
        "--to",
        "agent-a",
        "--fleet",
        "fleet-alpha",
        "--payload",
        r#"{"body":"mine"}"#,
    ])["discussion_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let c = token(&env, &["agent-c"]);
    env.ok(&[
        "kill-switch",
        "on",
        "--agent",
        "agent-b",
        "--reason",
        "b's own trouble",
    ]);
    env.ok(&[
        "kill-switch",
        "on",
        "--agent",
        "agent-c",
        "--reason",
        "c loops",
    ]);
    let server = Served::start(&env, &[]);
    let stranger = get_page(&server, &format!("/discussions/{theirs}"), &c);
    assert_eq!(stranger.status, 404);
    assert!(stranger.text().contains("unknown_discussion"));
    assert!(!stranger.text().contains("agent-b"));
    let before = env.ledger_bytes();
    let refused = post_form(
        &server,
        "/console/kill-switch",
        Some(&c),
        None,
        "engaged=true&scope=global&reason=x",
    );
    assert_eq!(refused.status, 403);
    assert_eq!(env.ledger_bytes(), before);

    let Some(browser) = Browser::start(1280, 800) else {
        return;
    };
    sign_in(&browser, &server, &c);
    let rows = browser.eval("return [...document.querySelectorAll('[data-discussion-id]')].map(e => e.dataset.discussionId)");
    assert!(
        rows.as_array().unwrap().iter().all(|id| id == own.as_str()),
        "{rows}"
    );
    assert_eq!(
        browser.eval("return document.querySelector('.tile.status-open .n').textContent"),
        json!("1")
    );
    // The switches that cover it, not who else is halted.
    let halts = browser.eval("return document.getElementById('switches').innerText");
    assert!(halts.as_str().unwrap().contains("c loops"), "{halts}");
    assert!(!halts.as_str().unwrap().contains("agent-b"), "{halts}");
    assert_eq!(browser.eval("return document.querySelectorAll('form.engage, #tokens, form[action^=\"/console/\"]').length"), json!(0));
    browser.goto(&format!("{}/discussions", base(&server)));
    let listed = browser.eval("return [...document.querySelectorAll('tr[data-discussion-id]')].map(e => e.dataset.discussionId)");
    assert_eq!(listed, json!([own]));
    browser.goto(&format!("{}/discussions/{own}", base(&server)));
    assert_eq!(
        browser.eval("return document.querySelector('main').dataset.discussionId"),
        json!(own)
    );
}

/// A ledger with something of everything: an open discussion, a live
/// turn, a closed one, one escalated at its last turn, an agent halted.
fn a_busy_ledger(env: &Env) -> String {
    env.fleet();
    let (open, _) = env.ask(&[]);
    let (live, root) = env.ask(&["--turn-timeout-ms", "300000"]);
    env.wake(&live, "agent-b", &root);
    let (closed, root) = env.ask(&[]);
    let attempt = env.wake(&closed, "agent-b", &root);
    let payload = r#"{"answer":"Yes: split the token check from the session store, then move the tests.","files":["src/auth/mod.rs","src/auth/session.rs"]}"#;
    let mut args = reply_args(&closed, "agent-b", &attempt, &root, "result", payload);
    args.extend([
        "--close",
        "--usage",
        r#"{"input_tokens":1200,"output_tokens":340,"cost_usd":0.021}"#,
    ]);
    env.ok(&args);
    let (short, root) = env.ask(&["--max-turns", "2"]);
    let attempt = env.wake(&short, "agent-b", &root);
    env.ok(&reply_args(
        &short,
        "agent-b",
        &attempt,
        &root,
        "question",
        r#"{"body":"Which module?"}"#,
    ));
    env.ok(&[
        "kill-switch",
        "on",
        "--agent",
        "agent-c",
        "--reason",
        "looping on retries",
    ]);
    env.ok(&[
        "quota",
        "set",
        "20",
        "--tokens-per-hour",
        "50000",
        "--cost-usd-per-day",
        "5",
    ]);
    token(env, &["agent-a"]);
    let _ = open;
    closed
}

/// A busy ledger served, with an operator's token: the closed
/// discussion's id, the token and the server.
fn served_busy_ledger(env: &Env) -> (String, String, Served) {
    let closed = a_busy_ledger(env);
    let ops = token(env, &["ops", "--operator"]);
    let server = Served::start(env, &[]);
    (closed, ops, server)
}

/// Every page at `width` × `height` (in dark mode with `dark`) uses the
/// width it has and no more, and is kept as a screenshot.
fn every_page_fits(width: u32, height: u32, dark: bool) {
    let env = Env::new();
    let (closed, ops, server) = served_busy_ledger(&env);
    let switches: &[&str] = if dark { &["--force-dark-mode"] } else { &[] };
    let Some(browser) = Browser::start_with(width, height, switches) else {
        return;
    };
    let size = format!("{width}x{height}{}", if dark { "-dark" } else { "" });
    assert_eq!(
        browser.eval("return matchMedia('(prefers-color-scheme: dark)').matches"),
        json!(dark)
    );
    browser.goto(&format!("{}/login", base(&server)));
    browser.wait_until("!!document.getElementById('token')", WITHIN);
    browser.screenshot(&format!("login-{size}"));
    sign_in(&browser, &server, &ops);
    for (name, path) in [
        ("overview", "/".to_owned()),
        ("discussions", "/discussions".to_owned()),
        ("discussion", format!("/discussions/{closed}")),
    ] {
        browser.goto(&format!("{}{path}", base(&server)));
        listening(&browser);
        let width_used =
            browser.eval("return [document.documentElement.scrollWidth, window.innerWidth]");
        let (used, inner) = (
            width_used[0].as_i64().unwrap(),
            width_used[1].as_i64().unwrap(),
        );
        let wide = browser.eval(
            "return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > screen.width + 1).slice(0, 5).map(e => e.tagName + '.' + e.className)",
        );
        assert!(
            used <= inner,
            "{name} at {size} scrolls sideways: {used} > {inner}: {wide}"
        );
        assert_eq!(inner, i64::from(width), "the page is {width} wide: {wide}");
        // Nor does a table inside its box.
        let boxed = browser.eval(
            "return [...document.querySelectorAll('.scroll')].filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.parentElement.id || e.parentElement.tagName)",
        );
        assert_eq!(
            boxed,
            json!([]),
            "{name} at {size}: tables wider than their box"
        );
        browser.screenshot(&format!("{name}-{size}"));
        if width >= 500 {
            // The whole page too, for people to look at.
            let tall = browser.eval("return document.documentElement.scrollHeight");
            browser.resize(width, tall.as_u64().unwrap() as u32 + 120);
            browser.screenshot(&format!("{name}-{size}-whole"));
            browser.resize(width, height);
        }
    }
}

#[test]
fn every_page_fits_a_desktop_and_is_kept_as_a_screenshot() {
    every_page_fits(1280, 800, false);
}

#[test]
fn every_page_fits_a_phone_and_is_kept_as_a_screenshot() {
    every_page_fits(390, 844, false);
}

#[test]
fn every_page_fits_a_phone_in_dark_mode_and_is_kept_as_a_screenshot() {
    every_page_fits(390, 844, true);
}

#[test]
fn a_page_with_all_it_needs_weighs_under_150_kib_and_the_list_works_by_keyboard() {
    let env = Env::new();
    let (closed, ops, server) = served_busy_ledger(&env);
    // The weight of a page with all it needs.
    for path in ["/", "/discussions", &format!("/discussions/{closed}")] {
        let page = get_page(&server, path, &ops).body.len();
        let assets: usize = ["/assets/console.css", "/assets/console.js"]
            .iter()
            .map(|a| server.get(a, None).body.len())
            .sum();
        assert!(
            page + assets < 150 * 1024,
            "{path}: {page} + {assets} bytes"
        );
    }
    // By keyboard alone: to a discussion of the list and into it.
    let Some(browser) = Browser::start(1280, 800) else {
        return;
    };
    sign_in(&browser, &server, &ops);
    browser.goto(&format!("{}/discussions", base(&server)));
    let mut reached = false;
    for _ in 0..40 {
        browser.keys("\u{e004}");
        if browser.eval("return document.activeElement.matches('tr[data-status=closed] a.id')")
            == json!(true)
        {
            reached = true;
            break;
        }
    }
    assert!(reached, "Tab never reached the closed discussion's link");
    let outline = browser.eval("return getComputedStyle(document.activeElement).outlineStyle");
    assert_ne!(outline, json!("none"), "the focus is visible");
    browser.keys("\u{e007}");
    browser.wait_until(
        &format!("location.pathname === '/discussions/{closed}'"),
        WITHIN,
    );
    let shown: Value = browser.eval("return document.querySelector('main').dataset.status");
    assert_eq!(shown, json!("closed"));
}
