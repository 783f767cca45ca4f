#!/usr/bin/env bash
# HTTPS requests in flight: what they cost on the event loop (the default: the loop's one
# thread does every handshake's and record's cryptography) and on N worker threads (`-j N`),
# beside the same web over plain HTTP. CPU per page, memory and threads at N in flight.
#
# The web: N hosts × PAGES pages (benches/static_web.py, ~1.7 KB pages), served by nginx (one
# worker, a port per host) with every response LATENCY_MS late (the echo module's
# `echo_sleep`), over TLS with a certificate of a CA made here (the crawl trusts it with
# `--ca-cert`: the chain is verified, as on the web), crawled with `--delay-factor 0`, so N
# hosts keep up to N requests in flight.
#
#   benches/tls_inflight.sh
#   INFLIGHT="100 1000 2000" SCHEMES="https" MODES="loop" benches/tls_inflight.sh
#   CRAWL=/path/to/crawl SKIP_BUILD=1 benches/tls_inflight.sh
#
# Columns: in flight = requests open at nginx at once (its log: $msec - $request_time to
# $msec), median over the run's middle 80 % (every 10 ms) and the most; CPU µs/page = the
# crawl's user + sys (/usr/bin/time) per request nginx answered; connections = the TCP
# connections nginx served (each a TLS handshake over https), per host; threads = the crawl's
# most threads (/proc, every 0.2 s).
set -euo pipefail
cd "$(dirname "$0")/.."
INFLIGHT=${INFLIGHT:-"100 1000"}
PAGES=${PAGES:-10}
LATENCY_MS=${LATENCY_MS:-1000}
MODES=${MODES:-"loop threads"}
SCHEMES=${SCHEMES:-"https http"}
BASE_PORT=${BASE_PORT:-23000}
CRAWL=${CRAWL:-target/release/crawl}
. benches/lib.sh
need_tls_web

tmp=$(mktemp -d); chmod 755 "$tmp"   # nginx workers read the web
nginx_pid=
trap '[ -z "$nginx_pid" ] || kill "$nginx_pid" 2>/dev/null || true; kill $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] && echo "kept $tmp" >&2 || rm -rf "$tmp"' EXIT

# A CA and a server certificate it signs, for 127.0.0.1.
bench_certificate IP:127.0.0.1

# serve HOSTS SCHEME: nginx on HOSTS ports, every response LATENCY_MS late; sets $nginx_pid.
serve() {
  local hosts=$1 scheme=$2 conf=$tmp/nginx.conf ssl= sleep
  sleep=$(echo "scale=3; $LATENCY_MS / 1000" | bc)
  [ "$scheme" = http ] || ssl="ssl"
  {
    echo "load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;"
    echo "worker_processes 1; daemon off; pid $tmp/nginx.pid; error_log $tmp/error.log;"
    echo "worker_rlimit_nofile 65536; events { worker_connections 16384; }"
    echo "http { log_format fmt '\$msec \$request_time \$server_port \$connection \$status \$request_uri';"
    echo "  access_log $tmp/access.log fmt buffer=256k; default_type text/html;"
    echo "  keepalive_requests 100000; keepalive_timeout 60s;"
    echo "  ssl_certificate $tmp/server.pem; ssl_certificate_key $tmp/server.key;"
    echo "  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;"
    for ((h = 0; h < hosts; h++)); do
      printf '  server { listen 127.0.0.1:%d %s; root %s/www/h%05d;\n' $((BASE_PORT + h)) "$ssl" "$tmp" "$h"
      printf '    location / { echo_sleep %s; echo_exec @file; } location @file { try_files $uri =404; } }\n' "$sleep"
    done
    echo "}"
  } >"$conf"
  nginx -c "$conf" -e "$tmp/error.log" &
  nginx_pid=$!
  wait_port $((BASE_PORT + hosts - 1)) nginx "$tmp/error.log"
}

