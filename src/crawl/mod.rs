//! The crawl: the worker pool that joins the stages.
//!
//! `run` wires seen set, frontier, scheduler, fetch and outputs together and runs the
//! workers; `worker` is one worker's loop and a page's steps; `note` is the URL log's note
//! column; `hunt` is `--find`, searched in each fetched page. See ARCHITECTURE.md.

pub mod hunt;
pub mod note;
pub mod run;
pub mod sitemaps;
pub mod worker;
