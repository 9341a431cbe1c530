//! The connection to the database: opened on first use and kept, given
//! up when it breaks, and the transactions readers and writers run in.

use super::*;

/// The most connections open at once (`serve`'s pool; a command uses one
/// or two): more requests than this wait for one to be free, so a burst
/// (200 open consoles reading their page at once) never exhausts the
/// database's `max_connections`.
const MAX_CONNECTIONS: usize = 16;

/// How long a call waits for a free connection before it says the
/// database is busy.
const WAIT_FOR_CONNECTION: Duration = Duration::from_secs(30);

/// The connections of a ledger: those not in use, and how many are open.
#[derive(Default)]
pub(super) struct Pool {
    idle: Vec<Client>,
    open: usize,
}

/// A connection in use by this thread; should its work panic, the
/// connection is dropped with the stack and its place is given up here.
struct InUse<'a> {
    ledger: &'a PgLedger,
}

impl<'a> InUse<'a> {
    fn new(ledger: &'a PgLedger) -> InUse<'a> {
        HELD.set(HELD.get() + 1);
        InUse { ledger }
    }
}

impl Drop for InUse<'_> {
    fn drop(&mut self) {
        HELD.set(HELD.get() - 1);
        if std::thread::panicking() {
            self.ledger.give_back(None);
        }
    }
}

