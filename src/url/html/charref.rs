//! Attribute values as the HTML standard's tokenizer reads them: character references decoded
//! (§13.2.5.72–80, with the rule for attributes), U+0000 made U+FFFD.
//!
//! Named references come from `html_escape::NAMED_ENTITIES` (the standard's `entities.json`,
//! sorted, names without `;`), except the 93 whose value is two code points, which that table
//! cuts to the first and `TWO_CODE_POINTS` has whole. A value without `&` or NUL is returned as
//! it is, without a copy.

use crate::url::search::find_either;
use html_escape::NAMED_ENTITIES;
use std::borrow::Cow;

/// `raw` (an attribute value, in characters) with its character references decoded as in an
/// attribute value and each U+0000 replaced by U+FFFD.
pub(crate) fn attribute_value(raw: &str) -> Cow<'_, str> {
    let bytes = raw.as_bytes();
    let Some(first) = find_either(b'&', 0, bytes) else {
        return Cow::Borrowed(raw);
    };
    let mut out = String::with_capacity(raw.len());
    out.push_str(&raw[..first]);
    let mut pos = first;
    loop {
        // `pos` is at `&` or NUL.
        if bytes[pos] == 0 {
            out.push('\u{FFFD}');
            pos += 1;
        } else {
            pos = reference(bytes, pos + 1, &mut out);
        }
        match find_either(b'&', 0, &bytes[pos..]) {
            Some(i) => {
                out.push_str(&raw[pos..pos + i]);
                pos += i;
            }
            None => {
                out.push_str(&raw[pos..]);
                return Cow::Owned(out);
            }
        }
    }
}

/// After an `&` at `at - 1` of a value's bytes (UTF-8): writes what the reference stands for
/// (or the `&` itself, when there is none) and returns where reading goes on. Only ASCII bytes
/// after the `&` are read (`url::minhash` decodes references in place with it).
pub(crate) fn reference(bytes: &[u8], at: usize, out: &mut String) -> usize {
    match bytes.get(at) {
        Some(b'#') => numeric(bytes, at + 1, out),
        Some(c) if c.is_ascii_alphanumeric() => named(bytes, at, out),
        _ => {
            out.push('&');
            at
        }
    }
}

/// After `&#`: a decimal or (after `x`/`X`) hexadecimal reference; `;` is optional.
fn numeric(bytes: &[u8], at: usize, out: &mut String) -> usize {
    let hex = matches!(bytes.get(at), Some(b'x' | b'X'));
    let (radix, start) = if hex { (16, at + 1) } else { (10, at) };
    let digits = bytes[start.min(bytes.len())..]
        .iter()
        .take_while(|c| char::from(**c).is_digit(radix))
        .count();
    if digits == 0 {
        // Absence of digits: `&#` (or `&#x`) stays as written.
        out.push('&');
        return at - 1;
    }
    let value = bytes[start..start + digits].iter().fold(0u32, |n, &c| {
        let digit = char::from(c).to_digit(radix).expect("a digit");
        // Past 0x10FFFF the value only needs to stay past it.
        n.saturating_mul(radix).saturating_add(digit).min(0x11_0000)
    });
    out.push(numeric_value(value));
    let end = start + digits;
    if bytes.get(end) == Some(&b';') {
        end + 1
    } else {
        end
    }
}

/// The character a numeric reference stands for (the numeric character reference end state):
/// U+FFFD for 0, surrogates and values past U+10FFFF; 0x80–0x9F through the Windows-1252
/// table; anything else as it is.
fn numeric_value(value: u32) -> char {
    if (0x80..=0x9F).contains(&value) {
        let remapped = WINDOWS_1252[(value - 0x80) as usize];
        if remapped != 0 {
            return char::from_u32(remapped).expect("the table holds characters");
        }
    }
    match value {
        0 => '\u{FFFD}',
        _ => char::from_u32(value).unwrap_or('\u{FFFD}'),
    }
}

/// The standard's replacements for numeric references 0x80–0x9F (0: none, the value stays).
const WINDOWS_1252: [u32; 32] = [
    0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, // 0x80
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0, // 0x88
    0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, // 0x90
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178, // 0x98
];

