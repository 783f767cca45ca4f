#!/usr/bin/env python3
"""The crawl's Markdown rendered back to HTML by pandoc, against two versions of the page's main
content: headings (level and text) and absolute links (the set of hrefs). Used by
benches/markdown.sh.

    markdown_compare.py CORPUS DOCS ORIGIN LOG CONTENT SEEDS

LOG is the crawl's JSON-lines URL log (`--text main --markdown --log-format jsonl`); CONTENT the
output of `examples/main_content.rs` for the same pages: `kept` (the extractor's HTML, what the
Markdown writer reads) and `markdown` (what `--markdown` writes, computed again from the file).
Only the SEEDS pages count (a crawl at --max-depth 0 of them). Each page's Markdown (the log's)
goes through `pandoc -f commonmark+pipe_tables -t html --no-highlight` and is compared:
- against `kept`: what the Markdown writer was given (its fidelity);
- against the served file's own main region, found by this script's html.parser pass
  (rustdoc's `<section id="main-content">`, else `<main>`, else Sphinx's `<div role="main">`,
  else `<body>`): an independent reference for extractor and writer together.
Links inside <pre> or <code> are counted apart (Markdown code holds no links). Heading text has
whitespace collapsed and a trailing permalink glyph (Sphinx's ¶, rustdoc's §)
dropped. Links are `<a href>` of http(s) URLs, resolved against the page (or its `<base>`),
percent-decoded; fragments kept. Prints one block of figures per reference and examples.
"""
import html.parser
import json
import os
import subprocess
import sys
import urllib.parse

corpus, docs, origin, log, content, seeds = sys.argv[1:7]
EXAMPLES = int(os.environ.get("EXAMPLES", "4"))
# The dialect --markdown writes (docs/content.md): CommonMark with GFM's pipe tables. (`gfm`
# would also make links of bare URLs in the text, which the page did not link.)
READER = os.environ.get("READER", "commonmark+pipe_tables")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
        "source", "track", "wbr"}


def norm_heading(text):
    text = " ".join(text.split())
    return text.rstrip("¶§").rstrip()


def norm_link(href, base):
    url = urllib.parse.urljoin(base, href.strip())
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return None
    if not parts.path:  # `https://host` is `https://host/`
        url = urllib.parse.urlunsplit(parts._replace(path="/"))
    return urllib.parse.unquote(url)


class Outline(html.parser.HTMLParser):
    """Headings and links of a document, or of its main region only (`region` set): the first
    element that `region` accepts, and everything inside it."""

    def __init__(self, base, region=None):
        super().__init__(convert_charrefs=True)
        self.base, self.region = base, region
        self.stack = []          # open elements: (tag, starts_region)
        self.inside = region is None
        self.done = False
        self.heading = None      # (level, [text]) while inside a heading
        self.headings, self.links, self.code_links = [], set(), set()
        self.pre = 0             # inside <pre> or <code>
        self.skip = 0            # inside <script>/<style>/<template>

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "base" and attrs.get("href"):
            self.base = urllib.parse.urljoin(self.base, attrs["href"])
        if tag in VOID:
            self.starttag(tag, attrs)
            return
        starts = False
        if not self.inside and not self.done and self.region(tag, attrs):
            self.inside = starts = True
        self.stack.append((tag, starts))
        self.starttag(tag, attrs)

    def handle_startendtag(self, tag, attrs):
        self.starttag(tag, dict(attrs))

    def starttag(self, tag, attrs):
        if tag in ("script", "style", "template"):
            self.skip += tag not in VOID
        self.pre += tag in ("pre", "code")
        if not self.inside:
            return
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456" and self.heading is None:
            self.heading = (int(tag[1]), [])
        if tag == "a" and attrs.get("href") is not None:
            link = norm_link(attrs["href"], self.base)
            # Markdown code (a block or a span) holds no links: those inside <pre> or <code>
            # are counted apart.
            if link:
                (self.code_links if self.pre else self.links).add(link)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if tag in ("script", "style", "template") and self.skip:
            self.skip -= 1
        if tag in ("pre", "code") and self.pre:
            self.pre -= 1
        if self.heading and tag == "h%d" % self.heading[0]:
            text = norm_heading("".join(self.heading[1]))
            if text:
                self.headings.append((self.heading[0], text))
            self.heading = None
        # Close up to the matching open element (html.parser does not fix up the tree).
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                closed = self.stack[i:]
                del self.stack[i:]
                if any(starts for _, starts in closed):
                    self.inside, self.done = False, True
                break

    def handle_data(self, data):
        if self.heading and not self.skip:
            self.heading[1].append(data)


