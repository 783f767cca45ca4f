#!/usr/bin/env bash
# The shard exchange's engine alone (issue 16, examples/exchange_rate.rs): URLs per second
# through one Redis stream, straight from the broker and through the outbox and its sender
# (alternating rounds, so both see the same machine), and Redis memory per queued URL.
# Needs redis-server (Debian package redis-server).
#
#   benches/exchange.sh              # 200,000 URLs per round, 3 rounds
#   URLS=1000000 ROUNDS=5 benches/exchange.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --quiet --example exchange_rate -- "${URLS:-200000}" "${ROUNDS:-3}"
