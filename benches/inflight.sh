#!/usr/bin/env bash
# What requests in flight cost the crawler (issue 28, item 1): CPU per page and memory with
# 100, 1,000 and 5,000 requests in flight, on the event loop (the default: `--max-connections N`
# caps requests in flight) and on N worker threads (`-j N`, each one request at a time).
#
# The web: N hosts × PAGES pages on loopback (one port per host), every response LATENCY_MS
# late, crawled with `--delay-factor 0` (the next request to a host as soon as the last one
# ended), so that N hosts keep up to N requests in flight and a long latency keeps the CPU from
# being the limit (5,000 in flight at 1 s is 5,000 pages/s).
#
#   benches/inflight.sh
#   INFLIGHT="100 1000" PAGES=20 LATENCY_MS=500 benches/inflight.sh
#   CRAWL=/path/to/crawl SKIP_BUILD=1 MODES="loop" benches/inflight.sh
#
# Columns: in flight = the requests open at the server at once (testweb's request log: head
# read to last write), median over the run's middle 80 % (sampled every 10 ms) and the most;
# pages/s = pages / wall; CPU µs/page = the crawl's user + sys (/usr/bin/time) per request the
# server answered; peak RSS = /usr/bin/time's; RSS per request in flight = (peak RSS − the same
# mode's RSS at the smallest N) / (in flight − the smallest N's), the memory one more request
# in flight costs; threads = the crawl's most threads (/proc, every 0.2 s).
set -euo pipefail
cd "$(dirname "$0")/.."
INFLIGHT=${INFLIGHT:-"100 1000 5000"}
PAGES=${PAGES:-10}
LATENCY_MS=${LATENCY_MS:-1000}
MODES=${MODES:-"loop threads"}
CRAWL=${CRAWL:-target/release/crawl}
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --workspace --quiet
[ -x target/release/testweb ] || { echo "no target/release/testweb: build the workspace" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
# A listener per host and a descriptor per connection on both sides.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] && echo "kept $tmp" >&2 || rm -rf "$tmp"' EXIT
. benches/lib.sh

lscpu | sed -n 's/^Model name: *//p' | head -1 | sed 's/^/CPU: /'
echo "cores $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg), open files $(ulimit -n), $("$CRAWL" --version 2>/dev/null | head -1)"
echo "web: N hosts × $PAGES pages, every response $LATENCY_MS ms, --delay-factor 0"
echo
echo "| N | path | options | pages | wall (s) | pages/s | in flight med / max | CPU µs/page | peak RSS (MiB) | RSS per request in flight (KiB) | threads |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
declare -A base_rss base_inflight
for n in $INFLIGHT; do
  for mode in $MODES; do
    case $mode in
      loop) opts="--max-connections $n" ;;
      threads) opts="-j $n" ;;
      *) echo "unknown mode $mode (loop or threads)" >&2; exit 2 ;;
    esac
    run=$mode.$n
    start_web "$run" --hosts "$n" --pages-per-host "$PAGES" --latency-ms "$LATENCY_MS" \
      --children 4 --extra-links 4 --cross-permille 0 --padding 1000 --seed 28 --log-out "$tmp/$run.log"
    set +e
    # shellcheck disable=SC2086
    /usr/bin/time -f '%M %e %U %S' -o "$tmp/$run.time" \
      "$CRAWL" "$tmp/$run.seeds" --out "$tmp/out.$run" $opts --delay-factor 0 --scope any -q \
      >"$tmp/$run.urls" 2>"$tmp/$run.err" &
    crawl_pid=$!
    ( peak=0
      while [ -e "/proc/$crawl_pid" ]; do
        for c in $(pgrep -P "$crawl_pid"); do # the crawl, under /usr/bin/time
          t=$(awk '/^Threads:/{print $2}' "/proc/$c/status" 2>/dev/null || echo 0)
          [ "${t:-0}" -le "$peak" ] || { peak=$t; echo "$peak" >"$tmp/$run.threads"; }
        done
        sleep 0.2
      done ) 3>&- &
    wait "$crawl_pid"
    status=$?
    set -e
    stop_web
    [ "$status" = 0 ] || { echo "crawl $run exited $status:" >&2; tail -5 "$tmp/$run.err" >&2; }
    row=$(python3 - "$tmp" "$run" "$n" "$mode" "$opts" "${base_rss[$mode]:-}" "${base_inflight[$mode]:-}" <<'PY'
import json, sys
sys.path.insert(0, "benches")
from in_flight import in_flight
tmp, run, n, mode, opts, base_rss, base_in = sys.argv[1:]
t = open(f"{tmp}/{run}.time").read().split()
rss_kib, elapsed, cpu = int(t[-4]), float(t[-3]), float(t[-2]) + float(t[-1])
try:
    wall = json.load(open(f"{tmp}/out.{run}/summary.json"))["seconds"]
except (OSError, ValueError, KeyError):
    wall = elapsed
spans, pages = [], 0
for line in open(f"{tmp}/{run}.log"):
    h, a, b, st, target = line.rstrip("\n").split("\t", 4)
    spans.append((int(a), int(b)))
    pages += st == "200" and target != "/robots.txt"
med, most = in_flight(spans)
try:
    threads = open(f"{tmp}/{run}.threads").read().strip()
except OSError:
    threads = "-"
per = "—"
if base_rss and med > float(base_in) + 1:
    per = f"{(rss_kib - int(base_rss)) / (med - float(base_in)):.0f}"
print(f"| {int(n):,} | {'event loop' if mode == 'loop' else 'threads'} | `{opts}` | {pages:,} | {wall:.1f} | "
      f"{pages / wall:,.0f} | {med:,.0f} / {most:,} | {1e6 * cpu / max(1, len(spans)):.0f} | "
      f"{rss_kib / 1024:.0f} | {per} | {threads} |\t{rss_kib}\t{med}")
PY
)
    echo "${row%%	*}"
    if [ -z "${base_rss[$mode]:-}" ]; then
      base_rss[$mode]=$(echo "$row" | cut -f2)
      base_inflight[$mode]=$(echo "$row" | cut -f3)
    fi
    rm -rf "$tmp/out.$run" "$tmp/$run".*
  done
done
