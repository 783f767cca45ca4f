//! The state directory: what survives a kill, and how.
//!
//! `statedir` creates and locks `--out`; `durable` is the one way a state file is replaced;
//! `recrawl` starts a new generation on a completed crawl; `history` is each page's record of
//! visits and changes and its estimated change rate, which `budget` orders a recrawl by
//! (`--recrawl-budget`); `failpoint` crashes the process on purpose for the resume tests. See ARCHITECTURE.md, "state/" and
//! "What is durable when".

pub mod durable;
pub mod failpoint;
pub mod history;
pub mod statedir;
