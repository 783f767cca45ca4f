//! A page's text: `main_text` (the main content, boilerplate removed: `--text main`) and
//! `full_text` (all visible text: `--text full`).
//!
//! Both return UTF-8 text of lines, one block (paragraph, heading, list item, table row, code
//! block) to a line, in reading order, whitespace inside a line collapsed to single spaces, and
//! are never longer than the page.
//!
//! `full_text` reads the page with the link extractor's tokenizer (`url::html`), which notes the
//! runs of text between tags in its one pass; the tags between two runs say whether they are
//! one block (inline tags: `<b>`, `<a>`, `<span>`) or two (`BLOCKS`: `<p>`, `<li>`, `<br>`,
//! `<td>`...; `tags::ends_line`). It copies nothing but the text.
//!
//! `main_text` is `one_pass::main_text` where it answers: the main content found by the
//! `trafilatura` crate's own rules, read in one pass of the same tokenizer, on pages where
//! that is what trafilatura itself would keep (its module doc says when). Elsewhere it is the
//! `trafilatura` crate (the Rust port of go-trafilatura, itself a port of Python's trafilatura,
//! with its readability and baseline fallbacks on; vendor/trafilatura's copy, patched to skip
//! the work whose results we do not read, PATCHES.md there) over an html5ever tree of the
//! page's first `MAX_TREE_BYTES`, the HTML of the content it keeps made lines by `full_text`'s
//! reading. A first line that repeats the page's title is then dropped (the title is
//! metadata). On the Zyte article-extraction benchmark (181 pages, its own scorer) the one
//! pass answers 146 pages, and `main_text` scores F1 0.969 (precision 0.955, recall 0.984)
//! where the crate alone scores 0.964 and Python trafilatura 2.3.1 0.960 (BENCHMARKS.md,
//! "Main text in one pass"; `benches/extraction.sh`).

use crate::content::lines::Lines;
use crate::content::{metadata, one_pass, tags};
use crate::url::html::{Token, Tokenizer, attribute_value};
use url::Url;

/// Which text `--text` keeps of a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TextMode {
    /// The main content, boilerplate removed (`main_text`).
    Main,
    /// All visible text (`full_text`).
    Full,
}

/// The text `mode` keeps of a page whose body reads as `body` (decoded to UTF-8), fetched
/// from `url`, whose titles (`metadata::titles`) are `titles`: of an HTML page (`html`) its
/// main or full text, of a plain-text page the text itself (with its line endings made `\n`).
pub fn text_of(mode: TextMode, body: &str, html: bool, url: &Url, titles: &[String]) -> String {
    match (html, mode) {
        (true, TextMode::Main) => main_text_titled(Extractor::Either, body, url, titles),
        (true, TextMode::Full) => full_text(body),
        (false, _) => body.replace("\r\n", "\n"),
    }
}

/// Bytes of a page `main_text` builds its tree of; the rest is not read. Extraction's tree costs
/// tens of bytes of memory per byte of page, and main content that starts past this is rare.
pub const MAX_TREE_BYTES: usize = 2 << 20;

/// Elements nested deeper than this (`nesting_at_most`) make `main_text` give the page's full
/// text instead: the parser's and the extractor's time grow with the square of the nesting
/// (10 s for 10,000 `<div>`s in 0.1 MB) and the extractor's recursion with it (100,000
/// overflow an 8 MiB stack; a worker has 512 KiB). The deepest page of the article-extraction
/// benchmark nests about 50 deep.
pub const MAX_DEPTH: usize = 500;

/// The main content of `html`, the page fetched from `url`: its paragraphs, headings, lists,
/// tables and code, in reading order, without the navigation, headers, footers, sidebars,
/// comment sections and advertisements around them. A page whose main content the extractor
/// does not find gives the text its last-resort baseline reads (the body's paragraphs, else
/// all its text); empty if the page has no text or the extractor fails.
pub fn main_text(html: &str, url: &Url) -> String {
    main_text_by(Extractor::Either, html, url)
}

/// Which extractor `main_text_by` runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Extractor {
    /// The one-pass reading where it answers (`one_pass`), trafilatura elsewhere: `--text main`.
    Either,
    /// trafilatura alone.
    Trafilatura,
    /// The one-pass reading alone: empty where it does not answer.
    OnePass,
}

