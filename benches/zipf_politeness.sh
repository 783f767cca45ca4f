#!/usr/bin/env bash
# Politeness at the web's shape (issue 18): Zipf-sized hosts (host h has about C/(h+1)^S pages,
# S = 1: 1,000 hosts and 5,000 pages give the largest 663 of 5,002, 13%; 10,000 and 50,000 give
# it 4,968 of 50,001, 10%), every response L ms late, crawled with the DEFAULT politeness (one
# request per host at a time, the next 10× the last response time later). The largest host alone needs n·L + (n−1)·10·L; all pages through JOBS
# workers need pages·L/JOBS; the crawl cannot beat the larger of the two (the bound).
#
#   benches/zipf_politeness.sh
#   SIZES="1000:5000" L_MS=20 benches/zipf_politeness.sh      # hosts:pages, response latency
#   CRAWL=/path/to/crawl SKIP_BUILD=1 benches/zipf_politeness.sh
#   ZIPF_S=1.1 JOBS=32 KEEP=1 benches/zipf_politeness.sh
#   LATE=1 benches/zipf_politeness.sh      # host 0's pages found only deep (testweb --largest-late)
#
# Columns: n = pages of the largest host (host 0); wall = summary.json `seconds`; host-0 idle =
# seconds host 0 had nothing in flight beyond what the delay rule required after its previous
# response (testweb's `largest_idle_s`, from the server's own log, service time = head read →
# last write); host-0 span = its first request to its last response; RSS = summary.json
# `peak_rss_bytes`; overlaps = same-host requests in flight together; short gaps = same-host
# requests sooner than 10 × the previous service time (less 2% and 1 ms); fetched = distinct
# pages requested / pages reachable from the seeds; dup = pages requested more than once.
# Below the table, per size: host 0's mean response time as the crawler measured it (what its
# delays are 10× of) and the span that implies, and when host 0's last request came.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"1000:5000 10000:50000"}
L_MS=${L_MS:-10}
JOBS=${JOBS:-64}
ZIPF_S=${ZIPF_S:-1.0}
LATE=${LATE:+--largest-late}
FACTOR=10 # crawl's default --delay-factor: only what the checks compare against
CRAWL=${CRAWL:-target/release/crawl}
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --workspace --quiet
[ -x target/release/testweb ] || { echo "no target/release/testweb: build the workspace" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }

# One listener per host, two descriptors per open connection: 10,000 hosts need more than the
# usual 1,024 (testweb and crawl both inherit this shell's limit).
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
nofile=$(ulimit -n)

# Hosts by address: a web of more than 4,000 hosts is served on ONE port, host i at 127.0.0.1 + i
# (testweb --hosts-by-address), as benches/latency.sh does and for its reason: one listener per
# host plus one descriptor per connection the crawler keeps (it keeps one per host it crawls)
# outgrow testweb's open-file limit (20,000 here, not raisable even by root), and a server out
# of descriptors stops accepting, which the crawl would see as a web of timeouts. That takes a
# listener on 0.0.0.0, so the script then runs in a network namespace of its own (unshare
# --net, as root; lo its only interface). NETNS=1 always, NETNS=0 never.
by_address() {
  case ${NETNS:-auto} in
    1) echo 1 ;;
    0) echo 0 ;;
    *) [ "$1" -gt 4000 ] && echo 1 || echo 0 ;;
  esac
}
netns=0
for size in $SIZES; do [ "$(by_address "${size%%:*}")" = 0 ] || netns=1; done
if [ "$netns" = 1 ] && [ -z "${ZIPF_IN_NETNS:-}" ]; then
  command -v ip >/dev/null || apt-get install -y -qq iproute2 >/dev/null
  exec unshare --net -- env ZIPF_IN_NETNS=1 SKIP_BUILD=1 SIZES="$SIZES" CRAWL="$CRAWL" bash -c \
    "ip link set lo up && { sysctl -qw net.core.somaxconn=65535 net.ipv4.tcp_max_syn_backlog=65535 || true; } && exec bash benches/zipf_politeness.sh" ||
    { echo "NETNS: unshare --net failed (needs root); NETNS=0 serves one port per host" >&2; exit 1; }
