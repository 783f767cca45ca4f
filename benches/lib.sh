#!/usr/bin/env bash
# Shared by the benchmark scripts: start the generated test web and wait for its seeds.
#   start_web NAME ARGS…   → serves until stop_web NAME; seeds in "$tmp/NAME.seeds"
# Needs $tmp. The server's stdin is a fifo held open on fd 3 until stop_web closes it.
start_web() {
  local name=$1; shift
  mkfifo "$tmp/$name.stdin"
  target/release/testweb "$@" --seeds-out "$tmp/$name.seeds" --max-seconds 3600 \
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
