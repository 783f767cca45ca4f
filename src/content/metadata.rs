//! The metadata every consumer of a page's text asks for: title, language, canonical link,
//! description and publication date, read from the markup that declares them.
//!
//! One pass of the link extractor's tokenizer (`url::html`), which copies nothing but the
//! values kept: time linear in the page, memory the values themselves (each cut at
//! `MAX_VALUE_CHARS`) and one JSON-LD block at a time (at most `MAX_JSON_LD_BYTES`).

use serde_json::Value;
use url::Url;

use crate::url::html::{Namespace, Token, Tokenizer, attribute_value};

/// Characters kept of a title or description (a page's `<title>` can be a whole paragraph).
const MAX_VALUE_CHARS: usize = 2048;
/// A JSON-LD block larger than this is not parsed (publication dates sit in small ones).
const MAX_JSON_LD_BYTES: usize = 1 << 20;

/// What a page says about itself. Values are as written, whitespace collapsed; `None` where the
/// page does not say.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Metadata {
    /// The first `<title>` of the document (not an SVG's), else `og:title`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The `lang` attribute of `<html>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// `<link rel=canonical href>`, resolved against the page's URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
    /// `<meta name=description>`, else `og:description`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON-LD `datePublished` (of the document or any object in it, `@graph` included), else
    /// `<meta property=article:published_time>`, as written (ISO 8601 on every page seen).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    /// Where `lang` is absent: the language of the page's text as `detect_language` finds it
    /// (an ISO 639-3 code), when it is reliable. Never beside `lang`: a page's own word wins.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lang_detected: Option<String>,
}

/// Characters of a text `detect_language` reads: a page's language shows in its first
/// paragraphs, and whatlang's time grows with what it reads (its trigrams are counted and
/// sorted): 4,096 cost 166-270 µs a text, 1,024 106-126 (the article-extraction benchmark's
/// texts; 300 made-up words), on a crawl's pages without `lang` most of `--text full`'s cost.
/// vendor/whatlang's patches have since cut the cost at 1,024 to about a third (211 -> 68 µs
/// of CPU on the static web's texts), with the same answers (vendor/whatlang/PATCHES.md).
/// Against 4,096 characters, 1,024 gave the same language on the benchmark's 181 texts (one
/// more found reliable) and on 1,828 rust-doc main texts (none different, 451 more found
/// reliable, 6 fewer: the code further on makes a text look mixed). BENCHMARKS.md,
/// "Per-page costs out of `--text`".
const DETECT_CHARS: usize = 1024;

/// The language of `text` (its first `DETECT_CHARS` characters) as an ISO 639-3 code (`eng`,
/// `deu`), by whatlang's trigram models of 69 languages (vendor/whatlang: crates.io's 0.18.0
/// made cheaper, its answers kept, `detect_answers_as_unpatched_whatlang`); `None` when
/// whatlang finds none or calls its guess unreliable (short or mixed text).
pub fn detect_language(text: &str) -> Option<String> {
    let end = text
        .char_indices()
        .nth(DETECT_CHARS)
        .map_or(text.len(), |(i, _)| i);
    let info = whatlang::detect(&text[..end])?;
    info.is_reliable().then(|| info.lang().code().to_string())
}

/// The tags whose attributes are read.
fn kept(name: &[u8]) -> Option<&'static str> {
    ["html", "link", "meta", "script", "title"]
        .into_iter()
        .find(|n| name.eq_ignore_ascii_case(n.as_bytes()))
}

/// The metadata of `html`, the page fetched from `url`.
pub fn metadata(html: &str, url: &Url) -> Metadata {
    read(html, url).0
}

/// The page's titles: its `<title>` and its `og:title`, those it has (`text::main_text` drops
/// a first line that repeats one).
pub(crate) fn titles(html: &str, url: &Url) -> Vec<String> {
    metadata_and_titles(html, url).1
}

/// The metadata of `html` and its titles (`titles`), from one reading.
pub(crate) fn metadata_and_titles(html: &str, url: &Url) -> (Metadata, Vec<String>) {
    let (metadata, og_title) = read(html, url);
    let titles = metadata.title.iter().cloned().chain(og_title).collect();
    (metadata, titles)
}

