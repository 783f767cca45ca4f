#!/usr/bin/env bash
# Memory per known host for the whole crawl process (benches/host_memory.sh measures the
# scheduler alone): webs of HOSTS hosts with PAGES pages each, every host its own loopback
# address 127.a.b.c on one port (Linux routes all of 127.0.0.0/8 to the loopback device, so
# nginx binds each address without any set-up; the crawl's host is address:port), crawled
# whole from host 1's index; peak RSS and how it grows per host between webs.
#
#   benches/host_rss.sh                           # 1,000 and 10,000 hosts x 3 pages
#   HOSTS="1000 10000 100000" benches/host_rss.sh
#   CRAWL=/path/to/crawl SKIP_BUILD=1 BASE_PORT=23000 benches/host_rss.sh
#
# Links: host i's index links its own pages, the index of hosts 8i+1 .. 8i+8 (every host
# within log8(HOSTS) hops) and two pages of random hosts; page p links the index and two
# random pages. nginx serves `root www/$server_addr`, one directory per address.
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${HOSTS:-"1000 10000"}
PAGES=${PAGES:-3}
JOBS=${JOBS:-64}
BASE_PORT=${BASE_PORT:-20000}
CRAWL=${CRAWL:-target/release/crawl}

. benches/lib.sh
need nginx nginx-light
[ -x /usr/bin/time ] || need /usr/bin/time time
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet

tmp=$(mktemp -d); chmod 755 "$tmp"   # nginx workers read the web
nginx_pid=
trap '[ -z "$nginx_pid" ] || kill "$nginx_pid"; rm -rf "$tmp"' EXIT

echo "host_rss: $(nproc) cores, -j $JOBS, $PAGES pages per host, $($CRAWL --version)"
echo "| hosts | pages served | requests | wall s | CPU µs/page | peak RSS MiB | RSS over the previous row per host |"
echo "|---|---|---|---|---|---|---|"
prev_hosts= prev_rss=
for hosts in $HOSTS; do
  rm -rf "$tmp/www" "$tmp/out"
  # The web and nginx's configuration: one `listen` per address, one server.
  python3 - "$tmp" "$hosts" "$PAGES" "$BASE_PORT" <<'PY'
import os, random, sys
tmp, hosts, pages, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(7)
def addr(i):  # host i (1-based) -> 127.1.0.1 ...
    return f"127.{1 + (i >> 16)}.{(i >> 8) & 255}.{i & 255}"
def url(i, p):
    return f"http://{addr(i)}:{port}/" + ("index.html" if p == 0 else f"p{p}.html")
for i in range(1, hosts + 1):
    d = os.path.join(tmp, "www", addr(i))
    os.makedirs(d)
    for p in range(pages):
        links = [url(i, q) for q in range(pages) if q != p]
        if p == 0:
            links += [url(c, 0) for c in range(8 * i - 6, min(8 * i + 2, hosts + 1)) if c > 1]
        links += [url(rng.randrange(1, hosts + 1), rng.randrange(pages)) for _ in range(2)]
        body = "".join(f'<a href="{u}">{u}</a>\n' for u in links)
        with open(os.path.join(d, "index.html" if p == 0 else f"p{p}.html"), "w") as f:
            f.write(f"<!doctype html><title>{i}/{p}</title><p>host {i} page {p}</p>\n{body}")
with open(os.path.join(tmp, "nginx.conf"), "w") as f:
    f.write(f"worker_processes 1; daemon off; pid {tmp}/nginx.pid; error_log {tmp}/error.log;\n"
            f"worker_rlimit_nofile {hosts + 20000}; events {{ worker_connections 16384; }}\n"
            f"http {{ access_log {tmp}/access.log combined buffer=256k; log_not_found off;\n"
            "  default_type text/html; keepalive_requests 100000; keepalive_timeout 60s;\n"
            + "".join(f"  client_body_temp_path {tmp}; proxy_temp_path {tmp}; fastcgi_temp_path {tmp};"
                      f" uwsgi_temp_path {tmp}; scgi_temp_path {tmp};\n" for _ in [0])
            + "  server {\n" + "".join(f"    listen {addr(i)}:{port};\n" for i in range(1, hosts + 1))
            + f"    root {tmp}/www/$server_addr;\n  }}\n}}\n")
print(url(1, 0), file=open(os.path.join(tmp, "seeds"), "w"))
PY
  ulimit -n "$(ulimit -Hn)"
  nginx -c "$tmp/nginx.conf" -e "$tmp/error.log" &
  nginx_pid=$!
  deadline=$((SECONDS + 60))
  until [ -f "$tmp/nginx.pid" ] && (exec 9<>"/dev/tcp/127.$((1 + (hosts >> 16))).$(((hosts >> 8) & 255)).$((hosts & 255))/$BASE_PORT") 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || { echo "nginx did not start:" >&2; cat "$tmp/error.log" >&2; exit 1; }
    sleep 0.2
  done
  : >"$tmp/access.log"
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$CRAWL" "$tmp/seeds" --out "$tmp/out" --scope any \
    -j "$JOBS" --delay-factor 0 --no-warc >/dev/null 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; exit 1; }
  kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; nginx_pid=
  read -r wall user sys rss < <(tail -n 1 "$tmp/time")
  read -r requests served < <(awk '{ n++ } $7 != "/robots.txt" && $9 == 200 { s++ } END { print n, s }' "$tmp/access.log")
  per_host=—
  [ -z "$prev_hosts" ] || per_host=$(echo "scale=0; ($rss - $prev_rss) * 1024 / ($hosts - $prev_hosts)" | bc)" B"
  printf '| %s | %s of %s | %s | %s | %.0f | %.1f | %s |\n' "$hosts" "$served" "$((hosts * PAGES))" \
    "$requests" "$wall" "$(echo "($user + $sys) * 1000000 / $served" | bc -l)" "$(echo "$rss / 1024" | bc -l)" "$per_host"
  prev_hosts=$hosts prev_rss=$rss
done
