//! A page's links made ready for the DUE: canonicalized, filtered and checksummed, each
//! distinct URL once (`Wanted`).
//!
//! Half the links of a documentation page repeat one before them (rust-doc: 78 links a page,
//! 39 distinct). A repeat gets the answer its first occurrence got, without the work: the
//! filter would answer the same (one depth for the lot, and it reads only the URL's text), and
//! the DUE would drop it (its checksum is in the cache since its first occurrence, or, evicted
//! in between, it is merged away as a second occurrence in the batch). So a repeat is counted
//! as its first occurrence was (the filter's reason; a DUE lookup that hits, `repeats`) and,
//! with `--link-graph`, kept in `occurrences` for `links.tsv`, which lists the links as the
//! page has them; it is neither filtered again nor offered. What the frontier gets, and in what
//! order, is unchanged. Without `--link-graph` no `occurrences` are kept: nothing else reads
//! them (`--focus` counts each distinct URL once, `urls`).

use crate::crawl::counters::Counters;
use crate::frontier::Entry;
use crate::frontier::entry::FoundLine;
use crate::seen::checksum::checksum;
use crate::url::extract::PageLink;
use crate::url::normalize::{Filter, Found, LinkFilter, LinkKind, Rejection};
use rustc_hash::FxHashMap;
use std::ops::Range;
use std::sync::atomic::Ordering;

/// The wanted URLs of one page (or redirect, or sitemap), each once. Their text is one
/// `String`, not one each: nearly all of them are URLs the DUE has seen (rust-doc: 99 % of
/// lookups hit), which need no `Entry`; those it has not are offered as encoded lines.
pub(super) struct Wanted {
    /// The text of the distinct accepted URLs, one after another.
    text: String,
    /// The distinct accepted URLs, in the order first found: checksum and text in `text`.
    pub entries: Vec<(u64, Range<usize>)>,
    /// Each accepted link in found order, repeats included, as an index into `entries`;
    /// `None` unless asked for (the link graph's only).
    pub occurrences: Option<Vec<u32>>,
    /// For each of `entries`, how many later links repeated it.
    pub repeats: Vec<u32>,
    /// What each checksum got the first time: its index in `entries`, or the filter's reason.
    first: FxHashMap<u64, Result<u32, Rejection>>,
    depth: u32,
    redirects: u32,
}

