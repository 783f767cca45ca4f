#!/usr/bin/env bash
# A crawl of 10^6 pages over 2,000 hosts (static web on nginx, loopback, one port per host):
# pages/s over time from the crawl's own status lines (-v, every 10 s), peak RSS, and from
# nginx's log the pages fetched twice. Politeness off (--delay-factor 0): this measures the
# machinery at the web's shape over a long run.
#
#   benches/million.sh                       # 2000 hosts x 500 pages, -j 64
#   HOSTS=2000 PAGES=50 benches/million.sh   # a quick 10^5
#   PEER=1 benches/million.sh                # and wget2 on the same web after it (its line first)
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${HOSTS:-2000} PAGES=${PAGES:-500} JOBS=${JOBS:-64} BASE_PORT=${BASE_PORT:-20000}
CRAWL=${CRAWL:-target/release/crawl}
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet
. benches/lib.sh
need nginx nginx-light
tmp=$(mktemp -d); chmod 755 "$tmp"   # nginx workers read the web
nginx_pid=
trap '[ -z "$nginx_pid" ] || kill "$nginx_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
python3 benches/static_web.py "$tmp/www" "$HOSTS" "$PAGES" "$BASE_PORT"
serve_nginx "$HOSTS"
echo "http://127.0.0.1:$BASE_PORT/index.html" >"$tmp/seeds"
/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$CRAWL" "$tmp/seeds" --out "$tmp/out" \
  --scope any -j "$JOBS" --delay-factor 0 --no-warc -v >/dev/null 2>"$tmp/stderr"
kill -USR1 "$nginx_pid"; sleep 0.5
read -r wall user sys rss <"$tmp/time"
if [ -n "${PEER:-}" ]; then
  # wget2 on the same web after the crawl, its own access log: pages, fetched twice, pages/s,
  # CPU per page and peak RSS, as the crawl's line below counts them.
  need wget2 wget2
  mv "$tmp/access.log" "$tmp/crawl-access.log"; kill -USR1 "$nginx_pid"; sleep 0.2
  mkdir -p "$tmp/wget2"
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/wget2-time" wget2 -q -r -H -l 0 --robots=off \
    --max-threads="$JOBS" --delete-after -P "$tmp/wget2" "$(cat "$tmp/seeds")" || true
  kill -USR1 "$nginx_pid"; sleep 0.5
  read -r pwall puser psys prss < <(tail -n 1 "$tmp/wget2-time")
  awk -v wall="$pwall" -v cpu="$(echo "$puser + $psys" | bc)" -v rss="$prss" -v total="$((HOSTS * PAGES))" '
    $2 != "/robots.txt" { if (seen[$1 $2]++) dups++; else if ($3 == 200) pages++ }
    END { printf "wget2: pages %d of %d, fetched twice %d, wall %.0f s (%.0f pages/s), CPU %.0f µs/page, peak RSS %.1f MiB\n",
      pages, total, dups, wall, pages / wall, cpu * 1e6 / (pages > 0 ? pages : 1), rss / 1024 }' "$tmp/access.log"
  mv "$tmp/crawl-access.log" "$tmp/access.log"
fi
python3 - "$tmp/stderr" "$tmp/access.log" "$((HOSTS * PAGES))" "$wall" "$user" "$sys" "$rss" <<'PY'
import re, sys, collections
stderr, access, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
wall, user, sys_, rss = float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
points = []  # (seconds, pages) from "crawl: N pages (R/s), ..., Ts"
for line in open(stderr):
    m = re.match(r"crawl: (\d+) pages \(.*, (\d+)s$", line.strip())
    if m:
        points.append((int(m.group(2)), int(m.group(1))))
seen, dups, pages = set(), 0, 0
for line in open(access):
    port, uri, status = line.split()
    if uri == "/robots.txt":
        continue
    if (port, uri) in seen:
        dups += 1
    else:
        seen.add((port, uri)); pages += status == "200"
print(f"pages {pages} of {total}, fetched twice {dups}, wall {wall:.0f} s ({pages / wall:,.0f} pages/s), "
      f"CPU {(user + sys_) * 1e6 / max(pages, 1):.0f} µs/page, peak RSS {rss / 1024:.1f} MiB")
print("pages/s in each 10 s interval:")
prev_t, prev_n = 0, 0
top = max((n - pn) / (t - pt) for (pt, pn), (t, n) in zip([(0, 0)] + points, points) if t > pt) if points else 1
for t, n in points:
    if t <= prev_t:
        continue
    rate = (n - prev_n) / (t - prev_t)
    print(f"{t:5d} s {rate:8,.0f} |" + "#" * int(50 * rate / top))
    prev_t, prev_n = t, n
PY
