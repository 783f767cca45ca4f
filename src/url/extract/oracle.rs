//! The extractor as it was built on `lol_html`, kept (tests, and the `oracle` feature for the
//! fuzz target) as the oracle the hand-written
//! tokenizer is checked against: same links, same `rel=nofollow` marks, same directives, on the
//! fixtures, the test web's pages, hostile markup and generated documents (`super::tests`).
//!
//! What element handling does with a tag (`State::element`) is shared; what differs is only how
//! tags, attribute values, charsets and `<noscript>` text are found, which is what is checked.

use super::{Extracted, StartTag, State, scan};
use encoding_rs::Encoding;
use encoding_rs::UTF_8;
use lol_html::html_content::{Element, TextChunk};
use lol_html::{
    AsciiCompatibleEncoding, ElementContentHandlers, HtmlRewriter, MemorySettings, Selector,
    Settings,
};
use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::LazyLock;
use url::Url;

/// Bytes of one `<noscript>`'s text the oracle parses again as markup.
pub(crate) const MAX_NOSCRIPT: usize = 1024 * 1024;
/// `<noscript>` inside `<noscript>` is parsed again this many levels deep at most.
pub(crate) const MAX_NOSCRIPT_DEPTH: u8 = 2;
/// Bytes handed to `lol_html` at a time.
const CHUNK: usize = 16 * 1024;
/// Upper bound on the parser's buffers (a tag split across chunks, open elements).
pub(super) const MAX_PARSER_MEMORY: usize = 4 * 1024 * 1024;
/// Elements that may carry a URL; the handler picks the attributes by tag name.
const SELECTOR: &str = "a, area, link, img, script, iframe, frame, embed, source, audio, video, \
                        track, input, object, form, meta, base";

/// The page URL the comparisons resolve against.
const PAGE: &str = "http://example.com/dir/page.html";

/// The scanner's answer, and whether it met a `<noscript>` whose content was markup.
fn scanned(body: &[u8], charset: Option<&str>, max_links: usize) -> (Extracted, bool) {
    let page = Url::parse(PAGE).unwrap();
    let header_encoding = charset
        .and_then(|label| Encoding::for_label(label.trim().as_bytes()))
        .filter(|encoding| encoding.is_ascii_compatible());
    let mut state = State::new(&page, max_links, "crawl", body.len());
    let encoding = header_encoding.unwrap_or(UTF_8);
    scan(body, encoding, header_encoding.is_none(), &mut state);
    // What `extract_page` returns is this state's `out`.
    (state.out.into_extracted(), state.unlike_lol_html)
}

/// Whether the tokenizer and the oracle agree on `body`: `Ok(true)`, or `Err` with both
/// answers (the fuzz target's check too, with the `oracle` feature).
/// Documents the oracle gave up on (its memory cap), or with a `<noscript>` read as markup
/// (the module doc's difference), are not compared: `Ok(false)`.
pub fn agree(body: &[u8], charset: Option<&str>, max_links: usize) -> Result<bool, String> {
    let (got, unlike) = scanned(body, charset, max_links);
    if unlike {
        return Ok(false);
    }
    let page = Url::parse(PAGE).unwrap();
    let (want, stopped) = extract_page(body, &page, charset, max_links, "crawl");
    if stopped {
        return Ok(false);
    }
    if got == want {
        return Ok(true);
    }
    Err(format!(
        "{:?} ({charset:?}, max {max_links}):\n  lol_html: {want:?}\n  scanner:  {got:?}",
        String::from_utf8_lossy(body)
    ))
}

/// `extract_page` through `lol_html`, and whether its parser gave up (its memory cap).
pub(super) fn extract_page(
    body: &[u8],
    page_url: &Url,
    charset: Option<&str>,
    max_links: usize,
    token: &str,
) -> (Extracted, bool) {
    let header_encoding = charset
        .and_then(|label| Encoding::for_label(label.trim().as_bytes()))
        .and_then(AsciiCompatibleEncoding::new);
    let mut state = State::new(page_url, max_links, token, body.len());
    let encoding = header_encoding.unwrap_or_else(AsciiCompatibleEncoding::utf_8);
    // The document's base is its first `<base href>`, which a first reading finds.
    if let Some(href) = first_base(body, encoding, header_encoding.is_none()) {
        state.set_base(&href);
    }
    let ended = parse(body, encoding, header_encoding.is_none(), &mut state, 0);
    let stopped = !ended && !state.out.truncated;
    (state.out.into_extracted(), stopped)
}