thread_local! {
    /// Connections this thread holds: a call made inside another's work
    /// never waits for a connection (it could wait for itself).
    static HELD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl PgLedger {
    /// Runs `work` on an idle connection, or a new one when none is idle
    /// and fewer than `MAX_CONNECTIONS` are open, else waits for one; it is
    /// kept for the next call unless it broke, so the next call opens
    /// another. Calls on several threads each hold their own connection.
    pub(super) fn session<T>(&self, work: impl FnOnce(&mut Client) -> Step<T>) -> Result<T> {
        let mut client = match self.take()? {
            Some(client) => client,
            None => match self.connect() {
                Ok(client) => client,
                Err(err) => {
                    self.give_back(None);
                    return Err(err);
                }
            },
        };
        let outcome = {
            let _held = InUse::new(self);
            work(&mut client)
        };
        let (outcome, keep) = match outcome {
            Ok(done) => (Ok(done), true),
            Err(Fail::Discuss(err)) => (Err(err), true),
            Err(Fail::Db(err)) => {
                let keep = !client.is_closed() && err.as_db_error().is_some();
                (Err(self.db_error(&err)), keep)
            }
        };
        self.give_back(keep.then_some(client));
        outcome
    }

    /// An idle connection, or `None` with a place for a new one counted.
    fn take(&self) -> Result<Option<Client>> {
        let nested = HELD.get() > 0;
        let started = std::time::Instant::now();
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            while let Some(client) = pool.idle.pop() {
                if !client.is_closed() {
                    return Ok(Some(client));
                }
                pool.open -= 1;
            }
            if pool.open < MAX_CONNECTIONS || nested {
                pool.open += 1;
                return Ok(None);
            }
            let left = WAIT_FOR_CONNECTION.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Err(Error::new(
                    ErrorCode::LedgerUnavailable,
                    format!(
                        "all {MAX_CONNECTIONS} connections to the ledger database {} stayed busy for {} s",
                        self.location.shown,
                        WAIT_FOR_CONNECTION.as_secs()
                    ),
                ));
            }
            pool = self
                .freed
                .wait_timeout(pool, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// A connection back to the pool, or (`None`) its place given up.
    /// (`InUse` gives up the place of one whose work panicked.)
    fn give_back(&self, client: Option<Client>) {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        match client {
            Some(client) if pool.idle.len() < MAX_CONNECTIONS => pool.idle.push(client),
            _ => pool.open -= 1,
        }
        drop(pool);
        self.freed.notify_one();
    }

    /// `session` for a write: a failure to reach or use the database says
    /// that nothing was written (a reader's says nothing of writes).
    pub(super) fn writing_session<T>(
        &self,
        work: impl FnOnce(&mut Client) -> Step<T>,
    ) -> Result<T> {
        self.session(work).map_err(|mut err| {
            let lost = matches!(err.code, ErrorCode::LedgerUnavailable | ErrorCode::IoError);
            if lost && !err.message.contains("nothing was written") {
                err.message.push_str("; nothing was written");
            }
            err
        })
    }

    /// A new connection, within `connect_timeout` from start to finish:
    /// the client bounds only the TCP connect with it, and a server that
    /// accepts but never answers would otherwise hang the command.
    pub(super) fn connect(&self) -> Result<Client> {
        let config = self.location.config.clone();
        let tls = self.location.tls();
        let limit = config
            .get_connect_timeout()
            .copied()
            .unwrap_or(Duration::from_secs(
                location::DEFAULT_CONNECT_TIMEOUT_S.into(),
            ));
        let (sender, answer) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(config.connect(tls));
        });
        match answer.recv_timeout(limit) {
            // Refused at the door (no such database or role, pg_hba.conf,
            // TLS) is as unreachable as a server that is down.
            Ok(connected) => connected.map_err(|e| self.unavailable(&e)),
            // The thread is left to the server's answer or the process's end.
            Err(_) => Err(Error::new(
                ErrorCode::LedgerUnavailable,
                format!(
                    "the ledger database {} did not answer within {} s",
                    self.location.shown,
                    limit.as_secs_f64()
                ),
            )
            .detail("ledger", self.location.shown.clone())
            .hint("check that the server is up and reachable; connect_timeout=N in the URL sets the wait")),
        }
    }

    /// `ledger_unavailable` for a database that cannot be reached or was
    /// lost mid-operation; `io_error` for one that refused a statement.
    pub(super) fn db_error(&self, err: &postgres::Error) -> Error {
        let shown = self.location.shown.clone();
        // Connection exceptions (08), operator intervention such as a
        // server shutting down (57), and exhausted resources (53): the
        // database is not there to write to, whatever it said on the way.
        let gone = err
            .as_db_error()
            .is_some_and(|db| matches!(db.code().code().get(..2), Some("08" | "57" | "53")));
        if let Some(db) = err.as_db_error().filter(|_| !gone) {
            let conflict = *db.code() == SqlState::UNIQUE_VIOLATION;
            let message = if conflict {
                format!(
                    "another writer appended to {shown} at the same moment (the lock was bypassed); nothing was written: {}",
                    db.message()
                )
            } else {
                format!(
                    "the database {shown} refused the operation: {}",
                    db.message()
                )
            };
            return Error::new(ErrorCode::IoError, message)
                .detail("ledger", shown)
                .detail("sqlstate", db.code().code())
                .hint("the role needs SELECT, INSERT and UPDATE on discuss_lines and discuss_state (and CREATE for the first write); see docs/scale-out.md");
        }
        self.unavailable(err)
    }

    pub(super) fn unavailable(&self, err: &postgres::Error) -> Error {
        let shown = self.location.shown.clone();
        // The server is there and the database is not: it is made once,
        // by whoever runs the server; discuss makes its tables.
        if err
            .as_db_error()
            .is_some_and(|db| *db.code() == SqlState::INVALID_CATALOG_NAME)
        {
            let name = self.location.config.get_dbname().unwrap_or("NAME");
            let name = crate::escape::printable(name, false);
            return Error::new(
                ErrorCode::LedgerUnavailable,
                format!("the ledger database {shown} does not exist on its server"),
            )
            .detail("ledger", shown)
            .detail("sqlstate", "3D000")
            .hint(format!(
                "create it once: `createdb {name}` on the server (or CREATE DATABASE \"{name}\"); discuss makes its tables at the first write"
            ));
        }
        let mut why = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            let text = cause.to_string();
            if !why.contains(&text) {
                why.push_str(": ");
                why.push_str(&text);
            }
            source = cause.source();
        }
        Error::new(
            ErrorCode::LedgerUnavailable,
            format!("the ledger database {shown} cannot be reached ({why})"),
        )
        .detail("ledger", shown)
        .hint("check the URL, that the server is up and accepts this host and role; connect_timeout=N in the URL bounds the wait (default 5 s)")
    }

    /// A consistent snapshot for readers.
    pub(super) fn read_only(client: &mut Client) -> Step<Transaction<'_>> {
        Ok(client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?)
    }

    /// Runs `read` in one read-only snapshot, where the tables are there,
    /// with which they are; `empty()` before the first write made them.
    pub(super) fn reading<T>(
        &self,
        empty: impl FnOnce() -> T,
        read: impl FnOnce(&mut Transaction<'_>, &Tables) -> Step<T>,
    ) -> Result<T> {
        self.session(|client| {
            let mut tx = Self::read_only(client)?;
            let tables = tables_exist(&mut tx)?;
            if !tables.ledger {
                return Ok(empty());
            }
            let got = read(&mut tx, &tables)?;
            tx.commit()?;
            Ok(got)
        })
    }

    /// A writer's transaction, holding the ledger's lock, with the tables
    /// made if this is the first write (the summaries' too, where this role
    /// may); and whether it may keep the summaries.
    pub(super) fn writing(client: &mut Client) -> Step<(Transaction<'_>, bool)> {
        let mut tx = client.transaction()?;
        tx.execute_typed(
            "SELECT pg_advisory_xact_lock($1)",
            &[(&LOCK_KEY, Type::INT8)],
        )?;
        let tables = tables_exist(&mut tx)?;
        if !tables.ledger || !tables.state {
            // Every statement of the schema is "if not exists": a dropped
            // state table is made again, and folded anew from the lines.
            tx.batch_execute(SCHEMA)?;
            // The search's table and its GIN index, made with the others
            // (a database of an earlier version gets them at its first
            // search).
            tx.batch_execute(super::search::SEARCH_SCHEMA)?;
        }
        if !tables.summaries && tables.write_summaries {
            tx.batch_execute(SUMMARIES)?;
        }
        Ok((tx, tables.write_summaries))
    }

    /// Locks a scoped writer's transaction (`append`): `LOCK_KEY` shared, then
    /// the locks of what `scope` touches, in one order for every writer
    /// (no two can wait for each other); whether it may keep the summaries.
    /// `None` for a global scope, or when the tables are not all there yet
    /// (the first write makes them under `writing`).
    pub(super) fn lock_scope(tx: &mut Transaction<'_>, scope: &Scope<'_>) -> Step<Option<bool>> {
        if scope.global {
            return Ok(None);
        }
        let tables = shared_lock_and_tables(tx, LOCK_KEY)?;
        if !tables.ledger || !tables.state || (!tables.summaries && tables.write_summaries) {
            return Ok(None);
        }
        let (kinds, keys) = scope_locks(scope);
        if !kinds.is_empty() {
            // Taken in the subquery's order, one after the other.
            tx.execute_typed(
                "SELECT count(pg_advisory_xact_lock(kind, key)) FROM \
                 (SELECT kind, key FROM unnest($1::int4[], $2::int4[]) AS t(kind, key) \
                  ORDER BY kind, key) AS ordered",
                &[(&kinds, Type::INT4_ARRAY), (&keys, Type::INT4_ARRAY)],
            )?;
        }
        Ok(Some(tables.write_summaries))
    }

    /// As `writing`, but `None` at once when another transaction holds
    /// the ledger's lock (for readers that would write what they derived).
    pub(super) fn writing_unless_busy(
        client: &mut Client,
    ) -> Step<Option<(Transaction<'_>, bool)>> {
        let mut tx = client.transaction()?;
        let locked: bool = tx
            .query_typed_one(
                "SELECT pg_try_advisory_xact_lock($1)",
                &[(&LOCK_KEY, Type::INT8)],
            )?
            .get(0);
        if !locked {
            tx.rollback()?;
            return Ok(None);
        }
        let tables = tables_exist(&mut tx)?;
        if !tables.ledger {
            return Ok(None);
        }
        if !tables.summaries && tables.write_summaries {
            tx.batch_execute(SUMMARIES)?;
        }
        Ok(Some((tx, tables.write_summaries)))
    }
}

/// The advisory locks of a scope, as (kind, key) pairs in the two-integer
/// key space (apart from `LOCK_KEY`'s and `NUMBER_KEY`'s): 1 a discussion,
/// 2 an agent's quota, 3 an idempotency key; the key is 32 bits of the
/// name's hash (two names that share it only wait for each other).
fn scope_locks(scope: &Scope<'_>) -> (Vec<i32>, Vec<i32>) {
    let named = scope
        .discussions
        .iter()
        .map(|d| (1, *d))
        .chain(scope.agents.iter().map(|a| (2, *a)))
        .chain(scope.idempotency_key.map(|k| (3, k)));
    let mut locks: Vec<(i32, i32)> = named
        .map(|(kind, name)| {
            (
                kind,
                crate::ledger::hash::hash64(name.as_bytes()) as u32 as i32,
            )
        })
        .collect();
    locks.sort_unstable();
    locks.dedup();
    locks.into_iter().unzip()
}
