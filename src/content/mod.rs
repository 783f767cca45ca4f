//! What a page says, as opposed to where it links (`url`): values read out of a page's body.
//!
//! `fields` is `--extract RULES`: named rule sets of fields (CSS selectors with Scrapy's
//! `::text` and `::attr(name)`, regular expressions, JSON-LD paths), the rules file that
//! declares them, and the extraction of one page. It knows pages only as a URL and a text: the
//! crawl's sink (`crawl::extract`) and its outputs (`output::fieldsdb`) call it. See
//! ARCHITECTURE.md, "content/".

pub mod fields;
