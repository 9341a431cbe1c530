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
set -euo pipefail
cd "$(dirname "$0")/.."
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
target/release/examples/bench --postgres "postgresql://postgres@127.0.0.1:$port/postgres" "${pooler[@]}" "$@"
