//! Fetching: one HTTP(S) request and its bounded response.
//!
//! `client` sends the request with every timeout and size cap set; `dns` caches name
//! look-ups in front of it; `cookies` is the one cookie jar every host's agent shares. See ARCHITECTURE.md, "Fetch".

pub mod client;
pub mod cookies;
pub mod dns;
pub mod retry;
