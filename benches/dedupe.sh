#!/usr/bin/env bash
# `crawl dedupe` at scale against sort -u, awk '!seen[$0]++' and an in-memory hash set of
# checksums (the ceiling), all on the same generated stream (examples/urlstream.rs: web-like
# duplication, ~72% CLOCK hits at 64K entries), in one run. For each size prints lines/s,
# ns per line, peak RSS and bytes written to disk per input line (crawl dedupe's own count).
#
#   benches/dedupe.sh                 # 10^6, 10^7, 10^8 lines (the last takes ~15 min)
#   SIZES="1000000 10000000" benches/dedupe.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"1000000 10000000 100000000"}
cargo build --release --quiet --bin crawl --example urlstream --example hashset_dedupe
tmp=${TMPDIR:-/tmp}/dedupe-bench.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C   # byte-wise sort and awk, as fast as they go

# measure NAME LINES CMD…: runs CMD with the stream on stdin, prints a table row.
measure() {
  local name=$1 lines=$2; shift 2
  local t0 t1 secs kib
  t0=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$tmp/time" "$@" <"$tmp/stream" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  t1=$(date +%s%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
  read -r kib <"$tmp/time"
  local unique disk="-"
  unique=$(wc -l <"$tmp/out")
  if grep -q "bytes written to disk" "$tmp/err"; then
    disk=$(grep -o '[0-9]* bytes written to disk' "$tmp/err" | awk -v n="$lines" '{printf "%.1f", $1 / n}')
  fi
  awk -v name="$name" -v n="$lines" -v s="$secs" -v k="$kib" -v u="$unique" -v d="$disk" 'BEGIN {
    printf "| %s | %d | %d | %.2f | %.0f | %.0f | %.1f | %s |\n", name, n, u, s, n / s, s * 1e9 / n, k / 1024, d }'
}

echo "dedupe benchmark, $(nproc) cores; columns: tool, input lines, output lines, seconds, lines/s, ns/line, peak RSS MiB, disk bytes written per line"
echo "| tool | lines | unique | seconds | lines/s | ns/line | peak RSS MiB | disk B/line |"
echo "|---|---|---|---|---|---|---|---|"
for n in $SIZES; do
  target/release/examples/urlstream "$n" 1 >"$tmp/stream"
  measure "hash set (ceiling)" "$n" target/release/examples/hashset_dedupe
  rm -rf "$tmp/state"; measure "crawl dedupe --raw" "$n" target/release/crawl dedupe --raw --state "$tmp/state"
  rm -rf "$tmp/state"; measure "crawl dedupe (URLs)" "$n" target/release/crawl dedupe --state "$tmp/state"
  measure "sort -u" "$n" sort -u -T "$tmp"
  measure "awk '!seen[\$0]++'" "$n" awk '!seen[$0]++'
  rm -rf "$tmp/state"
done
