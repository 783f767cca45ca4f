//! The main content of a page whose container the extractor's rules name, read in one pass of
//! the link extractor's tokenizer (`url::html`), without a tree: `--text main`'s fast path.
//!
//! trafilatura (`text::main_content`) parses the page into an html5ever tree, copies it,
//! cleans it, and then looks for the main-content container with its content rules (`<article>`,
//! `class="entry-content"`, `<main>`...; `trafilatura::rules`). On a page where such a container
//! holds most of the page's text it keeps that container's paragraphs, headings, lists, tables
//! and code, less what its pruning rules and link-density tests remove, and none of its
//! fallbacks (readability, justext, the baseline, the recall retry) can win. The parse, copies
//! and walks cost it 10 ms a page on documentation pages, fifty times the crawl's own CPU.
//!
//! `main_text` here follows the same elements with the same rules, as the tokens pass:
//! 1. Each start tag opens a node (its tag, which content rules it matches, whether the
//!    cleaning, the comments' removal or the pruning take it out); each end tag closes the
//!    node it names. The tree builder's commonest implied ends are kept (a block closes an
//!    open `<p>`, `<li>` the previous `<li>`, a cell the previous cell...); nothing else of
//!    its repairs is.
//! 2. The text between tags goes to blocks, one block a line (a paragraph, heading, list item,
//!    cell, code block), each with its kind, its length, the length of its link text and the
//!    nodes that may take it out.
//! 3. At the end, the first node matching content rule 1 (else 2, ... 5) is the container; its
//!    blocks are kept less those pruned inside it (undone if that leaves under a seventh, as
//!    trafilatura's backup does), short link-heavy paragraphs and link lists, and loose text
//!    outside paragraphs where the page has paragraphs.
//!
//! A page without a container is read as trafilatura's "wild text" recovery reads it: its
//! paragraphs, quotes, code and tables, pruned as a container is.
//!
//! It answers only where what it keeps holds the page's main text (`None` otherwise, and the
//! caller runs trafilatura): at least `MIN_SHARE` of the page's text (under it trafilatura
//! would retry for recall, and a fallback may win), or `SPLIT_SHARE` where the container's rule
//! matches more elements after it (a body in parts between advertisements, which trafilatura's
//! readability fallback takes whole); no forum marker (trafilatura keeps comment
//! sections there); nesting within the caller's bound (`text::MAX_DEPTH`). A container whose text is short is still
//! the answer (trafilatura's recovery, under 250 characters, reads the whole page, and on
//! documentation pages with short content keeps their navigation).
//!
//! On the Zyte article-extraction benchmark it answers 146 of 181 pages (where its text scores
//! F1 0.972 against the crate's 0.966 on the same pages, means over pages), and `--text main`
//! with it F1 0.969 (BENCHMARKS.md, "Main text in one pass").
//!
//! Invariants: time linear in the page (each tag's implied-end and end-tag searches look at
//! most `MAX_SEARCH` open nodes), memory a constant times the page (a node per start tag, a
//! block per run of text, the kept text), nothing kept between pages.

use crate::content::lines::Lines;
use crate::content::tags::{BLOCK_TAGS, KNOWN, OTHER, Tag, Tags, known_tag, tags};
use crate::url::html::{Namespace, Token, Tokenizer, attribute_value};
use aho_corasick::{AhoCorasick, AhoCorasickKind};
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;
use trafilatura::rules::{self, Element};

/// The share `MIN_SHARE` becomes where the container's rule matches other elements after it
/// (an article's body in parts between advertisements): past half the page's text, readability
/// cannot win in trafilatura (vendor patch 5); under it, it may take the whole body.
const SPLIT_SHARE: f64 = 0.5;

/// Characters of paragraph text under which loose text (outside paragraphs, lists, tables...)
/// is kept too: trafilatura then reads `<div>`s as paragraphs (3 × its `min_extracted_size`).
const LOOSE_UNDER: usize = 750;

/// The share of the page's text (outside removed elements) the container's kept text must
/// have: trafilatura's own mark of an extraction that missed the content (under it, and under
/// 3,000 characters, it retries for recall).
const MIN_SHARE: f64 = 0.2;

/// Open nodes an implied end or an end tag looks through for the node it closes; past them the
/// tag is ignored (a page of unclosed elements costs each tag this much, not its depth).
const MAX_SEARCH: usize = 64;

const NONE: u32 = u32::MAX;

/// The main content of `html` as lines of text, if its container is found and holds the
/// page's main text by the rules above; `None` where trafilatura must decide.
pub(crate) fn main_text(html: &str, max_depth: usize) -> Option<String> {
    if memchr::memmem::find(html.as_bytes(), b"DiscussionForumPosting").is_some() {
        return None;
    }
    let mut page = Page::default();
    page.read(html, max_depth)?;
    page.keep()
}