/// `main_text` by the extractor `by`; the others are for comparing them
/// (`examples/extract_bench.rs`).
pub fn main_text_by(by: Extractor, html: &str, url: &Url) -> String {
    main_text_titled(by, html, url, &metadata::titles(html, url))
}

/// `main_text_by` of a page whose titles (`metadata::titles`) are `titles`.
fn main_text_titled(by: Extractor, html: &str, url: &Url, titles: &[String]) -> String {
    if by != Extractor::Trafilatura {
        let page = &html[..html.floor_char_boundary(MAX_TREE_BYTES)];
        // A panic costs the page its one pass, not the crawl its worker: trafilatura decides.
        let answer = std::panic::catch_unwind(|| one_pass::main_text(page, MAX_DEPTH));
        match answer.unwrap_or(None) {
            Some(text) => return without_title(text, titles),
            None if by == Extractor::OnePass => return String::new(),
            None => {}
        }
    }
    let text = match main_content(html, url, false, |_| ()) {
        MainContent::Html(kept) => full_text(&kept),
        MainContent::TooDeep(page) => return full_text(page),
        MainContent::Failed => return String::new(),
    };
    without_title(text, titles)
}

/// What the extractor kept of a page (`main_content`).
pub(crate) enum MainContent<'h> {
    /// The HTML of the main content, as the extractor writes it (its own tags: `<h1>`-`<h6>`,
    /// `<p>`, lists, tables, `<blockquote>`, `<code>` for inline code and code blocks alike,
    /// attributes dropped but a link's `href` and an image's `src` and `alt`).
    Html(String),
    /// The page (its first `MAX_TREE_BYTES`) nests deeper than `MAX_DEPTH`: not extracted.
    TooDeep(&'h str),
    /// The extractor failed (or panicked).
    Failed,
}

/// The main content of `html`, fetched from `url`, as the `trafilatura` crate keeps it, over an
/// html5ever tree of the page's first `MAX_TREE_BYTES`; with `links_and_images` its links
/// (made absolute against `url`) and images stay. `inspect` reads the page's tree before the
/// extractor takes it (which drops attributes the caller may want).
pub(crate) fn main_content<'h>(
    html: &'h str,
    url: &Url,
    links_and_images: bool,
    inspect: impl FnOnce(&trafilatura::dom::Document),
) -> MainContent<'h> {
    let page = &html[..html.floor_char_boundary(MAX_TREE_BYTES)];
    if nesting_at_most(page.as_bytes(), MAX_DEPTH).is_none() {
        return MainContent::TooDeep(page);
    }
    let tree = trafilatura::dom::Document::parse(page);
    inspect(&tree);
    let mut options = trafilatura::Options::default()
        .with_fallback(true)
        .with_links(links_and_images)
        .with_images(links_and_images)
        .with_url(url.clone());
    // The crate's metadata and language are not read (`content::metadata` finds ours,
    // `datePublished` and the detected language included): its metadata pass was 13 % of the
    // extraction's CPU on rust-doc pages, 19 % on the Python docs; its language
    // classification (unpatched whatlang over all the kept text) 16 % on short pages. Both are off
    // (options of vendor/trafilatura's patch); the kept content is the same without them.
    options.html_date_mode = trafilatura::HtmlDateMode::Disabled;
    options.skip_metadata = true;
    options.skip_language = true;
    // A panic in the extractor costs the page its text, not the crawl its worker.
    let extracted = std::panic::catch_unwind(|| trafilatura::extract_document(tree, &options));
    match extracted {
        Ok(Ok(result)) => MainContent::Html(result.content_html),
        _ => MainContent::Failed,
    }
}

/// Elements that end without an end tag: void ones, and those the next of their kind (or
/// their parent's end) closes, which pages leave open (lower case).
const SELF_ENDING: [&[u8]; 22] = [
    b"area", b"base", b"br", b"col", b"embed", b"hr", b"img", b"input", b"link", b"meta", b"param",
    b"source", b"track", b"wbr", b"p", b"li", b"td", b"th", b"tr", b"dt", b"dd", b"option",
];