def outline(text, base, region=None):
    o = Outline(base, region)
    o.feed(text)
    o.close()
    return o


def main_region(text):
    """The served page's main region, by what its generator marks."""
    if 'id="main-content"' in text:
        return lambda tag, a: a.get("id") == "main-content"
    if "<main" in text:
        return lambda tag, a: tag == "main"
    if 'role="main"' in text:
        return lambda tag, a: a.get("role") == "main"
    return lambda tag, a: tag == "body"


def path_of(url):
    path = urllib.parse.unquote(urllib.parse.urlsplit(url).path).lstrip("/")
    return os.path.join(docs, path + ("index.html" if path.endswith("/") or not path else ""))


def render(markdown):
    return subprocess.run(["pandoc", "-f", READER, "-t", "html", "--no-highlight"], input=markdown,
                          capture_output=True, text=True, check=True).stdout


pages = {}
seeded = set(line.strip() for line in open(seeds))
for line in open(log):
    entry = json.loads(line)
    if entry.get("status") == 200 and "markdown" in entry and entry["url"] in seeded:
        pages[entry["url"]] = entry
computed = {}
for line in open(content):
    entry = json.loads(line)
    computed[entry["url"]] = entry


class Tally:
    def __init__(self, name):
        self.name = name
        self.pages = self.heads_equal = self.links_equal = self.heads_loose = self.code_links = 0
        self.heads = self.heads_missing = self.heads_extra = 0
        self.links = self.links_missing = self.links_extra = 0
        self.examples = []

    def add(self, url, ref, got):
        self.pages += 1
        self.heads += len(ref.headings)
        self.links += len(ref.links)
        missing_h = [h for h in ref.headings if h not in got.headings]
        extra_h = [h for h in got.headings if h not in ref.headings]
        self.heads_missing += len(missing_h)
        self.heads_extra += len(extra_h)
        self.heads_equal += ref.headings == got.headings
        squeeze = lambda hs: [(level, "".join(text.split())) for level, text in hs]
        self.heads_loose += squeeze(ref.headings) == squeeze(got.headings)
        self.code_links += len(ref.code_links - ref.links)
        missing_l = ref.links - got.links
        extra_l = got.links - ref.links
        self.links_missing += len(missing_l)
        self.links_extra += len(extra_l)
        self.links_equal += not missing_l and not extra_l
        if (ref.headings != got.headings or missing_l or extra_l) and len(self.examples) < EXAMPLES:
            self.examples.append((url, missing_h[:3], extra_h[:3], sorted(missing_l)[:3],
                                  sorted(extra_l)[:3],
                                  ref.headings != got.headings and not missing_h and not extra_h))

    def report(self):
        print(f"  against {self.name}: {self.pages} pages; headings equal (level, text, order) on "
              f"{self.heads_equal} ({self.heads_loose} with spaces ignored), link sets equal on "
              f"{self.links_equal}; headings {self.heads} in the reference, {self.heads_missing} "
              f"missing, {self.heads_extra} extra; links {self.links} in the reference, "
              f"{self.links_missing} missing, {self.links_extra} extra (and {self.code_links} "
              f"only inside <pre> or <code>, left out: Markdown code has no links)")
        for url, mh, eh, ml, el, order in self.examples:
            print(f"    {url}")
            for what, items in (("heading missing", mh), ("heading extra", eh),
                                ("link missing", ml), ("link extra", el)):
                for item in items:
                    print(f"      {what}: {item}")
            if order:
                print("      headings in another order or repeated")


writer, page_ref = Tally("the extractor's kept HTML"), Tally("the served file's main region")
same_markdown = no_kept = 0
for url in sorted(pages):
    markdown = pages[url]["markdown"]
    got = outline(render(markdown), url)
    entry = computed.get(url)
    if entry is None:
        sys.exit(f"{url}: not in {content}")
    same_markdown += entry["markdown"] == markdown
    if entry["kept"] is None:
        no_kept += 1
    else:
        writer.add(url, outline(entry["kept"], url), got)
    with open(path_of(url), encoding="utf-8", errors="replace") as f:
        text = f.read()
    page_ref.add(url, outline(text, url, main_region(text)), got)

print(f"{corpus}: {len(pages)} HTML pages with Markdown; the log's Markdown is "
      f"examples/main_content's on {same_markdown}; {no_kept} without kept HTML")
writer.report()
page_ref.report()
