#!/usr/bin/env bash
# Polite and fast at the web's latency (issue 28): testweb on loopback (one port per host, or
# one address per host: see NETNS below),
# every response delayed as a real server's would be, crawled with the DEFAULT politeness (one
# request per host at a time, the next F = 10 × the last response's service time after it),
# default options first, then -j at a few values.
#
# Webs (WEBS picks a subset; SCALE multiplies the hosts, pages per host stay):
#   a  10,000 hosts × 10 pages, every response 100 ms
#   b   2,000 hosts × 20 pages, every response 500 ms
#   c   2,000 hosts, Zipf sizes (3 pages per host on average, exponent ZIPF_S = 0.5), each host's
#       latency log-uniform in 20 ms – 1 s (testweb --latency-spread-ms, fixed by --seed)
#   d  10,000 hosts × 10 pages, 100 ms, found as fetched (testweb --ring: one seed; each page
#       links its host's next page, two of its own and two of other hosts', each / the next
#       host's /): a host's later pages and most hosts are known only once pages are answered
#   e   2,000 hosts, the same ring web as d
#
# The ideal crawler (testweb's ideal_s, testweb::graph::Graph::ideal): the same link graph
# simulated with the rule (one request per host, robots.txt first, a rest of F × each response
# time), unlimited concurrency, no delay of its own, each page known the instant the page
# linking to it is answered. Unlike the bound below, it counts discovery: on a web found as it
# is fetched it is the limit a crawl is measured against (wall / ideal).
#
# The politeness bound, from the server's log (testweb --log-out: per request its host, the
# instants its head was read and its response's last write began, service s = end − start):
#
#   chain(h) = Σ_i s_i + F · Σ_{i < n_h} s_i      over host h's n_h requests, robots.txt included
#   bound    = max_h chain(h)
#
# i.e. each host's serial chain: each response's service time, followed by a 10× rest, no rest
# after the last. No crawl can end sooner (it may end later when pages are found only late).
# "j-bound" = Σ_all s_i / J: what J requests in flight at most allow (J = -j, 16 by default).
#
# Columns: wall = summary.json `seconds`; idle beyond rule per host = Σ over its consecutive
# requests of max(0, start_i − end_{i−1} − F · s_{i−1}) (the time the host had nothing in
# flight beyond what the rule required after its previous response), median / p90 / p99 over
# hosts; 1st req = when a host's first request (robots.txt) began, s after the crawl's first,
# median / p90 / max; overlaps and short gaps = testweb --check-delay-factor (must be 0);
# pages, fetched = distinct pages answered 200 / reachable from the seeds (the crawler's
# /sitemap.xml, a 404 here, is a request but no page), dup = requested twice or more;
# RSS, CPU = /usr/bin/time on the crawl (peak RSS, user + sys); testweb CPU = the server's
# user + sys and its peak threads (is the test web the limit? It serves every connection from
# one event loop, each response delayed by a timer, so it stays at a few threads and a small
# share of the CPU beside the crawler it measures); pages/s = responses (robots.txt
# and 404s excluded) per 5 s of the server's log (wider bins when the run is long; the width is stated).
# Below the table, per run: where the idle time was (after robots.txt or after a page; in the
# first or the second half of the run) and the crawl's summary (merges, ending).
#
#   benches/latency.sh                                   # all webs, default + JOBS_LIST
#   SCALE=0.05 WEBS=a benches/latency.sh                 # quick: ~1 minute
#   WEBS="a c" SCALE=0.2 JOBS_LIST="256 1024" benches/latency.sh
#   CRAWL=/path/to/other/crawl SKIP_BUILD=1 benches/latency.sh
#   DEFAULT=0 JOBS_LIST=1024 MAX_SECONDS=120 KEEP=1 benches/latency.sh
#   SAMPLE=1 ...     also sample the crawl's --out directory every 100 ms (DUE batches and
#                    merges, frontier and spill files) and print idle hosts per second beside
#                    the merges (for finding what idle hosts wait for)
#   CRAWL_ARGS="--buffer-entries 4096" ...   more crawl options for every run
#   NETNS=1 ...      serve every web by address (below); NETNS=0 never; default: the webs of
#                    more than 4,000 hosts (web a from SCALE 0.41 on)
#   DNS_DELAY_MS="0 100" ...   hosts by name, answered by a DNS server after each delay (below)
#   DNS_DELAY_MS=100 DNS_SLOW=50:3000 ...   and the names of hosts 50, 100, 150, ... after 3 s
#
# Hosts by address (NETNS): one listener per host costs testweb a descriptor each, and with
# 10,000 of them plus one per connection (the crawler keeps thousands open) testweb outgrows
# an open-file limit of 20,000 that not even root can raise here: robots.txt fetches then time
# out. So a large web is served on ONE port, host i at 127.0.0.1 + i (testweb
# --hosts-by-address), told apart by the address a connection arrived on. That takes a
# listener on 0.0.0.0, which would also serve the machine's real interfaces, so the script
# then runs itself, testweb and the crawl in a network namespace of its own (unshare --net,
# as root; lo is its only interface). Such a web's column says "by address"; its log still
# names hosts by index, so the bound and the idle figures are computed alike.
#
# Hosts by name (DNS_DELAY_MS, a list of delays in ms): every web is served by address, and
# each run is made once per delay with the hosts named instead, h{i}.web.test in the seeds and
# the links, so that the crawler resolves a name per host. testweb answers those names itself
# (--dns-bind 127.0.0.53:53), each answer the delay after its question. The network namespace
# then has a mount namespace too (unshare --mount, private), where a resolv.conf naming
# 127.0.0.53 is bind-mounted over /etc/resolv.conf (nsswitch.conf must say dns for hosts).
# The names resolve to loopback, which no seed by name opens: the crawl is given
# --allow-private. Such a web's column says "names, DNS D ms". Below the table, per run:
# from the DNS server's log, when a host's name was first asked for (s after the crawl's first
# request), the time from that question to the host's first request (a lookup that waits for
# the first request's turn shows as about the delay; one made ahead of need, as more), the
# look-ups in flight at once (A questions asked and not yet answered, most and median over
# the questions), and names asked for more than once.
#
# Slow names (DNS_SLOW=N:MS, with DNS_DELAY_MS): the names of hosts N, 2N, 3N, ... are answered
# after MS ms instead, as dead domains and slow authoritative servers answer on the web. A
# crawl that waits on a slow name in a thread other hosts need stalls those hosts: the bound and
# the idle figures are then of the other hosts alone (the slow-named hosts cannot start before
# their answer, so they set no bound), and the note below the table says when the other hosts
# were done (their last response) against that bound, and when the slow-named hosts began.
#
# MAX_SECONDS (default 900) stops a run with SIGINT (the row then says so). Needs python3 and
# /usr/bin/time (installed with apt-get when missing) and a raised open-file limit (a web of
# one port per host: one listener each, plus a descriptor per connection on both sides).
set -euo pipefail
cd "$(dirname "$0")/.."
WEBS=${WEBS:-"a b c"}
SCALE=${SCALE:-1}
JOBS_LIST=${JOBS_LIST:-"256 1024"}
DEFAULT=${DEFAULT:-1}
ZIPF_S=${ZIPF_S:-0.5}
MAX_SECONDS=${MAX_SECONDS:-900}
FACTOR=10 # crawl's default --delay-factor: what the bound and the checks use
CRAWL=${CRAWL:-target/release/crawl}
. benches/lib.sh
need python3 python3
need /usr/bin/time time
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --workspace --quiet
[ -x target/release/testweb ] || { echo "no target/release/testweb: build the workspace" >&2; exit 1; }
[ -x "$CRAWL" ] || { echo "no crawl at $CRAWL" >&2; exit 1; }

ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
nofile=$(ulimit -n)

