//! `Source::Sitemap`: the pages a `urlset` or text sitemap lists, one link from it, taken as
//! `Links` a batch at a time while `crawl::sitemaps` reads the file (which also fetches it,
//! keeps a recrawl's `lastmod`s and offers an index's sitemaps), so a 50,000-URL sitemap is
//! never held as one list.

use crate::crawl::links::Links;
use crate::crawl::sitemaps::BATCH;
use crate::url::extract::PageLink;
use url::Url;

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
