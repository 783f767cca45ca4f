//! The CLOCK cache of recently seen URL checksums (Broder, Najork, Wiener 2003, §3.4 and §6).
//!
//! It answers most "seen?" questions without touching the disk. A hit sets the entry's mark bit;
//! a miss inserts the checksum, and when the cache is full the hand sweeps the circle of entries,
//! clearing mark bits, until it finds an unmarked entry to evict. The entries live in a circular
//! array (the clock); an open-addressed index with linear probing maps a checksum to its slot.
//! Memory: 8 bytes per entry, one mark bit, and 4–8 bytes of index, fixed at construction.

/// A fixed-capacity CLOCK cache of u64 checksums.
pub struct ClockCache {
    /// The circle: the checksum in each slot (`slots[..len]` are occupied).
    slots: Vec<u64>,
    /// One mark ("recently used") bit per slot.
    marks: Vec<u64>,
    /// Open-addressed index: slot number + 1, or 0 for an empty cell. Power-of-two length.
    index: Vec<u32>,
    len: usize,
    hand: usize,
}

impl ClockCache {
    /// A cache that holds `capacity` checksums (at least 1).
    pub fn new(capacity: usize) -> ClockCache {
        let capacity = capacity.clamp(1, u32::MAX as usize / 2);
        let cells = (capacity * 2).next_power_of_two();
        ClockCache {
            slots: vec![0; capacity],
            marks: vec![0; capacity.div_ceil(64)],
            index: vec![0; cells],
            len: 0,
            hand: 0,
        }
    }

    /// Looks `key` up; a hit marks it. A miss inserts it, evicting by CLOCK when full.
    /// Returns true on a hit.
    pub fn check_and_insert(&mut self, key: u64) -> bool {
        let mask = self.index.len() - 1;
        let mut cell = self.home(key);
        while self.index[cell] != 0 {
            let slot = self.index[cell] as usize - 1;
            if self.slots[slot] == key {
                self.set_mark(slot, true);
                return true;
            }
            cell = (cell + 1) & mask;
        }
        let slot = if self.len < self.slots.len() {
            self.len += 1;
            self.len - 1
        } else {
            let victim = self.sweep();
            self.unindex(self.slots[victim]);
            // The empty cell found above may have moved during the removal: find it again.
            cell = self.home(key);
            while self.index[cell] != 0 {
                cell = (cell + 1) & mask;
            }
            victim
        };
        self.slots[slot] = key;
        self.set_mark(slot, false);
        self.index[cell] = slot as u32 + 1;
        false
    }

    #[cfg(test)]
    /// Whether `key` is cached, without touching its mark (for tests and the simulator).
    pub fn contains(&self, key: u64) -> bool {
        self.find_cell(key).is_some()
    }

    /// Advances the hand past marked slots (clearing them) to the first unmarked slot, which is
    /// the victim; the hand then rests just after it.
    fn sweep(&mut self) -> usize {
        loop {
            let slot = self.hand;
            self.hand = (self.hand + 1) % self.slots.len();
            if self.mark(slot) {
                self.set_mark(slot, false);
            } else {
                return slot;
            }
        }
    }

    fn home(&self, key: u64) -> usize {
        // Checksums are already uniformly distributed; a multiplicative mix guards the index
        // against keys that share low bits (e.g. sequential keys in tests).
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & (self.index.len() - 1)
    }

    fn find_cell(&self, key: u64) -> Option<usize> {
        let mask = self.index.len() - 1;
        let mut cell = self.home(key);
        while self.index[cell] != 0 {
            if self.slots[self.index[cell] as usize - 1] == key {
                return Some(cell);
            }
            cell = (cell + 1) & mask;
        }
        None
    }

    /// Removes `key` from the index by backward-shift deletion (no tombstones, so probe
    /// sequences stay short however long the cache runs).
    fn unindex(&mut self, key: u64) {
        let mask = self.index.len() - 1;
        let Some(mut hole) = self.find_cell(key) else {
            return;
        };
        let mut cell = hole;
        loop {
            cell = (cell + 1) & mask;
            let entry = self.index[cell];
            if entry == 0 {
                break;
            }
            let home = self.home(self.slots[entry as usize - 1]);
            // Move the entry into the hole unless its home lies cyclically in (hole, cell].
            let distance_to_cell = cell.wrapping_sub(home) & mask;
            let distance_to_hole = hole.wrapping_sub(home) & mask;
            if distance_to_hole < distance_to_cell {
                self.index[hole] = entry;
                hole = cell;
            }
        }
        self.index[hole] = 0;
    }

    fn mark(&self, slot: usize) -> bool {
        self.marks[slot / 64] & (1 << (slot % 64)) != 0
    }

    fn set_mark(&mut self, slot: usize, on: bool) {
        if on {
            self.marks[slot / 64] |= 1 << (slot % 64);
        } else {
            self.marks[slot / 64] &= !(1 << (slot % 64));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// CLOCK as the paper states it, with linear search: the model the real cache must match.
    struct ReferenceClock {
        items: Vec<(u64, bool)>,
        capacity: usize,
        hand: usize,
    }

    impl ReferenceClock {
        fn access(&mut self, key: u64) -> bool {
            if let Some(item) = self.items.iter_mut().find(|(k, _)| *k == key) {
                item.1 = true;
                return true;
            }
            if self.items.len() < self.capacity {
                self.items.push((key, false));
                return false;
            }
            loop {
                let slot = self.hand;
                self.hand = (self.hand + 1) % self.capacity;
                if self.items[slot].1 {
                    self.items[slot].1 = false;
                } else {
                    self.items[slot] = (key, false);
                    return false;
                }
            }
        }
    }

    proptest! {
        #[test]
        fn agrees_with_reference_clock(
            capacity in 1usize..40,
            keys in proptest::collection::vec(0u64..120, 0..3000),
        ) {
            let mut real = ClockCache::new(capacity);
            let mut model = ReferenceClock { items: Vec::new(), capacity, hand: 0 };
            for (i, &key) in keys.iter().enumerate() {
                // Spread keys over the u64 range and also collide their low bits.
                let key = key.wrapping_mul(0x1000_0000_0000_0001) ^ (key << 7);
                prop_assert_eq!(real.check_and_insert(key), model.access(key), "access {} key {}", i, key);
            }
            for &(key, _) in &model.items {
                prop_assert!(real.contains(key));
            }
        }
    }

    #[test]
    fn hit_after_insert_and_miss_after_eviction() {
        let mut cache = ClockCache::new(2);
        assert!(!cache.check_and_insert(1));
        assert!(cache.check_and_insert(1));
        assert!(!cache.check_and_insert(2));
        // 1 is marked, 2 is not: inserting 3 sweeps past 1 (clearing it) and evicts 2.
        assert!(!cache.check_and_insert(3));
        assert!(cache.contains(1) && cache.contains(3) && !cache.contains(2));
    }

    #[test]
    fn long_run_keeps_index_consistent() {
        let mut cache = ClockCache::new(1000);
        for i in 0..200_000u64 {
            cache.check_and_insert(crate::seen::checksum::checksum(&(i % 3000).to_le_bytes()));
        }
        let live = cache.slots.iter().filter(|&&k| cache.contains(k)).count();
        assert_eq!(live, 1000);
        assert_eq!(cache.index.iter().filter(|&&c| c != 0).count(), 1000);
    }
}
