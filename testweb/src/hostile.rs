//! A hostile web: servers that are slow, huge, looping, broken or lying, for the crawler's
//! robustness tests (`tests/it/hostile.rs`) and the table in BENCHMARKS.md (`benches/hostile.sh`,
//! through `testweb --hostile`).
//!
//! Host [`MAIN`] serves every page case of [`CASES`] (seed its URL alone to try one case); its
//! robots.txt is a 404. Host [`OUTSIDE`] is out of scope: nothing should ever ask it for anything.
//! Each host of [`ROBOTS`] has a hostile robots.txt and the same three pages: `/` links to
//! `/public`, `/private/x` and `/private/ok`. Everything is generated on the fly and costs the
//! server bounded memory; the endless and slow answers stop when the client goes away or the
//! web shuts down.

use crate::{Body, HostSpec, Request, Response, TestWeb};
use std::io;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The host serving the page cases.
pub const MAIN: usize = 0;
/// A host no case may lead the crawler to (redirect targets and links point at it).
pub const OUTSIDE: usize = 1;
/// The hosts with a hostile robots.txt, by name; host `ROBOTS_FIRST + i` is `ROBOTS[i]`.
pub const ROBOTS: [&str; 6] = ["huge", "binary", "redirect", "5xx", "slow", "odd"];
/// The first robots host.
pub const ROBOTS_FIRST: usize = 2;
/// Size the gzip bomb inflates to.
pub const BOMB_INFLATED: u64 = 1 << 30;

/// One hostile page case: where it is served and what it does.
pub struct Case {
    pub name: &'static str,
    pub path: &'static str,
    pub what: &'static str,
}

macro_rules! cases {
    ($($name:literal $path:literal $what:literal;)*) => {
        /// Every page case host [`MAIN`] serves.
        pub const CASES: &[Case] = &[$(Case { name: $name, path: $path, what: $what }),*];
    };
}

cases! {
    "slow-loris" "/slow-loris" "headers at once, then the body at one byte a second";
    "slow-head" "/slow-head" "the status line and headers at one byte a second";
    "no-headers" "/no-headers" "reads the request, never answers";
    "big" "/big" "a 3 MiB page (more than --max-body 1M)";
    "endless-chunked" "/endless-chunked" "a chunked body that never ends";
    "endless-http10" "/endless-http10" "HTTP/1.0, no length, a body that never ends";
    "gzip-bomb" "/gzip-bomb" "6.6 MB of gzip that inflates to 1 GiB";
    "redirect-chain" "/chain/5" "5 redirects, then a page";
    "redirect-chain-long" "/chain/40" "40 redirects in a row";
    "redirect-loop" "/loop/a" "a redirects to b, b to a";
    "redirect-file" "/to-file" "redirect to file:///etc/passwd";
    "redirect-ftp" "/to-ftp" "redirect to ftp://";
    "redirect-js" "/to-js" "redirect to javascript:";
    "redirect-out" "/to-out" "redirect to an out-of-scope host";
    "redirect-garbage" "/to-garbage" "Location: http://[::1 (unparseable)";
    "length-short" "/cl-short" "Content-Length shorter than the body (then a smuggled response)";
    "length-long" "/cl-long" "Content-Length longer than the body, then close";
    "length-long-hang" "/cl-long-hang" "Content-Length longer than the body, then silence";
    "reset" "/reset" "connection reset (RST) mid-body";
    "http10" "/http10" "HTTP/1.0, no Content-Length, body ends at close";
    "many-links" "/many-links" "a page with 100,000 links";
    "deep-nesting" "/deep-nesting" "100,000 nested <div>s, then a link";
    "bad-utf8" "/bad-utf8" "invalid UTF-8 in text and in an href";
    "latin1" "/latin1" "ISO-8859-1 by header, a non-ASCII href";
    "cp1251-meta" "/cp1251-meta" "windows-1251 by <meta>, a non-ASCII href";
    "bad-urls" "/bad-urls" "malformed hrefs and a 1 MiB href";
    "calendar" "/cal/2024/1" "an infinite calendar (next and previous month)";
    "relative-trap" "/trap/" "relative links a/ and b/ on every page: /trap/a/b/a/b/...";
    "session-ids" "/session" "links carry a fresh session ID every time";
    "spellings" "/spellings" "links to itself in 12 spellings";
}

