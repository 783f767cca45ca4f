//! The crawl's configuration (`CrawlConfig`): built once by `cli/config.rs`, never changed,
//! read by every thread. Here, not in `run`, so that the stages `run` starts (the workers, the
//! page sinks) need not name `run`.

use crate::content::text::TextMode;
use crate::crawl::outcome::SeedHosts;
use crate::fetch::client::FetchConfig;
use crate::fetch::retry::Transient;
use crate::frontier::focus::Focus;
use crate::output::progress;
use crate::output::warc::WarcConfig;
use crate::recrawl::Generation;
use crate::schedule::dispatch::DispatchConfig;
use crate::schedule::hostrules::HostRules;
use crate::schedule::politeness::DelayRule;
use crate::schedule::stop::{RunLimits, Stop};
use crate::seen::due::DueConfig;
use crate::shard::Exchange;
use crate::url::normalize::Filter;
use std::path::PathBuf;
use std::sync::Arc;
use url::Url;

/// Everything a crawl needs, validated.
pub struct CrawlConfig {
    pub out: PathBuf,
    pub seeds: Vec<Url>,
    /// How the dispatcher hands out work (`--max-pages`, `--max-pages-per-host`, …), and to
    /// how many workers (`dispatch.workers`: `-j`, or elastic up to `--max-connections`).
    pub dispatch: DispatchConfig,
    pub filter: Filter,
    pub delay: DelayRule,
    /// `--rate`: requests per second per host, beside the delay rule.
    pub rate: Option<f64>,
    /// `--host-connections`: the scheduler's requests in flight per host, unless a
    /// `--host-rules` rule gives a host other connections.
    pub host_connections: usize,
    /// `--host-rules`: other rates, connections and page budgets for some hosts (empty
    /// without it).
    pub host_rules: Arc<HostRules>,
    /// How pages are fetched; its `host_connections` is the idle connections kept per host:
    /// the most requests any host may have in flight.
    pub fetch: FetchConfig,
    pub robots_token: String,
    /// When pages and robots.txt that failed transiently are asked again (`--retries`,
    /// `--retry-wait`).
    pub retry: Transient,
    /// `--max-error-ratio`: more fetches failed than this share makes the crawl `mostly-failed`.
    pub max_error_ratio: f64,
    /// The seeds' hosts, and whether any answered (`nothing-answered`).
    pub seed_hosts: SeedHosts,
    /// Page-level robots directives are obeyed (not `--ignore-page-robots`).
    pub obey_page_robots: bool,
    /// `--near-duplicates`: whether HTML pages are signed, and what a near-duplicate does.
    pub near_duplicates: crate::url::minhash::NearDuplicates,
    /// `--near-duplicates-threshold`: the resemblance from which a page is a near-duplicate.
    pub near_duplicates_threshold: f64,
    pub due: DueConfig,
    /// Where responses are archived; `None` with `--no-warc`.
    pub warc: Option<WarcConfig>,
    /// Where `--save files` writes HTML pages (`DIR/pages`); `None` without it.
    pub pages: Option<PathBuf>,
    /// Where `--save markdown` writes each HTML page's Markdown (`DIR/markdown`).
    pub markdown_dir: Option<PathBuf>,
    /// `--text`: each HTML and plain-text page's text, for WET files and the URL log.
    pub text: Option<TextMode>,
    /// `--markdown` (or `--save markdown`): each HTML page's main content as Markdown, for the
    /// URL log and `markdown_dir`.
    pub markdown: bool,
    /// `--link-graph`: each fetched page's links are appended to `DIR/links.tsv`.
    pub link_graph: bool,
    /// How progress is shown while the crawl runs.
    pub progress: progress::Mode,
    /// A first crawl (or its resumption), or a recrawl (see `recrawl`).
    pub generation: Generation,
    /// `--recrawl-budget`: a recrawl asks for at most this many pages (`recrawl::budget`).
    pub recrawl_budget: Option<u64>,
    /// `--extract`: each page's fields by the rules, written as JSON lines and SQLite rows.
    pub extract: Option<crate::crawl::extract::Extract>,
    /// `--find`: pages are searched, and the crawl stops at the first match.
    pub hunt: Option<Arc<crate::crawl::hunt::Hunt>>,
    /// With `--focus`: the topic and link graph that order the frontier.
    pub focus: Option<Arc<Focus>>,
    /// Where sitemaps come from; `None` with `--no-sitemaps`.
    pub sitemaps: Option<crate::crawl::links::sitemap::Sources>,
    /// With `--shard`: this shard's exchange with the others (`shard::Exchange`).
    pub exchange: Option<Arc<Exchange>>,
    /// The crawl's stop (`schedule::stop`): requested by the signal handler, the hunt, the URL
    /// log and the dispatcher on a failure; read by the dispatcher, the exchange threads, the
    /// watchdog and the report.
    pub stop: Arc<Stop>,
    /// `--max-time`, `--max-bytes`: stops the watchdog (time) and the workers (bytes) request.
    pub limits: RunLimits,
}
