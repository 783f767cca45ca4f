//! Fetching: one HTTP(S) request and its bounded response.
//!
//! `client` sends the request with every timeout and size cap set and decides from the
//! response headers whether to read the body (`body`); `dns` caches name look-ups in front of
//! it and refuses private addresses (`private`); `cookies` is the one cookie jar every host's
//! agent shares; `proxy` makes a proxy's targets pass the same check. See ARCHITECTURE.md, "Fetch".

pub mod body;
pub mod client;
pub mod cookies;
pub mod dns;
pub mod private;
pub mod proxy;
pub mod retry;
