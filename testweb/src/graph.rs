//! A generated link-graph web: deterministic from a seed, rendered on the fly (links are
//! computed per page, never stored), plus the breadth-first reference a crawl is checked with.
//!
//! Page 0 of a host is `/`, page `p > 0` is `/p/{p}.html`. Tree links make every page of a host
//! reachable from its `/`; extra links go to random pages of the same host or, with
//! `cross_host_permille`, of another host. Pages spell each link in one of several ways
//! (absolute, root-relative, relative, `../`, with a `#fragment`, upper-case scheme,
//! scheme-relative) and in several elements (`a href`, `link href`, `img src`, `iframe src`,
//! `img srcset`): a correct crawler normalizes them all to the same URL.
//!
//! By default every host has `pages_per_host` pages. [`Graph::with_host_pages`] gives each host
//! its own page count instead, e.g. the Zipf-sized hosts of [`zipf_sizes`] (the web's shape: a
//! few large hosts, a long tail of small ones); extra links then pick a page of their target host.

use crate::{Engine, HostSpec, Request, Response, TestWeb};
use std::collections::{HashMap, VecDeque};
use std::fmt::Write;
use std::sync::Arc;
use std::time::Duration;

/// The shape of a generated web.
#[derive(Clone, Debug)]
pub struct GraphSpec {
    /// Number of hosts in the web.
    pub hosts: usize,
    /// Pages per host: page 0 is `/`, page p > 0 is `/p/{p}.html`.
    pub pages_per_host: usize,
    /// Tree links: page p links to p*children+1 ..= p*children+children of its host (those that exist).
    pub children: usize,
    /// Additional pseudo-random links per page.
    pub extra_links: usize,
    /// Share (per mille) of extra links that go to a random other host.
    pub cross_host_permille: u32,
    /// Bytes of filler text per page.
    pub page_padding: usize,
    /// Seed of everything pseudo-random.
    pub seed: u64,
}

impl Default for GraphSpec {
    fn default() -> GraphSpec {
        GraphSpec {
            hosts: 1,
            pages_per_host: 100,
            children: 4,
            extra_links: 4,
            cross_host_permille: 200,
            page_padding: 2000,
            seed: 1,
        }
    }
}

/// What the ideal polite crawler does on a web ([`Graph::ideal`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ideal {
    /// When its last response ends, from its first request.
    pub seconds: f64,
    /// Its requests, robots.txt included.
    pub requests: usize,
}

/// One host of the ideal crawler's simulation: its requests one at a time, robots.txt first.
#[derive(Default)]
struct Lane {
    /// Pages known and not asked for, in the order they became known.
    pending: VecDeque<usize>,
    /// A request in flight (or begun at its lane's `free_at`).
    busy: bool,
    /// robots.txt asked for.
    robots: bool,
    /// When its next request may begin (ns): the rule's rest after the last response.
    free_at: u64,
}

/// A generated web. Cheap to clone; costs the same memory whatever its size.
#[derive(Clone, Debug)]
pub struct Graph {
    spec: Arc<GraphSpec>,
    /// Pages of each host when they differ ([`Graph::with_host_pages`]); else `pages_per_host`.
    host_pages: Option<Arc<[usize]>>,
    /// Host 0's pages are found only deep in the crawl ([`Graph::with_largest_late`]).
    largest_late: bool,
    /// Pages and hosts are found only as pages are fetched ([`Graph::with_ring`]).
    ring: bool,
}

