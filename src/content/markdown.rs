//! A page's main content as Markdown (`--markdown`): CommonMark with GFM pipe tables.
//!
//! The main content is what `text::main_content` keeps (the `trafilatura` crate, as for
//! `--text main`), asked to keep links and images too. The extractor's HTML loses two things
//! the Markdown needs, so they are read from the page's own tree before the extractor takes it:
//! - the `<base href>`: the extractor makes links absolute against the page's URL only, so it is
//!   given the base (the page's URL joined with `<base href>`) instead, and images, which it
//!   leaves as written, are made absolute against the same base here;
//! - code blocks and their language: the extractor writes every `<pre>` as a bare `<code>`.
//!   The page's `<pre>` elements are listed with their text and the language their classes
//!   (or those of a `<code>` inside, or of an ancestor) name: `language-x`, `lang-x`,
//!   `highlight-x` (Sphinx, on a parent `<div>`), `sourceCode x` (pandoc), `rust` (rustdoc).
//!   A `<code>` of the kept content whose text is a listed `<pre>`'s is that code block.
//!
//! The Markdown is then written from an html5ever tree (`scraper`) of the kept HTML: ATX
//! headings, `-` and `1.` lists (nested ones indented under their item), `*emphasis*`,
//! `**strong**`, `[links](absolute)`, `![images](absolute)`, fenced code blocks with their
//! language, inline code, GFM pipe tables (the first row the header) and `>` blockquotes.
//!
//! Invariants: a heading is one line (a `<br>` in it is a space, as in a table cell); text is
//! escaped so that it renders as the page's text (every ASCII punctuation
//! character Markdown gives a meaning to is backslash-escaped, and a line's start where it could
//! open a block), code is fenced or spanned with more backticks than it holds, and link and
//! image destinations are absolute URLs with `(`, `)`, `<`, `>` and spaces escaped. Bounded as
//! `main_text` is: one tree of at most `text::MAX_TREE_BYTES`, one of the kept content, both
//! dropped before the function returns.

use crate::content::text::{self, MainContent};
use scraper::{ElementRef, Html, Node};
use url::Url;

/// The main content of `html`, the page fetched from `url`, as Markdown; empty if the page has
/// none. A page nested too deep to extract (`text::MAX_DEPTH`) gives its full text, escaped.
pub fn main_markdown(html: &str, url: &Url) -> String {
    let mut page = PageFacts::default();
    let base = base_of(html, url);
    let kept = text::main_content(html, &base, true, |tree| page = PageFacts::read(tree));
    match kept {
        MainContent::Html(kept) => Writer::new(&base, page.code_blocks).document(&kept),
        MainContent::TooDeep(page) => text::full_text(page)
            .lines()
            .map(|line| escape_line_start(&escape(line)))
            .collect::<Vec<_>>()
            .join("\n\n"),
        MainContent::Failed => String::new(),
    }
}

/// The main content of `html` from `url` as the extractor keeps it (its HTML, links made
/// absolute against the page's base): what `main_markdown` writes as Markdown, for
/// `examples/main_content.rs` (`benches/markdown.sh` compares the two). `None` where
/// `main_markdown` does not read the extractor's HTML (a page too deep, or the extractor failed).
pub fn kept_html(html: &str, url: &Url) -> Option<String> {
    match text::main_content(html, &base_of(html, url), true, |_| {}) {
        MainContent::Html(kept) => Some(kept),
        MainContent::TooDeep(_) | MainContent::Failed => None,
    }
}

/// The URL the page's relative links resolve against: `url` joined with the first `<base
/// href>` (as browsers do), else `url`.
fn base_of(html: &str, url: &Url) -> Url {
    use crate::url::html::{Namespace, Token, Tokenizer, attribute_value};
    let mut tokens = Tokenizer::new(html.as_bytes());
    tokens.keep_attributes_of(|name| {
        ["base", "body"]
            .into_iter()
            .find(|n| name.eq_ignore_ascii_case(n.as_bytes()))
    });
    while let Some(token) = tokens.next_token() {
        let Token::Start {
            ns: Namespace::Html,
            ..
        } = token
        else {
            continue;
        };
        match tokens.kept_as() {
            // `<base>` belongs in `<head>`: the body's start ends the search.
            Some("body") => break,
            Some("base") => {
                if let Some(range) = tokens.attr_range(b"href") {
                    let href = attribute_value(&html[range]);
                    return url.join(href.trim()).unwrap_or_else(|_| url.clone());
                }
            }
            _ => {}
        }
    }
    url.clone()
}

