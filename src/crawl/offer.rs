//! A page's links made ready for the DUE: canonicalized, filtered and checksummed, each
//! distinct URL once (`Wanted`).
//!
//! Half the links of a documentation page repeat one before them (rust-doc: 78 links a page,
//! 39 distinct). A repeat gets the answer its first occurrence got, without the work: the
//! filter would answer the same (one depth for the lot, and it reads only the URL's text), and
//! the DUE would drop it (its checksum is in the cache since its first occurrence, or, evicted
//! in between, it is merged away as a second occurrence in the batch). So a repeat is counted
//! as its first occurrence was (the filter's reason; a DUE lookup that hits, `repeats`) and
//! kept in `occurrences` for `links.tsv`, which lists the links as the page has them; it is
//! neither filtered again nor offered. What the frontier gets, and in what order, is unchanged.

use crate::crawl::run::Counters;
use crate::frontier::Entry;
use crate::seen::checksum::checksum;
use crate::url::normalize::{Filter, Found, Rejection};
use rustc_hash::FxHashMap;
use std::sync::atomic::Ordering;

/// The wanted URLs of one page (or redirect, or sitemap), each once.
pub(super) struct Wanted {
    /// The distinct accepted URLs with their checksums, in the order first found.
    pub entries: Vec<(u64, Entry)>,
    /// Each accepted link in found order, repeats included, as an index into `entries`.
    pub occurrences: Vec<u32>,
    /// For each of `entries`, how many later links repeated it.
    pub repeats: Vec<u32>,
    /// What each checksum got the first time: its index in `entries`, or the filter's reason.
    first: FxHashMap<u64, Result<u32, Rejection>>,
}

