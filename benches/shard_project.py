#!/usr/bin/env python3
"""The arithmetic of benches/shard_scale.sh: one crawl's broker figures, a batch payload for
redis-benchmark, and the projection to 100 and 1,000 machines.

    shard_project.py measure N START END PREFIX    # one crawl's figures, as JSON
    shard_project.py payload MEASURED.json URLLOG  # a batch of the measured mean size
    shard_project.py project BENCH MEASURED.json…  # the tables

PREFIX is the crawl's files: PREFIX.before / .after (INFO stats, cpu, memory, commandstats),
PREFIX.streams (`bytes entries` of the stream keys every 0.2 s), PREFIX.out-K/summary.json.
"""
import json
import math
import sys

# Commands the shards send themselves; the others in INFO commandstats run inside their scripts
# (publish: XLEN, XADD, HINCRBY; ack: XACK, XDEL, HINCRBY; join and lease: GET, SET, EXPIRE…).
SENT = {"evalsha", "eval", "xreadgroup", "hset", "hmget", "mget", "hsetnx", "hget", "xgroup",
        "info", "config", "script", "ping", "select", "client", "hello", "keys", "memory"}


def info(path):
    stats, calls = {}, {}
    for line in open(path):
        line = line.strip()
        if line.startswith("cmdstat_"):
            name, fields = line[8:].split(":", 1)
            kv = dict(f.split("=") for f in fields.split(","))
            calls[name.split("|")[0]] = calls.get(name.split("|")[0], 0) + int(kv["calls"])
        elif ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            stats[k] = v
    return stats, calls


def measure(n, start, end, prefix):
    n, seconds = int(n), float(end) - float(start)
    before, calls0 = info(prefix + ".before")
    after, calls1 = info(prefix + ".after")
    summaries = [json.load(open(f"{prefix}.out-{k}/summary.json")) for k in range(n)]
    assert all(s["ending"] == "complete" for s in summaries), [s["ending"] for s in summaries]
    pages = [s["pages"] for s in summaries]
    total = sum(pages)
    delta = lambda key: float(after[key]) - float(before[key])
    calls = {k: v - calls0.get(k, 0) for k, v in calls1.items()}
    samples = [tuple(map(int, l.split())) for l in open(prefix + ".streams") if l.strip()]
    # The sampler's own commands (one KEYS a sample, a MEMORY USAGE and an XLEN a key; an
    # interrupted last sample may have sent a few more) and the snapshots' INFO are not the crawl's.
    keys_read = sum(s[2] for s in samples if len(s) == 3)
    calls["keys"] = calls.get("keys", 0) - len(samples)
    calls["memory"] = calls.get("memory", 0) - keys_read
    calls["xlen"] = calls.get("xlen", 0) - keys_read
    calls["info"] = 0
    calls = {k: v for k, v in calls.items() if v > 0}
    shard = lambda key: sum(s["shard"][key] for s in summaries)
    json.dump({
        "shards": n, "seconds": seconds, "pages": pages, "total": total,
        "pages_per_shard_s": total / seconds / n,
        "sent": shard("sent"), "received": shard("received"), "batches": shard("batches"),
        "stream_full": shard("stream_full"),
        "calls": calls,
        "round_trips": sum(v for k, v in calls.items() if k in SENT),
        "in_scripts": sum(v for k, v in calls.items() if k not in SENT),
        "net_in": delta("total_net_input_bytes"), "net_out": delta("total_net_output_bytes"),
        "cpu": delta("used_cpu_sys") + delta("used_cpu_user"),
        "stream_bytes_peak": max((s[0] for s in samples), default=0),
        "stream_entries_peak": max((s[1] for s in samples), default=0),
        "used_memory_peak": int(after["used_memory_peak"]),
        "used_memory_start": int(before["used_memory"]),
    }, sys.stdout)


def payload(measured, urllog):
    m = json.load(open(measured))
    urls_per_batch = max(1, round(m["sent"] / max(1, m["batches"])))
    lengths = []
    for line in open(urllog):
        cols = line.split("\t")
        if len(cols) > 5 and cols[5].startswith("http"):
            lengths.append(len(cols[5]))
    url = "http://127.0.0.1:30000/" + "p" * max(1, round(sum(lengths) / len(lengths)) - 23)
    # A batch's `urls` field: `depth TAB url` lines (src/shard/broker.rs, `encode`).
    print("\n".join(f"3\t{url}" for _ in range(urls_per_batch)))


