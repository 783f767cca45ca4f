#!/usr/bin/env bash
# Builds crawl and crawls the bundled fixture site (fixtures/site) served on loopback.
#
#   scripts/demo.sh              # state in ./crawl-demo (replaced on each run)
#   OUT=dir scripts/demo.sh      # state in dir (resumed or recrawled if it exists)
#
# The URL log goes to stdout, the crawl's summary to stderr; the server always stops.
set -euo pipefail

cd "$(dirname "$0")/.."
out=${OUT:-crawl-demo}
bin=${CARGO_TARGET_DIR:-target}/release

cargo build --release --workspace

tmp=$(mktemp -d "${TMPDIR:-/tmp}/crawl-demo.XXXXXX")
server=
cleanup() {
    exec 3>&- 2>/dev/null || true # EOF on the server's stdin: it stops
    if [ -n "$server" ]; then
        # Give it a moment to stop by itself, then make sure.
        for _ in $(seq 50); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The server runs until its stdin (a fifo held open on fd 3) reaches EOF; --max-seconds is a
# backstop in case this script is killed with SIGKILL.
mkfifo "$tmp/stdin"
"$bin/testweb" --fixtures fixtures/site --seeds-out "$tmp/seeds.txt" \
    --max-seconds 600 <"$tmp/stdin" >"$tmp/testweb.json" &
server=$!
exec 3>"$tmp/stdin"

deadline=$((SECONDS + 10))
until [ -s "$tmp/seeds.txt" ]; do
    if ! kill -0 "$server" 2>/dev/null; then
        echo "demo: testweb exited before writing its seeds" >&2
        exit 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
        echo "demo: no seeds from testweb after 10 s" >&2
        exit 1
    fi
    sleep 0.05
done

# Each run serves the site on a new port, so an old demo state would only hold dead URLs.
if [ -z "${OUT:-}" ] && [ -f "$out/lock" ]; then
    rm -rf "$out"
fi

echo "demo: crawling $(cat "$tmp/seeds.txt") into $out" >&2
status=0
"$bin/crawl" "$tmp/seeds.txt" --out "$out" --delay-factor 1 -v || status=$?
exit "$status"
