//! The end-of-crawl summary: a few lines on stderr for people, `DIR/summary.json` for scripts.

use crate::crawl::run::Report;
use crate::output::warc::WarcStats;
use crate::schedule::dispatch::Ending;
use crate::state::recrawl::{Generation, Outcome};
use crate::url::normalize::Rejection;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;

fn ending_name(ending: Ending) -> &'static str {
    match ending {
        Ending::Complete => "complete",
        Ending::PageLimit => "page-limit",
        Ending::Stopped => "stopped",
        Ending::Found => "found",
    }
}

/// The summary as JSON (hand-written: every value is a number or a fixed word).
pub fn to_json(report: &Report) -> String {
    let c = &report.counters;
    let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let secs = report.elapsed.as_secs_f64();
    let pages = load(&c.pages);
    let mut filtered = String::new();
    for (i, reason) in Rejection::ALL.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(
            filtered,
            "{sep}\"{}\":{}",
            reason.name(),
            load(&c.filtered[i])
        );
    }
    format!(
        concat!(
            "{{\"ending\":\"{}\",\"seconds\":{:.3},\"pages\":{},\"pages_per_second\":{:.1},",
            "\"status\":{{\"none\":{},\"1xx\":{},\"2xx\":{},\"3xx\":{},\"4xx\":{},\"5xx\":{}}},",
            "\"bytes\":{},\"robots_fetches\":{},\"robots_blocked\":{},\"links_found\":{},\"truncated\":{},",
            "\"urls_seen\":{},\"cache_lookups\":{},\"cache_hits\":{},\"cache_hit_rate\":{:.4},\"merges\":{},",
            "\"frontier_left\":{},\"filtered\":{{{}}},\"warc\":{},\"recrawl\":{},\"peak_rss_bytes\":{}}}\n"
        ),
        ending_name(report.ending),
        secs,
        pages,
        if secs > 0.0 { pages as f64 / secs } else { 0.0 },
        load(&c.by_class[0]),
        load(&c.by_class[1]),
        load(&c.by_class[2]),
        load(&c.by_class[3]),
        load(&c.by_class[4]),
        load(&c.by_class[5]),
        load(&c.bytes),
        load(&c.robots_fetches),
        report.robots_blocked,
        load(&c.links),
        load(&c.truncated),
        report.due.stored,
        report.due.lookups,
        report.due.cache_hits,
        report.due.hit_rate(),
        report.due.merges,
        report.frontier_left,
        filtered,
        warc_json(report.warc),
        recrawl_json(report),
        crate::sys::peak_rss().unwrap_or(0),
    )
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

/// A recrawl's outcomes as a JSON object, `null` for a first crawl.
fn recrawl_json(report: &Report) -> String {
    match recrawl_counts(report) {
        Some(counts) => {
            let fields: Vec<String> = counts.map(|(k, n)| format!("\"{k}\":{n}")).collect();
            format!("{{{}}}", fields.join(","))
        }
        None => "null".into(),
    }
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

/// The WARC figures as a JSON object, `null` when archiving was off.
fn warc_json(warc: Option<WarcStats>) -> String {
    match warc {
        Some(w) => format!(
            "{{\"files\":{},\"records\":{},\"bytes\":{}}}",
            w.files, w.records, w.bytes
        ),
        None => "null".into(),
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
    let filtered: u64 = c.filtered.iter().map(load).sum();
    format!(
        "crawl {}: {} pages in {:.1}s ({:.0}/s), {} bytes; 2xx {} 3xx {} 4xx {} 5xx {} failed {}\n\
         seen {} URLs; CLOCK hit rate {:.1}% of {} lookups; {} merges; {} filtered; {} blocked by robots.txt; \
         {} left on the frontier; {}; peak RSS {:.1} MiB\n{}",
        ending_name(report.ending),
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
        report.frontier_left,
        warc_text(report.warc),
        crate::sys::peak_rss().unwrap_or(0) as f64 / (1 << 20) as f64,
        recrawl_text(report),
    )
}
