#!/usr/bin/env bash
# At the politeness bound on a web found as it is fetched, over HTTP and HTTPS (issue 47), on a
# harness that shares nothing with the crawler's code: nginx serving benches/ring_web.py's
# static web by host name (h{i}.web.test, all on 127.0.0.1,
# answered by a DNS server of the script's own on 127.0.0.53 (ring_web.py dns; a private
# /etc/resolv.conf names it), every response LATENCY_MS late (the echo module), robots.txt a
# 404, HTTPS with a wildcard
# certificate of a CA made here. Default politeness. Against the ideal polite crawler on the
# same graph (ring_web.py ideal: the rule, unlimited concurrency, no delay of its own).
#
#   benches/found_as_fetched.sh                     # 10,000 hosts × 10 pages, http and https
#   HOSTS=2000 SCHEMES=https benches/found_as_fetched.sh
#   KEEP=1 CRAWL_ARGS="--no-tls-resume" benches/found_as_fetched.sh   # keep the logs; crawl options
#
# Runs itself in a mount namespace of its own (unshare --mount, root) so that /etc/resolv.conf
# can name its DNS server without touching the machine's (nsswitch.conf must say dns for hosts).
# Columns: wall = summary.json seconds; ideal;
# idle beyond the rule per host = Σ over its gaps of max(0, start − end_prev − F × s_prev) from
# nginx's log (start = $msec − $request_time), p50 / p90 / max over hosts; the same with s_prev
# the crawler's own response time (its URL log's `ms`: from its request written to the answer's
# arrival, which includes the server's queueing before nginx reads the request; the rule the
# crawler can keep), p50 / p90; first request of a
# host after the crawl's first, p50 / p90 / max; overlaps = a host's request starting before its
# previous one ended; handshakes = connections nginx accepted over https, resumed ones apart.
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${HOSTS:-10000}
PAGES=${PAGES:-10}
LATENCY_MS=${LATENCY_MS:-100}
SCHEMES=${SCHEMES:-"http https"}
FACTOR=10
CRAWL=${CRAWL:-target/release/crawl}
if [ -z "${IN_NS:-}" ]; then
  [ "$(id -u)" = 0 ] || { echo "found_as_fetched: needs root (unshare --mount)" >&2; exit 1; }
  exec env IN_NS=1 unshare --mount "$0" "$@"
fi
. benches/lib.sh
need_tls_web

tmp=$(mktemp -d); chmod 755 "$tmp"
nginx_pid= dns_pid=
trap '[ -z "$nginx_pid" ] || kill "$nginx_pid" 2>/dev/null || true; [ -z "$dns_pid" ] || kill "$dns_pid" 2>/dev/null || true; [ -n "${KEEP:-}" ] && echo "kept $tmp" >&2 || rm -rf "$tmp"' EXIT

# The hosts' names, answered by our DNS server, in this mount namespace only.
python3 benches/ring_web.py dns 127.0.0.53 &
dns_pid=$!
printf 'nameserver 127.0.0.53\noptions timeout:2 attempts:3\n' >"$tmp/resolv.conf"
mount --bind "$tmp/resolv.conf" /etc/resolv.conf

bench_certificate "DNS:*.web.test" ec

sleep_s=$(echo "scale=3; $LATENCY_MS / 1000" | bc)
ideal=$(python3 benches/ring_web.py ideal - "$HOSTS" "$PAGES" "$sleep_s" "$FACTOR")
lscpu | sed -n 's/^Model name: *//p' | head -1 | sed 's/^/CPU: /'
echo "cores $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg), $("$CRAWL" --version | head -1), $(nginx -v 2>&1 | cut -d' ' -f3)"
echo "web: $HOSTS hosts × $PAGES pages by name, found as fetched, every response $LATENCY_MS ms; ideal ${ideal% *} s, ${ideal#* } requests"
echo
echo "| scheme | pages | wall (s) | ideal (s) | wall / ideal | idle beyond rule p50 / p90 / max (s) | by the crawler's times p50 / p90 (s) | 1st request p50 / p90 / max (s) | overlaps | handshakes (resumed) | CPU (s) | peak RSS (MiB) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for scheme in $SCHEMES; do
  rm -rf "$tmp/www"
  python3 benches/ring_web.py write "$tmp/www" "$HOSTS" "$PAGES" "$scheme"
  port=80 ssl=
  [ "$scheme" = http ] || { port=443; ssl=ssl; }
  cat >"$tmp/nginx.conf" <<EOF