/// Zipf-sized hosts: host h (0-based) gets `round(C / (h+1)^exponent)` pages, at least 1, with
/// `C` chosen so that the total is as close to `total` as it can be (never below `hosts`, as
/// every host has a page). Host 0 is the largest; sizes never grow with h.
pub fn zipf_sizes(hosts: usize, total: usize, exponent: f64) -> Vec<usize> {
    let weights: Vec<f64> = (0..hosts)
        .map(|h| (h as f64 + 1.0).powf(-exponent))
        .collect();
    let sizes = |c: f64| -> Vec<usize> {
        weights
            .iter()
            .map(|w| ((c * w).round() as usize).max(1))
            .collect()
    };
    let sum = |c: f64| -> usize { sizes(c).iter().sum() };
    // The sum grows with C: bisect for the smallest C whose sum reaches `total`, then take it or
    // the largest C below, whichever lands closer.
    let (mut lo, mut hi) = (
        0.0f64,
        total.max(1) as f64 / weights.iter().sum::<f64>().max(1e-300),
    );
    while sum(hi) < total {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if sum(mid) >= total {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let (under, over) = (sum(lo), sum(hi));
    if total.saturating_sub(under) < over - total.min(over) {
        sizes(lo)
    } else {
        sizes(hi)
    }
}

/// splitmix64's finalizer: the hash every deterministic choice of the web is drawn from.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const TAG_LINK: u64 = 1;
const TAG_SPELL: u64 = 2;
const TAG_PAD: u64 = 3;
const WORDS: [&str; 16] = [
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "crawler",
    "frontier",
    "politeness",
    "queue",
    "disk",
    "checksum",
    "mercator",
    "fetch",
    "page",
    "graph",
    "web",
];

impl Graph {
    /// A web of the given shape.
    pub fn new(spec: GraphSpec) -> Graph {
        Graph {
            spec: Arc::new(spec),
            host_pages: None,
            largest_late: false,
            ring: false,
        }
    }

    /// A web of the given shape whose host h has `host_pages[h]` pages (each at least 1), e.g.
    /// from [`zipf_sizes`]; `spec.hosts` and `spec.pages_per_host` are replaced by the number of
    /// hosts and the largest host's pages.
    pub fn with_host_pages(mut spec: GraphSpec, host_pages: Vec<usize>) -> Graph {
        assert!(
            !host_pages.is_empty() && host_pages.iter().all(|&n| n >= 1),
            "every host needs a page"
        );
        spec.hosts = host_pages.len();
        spec.pages_per_host = host_pages.iter().copied().max().unwrap_or(1);
        Graph {
            spec: Arc::new(spec),
            host_pages: Some(host_pages.into()),
            largest_late: false,
            ring: false,
        }
    }

    /// The same web, but host 0 (the largest of a Zipf web) is found only deep in the crawl:
    /// its `/` links to no page of its own, and the first extra link of every page of another
    /// host that lies two or more tree levels below its `/` (page > children) goes to a page of
    /// host 0; no other page links to host 0. So host 0's URLs reach the frontier behind other
    /// hosts' deeper levels, all through the crawl.
    pub fn with_largest_late(mut self) -> Graph {
        self.largest_late = true;
        self
    }

    /// The same hosts, linked so that a host's later pages and most hosts are found only as
    /// pages are fetched, as on a real site (issue 47's web): page p of a host links the next
    /// page of its host (p + 1), two random pages of it and two random pages of other hosts,
    /// and each host's `/` also links the next host's `/`, a ring through all hosts. The one
    /// root is host 0's `/`. The spec's `children`, `extra_links` and `cross_host_permille`
    /// do not apply.
    pub fn with_ring(mut self) -> Graph {
        self.ring = true;
        self
    }

    /// Number of pages of `host`.
    pub fn pages(&self, host: usize) -> usize {
        match &self.host_pages {
            Some(n) => n[host],
            None => self.spec.pages_per_host,
        }
    }

    /// Number of pages of the whole web.
    pub fn total_pages(&self) -> usize {
        match &self.host_pages {
            Some(n) => n.iter().sum(),
            None => self.spec.hosts * self.spec.pages_per_host,
        }
    }

    /// Its shape.
    pub fn spec(&self) -> &GraphSpec {
        &self.spec
    }

    /// Every host's `/`: the usual seeds (host 0's alone on a ring web).
    pub fn roots(&self) -> Vec<(usize, usize)> {
        match self.ring {
            true => vec![(0, 0)],
            false => (0..self.spec.hosts).map(|h| (h, 0)).collect(),
        }
    }

    fn rand(&self, tag: u64, host: usize, page: usize, i: usize) -> u64 {
        mix(mix(mix(mix(self.spec.seed ^ tag) ^ host as u64) ^ page as u64) ^ i as u64)
    }

    /// `/` for page 0, `/p/{p}.html` otherwise.
    pub fn path(page: usize) -> String {
        if page == 0 {
            "/".to_string()
        } else {
            format!("/p/{page}.html")
        }
    }

    /// Inverse of [`Graph::path`] (canonical spelling only; no bound check).
    pub fn page_of_path(path: &str) -> Option<usize> {
        if path == "/" {
            return Some(0);
        }
        let num = path.strip_prefix("/p/")?.strip_suffix(".html")?;
        let ok =
            !num.is_empty() && !num.starts_with('0') && num.bytes().all(|b| b.is_ascii_digit());
        if ok { num.parse().ok() } else { None }
    }

    /// The (host, page) targets of a page's links, in document order (duplicates included).
    pub fn links(&self, host: usize, page: usize) -> Vec<(usize, usize)> {
        if self.ring {
            return self.ring_links(host, page);
        }
        let s = &*self.spec;
        let mut out = Vec::with_capacity(s.children + s.extra_links);
        let own = self.pages(host);
        let late = self.largest_late && s.hosts > 1;
        for c in 1..=s.children {
            if late && host == 0 && page == 0 {
                break;
            }
            match page.checked_mul(s.children).and_then(|x| x.checked_add(c)) {
                Some(q) if q < own => out.push((host, q)),
                _ => break,
            }
        }
        if s.pages_per_host == 0 {
            return out;
        }
        for i in 0..s.extra_links {
            let r = self.rand(TAG_LINK, host, page, i);
            let cross = s.hosts > 1 && (r % 1000) < u64::from(s.cross_host_permille);
            let to_host = if cross {
                (host + 1 + ((r >> 20) % (s.hosts as u64 - 1)) as usize) % s.hosts
            } else {
                host
            };
            let to_host = match (late, host, to_host) {
                (false, ..) => to_host,
                (true, 0, 0) if page == 0 => continue,
                (true, 0, _) => to_host,
                (true, _, _) if i == 0 && page > s.children => 0,
                (true, _, 0) => 1 + (r >> 40) as usize % (s.hosts - 1),
                (true, _, t) => t,
            };
            let to_page = (mix(r) % self.pages(to_host) as u64) as usize;
            out.push((to_host, to_page));
        }
        out
    }

    /// `links` on a ring web ([`Graph::with_ring`]).
    fn ring_links(&self, host: usize, page: usize) -> Vec<(usize, usize)> {
        let hosts = self.spec.hosts;
        let mut out = Vec::with_capacity(6);
        if page + 1 < self.pages(host) {
            out.push((host, page + 1));
        }
        for i in 0..4 {
            let r = self.rand(TAG_LINK, host, page, i);
            let to_host = match i < 2 || hosts == 1 {
                true => host,
                false => (host + 1 + (r >> 20) as usize % (hosts - 1)) % hosts,
            };
            out.push((to_host, (mix(r) % self.pages(to_host) as u64) as usize));
        }
        if page == 0 && hosts > 1 {
            out.push(((host + 1) % hosts, 0));
        }
        out
    }

    /// The ideal polite crawler on this web, from `seeds` (issue 47's bound): it obeys the
    /// rule (one request per host at a time, robots.txt first, then a rest of `factor` times
    /// each response's time after it), has unlimited concurrency and no delay of its own, and
    /// knows a page the instant the page linking to it is answered; host h answers each
    /// request in `service(h)`. Each host takes its pages in the order they became known.
    /// When its last response ends, and the requests made.
    pub fn ideal(
        &self,
        seeds: &[(usize, usize)],
        service: &dyn Fn(usize) -> Duration,
        factor: f64,
    ) -> Ideal {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let hosts = self.spec.hosts;
        let mut first = vec![0usize; hosts + 1];
        for h in 0..hosts {
            first[h + 1] = first[h] + self.pages(h);
        }
        let mut known = vec![false; first[hosts]];
        let mut lanes: Vec<Lane> = (0..hosts).map(|_| Lane::default()).collect();
        // Completions: (end in ns, host, page + 1, or 0 for robots.txt).
        let mut ends: BinaryHeap<Reverse<(u64, usize, usize)>> = BinaryHeap::new();
        let ns = |h: usize| service(h).as_nanos() as u64;
        let mut requests = 0usize;
        let mut last = 0u64;
        let start_next = |h: usize,
                          now: u64,
                          lanes: &mut [Lane],
                          ends: &mut BinaryHeap<_>,
                          requests: &mut usize| {
            let lane = &mut lanes[h];
            if lane.busy {
                return;
            }
            let next = match lane.robots {
                false => Some(0),
                true => lane.pending.pop_front().map(|p| p + 1),
            };
            if let Some(what) = next {
                let begin = now.max(lane.free_at);
                lane.busy = true;
                lane.robots = true;
                *requests += 1;
                ends.push(Reverse((begin + ns(h), h, what)));
            }
        };
        let mut found = |(h, p): (usize, usize),
                         now: u64,
                         lanes: &mut [Lane],
                         ends: &mut BinaryHeap<_>,
                         requests: &mut usize| {
            if !std::mem::replace(&mut known[first[h] + p], true) {
                lanes[h].pending.push_back(p);
                start_next(h, now, lanes, ends, requests);
            }
        };
        for &seed in seeds {
            found(seed, 0, &mut lanes, &mut ends, &mut requests);
        }
        while let Some(Reverse((end, h, what))) = ends.pop() {
            last = last.max(end);
            let lane = &mut lanes[h];
            lane.busy = false;
            lane.free_at = end + (ns(h) as f64 * factor) as u64;
            if what > 0 {
                for link in self.links(h, what - 1) {
                    found(link, end, &mut lanes, &mut ends, &mut requests);
                }
            }
            start_next(h, end, &mut lanes, &mut ends, &mut requests);
        }
        Ideal {
            seconds: last as f64 / 1e9,
            requests,
        }
    }

    /// Breadth-first depths from `seeds` (depth 0), entering only pages for which
    /// `allowed(host, page)` holds (seeds included), expanding none beyond `max_depth`.
    pub fn bfs(
        &self,
        seeds: &[(usize, usize)],
        allowed: &dyn Fn(usize, usize) -> bool,
        max_depth: Option<u32>,
    ) -> HashMap<(usize, usize), u32> {
        let mut depth = HashMap::new();
        let mut queue = VecDeque::new();
        for &(h, p) in seeds {
            if allowed(h, p) && !depth.contains_key(&(h, p)) {
                depth.insert((h, p), 0);
                queue.push_back((h, p));
            }
        }
        while let Some((h, p)) = queue.pop_front() {
            let d = depth[&(h, p)];
            if max_depth.is_some_and(|m| d >= m) {
                continue;
            }
            for t in self.links(h, p) {
                if !depth.contains_key(&t) && allowed(t.0, t.1) {
                    depth.insert(t, d + 1);
                    queue.push_back(t);
                }
            }
        }
        depth
    }

    /// One spelling of the link number `i` on (host, page) to `to`.
    fn spell(
        &self,
        origins: &[String],
        host: usize,
        page: usize,
        i: usize,
        to: (usize, usize),
    ) -> String {
        let r = self.rand(TAG_SPELL, host, page, i);
        let path = Graph::path(to.1);
        let hostport = &origins[to.0]["http://".len()..];
        if to.0 != host {
            return match r % 4 {
                0 => format!("http://{hostport}{path}"),
                1 => format!("HTTP://{hostport}{path}"),
                2 => format!("http://{hostport}{path}#from-{page}"),
                _ => format!("//{hostport}{path}"),
            };
        }
        match (r % 8, page, to.1) {
            (0 | 1, ..) => path,
            (2, ..) => format!("http://{hostport}{path}"),
            (3, _, _) => format!("HTTP://{hostport}{path}"),
            (4, ..) => format!("{path}#s{i}"),
            (_, 0, 0) => "./".to_string(),
            (_, 0, q) => format!("p/{q}.html"),
            (_, _, 0) => "../".to_string(),
            (5, _, q) => format!("{q}.html"),
            (6, _, q) => format!("./{q}.html#x"),
            (_, _, q) => format!("../p/{q}.html"),
        }
    }

    /// The HTML of a page; `origins[h]` is host h's origin.
    pub fn render(&self, origins: &[String], host: usize, page: usize) -> String {
        let s = &*self.spec;
        let links = self.links(host, page);
        let mut html = String::with_capacity(s.page_padding + links.len() * 80 + 300);
        let _ = write!(
            html,
            "<!doctype html><html><head><title>host {host} page {page}</title>"
        );
        html.push_str("<meta charset=\"utf-8\"></head>\n<body><h1>A generated page</h1>\n<p>");
        let mut r = self.rand(TAG_PAD, host, page, 0);
        let pad_start = html.len();
        while html.len() - pad_start < s.page_padding {
            r = mix(r);
            html.push_str(WORDS[(r % WORDS.len() as u64) as usize]);
            html.push(if r >> 60 == 0 { '\n' } else { ' ' });
        }
        html.push_str("</p>\n<ul>\n");
        let mut i = 0;
        while i < links.len() {
            let url = self.spell(origins, host, page, i, links[i]);
            let kind = self.rand(TAG_SPELL, host, page, i) >> 32;
            match kind % 20 {
                0 => {
                    let _ = writeln!(html, "<link rel=stylesheet href=\"{url}\">");
                }
                1 => {
                    let _ = writeln!(html, "<li><img alt=\"\" src='{url}'></li>");
                }
                2 => {
                    let _ = writeln!(html, "<li><iframe src=\"{url}\"></iframe></li>");
                }
                3 if i + 1 < links.len() => {
                    let url2 = self.spell(origins, host, page, i + 1, links[i + 1]);
                    let _ = writeln!(
                        html,
                        "<li><img alt=\"\" srcset=\"{url} 1x, {url2} 2x\"></li>"
                    );
                    i += 1;
                }
                4 => {
                    let _ = writeln!(html, "<li><a href='{url}'>single-quoted link {i}</a></li>");
                }
                _ => {
                    let _ = writeln!(html, "<li><a href=\"{url}\">link {i}</a></li>");
                }
            }
            i += 1;
        }
        html.push_str("</ul>\n</body></html>\n");
        html
    }

    /// The handler of `host`: its pages, 404 for other paths, and `/robots.txt` with `robots`
    /// (404 when `None`). `origins[h]` is host h's origin, as [`TestWeb::origin`] gives it.
    pub fn handler(
        &self,
        host: usize,
        origins: &[String],
        robots: Option<String>,
    ) -> crate::Handler {
        self.handler_shared(host, origins.into(), robots)
    }

    /// [`Graph::handler`] with the origins shared rather than copied: a web of 10,000 hosts
    /// would otherwise hold 10,000 copies of 10,000 origins.
    pub fn handler_shared(
        &self,
        host: usize,
        origins: Arc<[String]>,
        robots: Option<String>,
    ) -> crate::Handler {
        let graph = self.clone();
        Arc::new(move |req: &Request| {
            if req.target == "/robots.txt" {
                return match &robots {
                    Some(body) => Response::text(200, body.clone()),
                    None => Response::not_found(),
                };
            }
            match Graph::page_of_path(&req.target) {
                Some(p) if p < graph.pages(host) => Response::html(graph.render(&origins, host, p)),
                _ => Response::not_found(),
            }
        })
    }

    /// Serves this web: one host per `spec.hosts`, each with `latency` and `robots(host)`, on
    /// the reactor engine (its handlers never block).
    pub fn start(
        &self,
        latency: Duration,
        robots: &dyn Fn(usize) -> Option<String>,
    ) -> std::io::Result<TestWeb> {
        TestWeb::start_with_engine(self.spec.hosts, Engine::Reactor, |origins| {
            let origins: Arc<[String]> = origins.into();
            (0..self.spec.hosts)
                .map(|h| HostSpec {
                    handler: self.handler_shared(h, origins.clone(), robots(h)),
                    latency,
                })
                .collect()
        })
    }
}
