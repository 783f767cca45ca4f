#!/usr/bin/env bash
# The crawl machinery against a fetch-only baseline, in the same run (issue 3, benchmark 2):
# the full crawler (politeness off) over a generated web, then `fetch_baseline` fetching the
# very same URLs with the same HTTP client and thread count but no parsing, dedupe, scheduling
# or writing. Target: the crawler reaches ≥ 60% of the baseline's pages/s.
#
#   benches/machinery.sh            # 50 hosts × 400 pages, -j 64
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${HOSTS:-50} PER_HOST=${PER_HOST:-400} JOBS=${JOBS:-64} ROUNDS=${ROUNDS:-3}
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --workspace --quiet --examples
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
. benches/lib.sh
start_web web --hosts "$HOSTS" --pages-per-host "$PER_HOST" --children 4 --extra-links 8 \
  --cross-permille 200 --padding 2000 --seed 9
echo "| round | crawler pages/s | baseline pages/s | ratio |"
echo "|---|---|---|---|"
for round in $(seq "$ROUNDS"); do
  rm -rf "$tmp/out"
  target/release/crawl "$tmp/web.seeds" --out "$tmp/out" -j "$JOBS" --delay-factor 0 -q >"$tmp/log"
  awk -F'\t' '$1 == 200 && $7 != "robots" { print $6 }' "$tmp/log" >"$tmp/urls"
  target/release/examples/fetch_baseline "$tmp/urls" "$JOBS" >"$tmp/base.json"
  python3 - "$round" "$tmp/out/summary.json" "$tmp/base.json" <<'PY'
import json, sys
r, c, b = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
print(f"| {r} | {c['pages_per_second']:.0f} ({c['pages']} pages) | {b['pages_per_second']:.0f} ({b['pages']} pages) | {c['pages_per_second'] / b['pages_per_second']:.2f} |")
PY
done
stop_web
