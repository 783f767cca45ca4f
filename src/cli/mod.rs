//! The command line: options (`args`) and exit statuses (`exit`).

pub mod args;
pub mod command;
pub mod exit;
