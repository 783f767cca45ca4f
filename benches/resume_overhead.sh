#!/usr/bin/env bash
# What crash safety costs (issue 5): the same generated web crawled by this build and by a
# baseline build from before it (5202d8d: no done log, no fetched.tsv, no checkpoints, no
# merge commit protocol), alternating ROUNDS times so both see the same machine load.
#
#   benches/resume_overhead.sh                       # builds the baseline in target/baseline
#   BASE=/path/to/old/crawl ROUNDS=3 PAGES=100000 benches/resume_overhead.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
export PAGES=${PAGES:-100000} WEBS=${WEBS:-multi} JOBS=${JOBS:-64}
cargo build --release --workspace --quiet
if [ -z "${BASE:-}" ]; then
  git worktree add --force target/baseline-src 5202d8d >/dev/null 2>&1 || true
  (cd target/baseline-src && CARGO_TARGET_DIR="$PWD/../baseline" cargo build --release --quiet)
  BASE=target/baseline/release/crawl
fi
for round in $(seq "$ROUNDS"); do
  echo "round $round: baseline ($BASE)"
  CRAWL=$BASE SKIP_BUILD=1 benches/crawl_web.sh | tail -1
  echo "round $round: this build"
  SKIP_BUILD=1 benches/crawl_web.sh | tail -1
done
