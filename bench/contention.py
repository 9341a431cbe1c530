#!/usr/bin/env python3
"""Writers side by side: W threads, each driving whole discussions of its
own pair of agents (ask, wake, reply --close), every step its own process,
for SECONDS; prints commands/s and the p50/p99 of a command.

  bench/contention.py target/release/discuss /tmp/l.jsonl 16 8
  bench/contention.py target/release/discuss postgresql://postgres@127.0.0.1:5432/b16 16 8
  bench/contention.py sqlite3 /tmp/l.sqlite 16 8

With `sqlite3` as the program, the same three transactions as a script
would write them with the sqlite3 shell, one process each, WAL and
synchronous=FULL: ask inserts the root; wake reads the discussion's
records and inserts the reservation under BEGIN IMMEDIATE; reply inserts
the answer and its receipt. The ledger (database) should be fresh: the
run adds its fleet first. Run every kind in one sitting to compare
(docs/performance.md, "Writers side by side").
"""
import json
import subprocess
import sys
import threading
import time

program, ledger, writers, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
sqlite = program.endswith("sqlite3")
env = dict(PATH="/usr/bin:/bin", HOME="/tmp", DISCUSS_LEDGER=ledger, DISCUSS_ACTOR="bench")


def timed(args, stdin=None):
    started = time.perf_counter()
    done = subprocess.run(args, env=env, capture_output=True, text=True, input=stdin)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{args[:3]}: {done.stderr}")
    return done.stdout, took


def discuss(*args):
    out, took = timed([program, "--json", *args])
    return json.loads(out), took


def sql(script):
    return timed([program, ledger], "PRAGMA busy_timeout=60000;\nPRAGMA synchronous=FULL;\n" + script)[1]


counter = [0]
counter_lock = threading.Lock()


def new_id(prefix):
    with counter_lock:
        counter[0] += 1
        return f"{prefix}_{threading.get_ident():x}{counter[0]:08x}"


def record(kind, rid, dsc, body):
    line = json.dumps(dict(v=1, kind=kind, id=rid, at_ms=int(time.time() * 1000), by="bench", **body))
    return f"INSERT INTO records VALUES ('{rid}', '{dsc}', {int(time.time() * 1000)}, '{line}');\n"


def whole_sqlite(a, b):
    dsc, root = new_id("dsc"), new_id("msg")
    took = [sql("BEGIN IMMEDIATE;\n" + record("message", root, dsc, dict(from_agent_id=a, to_agent_id=b, correlation_id=dsc)) + "COMMIT;\n")]
    attempt = new_id("att")
    took.append(sql(f"BEGIN IMMEDIATE;\nSELECT line FROM records WHERE discussion_id = '{dsc}' ORDER BY rowid;\n"
                    + record("receipt", new_id("rcp"), dsc, dict(receipt="discussion.attempt.reserved", discussion_id=dsc, attempt_id=attempt, agent_id=b))
                    + "COMMIT;\n"))
    took.append(sql(f"BEGIN IMMEDIATE;\nSELECT line FROM records WHERE discussion_id = '{dsc}' ORDER BY rowid;\n"
                    + record("message", new_id("msg"), dsc, dict(from_agent_id=b, to_agent_id=a, correlation_id=dsc))
                    + record("receipt", new_id("rcp"), dsc, dict(receipt="discussion.attempt.completed", discussion_id=dsc, attempt_id=attempt))
                    + "COMMIT;\n"))
    return took


def whole_discuss(a, b):
    asked, t1 = discuss("ask", "--from", a, "--to", b, "--fleet", "f", "--payload", "{}")
    dsc, head = asked["discussion_id"], asked["head_message_id"]
    woken, t2 = discuss("wake", "--agent", b, "--discussion", dsc, "--expected-head", head)
    attempt = woken["attempt"]["attempt_id"]
    _, t3 = discuss("reply", "--agent", b, "--discussion", dsc, "--attempt", attempt,
                    "--reply-to", head, "--type", "result", "--payload", "{}", "--close")
    return [t1, t2, t3]


pairs = [(f"a{i}", f"b{i}") for i in range(writers)]
if sqlite:
    sql("PRAGMA journal_mode=WAL;\nCREATE TABLE IF NOT EXISTS records (id TEXT PRIMARY KEY, "
        "discussion_id TEXT, at_ms INTEGER, line TEXT NOT NULL);\n"
        "CREATE INDEX IF NOT EXISTS records_by_discussion ON records (discussion_id);\n")
    whole = whole_sqlite
else:
    discuss("fleet", "add", "f", *[agent for pair in pairs for agent in pair])
    discuss("quota", "set", "100000")
    whole = whole_discuss
latencies = []
stop = time.time() + seconds


def writer(a, b):
    while time.time() < stop:
        took = whole(a, b)
        with counter_lock:
            latencies.extend(took)


threads = [threading.Thread(target=writer, args=pair) for pair in pairs]
started = time.time()
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
elapsed = time.time() - started
latencies.sort()
print(f"W={writers} {len(latencies) / elapsed:.0f} commands/s "
      f"p50={latencies[len(latencies) // 2] * 1000:.0f}ms p99={latencies[int(len(latencies) * 0.99)] * 1000:.0f}ms")
