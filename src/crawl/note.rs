//! The note column of the URL log: what a reader of the log should know about one fetch
//! beyond its status (see `output::urllog` for the columns).
//!
//! A fetch can qualify for several notes (a truncated page whose links were capped, a 503 seen
//! during a recrawl); `Note::merge` is the one place that decides which one the log shows, and
//! `Display` the one place that spells it. The text is part of the log's stable format.

use crate::fetch::body::Skipped;
use crate::fetch::error::ErrorKind;
use crate::recrawl::Outcome;
use crate::url::directives::Directives;
use std::fmt;
use std::time::Duration;

/// One fetch's note; `None` is an empty column (`-` in TSV, `null` in JSON).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// Nothing to say.
    None,
    /// A robots.txt fetch.
    Robots,
    /// No response: the fetch error's kind, written as its word (`timeout`, `reset`, ...).
    Error(ErrorKind),
    /// A 3xx whose Location is the (canonical) target, offered like a link.
    Redirect(String),
    /// A 3xx past the redirect limit: its target is not followed.
    TooManyRedirects,
    /// A 3xx without a usable Location.
    BadLocation,
    /// Over the per-page link limit: the first links were kept.
    LinksCapped,
    /// The body was cut at `--max-body`.
    Truncated,
    /// The body was not read: its headers said so (`fetch::body`: `type-rejected`, `too-long`).
    Skipped(Skipped),
    /// A 429/503 (or a 502/504) asked again after this wait.
    RetryAfter(Duration),
    /// A 429/503 (or a 502/504) after the last retry.
    RetriesExhausted,
    /// A fetch without an answer (the error's note), or a robots.txt that did not answer
    /// (`Robots`), asked again after the wait: `connect,retry-after:30`.
    Retrying(Box<Note>, Duration),
    /// The same after its last retry: `connect,retries-exhausted`.
    Exhausted(Box<Note>),
    /// Not asked for: its host is held unreachable (robots.txt never answered, or it failed
    /// again after it was parked). Asked for again when the crawl is resumed.
    HostUnreachable,
    /// A 429/503 whose Retry-After is longer than the crawler waits.
    RetryAfterTooLong,
    /// During a recrawl: how the page compares with the previous crawl.
    Recrawl(Outcome),
    /// The page's robots directives (meta tags and `X-Robots-Tag`): `noindex`, `nofollow` or
    /// `noindex,nofollow`; nothing when it has neither.
    PageRobots(Directives),
    /// Not fetched: its host had used its `--max-pages-per-host` budget.
    HostBudget,
    /// Fetched only as a page requisite (past `--max-depth`, or with `--requisites any`
    /// outside the scope): its links are not followed, a stylesheet's excepted.
    Requisite,
    /// A sitemap fetch (`crawl::sitemaps`), and how reading it went.
    Sitemap(SitemapNote),
    /// Its payload was archived before (payload dedupe): archived as a `revisit` of that
    /// first capture. Its links are read all the same. Shown only when nothing else is noted.
    Duplicate,
    /// An HTML page whose visible text nearly repeats an earlier page of the crawl, whose URL
    /// this is (`seen::neardup`); with `--near-duplicates skip-links` its links were not
    /// followed. Written `near-duplicate:URL`, as a redirect's target.
    NearDuplicate(String),
}

/// How reading a sitemap went: `sitemap` alone, or `sitemap:` and what the reader should know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SitemapNote {
    /// Read whole (or nothing to read: an error status).
    Read,
    /// A 3xx: its target is read as a sitemap at the same level.
    Redirect,
    /// Over 50,000 entries or 50 MiB: read up to the limit.
    Capped,
    /// Broken XML or gzip: read up to the damage.
    Malformed,
    /// Neither XML sitemap nor sitemap index (an HTML page, another XML root).
    NotASitemap,
    /// An index nested deeper than the crawler reads: its entries were skipped.
    TooDeep,
    /// Cut at `--max-body`: read up to the cut.
    Truncated,
}

