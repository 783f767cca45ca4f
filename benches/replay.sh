#!/usr/bin/env bash
# Archives that replay like the live site, checked in a real browser (issue 31).
#
#   benches/replay.sh                                  # the crawl (release build) beside wget
#   BEFORE=/path/to/older/crawl benches/replay.sh      # an older build in the same run
#   CRAWL=/path/to/crawl SKIP_BUILD=1 benches/replay.sh
#   OUT=DIR benches/replay.sh                          # keep the report, screenshots, logs there
#
# Serves two Debian documentation sites with nginx on loopback (Python 3.11's, package
# python3.11-doc, on BASE_PORT; Rust 1.63's, package rust-doc, on BASE_PORT+1), crawls both
# with the crawl (gzip WARC, the crawl's own CDXJ) and with GNU wget
# `-r -l inf --page-requisites --warc-file` (the same hosts, robots.txt obeyed by both), loads
# each into pywb (the crawl from its own CDXJ index, copied beside its WARC files, not indexed
# again; wget's WARC through `wb-manager add`, pywb's own indexer), then loads 30 pages (12
# Python, 18 Rust) live, then (nginx stopped, so nothing escapes to the live site) replayed
# (`/COLL/URL`, pywb with `framed_replay: false`: no frame, no banner) in Debian's headless
# Chromium at 1280x1600, and prints a Markdown table: per page the fraction of
# differing pixels against the live page and the requests the replay could not serve, then
# those requests by resource type and by how the live page referenced them (HTML, CSS url(),
# CSS @import, script). benches/replay_browser.py drives the browser over the DevTools protocol
# with websocket-client (Debian's chromium, no browser download; one small pure-Python
# dependency) and compares screenshots with Pillow.
#
# Installs what it needs: Debian's nginx-light, wget, chromium, python3.11-doc, rust-doc and
# python3-venv; pywb, Pillow and websocket-client from PyPI into its own virtual environment
# (VENV, default target/replay-venv). Takes about 20 minutes on 2 busy cores, wget's crawl the
# longest (7 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
BASE_PORT=${BASE_PORT:-18080}
PYWB_PORT=${PYWB_PORT:-$((BASE_PORT + 10))}
CRAWL=${CRAWL:-target/release/crawl}
VENV=$(realpath -m "${VENV:-target/replay-venv}")
PY_DOC=/usr/share/doc/python3.11/html
RUST_DOC=/usr/share/doc/rust-doc/html

. benches/lib.sh
need nginx nginx-light
need wget wget
need chromium chromium
need_dir "$PY_DOC" python3.11-doc
need_dir "$RUST_DOC" rust-doc
# Debian's python3 makes a virtual environment only with python3-venv.
python3 -c 'import ensurepip' 2>/dev/null || apt-get install -y -qq python3-venv >/dev/null ||
  { apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null; }
if [ ! -x "$VENV/bin/wayback" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q pywb Pillow websocket-client
fi
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --bin crawl

tmp=$(mktemp -d /tmp/replay.XXXXXX)
chmod 755 "$tmp"
OUT=${OUT:-$tmp/out}
mkdir -p "$OUT"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$tmp/crawl-"* "$tmp/wget" "$tmp/pywb"
}
trap cleanup EXIT
trap 'exit 143' INT TERM

# nginx: one server per site, access log `PORT URI STATUS`.
cat >"$tmp/nginx.conf" <<EOF
worker_processes 1; daemon off; pid $tmp/nginx.pid; error_log $tmp/error.log;
events { worker_connections 1024; }
http {
  log_format fmt '\$server_port \$request_uri \$status'; access_log $tmp/access.log fmt;
  include /etc/nginx/mime.types; default_type application/octet-stream;
  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp;
  uwsgi_temp_path $tmp; scgi_temp_path $tmp;
  server { listen 127.0.0.1:$BASE_PORT; root $PY_DOC; }
  server { listen 127.0.0.1:$((BASE_PORT + 1)); root $RUST_DOC; }
}
EOF
nginx -c "$tmp/nginx.conf" -e "$tmp/error.log" &
nginx_pid=$!
pids+=($nginx_pid)
wait_port $((BASE_PORT + 1)) nginx
PY=http://127.0.0.1:$BASE_PORT
RUST=http://127.0.0.1:$((BASE_PORT + 1))
printf '%s/index.html\n%s/index.html\n' "$PY" "$RUST" >"$tmp/seeds"