/// After `&` and an ASCII alphanumeric: the longest name of the table that follows. A name
/// with `;` is taken as it is; one of the legacy names, matched without `;`, is not decoded
/// when an `=` or an ASCII alphanumeric follows it (the rule for attributes, so that a query
/// such as `?a=1&copy=2` survives), and is decoded otherwise (`&gt ` is `> `).
fn named(bytes: &[u8], at: usize, out: &mut String) -> usize {
    let run = bytes[at..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    let name = &bytes[at..at + run];
    if bytes.get(at + run) == Some(&b';')
        && let Some(value) = lookup(name)
    {
        out.push_str(value);
        return at + run + 1;
    }
    // The longest legacy name the run starts with (they are at most 6 long).
    let legacy = (1..=run.min(6))
        .rev()
        .find(|&len| LEGACY.binary_search(&&name[..len]).is_ok());
    if let Some(len) = legacy {
        let next = bytes.get(at + len);
        if !next.is_some_and(|&c| c == b'=' || c.is_ascii_alphanumeric()) {
            out.push_str(lookup(&name[..len]).expect("legacy names are in the table"));
            return at + len;
        }
    }
    out.push('&');
    at
}

/// The value of the named reference `name;`.
fn lookup(name: &[u8]) -> Option<&'static str> {
    // The commonest names without a search (code in documentation is full of them).
    match name {
        b"amp" => return Some("&"),
        b"lt" => return Some("<"),
        b"gt" => return Some(">"),
        b"quot" => return Some("\""),
        b"nbsp" => return Some("\u{A0}"),
        _ => {}
    }
    if let Ok(i) = TWO_CODE_POINTS.binary_search_by(|(n, _)| n.cmp(&name)) {
        return Some(TWO_CODE_POINTS[i].1);
    }
    NAMED_ENTITIES
        .binary_search_by(|(n, _)| n.cmp(&name))
        .ok()
        .map(|i| NAMED_ENTITIES[i].1)
}

/// The names the standard's table also lists without `;` (`entities.json`), sorted.
const LEGACY: [&[u8]; 106] = [
    b"AElig", b"AMP", b"Aacute", b"Acirc", b"Agrave", b"Aring", b"Atilde", b"Auml", b"COPY",
    b"Ccedil", b"ETH", b"Eacute", b"Ecirc", b"Egrave", b"Euml", b"GT", b"Iacute", b"Icirc",
    b"Igrave", b"Iuml", b"LT", b"Ntilde", b"Oacute", b"Ocirc", b"Ograve", b"Oslash", b"Otilde",
    b"Ouml", b"QUOT", b"REG", b"THORN", b"Uacute", b"Ucirc", b"Ugrave", b"Uuml", b"Yacute",
    b"aacute", b"acirc", b"acute", b"aelig", b"agrave", b"amp", b"aring", b"atilde", b"auml",
    b"brvbar", b"ccedil", b"cedil", b"cent", b"copy", b"curren", b"deg", b"divide", b"eacute",
    b"ecirc", b"egrave", b"eth", b"euml", b"frac12", b"frac14", b"frac34", b"gt", b"iacute",
    b"icirc", b"iexcl", b"igrave", b"iquest", b"iuml", b"laquo", b"lt", b"macr", b"micro",
    b"middot", b"nbsp", b"not", b"ntilde", b"oacute", b"ocirc", b"ograve", b"ordf", b"ordm",
    b"oslash", b"otilde", b"ouml", b"para", b"plusmn", b"pound", b"quot", b"raquo", b"reg",
    b"sect", b"shy", b"sup1", b"sup2", b"sup3", b"szlig", b"thorn", b"times", b"uacute", b"ucirc",
    b"ugrave", b"uml", b"uuml", b"yacute", b"yen", b"yuml",
];