scaled() { python3 -c "print(max(1, round($1 * $SCALE)))"; }

# by_address WEB: 1 when WEB is served by address (see NETNS in the header).
by_address() {
  local hosts
  case $1 in a | d) hosts=$(scaled 10000) ;; *) hosts=$(scaled 2000) ;; esac
  [ -z "${DNS_DELAY_MS:-}" ] || { echo 1; return; } # names resolve to the hosts' addresses
  case ${NETNS:-auto} in
    1) echo 1 ;;
    0) echo 0 ;;
    *) [ "$hosts" -gt 4000 ] && echo 1 || echo 0 ;;
  esac
}
netns=0
for web in $WEBS; do [ "$(by_address "$web")" = 0 ] || netns=1; done
if [ "$netns" = 1 ] && [ -z "${LATENCY_IN_NETNS:-}" ]; then
  # Into a network namespace of our own, lo up; its sysctls are its own, so the listen queue
  # of the one shared port may grow past the default 4,096 (a burst of first connections).
  need ip iproute2
  # With DNS_DELAY_MS, a mount namespace too, where /etc/resolv.conf names testweb's server.
  dns_setup=true unshare_mount=()
  if [ -n "${DNS_DELAY_MS:-}" ]; then
    grep -Eq '^hosts:.*\<dns\>' /etc/nsswitch.conf ||
      { echo "DNS_DELAY_MS: /etc/nsswitch.conf's hosts line has no dns" >&2; exit 1; }
    resolv=$(mktemp)
    printf 'nameserver 127.0.0.53\noptions timeout:5 attempts:2\n' >"$resolv"
    dns_setup="mount --bind $resolv /etc/resolv.conf" unshare_mount=(--mount --propagation private)
  fi
  exec unshare --net "${unshare_mount[@]}" -- env LATENCY_IN_NETNS=1 SKIP_BUILD=1 bash -c \
    "ip link set lo up && $dns_setup && { sysctl -qw net.core.somaxconn=65535 net.ipv4.tcp_max_syn_backlog=65535 || true; } && exec bash benches/latency.sh" ||
    { echo "NETNS: unshare --net failed (needs root); NETNS=0 serves one port per host" >&2; exit 1; }
