#!/usr/bin/env bash
# Shards (#16): test 1 of the issue as a benchmark. The generated 50-host web (PAGES pages,
# politeness off), crawled by 1, 2 and 4 shards (`--shard K/N --exchange`) through one
# redis-server on loopback (appendonly yes, appendfsync always), the shards running at once.
# Prints one row per N: total pages, pages per shard, pages fetched twice and overlapping
# same-host requests (from the server's own log), cross-shard URLs before the sent cache
# (hits + misses) and after it (sent), the cache's hit rate, Redis's peak memory
# (`used_memory_peak` of INFO memory), wall seconds and total pages/s. Then a second table, the
# broker's load (issue 46, item 4): pages/s per shard, commands Redis processed
# (`total_commands_processed` of INFO stats: the shards' round trips, a script one) per page,
# bytes in and out of Redis per page (`total_net_input_bytes`, `total_net_output_bytes`), and
# the commands by name (INFO commandstats; those a script runs inside are counted there too).
#
#   benches/shards.sh                      # 100,000 pages, N = 1 2 4, -j 32 per shard
#   PAGES=20000 SHARDS="1 4" JOBS=16 benches/shards.sh
#   CRAWL=/path/to/other/crawl SKIP_BUILD=1 benches/shards.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PAGES=${PAGES:-100000}
SHARDS=${SHARDS:-"1 2 4"}
JOBS=${JOBS:-32}
HOSTS=${HOSTS:-50}
CRAWL=${CRAWL:-target/release/crawl}
REDIS_PORT=${REDIS_PORT:-26379}

. benches/lib.sh
need redis-server redis-server
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --workspace --quiet
tmp=$(mktemp -d)
redis_pid=
cleanup() {
  [ -z "$redis_pid" ] || kill "$redis_pid" 2>/dev/null || true
  kill $(jobs -p) 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "kept $tmp" >&2 || rm -rf "$tmp"
}
trap cleanup EXIT

echo "shards: $PAGES pages on $HOSTS hosts, -j $JOBS per shard, --delay-factor 0, $(nproc) cores"
echo "| shards | pages | pages per shard | fetched twice | overlapping requests | cross-shard URLs | sent after the cache | cache hit rate | Redis peak MiB | seconds | pages/s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for n in $SHARDS; do
  name=web-$n
  start_web "$name" --hosts "$HOSTS" --pages-per-host $((PAGES / HOSTS)) --children 4 \
    --extra-links 8 --cross-permille 200 --padding 2000 --seed 7
  mkdir -p "$tmp/redis-$n"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly yes \
    --appendfsync always --dir "$tmp/redis-$n" >"$tmp/redis-$n.log" 2>&1 &
  redis_pid=$!
  deadline=$((SECONDS + 30))
  until redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; do
    [ $SECONDS -lt $deadline ] || { echo "redis-server did not start" >&2; exit 1; }
    sleep 0.05
  done
  start=$(date +%s.%N)
  pids=()
  for ((k = 0; k < n; k++)); do
    "$CRAWL" "$tmp/$name.seeds" --out "$tmp/$name.out-$k" --shard "$k/$n" \
      --exchange "redis://127.0.0.1:$REDIS_PORT/0" -j "$JOBS" --delay-factor 0 \
      >/dev/null 2>"$tmp/$name.err-$k" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  end=$(date +%s.%N)
  peak=$(redis-cli -p "$REDIS_PORT" info memory | tr -d '\r' | sed -n 's/^used_memory_peak://p')
  redis-cli -p "$REDIS_PORT" info stats | tr -d '\r' >"$tmp/$name.redis-stats"
  redis-cli -p "$REDIS_PORT" info commandstats | tr -d '\r' >"$tmp/$name.redis-commands"
  kill "$redis_pid"; wait "$redis_pid" 2>/dev/null || true; redis_pid=
  exec 3>&-
  wait
  python3 - "$n" "$start" "$end" "$peak" "$tmp/$name.server.json" "$tmp/$name.out" <<'PY'
import json, sys
n, start, end, peak, server, out = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), json.load(open(sys.argv[5])), sys.argv[6]
summaries = [json.load(open(f"{out}-{k}/summary.json")) for k in range(n)]
pages = [s["pages"] for s in summaries]
sent = sum(s["shard"]["sent"] for s in summaries)
lookups = sum(s["shard"]["sent_cache_hits"] + s["shard"]["sent_cache_misses"] for s in summaries)
hit = 100 * (lookups - sent) / lookups if lookups else 0.0
secs = end - start
assert all(s["ending"] == "complete" for s in summaries), [s["ending"] for s in summaries]
print(f"| {n} | {sum(pages)} | {' / '.join(map(str, pages))} | {server['duplicates']} | {server['overlaps']} | "
      f"{lookups} | {sent} | {hit:.1f}% | {peak / 2**20:.1f} | {secs:.1f} | {sum(pages) / secs:.0f} |")
stats = dict(l.split(':', 1) for l in open(f"{out[:-4]}.redis-stats") if ':' in l)
calls = {}
for line in open(f"{out[:-4]}.redis-commands"):
    if line.startswith('cmdstat_'):
        name, fields = line[8:].split(':', 1)
        calls[name] = int(dict(f.split('=') for f in fields.strip().split(','))['calls'])
total = sum(pages)
load = (f"| {n} | {total / secs / n:.0f} | {int(stats['total_commands_processed']) / total:.2f} | "
        f"{int(stats['total_net_input_bytes']) / total:.0f} | {int(stats['total_net_output_bytes']) / total:.0f} | "
        + ', '.join(f"{k} {v / total:.3f}" for k, v in sorted(calls.items(), key=lambda kv: -kv[1])) + " |")
open(f"{out[:-4]}.load", 'w').write(load + "\n")
PY
done
echo
echo "broker load (per page: commands Redis processed, bytes in and out, commands by name)"
echo "| shards | pages/s per shard | commands per page | bytes in per page | bytes out per page | by name, per page |"
echo "|---|---|---|---|---|---|"
for n in $SHARDS; do cat "$tmp/web-$n.load"; done
