//! The seen set: Mercator's duplicate-URL eliminator (DUE).
//!
//! A URL becomes its `checksum`; the `clock` cache answers most "seen?" questions in memory;
//! misses wait in a `batch` spooled to disk, and `due` merges each batch into the sorted
//! checksum file of `store`, handing the URLs that were really new to the frontier. `digests`
//! is the same idea for payloads: which were archived, and where their first capture is;
//! `neardup` finds, for a page's MinHash signature, an earlier page it nearly repeats.
//! See ARCHITECTURE.md, "seen/".

pub mod batch;
pub mod checksum;
pub mod clock;
pub mod digests;
pub mod due;
pub mod neardup;
pub mod store;