/// What the Markdown needs of the page that the extractor drops.
#[derive(Default)]
struct PageFacts {
    /// Every `<pre>` of the page, in order: its text (whitespace collapsed) and language.
    code_blocks: Vec<(String, Option<String>)>,
}

impl PageFacts {
    fn read(tree: &trafilatura::dom::Document) -> PageFacts {
        let code_blocks = tree
            .query_selector_all(tree.root(), "pre")
            .into_iter()
            .map(|pre| {
                let text = collapse(&tree.text_content(pre));
                let inner = tree.query_selector(pre, "code");
                let mut lang = inner.and_then(|code| language(&class_of(tree, code)));
                let mut at = Some(pre);
                // The `<pre>` itself, then its ancestors (Sphinx marks a `<div>` two up).
                while lang.is_none()
                    && let Some(node) = at
                {
                    lang = language(&class_of(tree, node));
                    at = tree.parent(node);
                }
                (text, lang)
            })
            .collect();
        PageFacts { code_blocks }
    }
}

fn class_of(tree: &trafilatura::dom::Document, node: trafilatura::dom::NodeId) -> String {
    tree.get_attribute(node, "class").unwrap_or_default()
}

/// Classes that name no language: highlighters' own, and Sphinx's "no highlighting".
const NOT_LANGUAGES: [&str; 7] = [
    "default",
    "none",
    "text",
    "notranslate",
    "plain",
    "plaintext",
    "nohighlight",
];

/// The language a `class` attribute names: `language-x`, `lang-x`, `highlight-x`,
/// `sourceCode x` (x the next class), or rustdoc's `rust`. Lower case, `[a-z0-9_+#.-]` only.
fn language(class: &str) -> Option<String> {
    let classes: Vec<&str> = class.split_ascii_whitespace().collect();
    let named = classes.iter().enumerate().find_map(|(i, c)| {
        let lower = c.to_ascii_lowercase();
        ["language-", "lang-", "highlight-", "brush:"]
            .iter()
            .find_map(|p| lower.strip_prefix(p).map(str::to_string))
            .or_else(|| {
                let next = classes.get(i + 1).filter(|_| lower == "sourcecode");
                next.map(|n| n.to_ascii_lowercase())
            })
            .or_else(|| (lower == "rust").then(|| lower.clone()))
    })?;
    let clean = named
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_+#.-".contains(c));
    (clean && !named.is_empty() && !NOT_LANGUAGES.contains(&named.as_str())).then_some(named)
}

/// `text` with runs of whitespace made one space, trimmed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Elements written as blocks of their own; any other is inline (its content joins the
/// paragraph around it).
fn is_block(name: &str) -> bool {
    matches!(
        name,
        "p" | "div"
            | "section"
            | "article"
            | "main"
            | "header"
            | "footer"
            | "aside"
            | "nav"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "ul"
            | "ol"
            | "li"
            | "blockquote"
            | "pre"
            | "table"
            | "hr"
            | "dl"
            | "dt"
            | "dd"
            | "figure"
            | "figcaption"
            | "details"
            | "summary"
            | "address"
            | "form"
            | "fieldset"
            | "body"
            | "html"
    )
}

/// Writes one page's kept HTML as Markdown.
struct Writer<'a> {
    base: &'a Url,
    /// The page's code blocks (`PageFacts`), matched in order.
    code_blocks: Vec<(String, Option<String>)>,
    /// The next code block to try first.
    next_code: usize,
    /// Writing a heading's text: an ATX heading is one line, so a `<br>` in it is a space
    /// (rustdoc breaks its `impl … where` headings before each bound).
    in_heading: bool,
}

