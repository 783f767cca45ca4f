//! URLs in: seed files, links extracted from pages, and the canonical form both are put in.
//!
//! `seeds` reads the seed list, `extract` finds links in a page over `html` (the tokenizer)
//! and in a stylesheet over `css`,
//! `directives` reads a page's robots directives, `minhash` signs a page's visible text
//! (read by `extract` in the same pass) for near-duplicates, `normalize` makes the canonical form and
//! applies the scope filter, `sitemap` reads the URLs a site lists, `search` finds bytes in the
//! short runs they all read. See ARCHITECTURE.md, "url/".

pub mod css;
pub mod directives;
pub mod escape;
pub mod extract;
pub(crate) mod html;
pub mod minhash;
pub mod normalize;
mod search;
pub mod seeds;
pub mod sitemap;
