//! robots.txt rules for one host (RFC 9309), built on the `robotxt` crate.
//!
//! This module owns turning the outcome of fetching `/robots.txt` into a yes/no per URL and a
//! Crawl-delay. It does not fetch (redirects, timeouts and the per-host cache belong to the fetcher
//! and the scheduler) and it does not decide how long a "disallow everything" verdict lasts: it
//! says whether the verdict came from an unreachable file ([`RobotsRules::disallows_everything`]),
//! so the caller can retry later.
//!
//! The mapping from the fetch outcome follows RFC 9309 §2.3.1:
//! - 2xx: the body is parsed. Only its first 500 KiB count (`robotxt::BYTE_LIMIT`): the file is
//!   cut at the last line ending within that limit, so a rule cut in half never applies.
//! - 3xx reaching us means the fetcher gave up following redirects: "may be treated as
//!   unavailable", so everything is allowed.
//! - 4xx (including 401 and 403): "unavailable", everything is allowed.
//! - 5xx, any other status, or no response at all: "unreachable", everything is disallowed.
//!
//! Matching: the longest matching pattern wins, `Allow` over `Disallow` on a tie; `*` matches any
//! run of characters and a trailing `$` anchors the end. Groups are selected by exact,
//! case-insensitive comparison of the whole `User-Agent` value with our token, falling back to
//! `*`. `/robots.txt` itself is always allowed.

use std::sync::Arc;
use std::time::Duration;

use robotxt::{AccessResult, Robots};

/// The rules one host's robots.txt sets for our user-agent token. Cheap to clone.
#[derive(Debug, Clone)]
pub struct RobotsRules {
    robots: Arc<Robots>,
    /// The file could not be had (5xx, network error): everything is disallowed for now.
    unreachable: bool,
}

impl RobotsRules {
    /// The rules from a fetched robots.txt response (after any redirects were followed).
    pub fn from_response(user_agent_token: &str, status: u16, body: &[u8]) -> RobotsRules {
        let access = match status {
            200..=299 => AccessResult::Successful(body),
            300..=399 => AccessResult::TooManyRedirects,
            400..=499 => AccessResult::Unavailable,
            _ => AccessResult::Unreachable,
        };
        RobotsRules {
            robots: Arc::new(Robots::from_access(access, user_agent_token)),
            unreachable: matches!(access, AccessResult::Unreachable),
        }
    }

    /// robots.txt could not be fetched at all (connect error, timeout): everything is disallowed.
    pub fn unreachable(user_agent_token: &str) -> RobotsRules {
        RobotsRules {
            robots: Arc::new(Robots::from_access(
                AccessResult::Unreachable,
                user_agent_token,
            )),
            unreachable: true,
        }
    }

    /// No restrictions, e.g. when robots.txt is ignored by request.
    pub fn allow_all() -> RobotsRules {
        RobotsRules {
            robots: Arc::new(Robots::allow_all()),
            unreachable: false,
        }
    }

    /// Whether `path_and_query`, as it appears in the URL (`/a/b?x=1`), may be fetched. A fragment
    /// is ignored; percent-encoding is normalized on both sides before matching.
    pub fn is_allowed(&self, path_and_query: &str) -> bool {
        self.robots.is_allowed(path_and_query)
    }

    /// The smallest `Crawl-delay` of the groups that apply to us, if any. Not capped here: the
    /// scheduler bounds delays by its own maximum.
    pub fn crawl_delay(&self) -> Option<Duration> {
        self.robots.crawl_delay()
    }

    /// True when robots.txt was unreachable (5xx or no response), so that everything is
    /// disallowed until it is fetched again. A file that itself says `Disallow: /` is a
    /// deliberate answer and does not count.
    pub fn disallows_everything(&self) -> bool {
        self.unreachable
    }

