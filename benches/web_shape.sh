#!/usr/bin/env bash
# Speed at the web's shape: crawl beside wget2 on the same static web served by nginx on
# loopback, one port per host, crawl and wget2 alternating, medians of REPS runs.
#
#   benches/web_shape.sh                       # 50 hosts x 400 pages, then 2,000 x 10
#   CRAWL_JOBS=64 benches/web_shape.sh         # the crawl with -j 64 (threads) instead of its default
#   WEBS="2000x10" REPS=5 benches/web_shape.sh
#   CRAWL=/path/to/other/crawl SKIP_BUILD=1 benches/web_shape.sh
#   BEFORE=/path/to/old/crawl TOOLS="before-crawl crawl wget2" benches/web_shape.sh
#                                              # an older build in the same run (before-TOOL)
#   TOOLS="crawl wget2" benches/web_shape.sh   # leave out the --no-warc runs
#   LOGS=DIR benches/web_shape.sh              # keep each run's access log as DIR/WEB.TOOL.REP
#                                              # (benches/timeline.sh reads them)
#   WEBS=/usr/share/doc/rust-doc/html \
#   TOOLS="crawl crawl-nowarc wget2-t1 crawl-c16 crawl-c16-nowarc wget2-t16" benches/web_shape.sh
#                                              # one large real site (Debian's rust-doc) as one host
#
# Tools: crawl, crawl-nowarc, crawl-nobd (--no-warc-block-digest), crawl-text and crawl-text-full
# (--text main, --text full: WET files),
# crawl-nodedupe (--no-payload-dedupe), crawl-c16 and crawl-c16-nowarc (--host-connections 16), crawl-jN
# (-j N), crawl-c16-jN (both), wget2 (JOBS threads, default 64), wget2-tN (N threads), wget (GNU wget: one
# connection, one thread). A WEBS entry that is a directory is served as one host (a missing
# /usr/share/doc/PKG/… is installed from Debian's package PKG); its coverage is counted against
# its .html files (the tools also fetch the images, scripts and styles they link). After each
# web's table, every tool's set of URLs served 200 in its first run is compared with the first
# tool's (`+N` URLs only it fetched, `-N` URLs only the first tool fetched, with examples).
#
# Both tools are seeded with host 0's index page and span hosts (on a directory web, one
# host, they stay on it: `--scope host`, no `-H`); wget2 runs with
# `-r -H -l 0 --robots=off --max-threads=JOBS --delete-after`, the crawl with
# `--scope any --delay-factor 0` at its default concurrency: what a user gets, requests in
# flight on its event loop (`CRAWL_JOBS=N` adds `-j N`: N blocking workers). Politeness is
# off: this measures the machinery, and the crawl still fetches each host's robots.txt, which
# wget2 is told not to. A directory web is
# never crawled with -H: its pages link to the internet, and wget2 -H spends its end resolving
# those names (github.com, play.rust-lang.org, …) with retries while its other threads wait on
# its queue: the "hang" on rust-doc in sessions 5 and 6. Columns: pages/s (pages = distinct
# URLs served 200, from nginx's own log, over the tool's wall time), CPU µs/page (user+sys of
# the tool only), peak RSS (MiB), coverage (distinct .html pages served / .html pages in the
# web), duplicates (requests beyond the first per URL, robots.txt aside), server CPU µs/page
# (user+sys of nginx's worker during the run, from /proc: the share of the two cores the web
# itself takes, which grows with the number of hosts for every tool), server wait µs/page (the
# time nginx's worker was ready to run but waited for a core, from /proc/PID/schedstat: with
# one nginx worker on two cores shared with the tool, the server on the critical path), tool
# switches/page (the tool's voluntary context switches, all threads, from GNU time's %w: each
# is a thread that blocked, on a socket, a lock or a hand-off).
# NGINX_WORKERS=N serves the web with N nginx worker processes (default 1).
# SERVER_CPUS=1 TOOL_CPUS=0 runs the server and each tool on their own cores (taskset): on the
# real web the servers' per-host work (TCP accept, the robots.txt answer) is not on the
# crawler's machine, but on one 2-core box nginx takes it from the tool being measured.
set -euo pipefail
cd "$(dirname "$0")/.."
WEBS=${WEBS:-"50x400 2000x10"}
REPS=${REPS:-3}
JOBS=${JOBS:-64}
CRAWL_JOBS=${CRAWL_JOBS:-}
jobs=(); [ -z "$CRAWL_JOBS" ] || jobs=(-j "$CRAWL_JOBS")
TOOLS=${TOOLS:-"crawl crawl-nowarc wget2"}
BASE_PORT=${BASE_PORT:-20000}
CRAWL=${CRAWL:-target/release/crawl}