/// What kind of block a line of text is, from the element it is in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// Text in no paragraph-like element: loose text of a `<div>`, `<section>`...
    Loose,
    Paragraph,
    Heading,
    Item,
    Code,
    Quote,
    Cell,
}

/// An element as the pass saw it.
struct Node {
    tag: Tag,
    /// Content rules matched (bit 0 = rule 1); 0 inside removed content.
    rules: u8,
    /// The cleaning or the comments' removal take it out, with its content.
    removed: bool,
    /// An `<svg>` or `<math>`: end tags inside it do not close HTML elements outside.
    foreign: bool,
    /// A `<figure>` holds a table (trafilatura keeps it, as a `<div>`).
    has_table: bool,
    /// The nearest node, this one or an ancestor, that the pruning takes out (`NONE`).
    pruned_at: u32,
    /// The nearest list (`ul`, `ol`, `dl`), this one or an ancestor (`NONE`).
    list: u32,
    /// Blocks begun inside it: `first_block..end_block`, and nodes opened inside it
    /// (its index +1 `..end_node`), both set at its end.
    first_block: u32,
    end_block: u32,
    end_node: u32,
    /// Characters and link characters of the blocks of which it is the nearest list.
    chars: u32,
    link_chars: u32,
}

/// A line of text.
struct Block {
    text: Range<usize>,
    kind: Kind,
    chars: u32,
    link_chars: u32,
    /// Taken out before extraction (cleaning, comments, a `<figure>` without a table).
    removed: bool,
    pruned_at: u32,
    list: u32,
}

/// A start tag as the rules read it: its name and the attributes they read, decoded.
struct StartTag<'a> {
    name: &'static str,
    attributes: [Option<Cow<'a, str>>; RULE_ATTRIBUTES.len()],
}

impl Element for StartTag<'_> {
    fn tag(&self) -> &str {
        self.name
    }
    fn attribute(&self, name: &str) -> Option<&str> {
        let i = RULE_ATTRIBUTES.iter().position(|&a| a == name)?;
        self.attributes[i].as_deref()
    }
}

/// The attributes the content, pruning and comment rules read.
const RULE_ATTRIBUTES: [&str; 8] = [
    "class",
    "id",
    "role",
    "itemprop",
    "style",
    "aria-hidden",
    "data-component",
    "data-lp-replacement-content",
];

/// What the rules say of an element (`Page::verdict`).
#[derive(Clone, Copy)]
struct Verdict {
    /// Content rules matched, a bit each (rule 1 the lowest).
    rules: u8,
    /// Removed with the comment sections.
    comments: bool,
    /// Pruned inside a container.
    pruned: bool,
}

#[derive(Default)]
struct Page {
    nodes: Vec<Node>,
    /// Open nodes, innermost last.
    open: Vec<u32>,
    blocks: Vec<Block>,
    lines: Lines,
    /// The block text is going to (an index of `blocks`), if one is open.
    block: Option<usize>,
    /// `<pre>` elements open, `<a>` elements open, removed nodes open.
    pre: u32,
    links: u32,
    removed: u32,
    /// The first node matching each content rule.
    first_of_rule: [Option<u32>; 5],
    /// The content rules matched again by a node after (outside) their first, a bit each.
    split: u8,
    /// Characters of text in `<p>` elements (trafilatura adds loose text under 750).
    paragraph_chars: usize,
    /// The rules' verdicts on the tag names and attributes seen (pages repeat them: the rules
    /// are a hundred substring searches an element), keyed by `key`.
    verdicts: FxHashMap<String, Verdict>,
    key: String,
    /// `might_match`'s buffer.
    joined: String,
}

