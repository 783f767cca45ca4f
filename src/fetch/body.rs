//! Whether a response's body is read, decided from its headers alone (`--accept-type`,
//! `--reject-type`, and a `Content-Length` over `--max-body`).
//!
//! The length is the one `conn::Head::framing` found (RFC 9112 §6.3), never parsed again here:
//! a chunked response's `Content-Length` is ignored (Transfer-Encoding wins), so a chunked
//! body is capped as it is read, not refused for a length it does not have.
//!
//! A body not read costs nothing: the connection is closed right after the headers (a
//! connection is kept for reuse only once its response was read to its end: `fetch::conn`), the headers are
//! archived as a response record marked `WARC-Truncated`, and the URL log notes `type-rejected`
//! or `too-long`. Types come from `Content-Type` only, never from the URL's name. A response
//! without one is `application/octet-stream` (RFC 9110 §8.3). Responses that never have a body
//! (1xx, 204, 304) are always taken as they are. robots.txt fetches are not filtered.

use crate::fetch::conn::Framing;
use std::fmt;
use std::str::FromStr;

/// A media type pattern: `text/html`, `text/*` or `*/*`; compared without case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypePattern {
    kind: String,
    /// `None` for `*`.
    subtype: Option<String>,
}

impl FromStr for TypePattern {
    type Err = String;

    fn from_str(text: &str) -> Result<TypePattern, String> {
        let bad = || {
            format!(
                "expected a media type such as text/html, text/* or */*, found {text:?} \
                 (no parameters)"
            )
        };
        let (kind, subtype) = text.trim().split_once('/').ok_or_else(bad)?;
        if !is_token(kind) || !is_token(subtype) || (kind == "*" && subtype != "*") {
            return Err(bad());
        }
        Ok(TypePattern {
            kind: kind.to_ascii_lowercase(),
            subtype: (subtype != "*").then(|| subtype.to_ascii_lowercase()),
        })
    }
}

impl fmt::Display for TypePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}",
            self.kind,
            self.subtype.as_deref().unwrap_or("*")
        )
    }
}

impl TypePattern {
    /// Whether `media_type` (lower-case, without parameters) matches.
    fn matches(&self, media_type: &str) -> bool {
        let (kind, subtype) = media_type.split_once('/').unwrap_or((media_type, ""));
        (self.kind == "*" || self.kind == kind)
            && self.subtype.as_ref().is_none_or(|s| s == subtype)
    }
}

/// Why a body was not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skipped {
    /// Its type is rejected (`--reject-type`) or not accepted (`--accept-type`).
    Type,
    /// Its `Content-Length` is over `--max-body` (without `--keep-truncated`).
    TooLong,
}

impl Skipped {
    /// The URL log's note.
    pub fn note(self) -> &'static str {
        match self {
            Skipped::Type => "type-rejected",
            Skipped::TooLong => "too-long",
        }
    }

    /// The record's `WARC-Truncated` reason (WARC 1.1 §5.13): a length over the cap is
    /// `length`; a type the crawl did not want has no reason of its own, `unspecified`.
    pub fn warc_truncated(self) -> &'static str {
        match self {
            Skipped::Type => "unspecified",
            Skipped::TooLong => "length",
        }
    }
}

/// Which bodies are read.
#[derive(Clone, Debug, Default)]
pub struct BodyRule {
    /// `--accept-type`: when not empty, only these types are read.
    pub accept: Vec<TypePattern>,
    /// `--reject-type`: these types are never read (over `accept`).
    pub reject: Vec<TypePattern>,
    /// `--keep-truncated`: a `Content-Length` over the cap is read up to the cap, as a body
    /// without a length is.
    pub keep_truncated: bool,
}

impl BodyRule {
    /// Whether to skip the body of a response framed as `framing` (`Head::framing`) with
    /// this `Content-Type`, given the cap.
    pub fn skip(
        &self,
        framing: Framing,
        content_type: Option<&str>,
        max_body: u64,
    ) -> Option<Skipped> {
        if framing == Framing::Empty {
            return None;
        }
        // Without type rules (the default) the lower-cased media type is not needed.
        if !(self.reject.is_empty() && self.accept.is_empty()) {
            let media_type = content_type
                .and_then(|t| t.split(';').next())
                .map(|t| t.trim().to_ascii_lowercase())
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "application/octet-stream".into());
            let wanted = |patterns: &[TypePattern]| patterns.iter().any(|p| p.matches(&media_type));
            if wanted(&self.reject) || (!self.accept.is_empty() && !wanted(&self.accept)) {
                return Some(Skipped::Type);
            }
        }
        match framing {
            Framing::Length(length) if length > max_body && !self.keep_truncated => {
                Some(Skipped::TooLong)
            }
            _ => None,
        }
    }
}