. benches/lib.sh
need nginx nginx-light
need wget2 wget2
need wget wget
[ -x /usr/bin/time ] || need /usr/bin/time time
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet

tmp=$(mktemp -d); chmod 755 "$tmp"   # nginx workers read the web
nginx_pid=
cleanup() {
  [ -z "$nginx_pid" ] || kill "$nginx_pid" 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "kept $tmp" >&2 || rm -rf "$tmp"
}
trap cleanup EXIT

# server_sum FILE AWK_EXPR: the sum over nginx's worker processes of AWK_EXPR read from
# /proc/PID/FILE.
server_sum() {
  local pid total=0
  for pid in $(pgrep -P "$nginx_pid"); do
    total=$((total + $(awk "{ print $2 }" "/proc/$pid/$1" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
# CPU clock ticks (user+sys) nginx's workers have used so far, and the nanoseconds they have
# waited in the run queue.
server_ticks() { server_sum stat '$14 + $15'; }
server_wait() { server_sum schedstat '$2'; }

# run TOOL: one crawl of the web; prints "wall cpu_seconds rss_kib server_cpu_seconds
# server_wait_ns voluntary_switches" and leaves the access log.
run() {
  local tool=$1 seed="http://127.0.0.1:$BASE_PORT/index.html" out=$tmp/out CRAWL=$CRAWL
  case $tool in before-*) CRAWL=$BEFORE; tool=${tool#before-} ;; esac
  # Span hosts on a generated web (its links all lead to its loopback ports); a directory web
  # is one host, and its links to the internet are not followed (only loopback is crawled).
  local scope=any span=-H
  [ "$hosts" -gt 1 ] || { scope=host; span=; }
  rm -rf "$out" "$tmp/access.log"
  kill -USR1 "$nginx_pid"   # reopen the (removed) access log
  sleep 0.2
  case $tool in
    crawl) set -- "$CRAWL" "$tmp/seeds" --out "$out" --scope "$scope" "${jobs[@]}" --delay-factor 0 ;;
    crawl-nowarc) set -- "$CRAWL" "$tmp/seeds" --out "$out" --scope "$scope" "${jobs[@]}" --delay-factor 0 --no-warc ;;
    crawl-nobd) set -- "$CRAWL" "$tmp/seeds" --out "$out" --scope "$scope" "${jobs[@]}" --delay-factor 0 \
      --no-warc-block-digest ;;
    crawl-text) set -- "$CRAWL" "$tmp/seeds" --out "$out" --scope "$scope" "${jobs[@]}" --delay-factor 0 --text ;;
    crawl-text-full) set -- "$CRAWL" "$tmp/seeds" --out "$out" --scope "$scope" "${jobs[@]}" --delay-factor 0 \
      --text full ;;
    crawl-nodedupe) set -- "$CRAWL" "$tmp/seeds" --out "$out" --scope "$scope" "${jobs[@]}" --delay-factor 0 \
      --no-payload-dedupe ;;
    crawl-c16) set -- "$CRAWL" "$tmp/seeds" --out "$out" --scope "$scope" "${jobs[@]}" --delay-factor 0 \
      --host-connections 16 ;;
    crawl-c16-nowarc) set -- "$CRAWL" "$tmp/seeds" --out "$out" --scope "$scope" "${jobs[@]}" \
      --delay-factor 0 --host-connections 16 --no-warc ;;
    crawl-c16-j*) set -- "$CRAWL" "$tmp/seeds" --out "$out" --scope "$scope" -j "${tool#crawl-c16-j}" \
      --delay-factor 0 --host-connections 16 ;;
    crawl-j*) set -- "$CRAWL" "$tmp/seeds" --out "$out" --scope "$scope" -j "${tool#crawl-j}" \
      --delay-factor 0 ;;
    wget) mkdir -p "$out"; set -- wget -q -r $span -l inf -e robots=off --delete-after -P "$out" "$seed" ;;
    wget2*) local threads=$JOBS
      case $tool in wget2-t*) threads=${tool#wget2-t} ;; esac
      mkdir -p "$out"; set -- wget2 -q -r $span -l 0 --robots=off --max-threads="$threads" \
      --delete-after -P "$out" "$seed" ;;
  esac
  echo "$seed" >"$tmp/seeds"
  local ticks0 wait0; ticks0=$(server_ticks) wait0=$(server_wait)
  /usr/bin/time -f '%e %U %S %M %w' -o "$tmp/time" ${TOOL_CPUS:+taskset -c "$TOOL_CPUS"} "$@" >/dev/null 2>"$tmp/stderr" || true
  kill -USR1 "$nginx_pid"   # flush the buffered log
  sleep 0.3
  # The last line: GNU time puts "Command exited with non-zero status N" before it (wget
  # exits 8 when some link answered 404).
  read -r wall user sys rss switches < <(tail -n 1 "$tmp/time")
  local server; server=$(echo "scale=3; ($(server_ticks) - $ticks0) / $(getconf CLK_TCK)" | bc)
  echo "$wall $(echo "$user + $sys" | bc) $rss $server $(( $(server_wait) - wait0 )) $switches"
}