lscpu | sed -n 's/^Model name: *//p' | head -1 | sed 's/^/CPU: /'
echo "cores $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg), open files $(ulimit -n), $("$CRAWL" --version 2>/dev/null | head -1), $(nginx -v 2>&1 | cut -d' ' -f3)"
echo "web: N hosts × $PAGES pages, every response $LATENCY_MS ms, --delay-factor 0"
echo
echo "| N | scheme | path | options | pages | wall (s) | pages/s | in flight med / max | CPU µs/page | peak RSS (MiB) | connections per host | threads |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for n in $INFLIGHT; do
  for scheme in $SCHEMES; do
    rm -rf "$tmp/www"
    WEB_SCHEME=$scheme python3 benches/static_web.py "$tmp/www" "$n" "$PAGES" "$BASE_PORT"
    serve "$n" "$scheme"
    echo "$scheme://127.0.0.1:$BASE_PORT/index.html" >"$tmp/seeds"
    for mode in $MODES; do
      case $mode in
        loop) opts="--max-connections $n" ;;
        threads) opts="-j $n" ;;
        *) echo "unknown mode $mode (loop or threads)" >&2; exit 2 ;;
      esac
      rm -f "$tmp/access.log"; kill -USR1 "$nginx_pid"; sleep 0.2   # a fresh log
      set +e
      # shellcheck disable=SC2086
      /usr/bin/time -f '%M %e %U %S' -o "$tmp/time" "$CRAWL" "$tmp/seeds" --out "$tmp/out" $opts \
        --delay-factor 0 --scope any --ca-cert "$tmp/ca.pem" --no-sitemaps -q >/dev/null 2>"$tmp/err" &
      crawl_pid=$!
      ( peak=0
        while [ -e "/proc/$crawl_pid" ]; do
          for c in $(pgrep -P "$crawl_pid"); do
            t=$(awk '/^Threads:/{print $2}' "/proc/$c/status" 2>/dev/null || echo 0)
            [ "${t:-0}" -le "$peak" ] || { peak=$t; echo "$peak" >"$tmp/threads"; }
          done
          sleep 0.2
        done ) 3>&- &
      wait "$crawl_pid"; status=$?
      set -e
      kill -USR1 "$nginx_pid"; sleep 0.5   # flush the log
      [ "$status" = 0 ] || { echo "crawl exited $status:" >&2; tail -5 "$tmp/err" >&2; }
      python3 - "$tmp" "$n" "$scheme" "$mode" "$opts" <<'PY'
import json, sys
sys.path.insert(0, "benches")
from in_flight import in_flight
tmp, n, scheme, mode, opts = sys.argv[1:]
t = open(f"{tmp}/time").read().split()
rss_kib, elapsed, cpu = int(t[-4]), float(t[-3]), float(t[-2]) + float(t[-1])
try:
    wall = json.load(open(f"{tmp}/out/summary.json"))["seconds"]
except (OSError, ValueError, KeyError):
    wall = elapsed
spans, pages, conns = [], 0, set()
for line in open(f"{tmp}/access.log"):
    msec, took, port, conn, status, uri = line.split(maxsplit=5)
    end = int(float(msec) * 1e6)
    spans.append((end - int(float(took) * 1e6), end))
    conns.add(conn)
    pages += status == "200" and uri.strip() != "/robots.txt"
med, most = in_flight(spans)
try:
    threads = open(f"{tmp}/threads").read().strip()
except OSError:
    threads = "-"
print(f"| {int(n):,} | {scheme} | {'event loop' if mode == 'loop' else 'threads'} | `{opts}` | {pages:,} | "
      f"{wall:.1f} | {pages / wall:,.0f} | {med:,.0f} / {most:,} | {1e6 * cpu / max(1, len(spans)):.0f} | "
      f"{rss_kib / 1024:.0f} | {len(conns) / int(n):.2f} | {threads} |")
PY
      rm -rf "$tmp/out" "$tmp/threads"
    done
    kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; nginx_pid=
  done
done
