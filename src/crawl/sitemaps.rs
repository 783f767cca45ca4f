//! Sitemaps in a crawl: where they come from, and what a worker does with one.
//!
//! Sources: when a host's robots.txt arrives, each of its `Sitemap:` lines, or, for a seed's
//! host whose robots.txt names none, `ORIGIN/sitemap.xml`. A sitemap is frontier work like a
//! page (`Entry::sitemap`, its own checksum in the DUE), so it is fetched through its host's
//! queue under the same politeness and robots.txt rules, checkpointed and resumed like a page,
//! logged (note `sitemap`) and archived. It is not a page: it does not count towards `--max-pages`
//! or the page counters. One answered 2xx (read) is recorded in `fetched.tsv`, so that a
//! recrawl offers it ahead of the previous pages (robots.txt, once its cached answer is older
//! than a day, is read again and offers any new sitemap).
//!
//! During a recrawl each listed page's `lastmod` is kept (`recrawl::Lastmods`), and the
//! host is held until the sitemap has been read (the one exception to "the host is free once the
//! response is in"), so the host's next page is asked for knowing it.
//!
//! Reading one (`url::sitemap`, streaming and bounded): a `urlset` or text sitemap's URLs are
//! offered like links at depth 1 (`crawl::links::sitemap`), in batches of `BATCH`, through the same canonical form, scope,
//! filters and DUE; a `sitemapindex`'s sitemaps are offered as sitemaps one level down, up to
//! `MAX_LEVEL`. Every sitemap URL must pass the scope filter (at depth 0) before it is fetched.
//! A capped, malformed or foreign file is noted in the URL log and counted, never an error.

use crate::crawl::links::sitemap::{BATCH, SitemapPages};
use crate::crawl::links::{Source, redirect};
use crate::crawl::note::{Note, SitemapNote};
use crate::crawl::worker::{PageOutcome, WorkerContext};
use crate::fetch::client::{FetchError, Response};
use crate::frontier::Entry;
use crate::output::archive::PageRecord;
use crate::recrawl::{self, Generation};
use crate::schedule::politeness::{Fate, Reply};
use crate::schedule::robots::RobotsRules;
use crate::url::normalize::canonicalize;
use crate::url::sitemap::{self, Kind};
use anyhow::Result;
use std::sync::atomic::Ordering;
use url::Url;

/// Sitemaps are read down to this nesting level: robots.txt's are level 0, an index's children
/// one more. The protocol has one level of index; a few sites nest them, and a cycle of
/// indexes ends here (the DUE already stops a sitemap being read twice).
pub const MAX_LEVEL: u32 = 3;

