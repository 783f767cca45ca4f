//! The end-of-crawl summary: a few lines on stderr for people, `DIR/summary.json` for scripts.

use crate::crawl::outcome::{RunOutcome, ending_name};
use crate::crawl::run::Report;
use crate::output::warc::WarcStats;
use crate::recrawl::{Generation, Outcome};
use crate::url::normalize::Rejection;
use serde::{Serialize, Serializer};
use std::sync::atomic::Ordering;

/// `summary.json`: one line, keys in the order below (the order it has always had).
/// Counts are integers; `seconds`, `pages_per_second` and `cache_hit_rate` are numbers rounded
/// to 3, 1 and 4 decimals (serde_json writes the shortest form: `0.8`, not `0.8000`).
/// What each key means is `KEYS` (docs/summary-json.md is rendered from it); a test fails
/// when a key written here is not there.
#[derive(Serialize)]
struct Summary {
    ending: &'static str,
    seconds: f64,
    pages: u64,
    pages_per_second: f64,
    status: StatusClasses,
    bytes: u64,
    robots_fetches: u64,
    robots_blocked: u64,
    links_found: u64,
    truncated: u64,
    type_rejected: u64,
    too_long: u64,
    private_refused: u64,
    urls_seen: u64,
    cache_lookups: u64,
    cache_hits: u64,
    cache_hit_rate: f64,
    merges: u64,
    frontier_left: u64,
    /// Every `Rejection` listed, then `host_budget`.
    filtered: Counts,
    warc: Option<Warc>,
    /// Every `Outcome` listed.
    recrawl: Option<Counts>,
    peak_rss_bytes: u64,
    sitemaps: Sitemaps,
    nofollow_pages: u64,
    nofollow_links: u64,
    noindex_pages: u64,
    pages_ahead: u64,
    requests_ahead: u64,
    shard: Option<ShardSummary>,
    workers: u64,
    max_workers: u64,
    connections: Connections,
    outcome: &'static str,
    host_unreachable: u64,
    retried: u64,
    failed: u64,
    near_duplicates: u64,
    extract: Option<crate::crawl::extract::ExtractStats>,
}

/// A key of `summary.json` (a nested one as `parent.key`): its JSON type and what it means.
/// The one place the file's format is described: docs/summary-json.md is rendered from `KEYS`
/// (`cargo run --example manual`), and `every_key_written_is_documented` holds it to the keys
/// `to_json` writes, in their order.
pub struct Key {
    /// The key as written, a nested one after its parent's and a dot (`status.2xx`).
    pub name: &'static str,
    /// `string`, `integer`, `number` or `object`, with ` or null` when it may be `null`.
    pub kind: &'static str,
    /// What it means, for scripts: one or two sentences of Markdown.
    pub meaning: &'static str,
}

const fn key(name: &'static str, kind: &'static str, meaning: &'static str) -> Key {
    Key {
        name,
        kind,
        meaning,
    }
}