/// A page of host [`MAIN`] that links [`MIXED_GOOD`] good pages (`/good/N`, leaves) and,
/// among them, the hostile pages of [`MIXED_HOSTILE`]: one host where a few pages keep failing
/// while the others answer (`benches/hostile_host.sh`, `tests/it/retry.rs`).
pub const MIXED: &str = "/mixed";
/// How many good pages [`MIXED`] links.
pub const MIXED_GOOD: usize = 20;
/// The hostile pages [`MIXED`] links: a body that trickles forever, an endless body, a reset
/// mid-body, a lying Content-Length, a gzip bomb, a redirect loop, a path trap.
pub const MIXED_HOSTILE: [&str; 7] = [
    "/slow-loris",
    "/endless-chunked",
    "/reset",
    "/cl-long",
    "/gzip-bomb",
    "/loop/a",
    "/trap/",
];

/// Starts the hostile web on loopback.
pub fn start() -> io::Result<TestWeb> {
    TestWeb::start_with(ROBOTS_FIRST + ROBOTS.len(), |origins| {
        let mut hosts = Vec::new();
        let (main, outside) = (origins[MAIN].clone(), origins[OUTSIDE].clone());
        let sessions = AtomicU64::new(1);
        hosts.push(HostSpec::new(move |req| {
            page(req, &main, &outside, &sessions)
        }));
        hosts.push(HostSpec::new(|_| Response::html("<p>out of scope</p>")));
        for name in ROBOTS {
            hosts.push(HostSpec::new(move |req| robots_host(name, req)));
        }
        hosts
    })
}

const HTML: &str = "text/html; charset=utf-8";
const FOREVER: Duration = Duration::from_secs(3600);

fn head(extra: &str) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\nContent-Type: {HTML}\r\n{extra}\r\n").into_bytes()
}

/// One byte a second, for `n` bytes of `bytes` (then `bytes` repeated).
fn trickle(bytes: &[u8], n: usize) -> Vec<(Duration, Vec<u8>)> {
    let second = Duration::from_secs(1);
    (0..n)
        .map(|i| (second, vec![bytes[i % bytes.len()]]))
        .collect()
}

fn links(targets: impl IntoIterator<Item = String>) -> String {
    let mut html = String::from("<!doctype html><title>links</title>\n");
    for t in targets {
        html.push_str(&format!("<a href=\"{t}\">x</a>\n"));
    }
    html
}