/// The `href` of the first `<base href>`, outside `<noscript>` or in its text parsed again.
fn first_base(
    body: &[u8],
    encoding: AsciiCompatibleEncoding,
    adjust_charset: bool,
) -> Option<String> {
    let page = Url::parse(PAGE).unwrap();
    let mut state = State::new(&page, usize::MAX, "", 0);
    let found = RefCell::new(None);
    let base = |el: &mut Element<'_, '_>| {
        let mut found = found.borrow_mut();
        if found.is_none() {
            *found = el.get_attribute("href");
        }
        Ok(())
    };
    parse_with(body, encoding, adjust_charset, &mut state, 0, &base);
    found.into_inner()
}

impl StartTag for Element<'_, '_> {
    fn get(&self, name: &str) -> Option<Cow<'_, str>> {
        self.get_attribute(name).map(Cow::Owned)
    }
}

fn parse(
    body: &[u8],
    encoding: AsciiCompatibleEncoding,
    adjust_charset: bool,
    state: &mut State<'_>,
    noscript_depth: u8,
) -> bool {
    parse_with(
        body,
        encoding,
        adjust_charset,
        state,
        noscript_depth,
        &|_| Ok(()),
    )
}

/// `parse`, calling `base` on each `<base>` element.
fn parse_with(
    body: &[u8],
    encoding: AsciiCompatibleEncoding,
    adjust_charset: bool,
    state: &mut State<'_>,
    noscript_depth: u8,
    base: &BaseHandler<'_>,
) -> bool {
    let state = RefCell::new(state);
    let noscript = RefCell::new(String::new());
    // The text of the HTML `<style>` being read, and whether one is open.
    let style = RefCell::new((String::new(), false));
    let mut settings = Settings::new()
        .with_strict(false)
        .with_encoding(encoding)
        .with_adjust_charset_on_meta_tag(adjust_charset)
        .with_memory_settings(
            MemorySettings::new()
                .with_preallocated_parsing_buffer_size(CHUNK)
                .with_max_allowed_memory_usage(MAX_PARSER_MEMORY),
        )
        // First: an element's `style` attribute is read before its other attributes.
        .append_element_content_handler((
            Cow::Borrowed(&*STYLED),
            ElementContentHandlers::default().element(|el: &mut Element<'_, '_>| {
                let value = el.get_attribute("style").unwrap_or_default();
                if el.tag_name() != "base" && state.borrow_mut().style_attribute(&value) {
                    return Err("link limit reached".into());
                }
                Ok(())
            }),
        ))
        .append_element_content_handler((
            Cow::Borrowed(&*STYLE),
            ElementContentHandlers::default()
                .element(|el: &mut Element<'_, '_>| {
                    style.borrow_mut().1 = el.namespace_uri() == "http://www.w3.org/1999/xhtml";
                    Ok(())
                })
                .text(|chunk: &mut TextChunk<'_>| {
                    let mut style = style.borrow_mut();
                    if !style.1 {
                        return Ok(());
                    }
                    style.0.push_str(chunk.as_str());
                    if !chunk.last_in_text_node() {
                        return Ok(());
                    }
                    let css = std::mem::take(&mut style.0);
                    if state.borrow_mut().css(&css) {
                        return Err("link limit reached".into());
                    }
                    Ok(())
                }),
        ))
        .append_element_content_handler((
            Cow::Borrowed(selector()),
            ElementContentHandlers::default().element(|el: &mut Element<'_, '_>| {
                let name = el.tag_name();
                if name == "base" {
                    return base(el);
                }
                if state.borrow_mut().element(&name, el) {
                    return Err("link limit reached".into());
                }
                Ok(())
            }),
        ));
    if noscript_depth < MAX_NOSCRIPT_DEPTH {
        settings = settings.append_element_content_handler((
            Cow::Borrowed(noscript_selector()),
            ElementContentHandlers::default().text(|chunk: &mut TextChunk<'_>| {
                let mut pending = noscript.borrow_mut();
                let room = MAX_NOSCRIPT.saturating_sub(pending.len());
                let text = chunk.as_str();
                let mut end = room.min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                pending.push_str(&text[..end]);
                if !chunk.last_in_text_node() {
                    return Ok(());
                }
                let markup = std::mem::take(&mut *pending);
                drop(pending);
                let mut state = state.borrow_mut();
                let utf8 = AsciiCompatibleEncoding::utf_8();
                parse_with(
                    markup.as_bytes(),
                    utf8,
                    false,
                    &mut state,
                    noscript_depth + 1,
                    base,
                );
                if state.out.truncated {
                    return Err("link limit reached".into());
                }
                Ok(())
            }),
        ));
    }
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    let written = body
        .chunks(CHUNK)
        .try_for_each(|chunk| rewriter.write(chunk));
    written.and_then(|()| rewriter.end()).is_ok()
}