load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;
worker_processes 2; daemon off; pid $tmp/nginx.pid; error_log $tmp/error.log;
worker_rlimit_nofile 65536; events { worker_connections 30000; }
http {
  log_format fmt '\$msec \$request_time \$host \$connection \$ssl_session_reused \$status \$uri';
  access_log $tmp/access.log fmt buffer=256k; default_type text/html; log_not_found off;
  keepalive_requests 100000; keepalive_timeout 75s;
  ssl_certificate $tmp/server.pem; ssl_certificate_key $tmp/server.key;
  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;
  server { listen 127.0.0.1:$port $ssl; root $tmp/www/\$host;
    location / { echo_sleep $sleep_s; echo_exec @file; } location @file { try_files \$uri \$uri/index.html =404; } }
}
EOF
  rm -f "$tmp/access.log"
  nginx -c "$tmp/nginx.conf" -e "$tmp/error.log" &
  nginx_pid=$!
  wait_port "$port" nginx "$tmp/error.log"
  echo "$scheme://h0.web.test/" >"$tmp/seeds"
  set +e
  /usr/bin/time -f '%M %e %U %S' -o "$tmp/time" "$CRAWL" "$tmp/seeds" --out "$tmp/out" \
    --scope any --allow-private --ca-cert "$tmp/ca.pem" -q --log-format jsonl ${CRAWL_ARGS:-} >"$tmp/urls.$scheme" 2>"$tmp/err"
  status=$?
  set -e
  kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; nginx_pid=
  [ "$status" = 0 ] || { echo "crawl exited $status:" >&2; tail -5 "$tmp/err" >&2; }
  python3 - "$tmp" "$scheme" "$FACTOR" "${ideal% *}" <<'PY'
import json, sys
from collections import defaultdict
tmp, scheme, factor, ideal = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
t = open(f"{tmp}/time").read().split()
rss, cpu = int(t[-4]), float(t[-2]) + float(t[-1])
wall = json.load(open(f"{tmp}/out/summary.json"))["seconds"]
seen_took = {}
for line in open(f"{tmp}/urls.{scheme}"):
    entry = json.loads(line)
    seen_took[entry["url"]] = entry["ms"] / 1000
per_host, conns, pages = defaultdict(list), {}, 0
for line in open(f"{tmp}/access.log"):
    msec, took, host, conn, reused, status, uri = line.split()
    end, took = float(msec), float(took)
    path = uri[: -len("index.html")] if uri.endswith("/index.html") else uri
    per_host[host].append((end - took, end, seen_took.get(f"{scheme}://{host}{path}", took)))
    conns.setdefault(conn, reused)
    pages += status == "200"
t0 = min(s for v in per_host.values() for s, *_ in v)
idle, idle_seen, first, overlaps = [], [], [], 0
for v in per_host.values():
    v.sort()
    first.append(v[0][0] - t0)
    total = total_seen = 0.0
    for (s0, e0, seen0), (s1, e1, _) in zip(v, v[1:]):
        overlaps += s1 < e0
        total += max(0.0, s1 - e0 - factor * (e0 - s0))
        total_seen += max(0.0, s1 - e0 - factor * max(e0 - s0, seen0))
    idle.append(total)
    idle_seen.append(total_seen)
q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(p * len(xs)))]
hs = f"{len(conns):,} ({sum(r == 'r' for r in conns.values()):,})" if scheme == "https" else "-"
print(f"| {scheme} | {pages:,} | {wall:.1f} | {ideal:.1f} | {wall / ideal:.2f} | "
      f"{q(idle, .5):.2f} / {q(idle, .9):.2f} / {max(idle):.2f} | "
      f"{q(idle_seen, .5):.2f} / {q(idle_seen, .9):.2f} | "
      f"{q(first, .5):.1f} / {q(first, .9):.1f} / {max(first):.1f} | {overlaps} | {hs} | {cpu:.1f} | {rss / 1024:.0f} |")
PY
  [ -n "${KEEP:-}" ] && mv "$tmp/out" "$tmp/out.$scheme" || rm -rf "$tmp/out"
done
