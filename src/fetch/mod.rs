//! Fetching: one HTTP(S) request and its bounded response, with a client of our own.
//!
//! `client` sends the request with every timeout and size cap set and decides from the
//! response headers whether to read the body (`body`); `conn` is one HTTP/1.1 connection (the
//! head parsed by httparse, the body framed and capped) and `pool` keeps idle ones per origin;
//! `dns` caches name look-ups in front of it and refuses private addresses (`private`); `tls`
//! is the one rustls configuration; `cookies` is the one cookie jar; `proxy` opens tunnels
//! (CONNECT, SOCKS) whose targets pass the same check. `error` names every way a fetch fails
//! (the URL log's error words); `retry` says when a host that answered 429 or 503 is asked
//! again. See ARCHITECTURE.md, "fetch/".

pub mod body;
pub mod client;
pub mod conn;
pub mod cookies;
pub mod dns;
pub mod error;
pub mod pool;
pub mod private;
pub mod proxy;
pub mod reactor;
pub mod retry;
pub mod tls;