fi

tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] && echo "kept $tmp" >&2 || rm -rf "$tmp"' EXIT
. benches/lib.sh

echo "L = $L_MS ms per response, -j $JOBS, delay factor $FACTOR (default), Zipf exponent $ZIPF_S${LATE:+, host 0 found late}, open files $nofile${ZIPF_IN_NETNS:+; in a network namespace of its own, webs of more than 4,000 hosts served by address (one port)}"
echo
echo "| hosts | pages | n (host 0) | bound (s) | wall (s) | wall / bound | host-0 idle beyond rule (s) | host-0 span (s) | peak RSS (MiB) | overlaps | short gaps | fetched / reachable | dup |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
notes=""
for size in $SIZES; do
  hosts=${size%%:*} pages=${size##*:}
  listeners=$hosts served=()
  if [ "$(by_address "$hosts")" = 1 ]; then
    listeners=1 served=(--hosts-by-address --bind 0.0.0.0:0)
  fi
  if [ "$nofile" != unlimited ] && [ "$nofile" -lt $((listeners + 2048)) ]; then
    echo "| $hosts | $pages | skipped: open-file limit $nofile < listeners ($listeners) + 2048 |"
    continue
  fi
  start_web "web$hosts" --hosts "$hosts" --zipf-pages "$pages" --zipf-exponent "$ZIPF_S" \
    --children 4 --extra-links 4 --cross-permille 200 --padding 1000 --seed 18 \
    --latency-ms "$L_MS" --check-delay-factor "$FACTOR" $LATE "${served[@]}"
  /usr/bin/time -f '%M %e %U %S' -o "$tmp/time.$hosts" \
    "$CRAWL" "$tmp/web$hosts.seeds" --out "$tmp/out.$hosts" -j "$JOBS" --scope any -q \
    >"$tmp/log.$hosts"
  stop_web
  row=$(python3 - "$tmp" "$hosts" "$pages" "$L_MS" "$JOBS" "$FACTOR" <<'PY'
import json, sys, urllib.parse
tmp, hosts, pages, l_ms, jobs, factor = sys.argv[1], *map(int, sys.argv[2:4]), float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
web = json.loads(open(f"{tmp}/web{hosts}.server.json").read())
summary = json.load(open(f"{tmp}/out.{hosts}/summary.json"))
host0 = urllib.parse.urlsplit(open(f"{tmp}/web{hosts}.seeds").readline().strip()).netloc
L = l_ms / 1000
n, reachable = web["largest_pages"], web["reachable"]
bound = max(n * L + (n - 1) * factor * L, reachable * L / jobs)
wall = summary["seconds"]
ms = []
for line in open(f"{tmp}/log.{hosts}"):
    f = line.rstrip("\n").split("\t")
    if len(f) > 5 and urllib.parse.urlsplit(f[5]).netloc == host0:
        ms.append(int(f[3]) / 1000)
implied = sum(ms) + factor * (sum(ms) - ms[-1]) if ms else 0
mean = 1000 * sum(ms) / len(ms) if ms else 0
print(f"| {hosts} | {reachable} | {n} | {bound:.1f} | {wall:.1f} | {wall / bound:.3f} | "
      f"{web['largest_idle_s']:.2f} | {web['largest_span_s']:.1f} | {summary['peak_rss_bytes'] / 2**20:.0f} | "
      f"{web['overlaps']} | {web['short_gaps']} | {web['distinct']} / {reachable} | {web['duplicates']} |")
print(f"- {hosts} hosts: host 0 served {web['largest_requests']} requests (robots.txt included); the crawler "
      f"measured {mean:.1f} ms per response on average (L = {l_ms:g}), so its rule alone needs {implied:.1f} s "
      f"({implied / bound:.3f} × bound); crawl ending {summary['ending']}, {summary['pages']} pages, "
      f"/usr/bin/time: {open(f'{tmp}/time.{hosts}').read().split()}  (maxrss KiB, elapsed s, user s, sys s)")
PY
)
  echo "${row%%$'\n'*}"
  notes+="${row#*$'\n'}"$'\n'
done
echo
printf '%s' "$notes"