impl Page {
    /// Reads the page's tokens into nodes and blocks; `None` if it nests deeper than
    /// `max_depth`.
    fn read(&mut self, html: &str, max_depth: usize) -> Option<()> {
        let bytes = html.as_bytes();
        let mut tokens = Tokenizer::new(bytes);
        tokens.keep_attributes_of(|_| Some(""));
        tokens.collect_text(true);
        tokens.report_end_tags(true);
        self.lines = Lines::with_capacity(html.len() / 4);
        loop {
            let token = tokens.next_token();
            for run in tokens.take_text_runs() {
                self.text(&html[run]);
            }
            let Some(token) = token else { break };
            match token {
                Token::Start { name, ns, text } => {
                    let tag = known_tag(&bytes[name]);
                    let foreign = tag == SVG || tag == MATH;
                    if tokens.in_template() || (ns != Namespace::Html && !foreign) {
                        continue;
                    }
                    if text || tag.is(VOID) {
                        // `<br>` and `<hr>` end a line; elements whose content is text
                        // (`<script>`, `<style>`, `<title>`, `<textarea>`) are removed.
                        if tag.is(BREAKS) {
                            self.end_block();
                        }
                        continue;
                    }
                    let verdict = self.verdict(tag, html, &tokens);
                    self.open(tag, verdict, foreign);
                    if self.open.len() > max_depth {
                        return None;
                    }
                }
                Token::End(name) if !tokens.in_template() => self.close(known_tag(&bytes[name])),
                Token::End(_) | Token::Text(_) => {}
            }
        }
        while let Some(&top) = self.open.last() {
            self.pop(top);
        }
        self.end_block();
        Some(())
    }

    /// What the rules say of the start tag `tag` the tokenizer just read.
    fn verdict(&mut self, tag: Tag, html: &str, tokens: &Tokenizer) -> Verdict {
        let mut start = StartTag {
            name: tag.name(),
            attributes: Default::default(),
        };
        for (name, value) in tokens.attributes() {
            let name = &html.as_bytes()[name];
            let at = RULE_ATTRIBUTES
                .iter()
                .position(|a| a.as_bytes().eq_ignore_ascii_case(name));
            if let Some(at) = at
                && start.attributes[at].is_none()
            {
                start.attributes[at] = Some(attribute_value(&html[value]));
            }
        }
        let by_tag = Verdict {
            rules: tag_only_rules(tag),
            comments: false,
            pruned: false,
        };
        if start.attributes.iter().all(Option::is_none) {
            return by_tag;
        }
        self.key.clear();
        self.key.push_str(start.name);
        for value in &start.attributes {
            self.key.push('\0');
            if let Some(value) = value {
                self.key.push('=');
                self.key.push_str(value);
            }
        }
        if let Some(&known) = self.verdicts.get(self.key.as_str()) {
            return known;
        }
        let verdict = match might_match(&start, &mut self.joined) {
            false => by_tag,
            true => Verdict {
                rules: rules::content_rules(&start),
                comments: rules::comments(&start),
                pruned: rules::pruned(&start),
            },
        };
        self.verdicts.insert(self.key.clone(), verdict);
        verdict
    }

    fn open(&mut self, tag: Tag, verdict: Verdict, foreign: bool) {
        self.implied_ends(tag);
        if tag.is(BREAKS) {
            self.end_block();
        }
        let parent = self.open.last().map(|&p| &self.nodes[p as usize]);
        let index = self.nodes.len() as u32;
        let removed = tag.is(*REMOVED) || verdict.comments;
        let node = Node {
            tag,
            rules: if self.removed > 0 || removed {
                0
            } else {
                verdict.rules
            },
            removed,
            foreign,
            has_table: false,
            pruned_at: if verdict.pruned {
                index
            } else {
                parent.map_or(NONE, |p| p.pruned_at)
            },
            list: if tag.is(LISTS) {
                index
            } else {
                parent.map_or(NONE, |p| p.list)
            },
            first_block: self.blocks.len() as u32,
            end_block: NONE,
            end_node: NONE,
            chars: 0,
            link_chars: 0,
        };
        for (rule, first) in self.first_of_rule.iter_mut().enumerate() {
            if node.rules & (1 << rule) == 0 {
                continue;
            }
            match *first {
                None => *first = Some(index),
                // Closed already: this one is outside it.
                Some(f) if self.nodes[f as usize].end_node != NONE => self.split |= 1 << rule,
                Some(_) => {}
            }
        }
        if tag == TABLE {
            for &o in &self.open {
                if self.nodes[o as usize].tag == FIGURE {
                    self.nodes[o as usize].has_table = true;
                }
            }
        }
        self.removed += u32::from(removed);
        self.pre += u32::from(tag == PRE);
        self.links += u32::from(tag == A);
        self.nodes.push(node);
        self.open.push(index);
    }

