//! The subcommands beside the crawl: `crawl dedupe`, `crawl cachesim`, `crawl rank`, `crawl wacz`
//! and `crawl extract` (with `hits`, which `--focus` uses too). See ARCHITECTURE.md, "tools/".

pub mod cachesim;
pub mod dedupe;
pub mod extract;
pub mod rank;
pub mod wacz;
