#!/usr/bin/env bash
# Focused versus breadth-first crawl on a test web with a planted community (examples/focus.rs):
# fetches to reach 90% of the community, and `crawl rank --top 10` of the breadth-first crawl.
#   benches/focus.sh [BULK MEMBERS]    (defaults 3000 100)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin crawl --example focus
target/release/examples/focus target/release/crawl "${1:-3000}" "${2:-100}"
