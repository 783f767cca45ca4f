//! The HTML tokenizer link extraction needs: start tags with their attributes, and the text of the
//! elements whose content is not markup, found in one forward pass over the bytes.
//!
//! It follows the HTML standard's tokenizer where that decides what is a tag: comments (and their
//! odd endings `<!-->`, `--!>`), bogus comments and doctypes (to the next `>`), CDATA sections in
//! SVG and MathML, `<script>` data with its escaped and double-escaped states, RCDATA (`<title>`,
//! `<textarea>`), RAWTEXT (`<style>`, `<iframe>`, `<xmp>`, `<noembed>`, `<noframes>`) and
//! `<plaintext>`; quoted and unquoted attribute values; names without case. Its scripting flag is
//! off, as in a browser with scripts off: `<noscript>` content is markup (a `</noscript>` inside an
//! attribute value or a comment does not end it). The tree builder's feedback is simulated as
//! `lol_html` simulates it (its `TreeBuilderSimulator`, rule for rule): a stack of namespaces
//! entered at `<svg>` and `<math>`, left at their end tags, at the HTML elements that break out of
//! foreign content and at `</p>`/`</br>`, and HTML again inside integration points. That makes it
//! give the same tags as `lol_html`, which the differential tests check (`extract::oracle`), with
//! one exception: `>` right after `=` in a start tag whose content is text (`<script x=>`, `<title
//! x=>`) sends `lol_html` to the data state, and then, depending on whether it was lexing or only
//! scanning for tags, reads the content as markup, or as text that no end tag closes, or stops on
//! an internal error; here, as in the standard, the content is text up to the end tag. (`lol_html`
//! also reads `<noscript>` as RAWTEXT; the oracle parses that text again as markup, which gives the
//! same tags except where the text ends inside a tag, comment or text element of the markup:
//! `noscript_opened`.)
//!
//! The tree builder's `<template>` is tracked too (`in_template`): a `<base>` in a template's
//! content is not the document's.
//!
//! The tokenizer copies and decodes nothing: tags and text are byte ranges of the input, attribute
//! ranges go to one vector reused for every tag, of the tags the caller reads only
//! (`keep_attributes_of`; any tag's `style` is noted), and `attribute_value` decodes a value when
//! asked, copying only one with a character reference or a NUL. Memory is that vector and the
//! namespace stack (one byte per open `<svg>`/`<math>`/integration point); time is linear in the
//! input: every byte is looked at a bounded number of times. The attributes of the common shape,
//! `name="value"` after one space, are read without the states' tests (`plain_attributes`),
//! which give the same.
//!
//! Asked to (`collect_text`), it also notes the runs of text between tags outside a template
//! (byte ranges, at most `MAX_TEXT_RUNS` between two start tags): the visible text
//! `url::minhash` fingerprints, found in the same pass.

use crate::url::search::{find_byte, lower_run};
use memchr::memchr;
use std::ops::Range;

mod charref;

pub(crate) use charref::{attribute_value, reference};

/// How the text after a start tag is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TextType {
    Data,
    RcData,
    RawText,
    ScriptData,
    PlainText,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Namespace {
    Html,
    Svg,
    MathMl,
}

/// One attribute of the last start tag: byte ranges of the input.
#[derive(Clone, Debug)]
struct Attr {
    name: Range<usize>,
    value: Option<Range<usize>>,
}

/// What the tokenizer reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Token {
    /// A start tag; its attributes are read with `Tokenizer::attr_range` until the next call.
    Start {
        /// The name as written (compare with `eq_ignore_ascii_case`).
        name: Range<usize>,
        /// The namespace the element is in.
        ns: Namespace,
        /// The element's content is read as text (the next token is that `Text`).
        text: bool,
    },
    /// The content of the element the last start tag opened, when that is text: RCDATA,
    /// RAWTEXT, script data or plaintext (up to its end tag, or to the end of the input).
    Text(Range<usize>),
    /// An end tag's name, as written, in the data state; only when asked
    /// (`report_end_tags`). The end tags of elements whose content is text are not reported:
    /// their `Text` ends them.
    End(Range<usize>),
}

/// The state at a tag's attributes (the standard's states of the same names).
#[derive(Clone, Copy)]
enum TagState {
    BeforeAttrName,
    SelfClosing,
    /// The `>` was just consumed.
    Done,
}

/// How a tag ended.
struct TagEnd {
    self_closing: bool,
    /// `>` came right after `=` (`<x a=>`).
    #[cfg_attr(not(any(test, feature = "oracle")), allow(dead_code))]
    forced_data: bool,
}

/// A one-pass tokenizer over `input`.
pub(crate) struct Tokenizer<'a> {
    input: &'a [u8],
    pos: usize,
    /// Collect the runs of text between tags into `text_runs` (`collect_text`).
    collect_text: bool,
    /// Runs of text between tags (data state, outside a template) since `take_text_runs`.
    text_runs: Vec<Range<usize>>,
    text: TextType,
    /// The name of the element whose text is being read, for its end tag.
    text_owner: &'static [u8],
    /// Namespaces entered; never empty (HTML at the bottom).
    ns: Vec<Namespace>,
    attrs: Vec<Attr>,
    /// Which HTML start tags' attributes go to `attrs` (`keep_attributes_of`).
    keep: fn(&[u8]) -> Option<&'static str>,
    /// The last start tag's attributes went to `attrs`.
    kept: bool,
    /// What `keep` named the last start tag, when it was asked.
    kept_as: Option<&'static str>,
    /// The value of the last start tag's first attribute called `style` (any element's is CSS
    /// to read: the extractor asks at every tag, so it is noted as the attributes are read,
    /// kept or not), as `attr_range` gives it.
    style: Option<Range<usize>>,
    /// HTML `<template>` elements open.
    templates: u32,
    /// Report end tags (`Token::End`).
    end_tags: bool,
    /// `lol_html` reads what followed differently (see the module doc); for the oracle tests.
    #[cfg(any(test, feature = "oracle"))]
    pub(crate) unlike_lol_html: bool,
    /// Where the `<noscript>` elements open would end if their content were RAWTEXT, as
    /// `lol_html` reads it; for the oracle tests.
    #[cfg(any(test, feature = "oracle"))]
    noscript_raw_ends: Vec<usize>,
}

