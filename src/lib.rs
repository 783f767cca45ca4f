//! `crawl`: a polite, crash-safe web crawler with Mercator's disk-based duplicate-URL eliminator.
//!
//! The modules follow a URL through the crawler (see shared/DESIGN.md):
//! `seeds` → `normalize` (canonical form, scope filter) → `due` (`clock` cache in front of the
//! sorted on-disk `store`, keyed by `checksum`) → `frontier` (disk FIFO) → `dispatch` and
//! `politeness` (per-host queues, delay rule, `robots`) → `crawl` workers: `fetch`, `extract`,
//! `urllog`, `links` (the link graph) and `save` (`--save files`). `statedir`, `durable`,
//! `hoststate` and `recrawl` keep the state directory safe across runs (`failpoint` crashes it
//! on purpose in tests); `cli`, `exit`, `progress` and `summary` face the user.
//! Beside the crawl: `hunt` (`--find`, searched in each fetched page), `dedupe` (a stdin
//! filter on the same DUE) and `cachesim` (the paper's cache experiment).

pub mod archive;
pub mod batch;
pub mod cachesim;
pub mod checksum;
pub mod cli;
pub mod clock;
pub mod crawl;
pub mod dedupe;
pub mod dispatch;
pub mod dns;
pub mod due;
pub mod durable;
pub mod exit;
pub mod extract;
pub mod failpoint;
pub mod fetch;
pub mod focus;
pub mod frontier;
pub mod hits;
pub mod hoststate;
pub mod hunt;
pub mod links;
pub mod normalize;
pub mod politeness;
pub mod progress;
pub mod rank;
pub mod recrawl;
pub mod robots;
pub mod save;
pub mod seeds;
pub mod splitmix;
pub mod statedir;
pub mod store;
pub mod summary;
pub mod urllog;
pub mod warc;
