//! The keyword hunt (`--find TEXT`), after the "KeywordHunter" of the seeds: crawl
//! breadth-first until a fetched page contains TEXT, report the page and the matching line,
//! and stop.
//!
//! It owns only the search and its one result. The crawl hands it every fetched page
//! ([`Hunt::search`]); the first match (or another shard's) requests the crawl's stop
//! (`schedule::stop`, `Reason::Found`), so no more work is handed out; `main` prints
//! the result. The match is over the page's source lines as served (HTML markup included), as
//! the origin matched page lines: the line number is a line of the page source, which a browser's
//! "view source" shows. Only 2xx answers of type HTML or text/plain are searched, decoded from
//! their content encoding (gzip) and charset (the Content-Type's, else an HTML `<meta charset>`
//! near the top, else UTF-8) before matching.

use crate::crawl::page::Page;
use crate::schedule::stop::{Reason, Stop};
use crate::shard::exchange::Hunted;
use regex::{Regex, RegexBuilder};
use std::sync::{Arc, OnceLock};

/// The longest TEXT accepted, in characters (as in the origin).
pub const MAX_TEXT_CHARS: usize = 100;
/// With `--find` and no `--max-depth`: four link hops from a seed, which is the origin's depth
/// 5 when the start page counts as depth 1.
pub const DEFAULT_MAX_DEPTH: u32 = 4;
/// A matching line longer than this is shown as a window around the match.
const MAX_SHOWN_CHARS: usize = 400;

/// Checks TEXT for `--find`: 1 to 100 characters, on one line.
pub fn parse_text(text: &str) -> Result<String, String> {
    let chars = text.chars().count();
    if chars == 0 {
        Err("the text to find is empty".into())
    } else if chars > MAX_TEXT_CHARS {
        Err(format!(
            "the text to find has {chars} characters; at most {MAX_TEXT_CHARS} are allowed"
        ))
    } else if text.contains(['\n', '\r']) {
        Err("the text to find must be on one line (pages are searched line by line)".into())
    } else {
        Ok(text.to_owned())
    }
}

/// Where TEXT was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match {
    pub url: String,
    /// Hops from the seed (seeds are 0).
    pub depth: u32,
    /// 1-based line number in the decoded page.
    pub line_no: usize,
    /// The line (or a window of it around the match), without its line ending.
    pub line: String,
}

impl Match {
    /// The result as printed on stdout: `URL TAB LINE_NO TAB LINE`, control characters in the
    /// line (tabs included) escaped so that the three columns hold.
    pub fn to_tsv(&self) -> String {
        format!(
            "{}\t{}\t{}",
            crate::url::escape::sanitize(&self.url),
            self.line_no,
            crate::url::escape::sanitize(&self.line)
        )
    }
}

/// A running hunt: what to look for and, once a page matched, the first match.
pub struct Hunt {
    pub text: String,
    pattern: Regex,
    found: OnceLock<Match>,
    /// With `--shard`: another shard found TEXT (which shard, and where), so this one stops.
    found_elsewhere: OnceLock<String>,
    /// Requested (`Reason::Found`) with the first match, here or elsewhere.
    stop: Arc<Stop>,
}

impl Hunt {
    /// A hunt for `text` (already checked by [`parse_text`]) that stops the crawl by `stop`.
    pub fn new(text: &str, ignore_case: bool, stop: Arc<Stop>) -> Hunt {
        let pattern = RegexBuilder::new(&regex::escape(text))
            .case_insensitive(ignore_case)
            .build()
            .expect("an escaped literal is a valid pattern");
        Hunt {
            text: text.to_owned(),
            pattern,
            found: OnceLock::new(),
            found_elsewhere: OnceLock::new(),
            stop,
        }
    }

    /// Searches a fetched page's text (`Page::text`, decoded once for every reader): HTML and
    /// plain text only. The first page to match (of all workers) becomes the result.
    pub fn search(&self, page: &Page) {
        if self.is_found() || !page.is_text() {
            return;
        }
        if let Some((line_no, line)) = self.find_line(page.text()) {
            let _ = self.found.set(Match {
                url: page.entry.url.clone(),
                depth: page.entry.depth,
                line_no,
                line,
            });
            self.stop.request(Reason::Found);
        }
    }

