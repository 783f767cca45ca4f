//! Link sources: where the URLs a response leads to come from, and the one shape they all
//! take (`Links`), which `WorkerContext::offer` canonicalizes, filters, writes to `links.tsv` and
//! offers to the DUE.
//!
//! The sources are a closed set (`Source`), one file each, picked from the response's kind by
//! `Source::of`: a 3xx's `Location` (`redirect`), a 2xx HTML page's links (`html`), a 2xx
//! stylesheet's `url()`s and `@import`s (`css`), a 2xx sitemap's listed pages (`sitemap`).
//! `WorkerContext::discover` (a page) and `WorkerContext::sitemap_answered` (a sitemap) match on
//! it, every variant named, so a new source is an arm the compiler asks for in each.
//!
//! Invariants: a source makes no copy of a link and no allocation per link (`Links` keeps the
//! extractor's own lists; this path runs for every page); it neither canonicalizes nor filters
//! (`crawl::offer` does, once per distinct URL); and page-level robots directives
//! (`X-Robots-Tag`, and for HTML `<meta name="robots">` and `rel="nofollow"`) are obeyed by
//! every 2xx page source unless `--ignore-page-robots`.
//!
//! Page requisites (`--requisites`): a page's links say which are what it needs to render
//! (`Links::requisite`), and a stylesheet's are all requisites; the filter lets them one hop
//! past `--max-depth` (a stylesheet's a few more: `normalize::STYLESHEET_HOPS`) and, with
//! `any`, outside the scope. A response that was wanted only as a requisite
//! (`Filter::fetched_as_requisite`) is noted `requisite` in the URL log, and the links of an
//! HTML one are not followed.

pub(super) mod css;
pub(super) mod html;
pub(super) mod redirect;
pub mod sitemap;

use crate::crawl::counters::Counters;
use crate::crawl::note::Note;
use crate::fetch::client::Response;
use crate::frontier::focus::Focus;
use crate::url::directives::Directives;
use crate::url::extract::PageLink;
use crate::url::minhash::NearDuplicates;
use crate::url::normalize::LinkKind;
use std::sync::atomic::Ordering;

/// What the link sources read besides the page: the options they obey, the crawl's counters
/// and the near-duplicate index (`--near-duplicates`). Not the worker's whole context:
/// a source reads a page and counts what it saw; it fetches, offers and writes nothing.
pub(in crate::crawl) struct LinkReader<'a> {
    /// The robots token page-level directives are read for (the user agent's product).
    pub robots_token: &'a str,
    /// Page-level robots directives obeyed (not `--ignore-page-robots`).
    pub obey_page_robots: bool,
    pub near_duplicates: NearDuplicates,
    /// `--focus`: whether a page matches its topic.
    pub focus: Option<&'a Focus>,
    pub counters: &'a Counters,
    pub near_dup_index: Option<&'a crate::seen::neardup::NearDupIndex>,
}

/// URLs found together (a page's links, a Location header's target, a sitemap's pages), at
/// one depth and redirect count, not yet canonicalized or filtered. Each stays a parsed `Url`
/// (or text already canonical: `normalize::join_into`) until then, so each link is parsed once
/// at most; a page's links are the extractor's own list, not copied into another.
#[derive(Default)]
pub(in crate::crawl) struct Links {
    /// The canonical text `urls` point into (`PageLinks::text`).
    pub text: String,
    pub urls: Vec<PageLink>,
    /// A page's links as indices into `urls` (`PageLinks::order`); `None`: `urls` in turn.
    pub order: Option<Vec<u32>>,
    pub depth: u32,
    pub redirects: u32,
    /// For each of `urls`, whether it is a requisite, filtered as a link of `requisite_kind`
    /// (`crawl::offer`); empty: none is.
    pub requisite: Vec<bool>,
    /// `Requisite` for a page's, `Stylesheet` for a stylesheet's (`Hyperlink`: none is).
    pub requisite_kind: LinkKind,
}

/// Where a response's links come from. A new source is a variant, its file, its arm in
/// `Source::of` and in the matches on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::crawl) enum Source {
    /// A 3xx other than 304: its `Location` (`redirect`).
    Redirect,
    /// A 2xx HTML page whose body was read: its links (`html`).
    Html,
    /// A 2xx `text/css` body that was read: its `url()`s and `@import`s (`css`).
    Css,
    /// A 2xx fetched as a sitemap: the pages it lists (`sitemap`; `crawl::sitemaps` reads it).
    Sitemap,
    /// A 2xx page whose body is not read for links (another type, or not fetched: `--max-body`,
    /// `--reject-type`): only its `X-Robots-Tag` counts (`WorkerContext::unread`).
    Unread,
}

impl Source {
    /// The source of `response`'s links (`sitemap`: it was fetched as a sitemap), or `None` when
    /// it has none (1xx, 304, 4xx, 5xx).
    pub fn of(response: &Response, sitemap: bool) -> Option<Source> {
        match response.status {
            304 => None,
            300..400 => Some(Source::Redirect),
            200..300 if sitemap => Some(Source::Sitemap),
            200..300 if response.skipped.is_none() && response.is_html() => Some(Source::Html),
            200..300 if response.skipped.is_none() && css::is_stylesheet(response) => {
                Some(Source::Css)
            }
            200..300 => Some(Source::Unread),
            _ => None,
        }
    }
}

/// What a page's response led to: URLs to offer, the page they are links of (and whether it
/// matched `--focus`; `None` for a redirect, or a page with no links read), and the note so far.
pub(in crate::crawl) struct Discovered {
    pub links: Links,
    pub from: Option<bool>,
    pub note: Note,
}

impl Discovered {
    /// No links, nothing to note.
    pub fn nothing() -> Discovered {
        Discovered {
            links: Links::default(),
            from: None,
            note: Note::None,
        }
    }
}

impl LinkReader<'_> {
    /// A 2xx page whose links are not read (`Source::Unread`): its `X-Robots-Tag` is noted, and
    /// only a `noindex` counts (there are no links for a `nofollow` to keep).
    pub(in crate::crawl) fn unread(&self, response: &Response) -> Discovered {
        let directives = self.header_directives(response);
        let noindex = Directives {
            nofollow: false,
            ..directives
        };
        self.obey(noindex, 0);
        Discovered {
            note: Note::PageRobots(directives),
            ..Discovered::nothing()
        }
    }

    /// The page-level robots directives of a response's `X-Robots-Tag` headers.
    fn header_directives(&self, response: &Response) -> Directives {
        let mut directives = Directives::default();
        for (_, value) in response
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("x-robots-tag"))
        {
            directives.read_header(value, self.robots_token);
        }
        directives
    }

    /// Counts what a page's directives (and its `rel_nofollow` links) keep from being followed,
    /// unless `--ignore-page-robots`, and returns its note (the directives, obeyed or not).
    fn obey(&self, directives: Directives, rel_nofollow: usize) -> Note {
        if self.obey_page_robots {
            let c = self.counters;
            if directives.nofollow {
                c.nofollow_pages.fetch_add(1, Ordering::Relaxed);
            } else {
                c.nofollow_links
                    .fetch_add(rel_nofollow as u64, Ordering::Relaxed);
            }
            if directives.noindex {
                c.noindex_pages.fetch_add(1, Ordering::Relaxed);
            }
        }
        Note::PageRobots(directives)
    }
}
