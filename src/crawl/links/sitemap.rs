//! `Source::Sitemap`: the pages a `urlset` or text sitemap lists, one link from it, taken as
//! `Links` a batch at a time while `crawl::sitemaps` reads the file (which also fetches it,
//! keeps a recrawl's `lastmod`s and offers an index's sitemaps), so a 50,000-URL sitemap is
//! never held as one list.

use crate::crawl::links::Links;
use crate::schedule::robots::RobotsRules;
use crate::url::extract::PageLink;
use rustc_hash::FxHashSet;
use url::Url;

/// URLs from a sitemap are offered to the DUE this many at a time, so a 50,000-URL sitemap is
/// never held as one list.
pub(in crate::crawl) const BATCH: usize = 1024;

/// The listed pages not yet handed on.
#[derive(Default)]
pub(in crate::crawl) struct SitemapPages {
    urls: Vec<PageLink>,
}

impl SitemapPages {
    /// Adds a listed page (canonical already: `crawl::offer` takes it as it is); a full batch
    /// (`BATCH`) comes back to be offered.
    pub fn push(&mut self, url: Url) -> Option<Links> {
        self.urls.push(PageLink::Parsed(url));
        (self.urls.len() >= BATCH).then(|| links(std::mem::take(&mut self.urls)))
    }

    /// The pages left when the file ends (maybe none).
    pub fn rest(self) -> Links {
        links(self.urls)
    }
}

/// A sitemap's pages are one link from it.
fn links(urls: Vec<PageLink>) -> Links {
    Links {
        urls,
        depth: 1,
        redirects: 0,
        ..Links::default()
    }
}

/// Where sitemaps come from, when they are read at all (`--no-sitemaps` makes this `None`).
pub struct Sources {
    /// Origins of the seeds (`scheme://host[:port]`): these get `/sitemap.xml` when their
    /// robots.txt names no sitemap.
    seed_origins: FxHashSet<String>,
}

impl Sources {
    pub fn new(seeds: &[Url]) -> Sources {
        Sources {
            seed_origins: seeds
                .iter()
                .map(|s| s.origin().ascii_serialization())
                .collect(),
        }
    }

    /// The sitemaps to read for a host whose robots.txt (at `ORIGIN/robots.txt`) gave `rules`.
    pub fn of_host(&self, origin: &str, rules: &RobotsRules) -> Vec<Url> {
        if rules.disallows_everything() {
            return Vec::new();
        }
        let listed = rules.sitemaps();
        if !listed.is_empty() {
            return listed.to_vec();
        }
        match self.seed_origins.contains(origin) {
            true => Url::parse(&format!("{origin}/sitemap.xml"))
                .into_iter()
                .collect(),
            false => Vec::new(),
        }
    }
}
