//! The URLs a stylesheet references: `url(…)` (quoted or not), `@import "…"` and
//! `@import url(…)`, and the strings of `image-set(…)` (and `-webkit-image-set(…)`), in the
//! order written, as CSS Syntax reads them (escapes decoded, comments and strings skipped).
//!
//! The tokens come from `cssparser` (Servo's CSS Syntax tokenizer), which borrows the text and
//! copies only a value with an escape. Invariants: time is linear in the input and memory
//! beyond the URLs is bounded: blocks and functions are entered by recursion only
//! `MAX_NESTING` deep, and `cssparser` skips deeper ones with a loop (its stack of open blocks
//! is one byte a level); the caller stops the reading when it has links enough. A
//! `@namespace`'s URL names a namespace, not a resource, and `local("…")` a font on the
//! reader's machine: neither is returned. Nothing is resolved or filtered here
//! (`url::extract` does both, for stylesheets and for `<style>` and `style=` in HTML).

use cssparser::{ParseError, Parser, ParserInput, Token};

/// Blocks and functions inside blocks and functions deeper than this are skipped: real
/// stylesheets nest a few levels (`@media { a { background: image-set(url()) } }`).
const MAX_NESTING: u32 = 32;

/// Calls `each` with every URL `css` (a stylesheet, or a `style` attribute's declarations)
/// references, as written; `each` returns `false` to stop the reading.
pub fn css_urls(css: &str, each: &mut impl FnMut(&str) -> bool) {
    let mut input = ParserInput::new(css);
    let mut parser = Parser::new(&mut input);
    walk(&mut parser, each, 0, false);
}

/// What the contents of a function or block are read for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Inside {
    /// `url("…")`: its first token, a string, is the URL.
    Url,
    /// `url(…)` of a `@namespace`: nothing.
    Skipped,
    /// `image-set(…)`: its strings are URLs too.
    ImageSet,
    /// Any other block or function: only the URLs in it.
    Other,
}

/// Reads the tokens of one level; `strings`: its strings are URLs (`image-set`). Returns
/// `false` once `each` has.
fn walk<'i, F: FnMut(&str) -> bool>(
    parser: &mut Parser<'i, '_>,
    each: &mut F,
    depth: u32,
    strings: bool,
) -> bool {
    // The at-rule just read, for the token after it.
    let mut after_import = false;
    let mut in_namespace = false;
    loop {
        let Ok(token) = parser.next() else {
            return true;
        };
        let import = std::mem::take(&mut after_import);
        let go_on = match token {
            Token::UnquotedUrl(url) if !in_namespace => each(url),
            Token::QuotedString(url) if strings || import => each(url),
            Token::AtKeyword(name) => {
                after_import = name.eq_ignore_ascii_case("import");
                in_namespace = name.eq_ignore_ascii_case("namespace");
                true
            }
            Token::Semicolon => {
                in_namespace = false;
                true
            }
            Token::Function(name) => {
                let inside = if name.eq_ignore_ascii_case("url") {
                    match in_namespace {
                        true => Inside::Skipped,
                        false => Inside::Url,
                    }
                } else if name.eq_ignore_ascii_case("image-set")
                    || name.eq_ignore_ascii_case("-webkit-image-set")
                {
                    Inside::ImageSet
                } else {
                    Inside::Other
                };
                nested(parser, each, depth, inside)
            }
            Token::CurlyBracketBlock => {
                in_namespace = false;
                nested(parser, each, depth, Inside::Other)
            }
            Token::SquareBracketBlock | Token::ParenthesisBlock => {
                nested(parser, each, depth, Inside::Other)
            }
            _ => true,
        };
        if !go_on {
            return false;
        }
    }
}

