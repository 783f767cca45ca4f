#!/usr/bin/env bash
# A crawl's cost and memory with and without per-page options, at 10^5 and 10^6 pages: for
# each size, each option set of OPTION_SETS in turn on the same web; pages fetched, wall,
# pages/s, CPU µs a page, peak RSS, the state's size on disk. The web is
# benches/static_web.py's (2,000 hosts, nginx on loopback) with `WEB_TEXT=random`: 300 words of
# its own on every page. Politeness off (--delay-factor 0): the crawl's own machinery.
#
#   OPTION_SETS="|--text main|--text full" benches/options_at_scale.sh   # '|' between sets
#   SIZES="50" NO_WARC=1 benches/options_at_scale.sh                       # 10^5 only, no WARC
#
# benches/neardup_memory.sh runs it for --near-duplicates off and note.
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${HOSTS:-2000} SIZES=${SIZES:-"50 500"} JOBS=${JOBS:-64} BASE_PORT=${BASE_PORT:-24000}
OPTION_SETS=${OPTION_SETS:-"|--text main"}
CRAWL=${CRAWL:-target/release/crawl}
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet
. benches/lib.sh
need nginx nginx-light
[ -x /usr/bin/time ] || need /usr/bin/time time
tmp=$(mktemp -d /tmp/options-at-scale.XXXXXX); chmod 755 "$tmp"   # nginx workers read the web
nginx_pid=
trap '[ -z "$nginx_pid" ] || kill "$nginx_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "every run: --scope any -j $JOBS --delay-factor 0${NO_WARC:+ --no-warc}"
printf '%-9s %-30s %9s %8s %9s %10s %11s %11s\n' pages options fetched wall pages/s "CPU µs/pg" "peak RSS" "DIR size"
IFS='|' read -r -a sets <<<"$OPTION_SETS"
for pages in $SIZES; do
  rm -rf "$tmp/www"
  WEB_TEXT=random python3 benches/static_web.py "$tmp/www" "$HOSTS" "$pages" "$BASE_PORT"
  serve_nginx "$HOSTS"
  echo "http://127.0.0.1:$BASE_PORT/index.html" >"$tmp/seeds"
  for set in "${sets[@]}"; do
    rm -rf "$tmp/out"
    # shellcheck disable=SC2086 # an option set is words
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$CRAWL" "$tmp/seeds" --out "$tmp/out" \
      --scope any -j "$JOBS" --delay-factor 0 ${NO_WARC:+--no-warc} $set \
      >"$tmp/log" 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; exit 1; }
    read -r wall user sys rss <"$tmp/time"
    fetched=$(awk -F'\t' '$1 == 200' "$tmp/log" | wc -l)
    size=$(du -sk "$tmp/out" | cut -f1)
    awk -v n="$((HOSTS * pages))" -v set="${set:-(none)}" -v f="$fetched" -v wall="$wall" \
      -v cpu="$(echo "$user + $sys" | bc)" -v rss="$rss" -v size="$size" 'BEGIN {
      printf "%-9d %-30s %9d %7.1fs %9.0f %10.0f %7.1f MiB %7.1f MiB\n",
        n, set, f, wall, f / wall, cpu * 1e6 / (f > 0 ? f : 1), rss / 1024, size / 1024 }'
  done
  kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; nginx_pid=
done