/// Every key of `summary.json`, in the order written.
pub const KEYS: &[Key] = &[
    key(
        "ending",
        "string",
        "Why the run ended: `complete`, `page-limit`, `time-limit`, `byte-limit` (a run limit \
         with pages left: resumable, exit status 4), `stopped` (SIGINT/SIGTERM or a closed URL \
         log) or `found` (`--find` found its text).",
    ),
    key(
        "seconds",
        "number",
        "Wall-clock time of the run, 3 decimals.",
    ),
    key(
        "pages",
        "integer",
        "Pages asked for in this run (a retried page once; robots.txt and sitemaps not counted).",
    ),
    key(
        "pages_per_second",
        "number",
        "`pages` / `seconds`, 1 decimal.",
    ),
    key(
        "status",
        "object",
        "Fetches by the status class of their answer.",
    ),
    key("status.none", "integer", "Fetches that got no response."),
    key("status.1xx", "integer", "Responses 100 to 199."),
    key("status.2xx", "integer", "Responses 200 to 299."),
    key("status.3xx", "integer", "Responses 300 to 399."),
    key("status.4xx", "integer", "Responses 400 to 499."),
    key("status.5xx", "integer", "Responses 500 to 599."),
    key(
        "bytes",
        "integer",
        "Response body bytes as received (what `--max-bytes` counts).",
    ),
    key("robots_fetches", "integer", "robots.txt fetches."),
    key(
        "robots_blocked",
        "integer",
        "URLs not fetched because robots.txt disallows them.",
    ),
    key(
        "links_found",
        "integer",
        "Links read from fetched pages, before the filters.",
    ),
    key(
        "truncated",
        "integer",
        "Bodies cut at `--max-body` (note `truncated`).",
    ),
    key(
        "type_rejected",
        "integer",
        "Bodies not read for their media type (`--accept-type`, `--reject-type`).",
    ),
    key(
        "too_long",
        "integer",
        "Bodies not read because their Content-Length is over `--max-body`.",
    ),
    key(
        "private_refused",
        "integer",
        "Fetches refused because the address is private (see `--allow-private`).",
    ),
    key("urls_seen", "integer", "URLs in the seen set."),
    key("cache_lookups", "integer", "Seen-set look-ups in this run."),
    key(
        "cache_hits",
        "integer",
        "Of those, answered by the CLOCK cache without the disk.",
    ),
    key(
        "cache_hit_rate",
        "number",
        "`cache_hits` / `cache_lookups`, 4 decimals.",
    ),
    key(
        "merges",
        "integer",
        "Merges of cache misses into the on-disk seen set.",
    ),
    key(
        "frontier_left",
        "integer",
        "URLs left on the frontier (0 when complete).",
    ),
    key(
        "filtered",
        "object",
        "URLs turned away before the seen set, by reason.",
    ),
    key("filtered.scheme", "integer", "Not http or https."),
    key("filtered.scope", "integer", "Outside `--scope`."),
    key("filtered.depth", "integer", "Past `--max-depth`."),
    key(
        "filtered.pattern",
        "integer",
        "Refused by `--include` or `--exclude`.",
    ),
    key("filtered.url-too-long", "integer", "URL too long."),
    key(
        "filtered.path-too-deep",
        "integer",
        "Too many path segments (a trap guard).",
    ),
    key(
        "filtered.repeated-segment",
        "integer",
        "A path segment repeated too often (`a/b/a/b`, a trap guard).",
    ),
    key(
        "filtered.host_budget",
        "integer",
        "Not fetched: the host's `--max-pages-per-host` was used up (note `host-budget`).",
    ),
    key(
        "warc",
        "object or null",
        "The archive; `null` with `--no-warc`.",
    ),
    key(
        "warc.files",
        "integer",
        "WARC files written to in this run.",
    ),
    key("warc.records", "integer", "Records written."),
    key("warc.bytes", "integer", "Compressed bytes written."),
    key(
        "warc.duplicates",
        "integer",
        "Pages archived as revisits of a payload archived before (payload dedupe).",
    ),
    key(
        "warc.duplicate_bytes",
        "integer",
        "Their payload bytes, not stored again.",
    ),
    key(
        "recrawl",
        "object or null",
        "A recrawl's pages by outcome; `null` on a first crawl.",
    ),
    key(
        "recrawl.new",
        "integer",
        "Pages the previous crawl did not fetch.",
    ),
    key(
        "recrawl.changed",
        "integer",
        "Pages whose status or payload digest changed.",
    ),
    key(
        "recrawl.unchanged",
        "integer",
        "Pages answered 304, or with the same status and payload digest.",
    ),
    key(
        "recrawl.gone",
        "integer",
        "Pages answered 404 or 410 now, not before.",
    ),
    key(
        "recrawl.lastmod",
        "integer",
        "Pages not asked for: their sitemap `lastmod` is before their previous fetch.",
    ),
    key(
        "recrawl.deferred",
        "integer",
        "Pages left out by `--recrawl-budget` (note `deferred`).",
    ),
    key(
        "peak_rss_bytes",
        "integer",
        "The process's peak resident memory.",
    ),
    key(
        "sitemaps",
        "object",
        "Sitemap fetches and what they listed.",
    ),
    key("sitemaps.fetched", "integer", "Sitemap fetches."),
    key(
        "sitemaps.urls",
        "integer",
        "Page URLs they listed, before the filters and the seen set.",
    ),
    key(
        "sitemaps.listed_sitemaps",
        "integer",
        "Sitemaps listed by sitemap indexes.",
    ),
    key(
        "sitemaps.capped",
        "integer",
        "Files over the protocol's limits (50,000 URLs, 50 MiB), read up to them.",
    ),
    key(
        "sitemaps.malformed",
        "integer",
        "Broken or foreign files, read up to the damage.",
    ),
    key(
        "sitemaps.too_deep",
        "integer",
        "Index entries nested deeper than level 3.",
    ),
    key(
        "nofollow_pages",
        "integer",
        "Pages whose links were not followed (meta robots or `X-Robots-Tag` `nofollow`).",
    ),
    key(
        "nofollow_links",
        "integer",
        "Links not followed for their `rel=\"nofollow\"`.",
    ),
    key(
        "noindex_pages",
        "integer",
        "Pages that said `noindex` (archived all the same).",
    ),
    key(
        "pages_ahead",
        "integer",
        "Pages of a host that needs no rest (as with `--delay-factor 0`) handed straight to \
         the worker that received its previous page.",
    ),
    key(
        "requests_ahead",
        "integer",
        "Of those, pages whose request went on the connection just used before the previous \
         page was processed.",
    ),
    key(
        "shard",
        "object or null",
        "With `--shard`: this shard and what crossed to and from the others; `null` without.",
    ),
    key("shard.index", "integer", "K of `--shard K/N`."),
    key("shard.count", "integer", "N of `--shard K/N`."),
    key(
        "shard.run",
        "integer",
        "The run of the sharded crawl this shard took part in: 1 for the first crawl, one more \
         for each recrawl (the broker keeps each run's reports apart).",
    ),
    key(
        "shard.sent",
        "integer",
        "URLs sent to other shards (after the sent cache).",
    ),
    key(
        "shard.sent_cache_hits",
        "integer",
        "Cross-shard URLs the sent cache kept from being sent again.",
    ),
    key(
        "shard.sent_cache_misses",
        "integer",
        "Cross-shard URLs it let through.",
    ),
    key(
        "shard.received",
        "integer",
        "URLs received from other shards (a re-read batch counts again).",
    ),
    key("shard.batches", "integer", "Stream entries published."),
    key(
        "shard.stream_full",
        "integer",
        "Publishes refused by a full stream (backpressure).",
    ),
    key(
        "shard.found_by",
        "string or null",
        "With `--find`: the shard and page that found the text (`shard K/N at URL`); every \
         shard stops once one has found it. `null` when not found.",
    ),
    key(
        "workers",
        "integer",
        "The most requests in flight at once, or of worker threads running, whichever was more.",
    ),
    key(
        "max_workers",
        "integer",
        "The cap on requests in flight: `-j`, or `--max-connections`.",
    ),
    key(
        "connections",
        "object",
        "Connections closed for what their servers did.",
    ),
    key(
        "connections.closed_idle",
        "integer",
        "Kept connections found closed by their server before a request was written on them.",
    ),
    key(
        "connections.unsolicited",
        "integer",
        "Closed because the server sent bytes no request asked for (on an idle kept \
         connection, or past a response's end).",
    ),
    key(
        "connections.ambiguous_framing",
        "integer",
        "Closed after a response whose framing was ambiguous (`Content-Length` beside \
         `Transfer-Encoding`, an unsolicited `101`).",
    ),
    key(
        "connections.closed_timeout",
        "integer",
        "Kept connections the crawler closed, unused for `--idle-timeout`.",
    ),
    key(
        "connections.tls_handshakes",
        "integer",
        "TLS handshakes completed.",
    ),
    key(
        "connections.tls_resumed",
        "integer",
        "Of `tls_handshakes`, those that resumed a session of an earlier connection to the \
         server (no certificate sent or checked again).",
    ),
    key(
        "outcome",
        "string",
        "How the crawl went: `ending`'s name, or `nothing-answered` (no seed host answered at \
         all) or `mostly-failed` (over `--max-error-ratio` of fetches failed), both exit status \
         3 and not complete, or `seeds-refused` (no seed host answered and the address policy \
         refused one: exit status 2).",
    ),
    key(
        "host_unreachable",
        "integer",
        "URLs not asked for because their host was held unreachable (asked for on resume).",
    ),
    key(
        "retried",
        "integer",
        "Attempts put back to be asked for again (429/503, 502/504, no answer; robots.txt \
         included).",
    ),
    key(
        "failed",
        "integer",
        "Pages whose last attempt got no response, the crawler's own refusals aside: with \
         `host_unreachable`, the failures `--max-error-ratio` counts.",
    ),
    key(
        "near_duplicates",
        "integer",
        "HTML pages noted `near-duplicate` (`--near-duplicates`).",
    ),
    key(
        "extract",
        "object or null",
        "What `--extract` took and wrote (`null` without it); see docs/extract.md.",
    ),
    key(
        "extract.pages",
        "integer",
        "2xx HTML and text pages whose URL some rule set's `url` pattern matched.",
    ),
    key(
        "extract.unmatched",
        "integer",
        "2xx HTML and text pages no rule set's `url` pattern matched: neither decoded nor parsed.",
    ),
    key(
        "extract.parsed",
        "integer",
        "Pages parsed into an HTML tree: those of `pages` that a rule set with a CSS or JSON-LD \
         field matched (each at most once).",
    ),
    key(
        "extract.objects",
        "integer",
        "JSON objects written (and SQLite rows put): one per page and rule set with a field found.",
    ),
    key(
        "extract.empty",
        "integer",
        "Pages and rule sets whose every field found nothing: no object, no row, not an error.",
    ),
    key(
        "extract.replaced",
        "integer",
        "SQLite rows (`--extract-db`) replaced by other values, the old row kept in the \
         `NAME_history` table.",
    ),
];

