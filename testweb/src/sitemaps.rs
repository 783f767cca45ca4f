//! A web of sitemaps, for crawl's sitemap tests (`tests/it/sitemaps.rs`) and the crawl shown in
//! BENCHMARKS.md (`testweb --sitemaps`).
//!
//! Host [`SITE`]: `/` links to `/linked` only; every page under `/only/` is listed by a sitemap
//! and linked from nowhere. Its robots.txt names two sitemaps, `/sitemap_index.xml` and the text
//! sitemap `/news.txt`, and disallows `/private/`. The index lists:
//! - `/sitemaps/pages.xml.gz`: a gzip `urlset` (served as `application/gzip`) with `lastmod`s,
//!   listing `/only/gz-1`, `/only/gz-2` and `/private/listed` (which robots.txt disallows);
//! - `/sitemaps/plain.txt`: a text sitemap listing `/only/text-1` (and a line that is no URL);
//! - `/sitemaps/big.xml.gz`: [`BIG_ENTRIES`] entries, over the protocol's 50,000: the first
//!   three are `/big/0..2` on this host, then URLs on host [`ELSEWHERE`] (out of scope), and the
//!   last, past the limit, is `/big/late` on this host (it must never be asked for);
//! - `/sitemaps/broken.xml`: a `urlset` cut in the middle of its second entry: `/only/broken-1`
//!   before the damage, `/only/broken-2` inside it (never asked for);
//! - `/sitemaps/chain/0.xml`: an index listing `/sitemaps/chain/1.xml`, and so on forever (a
//!   nesting cap must end it); each even one also lists `page-N.xml`, a `urlset` of
//!   `/only/chain-N`. With sitemaps read down to nesting level 3 (robots.txt's at 0), chain 2
//!   is the last read and `/only/chain-2` is never listed by one that is read.
//!
//! Host [`FALLBACK`]: robots.txt is a 404, and `/sitemap.xml` (named nowhere) lists
//! `/only/fallback`. Host [`ELSEWHERE`] must get no request at all when the crawl's scope is the
//! seeds' hosts. Every page is a small HTML page; anything else is a 404.

use crate::{HostSpec, Request, Response, TestWeb};
use std::io::{self, Write};
use std::sync::OnceLock;

/// The host with robots.txt `Sitemap:` lines.
pub const SITE: usize = 0;
/// The seed host without robots.txt, whose `/sitemap.xml` is found by its well-known name.
pub const FALLBACK: usize = 1;
/// The out-of-scope host `big.xml.gz` points at.
pub const ELSEWHERE: usize = 2;
/// Entries in `/sitemaps/big.xml.gz`.
pub const BIG_ENTRIES: usize = 50_010;

/// Pages of [`SITE`] and [`FALLBACK`] that only a sitemap leads to, as `(host, path)`.
pub const SITEMAP_ONLY: &[(usize, &str)] = &[
    (SITE, "/only/gz-1"),
    (SITE, "/only/gz-2"),
    (SITE, "/only/text-1"),
    (SITE, "/only/news"),
    (SITE, "/only/broken-1"),
    (SITE, "/only/chain-0"),
    (SITE, "/big/0"),
    (SITE, "/big/1"),
    (SITE, "/big/2"),
    (FALLBACK, "/only/fallback"),
];

/// Paths a sitemap lists that must never be asked for (robots.txt, past the cap, past damage).
pub const NEVER: &[(usize, &str)] = &[
    (SITE, "/private/listed"),
    (SITE, "/big/late"),
    (SITE, "/only/broken-2"),
    (SITE, "/only/chain-2"),
];

/// Starts the three hosts.
pub fn start() -> io::Result<TestWeb> {
    TestWeb::start_with(3, |origins| {
        let site = origins[SITE].clone();
        let fallback = origins[FALLBACK].clone();
        let elsewhere = origins[ELSEWHERE].clone();
        let big = OnceLock::new();
        vec![
            HostSpec::new(move |r| site_page(&site, &elsewhere, &big, r)),
            HostSpec::new(move |r| fallback_page(&fallback, r)),
            HostSpec::new(|_| page("elsewhere")),
        ]
    })
}

fn page(title: &str) -> Response {
    Response::html(format!(
        "<!DOCTYPE html><html><head><title>{title}</title></head><body><p>{title}</p></body></html>"
    ))
}

fn urlset(entries: &[(String, Option<&str>)]) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for (loc, lastmod) in entries {
        xml.push_str(&format!("  <url><loc>{loc}</loc>"));
        if let Some(lastmod) = lastmod {
            xml.push_str(&format!("<lastmod>{lastmod}</lastmod>"));
        }
        xml.push_str("</url>\n");
    }
    xml.push_str("</urlset>\n");
    xml
}

