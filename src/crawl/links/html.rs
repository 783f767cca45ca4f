//! `Source::Html`: a 2xx HTML page's links (`url::extract::page_links`).
//!
//! Page-level robots directives are obeyed here unless `--ignore-page-robots`: a `nofollow`
//! page's links (`<meta name="robots">` or `X-Robots-Tag`), and `rel="nofollow"` links, are
//! neither offered nor written to `links.tsv` (the graph of links the crawl followed; a
//! nofollow link is, by its definition, no vote for its target). `noindex` is only noted.
//!
//! With `--near-duplicates` on, the page's visible text is signed in the same pass as its
//! links (`url::minhash`) and compared with every earlier page of the crawl
//! (`seen::neardup`): a near-duplicate is noted with the earlier page's URL and counted, and
//! with `skip-links` its links are not followed.

use crate::crawl::links::LinkReader;
use crate::crawl::links::{Discovered, Links};
use crate::crawl::note::Note;
use crate::crawl::page::Page;
use crate::fetch::client::Response;
use crate::url::directives::Directives;
use crate::url::extract::{PageLinks, page_links_fingerprinted};
use crate::url::minhash::NearDuplicates;
use crate::url::normalize::LinkKind;
use std::sync::atomic::Ordering;
use url::Url;

/// Links read from one page at most.
const MAX_LINKS_PER_PAGE: usize = 20_000;

impl LinkReader<'_> {
    /// The links of an HTML page, one link further from the seeds, as the extractor lists
    /// them (not copied), and whether it matched `--focus`.
    pub(in crate::crawl) fn html_links(&self, page: &Page) -> Discovered {
        let directives = self.header_directives(&page.response);
        let body = page.body();
        let (links, note) = self.links_of(body, &page.response, &page.url, directives);
        Discovered {
            links: Links {
                text: links.text,
                urls: links.distinct,
                order: Some(links.order),
                depth: page.entry.depth + 1,
                redirects: 0,
                requisite: links.requisite,
                requisite_kind: LinkKind::Requisite,
            },
            from: Some(self.focus.is_some_and(|f| f.matches(body))),
            note,
        }
    }

    /// The links of an HTML page that are to be followed, and a note: `LinksCapped` when there
    /// were more than `MAX_LINKS_PER_PAGE`, else `near-duplicate` (`--near-duplicates`), else
    /// the page's robots directives (`header` and its meta tags).
    fn links_of(
        &self,
        body: &[u8],
        response: &Response,
        page_url: &Url,
        header: Directives,
    ) -> (PageLinks, Note) {
        let token = &self.robots_token;
        let extracted = page_links_fingerprinted(
            body,
            page_url,
            response.charset(),
            MAX_LINKS_PER_PAGE,
            token,
            self.near_duplicates != NearDuplicates::Off,
        );
        self.counters
            .links
            .fetch_add(extracted.order.len() as u64, Ordering::Relaxed);
        let directives = header.union(extracted.directives);
        let rel_nofollow = extracted.rel_nofollow.iter().filter(|&&n| n).count();
        let note = if extracted.truncated {
            Note::LinksCapped
        } else {
            Note::None
        }
        .merge(self.obey(directives, rel_nofollow));
        let mut links = extracted;
        let earlier = self.near_duplicate(page_url, links.fingerprint.take());
        let near_duplicate = earlier.is_some();
        let note = note.merge(earlier.map_or(Note::None, Note::NearDuplicate));
        let skip = near_duplicate && self.near_duplicates == NearDuplicates::SkipLinks;
        if skip || self.obey_page_robots && directives.nofollow {
            links.order.clear();
        } else if self.obey_page_robots && rel_nofollow > 0 {
            // `retain` visits the links once each, in order: the flags line up. A URL whose
            // every link is dropped stays in `distinct`, never read.
            let mut nofollow = std::mem::take(&mut links.rel_nofollow).into_iter();
            links.order.retain(|_| !nofollow.next().unwrap_or(false));
        }
        (links, note)
    }

    /// The earlier page a page of `page_url` with this signature nearly repeats (counted); a
    /// page without a signature never does. A failure of the index (a full disk) is reported
    /// once a crawl, and the page counts as no near-duplicate.
    fn near_duplicate(
        &self,
        page_url: &Url,
        signature: Option<crate::seen::neardup::Signature>,
    ) -> Option<String> {
        let (signature, index) = (signature?, self.near_dup_index?);
        match index.check(page_url.as_str(), &signature) {
            Ok(Some(found)) => {
                self.counters
                    .near_duplicates
                    .fetch_add(1, Ordering::Relaxed);
                Some(found.earlier)
            }
            Ok(None) => None,
            Err(e) => {
                // Once a crawl: a full disk would otherwise print a line a page.
                static WARNED: std::sync::atomic::AtomicBool =
                    std::sync::atomic::AtomicBool::new(false);
                if !WARNED.swap(true, Ordering::Relaxed) {
                    eprintln!(
                        "crawl: warning: the near-duplicate index: {e:#} (pages it cannot \
                         compare count as no near-duplicate; further failures not shown)"
                    );
                }
                None
            }
        }
    }
}