    /// The `Sitemap` URLs the file lists, whatever the group.
    pub fn sitemaps(&self) -> &[url::Url] {
        self.robots.sitemaps()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UA: &str = "crawl";

    fn parse(txt: &str) -> RobotsRules {
        RobotsRules::from_response(UA, 200, txt.as_bytes())
    }

    #[test]
    fn longest_match_wins() {
        let r = parse("User-agent: *\nDisallow: /a\nAllow: /a/b\n");
        assert!(!r.is_allowed("/a"));
        assert!(!r.is_allowed("/a/c"));
        assert!(r.is_allowed("/a/b"));
        assert!(r.is_allowed("/a/b/deeper?x=1"));
        assert!(r.is_allowed("/other"));
        // The order in the file does not matter; on a tie, Allow wins.
        let r = parse("User-agent: *\nAllow: /a/b\nDisallow: /a\nDisallow: /t\nAllow: /t\n");
        assert!(r.is_allowed("/a/b"));
        assert!(!r.is_allowed("/a/x"));
        assert!(r.is_allowed("/t"));
        assert!(!r.disallows_everything());
    }

    #[test]
    fn group_for_our_token_beats_the_star_group() {
        let txt = "User-agent: *\nDisallow: /\n\nUser-agent: CRAWL\nDisallow: /private\n";
        let ours = RobotsRules::from_response(UA, 200, txt.as_bytes());
        assert!(ours.is_allowed("/public"));
        assert!(!ours.is_allowed("/private/x"));
        let other = RobotsRules::from_response("otherbot", 200, txt.as_bytes());
        assert!(!other.is_allowed("/public"));
    }

    #[test]
    fn groups_for_our_token_are_merged_and_shared_groups_apply() {
        let txt = "User-agent: a\nUser-agent: crawl\nDisallow: /one\n\n\
                   User-agent: b\nDisallow: /b-only\n\n\
                   User-agent: crawl\nDisallow: /two\n";
        let r = parse(txt);
        assert!(!r.is_allowed("/one"));
        assert!(!r.is_allowed("/two"));
        assert!(r.is_allowed("/b-only"));
    }

    #[test]
    fn user_agent_values_are_compared_whole() {
        // A robotxt quirk (Google's parser differs): a value with a version is not our token, so
        // the `*` group applies.
        let r = parse("User-agent: crawl/1.0\nDisallow: /\n\nUser-agent: *\nDisallow: /star\n");
        assert!(r.is_allowed("/x"));
        assert!(!r.is_allowed("/star"));
    }

    #[test]
    fn client_errors_allow_everything() {
        for status in [400, 401, 403, 404, 410, 429, 451] {
            let r = RobotsRules::from_response(UA, status, b"User-agent: *\nDisallow: /\n");
            assert!(r.is_allowed("/anything"), "{status}");
            assert!(!r.disallows_everything(), "{status}");
        }
    }

    #[test]
    fn server_errors_and_unreachable_disallow_everything() {
        let rules = [
            RobotsRules::from_response(UA, 500, b""),
            RobotsRules::from_response(UA, 503, b"User-agent: *\nAllow: /\n"),
            RobotsRules::from_response(UA, 999, b""),
            RobotsRules::from_response(UA, 100, b""),
            RobotsRules::unreachable(UA),
        ];
        for r in rules {
            assert!(!r.is_allowed("/"));
            assert!(!r.is_allowed("/page?q=1"));
            assert!(r.disallows_everything());
            // robotxt always allows robots.txt itself, so it can be fetched again.
            assert!(r.is_allowed("/robots.txt"));
        }
    }

    #[test]
    fn unfollowed_redirect_allows_everything() {
        let r = RobotsRules::from_response(UA, 301, b"");
        assert!(r.is_allowed("/x"));
        assert!(!r.disallows_everything());
    }

    #[test]
    fn disallow_root_in_the_file_is_not_unreachable() {
        let r = parse("User-agent: *\nDisallow: /\n");
        assert!(!r.is_allowed("/x"));
        assert!(!r.disallows_everything());
    }

    #[test]
    fn allow_all_allows_all() {
        let r = RobotsRules::allow_all();
        assert!(r.is_allowed("/"));
        assert!(r.is_allowed("/x?y"));
        assert_eq!(r.crawl_delay(), None);
        assert!(!r.disallows_everything());
    }

    #[test]
    fn crawl_delay() {
        let r = parse("User-agent: *\nCrawl-delay: 2.5\nDisallow: /x\n");
        assert_eq!(r.crawl_delay(), Some(Duration::from_millis(2500)));
        let r = parse("User-agent: crawl\nCrawl-delay: 7\n\nUser-agent: *\nCrawl-delay: 1\n");
        assert_eq!(r.crawl_delay(), Some(Duration::from_secs(7)));
        let r = parse("User-agent: *\nCrawl-delay: 10\nCrawl-delay: 3\n");
        assert_eq!(
            r.crawl_delay(),
            Some(Duration::from_secs(3)),
            "smallest wins"
        );
        for bad in ["-1", "soon", "inf", "NaN", "1e400"] {
            let r = parse(&format!("User-agent: *\nCrawl-delay: {bad}\n"));
            assert_eq!(r.crawl_delay(), None, "{bad}");
        }
        assert_eq!(parse("User-agent: *\nDisallow: /x\n").crawl_delay(), None);
    }

    #[test]
    fn wildcards() {
        let r = parse("User-agent: *\nDisallow: /*.php$\nDisallow: /private*/secret\n");
        assert!(!r.is_allowed("/index.php"));
        assert!(!r.is_allowed("/a/b.php"));
        assert!(r.is_allowed("/index.php?id=1"));
        assert!(r.is_allowed("/index.php5"));
        assert!(!r.is_allowed("/private-stuff/x/secret/y"));
        assert!(r.is_allowed("/private/public"));
        let r = parse("User-agent: *\nDisallow: /$\n");
        assert!(!r.is_allowed("/"));
        assert!(r.is_allowed("/page"));
    }

    #[test]
    fn query_fragment_and_percent_encoding() {
        let r = parse("User-agent: *\nDisallow: /search?q=\nDisallow: /caf%C3%A9\n");
        assert!(!r.is_allowed("/search?q=rust"));
        assert!(r.is_allowed("/search"));
        assert!(!r.is_allowed("/caf%c3%a9"));
        assert!(r.is_allowed("/page#/search?q="));
    }

    #[test]
    fn empty_body_allows_everything() {
        let r = parse("");
        assert!(r.is_allowed("/"));
        assert!(r.is_allowed("/anything"));
        assert!(!r.disallows_everything());
    }

    #[test]
    fn binary_garbage_does_not_panic_and_allows_everything() {
        // Lines that are not directives are ignored, so random bytes amount to an empty file.
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let garbage: Vec<u8> = (0..64 * 1024)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed.to_le_bytes()[0]
            })
            .collect();
        let r = RobotsRules::from_response(UA, 200, &garbage);
        assert!(r.is_allowed("/"));
        assert!(r.is_allowed("/x/y?z"));
        assert_eq!(r.crawl_delay(), None);
        // Garbage around valid lines does not hide them.
        let mut mixed = garbage.clone();
        mixed.extend_from_slice(b"\nUser-agent: *\nDisallow: /no\n");
        mixed.extend_from_slice(&garbage);
        assert!(!RobotsRules::from_response(UA, 200, &mixed).is_allowed("/no"));
    }

    #[test]
    fn only_the_first_500_kib_count() {
        // A 1 MiB file: the rule within the limit applies, the one beyond it does not.
        let mut txt = String::from("User-agent: *\nDisallow: /early\n");
        while txt.len() < 1024 * 1024 {
            txt.push_str("# padding padding padding padding padding padding padding\n");
        }
        txt.push_str("Disallow: /late\n");
        let r = parse(&txt);
        assert!(!r.is_allowed("/early"));
        assert!(r.is_allowed("/late"));
        // A line crossing the limit is dropped whole, not cut into a shorter rule.
        let mut txt = String::from("User-agent: *\n");
        txt.push_str(&"#".repeat(robotxt::BYTE_LIMIT - txt.len() - 12));
        txt.push_str("\nDisallow: /abcdefgh\n");
        assert!(txt.find("/abc").unwrap() < robotxt::BYTE_LIMIT);
        assert!(parse(&txt).is_allowed("/abc"));
    }

    #[test]
    fn huge_single_line_body_is_ignored() {
        // No line ending within the limit: nothing is parsed, so everything is allowed.
        let body = vec![b'x'; 1024 * 1024];
        let r = RobotsRules::from_response(UA, 200, &body);
        assert!(r.is_allowed("/"));
    }

    #[test]
    fn sitemaps_are_listed() {
        let r = parse("Sitemap: https://example.com/s.xml\nUser-agent: *\nSitemap: not a url\n");
        assert_eq!(r.sitemaps().len(), 1);
        assert_eq!(r.sitemaps()[0].as_str(), "https://example.com/s.xml");
    }

    #[test]
    fn clones_share_the_rules() {
        let r = parse("User-agent: *\nDisallow: /x\n");
        let c = r.clone();
        assert!(Arc::ptr_eq(&r.robots, &c.robots));
        assert!(!c.is_allowed("/x"));
    }
}
