#!/usr/bin/env bash
# Near-duplicate detection's memory over the crawl's size (issue 45): peak RSS of the same crawl
# with `--near-duplicates off` and `note` at 10^5 and 10^6 pages, pages/s and CPU µs a page,
# the index's size on disk, the notes. Every page has 300 words of its own
# (benches/static_web.py with WEB_TEXT=random), so every page is judged and goes into the index
# and none is a near-duplicate: the index grows by every page, the worst case for its size.
# Politeness off (--delay-factor 0), no WARC: what is measured is the crawl's own machinery.
#
#   benches/neardup_memory.sh                      # 2,000 hosts x 50 and x 500 pages
#   SIZES="50" benches/neardup_memory.sh           # pages per host, 10^5 only
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${HOSTS:-2000} SIZES=${SIZES:-"50 500"} JOBS=${JOBS:-64} BASE_PORT=${BASE_PORT:-24000}
MODES=${MODES:-"off note"}
CRAWL=${CRAWL:-target/release/crawl}
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet
. benches/lib.sh
need nginx nginx-light
[ -x /usr/bin/time ] || need /usr/bin/time time
tmp=$(mktemp -d /tmp/neardup-memory.XXXXXX); chmod 755 "$tmp"   # nginx workers read the web
nginx_pid=
trap '[ -z "$nginx_pid" ] || kill "$nginx_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s %-5s %9s %7s %9s %10s %11s %9s %7s\n' pages mode fetched wall pages/s "CPU µs/pg" "peak RSS" index notes
for pages in $SIZES; do
  rm -rf "$tmp/www"
  WEB_TEXT=random python3 benches/static_web.py "$tmp/www" "$HOSTS" "$pages" "$BASE_PORT"
  serve_nginx "$HOSTS"
  echo "http://127.0.0.1:$BASE_PORT/index.html" >"$tmp/seeds"
  for mode in $MODES; do
    rm -rf "$tmp/out"
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$CRAWL" "$tmp/seeds" --out "$tmp/out" \
      --scope any -j "$JOBS" --delay-factor 0 --no-warc --near-duplicates "$mode" \
      >"$tmp/log" 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; exit 1; }
    read -r wall user sys rss <"$tmp/time"
    fetched=$(awk -F'\t' '$1 == 200' "$tmp/log" | wc -l)
    notes=$(grep -c 'near-duplicate' "$tmp/log" || true)
    index=$(du -sk "$tmp/out/neardup" 2>/dev/null | cut -f1 || echo 0)
    awk -v n="$((HOSTS * pages))" -v mode="$mode" -v f="$fetched" -v wall="$wall" -v cpu="$(echo "$user + $sys" | bc)" \
      -v rss="$rss" -v idx="${index:-0}" -v notes="$notes" 'BEGIN {
      printf "%-9d %-5s %9d %6.1fs %9.0f %10.0f %8.1f MiB %6.1f MiB %7d\n",
        n, mode, f, wall, f / wall, cpu * 1e6 / (f > 0 ? f : 1), rss / 1024, idx / 1024, notes }'
  done
  kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; nginx_pid=
done
