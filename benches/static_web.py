#!/usr/bin/env python3
"""Writes a static web for nginx: HOSTS hosts x PAGES pages of about 1.7 KB, one directory per
host (h00000 ...), every page reachable from host 0's index within a few hops.

  benches/static_web.py OUT_DIR HOSTS PAGES BASE_PORT [SEED]

WEB_SCHEME=https in the environment writes https links (for a server that speaks TLS).
WEB_BY_ADDRESS=1 puts every host on BASE_PORT at an address of its own, host h at
127.1.(h // 250).(h % 250 + 1) (all of 127.0.0.0/8 is loopback on Linux), so that hosts differ
by name as on the web (a TLS client keys its sessions by name), not by port.
WEB_TEXT=random gives every page 300 words of its own (drawn from 4,096 made-up words) in place
of the filler all pages share, so that no two pages are near-duplicates (benches/neardup_memory.sh).

Links of page p on host h (all absolute, so the web is the same for every crawler):
  - its children in a 4-ary tree over the host's pages (every page reachable from index.html);
  - on index pages, the index of hosts 8h+1 .. 8h+8 (every host within log8(HOSTS) hops);
  - 8 more pages chosen at random from the whole web (cross-host links, repeats across pages).
Written apart from the crawler's own test web on purpose: benchmarks against wget2 should
share nothing with the crawler's code.
"""
import os, random, sys

out, hosts, pages, base = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 7)
scheme = os.environ.get("WEB_SCHEME", "http")
by_address = os.environ.get("WEB_BY_ADDRESS") == "1"
filler = ("The crawler visits this page once, politely, and moves on. " * 30)[:560]
random_text = os.environ.get("WEB_TEXT") == "random"
text_rng = random.Random(11)  # apart from rng: the links stay those of the web without it
vocabulary = ["".join(text_rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(text_rng.randrange(3, 9)))
              for _ in range(4096)]

def url(h, p):
    name = "index.html" if p == 0 else f"p{p}.html"
    if by_address:
        return f"{scheme}://127.1.{h // 250}.{h % 250 + 1}:{base}/{name}"
    return f"{scheme}://127.0.0.1:{base + h}/{name}"

for h in range(hosts):
    d = os.path.join(out, f"h{h:05d}")
    os.makedirs(d, exist_ok=True)
    for p in range(pages):
        links = [url(h, c) for c in range(4 * p + 1, min(4 * p + 5, pages))]
        if p == 0:
            links += [url(c, 0) for c in range(8 * h + 1, min(8 * h + 9, hosts))]
        links += [url(rng.randrange(hosts), rng.randrange(pages)) for _ in range(8)]
        body = "".join(f'<li><a href="{u}">{u}</a></li>\n' for u in links)
        text = " ".join(text_rng.choices(vocabulary, k=300)) if random_text else filler
        with open(os.path.join(d, "index.html" if p == 0 else f"p{p}.html"), "w") as f:
            f.write(f"<!doctype html><html><head><title>host {h} page {p}</title></head>"
                    f"<body><h1>Host {h}, page {p}</h1><p>{text}</p><ul>\n{body}</ul></body></html>\n")