/// The deepest the elements of `html` nest, counted from its tags (start tags less end tags,
/// those of `SELF_ENDING` and `<x/>` aside; comments, scripts and styles skipped), if at most
/// `max`; `None` past it. The parser closes some elements without end tags this does not
/// know of, so it may count deeper than the tree is, never shallower. One pass, before the
/// parse: the parser's own time grows with the square of the nesting.
fn nesting_at_most(html: &[u8], max: usize) -> Option<usize> {
    let (mut at, mut depth, mut deepest) = (0, 0usize, 0);
    while let Some(lt) = memchr::memchr(b'<', &html[at..]) {
        at += lt + 1;
        let rest = &html[at..];
        if rest.starts_with(b"!--") {
            at += memchr::memmem::find(rest, b"-->").map_or(rest.len(), |e| e + 3);
            continue;
        }
        let end_tag = rest.first() == Some(&b'/');
        let name = &rest[usize::from(end_tag)..];
        let name = &name[..name
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count()];
        if name.is_empty() || !name[0].is_ascii_alphabetic() {
            continue;
        }
        if end_tag {
            depth = depth.saturating_sub(1);
            continue;
        }
        let gt = memchr::memchr(b'>', rest).unwrap_or(rest.len());
        let raw = [&b"script"[..], b"style"]
            .into_iter()
            .find(|r| name.eq_ignore_ascii_case(r));
        if let Some(raw) = raw {
            // Skip to the element's end tag (`</script`, any case).
            let mut end = gt;
            while let Some(i) = memchr::memmem::find(&rest[end..], b"</") {
                end += i + 2;
                let tail = &rest[end..];
                if tail.len() >= raw.len() && tail[..raw.len()].eq_ignore_ascii_case(raw) {
                    break;
                }
            }
            at += end.min(rest.len());
            continue;
        }
        let self_closing = gt > 0 && rest[gt - 1] == b'/';
        if !self_closing && !SELF_ENDING.iter().any(|e| name.eq_ignore_ascii_case(e)) {
            depth += 1;
            deepest = deepest.max(depth);
            if deepest > max {
                return None;
            }
        }
    }
    Some(deepest)
}

/// `text` without its first line if that line is (words of) one of the page's `titles`: the
/// title is the page's metadata, the text its body (the benchmark's ground truth leaves the
/// headline out too: precision 0.939 -> 0.947, recall unchanged).
fn without_title(text: String, titles: &[String]) -> String {
    let first = text.split('\n').next().unwrap_or_default();
    let line = words(first);
    if line.trim().is_empty() || !titles.iter().any(|t| words(t).contains(&line)) {
        return text;
    }
    text[first.len()..].trim_start_matches('\n').to_string()
}

/// The words of `text` (runs of letters, digits and `_`, the benchmark's `\w+`), lower case,
/// each between spaces.
fn words(text: &str) -> String {
    let mut out = String::from(" ");
    for word in text.split(|c: char| !c.is_alphanumeric() && c != '_') {
        if !word.is_empty() {
            out.extend(word.chars().flat_map(char::to_lowercase));
            out.push(' ');
        }
    }
    out
}

/// All the visible text of `html`: the text between tags, outside `<script>`, `<style>`,
/// `<title>`, `<textarea>` and templates, `<noscript>` included (read as a browser with scripts
/// off reads it), one block to a line.
pub fn full_text(html: &str) -> String {
    let bytes = html.as_bytes();
    let mut out = Lines::with_capacity(html.len() / 2);
    let mut tokens = Tokenizer::new(bytes);
    tokens.keep_attributes_of(|_| None);
    tokens.collect_text(true);
    let (mut last_end, mut pre) = (0, 0u32);
    let mut take = |tokens: &mut Tokenizer, out: &mut Lines| {
        for run in tokens.take_text_runs() {
            if breaks_line(&bytes[last_end..run.start], &mut pre) {
                out.end_line();
            }
            let text = attribute_value(&html[run.clone()]);
            if pre > 0 {
                out.push_preformatted(&text);
            } else {
                out.push(&text);
            }
            last_end = run.end;
        }
    };
    while let Some(token) = tokens.next_token() {
        take(&mut tokens, &mut out);
        let _: Token = token;
    }
    take(&mut tokens, &mut out);
    out.finish()
}

