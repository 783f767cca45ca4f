//! Whether a response's body is read, decided from its headers alone (`--accept-type`,
//! `--reject-type`, and a `Content-Length` over `--max-body`).
//!
//! A body not read costs nothing: the connection is closed right after the headers (a
//! connection is kept for reuse only once its response was read to its end: `fetch::conn`), the headers are
//! archived as a response record marked `WARC-Truncated`, and the URL log notes `type-rejected`
//! or `too-long`. Types come from `Content-Type` only, never from the URL's name. A response
//! without one is `application/octet-stream` (RFC 9110 §8.3). Responses that never have a body
//! (1xx, 204, 304) are always taken as they are. robots.txt fetches are not filtered.

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
    /// Whether to skip the body of a response with this status and headers, given the cap.
    pub fn skip(
        &self,
        status: u16,
        content_type: Option<&str>,
        content_length: Option<&str>,
        max_body: u64,
    ) -> Option<Skipped> {
        if status < 200 || status == 204 || status == 304 {
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
        let length = content_length.and_then(|l| l.trim().parse::<u64>().ok());
        match length {
            Some(length) if length > max_body && !self.keep_truncated => Some(Skipped::TooLong),
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
        let skip = |status, ct| rule.skip(status, ct, None, 1000);
        assert_eq!(skip(200, Some("text/html; charset=utf-8")), None);
        assert_eq!(skip(200, Some("Text/Plain")), None);
        assert_eq!(skip(200, Some("application/xhtml+xml")), None);
        assert_eq!(skip(200, Some("text/css")), Some(Skipped::Type));
        assert_eq!(skip(200, Some("application/pdf")), Some(Skipped::Type));
        assert_eq!(skip(404, Some("image/png")), Some(Skipped::Type));
        // No Content-Type: application/octet-stream, not accepted by text/*.
        assert_eq!(skip(200, None), Some(Skipped::Type));
        assert_eq!(skip(200, Some("  ")), Some(Skipped::Type));
        // Bodiless responses are never skipped.
        assert_eq!(skip(304, Some("image/png")), None);
        assert_eq!(skip(204, None), None);

        let reject_only = BodyRule {
            reject: patterns(&["image/*", "video/*"]),
            ..BodyRule::default()
        };
        assert_eq!(
            reject_only.skip(200, Some("image/jpeg"), None, 1000),
            Some(Skipped::Type)
        );
        assert_eq!(reject_only.skip(200, None, None, 1000), None);
        assert_eq!(reject_only.skip(200, Some("text/html"), None, 1000), None);
        assert_eq!(BodyRule::default().skip(200, None, None, 1000), None);
    }

    #[test]
    fn a_declared_length_over_the_cap_is_too_long_unless_kept() {
        let rule = BodyRule::default();
        let html = Some("text/html");
        assert_eq!(rule.skip(200, html, Some("1000"), 1000), None);
        assert_eq!(
            rule.skip(200, html, Some(" 1001 "), 1000),
            Some(Skipped::TooLong)
        );
        assert_eq!(rule.skip(200, html, Some("x"), 1000), None);
        assert_eq!(rule.skip(200, html, None, 1000), None);
        let keep = BodyRule {
            keep_truncated: true,
            ..BodyRule::default()
        };
        assert_eq!(keep.skip(200, html, Some("5000"), 1000), None);
        // A rejected type is named first.
        let both = BodyRule {
            reject: patterns(&["text/html"]),
            ..BodyRule::default()
        };
        assert_eq!(
            both.skip(200, html, Some("5000"), 1000),
            Some(Skipped::Type)
        );
    }
}