    /// The ends the tree builder implies at a start tag `tag`: of an open `<p>` at a block,
    /// of the previous item, cell, row or heading, of `<head>` at body content.
    fn implied_ends(&mut self, tag: Tag) {
        if let Some(&top) = self.open.last()
            && self.nodes[top as usize].tag == HEAD
            && !tag.is(HEAD_CONTENT)
        {
            self.pop_through(top);
        }
        if tag.is(CLOSES_P) {
            self.close_open(P_ONLY, SCOPE);
        }
        if tag == LI {
            self.close_open(LI_ONLY, ITEM_SCOPE);
        } else if tag.is(DEFINITIONS) {
            self.close_open(DEFINITIONS, DEFINITION_SCOPE);
        } else if tag == TR {
            self.close_open(ROW, TABLE_ONLY);
        } else if tag.is(SECTIONS) {
            self.close_open(ROW_OR_SECTION, TABLE_ONLY);
        } else if tag.is(CELLS) {
            self.close_open(CELLS, ROW_SCOPE);
        } else if tag == A {
            self.close_open(A_ONLY, LINK_SCOPE);
        } else if tag.is(HEADINGS)
            && let Some(&top) = self.open.last()
            && self.nodes[top as usize].tag.is(HEADINGS)
        {
            self.pop_through(top);
        }
    }

    /// Closes the innermost open node of `targets` (and those inside it), if one is open
    /// before any of `stops`, within `MAX_SEARCH` nodes.
    fn close_open(&mut self, targets: Tags, stops: Tags) {
        let found = self
            .open
            .iter()
            .rev()
            .take(MAX_SEARCH)
            .find(|&&o| {
                let tag = self.nodes[o as usize].tag;
                tag.is(targets) || tag.is(stops)
            })
            .copied();
        if let Some(at) = found
            && self.nodes[at as usize].tag.is(targets)
        {
            self.pop_through(at);
        }
    }

    /// An end tag: closes the open node it names (and those inside it), if one is open within
    /// `MAX_SEARCH` nodes and no foreign element lies between.
    fn close(&mut self, tag: Tag) {
        if tag == BR {
            self.end_block();
            return;
        }
        if tag == BODY || tag == HTML || tag == OTHER {
            return;
        }
        let mut found = None;
        for &o in self.open.iter().rev().take(MAX_SEARCH) {
            let node = &self.nodes[o as usize];
            if node.tag == tag {
                found = Some(o);
                break;
            }
            if node.foreign {
                break;
            }
        }
        if let Some(o) = found {
            self.pop_through(o);
        }
    }

    /// Closes the open nodes down to and including `node`.
    fn pop_through(&mut self, node: u32) {
        while let Some(&top) = self.open.last() {
            self.pop(top);
            if top == node {
                break;
            }
        }
    }

    fn pop(&mut self, index: u32) {
        self.open.pop();
        let tag = self.nodes[index as usize].tag;
        if tag.is(BREAKS) {
            self.end_block();
        }
        let (blocks, nodes) = (self.blocks.len() as u32, self.nodes.len() as u32);
        let node = &mut self.nodes[index as usize];
        node.end_block = blocks;
        node.end_node = nodes;
        self.removed -= u32::from(node.removed);
        self.pre -= u32::from(tag == PRE);
        self.links -= u32::from(tag == A);
        if tag == FIGURE && !node.has_table {
            // Cleaned: a figure is removed unless it holds a table.
            for block in &mut self.blocks[node.first_block as usize..] {
                block.removed = true;
            }
        }
    }

    /// A run of text between tags (character references not decoded yet).
    fn text(&mut self, raw: &str) {
        if self.block.is_none() && raw.bytes().all(|b| b.is_ascii_whitespace()) {
            return;
        }
        let text = attribute_value(raw);
        let block = match self.block {
            Some(block) => block,
            None => {
                if text.chars().all(char::is_whitespace) {
                    return;
                }
                self.lines.end_line();
                let start = self.lines.len();
                let top = self.open.last().map(|&o| &self.nodes[o as usize]);
                self.blocks.push(Block {
                    text: start..start,
                    kind: self.kind(),
                    chars: 0,
                    link_chars: 0,
                    removed: self.removed > 0,
                    pruned_at: top.map_or(NONE, |n| n.pruned_at),
                    list: top.map_or(NONE, |n| n.list),
                });
                self.block = Some(self.blocks.len() - 1);
                self.blocks.len() - 1
            }
        };
        let before = self.lines.len();
        if self.pre > 0 {
            self.lines.push_preformatted(&text);
        } else {
            self.lines.push(&text);
        }
        let added = &self.lines.as_str()[before..];
        let chars = added.chars().filter(|c| !c.is_whitespace()).count() as u32;
        let b = &mut self.blocks[block];
        b.text.end = self.lines.len();
        b.chars += chars;
        if self.links > 0 {
            b.link_chars += chars;
        }
    }