impl<'a> Writer<'a> {
    fn new(base: &'a Url, code_blocks: Vec<(String, Option<String>)>) -> Writer<'a> {
        Writer {
            base,
            code_blocks,
            next_code: 0,
            in_heading: false,
        }
    }

    fn document(&mut self, kept: &str) -> String {
        let fragment = Html::parse_fragment(kept);
        self.blocks(fragment.root_element())
    }

    /// The children of `parent` as blocks separated by blank lines: each block element its
    /// own, runs of inline content between them paragraphs.
    fn blocks(&mut self, parent: ElementRef) -> String {
        let mut out: Vec<String> = Vec::new();
        let mut paragraph = String::new();
        let flush = |paragraph: &mut String, out: &mut Vec<String>| {
            let p = paragraph_of(paragraph);
            if !p.is_empty() {
                out.push(p);
            }
            paragraph.clear();
        };
        for child in parent.children() {
            match ElementRef::wrap(child) {
                Some(element) if self.is_block_element(element) => {
                    flush(&mut paragraph, &mut out);
                    let block = self.block(element);
                    if !block.trim().is_empty() {
                        out.push(block);
                    }
                }
                _ => self.inline(child, &mut paragraph, false),
            }
        }
        flush(&mut paragraph, &mut out);
        // A list right after its item's paragraph stays tight.
        let mut joined = String::new();
        for (i, block) in out.iter().enumerate() {
            if i > 0 {
                let list = block.starts_with("- ") || block.starts_with("1. ");
                joined.push_str(if list && parent.value().name() == "li" {
                    "\n"
                } else {
                    "\n\n"
                });
            }
            joined.push_str(block);
        }
        joined
    }

    /// Whether `element` is a block: a block element, a `<code>` that is a code block, or an
    /// inline element other than a link that holds blocks (the extractor writes rustdoc's
    /// `<summary>` as `<b>` around the method's `<section>` and heading): its blocks are
    /// written as blocks, not flattened into a paragraph, and it loses its own emphasis.
    fn is_block_element(&mut self, element: ElementRef) -> bool {
        let name = element.value().name();
        is_block(name)
            || (name == "code" && self.code_block_of(element).is_some())
            || (!matches!(name, "a" | "code" | "kbd" | "samp" | "tt")
                && element.descendants().skip(1).any(|node| {
                    node.value()
                        .as_element()
                        .is_some_and(|e| is_block(e.name()))
                }))
    }

    /// The language of `code` if it is a code block: a `<pre>` of the page has its text (its
    /// language, if any, that `<pre>`'s), or its text spans lines, or it stands alone among
    /// blocks. `None` for inline code.
    #[allow(clippy::option_option)]
    fn code_block_of(&mut self, code: ElementRef) -> Option<Option<String>> {
        let text = collapse(&code.text().collect::<String>());
        let n = self.code_blocks.len();
        let found = (0..n)
            .map(|i| (self.next_code + i) % n)
            .find(|&i| self.code_blocks[i].0 == text);
        if let Some(i) = found {
            self.next_code = i + 1;
            return Some(self.code_blocks[i].1.clone());
        }
        let parent = code.parent().and_then(ElementRef::wrap);
        let alone = parent.is_some_and(|p| {
            matches!(
                p.value().name(),
                "html" | "body" | "div" | "section" | "article" | "main" | "blockquote"
            )
        });
        let lines = code.text().any(|t| t.trim().contains('\n'));
        (alone || lines).then_some(None)
    }

    /// One block element as Markdown.
    fn block(&mut self, element: ElementRef) -> String {
        let name = element.value().name();
        match name {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                let level = usize::from(name.as_bytes()[1] - b'0');
                let mut text = String::new();
                self.in_heading = true;
                self.inline_children(element, &mut text, false);
                self.in_heading = false;
                let mut text = collapse(&text);
                if text.is_empty() {
                    return String::new();
                }
                // A closing run of `#` would be read as the heading's end.
                if text.ends_with('#') {
                    text.insert(text.trim_end_matches('#').len(), '\\');
                }
                format!("{} {text}", "#".repeat(level))
            }
            "ul" | "ol" => self.list(element, name == "ol"),
            "blockquote" => prefixed(&self.blocks(element), "> ", ">"),
            "pre" => fenced(&element.text().collect::<String>(), None),
            "code" => {
                let lang = self.code_block_of(element).flatten();
                fenced(&element.text().collect::<String>(), lang.as_deref())
            }
            "table" => self.table(element),
            "hr" => "---".to_string(),
            "dt" => {
                let mut text = String::new();
                self.inline_children(element, &mut text, false);
                let text = paragraph_of(&text);
                if text.is_empty() {
                    text
                } else {
                    format!("**{text}**")
                }
            }
            _ => self.blocks(element),
        }
    }

