#!/usr/bin/env bash
# Near-duplicate detection's memory over the crawl's size (issue 45): benches/options_at_scale.sh
# with `--near-duplicates off` and `note`, no WARC, at 10^5 and 10^6 pages. Every page has 300
# words of its own, so every page is judged and goes into the index and none is a
# near-duplicate: the index grows by every page, the worst case for its size. The `DIR size`
# column is then mostly DIR/neardup.
#
#   benches/neardup_memory.sh                      # 2,000 hosts x 50 and x 500 pages
#   SIZES="50" benches/neardup_memory.sh           # pages per host, 10^5 only
set -euo pipefail
cd "$(dirname "$0")/.."
NO_WARC=1 OPTION_SETS="--near-duplicates off|--near-duplicates note" exec benches/options_at_scale.sh