fn page(req: &Request, main: &str, outside: &str, sessions: &AtomicU64) -> Response {
    let path = req.target.split('?').next().unwrap_or("");
    let raw = |script| Response::raw(200, script);
    match path {
        "/robots.txt" => Response::not_found(),
        "/slow-loris" => {
            let mut s = vec![(Duration::ZERO, head("Content-Length: 100000\r\n"))];
            s.extend(trickle(b"<p>slow</p>", 3600));
            raw(s)
        }
        "/slow-head" => raw(trickle(&head("Content-Length: 2\r\n"), 3600)),
        "/no-headers" => raw(vec![(FOREVER, Vec::new())]),
        "/big" => Response::html("<p>big page</p>\n".repeat(3 << 16)),
        "/endless-chunked" => endless(head("Transfer-Encoding: chunked\r\n"), true),
        "/endless-http10" => endless(
            format!("HTTP/1.0 200 OK\r\nContent-Type: {HTML}\r\n\r\n").into_bytes(),
            false,
        ),
        "/gzip-bomb" => {
            static BOMB: OnceLock<Vec<u8>> = OnceLock::new();
            let body = BOMB
                .get_or_init(|| gzip_bomb(b"<a href=\"/after-bomb\">after</a><p>", BOMB_INFLATED));
            Response::new(200, HTML, body.clone()).with_header("Content-Encoding", "gzip")
        }
        "/loop/a" => Response::redirect(302, "/loop/b"),
        "/loop/b" => Response::redirect(302, "/loop/a"),
        "/to-file" => Response::redirect(301, "file:///etc/passwd"),
        "/to-ftp" => Response::redirect(301, "ftp://127.0.0.1/pub/"),
        "/to-js" => Response::redirect(302, "javascript:alert(1)"),
        "/to-out" => Response::redirect(302, &format!("{outside}/")),
        "/to-garbage" => Response::redirect(302, "http://[::1"),
        "/cl-short" => Response::new(
            200,
            HTML,
            "<p>short</p>HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nSMUGGLED",
        )
        .with_header("Content-Length", "12"),
        "/cl-long" => raw(vec![(
            Duration::ZERO,
            [
                head("Content-Length: 1000\r\n"),
                b"<p>only this</p>".to_vec(),
            ]
            .concat(),
        )]),
        "/cl-long-hang" => raw(vec![
            (
                Duration::ZERO,
                [
                    head("Content-Length: 1000\r\n"),
                    b"<p>only this</p>".to_vec(),
                ]
                .concat(),
            ),
            (FOREVER, Vec::new()),
        ]),
        "/reset" => Response {
            status: 200,
            headers: Vec::new(),
            body: Body::RawThenReset(vec![
                (Duration::ZERO, head("Content-Length: 100000\r\n")),
                (Duration::ZERO, b"<p>reset</p>".repeat(400)),
            ]),
        },
        "/http10" => raw(vec![(
            Duration::ZERO,
            format!(
                "HTTP/1.0 200 OK\r\nContent-Type: {HTML}\r\n\r\n<a href=\"/http10-link\">x</a>"
            )
            .into_bytes(),
        )]),
        "/many-links" => Response::html(links((0..100_000).map(|i| format!("/ml/{i}")))),
        "/deep-nesting" => Response::html(format!(
            "{}<a href=\"/after-nesting\">x</a>{}",
            "<div>".repeat(100_000),
            "</div>".repeat(100_000)
        )),
        "/bad-utf8" => Response::html(
            b"<p>\xff\xfe\xc3</p><a href=\"/caf\xe9\xff\">x</a><a href=\"/utf8-ok\">ok</a>"
                .to_vec(),
        ),
        "/latin1" => Response::new(
            200,
            "text/html; charset=iso-8859-1",
            b"<a href=\"/caf\xe9\">caf\xe9</a>".to_vec(),
        ),
        "/cp1251-meta" => Response::new(
            200,
            "text/html",
            b"<meta charset=\"windows-1251\"><a href=\"/\xe4\xe0\">x</a>".to_vec(),
        ),
        "/bad-urls" => Response::html(bad_urls(main)),
        "/mixed" => {
            let good = (0..MIXED_GOOD).map(|i| format!("/good/{i}"));
            // A hostile page after every third good one.
            let mut hostile = MIXED_HOSTILE.iter();
            let targets = good.enumerate().flat_map(|(i, page)| {
                let next = (i % 3 == 0).then(|| hostile.next()).flatten();
                [Some(page), next.map(|p| p.to_string())]
                    .into_iter()
                    .flatten()
            });
            let mut targets: Vec<String> = targets.collect();
            targets.extend(hostile.map(|p| p.to_string()));
            Response::html(links(targets))
        }
        "/spellings" => Response::html(spellings(main)),
        "/session" | "/shop" => {
            let mut next = |item: u32| {
                let sid = sessions.fetch_add(1, Ordering::Relaxed);
                [
                    format!("/shop?item={item}&sid={sid:016x}"),
                    format!("/shop;jsessionid={sid:X}?item={item}"),
                    format!("/shop?PHPSESSID={sid:x}&item={item}"),
                ]
            };
            Response::html(links((1..=3).flat_map(&mut next)))
        }
        _ => dynamic(path),
    }
}

/// Pages whose answer depends on the path: calendars, traps, chains, and plain leaf pages.
fn dynamic(path: &str) -> Response {
    if let Some(rest) = path.strip_prefix("/cal/") {
        let mut it = rest.split('/').map(|s| s.parse::<i64>().ok());
        let (Some(Some(y)), Some(Some(m))) = (it.next(), it.next()) else {
            return Response::not_found();
        };
        let month = y * 12 + (m - 1);
        let href = |k: i64| format!("/cal/{}/{}", k.div_euclid(12), k.rem_euclid(12) + 1);
        return Response::html(links([href(month - 1), href(month + 1)]));
    }
    if path.starts_with("/trap/") {
        return Response::html(links(["a/".to_owned(), "b/".to_owned()]));
    }
    if let Some(n) = path.strip_prefix("/chain/") {
        return match n.parse::<u32>() {
            Ok(0) => Response::html("<p>end of the chain</p>"),
            Ok(n) => Response::redirect(302, &format!("/chain/{}", n - 1)),
            Err(_) => Response::not_found(),
        };
    }
    Response::html(format!("<p>leaf {path}</p>"))
}