    /// A list: `- ` or `1. ` items, each item's further lines indented under its text.
    fn list(&mut self, list: ElementRef, ordered: bool) -> String {
        let mut items = Vec::new();
        let mut number = 0;
        for child in list.children() {
            let Some(item) = ElementRef::wrap(child) else {
                continue;
            };
            let content = if item.value().name() == "li" {
                self.blocks(item)
            } else {
                self.block(item)
            };
            number += 1;
            let marker = if ordered {
                format!("{number}. ")
            } else {
                "- ".to_string()
            };
            let indent = " ".repeat(marker.len());
            let mut lines = content.lines();
            let first = lines.next().unwrap_or_default();
            let mut text = format!("{marker}{first}");
            for line in lines {
                text.push('\n');
                if !line.is_empty() {
                    text.push_str(&indent);
                    text.push_str(line);
                }
            }
            items.push(text.trim_end().to_string());
        }
        items.join("\n")
    }

    /// A GFM pipe table: the first row is the header; every row as wide as the widest.
    fn table(&mut self, table: ElementRef) -> String {
        let mut rows: Vec<Vec<String>> = Vec::new();
        self.rows(table, &mut rows);
        let width = rows.iter().map(Vec::len).max().unwrap_or(0);
        if width == 0 {
            return String::new();
        }
        let line = |cells: &[String]| {
            let mut line = String::from("|");
            for i in 0..width {
                line.push(' ');
                line.push_str(cells.get(i).map_or("", String::as_str));
                line.push_str(" |");
            }
            line
        };
        let mut out = vec![line(&rows[0]), line(&vec!["---".to_string(); width])];
        out.extend(rows[1..].iter().map(|row| line(row)));
        out.join("\n")
    }

    /// The rows of `element`'s table (not those of a table inside it), each its cells'
    /// inline Markdown.
    fn rows(&mut self, element: ElementRef, rows: &mut Vec<Vec<String>>) {
        for child in element.children().filter_map(ElementRef::wrap) {
            match child.value().name() {
                "tr" => {
                    let cells = child
                        .children()
                        .filter_map(ElementRef::wrap)
                        .filter(|c| matches!(c.value().name(), "td" | "th"))
                        .map(|cell| {
                            let mut text = String::new();
                            self.inline_children(cell, &mut text, true);
                            collapse(&text)
                        })
                        .collect();
                    rows.push(cells);
                }
                "table" => {}
                _ => self.rows(child, rows),
            }
        }
    }

    fn inline_children(&mut self, element: ElementRef, out: &mut String, in_table: bool) {
        for child in element.children() {
            self.inline(child, out, in_table);
        }
    }

    /// Appends `node` as inline Markdown (whitespace not yet collapsed; `paragraph_of` does).
    /// Block elements met here (inside a table cell or a heading) read as their inline
    /// content between spaces.
    fn inline(&mut self, node: ego_tree::NodeRef<Node>, out: &mut String, in_table: bool) {
        let element = match node.value() {
            Node::Text(text) => {
                out.push_str(&escape(text));
                return;
            }
            Node::Element(_) => ElementRef::wrap(node).expect("an element"),
            _ => return,
        };
        let name = element.value().name();
        match name {
            "em" | "i" | "strong" | "b" => {
                let mut inner = String::new();
                self.inline_children(element, &mut inner, in_table);
                let mark = if matches!(name, "em" | "i") {
                    "*"
                } else {
                    "**"
                };
                wrap_delimited(out, &inner, mark);
            }
            "code" | "kbd" | "samp" | "tt" => {
                code_span(out, &element.text().collect::<String>(), in_table);
            }
            "a" => {
                let mut inner = String::new();
                self.inline_children(element, &mut inner, in_table);
                let href = element.value().attr("href").and_then(|h| self.absolute(h));
                match href {
                    Some(href) if !inner.trim().is_empty() => {
                        let (lead, text, trail) = split_spaces(&inner);
                        out.push_str(lead);
                        out.push_str(&format!("[{text}]({})", destination(&href)));
                        out.push_str(trail);
                    }
                    _ => out.push_str(&inner),
                }
            }
            "img" => {
                let src = element.value().attr("src").and_then(|s| self.absolute(s));
                if let Some(src) = src {
                    let alt = escape(&collapse(element.value().attr("alt").unwrap_or("")));
                    out.push_str(&format!("![{alt}]({})", destination(&src)));
                }
            }
            "br" => out.push_str(if in_table || self.in_heading {
                " "
            } else {
                "\\\n"
            }),
            "script" | "style" | "template" => {}
            _ => {
                let block = is_block(name);
                if block {
                    out.push(' ');
                }
                self.inline_children(element, out, in_table);
                if block {
                    out.push(' ');
                }
            }
        }
    }

