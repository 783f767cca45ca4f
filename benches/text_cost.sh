#!/usr/bin/env bash
# The cost of `--text` in the crawl (issue 43, speed; the goal: with `--text main`, CPU per page
# on the rust-doc crawl at most x1.3 the crawl without it).
#
#   benches/text_cost.sh                              # rust-doc, python3-doc; none, main, full
#   WEBS=rust-doc REPS=5 benches/text_cost.sh         # one web, 5 rounds
#   OPTION_SETS='|--text main' benches/text_cost.sh   # option sets, `|` between them
#   BASE=/tmp/crawl.old WEBS=rust-doc benches/text_cost.sh   # an older binary beside this one
#   NO_WARC=1 MAX_PAGES=1000 benches/text_cost.sh     # `--no-warc`; stop after 1,000 pages
#
# Each web (benches/lib.sh's doc_web: `rust-doc` or `python3-doc`, Debian's documentation
# trees, installed if missing) is served by nginx as one host and crawled from its index.html
# with `--scope host --delay-factor 0 -j 1` (one worker: the CPU of the crawl's own work, not of
# waiting), the WARC written as a default crawl does (NO_WARC=1 adds `--no-warc`; then no WET
# file is written, though the text is still made), plus each option set of OPTION_SETS in turn
# (default: none, `--text main`, `--text full`); REPS rounds, each running every set once (with
# BASE: BASE's sets first, then this build's). Printed per web, binary and option set:
#   pages     2xx text/html answers in the URL log (all runs' counts if they differ)
#   WET       `conversion` records in the WET files of the last run (- without WARC files)
#   µs/page   CPU (user+sys, GNU time) per page, the median of REPS; the runs at the line's end
#   x         that median over the first option set's, same binary, same rounds
#   pages/s   pages over wall time, median of REPS
#   RSS       peak resident set of the crawl, MiB, the largest of REPS
# and the CPU model, `uptime` at the start and after each web, and the 1-minute load average
# after each run: the load beside the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
WEBS=${WEBS:-"rust-doc python3-doc"}
OPTION_SETS=${OPTION_SETS-"|--text main|--text full"}
REPS=${REPS:-3}
REPEAT=${REPEAT:-10}
BASE_PORT=${BASE_PORT:-20480}
CRAWL=${CRAWL:-target/release/crawl}

. benches/lib.sh
need nginx nginx-light
need zstd zstd
[ -x /usr/bin/time ] || need /usr/bin/time time
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet
tmp=$(mktemp -d /tmp/text_cost.XXXXXX)
chmod 755 "$tmp"
trap 'kill "${nginx_pid:-}" 2>/dev/null || true; rm -rf "$tmp"' EXIT

common=(--scope host --delay-factor 0 -j 1)
[ -z "${NO_WARC:-}" ] || common+=(--no-warc)
[ -z "${MAX_PAGES:-}" ] || common+=(--max-pages "$MAX_PAGES")
IFS='|' read -r -a sets <<<"$OPTION_SETS"
[ "${OPTION_SETS: -1}" != '|' ] || sets+=("")
[ ${#sets[@]} -gt 0 ] || { echo "OPTION_SETS names no option set" >&2; exit 2; }

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores;" \
  "crawl ${common[*]}; REPS=$REPS; this: $CRAWL${BASE:+; base: $BASE}"
echo "start: $(uptime)"
for web in $WEBS; do
  doc_web "$web"
  rm -rf "$tmp/www"; mkdir -p "$tmp/www"; ln -s "$root" "$tmp/www/h00000"
  serve_nginx 1
  seeds=$tmp/seeds; echo "http://127.0.0.1:$BASE_PORT/index.html" >"$seeds"
  declare -A cpu=() rate=() rss=() pages=() wet=()
  loads=""
  for ((rep = 0; rep < REPS; rep++)); do
    for binary in ${BASE:+base} this; do
      for s in "${!sets[@]}"; do
        run="$binary|$s" out=$tmp/out
        rm -rf "$out"
        read -r -a options <<<"${sets[s]}"
        rc=0 path=$CRAWL
        [ "$binary" = this ] || path=$BASE
        /usr/bin/time -f "%U %S %e %M" -o "$tmp/time" "$path" "$seeds" --out "$out" \
          "${common[@]}" "${options[@]}" >"$tmp/log" 2>"$tmp/err" || rc=$?
        # 4: stopped at --max-pages (page-limit), as asked.
        [ $rc = 0 ] || { [ $rc = 4 ] && [ -n "${MAX_PAGES:-}" ]; } ||
          { echo "$web: $binary ${sets[s]}: exit status $rc" >&2; tail -3 "$tmp/err" >&2; exit 1; }
        n=$(awk -F'\t' '$1 ~ /^2/ && $5 ~ /^text\/html/' "$tmp/log" | wc -l)
        read -r user sys wall kib < <(tail -1 "$tmp/time")  # after "Command exited with ..."
        [ "$n" -gt 0 ] || { echo "$web: $binary ${sets[s]}: no 2xx HTML page crawled" >&2; exit 1; }
        cpu[$run]+="$(awk -v u="$user" -v s="$sys" -v p="$n" 'BEGIN {printf "%.1f", (u + s) * 1e6 / p}') "
        rate[$run]+="$(awk -v w="$wall" -v p="$n" 'BEGIN {printf "%.0f", p / w}') "
        rss[$run]=$(( ${rss[$run]:-0} > kib / 1024 ? ${rss[$run]:-0} : kib / 1024 ))
        [[ " ${pages[$run]:-} " == *" $n "* ]] || pages[$run]+="$n "
        wet[$run]=-  # zstd reads the .gz of `--warc-compression gzip` too
        [ -n "${NO_WARC:-}" ] || wet[$run]=$(cat /dev/null "$out"/warc/*.warc.wet.{zst,gz} 2>/dev/null |
          zstd -dcq 2>/dev/null | grep -ac '^WARC-Type: conversion' || true)
        loads+="$(cut -d' ' -f1 /proc/loadavg) "
      done
    done
  done
  printf '%-12s %-6s %-12s %7s %7s %10s %6s %8s %5s  %s\n' \
    web binary options pages WET µs/page x pages/s RSS "runs (µs/page)"
  for binary in ${BASE:+base} this; do
    first=$(median <<<"${cpu[$binary|0]}")
    for s in "${!sets[@]}"; do
      run="$binary|$s" med=$(median <<<"${cpu[$binary|$s]}")
      pages_shown=${pages[$run]% }
      printf '%-12s %-6s %-12s %7s %7s %9s %6s %8s %5s  %s\n' "$web" "$binary" \
        "${sets[s]:-none}" "${pages_shown// //}" "${wet[$run]}" "$med" \
        "$(awk -v a="$med" -v b="$first" 'BEGIN {printf "%.2f", a / b}')" \
        "$(median <<<"${rate[$run]}")" "${rss[$run]}" "${cpu[$run]% }"
    done
  done
  echo "1-min load after each run: ${loads% }; after $web: $(uptime)"
  kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true
  unset cpu rate rss pages wet
done
