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
