#!/usr/bin/env bash
# Scale on paper, from measurements (issue 46, item 4). One sharded crawl of the generated web
# (as benches/shards.sh: 50 hosts, politeness off) per N in SHARDS, the shards at once through
# one redis-server on loopback configured as the exchange wants it (appendonly yes,
# appendfsync always), and what the broker did for it, measured:
# - per-shard pages/s (each shard's pages over the crawl's wall time);
# - broker commands per page: `INFO commandstats` after less before (the commands a script
#   runs inside counted apart from the EVALSHA that ran it), and per cross-shard URL sent;
# - bytes per page through the exchange: `total_net_input_bytes` and
#   `total_net_output_bytes` of `INFO stats`, after less before;
# - the broker's CPU per page: `used_cpu_sys + used_cpu_user` of `INFO cpu`, after less before;
# - stream memory: every 0.2 s, the sum of `MEMORY USAGE` over the crawl's stream keys (and
#   their entries, XLEN), its peak; and `used_memory_peak`.
# Then redis-benchmark on a fresh redis-server of the same configuration (and one without
# persistence), one core, 50 clients: the exchange's own commands (`EVALSHA` of the publish
# script with a batch of the measured mean size, XREADGROUP of such batches, HSET of a report,
# SET of a lease, a pipelined HMGET of every report), in ops/s; then the projection to 100 and
# 1,000 machines (benches/shard_project.py: its assumptions are printed with it).
#
#   benches/shard_scale.sh                 # 100,000 pages, N = 1 4, -j 32 per shard
#   PAGES=40000 SHARDS=4 benches/shard_scale.sh
#   CRAWL=/path/to/crawl SKIP_BUILD=1 KEEP=1 benches/shard_scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PAGES=${PAGES:-100000}
SHARDS=${SHARDS:-"1 4"}
JOBS=${JOBS:-32}
HOSTS=${HOSTS:-50}
CRAWL=${CRAWL:-target/release/crawl}
REDIS_PORT=${REDIS_PORT:-26479}
BENCH_REQUESTS=${BENCH_REQUESTS:-20000}

. benches/lib.sh
need redis-server redis-server
need redis-benchmark redis-tools
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --workspace --quiet
tmp=$(mktemp -d)
redis_pid= sampler_pid=
cleanup() {
  [ -z "$sampler_pid" ] || kill "$sampler_pid" 2>/dev/null || true
  [ -z "$redis_pid" ] || kill "$redis_pid" 2>/dev/null || true
  kill $(jobs -p) 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "kept $tmp" >&2 || rm -rf "$tmp"
}
trap cleanup EXIT

rcli() { redis-cli -p "$REDIS_PORT" "$@"; }

# start_redis DIR: redis-server as the exchange runs it, data in DIR.
start_redis() {
  mkdir -p "$1"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly yes \
    --appendfsync always --dir "$1" >"$1.log" 2>&1 &
  redis_pid=$!
  local deadline=$((SECONDS + 30))
  until rcli ping 2>/dev/null | grep -q PONG; do
    [ $SECONDS -lt $deadline ] || { echo "redis-server did not start" >&2; cat "$1.log" >&2; exit 1; }
    sleep 0.05
  done
}

stop_redis() {
  kill "$redis_pid"; wait "$redis_pid" 2>/dev/null || true; redis_pid=
}

# snapshot FILE: INFO stats, cpu, memory and commandstats.
snapshot() {
  { rcli info stats; rcli info cpu; rcli info memory; rcli info commandstats; } | tr -d '\r' >"$1"
}