/// An endless body: 16 KiB chunks (with chunk framing when `chunked`), forever.
fn endless(prefix: Vec<u8>, chunked: bool) -> Response {
    let data = b"<p>and more</p>\n".repeat(1024);
    let chunk = if chunked {
        [b"4000\r\n".as_slice(), &data, b"\r\n"].concat()
    } else {
        data
    };
    Response {
        status: 200,
        headers: Vec::new(),
        body: Body::Endless { prefix, chunk },
    }
}

fn bad_urls(main: &str) -> String {
    let huge = format!("/huge/{}", "x".repeat(1 << 20));
    let hrefs = [
        "http://[::1",
        "http://a b.test/",
        "http://%zz/",
        "http://999.999.999.999/",
        "//:99999/",
        "http://127.0.0.1:99999/",
        "http:",
        "http://",
        "javascript:alert(1)",
        "mailto:x@y.test",
        "data:text/html,<a href=/x>",
        "\u{0}/nul",
        "/%",
        "/%zz",
        "\\\\back\\slash",
        "   ",
        &huge,
        "/good-after-bad",
    ];
    let mut html = links(hrefs.iter().map(|h| h.replace('"', "&quot;")));
    html.push_str(&format!(
        "<a href=\"{main}/../..//..\">up</a>\n<img srcset=\",,, ,\">"
    ));
    html
}

fn spellings(main: &str) -> String {
    let port = main.rsplit(':').next().unwrap_or("");
    let hrefs = [
        format!("{main}/spellings"),
        format!("HTTP://127.0.0.1:{port}/spellings"),
        format!("http://127.0.0.1.:{port}/spellings"),
        format!("http://127.1:{port}/spellings"),
        format!("http://0x7f.0.0.1:{port}/spellings"),
        format!("http://2130706433:{port}/spellings"),
        "/%73pellings".to_owned(),
        "/spell%69ngs#frag".to_owned(),
        "./spellings".to_owned(),
        "/x/../spellings".to_owned(),
        "/spellings?".to_owned(),
        "/spellings#".to_owned(),
    ];
    links(hrefs)
}

/// A host whose robots.txt is hostile in the way `name` says.
fn robots_host(name: &str, req: &Request) -> Response {
    match (name, req.target.as_str()) {
        (_, "/") => Response::html(links(
            ["/public", "/private/x", "/private/ok"].map(String::from),
        )),
        ("huge", "/robots.txt") => {
            let mut text = String::from("User-agent: *\nDisallow: /private/x\n");
            let mut i = 0;
            while text.len() < 3 << 20 {
                text.push_str(&format!("Disallow: /filler/{i}\n"));
                i += 1;
            }
            Response::text(200, text)
        }
        ("binary", "/robots.txt") => {
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            let bytes: Vec<u8> = (0..64 << 10)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            Response::new(200, "application/octet-stream", bytes)
        }
        ("redirect", "/robots.txt") => Response::redirect(301, "/real-robots.txt"),
        ("redirect", "/real-robots.txt") => {
            Response::text(200, "User-agent: *\nDisallow: /private/x\n")
        }
        ("5xx", "/robots.txt") => Response::text(503, "try later\n"),
        ("slow", "/robots.txt") => {
            let text = b"HTTP/1.1 200 OK\r\nContent-Length: 30\r\n\r\nUser-agent: *\nDisallow: /\n";
            Response::raw(200, trickle(text, 3600))
        }
        ("odd", "/robots.txt") => Response::new(200, "text/plain", odd_robots()),
        _ => Response::html(format!("<p>{}</p>", req.target)),
    }
}

