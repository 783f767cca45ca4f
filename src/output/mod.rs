//! What the crawl writes: the WARC archive, the URL log, the link graph, saved pages,
//! `--extract`'s SQLite rows (`fieldsdb`), the progress line and the summary. The archive, the URL log and the link graph each have
//! one writer thread fed through a `handoff`. See ARCHITECTURE.md, "output/".

pub mod archive;
pub mod cdxj;
pub mod digest;
pub mod fieldsdb;
pub mod handoff;
pub mod links;
pub mod names;
pub mod progress;
pub mod save;
pub mod urllog;
pub mod warc;
