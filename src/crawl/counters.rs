//! The crawl's counters: atomics the workers, the link sources and the sitemaps add to, and
//! the progress line and `summary.json` read. A file of their own, so that every stage of
//! the crawl can count without naming the configuration or `run`.

use crate::recrawl::Outcome;
use crate::url::normalize::Rejection;
use std::sync::atomic::AtomicU64;

/// Counters shared by the workers.
#[derive(Default)]
pub struct Counters {
    /// Pages asked for (or refused), each once however often it was retried.
    pub pages: AtomicU64,
    pub bytes: AtomicU64,
    /// Pages whose last attempt got no response, but for the crawler's own refusals
    /// (`ErrorKind::is_crawl_failure`): the failures of `--max-error-ratio`.
    pub failed: AtomicU64,
    /// Attempts put back to be asked for again (429/503, 502/504, no answer).
    pub retried: AtomicU64,
    /// By status class: [no response, 1xx, 2xx, 3xx, 4xx, 5xx].
    pub by_class: [AtomicU64; 6],
    pub robots_fetches: AtomicU64,
    pub links: AtomicU64,
    pub truncated: AtomicU64,
    /// Bodies not read: their type (`--accept-type`, `--reject-type`) or their length.
    pub type_rejected: AtomicU64,
    pub too_long: AtomicU64,
    /// Fetches refused because of the address they would connect to (`fetch::private`).
    pub private_refused: AtomicU64,
    /// Pages whose links were not followed (`nofollow` in a meta tag or `X-Robots-Tag`).
    pub nofollow_pages: AtomicU64,
    /// Links not followed for their own `rel="nofollow"` (on pages that were followed).
    pub nofollow_links: AtomicU64,
    /// Pages that asked not to be indexed (noted in the URL log, archived all the same).
    pub noindex_pages: AtomicU64,
    /// HTML pages noted `near-duplicate` (`url::minhash`).
    pub near_duplicates: AtomicU64,
    /// Pages handed to the worker that received the page before, its host's or a ready host's
    /// (`Dispatcher::host_free_or_next`), no other worker woken for them.
    pub pages_ahead: AtomicU64,
    /// Of those, the pages whose request went before the previous page was processed
    /// (`Fetcher::send_ahead`, on its host's kept connection).
    pub requests_ahead: AtomicU64,
    /// By `Rejection` (in `Rejection::ALL` order).
    pub filtered: [AtomicU64; Rejection::ALL.len()],
    /// During a recrawl, pages by `Outcome` (in `Outcome::ALL` order).
    pub outcomes: [AtomicU64; Outcome::ALL.len()],
    /// Sitemap fetches and what they listed.
    pub sitemaps: SitemapCounters,
    /// Workers started (with an elastic pool, the most that ran), and the most that could.
    pub workers: AtomicU64,
    pub max_workers: AtomicU64,
    /// Connections closed for what their servers did: the fetcher's, once the workers end.
    pub connections: crate::fetch::pool::ConnectionEvents,
}

/// The crawl's sitemap counters (`sitemaps` in summary.json).
#[derive(Default)]
pub struct SitemapCounters {
    /// Sitemap fetches (answered or not).
    pub fetched: AtomicU64,
    /// Page URLs read from `urlset` and text sitemaps (before the filter and the DUE).
    pub urls: AtomicU64,
    /// Sitemaps read from `sitemapindex` files (before the filter and the DUE).
    pub listed_sitemaps: AtomicU64,
    /// Files over the protocol's limits (50,000 entries, 50 MiB): read up to the limit.
    pub capped: AtomicU64,
    /// Files that broke off (bad XML, a cut gzip stream), or were no sitemap at all.
    pub malformed: AtomicU64,
    /// Index entries not read for being nested deeper than `MAX_LEVEL`.
    pub too_deep: AtomicU64,
}