    /// The kind of block text at this point goes to: that of the innermost block element.
    fn kind(&self) -> Kind {
        for &o in self.open.iter().rev() {
            let tag = self.nodes[o as usize].tag;
            let kind = if tag == P {
                Kind::Paragraph
            } else if tag.is(HEADINGS) {
                Kind::Heading
            } else if tag == LI || tag.is(DEFINITIONS) {
                Kind::Item
            } else if tag == PRE {
                Kind::Code
            } else if tag.is(QUOTES) {
                Kind::Quote
            } else if tag.is(CELLS) {
                Kind::Cell
            } else if tag.is(BREAKS) {
                Kind::Loose
            } else {
                continue;
            };
            return kind;
        }
        Kind::Loose
    }

    /// Ends the open block, counting it into its list and the page's paragraph text.
    fn end_block(&mut self) {
        let Some(block) = self.block.take() else {
            return;
        };
        let b = &self.blocks[block];
        if b.kind == Kind::Paragraph && !b.removed {
            self.paragraph_chars += b.chars as usize;
        }
        if b.list != NONE {
            let (chars, link_chars) = (b.chars, b.link_chars);
            let list = &mut self.nodes[b.list as usize];
            list.chars += chars;
            list.link_chars += link_chars;
        }
        self.lines.end_line();
    }

    /// The container's text by the rules of the module doc, or `None`.
    fn keep(&self) -> Option<String> {
        // The container's blocks and nodes; without one, the whole page's, of the kinds
        // trafilatura's "wild text" recovery reads (paragraphs, quotes, code, tables).
        let rule = self.first_of_rule.iter().position(Option::is_some);
        let (blocks, nodes, wild) = match rule.and_then(|r| self.first_of_rule[r]) {
            Some(at) => {
                let c = &self.nodes[at as usize];
                let blocks = c.first_block as usize..c.end_block as usize;
                (blocks, at..c.end_node, false)
            }
            None => (0..self.blocks.len(), 0..self.nodes.len() as u32, true),
        };
        let split = rule.is_some_and(|r| self.split & (1 << r) != 0);
        let blocks = &self.blocks[blocks];
        let loose = self.paragraph_chars < LOOSE_UNDER && !wild;
        let kept = |b: &&Block, prune: bool| {
            !b.removed
                && match b.kind {
                    Kind::Loose => loose,
                    Kind::Heading | Kind::Item => !wild,
                    _ => true,
                }
                && !(prune && nodes.contains(&b.pruned_at))
                && !(b.kind == Kind::Paragraph && b.chars < 60 && link_heavy(b.chars, b.link_chars))
                && !(b.list != NONE && {
                    let list = &self.nodes[b.list as usize];
                    list.chars < 300 && link_heavy(list.chars, list.link_chars)
                })
        };
        let chars = |prune: bool| -> usize {
            blocks
                .iter()
                .filter(|b| kept(b, prune))
                .map(|b| b.chars as usize)
                .sum()
        };
        let unpruned = chars(false);
        let mut prune = true;
        let mut text = chars(true);
        if text * 7 < unpruned {
            // trafilatura's backup: a pruning that leaves under a seventh is undone.
            (prune, text) = (false, unpruned);
        }
        let page: usize = self
            .blocks
            .iter()
            .filter(|b| !b.removed)
            .map(|b| b.chars as usize)
            .sum();
        let share = if split { SPLIT_SHARE } else { MIN_SHARE };
        if text == 0 || (text as f64) < share * page as f64 {
            return None;
        }
        let all = self.lines.as_str();
        let mut out = String::with_capacity(text * 2);
        for b in blocks.iter().filter(|b| kept(b, prune)) {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&all[b.text.clone()]);
        }
        Some(out)
    }
}

/// Whether any rule can match `tag` by its attributes: it has `data-lp-replacement-content`, or
/// one of the rules' needles is in an attribute they read (`trafilatura::rules::NEEDLES`; in
/// any case, and in `id` followed by `class` or `style`, which some rules read as one string).
/// Most elements have none: the rules (a hundred substring searches) are then skipped.
fn might_match(tag: &StartTag, joined: &mut String) -> bool {
    static NEEDLES: LazyLock<AhoCorasick> = LazyLock::new(|| {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .kind(Some(AhoCorasickKind::DFA))
            .build(rules::NEEDLES)
            .expect("the rules' needles make an automaton")
    });
    if tag.attribute("data-lp-replacement-content").is_some() {
        return true;
    }
    let [id, class, style] = ["id", "class", "style"].map(|a| tag.attr(a));
    joined.clear();
    for part in [id, class, "\0", id, style] {
        joined.push_str(part);
    }
    NEEDLES.is_match(joined.as_str())
        || ["role", "itemprop", "aria-hidden", "data-component"]
            .iter()
            .any(|a| NEEDLES.is_match(tag.attr(a)))
}

