#!/usr/bin/env bash
# `--markdown` on two real documentation sites, rendered back to HTML by an independent Markdown
# renderer (pandoc) and compared with the page's main content: Debian's rust-doc (rustdoc API
# pages and mdBook books) and python3-doc (Sphinx), each served by nginx as one host on
# loopback and crawled with `--text main --markdown --save markdown --log-format jsonl`.
#
#   benches/markdown.sh                     # 300 rust-doc pages, every python3-doc page
#   PAGES=1000 SEED=7 CRAWL=/path/to/crawl SKIP_BUILD=1 benches/markdown.sh
#
# The pages crawled are seeds at --max-depth 0: for rust-doc a sample of PAGES .html files
# (seeded shuffle, half of them rustdoc API pages of std, core, alloc, proc_macro and test, half
# the books and the rest; `src/` source views, rustdoc's meta-refresh redirect stubs and what
# the tree's robots.txt disallows left out);
# for python3-doc every .html file (at most PAGES_PY). benches/markdown_compare.py then renders
# each page's Markdown (the log's; the saved .md files are checked to be the same text) with
# `pandoc -f commonmark+pipe_tables -t html --no-highlight` and compares its headings (level, text, order) and its absolute links
# (set of hrefs) against (1) the extractor's kept HTML for the page, as
# `examples/main_content.rs` gets it through the crawler's own functions (the writer's fidelity),
# and (2) the served file's main region as the script's html.parser pass finds it (rustdoc's
# #main-content, mdBook's <main>, Sphinx's div[role=main]; an independent reference).
set -euo pipefail
cd "$(dirname "$0")/.."
PAGES=${PAGES:-300}
PAGES_PY=${PAGES_PY:-100000}
SEED=${SEED:-43}
BASE_PORT=${BASE_PORT:-20460}
CRAWL=${CRAWL:-target/release/crawl}
MAIN_CONTENT=${MAIN_CONTENT:-target/release/examples/main_content}
RUST_DOCS=${RUST_DOCS:-/usr/share/doc/rust-doc/html}
PY_DOCS=${PY_DOCS:-/usr/share/doc/python3/html}

. benches/lib.sh
need nginx nginx-light
need pandoc pandoc
need_dir "$RUST_DOCS" rust-doc
need_dir "$PY_DOCS" python3-doc
RUST_DOCS=$(readlink -f "$RUST_DOCS")
PY_DOCS=$(readlink -f "$PY_DOCS")
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --bin crawl --example main_content

tmp=$(mktemp -d); chmod 755 "$tmp"
nginx_pid=
cleanup() {
  [ -z "$nginx_pid" ] || kill "$nginx_pid" 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "kept $tmp" >&2 || rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/www"
ln -s "$RUST_DOCS" "$tmp/www/h00000"
ln -s "$PY_DOCS" "$tmp/www/h00001"
serve_nginx 2

# sample DOCS ORIGIN N: N seed URLs of DOCS's .html pages (see the header).
sample() {
  python3 - "$1" "$2" "$3" "$SEED" <<'PY'
import os, random, sys
docs, origin, n, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
# Paths the tree's own robots.txt disallows (rust-doc's old book editions) are not crawled.
disallowed = []
if os.path.exists(os.path.join(docs, "robots.txt")):
    for line in open(os.path.join(docs, "robots.txt")):
        if line.lower().startswith("disallow:") and line.split(":", 1)[1].strip():
            disallowed.append(line.split(":", 1)[1].strip())
api, other = [], []
for root, dirs, files in os.walk(docs, followlinks=True):
    rel = os.path.relpath(root, docs)
    if rel == "src" or rel.startswith("src/"):
        dirs[:] = []
        continue
    for f in files:
        if not f.endswith(".html"):
            continue
        path = os.path.join(root, f)
        with open(path, "rb") as fh:
            if b'http-equiv="refresh"' in fh.read(1024):
                continue
        page = os.path.relpath(path, docs)
        if any(("/" + page).startswith(d) for d in disallowed):
            continue
        top = page.split("/")[0]
        (api if top in ("std", "core", "alloc", "proc_macro", "test") else other).append(page)
rng = random.Random(seed)
if api and other:
    for group in (api, other):
        group.sort()
        rng.shuffle(group)
    half = n // 2
    pages = api[:half] + other[:n - min(half, len(api))]
else:
    pages = sorted(api + other)
    rng.shuffle(pages)
    pages = pages[:n]
for page in sorted(pages):
    print(origin + "/" + page)
PY
}

echo "markdown: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), pandoc $(pandoc --version | head -1 | cut -d' ' -f2)"
for corpus in rust-doc python3-doc; do
  if [ $corpus = rust-doc ]; then docs=$RUST_DOCS port=$BASE_PORT n=$PAGES
  else docs=$PY_DOCS port=$((BASE_PORT + 1)) n=$PAGES_PY; fi
  origin="http://127.0.0.1:$port"
  out="$tmp/out.$corpus"
  sample "$docs" "$origin" "$n" >"$tmp/$corpus.seeds"
  "$CRAWL" "$tmp/$corpus.seeds" --out "$out" --max-depth 0 --delay-factor 0 -q --no-warc \
    --text main --markdown --save markdown --log-format jsonl --log "$out.log.jsonl" >/dev/null
  # The saved tree holds the log's Markdown, page for page.
  python3 - "$out.log.jsonl" "$out/markdown" "$tmp/$corpus.seeds" <<'PY'
import json, os, sys, urllib.parse
log, tree, seeds = sys.argv[1:]
seeded = set(line.strip() for line in open(seeds))
n = same = 0
for line in open(log):
    e = json.loads(line)
    if "markdown" not in e or e["url"] not in seeded:
        continue
    u = urllib.parse.urlsplit(e["url"])
    # docs/state.md, "Saved pages": bytes outside [A-Za-z0-9._-] as %XX, directories with `@`.
    segs = [urllib.parse.quote(urllib.parse.unquote(s), safe="") for s in u.path.lstrip("/").split("/")]
    segs = [s.replace("~", "%7E") for s in segs]
    segs[-1] = "index%2Ehtml" if segs[-1] == "index.html" else segs[-1]
    path = os.path.join(tree, "%s_%d" % (u.hostname, u.port), *[s + "@" for s in segs[:-1]], segs[-1] + ".md")
    n += 1
    same += os.path.exists(path) and open(path, encoding="utf-8").read() == e["markdown"]
print(f"{sys.argv[3].split('/')[-1][:-6]}: {len(seeded)} seeds; saved .md files equal to the log's Markdown: {same} of {n}")
PY
  python3 - "$out.log.jsonl" "$docs" >"$tmp/$corpus.tsv" <<'PY'
import json, os, sys, urllib.parse
log, docs = sys.argv[1:]
for line in open(log):
    e = json.loads(line)
    if "markdown" in e:
        path = urllib.parse.unquote(urllib.parse.urlsplit(e["url"]).path).lstrip("/")
        print(e["url"] + "\t" + os.path.join(docs, path))
PY
  "$MAIN_CONTENT" <"$tmp/$corpus.tsv" >"$tmp/$corpus.content.jsonl"
  python3 benches/markdown_compare.py "$corpus" "$docs" "$origin" "$out.log.jsonl" "$tmp/$corpus.content.jsonl" "$tmp/$corpus.seeds"
done
