//! A web of known near-duplicates and known distinct pages, and a near-duplicate trap, for
//! `tests/it/neardup.rs` (the precision and recall of the crawler's MinHash, and `--near-duplicates`).
//!
//! Host [`SITE`] serves [`ARTICLES`] distinct articles under one template (a navigation bar and
//! a footer every page shares, as a real site's pages do), their bodies [`LENGTHS`] words
//! long, drawn from a Zipf-distributed vocabulary so that common words repeat as in real
//! text. Each article also has one copy per [`VARIANTS`] entry that differs as real
//! near-duplicates differ: another date stamp, another session id (in the text and the
//! links), another advertisement block, another view counter. `/` links to every article,
//! then to every copy; [`pages`] lists every path with what it is a copy of.
//!
//! Host [`FAR`] puts a copy beyond any window: `/` links to [`FAR_PAGES`] distinct pages
//! (`/p/N`, bodies of 60 words and no shared template) and then to `/copy`, article
//! [`FAR_ARTICLE`]'s `date` copy: crawled from both hosts' `/`, thousands of pages separate it
//! from its original on the other host.
//!
//! Host [`CALENDAR`] is the trap: `/` links to `/cal?d=1`, and `/cal?d=N` to `/cal?d=N+1`,
//! forever; every day's page is the same but for its date.

use crate::graph::mix;
use crate::{HostSpec, Request, Response, TestWeb};
use std::io;

/// The host with the articles and their copies.
pub const SITE: usize = 0;
/// The host with the endless calendar.
pub const CALENDAR: usize = 1;
/// The host whose copy is thousands of pages from its original.
pub const FAR: usize = 2;
/// Distinct pages of [`FAR`] before its copy.
pub const FAR_PAGES: usize = 3000;
/// The article [`FAR`]'s `/copy` copies.
pub const FAR_ARTICLE: usize = 3;
/// Distinct articles.
pub const ARTICLES: usize = 60;
/// Body lengths in words, article `i` taking `LENGTHS[i % LENGTHS.len()]`: short notes (where
/// the template weighs most) to long articles.
pub const LENGTHS: [usize; 6] = [30, 60, 120, 250, 500, 1000];
/// How a copy differs from its article.
pub const VARIANTS: [&str; 4] = ["date", "session", "ad", "views"];
/// Words in the vocabulary.
const VOCABULARY: usize = 5000;

/// What a page of [`SITE`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Page {
    /// Article `i`.
    Article(usize),
    /// A copy of article `i`, differing as `VARIANTS[v]` says.
    Copy(usize, usize),
}

/// Every page of [`SITE`] with its path: the articles, then the copies.
pub fn pages() -> Vec<(String, Page)> {
    let articles = (0..ARTICLES).map(|i| (format!("/article/{i}"), Page::Article(i)));
    let copies = (0..ARTICLES).flat_map(|i| {
        (0..VARIANTS.len())
            .map(move |v| (format!("/article/{i}/{}", VARIANTS[v]), Page::Copy(i, v)))
    });
    articles.chain(copies).collect()
}

/// The `n`th word of the vocabulary: two to four syllables, all distinct for `n` below it.
fn word(n: usize) -> String {
    const SYLLABLES: [&str; 20] = [
        "ka", "lo", "mi", "ne", "ru", "ta", "so", "vi", "de", "po", "an", "el", "or", "us", "ib",
        "ce", "fa", "gu", "ho", "ju",
    ];
    let mut rest = n;
    let mut out = String::new();
    loop {
        out.push_str(SYLLABLES[rest % 20]);
        rest /= 20;
        if rest == 0 && out.len() >= 4 {
            return out;
        }
    }
}