def project(bench, *measured):
    table = {}
    for line in open(bench):
        persistence, name, *rate = line.split()
        table.setdefault(persistence, {})[name] = float(rate[0]) if rate else float("nan")
    rates = table["always"]
    runs = [json.load(open(f)) for f in measured]
    print()
    print("broker load, measured (per page: all pages of the crawl; per URL: cross-shard URLs sent)")
    print("| shards | pages | seconds | pages/s per shard | round trips per page | commands in scripts "
          "per page | by name, per page | bytes in / out per page | bytes in per URL sent | URLs sent "
          "per page | broker CPU µs per page | stream peak: entries, MiB | used_memory peak MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for m in runs:
        t = m["total"]
        names = ", ".join(f"{k} {v / t:.3f}" for k, v in sorted(m["calls"].items(), key=lambda kv: -kv[1]))
        per_url = m["net_in"] / m["sent"] if m["sent"] else float("nan")
        print(f"| {m['shards']} | {t} | {m['seconds']:.1f} | {m['pages_per_shard_s']:.0f} | "
              f"{m['round_trips'] / t:.3f} | {m['in_scripts'] / t:.3f} | {names} | "
              f"{m['net_in'] / t:.0f} / {m['net_out'] / t:.0f} | {per_url:.0f} | {m['sent'] / t:.2f} | "
              f"{m['cpu'] / t * 1e6:.1f} | {m['stream_entries_peak']}, "
              f"{m['stream_bytes_peak'] / 2**20:.2f} | {m['used_memory_peak'] / 2**20:.1f} |")
    print()
    print("redis-benchmark, one redis-server, 50 clients, ops/s (always: appendonly yes, appendfsync "
          "always, as the exchange runs it; memory: no persistence)")
    print("| redis-server | " + " | ".join(rates) + " |")
    print("|---|" + "---|" * len(rates))
    for persistence, row in table.items():
        print(f"| {persistence} | " + " | ".join(f"{row.get(k, float('nan')):,.0f}" for k in rates) + " |")

    m = max(runs, key=lambda r: r["shards"])
    t, n = m["total"], m["shards"]
    # Per page, from the largest N measured: round trips by kind, and the bytes of each URL sent.
    per_page = {k: v / t for k, v in m["calls"].items() if k in SENT}
    # The share of a page's cross-host links that leave its shard grows as 1 - 1/N; the
    # exchange's traffic per page grows with it (measured at N, scaled to M).
    sent_per_page = m["sent"] / t
    bytes_per_url = (m["net_in"] + m["net_out"]) / m["sent"]
    # The cost of one page's commands on one core, from redis-benchmark's rates: the publish
    # script (EVALSHA) as measured with a batch of the mean size; every other round trip
    # (XREADGROUP, the ack script, HSET, ...) at the rate of a one-entry read, the dearest of
    # the small ones; the measured broker CPU per page beside it.
    publish_rate = rates.get("publish") or float("nan")
    other_rate = min(v for k, v in rates.items() if k in ("read1", "report", "lease"))
    publishes_per_page = m["batches"] / t
    other_per_page = sum(per_page.values()) - publishes_per_page
    core_s_bench = publishes_per_page / publish_rate + other_per_page / other_rate
    core_s_measured = m["cpu"] / t
    core_s = max(core_s_bench, core_s_measured)
    # Per machine: a shard at the rate measured with N shards on this machine (sharing its cores
    # with the other shards, Redis and the test web), and a shard alone (the 1-shard run's).
    rates_per_machine = sorted({round(r["pages_per_shard_s"]) for r in runs if r["shards"] in (1, n)})
    batch_bytes = m["net_in"] / max(1, m["batches"])  # a publish's bytes in, mostly its batch
    print()
    print(f"projection: one shard per machine; per page {sum(per_page.values()):.3f} round trips, of "
          f"which {publishes_per_page:.3f} publishes ({m['sent'] / max(1, m['batches']):.0f} URLs a "
          f"batch, {batch_bytes:.0f} bytes); {sent_per_page:.2f} URLs sent per page at N={n}, "
          f"scaled by (1-1/M)/(1-1/{n}); {bytes_per_url:.0f} bytes in+out per URL sent; a broker "
          f"core costs {core_s_bench * 1e6:.1f} µs per page by redis-benchmark (always) and "
          f"{core_s_measured * 1e6:.1f} µs measured (the larger is used), kept under 50% busy; "
          f"stream memory typical: the measured peak per stream, bound: 256 batches a stream "
          f"(DEFAULT_MAX_STREAM_LEN) of 512 URLs at 65 bytes each in Redis; the end-of-run poll: "
          f"every idle shard reads all M reports every 0.2 s (pipelined HMGET: "
          f"{rates.get('hmget', float('nan')):,.0f}/s a core)")
    print("| machines | pages/s per machine | pages/s | round trips/s | broker cores (50% busy) | "
          "exchange MB/s | stream memory, typical | stream memory, bound | end-of-run poll HMGET/s | "
          "its cores (50% busy) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for rate in rates_per_machine:
        for machines in (n, 100, 1000):
            pages = machines * rate
            scale = (1 - 1 / machines) / (1 - 1 / n)
            trips = pages * sum(per_page.values()) * scale
            cores = pages * core_s * scale / 0.5
            mbs = pages * sent_per_page * scale * bytes_per_url / 1e6
            typical = m["stream_bytes_peak"] / n * machines
            bound = machines * 256 * 512 * 65
            polls = machines * machines * 5
            poll_cores = polls / rates.get("hmget", float("nan")) / 0.5
            print(f"| {machines:,} | {rate:,} | {pages:,.0f} | {trips:,.0f} | {cores:.1f} "
                  f"({math.ceil(cores)} instances) | {mbs:,.1f} | {typical / 2**20:,.1f} MiB | "
                  f"{bound / 2**30:,.2f} GiB | {polls:,} | {poll_cores:.1f} |")


mode, *args = sys.argv[1:]
{"measure": measure, "payload": payload, "project": project}[mode](*args)