const fn is_ws(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

fn eq_ci(a: &[u8], b: &[u8]) -> bool {
    a.eq_ignore_ascii_case(b)
}

fn one_of(name: &[u8], names: &[&[u8]]) -> bool {
    names.iter().any(|n| eq_ci(name, n))
}

/// HTML elements that end foreign content (the standard's list, as `lol_html` has it).
const FOREIGN_BREAKERS: [&[u8]; 44] = [
    b"b",
    b"big",
    b"blockquote",
    b"body",
    b"br",
    b"center",
    b"code",
    b"dd",
    b"div",
    b"dl",
    b"dt",
    b"em",
    b"embed",
    b"h1",
    b"h2",
    b"h3",
    b"h4",
    b"h5",
    b"h6",
    b"head",
    b"hr",
    b"i",
    b"img",
    b"li",
    b"listing",
    b"menu",
    b"meta",
    b"nobr",
    b"ol",
    b"p",
    b"pre",
    b"ruby",
    b"s",
    b"small",
    b"span",
    b"strong",
    b"strike",
    b"sub",
    b"sup",
    b"table",
    b"tt",
    b"u",
    b"ul",
    b"var",
];
/// Runs of text kept between two start tags at most (a body of end tags and comments between
/// words costs no more memory than this).
const MAX_TEXT_RUNS: usize = 1024;
const MATHML_TEXT_POINTS: [&[u8]; 5] = [b"mi", b"mo", b"mn", b"ms", b"mtext"];
const SVG_HTML_POINTS: [&[u8]; 3] = [b"desc", b"title", b"foreignobject"];

impl<'a> Tokenizer<'a> {
    pub(crate) fn new(input: &'a [u8]) -> Self {
        Tokenizer {
            input,
            pos: 0,
            collect_text: false,
            text_runs: Vec::new(),
            text: TextType::Data,
            text_owner: b"",
            ns: vec![Namespace::Html],
            attrs: Vec::new(),
            keep: |_| Some(""),
            kept: false,
            kept_as: None,
            style: None,
            templates: 0,
            end_tags: false,
            #[cfg(any(test, feature = "oracle"))]
            unlike_lol_html: false,
            #[cfg(any(test, feature = "oracle"))]
            noscript_raw_ends: Vec::new(),
        }
    }

    /// Keeps the attributes of only the HTML start tags whose name (as written: compare
    /// without case) `keep` gives a name of its own (`kept_as`); the others' are read past,
    /// only `style` noted (`style_range`). In SVG and MathML every tag's are kept, without
    /// asking (the tree builder's feedback reads some). By default every tag's are.
    pub(crate) fn keep_attributes_of(&mut self, keep: fn(&[u8]) -> Option<&'static str>) {
        self.keep = keep;
    }

    /// Whether the last start tag's attributes were kept (`keep_attributes_of`): else
    /// `attr_range` finds none.
    pub(crate) fn attributes_kept(&self) -> bool {
        self.kept
    }

    /// The name `keep` gave the last start tag (`keep_attributes_of`), if it was asked and
    /// kept it.
    pub(crate) fn kept_as(&self) -> Option<&'static str> {
        self.kept_as
    }

    /// Starts or stops collecting the text between tags (the visible text, for
    /// `url::minhash`). At most `MAX_TEXT_RUNS` runs wait between two `take_text_runs`.
    pub(crate) fn collect_text(&mut self, on: bool) {
        self.collect_text = on;
    }

    /// The runs of text between tags found since the last call, in order: byte ranges of the
    /// input, character references not decoded. Empty unless `collect_text`.
    pub(crate) fn take_text_runs(&mut self) -> std::vec::Drain<'_, Range<usize>> {
        self.text_runs.drain(..)
    }

    /// Reports end tags too (`Token::End`), for a reader that follows the elements' nesting
    /// (`content::one_pass`); link extraction does not.
    pub(crate) fn report_end_tags(&mut self, on: bool) {
        self.end_tags = on;
    }

    /// Whether runs of text wait for `take_text_runs`.
    #[inline]
    pub(crate) fn has_text_runs(&self) -> bool {
        !self.text_runs.is_empty()
    }

    /// The last start tag is inside an HTML `<template>` (its own start tag included).
    pub(crate) fn in_template(&self) -> bool {
        self.templates > 0
    }

    /// Where the raw value of the last start tag's first attribute called `name` (ASCII, any
    /// case) is in the input; an empty range for an attribute without a value. `None` for every
    /// name when its attributes were not kept (`attributes_kept`).
    pub(crate) fn attr_range(&self, name: &[u8]) -> Option<Range<usize>> {
        let a = self
            .attrs
            .iter()
            .find(|a| eq_ci(&self.input[a.name.clone()], name))?;
        Some(a.value.clone().unwrap_or(a.name.end..a.name.end))
    }

    /// The last start tag's attributes in order, as (name, raw value) ranges of the input (an
    /// empty value range for an attribute without a value); a repeated name is there twice,
    /// where `attr_range` finds the first. None when they were not kept.
    pub(crate) fn attributes(&self) -> impl Iterator<Item = (Range<usize>, Range<usize>)> + '_ {
        self.attrs.iter().map(|a| {
            let value = a.value.clone().unwrap_or(a.name.end..a.name.end);
            (a.name.clone(), value)
        })
    }

    /// `attr_range(b"style")`, without a search, and whether or not the attributes were kept.
    /// Like `attr_range`, read until the next `next_token`.
    pub(crate) fn style_range(&self) -> Option<Range<usize>> {
        self.style.clone()
    }

    fn current_ns(&self) -> Namespace {
        *self.ns.last().expect("the namespace stack is never empty")
    }

    /// The next start tag or element text, or `None` at the end of the input.
    pub(crate) fn next_token(&mut self) -> Option<Token> {
        loop {
            match self.text {
                TextType::Data => {
                    let found = find_byte(b'<', &self.input[self.pos..]);
                    if self.collect_text {
                        self.text_run(found);
                    }
                    #[cfg(any(test, feature = "oracle"))]
                    self.noscript_raw_ends_passed(found.map(|lt| self.pos + lt));
                    self.pos += found? + 1;
                    if let Some(token) = self.tag_open() {
                        return Some(token);
                    }
                }
                TextType::PlainText => {
                    let start = self.pos;
                    self.pos = self.input.len();
                    self.text = TextType::Data;
                    return Some(Token::Text(start..self.input.len()));
                }
                TextType::RcData | TextType::RawText | TextType::ScriptData => {
                    let start = self.pos;
                    let found = if self.text == TextType::ScriptData {
                        self.script_end()
                    } else {
                        self.raw_end()
                    };
                    self.text = TextType::Data;
                    let Some((text_end, name, state)) = found else {
                        self.pos = self.input.len();
                        return Some(Token::Text(start..self.input.len()));
                    };
                    // The end tag: read to its `>`, then the tree builder's feedback.
                    if self.finish_tag(state, false).is_some() {
                        self.end_tag_feedback(&self.input[name]);
                    }
                    return Some(Token::Text(start..text_end));
                }
            }
        }
    }

    /// Notes the text from `pos` to the next `<` (at `lt` from it, or the end), if not empty,
    /// outside a template, and if fewer than `MAX_TEXT_RUNS` wait.
    fn text_run(&mut self, lt: Option<usize>) {
        let end = lt.map_or(self.input.len(), |lt| self.pos + lt);
        if end > self.pos && self.templates == 0 && self.text_runs.len() < MAX_TEXT_RUNS {
            self.text_runs.push(self.pos..end);
        }
    }

    /// After a `<` in the data state (`pos` is just past it): a tag, a comment, or text.
    fn tag_open(&mut self) -> Option<Token> {
        let input = self.input;
        let &c = input.get(self.pos)?;
        if c.is_ascii_alphabetic() {
            return self.start_tag();
        }
        match c {
            b'!' => {
                self.pos += 1;
                self.markup_declaration();
            }
            b'/' => {
                self.pos += 1;
                match input.get(self.pos) {
                    Some(c) if c.is_ascii_alphabetic() => {
                        let (name, state) = self.tag_name();
                        // `</name>`, most end tags, needs no more reading; and in HTML outside
                        // a template, no feedback.
                        let read = matches!(state, TagState::Done)
                            || self.finish_tag(state, false).is_some();
                        if read && (self.templates > 0 || self.ns.len() > 1) {
                            self.end_tag_feedback(&input[name.clone()]);
                        }
                        if read && self.end_tags {
                            return Some(Token::End(name));
                        }
                    }
                    Some(b'>') => self.pos += 1,
                    Some(_) => self.skip_past(b'>'),
                    None => {}
                }
            }
            b'?' => self.skip_past(b'>'),
            _ => {} // The `<` was text; `c` is read again in the data state.
        }
        None
    }

    /// Moves past the next `needle`, or to the end.
    fn skip_past(&mut self, needle: u8) {
        self.pos = find_byte(needle, &self.input[self.pos..])
            .map_or(self.input.len(), |i| self.pos + i + 1);
    }

    /// After `<!`.
    fn markup_declaration(&mut self) {
        let rest = &self.input[self.pos..];
        if rest.starts_with(b"--") {
            self.pos += 2;
            self.comment();
        } else if self.current_ns() != Namespace::Html && rest.starts_with(b"[CDATA[") {
            self.pos += 7;
            self.pos = memchr::memmem::find(&self.input[self.pos..], b"]]>")
                .map_or(self.input.len(), |i| self.pos + i + 3);
        } else {
            // A doctype, a bogus comment: both end at the next `>`.
            self.skip_past(b'>');
        }
    }

    /// After `<!--`: the comment ends at `>` or `->` right away, else at the first `-->` or
    /// `--!>` (what the standard's comment states amount to).
    fn comment(&mut self) {
        let rest = &self.input[self.pos..];
        if rest.starts_with(b">") {
            self.pos += 1;
            return;
        }
        if rest.starts_with(b"->") {
            self.pos += 2;
            return;
        }
        let mut from = 0;
        while let Some(i) = memchr::memmem::find(&rest[from..], b"--") {
            let at = from + i + 2;
            // Skip a run of dashes: `--->` ends too.
            let mut end = at;
            while rest.get(end) == Some(&b'-') {
                end += 1;
            }
            match rest.get(end) {
                Some(b'>') => {
                    self.pos += end + 1;
                    return;
                }
                Some(b'!') if rest.get(end + 1) == Some(&b'>') => {
                    self.pos += end + 2;
                    return;
                }
                _ => from = end.max(at),
            }
        }
        self.pos = self.input.len();
    }

    /// A start tag (`pos` at the first letter of its name).
    fn start_tag(&mut self) -> Option<Token> {
        let (name, state) = self.tag_name();
        let kept_as = match self.current_ns() {
            Namespace::Html => (self.keep)(&self.input[name.clone()]),
            _ => None,
        };
        let keep = kept_as.is_some() || self.current_ns() != Namespace::Html;
        self.attrs.clear();
        self.style = None;
        // Most tags end after their name or after plain attributes; the states read the rest.
        let plain_end = TagEnd {
            self_closing: false,
            forced_data: false,
        };
        let end = match state {
            TagState::Done => plain_end,
            TagState::BeforeAttrName if self.plain_attributes(keep)? => plain_end,
            state => self.finish_tag(state, keep)?,
        };
        (self.kept, self.kept_as) = (keep, kept_as);
        let ns_before = self.current_ns();
        let text = self.start_tag_feedback(&self.input[name.clone()], end.self_closing);
        let ns = self.current_ns();
        if ns_before == Namespace::Html && eq_ci(&self.input[name.clone()], b"template") {
            self.templates += 1;
        }
        #[cfg(any(test, feature = "oracle"))]
        {
            // `lol_html` reads `<noscript>` as text too.
            let noscript =
                ns_before == Namespace::Html && eq_ci(&self.input[name.clone()], b"noscript");
            if end.forced_data && (text.is_some() || noscript) {
                self.unlike_lol_html = true;
            }
            if noscript {
                self.noscript_opened();
            }
        }
        if let Some(text) = text {
            self.text = text;
            self.text_owner = match text {
                TextType::ScriptData => b"script",
                _ => owner_name(&self.input[name.clone()]),
            };
        }
        Some(Token::Start {
            name,
            ns,
            text: text.is_some(),
        })
    }

    /// Reads a tag name from `pos`; returns it and the state its terminator leads to (`Done`
    /// at the end of the input too: `finish_tag` then finds nothing).
    fn tag_name(&mut self) -> (Range<usize>, TagState) {
        let start = self.pos;
        let input = self.input;
        // Lower-case letters and `-` (most names are only that) without the terminators' tests.
        let mut pos = start + lower_run(&input[start..]);
        while let Some(&c) = input.get(pos) {
            let state = match c {
                c if is_ws(c) => TagState::BeforeAttrName,
                b'/' => TagState::SelfClosing,
                b'>' => TagState::Done,
                _ => {
                    pos += 1;
                    continue;
                }
            };
            self.pos = pos + 1;
            return (start..pos, state);
        }
        // End of input inside the name: `finish_tag` must drop the tag.
        self.pos = pos;
        (start..pos, TagState::BeforeAttrName)
    }

    /// Reads the rest of a tag from `state` to its `>`, keeping attributes if `keep` (onto those
    /// kept already). `None` if the input ends first: the tag is dropped and the input is over.
    fn finish_tag(&mut self, mut state: TagState, keep: bool) -> Option<TagEnd> {
        let input = self.input;
        let mut self_closing = false;
        loop {
            match state {
                TagState::Done => {
                    return Some(TagEnd {
                        self_closing,
                        forced_data: false,
                    });
                }
                TagState::SelfClosing => match input.get(self.pos) {
                    None => return self.eof(),
                    Some(b'>') => {
                        self.pos += 1;
                        self_closing = true;
                        state = TagState::Done;
                    }
                    Some(_) => state = TagState::BeforeAttrName,
                },
                TagState::BeforeAttrName => {
                    if self.plain_attributes(keep)? {
                        state = TagState::Done;
                        continue;
                    }
                    while input.get(self.pos).is_some_and(|&c| is_ws(c)) {
                        self.pos += 1;
                    }
                    match input.get(self.pos) {
                        None => return self.eof(),
                        Some(b'/') => {
                            self.pos += 1;
                            state = TagState::SelfClosing;
                        }
                        Some(b'>') => {
                            self.pos += 1;
                            state = TagState::Done;
                        }
                        Some(_) => match self.attribute(keep)? {
                            AttrEnd::Next => {}
                            AttrEnd::SelfClosing => state = TagState::SelfClosing,
                            AttrEnd::Done => state = TagState::Done,
                            AttrEnd::ForcedData => {
                                return Some(TagEnd {
                                    self_closing,
                                    forced_data: true,
                                });
                            }
                        },
                    }
                }
            }
        }
    }

    /// In the before attribute name state: reads the attributes of the shape most have,
    /// `name="value"` (or `'value'`) with a name of lower-case letters and `-`, each after one
    /// space, without the states' tests, since none of those bytes ends a name, `="` leads to
    /// the double-quoted value's state and only the quote ends that. Returns whether the tag's
    /// `>` followed (consumed); else `pos` is where the before attribute name state goes on
    /// (at the start of an attribute of another shape, or after the last one read). `None` at
    /// the end of the input.
    #[inline(always)]
    fn plain_attributes(&mut self, keep: bool) -> Option<bool> {
        let input = self.input;
        let mut pos = self.pos;
        loop {
            let start = pos;
            pos += lower_run(&input[pos..]);
            let (true, [b'=', quote @ (b'"' | b'\''), ..]) = (pos > start, &input[pos..]) else {
                // Not a plain name (or none): read it in the attribute name state.
                self.pos = start;
                return Some(false);
            };
            let from = pos + 2;
            let Some(len) = find_byte(*quote, &input[from..]) else {
                return self.eof();
            };
            self.push_attr(keep, start..pos, Some(from..from + len));
            pos = from + len + 1;
            // After the quoted value.
            match input.get(pos) {
                Some(b' ') => pos += 1,
                Some(b'>') => {
                    self.pos = pos + 1;
                    return Some(true);
                }
                _ => {
                    self.pos = pos;
                    return Some(false);
                }
            }
        }
    }

    fn eof<T>(&mut self) -> Option<T> {
        self.pos = self.input.len();
        None
    }

    /// One attribute, from the first character of its name (always part of the name, even `=`).
    fn attribute(&mut self, keep: bool) -> Option<AttrEnd> {
        let input = self.input;
        let start = self.pos;
        self.pos += 1;
        // The name.
        let name_end;
        let mut after_name_ws = false;
        loop {
            match input.get(self.pos) {
                None => return self.eof(),
                Some(&c) if is_ws(c) => {
                    name_end = self.pos;
                    self.pos += 1;
                    after_name_ws = true;
                    break;
                }
                Some(b'=' | b'/' | b'>') => {
                    name_end = self.pos;
                    break;
                }
                Some(_) => self.pos += 1,
            }
        }
        let name = start..name_end;
        if after_name_ws {
            // After the name: spaces, then `=`, `/`, `>` or the next attribute's name.
            while input.get(self.pos).is_some_and(|&c| is_ws(c)) {
                self.pos += 1;
            }
            match input.get(self.pos) {
                None => return self.eof(),
                Some(b'=') => {}
                _ => {
                    // `/`, `>` or a new name: this attribute has no value.
                    self.push_attr(keep, name, None);
                    return Some(AttrEnd::Next);
                }
            }
        }
        match input[self.pos] {
            b'/' => {
                self.pos += 1;
                self.push_attr(keep, name, None);
                return Some(AttrEnd::SelfClosing);
            }
            b'>' => {
                self.pos += 1;
                self.push_attr(keep, name, None);
                return Some(AttrEnd::Done);
            }
            _ => self.pos += 1, // `=`
        }
        // Before the value.
        while input.get(self.pos).is_some_and(|&c| is_ws(c)) {
            self.pos += 1;
        }
        match input.get(self.pos) {
            None => self.eof(),
            Some(&quote @ (b'"' | b'\'')) => {
                let from = self.pos + 1;
                let Some(len) = find_byte(quote, &input[from..]) else {
                    return self.eof();
                };
                self.pos = from + len + 1;
                self.push_attr(keep, name, Some(from..from + len));
                Some(AttrEnd::Next)
            }
            Some(b'>') => {
                self.pos += 1;
                self.push_attr(keep, name, None);
                Some(AttrEnd::ForcedData)
            }
            Some(_) => {
                let from = self.pos;
                loop {
                    match input.get(self.pos) {
                        None => return self.eof(),
                        Some(&c) if is_ws(c) => {
                            self.push_attr(keep, name, Some(from..self.pos));
                            self.pos += 1;
                            return Some(AttrEnd::Next);
                        }
                        Some(b'>') => {
                            self.push_attr(keep, name, Some(from..self.pos));
                            self.pos += 1;
                            return Some(AttrEnd::Done);
                        }
                        Some(_) => self.pos += 1,
                    }
                }
            }
        }
    }

    /// Records an attribute if `keep`, and notes it if it is the tag's first `style`.
    #[inline(always)]
    fn push_attr(&mut self, keep: bool, name: Range<usize>, value: Option<Range<usize>>) {
        if self.style.is_none()
            && name.len() == 5
            && self.input[name.start] | 0x20 == b's'
            && eq_ci(&self.input[name.clone()], b"style")
        {
            self.style = Some(value.clone().unwrap_or(name.end..name.end));
        }
        if keep {
            self.attrs.push(Attr { name, value });
        }
    }

    /// The tree builder's answer to a start tag: the namespace stack changes, and the text type
    /// of the element's content if it is not markup.
    fn start_tag_feedback(&mut self, name: &[u8], self_closing: bool) -> Option<TextType> {
        let ns = self.current_ns();
        if eq_ci(name, b"svg") {
            self.enter(Namespace::Svg);
        } else if eq_ci(name, b"math") {
            self.enter(Namespace::MathMl);
        } else if ns != Namespace::Html {
            if one_of(name, &FOREIGN_BREAKERS) {
                self.leave();
            } else if ns == Namespace::Svg && one_of(name, &SVG_HTML_POINTS)
                || ns == Namespace::MathMl && one_of(name, &MATHML_TEXT_POINTS)
            {
                if !self_closing {
                    self.enter(Namespace::Html);
                }
            } else if eq_ci(name, b"font") {
                let breaks = self
                    .attrs
                    .iter()
                    .any(|a| one_of(&self.input[a.name.clone()], &[b"color", b"size", b"face"]));
                if breaks {
                    self.leave();
                }
            } else if ns == Namespace::MathMl && !self_closing && eq_ci(name, b"annotation-xml") {
                let html = self.attrs.iter().any(|a| {
                    eq_ci(&self.input[a.name.clone()], b"encoding")
                        && a.value.clone().is_some_and(|v| {
                            one_of(&self.input[v], &[b"text/html", b"application/xhtml+xml"])
                        })
                });
                if html {
                    self.enter(Namespace::Html);
                }
            }
        } else if one_of(name, &[b"textarea", b"title"]) {
            return Some(TextType::RcData);
        } else if eq_ci(name, b"plaintext") {
            return Some(TextType::PlainText);
        } else if eq_ci(name, b"script") {
            return Some(TextType::ScriptData);
        } else if one_of(name, &RAWTEXT) {
            return Some(TextType::RawText);
        }
        None
    }

    /// The tree builder's answer to an end tag: leaving a namespace, or a template (none
    /// outside both).
    fn end_tag_feedback(&mut self, name: &[u8]) {
        if self.templates > 0 && eq_ci(name, b"template") {
            self.templates -= 1;
        }
        let ns = self.current_ns();
        if ns == Namespace::Html {
            let [.., prev, _] = self.ns[..] else {
                return;
            };
            if prev == Namespace::MathMl && one_of(name, &MATHML_TEXT_POINTS)
                || prev == Namespace::Svg && one_of(name, &SVG_HTML_POINTS)
                || prev == Namespace::MathMl && eq_ci(name, b"annotation-xml")
            {
                self.leave();
            }
        } else if ns == Namespace::Svg && eq_ci(name, b"svg")
            || ns == Namespace::MathMl && eq_ci(name, b"math")
            || one_of(name, &[b"p", b"br"])
        {
            self.leave();
        }
    }

    fn enter(&mut self, ns: Namespace) {
        self.ns.push(ns);
    }

    fn leave(&mut self) {
        if self.ns.len() > 1 {
            self.ns.pop();
        }
    }

    /// In RCDATA or RAWTEXT from `pos`: the end of the text, the end tag's name and the state
    /// after it, or `None` if the text runs to the end of the input.
    fn raw_end(&mut self) -> Option<(usize, Range<usize>, TagState)> {
        let input = self.input;
        loop {
            let lt = self.pos + memchr(b'<', &input[self.pos..])?;
            self.pos = lt + 1;
            if input.get(self.pos) != Some(&b'/') {
                continue;
            }
            self.pos += 1;
            if let Some(found) = self.end_tag_name(lt)? {
                return Some(found);
            }
        }
    }

    /// After `</` in a text state: an appropriate end tag's name and the state after it
    /// (`Some(Some(..))`), not one (`Some(None)`, `pos` left to read on), or the end of the
    /// input (`None`).
    fn end_tag_name(&mut self, lt: usize) -> Option<Option<(usize, Range<usize>, TagState)>> {
        let input = self.input;
        let start = self.pos;
        if !input.get(self.pos)?.is_ascii_alphabetic() {
            return Some(None);
        }
        while input.get(self.pos)?.is_ascii_alphabetic() {
            self.pos += 1;
        }
        let name = start..self.pos;
        let state = match input[self.pos] {
            c if is_ws(c) => TagState::BeforeAttrName,
            b'/' => TagState::SelfClosing,
            b'>' => TagState::Done,
            _ => return Some(None),
        };
        if !eq_ci(&input[name.clone()], self.text_owner) {
            return Some(None);
        }
        self.pos += 1;
        Some(Some((lt, name, state)))
    }

    /// In script data from `pos`: as `raw_end`, through the escaped and double-escaped states
    /// (`<!--` … `<script>` … `</script>` … `-->` hides a `</script>`).
    fn script_end(&mut self) -> Option<(usize, Range<usize>, TagState)> {
        let input = self.input;
        let mut s = S::Data;
        loop {
            match s {
                S::Data => {
                    let lt = self.pos + memchr(b'<', &input[self.pos..])?;
                    self.pos = lt + 1;
                    match *input.get(self.pos)? {
                        b'/' => {
                            self.pos += 1;
                            if let Some(found) = self.end_tag_name(lt)? {
                                return Some(found);
                            }
                        }
                        b'!' => {
                            self.pos += 1;
                            if input[self.pos..].starts_with(b"--") {
                                self.pos += 2;
                                s = S::EscapedDashDash;
                            } else {
                                input.get(self.pos)?;
                            }
                        }
                        _ => {}
                    }
                }
                S::EscapedDashDash => match *input.get(self.pos)? {
                    b'-' => self.pos += 1,
                    b'<' => {
                        let lt = self.pos;
                        self.pos += 1;
                        if let Some(found) = self.escaped_less_than(lt, &mut s)? {
                            return Some(found);
                        }
                    }
                    b'>' => {
                        self.pos += 1;
                        s = S::Data;
                    }
                    _ => {
                        self.pos += 1;
                        s = S::Escaped;
                    }
                },
                S::Escaped => {
                    if self.dashes_or_less_than()? {
                        s = S::EscapedDashDash;
                    } else if let Some(found) = self.escaped_less_than(self.pos - 1, &mut s)? {
                        return Some(found);
                    }
                }
                S::DoubleEscaped => {
                    if self.dashes_or_less_than()? {
                        s = S::DoubleEscapedDashDash;
                    } else {
                        self.double_escaped_less_than(&mut s)?;
                    }
                }
                S::DoubleEscapedDashDash => match *input.get(self.pos)? {
                    b'-' => self.pos += 1,
                    b'<' => {
                        self.pos += 1;
                        self.double_escaped_less_than(&mut s)?;
                    }
                    b'>' => {
                        self.pos += 1;
                        s = S::Data;
                    }
                    _ => {
                        self.pos += 1;
                        s = S::DoubleEscaped;
                    }
                },
            }
        }
    }
}