impl WorkerContext<'_> {
    /// Offers the sitemaps a robots.txt leads to (see `Sources::of_host`).
    pub(super) fn offer_robots_sitemaps(
        &self,
        robots_url: &str,
        rules: &RobotsRules,
    ) -> Result<()> {
        let Some(sources) = &self.config.sitemaps else {
            return Ok(());
        };
        let origin = robots_url.strip_suffix("/robots.txt").unwrap_or(robots_url);
        let found = sources.of_host(origin, rules);
        self.offer_sitemaps(found.into_iter().map(|url| (url, 0, 0)))
    }

    /// Offers sitemaps `(url, level, redirects)` to the DUE, those in scope (and, with
    /// `--shard`, of this shard's hosts).
    fn offer_sitemaps(&self, found: impl Iterator<Item = (Url, u32, u32)>) -> Result<()> {
        let mut wanted = Vec::new();
        for (url, level, redirects) in found {
            let url = canonicalize(url);
            match self.config.filter.check(&url, 0) {
                // With --shard, another shard's host's sitemaps are that shard's to read (from
                // its own robots.txt and /sitemap.xml): they are not sent.
                Ok(())
                    if self
                        .config
                        .exchange
                        .as_ref()
                        .is_some_and(|x| !x.owns(url.as_str())) => {}
                Ok(()) => {
                    let entry = Entry::sitemap(url.into(), level, redirects);
                    wanted.push((entry.key(), entry));
                }
                Err(reason) => {
                    self.counters.filtered[reason as usize].fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        self.due.offer(wanted)
    }

    /// Fetches and reads one sitemap (`entry.sitemap` is its level) on this thread.
    pub(super) fn crawl_sitemap(&self, host: usize, entry: &Entry) -> Result<PageOutcome> {
        self.sitemap_asked();
        self.sitemap_answered(host, entry, self.fetcher.get(&entry.url))
    }

    /// A sitemap is asked for (by this thread or through the reactor): counted.
    pub(super) fn sitemap_asked(&self) {
        self.counters
            .sitemaps
            .fetched
            .fetch_add(1, Ordering::Relaxed);
    }

    /// A sitemap's answer, `fetched`, however it was fetched: the page steps of `crawl_page`
    /// without the page's own bookkeeping, then the sitemap read and what it lists offered.
    pub(super) fn sitemap_answered(
        &self,
        host: usize,
        entry: &Entry,
        fetched: Result<Response, FetchError>,
    ) -> Result<PageOutcome> {
        let level = entry.sitemap.unwrap_or(0);
        let response = match fetched {
            Ok(response) => response,
            Err(e) => {
                self.log_error(&e, entry.depth, &entry.url, &Note::Error(e.kind));
                // No answer counts towards its host's failures in a row (not asked again).
                if e.kind.is_connection_level() {
                    let fate = self
                        .dispatcher
                        .page_failed(host, entry, Reply::took(e.elapsed));
                    if fate == Fate::HostUnreachable {
                        return Ok(PageOutcome::PutBack);
                    }
                } else {
                    self.dispatcher.host_free(host, e.elapsed);
                }
                self.dispatcher.entry_done(entry.key())?;
                return Ok(PageOutcome::Done);
            }
        };
        let response = match self.unless_retried(entry, response)? {
            Ok(response) => response,
            Err(retry) => return Ok(retry),
        };
        // A recrawl holds the host until the sitemap is read: the lastmods it lists are then
        // known before the host's next page is asked for. A first crawl frees it at once.
        let hold = self.config.generation == Generation::Recrawl;
        if !hold {
            self.dispatcher.host_free(host, response.elapsed);
        }
        let mut note = SitemapNote::Read;
        match Source::of(&response, true) {
            // A sitemap's redirect leads to a sitemap at the same level.
            Some(Source::Redirect) => {
                note = SitemapNote::Redirect;
                if let Ok(base) = Url::parse(&entry.url)
                    && let Ok(target) = redirect::target(&response, &base, entry.redirects)
                {
                    self.offer_sitemaps(std::iter::once((target, level, entry.redirects + 1)))?;
                }
            }
            Some(Source::Sitemap) => {
                note = self.read_sitemap(entry, level, &response.body)?;
                if response.truncated {
                    note = SitemapNote::Truncated;
                }
            }
            // Not asked for as a sitemap: `Source::of` gives a sitemap's 2xx as `Sitemap`.
            Some(Source::Html | Source::Css | Source::Unread) | None => {}
        }
        if hold {
            self.dispatcher.host_free(host, response.elapsed);
        }
        self.log_response(&response, entry.depth, &entry.url, &Note::Sitemap(note));
        let (digest, block_sha1) = self.page_digests(&response);
        if (200..300).contains(&response.status) {
            self.record_fetched(entry, recrawl::capture(None, &response, &digest))?;
        }
        let page = PageRecord {
            key: entry.key(),
            payload_digest: digest,
            block_sha1,
            revisit: None,
            text: None,
        };
        self.archive(&entry.url, response, Some(page))?;
        Ok(PageOutcome::Done)
    }

    /// Reads a sitemap body, offering what it lists as it goes; says how it went.
    fn read_sitemap(&self, entry: &Entry, level: u32, body: &[u8]) -> Result<SitemapNote> {
        let counters = &self.counters.sitemaps;
        let base = Url::parse(&entry.url).ok();
        let mut pages = SitemapPages::default();
        let mut children: Vec<(Url, u32, u32)> = Vec::new();
        let mut too_deep = 0u64;
        let mut failed = None;
        let read = sitemap::read(body, &mut |kind, found| {
            let Some(url) = base.as_ref().and_then(|b| b.join(&found.loc).ok()) else {
                return;
            };
            if failed.is_some() {
                return;
            }
            match kind {
                Kind::UrlSet | Kind::Text => {
                    // Canonical once: the lastmod's key and the link (`accept` leaves it as is).
                    let url = canonicalize(url);
                    if let Some(lastmod) = &found.lastmod
                        && self.config.generation == Generation::Recrawl
                    {
                        let page = Entry::new(url.as_str().to_owned(), 1, 0);
                        self.lastmods.note(page.key(), lastmod);
                    }
                    if let Some(batch) = pages.push(url) {
                        counters
                            .urls
                            .fetch_add(batch.urls.len() as u64, Ordering::Relaxed);
                        failed = self.offer(batch, None).err();
                    }
                }
                Kind::Index if level >= MAX_LEVEL => too_deep += 1,
                Kind::Index => {
                    children.push((url, level + 1, 0));
                    if children.len() >= BATCH {
                        counters
                            .listed_sitemaps
                            .fetch_add(children.len() as u64, Ordering::Relaxed);
                        let batch = std::mem::take(&mut children);
                        failed = self.offer_sitemaps(batch.into_iter()).err();
                    }
                }
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        let pages = pages.rest();
        counters
            .urls
            .fetch_add(pages.urls.len() as u64, Ordering::Relaxed);
        counters
            .listed_sitemaps
            .fetch_add(children.len() as u64, Ordering::Relaxed);
        self.offer(pages, None)?;
        self.offer_sitemaps(children.into_iter())?;
        counters.too_deep.fetch_add(too_deep, Ordering::Relaxed);
        Ok(if read.kind.is_none() {
            counters.malformed.fetch_add(1, Ordering::Relaxed);
            SitemapNote::NotASitemap
        } else if read.malformed {
            counters.malformed.fetch_add(1, Ordering::Relaxed);
            SitemapNote::Malformed
        } else if read.capped {
            counters.capped.fetch_add(1, Ordering::Relaxed);
            SitemapNote::Capped
        } else if too_deep > 0 {
            SitemapNote::TooDeep
        } else {
            SitemapNote::Read
        })
    }
}