/// `ConnectionEvents` as the file names them.
#[derive(Serialize)]
struct Connections {
    closed_idle: u64,
    unsolicited: u64,
    ambiguous_framing: u64,
    closed_timeout: u64,
    tls_handshakes: u64,
    tls_resumed: u64,
}

/// `ExchangeStats` as the file names them.
#[derive(Serialize)]
struct ShardSummary {
    index: u32,
    count: u32,
    run: u64,
    sent: u64,
    /// Cache hits and misses: `ExchangeStats::cache_hits`, `cache_misses`.
    sent_cache_hits: u64,
    sent_cache_misses: u64,
    received: u64,
    batches: u64,
    stream_full: u64,
    /// `Report::found_by`.
    found_by: Option<String>,
}

/// `SitemapCounters` as the file names them.
#[derive(Serialize)]
struct Sitemaps {
    fetched: u64,
    urls: u64,
    listed_sitemaps: u64,
    capped: u64,
    malformed: u64,
    too_deep: u64,
}

/// Responses by status class; `none` counts fetches that got no response.
#[derive(Serialize)]
struct StatusClasses {
    none: u64,
    #[serde(rename = "1xx")]
    c1xx: u64,
    #[serde(rename = "2xx")]
    c2xx: u64,
    #[serde(rename = "3xx")]
    c3xx: u64,
    #[serde(rename = "4xx")]
    c4xx: u64,
    #[serde(rename = "5xx")]
    c5xx: u64,
}

