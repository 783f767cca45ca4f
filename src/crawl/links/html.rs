//! `Source::Html`: a 2xx HTML page's links (`url::extract::page_links`).
//!
//! Page-level robots directives are obeyed here unless `--ignore-page-robots`: a `nofollow`
//! page's links (`<meta name="robots">` or `X-Robots-Tag`), and `rel="nofollow"` links, are
//! neither offered nor written to `links.tsv` (the graph of links the crawl followed; a
//! nofollow link is, by its definition, no vote for its target). `noindex` is only noted.
//!
//! With `--near-duplicates` on, the page's visible text is fingerprinted in the same pass as
//! its links and compared with its host's recent pages (`url::simhash`): a near-duplicate is
//! noted and counted, and with `skip-links` its links are not followed.

use crate::crawl::links::LinkReader;
use crate::crawl::links::{Discovered, Links};
use crate::crawl::note::Note;
use crate::crawl::page::Page;
use crate::fetch::client::Response;
use crate::url::directives::Directives;
use crate::url::extract::{PageLinks, page_links_fingerprinted};
use crate::url::normalize::LinkKind;
use crate::url::simhash::NearDuplicates;
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
        let near_duplicate = self.near_duplicate(page_url, extracted.fingerprint);
        let note = note.merge(if near_duplicate {
            Note::NearDuplicate
        } else {
            Note::None
        });
        let mut links = extracted;
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

    /// Whether a page of `page_url` with this fingerprint nearly repeats a recent page of its
    /// host (counted); a page without a fingerprint never does.
    fn near_duplicate(&self, page_url: &Url, fingerprint: Option<u64>) -> bool {
        let Some(fingerprint) = fingerprint else {
            return false;
        };
        let host = page_url.host_str().unwrap_or("");
        let port = page_url.port_or_known_default().unwrap_or(0);
        let near = self
            .fingerprints
            .near_duplicate(&format!("{host}:{port}"), fingerprint);
        if near {
            self.counters
                .near_duplicates
                .fetch_add(1, Ordering::Relaxed);
        }
        near
    }
}
