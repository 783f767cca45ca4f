//! The crawl: the worker pool that joins the stages.
//!
//! `run` wires seen set, frontier, scheduler, fetch and outputs together and runs the
//! workers; `hunt` is `--find`, searched in each fetched page. See ARCHITECTURE.md.

pub mod hunt;
pub mod run;
