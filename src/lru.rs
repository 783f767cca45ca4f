//! A small least-recently-used map with a fixed capacity: the bounded caches of per-host state
//! (robots.txt rules of hosts not in the scheduler, idle connections), which must not grow with
//! the number of hosts a crawl meets.
//!
//! Recency is kept as a queue of (key, stamp) touches; a touch pushes a new stamp and leaves
//! the old one to be skipped when it reaches the front. The queue is rebuilt when it holds more
//! than twice the capacity of stale touches, so memory stays O(capacity) and every operation is
//! O(1) amortized.

use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::hash::Hash;

/// A map of at most `capacity` entries that forgets the least recently used one first.
pub struct Lru<K, V> {
    map: FxHashMap<K, (V, u64)>,
    order: VecDeque<(K, u64)>,
    capacity: usize,
    clock: u64,
}

impl<K: Clone + Hash + Eq, V> Lru<K, V> {
    /// An empty map holding at most `capacity` entries (at least one).
    pub fn new(capacity: usize) -> Lru<K, V> {
        Lru {
            map: FxHashMap::default(),
            order: VecDeque::new(),
            capacity: capacity.max(1),
            clock: 0,
        }
    }

    /// Entries held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// The value for `key`, marked as just used.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        self.get_mut(key).map(|value| &*value)
    }

    /// The value for `key`, mutable, marked as just used.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let stamp = self.tick();
        let (_, at) = self.map.get_mut(key)?;
        *at = stamp;
        self.order.push_back((key.clone(), stamp));
        self.compact();
        self.map.get_mut(key).map(|(value, _)| value)
    }

    /// Inserts or replaces `key`, then forgets the least recently used entries beyond capacity.
    pub fn insert(&mut self, key: K, value: V) {
        let stamp = self.tick();
        self.order.push_back((key.clone(), stamp));
        self.map.insert(key, (value, stamp));
        while self.map.len() > self.capacity {
            let Some((old, at)) = self.order.pop_front() else {
                break;
            };
            if self.map.get(&old).is_some_and(|(_, a)| *a == at) {
                self.map.remove(&old);
            }
        }
        self.compact();
    }

    /// Takes `key` out of the map (borrowed: a `&str` for a `String` key, with no copy).
    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.remove(key).map(|(value, _)| value)
    }

    /// Takes out the least recently used entry if `expired` says so of its value (the idle
    /// pool's timeout, entries being checked oldest first). O(1) amortized: the stale touches
    /// found at the front are dropped, each once.
    pub fn pop_oldest_if(&mut self, expired: impl FnOnce(&V) -> bool) -> Option<V> {
        let map = &self.map;
        let live = |(key, at): &(K, u64)| map.get(key).is_some_and(|(_, a)| a == at);
        while self.order.front().is_some_and(|touch| !live(touch)) {
            self.order.pop_front();
        }
        let (key, _) = self.order.front()?;
        if !expired(&self.map.get(key)?.0) {
            return None;
        }
        let (key, _) = self.order.pop_front()?;
        self.map.remove(&key).map(|(value, _)| value)
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Drops stale touches once they outnumber the live entries twice over.
    fn compact(&mut self) {
        if self.order.len() <= 2 * self.capacity + 16 {
            return;
        }
        let map = &self.map;
        self.order
            .retain(|(key, at)| map.get(key).is_some_and(|(_, a)| a == at));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgets_the_least_recently_used_and_stays_bounded() {
        let mut lru = Lru::new(3);
        for k in 0..3 {
            lru.insert(k, k * 10);
        }
        assert_eq!(lru.get(&0), Some(&0)); // 0 is now the most recent
        lru.insert(3, 30); // evicts 1
        assert_eq!(lru.get(&1), None);
        assert_eq!(lru.get(&2), Some(&20));
        assert_eq!(lru.len(), 3);
        assert_eq!(lru.remove(&0), Some(0));
        assert_eq!(lru.len(), 2);
        for _ in 0..10_000 {
            lru.get(&2);
        }
        assert!(lru.order.len() <= 2 * 3 + 17, "touches are compacted");
    }

    #[test]
    fn pops_the_oldest_only_when_asked_skipping_stale_touches() {
        let mut lru = Lru::new(4);
        for k in 0..3 {
            lru.insert(k, k * 10);
        }
        lru.get(&0); // 0's first touch is stale now: 1 is the oldest
        assert_eq!(lru.pop_oldest_if(|v| *v > 10), None, "1 (10) kept");
        assert_eq!(lru.pop_oldest_if(|_| true), Some(10));
        assert_eq!(lru.pop_oldest_if(|_| true), Some(20));
        lru.remove(&0);
        assert_eq!(lru.pop_oldest_if(|_| true), None, "nothing left");
        assert_eq!(lru.len(), 0);
        assert!(lru.order.is_empty(), "every stale touch dropped");
    }

    #[test]
    fn agrees_with_a_reference_model() {
        let mut lru = Lru::new(8);
        let mut model: Vec<(u32, u32)> = Vec::new(); // most recent last
        let mut x = 12345u32;
        for step in 0..20_000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let key = (x >> 16) % 20;
            if x.is_multiple_of(3) {
                lru.insert(key, step);
                model.retain(|(k, _)| *k != key);
                model.push((key, step));
                if model.len() > 8 {
                    model.remove(0);
                }
            } else {
                let got = lru.get(&key).copied();
                let want = model.iter().position(|(k, _)| *k == key).map(|i| {
                    let e = model.remove(i);
                    model.push(e);
                    e.1
                });
                assert_eq!(got, want, "step {step}");
            }
        }
    }
}
