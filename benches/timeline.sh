#!/usr/bin/env bash
# Where the wall time of a crawl goes, seen from the server: the same static web as
# benches/web_shape.sh (nginx on loopback, one port per host), but nginx logs each request's
# end time in ms ($msec), its connection serial and the request's number on that connection.
# One run per tool and web (alternating, REPS times); for each run, from the log alone:
#
#   span        first to last request (ms)
#   req/50ms    requests per 50 ms bin: median and peak; "slow" bins under a quarter of the peak
#   hosts/50ms  distinct hosts served per bin (median, peak): the hosts in flight
#   conns       new connections (a connection's first request) in all, and per host
#   robots→1st  per host, robots.txt's end to its first page's end (median, p90; ms)
#   hosts met   when 50 %, 90 % and all hosts had their first request (ms from the start)
#   tail        the time the last 10 % of the requests took (ms)
#   gaps        the longest pause between two requests, and the sum of pauses over 20 ms
#
#   benches/timeline.sh                              # 50x400 and 2000x10, crawl and wget2
#   BEFORE=/work/crawl-main-s7 TOOLS="before-crawl crawl wget2" SKIP_BUILD=1 benches/timeline.sh
#   BINS=100 WEBS=2000x10 benches/timeline.sh        # also print one line per 100 ms
#
# Any setting of web_shape.sh passes through (WEBS, REPS, JOBS, TOOLS, BASE_PORT, CRAWL,
# BEFORE, SKIP_BUILD); it prints its own table first (pages/s, CPU per page) for the same runs.
set -euo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
LOGS=$logs NGINX_LOG_EXTRA='$msec $connection $connection_requests' \
  REPS=${REPS:-1} TOOLS=${TOOLS:-"crawl wget2"} benches/web_shape.sh
for web in ${WEBS:-50x400 2000x10}; do
  ls "$logs/$web".* >"$logs/runs"
  python3 - "$web" "$logs/runs" "${BINS:-}" <<'PY'
import os, statistics, sys
from collections import defaultdict
web, runs, bins = sys.argv[1:]

def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")

print(f"\n{web}: | tool | span ms | requests | req/50ms med/peak | slow bins | "
      "hosts/50ms med/peak | new conns (per host) | robots→1st ms med/p90 | hosts met 50/90/100 % ms | "
      "tail 10 % ms | longest gap ms | gaps>20ms sum ms |")
for log in open(runs).read().split():
    tool = ".".join(os.path.basename(log).split(".")[1:])
    reqs = []
    for l in open(log):
        f = l.split()
        if len(f) >= 6:
            reqs.append((float(f[3]), f[0], f[1], int(f[5])))
    reqs.sort()
    t0 = reqs[0][0]
    span = (reqs[-1][0] - t0) * 1000
    per_bin = defaultdict(int); hosts_bin = defaultdict(set); new_bin = defaultdict(int)
    robots_bin = defaultdict(int)
    robots_at, first_page, first_any = {}, {}, {}
    conns = 0
    for t, port, uri, nreq in reqs:
        b = int((t - t0) * 1000 // 50)
        per_bin[b] += 1; hosts_bin[b].add(port)
        first_any.setdefault(port, t)
        if nreq == 1:
            conns += 1; new_bin[b] += 1
        if uri == "/robots.txt":
            robots_at.setdefault(port, t); robots_bin[b] += 1
        else:
            first_page.setdefault(port, t)
    nb = int(span // 50) + 1
    counts = [per_bin[b] for b in range(nb)]
    peak = max(counts)
    slow = sum(1 for c in counts if c < peak / 4)
    hb = [len(hosts_bin[b]) for b in range(nb)]
    delays = [(first_page[p] - robots_at[p]) * 1000 for p in robots_at if p in first_page]
    met = sorted((t - t0) * 1000 for t in first_any.values())
    n = len(reqs)
    tail = (reqs[-1][0] - reqs[int(n * 0.9)][0]) * 1000
    gaps = [(b[0] - a[0]) * 1000 for a, b in zip(reqs, reqs[1:])]
    med_delay = f"{statistics.median(delays):.0f}/{pct(delays, 0.9):.0f}" if delays else "-"
    print(f"| {tool} | {span:,.0f} | {n:,} | {statistics.median(counts):.0f}/{peak} | "
          f"{slow}/{nb} | {statistics.median(hb):.0f}/{max(hb)} | {conns:,} ({conns / max(len(first_any), 1):.1f}) | "
          f"{med_delay} | {pct(met, 0.5):.0f}/{pct(met, 0.9):.0f}/{met[-1]:.0f} | {tail:.0f} | "
          f"{max(gaps):.0f} | {sum(g for g in gaps if g > 20):.0f} |")
    if bins:
        step = int(bins) // 50 or 1
        print(f"  {tool} per {step * 50} ms: t_ms requests hosts new_conns robots")
        for b in range(0, nb, step):
            r = range(b, min(b + step, nb))
            hs = set().union(*(hosts_bin[i] for i in r))
            print(f"  {b * 50:6d} {sum(per_bin[i] for i in r):6d} {len(hs):5d} "
                  f"{sum(new_bin[i] for i in r):5d} {sum(robots_bin[i] for i in r):5d}")
PY
done
