//! The six cache policies of the paper (§3), replayed over a trace of dense URL ids.
//!
//! Every policy sees the same [`Trace`]: each request is a small integer id (one per distinct
//! checksum), so the simulators index plain arrays instead of hashing, and memory is a few bytes
//! per request plus a few per distinct URL. A cache of `k` entries holds at most `k` ids; a hit
//! costs nothing, a miss counts one (compulsory first requests included, for every policy).
//!
//! CLOCK is the crawler's own [`ClockCache`] fed the URL checksums, so the simulation measures
//! exactly the cache the crawl runs.

use crate::seen::clock::ClockCache;
use rustc_hash::FxHashMap;
use std::collections::BinaryHeap;

/// "Never requested again" (the paper's ∞ in the next-request sequence).
const NEVER: u32 = u32::MAX;
/// No slot / no list neighbour.
const NIL: u32 = u32::MAX;

/// A replacement policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Evict a uniformly random entry (a seeded generator, so runs repeat).
    Random,
    /// Preload the k most requested URLs of the whole trace; never evict.
    Static,
    /// Evict the least recently requested entry.
    Lru,
    /// The crawler's CLOCK: evict the first unmarked entry the hand reaches.
    Clock,
    /// Belady's clairvoyant optimum: evict the entry requested again farthest in the future.
    Min,
    /// No capacity limit: only first requests miss.
    Infinite,
}

impl Policy {
    /// Every policy, in the column order of the table.
    pub const ALL: [Policy; 6] = [
        Policy::Random,
        Policy::Static,
        Policy::Lru,
        Policy::Clock,
        Policy::Min,
        Policy::Infinite,
    ];

    /// The name used in the table header and the plot's legend.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Random => "RANDOM",
            Policy::Static => "STATIC",
            Policy::Lru => "LRU",
            Policy::Clock => "CLOCK",
            Policy::Min => "MIN",
            Policy::Infinite => "INFINITE",
        }
    }
}

/// A trace of requests: `ids[t]` is the URL requested at time t, `keys[id]` its checksum.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// The URL id requested at each time step.
    pub ids: Vec<u32>,
    /// The checksum of each URL id.
    pub keys: Vec<u64>,
}

impl Trace {
    /// Number of requests.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the trace has no request.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Number of distinct URLs.
    pub fn distinct(&self) -> usize {
        self.keys.len()
    }
}

/// Builds a [`Trace`] from checksums, giving each new checksum the next dense id.
#[derive(Default)]
pub struct TraceBuilder {
    trace: Trace,
    id_of: FxHashMap<u64, u32>,
}

impl TraceBuilder {
    /// Appends a request for the URL whose checksum is `key`.
    pub fn push(&mut self, key: u64) {
        let fresh = self.trace.keys.len() as u32;
        let id = *self.id_of.entry(key).or_insert(fresh);
        if id == fresh {
            self.trace.keys.push(key);
        }
        self.trace.ids.push(id);
    }

    /// Requests so far.
    pub fn len(&self) -> usize {
        self.trace.len()
    }

    pub fn finish(self) -> Trace {
        self.trace
    }
}

impl FromIterator<u64> for Trace {
    fn from_iter<I: IntoIterator<Item = u64>>(keys: I) -> Trace {
        let mut builder = TraceBuilder::default();
        keys.into_iter().for_each(|k| builder.push(k));
        builder.finish()
    }
}

/// A trace with what several sizes share computed once: MIN's next-request times and
/// STATIC's hits per popularity rank.
pub struct Simulator<'a> {
    trace: &'a Trace,
    /// `next[t]`: when `ids[t]` is requested again, or [`NEVER`].
    next: Vec<u32>,
    /// `static_hits[r]`: hits a STATIC cache of the `r` most popular URLs earns.
    static_hits: Vec<u64>,
    seed: u64,
}