/// The tags removed with their content: trafilatura's cleaning list (a `<figure>` aside: it is
/// kept if it holds a table, `Page::pop` decides), `<head>` and `<template>`; asked at every
/// start tag, so a bit set made once rather than the crate's set of strings.
static REMOVED: LazyLock<Tags> = LazyLock::new(|| {
    let cleaned = KNOWN
        .iter()
        .enumerate()
        .filter(|&(_, name)| rules::cleaned_tag(name));
    let bits = cleaned.fold(0, |bits, (i, _)| bits | 1 << i);
    Tags((bits | tags(&["head", "template"]).0) & !tags(&["figure"]).0)
});

/// The content rules an element matches by its tag alone: `<article>` rule 2, `<main>` rule 5.
fn tag_only_rules(tag: Tag) -> u8 {
    u8::from(tag == ARTICLE) << 1 | u8::from(tag == MAIN) << 4
}

/// trafilatura's link-density test: most of the text is link text.
fn link_heavy(chars: u32, link_chars: u32) -> bool {
    chars == 0 || f64::from(link_chars) > 0.8 * f64::from(chars)
}

const A: Tag = Tag::of("a");
const BR: Tag = Tag::of("br");
const FIGURE: Tag = Tag::of("figure");
const HEAD: Tag = Tag::of("head");
const LI: Tag = Tag::of("li");
const P: Tag = Tag::of("p");
const PRE: Tag = Tag::of("pre");
const TABLE: Tag = Tag::of("table");
const ARTICLE: Tag = Tag::of("article");
const MAIN: Tag = Tag::of("main");
const SVG: Tag = Tag::of("svg");
const MATH: Tag = Tag::of("math");
const BODY: Tag = Tag::of("body");
const HTML: Tag = Tag::of("html");
const TR: Tag = Tag::of("tr");

const P_ONLY: Tags = tags(&["p"]);
const LI_ONLY: Tags = tags(&["li"]);
const A_ONLY: Tags = tags(&["a"]);
const TABLE_ONLY: Tags = tags(&["table"]);
const DEFINITIONS: Tags = tags(&["dd", "dt"]);
const CELLS: Tags = tags(&["td", "th"]);
const ROW: Tags = tags(&["tr", "td", "th"]);
const SECTIONS: Tags = tags(&["tbody", "thead", "tfoot"]);
const ROW_OR_SECTION: Tags = tags(&["tr", "td", "th", "tbody", "thead", "tfoot"]);
const QUOTES: Tags = tags(&["blockquote", "q"]);
/// Where the searches for an open item, definition, cell or link stop.
const ITEM_SCOPE: Tags = tags(&["ul", "ol", "menu", "table", "td", "th", "body"]);
const DEFINITION_SCOPE: Tags = tags(&["dl", "table", "td", "th", "body"]);
const ROW_SCOPE: Tags = tags(&["tr", "table"]);
const LINK_SCOPE: Tags = tags(&["td", "th", "table", "body"]);

/// What ends a line here: `tags::BLOCKS`, and `<template>`, whose content is not read.
const BREAKS: Tags = Tags(BLOCK_TAGS.0 | tags(&["template"]).0);

const HEADINGS: Tags = tags(&["h1", "h2", "h3", "h4", "h5", "h6"]);

const LISTS: Tags = tags(&["ul", "ol", "dl"]);

/// Elements without content.
const VOID: Tags = tags(&[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
]);

/// What may stand in `<head>`: anything else ends it.
const HEAD_CONTENT: Tags = tags(&[
    "meta", "link", "title", "script", "style", "base", "noscript", "template",
]);

/// Start tags that close an open `<p>` (the standard's list, less those the pass ignores).
#[rustfmt::skip]
const CLOSES_P: Tags = tags(&[
    "address", "article", "aside", "blockquote", "details", "dialog", "div", "dl", "fieldset",
    "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
    "hgroup", "hr", "main", "menu", "nav", "ol", "p", "pre", "section", "summary", "table", "ul",
]);

/// Where the search for an open `<p>` stops (its button scope, roughly).
const SCOPE: Tags = tags(&[
    "html", "table", "td", "th", "caption", "object", "template", "button",
]);

#[cfg(test)]
mod tests {
    use super::*;

    /// The nesting bound the tests give (`text::MAX_DEPTH` in the crawl).
    const DEPTH: usize = 100;

    const WORDS: &str = "Rivers shape the land they cross, and the water that runs down a slope \
        carries sand and stones that wear the riverbed down a little more every season.";

    fn page(body: &str) -> String {
        format!("<!doctype html><html><head><title>T</title></head><body>{body}</body></html>")
    }

