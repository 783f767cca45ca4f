#!/usr/bin/env bash
# Shards as separate machines (issue 46, item 2): tests/it/netns.rs with the partition the issue
# names, 30 s. Four shards, each in a network namespace of its own on a bridge, the broker in
# another; shard 2's link goes down for PARTITION seconds mid-crawl (it waits, retries with
# backoff, goes on), shard 1 is killed and started in a new namespace from a copy of its
# directory; then two recrawls on the same machines, the second after a third of the pages
# changed and with the broker killed and restarted, each beside one process. Prints what the
# test reports: the URL log's growth while cut off, the broker's report of the shard frozen
# meanwhile, pages fetched twice, each run's end. Needs root (ip netns) and redis-server.
#
#   sudo benches/shards_netns.sh               # a 30 s partition
#   PARTITION=60 sudo benches/shards_netns.sh  # at the reconnect limit (60 s): it gives up
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "shards_netns: needs root (ip netns add)" >&2; exit 1; }
start=$(date +%s.%N)
CRAWL_NETNS_PARTITION_SECS=${PARTITION:-30} cargo test --quiet --test it \
  netns::shards_on_machines_of_their_own_ride_out_a_partition_and_a_move -- --nocapture 2>&1 |
  grep -E '^(shard 2 cut off|4 shards in namespaces|run 2 in namespaces|run 3 in namespaces|test result)'
end=$(date +%s.%N)
echo "wall seconds: $(echo "$end - $start" | bc)"