/// The metadata, and the `og:title` beside a `<title>` (which `Metadata::title` holds).
fn read(html: &str, url: &Url) -> (Metadata, Option<String>) {
    let mut out = Metadata::default();
    let (mut og_title, mut og_description, mut article_time) = (None, None, None);
    let mut tokens = Tokenizer::new(html.as_bytes());
    tokens.keep_attributes_of(kept);
    // What the next `Text` token is the content of.
    let mut text_of = None;
    let attr = |tokens: &Tokenizer, name: &str| {
        let range = tokens.attr_range(name.as_bytes())?;
        Some(attribute_value(&html[range]).into_owned())
    };
    while let Some(token) = tokens.next_token() {
        let name = match token {
            Token::Text(range) => {
                match text_of.take() {
                    Some("title") if out.title.is_none() => {
                        out.title = collapsed(&attribute_value(&html[range]));
                    }
                    Some("script")
                        if out.published.is_none() && range.len() <= MAX_JSON_LD_BYTES =>
                    {
                        out.published = serde_json::from_str(&html[range])
                            .ok()
                            .and_then(|v| date_published(&v, 0));
                    }
                    _ => {}
                }
                continue;
            }
            Token::End(_) => continue,
            Token::Start { ns, .. } if ns != Namespace::Html || tokens.in_template() => continue,
            Token::Start { .. } => match tokens.kept_as() {
                Some(name) => name,
                None => continue,
            },
        };
        match name {
            "html" if out.lang.is_none() => {
                out.lang = attr(&tokens, "lang").and_then(|l| collapsed(&l))
            }
            "title" => text_of = Some("title"),
            "script" => {
                let json_ld = attr(&tokens, "type")
                    .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/ld+json"));
                text_of = json_ld.then_some("script");
            }
            "link" if out.canonical.is_none() => {
                let canonical = attr(&tokens, "rel").is_some_and(|rel| {
                    rel.split_ascii_whitespace()
                        .any(|r| r.eq_ignore_ascii_case("canonical"))
                });
                if canonical && let Some(href) = attr(&tokens, "href") {
                    out.canonical = url.join(href.trim()).ok().map(String::from);
                }
            }
            "meta" => {
                let key = attr(&tokens, "name").or_else(|| attr(&tokens, "property"));
                let Some(key) = key.map(|k| k.trim().to_ascii_lowercase()) else {
                    continue;
                };
                let slot = match key.as_str() {
                    "description" => &mut out.description,
                    "og:description" => &mut og_description,
                    "og:title" => &mut og_title,
                    "article:published_time" => &mut article_time,
                    _ => continue,
                };
                if slot.is_none() {
                    *slot = attr(&tokens, "content").and_then(|c| collapsed(&c));
                }
            }
            _ => {}
        }
    }
    let og_title = match out.title {
        Some(_) => og_title,
        None => {
            out.title = og_title;
            None
        }
    };
    out.description = out.description.or(og_description);
    out.published = out.published.or(article_time);
    (out, og_title)
}