/// Reads the block or function just opened (`inside` says how), unless it is too deep: then
/// `cssparser` skips it at the next token.
fn nested<'i, F: FnMut(&str) -> bool>(
    parser: &mut Parser<'i, '_>,
    each: &mut F,
    depth: u32,
    inside: Inside,
) -> bool {
    if depth >= MAX_NESTING || inside == Inside::Skipped {
        return true;
    }
    let mut go_on = true;
    let _ = parser.parse_nested_block(|inner| -> Result<(), ParseError<'i, ()>> {
        go_on = match inside {
            Inside::Url => match inner.next() {
                Ok(Token::QuotedString(url)) => each(url),
                _ => true,
            },
            Inside::ImageSet => walk(inner, each, depth + 1, true),
            Inside::Other | Inside::Skipped => walk(inner, each, depth + 1, false),
        };
        // What is left of the block is skipped by `cssparser`: no error to report.
        while inner.next().is_ok() {}
        Ok(())
    });
    go_on
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(css: &str) -> Vec<String> {
        let mut out = Vec::new();
        css_urls(css, &mut |url| {
            out.push(url.to_owned());
            true
        });
        out
    }

    #[test]
    fn url_forms_quoted_or_not_with_escapes() {
        let css = r#"
            a { background: url(plain.png) }
            b { background: url( "double.png" ) url('single.png') }
            c { background: URL(upper.png) }
            d { background: url(sp\ ace\).png) url("q\"uote.png") }
            e { background: url(\66 ont.woff2) url("\e9 t\E9.png") }
            f { background: \75 rl(escaped-name.png) }
            g { background: url("line\
continued.png") }
        "#;
        assert_eq!(
            urls(css),
            [
                "plain.png",
                "double.png",
                "single.png",
                "upper.png",
                "sp ace).png",
                "q\"uote.png",
                "font.woff2",
                "été.png",
                "escaped-name.png",
                "linecontinued.png",
            ]
        );
    }

    #[test]
    fn imports_in_every_form() {
        let css = r#"@import "a.css"; @import 'b.css' screen; @import url(c.css);
            @import url("d.css") layer(x) supports(display: grid);
            @IMPORT "e.css";"#;
        assert_eq!(urls(css), ["a.css", "b.css", "c.css", "d.css", "e.css"]);
    }

    #[test]
    fn image_set_strings_and_urls() {
        let css = r#"a { background-image: image-set("one.png" 1x, url(two.png) 2x,
            "three.avif" type("image/avif"));
            background: -webkit-image-set('four.png' 1x) }"#;
        assert_eq!(urls(css), ["one.png", "two.png", "three.avif", "four.png"]);
    }

    #[test]
    fn strings_comments_and_other_functions_are_not_urls() {
        let css = r#"/* url(comment.png) @import "comment.css"; */
            a::before { content: "url(in-string.png)"; font-family: "x.css" }
            @font-face { src: local("Local Font"), url(font.woff2) format("woff2") }
            @namespace svg url(http://www.w3.org/2000/svg);
            @namespace "http://www.w3.org/1999/xhtml";
            b { background: url(after.png) }"#;
        assert_eq!(urls(css), ["font.woff2", "after.png"]);
    }

    #[test]
    fn bad_urls_and_unclosed_input_end_quietly() {
        assert_eq!(
            urls("a { background: url(bad url.png) } b { x: url(ok.png) }"),
            ["ok.png"]
        );
        assert_eq!(urls("a { background: url(unclosed.png"), ["unclosed.png"]);
        assert_eq!(urls("@import \"unclosed.css"), ["unclosed.css"]);
        assert!(urls("").is_empty());
    }

    #[test]
    fn deep_nesting_is_bounded_and_later_urls_count() {
        let deep = "{".repeat(200_000);
        let css = format!("a {{ x: url(first.png) }} {deep} url(deep.png)");
        assert_eq!(urls(&css), ["first.png"]);
        let shallow = format!(
            "{}url(in.png){}url(out.png)",
            "(".repeat(10),
            ")".repeat(10)
        );
        assert_eq!(urls(&shallow), ["in.png", "out.png"]);
    }

    #[test]
    fn the_caller_stops_the_reading() {
        let css = "url(a) url(b) x { y: url(c) }";
        let mut seen = Vec::new();
        css_urls(css, &mut |url| {
            seen.push(url.to_owned());
            seen.len() < 2
        });
        assert_eq!(seen, ["a", "b"]);
    }
}
