#!/usr/bin/env python3
# Writers side by side: W threads, each driving whole discussions of its
# own pair of agents (ask, wake, reply --close), every step its own
# `discuss` process, for SECONDS; prints commands/s and the p50/p99 of a
# command. Run it on a file and on a database, and with two binaries, in
# one sitting to compare (docs/performance.md, "Writers side by side"):
#
#   bench/contention.py target/release/discuss /tmp/l.jsonl 16 8
#   bench/contention.py target/release/discuss postgresql://postgres@127.0.0.1:5432/b16 16 8
#
# The ledger (or database) should be fresh: it adds fleet "f" first.
import json, subprocess, sys, threading, time
bin_, ledger, W, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
env = dict(PATH="/usr/bin:/bin", HOME="/tmp", DISCUSS_LEDGER=ledger, DISCUSS_ACTOR="bench")
def run(*a):
    t=time.perf_counter(); p=subprocess.run([bin_,"--json",*a],env=env,capture_output=True,text=True); d=time.perf_counter()-t
    if p.returncode!=0: raise SystemExit(p.stderr)
    return json.loads(p.stdout), d
agents=[(f"a{i}",f"b{i}") for i in range(W)]
run("fleet","add","f",*[x for p in agents for x in p])
lat=[]; count=[0]; lock=threading.Lock(); stop=time.time()+secs
def worker(a,b):
    while time.time()<stop:
        o,d1=run("ask","--from",a,"--to",b,"--fleet","f","--payload","{}")
        w,d2=run("wake","--agent",b,"--discussion",o["discussion_id"],"--expected-head",o["head_message_id"])
        r,d3=run("reply","--agent",b,"--discussion",o["discussion_id"],"--attempt",w["attempt"]["attempt_id"],"--reply-to",o["head_message_id"],"--type","result","--payload","{}","--close")
        with lock: lat.extend([d1,d2,d3]); count[0]+=3
ts=[threading.Thread(target=worker,args=p) for p in agents]
t0=time.time(); [t.start() for t in ts]; [t.join() for t in ts]; el=time.time()-t0
lat.sort()
print(f"W={W} {count[0]/el:.0f} commands/s p50={lat[len(lat)//2]*1000:.0f}ms p99={lat[int(len(lat)*0.99)]*1000:.0f}ms")
