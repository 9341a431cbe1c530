//! Throwaway PostgreSQL clusters for the tests: a copy of one `initdb` (a
//! temporary folder each), `pg_ctl start` on 127.0.0.1 at a free port with
//! trust authentication, one database per test. One cluster is shared by the
//! tests of a binary; tests that stop their server or need TLS start their
//! own. As root (CI), the server runs as the `postgres` user, since
//! `initdb` refuses root.
//!
//! Without server binaries a test is skipped with a message on stderr —
//! except with `CI=true`, where a missing PostgreSQL fails the test.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use tempfile::TempDir;

pub(crate) struct Cluster {
    dir: TempDir,
    bin: PathBuf,
    pub port: u16,
}

static SHARED: OnceLock<Option<Cluster>> = OnceLock::new();
static DATABASES: AtomicU32 = AtomicU32::new(0);

/// The cluster the tests of this binary share; `None` (with a message)
/// when this machine has no PostgreSQL and CI is not asking for one.
pub(crate) fn shared() -> Option<&'static Cluster> {
    SHARED.get_or_init(|| Cluster::start(&[])).as_ref()
}

/// Where the server binaries are: `DISCUSS_TEST_PG_BIN`, else the newest
/// `/usr/lib/postgresql/*/bin`, else `pg_config --bindir`.
fn server_binaries() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DISCUSS_TEST_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    versions.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    if let Some(newest) = versions.pop() {
        return Some(newest);
    }
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    dir.join("initdb").exists().then_some(dir)
}

fn missing(why: &str) -> Option<Cluster> {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI needs PostgreSQL for these tests, and {why}");
    }
    eprintln!("SKIPPED: no PostgreSQL server here ({why}); CI=true makes this a failure");
    None
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Runs a server binary, as `postgres` when we are root.
fn server_command(bin: &Path, tool: &str) -> Command {
    if is_root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(bin.join(tool));
        cmd
    } else {
        Command::new(bin.join(tool))
    }
}

/// `dir` made the server's: as root, given to the `postgres` user it runs
/// as (`server_command`); `false` when there is no such user.
fn given_to_the_server(dir: &Path) -> bool {
    if !is_root() {
        return true;
    }
    let owner = Command::new("id").args(["-u", "postgres"]).output();
    let uid = owner
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok());
    let Some(uid) = uid else {
        return false;
    };
    std::os::unix::fs::chown(dir, Some(uid), None).expect("chown");
    true
}

/// The data folder of one `initdb` for every cluster of this process,
/// copied for each (an `initdb` is most of a cluster's start: 0.4 s of CPU
/// against 0.04 s for a copy on a tmpfs); removed by a watcher once the
/// process is gone.
fn template(bin: &Path) -> &'static Path {
    static TEMPLATE: OnceLock<PathBuf> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let dir = super::scratch("discuss-pg-template").keep();
        assert!(
            given_to_the_server(&dir),
            "a postgres user to run the server"
        );
        once_this_process_ends(&format!("rm -rf {}", dir.display()));
        let data = dir.join("data");
        super::succeeds(
            server_command(bin, "initdb")
                .args([
                    "-A",
                    "trust",
                    "-U",
                    "postgres",
                    "-E",
                    "UTF8",
                    "--no-sync",
                    "-D",
                ])
                .arg(&data),
            "initdb",
        );
        data
    })
}