    /// `href` absolute against the page's base; `None` for a script (`javascript:`) or a
    /// reference that does not parse.
    fn absolute(&self, href: &str) -> Option<String> {
        let url = self.base.join(href.trim()).ok()?;
        (url.scheme() != "javascript").then(|| url.to_string())
    }
}

/// `inline` text as one paragraph: whitespace collapsed (a hard break's newline kept), each
/// line's start escaped where it could open a block.
fn paragraph_of(inline: &str) -> String {
    inline
        .split("\\\n")
        .map(|line| escape_line_start(&collapse(line)))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\\\n")
}

/// `inner` between `mark`s (`*`, `**`), its outer spaces moved outside them (a delimiter next
/// to a space does not open or close); nothing around empty content.
fn wrap_delimited(out: &mut String, inner: &str, mark: &str) {
    let (lead, text, trail) = split_spaces(inner);
    out.push_str(lead);
    if !text.is_empty() {
        out.push_str(mark);
        out.push_str(text);
        out.push_str(mark);
    }
    out.push_str(trail);
}

/// `text`'s leading whitespace, its content, its trailing whitespace.
fn split_spaces(text: &str) -> (&str, &str, &str) {
    let start = text.len() - text.trim_start().len();
    let end = text.trim_end().len().max(start);
    (&text[..start], &text[start..end], &text[end..])
}

/// Inline code: `code` (newlines made spaces) between backtick runs longer than any inside;
/// padded with a space where it starts or ends with a backtick. In a table cell a `|` is
/// escaped (GFM reads the cell's pipes before its code spans).
fn code_span(out: &mut String, code: &str, in_table: bool) {
    let code = code.replace(['\n', '\r'], " ");
    if code.trim().is_empty() {
        out.push_str(&code);
        return;
    }
    let code = if in_table {
        code.replace('|', "\\|")
    } else {
        code
    };
    let fence = "`".repeat(longest_run(&code, '`') + 1);
    let pad = code.starts_with('`') || code.ends_with('`');
    let pad = if pad { " " } else { "" };
    out.push_str(&format!("{fence}{pad}{code}{pad}{fence}"));
}

/// A fenced code block of `code` (its outer blank lines dropped), with its language.
fn fenced(code: &str, lang: Option<&str>) -> String {
    let code = code.trim_end().trim_start_matches(['\n', '\r']);
    let fence = "`".repeat(longest_run(code, '`').max(2) + 1);
    format!("{fence}{}\n{code}\n{fence}", lang.unwrap_or(""))
}

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    let (mut run, mut longest) = (0, 0);
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// A link destination: `url` with the characters that would end or break it escaped.
fn destination(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            '(' | ')' | '<' | '>' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' ' => out.push_str("%20"),
            _ => out.push(c),
        }
    }
    out
}

