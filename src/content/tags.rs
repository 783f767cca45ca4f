//! HTML tag names as small integers, for the readers of a page's tags (`text::full_text`,
//! `one_pass`): a name is looked up once (`known_tag`: its lower-case bytes packed into an
//! integer, found in a table built at compile time), and a set of names is a bit mask (`Tags`),
//! so that asking whether a tag is a block, a list or a cleaned element costs no string
//! comparison.

/// Elements that start or end a line of text: HTML's block-level and table elements, and
/// `<br>`. Lower case; a tag name is compared without case.
#[rustfmt::skip]
const BLOCKS: [&[u8]; 48] = [
    b"address", b"article", b"aside", b"blockquote", b"br", b"caption", b"dd", b"details",
    b"dialog", b"div", b"dl", b"dt", b"fieldset", b"figcaption", b"figure", b"footer", b"form",
    b"h1", b"h2", b"h3", b"h4", b"h5", b"h6", b"header", b"hgroup", b"hr", b"li", b"main",
    b"menu", b"nav", b"ol", b"option", b"p", b"pre", b"section", b"summary", b"table", b"tbody",
    b"td", b"tfoot", b"th", b"thead", b"tr", b"ul", b"body", b"head", b"title", b"html",
];

/// Elements that end a line: `BLOCKS`.
pub(crate) const BLOCK_TAGS: Tags = {
    let mut set = Tags(0);
    let mut i = 0;
    while i < BLOCKS.len() {
        set.0 |= 1 << Tag::of_bytes(BLOCKS[i]).0;
        i += 1;
    }
    set
};

/// Whether a tag named `name` (any case) ends a line of text (`BLOCKS`), for
/// `text::full_text`: one look-up of the name, not a comparison with each block's.
pub(crate) fn ends_line(name: &[u8]) -> bool {
    known_tag(name).is(BLOCK_TAGS)
}

/// Tag names `known_tag` knows: every name `content::one_pass` or a trafilatura rule reads,
/// and the cleaning's. Any other tag is `OTHER`.
#[rustfmt::skip]
pub(crate) const KNOWN: [&str; 117] = [
    "a", "abbr", "address", "applet", "area", "article", "aside", "audio", "b", "base", "blink",
    "blockquote", "body", "br", "button", "canvas", "caption", "center", "cite", "code", "col",
    "datalist", "dd", "del", "details", "dialog", "div", "dl", "dt", "em", "embed", "fieldset",
    "figcaption", "figure", "font", "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4",
    "h5", "h6", "head", "header", "hgroup", "hr", "html", "i", "iframe", "img", "input", "ins",
    "kbd", "label", "legend", "li", "link", "main", "map", "mark", "marquee", "math", "menu",
    "menuitem", "meta", "nav", "noscript", "object", "ol", "optgroup", "option", "output", "p",
    "param", "picture", "pre", "progress", "q", "rp", "rt", "rtc", "s", "samp", "script",
    "section", "select", "small", "source", "span", "strong", "style", "sub", "summary", "sup",
    "svg", "table", "tbody", "td", "template", "textarea", "tfoot", "th", "thead", "time", "title",
    "tr", "track", "tt", "u", "ul", "use", "var", "video", "wbr",
];

/// A tag name as an index of `KNOWN` (`OTHER` for the rest).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Tag(pub(crate) u8);

/// Every tag name `KNOWN` does not list.
pub(crate) const OTHER: Tag = Tag(u8::MAX);

impl Tag {
    /// The tag named `name` (lower case, in `KNOWN`: else the build fails).
    pub(crate) const fn of(name: &str) -> Tag {
        Tag::of_bytes(name.as_bytes())
    }

    const fn of_bytes(name: &[u8]) -> Tag {
        let mut i = 0;
        while i < KNOWN.len() {
            if eq(KNOWN[i].as_bytes(), name) {
                return Tag(i as u8);
            }
            i += 1;
        }
        panic!("a tag name not in KNOWN")
    }

    pub(crate) fn name(self) -> &'static str {
        KNOWN.get(usize::from(self.0)).copied().unwrap_or("")
    }

    pub(crate) fn is(self, set: Tags) -> bool {
        self.0 < 128 && set.0 >> self.0 & 1 == 1
    }
}

const fn eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A set of tags, a bit each.
#[derive(Clone, Copy)]
pub(crate) struct Tags(pub(crate) u128);

pub(crate) const fn tags(names: &[&str]) -> Tags {
    let mut bits = 0u128;
    let mut i = 0;
    while i < names.len() {
        bits |= 1 << Tag::of(names[i]).0;
        i += 1;
    }
    Tags(bits)
}

/// The tag named `name` (any case): its lower-case bytes packed into an integer and looked up
/// in `KNOWN_TABLE` (a compare of integers, not of strings, for each of a page's tags).
pub(crate) fn known_tag(name: &[u8]) -> Tag {
    if name.is_empty() || name.len() > 16 {
        return OTHER;
    }
    let mut key = 0u128;
    for (i, b) in name.iter().enumerate() {
        key |= u128::from(b.to_ascii_lowercase()) << (8 * i);
    }
    let mut slot = slot_of(key);
    loop {
        let (k, tag) = KNOWN_TABLE[slot];
        if k == key {
            return Tag(tag);
        }
        if k == 0 {
            return OTHER;
        }
        slot = (slot + 1) % KNOWN_TABLE.len();
    }
}

/// Where `known_tag` looks for `key` first.
const fn slot_of(key: u128) -> usize {
    let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
    (folded.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 55) as usize
}

/// `KNOWN`'s names packed as `known_tag` packs a name, with their tags, in an open-addressed
/// table of 512 slots (a quarter full: a name is found at its slot or the next, mostly), built
/// at compile time. An empty slot's key is 0, no name's.
const KNOWN_TABLE: [(u128, u8); 512] = {
    let mut table = [(0u128, 0u8); 512];
    let mut i = 0;
    while i < KNOWN.len() {
        let name = KNOWN[i].as_bytes();
        let mut key = 0u128;
        let mut j = 0;
        while j < name.len() {
            key |= (name[j] as u128) << (8 * j);
            j += 1;
        }
        let mut slot = slot_of(key);
        while table[slot].0 != 0 {
            slot = (slot + 1) % 512;
        }
        table[slot] = (key, i as u8);
        i += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_tag_is_found_in_any_case_and_no_other() {
        for (i, name) in KNOWN.iter().enumerate() {
            assert_eq!(known_tag(name.as_bytes()), Tag(i as u8), "{name}");
            assert_eq!(
                known_tag(name.to_uppercase().as_bytes()),
                Tag(i as u8),
                "{name}"
            );
            assert_eq!(Tag(i as u8).name(), *name);
        }
        for other in [
            "",
            "x",
            "ab",
            "divs",
            "h7",
            "my-element",
            "blockquotes",
            "abcdefghijklmnopq",
        ] {
            assert_eq!(known_tag(other.as_bytes()), OTHER, "{other}");
        }
    }

    /// The needle test only skips rules that cannot match: on tags and attribute values made
    /// of the rules' own needles, their neighbours and their pieces, `might_match` is false
    /// only where no rule matches but by the tag.

    #[test]
    fn the_block_names_end_lines_and_no_others() {
        for name in BLOCKS {
            assert!(ends_line(name) && ends_line(&name.to_ascii_uppercase()));
        }
        for other in [&b"a"[..], b"span", b"b", b"template", b"x-p", b""] {
            assert!(!ends_line(other));
        }
    }
}
