#!/usr/bin/env bash
# What `--near-duplicates skip-links` costs a crawl of a real site (issue 45, item 5): the pages
# it does not fetch that `note` (the same detection, every link followed) fetches, and of those
# how many were worth fetching: HTML pages that are not near-duplicates themselves (their text
# is then missing from the crawl), beside near-duplicates, pages too short to judge, and other
# files (images, stylesheets, scripts).
#
#   benches/skip_links.sh                        # rust-doc, python3-doc, the template web
#   WEBS=rust-doc VERBOSE=1 benches/skip_links.sh   # and the URLs of the pages lost
#
# Each web is served by nginx as one host (as benches/neardup.sh does) and crawled from its
# index.html with `--scope host --delay-factor 0 --no-warc`, once with `note` and once with
# `skip-links`; the two URL logs are compared.
set -euo pipefail
cd "$(dirname "$0")/.."
WEBS=${WEBS:-"rust-doc python3-doc template"}
REPEAT=${REPEAT:-10}
BASE_PORT=${BASE_PORT:-20500}
CRAWL=${CRAWL:-target/release/crawl}
. benches/lib.sh
need nginx nginx-light
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --example neardup_web
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet
tmp=$(mktemp -d /tmp/skip-links.XXXXXX)
chmod 755 "$tmp"
nginx_pid=
trap '[ -z "$nginx_pid" ] || kill "$nginx_pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for web in $WEBS; do
  doc_web "$web"
  rm -rf "$tmp/www"; mkdir -p "$tmp/www"; ln -s "$root" "$tmp/www/h00000"
  serve_nginx 1
  echo "http://127.0.0.1:$BASE_PORT/index.html" >"$tmp/seeds"
  for mode in note skip-links; do
    rm -rf "$tmp/out"
    "$CRAWL" "$tmp/seeds" --out "$tmp/out" --scope host --delay-factor 0 --no-warc -j 4 \
      --near-duplicates "$mode" >"$tmp/log.$mode" 2>"$tmp/err.$mode" ||
      { echo "$web, $mode: the crawl exited $?" >&2; tail -3 "$tmp/err.$mode" >&2; }
  done
  kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; nginx_pid=
  python3 - "$web" "$tmp/log.note" "$tmp/log.skip-links" <<'PY'
import os, sys
web, note_log, skip_log = sys.argv[1:]
def rows(path):
    out = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 6:
            out[f[5]] = f
    return out
note, skip = rows(note_log), rows(skip_log)
def near(f):
    return len(f) > 6 and "near-duplicate:" in f[6]
def html(f):
    return f[0] == "200" and f[4].startswith("text/html")
missed = [note[u] for u in note.keys() - skip.keys()]
kinds = {"HTML, not a near-duplicate": 0, "HTML, a near-duplicate": 0, "not HTML or not 200": 0}
for f in missed:
    if not html(f):
        kinds["not HTML or not 200"] += 1
    elif near(f):
        kinds["HTML, a near-duplicate"] += 1
    else:
        kinds["HTML, not a near-duplicate"] += 1
html_note = sum(1 for f in note.values() if html(f))
lost = kinds["HTML, not a near-duplicate"]
print(f"{web}: note fetched {len(note):,} URLs ({html_note:,} HTML pages, "
      f"{sum(1 for f in note.values() if near(f)):,} noted); skip-links fetched {len(skip):,} "
      f"({sum(1 for f in skip.values() if html(f)):,} HTML, {sum(1 for f in skip.values() if near(f)):,} noted); "
      f"not fetched by skip-links: {len(missed):,} = " + ", ".join(f"{v:,} {k}" for k, v in kinds.items())
      + f"; HTML pages with text of their own lost: {lost:,} of {html_note:,} ({100 * lost / max(html_note, 1):.1f} %)")
if os.environ.get("VERBOSE"):
    for f in missed:
        if html(f) and not near(f):
            print("  lost:", f[5])
extra = skip.keys() - note.keys()
if extra:
    print(f"  fetched by skip-links alone: {len(extra):,}")
PY
done
