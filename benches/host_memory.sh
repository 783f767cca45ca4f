#!/usr/bin/env bash
# Memory per known host, for the scheduler alone (examples/host_memory.rs): 10^3, 10^4 and
# 10^5 hosts met in waves of 1,000, each served and drained; the scheduler's live heap after
# all of them and its peak, by a counting allocator.
#
#   benches/host_memory.sh
#   HOSTS="1000 1000000" benches/host_memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --example host_memory
for n in ${HOSTS:-1000 10000 100000}; do
  target/release/examples/host_memory "$n"
done