fi

tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'kill $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] && echo "kept $tmp" >&2 || rm -rf "$tmp"' EXIT

# web_args WEB: testweb's options for web a, b, c, d or e.
web_args() {
  local common="--children 4 --extra-links 4 --cross-permille 200 --padding 1000 --seed 28"
  case $1 in
    a) echo "--hosts $(scaled 10000) --pages-per-host 10 --latency-ms 100 $common" ;;
    b) echo "--hosts $(scaled 2000) --pages-per-host 20 --latency-ms 500 $common" ;;
    c) local h; h=$(scaled 2000)
       echo "--hosts $h --zipf-pages $((3 * h)) --zipf-exponent $ZIPF_S --latency-spread-ms 20:1000 $common" ;;
    d) echo "--hosts $(scaled 10000) --pages-per-host 10 --latency-ms 100 --ring --padding 1000 --seed 28" ;;
    e) echo "--hosts $(scaled 2000) --pages-per-host 10 --latency-ms 100 --ring --padding 1000 --seed 28" ;;
    *) echo "unknown web $1 (a, b, c, d or e)" >&2; exit 2 ;;
  esac
}

# sample DIR OUT: every 100 ms, one line `t_ms path size …` of the files under DIR.
sample() {
  python3 - "$1" "$2" 3>&- <<'PY' &
import os, sys, time
root, out = sys.argv[1:]
t0 = time.monotonic()
with open(out, "w") as f:
    while True:
        files = []
        for d, _, names in os.walk(root):
            for n in names:
                p = os.path.join(d, n)
                try:
                    files.append(f"{os.path.relpath(p, root)}={os.path.getsize(p)}")
                except OSError:
                    pass
        f.write(f"{(time.monotonic() - t0) * 1000:.0f} {' '.join(files)}\n")
        f.flush()
        time.sleep(0.1)
PY
  sampler_pid=$!
}

# dns_note RUN DELAY_MS: from the DNS server's log (host, t_us, qtype, name; t on the request
# log's clock) and the request log, per host: its name's first question, the time from it to
# the host's first request; the look-ups in flight at once; names asked for twice or more.
dns_note() {
  python3 - "$tmp" "$1" "$2" <<'PY'
import statistics, sys
from collections import Counter
tmp, run, delay_ms = sys.argv[1:]
delay = int(delay_ms) / 1e3
asked, first_q = Counter(), {}
a_times = []
for line in open(f"{tmp}/{run}.dns"):
    h, us, qtype, name = line.rstrip("\n").split("\t")
    if qtype != "1":
        continue
    t = int(us) / 1e6
    a_times.append(t)
    asked[name] += 1
    if int(h) >= 0:
        first_q.setdefault(int(h), t)
first_req = {}
for line in open(f"{tmp}/{run}.log"):
    h, a = line.split("\t", 2)[:2]
    first_req.setdefault(int(h), int(a) / 1e6)
    first_req[int(h)] = min(first_req[int(h)], int(a) / 1e6)
waits = sorted(first_req[h] - first_q[h] for h in first_req if h in first_q)
qs = sorted(first_q.values())
def pct(xs, q):
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")
# A questions in flight at each question: asked within the delay before it (answers come
# exactly one delay after their question).
a_times.sort()
in_flight, lo = [], 0
for i, t in enumerate(a_times):
    while lo < i and a_times[lo] <= t - delay:
        lo += 1
    in_flight.append(i - lo + 1)
twice = sum(1 for n in asked.values() if n > 1)
print(f"- DNS {run}: {len(asked):,} names, {len(a_times):,} A questions ({twice:,} names asked twice or more); "
      f"first question per host at med {statistics.median(qs) if qs else float('nan'):.2f} / p90 {pct(qs, .9):.2f} / max {qs[-1] if qs else float('nan'):.2f} s; "
      f"question to first request med {statistics.median(waits) if waits else float('nan'):.3f} / p90 {pct(waits, .9):.3f} s "
      f"(hosts {len(waits):,}; within the delay + 20 ms, i.e. waiting on the answer: {sum(w <= delay + 0.02 for w in waits):,}); "
      + (f"look-ups in flight at once: max {max(in_flight, default=0)}, median {statistics.median(in_flight) if in_flight else 0:.0f}"
         if delay > 0 else "look-ups in flight: not seen without a delay"))
PY
}

