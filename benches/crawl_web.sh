#!/usr/bin/env bash
# The crawl machinery on a generated local web (politeness off, so the figures measure the
# crawler, not the delay rule). Prints one row per web: pages fetched, pages fetched twice
# (from the server's own log), seconds, pages/s, peak RSS, CLOCK hit rate, merges.
#
#   benches/crawl_web.sh                 # 100,000 pages on 50 hosts, then on 1 host, -j 64
#   PAGES=20000 JOBS=16 benches/crawl_web.sh
#   PAGES="10000 1000000" WEBS=multi benches/crawl_web.sh   # flat memory: RSS at 10^4 vs 10^6 pages
#   CRAWL=/path/to/other/crawl SKIP_BUILD=1 benches/crawl_web.sh   # another build, same web
set -euo pipefail
cd "$(dirname "$0")/.."
PAGES_LIST=${PAGES:-100000}
JOBS=${JOBS:-64}
WEBS=${WEBS:-"multi single"}
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --workspace --quiet
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT

# run_web NAME HOSTS: serves PAGES pages over HOSTS hosts, crawls them, prints a table row.
run_web() {
  local name=$1 hosts=$2 per_host=$((PAGES / $2))
  name="$name-$PAGES"
  mkfifo "$tmp/$name.stdin"
  target/release/testweb --hosts "$hosts" --pages-per-host "$per_host" --children 4 \
    --extra-links 8 --cross-permille 200 --padding 2000 --seed 7 \
    --seeds-out "$tmp/$name.seeds" --max-seconds 1800 <"$tmp/$name.stdin" >"$tmp/$name.server.json" &
  local server=$!
  exec 3>"$tmp/$name.stdin"   # the server runs until this is closed
  local deadline=$((SECONDS + 30))
  until [ -f "$tmp/$name.seeds" ]; do
    [ $SECONDS -lt $deadline ] || { echo "testweb did not start" >&2; exit 1; }
    sleep 0.05
  done
  "${CRAWL:-target/release/crawl}" "$tmp/$name.seeds" --out "$tmp/$name.out" -j "$JOBS" --delay-factor 0 \
    >"$tmp/$name.log" 2>"$tmp/$name.err"
  exec 3>&-
  wait "$server"
  python3 - "$name" "$hosts" "$tmp/$name.out/summary.json" "$tmp/$name.server.json" <<'PY'
import json, sys
name, hosts, summary, server = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
print(f"| {name} | {hosts} | {summary['pages']} | {server['reachable']} | {server['duplicates']} | "
      f"{server['overlaps']} | {summary['seconds']:.1f} | {summary['pages_per_second']:.0f} | "
      f"{summary['peak_rss_bytes'] / 2**20:.1f} | {100 * summary['cache_hit_rate']:.1f}% | {summary['merges']} |")
PY
}

echo "crawl_web: $PAGES_LIST pages, -j $JOBS, --delay-factor 0, $(nproc) cores"
echo "| web | hosts | pages fetched | reachable | fetched twice | overlapping requests | seconds | pages/s | peak RSS MiB | CLOCK hit rate | merges |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for PAGES in $PAGES_LIST; do
  for web in $WEBS; do
    case $web in
      multi) run_web multi 50 ;;
      single) run_web single 1 ;;
    esac
  done
done
