#!/usr/bin/env python3
"""Loads pages live and replayed by pywb in headless Chromium and compares them.

Run by benches/replay.sh, which serves the sites, crawls them and starts pywb; this file only
drives the browser (the DevTools protocol over websocket-client) and writes the report.

    replay_browser.py --pages FILE --pywb URL --collections C1,C2,... [--after-live CMD]
                      --out DIR

Every page is loaded live first, then `--after-live` runs (it stops the live server, so that a
request leaving pywb for the live site fails as it would with the site gone), then each page
is loaded replayed by each collection (`/COLL/URL`; pywb with `framed_replay: false`: the page
alone, no frame, no banner). Each load: a fresh browser context (no cache, no cookies shared
with another load), a 1280x1600 viewport, the load event, the network quiet for 1 s (at most
30 s), the fonts ready, then a PNG screenshot of the viewport. The fraction of differing pixels
is the share of the 1280x1600 pixels where any channel differs from the live screenshot. A
request the replay could not serve is a response 4xx/5xx or a load that failed, unless the
live page did not get it either. Each is classed by its resource type and by how the live
page referenced the same URL (Chromium's initiator): HTML (the page's parser), CSS url() or
CSS @import (a stylesheet's parser; a stylesheet loaded by a stylesheet is an @import), script
(a script's call stack), or other.
"""

import argparse
import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket
from PIL import Image, ImageChops

WIDTH, HEIGHT = 1280, 1600
# pywb's replay URL: /COLL/[TIMESTAMP][MODIFIER_]/ORIGINAL
PYWB_PATH = re.compile(r"^/(?P<coll>[^/]+)/(?:(?P<ts>\d*)(?P<mod>[a-z]{2}_)?/)?(?P<url>https?:/?/?.*)$")


