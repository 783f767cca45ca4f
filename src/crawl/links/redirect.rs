//! `Source::Redirect`: a 3xx's `Location`, joined onto the URL that answered, is one link at
//! the same depth, one redirect further; a chain longer than `MAX_REDIRECTS` ends there. A
//! sitemap's redirect leads to a sitemap (`crawl::sitemaps`), through `target` as well.

use crate::crawl::links::{Discovered, Links};
use crate::crawl::note::Note;
use crate::fetch::client::Response;
use crate::frontier::Entry;
use crate::url::extract::PageLink;
use crate::url::normalize::canonicalize;
use url::Url;

/// A redirect chain longer than this is abandoned (its last target is not followed).
pub const MAX_REDIRECTS: u32 = 10;

/// The target of the redirect `response` to `base`, reached after `redirects` redirects, or
/// why it is not followed (`BadLocation`, `TooManyRedirects`).
pub(in crate::crawl) fn target(
    response: &Response,
    base: &Url,
    redirects: u32,
) -> Result<Url, Note> {
    let target = response
        .header("location")
        .and_then(|l| base.join(l.trim()).ok());
    match target {
        None => Err(Note::BadLocation),
        Some(_) if redirects >= MAX_REDIRECTS => Err(Note::TooManyRedirects),
        Some(target) => Ok(target),
    }
}

/// A page's redirect: its canonical target as its one link, and the note that names it.
pub(in crate::crawl) fn discovered(
    entry: &Entry,
    page_url: &Url,
    response: &Response,
) -> Discovered {
    match target(response, page_url, entry.redirects) {
        Err(note) => Discovered {
            note,
            ..Discovered::nothing()
        },
        Ok(target) => {
            let target = canonicalize(target);
            Discovered {
                note: Note::Redirect(target.to_string()),
                links: Links {
                    urls: vec![PageLink::Parsed(target)],
                    depth: entry.depth,
                    redirects: entry.redirects + 1,
                    ..Links::default()
                },
                from: None,
            }
        }
    }
}