# The crawl's stream keys' memory and length, summed, every 0.2 s: "bytes entries keys" lines
# (one KEYS, then a MEMORY USAGE and an XLEN per key: benches/shard_project.py takes these
# commands of its own out of the crawl's).
sample_streams() {
  while :; do
    local keys bytes=0 entries=0 n=0 k
    keys=$(rcli keys '*:stream:*' 2>/dev/null || true)
    for k in $keys; do
      bytes=$((bytes + $(rcli memory usage "$k" samples 0 2>/dev/null || echo 0)))
      entries=$((entries + $(rcli xlen "$k" 2>/dev/null || echo 0)))
      n=$((n + 1))
    done
    echo "$bytes $entries $n"
    sleep 0.2
  done
}

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)
echo "shard_scale: $PAGES pages on $HOSTS hosts, -j $JOBS per shard, --delay-factor 0; $cpu, $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $(redis-server --version | cut -d' ' -f3)"
for n in $SHARDS; do
  name=web-$n
  start_web "$name" --hosts "$HOSTS" --pages-per-host $((PAGES / HOSTS)) --children 4 \
    --extra-links 8 --cross-permille 200 --padding 2000 --seed 7
  start_redis "$tmp/redis-$n"
  snapshot "$tmp/$name.before"
  sample_streams >"$tmp/$name.streams" &
  sampler_pid=$!
  start=$(date +%s.%N)
  pids=()
  for ((k = 0; k < n; k++)); do
    "$CRAWL" "$tmp/$name.seeds" --out "$tmp/$name.out-$k" --shard "$k/$n" \
      --exchange "redis://127.0.0.1:$REDIS_PORT/0" -j "$JOBS" --delay-factor 0 \
      >"$tmp/$name.log-$k" 2>"$tmp/$name.err-$k" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  end=$(date +%s.%N)
  kill "$sampler_pid"; wait "$sampler_pid" 2>/dev/null || true; sampler_pid=
  snapshot "$tmp/$name.after"
  stop_redis
  exec 3>&-
  wait
  python3 benches/shard_project.py measure "$n" "$start" "$end" "$tmp/$name" >"$tmp/$name.measured.json"
done

# The broker's capacity on this machine: one redis-server on one core, configured as above
# (`always`: every write on disk before its reply, the exchange's setting) and without
# persistence (`memory`: the CPU's bound alone).
last=$(echo $SHARDS | awk '{print $NF}')
python3 benches/shard_project.py payload "$tmp/web-$last.measured.json" "$tmp/web-$last.log-0" >"$tmp/payload"
payload=$(cat "$tmp/payload")
publish=$(python3 -c 'import re,sys; s=open("src/shard/redis.rs").read(); print(re.search(r"const PUBLISH: &str = r\"(.*?)\";", s, re.S).group(1))')
bench() { # NAME [OPTIONS] COMMAND…: "NAME ops/s" of one command, 50 clients
  local label=$1; shift
  printf '%s %s\n' "$label" "$(redis-benchmark -p "$REDIS_PORT" -n "$BENCH_REQUESTS" -c 50 -q "$@" 2>/dev/null |
    tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)"
}
for persistence in always memory; do
  if [ $persistence = always ]; then start_redis "$tmp/redis-bench"
  else
    mkdir -p "$tmp/redis-mem"
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
      --dir "$tmp/redis-mem" >"$tmp/redis-mem.log" 2>&1 &
    redis_pid=$!
    until rcli ping 2>/dev/null | grep -q PONG; do sleep 0.05; done
  fi
  sha=$(rcli script load "$publish")
  {
    # Publishing: the script (XLEN, XADD, HINCRBY) to 1,000 streams, none full.
    bench publish -r 1000 evalsha "$sha" 2 "b:stream:__rand_int__" b:report:0 1000000000 1 "$payload"
    rcli del b:one >/dev/null
    for ((i = 0; i < 64; i++)); do rcli xadd b:one '*' from 1 urls "$payload" >/dev/null; done
    rcli xgroup create b:one crawl 0 >/dev/null
    rcli xreadgroup group crawl c count 64 streams b:one '>' >/dev/null
    # Reading: the pending history from the start, as many entries as one read takes (COUNT
    # 1 and 8): the same work as reading new ones, without using them up.
    bench read1 xreadgroup group crawl c count 1 streams b:one 0
    bench read8 xreadgroup group crawl c count 8 streams b:one 0
    bench report -r 1000 hset b:report:__rand_int__ idle 0 pages 12345
    bench lease -r 1000 set b:lease:__rand_int__ token px 15000
    # The idle shards' poll: HMGET of every report, pipelined (one round trip of N commands).
    for ((i = 0; i < 1000; i++)); do rcli hset "b:report:$i" idle 1 pages 1 published 1 acked 1 >/dev/null; done
    bench hmget -r 1000 -P 100 hmget b:report:__rand_int__ idle pages published acked
  } | sed "s/^/$persistence /" >>"$tmp/bench"
  stop_redis
done
python3 benches/shard_project.py project "$tmp/bench" "$tmp"/web-*.measured.json
