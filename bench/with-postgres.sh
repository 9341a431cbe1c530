#!/usr/bin/env bash
# Runs the benchmark with a throwaway PostgreSQL server (initdb into a
# temporary folder, 127.0.0.1 at a free port, default durability settings),
# passing it as --postgres, and PgBouncer in transaction mode in front of it
# when the machine has it (apt-get install pgbouncer), passed as --pooler;
# other arguments go to the benchmark as they are.
#
#   cargo build --release --examples && cargo build --release
#   bench/with-postgres.sh                      # 1,000 vs 1,000,000 records
#   bench/with-postgres.sh --large 20000 --runs 5
#   BUILD=target/debug bench/with-postgres.sh --test-build --large 20000   # the test
#       build's binaries (CI: the harness runs, its numbers mean nothing)
#   bench/with-postgres.sh --contention         # writers side by side:
#       1, 4 and 16 writers on a file, on the server and with sqlite3
#       (bench/contention.py; SECONDS_EACH=6 to change how long each runs)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-target/release}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "no PostgreSQL server binaries (apt-get install postgresql)" >&2; exit 2; }
dir=$(mktemp -d)
as_owner=()
if [ "$(id -u)" = 0 ]; then
    chown postgres "$dir"
    as_owner=(runuser -u postgres --)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${as_owner[@]}" "$bin/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
"${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -w -l "$dir/server.log" \
    -o "-p $port -c listen_addresses=127.0.0.1 -k $dir" start >/dev/null
trap '"${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null; rm -rf "$dir"' EXIT
pooler=()
if [ -x /usr/sbin/pgbouncer ]; then
    pool_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    cat > "$dir/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=$port
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $pool_port
unix_socket_dir =
auth_type = trust
auth_file = $dir/users.txt
pool_mode = transaction
pidfile = $dir/pgbouncer.pid
logfile = $dir/pgbouncer.log
INI
    echo '"postgres" ""' > "$dir/users.txt"
    [ "$(id -u)" = 0 ] && chown postgres "$dir/pgbouncer.ini" "$dir/users.txt"
    "${as_owner[@]}" /usr/sbin/pgbouncer -d "$dir/pgbouncer.ini"
    trap 'kill "$(cat "$dir/pgbouncer.pid")" 2>/dev/null; "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast stop >/dev/null; rm -rf "$dir"' EXIT
    pooler=(--pooler "127.0.0.1:$pool_port")
fi
if [ "${1:-}" = --contention ]; then
    seconds=${SECONDS_EACH:-6}
    work=$(mktemp -d)
    for writers in 1 4 16; do
        psql() { "${as_owner[@]}" "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -q "$@"; }
        psql -c "CREATE DATABASE w$writers"
        printf 'file      '; bench/contention.py "$build/discuss" "$work/w$writers.jsonl" "$writers" "$seconds"
        printf 'postgres  '; bench/contention.py "$build/discuss" "postgresql://postgres@127.0.0.1:$port/w$writers" "$writers" "$seconds"
        printf 'sqlite3   '; bench/contention.py sqlite3 "$work/w$writers.sqlite" "$writers" "$seconds"
    done
    rm -rf "$work"
    exit 0
fi
"$build/examples/bench" --postgres "postgresql://postgres@127.0.0.1:$port/postgres" "${pooler[@]}" "$@"
