#!/usr/bin/env bash
# The cost of `--extract` on a real documentation site, and its rows counted against the pages'
# own markup: Debian's python3-doc (the Python docs, Sphinx) served by nginx as one host on
# loopback, crawled with and without `--extract` (every function's name and signature, the
# `dt.sig-object` elements, into SQLite), alternating, medians of REPS runs.
#
#   benches/extract.sh                         # /usr/share/doc/python3/html, 3 runs each
#   DOCS=/usr/share/doc/python3.11/html REPS=5 CRAWL=/path/to/crawl SKIP_BUILD=1 benches/extract.sh
#
# Columns: pages/s (the crawl's 2xx answers over its wall time), CPU µs/page (user+sys of the
# crawl alone, over its 2xx answers), peak RSS (MiB). Then the last --extract run's SQLite
# table is checked against an independent count: a Python html.parser pass over the same files
# on disk counts, per page, the `<dt>` elements whose class has `sig-object` and, of those, the
# ones with an `id`; every row's `signature` and `name` list must have those lengths, and every
# crawled page with at least one such element must have its row. Finally the same --out is
# recrawled (nothing changed: no history row) to show the rows updated in place.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
BASE_PORT=${BASE_PORT:-20400}
CRAWL=${CRAWL:-target/release/crawl}
DOCS=${DOCS:-/usr/share/doc/python3/html}

. benches/lib.sh
need nginx nginx-light
[ -x /usr/bin/time ] || need /usr/bin/time time
need_dir "$DOCS" python3-doc
DOCS=$(readlink -f "$DOCS")
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet

tmp=$(mktemp -d); chmod 755 "$tmp"
nginx_pid=
cleanup() {
  [ -z "$nginx_pid" ] || kill "$nginx_pid" 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "kept $tmp" >&2 || rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/www"
ln -s "$DOCS" "$tmp/www/h00000"
serve_nginx 1
origin="http://127.0.0.1:$BASE_PORT"
echo "$origin/index.html" >"$tmp/seeds"
cat >"$tmp/python.rules" <<'EOF'
# Every function, class, method and attribute documented by Sphinx: its id and signature.
[functions]
url = \.html$
title = h1::text
name[] = dt.sig-object[id]::attr(id)
signature[] = dt.sig-object::text
EOF

# run TOOL REP: one crawl; prints "pages seconds cpu_seconds rss_kib".
run() {
  local out="$tmp/out.$1.$2" extra=()
  [ "$1" = crawl ] || extra=(--extract "$tmp/python.rules" --extract-db "$out/fields.db" --log "$out/urls.tsv")
  mkdir -p "$out"
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$CRAWL" "$tmp/seeds" --out "$out" --scope host \
    --delay-factor 0 -q "${extra[@]}" >/dev/null
  local pages; pages=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"]["2xx"])' "$out/summary.json")
  read -r wall user sys rss <"$tmp/time"
  echo "$pages $wall $(echo "$user + $sys" | bc) $rss"
}

echo "extract: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $DOCS ($(find -L "$DOCS" -name '*.html' | wc -l) .html files), medians of $REPS"
declare -A rows
for ((r = 0; r < REPS; r++)); do
  for tool in crawl crawl-extract; do
    rows[$tool]+="$(run "$tool" "$r")"$'\n'
  done
done
printf '%-14s %8s %9s %12s %9s\n' tool pages pages/s "CPU µs/page" "RSS MiB"
for tool in crawl crawl-extract; do
  printf '%s' "${rows[$tool]}" | python3 -c '
import sys, statistics
runs = [tuple(map(float, l.split())) for l in sys.stdin if l.strip()]
pages = statistics.median(r[0] for r in runs)
rate = statistics.median(r[0] / r[1] for r in runs)
cpu = statistics.median(r[2] / r[0] * 1e6 for r in runs)
rss = statistics.median(r[3] for r in runs) / 1024
print("%-14s %8d %9.0f %12.0f %9.0f" % (sys.argv[1], pages, rate, cpu, rss))' "$tool"
done

last="$tmp/out.crawl-extract.$((REPS - 1))"
python3 - "$last/fields.db" "$DOCS" "$origin" "$last/summary.json" <<'EOF'
import html.parser, json, os, sqlite3, sys, urllib.parse
db, docs, origin, summary = sys.argv[1:]

class Count(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.sigs = self.ids = 0
    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "dt" and "sig-object" in (attrs.get("class") or "").split():
            self.sigs += 1
            self.ids += "id" in attrs

def count(path):
    c = Count()
    with open(path, encoding="utf-8", errors="replace") as f:
        c.feed(f.read())
    return c.sigs, c.ids

conn = sqlite3.connect(db)
rows = {url: (json.loads(n), json.loads(s)) for url, n, s in conn.execute("SELECT url, name, signature FROM functions")}

def path_of(url):
    path = urllib.parse.unquote(urllib.parse.urlsplit(url).path).lstrip("/")
    return os.path.join(docs, path + ("index.html" if path.endswith("/") or not path else ""))
summary = json.load(open(summary))
bad, pages, sigs, ids, counted_pages = [], 0, 0, 0, 0
for url, (names, signatures) in rows.items():
    s, i = count(path_of(url))
    sigs += s; ids += i
    if (len(signatures), len(names)) != (s, i):
        bad.append((url, len(signatures), s, len(names), i))
# HTML pages the crawl fetched (200, from its URL log) whose markup has sig-objects but no row.
fetched = set()
for line in open(os.path.join(os.path.dirname(db), "urls.tsv")):
    cols = line.rstrip("\n").split("\t")
    if cols[0] == "200" and cols[4].startswith("text/html") and count(path_of(cols[5]))[0]:
        fetched.add(cols[5])
missing = sorted(u for u in fetched if u not in rows)
print(f"rows: {len(rows)} pages; {sum(len(s) for _, s in rows.values())} signatures and "
      f"{sum(len(n) for n, _ in rows.values())} names in them")
print(f"independent (html.parser over the same files): {sigs} dt.sig-object, {ids} with an id; "
      f"rows disagreeing: {len(bad)} {bad[:3]}")
print(f"pages fetched with a dt.sig-object in their file: {len(fetched)}, without a row: {len(missing)} {missing[:5]}")
print(f"summary extract: {json.dumps(summary['extract'])}")
EOF

# The recrawl on the same --out: unchanged pages update their rows' fetch time only.
before=$(sqlite3 "$last/fields.db" 'SELECT count(*), min(fetched) FROM functions' 2>/dev/null ||
  python3 -c 'import sqlite3,sys; print(*sqlite3.connect(sys.argv[1]).execute("SELECT count(*), min(fetched) FROM functions").fetchone(), sep="|")' "$last/fields.db")
"$CRAWL" "$tmp/seeds" --out "$last" --scope host --delay-factor 0 -q \
  --extract "$tmp/python.rules" --extract-db "$last/fields.db" >/dev/null || true
python3 - "$last/fields.db" "$last/summary.json" "$before" <<'EOF'
import json, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
after = conn.execute("SELECT count(*), min(fetched) FROM functions").fetchone()
history = conn.execute("SELECT count(*) FROM functions_history").fetchone()[0]
print(f"recrawl: rows before {sys.argv[3]}, after {after[0]}|{after[1]}; history rows {history}; "
      f"summary extract {json.dumps(json.load(open(sys.argv[2]))['extract'])}")
EOF
