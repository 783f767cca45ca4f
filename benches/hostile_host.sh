#!/usr/bin/env bash
# One host, 20 good pages and the hostile ones among them (issue 44: testweb::hostile::MIXED,
# a body that trickles forever, an endless body, a reset mid-body, a lying Content-Length, a
# gzip bomb, a redirect loop, a path trap), crawled by the release binary with default options
# (plus any arguments given here, e.g. `--retry-wait 1s`). Prints the wall seconds, the exit
# status, the good pages fetched, and the attempts per hostile page from the server's own
# request log (`testweb --log-out`): a page that keeps failing must not stall its host.
#
#   benches/hostile_host.sh                     (a few minutes: the default waits and timeouts)
#   benches/hostile_host.sh --retry-wait 1s
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --workspace --quiet
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
. benches/lib.sh
start_web web --hostile --log-out "$tmp/requests.tsv"
main=$(awk -F'\t' '$1 == "slow-loris" { sub("/slow-loris$", "", $2); print $2 }' "$tmp/web.seeds")
printf '%s/mixed\n' "$main" >"$tmp/seed"
set +e
/usr/bin/time -f '%e %M' -o "$tmp/time" target/release/crawl "$tmp/seed" --out "$tmp/out" -q "$@" \
  >"$tmp/log.tsv" 2>"$tmp/err"
code=$?
set -e
# The server logs a trickling answer once it notices the client gone (its next byte, 1 s on).
sleep 2
stop_web
read -r secs kib < <(tail -1 "$tmp/time")
port=${main##*:}
echo "crawl args: ${*:-(defaults)}"
echo "wall ${secs} s, exit ${code}, peak RSS $((kib / 1024)) MiB"
# The request log's lines: host TAB start_us TAB end_us TAB status TAB target (host 0 is MIXED's).
awk -F'\t' -v urllog="$tmp/log.tsv" '
  $1 == 0 { n[$5]++; if ($5 ~ /^\/good\//) good++ }
  END {
    printf "good pages asked: %d (URL log 200s: ", good
    while ((getline line < urllog) > 0) { split(line, f, "\t"); if (f[6] ~ /\/good\// && f[1] == 200) ok++ }
    printf "%d)\n", ok
    split("/slow-loris /endless-chunked /reset /cl-long /gzip-bomb /loop/a /loop/b /trap/", pages, " ")
    for (i = 1; i <= 8; i++) printf "  %-18s asked %d times\n", pages[i], n[pages[i]]
  }' "$tmp/requests.tsv"
echo "URL-log lines of the hostile pages (status, note):"
grep -E '/(slow-loris|reset|cl-long|endless-chunked|gzip-bomb|loop/a)	' "$tmp/log.tsv" |
  awk -F'\t' '{ sub("^https?://[^/]*", "", $6); printf "  %s %s %s\n", $6, $1, $7 }'
