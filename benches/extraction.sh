#!/usr/bin/env bash
# Main-text extraction on the Zyte article-extraction benchmark (181 real pages with ground
# truth): `content::text::main_text` (`--text main`: the one-pass reading where it answers,
# the trafilatura crate elsewhere), the crate alone (`crawl_trafilatura`), `full_text` (`--text full`) and
# trafilatura (Python, from PyPI, in a venv of this script's own) on the same pages, scored
# side by side by the benchmark's own evaluate.py (token 4-gram shingles: precision, recall, F1,
# with bootstrap deviations), then the CPU per page of each extractor on those pages and on
# LARGE pages (the benchmark's pages repeated into pages of ~1 MB and ~5 MB).
#
# BENCH is a copy of https://github.com/scrapinghub/article-extraction-benchmark (html/*.html.gz,
# ground-truth.json, evaluate.py); nothing of it is kept in this repository.
#
#   benches/extraction.sh BENCH                 # venv in target/extraction-venv
#   VENV=/tmp/venv SKIP_BUILD=1 benches/extraction.sh BENCH
set -euo pipefail
cd "$(dirname "$0")/.."
bench=$(realpath "${1:?usage: benches/extraction.sh BENCH_DIR (a copy of scrapinghub/article-extraction-benchmark)}")
for need in html ground-truth.json evaluate.py; do
  [ -e "$bench/$need" ] || { echo "$bench/$need is missing: BENCH must be a copy of scrapinghub/article-extraction-benchmark" >&2; exit 2; }
done
if gzip -cd "$bench"/html/*.html.gz 2>/dev/null | head -c 200 | grep -q "git-lfs"; then
  echo "$bench/html holds Git LFS pointers, not pages: fetch the files themselves" >&2; exit 2
fi
VENV=${VENV:-target/extraction-venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -c "import trafilatura" 2>/dev/null || "$VENV/bin/pip" install -q trafilatura lxml_html_clean
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --example extract_bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/output"
ln -s "$bench/ground-truth.json" "$tmp/ground-truth.json"
pages=("$bench"/html/*.html.gz)
echo "extraction: ${#pages[@]} pages of $bench, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
for mode in main trafilatura full; do
  target/release/examples/extract_bench "$mode" "$tmp/output/crawl_$mode.json" "${pages[@]}"
done
"$VENV/bin/python" benches/extraction_trafilatura.py "$tmp/output/trafilatura.json" "${pages[@]}"
(cd "$tmp" && python3 "$bench/evaluate.py" --n-bootstrap "${BOOTSTRAP:-1000}")

# Large pages: the benchmark's pages concatenated (bodies appended inside one <html>) to ~1 MB
# and ~5 MB, extraction time only.
mkdir "$tmp/large"
"$VENV/bin/python" - "$tmp/large" "${pages[@]}" <<'PY'
import gzip, re, sys
out, files = sys.argv[1], sys.argv[2:]
bodies = []
for f in files:
    html = gzip.open(f, "rt", encoding="utf8").read()
    m = re.search(r"<body[^>]*>(.*)</body>", html, re.S | re.I)
    bodies.append(m.group(1) if m else html)
for size in (1, 5):
    page, i = [], 0
    while sum(map(len, page)) < size << 20:
        page.append(f"<div class=page-{i}>" + bodies[i % len(bodies)] + "</div>")
        i += 1
    open(f"{out}/large-{size}mb.html", "w").write("<html><head><title>Large</title></head><body>" + "".join(page) + "</body></html>")
PY
for mode in main trafilatura full; do
  target/release/examples/extract_bench "$mode" "$tmp/large/out-$mode.json" "$tmp"/large/*.html
done
"$VENV/bin/python" benches/extraction_trafilatura.py "$tmp/large/out-trafilatura.json" "$tmp"/large/*.html
