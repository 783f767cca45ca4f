#!/usr/bin/env bash
# Rates in operators' units (issue 30), read from the test server's own request log:
#   1. --rate 2 on 4 hosts of 20 pages (delay factor 0): requests per second per host and the
#      shortest gap between two requests to one host;
#   2. --max-rate 50 across 200 hosts of 3 pages: requests per second overall and the most
#      requests in any 1-second window;
#   3. --host-rules giving host 0 of 5 (40 pages each, 50 ms a response, the default delay
#      rule) 8 connections: the most requests in flight at once per host, and when each host
#      was done.
#
#   benches/rates.sh              (about a minute; PROFILE=debug uses the debug binaries)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-release}
[ -n "${SKIP_BUILD:-}" ] || cargo build --profile "${profile/debug/dev}" --workspace --quiet
bin=target/$profile
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT

# run NAME TESTWEB_ARGS -- CRAWL_ARGS: serves a web, crawls it, leaves the server's log.
run() {
  local name=$1; shift
  local web=()
  while [ "$1" != "--" ]; do web+=("$1"); shift; done
  shift
  mkfifo "$tmp/$name.stdin"
  "$bin/testweb" "${web[@]}" --seeds-out "$tmp/$name.seeds" --log-out "$tmp/$name.log" \
    --max-seconds 600 <"$tmp/$name.stdin" >"$tmp/$name.json" &
  exec 3>"$tmp/$name.stdin"
  until [ -f "$tmp/$name.seeds" ]; do sleep 0.05; done
  local start=$SECONDS
  local code=0
  "$bin/crawl" "$tmp/$name.seeds" --out "$tmp/$name.out" -q "$@" >/dev/null || code=$?
  echo "== $name: crawl $* (exit $code, $((SECONDS - start)) s wall)"
  exec 3>&-
  wait
}

run rate --hosts 4 --pages-per-host 20 -- --delay-factor 0 --rate 2
run max-rate --hosts 200 --pages-per-host 3 -- --delay-factor 0 --max-rate 50
# The ports differ from run to run: the rule names host 0 by the seeds file the run writes,
# so it is written by a wrapper that waits for that file.
(
  until [ -f "$tmp/rules.seeds" ]; do sleep 0.05; done
  head -1 "$tmp/rules.seeds" | sed -E 's#^https?://([^/]+)/.*#\1 connections=8#' >"$tmp/rules.txt"
) &
mkfifo "$tmp/rules.stdin"
"$bin/testweb" --hosts 5 --pages-per-host 40 --latency-ms 50 --seeds-out "$tmp/rules.seeds" \
  --log-out "$tmp/rules.log" --max-seconds 600 <"$tmp/rules.stdin" >"$tmp/rules.json" &
exec 3>"$tmp/rules.stdin"
until [ -s "$tmp/rules.txt" ]; do sleep 0.05; done
start=$SECONDS
code=0
"$bin/crawl" "$tmp/rules.seeds" --out "$tmp/rules.out" -q --host-rules "$tmp/rules.txt" \
  >/dev/null || code=$?
echo "== rules: crawl --host-rules FILE, FILE: $(cat "$tmp/rules.txt") (exit $code, $((SECONDS - start)) s wall)"
exec 3>&-
wait

python3 - "$tmp" <<'PY'
import sys, collections
tmp = sys.argv[1]
def log(name):
    rows = []
    for line in open(f"{tmp}/{name}.log"):
        host, start, end, status, target = line.rstrip("\n").split("\t")
        rows.append((int(host), int(start) / 1e6, int(end) / 1e6, target))
    return rows
rows = log("rate")
by = collections.defaultdict(list)
for h, s, e, t in rows:
    by[h].append(s)
print("--rate 2: host, requests, requests/s (first to last), shortest gap (s)")
for h in sorted(by):
    s = sorted(by[h])
    gaps = [b - a for a, b in zip(s, s[1:])]
    print(f"  host {h}: {len(s)} requests, {(len(s) - 1) / (s[-1] - s[0]):.2f}/s, min gap {min(gaps):.3f}")
rows = log("max-rate")
s = sorted(r[1] for r in rows)
window = max(sum(1 for t in s[i:i + 200] if t - a < 1.0) for i, a in enumerate(s))
print(f"--max-rate 50: {len(s)} requests to {len({r[0] for r in rows})} hosts in {s[-1] - s[0]:.1f} s: "
      f"{(len(s) - 1) / (s[-1] - s[0]):.1f}/s overall, at most {window} in any 1 s window")
rows = log("rules")
by = collections.defaultdict(list)
for h, s, e, t in rows:
    by[h].append((s, e))
t0 = min(r[1] for r in rows)
print("--host-rules: host, requests, most in flight at once, done after (s)")
for h in sorted(by):
    events = sorted([(s, 1) for s, e in by[h]] + [(e, -1) for s, e in by[h]])
    level = peak = 0
    for _, d in events:
        level += d
        peak = max(peak, level)
    print(f"  host {h}: {len(by[h])} requests, at most {peak} at once, done at {max(e for s, e in by[h]) - t0:.1f}")
PY