/// The named references whose value is two code points (`entities.json`), sorted.
const TWO_CODE_POINTS: [(&[u8], &str); 93] = [
    (b"NotEqualTilde", "\u{2242}\u{338}"),
    (b"NotGreaterFullEqual", "\u{2267}\u{338}"),
    (b"NotGreaterGreater", "\u{226B}\u{338}"),
    (b"NotGreaterSlantEqual", "\u{2A7E}\u{338}"),
    (b"NotHumpDownHump", "\u{224E}\u{338}"),
    (b"NotHumpEqual", "\u{224F}\u{338}"),
    (b"NotLeftTriangleBar", "\u{29CF}\u{338}"),
    (b"NotLessLess", "\u{226A}\u{338}"),
    (b"NotLessSlantEqual", "\u{2A7D}\u{338}"),
    (b"NotNestedGreaterGreater", "\u{2AA2}\u{338}"),
    (b"NotNestedLessLess", "\u{2AA1}\u{338}"),
    (b"NotPrecedesEqual", "\u{2AAF}\u{338}"),
    (b"NotRightTriangleBar", "\u{29D0}\u{338}"),
    (b"NotSquareSubset", "\u{228F}\u{338}"),
    (b"NotSquareSuperset", "\u{2290}\u{338}"),
    (b"NotSubset", "\u{2282}\u{20D2}"),
    (b"NotSucceedsEqual", "\u{2AB0}\u{338}"),
    (b"NotSucceedsTilde", "\u{227F}\u{338}"),
    (b"NotSuperset", "\u{2283}\u{20D2}"),
    (b"ThickSpace", "\u{205F}\u{200A}"),
    (b"acE", "\u{223E}\u{333}"),
    (b"bne", "\u{3D}\u{20E5}"),
    (b"bnequiv", "\u{2261}\u{20E5}"),
    (b"caps", "\u{2229}\u{FE00}"),
    (b"cups", "\u{222A}\u{FE00}"),
    (b"fjlig", "\u{66}\u{6A}"),
    (b"gesl", "\u{22DB}\u{FE00}"),
    (b"gvertneqq", "\u{2269}\u{FE00}"),
    (b"gvnE", "\u{2269}\u{FE00}"),
    (b"lates", "\u{2AAD}\u{FE00}"),
    (b"lesg", "\u{22DA}\u{FE00}"),
    (b"lvertneqq", "\u{2268}\u{FE00}"),
    (b"lvnE", "\u{2268}\u{FE00}"),
    (b"nGg", "\u{22D9}\u{338}"),
    (b"nGt", "\u{226B}\u{20D2}"),
    (b"nGtv", "\u{226B}\u{338}"),
    (b"nLl", "\u{22D8}\u{338}"),
    (b"nLt", "\u{226A}\u{20D2}"),
    (b"nLtv", "\u{226A}\u{338}"),
    (b"nang", "\u{2220}\u{20D2}"),
    (b"napE", "\u{2A70}\u{338}"),
    (b"napid", "\u{224B}\u{338}"),
    (b"nbump", "\u{224E}\u{338}"),
    (b"nbumpe", "\u{224F}\u{338}"),
    (b"ncongdot", "\u{2A6D}\u{338}"),
    (b"nedot", "\u{2250}\u{338}"),
    (b"nesim", "\u{2242}\u{338}"),
    (b"ngE", "\u{2267}\u{338}"),
    (b"ngeqq", "\u{2267}\u{338}"),
    (b"ngeqslant", "\u{2A7E}\u{338}"),
    (b"nges", "\u{2A7E}\u{338}"),
    (b"nlE", "\u{2266}\u{338}"),
    (b"nleqq", "\u{2266}\u{338}"),
    (b"nleqslant", "\u{2A7D}\u{338}"),
    (b"nles", "\u{2A7D}\u{338}"),
    (b"notinE", "\u{22F9}\u{338}"),
    (b"notindot", "\u{22F5}\u{338}"),
    (b"nparsl", "\u{2AFD}\u{20E5}"),
    (b"npart", "\u{2202}\u{338}"),
    (b"npre", "\u{2AAF}\u{338}"),
    (b"npreceq", "\u{2AAF}\u{338}"),
    (b"nrarrc", "\u{2933}\u{338}"),
    (b"nrarrw", "\u{219D}\u{338}"),
    (b"nsce", "\u{2AB0}\u{338}"),
    (b"nsubE", "\u{2AC5}\u{338}"),
    (b"nsubset", "\u{2282}\u{20D2}"),
    (b"nsubseteqq", "\u{2AC5}\u{338}"),
    (b"nsucceq", "\u{2AB0}\u{338}"),
    (b"nsupE", "\u{2AC6}\u{338}"),
    (b"nsupset", "\u{2283}\u{20D2}"),
    (b"nsupseteqq", "\u{2AC6}\u{338}"),
    (b"nvap", "\u{224D}\u{20D2}"),
    (b"nvge", "\u{2265}\u{20D2}"),
    (b"nvgt", "\u{3E}\u{20D2}"),
    (b"nvle", "\u{2264}\u{20D2}"),
    (b"nvlt", "\u{3C}\u{20D2}"),
    (b"nvltrie", "\u{22B4}\u{20D2}"),
    (b"nvrtrie", "\u{22B5}\u{20D2}"),
    (b"nvsim", "\u{223C}\u{20D2}"),
    (b"race", "\u{223D}\u{331}"),
    (b"smtes", "\u{2AAC}\u{FE00}"),
    (b"sqcaps", "\u{2293}\u{FE00}"),
    (b"sqcups", "\u{2294}\u{FE00}"),
    (b"varsubsetneq", "\u{228A}\u{FE00}"),
    (b"varsubsetneqq", "\u{2ACB}\u{FE00}"),
    (b"varsupsetneq", "\u{228B}\u{FE00}"),
    (b"varsupsetneqq", "\u{2ACC}\u{FE00}"),
    (b"vnsub", "\u{2282}\u{20D2}"),
    (b"vnsup", "\u{2283}\u{20D2}"),
    (b"vsubnE", "\u{2ACB}\u{FE00}"),
    (b"vsubne", "\u{228A}\u{FE00}"),
    (b"vsupnE", "\u{2ACC}\u{FE00}"),
    (b"vsupne", "\u{228B}\u{FE00}"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(raw: &str) -> String {
        attribute_value(raw).into_owned()
    }

    #[test]
    fn tables_are_sorted_and_consistent() {
        assert!(LEGACY.windows(2).all(|w| w[0] < w[1]));
        assert!(TWO_CODE_POINTS.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(NAMED_ENTITIES.len(), 2125);
        for name in LEGACY {
            assert_eq!(lookup(name).map(|v| v.chars().count()), Some(1));
        }
        for (name, value) in TWO_CODE_POINTS {
            assert!(NAMED_ENTITIES.iter().any(|(n, _)| *n == name));
            assert_eq!(value.chars().count(), 2);
        }
    }

    #[test]
    fn values_without_references_are_not_copied() {
        assert!(matches!(attribute_value("/a?b=c"), Cow::Borrowed(_)));
    }

    #[test]
    fn numeric_references() {
        assert_eq!(decode("&#38;&#x26;&#X26;"), "&&&");
        // `;` is optional.
        assert_eq!(decode("/a?x=1&#38b=2"), "/a?x=1&b=2");
        assert_eq!(decode("&#x2Fz"), "/z");
        // No digits: as written.
        assert_eq!(decode("&#;&#x;&#xg&#"), "&#;&#x;&#xg&#");
        // U+FFFD for 0, surrogates and values past U+10FFFF (however long).
        assert_eq!(
            decode("&#0;&#xD800;&#xDFFF;&#x110000;"),
            "\u{FFFD}".repeat(4)
        );
        assert_eq!(decode("&#99999999999999999999;"), "\u{FFFD}");
        // The Windows-1252 table for 0x80–0x9F; the holes stay.
        assert_eq!(
            decode("&#128;&#x9F;&#x81;&#150;"),
            "\u{20AC}\u{178}\u{81}\u{2013}"
        );
        // Noncharacters and other controls stay.
        assert_eq!(decode("&#xFFFF;&#1;&#13;"), "\u{FFFF}\u{1}\r");
    }

    #[test]
    fn named_references_and_the_attribute_rule() {
        assert_eq!(decode("a&amp;b&lt;&NotEqualTilde;"), "a&b<\u{2242}\u{338}");
        // Legacy names decode without `;` unless `=` or an alphanumeric follows.
        assert_eq!(
            decode("&gt &amp&ampx &copy=2 &pound_id &notit; &notin;"),
            "> &&ampx &copy=2 £_id &notit; \u{2209}"
        );
        // Other names need their `;`.
        assert_eq!(
            decode("&hellip &hellip; &nosuch; &"),
            "&hellip \u{2026} &nosuch; &"
        );
        assert_eq!(decode("&AMP&Amp;"), "&&Amp;");
    }

    #[test]
    fn nul_becomes_the_replacement_character() {
        assert_eq!(decode("/x\0y&amp;\0"), "/x\u{FFFD}y&\u{FFFD}");
    }
}
