//! The subcommands beside the crawl: `crawl dedupe`, `crawl cachesim`, `crawl rank` and `crawl wacz`
//! (with `hits`, which `--focus` uses too). See ARCHITECTURE.md, "tools/".

pub mod cachesim;
pub mod dedupe;
pub mod rank;
pub mod wacz;
