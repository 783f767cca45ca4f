#!/usr/bin/env bash
# The paper's cache experiment on the link trace of a local crawl: crawls a generated web of
# PAGES pages (50 hosts, the crawl_web.sh shape, politeness off, --link-graph), then replays the
# targets of DIR/links.tsv through `crawl cachesim` at the default sizes 2^5..2^20 and at FINE
# sizes around the knee. Prints both tables and the timing; SVG=FILE also writes the plot.
#
#   benches/cachesim.sh                      # 100,000 pages, ~900,000 link lines
#   PAGES=20000 SVG=/tmp/cachesim.svg benches/cachesim.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh
PAGES=${PAGES:-100000}
HOSTS=${HOSTS:-50}
FINE=${FINE:-"8192,16384,24576,32768,40960,49152,57344,65536,73728,81920,90112,98304"}
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --workspace --quiet
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT

start_web web --hosts "$HOSTS" --pages-per-host $((PAGES / HOSTS)) --children 4 --extra-links 8 \
  --cross-permille 200 --padding 2000 --seed 7
target/release/crawl "$tmp/web.seeds" --out "$tmp/out" -j 64 --delay-factor 0 --no-warc --link-graph -q >/dev/null
stop_web
cut -f2 "$tmp/out/links.tsv" >"$tmp/trace"
echo "cachesim: link trace of a $PAGES-page crawl over $HOSTS hosts: $(wc -l <"$tmp/trace") lines, $(nproc) cores"
svg=()
[ -z "${SVG:-}" ] || svg=(--svg "$SVG")
/usr/bin/time -f "default sizes: %e s wall, %M KiB peak RSS" \
  target/release/crawl cachesim "$tmp/trace" "${svg[@]}"
/usr/bin/time -f "fine sizes: %e s wall, %M KiB peak RSS" \
  target/release/crawl cachesim "$tmp/trace" --sizes "$FINE"