/// Runs the shell `script` once this test process is gone, however it
/// ends, from a watcher outside it.
// Never waited for: it must outlive this process, whose end it waits
// for; init then reaps it.
#[allow(clippy::zombie_processes)]
fn once_this_process_ends(script: &str) {
    let watch = format!(
        "while kill -0 {} 2>/dev/null; do sleep 1; done; {script}",
        std::process::id()
    );
    // setsid: a signal to this process's group (a runner's timeout) must
    // not take the watcher along before it has done its work.
    Command::new("setsid")
        .args(["sh", "-c", &watch])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the watcher starts");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Cluster {
    /// A new cluster with `conf` lines added to its `postgresql.conf`.
    pub(crate) fn start(conf: &[&str]) -> Option<Cluster> {
        let Some(bin) = server_binaries() else {
            return missing("no initdb was found");
        };
        let dir = super::scratch("discuss-pg");
        if !given_to_the_server(dir.path()) {
            return missing("there is no postgres user to run the server");
        }
        let data = dir.path().join("data");
        // A copy of the one `initdb` of this process (owner and modes kept).
        super::succeeds(
            Command::new("cp").arg("-a").arg(template(&bin)).arg(&data),
            "copying the initdb template",
        );
        let mut settings = String::from(
            "\nfsync = off\nfull_page_writes = off\nmax_connections = 200\nlisten_addresses = '127.0.0.1'\n",
        );
        for line in conf {
            settings.push_str(line);
            settings.push('\n');
        }
        append_as_owner(&data.join("postgresql.conf"), &settings);
        let cluster = Cluster {
            port: free_port(),
            dir,
            bin,
        };
        cluster.start_server();
        cluster.watch_this_process();
        Some(cluster)
    }

    /// A streaming standby of this cluster (`pg_basebackup -R`), started
    /// on a port of its own; the primary must be running.
    pub(crate) fn standby(&self) -> Cluster {
        let dir = super::scratch("discuss-pg-standby");
        assert!(
            given_to_the_server(dir.path()),
            "a postgres user to run the server"
        );
        let data = dir.path().join("data");
        let port = self.port.to_string();
        super::succeeds(
            server_command(&self.bin, "pg_basebackup")
                .arg("-D")
                .arg(&data)
                .args([
                    "-R",
                    "-X",
                    "stream",
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &port,
                    "-U",
                    "postgres",
                ]),
            "pg_basebackup",
        );
        let standby = Cluster {
            port: free_port(),
            dir,
            bin: self.bin.clone(),
        };
        standby.start_server();
        standby.watch_this_process();
        standby
    }

    /// Stops the server at once, as a crash of its host would (no
    /// checkpoint, sessions cut).
    pub(crate) fn crash_server(&self) {
        let _ = server_command(&self.bin, "pg_ctl")
            .args(["-w", "-m", "immediate", "-D"])
            .arg(self.data())
            .arg("stop")
            .output();
    }

    /// Promotes a standby to a primary, and waits until it is one.
    pub(crate) fn promote(&self) {
        super::succeeds(
            server_command(&self.bin, "pg_ctl")
                .args(["-w", "-t", "60", "-D"])
                .arg(self.data())
                .arg("promote"),
            "pg_ctl promote",
        );
    }

    /// Adds settings to `postgresql.conf` (a restart applies them).
    pub(crate) fn configure(&self, settings: &str) {
        append_as_owner(&self.data().join("postgresql.conf"), settings);
    }

    pub(crate) fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub(crate) fn start_server(&self) {
        let log = self.dir.path().join("server.log");
        let options = format!("-p {} -k {}", self.port, self.dir.path().display());
        let out = server_command(&self.bin, "pg_ctl")
            .args(["-w", "-t", "60", "-D"])
            .arg(self.data())
            .arg("-l")
            .arg(&log)
            .args(["-o", &options, "start"])
            .output()
            .expect("pg_ctl runs");
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// Stops the server (`fast`: sessions are cut off, as an operator's
    /// restart would).
    pub(crate) fn stop_server(&self) {
        let _ = server_command(&self.bin, "pg_ctl")
            .args(["-w", "-m", "fast", "-D"])
            .arg(self.data())
            .arg("stop")
            .output();
    }

    /// The server goes down with this test process, however it ends: a
    /// watcher outside it stops the server and removes its folder once the
    /// process is gone (the shared cluster is never dropped).
    fn watch_this_process(&self) {
        let as_owner = if is_root() {
            "runuser -u postgres -- "
        } else {
            ""
        };
        once_this_process_ends(&format!(
            "{as_owner}{ctl} -D {data} -m immediate stop >/dev/null 2>&1; rm -rf {dir}",
            ctl = self.bin.join("pg_ctl").display(),
            data = self.data().display(),
            dir = self.dir.path().display(),
        ));
    }

    pub(crate) fn url(&self, database: &str) -> String {
        format!("postgresql://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// A new, empty database; its URL.
    pub(crate) fn database(&self) -> String {
        let name = format!(
            "t{}_{}",
            std::process::id(),
            DATABASES.fetch_add(1, Ordering::Relaxed)
        );
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    /// Runs SQL in `database` as the superuser, over the Unix socket (so
    /// whatever `pg_hba.conf` asks of TCP).
    pub(crate) fn sql(&self, database: &str, sql: &str) {
        let local = format!(
            "postgresql://postgres@/{database}?host={}&port={}",
            self.dir.path().display(),
            self.port
        );
        let mut client =
            postgres::Client::connect(&local, postgres::NoTls).expect("the test cluster answers");
        client.batch_execute(sql).expect("the SQL runs");
    }

    /// The first column of the rows of `query`, as text.
    pub(crate) fn query(&self, url: &str, query: &str) -> Vec<String> {
        let mut client =
            postgres::Client::connect(url, postgres::NoTls).expect("the test cluster answers");
        client
            .simple_query(query)
            .expect("the query runs")
            .into_iter()
            .filter_map(|m| match m {
                postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
                _ => None,
            })
            .collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = server_command(&self.bin, "pg_ctl")
            .args(["-w", "-m", "immediate", "-D"])
            .arg(self.data())
            .arg("stop")
            .output();
    }
}

/// Appends to a file of the server's, which belongs to `postgres`.
fn append_as_owner(path: &Path, text: &str) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("postgresql.conf");
    file.write_all(text.as_bytes()).expect("postgresql.conf");
}
