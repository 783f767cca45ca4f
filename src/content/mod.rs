//! What a page says: its text (`text`: the main content for `--text main`, all visible text for
//! `--text full`) and its metadata (`metadata`: title, language, canonical link, description,
//! publication date). Pure functions of a page's HTML (already decoded to UTF-8) and URL: no
//! I/O, no state between pages, so a worker calls them on the page it holds and hands the
//! result on. See ARCHITECTURE.md, "content/".
//!
//! Invariants:
//! - Bounded input: a caller gives at most the body the fetch kept (`--max-body`), and
//!   `text::main_text` builds a tree only of the first `text::MAX_TREE_BYTES` of it.
//! - Bounded time and memory per page: every pass is linear in the page (the tree is a
//!   constant times the bytes given to it and is dropped before the function returns);
//!   nothing is kept from one page to the next.
//! - UTF-8 out: `&str` in, `String` out, never longer than the page; lines of text, one block
//!   (paragraph, heading, list item, table row, code line) to a line.

pub mod metadata;
pub mod text;
