//! Shards: many crawl processes, each owning the hosts that hash to it, exchanging the URLs
//! they discover for each other's hosts through a broker (issue #16).
//!
//! - `broker`: the trait the crawl talks to, and the batch encoding;
//! - `redis`: its implementation on Redis Streams;
//! - `outbox`: a durable per-destination queue on disk, what a page's cross-shard links are
//!   written to before the page counts as done;
//! - `sender`: one thread per destination, moving its outbox into the broker.

// The crawl does not use the exchange yet (the other half of #16 wires it in): until then its
// parts are reached from their tests only.
#![allow(dead_code)]

pub mod broker;
pub mod outbox;
pub mod redis;
pub mod sender;