echo "web_shape: $(nproc) cores${TOOL_CPUS:+, tools on CPU $TOOL_CPUS}${SERVER_CPUS:+, nginx on CPU $SERVER_CPUS}, crawl ${CRAWL_JOBS:+-j }${CRAWL_JOBS:-default concurrency}, wget2 $JOBS threads, medians of $REPS, $(wget2 --version | head -1 | cut -d' ' -f1-3), nginx $(nginx -v 2>&1 | cut -d/ -f2)"
echo "| web | tool | pages/s | CPU µs/page | peak RSS MiB | coverage | duplicates | server CPU µs/page | server wait µs/page | tool switches/page |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for web in $WEBS; do
  rm -rf "$tmp/www"
  case $web in
    /*) # a directory served as one host, seeded with its index.html
      case $web in /usr/share/doc/*/*) need_dir "$web" "$(echo "$web" | cut -d/ -f5)" ;; esac
      hosts=1 pages=$(find -L "$web" -name '*.html' | wc -l)
      mkdir -p "$tmp/www"; ln -s "$web" "$tmp/www/h00000" ;;
    *) hosts=${web%x*} pages=${web#*x}
      python3 benches/static_web.py "$tmp/www" "$hosts" "$pages" "$BASE_PORT" ;;
  esac
  serve_nginx "$hosts"
  : >"$tmp/rows"
  for ((rep = 1; rep <= REPS; rep++)); do
    for tool in $TOOLS; do
      read -r wall cpu rss server wait switches < <(run "$tool")
      # distinct page URLs served 200, and page requests beyond the first (robots.txt aside)
      # and distinct .html pages served 200 (the coverage of a directory web)
      read -r distinct dups html < <(awk '$2 != "/robots.txt" { n++
          if (!seen[$1 $2]++ && $3 == 200) { d++; if ($2 ~ /(\.html|\/)$/) h++ } }
        END { print d + 0, n - length(seen), h + 0 }' "$tmp/access.log")
      echo "$tool $wall $cpu $rss $distinct $dups $html $server $wait $switches" >>"$tmp/rows"
      [ "$rep" -gt 1 ] || awk '$2 != "/robots.txt" && $3 == 200 { print $1 $2 }' "$tmp/access.log" |
        sort -u >"$tmp/urls.$tool"
      [ -z "${LOGS:-}" ] || cp "$tmp/access.log" "$LOGS/${web//\//_}.$tool.$rep"
    done
  done
  kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; nginx_pid=
  python3 - "$web" "$((hosts * pages))" "$tmp/rows" $TOOLS <<'PY'
import statistics, sys
web, total, rows, tools = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
runs = [l.split() for l in open(rows)]
for tool in tools:
    mine = [r for r in runs if r[0] == tool]
    med = lambda f: statistics.median(f(r) for r in mine)
    rate = med(lambda r: int(r[4]) / float(r[1]))
    cpu = med(lambda r: float(r[2]) * 1e6 / max(int(r[4]), 1))
    rss = med(lambda r: int(r[3]) / 1024)
    cov = med(lambda r: int(r[6]) / total)
    dups = max(int(r[5]) for r in mine)
    server = med(lambda r: float(r[7]) * 1e6 / max(int(r[4]), 1))
    wait = med(lambda r: int(r[8]) / 1e3 / max(int(r[4]), 1))
    switches = med(lambda r: int(r[9]) / max(int(r[4]), 1))
    print(f"| {web} | {tool} | {rate:,.0f} | {cpu:,.0f} | {rss:.1f} | {100 * cov:.1f}% | {dups} | {server:,.0f} | {wait:,.0f} | {switches:.2f} |")
PY
  # The first runs' URL sets beside the first tool's: what each fetched that the other did not.
  set -- $TOOLS
  for tool in "${@:2}"; do
    only=$(comm -13 "$tmp/urls.$1" "$tmp/urls.$tool")
    missed=$(comm -23 "$tmp/urls.$1" "$tmp/urls.$tool")
    printf '%s beside %s: +%d -%d URLs served 200' "$tool" "$1" "$(grep -c . <<<"$only" || true)" \
      "$(grep -c . <<<"$missed" || true)"
    [ -z "$only" ] || printf '; only %s: %s' "$tool" "$(head -n 3 <<<"$only" | paste -sd' ')"
    [ -z "$missed" ] || printf '; only %s: %s' "$1" "$(head -n 3 <<<"$missed" | paste -sd' ')"
    echo
  done
done