/// `WarcStats` as the file names them (the WARC writer need not know about JSON).
#[derive(Serialize)]
struct Warc {
    files: u64,
    records: u64,
    bytes: u64,
    duplicates: u64,
    duplicate_bytes: u64,
}

/// Named counts as a JSON object whose keys keep this order (a map would sort them).
struct Counts(Vec<(&'static str, u64)>);

impl Serialize for Counts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().copied())
    }
}

/// `x` rounded to `decimals` places, the precision the figure is good for.
fn rounded(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round() / scale
}

/// The summary as one line of JSON.
pub fn to_json(report: &Report) -> String {
    let c = &report.counters;
    let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let secs = report.elapsed.as_secs_f64();
    let pages = load(&c.pages);
    let summary = Summary {
        ending: ending_name(report.ending),
        seconds: rounded(secs, 3),
        pages,
        pages_per_second: rounded(if secs > 0.0 { pages as f64 / secs } else { 0.0 }, 1),
        status: StatusClasses {
            none: load(&c.by_class[0]),
            c1xx: load(&c.by_class[1]),
            c2xx: load(&c.by_class[2]),
            c3xx: load(&c.by_class[3]),
            c4xx: load(&c.by_class[4]),
            c5xx: load(&c.by_class[5]),
        },
        bytes: load(&c.bytes),
        robots_fetches: load(&c.robots_fetches),
        robots_blocked: report.robots_blocked,
        links_found: load(&c.links),
        truncated: load(&c.truncated),
        type_rejected: load(&c.type_rejected),
        too_long: load(&c.too_long),
        private_refused: load(&c.private_refused),
        urls_seen: report.due.stored,
        cache_lookups: report.due.lookups,
        cache_hits: report.due.cache_hits,
        cache_hit_rate: rounded(report.due.hit_rate(), 4),
        merges: report.due.merges,
        frontier_left: report.frontier_left,
        filtered: Counts(
            Rejection::ALL
                .iter()
                .zip(&c.filtered)
                .map(|(reason, n)| (reason.name(), load(n)))
                .chain([("host_budget", report.host_budget)])
                .collect(),
        ),
        warc: report.warc.map(|w| Warc {
            files: w.files,
            records: w.records,
            bytes: w.bytes,
            duplicates: w.duplicates,
            duplicate_bytes: w.duplicate_bytes,
        }),
        recrawl: recrawl_counts(report).map(|counts| Counts(counts.collect())),
        peak_rss_bytes: crate::sys::peak_rss().unwrap_or(0),
        sitemaps: Sitemaps {
            fetched: load(&c.sitemaps.fetched),
            urls: load(&c.sitemaps.urls),
            listed_sitemaps: load(&c.sitemaps.listed_sitemaps),
            capped: load(&c.sitemaps.capped),
            malformed: load(&c.sitemaps.malformed),
            too_deep: load(&c.sitemaps.too_deep),
        },
        nofollow_pages: load(&c.nofollow_pages),
        nofollow_links: load(&c.nofollow_links),
        noindex_pages: load(&c.noindex_pages),
        pages_ahead: load(&c.pages_ahead),
        requests_ahead: load(&c.requests_ahead),
        shard: report.exchange.map(|x| ShardSummary {
            index: x.shard.index,
            count: x.shard.count,
            run: x.run,
            sent: x.sent,
            sent_cache_hits: x.cache_hits,
            sent_cache_misses: x.cache_misses,
            received: x.received,
            batches: x.batches,
            stream_full: x.stream_full,
            found_by: report.found_by.clone(),
        }),
        workers: load(&c.workers),
        max_workers: load(&c.max_workers),
        connections: Connections {
            closed_idle: load(&c.connections.closed_idle),
            unsolicited: load(&c.connections.unsolicited),
            ambiguous_framing: load(&c.connections.ambiguous),
            closed_timeout: load(&c.connections.closed_timeout),
            tls_handshakes: load(&c.connections.tls_handshakes),
            tls_resumed: load(&c.connections.tls_resumed),
        },
        outcome: report.outcome.name(),
        host_unreachable: report.host_unreachable,
        retried: load(&c.retried),
        failed: load(&c.failed),
        near_duplicates: load(&c.near_duplicates),
        extract: report.extract,
    };
    let mut json = serde_json::to_string(&summary).expect("numbers and fixed words serialize");
    json.push('\n');
    json
}