class Browser:
    """One headless Chromium, driven over its browser-level DevTools socket (flat sessions)."""

    def __init__(self, chromium, workdir):
        self.profile = tempfile.mkdtemp(prefix="chromium-", dir=workdir)
        # The flags this closed network needs (no background connections, no QUIC), as root.
        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "--disable-default-apps",
             "--hide-scrollbars", "--force-device-scale-factor=1", "--font-render-hinting=none",
             "--remote-allow-origins=*", "--remote-debugging-port=0",
             f"--window-size={WIDTH},{HEIGHT}", f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(workdir, "chromium.log"), "ab"))
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if time.time() > deadline or self.proc.poll() is not None:
                sys.exit(f"chromium did not start: see {workdir}/chromium.log")
            time.sleep(0.1)
        port = open(port_file).read().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/version") as r:
            ws_url = json.load(r)["webSocketDebuggerUrl"]
        self.ws = websocket.create_connection(ws_url, timeout=60, suppress_origin=True)
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def pump(self, seconds):
        """Collects events for up to `seconds`."""
        self.ws.settimeout(seconds)
        try:
            self.events.append(json.loads(self.ws.recv()))
        except websocket.WebSocketTimeoutException:
            pass
        finally:
            self.ws.settimeout(60)

    def load(self, url, png):
        """Loads url in a fresh context; writes the screenshot; returns the requests seen."""
        ctx = self.send("Target.createBrowserContext")["browserContextId"]
        target = self.send("Target.createTarget", {"url": "about:blank", "browserContextId": ctx})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.events = []
        for method, params in [
            ("Page.enable", {}), ("Network.enable", {}),
            ("Network.setCacheDisabled", {"cacheDisabled": True}),
            ("Emulation.setDeviceMetricsOverride",
             {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False}),
        ]:
            self.send(method, params, session)
        self.send("Page.navigate", {"url": url}, session)
        requests, inflight = {}, set()
        loaded, quiet_since, deadline = False, time.time(), time.time() + 30
        seen = 0
        while time.time() < deadline:
            while seen < len(self.events):
                ev = self.events[seen]
                seen += 1
                if ev.get("sessionId") != session:
                    continue
                m, p = ev["method"], ev.get("params", {})
                if m == "Page.loadEventFired":
                    loaded = True
                elif m == "Network.requestWillBeSent":
                    rid = p["requestId"]
                    if p.get("redirectResponse") and rid in requests:
                        # the redirect itself was served; follow the request to its target
                        requests[rid]["url"] = p["request"]["url"]
                    else:
                        requests[rid] = {"url": p["request"]["url"], "type": p.get("type", "Other"),
                                         "initiator": p.get("initiator", {})}
                    inflight.add(rid)
                    quiet_since = time.time()
                elif m == "Network.responseReceived":
                    r = requests.setdefault(p["requestId"], {"url": p["response"]["url"], "initiator": {}})
                    r["status"] = p["response"]["status"]
                    r["type"] = p.get("type", r.get("type", "Other"))
                elif m in ("Network.loadingFinished", "Network.loadingFailed"):
                    rid = p["requestId"]
                    inflight.discard(rid)
                    quiet_since = time.time()
                    if m == "Network.loadingFailed" and rid in requests:
                        requests[rid]["failed"] = p.get("errorText", "failed")
                        requests[rid]["type"] = p.get("type", requests[rid].get("type", "Other"))
            if loaded and not inflight and time.time() - quiet_since >= 1.0:
                break
            self.pump(0.2)
        self.send("Runtime.evaluate", {"expression": "document.fonts.ready.then(() => 1)",
                                       "awaitPromise": True, "timeout": 5000}, session)
        time.sleep(0.3)
        shot = self.send("Page.captureScreenshot", {"format": "png"}, session)
        with open(png, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        self.send("Target.disposeBrowserContext", {"browserContextId": ctx})
        return list(requests.values())

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def pixel_diff(a, b):
    """Share of pixels where any channel differs (over the larger of the two images)."""
    ia, ib = Image.open(a).convert("RGB"), Image.open(b).convert("RGB")
    w, h = max(ia.width, ib.width), max(ia.height, ib.height)
    pa, pb = Image.new("RGB", (w, h)), Image.new("RGB", (w, h))
    pa.paste(ia), pb.paste(ib)
    r, g, bl = ImageChops.difference(pa, pb).split()
    any_channel = ImageChops.lighter(ImageChops.lighter(r, g), bl)
    return 1 - any_channel.histogram()[0] / (w * h)


def original_url(url, pywb):
    """The archived URL a pywb replay URL stands for (None for pywb's own files)."""
    if not url.startswith(pywb):
        return url
    m = PYWB_PATH.match(url[len(pywb):])
    if not m:
        return None
    return re.sub(r"^(https?):/+", r"\1://", m.group("url"))


def reference_kind(req, stylesheets, document):
    """How a page referenced a request: HTML, CSS url(), CSS @import, script or other."""
    ini = req.get("initiator", {})
    kind = ini.get("type")
    if kind == "script" or (kind == "other" and req.get("type") in ("XHR", "Fetch")):
        return "script"
    if kind in ("parser", "preload"):
        source = ini.get("url", "")
        if source in stylesheets and source != document:
            return "CSS @import" if req.get("type") == "Stylesheet" else "CSS url()"
        return "HTML"
    if req.get("type") == "Font":
        return "CSS url()"
    return "other"


def classify(requests, pywb=None):
    """url -> (type, reference) for every request of one load, URLs made original."""
    urls = []
    for r in requests:
        u = original_url(r["url"], pywb) if pywb else r["url"]
        ini = dict(r.get("initiator", {}))
        if pywb and ini.get("url"):
            ini["url"] = original_url(ini["url"], pywb) or ini["url"]
        urls.append((u, {**r, "initiator": ini}))
    stylesheets = {u for u, r in urls if r.get("type") == "Stylesheet"}
    document = urls[0][0] if urls else None
    return {u: (r.get("type", "Other"), reference_kind(r, stylesheets, document))
            for u, r in urls if u and not u.startswith("data:")}


def unserved(requests, pywb, live_refs, live_missing=frozenset()):
    """The requests of a load that were not served, each with how the live page referenced it;
    those the live page did not get either (`live_missing`) are left out."""
    out = []
    replay_refs = classify(requests, pywb)
    for r in requests:
        if r["url"].startswith("data:"):
            continue
        failed = r.get("failed")
        status = r.get("status")
        if not failed and (status is None or status < 400):
            continue
        if failed == "net::ERR_ABORTED" and status is not None and status < 400:
            continue
        u = original_url(r["url"], pywb)
        if u is None:
            u = r["url"]
        if u in live_missing:
            continue
        rtype, ref = live_refs.get(u) or replay_refs.get(u, (r.get("type", "Other"), "other"))
        out.append({"url": u, "type": rtype, "ref": ref if u in live_refs else ref + " (not live)",
                    "why": failed or str(status)})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", required=True, help="file: SITE URL per line")
    ap.add_argument("--pywb", required=True, help="pywb's base URL, http://127.0.0.1:PORT")
    ap.add_argument("--collections", required=True, help="comma-separated pywb collections")
    ap.add_argument("--after-live", help="shell command run after the live loads (stops the server)")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    # A kill ends Chromium too (`finally` below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.makedirs(os.path.join(args.out, "png"), exist_ok=True)
    colls = args.collections.split(",")
    pages = [line.split() for line in open(args.pages) if line.strip() and not line.startswith("#")]
    browser = Browser(args.chromium, args.out)
    results = []
    try:
        for n, (site, url) in enumerate(pages):
            live_png = os.path.join(args.out, "png", f"{n:02d}-live.png")
            live_reqs = browser.load(url, live_png)
            results.append({"site": site, "url": url, "live_png": live_png,
                            "live_refs": classify(live_reqs),
                            "live_failed": unserved(live_reqs, "\0", {}), "tools": {}})
        # The live server stops before any replay, so that a request that leaves pywb for it
        # fails as it would with the site gone.
        if args.after_live:
            subprocess.run(args.after_live, shell=True, check=True)
        for n, row in enumerate(results):
            missing = {u["url"] for u in row["live_failed"]}
            for coll in colls:
                png = os.path.join(args.out, "png", f"{n:02d}-{coll}.png")
                reqs = browser.load(f"{args.pywb}/{coll}/{row['url']}", png)
                row["tools"][coll] = {"diff": pixel_diff(row["live_png"], png),
                                      "unserved": unserved(reqs, args.pywb, row["live_refs"], missing)}
            print(f"{row['site']} {row['url']}: " + ", ".join(
                f"{c} {row['tools'][c]['diff'] * 100:.1f} % / {len(row['tools'][c]['unserved'])} unserved"
                for c in colls), file=sys.stderr)
    finally:
        browser.close()
    for row in results:
        del row["live_refs"]
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(report(results, colls))


def report(results, colls):
    lines = ["| site | page | " + " | ".join(f"{c}: pixels differing" for c in colls)
             + " | " + " | ".join(f"{c}: unserved" for c in colls) + " |",
             "|---|---|" + "---|" * (2 * len(colls))]
    for row in results:
        path = re.sub(r"^https?://[^/]+/", "/", row["url"])
        lines.append(f"| {row['site']} | {path} | "
                     + " | ".join(f"{row['tools'][c]['diff'] * 100:.2f} %" for c in colls) + " | "
                     + " | ".join(str(len(row["tools"][c]["unserved"])) for c in colls) + " |")
    lines.append("")
    lines.append("Requests the replay could not serve, by resource type and by how the live page "
                 "referenced them (count over all pages; distinct URLs in brackets):")
    lines.append("")
    keys = sorted({(u["type"], u["ref"]) for row in results for c in colls
                   for u in row["tools"][c]["unserved"]})
    lines.append("| type | referenced by | " + " | ".join(colls) + " |")
    lines.append("|---|---|" + "---|" * len(colls))
    for t, ref in keys:
        cells = []
        for c in colls:
            hits = [u["url"] for row in results for u in row["tools"][c]["unserved"]
                    if (u["type"], u["ref"]) == (t, ref)]
            cells.append(f"{len(hits)} ({len(set(hits))})")
        lines.append(f"| {t} | {ref} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Each unserved URL (tool: URL, type, referenced by, status or error):")
    lines.append("")
    for c in colls:
        seen = {}
        for row in results:
            for u in row["tools"][c]["unserved"]:
                seen.setdefault(u["url"], u)
        for u in sorted(seen):
            v = seen[u]
            lines.append(f"- {c}: `{u}` {v['type']}, {v['ref']}, {v['why']}")
    live_failed = {u["url"] for row in results for u in row["live_failed"]}
    if live_failed:
        lines.append("")
        lines.append("Not served live either, and so left out above: "
                     + ", ".join(f"`{u}`" for u in sorted(live_failed)))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
