//! The integration tests: one binary (linking the crate and its dependencies once), a module
//! per topic. Each runs the real `crawl` binary against loopback servers that the test starts
//! and stops itself (`testweb`). Run one topic with `cargo test --test it resume::`.

mod archive;
mod cachesim;
mod crawling;
mod dedupe;
mod directives;
mod docs;
mod extract;
mod focus;
mod framing;
mod fuzz;
mod hostile;
mod hunt;
mod idle_timeout;
mod layering;
mod limits;
mod manpage;
mod markdown;
mod neardup;
mod netns;
mod outputs;
mod payload_dedupe;
mod rank;
mod recrawl_budget;
mod request;
mod requisites;
mod resume;
mod retry;
mod robots;
mod safety;
mod shards;
mod sitemaps;
mod text;
mod util;
mod warc;