impl Wanted {
    /// Filters `urls` found at `depth` after `redirects` redirects, counting each rejected one
    /// (repeats included) in `counters.filtered`. The links are `order`, indices into `urls`
    /// (`PageLinks`: a repeated text is there once), or else `urls` each once in turn.
    pub fn of(
        mut urls: Vec<Found>,
        order: Option<&[u32]>,
        filter: &Filter,
        depth: u32,
        redirects: u32,
        counters: &Counters,
    ) -> Wanted {
        let links = order.map_or(urls.len(), <[u32]>::len);
        let mut wanted = Wanted {
            entries: Vec::with_capacity(urls.len()),
            occurrences: Vec::with_capacity(links),
            repeats: Vec::with_capacity(urls.len()),
            first: FxHashMap::with_capacity_and_hasher(urls.len(), Default::default()),
        };
        // What each of `urls` got when its first link was read.
        let mut answers: Vec<Option<Result<u32, Rejection>>> = vec![None; urls.len()];
        for at in 0..links {
            let i = order.map_or(at, |order| order[at] as usize);
            let (answer, new) = match answers[i] {
                Some(answer) => (answer, false),
                None => {
                    let url = std::mem::replace(&mut urls[i], Found::Canonical(String::new()));
                    let (answer, new) = wanted.answer(url, filter, depth, redirects);
                    answers[i] = Some(answer);
                    (answer, new)
                }
            };
            match answer {
                Ok(index) if new => wanted.occurrences.push(index),
                Ok(index) => wanted.repeat(index),
                Err(reason) => {
                    counters.filtered[reason as usize].fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        wanted
    }

    /// What `url` gets: the index of its entry, new (true) or one before it with the same
    /// text, or the filter's reason.
    fn answer(
        &mut self,
        url: Found,
        filter: &Filter,
        depth: u32,
        redirects: u32,
    ) -> (Result<u32, Rejection>, bool) {
        // Canonical text is its own key: a repeat is known before the filter reads it. A
        // parsed URL's canonical text (and key) comes from `accept`.
        let key = match &url {
            Found::Canonical(text) => Some(checksum(text.as_bytes())),
            Found::Parsed(_) => None,
        };
        if let Some(&answer) = key.and_then(|key| self.first.get(&key)) {
            return (answer, false);
        }
        match url.accept(filter, depth) {
            Ok(text) => {
                let key = key.unwrap_or_else(|| checksum(text.as_bytes()));
                // A parsed URL may repeat one before it only now that its text is known.
                if let Some(&Ok(index)) = self.first.get(&key) {
                    return (Ok(index), false);
                }
                let index = self.entries.len() as u32;
                self.first.insert(key, Ok(index));
                self.entries.push((key, Entry::new(text, depth, redirects)));
                self.repeats.push(0);
                (Ok(index), true)
            }
            Err(reason) => {
                if let Some(key) = key {
                    self.first.insert(key, Err(reason));
                }
                (Err(reason), false)
            }
        }
    }

    fn repeat(&mut self, index: u32) {
        self.occurrences.push(index);
        self.repeats[index as usize] += 1;
    }

    /// Every accepted link's URL in found order, repeats included (`links.tsv`).
    pub fn links(&self) -> impl Iterator<Item = &str> {
        self.occurrences
            .iter()
            .map(|&i| self.entries[i as usize].1.url.as_str())
    }

    /// The repeats of the entries with these checksums (those offered to this shard's DUE).
    pub fn repeats_of<'a>(&self, keys: impl Iterator<Item = &'a u64>) -> u64 {
        keys.filter_map(|key| self.first.get(key))
            .filter_map(|answer| answer.ok())
            .map(|index| u64::from(self.repeats[index as usize]))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::url::normalize::Scope;
    use url::Url;

    const SEED: &str = "http://127.0.0.1:8080/";

    fn found(text: &str, parsed: bool) -> Found {
        match parsed {
            true => Found::Parsed(Url::parse(text).unwrap()),
            false => Found::Canonical(text.to_owned()),
        }
    }

    /// A page's repeats are answered from their first occurrence: each distinct URL is one
    /// entry, in first-found order; `links.tsv` still gets every link as the page has it, and
    /// each rejected link, repeats included, is counted.
    #[test]
    fn each_distinct_url_is_filtered_and_offered_once() {
        let seed = Url::parse(SEED).unwrap();
        let filter = Filter::new(Scope::Host, &[seed]);
        let counters = Counters::default();
        let (a, b) = ("http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b?q=1");
        let away = "http://elsewhere.test/x";
        // (text, whether it comes parsed): a parsed URL repeats canonical text and vice versa.
        let page = [
            (a, false),
            (away, false),
            (b, true),
            (a, false),
            (away, false),
            (b, false),
            (a, true),
            (away, true),
        ];
        let urls = page
            .iter()
            .map(|&(text, parsed)| found(text, parsed))
            .collect();
        let wanted = Wanted::of(urls, None, &filter, 2, 0, &counters);
        let entries: Vec<(u64, &str)> = wanted
            .entries
            .iter()
            .map(|(key, e)| (*key, e.url.as_str()))
            .collect();
        let keys = [a, b].map(|u| checksum(u.as_bytes()));
        assert_eq!(entries, vec![(keys[0], a), (keys[1], b)]);
        assert!(wanted.entries.iter().all(|(_, e)| e.depth == 2));
        assert_eq!(wanted.links().collect::<Vec<_>>(), vec![a, b, a, b, a]);
        assert_eq!(wanted.repeats, vec![2, 1]);
        assert_eq!(wanted.repeats_of([keys[1]].iter()), 1);
        let scope = counters.filtered[Rejection::Scope as usize].load(Ordering::Relaxed);
        assert_eq!(scope, 3);
    }

    /// A page's links given as `order` (each text once, `PageLinks`) come out as the same
    /// links given one by one: the same entries, `links.tsv` lines, repeats and counts.
    #[test]
    fn links_by_order_are_links_one_by_one() {
        let seed = Url::parse(SEED).unwrap();
        let filter = Filter::new(Scope::Host, &[seed]);
        let (a, b) = ("http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b");
        let away = "http://elsewhere.test/x";
        let distinct = [(a, false), (away, false), (b, true), (b, false)];
        let order = [0, 1, 2, 0, 1, 3, 0, 2];
        let urls = || distinct.iter().map(|&(t, parsed)| found(t, parsed));
        let (by_order, one_by_one) = (Counters::default(), Counters::default());
        let got = Wanted::of(urls().collect(), Some(&order), &filter, 1, 0, &by_order);
        let each = order
            .iter()
            .map(|&i| urls().nth(i as usize).unwrap())
            .collect();
        let want = Wanted::of(each, None, &filter, 1, 0, &one_by_one);
        let entries = |w: &Wanted| -> Vec<(u64, String)> {
            w.entries.iter().map(|(k, e)| (*k, e.url.clone())).collect()
        };
        assert_eq!(entries(&got), entries(&want));
        assert_eq!(got.links().collect::<Vec<_>>(), [a, b, a, b, a, b]);
        assert_eq!(
            got.links().collect::<Vec<_>>(),
            want.links().collect::<Vec<_>>()
        );
        assert_eq!(got.repeats, want.repeats);
        let scope = |c: &Counters| c.filtered[Rejection::Scope as usize].load(Ordering::Relaxed);
        assert_eq!((scope(&by_order), scope(&one_by_one)), (2, 2));
    }
}
