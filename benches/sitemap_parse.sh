#!/usr/bin/env bash
# The cost of reading a sitemap (examples/sitemap_parse.rs): a generated sitemap at the
# protocol's limits (50,000 URLs, ~50 MB of XML with lastmod and hreflang alternates), plain and
# gzip, read streaming from the file (the parser's own memory) and from memory (as the crawler
# reads a fetched body). MB/s are of uncompressed XML.
#
#   benches/sitemap_parse.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --example sitemap_parse
bin=target/release/examples/sitemap_parse
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" generate "$dir/sitemap.xml"
"$bin" generate "$dir/sitemap.xml.gz" gzip
for file in sitemap.xml sitemap.xml.gz; do
  for mode in stream held; do
    "$bin" "$mode" "$dir/$file"
  done
done
# The peer, on the same files in the same run: Python's xml.etree iterparse (expat, streaming,
# elements cleared as they end), the usual way Python crawlers read big sitemaps.
for file in sitemap.xml sitemap.xml.gz; do
  python3 - "$dir/$file" <<'PY'
import gzip, resource, sys, time
path = sys.argv[1]
from xml.etree.ElementTree import iterparse
start = time.perf_counter()
opened = gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")
locs = 0
for _, el in iterparse(opened, events=("end",)):
    if el.tag.endswith("}loc"):
        locs += 1
    if el.tag.endswith("}url"):
        el.clear()
secs = time.perf_counter() - start
size = opened.tell() if not path.endswith(".gz") else None
print(f"python iterparse\t{path.rsplit('/', 1)[1]}\tentries {locs}\t{secs:.3f} s\tpeak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MiB")
PY
done
