#!/usr/bin/env bash
# The hostile web (issue 6): each case of `testweb --hostile` crawled alone from its own seed,
# by the release binary, with --timeout 5 --max-body 1M --max-pages 200 --delay-factor 0.
# Prints a markdown table: the case, what the server does, what the crawler did (exit status,
# fetches, the notes it logged), wall seconds and peak RSS (GNU time), and the seed's URL-log
# line (robots.txt's line for the robots cases); then the server's count of requests to the
# out-of-scope host (must be 0); then a table of bad inputs: seed files, an --out that is a
# file, read-only, or a full 256 KiB tmpfs (needs root for mount), and the rerun once it has room.
#
#   benches/hostile.sh            (about a minute: the slow cases wait out their timeout)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --workspace --quiet
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; umount "$tmp"/inputs/* 2>/dev/null; rm -rf "$tmp"' EXIT
. benches/lib.sh
start_web web --hostile
while IFS=$'\t' read -r name url; do
  printf '%s\n' "$url" >"$tmp/$name.seed"
  set +e
  /usr/bin/time -f '%e %M' -o "$tmp/$name.time" target/release/crawl "$tmp/$name.seed" \
    --out "$tmp/$name.out" --timeout 5 --max-body 1M --max-pages 200 --delay-factor 0 -q \
    >"$tmp/$name.log" 2>"$tmp/$name.err"
  echo $? >"$tmp/$name.code"
  set -e
done <"$tmp/web.seeds"
stop_web
python3 - "$tmp" <<'PY'
import os, re, sys
tmp = sys.argv[1]
what = {}
src = open("testweb/src/hostile.rs").read()
for name, _path, text in re.findall(r'^\s*"([^"]+)" "([^"]+)" "([^"]+)";', src, re.M):
    what[name] = text
what.update({f"robots-{k}": v for k, v in {
    "huge": "robots.txt of 3 MiB (rule at the top)", "binary": "robots.txt of 64 KiB random bytes",
    "redirect": "robots.txt redirects to the real one", "5xx": "robots.txt answers 503",
    "slow": "robots.txt at one byte a second", "odd": "robots.txt with BOM, NULs, bad lines, 100 KB line",
}.items()})
print("| case | the server | the crawler did | s | peak RSS MiB | URL log line (tsv) |")
print("|---|---|---|---|---|---|")
for line in open(f"{tmp}/web.seeds"):
    name, url = line.rstrip("\n").split("\t")
    secs, kib = open(f"{tmp}/{name}.time").read().split()[-2:]
    code = open(f"{tmp}/{name}.code").read().strip()
    rows = [l.rstrip("\n").split("\t") for l in open(f"{tmp}/{name}.log")]
    pages = [r for r in rows if r[6] != "robots"]
    key = url if not name.startswith("robots-") else url.rstrip("/") + "/robots.txt"
    shown = next((r for r in rows if r[5] == key), None)
    notes = sorted({r[6] for r in pages if r[6] != "-" and not r[6].startswith("redirect:")})
    redirects = sum(r[6].startswith("redirect:") for r in pages)
    did = f"exit {code}, {len(pages)} fetches"
    if redirects:
        did += f", {redirects} redirects"
    if notes:
        did += ", notes " + " ".join(notes)
    err = open(f"{tmp}/{name}.err").read().strip()
    if err:
        did += f"; stderr: {err[:80]}"
    if shown:
        shown[5] = shown[5].replace(url.rsplit("/", 1)[0] if not name.startswith("robots-") else url.rstrip("/"), "…")
        cell = "`" + " ".join(c[:60] for c in shown) + "`"
    else:
        cell = "(none)"
    print(f"| {name} | {what.get(name, '')} | {did} | {float(secs):.2f} | {int(kib) / 1024:.1f} | {cell} |")
PY
echo
echo "server: $(cat "$tmp/web.server.json")"

# Bad inputs and a bad --out: exit status, cost and the first line of stderr.
inputs="$tmp/inputs"; mkdir -p "$inputs"
printf 'http://127.0.0.1:9/\r\nnot a url\r\n' >"$inputs/bad-line"
{ printf 'http://127.0.0.1:9/'; head -c 1000000 /dev/zero | tr '\0' x; echo; } >"$inputs/huge-line"
head -c 100000 /dev/urandom >"$inputs/binary"
printf 'http://127.0.0.1:9/\nfile:///etc/passwd\n' >"$inputs/non-http"
printf '\xef\xbb\xbfhttp://127.0.0.1:9/\r\n' >"$inputs/bom-crlf"
touch "$inputs/a-file"
mkdir -p "$inputs/ro" "$inputs/full"
mount -t tmpfs -o size=64k,ro tmpfs "$inputs/ro" && ro=ok || ro=
start_web big --hosts 1 --pages-per-host 300 --padding 4000
mount -t tmpfs -o size=256k tmpfs "$inputs/full" && full=ok || full=
run_input() {  # NAME SEEDS OUT
  set +e
  /usr/bin/time -f '%e %M' -o "$inputs/$1.time" target/release/crawl "$2" --out "$3" \
    --timeout 2 --delay-factor 0 -q >/dev/null 2>"$inputs/$1.err"
  local code=$?
  set -e
  read -r secs kib < <(tail -1 "$inputs/$1.time")
  printf '| %s | %s | %s | %s | `%s` |\n' "$1" "$code" "$secs" "$(awk "BEGIN{printf \"%.1f\", $kib/1024}")" \
    "$(grep -v '^Command exited' "$inputs/$1.err" | head -1 | sed "s|$inputs/||g" | cut -c1-150)"
}
echo
echo "| input | exit | s | peak RSS MiB | stderr (first line) |"
echo "|---|---|---|---|---|"
for f in bad-line huge-line binary non-http bom-crlf; do run_input "seeds $f" "$inputs/$f" "$inputs/out-$f"; done
run_input "--out a file" "$inputs/bom-crlf" "$inputs/a-file"
[ -n "$ro" ] && run_input "--out read-only" "$inputs/bom-crlf" "$inputs/ro/state"
if [ -n "$full" ]; then
  run_input "--out full (256 KiB tmpfs)" "$tmp/big.seeds" "$inputs/full/state"
  mount -o remount,size=64m "$inputs/full"
  run_input "same, space freed" "$tmp/big.seeds" "$inputs/full/state"
fi
stop_web
umount "$inputs/ro" "$inputs/full" 2>/dev/null || true
