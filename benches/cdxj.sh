#!/usr/bin/env bash
# What the CDXJ index costs per record (issue 15): the WARC writer alone, the WARC writer with
# the index line of each record (and the sort at close), and the second pass the crawl avoids
# (the index rebuilt from the finished file). Figures in BENCHMARKS.md.
#
#   benches/cdxj.sh                 # 20,000 records of ~8 KiB HTML, 3 rounds per compression
#   RECORDS=100000 ROUNDS=5 benches/cdxj.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --quiet --example cdxj_cost -- "${RECORDS:-20000}" "${ROUNDS:-3}"