lscpu | sed -n 's/^Model name: *//p' | head -1 | sed 's/^/CPU: /'
echo "cores $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg), open files $nofile, $("$CRAWL" --version 2>/dev/null | head -1), SCALE $SCALE, delay factor $FACTOR"
[ "$netns" = 0 ] || echo "in a network namespace of its own (lo only): webs marked \"by address\" serve every host on one port, host i at 127.0.0.1 + i"
[ -z "${DNS_DELAY_MS:-}" ] || echo "hosts by name: h{i}.web.test answered by testweb's DNS server on 127.0.0.53 (/etc/resolv.conf: $(grep -v '^#' /etc/resolv.conf | tr '\n' ' '))"
echo
echo "| web | options | pages | wall (s) | bound (s) | wall / bound | ideal (s) | wall / ideal | j-bound (s) | idle beyond rule per host med / p90 / p99 (s) | 1st req med / p90 / max (s) | overlaps | short gaps | fetched / reachable | dup | peak RSS (MiB) | CPU (s) | testweb CPU (s) | pages/s per 5 s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
notes=""
runs=()
[ "$DEFAULT" = 0 ] || runs+=("")
for j in $JOBS_LIST; do runs+=("-j $j"); done
# DNS_DELAY_MS: every run once per delay, hosts by name ("-" = by address, the default).
dns_delays=${DNS_DELAY_MS:--}
for web in $WEBS; do
 for dns_ms in $dns_delays; do
  args=$(web_args "$web")
  hosts=$(set -- $args; echo "$2")
  label=$web listeners=$hosts dns_args="" dns_crawl=""
  if [ "$(by_address "$web")" = 1 ]; then
    args+=" --hosts-by-address --bind 0.0.0.0:0"
    label="$web (by address)" listeners=1
  fi
  slow_every=0
  if [ "$dns_ms" != - ]; then
    label="$web (names, DNS $dns_ms ms)" dns_crawl="--allow-private"
    if [ -n "${DNS_SLOW:-}" ]; then
      slow_every=${DNS_SLOW%%:*}
      label="$web (names, DNS $dns_ms ms, 1 in $slow_every ${DNS_SLOW#*:} ms)"
    fi
  fi
  if [ "$nofile" != unlimited ] && [ "$nofile" -lt $((listeners + 4096)) ]; then
    echo "| $label | | skipped: open-file limit $nofile < listeners ($listeners) + 4096 |"
    continue
  fi
  for opts in "${runs[@]}"; do
    run=$web.$(echo "${opts:-default}" | tr -d ' -')
    if [ "$dns_ms" != - ]; then
      run+=.dns$dns_ms
      dns_args="--dns-bind 127.0.0.53:53 --dns-delay-ms $dns_ms --dns-log-out $tmp/$run.dns"
      [ "$slow_every" = 0 ] || dns_args+=" --dns-slow-every $slow_every --dns-slow-ms ${DNS_SLOW#*:}"
    fi
    # shellcheck disable=SC2086
    start_web "$run" $args $dns_args --check-delay-factor "$FACTOR" --log-out "$tmp/$run.log"
    web_pid=$!
    sampler_pid=""
    ( peak=0; while [ -e "/proc/$web_pid" ]; do
        n=$(awk '/^Threads:/{print $2}' "/proc/$web_pid/status" 2>/dev/null || echo 0)
        [ "${n:-0}" -le "$peak" ] || { peak=$n; echo "$peak" >"$tmp/$run.threads"; }
        sleep 0.5
      done ) 3>&- &
    [ -z "${SAMPLE:-}" ] || sample "$tmp/out.$run" "$tmp/$run.samples"
    set +e
    # shellcheck disable=SC2086
    /usr/bin/time -f '%M %e %U %S' -o "$tmp/$run.time" timeout -s INT -k 30 "$MAX_SECONDS" \
      "$CRAWL" "$tmp/$run.seeds" --out "$tmp/out.$run" $opts --scope any -q $dns_crawl ${CRAWL_ARGS:-} \
      >"$tmp/$run.urls" 2>"$tmp/$run.err"
    status=$?
    set -e
    [ -z "$sampler_pid" ] || kill "$sampler_pid" 2>/dev/null || true
    # The server's own CPU (user + sys ticks) and peak threads: is the test web the limit?
    web_cpu=$(awk '{print $14 + $15}' "/proc/$web_pid/stat" 2>/dev/null || echo 0)
    echo "$web_cpu $(getconf CLK_TCK) $(cat "$tmp/$run.threads" 2>/dev/null || echo -)" >"$tmp/$run.webcpu"
    stop_web
    row=$(python3 - "$tmp" "$run" "$label" "${opts:-default}" "$FACTOR" "$status" "${SAMPLE:-}" "$slow_every" <<'PY'
import json, os, statistics, sys
from collections import defaultdict
tmp, run, web, opts, factor, status, sample, slow_every = sys.argv[1:]
slow_every = int(slow_every)
def slow_named(h):
    return slow_every > 0 and h > 0 and h % slow_every == 0
F = float(factor)
jobs = int(opts.split()[-1]) if opts.startswith("-j") else 16
srv = json.loads(open(f"{tmp}/{run}.server.json").read())
try:
    summary = json.load(open(f"{tmp}/out.{run}/summary.json"))
except (OSError, ValueError):
    summary = {}
t = open(f"{tmp}/{run}.time").read().split()
rss_kib, elapsed, user, sys_s = int(t[-4]), float(t[-3]), float(t[-2]), float(t[-1])
by_host = defaultdict(list)
pages = set()
for line in open(f"{tmp}/{run}.log"):
    h, a, b, st, target = line.rstrip("\n").split("\t", 4)
    by_host[int(h)].append((int(a) / 1e6, int(b) / 1e6, target))
    if st == "200" and target != "/robots.txt":
        pages.add((h, target))

def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")

bound, bound_host, service = 0.0, None, 0.0
idle, first, idle_where = {}, [], defaultdict(float)
ends = []
t_end = max((r[1] for rs in by_host.values() for r in rs), default=0)
slow_first, fast_end = [], 0.0
for h, rs in by_host.items():
    rs.sort()
    s = [b - a for a, b, _ in rs]
    service += sum(s)
    if slow_named(h):
        slow_first.append(rs[0][0])
        ends += [b for a, b, target in rs if (str(h), target) in pages]
        continue
    fast_end = max(fast_end, rs[-1][1])
    chain = sum(s) + F * sum(s[:-1])
    if chain > bound:
        bound, bound_host = chain, h
    first.append(rs[0][0])
    total = 0.0
    for i in range(1, len(rs)):
        extra = max(0.0, rs[i][0] - rs[i - 1][1] - F * s[i - 1])
        total += extra
        after = "robots" if rs[i - 1][2] == "/robots.txt" else "page"
        half = "1st half" if rs[i][0] < t_end / 2 else "2nd half"
        idle_where[f"after {after}, {half}"] += extra
    idle[h] = total
    ends += [b for a, b, target in rs if (str(h), target) in pages]
wall = summary.get("seconds", elapsed)
# The crawler rests F × the response time it measured, which includes its side of the
# loopback; F × (its mean − the server's mean) per gap shows up as idle beyond the rule.
client_ms = []
for line in open(f"{tmp}/{run}.urls"):
    f = line.split("\t")
    if len(f) > 5 and f[3].isdigit():
        client_ms.append(int(f[3]))
server_ms = [1000 * (b - a) for rs in by_host.values() for a, b, target in rs if target != "/robots.txt"]
measured = (f"response time: crawler's mean {statistics.mean(client_ms):.1f} ms, server's "
            f"{statistics.mean(server_ms):.1f} ms; " if client_ms and server_ms else "")
iv = list(idle.values()) or [float("nan")]
first = first or [float("nan")]
# A run whose server logged nothing (a crawl that failed at start) has no bound: "n/a".
def ratio(a, b):
    return f"{a / b:.2f}" if b else "n/a"
width = 5
while t_end / width > 24:
    width *= 2
bins = defaultdict(int)
for e in ends:
    bins[int(e // width)] += 1
series = "/".join(f"{bins[b] / width:.0f}" for b in range(int(t_end // width) + 1))
if width != 5:
    series = f"(per {width} s) " + series
wc = open(f"{tmp}/{run}.webcpu").read().split()
web_cpu = f"{int(wc[0]) / int(wc[1]):.1f} (threads {wc[2]})"
stopped = "" if status == "0" else f" (stopped: exit {status})"
ideal = srv.get("ideal_s", 0.0)
print(f"| {web} | {opts}{stopped} | {len(pages):,} | {wall:.1f} | {bound:.1f} | {ratio(wall, bound)} | "
      f"{ideal:.1f} | {ratio(wall, ideal)} | {service / jobs:.1f} | {statistics.median(iv):.2f} / {pct(iv, .9):.2f} / {pct(iv, .99):.2f} | "
      f"{statistics.median(first):.2f} / {pct(first, .9):.2f} / {max(first):.2f} | "
      f"{srv['overlaps']} | {srv['short_gaps']} | {len(pages):,} / {srv['reachable']:,} | {srv['duplicates']} | "
      f"{rss_kib / 1024:.0f} | {user + sys_s:.1f} | {web_cpu} | {series} |")
tot = sum(idle_where.values()) or 1
where = ", ".join(f"{k} {v / tot:.0%}" for k, v in sorted(idle_where.items()))
print(f"- {web} {opts}: bound set by host {bound_host} ({len(by_host[bound_host])} requests); {measured}"
      f"idle beyond rule summed over hosts {sum(iv):,.0f} s: {where}; crawl ending "
      f"{summary.get('ending')}, {summary.get('pages')} pages, {summary.get('merges')} DUE merges, "
      f"{summary.get('robots_fetches')} robots.txt; requests {srv['requests']:,} over {t_end:.1f} s")
if slow_every:
    print(f"- {web} {opts}: the {len(slow_first):,} hosts of slow names set aside: the other hosts were done "
          f"{fast_end:.1f} s after the first request, {ratio(fast_end, bound)} of their bound; the slow-named "
          f"hosts' first requests at med {statistics.median(slow_first) if slow_first else float('nan'):.2f} / "
          f"max {max(slow_first, default=float('nan')):.2f} s")
if sample:
    # Per second: hosts with a request in flight, hosts resting (within the rule), hosts idle
    # beyond the rule (rest over, next request not begun), hosts not yet begun; DUE batches
    # seen in --out/due and frontier bytes, from the samples.
    rows = []
    for line in open(f"{tmp}/{run}.samples"):
        ms, *files = line.split()
        sizes = dict(f.rsplit("=", 1) for f in files)
        due = sorted(p.split("/")[1] for p in sizes if p.startswith("due/"))
        front = sum(int(v) for p, v in sizes.items() if p.startswith("frontier/"))
        rows.append((int(ms) / 1000, frozenset(due), front))
    print(f"  {run} per second: t | in flight | resting | idle beyond rule | not begun | DUE batch dirs | frontier bytes")
    for sec in range(int(t_end) + 1):
        tt = sec + 0.5
        fl = rest = idl = nb = 0
        for rs in by_host.values():
            if tt < rs[0][0]:
                nb += 1
                continue
            for i, (a, b, _) in enumerate(rs):
                if a <= tt < b:
                    fl += 1
                    break
                if i + 1 < len(rs) and b <= tt < rs[i + 1][0]:
                    if tt < b + F * (b - a):
                        rest += 1
                    else:
                        idl += 1
                    break
        near = [r for r in rows if abs(r[0] - tt) <= 0.05] or [None]
        d = near[0]
        print(f"  {sec:4d} | {fl} | {rest} | {idl} | {nb} | "
              f"{' '.join(sorted(d[1])) if d else '-'} | {d[2] if d else '-'}")
PY
)
    echo "${row%%$'\n'*}"
    notes+="${row#*$'\n'}"$'\n'
    [ "$dns_ms" = - ] || notes+="$(dns_note "$run" "$dns_ms")"$'\n'
  done
 done
done
echo
printf '%s' "$notes"