impl<'a> Simulator<'a> {
    /// Prepares `trace`; `seed` drives RANDOM's choices.
    pub fn new(trace: &'a Trace, seed: u64) -> Simulator<'a> {
        Simulator {
            next: next_requests(trace),
            static_hits: static_hits(trace),
            trace,
            seed,
        }
    }

    /// Misses of `policy` with a cache of `size` entries over the whole trace.
    ///
    /// A cache at least as large as the number of distinct URLs never evicts, so the size is
    /// capped there (the result is the same and memory stays bounded by the trace).
    pub fn misses(&self, policy: Policy, size: u64) -> u64 {
        let k = size.min(self.trace.distinct() as u64) as usize;
        if k == 0 {
            return self.trace.len() as u64;
        }
        match policy {
            Policy::Random => random(self.trace, k, self.seed),
            Policy::Static => self.trace.len() as u64 - self.static_hits[k],
            Policy::Lru => lru(self.trace, k),
            Policy::Clock => clock(self.trace, k),
            Policy::Min => min(self.trace, &self.next, k),
            Policy::Infinite => self.trace.distinct() as u64,
        }
    }
}

/// The paper's backward pass: read the trace from its end, remembering for each URL the last
/// time seen (a dense array here, since ids are already the hash table's keys).
fn next_requests(trace: &Trace) -> Vec<u32> {
    let mut last = vec![NEVER; trace.distinct()];
    let mut next = vec![NEVER; trace.len()];
    for (t, &id) in trace.ids.iter().enumerate().rev() {
        next[t] = last[id as usize];
        last[id as usize] = t as u32;
    }
    next
}

/// Cumulative hits of STATIC by cache size: the r most popular URLs each hit on every request
/// but their first (their preloading is charged as that first miss, so STATIC stays an honest
/// policy that MIN bounds; the paper charged nothing for it).
fn static_hits(trace: &Trace) -> Vec<u64> {
    let mut counts = vec![0u64; trace.distinct()];
    for &id in &trace.ids {
        counts[id as usize] += 1;
    }
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let mut hits = Vec::with_capacity(counts.len() + 1);
    hits.push(0);
    let mut sum = 0;
    for c in counts {
        sum += c - 1;
        hits.push(sum);
    }
    hits
}

fn random(trace: &Trace, k: usize, seed: u64) -> u64 {
    let mut slots: Vec<u32> = Vec::with_capacity(k);
    let mut slot_of = vec![NIL; trace.distinct()];
    let mut rng = crate::splitmix::SplitMix(seed);
    let mut misses = 0;
    for &id in &trace.ids {
        if slot_of[id as usize] != NIL {
            continue;
        }
        misses += 1;
        if slots.len() < k {
            slot_of[id as usize] = slots.len() as u32;
            slots.push(id);
        } else {
            let victim = rng.below(k as u64) as usize;
            slot_of[slots[victim] as usize] = NIL;
            slots[victim] = id;
            slot_of[id as usize] = victim as u32;
        }
    }
    misses
}

/// LRU as a doubly linked list over ids (most recent at the head), O(1) per request.
fn lru(trace: &Trace, k: usize) -> u64 {
    let n = trace.distinct();
    let (mut prev, mut next) = (vec![NIL; n], vec![NIL; n]);
    let mut cached = vec![false; n];
    let (mut head, mut tail, mut len) = (NIL, NIL, 0usize);
    let mut misses = 0;
    for &id in &trace.ids {
        let i = id as usize;
        if cached[i] {
            if head == id {
                continue;
            }
            // Unlink (it is not the head, so it has a predecessor).
            let (p, q) = (prev[i], next[i]);
            next[p as usize] = q;
            if q == NIL {
                tail = p;
            } else {
                prev[q as usize] = p;
            }
        } else {
            misses += 1;
            if len == k {
                let old = tail;
                cached[old as usize] = false;
                tail = prev[old as usize];
                if tail == NIL {
                    head = NIL;
                } else {
                    next[tail as usize] = NIL;
                }
            } else {
                len += 1;
            }
            cached[i] = true;
        }
        // Push at the head.
        prev[i] = NIL;
        next[i] = head;
        if head == NIL {
            tail = id;
        } else {
            prev[head as usize] = id;
        }
        head = id;
    }
    misses
}

fn clock(trace: &Trace, k: usize) -> u64 {
    let mut cache = ClockCache::new(k);
    let mut misses = 0;
    for &id in &trace.ids {
        if !cache.check_and_insert(trace.keys[id as usize]) {
            misses += 1;
        }
    }
    misses
}

/// Belady's MIN: each cached id is tagged with its next request time; a max-heap finds the one
/// requested farthest away, and a missed URL requested later still is not cached at all (the
/// paper's model lets a policy decline to add it). Heap entries whose tag is outdated are skipped (and purged when
/// they outnumber the live ones).
fn min(trace: &Trace, next: &[u32], k: usize) -> u64 {
    let n = trace.distinct();
    let mut tag = vec![NEVER; n];
    let mut cached = vec![false; n];
    let mut heap: BinaryHeap<(u32, u32)> = BinaryHeap::with_capacity(2 * k + 1);
    let (mut len, mut misses) = (0usize, 0u64);
    for (&id, &when) in trace.ids.iter().zip(next) {
        let i = id as usize;
        if !cached[i] {
            misses += 1;
            if len == k {
                // Drop outdated entries until the top is a live one: the farthest request.
                while let Some(&(t, v)) = heap.peek() {
                    if cached[v as usize] && tag[v as usize] == t {
                        break;
                    }
                    heap.pop();
                }
                let (farthest, victim) = heap.pop().expect("a full cache has a live entry");
                if when >= farthest {
                    // The new URL is needed last of all: the optimum does not cache it.
                    heap.push((farthest, victim));
                    continue;
                }
                cached[victim as usize] = false;
            } else {
                len += 1;
            }
            cached[i] = true;
        }
        tag[i] = when;
        heap.push((when, id));
        if heap.len() > 2 * k + 64 {
            heap.retain(|&(t, id)| cached[id as usize] && tag[id as usize] == t);
        }
    }
    misses
}