/// `count` words of running text, seeded: a Zipf-like draw (rank `r` about as likely as
/// `1/r`), by inverting the harmonic CDF with a log.
fn text(seed: u64, count: usize) -> String {
    let max = (VOCABULARY as f64).ln();
    (0..count)
        .map(|i| {
            let u = (mix(seed.wrapping_mul(1_000_003).wrapping_add(i as u64)) >> 11) as f64
                / (1u64 << 53) as f64;
            word(((u * max).exp() as usize).min(VOCABULARY - 1))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Renders a page of [`SITE`].
pub fn render(page: Page) -> String {
    render_round(page, 0)
}

/// Renders a page of [`SITE`], its article's words drawn anew for each `round` (round 0 is
/// [`render`]'s): a larger web of the same shape for benchmarks.
pub fn render_round(page: Page, round: usize) -> String {
    let (i, variant) = match page {
        Page::Article(i) => (i, None),
        Page::Copy(i, v) => (i, Some(VARIANTS[v])),
    };
    let is = |name| variant == Some(name);
    let day = if is("date") { 14 } else { 3 };
    let session = if is("session") {
        "c0ffee42d00d"
    } else {
        "8f3a9b17e2c4"
    };
    let ad = if is("ad") { 2 } else { 1 };
    let views = if is("views") { 1873 } else { 1802 };
    let nav = text(1, 25);
    let footer = text(2, 30);
    let i_seed = (i + 1_000_000 * round) as u64;
    let title = text(10_000 + i_seed, 6);
    let body = text(20_000 + i_seed, LENGTHS[i % LENGTHS.len()]);
    let advert = text(30_000 + ad, 12);
    format!(
        "<!doctype html><html><head><title>{title}</title>\
         <style>body {{ font-family: serif }}</style>\
         <script>var session = \"{session}\"; trackPage({i});</script></head>\
         <body><nav><a href=\"/?sid={session}\">Home</a> {nav}</nav>\
         <p class=\"meta\">Published March {day}, 2025 &middot; {views} views &middot; \
         session {session}</p>\
         <h1>{title}</h1><article><p>{body}</p></article>\
         <aside class=\"ad\">Sponsored: {advert}</aside>\
         <footer>{footer} &copy; 2025</footer></body></html>"
    )
}

/// A day's page of [`CALENDAR`].
pub fn calendar_day(day: u64) -> String {
    let nav = text(3, 25);
    let notes = text(4, 80);
    format!(
        "<!doctype html><html><head><title>Calendar</title></head><body>\
         <nav>{nav}</nav><h1>Events on day {day}</h1><p>No events are planned for this \
         day. {notes}</p><a href=\"/cal?d={}\">next day</a></body></html>",
        day + 1
    )
}

/// Starts the three hosts on loopback.
pub fn start() -> io::Result<TestWeb> {
    TestWeb::start(vec![
        HostSpec::new(site),
        HostSpec::new(calendar),
        HostSpec::new(far),
    ])
}

fn far(req: &Request) -> Response {
    let target = req.target.as_str();
    if target == "/" {
        let links: String = (0..FAR_PAGES)
            .map(|n| format!("<a href=\"/p/{n}\">{n}</a>\n"))
            .chain(["<a href=\"/copy\">copy</a>\n".to_owned()])
            .collect();
        return Response::html(links);
    }
    if target == "/copy" {
        return Response::html(render(Page::Copy(FAR_ARTICLE, 0)));
    }
    match target
        .strip_prefix("/p/")
        .and_then(|n| n.parse::<u64>().ok())
    {
        Some(n) if n < FAR_PAGES as u64 => {
            Response::html(format!("<!doctype html><p>{}</p>", text(40_000 + n, 60)))
        }
        _ => Response::not_found(),
    }
}

fn site(req: &Request) -> Response {
    let path = req.target.split('?').next().unwrap_or("");
    if path == "/" {
        let links: String = pages()
            .iter()
            .map(|(path, _)| format!("<a href=\"{path}\">{path}</a>\n"))
            .collect();
        return Response::html(links);
    }
    match pages().into_iter().find(|(p, _)| p == path) {
        Some((_, page)) => Response::html(render(page)),
        None => Response::not_found(),
    }
}

fn calendar(req: &Request) -> Response {
    let target = req.target.as_str();
    if target == "/" {
        return Response::html("<a href=\"/cal?d=1\">calendar</a>");
    }
    match target.strip_prefix("/cal?d=").and_then(|d| d.parse().ok()) {
        Some(day) => Response::html(calendar_day(day)),
        None => Response::not_found(),
    }
}
