//! What a page says, as opposed to where it links (`url`): values read out of a page's body.
//! See ARCHITECTURE.md, "content/".
//!
//! - `text`: the page's text, the main content for `--text main` (`one_pass` where the
//!   extractor's rules find it in one pass of the tokenizer, else the trafilatura crate), all
//!   visible text for `--text full` (lines made by `lines`, tag names read by `tags`);
//!   `metadata`: title, language, canonical link, description, publication date. Pure
//!   functions of a page's HTML (already decoded to UTF-8) and URL: no I/O, no state between
//!   pages, so a worker calls them on the page it holds and hands the result on.
//! - `markdown`: the main content as Markdown for `--markdown` (the trafilatura crate, as
//!   `text` where the one pass does not answer: its kept HTML, links and images included,
//!   written as CommonMark with GFM tables, links and images absolute).
//! - `fields`: `--extract RULES`: named rule sets of fields (CSS selectors with Scrapy's
//!   `::text` and `::attr(name)`, regular expressions, JSON-LD paths), the rules file that
//!   declares them, and the extraction of one page. It knows pages only as a URL and a text:
//!   the crawl's sink (`crawl::extract`) and its outputs (`output::fieldsdb`) call it.
//!
//! Invariants:
//! - Bounded input: a caller gives at most the body the fetch kept (`--max-body`), and
//!   `text::main_text` reads (in one pass, or as a tree) only the first
//!   `text::MAX_TREE_BYTES` of it.
//! - Bounded time and memory per page: every pass is linear in the page (a tree is a constant
//!   times the bytes given to it and is dropped before the function returns); nothing is kept
//!   from one page to the next.
//! - UTF-8 out: `&str` in, `String` out; text is lines, one block (paragraph, heading, list
//!   item, table row, code line) to a line.

pub mod fields;
pub(crate) mod lines;
pub mod markdown;
pub mod metadata;
pub(crate) mod one_pass;
pub(crate) mod tags;
pub mod text;