/// `text` with runs of whitespace made one space and trimmed, at most `MAX_VALUE_CHARS`
/// characters; `None` if nothing is left.
fn collapsed(text: &str) -> Option<String> {
    let mut out = String::new();
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
        if out.chars().count() >= MAX_VALUE_CHARS {
            out = out.chars().take(MAX_VALUE_CHARS).collect();
            break;
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The first `datePublished` string in a JSON-LD value, searched depth first (objects nest
/// a few levels: `@graph`, `mainEntity`); at most 16 levels deep.
fn date_published(value: &Value, depth: usize) -> Option<String> {
    if depth > 16 {
        return None;
    }
    match value {
        Value::Object(map) => {
            if let Some(Value::String(date)) = map.get("datePublished") {
                return collapsed(date);
            }
            map.values().find_map(|v| date_published(v, depth + 1))
        }
        Value::Array(items) => items.iter().find_map(|v| date_published(v, depth + 1)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(html: &str) -> Metadata {
        metadata(
            html,
            &Url::parse("https://example.com/a/page.html").unwrap(),
        )
    }

    #[test]
    fn reads_each_field_from_its_markup() {
        let page = r#"<!doctype html><html lang="en-GB"><head>
            <title>  The &amp; title
              here </title>
            <link rel="stylesheet" href="/s.css"><link rel="Canonical" href="../b/page">
            <meta name="description" content="What it is about.">
            <meta property="article:published_time" content="2020-01-01T00:00:00Z">
            <script type="application/ld+json">
              {"@context": "https://schema.org", "@graph": [{"@type": "WebSite"},
               {"@type": "NewsArticle", "datePublished": "2019-12-31T10:00:00+01:00"}]}
            </script></head><body><svg><title>Not this</title></svg><p>x</p></body></html>"#;
        assert_eq!(
            of(page),
            Metadata {
                title: Some("The & title here".into()),
                lang: Some("en-GB".into()),
                canonical: Some("https://example.com/b/page".into()),
                description: Some("What it is about.".into()),
                published: Some("2019-12-31T10:00:00+01:00".into()),
                lang_detected: None,
            }
        );
    }

    #[test]
    fn falls_back_to_open_graph_and_the_article_time() {
        let page = r#"<html><head><meta property="og:title" content="OG title">
            <meta property="og:description" content="OG text">
            <script type="application/ld+json">{"broken": </script>
            <script>var datePublished = "no";</script>
            <meta property="article:published_time" content="2021-05-06"></head></html>"#;
        let m = of(page);
        assert_eq!(m.title.as_deref(), Some("OG title"));
        assert_eq!(m.description.as_deref(), Some("OG text"));
        assert_eq!(m.published.as_deref(), Some("2021-05-06"));
        assert_eq!((m.lang, m.canonical), (None, None));
    }

    #[test]
    fn languages_are_detected_from_text_that_says_enough() {
        let english = "The crawler asks one host for one page at a time, and it waits ten \
            times as long as the host took to answer before it asks that host again.";
        let german = "Der Crawler fragt jeden Rechner nach einer Seite zur gleichen Zeit und \
            wartet zehnmal so lange, wie der Rechner für seine Antwort gebraucht hat.";
        assert_eq!(detect_language(english).as_deref(), Some("eng"));
        assert_eq!(detect_language(german).as_deref(), Some("deu"));
        // Too little to tell, or nothing.
        assert_eq!(detect_language("ok"), None);
        assert_eq!(detect_language("12 34 -- ;"), None);
        // Only the first DETECT_CHARS characters are read.
        let head = german.repeat(DETECT_CHARS / german.chars().count() + 1);
        let long = format!("{head} {}", english.repeat(200));
        assert_eq!(detect_language(&long).as_deref(), Some("deu"));
    }

    #[test]
    fn a_page_without_markup_has_none() {
        assert_eq!(of("just text, no tags"), Metadata::default());
        assert_eq!(of(""), Metadata::default());
    }

    /// vendor/whatlang (patched for speed) answers as crates.io's whatlang 0.18.0 did:
    /// fixtures/whatlang/answers.jsonl holds 660 texts (gettext catalogs of ~190 locales cut
    /// to 12, 60, 300, 1,024 and 3,000 characters, and edge cases: empty, digits, one
    /// character, mixed scripts, emoji; 69 languages and none, 25 scripts) with the unpatched
    /// crate's language, script and confidence, to the bit. vendor/whatlang/PATCHES.md.
    #[test]
    fn detect_answers_as_unpatched_whatlang() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/whatlang/answers.jsonl");
        let fixture = std::fs::read_to_string(&path).unwrap();
        let (mut texts, mut reliable) = (0, 0);
        for line in fixture.lines() {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            let text = row["text"].as_str().unwrap();
            let info = whatlang::detect(text);
            let found = info.as_ref().map(|i| i.lang().code());
            assert_eq!(found, row["lang"].as_str(), "language of {}", row["source"]);
            if let Some(info) = info {
                assert_eq!(
                    info.script().name(),
                    row["script"],
                    "script of {}",
                    row["source"]
                );
                // As Rust wrote it (`{:?}`: the shortest string that parses back to the bits).
                let confidence: f64 = row["confidence"].as_str().unwrap().parse().unwrap();
                assert_eq!(
                    info.confidence().to_bits(),
                    confidence.to_bits(),
                    "{}",
                    row["source"]
                );
                assert_eq!(info.is_reliable(), row["reliable"], "{}", row["source"]);
                reliable += usize::from(info.is_reliable());
            }
            if text.chars().count() <= DETECT_CHARS {
                let expected = row["lang"].as_str().filter(|_| row["reliable"] == true);
                assert_eq!(
                    detect_language(text).as_deref(),
                    expected,
                    "{}",
                    row["source"]
                );
            }
            texts += 1;
        }
        // The fixture is whole: as many texts, and as many reliable, as it was made with.
        assert_eq!((texts, reliable), (660, 260));
    }
}