/// What the oracle tests need to know of `<noscript>` (see the module doc).
#[cfg(any(test, feature = "oracle"))]
impl Tokenizer<'_> {
    /// Inside a `<noscript>` as `lol_html` reads it.
    pub(crate) fn in_noscript_for_oracle(&self) -> bool {
        !self.noscript_raw_ends.is_empty()
    }

    /// At the content of an HTML `<noscript>`: notes where `lol_html` would end it, and whether
    /// the oracle would read it as this tokenizer does (it parses at most
    /// `MAX_NOSCRIPT_DEPTH` nested ones, `MAX_NOSCRIPT` bytes each, from a fresh namespace
    /// stack).
    fn noscript_opened(&mut self) {
        use crate::url::extract::oracle::{MAX_NOSCRIPT, MAX_NOSCRIPT_DEPTH};
        let (pos, owner) = (self.pos, self.text_owner);
        self.text_owner = b"noscript";
        let end = self.raw_end().map_or(self.input.len(), |(end, _, _)| end);
        (self.pos, self.text_owner) = (pos, owner);
        self.noscript_raw_ends.retain(|&e| e >= pos);
        if self.ns.len() > 1
            || self.noscript_raw_ends.len() >= usize::from(MAX_NOSCRIPT_DEPTH)
            || end - pos > MAX_NOSCRIPT
        {
            self.unlike_lol_html = true;
        }
        self.noscript_raw_ends.push(end);
    }

    /// In the data state at `pos`, the next `<` at `lt`: `lol_html`'s `<noscript>` text ends
    /// where this tokenizer reads markup the same way only if that end is such a `<`, met with
    /// the namespace stack as it was at the start.
    fn noscript_raw_ends_passed(&mut self, lt: Option<usize>) {
        let (pos, len) = (self.pos, self.input.len());
        let mut unlike = false;
        self.noscript_raw_ends.retain(|&e| {
            if e == len {
                return true;
            }
            if e < pos || Some(e) == lt && self.ns.len() > 1 {
                unlike = true;
            }
            lt.is_some_and(|lt| e > lt)
        });
        self.unlike_lol_html |= unlike;
    }
}