impl Note {
    /// The note to show when `self` and then `later` both apply. A redirect's target (or its
    /// failure) always shows; a cut body explains cut links, so it replaces them; a page's
    /// robots directives, that a URL was fetched as a requisite, and that its payload is a
    /// duplicate, show only when nothing else is noted (a recrawl's outcome, a cut body say
    /// more); anything else shows only when nothing was noted before.
    pub fn merge(self, later: Note) -> Note {
        match (&self, &later) {
            (_, Note::None | Note::PageRobots(Directives::NONE)) => self,
            // That a payload was archived before is the least of notes: it shows alone.
            (Note::None, Note::Duplicate) => later,
            (_, Note::Duplicate) => self,
            // Directives and the requisite mark are the least of notes: any other one
            // replaces them (a recrawl's outcome of a requisite shows).
            (Note::None | Note::PageRobots(_) | Note::Requisite, _) => later,
            (Note::LinksCapped, Note::Truncated) => later,
            _ => self,
        }
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::None => Ok(()),
            Note::Robots => f.write_str("robots"),
            Note::Error(kind) => f.write_str(kind.as_str()),
            Note::Redirect(target) => write!(f, "redirect:{target}"),
            Note::TooManyRedirects => f.write_str("too-many-redirects"),
            Note::BadLocation => f.write_str("bad-location"),
            Note::LinksCapped => f.write_str("links-capped"),
            Note::Truncated => f.write_str("truncated"),
            Note::Skipped(why) => f.write_str(why.note()),
            Note::RetryAfter(wait) => write!(f, "retry-after:{}", Seconds(*wait)),
            Note::RetriesExhausted => f.write_str("retries-exhausted"),
            Note::Retrying(note, wait) => write!(f, "{note},retry-after:{}", Seconds(*wait)),
            Note::Exhausted(note) => write!(f, "{note},retries-exhausted"),
            Note::HostUnreachable => f.write_str("host-unreachable"),
            Note::RetryAfterTooLong => f.write_str("retry-after-too-long"),
            Note::Recrawl(outcome) => f.write_str(outcome.name()),
            Note::Sitemap(note) => f.write_str(match note {
                SitemapNote::Read => "sitemap",
                SitemapNote::Redirect => "sitemap:redirect",
                SitemapNote::Capped => "sitemap:capped",
                SitemapNote::Malformed => "sitemap:malformed",
                SitemapNote::NotASitemap => "sitemap:not-a-sitemap",
                SitemapNote::TooDeep => "sitemap:too-deep",
                SitemapNote::Truncated => "sitemap:truncated",
            }),
            Note::PageRobots(d) => f.write_str(match (d.noindex, d.nofollow) {
                (true, true) => "noindex,nofollow",
                (true, false) => "noindex",
                (false, true) => "nofollow",
                (false, false) => "",
            }),
            Note::HostBudget => f.write_str("host-budget"),
            Note::Requisite => f.write_str("requisite"),
            Note::Duplicate => f.write_str("duplicate"),
            Note::NearDuplicate(earlier) => write!(f, "near-duplicate:{earlier}"),
        }
    }
}

