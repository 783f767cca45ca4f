//! The subcommands beside the crawl: `crawl dedupe`, `crawl cachesim`, `crawl rank`, `crawl wacz`,
//! `crawl extract` and `crawl neardups` (with `hits`, which `--focus` uses too). See ARCHITECTURE.md, "tools/".

pub mod cachesim;
pub mod dedupe;
pub mod extract;
pub mod neardups;
pub mod rank;
pub mod wacz;
