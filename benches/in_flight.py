"""Requests open at a server at once, from its log's request spans: shared by the benchmark
scripts that report requests in flight (benches/inflight.sh, benches/tls_inflight.sh)."""
import statistics


def in_flight(spans, step=10_000):
    """(median, most) of the requests open at once, sampled every `step` µs: the median over
    the run's middle 80 %, the most over all of it. `spans` are (start, end) in µs."""
    if not spans:
        return 0, 0
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    t0, t1 = events[0][0], events[-1][0]
    lo, hi = t0 + (t1 - t0) // 10, t1 - (t1 - t0) // 10
    samples, open_now, most, i = [], 0, 0, 0
    for at in range(t0, t1, step):
        while i < len(events) and events[i][0] <= at:
            open_now += events[i][1]
            i += 1
        most = max(most, open_now)
        if lo <= at <= hi:
            samples.append(open_now)
    return (statistics.median(samples) if samples else 0), most
