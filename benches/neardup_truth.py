#!/usr/bin/env python3
"""The exact near-duplicates of a crawl, and the precision and recall of its notes.

Usage: neardup_truth.py LOG ROOT [--threshold 0.9] [--min-words 50]

LOG is the crawl's tab-separated URL log (run with --near-duplicates note); ROOT the directory
the web was served from (a URL's path is a file under it, `/` its index.html). Independent of
the crawler: its own HTML reading (Python's html.parser) and its own shingles.

The measure (issue 45): Broder's resemblance, the Jaccard similarity of two pages' sets of
5-word shingles of visible text (text outside script, style, title, textarea and template;
character references decoded; words are runs of letters and digits, case folded; a tag ends a
word). A page is a near-duplicate when a page before it in the log (an HTML page answered 200)
has resemblance >= the threshold. Pages of fewer than --min-words words are left out on both
sides, as the crawler leaves them out.

All pairs are found exactly with prefix filtering (Chaudhuri, Ganti and Kaushik 2006; Bayardo,
Ma and Srikant 2007): shingles ordered rarest first, a page of n shingles indexed by its first
n - ceil(t n) + 1; two pages of resemblance >= t share one of those, so the candidates of a page
are the earlier pages sharing a prefix shingle with it, of a size within [t n, n / t], each
verified by exact Jaccard.

Prints: pages judged, true near-duplicates, notes, both, precision, recall, and how many notes
name a page of resemblance >= the threshold; with -v the errors, each with its best resemblance.
"""

import html.parser
import math
import re
import sys
import urllib.parse
from collections import defaultdict
from pathlib import Path

HIDDEN = {"script", "style", "title", "textarea", "template"}
WORD = re.compile(r"[^\W_]+")


class Text(html.parser.HTMLParser):
    """Collects the words of the visible text, a tag ending a word."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.words = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in HIDDEN:
            self.hidden += 1

    def handle_endtag(self, tag):
        if tag in HIDDEN and self.hidden:
            self.hidden -= 1

    def handle_data(self, data):
        if not self.hidden:
            self.words.extend(WORD.findall(data.lower()))


def words_of(path):
    parser = Text()
    parser.feed(path.read_bytes().decode("utf-8", "replace"))
    parser.close()
    return parser.words


def file_of(root, url):
    path = urllib.parse.unquote(urllib.parse.urlsplit(url).path)
    if path.endswith("/"):
        path += "index.html"
    return root / path.lstrip("/")


def main():
    args = sys.argv[1:]
    verbose = "-v" in args
    args = [a for a in args if a != "-v"]
    threshold, min_words = 0.9, 50
    if "--threshold" in args:
        i = args.index("--threshold")
        threshold = float(args[i + 1])
        del args[i : i + 2]
    if "--min-words" in args:
        i = args.index("--min-words")
        min_words = int(args[i + 1])
        del args[i : i + 2]
    log, root = Path(args[0]), Path(args[1])

    # The HTML pages answered 200, in log order, each once; the crawler's notes.
    urls, notes, seen = [], {}, set()
    for line in log.open(encoding="utf-8", errors="replace"):
        f = line.rstrip("\n").split("\t")
        if len(f) < 7 or f[0] != "200" or not f[4].startswith("text/html"):
            continue
        url, note = f[5], f[6]
        if url in seen:
            continue
        seen.add(url)
        urls.append(url)
        if note.startswith("near-duplicate:"):
            notes[url] = note[len("near-duplicate:") :]

    sets, judged = [], []
    for url in urls:
        path = file_of(root, url)
        if not path.is_file():
            continue
        words = words_of(path)
        if len(words) < min_words:
            continue
        shingles = {hash(tuple(words[i : i + 5])) for i in range(len(words) - 4)}
        judged.append(url)
        sets.append(shingles)

    # Rarest first (ties by value), then prefix filtering over the pages in order.
    df = defaultdict(int)
    for s in sets:
        for h in s:
            df[h] += 1
    index = defaultdict(list)
    truth, best = {}, {}
    for a, s in enumerate(sets):
        n = len(s)
        ordered = sorted(s, key=lambda h: (df[h], h))
        prefix = ordered[: n - math.ceil(threshold * n) + 1]
        candidates = set()
        for h in prefix:
            candidates.update(index[h])
        found = None
        for b in sorted(candidates):
            m = len(sets[b])
            if m < threshold * n or m > n / threshold:
                continue
            j = len(s & sets[b]) / len(s | sets[b])
            if j >= threshold:
                found = (b, j)
                break
        if found:
            truth[judged[a]] = judged[found[0]]
        for h in prefix:
            index[h].append(a)

    position = {url: i for i, url in enumerate(judged)}
    noted = set(notes)
    both = noted & set(truth)
    # A note names a page of resemblance >= the threshold.
    named_right = 0
    for url in both:
        earlier = notes[url]
        if earlier in position:
            a, b = sets[position[url]], sets[position[earlier]]
            named_right += len(a & b) / len(a | b) >= threshold
    precision = len(both) / len(noted) if noted else 1.0
    recall = len(both) / len(truth) if truth else 1.0
    print(
        f"pages {len(urls)} judged {len(judged)} true {len(truth)} noted {len(noted)} "
        f"both {len(both)} precision {precision:.3f} recall {recall:.3f} "
        f"named_right {named_right}/{len(both)}"
    )
    if verbose:
        for url in sorted(noted - set(truth)):
            earlier = notes[url]
            j = "unjudged"
            if url in position and earlier in position:
                a, b = sets[position[url]], sets[position[earlier]]
                j = f"{len(a & b) / len(a | b):.3f}"
            print(f"false\t{url}\t{earlier}\t{j}")
        for url in sorted(set(truth) - noted):
            earlier = truth[url]
            a, b = sets[position[url]], sets[position[earlier]]
            print(f"missed\t{url}\t{earlier}\t{len(a & b) / len(a | b):.3f}")


if __name__ == "__main__":
    main()
