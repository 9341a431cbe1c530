//! Reaching the database: TLS with sslmode require and verify-ca, and the
//! documented grants (a reader cannot write).

use super::*;

/// Over TLS: a server that accepts only TLS connections is reached with
/// `sslmode=require` (the certificate not checked, as libpq does), with
/// `verify-ca` and `verify-full` against the CA that signed its
/// certificate; a CA that did not sign it is refused, and so is a
/// connection without TLS.
#[test]
fn tls_with_sslmode_require_and_verify_ca() {
    let Some(probe) = Cluster::start(&[]) else {
        return;
    };
    drop(probe);
    let certs = scratch("discuss-certs");
    let at = |name: &str| certs.path().join(name);
    // A CA, a server certificate it signs for 127.0.0.1, and a stranger CA.
    let openssl = |args: &[&str]| {
        succeeds(
            Command::new("openssl").args(args).current_dir(certs.path()),
            &format!("openssl {args:?}"),
        );
    };
    std::fs::write(
        at("ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    for ca in ["ca", "stranger"] {
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &format!("/CN={ca}"),
            "-keyout",
            &format!("{ca}.key"),
            "-out",
            &format!("{ca}.crt"),
        ]);
    }
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=discuss-test",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ]);
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "ext",
        "-out",
        "server.crt",
    ]);
    let (cert, key) = (at("server.crt"), at("server.key"));
    let cluster = Cluster::start(&[]).unwrap();
    let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(cluster.data()).unwrap());
    for (from, to) in [(&cert, "server.crt"), (&key, "server.key")] {
        let target = cluster.data().join(to);
        std::fs::copy(from, &target).unwrap();
        std::os::unix::fs::chown(&target, Some(owner), None).unwrap();
        std::fs::set_permissions(&target, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
    }
    cluster.configure("ssl = on\n");
    // Only TLS from 127.0.0.1.
    std::fs::write(
        cluster.data().join("pg_hba.conf"),
        "local all all trust\nhostssl all all 127.0.0.1/32 trust\n",
    )
    .unwrap();
    cluster.stop_server();
    cluster.start_server();
    let url = cluster.database();
    let mut env = Env::file();
    let ca = at("ca.crt");
    for mode in [
        "sslmode=require".to_owned(),
        format!("sslmode=verify-ca&sslrootcert={}", ca.display()),
        format!("sslmode=verify-full&sslrootcert={}", ca.display()),
    ] {
        env.pg = Some(format!("{url}?{mode}"));
        env.fleet();
        assert_eq!(env.ok(&["ledger", "info"])["kind"], "postgres", "{mode}");
    }
    // verify-ca checks who signed, not the name: the certificate names
    // 127.0.0.1, the URL localhost, which verify-full refuses.
    let by_name = url.replacen("127.0.0.1", "localhost", 1);
    env.pg = Some(format!(
        "{by_name}?sslmode=verify-ca&sslrootcert={}",
        ca.display()
    ));
    assert_eq!(
        env.ok(&["fleet", "list"])["fleets"][0]["fleet_id"],
        "fleet-alpha"
    );
    env.pg = Some(format!(
        "{by_name}?sslmode=verify-full&sslrootcert={}",
        ca.display()
    ));
    let out = env.run(&["--json", "fleet", "list"]);
    assert_eq!(out.error()["code"], "ledger_unavailable", "{}", out.stderr);
    // A certificate no trusted CA signed is refused.
    env.pg = Some(format!(
        "{url}?sslmode=verify-ca&sslrootcert={}",
        at("stranger.crt").display()
    ));
    let out = env.run(&["--json", "fleet", "list"]);
    assert_eq!(out.error()["code"], "ledger_unavailable", "{}", out.stderr);
    assert!(out.stderr.contains("certificate"), "{}", out.stderr);
    env.pg = Some(format!("{url}?sslmode=disable"));
    let out = env.run(&["--json", "fleet", "list"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert_eq!(
        out.error()["code"],
        "ledger_unavailable",
        "refused: {}",
        out.stderr
    );
}

/// The grants `docs/scale-out.md` gives are enough: an agent role with
/// SELECT and INSERT on the lines and SELECT and UPDATE on the state runs
/// a whole discussion once the owner made the tables; a role that may only
/// read reads, and its write is refused (`io_error`, SQLSTATE 42501) with
/// nothing written.
#[test]
fn the_documented_grants_are_enough_and_a_reader_cannot_write() {
    let Some(cluster) = crate::common::postgres::shared() else {
        return;
    };
    let mut owner = Env::file();
    let url = cluster.database();
    owner.pg = Some(url.clone());
    owner.fleet();
    let database = url.rsplit('/').next().unwrap().to_owned();
    let (agent, reader) = (format!("{database}_agent"), format!("{database}_reader"));
    cluster.sql(
        &database,
        &format!(
            "CREATE ROLE {agent} LOGIN; CREATE ROLE {reader} LOGIN;
             GRANT CONNECT ON DATABASE {database} TO {agent}, {reader};
             GRANT SELECT, INSERT ON discuss_lines TO {agent};
             GRANT SELECT, UPDATE ON discuss_state TO {agent};
             GRANT SELECT, INSERT, UPDATE, DELETE ON discuss_summaries TO {agent};
             GRANT SELECT ON discuss_lines, discuss_state, discuss_summaries TO {reader};"
        ),
    );
    let as_role = |role: &str| {
        let mut env = Env::file();
        env.pg = Some(url.replacen("postgres@", &format!("{role}@"), 1));
        env
    };
    let agent_env = as_role(&agent);
    let (dsc, root) = agent_env.ask(&[]);
    let attempt = agent_env.wake(&dsc, "agent-b", &root);
    agent_env.reply(&dsc, "agent-b", &attempt, &root, "result", true);
    assert_eq!(agent_env.status(&dsc), "closed");

    let reader_env = as_role(&reader);
    assert_eq!(reader_env.status(&dsc), "closed");
    // The agent's writes kept the summaries, which the reader's list reads.
    let listed = reader_env.ok(&["list"]);
    assert_eq!(listed["discussions"][0]["status"], "closed");
    let state: String = ::postgres::Client::connect(&url, ::postgres::NoTls)
        .unwrap()
        .query_one("SELECT summary FROM discuss_state", &[])
        .unwrap()
        .get(0);
    let lines = serde_json::from_str::<Value>(&state).unwrap()["summarized"].clone();
    assert!(lines.as_u64().is_some_and(|n| n > 0), "{state}");
    assert_eq!(reader_env.run(&["verify"]).status, 0);
    let mut args = ASK_A_TO_B.to_vec();
    args.push(r#"{"body":"may I?"}"#);
    let err = reader_env.fails(&args, "io_error", 1);
    assert_eq!(err["details"]["sqlstate"], "42501", "{err}");
}

/// A URL naming a database its server does not have: said so, with the
/// `createdb` that makes it (not "check the URL"), and for a read and a
/// write alike.
#[test]
fn a_database_that_does_not_exist_is_named_with_createdb() {
    let Some(cluster) = crate::common::postgres::shared() else {
        return;
    };
    let mut env = Env::file();
    env.pg = Some(cluster.url("no_such_ledger_db"));
    for args in [
        &["--json", "fleet", "list"][..],
        &["--json", "fleet", "add", "fleet-alpha", "agent-a"],
    ] {
        let out = env.run(args);
        assert_eq!(out.status, 1, "{}", out.stderr);
        let err = out.error();
        assert_eq!(err["code"], "ledger_unavailable", "{}", out.stderr);
        assert!(
            err["message"].as_str().unwrap().contains("does not exist"),
            "{err}"
        );
        assert_eq!(
            err["hints"][0],
            "create it once: `createdb no_such_ledger_db` on the server (or CREATE DATABASE \"no_such_ledger_db\"); discuss makes its tables at the first write"
        );
    }
}