/// A recrawl's outcome counts by name (`new`, `changed`, `unchanged`, `gone`); None for a
/// first crawl.
fn recrawl_counts(report: &Report) -> Option<impl Iterator<Item = (&'static str, u64)> + '_> {
    (report.generation == Generation::Recrawl).then(|| {
        Outcome::ALL.iter().map(|o| {
            let n = report.counters.outcomes[*o as usize].load(Ordering::Relaxed);
            (o.name(), n)
        })
    })
}

/// A recrawl's outcomes for people ("" for a first crawl).
fn recrawl_text(report: &Report) -> String {
    match recrawl_counts(report) {
        Some(counts) => {
            let fields: Vec<String> = counts.map(|(k, n)| format!("{n} {k}")).collect();
            format!("recrawl: {}\n", fields.join(", "))
        }
        None => String::new(),
    }
}

/// The WARC figures for people.
fn warc_text(warc: Option<WarcStats>) -> String {
    match warc {
        Some(w) => format!(
            "WARC: {} records in {} files, {} bytes",
            w.records, w.files, w.bytes
        ),
        None => "WARC off".into(),
    }
}

/// The summary for people.
pub fn to_text(report: &Report) -> String {
    let c = &report.counters;
    let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let secs = report.elapsed.as_secs_f64();
    let pages = load(&c.pages);
    let filtered: u64 = c.filtered.iter().map(load).sum::<u64>() + report.host_budget;
    format!(
        "crawl {}: {} pages in {:.1}s ({:.0}/s), {} bytes; 2xx {} 3xx {} 4xx {} 5xx {} failed {}\n\
         seen {} URLs; CLOCK hit rate {:.1}% of {} lookups; {} merges; {} filtered; {} blocked by robots.txt; \
         {} pages and {} links nofollow; {} left on the frontier; {}; peak RSS {:.1} MiB\n{}{}{}{}{}{}",
        report.outcome.name(),
        pages,
        secs,
        if secs > 0.0 { pages as f64 / secs } else { 0.0 },
        load(&c.bytes),
        load(&c.by_class[2]),
        load(&c.by_class[3]),
        load(&c.by_class[4]),
        load(&c.by_class[5]),
        load(&c.by_class[0]),
        report.due.stored,
        report.due.hit_rate() * 100.0,
        report.due.lookups,
        report.due.merges,
        filtered,
        report.robots_blocked,
        load(&c.nofollow_pages),
        load(&c.nofollow_links),
        report.frontier_left,
        warc_text(report.warc),
        crate::sys::peak_rss().unwrap_or(0) as f64 / (1 << 20) as f64,
        recrawl_text(report),
        retry_text(report),
        duplicate_text(report),
        safety_text(report),
        sitemap_text(report),
        shard_text(report),
    )
}

/// What crossed between shards, for people ("" without --shard).
fn shard_text(report: &Report) -> String {
    let Some(x) = report.exchange else {
        return String::new();
    };
    let lookups = x.cache_hits + x.cache_misses;
    let rate = match lookups {
        0 => 0.0,
        n => x.cache_hits as f64 * 100.0 / n as f64,
    };
    let found = match &report.found_by {
        Some(by) => format!("shard {}: --find's text was found by {by}\n", x.shard),
        None => String::new(),
    };
    format!(
        "shard {}: {} URLs sent to other shards ({rate:.1}% of {lookups} kept back by the sent \
         cache), {} received\n{found}",
        x.shard, x.sent, x.received
    )
}

/// Retries and hosts given up, for people ("" when there were none).
fn retry_text(report: &Report) -> String {
    let retried = report.counters.retried.load(Ordering::Relaxed);
    if retried == 0 && report.host_unreachable == 0 {
        return String::new();
    }
    format!(
        "{retried} attempts asked for again; {} URLs not asked for: host unreachable\n",
        report.host_unreachable
    )
}

/// What went wrong with a crawl that mostly failed (`RunOutcome::failed`), in one line for
/// stderr: what failed, and that the next run resumes.
pub fn failure_text(report: &Report) -> String {
    let c = &report.counters;
    let failed = c.failed.load(Ordering::Relaxed) + report.host_unreachable;
    let fetches = c.pages.load(Ordering::Relaxed) + report.host_unreachable;
    let what = match report.outcome {
        RunOutcome::SeedsRefused => {
            let refusal = report.seed_refusal.as_deref().unwrap_or("a seed host");
            return format!(
                "no seed host answered: the address policy refused {refusal}. Nothing was sent \
                 to it; remove the seed, or give --allow-private to crawl it (exit status 2)"
            );
        }
        RunOutcome::NothingAnswered => "no seed host answered".to_owned(),
        _ => "most fetches failed".to_owned(),
    };
    format!(
        "{what} ({failed} of {fetches} fetches failed, {} URLs not asked for: host unreachable); \
         the crawl is not complete: run the same command again to resume it (exit status 3)",
        report.host_unreachable
    )
}

/// The duplicates summary.json counts, for people: pages whose payload was archived before
/// (revisit records, `warc.duplicates` and `warc.duplicate_bytes`) and HTML pages noted
/// near-duplicates (`near_duplicates`, with `--near-duplicates`).
fn duplicate_text(report: &Report) -> String {
    let payload = match report.warc {
        Some(w) => format!(
            "{} pages with a payload archived before (revisits, {} bytes not stored again)",
            w.duplicates, w.duplicate_bytes
        ),
        None => "no payload dedupe (WARC off)".to_owned(),
    };
    let near = report.counters.near_duplicates.load(Ordering::Relaxed);
    format!(
        "duplicates: {payload}; {near} HTML pages near-duplicates of an earlier page \
         (--near-duplicates)\n"
    )
}

/// Bodies not read and addresses refused, for people ("" when there were none).
fn safety_text(report: &Report) -> String {
    let c = &report.counters;
    let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let (types, long, private) = (
        load(&c.type_rejected),
        load(&c.too_long),
        load(&c.private_refused),
    );
    let mut text = String::new();
    if types + long > 0 {
        text.push_str(&format!(
            "bodies not read: {types} type-rejected, {long} too-long\n"
        ));
    }
    if private > 0 {
        text.push_str(&format!(
            "{private} fetches refused: private address (see --allow-private)\n"
        ));
    }
    text
}

/// The sitemap figures for people ("" when none was fetched).
fn sitemap_text(report: &Report) -> String {
    let s = &report.counters.sitemaps;
    let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    match load(&s.fetched) {
        0 => String::new(),
        fetched => format!(
            "sitemaps: {fetched} fetched, {} URLs and {} sitemaps listed; {} capped, {} malformed, {} too deep\n",
            load(&s.urls),
            load(&s.listed_sitemaps),
            load(&s.capped),
            load(&s.malformed),
            load(&s.too_deep),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crawl::counters::Counters;
    use crate::schedule::dispatch::Ending;
    use crate::seen::due::DueStats;
    use std::sync::Arc;
    use std::time::Duration;

    /// A report whose every figure is distinct, so a swapped key shows.
    fn report(generation: Generation, warc: Option<WarcStats>) -> Report {
        let counters = Counters::default();
        let set = |a: &std::sync::atomic::AtomicU64, n| a.store(n, Ordering::Relaxed);
        set(&counters.pages, 7);
        for (i, class) in counters.by_class.iter().enumerate() {
            set(class, 10 + i as u64);
        }
        set(&counters.bytes, 1000);
        set(&counters.robots_fetches, 2);
        set(&counters.links, 30);
        set(&counters.truncated, 4);
        set(&counters.type_rejected, 66);
        set(&counters.too_long, 67);
        set(&counters.private_refused, 68);
        set(&counters.nofollow_pages, 70);
        set(&counters.nofollow_links, 71);
        set(&counters.noindex_pages, 72);
        set(&counters.pages_ahead, 73);
        set(&counters.requests_ahead, 74);
        set(&counters.workers, 75);
        set(&counters.max_workers, 76);
        set(&counters.connections.closed_idle, 77);
        set(&counters.connections.unsolicited, 78);
        set(&counters.connections.ambiguous, 79);
        set(&counters.connections.closed_timeout, 84);
        set(&counters.connections.tls_handshakes, 85);
        set(&counters.connections.tls_resumed, 86);
        set(&counters.retried, 81);
        set(&counters.failed, 82);
        set(&counters.near_duplicates, 83);
        for (i, reason) in counters.filtered.iter().enumerate() {
            set(reason, 40 + i as u64);
        }
        for (i, outcome) in counters.outcomes.iter().enumerate() {
            set(outcome, 50 + i as u64);
        }
        let s = &counters.sitemaps;
        for (i, n) in [
            &s.fetched,
            &s.urls,
            &s.listed_sitemaps,
            &s.capped,
            &s.malformed,
            &s.too_deep,
        ]
        .into_iter()
        .enumerate()
        {
            set(n, 60 + i as u64);
        }
        Report {
            ending: Ending::PageLimit,
            outcome: RunOutcome::Ended(Ending::PageLimit),
            elapsed: Duration::from_micros(2_500_400),
            counters: Arc::new(counters),
            due: DueStats {
                lookups: 3,
                cache_hits: 2,
                merges: 5,
                novel: 1,
                stored: 22,
            },
            frontier_left: 6,
            robots_blocked: 8,
            host_budget: 47,
            host_unreachable: 80,
            warc,
            generation,
            exchange: None,
            extract: None,
            found_by: None,
            seed_refusal: None,
        }
    }

    /// The text before `peak_rss_bytes` (which is this process's), after checking that it is
    /// a whole number followed by the keys added after it.
    fn without_rss(json: &str) -> &str {
        let (head, rss) = json.split_once(r#","peak_rss_bytes":"#).expect(json);
        let (rss, tail) = rss.split_once(',').expect(json);
        assert!(rss.parse::<u64>().is_ok(), "{json}");
        assert_eq!(
            tail,
            concat!(
                r#""sitemaps":{"fetched":60,"urls":61,"listed_sitemaps":62,"capped":63,"#,
                r#""malformed":64,"too_deep":65},"#,
                r#""nofollow_pages":70,"nofollow_links":71,"noindex_pages":72,"#,
                r#""pages_ahead":73,"requests_ahead":74,"shard":null,"#,
                r#""workers":75,"max_workers":76,"#,
                r#""connections":{"closed_idle":77,"unsolicited":78,"ambiguous_framing":79,"#,
                r#""closed_timeout":84,"tls_handshakes":85,"tls_resumed":86},"#,
                r#""outcome":"page-limit","host_unreachable":80,"retried":81,"failed":82,"#,
                r#""near_duplicates":83,"extract":null}"#,
                "\n"
            ),
        );
        head
    }

    #[test]
    fn a_shard_says_what_crossed() {
        let mut report = report(Generation::Crawl, None);
        report.exchange = Some(crate::shard::ExchangeStats {
            shard: crate::shard::owner::Shard { index: 1, count: 4 },
            run: 2,
            sent: 90,
            cache_hits: 30,
            cache_misses: 90,
            received: 80,
            batches: 9,
            stream_full: 2,
        });
        report.found_by = Some("shard 2/4 at http://a.test/x".into());
        report.extract = Some(crate::crawl::extract::ExtractStats {
            pages: 91,
            unmatched: 92,
            parsed: 93,
            objects: 94,
            empty: 95,
            replaced: 96,
        });
        let json = to_json(&report);
        assert!(
            json.ends_with(concat!(
                r#""shard":{"index":1,"count":4,"run":2,"sent":90,"sent_cache_hits":30,"#,
                r#""sent_cache_misses":90,"received":80,"batches":9,"stream_full":2,"#,
                r#""found_by":"shard 2/4 at http://a.test/x"},"#,
                r#""workers":75,"max_workers":76,"#,
                r#""connections":{"closed_idle":77,"unsolicited":78,"ambiguous_framing":79,"#,
                r#""closed_timeout":84,"tls_handshakes":85,"tls_resumed":86},"#,
                r#""outcome":"page-limit","host_unreachable":80,"retried":81,"failed":82,"#,
                r#""near_duplicates":83,"extract":{"pages":91,"unmatched":92,"parsed":93,"#,
                r#""objects":94,"empty":95,"replaced":96}}"#,
                "\n"
            )),
            "{json}"
        );
        let text = to_text(&report);
        assert!(
            text.contains(
                "\nduplicates: no payload dedupe (WARC off); 83 HTML pages near-duplicates of an \
                 earlier page (--near-duplicates)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("shard 1/4: 90 URLs sent to other shards (25.0% of 120 kept back"),
            "{text}"
        );
        assert!(
            text.contains("shard 1/4: --find's text was found by shard 2/4 at http://a.test/x\n"),
            "{text}"
        );
    }

    /// The keys of a JSON text as `KEYS` names them (`parent.key`), in the order written, each
    /// with its JSON type (serde_json's `Value` would sort them).
    struct KeysOf<'a> {
        prefix: String,
        out: &'a mut Vec<(String, &'static str)>,
    }

    impl<'de> serde::de::DeserializeSeed<'de> for KeysOf<'_> {
        type Value = &'static str;
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<&'static str, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> serde::de::Visitor<'de> for KeysOf<'_> {
        type Value = &'static str;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("summary.json")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<&'static str, A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                let name = format!("{}{key}", self.prefix);
                let at = self.out.len();
                self.out.push((name.clone(), ""));
                let prefix = format!("{name}.");
                let out = &mut *self.out;
                self.out[at].1 = map.next_value_seed(KeysOf { prefix, out })?;
            }
            Ok("object")
        }
        fn visit_u64<E>(self, _: u64) -> Result<&'static str, E> {
            Ok("integer")
        }
        fn visit_f64<E>(self, _: f64) -> Result<&'static str, E> {
            Ok("number")
        }
        fn visit_str<E>(self, _: &str) -> Result<&'static str, E> {
            Ok("string")
        }
        fn visit_unit<E>(self) -> Result<&'static str, E> {
            Ok("null")
        }
    }

    /// docs/summary-json.md is rendered from `KEYS`: a key added to the file without a line
    /// there (or one documented but no longer written, or moved) fails here. Every optional
    /// object is present in the report, so every key is written.
    #[test]
    fn every_key_written_is_documented() {
        let mut report = report(Generation::Recrawl, Some(WarcStats::default()));
        report.exchange = Some(crate::shard::ExchangeStats {
            shard: crate::shard::owner::Shard { index: 0, count: 2 },
            run: 1,
            sent: 1,
            cache_hits: 2,
            cache_misses: 3,
            received: 4,
            batches: 5,
            stream_full: 6,
        });
        report.found_by = Some("shard 0/2 at http://a.test/".into());
        report.extract = Some(Default::default());
        let json = to_json(&report);
        let mut written = Vec::new();
        let seed = KeysOf {
            prefix: String::new(),
            out: &mut written,
        };
        let whole = serde::de::DeserializeSeed::deserialize(
            seed,
            &mut serde_json::Deserializer::from_str(&json),
        );
        assert_eq!(whole.expect("summary.json is JSON"), "object");
        let documented: Vec<(String, &str)> = KEYS
            .iter()
            .map(|k| (k.name.to_owned(), k.kind.trim_end_matches(" or null")))
            .collect();
        let undocumented: Vec<_> = written.iter().filter(|k| !documented.contains(k)).collect();
        let stale: Vec<_> = documented.iter().filter(|k| !written.contains(k)).collect();
        assert!(
            undocumented.is_empty() && stale.is_empty(),
            "written but not in KEYS: {undocumented:?}; in KEYS but not written: {stale:?}"
        );
        assert_eq!(
            written, documented,
            "KEYS is in another order than summary.json"
        );
        for key in KEYS {
            assert!(
                key.meaning.ends_with('.') && key.meaning.len() > 10,
                "{}: {:?}",
                key.name,
                key.meaning
            );
        }
    }

    #[test]
    fn json_has_the_documented_keys_in_order_with_numbers_rounded() {
        let warc = WarcStats {
            files: 1,
            records: 45,
            bytes: 24178,
            duplicates: 3,
            duplicate_bytes: 900,
        };
        let text = to_text(&report(Generation::Crawl, Some(warc)));
        assert!(
            text.contains(
                "\nduplicates: 3 pages with a payload archived before (revisits, 900 bytes not \
                 stored again); 83 HTML pages near-duplicates of an earlier page \
                 (--near-duplicates)\n"
            ),
            "{text}"
        );
        let json = to_json(&report(Generation::Crawl, Some(warc)));
        assert_eq!(
            without_rss(&json),
            concat!(
                r#"{"ending":"page-limit","seconds":2.5,"pages":7,"pages_per_second":2.8,"#,
                r#""status":{"none":10,"1xx":11,"2xx":12,"3xx":13,"4xx":14,"5xx":15},"#,
                r#""bytes":1000,"robots_fetches":2,"robots_blocked":8,"links_found":30,"truncated":4,"#,
                r#""type_rejected":66,"too_long":67,"private_refused":68,"#,
                r#""urls_seen":22,"cache_lookups":3,"cache_hits":2,"cache_hit_rate":0.6667,"merges":5,"#,
                r#""frontier_left":6,"filtered":{"scheme":40,"scope":41,"depth":42,"pattern":43,"#,
                r#""url-too-long":44,"path-too-deep":45,"repeated-segment":46,"host_budget":47},"#,
                r#""warc":{"files":1,"records":45,"bytes":24178,"duplicates":3,"duplicate_bytes":900},"#,
                r#""recrawl":null"#,
            )
        );
        let json = to_json(&report(Generation::Recrawl, None));
        assert!(
            without_rss(&json).ends_with(
                r#","warc":null,"recrawl":{"new":50,"changed":51,"unchanged":52,"gone":53,"lastmod":54,"deferred":55}"#
            ),
            "{json}"
        );
    }
}
