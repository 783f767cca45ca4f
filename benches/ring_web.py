#!/usr/bin/env python3
"""A web whose pages are found as they are fetched, as static files for nginx, and the ideal
polite crawler on it.

  benches/ring_web.py write OUT_DIR HOSTS PAGES SCHEME [SEED]
  benches/ring_web.py ideal OUT_DIR HOSTS PAGES SERVICE_S FACTOR
  benches/ring_web.py dns ADDR    # answers A questions for *.web.test with 127.0.0.1 (UDP)

Host h is named h{h}.web.test; its pages are / (index.html) and /p1.html .. /p{PAGES-1}.html.
Page p links its host's next page, two random pages of its own host and two random pages of
other hosts (absolute SCHEME:// links); each / also links the next host's / (the ring). The
crawl starts from h0's /, so a host's later pages and most hosts are known only once pages
linking to them are answered. Written apart from testweb's --ring on purpose: the harness
(nginx, TLS, names) shares nothing with the crawler's code.

`ideal` simulates the polite crawler the crawl is measured against: one request per host at a
time, robots.txt first, a rest of FACTOR x SERVICE_S after each response, unlimited concurrency
and no delay of its own, each page known the instant a page linking to it is answered, a host's
known pages fetched in the order they became known. Prints its end (s) and requests.
"""
import heapq, os, random, sys


def links(hosts, pages, scheme, seed):
    rng = random.Random(seed)
    out = {}
    for h in range(hosts):
        for p in range(pages):
            ls = []
            if p + 1 < pages:
                ls.append((h, p + 1))
            ls += [(h, rng.randrange(pages)) for _ in range(2)]
            ls += [((h + 1 + rng.randrange(hosts - 1)) % hosts, rng.randrange(pages)) for _ in range(2)]
            if p == 0:
                ls.append(((h + 1) % hosts, 0))
            out[(h, p)] = ls
    return out


def url(scheme, h, p):
    return f"{scheme}://h{h}.web.test/" + ("" if p == 0 else f"p{p}.html")


def write(out, hosts, pages, scheme, seed):
    filler = ("Found as it is fetched, politely. " * 12)[:400]
    for (h, p), ls in links(hosts, pages, scheme, seed).items():
        d = os.path.join(out, f"h{h}.web.test")
        if p == 0:
            os.makedirs(d, exist_ok=True)
        body = "".join(f'<a href="{url(scheme, *l)}">{l[0]}/{l[1]}</a>\n' for l in ls)
        name = "index.html" if p == 0 else f"p{p}.html"
        with open(os.path.join(d, name), "w") as f:
            f.write(f"<!doctype html><title>h{h} p{p}</title><p>{filler}</p>\n{body}")


def ideal(hosts, pages, seed, service, factor):
    graph = links(hosts, pages, "x", seed)
    known = {(0, 0)}
    queue = {h: [] for h in range(hosts)}   # known, not yet fetched pages, in order
    free_at = {}                              # host -> when it may go next (absent: unknown)
    busy = set()
    events = []                               # (time, kind, host, page)
    requests = 0

    def start(h, t):
        nonlocal requests
        if h in busy or not queue[h]:
            return
        at = max(t, free_at[h])
        heapq.heappush(events, (at, 0, h, -2))   # a wake-up: take the next page at `at`
        busy.add(h)

    # host 0: robots.txt at 0
    free_at[0] = 0.0
    queue[0].append(0)
    heapq.heappush(events, (0.0, 1, 0, -1))      # robots.txt request starts
    busy.add(0)
    end = 0.0
    while events:
        t, kind, h, p = heapq.heappop(events)
        if kind == 1:                            # a request starts at t, ends after service
            requests += 1
            heapq.heappush(events, (t + service, 2, h, p))
        elif kind == 0:                          # host h takes its next known page
            p = queue[h].pop(0)
            heapq.heappush(events, (t, 1, h, p))
        else:                                    # a response at t
            end = max(end, t)
            busy.discard(h)
            free_at[h] = t + factor * service
            if p >= 0:
                for (lh, lp) in graph[(h, p)]:
                    if (lh, lp) in known:
                        continue
                    known.add((lh, lp))
                    queue[lh].append(lp)
                    if lh not in free_at:           # a new host: robots.txt first
                        free_at[lh] = t
                        heapq.heappush(events, (t, 1, lh, -1))
                        busy.add(lh)
                    else:
                        start(lh, t)
            start(h, t)
    return end, requests


def dns(addr):
    """A DNS server of one answer: every A question for a name under web.test gets 127.0.0.1
    (TTL 300); others get NXDOMAIN. Questions are answered in the order they come."""
    import socket
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # Room for a burst of questions (the crawl looks names up ahead, many at once).
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.bind((addr, 53))
    while True:
        q, peer = sock.recvfrom(512)
        if len(q) < 12:
            continue
        i, labels = 12, []
        while i < len(q) and q[i]:
            labels.append(q[i + 1:i + 1 + q[i]].decode("ascii", "replace").lower())
            i += 1 + q[i]
        qtype = q[i + 1:i + 3]
        question = q[12:i + 5]
        ours = labels[-2:] == ["web", "test"]
        flags = b"\x81\x80" if ours else b"\x81\x83"
        answers = ours and qtype == b"\x00\x01"
        head = q[:2] + flags + b"\x00\x01" + (b"\x00\x01" if answers else b"\x00\x00") + b"\x00\x00\x00\x00"
        body = question
        if answers:
            body += b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x01\x2c\x00\x04\x7f\x00\x00\x01"
        sock.sendto(head + body, peer)


if __name__ == "__main__":
    if sys.argv[1] == "dns":
        dns(sys.argv[2])
    elif sys.argv[1] == "write":
        out, hosts, pages, scheme = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
        write(out, hosts, pages, scheme, int(sys.argv[6]) if len(sys.argv) > 6 else 47)
    else:
        _, _, out, hosts, pages, service, factor = sys.argv[:7]
        end, requests = ideal(int(hosts), int(pages), 47, float(service), float(factor))
        print(f"{end:.2f} {requests}")