/// The script data states that are not at a `<` (the standard's, merged where they agree).
#[derive(Clone, Copy)]
enum S {
    Data,
    Escaped,
    EscapedDashDash,
    DoubleEscaped,
    DoubleEscapedDashDash,
}

impl Tokenizer<'_> {
    /// In the (double-)escaped states, where only `--` and `<` matter: moves past the next of
    /// them; `true` for `--`, `None` at the end of the input.
    fn dashes_or_less_than(&mut self) -> Option<bool> {
        loop {
            let i = memchr::memchr2(b'-', b'<', &self.input[self.pos..])?;
            self.pos += i + 1;
            if self.input[self.pos - 1] == b'<' {
                return Some(false);
            }
            if self.input.get(self.pos) == Some(&b'-') {
                self.pos += 1;
                return Some(true);
            }
        }
    }

    /// After `<` in the escaped state.
    #[allow(clippy::type_complexity)]
    fn escaped_less_than(
        &mut self,
        lt: usize,
        s: &mut S,
    ) -> Option<Option<(usize, Range<usize>, TagState)>> {
        let input = self.input;
        let rest = &input[self.pos..];
        if rest.len() >= 6 && eq_ci(&rest[..6], b"script") {
            self.pos += 6;
            match *input.get(self.pos)? {
                c if is_ws(c) || c == b'/' || c == b'>' => {
                    self.pos += 1;
                    *s = S::DoubleEscaped;
                }
                _ => *s = S::Escaped,
            }
            return Some(None);
        }
        match *input.get(self.pos)? {
            b'/' => {
                self.pos += 1;
                let found = self.end_tag_name(lt)?;
                if found.is_none() {
                    *s = S::Escaped;
                }
                Some(found)
            }
            _ => {
                *s = S::Escaped;
                Some(None)
            }
        }
    }

    /// After `<` in the double-escaped state.
    fn double_escaped_less_than(&mut self, s: &mut S) -> Option<()> {
        let input = self.input;
        *s = S::DoubleEscaped;
        if *input.get(self.pos)? != b'/' {
            return Some(());
        }
        self.pos += 1;
        let rest = &input[self.pos..];
        if rest.len() >= 6 && eq_ci(&rest[..6], b"script") {
            self.pos += 6;
            let c = *input.get(self.pos)?;
            if is_ws(c) || c == b'/' || c == b'>' {
                self.pos += 1;
                *s = S::Escaped;
            }
        } else {
            input.get(self.pos)?;
        }
        Some(())
    }
}

