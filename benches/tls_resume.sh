#!/usr/bin/env bash
# TLS handshakes per host against servers that close idle connections sooner than the
# crawler's rests: with session resumption (the default) and without (`--no-tls-resume`).
#
# The web: HOSTS hosts × PAGES pages (benches/static_web.py, https links), one nginx worker,
# host h at an address of its own (127.1.(h/250).(h%250+1), all on BASE_PORT: a TLS client
# keeps sessions by server name, and hosts on the web differ by name, not by port; the
# certificate names every address), every response LATENCY_MS late (the echo module's `echo_sleep`), and
# `keepalive_timeout KEEPALIVE_S`. The crawl runs with default politeness: a host rests 10 × the
# response time (6 s at 600 ms) between its requests, longer than the server keeps an idle
# connection (5 s), so every request after a host's first needs a new connection and a
# handshake, full or resumed. Alternating runs, RUNS of each.
#
#   benches/tls_resume.sh
#   HOSTS=500 PAGES=4 RUNS=3 benches/tls_resume.sh
#   CRAWL=/path/to/crawl SKIP_BUILD=1 benches/tls_resume.sh
#
# Columns, from nginx's log ($connection, $ssl_session_reused): connections per host, and of
# them full handshakes and resumed ones per host; the crawl's own counts (summary.json
# connections.tls_handshakes / .tls_resumed); CPU µs per request (user + sys); wall.
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${HOSTS:-200}
PAGES=${PAGES:-6}
LATENCY_MS=${LATENCY_MS:-600}
KEEPALIVE_S=${KEEPALIVE_S:-5}
RUNS=${RUNS:-1}
BASE_PORT=${BASE_PORT:-24000}
CRAWL=${CRAWL:-target/release/crawl}
. benches/lib.sh
need_tls_web

tmp=$(mktemp -d); chmod 755 "$tmp"   # nginx workers read the web
nginx_pid=
trap '[ -z "$nginx_pid" ] || kill "$nginx_pid" 2>/dev/null || true; [ -n "${KEEP:-}" ] && echo "kept $tmp" >&2 || rm -rf "$tmp"' EXIT

# A CA and a server certificate it signs, for 127.0.0.1 (the crawl trusts it with --ca-cert).
addr() { echo "127.1.$(($1 / 250)).$(($1 % 250 + 1))"; }
san=$(for ((h = 0; h < HOSTS; h++)); do printf 'IP:%s,' "$(addr $h)"; done)
bench_certificate "${san%,}"

WEB_SCHEME=https WEB_BY_ADDRESS=1 python3 benches/static_web.py "$tmp/www" "$HOSTS" "$PAGES" "$BASE_PORT"
sleep_s=$(echo "scale=3; $LATENCY_MS / 1000" | bc)
{
  echo "load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;"
  echo "worker_processes 1; daemon off; pid $tmp/nginx.pid; error_log $tmp/error.log;"
  echo "worker_rlimit_nofile 65536; events { worker_connections 16384; }"
  echo "http { log_format fmt '\$server_addr \$connection \$ssl_session_reused \$status \$request_uri';"
  echo "  access_log $tmp/access.log fmt buffer=256k; default_type text/html; log_not_found off;"
  echo "  keepalive_requests 100000; keepalive_timeout ${KEEPALIVE_S}s;"
  echo "  ssl_certificate $tmp/server.pem; ssl_certificate_key $tmp/server.key; ssl_session_tickets on;"
  echo "  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;"
  for ((h = 0; h < HOSTS; h++)); do
    printf '  server { listen %s:%d ssl; root %s/www/h%05d;\n' "$(addr $h)" "$BASE_PORT" "$tmp" "$h"
    printf '    location / { echo_sleep %s; echo_exec @file; } location @file { try_files $uri =404; } }\n' "$sleep_s"
  done
  echo "}"
} >"$tmp/nginx.conf"
nginx -c "$tmp/nginx.conf" -e "$tmp/error.log" &
nginx_pid=$!
wait_port "$BASE_PORT" nginx "$tmp/error.log" "$(addr $((HOSTS - 1)))"
echo "https://$(addr 0):$BASE_PORT/index.html" >"$tmp/seeds"

lscpu | sed -n 's/^Model name: *//p' | head -1 | sed 's/^/CPU: /'
echo "cores $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg), $("$CRAWL" --version 2>/dev/null | head -1), $(nginx -v 2>&1 | cut -d' ' -f3)"
echo "web: $HOSTS hosts × $PAGES pages over https, every response $LATENCY_MS ms, keepalive_timeout ${KEEPALIVE_S}s; default politeness"
echo
echo "| run | options | requests | connections / host | full handshakes / host | resumed / host | crawl: handshakes, resumed | CPU µs/request | wall (s) |"
echo "|---|---|---|---|---|---|---|---|---|"
for ((run = 1; run <= RUNS; run++)); do
  for opts in "" "--no-tls-resume"; do
    rm -f "$tmp/access.log"; kill -USR1 "$nginx_pid"; sleep 0.2   # a fresh log
    set +e
    # shellcheck disable=SC2086
    /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$CRAWL" "$tmp/seeds" --out "$tmp/out" $opts \
      --scope any --ca-cert "$tmp/ca.pem" --no-sitemaps -q >/dev/null 2>"$tmp/err"
    status=$?
    set -e
    kill -USR1 "$nginx_pid"; sleep 0.5   # flush the log
    [ "$status" = 0 ] || { echo "crawl exited $status:" >&2; tail -5 "$tmp/err" >&2; }
    python3 - "$tmp" "$HOSTS" "$run" "$opts" <<'PY'
import json, sys
tmp, hosts, run, opts = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
t = open(f"{tmp}/time").read().split()
elapsed, cpu = float(t[-3]), float(t[-2]) + float(t[-1])
summary = json.load(open(f"{tmp}/out/summary.json"))
c = summary["connections"]
requests, first = 0, {}
for line in open(f"{tmp}/access.log"):
    addr, conn, reused, status, uri = line.split(maxsplit=4)
    requests += 1
    first.setdefault(conn, reused)   # a connection's handshake is its first request's
full = sum(1 for r in first.values() if r != "r")
resumed = len(first) - full
print(f"| {run} | `{opts or 'default'}` | {requests:,} | {len(first) / hosts:.2f} | {full / hosts:.2f} | "
      f"{resumed / hosts:.2f} | {c['tls_handshakes']:,}, {c['tls_resumed']:,} | "
      f"{1e6 * cpu / max(1, requests):.0f} | {summary['seconds']:.1f} |")
PY
    rm -rf "$tmp/out"
  done
done
