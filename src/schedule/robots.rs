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
//! Reading the body (`normalize` prepares it for `robotxt`):
//! - Lines end at CR LF, a lone CR, a lone LF or a NUL; a UTF-8 byte-order mark at the start is
//!   skipped. Lines have no length limit (a 20 KB line is one line, and the next line parses).
//! - A line is a record when it starts (after spaces) with a key, case-insensitively, followed by
//!   a colon or by whitespace: `Disallow /x` counts as `Disallow: /x`. RFC 9309's grammar wants
//!   the colon; Google's parser accepts the space too, and so do we (a site owner who wrote it
//!   meant the rule). Common misspellings (`Dissallow`, `User agent`) are accepted. `#` starts a
//!   comment.
//! - Anything else is ignored, markup included: an HTML page served as robots.txt (a soft 404)
//!   allows everything unless a line of it is itself a record. `<p>Disallow: /</p>` is not (its
//!   key would be `<p>Disallow`, which Google's parser ignores too); a bare `Disallow: /` line
//!   inside a `<pre>` is, as it is for Google.
//!
//! Matching: groups are selected by our user-agent token, case-insensitively, falling back to `*`.
//! A `User-Agent` value counts up to its first whitespace, and of that word the part before the
//! first `/`: `FooBot Bar`, `FooBot/1.0` and `foobot` all head a group for the token `FooBot`
//! (RFC 9309 product tokens have neither spaces nor `/`, but site owners write them; Google reads
//! such values by their first word too, and ignoring the group would fail open). Within the
//! groups that apply, the longest matching pattern wins, `Allow` over `Disallow` on a tie; `*`
//! matches any run of characters and a trailing `$` anchors the end; percent-encoding is
//! normalized on both sides (RFC 9309 §2.2.2). `/robots.txt` itself is always allowed.

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
        let normalized = match status {
            200..=299 => normalize(body),
            _ => Vec::new(),
        };
        let access = match status {
            200..=299 => AccessResult::Successful(&normalized),
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

/// The keys `robotxt` reads as `User-Agent` (its spellings, in its order).
const USER_AGENT_KEYS: [&[u8]; 3] = [b"user-agent", b"user agent", b"useragent"];

/// The body as `robotxt` should read it: the first 500 KiB cut at a line ending (as `robotxt`
/// would cut the original), without a byte-order mark, one record a line joined by LF, and every
/// `User-Agent` value rewritten to its product token (see the module doc). The result is never
/// longer than the cut input, so `robotxt`'s own cut leaves it whole.
fn normalize(body: &[u8]) -> Vec<u8> {
    let body = match body.get(..=robotxt::BYTE_LIMIT) {
        // Longer than the limit: keep up to the last line ending within it (a line ending right
        // at the limit still completes the last line), nothing if there is none.
        Some(window) => {
            let end = window
                .iter()
                .rposition(|b| matches!(b, b'\n' | b'\r' | b'\0'));
            &body[..end.unwrap_or(0)]
        }
        None => body,
    };
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let mut out = Vec::with_capacity(body.len());
    let mut rest = body;
    loop {
        let end = rest
            .iter()
            .position(|b| matches!(b, b'\n' | b'\r' | b'\0'))
            .unwrap_or(rest.len());
        let line = &rest[..end];
        match user_agent_value(line) {
            // The key and separator stay as written (the value is a suffix of the line), so a
            // line never grows.
            Some(value) => {
                out.extend_from_slice(&line[..line.len() - value.len()]);
                out.extend_from_slice(product_token(value));
            }
            None => out.extend_from_slice(line),
        }
        // CR LF is one line ending, so it adds no empty line (empty lines mean nothing anyway).
        let ending = match rest.get(end..end + 2) {
            Some(b"\r\n") => 2,
            _ => 1,
        };
        match rest.get(end + ending..) {
            Some(next) if end < rest.len() => {
                out.push(b'\n');
                rest = next;
            }
            _ => break,
        }
    }
    out
}

/// The value of a `User-Agent` line (a suffix of it), read as `robotxt` reads keys: after leading
/// spaces and tabs a key spelling (any case), then a colon (after optional spaces) or at least one
/// space.
fn user_agent_value(line: &[u8]) -> Option<&[u8]> {
    let is_space = |b: &u8| *b == b' ' || *b == b'\t';
    let trim = |s: &[u8]| -> usize { s.iter().take_while(|b| is_space(b)).count() };
    let line = &line[trim(line)..];
    let key = USER_AGENT_KEYS.iter().find(|key| {
        line.get(..key.len())
            .is_some_and(|k| k.eq_ignore_ascii_case(key))
    })?;
    let rest = &line[key.len()..];
    let after_spaces = &rest[trim(rest)..];
    match after_spaces.strip_prefix(b":") {
        Some(value) => Some(value),
        None if after_spaces.len() < rest.len() => Some(after_spaces),
        None => None,
    }
}

/// The product token a `User-Agent` value names: its first word (comment left out), and of that
/// the part before the first `/`. `FooBot Bar` and `FooBot/1.0` are `FooBot`; `* x` is `*`.
fn product_token(value: &[u8]) -> &[u8] {
    let value = value.split(|b| *b == b'#').next().unwrap_or_default();
    let value = value.trim_ascii_start();
    let word = value
        .split(|b| b.is_ascii_whitespace())
        .next()
        .unwrap_or_default();
    word.split(|b| *b == b'/').next().unwrap_or_default()
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

    /// The rules for the token `FooBot`, and for `crawl`, from `txt`.
    fn parse_as(token: &str, txt: &str) -> RobotsRules {
        RobotsRules::from_response(token, 200, txt.as_bytes())
    }

    #[test]
    fn user_agent_value_with_a_space_counts_up_to_the_space() {
        let txt = "User-agent: FooBot Bar\nDisallow: /private\n\nUser-agent: *\nDisallow: /star\n";
        let r = parse_as("FooBot", txt);
        assert!(!r.is_allowed("/private/x"), "the FooBot group applies");
        assert!(r.is_allowed("/star"), "so the * group does not");
        // The same without a `*` group: the rules must not fall away to nothing.
        let r = parse_as(
            "crawl",
            "User-agent: crawl extra words\nDisallow: /private/\n",
        );
        assert!(!r.is_allowed("/private/a"));
        assert!(r.is_allowed("/public"));
        // Only the first word counts, and it must be the whole token.
        for other in ["Bar FooBot", "FooBotBar", "Foo Bot"] {
            let r = parse_as("FooBot", &format!("User-agent: {other}\nDisallow: /\n"));
            assert!(r.is_allowed("/x"), "{other:?} is not FooBot");
        }
        // The misspelled keys robotxt accepts are read the same way.
        for line in [
            "useragent crawl x",
            "User agent: crawl x",
            "  USER-AGENT :crawl x # us",
        ] {
            let r = parse(&format!(
                "{line}\nDisallow: /m\n\nUser-agent: *\nDisallow: /\n"
            ));
            assert!(!r.is_allowed("/m") && r.is_allowed("/a"), "{line:?}");
        }
        // Google's reading of `* text`: still the group for everyone.
        let r = parse_as("FooBot", "User-agent: * everyone else\nDisallow: /all\n");
        assert!(!r.is_allowed("/all"));
    }

    #[test]
    fn user_agent_value_with_a_version_counts_before_the_slash() {
        let txt = "User-agent: FooBot/1.0\nDisallow: /\n\nUser-agent: *\nDisallow: /star\n";
        let r = parse_as("FooBot", txt);
        assert!(!r.is_allowed("/x"));
        let r = parse_as(
            "crawl",
            "User-agent: crawl/0.1 (+https://example.com/bot)\nDisallow: /v\n",
        );
        assert!(!r.is_allowed("/v"));
        // A slash inside the first word does not make a prefix match: `FooBotX/1` is another bot.
        let r = parse_as("FooBot", "User-agent: FooBotX/1.0\nDisallow: /\n");
        assert!(r.is_allowed("/x"));
    }

    #[test]
    fn user_agent_matching_ignores_case() {
        for value in ["FOOBOT", "foobot Bar", "fOoBoT/2.1", "FooBot"] {
            let txt = format!("User-agent: *\nDisallow: /\n\nuser-AGENT: {value}\nDisallow: /f\n");
            let r = parse_as("FooBot", &txt);
            assert!(r.is_allowed("/x"), "{value:?} heads our group");
            assert!(!r.is_allowed("/f"), "{value:?} heads our group");
        }
        // And the token's own case does not matter either.
        let r = parse_as("FOOBOT", "User-agent: foobot extra\nDisallow: /f\n");
        assert!(!r.is_allowed("/f"));
    }

    #[test]
    fn cr_only_line_endings() {
        let txt = "User-agent: *\rDisallow: /a\rUser-agent: crawl x\rDisallow: /b\rAllow: /b/ok\r";
        let r = parse(txt);
        assert!(r.is_allowed("/a"), "our group replaces the * group");
        assert!(!r.is_allowed("/b"));
        assert!(r.is_allowed("/b/ok"));
    }

    #[test]
    fn crlf_line_endings() {
        let txt = "User-agent: crawl/1.0\r\nDisallow: /b\r\n\r\nUser-agent: *\r\nDisallow: /\r\n";
        let r = parse(txt);
        assert!(r.is_allowed("/a"));
        assert!(!r.is_allowed("/b"));
        // Mixed endings in one file, and a last line without one.
        let r = parse("User-agent: crawl\r\nDisallow: /one\nDisallow: /two\rDisallow: /three");
        for path in ["/one", "/two", "/three"] {
            assert!(!r.is_allowed(path), "{path}");
        }
        assert!(r.is_allowed("/four"));
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        let r =
            parse("\u{feff}User-agent: crawl bot\nDisallow: /b\n\nUser-agent: *\nDisallow: /\n");
        assert!(!r.is_allowed("/b"));
        assert!(r.is_allowed("/a"), "the first line headed our group");
        // Only at the start: elsewhere the mark is part of the line, which is then no record.
        let r = parse("User-agent: *\n\u{feff}Disallow: /mid\nDisallow: /end\n");
        assert!(r.is_allowed("/mid"));
        assert!(!r.is_allowed("/end"));
    }

    #[test]
    fn a_line_over_1000_bytes_does_not_break_the_lines_after_it() {
        let long_pattern = format!("/long/{}", "x".repeat(1500));
        let txt = format!(
            "User-agent: crawl {}\n# {}\nDisallow: {long_pattern}\r\nDisallow: /after\nAllow: /after/ok\n",
            "w".repeat(2000),
            "c".repeat(5000),
        );
        let r = parse(&txt);
        assert!(!r.is_allowed(&long_pattern), "the long rule itself applies");
        assert!(r.is_allowed("/long/xx"));
        assert!(!r.is_allowed("/after"));
        assert!(r.is_allowed("/after/ok"));
    }

    #[test]
    fn disallow_without_a_colon_counts() {
        // Outside RFC 9309's grammar, but Google accepts it (when the line is two words) and the
        // site owner meant the rule: we accept it, as robotxt does.
        let r = parse("User-agent crawl\nDisallow /x\n\tdisallow\t/y\nDisallow/z\n");
        assert!(!r.is_allowed("/x"));
        assert!(!r.is_allowed("/y"));
        // No separator at all: `Disallow/z` is no record.
        assert!(r.is_allowed("/z"));
        assert!(r.is_allowed("/other"));
    }

    #[test]
    fn an_html_body_allows_everything() {
        // A soft 404: an HTML page served with 200 for /robots.txt. No line is a record (`<p>`
        // makes the key `<p>Disallow`, which Google's parser ignores too), so nothing is blocked.
        let html = "<!DOCTYPE html>\n<html><head><title>Not found</title></head>\n<body>\n\
                    <p>User-agent: *</p>\n<p>Disallow: /</p>\n\
                    <div>Sorry, nothing here. Disallow: /private</div>\n</body></html>\n";
        let r = parse(html);
        for path in ["/", "/private", "/index.html", "/a/b?c=d"] {
            assert!(r.is_allowed(path), "{path}");
        }
        assert!(!r.disallows_everything());
        assert_eq!(r.crawl_delay(), None);
        // A line that is a record on its own counts even in HTML, as it does for Google.
        let r = parse("<html><body><pre>\nUser-agent: *\nDisallow: /pre\n</pre></body></html>\n");
        assert!(!r.is_allowed("/pre"));
        assert!(r.is_allowed("/"));
    }

    #[test]
    fn the_500_kib_limit_counts_the_bytes_as_sent() {
        // CR LF endings and a long user-agent value shrink when normalized; the rule that lay
        // beyond the limit in the file as sent must still not apply.
        let mut txt = format!(
            "User-agent: crawl {}\r\nDisallow: /early\r\n",
            "w".repeat(10_000)
        );
        while txt.len() < robotxt::BYTE_LIMIT - 10 {
            txt.push_str("# pad\r\n");
        }
        txt.push_str("Disallow: /late\r\n");
        assert!(txt.len() > robotxt::BYTE_LIMIT);
        let r = parse(&txt);
        assert!(!r.is_allowed("/early"));
        assert!(r.is_allowed("/late"));
        // Normalizing never makes a file longer, so robotxt's own cut never drops a line of it.
        for body in [
            "useragent x\n",
            "User agent crawl/1\r\n",
            "\u{feff}a\rb\r\n",
            "x\n\n",
        ] {
            assert!(normalize(body.as_bytes()).len() <= body.len(), "{body:?}");
        }
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