type BaseHandler<'b> =
    dyn Fn(&mut Element<'_, '_>) -> Result<(), Box<dyn std::error::Error + Send + Sync>> + 'b;

fn selector() -> &'static Selector {
    static PARSED: LazyLock<Selector> =
        LazyLock::new(|| SELECTOR.parse().expect("SELECTOR is valid CSS"));
    &PARSED
}

/// Elements with a `style` attribute, and `<style>` elements.
static STYLED: LazyLock<Selector> = LazyLock::new(|| "[style]".parse().expect("a valid selector"));
static STYLE: LazyLock<Selector> = LazyLock::new(|| "style".parse().expect("a valid selector"));

fn noscript_selector() -> &'static Selector {
    static PARSED: LazyLock<Selector> =
        LazyLock::new(|| "noscript".parse().expect("a valid selector"));
    &PARSED
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(body: &[u8], charset: Option<&str>) {
        for max in [1000, 2] {
            if let Err(e) = agree(body, charset, max) {
                panic!("{e}");
            }
        }
    }

    #[test]
    fn the_fixture_site_agrees() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/site");
        let mut pages = 0;
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "html") {
                    let body = std::fs::read(&path).unwrap();
                    check(&body, None);
                    check(&body, Some("utf-8"));
                    pages += 1;
                }
            }
        }
        assert!(pages >= 10, "{pages} fixture pages");
    }

    #[test]
    fn the_test_webs_pages_agree() {
        let graph = testweb::graph::Graph::new(testweb::graph::GraphSpec {
            hosts: 3,
            pages_per_host: 40,
            ..Default::default()
        });
        let origins: Vec<String> = (0..3).map(|h| format!("http://h{h}.test:80")).collect();
        for host in 0..3 {
            for page in 0..40 {
                check(graph.render(&origins, host, page).as_bytes(), None);
            }
        }
        let community = testweb::community::Community::new(Default::default());
        for path in community.member_paths().iter().take(40) {
            let page = community.page_of_path(path).unwrap();
            check(community.render(page).as_bytes(), None);
        }
    }

    /// Markup written to hurt tokenizers: every case is compared, none may be skipped.
    #[test]
    fn hostile_markup_agrees() {
        let cases: &[&[u8]] = &[
            b"<a href=/one>one<a href=two.html>two<img src=three.png alt=x y z><b <a href='/four'> 1 < 2 <<a href=\"/five\"</table></td><a href=/six",
            b"<textarea><a href=/no></textarea><script>document.write('<a href=/js>')</script><!-- <a href=/comment> --><title><a href=/t></title><a href=/yes>",
            b"<script><!--<script></script><a href=/hidden></script>--></script><a href=/seen>",
            b"<script><!-- <a href=/x> --></script><a href=/y>",
            b"<!--><a href=/after-empty-comment><!---><a href=/b><!-- x --!><a href=/c><!-- -- --><a href=/d>",
            b"<!DOCTYPE html PUBLIC \"a>b\"><a href=/doctype-ends-early>",
            b"<svg><![CDATA[<a href=/cdata>]]><a href=/in-svg></svg><![CDATA[<a href=/html-cdata>]]><a href=/z>",
            b"<svg><title><a href=/svg-title></title><style><a href=/svg-style></style></svg><style><a href=/no></style>",
            b"<svg><foreignObject><style><a href=/no></style></foreignObject><style><a href=/svg></style></svg>",
            b"<math><mi><textarea><a href=/no></textarea></mi><textarea><a href=/math></textarea></math>",
            b"<math><annotation-xml encoding=\"TEXT/HTML\"><title><a href=/no></title></annotation-xml></math><a href=/out>",
            b"<svg><font color=red><title><a href=/no></title><a href=/x>",
            b"<svg><p><title><a href=/no></title>",
            b"<svg></p><title><a href=/no></title>",
            b"<title x=><a href=/no></title><textarea a = ><a href=/no></textarea><a href=/yes>",
            b"<a href = '/spaced' rel = 'nofollow' ><a/href=/slash><a href=/dup href=/second>",
            b"<a href=\"/unterminated><a href=/x>",
            b"<plaintext><a href=/no>",
            b"<xmp><a href=/no></xmp><noembed><a href=/no></noembed><noframes><a href=/no></noframes><iframe src=/f><a href=/no></iframe><a href=/yes>",
            b"<noscript><a href=/ns></noscript><noscript/><a href=/ns2></noscript><NOSCRIPT><noscript><a href=/deep></NOSCRIPT>",
            b"<noscript><a href=/eof>",
            b"<noscript><a href=/end-tag-cut></noscript x=\"",
            b"<style></style x=\"></style>\"><a href=/after-style>",
            b"<style></styles><a href=/no></style ><a href=/yes>",
            b"<script></script/><a href=/a></scriptx><script>a</SCRIPT\t><a href=/b>",
            b"<meta charset=windows-1252><a href=\"/caf\xe9\">",
            b"<meta charset=\"windows-1252\" content=\"\xe9\"><meta name=robots content=\"\xe9,nofollow\"><a href=\"/caf\xe9\">",
            b"<meta http-equiv=Content-Type content=\"text/html; charset=koi8-r\"><a href=\"/\xc1\">",
            b"<meta charset=utf-16><meta charset=latin1><a href=\"/\xe9\">",
            b"<a href=\"\xef\xbb\xbf/bom\"><a href=\"\xff\xfe/\x00x\">",
            b"<a href='&#x2F;b&#47;c'>&amp;<a href=\"a?x=1&amp;y=2&copy=3\"><img srcset=\" a.jpg 1x , b.jpg (x, y), c.jpg\">",
            b"<base href=\"http://other.test/b/\"><base href=/ignored><a href=x><noscript><base href=/z><a href=y></noscript>",
            b"<meta http-equiv=refresh content=\"0; url='/r?a=1&amp;b'\"><META HTTP-EQUIV=Refresh CONTENT=5>",
            b"<a\x00 href=/nul><a href=/x\x00y><\x00a href=/z>",
            b"</a href=/end-tag-attr><a href=/ok></><a href=/ok2></ x><a href=/ok3><?php <a href=/q> ?><a href=/ok4>",
            b"<!a href=/bogus><a href=/ok><!-a><a href=/ok2><!--a--!x--><a href=/inside>-->",
            b"<a rel=\"external NOFOLLOW\" href=/nf><form rel=nofollow action=/f><area href=/ar rel=nofollow><link rel=nofollow href=/l>",
            // Character references, NUL and refreshes are read by the shared element handling.
            b"<a href=\"/a?x=1&#38b=2\"><a href=\"/n&#0;x&#xD800;&#x110000;&#128;\"><a href=\"/p?v=&gt x&pound_id&copy=2&notit;\"><a href=\"/x\x00y\">",
            b"<meta http-equiv=refresh content=\"5x; url=/r1\"><meta http-equiv=\" refresh\" content=\"0; url=/r2\"><meta http-equiv=refresh content=\"0; url=/r3\"><meta http-equiv=refresh content=\"0; url=/r4\">",
            // The first base applies to the links before it (the oracle finds it first).
            b"<a href=before><link href=l.css><base href=\"http://b.test/d/\"><a href=after>",
            b"<noscript><a href=before></noscript><base href=\"http://b.test/d/\"><noscript><a href=after></noscript>",
            // CSS: `style` attributes (before the element's other attributes), HTML `<style>`.
            b"<p style=\"background:url(/s1)\"><img style='x:url(&quot;/s2&quot;)' src=/i><style>a{b:url(/s3)}</style><svg><style>a{b:url(/svg)}</style></svg><base style=\"x:url(/b)\" href=/d/><a href=x style=\"y:image-set('z.png' 1x)\">",
            // `<noscript>` text that ends where the markup does.
            b"<noscript><a title=\"x\" href=/ns><!-- c --><script>1</script></noscript><a href=/after>",
        ];
        for case in cases {
            let page = Url::parse(PAGE).unwrap();
            let (_, stopped) = extract_page(case, &page, None, 1000, "crawl");
            assert!(!stopped);
            for charset in [None, Some("windows-1252")] {
                for max in [1000, 2] {
                    match agree(case, charset, max) {
                        Ok(true) => {}
                        Ok(false)
                            if [&b"svg"[..], b"x=>", b"a = >"]
                                .iter()
                                .any(|w| case.windows(w.len()).any(|c| c == *w)) => {}
                        Ok(false) => panic!("{:?} was not compared", String::from_utf8_lossy(case)),
                        Err(e) => panic!("{e}"),
                    }
                }
            }
        }
    }

    /// Documents the standard reads unlike `lol_html` (a rewriter, not a tree builder), which
    /// the extractor follows: each is left out of the comparison, by name, and only these.
    #[test]
    fn where_the_standard_differs_from_lol_html_nothing_is_compared() {
        let cases: &[&[u8]] = &[
            // `lol_html` does not read `<image>` as `<img>`.
            b"<image src=/i.png><a href=/a>",
            // Nor a `<base>` in a template as not the document's.
            b"<template><base href=\"http://t.test/\"></template><a href=x>",
            // Nor a `<base>` in SVG as no HTML base.
            b"<svg><base href=\"http://t.test/\"></svg><a href=x>",
            // It reads `<noscript>` as text, ending it inside an attribute value, a comment,
            // a text element or a tag of the markup it holds,
            b"<noscript><a title=\"</noscript>\" href=/ns></noscript><a href=/after>",
            b"<noscript><!-- </noscript> --><a href=/in></noscript>",
            b"<noscript><script></noscript></script><a href=/s>",
            b"<noscript><a href=/a </noscript>",
            b"<noscript><title></noscript>",
            // and the oracle parses that text again without a charset, from a fresh namespace
            // stack, two levels and 1 MiB deep at most.
            b"<noscript><meta charset=windows-1252></noscript><a href=\"/\xe9\">",
            b"<noscript><svg></noscript><style><a href=/x></style>",
            b"<svg><foreignObject><noscript></foreignObject></noscript><a href=/x>",
            b"<noscript><noscript><noscript><a href=/deep>",
            b"<noscript x=><a href=/forced>",
        ];
        for case in cases {
            assert_eq!(
                agree(case, None, 1000),
                Ok(false),
                "{:?}",
                String::from_utf8_lossy(case)
            );
        }
        let mut big = b"<noscript>".to_vec();
        big.resize(MAX_NOSCRIPT + 20, b'x');
        assert_eq!(agree(&big, None, 1000), Ok(false));
    }

    /// Every tag the tree builder simulation treats specially, in SVG, MathML and HTML, followed
    /// by content whose reading depends on the namespace in effect.
    #[test]
    fn foreign_content_rules_agree() {
        let tags = [
            "b",
            "big",
            "blockquote",
            "body",
            "br",
            "center",
            "code",
            "dd",
            "div",
            "dl",
            "dt",
            "em",
            "embed",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "head",
            "hr",
            "i",
            "img",
            "li",
            "listing",
            "menu",
            "meta",
            "nobr",
            "ol",
            "p",
            "pre",
            "ruby",
            "s",
            "small",
            "span",
            "strong",
            "strike",
            "sub",
            "sup",
            "table",
            "tt",
            "u",
            "ul",
            "var",
            "font",
            "font color=red",
            "font SIZE",
            "font face=x",
            "desc",
            "title",
            "foreignObject",
            "mi",
            "mo",
            "mn",
            "ms",
            "mtext",
            "annotation-xml",
            "annotation-xml encoding=text/html",
            "annotation-xml encoding='application/xhtml+xml'",
            "svg",
            "math",
            "h7",
            "a",
            "x-y",
        ];
        let mut compared = 0;
        for outer in ["", "<svg>", "<math>", "<svg><foreignObject>", "<math><mi>"] {
            for tag in tags {
                let name = tag.split(' ').next().unwrap();
                for (open, close) in [
                    (format!("<{tag}>"), String::new()),
                    (format!("<{tag}/>"), String::new()),
                    (format!("<{tag}>"), format!("</{name}>")),
                    (String::new(), format!("</{name}>")),
                ] {
                    let body = format!(
                        "{outer}{open}{close}<style><a href=/in-style></style>\
                         <![CDATA[<a href=/in-cdata>]]><a href=/after>"
                    );
                    compared += usize::from(agree(body.as_bytes(), None, 100) == Ok(true));
                    check(body.as_bytes(), None);
                }
            }
        }
        assert_eq!(compared, 5 * tags.len() * 4);
    }

    /// Fragments documents are made of: tags that switch the tokenizer's state, the ways a
    /// comment or a tag can end, URL-bearing elements, charsets, stray bytes.
    const FRAGMENTS: &[&str] = &[
        "<a href=/a>",
        "<A HREF='b.html' REL=NoFollow>",
        "<a href=\"?q=1&amp;r\">",
        "<a href",
        "<a href=//h.test/x>",
        "<a href=javascript:x>",
        "<a href=&#47;e>",
        "<a href=\" /s \">",
        "<base href=http://o.test/b/>",
        "<base href=../up/>",
        "<base>",
        "<meta name=robots content=nofollow>",
        "<meta name=crawl content=noindex>",
        "<meta charset=windows-1252>",
        "<meta charset=koi8-r>",
        "<meta charset=utf-16>",
        "<meta http-equiv=content-type content=\"text/html; charset=iso-8859-5\">",
        "<meta http-equiv=refresh content=\"0;url=/r\">",
        "<img src=i.png srcset=\"x 1x, y 2x\">",
        "<video poster=/p src=/v>",
        "<object data=/o>",
        "<form action=/f rel=nofollow>",
        "<link href=/l>",
        "<iframe src=/if>",
        "</iframe>",
        "<input src=/in>",
        "<script>",
        "</script>",
        "<script src=/s.js>",
        "</script ",
        "<SCRIPT>",
        "</SCRIPT>",
        "<style>",
        "</style>",
        "<title>",
        "</title>",
        "<textarea>",
        "</textarea>",
        "<noscript>",
        "</noscript>",
        "<noscript/>",
        "<plaintext>",
        "<xmp>",
        "</xmp>",
        "<noembed>",
        "</noembed>",
        "<noframes>",
        "</noframes>",
        "<svg>",
        "</svg>",
        "<math>",
        "</math>",
        "<foreignObject>",
        "</foreignObject>",
        "<desc>",
        "</desc>",
        "<mi>",
        "</mi>",
        "<annotation-xml encoding=\"text/html\">",
        "</annotation-xml>",
        "<font color=red>",
        "<font>",
        "<b>",
        "<p>",
        "</p>",
        "<br>",
        "</br>",
        "<![CDATA[",
        "]]>",
        "<!--",
        "-->",
        "--!>",
        "<!-->",
        "<!--->",
        "--",
        "-",
        "<!",
        "<!DOCTYPE html>",
        "<?x",
        "</",
        "<",
        ">",
        "/>",
        "/",
        "=",
        "\"",
        "'",
        " ",
        "\n",
        "\t",
        "x",
        "a",
        "script",
        "&amp;",
        "&#x2F;",
        "<div x=>",
        "<title x=>",
        "<noscript x=>",
        "<script><!--<script>",
        "\u{e9}",
        "\u{fffd}",
        "\0",
        "<a href=\"/\u{e9}\">",
    ];

    fn document() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            prop::collection::vec(prop::sample::select(FRAGMENTS), 0..40)
                .prop_map(|parts| parts.concat().into_bytes()),
            // Byte soup of the characters tokenizers branch on.
            prop::collection::vec(
                prop::sample::select(
                    b"<>/!-=\"' \nahrefsvgscriptmathnoscript[CDATA]\xe9\xff".to_vec()
                ),
                0..120
            ),
            // Fragments with a few random bytes mixed in.
            prop::collection::vec(
                prop_oneof![
                    prop::sample::select(FRAGMENTS).prop_map(|f| f.as_bytes().to_vec()),
                    any::<u8>().prop_map(|b| vec![b]),
                ],
                0..30
            )
            .prop_map(|parts| parts.concat()),
        ]
    }

    /// The generated documents test something: most are compared, and most of those have links.
    #[test]
    fn generated_documents_are_mostly_compared_and_have_links() {
        use proptest::strategy::ValueTree;
        use proptest::test_runner::TestRunner;
        let mut runner = TestRunner::deterministic();
        let (mut compared, mut with_links) = (0, 0);
        for _ in 0..1000 {
            let body = document().new_tree(&mut runner).unwrap().current();
            if agree(&body, None, 1000) == Ok(true) {
                compared += 1;
                with_links += usize::from(!scanned(&body, None, 1000).0.links.is_empty());
            }
        }
        assert!(compared >= 850, "{compared} of 1000 compared");
        assert!(
            with_links >= compared / 4,
            "{with_links} of {compared} with links"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn generated_documents_agree(
            body in document(),
            charset in prop::option::of(prop::sample::select(
                vec!["utf-8", "windows-1252", "shift_jis", "utf-16", "bogus"],
            )),
            max_links in prop::sample::select(vec![1000usize, 3]),
        ) {
            if let Err(e) = agree(&body, charset, max_links) {
                prop_assert!(false, "{}", e);
            }
        }
    }
}