    #[test]
    fn the_first_element_of_the_first_rule_that_matches_is_the_container() {
        // `<article>` (rule 2) comes first, `class="post-content"` (rule 1) wins.
        let html = page(&format!(
            "<article><p>Teaser of another story, in an article element.</p></article>\
             <div class=\"post-content\"><h2>Heading</h2><p>{WORDS}</p></div>\
             <main><p>Main of the page, read only by the fifth rule.</p></main>"
        ));
        assert_eq!(
            main_text(&html, DEPTH).unwrap(),
            format!("Heading\n{WORDS}")
        );
        // Without it, the article (rule 2) before `<main>` (rule 5).
        let html = page(&format!(
            "<main><p>Main, rule 5.</p></main><article><p>{WORDS}</p></article>"
        ));
        assert_eq!(main_text(&html, DEPTH).unwrap(), WORDS);
    }

    #[test]
    fn what_the_cleaning_pruning_and_link_tests_remove_is_left_out() {
        let html = page(&format!(
            "<article><p>{WORDS}</p>\
             <div class=\"share-buttons\"><p>Share this on every network there is.</p></div>\
             <nav><p>Next story</p></nav><script>var tracking = 1;</script>\
             <figure><p>A photo's caption, cleaned with its figure.</p></figure>\
             <figure><table><tr><td>Kept cell</td></tr></table></figure>\
             <div class=\"comments\"><p>First! Great post.</p></div>\
             <ul><li><a href=/a>Link one</a></li><li><a href=/b>Link two</a></li></ul>\
             <ul><li>An item of text</li><li>and one with <a href=/c>a link</a></li></ul>\
             <p><a href=/d>Read more</a></p><time>Yesterday</time>\
             <p>Last words.</p></article>"
        ));
        assert_eq!(
            main_text(&html, DEPTH).unwrap(),
            format!("{WORDS}\nKept cell\nAn item of text\nand one with a link\nLast words.")
        );
    }

    #[test]
    fn a_pruning_that_leaves_under_a_seventh_is_undone() {
        // The container itself matches a pruning rule (`related`): trafilatura's backup keeps
        // it whole.
        let html = page(&format!("<article id=\"related\"><p>{WORDS}</p></article>"));
        assert_eq!(main_text(&html, DEPTH).unwrap(), WORDS);
    }

    #[test]
    fn implied_ends_keep_blocks_on_their_lines() {
        let html = page(&format!(
            "<main><p>{WORDS}<p>Second paragraph<ul><li>one<li>two</ul>\
             <dl><dt>term<dd>meaning</dl><table><tr><td>a<td>b<tr><td>c</table>\
             <h2>Head<h3>Sub</h3><pre>fn main() {{\n    run();\n}}</pre></main>"
        ));
        let text = main_text(&html, DEPTH).unwrap();
        assert_eq!(
            text,
            format!(
                "{WORDS}\nSecond paragraph\none\ntwo\nterm\nmeaning\na\nb\nc\nHead\nSub\n\
                 fn main() {{\n    run();\n}}"
            )
        );
    }

    #[test]
    fn a_body_in_parts_needs_half_the_pages_text() {
        // The first part holds a third of the text: trafilatura's readability may take the
        // parts together, so the one pass does not answer.
        let part = format!("<div class=\"article__body\"><p>{WORDS}</p></div>");
        let ad = "<div class=ad><p>Advertisement</p></div>";
        let html = page(&format!("{part}{ad}{part}{ad}{part}"));
        assert_eq!(main_text(&html, DEPTH), None);
        // One part holding most of the text is the answer.
        let long = format!("<div class=\"article__body\"><p>{WORDS}</p><p>{WORDS}</p></div>");
        let html = page(&format!(
            "{long}{ad}<div class=\"article__body\"><p>End.</p></div>"
        ));
        assert_eq!(
            main_text(&html, DEPTH).unwrap(),
            format!("{WORDS}\n{WORDS}")
        );
    }

    #[test]
    fn without_a_container_the_pages_paragraphs_are_read() {
        // trafilatura's "wild text": paragraphs, quotes, code and tables, not headings or lists.
        let html = page(&format!(
            "<div><h1>Head</h1><p>{WORDS}</p><ul><li>An item</li></ul><pre>code</pre></div>"
        ));
        assert_eq!(main_text(&html, DEPTH).unwrap(), format!("{WORDS}\ncode"));
    }

