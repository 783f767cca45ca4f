#!/usr/bin/env bash
# Recrawls ordered by expected change (--recrawl-budget) against round-robin recrawls at the
# same budget, on testweb's changing web (testweb::changing): PAGES pages changing as Poisson
# processes at skewed rates (most rarely, a few often), one simulated day between rounds.
#   benches/recrawl_policy.sh [PAGES ROUNDS SEED]    (defaults 500 12 1)
# Round 0 crawls every page at day 0; rounds 1..ROUNDS each ask for B = 20 % of PAGES:
#   round-robin: today's recrawl with --max-pages B (a recrawl stopped at B pages resumes
#                where it stopped, so the pages are asked for in turn; a run that completes
#                the pass with fewer is followed by one that starts the next pass);
#   change-rate: --recrawl-budget B.
# The crawler's clock is injected (CRAWL_CLOCK, Unix seconds); testweb's is moved by its
# admin request. Prints, per policy, the changes captured (fetches that found a new version,
# of the changes made up to the last round) and the average freshness (over days 0..ROUNDS+1),
# both from testweb's ground truth. WEB="--min-rate R --max-rate R --skew S" changes the web
# (testweb::changing::ChangingSpec). CRAWL_BIN/TESTWEB_BIN pick the binaries (default: release
# builds; the figures do not depend on speed, so a debug build gives the same).
set -euo pipefail
cd "$(dirname "$0")/.."
pages=${1:-500} rounds=${2:-12} seed=${3:-1}
budget=$((pages / 5))
crawl=${CRAWL_BIN:-target/release/crawl}
if [ -z "${CRAWL_BIN:-}" ]; then
  cargo build --release --quiet --bin crawl -p crawl
  cargo build --release --quiet -p testweb
fi
source benches/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
day=86400 epoch=1700000000

# crawl_round NAME ROUND ARGS…: one run at the round's simulated time.
crawl_round() {
  local name=$1 r=$2 status=0; shift 2
  CRAWL_CLOCK=$((epoch + r * day)) "$crawl" "$tmp/$name.seeds" "${common[@]}" "$@" \
    >>"$tmp/$name.$r.log" || status=$?
  # 4: stopped at --max-pages, resumable (the round-robin's way through the pages).
  [ $status -eq 0 ] || [ $status -eq 4 ] || { echo "$name round $r: exit $status" >&2; exit 1; }
}

# run_policy NAME ARGS…: one web, ROUNDS rounds; prints "NAME captured changes fraction freshness".
run_policy() {
  local name=$1; shift
  # shellcheck disable=SC2086 # WEB is words
  start_web "$name" --changing "$pages" --seed "$seed" ${WEB:-}
  local origin
  origin=$(sed 's#/$##' "$tmp/$name.seeds")
  common=(--out "$tmp/$name.out" --delay-factor 0 --no-sitemaps --no-warc --quiet)
  CRAWL_CLOCK=$epoch "$crawl" "$tmp/$name.seeds" "${common[@]}" >"$tmp/$name.0.log"
  for ((r = 1; r <= rounds; r++)); do
    curl -sf "$origin/_sim/clock?t=$((r * day))" >/dev/null
    if [ "$name" = round-robin ]; then
      # --max-pages, again while B pages are not reached: a run that completes the
      # generation with fewer starts the next pass over the pages.
      local left=$budget
      while [ $left -gt 0 ]; do
        crawl_round "$name" $r --max-pages $left
        local got
        got=$(jq .pages "$tmp/$name.out/summary.json")
        [ "$got" -gt 0 ] || break
        left=$((left - got))
      done
    else
      crawl_round "$name" $r "$@"
    fi
  done
  local at_last fresh
  at_last=$(curl -sf "$origin/_sim/report")
  curl -sf "$origin/_sim/clock?t=$(((rounds + 1) * day))" >/dev/null
  fresh=$(curl -sf "$origin/_sim/report" | jq .freshness)
  stop_web
  # Page fetches of rounds 1..ROUNDS (round 0 fetched each page once).
  echo "$at_last" | jq -r --arg n "$name" --argjson f "$fresh" --argjson p "$pages" \
    '"\($n)\t\(.captured)\t\(.changes)\t\(.captured_fraction)\t\($f)\t\(.fetches - $p)"'
}

echo "pages $pages, rounds $rounds, budget $budget pages a round, seed $seed${WEB:+, $WEB}"
printf 'policy\tcaptured\tchanges\tfraction\tfreshness\tfetches\n'
rr=$(run_policy round-robin)
echo "$rr"
cr=$(run_policy change-rate --recrawl-budget "$budget")
echo "$cr"
awk -F'\t' -v a="$rr" -v b="$cr" 'BEGIN {
  split(a, x, "\t"); split(b, y, "\t");
  printf "change-rate / round-robin: captured %.2fx, freshness %.2fx\n", y[2] / x[2], y[5] / x[5] }'
