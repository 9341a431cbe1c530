//! A real browser for the console's tests: Debian's Chromium, headless,
//! driven through its ChromeDriver (W3C WebDriver, the `fantoccini`
//! client). Each browser has a profile of its own and is closed with its
//! driver when dropped. Without Chromium a test is skipped with a message,
//! except with `CI=true`, where it fails (`.ci/run` installs both).

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

pub(crate) struct Browser {
    client: Option<fantoccini::Client>,
    runtime: tokio::runtime::Runtime,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// A headless Chromium with a window of `width`×`height`; `None` (the
    /// test skipped) when this machine has none and CI is not asking.
    pub(crate) fn start(width: u32, height: u32) -> Option<Browser> {
        Browser::start_with(width, height, &[])
    }

    /// `start`, with more of Chromium's switches.
    pub(crate) fn start_with(width: u32, height: u32, switches: &[&str]) -> Option<Browser> {
        if !std::path::Path::new(CHROMIUM).exists() || !std::path::Path::new(CHROMEDRIVER).exists()
        {
            let why = format!("{CHROMIUM} or {CHROMEDRIVER} is missing");
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("CI needs Chromium for the console's tests, and {why}");
            }
            eprintln!("SKIPPED: no browser here ({why}); CI=true makes this a failure");
            return None;
        }
        let profile = super::scratch("discuss-browser");
        let (driver, port) = start_driver(&profile);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let capabilities = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                // Background networking off: this machine's network is
                // closed, and the page's own requests are what is checked.
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--no-first-run", "--disable-quic",
                    "--disable-features=Translate,OptimizationHints,MediaRouter",
                    format!("--window-size={width},{height}"),
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            },
        });
        let mut capabilities = capabilities;
        // A desktop window is at least 500 px wide: narrower, the page is
        // shown as a phone would (its viewport, its pixel ratio, touch).
        if width < 500 {
            capabilities["goog:chromeOptions"]["mobileEmulation"] = json!({
                "deviceMetrics": {"width": width, "height": height, "pixelRatio": 3.0, "touch": true},
            });
        }
        if let Some(Value::Array(args)) = capabilities.pointer_mut("/goog:chromeOptions/args") {
            args.extend(switches.iter().map(|s| Value::from(*s)));
        }
        let Value::Object(capabilities) = capabilities else {
            unreachable!()
        };
        // A Chromium started beside several others on a busy machine now
        // and then does not answer its driver in time: a second try, told.
        let mut tries = 0;
        let client = loop {
            let session = runtime.block_on(
                fantoccini::ClientBuilder::new(
                    hyper_util::client::legacy::connect::HttpConnector::new(),
                )
                .capabilities(capabilities.clone())
                .connect(&format!("http://127.0.0.1:{port}")),
            );
            match session {
                Ok(client) => break client,
                Err(e) if tries < 2 => {
                    tries += 1;
                    eprintln!("no browser session yet ({e}); trying again");
                }
                Err(e) => panic!("no browser session: {e}"),
            }
        };
        let browser = Browser {
            client: Some(client),
            runtime,
            driver,
            _profile: profile,
        };
        Some(browser)
    }

    fn client(&self) -> &fantoccini::Client {
        self.client.as_ref().unwrap()
    }

    pub(crate) fn goto(&self, url: &str) {
        self.runtime
            .block_on(self.client().goto(url))
            .unwrap_or_else(|e| panic!("goto {url}: {e}"));
    }

    /// The page's address now.
    pub(crate) fn url(&self) -> String {
        self.runtime
            .block_on(self.client().current_url())
            .unwrap()
            .to_string()
    }

    /// The value of a script's `return` in the page.
    pub(crate) fn eval(&self, script: &str) -> Value {
        self.runtime
            .block_on(self.client().execute(script, Vec::new()))
            .unwrap_or_else(|e| panic!("script {script}: {e}"))
    }

    /// Waits (at most `within`) until `condition`, a script expression, is
    /// true; how long it took.
    pub(crate) fn wait_until(&self, condition: &str, within: Duration) -> Duration {
        let started = Instant::now();
        let script = format!("return !!({condition});");
        loop {
            if self.eval(&script) == Value::Bool(true) {
                return started.elapsed();
            }
            assert!(
                started.elapsed() < within,
                "not true within {within:?}: {condition}\npage: {}",
                self.eval("return document.body ? document.body.innerText : ''")
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Types `text` into the element `css` names, as keystrokes.
    pub(crate) fn type_into(&self, css: &str, text: &str) {
        let element = self.element(css);
        self.runtime.block_on(element.send_keys(text)).unwrap();
    }

    /// Clicks the element `css` names.
    pub(crate) fn click(&self, css: &str) {
        let element = self.element(css);
        self.runtime.block_on(element.click()).unwrap();
    }

    /// The element `css` names in the page.
    fn element(&self, css: &str) -> fantoccini::elements::Element {
        self.runtime
            .block_on(self.client().find(fantoccini::Locator::Css(css)))
            .unwrap_or_else(|e| panic!("no {css}: {e}"))
    }

    /// Keys sent to whatever has the focus (`\u{e004}` Tab, `\u{e007}`
    /// Enter: WebDriver's key codes).
    pub(crate) fn keys(&self, keys: &str) {
        self.runtime.block_on(async {
            let focused = self.client().active_element().await.unwrap();
            focused.send_keys(keys).await.unwrap();
        });
    }

    pub(crate) fn resize(&self, width: u32, height: u32) {
        self.runtime
            .block_on(self.client().set_window_size(width, height))
            .unwrap();
    }

    /// A screenshot of the page, kept as `target/tmp/console/NAME.png` for
    /// people to look at; its path.
    pub(crate) fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.runtime.block_on(self.client().screenshot()).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("console");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }
}

/// A ChromeDriver on a port of its own choosing, and that port. A driver
/// that ends before it names its port (seen once in CI among several
/// started at once) is started again, twice at most, and what it printed
/// is shown; the third such end fails the test with its output.
fn start_driver(profile: &tempfile::TempDir) -> (Child, u16) {
    let log = profile.path().join("chromedriver.log");
    let mut ends = Vec::new();
    for _ in 0..3 {
        // Chromium's own temporary files (its shared memory, with
        // --disable-dev-shm-usage) go beside its profile.
        let mut driver = Command::new(CHROMEDRIVER)
            .arg("--port=0")
            .env_clear()
            .env("TMPDIR", profile.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("chromedriver's log"))
            .spawn()
            .expect("chromedriver starts");
        let mut out = BufReader::new(driver.stdout.take().unwrap());
        let mut said = String::new();
        let mut line = String::new();
        let mut port = None;
        while out.read_line(&mut line).unwrap_or(0) > 0 {
            if let Some(rest) = line
                .trim()
                .strip_prefix("ChromeDriver was started successfully on port ")
            {
                port = rest.trim_end_matches('.').parse::<u16>().ok();
                break;
            }
            said.push_str(&line);
            line.clear();
        }
        if let Some(port) = port {
            // The rest of its output is read and dropped, so it never blocks.
            std::thread::spawn(move || for _ in out.lines() {});
            return (driver, port);
        }
        let _ = driver.kill();
        let status = driver.wait().map(|s| s.to_string()).unwrap_or_default();
        let stderr = std::fs::read_to_string(&log).unwrap_or_default();
        let end = format!(
            "chromedriver ended ({status}) without its port; stdout:\n{said}stderr:\n{stderr}"
        );
        eprintln!("{end}");
        ends.push(end);
    }
    panic!("chromedriver never said its port:\n{}", ends.join("\n"));
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = self.runtime.block_on(client.close());
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
