//! The frontier: URLs waiting to be fetched.
//!
//! `entry` is the frontier's record (one line per URL, with what a recrawl needs), `queue` the
//! disk FIFO of those records with its durable head and done log, `spill` the host queues'
//! overflow and the deferred FIFO (files named by that head), and `focus` the optional
//! priority window of `--focus`. See ARCHITECTURE.md, "frontier/".

pub mod entry;
pub mod focus;
pub mod hits;
pub mod queue;
pub mod spill;

pub use entry::{Entry, Previous};
pub use queue::Frontier;
