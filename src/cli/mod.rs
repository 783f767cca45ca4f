//! The command line: options (`args`), their translation into the crawl's configuration
//! (`config`), running a command (`command`) and exit statuses with the one error type (`exit`).
//! See ARCHITECTURE.md, "cli/".

pub mod args;
pub mod command;
pub mod config;
