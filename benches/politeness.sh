#!/usr/bin/env bash
# Politeness efficiency (issue 3, benchmark 3): a generated web of 20 hosts whose latencies
# run from fast to slow, crawled with the default delay factor (10). The lower bound on wall
# time the delay rule allows is, per host, the sum of its response times × (1 + factor); the
# crawl cannot end before the largest. Response times are the crawler's own (URL log, ms
# column, robots.txt fetches included). Target: wall time ≤ 1.15 × the largest bound.
#
#   benches/politeness.sh
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${HOSTS:-20} PER_HOST=${PER_HOST:-60} MIN_MS=${MIN_MS:-2} MAX_MS=${MAX_MS:-30} FACTOR=${FACTOR:-10}
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --workspace --quiet
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
. benches/lib.sh
start_web web --hosts "$HOSTS" --pages-per-host "$PER_HOST" --children 3 --extra-links 4 \
  --cross-permille 100 --padding 1000 --seed 4 --latency-ms "$MIN_MS" --latency-max-ms "$MAX_MS"
target/release/crawl "$tmp/web.seeds" --out "$tmp/out" -j 32 --delay-factor "$FACTOR" -q >"$tmp/log"
stop_web
python3 - "$tmp/log" "$tmp/out/summary.json" "$FACTOR" <<'PY'
import json, sys, collections, urllib.parse
log, summary, factor = sys.argv[1], json.load(open(sys.argv[2])), float(sys.argv[3])
busy = collections.defaultdict(float)
pages = collections.Counter()
for line in open(log):
    f = line.rstrip("\n").split("\t")
    host = urllib.parse.urlsplit(f[5]).netloc
    busy[host] += int(f[3]) / 1000
    pages[host] += 1
bounds = {h: t * (1 + factor) for h, t in busy.items()}
slowest = max(bounds, key=bounds.get)
wall = summary["seconds"]
print(f"hosts {len(bounds)}, fetches {sum(pages.values())}, delay factor {factor:g}")
print(f"| largest per-host bound (s) | host | its fetches | crawl wall time (s) | wall / bound |")
print(f"|---|---|---|---|---|")
print(f"| {bounds[slowest]:.2f} | {slowest} | {pages[slowest]} | {wall:.2f} | {wall / bounds[slowest]:.3f} |")
PY
