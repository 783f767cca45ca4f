//! `Source::Css`: a 2xx stylesheet's `url()`s and `@import`s (`url::extract::stylesheet_links`),
//! resolved against its own URL, one link further from the seeds. Every one is a requisite of
//! the page that led to the stylesheet (`LinkKind::Stylesheet`), whether the stylesheet was
//! fetched as one or found as a hyperlink: it is what the stylesheet needs to be applied. A
//! stylesheet's links are read even when it was fetched only as a requisite.
//!
//! A stylesheet has no robots directives of its own but its `X-Robots-Tag`, obeyed as a page's
//! (`nofollow`: no link offered). The body is read within `--max-body` as a page's is, in one
//! pass (`url::css`).

use crate::crawl::links::LinkReader;
use crate::crawl::links::{Discovered, Links};
use crate::crawl::note::Note;
use crate::crawl::page::Page;
use crate::fetch::client::Response;
use crate::url::extract::stylesheet_links;
use crate::url::normalize::LinkKind;
use std::sync::atomic::Ordering;

/// Links read from one stylesheet at most (as from one page: `links::html`).
const MAX_LINKS_PER_STYLESHEET: usize = 20_000;

/// Whether `response` is a stylesheet: its media type is `text/css` (nothing else is read as
/// CSS: a body without a type is not sniffed, as browsers do not apply one either).
pub(super) fn is_stylesheet(response: &Response) -> bool {
    is_css_type(response.header("content-type"))
}

/// Whether a `Content-Type` value names `text/css`, parameters aside.
fn is_css_type(content_type: Option<&str>) -> bool {
    let media_type = content_type.map(|v| v.split(';').next().unwrap_or("").trim());
    media_type.is_some_and(|t| t.eq_ignore_ascii_case("text/css"))
}

impl LinkReader<'_> {
    /// The links of a stylesheet, one link further.
    pub(in crate::crawl) fn css_links(&self, page: &Page) -> Discovered {
        let (entry, response) = (page.entry, &page.response);
        let directives = self.header_directives(response);
        let links = stylesheet_links(
            page.body(),
            &page.url,
            response.charset(),
            MAX_LINKS_PER_STYLESHEET,
        );
        self.counters
            .links
            .fetch_add(links.order.len() as u64, Ordering::Relaxed);
        let note = match links.truncated {
            true => Note::LinksCapped,
            false => Note::None,
        }
        .merge(self.obey(directives, 0));
        let mut order = links.order;
        if self.obey_page_robots && directives.nofollow {
            order.clear();
        }
        Discovered {
            links: Links {
                text: links.text,
                requisite: links.requisite,
                urls: links.distinct,
                order: Some(order),
                depth: entry.depth + 1,
                redirects: 0,
                requisite_kind: LinkKind::Stylesheet,
            },
            from: Some(false),
            note,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_text_css_is_a_stylesheet() {
        assert!(is_css_type(Some("text/css")));
        assert!(is_css_type(Some("Text/CSS ; charset=utf-8")));
        assert!(!is_css_type(Some("text/plain")));
        assert!(!is_css_type(Some("")));
        assert!(!is_css_type(None));
    }
}
