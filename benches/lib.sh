#!/usr/bin/env bash
# Shared by the benchmark scripts: start the generated test web and wait for its seeds.
#   start_web NAME ARGS…   → serves until stop_web NAME; seeds in "$tmp/NAME.seeds"
# Needs $tmp. The server's stdin is a fifo held open on fd 3 until stop_web closes it.
# TESTWEB_BIN names another testweb binary than the release build.
start_web() {
  local name=$1; shift
  mkfifo "$tmp/$name.stdin"
  "${TESTWEB_BIN:-target/release/testweb}" "$@" --seeds-out "$tmp/$name.seeds" --max-seconds 3600 \
    <"$tmp/$name.stdin" >"$tmp/$name.server.json" &
  exec 3>"$tmp/$name.stdin"
  local deadline=$((SECONDS + 30))
  until [ -f "$tmp/$name.seeds" ]; do
    [ $SECONDS -lt $deadline ] || { echo "testweb did not start" >&2; exit 1; }
    sleep 0.05
  done
}

stop_web() {
  exec 3>&-
  wait
}

# need COMMAND PACKAGE: installs the Debian package when the command is missing.
need() {
  command -v "$1" >/dev/null ||
    apt-get install -y -qq "$2" >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq "$2" >/dev/null; }
}

# serve_nginx HOSTS: nginx on ports BASE_PORT .. BASE_PORT+HOSTS-1, root $tmp/www/hNNNNN each
# (a web written by benches/static_web.py), access log in $tmp/access.log as
# `PORT URI STATUS`, then the fields of $NGINX_LOG_EXTRA if set (benches/timeline.sh adds
# `$msec $connection $connection_requests`); sets $nginx_pid. Needs $tmp (world-readable)
# and $BASE_PORT. SERVER_CPUS=LIST runs nginx on those CPUs only (taskset), e.g. 1.
serve_nginx() {
  local hosts=$1 conf=$tmp/nginx.conf
  {
    echo "worker_processes ${NGINX_WORKERS:-1}; daemon off; pid $tmp/nginx.pid; error_log $tmp/error.log;"
    echo "worker_rlimit_nofile 65536; events { worker_connections 16384; }"
    echo "http { log_format fmt '\$server_port \$request_uri \$status${NGINX_LOG_EXTRA:+ $NGINX_LOG_EXTRA}'; access_log $tmp/access.log fmt buffer=256k;"
    # Media types by extension, as a real server sends them (a documentation tree's .css, .js
    # and fonts are not text/html); a generated web's pages are .html.
    echo "  include /etc/nginx/mime.types;"
    echo "  default_type text/html; log_not_found off; keepalive_requests 100000; keepalive_timeout 60s;"
    echo "  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp; uwsgi_temp_path $tmp; scgi_temp_path $tmp;"
    for ((h = 0; h < hosts; h++)); do
      printf '  server { listen 127.0.0.1:%d; root %s/www/h%05d; }\n' $((BASE_PORT + h)) "$tmp" "$h"
    done
    echo "}"
  } >"$conf"
  ${SERVER_CPUS:+taskset -c "$SERVER_CPUS"} nginx -c "$conf" -e "$tmp/error.log" &
  nginx_pid=$!
  wait_port $((BASE_PORT + hosts - 1)) nginx "$tmp/error.log"
}

# wait_port PORT WHAT [LOG] [ADDRESS]: until something listens on ADDRESS:PORT (default
# 127.0.0.1), at most 60 s; then the script stops, naming WHAT and printing LOG (its error
# log) if given.
wait_port() {
  local deadline=$((SECONDS + 60))
  until (exec 9<>"/dev/tcp/${4:-127.0.0.1}/$1") 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || {
      echo "nothing listens on port $1 ($2)" >&2
      [ -z "${3:-}" ] || cat "$3" >&2
      exit 1
    }
    sleep 0.1
  done
}


# need_dir DIR PACKAGE: installs the Debian package when the directory is missing (a
# documentation tree served as a web, for example /usr/share/doc/rust-doc/html).
need_dir() {
  [ -d "$1" ] ||
    apt-get install -y -qq "$2" >/dev/null ||
    { apt-get update -qq && apt-get install -y -qq "$2" >/dev/null; }
  [ -d "$1" ] || { echo "$1: not installed by Debian's package $2" >&2; exit 2; }
}

# need_tls_web: what the HTTPS latency benches need (installed when missing): nginx with its
# echo module, openssl, GNU time; the release build unless SKIP_BUILD; room for many sockets.
need_tls_web() {
  need nginx nginx-light
  [ -e /usr/lib/nginx/modules/ngx_http_echo_module.so ] ||
    need /usr/lib/nginx/modules/ngx_http_echo_module.so libnginx-mod-http-echo
  need openssl openssl
  [ -x /usr/bin/time ] || need /usr/bin/time time
  [ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet
  ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
}

# bench_certificate SAN [KEY]: a CA ($tmp/ca.pem, for --ca-cert) and a server certificate it
# signs for SAN (openssl's subjectAltName: IP:127.0.0.1, DNS:*.web.test, ...) in
# $tmp/server.pem and $tmp/server.key, readable by nginx's workers. KEY: rsa (2048 bits, the
# default) or ec (P-256).
bench_certificate() {
  local san=$1 key=(-newkey rsa:2048)
  [ "${2:-rsa}" = ec ] && key=(-newkey ec -pkeyopt ec_paramgen_curve:P-256)
  openssl req -x509 "${key[@]}" -nodes -keyout "$tmp/ca.key" -out "$tmp/ca.pem" -days 2 \
    -subj "/CN=bench CA" 2>/dev/null
  openssl req "${key[@]}" -nodes -keyout "$tmp/server.key" -out "$tmp/server.csr" \
    -subj "/CN=bench server" 2>/dev/null
  openssl x509 -req -in "$tmp/server.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" -CAcreateserial \
    -out "$tmp/server.pem" -days 2 -extfile <(echo "subjectAltName=$san") 2>/dev/null
  chmod 644 "$tmp"/*.key
}

# doc_web WEB: sets $root to the files of WEB, a site served as one host by the near-duplicate
# benches: `template` (testweb::neardup's template copies, $REPEAT times over, written to
# $tmp/template by examples/neardup_web.rs), `rust-doc` or `python3-doc` (Debian's trees).
doc_web() {
  case $1 in
    template)
      root=$tmp/template
      target/release/examples/neardup_web "$root" --repeat "$REPEAT" 2>/dev/null ;;
    rust-doc) root=/usr/share/doc/rust-doc/html; need_dir "$root" rust-doc ;;
    python3-doc) root=/usr/share/doc/python3-doc/html; need_dir "$root" python3-doc ;;
    *) echo "unknown web $1" >&2; exit 2 ;;
  esac
}
