//! The crawl: the worker pool that joins the stages.
//!
//! `run` wires seen set, frontier, scheduler, fetch and outputs together and runs the
//! workers; `worker` is one worker's loop and a page's steps; `links` is where a response's
//! links come from (one file per source); `offer` makes a page's links ready for the DUE, each
//! distinct URL once; `note` is the URL log's note column; `hunt` is `--find`, searched in
//! each fetched page; `extract` is `--extract`, each page's fields written out; `stop` is why the crawl stops, the one flag every thread reads; `pool` is how many workers run
//! (fixed by `-j`, else elastic up to `--max-connections`); `outcome` is how a finished crawl
//! went (`summary.json`'s `outcome`, exit status 3). See
//! ARCHITECTURE.md, "crawl/".

pub mod config;
pub mod counters;
pub mod extract;
pub mod hunt;
pub mod links;
pub mod note;
mod offer;
pub mod outcome;
pub mod page;
pub mod run;
pub mod sinks;
pub mod sitemaps;
pub mod summary;
pub mod worker;