fn index(locs: &[String]) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for loc in locs {
        xml.push_str(&format!("  <sitemap><loc>{loc}</loc></sitemap>\n"));
    }
    xml.push_str("</sitemapindex>\n");
    xml
}

/// gzip of `data`.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).expect("writing to memory");
    gz.finish().expect("writing to memory")
}

fn xml(body: impl Into<Vec<u8>>) -> Response {
    Response::new(200, "application/xml", body)
}

/// `big`: `/sitemaps/big.xml.gz`, made once on first request.
fn site_page(origin: &str, elsewhere: &str, big: &OnceLock<Vec<u8>>, r: &Request) -> Response {
    let path = r.target.as_str();
    match path {
        "/robots.txt" => Response::text(
            200,
            format!(
                "User-agent: *\nDisallow: /private/\n\nSitemap: {origin}/sitemap_index.xml\nSitemap: {origin}/news.txt\n"
            ),
        ),
        "/" => Response::html(
            "<!DOCTYPE html><html><body><a href=\"/linked\">linked</a></body></html>",
        ),
        "/linked" => page("linked"),
        "/sitemap_index.xml" => xml(index(&[
            format!("{origin}/sitemaps/pages.xml.gz"),
            format!("{origin}/sitemaps/plain.txt"),
            format!("{origin}/sitemaps/big.xml.gz"),
            format!("{origin}/sitemaps/broken.xml"),
            format!("{origin}/sitemaps/chain/0.xml"),
        ])),
        "/news.txt" => Response::text(200, format!("{origin}/only/news\n")),
        "/sitemaps/pages.xml.gz" => Response::new(
            200,
            "application/gzip",
            gzip(
                urlset(&[
                    (format!("{origin}/only/gz-1"), Some("2024-01-02")),
                    (
                        format!("{origin}/only/gz-2"),
                        Some("2024-03-04T05:06:07+00:00"),
                    ),
                    (format!("{origin}/private/listed"), None),
                ])
                .as_bytes(),
            ),
        ),
        "/sitemaps/plain.txt" => {
            Response::text(200, format!("{origin}/only/text-1\nthis line is no URL\n"))
        }
        "/sitemaps/big.xml.gz" => {
            let body = big.get_or_init(|| {
                let mut entries: Vec<(String, Option<&str>)> = (0..3)
                    .map(|i| (format!("{origin}/big/{i}"), None))
                    .collect();
                entries
                    .extend((3..BIG_ENTRIES - 1).map(|i| (format!("{elsewhere}/far/{i}"), None)));
                entries.push((format!("{origin}/big/late"), None));
                gzip(urlset(&entries).as_bytes())
            });
            Response::new(200, "application/octet-stream", body.clone())
        }
        "/sitemaps/broken.xml" => xml(format!(
            "<urlset><url><loc>{origin}/only/broken-1</loc></url><url><loc>{origin}/only/broken-2"
        )),
        _ => {
            if let Some(n) = path
                .strip_prefix("/sitemaps/chain/")
                .and_then(|rest| rest.strip_suffix(".xml"))
                .and_then(|n| n.parse::<u32>().ok())
            {
                return match n % 2 {
                    // Even: an index of the next link and a urlset with this link's page.
                    0 => xml(index(&[
                        format!("{origin}/sitemaps/chain/{}.xml", n + 1),
                        format!("{origin}/sitemaps/chain/page-{n}.xml"),
                    ])),
                    _ => xml(index(&[format!("{origin}/sitemaps/chain/{}.xml", n + 1)])),
                };
            }
            if let Some(n) = path
                .strip_prefix("/sitemaps/chain/page-")
                .and_then(|rest| rest.strip_suffix(".xml"))
            {
                return xml(urlset(&[(format!("{origin}/only/chain-{n}"), None)]));
            }
            let listed = SITEMAP_ONLY
                .iter()
                .chain(NEVER)
                .any(|&(h, p)| h == SITE && p == path);
            match listed || path.starts_with("/only/") {
                true => page(path),
                false => Response::not_found(),
            }
        }
    }
}

fn fallback_page(origin: &str, r: &Request) -> Response {
    match r.target.as_str() {
        "/" => page("fallback home"),
        "/sitemap.xml" => xml(urlset(&[(format!("{origin}/only/fallback"), None)])),
        "/only/fallback" => page("fallback"),
        _ => Response::not_found(),
    }
}
