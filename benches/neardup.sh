#!/usr/bin/env bash
# Near-duplicates (issue 45): precision and recall of `--near-duplicates note` against the
# exact measure (benches/neardup_truth.py: 5-word-shingle Jaccard from the served files, its
# own HTML reading), and the crawl's CPU per page with and without detection.
#
#   benches/neardup.sh                       # the template-copy web, rust-doc, python3-doc
#   WEBS="template" benches/neardup.sh       # one of them
#   THRESHOLD=0.8 benches/neardup.sh         # another threshold (crawler and measure alike)
#   BASE=/tmp/crawl.old WEBS=rust-doc benches/neardup.sh   # an older binary beside this one
#   WARC=1 WEBS=rust-doc benches/neardup.sh  # the WARC written, as a default crawl does
#
# Webs: `template` is testweb::neardup's template-copy web written as files by
# `examples/neardup_web.rs` (REPEAT=10 times over: 3,000 pages, 60 articles of 30 to 1,000 words
# with 4 near-duplicate copies each, per round); `rust-doc` and `python3-doc` Debian's
# documentation trees (installed if missing). Each is served by nginx as one host and crawled
# from its index.html with `--scope host --delay-factor 0 --no-warc -j 1` (one worker: the CPU
# of the crawl's own thread work, not of waiting; WARC=1 drops `--no-warc`), twice:
# `--near-duplicates off` and `note`, REPS times each, alternating. Printed per web: pages,
# CPU µs/page (user+sys, GNU time) off and note and their ratio (the median of REPS), peak
# RSS, then the truth script's line on the last `note` run's log. With BASE=BINARY, each round runs BASE off and note first, then this
# build's, and a line for BASE is printed too (medians of the same rounds: the same load).
set -euo pipefail
cd "$(dirname "$0")/.."
WEBS=${WEBS:-"template rust-doc python3-doc"}
REPS=${REPS:-3}
REPEAT=${REPEAT:-10}
THRESHOLD=${THRESHOLD:-0.9}
BASE_PORT=${BASE_PORT:-20400}
CRAWL=${CRAWL:-target/release/crawl}

. benches/lib.sh
need nginx nginx-light
[ -x /usr/bin/time ] || need /usr/bin/time time
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --example neardup_web
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet
tmp=$(mktemp -d /tmp/neardup.XXXXXX)
chmod 755 "$tmp"
trap 'kill "${nginx_pid:-}" 2>/dev/null || true; rm -rf "$tmp"' EXIT

warc=(--no-warc)
[ -z "${WARC:-}" ] || warc=()

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for web in $WEBS; do
  doc_web "$web"
  rm -rf "$tmp/www"; mkdir -p "$tmp/www"; ln -s "$root" "$tmp/www/h00000"
  serve_nginx 1
  seeds=$tmp/seeds; echo "http://127.0.0.1:$BASE_PORT/index.html" >"$seeds"
  declare -A cpu=() rss=()
  for ((rep = 0; rep < REPS; rep++)); do
    for run in ${BASE:+base-off base-note} off note; do
      mode=${run#base-} binary=$CRAWL
      [ "$run" = "$mode" ] || binary=$BASE
      rm -rf "$tmp/out"
      /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$binary" "$seeds" --out "$tmp/out" \
        --scope host --delay-factor 0 "${warc[@]}" -j 1 --near-duplicates "$mode" \
        --near-duplicates-threshold "$THRESHOLD" >"$tmp/log.$run" 2>/dev/null || true
      pages=$(awk -F'\t' '$1 == 200 && $5 ~ /^text\/html/' "$tmp/log.$run" | wc -l)
      read -r user sys kib <"$tmp/time"
      cpu[$run]+="$(awk -v u="$user" -v s="$sys" -v p="$pages" 'BEGIN {printf "%.1f", (u + s) * 1e6 / p}') "
      rss[$run]=$((kib / 1024))
    done
  done
  for binary in ${BASE:+base-} ""; do
    off=$(tr ' ' '\n' <<<"${cpu[${binary}off]}" | grep . | median)
    note=$(tr ' ' '\n' <<<"${cpu[${binary}note]}" | grep . | median)
    noted=$(grep -c $'\tnear-duplicate:' "$tmp/log.${binary}note" || true)
    printf '%s%s: %d HTML pages, CPU µs/page off %s, note %s (x%s), peak RSS MiB off %s, note %s, noted %s (runs: off %s; note %s)\n' \
      "$web" "${binary:+ (BASE)}" "$pages" "$off" "$note" \
      "$(awk -v a="$note" -v b="$off" 'BEGIN {printf "%.2f", a / b}')" \
      "${rss[${binary}off]}" "${rss[${binary}note]}" "$noted" "${cpu[${binary}off]% }" \
      "${cpu[${binary}note]% }"
  done
  python3 benches/neardup_truth.py "$tmp/log.note" "$root" --threshold "$THRESHOLD" ${VERBOSE:+-v}
  kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true
  unset cpu rss
done
