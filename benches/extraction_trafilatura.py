#!/usr/bin/env python3
"""trafilatura (Python) on the article-extraction benchmark's pages, for benches/extraction.sh.

Usage: extraction_trafilatura.py OUT.json FILE.html[.gz]...

Writes OUT.json in the benchmark's output format ({"version", "output": {id: {"articleBody"}}}),
as the benchmark's own extractors/run_trafilatura.py calls it (`extract(html,
include_comments=False)`), and prints the CPU time of the extraction calls alone (files read
and decompressed before the clock starts), in ms per page, to stderr.
"""
import gzip
import json
import sys
import time
from importlib.metadata import version
from pathlib import Path

import trafilatura


def read(path: Path) -> str:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf8") as f:
            return f.read()
    return path.read_text(encoding="utf8", errors="replace")


def main() -> None:
    out, files = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
    pages = [(p.name.split(".")[0], read(p)) for p in files]
    output, cpu = {}, 0.0
    for item_id, html in pages:
        start = time.process_time()
        text = trafilatura.extract(html, include_comments=False)
        cpu += time.process_time() - start
        output[item_id] = {"articleBody": text or ""}
    out.write_text(json.dumps({"version": version("trafilatura"), "output": output}))
    print(f"trafilatura {version('trafilatura')} (Python): {len(pages)} pages, "
          f"{cpu * 1000 / max(1, len(pages)):.2f} ms CPU/page", file=sys.stderr)


if __name__ == "__main__":
    main()