# The pages compared: 12 of Python's, 18 of Rust's (mdBooks, rustdoc, plain pages).
{
  for p in index.html tutorial/index.html tutorial/classes.html library/index.html \
    library/functions.html library/stdtypes.html library/asyncio.html reference/datamodel.html \
    glossary.html whatsnew/3.11.html howto/logging.html faq/programming.html; do
    echo "python $PY/$p"
  done
  for p in index.html std/index.html std/vec/struct.Vec.html std/option/enum.Option.html \
    std/collections/index.html std/macro.println.html core/index.html book/index.html \
    book/ch04-01-what-is-ownership.html book/ch08-01-vectors.html reference/index.html \
    reference/expressions.html rust-by-example/index.html nomicon/index.html \
    edition-guide/index.html embedded-book/index.html rustc/index.html error-index.html; do
    echo "rust $RUST/$p"
  done
} >"$tmp/pages"

wb() { (cd "$tmp/pywb" && "$VENV/bin/wb-manager" "$@" >/dev/null 2>&1); }
mkdir -p "$tmp/pywb"
# Replay without pywb's top frame and banner: the page alone, as it was archived.
echo 'framed_replay: false' >"$tmp/pywb/config.yaml"
collections=()

# crawl_into NAME BINARY: crawls both sites, loads the WARC files and the crawl's own CDXJ.
crawl_into() {
  local name=$1 bin=$2 t0=$SECONDS
  "$bin" --out "$tmp/crawl-$name" --scope host --delay-factor 0 --warc-compression gzip \
    --log "$tmp/crawl-$name.log" "$tmp/seeds" 2>"$tmp/crawl-$name.err" || {
    echo "$name: crawl exited $?, see below" >&2; tail -5 "$tmp/crawl-$name.err" >&2; }
  wb init "$name"
  cp "$tmp/crawl-$name"/warc/*.warc.gz "$tmp/pywb/collections/$name/archive/"
  sort "$tmp/crawl-$name"/warc/*.cdxj >"$tmp/pywb/collections/$name/indexes/index.cdxj"
  echo "$name: $(wc -l <"$tmp/crawl-$name.log") URLs, $(du -sh "$tmp/crawl-$name/warc" | cut -f1) of WARC, $((SECONDS - t0)) s" >&2
  collections+=("$name")
}
[ -z "${BEFORE:-}" ] || crawl_into crawl-before "$BEFORE"
crawl_into crawl "$CRAWL"

t0=$SECONDS
mkdir -p "$tmp/wget"
(cd "$tmp/wget" && wget -r -l inf --page-requisites --warc-file=wget --no-verbose \
  --delete-after -i "$tmp/seeds" 2>wget.log) || echo "wget exited $? (see $tmp/wget/wget.log)" >&2
wb init wget
wb add wget "$tmp/wget/wget.warc.gz"
echo "wget: $(grep -c ' URL:' "$tmp/wget/wget.log") URLs, $(du -sh "$tmp/wget/wget.warc.gz" | cut -f1) of WARC, $((SECONDS - t0)) s (pywb's indexer included)" >&2
collections+=(wget)

(cd "$tmp/pywb" && exec "$VENV/bin/wayback" -b 127.0.0.1 -p "$PYWB_PORT" \
  >"$tmp/pywb.log" 2>&1) &
pids+=($!)
wait_port "$PYWB_PORT" pywb

"$VENV/bin/python" benches/replay_browser.py --pages "$tmp/pages" \
  --pywb "http://127.0.0.1:$PYWB_PORT" --collections "$(IFS=,; echo "${collections[*]}")" \
  --after-live "kill $nginx_pid" --out "$OUT" | tee "$OUT/report.md"
echo "screenshots and results.json in $OUT" >&2