/// Why `attribute` returned.
enum AttrEnd {
    Next,
    SelfClosing,
    Done,
    ForcedData,
}

/// RAWTEXT elements. Not `noscript`: pages are read as with scripts off, where its content is
/// markup.
const RAWTEXT: [&[u8]; 5] = [b"style", b"iframe", b"xmp", b"noembed", b"noframes"];

/// The lower-case name of a text element (`name` is one of them, in any case).
fn owner_name(name: &[u8]) -> &'static [u8] {
    [b"textarea" as &[u8], b"title", b"plaintext"]
        .into_iter()
        .chain(RAWTEXT)
        .find(|n| eq_ci(name, n))
        .unwrap_or(b"")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `style_range`, noted as the tag is read, is the first `style` attribute as `attr_range`
    /// finds it, in any case, with or without a value, and none on a tag without one (after one
    /// that had it).
    #[test]
    fn style_range_is_the_first_style_attribute() {
        let input = br#"<p STYLE="a:url(1)" style=b><i class=x><b x style><br Style = 'c' style=d styles=e><hr stylex=f>"#;
        let mut tokens = Tokenizer::new(input);
        let mut seen = Vec::new();
        while let Some(Token::Start { .. }) = tokens.next_token() {
            assert_eq!(tokens.style_range(), tokens.attr_range(b"style"));
            let value = tokens.style_range().map(|v| &input[v]);
            seen.push(value.map(|v| String::from_utf8(v.to_vec()).unwrap()));
        }
        let want = [Some("a:url(1)"), None, Some(""), Some("c"), None];
        assert_eq!(seen, want.map(|v| v.map(String::from)));
    }

    /// Each start tag's name, attributes (name and raw value, as written) and `style` value.
    type Tags = Vec<(String, Vec<(String, Option<String>)>, Option<String>)>;

    /// The start tags expected: names, and attribute names and values as written.
    type Expected<'a> = &'a [(&'a str, &'a [(&'a str, Option<&'a str>)])];

    /// Reads `input`'s start tags, keeping the attributes of those `keep` accepts.
    fn start_tags(input: &[u8], keep: fn(&[u8]) -> Option<&'static str>) -> Tags {
        let text = |r: Range<usize>| String::from_utf8(input[r].to_vec()).unwrap();
        let mut tokens = Tokenizer::new(input);
        tokens.keep_attributes_of(keep);
        let mut tags = Vec::new();
        while let Some(token) = tokens.next_token() {
            if let Token::Start { name, .. } = token {
                let kept_as = keep(&input[name.clone()]);
                assert_eq!(
                    (tokens.attributes_kept(), tokens.kept_as()),
                    (kept_as.is_some(), kept_as)
                );
                let attrs = (tokens.attrs.iter())
                    .map(|a| (text(a.name.clone()), a.value.clone().map(text)))
                    .collect();
                tags.push((text(name), attrs, tokens.style_range().map(text)));
            }
        }
        tags
    }

    /// The plain `name="value"` attributes and `</name>` end tags, read without the states,
    /// give what the states give: a quoted `>` or other quote, a value then `/`, `>`, another
    /// attribute without a space or more space, names the fast path leaves to the states
    /// (upper case, digits, a first `=`, space before `=`), values without quotes or without a
    /// value, character references left as written, and input ending anywhere in a tag.
    #[test]
    fn plain_attributes_read_as_the_states_read_them() {
        let cases: &[(&[u8], Expected)] = &[
            (
                br#"<a href="x>y" class='c"d'>"#,
                &[("a", &[("href", Some("x>y")), ("class", Some("c\"d"))])],
            ),
            (
                br#"<a href="x"/><b c="d"e="f">"#,
                &[
                    ("a", &[("href", Some("x"))]),
                    ("b", &[("c", Some("d")), ("e", Some("f"))]),
                ],
            ),
            (
                b"<a href=\"x\"  data-x=\"1\"\t\ny='2' >",
                &[(
                    "a",
                    &[("href", Some("x")), ("data-x", Some("1")), ("y", Some("2"))],
                )],
            ),
            (
                br#"<A HREF="X" Href="y" h2="z">"#,
                &[(
                    "A",
                    &[("HREF", Some("X")), ("Href", Some("y")), ("h2", Some("z"))],
                )],
            ),
            (
                br#"<a =x="1" href = "2" title>"#,
                &[(
                    "a",
                    &[("=x", Some("1")), ("href", Some("2")), ("title", None)],
                )],
            ),
            (
                br#"<a href=x title b="" c=>t"#,
                &[(
                    "a",
                    &[
                        ("href", Some("x")),
                        ("title", None),
                        ("b", Some("")),
                        ("c", None),
                    ],
                )],
            ),
            (
                br#"<a href="&amp;x&#47;" x='&lt'>"#,
                &[("a", &[("href", Some("&amp;x&#47;")), ("x", Some("&lt"))])],
            ),
            (
                br#"<a b="1"c d="2"/ e="3">"#,
                &[(
                    "a",
                    &[
                        ("b", Some("1")),
                        ("c", None),
                        ("d", Some("2")),
                        ("e", Some("3")),
                    ],
                )],
            ),
            (
                b"<p>x</p><a href=\"y\">",
                &[("p", &[]), ("a", &[("href", Some("y"))])],
            ),
            (b"<a", &[]),
            (b"<a href", &[]),
            (b"<a href=", &[]),
            (b"<a href=\"x", &[]),
            (b"<a href=\"x\"", &[]),
            (b"<a href=\"x\" ", &[]),
            (b"<a href=\"x\" b", &[]),
            (b"<a href=\"x\"/", &[]),
        ];
        for &(input, want) in cases {
            let got = start_tags(input, |_| Some(""));
            let want: Tags = (want.iter())
                .map(|(name, attrs)| {
                    let attrs = (attrs.iter())
                        .map(|(n, v)| (n.to_string(), v.map(String::from)))
                        .collect();
                    (name.to_string(), attrs, None)
                })
                .collect();
            assert_eq!(got, want, "{}", String::from_utf8_lossy(input));
        }
    }

    /// Tags whose attributes are not kept end where the others do and have their `style`
    /// noted, and the tags after them are read the same.
    #[test]
    fn tags_without_kept_attributes_still_have_their_style() {
        let input =
            br#"<span class="a>" style="u(1)"><a href="x" style='s'><SPAN STYLE=t><i><b style>"#;
        let keep_a: fn(&[u8]) -> Option<&'static str> =
            |name| name.eq_ignore_ascii_case(b"a").then_some("a");
        let all = start_tags(input, |_| Some(""));
        let some = start_tags(input, keep_a);
        assert_eq!(all.len(), 5);
        for (all, some) in all.iter().zip(&some) {
            assert_eq!((&all.0, &all.2), (&some.0, &some.2));
            let kept = keep_a(all.0.as_bytes()).is_some();
            assert_eq!(some.1, if kept { all.1.clone() } else { vec![] });
        }
        let styles: Vec<_> = some.iter().map(|t| t.2.as_deref()).collect();
        assert_eq!(styles, [Some("u(1)"), Some("s"), Some("t"), None, Some("")]);
    }
}
