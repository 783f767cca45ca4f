//! Page-level robots directives: what `<meta name="robots">` and the `X-Robots-Tag` header say
//! about one page (the robots meta tag and X-Robots-Tag conventions, as Google documents them).
//!
//! Only the two directives a crawler can act on are kept: `nofollow` (the page's links are not
//! followed) and `noindex` (the page is noted in the URL log; it is still archived, since
//! archiving is not indexing). `none` means both; `all` and every other directive (`noarchive`,
//! `max-snippet:…`, `unavailable_after:…`) change nothing here. Directives only ever add up: a
//! page said `nofollow` once is `nofollow`, whatever else it says.
//!
//! The header has a scoped form, `X-Robots-Tag: TOKEN: directive, …`, which applies only to the
//! crawler whose robots token is `TOKEN`; an unscoped value applies to every crawler.

/// What a page asks of crawlers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Directives {
    /// Do not follow the page's links.
    pub nofollow: bool,
    /// Do not index the page.
    pub noindex: bool,
}

/// Directives whose value follows a colon: their name is not a crawler's token.
const VALUED: [&str; 4] = [
    "unavailable_after",
    "max-snippet",
    "max-image-preview",
    "max-video-preview",
];

impl Directives {
    /// No directive.
    pub const NONE: Directives = Directives {
        nofollow: false,
        noindex: false,
    };

    /// Adds a comma-separated list of directives (a meta tag's `content`).
    pub fn read_list(&mut self, list: &str) {
        for directive in list.split(',') {
            self.read_one(directive);
        }
    }

    fn read_one(&mut self, directive: &str) {
        let directive = directive.trim();
        if directive.eq_ignore_ascii_case("nofollow") {
            self.nofollow = true;
        } else if directive.eq_ignore_ascii_case("noindex") {
            self.noindex = true;
        } else if directive.eq_ignore_ascii_case("none") {
            self.nofollow = true;
            self.noindex = true;
        }
    }

    /// Adds one `X-Robots-Tag` header value, as read by the crawler whose robots token is
    /// `token`: `TOKEN: a, b` applies to that crawler only, and scopes the directives after it
    /// until the next `OTHER:` (so `a: nofollow, b: noindex` gives `a` only `nofollow`).
    pub fn read_header(&mut self, value: &str, token: &str) {
        let mut applies = true;
        for part in value.split(',') {
            let mut directive = part.trim();
            if let Some((name, rest)) = directive.split_once(':') {
                let name = name.trim();
                if !VALUED.iter().any(|v| v.eq_ignore_ascii_case(name)) {
                    applies = name.eq_ignore_ascii_case(token);
                    directive = rest;
                }
            }
            if applies {
                self.read_one(directive);
            }
        }
    }

    /// Both sets of directives, as one.
    pub fn union(self, other: Directives) -> Directives {
        Directives {
            nofollow: self.nofollow || other.nofollow,
            noindex: self.noindex || other.noindex,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(content: &str) -> Directives {
        let mut d = Directives::default();
        d.read_list(content);
        d
    }

    fn header(values: &[&str], token: &str) -> Directives {
        let mut d = Directives::default();
        for value in values {
            d.read_header(value, token);
        }
        d
    }

    const BOTH: Directives = Directives {
        nofollow: true,
        noindex: true,
    };
    const NOFOLLOW: Directives = Directives {
        nofollow: true,
        noindex: false,
    };
    const NOINDEX: Directives = Directives {
        nofollow: false,
        noindex: true,
    };

    #[test]
    fn meta_content_lists() {
        assert_eq!(list("noindex, nofollow"), BOTH);
        assert_eq!(list(" NoFollow "), NOFOLLOW);
        assert_eq!(list("noindex"), NOINDEX);
        assert_eq!(list("none"), BOTH);
        assert_eq!(list("all"), Directives::default());
        assert_eq!(list("index, follow, noarchive"), Directives::default());
        assert_eq!(list("max-snippet:-1,nofollow"), NOFOLLOW);
        assert_eq!(list(""), Directives::default());
        // Directives add up; a later `follow` does not undo `nofollow`.
        assert_eq!(list("nofollow, follow"), NOFOLLOW);
    }

    #[test]
    fn header_values_unscoped_and_scoped() {
        assert_eq!(header(&["noindex, nofollow"], "crawl"), BOTH);
        assert_eq!(header(&["crawl: nofollow"], "crawl"), NOFOLLOW);
        assert_eq!(header(&["CRAWL:none"], "crawl"), BOTH);
        assert_eq!(
            header(&["otherbot: nofollow"], "crawl"),
            Directives::default()
        );
        // A scope lasts until the next one.
        assert_eq!(
            header(&["otherbot: noindex, nofollow"], "crawl"),
            Directives::default()
        );
        assert_eq!(
            header(&["otherbot: nofollow, crawl: noindex"], "crawl"),
            NOINDEX
        );
        assert_eq!(
            header(&["crawl: noindex, otherbot: nofollow"], "crawl"),
            NOINDEX
        );
        // Valued directives are not scopes.
        assert_eq!(
            header(
                &["unavailable_after: 25 Jun 2010 15:00:00 PST, nofollow"],
                "crawl"
            ),
            NOFOLLOW
        );
        // Several headers add up.
        assert_eq!(
            header(
                &["noindex", "otherbot: nofollow", "crawl: nofollow"],
                "crawl"
            ),
            BOTH
        );
    }

    #[test]
    fn union_adds_up() {
        assert_eq!(NOINDEX.union(NOFOLLOW), BOTH);
        assert_eq!(Directives::default().union(NOINDEX), NOINDEX);
    }
}