    #[test]
    fn no_answer_without_a_container_holding_the_pages_text() {
        // A container with under a fifth of the page's text.
        let most = format!("<div><p>{WORDS}</p><p>{WORDS}</p><p>{WORDS}</p><p>{WORDS}</p></div>");
        let html = page(&format!("<main><p>Short.</p></main>{most}{most}"));
        assert_eq!(main_text(&html, DEPTH), None);
        // A forum thread: trafilatura keeps its comment sections.
        let forum = format!(
            "<script type=application/ld+json>{{\"@type\": \"DiscussionForumPosting\"}}</script>{}",
            page(&format!("<article><p>{WORDS}</p></article>"))
        );
        assert_eq!(main_text(&forum, DEPTH), None);
        // Nesting deeper than the extractor's bound.
        let deep = page(&format!(
            "<main>{}<p>{WORDS}</p></main>",
            "<div>".repeat(DEPTH + 1)
        ));
        assert_eq!(main_text(&deep, DEPTH), None);
    }

    #[test]
    fn foreign_and_stray_markup_closes_nothing_outside_it() {
        let html = page(&format!(
            "<main><p>{WORDS}</p><svg><a><text>svg text</text></a></svg></div></span>\
             <p>After <a href=/x>the</a> svg.</p><template><p>not shown</p></template></main>\
             <p>outside</p>"
        ));
        assert_eq!(
            main_text(&html, DEPTH).unwrap(),
            format!("{WORDS}\nAfter the svg.")
        );
    }

    #[test]
    fn elements_the_needles_skip_match_no_rule() {
        let mut values: Vec<String> = vec![String::new(), "x".into(), "main".into(), "true".into()];
        for needle in rules::NEEDLES {
            let n = needle.to_string();
            values.push(n.clone());
            values.push(format!("a {n} b"));
            values.push(n.to_uppercase());
            values.push(n[..n.len() / 2].to_string());
            values.push(n[n.len() / 2..].to_string());
        }
        let tags = [
            "div", "section", "article", "main", "span", "li", "ul", "p", "a", "details",
        ];
        let (mut skipped, mut matched) = (0, 0);
        let mut joined = String::new();
        for (i, value) in values.iter().enumerate() {
            for (j, name) in tags.iter().enumerate() {
                // Each attribute the rules read, in turn; `id` with a second value beside it.
                let at = (i + j) % RULE_ATTRIBUTES.len();
                let mut tag = StartTag {
                    name,
                    attributes: Default::default(),
                };
                tag.attributes[at] = Some(Cow::Borrowed(value.as_str()));
                if at != 1 {
                    let other = &values[(i * 7 + j) % values.len()];
                    tag.attributes[1] = Some(Cow::Borrowed(other.as_str()));
                }
                let by_tag = tag_only_rules(known_tag(name.as_bytes()));
                let any = rules::content_rules(&tag) != by_tag
                    || rules::pruned(&tag)
                    || rules::comments(&tag);
                if might_match(&tag, &mut joined) {
                    matched += 1;
                } else {
                    skipped += 1;
                    assert!(!any, "{name} {:?} skipped but matches", tag.attributes);
                }
            }
        }
        assert!(skipped > 100 && matched > 1000, "{skipped} {matched}");
    }

    /// Tag soup (random tags of every kind the pass knows and some it does not, end tags
    /// without start tags, text, references, comments, foreign elements): the pass ends, keeps
    /// at most the page's text, and answers the same twice.
    #[test]
    fn tag_soup_is_read_without_fault() {
        let pieces = [
            "<p>",
            "</p>",
            "<li>",
            "</li>",
            "<ul>",
            "</ul>",
            "<div class=\"post-content\">",
            "<div class=share>",
            "</div>",
            "<main>",
            "</main>",
            "<article>",
            "</article>",
            "<table>",
            "<tr>",
            "<td>",
            "</td>",
            "</table>",
            "<figure>",
            "</figure>",
            "<svg><a>",
            "</a></svg>",
            "<a href=x>",
            "</a>",
            "<pre>",
            "</pre>",
            "<br>",
            "</br>",
            "<template>",
            "</template>",
            "<script>x<y</script>",
            "<!-- c -->",
            "<h2>",
            "<h3>",
            "</h2>",
            "<nav>",
            "</nav>",
            "<x-y>",
            "</x-y>",
            "<head>",
            "<body>",
            "</body>",
            "</html>",
            "words and more words ",
            "&amp; &lt;p&gt; ",
            "\n  ",
            "<dd>",
            "<dt>",
            "<time>",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200 {
            let mut html = String::new();
            for _ in 0..400 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                html.push_str(pieces[(state % pieces.len() as u64) as usize]);
            }
            let first = main_text(&html, DEPTH);
            if let Some(text) = &first {
                assert!(text.len() <= html.len(), "{html}");
            }
            assert_eq!(first, main_text(&html, DEPTH));
        }
    }
}