    /// The first matching line of `text`: its 1-based number and its content (or a window of
    /// it around the match when it is very long, as minified pages are).
    pub fn find_line(&self, text: &str) -> Option<(usize, String)> {
        let m = self.pattern.find(text)?;
        let start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
        let end = text[m.end()..]
            .find('\n')
            .map_or(text.len(), |i| m.end() + i);
        let line_no = text[..start].matches('\n').count() + 1;
        let line = text[start..end].trim_end_matches('\r');
        if line.chars().count() <= MAX_SHOWN_CHARS {
            return Some((line_no, line.to_owned()));
        }
        let side = (MAX_SHOWN_CHARS - m.as_str().chars().count()) / 2;
        let before: String = {
            let mut chars: Vec<char> = text[start..m.start()].chars().rev().take(side).collect();
            chars.reverse();
            chars.into_iter().collect()
        };
        let after: String = text[m.end()..end].chars().take(side).collect();
        let open = if before.len() < m.start() - start {
            "…"
        } else {
            ""
        };
        let close = if after.len() < end - m.end() {
            "…"
        } else {
            ""
        };
        Some((
            line_no,
            format!("{open}{before}{}{after}{close}", m.as_str()),
        ))
    }

    pub fn is_found(&self) -> bool {
        self.found.get().is_some()
    }

    /// The match, once a page matched.
    pub fn found(&self) -> Option<&Match> {
        self.found.get()
    }

    /// Records that another shard found TEXT (`by`: which shard, and where): the hunt is over.
    pub fn set_found_elsewhere(&self, by: String) {
        let _ = self.found_elsewhere.set(by);
        self.stop.request(Reason::Found);
    }

    /// Which shard found TEXT and where, when another shard did.
    pub fn found_elsewhere(&self) -> Option<&str> {
        self.found_elsewhere.get().map(String::as_str)
    }

    /// TEXT was found, here or (with `--shard`) by another shard: the hunt has its answer (the
    /// crawl's stop was requested then; this is not what the crawl reads to stop).
    pub fn is_over(&self) -> bool {
        self.is_found() || self.found_elsewhere.get().is_some()
    }
}

impl Hunted for Hunt {
    fn text(&self) -> &str {
        &self.text
    }
    fn is_over(&self) -> bool {
        Hunt::is_over(self)
    }
    fn set_found_elsewhere(&self, by: String) {
        Hunt::set_found_elsewhere(self, by)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hunt whose stop is never a signal's (nothing here ends the process).
    fn hunt_for(text: &str, ignore_case: bool) -> Hunt {
        fn no_exit(status: i32) -> ! {
            panic!("exit {status}")
        }
        Hunt::new(text, ignore_case, Arc::new(Stop::new(no_exit)))
    }

    #[test]
    fn text_is_checked() {
        assert_eq!(parse_text("needle"), Ok("needle".into()));
        assert!(parse_text(&"é".repeat(100)).is_ok());
        assert!(
            parse_text(&"x".repeat(101))
                .unwrap_err()
                .contains("101 characters")
        );
        assert!(parse_text("").is_err() && parse_text("a\nb").is_err());
    }

    #[test]
    fn finds_the_first_matching_line_with_its_number() {
        let hunt = hunt_for("Needle", false);
        let page = "<html>\r\n<p>hay</p>\r\n<p>a Needle here</p>\r\n<p>Needle again</p>";
        assert_eq!(
            hunt.find_line(page),
            Some((3, "<p>a Needle here</p>".into()))
        );
        assert_eq!(hunt.find_line("needle"), None);
        let hunt = hunt_for("NEEDLE", true);
        assert_eq!(hunt.find_line("x\nneedle"), Some((2, "needle".into())));
        // Unicode case folding, and regex syntax in TEXT is literal.
        assert!(hunt_for("ÉTÉ", true).find_line("un été").is_some());
        assert_eq!(
            hunt_for("a.b", false).find_line("axb\na.b"),
            Some((2, "a.b".into()))
        );
    }

    #[test]
    fn a_long_line_is_shown_as_a_window_around_the_match() {
        let line = format!("{}Needle{}", "a".repeat(5000), "b".repeat(5000));
        let (no, shown) = hunt_for("Needle", false).find_line(&line).unwrap();
        assert_eq!(no, 1);
        assert!(shown.starts_with('…') && shown.ends_with('…') && shown.contains("aNeedleb"));
        assert!(
            shown.chars().count() <= MAX_SHOWN_CHARS + 2,
            "{}",
            shown.len()
        );
    }

    #[test]
    fn the_result_line_keeps_three_columns() {
        let found = Match {
            url: "http://h/".into(),
            depth: 1,
            line_no: 7,
            line: "a\tb\u{1b}".into(),
        };
        assert_eq!(found.to_tsv(), "http://h/\t7\ta\\tb\\u{1b}");
    }
}