/// Whether the markup between two runs of text (tags, comments, script or style content)
/// holds a tag of `BLOCKS`; counts the `<pre>` elements it opens and closes into `pre`.
fn breaks_line(markup: &[u8], pre: &mut u32) -> bool {
    let (mut at, mut breaks) = (0, false);
    while let Some(lt) = memchr::memchr(b'<', &markup[at..]) {
        at += lt + 1;
        let end_tag = markup.get(at) == Some(&b'/');
        let name_start = at + usize::from(end_tag);
        let len = markup[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        let name = &markup[name_start..name_start + len];
        if !tags::ends_line(name) {
            continue;
        }
        breaks = true;
        if name.eq_ignore_ascii_case(b"pre") {
            *pre = if end_tag {
                pre.saturating_sub(1)
            } else {
                *pre + 1
            };
        }
    }
    breaks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An article page: the content between a site's header, navigation, sidebar, comments
    /// and footer, with a heading, paragraphs, a list, a table and code.
    const ARTICLE: &str = r#"<!doctype html><html lang="en"><head><title>How rivers carve their valleys | Site</title>
        <style>body { color: red }</style><script>var tracking = "boilerplate";</script></head>
        <body><header><a href="/">Site name</a> <a href="/login">Log in</a></header>
        <nav><ul><li><a href="/a">Home</a></li><li><a href="/b">News</a></li>
        <li><a href="/c">Archive</a></li></ul></nav>
        <main><article>
        <h1>How rivers carve their valleys</h1>
        <p>Rivers shape the land they cross. Over thousands of years, the water that runs down a
        slope carries sand and stones, and those grains wear the riverbed down a little more
        every season, until a valley forms where a plain once lay.</p>
        <h2>What the water carries</h2>
        <p>The load of a river is the material it moves: dissolved minerals, fine silt held in
        the current, and the gravel and boulders that roll along its bed during floods.</p>
        <ul><li>dissolved load: minerals in solution,</li><li>suspended load: silt and clay,</li>
        <li>bed load: sand, gravel and boulders.</li></ul>
        <table><tr><th>River</th><th>Length in km</th></tr><tr><td>Nile</td><td>6650</td></tr>
        <tr><td>Amazon</td><td>6400</td></tr></table>
        <p>A simple model of the erosion rate is written as code by the survey's hydrologists,
        who run it over every measured cross-section of the riverbed each spring.</p>
        <pre><code>rate = k * discharge * slope</code></pre>
        <p>Where the rock is hard the valley stays narrow; where it is soft the river widens
        it, and meanders form as the current swings from one bank to the other over time.</p>
        </article></main>
        <aside><h3>Most read</h3><ul><li><a href="/x">Ten best cameras of the year</a></li>
        <li><a href="/y">Celebrity gossip of the week</a></li></ul></aside>
        <section id="comments" class="comments"><h3>3 comments</h3>
        <div class="comment"><p>Spam spam, buy cheap watches now at the best price ever.</p></div></section>
        <footer><p>Copyright 2024 Site name. All rights reserved. Privacy policy.</p></footer>
        </body></html>"#;

    fn url() -> Url {
        Url::parse("https://example.com/rivers").unwrap()
    }

    #[test]
    fn main_text_keeps_the_article_in_reading_order_without_the_boilerplate() {
        let text = main_text(ARTICLE, &url());
        let order = [
            "Rivers shape the land they cross.",
            "What the water carries",
            "dissolved load: minerals in solution,",
            "bed load: sand, gravel and boulders.",
            "Nile",
            "6650",
            "rate = k * discharge * slope",
            "meanders form",
        ];
        let mut at = 0;
        for words in order {
            let found = text[at..].find(words);
            assert!(found.is_some(), "{words:?} after byte {at} of:\n{text}");
            at += found.unwrap();
        }
        // The headline repeats the title, which is metadata.
        assert!(text.starts_with("Rivers shape the land"), "{text}");
        for boilerplate in [
            "Log in",
            "Archive",
            "tracking",
            "color: red",
            "Ten best cameras",
            "cheap watches",
            "Copyright",
        ] {
            assert!(!text.contains(boilerplate), "{boilerplate:?} in:\n{text}");
        }
        // One block to a line: a heading, a list item, a paragraph each on its own.
        let lines: Vec<&str> = text.lines().collect();
        for line in [
            "What the water carries",
            "suspended load: silt and clay,",
            "rate = k * discharge * slope",
        ] {
            assert!(lines.contains(&line), "{line:?} not a line of:\n{text}");
        }
        assert!(text.len() < ARTICLE.len());
    }

    #[test]
    fn a_first_line_is_dropped_only_if_a_title_has_its_words() {
        let titles = ["Rivers: how they carve valleys – Site".to_string()];
        let drop = |text: &str| without_title(text.to_string(), &titles);
        assert_eq!(drop("How they CARVE valleys\nBody"), "Body");
        assert_eq!(drop("Rivers\n\nBody\nMore"), "Body\nMore");
        assert_eq!(drop("How they carve\nBody"), "Body");
        assert_eq!(drop("carve valley\nBody"), "carve valley\nBody");
        assert_eq!(drop("Body\nRivers"), "Body\nRivers");
        assert_eq!(drop("– \nBody"), "– \nBody");
        assert_eq!(without_title("Rivers".into(), &[]), "Rivers");
    }

    /// A page nested `depth` elements deep around one paragraph.
    fn nested(depth: usize) -> String {
        let words = "Words of a paragraph deep inside the page, long enough to be its content. ";
        format!(
            "<html><body>{}<p>{}</p>{}</body></html>",
            "<div>".repeat(depth),
            words.repeat(4),
            "</div>".repeat(depth)
        )
    }

    /// At `MAX_DEPTH` the extractor runs within a worker's stack; past it (where its time and
    /// stack would grow with the depth) the page gives its full text.
    #[test]
    fn deep_pages_stay_within_a_workers_stack() {
        // The <div>s and two levels more (<html> and <body>).
        let at_limit = nested(MAX_DEPTH - 2);
        assert_eq!(
            nesting_at_most(at_limit.as_bytes(), MAX_DEPTH),
            Some(MAX_DEPTH)
        );
        assert_eq!(
            nesting_at_most(nested(MAX_DEPTH - 1).as_bytes(), MAX_DEPTH),
            None
        );
        let thread = std::thread::Builder::new().stack_size(crate::schedule::pool::WORKER_STACK);
        let text = thread
            .spawn(move || {
                let past = main_text(&nested(100_000), &url());
                (main_text(&at_limit, &url()), past)
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(
            text.0.starts_with("Words of a paragraph deep"),
            "{}",
            text.0
        );
        assert_eq!(text.1, full_text(&nested(100_000)));
    }

    #[test]
    fn nesting_counts_open_elements_only() {
        let page = "<html><head><meta charset=utf-8><script>if (a<b) '<div><div>'</script>\
            <style>x</STYLE></head><body><!-- <div><div><div> --><div><p>a<p>b<br><img src=x>\
            <svg><path/></svg><ul><li>c<li>d</ul></div></body></html>";
        // html, body, div, ul (or svg).
        assert_eq!(nesting_at_most(page.as_bytes(), 10), Some(4));
        assert_eq!(nesting_at_most(page.as_bytes(), 3), None);
        assert_eq!(nesting_at_most(b"<unclosed <script>", 3), Some(1));
        assert_eq!(nesting_at_most(b"", 3), Some(0));
    }

    #[test]
    fn main_text_of_a_page_without_text_is_empty() {
        assert_eq!(main_text("", &url()), "");
        let scripts = "<html><head><title>T</title><script>var a = 1;</script></head></html>";
        assert_eq!(main_text(scripts, &url()), "");
        // Not HTML: the baseline reads what text there is.
        let garbage = "\u{0}\u{FFFD}<<<>>>&&&";
        assert!(main_text(garbage, &url()).len() <= garbage.len());
    }

    #[test]
    fn full_text_keeps_every_visible_block_on_its_line() {
        let page = "<html><head><title>T</title><style>p{}</style></head><body>\
            <nav><a href=/>Home</a> | <a href=/b>B</a></nav><h1>Head&shy;ing &amp; more</h1>\
            <p>One <b>bold</b>word, <a href=x>a link</a>.<br>Next line</p>\
            <script>var x = '<p>not text</p>';</script><ul><li>a</li><li>b</li></ul>\
            <table><tr><td>c1</td><td>c2</td></tr></table><!-- <p>comment</p> -->\
            <noscript>Turn on scripts</noscript><textarea>typed</textarea>\
            <template><p>not shown</p></template><pre>fn main() {\n    <b>run</b>();\n}</pre>\
            after</body></html>";
        assert_eq!(
            full_text(page),
            "Home | B\nHead\u{ad}ing & more\nOne boldword, a link.\nNext line\na\nb\nc1\nc2\n\
             Turn on scripts\nfn main() {\n    run();\n}\nafter"
        );
    }

    #[test]
    fn full_text_of_text_without_tags_is_that_text() {
        assert_eq!(full_text("  plain\n\n text  "), "plain text");
        assert_eq!(full_text(""), "");
    }
}