impl Wanted {
    /// Filters `urls` (canonical ones in `text`) found at `depth` after `redirects` redirects,
    /// counting each rejected one (repeats included) in `counters.filtered`. The links are
    /// `order`, indices into `urls` (`PageLinks`: a repeated text is there once), or else
    /// `urls` each once in turn. Those `requisite` marks (one for each of `urls`; empty: none)
    /// are filtered as links of `kind`, the others as hyperlinks. With `occurrences`, every
    /// accepted link is kept in found order too (`links`).
    // Each argument is a part of one page's links; a struct for them would be built at its one
    // caller only to be taken apart here.
    #[allow(clippy::too_many_arguments)]
    pub fn of(
        text: &str,
        mut urls: Vec<PageLink>,
        order: Option<&[u32]>,
        filter: &Filter,
        (depth, redirects): (u32, u32),
        (requisite, kind): (&[bool], LinkKind),
        counters: &Counters,
        occurrences: bool,
    ) -> Wanted {
        let links = order.map_or(urls.len(), <[u32]>::len);
        // The page's links share its origin, read once for all of them.
        let mut filter = LinkFilter::new(filter);
        let mut wanted = Wanted {
            text: String::with_capacity(text.len()),
            entries: Vec::with_capacity(urls.len()),
            occurrences: occurrences.then(|| Vec::with_capacity(links)),
            repeats: Vec::with_capacity(urls.len()),
            first: FxHashMap::with_capacity_and_hasher(urls.len(), Default::default()),
            depth,
            redirects,
        };
        // What each of `urls` got when its first link was read.
        let mut answers: Vec<Option<Result<u32, Rejection>>> = vec![None; urls.len()];
        for at in 0..links {
            let i = order.map_or(at, |order| order[at] as usize);
            let (answer, new) = match answers[i] {
                Some(answer) => (answer, false),
                None => {
                    let url =
                        std::mem::replace(&mut urls[i], PageLink::Canonical { at: 0..0, key: 0 });
                    let kind = match requisite.get(i) {
                        Some(true) => kind,
                        _ => LinkKind::Hyperlink,
                    };
                    let (answer, new) = wanted.answer(text, url, &mut filter, kind);
                    answers[i] = Some(answer);
                    (answer, new)
                }
            };
            match answer {
                Ok(index) if new => wanted.occurred(index),
                Ok(index) => {
                    wanted.repeats[index as usize] += 1;
                    wanted.occurred(index);
                }
                Err(reason) => {
                    counters.filtered[reason as usize].fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        wanted
    }

    /// What `url`, a link of `kind`, gets: the index of its entry, new (true) or one before it
    /// with the same text, or the filter's reason.
    fn answer<'t>(
        &mut self,
        text: &'t str,
        url: PageLink,
        filter: &mut LinkFilter<'_, 't>,
        kind: LinkKind,
    ) -> (Result<u32, Rejection>, bool) {
        let accepted = match url {
            // Canonical text comes with its key (the extractor's): a repeat is known before the
            // filter reads it (a requisite rejected as a hyperlink is asked about again).
            PageLink::Canonical { at, key } => {
                let text = &text[at];
                match self.first.get(&key) {
                    Some(&Err(_)) if kind != LinkKind::Hyperlink => {}
                    Some(&answer) => return (answer, false),
                    None => {}
                }
                if let Err(reason) = filter.check_canonical_as(text, self.depth, kind) {
                    self.first.entry(key).or_insert(Err(reason));
                    return (Err(reason), false);
                }
                return (Ok(self.add(key, text)), true);
            }
            // A parsed URL's canonical text (and key) comes from `accept_as`.
            PageLink::Parsed(url) => {
                match Found::Parsed(url).accept_as(filter.filter(), self.depth, kind) {
                    Ok(text) => text,
                    Err(reason) => return (Err(reason), false),
                }
            }
        };
        let key = checksum(accepted.as_bytes());
        // A parsed URL may repeat one before it only now that its text is known.
        if let Some(&Ok(index)) = self.first.get(&key) {
            return (Ok(index), false);
        }
        (Ok(self.add(key, &accepted)), true)
    }

    /// A new entry for `url`; its index.
    fn add(&mut self, key: u64, url: &str) -> u32 {
        let index = self.entries.len() as u32;
        self.first.insert(key, Ok(index));
        let at = self.text.len()..self.text.len() + url.len();
        self.text.push_str(url);
        self.entries.push((key, at));
        self.repeats.push(0);
        index
    }

    /// A link to entry `index`, kept if `occurrences` are.
    fn occurred(&mut self, index: u32) {
        if let Some(occurrences) = &mut self.occurrences {
            occurrences.push(index);
        }
    }

    /// The URL of entry `index`.
    pub fn url(&self, index: usize) -> &str {
        &self.text[self.entries[index].1.clone()]
    }

    /// The distinct accepted URLs, in the order first found.
    pub fn urls(&self) -> impl Iterator<Item = &str> {
        (0..self.entries.len()).map(|i| self.url(i))
    }

    /// Every accepted link's URL in found order, repeats included (`links.tsv`); none unless
    /// `occurrences` were asked for.
    pub fn links(&self) -> impl Iterator<Item = &str> + Clone {
        let occurrences = self.occurrences.as_deref().unwrap_or_default();
        occurrences.iter().map(|&i| self.url(i as usize))
    }

    /// The entries, each its own `Entry` (for the shard exchange).
    pub fn entries(&self) -> Vec<(u64, Entry)> {
        let entry = |i| Entry::new(self.url(i).to_owned(), self.depth, self.redirects);
        (0..self.entries.len())
            .map(|i| (self.entries[i].0, entry(i)))
            .collect()
    }

    /// Entry `index` as the DUE spools an `Entry` (`Payload::encode`: `Entry::to_line`).
    pub fn encode(&self, index: usize, out: &mut Vec<u8>) {
        let line = FoundLine {
            url: self.url(index),
            depth: self.depth,
            redirects: self.redirects,
        };
        line.push_to(out);
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

    /// A page's links as `Wanted::of` takes them: (text, whether it comes parsed) each.
    fn links(page: &[(&str, bool)]) -> (String, Vec<PageLink>) {
        let mut text = String::new();
        let urls = (page.iter())
            .map(|&(url, parsed)| match parsed {
                true => PageLink::Parsed(Url::parse(url).unwrap()),
                false => {
                    text.push_str(url);
                    let at = text.len() - url.len()..text.len();
                    PageLink::Canonical {
                        at,
                        key: checksum(url.as_bytes()),
                    }
                }
            })
            .collect();
        (text, urls)
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
        let (text, urls) = links(&page);
        let all_links = (&[][..], LinkKind::Hyperlink);
        let wanted = Wanted::of(
            &text,
            urls,
            None,
            &filter,
            (2, 0),
            all_links,
            &counters,
            true,
        );
        let keys = [a, b].map(|u| checksum(u.as_bytes()));
        let entries: Vec<(u64, Entry)> = wanted.entries();
        let want = [a, b].map(|u| Entry::new(u.to_owned(), 2, 0));
        assert_eq!(
            entries,
            vec![(keys[0], want[0].clone()), (keys[1], want[1].clone())]
        );
        assert_eq!(wanted.urls().collect::<Vec<_>>(), vec![a, b]);
        assert_eq!(wanted.links().collect::<Vec<_>>(), vec![a, b, a, b, a]);
        assert_eq!(wanted.repeats, vec![2, 1]);
        assert_eq!(wanted.repeats_of([keys[1]].iter()), 1);
        let scope = counters.filtered[Rejection::Scope as usize].load(Ordering::Relaxed);
        assert_eq!(scope, 3);
        // Encoded as the DUE spools each `Entry`.
        for (i, entry) in want.iter().enumerate() {
            let (mut line, mut spooled) = (b"before".to_vec(), b"before".to_vec());
            wanted.encode(i, &mut line);
            crate::seen::batch::Payload::encode(entry, &mut spooled);
            assert_eq!((wanted.entries[i].0, line), (entry.key(), spooled));
        }
    }

    /// The links marked requisites are filtered as such (past the depth here), the others as
    /// hyperlinks; a URL both linked and embedded is wanted once, whichever comes first.
    #[test]
    fn requisites_are_filtered_as_their_kind() {
        let seed = Url::parse(SEED).unwrap();
        let mut filter = Filter::new(Scope::Host, &[seed]);
        filter.max_depth = Some(1);
        let counters = Counters::default();
        let (page, img, both) = (
            "http://127.0.0.1:8080/page",
            "http://127.0.0.1:8080/img.png",
            "http://127.0.0.1:8080/both.png",
        );
        let distinct = [(page, false), (img, true), (both, false), (both, true)];
        let (text, urls) = links(&distinct);
        let requisite = [false, true, false, true];
        let kinds = (&requisite[..], LinkKind::Requisite);
        let wanted = Wanted::of(&text, urls, None, &filter, (2, 0), kinds, &counters, true);
        assert_eq!(wanted.urls().collect::<Vec<_>>(), [img, both]);
        let depth = counters.filtered[Rejection::Depth as usize].load(Ordering::Relaxed);
        assert_eq!(depth, 2);
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
        let (by_order, one_by_one) = (Counters::default(), Counters::default());
        let (text, urls) = links(&distinct);
        let all_links = (&[][..], LinkKind::Hyperlink);
        let got = Wanted::of(
            &text,
            urls,
            Some(&order),
            &filter,
            (1, 0),
            all_links,
            &by_order,
            true,
        );
        let each: Vec<(&str, bool)> = order.iter().map(|&i| distinct[i as usize]).collect();
        let (text, urls) = links(&each);
        let want = Wanted::of(
            &text,
            urls,
            None,
            &filter,
            (1, 0),
            all_links,
            &one_by_one,
            true,
        );
        assert_eq!(got.entries(), want.entries());
        assert_eq!(got.links().collect::<Vec<_>>(), [a, b, a, b, a, b]);
        assert_eq!(
            got.links().collect::<Vec<_>>(),
            want.links().collect::<Vec<_>>()
        );
        assert_eq!(got.repeats, want.repeats);
        let scope = |c: &Counters| c.filtered[Rejection::Scope as usize].load(Ordering::Relaxed);
        assert_eq!((scope(&by_order), scope(&one_by_one)), (2, 2));
    }

    /// Without the link graph no occurrence is kept, and nothing else changes: the same
    /// entries, repeats and counts as with it.
    #[test]
    fn without_the_link_graph_only_the_links_are_not_kept() {
        let filter = Filter::new(Scope::Host, &[Url::parse(SEED).unwrap()]);
        let (a, b) = ("http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b");
        // Each text once and the page's order of them, as the HTML source gives its links.
        let distinct = [(a, false), ("http://elsewhere.test/x", false), (b, true)];
        let order = [0, 1, 2, 0, 1];
        let wanted = |counters: &Counters, graph: bool| {
            let (text, urls) = links(&distinct);
            let (order, hyperlinks) = (Some(&order[..]), (&[][..], LinkKind::Hyperlink));
            Wanted::of(
                &text,
                urls,
                order,
                &filter,
                (1, 0),
                hyperlinks,
                counters,
                graph,
            )
        };
        let (with, without) = (Counters::default(), Counters::default());
        let (kept, skipped) = (wanted(&with, true), wanted(&without, false));
        assert_eq!(kept.links().collect::<Vec<_>>(), [a, b, a]);
        assert_eq!(skipped.links().count(), 0);
        assert_eq!(skipped.occurrences, None);
        assert_eq!(skipped.entries(), kept.entries());
        assert_eq!(skipped.urls().collect::<Vec<_>>(), [a, b]);
        assert_eq!(skipped.repeats, kept.repeats);
        let scope = |c: &Counters| c.filtered[Rejection::Scope as usize].load(Ordering::Relaxed);
        assert_eq!((scope(&with), scope(&without)), (2, 2));
    }
}