/// Every block of `text`'s lines prefixed (`> ` for a blockquote), empty lines with `empty`.
fn prefixed(text: &str, prefix: &str, empty: &str) -> String {
    text.lines()
        .map(|line| {
            if line.is_empty() {
                empty.to_string()
            } else {
                format!("{prefix}{line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with every character Markdown gives an inline meaning to backslash-escaped:
/// emphasis, code, links, images, raw HTML and autolinks, entities, tables, strikethrough.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '|' | '~' | '!'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `line` with its first character escaped where it would open a block: a heading (`#`), a
/// list item (`-`, `+`, `1.`, `1)`), a setext underline (`=`), a thematic break.
fn escape_line_start(line: &str) -> String {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && matches!(line.as_bytes().get(digits), Some(b'.' | b')')) {
        return format!("{}\\{}", &line[..digits], &line[digits..]);
    }
    match line.chars().next() {
        Some('#' | '-' | '+' | '=') => format!("\\{line}"),
        _ => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> Url {
        Url::parse("https://example.com/docs/page.html").unwrap()
    }

    /// An article inside a site's navigation and footer: every construct `--markdown` writes.
    const ARTICLE: &str = r#"<!doctype html><html><head><title>Guide</title>
        <base href="/base/"></head><body>
        <nav><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li></ul></nav>
        <main><article>
        <h1>Using the tool</h1>
        <p>The tool reads <em>every</em> file, and <strong>never</strong> writes one; see
        <a href="ref/options.html#x">the options</a> and call <code>run(a | b)</code> first.
        A star * and an_underscore stay text, as do [brackets] and &lt;tags&gt;.</p>
        <h2>Install it</h2>
        <ul><li>From source<ul><li>clone it</li><li>build it</li></ul></li>
        <li>From a package</li></ul>
        <div class="highlight-python3 notranslate"><div class="highlight"><pre><span class="k">def</span> main():
    return 1 * 2</pre></div></div>
        <p>The same in Rust, which the extractor keeps as code like the Python above it:</p>
        <pre><code class="language-rust">fn main() {
    println!("```");
}</code></pre>
        <h3>Options</h3>
        <table><thead><tr><th>Name</th><th>Meaning</th></tr></thead>
        <tbody><tr><td>-a|b</td><td>all of <code>a|b</code></td></tr><tr><td>-q</td></tr></tbody></table>
        <blockquote><p>Quoted words that are worth reading twice, from the manual.</p></blockquote>
        <p>A picture: <img src="img/shot.png" alt="the [screen]"> shows the result.</p>
        <ol><li>first step</li><li>second step</li></ol>
        </article></main>
        <footer><p>Copyright 2024, all rights reserved. <a href="/privacy">Privacy</a></p></footer>
        </body></html>"#;

    #[test]
    fn the_main_content_is_markdown_with_every_construct() {
        let md = main_markdown(ARTICLE, &url());
        for part in [
            "# Using the tool\n",
            "\n## Install it\n",
            "\n### Options\n",
            "The tool reads *every* file, and **never** writes one; see \
             [the options](https://example.com/base/ref/options.html#x) and call `run(a | b)` first.",
            r"A star \* and an\_underscore stay text, as do \[brackets\] and \<tags\>.",
            "- From source\n  - clone it\n  - build it\n- From a package",
            "```python3\ndef main():\n    return 1 * 2\n```",
            "````rust\nfn main() {\n    println!(\"```\");\n}\n````",
            "| Name | Meaning |\n| --- | --- |\n| -a\\|b | all of `a\\|b` |\n| -q |  |",
            "> Quoted words that are worth reading twice",
            r"![the \[screen\]](https://example.com/base/img/shot.png)",
            "1. first step\n2. second step",
        ] {
            assert!(md.contains(part), "{part:?} not in:\n{md}");
        }
        for boilerplate in ["Home", "News", "Copyright", "Privacy"] {
            assert!(!md.contains(boilerplate), "{boilerplate:?} in:\n{md}");
        }
    }

    #[test]
    fn code_languages_come_from_the_classes_highlighters_write() {
        assert_eq!(language("language-rust"), Some("rust".into()));
        assert_eq!(language("x lang-JS"), Some("js".into()));
        assert_eq!(
            language("highlight-python3 notranslate"),
            Some("python3".into())
        );
        assert_eq!(language("sourceCode haskell"), Some("haskell".into()));
        assert_eq!(language("rust rust-example-rendered"), Some("rust".into()));
        assert_eq!(language("highlight-default"), None);
        assert_eq!(language("highlight"), None);
        assert_eq!(language("language-a`b"), None);
        assert_eq!(language(""), None);
    }

    #[test]
    fn text_that_would_be_markup_is_escaped() {
        assert_eq!(
            escape("a*b_c`d[e]f<g>h&i|j~k!l\\"),
            r"a\*b\_c\`d\[e\]f\<g\>h\&i\|j\~k\!l\\"
        );
        assert_eq!(escape_line_start("# not a heading"), r"\# not a heading");
        assert_eq!(escape_line_start("1. not a list"), r"1\. not a list");
        assert_eq!(escape_line_start("2024) a year"), r"2024\) a year");
        assert_eq!(escape_line_start("- dash"), r"\- dash");
        assert_eq!(escape_line_start("plain 1. text"), "plain 1. text");
        assert_eq!(destination("https://h/a (b)"), r"https://h/a%20\(b\)");
        let mut out = String::new();
        code_span(&mut out, "a `tick`", false);
        assert_eq!(out, "`` a `tick` ``");
        let mut out = String::new();
        wrap_delimited(&mut out, " spaced ", "*");
        assert_eq!(out, " *spaced* ");
    }

    #[test]
    fn a_page_without_content_is_empty() {
        assert_eq!(main_markdown("", &url()), "");
        let scripts = "<html><head><title>T</title><script>var a;</script></head></html>";
        assert_eq!(main_markdown(scripts, &url()), "");
    }
}