/// A wait as the log writes it: whole seconds (rounded down) from one second up, else the
/// fraction of a second to the millisecond (`0.05`), as short waits of tests are.
struct Seconds(Duration);

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let wait = self.0;
        if wait >= Duration::from_secs(1) || wait.is_zero() {
            return write!(f, "{}", wait.as_secs());
        }
        let text = format!("{:.3}", wait.as_secs_f64());
        f.write_str(text.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_note_is_spelled_as_the_log_format_says() {
        let cases = [
            (Note::None, ""),
            (Note::Robots, "robots"),
            (Note::Error(ErrorKind::Timeout), "timeout"),
            (
                Note::Redirect("http://a.test/b".into()),
                "redirect:http://a.test/b",
            ),
            (Note::TooManyRedirects, "too-many-redirects"),
            (Note::BadLocation, "bad-location"),
            (Note::LinksCapped, "links-capped"),
            (Note::Truncated, "truncated"),
            (Note::Skipped(Skipped::Type), "type-rejected"),
            (Note::Skipped(Skipped::TooLong), "too-long"),
            (Note::RetryAfter(Duration::from_secs(20)), "retry-after:20"),
            (
                Note::RetryAfter(Duration::from_millis(1500)),
                "retry-after:1",
            ),
            (
                Note::RetryAfter(Duration::from_millis(50)),
                "retry-after:0.05",
            ),
            (
                Note::Retrying(
                    Box::new(Note::Error(ErrorKind::Connect)),
                    Duration::from_secs(30),
                ),
                "connect,retry-after:30",
            ),
            (
                Note::Retrying(Box::new(Note::Robots), Duration::from_secs(120)),
                "robots,retry-after:120",
            ),
            (
                Note::Exhausted(Box::new(Note::Error(ErrorKind::Timeout))),
                "timeout,retries-exhausted",
            ),
            (Note::HostUnreachable, "host-unreachable"),
            (Note::RetriesExhausted, "retries-exhausted"),
            (Note::RetryAfterTooLong, "retry-after-too-long"),
            (Note::Recrawl(Outcome::Unchanged), "unchanged"),
            (Note::Recrawl(Outcome::Lastmod), "lastmod"),
            (Note::Requisite, "requisite"),
            (Note::PageRobots(Directives::NONE), ""),
            (
                Note::PageRobots(Directives {
                    noindex: true,
                    nofollow: false,
                }),
                "noindex",
            ),
            (
                Note::PageRobots(Directives {
                    noindex: false,
                    nofollow: true,
                }),
                "nofollow",
            ),
            (
                Note::PageRobots(Directives {
                    noindex: true,
                    nofollow: true,
                }),
                "noindex,nofollow",
            ),
            (Note::HostBudget, "host-budget"),
            (
                Note::NearDuplicate("http://a.test/x".into()),
                "near-duplicate:http://a.test/x",
            ),
        ];
        for (note, text) in cases {
            assert_eq!(note.to_string(), text);
        }
    }

    #[test]
    fn precedence_keeps_redirects_and_lets_truncation_explain_cut_links() {
        let redirect = || Note::Redirect("http://a.test/".into());
        assert_eq!(redirect().merge(Note::Truncated), redirect());
        // A body not read: a redirect still shows its target.
        let rejected = || Note::Skipped(Skipped::Type);
        assert_eq!(redirect().merge(rejected()), redirect());
        assert_eq!(Note::None.merge(rejected()), rejected());
        assert_eq!(Note::LinksCapped.merge(Note::Truncated), Note::Truncated);
        assert_eq!(Note::None.merge(Note::Truncated), Note::Truncated);
        assert_eq!(
            Note::Truncated.merge(Note::Recrawl(Outcome::Changed)),
            Note::Truncated
        );
        assert_eq!(
            Note::None.merge(Note::RetriesExhausted),
            Note::RetriesExhausted
        );
        assert_eq!(Note::LinksCapped.merge(Note::None), Note::LinksCapped);
        // A page without directives says nothing, and lets later notes show.
        let empty = || Note::PageRobots(Directives::NONE);
        assert_eq!(Note::None.merge(empty()), Note::None);
        assert_eq!(empty().merge(Note::Truncated), Note::Truncated);
        let nofollow = Note::PageRobots(Directives {
            noindex: false,
            nofollow: true,
        });
        assert_eq!(Note::LinksCapped.merge(nofollow.clone()), Note::LinksCapped);
        assert_eq!(Note::None.merge(nofollow.clone()), nofollow);
        assert_eq!(nofollow.clone().merge(Note::Truncated), Note::Truncated);
        assert_eq!(
            nofollow.clone().merge(Note::Recrawl(Outcome::Changed)),
            Note::Recrawl(Outcome::Changed)
        );
        assert_eq!(nofollow.clone().merge(Note::None), nofollow);
        // The requisite mark replaces directives and gives way to any other note.
        assert_eq!(nofollow.clone().merge(Note::Requisite), Note::Requisite);
        assert_eq!(Note::Requisite.merge(Note::None), Note::Requisite);
        let unchanged = Note::Recrawl(Outcome::Unchanged);
        assert_eq!(Note::Requisite.merge(unchanged.clone()), unchanged);
        assert_eq!(redirect().merge(Note::Requisite), redirect());
    }
}