/// Whether `text` is an RFC 9110 token (a header name, a media type's type or subtype).
pub(crate) fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Framing::{Chunked, Close, Empty, Length};

    fn patterns(list: &[&str]) -> Vec<TypePattern> {
        list.iter().map(|p| p.parse().unwrap()).collect()
    }

    #[test]
    fn patterns_parse_or_say_what_they_expected() {
        for good in [
            "text/html",
            "TEXT/*",
            "*/*",
            "application/vnd.ms-excel",
            "image/svg+xml",
        ] {
            let p: TypePattern = good.parse().unwrap();
            assert_eq!(p.to_string(), good.to_ascii_lowercase());
        }
        for bad in [
            "text",
            "",
            "/html",
            "text/",
            "*/html",
            "text/html; charset=utf-8",
            "a b/c",
        ] {
            let e = bad.parse::<TypePattern>().unwrap_err();
            assert!(
                e.contains("expected a media type") && e.contains(bad),
                "{e}"
            );
        }
    }

    #[test]
    fn types_are_accepted_and_rejected_from_the_headers() {
        let rule = BodyRule {
            accept: patterns(&["text/*", "application/xhtml+xml"]),
            reject: patterns(&["text/css"]),
            keep_truncated: false,
        };
        let skip = |framing, ct| rule.skip(framing, ct, 1000);
        assert_eq!(skip(Close, Some("text/html; charset=utf-8")), None);
        assert_eq!(skip(Close, Some("Text/Plain")), None);
        assert_eq!(skip(Close, Some("application/xhtml+xml")), None);
        assert_eq!(skip(Close, Some("text/css")), Some(Skipped::Type));
        assert_eq!(skip(Close, Some("application/pdf")), Some(Skipped::Type));
        assert_eq!(skip(Close, Some("image/png")), Some(Skipped::Type));
        // No Content-Type: application/octet-stream, not accepted by text/*.
        assert_eq!(skip(Close, None), Some(Skipped::Type));
        assert_eq!(skip(Close, Some("  ")), Some(Skipped::Type));
        // Bodiless responses (1xx, 204, 304: `Framing::Empty`) are never skipped.
        assert_eq!(skip(Empty, Some("image/png")), None);
        assert_eq!(skip(Empty, None), None);

        let reject_only = BodyRule {
            reject: patterns(&["image/*", "video/*"]),
            ..BodyRule::default()
        };
        assert_eq!(
            reject_only.skip(Close, Some("image/jpeg"), 1000),
            Some(Skipped::Type)
        );
        assert_eq!(reject_only.skip(Close, None, 1000), None);
        assert_eq!(reject_only.skip(Close, Some("text/html"), 1000), None);
        assert_eq!(BodyRule::default().skip(Close, None, 1000), None);
    }

    #[test]
    fn a_declared_length_over_the_cap_is_too_long_unless_kept() {
        let rule = BodyRule::default();
        let html = Some("text/html");
        assert_eq!(rule.skip(Length(1000), html, 1000), None);
        assert_eq!(rule.skip(Length(1001), html, 1000), Some(Skipped::TooLong));
        // Without a length (read to the close) or chunked, the body is cut as it is read.
        assert_eq!(rule.skip(Close, html, 1000), None);
        assert_eq!(rule.skip(Chunked, html, 1000), None);
        let keep = BodyRule {
            keep_truncated: true,
            ..BodyRule::default()
        };
        assert_eq!(keep.skip(Length(5000), html, 1000), None);
        // A rejected type is named first.
        let both = BodyRule {
            reject: patterns(&["text/html"]),
            ..BodyRule::default()
        };
        assert_eq!(both.skip(Length(5000), html, 1000), Some(Skipped::Type));
    }
}
