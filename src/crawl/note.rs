//! The note column of the URL log: what a reader of the log should know about one fetch
//! beyond its status (see `output::urllog` for the columns).
//!
//! A fetch can qualify for several notes (a truncated page whose links were capped, a 503 seen
//! during a recrawl); `Note::merge` is the one place that decides which one the log shows, and
//! `Display` the one place that spells it. The text is part of the log's stable format.

use crate::fetch::body::Skipped;
use crate::state::recrawl::Outcome;
use std::fmt;

/// One fetch's note; `None` is an empty column (`-` in TSV, `null` in JSON).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// Nothing to say.
    None,
    /// A robots.txt fetch.
    Robots,
    /// No response: the fetch error's kind (`timeout`, `reset`, `tls`, ...).
    Error(&'static str),
    /// A 3xx whose Location is the (canonical) target, offered like a link.
    Redirect(String),
    /// A 3xx past the redirect limit: its target is not followed.
    TooManyRedirects,
    /// A 3xx without a usable Location.
    BadLocation,
    /// Over the per-page link limit: the first links were kept.
    LinksCapped,
    /// The HTML parser's memory cap stopped link extraction early.
    LinksCut,
    /// The body was cut at `--max-body`.
    Truncated,
    /// The body was not read: its headers said so (`fetch::body`: `type-rejected`, `too-long`).
    Skipped(Skipped),
    /// A 429/503 asked again after this many seconds.
    RetryAfter(u64),
    /// A 429/503 after the last retry.
    RetriesExhausted,
    /// A 429/503 whose Retry-After is longer than the crawler waits.
    RetryAfterTooLong,
    /// During a recrawl: how the page compares with the previous crawl.
    Recrawl(Outcome),
}

impl Note {
    /// The note to show when `self` and then `later` both apply. A redirect's target (or its
    /// failure) always shows; a cut body explains cut links, so it replaces them; anything
    /// else shows only when nothing was noted before.
    pub fn merge(self, later: Note) -> Note {
        match (&self, &later) {
            (_, Note::None) => self,
            (Note::None, _) => later,
            (Note::LinksCapped | Note::LinksCut, Note::Truncated) => later,
            _ => self,
        }
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::None => Ok(()),
            Note::Robots => f.write_str("robots"),
            Note::Error(kind) => f.write_str(kind),
            Note::Redirect(target) => write!(f, "redirect:{target}"),
            Note::TooManyRedirects => f.write_str("too-many-redirects"),
            Note::BadLocation => f.write_str("bad-location"),
            Note::LinksCapped => f.write_str("links-capped"),
            Note::LinksCut => f.write_str("links-cut"),
            Note::Truncated => f.write_str("truncated"),
            Note::Skipped(why) => f.write_str(why.note()),
            Note::RetryAfter(secs) => write!(f, "retry-after:{secs}"),
            Note::RetriesExhausted => f.write_str("retries-exhausted"),
            Note::RetryAfterTooLong => f.write_str("retry-after-too-long"),
            Note::Recrawl(outcome) => f.write_str(outcome.name()),
        }
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
            (Note::Error("timeout"), "timeout"),
            (
                Note::Redirect("http://a.test/b".into()),
                "redirect:http://a.test/b",
            ),
            (Note::TooManyRedirects, "too-many-redirects"),
            (Note::BadLocation, "bad-location"),
            (Note::LinksCapped, "links-capped"),
            (Note::LinksCut, "links-cut"),
            (Note::Truncated, "truncated"),
            (Note::Skipped(Skipped::Type), "type-rejected"),
            (Note::Skipped(Skipped::TooLong), "too-long"),
            (Note::RetryAfter(20), "retry-after:20"),
            (Note::RetriesExhausted, "retries-exhausted"),
            (Note::RetryAfterTooLong, "retry-after-too-long"),
            (Note::Recrawl(Outcome::Unchanged), "unchanged"),
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
        assert_eq!(Note::LinksCut.merge(Note::Truncated), Note::Truncated);
        assert_eq!(Note::None.merge(Note::Truncated), Note::Truncated);
        assert_eq!(
            Note::Truncated.merge(Note::Recrawl(Outcome::Changed)),
            Note::Truncated
        );
        assert_eq!(
            Note::None.merge(Note::RetriesExhausted),
            Note::RetriesExhausted
        );
        assert_eq!(Note::LinksCut.merge(Note::None), Note::LinksCut);
    }
}