fn odd_robots() -> Vec<u8> {
    let mut text = b"\xEF\xBB\xBFUser-Agent: *\r\nDisallow /nocolon\r\n   DISALLOW  :  /private/x  # a comment\n\
        \0\0\0\nAllow:\nCrawl-delay: 1e400\nCrawl-delay: -3\nSitemap: javascript:alert(1)\n\
        User-agent\n\xff\xfe: \xff\n"
        .to_vec();
    text.extend(b"Disallow: /".iter().chain(&[b'y'; 100_000]));
    text.extend(b"\nDisallow: /private/*$\n");
    text
}

/// A gzip member whose deflate stream is `prefix` then `zeros` zero bytes, in fixed-Huffman
/// matches of 258 bytes (13 bits each): ~159:1, so 1 GiB takes 6.6 MB. The trailer's CRC-32
/// and size are right, so it is a valid gzip file, not just a truncated one.
pub fn gzip_bomb(prefix: &[u8], zeros: u64) -> Vec<u8> {
    let mut w = BitWriter::default();
    w.out
        .extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
    w.bits(0b011, 3); // BFINAL = 1, BTYPE = 01 (fixed Huffman)
    let literal = |w: &mut BitWriter, b: u8| match b {
        0..=143 => w.code(0x30 + b as u32, 8),
        _ => w.code(0x190 + (b as u32 - 144), 9),
    };
    for &b in prefix {
        literal(&mut w, b);
    }
    let mut left = zeros;
    if left > 0 {
        literal(&mut w, 0);
        left -= 1;
    }
    for _ in 0..left / 258 {
        w.code(0xC5, 8); // length code 285 = 258 bytes
        w.code(0, 5); // distance code 0 = 1 byte back
    }
    for _ in 0..left % 258 {
        literal(&mut w, 0);
    }
    w.code(0, 7); // end of block
    let mut out = w.finish();
    let crc = crc32_zeros(crc32(0, prefix), zeros);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&((prefix.len() as u64 + zeros) as u32).to_le_bytes());
    out
}

#[derive(Default)]
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitWriter {
    /// Appends `n` bits of `value`, least significant first (deflate's order for headers).
    fn bits(&mut self, value: u32, n: u32) {
        self.acc |= (value as u64) << self.n;
        self.n += n;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// Appends a Huffman code of `n` bits, most significant first.
    fn code(&mut self, code: u32, n: u32) {
        self.bits(code.reverse_bits() >> (32 - n), n);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

const POLY: u32 = 0xedb8_8320;

/// CRC-32 (gzip's) of `data`, continuing from `crc`.
pub fn crc32(crc: u32, data: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
        }
    }
    !c
}

/// CRC-32 continued over `n` zero bytes, in O(log n): zero bytes multiply the CRC register by
/// x^8 modulo the polynomial (zlib's `crc32_combine` uses the same algebra).
fn crc32_zeros(crc: u32, n: u64) -> u32 {
    // Polynomials over GF(2), reflected: bit 31 is x^0.
    let mul = |a: u32, mut b: u32| {
        let (mut m, mut p) = (1u32 << 31, 0u32);
        while m != 0 {
            if a & m != 0 {
                p ^= b;
            }
            m >>= 1;
            b = if b & 1 != 0 { (b >> 1) ^ POLY } else { b >> 1 };
        }
        p
    };
    let (mut power, mut square, mut k) = (1u32 << 31, 1u32 << 23, n); // x^0, x^8
    while k != 0 {
        if k & 1 != 0 {
            power = mul(square, power);
        }
        square = mul(square, square);
        k >>= 1;
    }
    !mul(power, !crc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_of_zeros_matches_the_bytewise_crc() {
        assert_eq!(crc32(0, b"123456789"), 0xcbf4_3926);
        for n in [0u64, 1, 7, 258, 1000] {
            let bytes = [b"abc".to_vec(), vec![0; n as usize]].concat();
            assert_eq!(crc32_zeros(crc32(0, b"abc"), n), crc32(0, &bytes), "{n}");
        }
    }

    #[test]
    fn the_bomb_is_small() {
        let bomb = gzip_bomb(b"<p>", 1 << 20);
        assert!(bomb.len() < 8 << 10, "{}", bomb.len());
        assert_eq!(&bomb[bomb.len() - 4..], &((3u32 + (1 << 20)).to_le_bytes()));
    }
}
