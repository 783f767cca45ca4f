//! `crawl`: a polite, crash-safe web crawler with Mercator's disk-based duplicate-URL eliminator.
//!
//! Each folder is one stage of the pipeline a URL goes through (ARCHITECTURE.md draws it):
//!
//! ```text
//! url (seeds, extract, normalize) → seen (the DUE) → frontier → schedule (politeness, robots)
//!   → fetch → crawl (the workers) → output (WARC, URL log, links, pages, summary)
//! ```
//!
//! `state` keeps the state directory safe across kills and runs; `tools` holds the subcommands
//! beside the crawl (`dedupe`, `cachesim`, `rank`, `wacz`); `cli` is the command line; `sys` the few
//! platform calls. Modules are private: what the binary, tests, examples and fuzz targets use is
//! re-exported below.

#![warn(missing_docs)]

mod cli;
mod content;
mod crawl;
mod exit;
mod fetch;
mod frontier;
mod lru;
mod output;
mod recrawl;
mod schedule;
mod seen;
mod shard;
mod splitmix;
mod state;
mod sys;
mod tools;
mod url;

// The binary's entry points.
/// The command line's definition, from which `examples/manual` renders the man page, the shell
/// completions and docs/options.md.
pub use cli::args::cli_command;
pub use cli::command::main;
/// A page's text and metadata (`--text`), for `examples/extract_bench.rs`
/// (`benches/extraction.sh`: the article-extraction benchmark).
pub use content::metadata::{Metadata, metadata};
pub use content::text::{Extractor, full_text, main_text, main_text_by};
pub use sys::tune_allocator;

// For the integration tests, examples, benchmarks and fuzz targets: the pure functions they
// exercise directly (everything else they reach through the binary).
pub use fetch::body::BodyRule;
pub use fetch::client::{FetchConfig, Fetcher, idle_hosts};
pub use fetch::pool::IDLE_TIMEOUT;
pub use fetch::private::AddressPolicy;
pub use fetch::retry::MAX_RETRIES;
pub use schedule::robots::RobotsRules;
pub use seen::checksum::checksum;
pub use splitmix::SplitMix;
pub use tools::cachesim::policy::{Policy, Simulator, Trace};
pub use tools::cachesim::simulate;
pub use url::extract::extract_links;
/// The link extractor beside `lol_html`'s, for the fuzz target (`--features oracle`).
#[cfg(feature = "oracle")]
pub use url::extract::oracle::agree as extract_agrees_with_lol_html;
pub use url::normalize::{Filter, Scope, canonicalize, is_canonical};
pub use url::seeds::parse_seeds;
pub use url::sitemap;

/// The scheduler and its record, for `examples/host_memory.rs` (memory per known host), and
/// the crawler's own reading of a page's links, for the allocation tests, and its page
/// fingerprint, for the near-duplicate precision test. Not a stable interface.
#[doc(hidden)]
pub mod internals {
    pub use crate::frontier::Entry;
    pub use crate::schedule::politeness::{DelayRule, Next, Scheduler, Work};
    pub use crate::schedule::robots::RobotsRules;
    pub use crate::seen::neardup::{NearDupIndex, Signature};
    pub use crate::url::extract::{page_links, page_links_fingerprinted, stylesheet_links};
    pub use crate::url::minhash::{MIN_WORDS, page_signature};
}

/// What each key of summary.json and each field of the URL log means, for
/// `examples/manual` (which renders docs/summary-json.md and docs/url-log.md from them).
#[doc(hidden)]
pub mod formats {
    pub use crate::crawl::summary::{KEYS as SUMMARY_KEYS, Key as SummaryKey};
    pub use crate::output::urllog::{FIELDS as URL_LOG_FIELDS, Field as UrlLogField};
}

/// The WARC writer and its CDXJ index, for `examples/cdxj_cost.rs` (indexing cost per record),
/// and the two-lane SHA-1 for `examples/digest_lanes.rs`. Not a stable interface.
#[doc(hidden)]
pub mod archive_internals {
    pub use crate::output::cdxj::{Capture, CdxjWriter};
    pub use crate::output::digest::{sha1_pair, sha1_pair_portable};
    pub use crate::output::warc::{
        Compression, Conversion, DEFAULT_ZSTD_LEVEL, RecordId, RequestResponse, WarcConfig,
        WarcWriter, payload_digest,
    };
}

/// The HTTP/1.1 response parser alone (status line, headers, framing, chunked decoder), for
/// the fuzz target `fuzz/fuzz_targets/response.rs`, and one connection with its liveness check,
/// for `examples/idle_check_cost.rs`. Not a stable interface.
#[doc(hidden)]
pub mod fetch_internals {
    pub use crate::fetch::conn::{
        After, Connection, Framing, Idle, LowSpeed, Stream, read_response,
    };
}

/// The main content as the extractor keeps it and as Markdown, for `examples/main_content.rs`
/// (`benches/markdown.sh`: the Markdown rendered back against the kept content). Not a stable
/// interface.
#[doc(hidden)]
pub mod content_internals {
    pub use crate::content::markdown::{kept_html, main_markdown};
}

/// The shard exchange's engine, for `examples/exchange_rate.rs` (URLs/s through one stream,
/// Redis memory per queued URL). Not a stable interface.
#[doc(hidden)]
pub mod exchange_internals {
    pub use crate::shard::broker::{Broker, Handoff};
    pub use crate::shard::outbox::{Batching, Outbox};
    pub use crate::shard::redis::RedisBroker;
    pub use crate::shard::sender::{Sender, SenderConfig};
}
