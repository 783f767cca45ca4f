//! A test web with a planted topical community, for focused crawls and HITS.
//!
//! One host. Most pages are bulk (`/` and `/p/{i}.html`): a tree (page i links to its
//! `children`) plus `extra_links` pseudo-random links to other bulk pages, with filler text
//! that never mentions the topic. The community (`/c/{i}.html`) is `members` pages that mention
//! the topic and link densely to each other (`member_links` random members each, plus the next
//! member, so every member is reachable from any other) and to two bulk pages. From the seed `/`
//! the community is reachable only through `gateways` bulk pages in the middle levels of the
//! tree, each linking to one member. A breadth-first crawl meets the community, then spreads
//! through it level by level among the bulk; a focused crawl can follow the members' links.
//! Deterministic from `seed`; pages are rendered on the fly.

use crate::graph::mix;
use crate::{HostSpec, Request, Response, TestWeb};
use std::fmt::Write;
use std::sync::Arc;

/// The shape of a community web.
#[derive(Clone, Debug)]
pub struct CommunitySpec {
    /// Bulk pages, `/` included.
    pub bulk: usize,
    /// Community pages.
    pub members: usize,
    /// The word every member mentions (and no bulk page does).
    pub topic: String,
    /// Tree fan-out of the bulk.
    pub children: usize,
    /// Random bulk links per bulk page.
    pub extra_links: usize,
    /// Random member links per member (besides the next member).
    pub member_links: usize,
    /// Bulk pages linking into the community, among bulk pages `bulk/30 .. bulk/10` (the
    /// middle levels of the tree).
    pub gateways: usize,
    /// Seed of everything pseudo-random.
    pub seed: u64,
}

impl Default for CommunitySpec {
    fn default() -> CommunitySpec {
        CommunitySpec {
            bulk: 3000,
            members: 100,
            topic: "orchid".into(),
            children: 4,
            extra_links: 3,
            member_links: 10,
            gateways: 3,
            seed: 7,
        }
    }
}

/// A page of a community web.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Page {
    Bulk(usize),
    Member(usize),
}

/// A community web. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Community {
    spec: Arc<CommunitySpec>,
}

const FILLER: [&str; 8] = [
    "lorem", "ipsum", "dolor", "sit", "amet", "garden", "river", "stone",
];

impl Community {
    pub fn new(spec: CommunitySpec) -> Community {
        assert!(spec.bulk >= 1 && spec.members >= 1 && !spec.topic.is_empty());
        assert!(
            !FILLER
                .iter()
                .any(|w| w.contains(&spec.topic.to_lowercase()))
        );
        Community {
            spec: Arc::new(spec),
        }
    }

    pub fn spec(&self) -> &CommunitySpec {
        &self.spec
    }

    fn rand(&self, page: Page, i: usize) -> u64 {
        let (kind, n) = match page {
            Page::Bulk(n) => (1, n),
            Page::Member(n) => (2, n),
        };
        mix(mix(mix(self.spec.seed ^ kind) ^ n as u64) ^ i as u64)
    }

    /// `/`, `/p/{i}.html` or `/c/{i}.html`.
    pub fn path(page: Page) -> String {
        match page {
            Page::Bulk(0) => "/".into(),
            Page::Bulk(i) => format!("/p/{i}.html"),
            Page::Member(i) => format!("/c/{i}.html"),
        }
    }

    /// Inverse of [`Community::path`] within this web's bounds.
    pub fn page_of_path(&self, path: &str) -> Option<Page> {
        if path == "/" {
            return Some(Page::Bulk(0));
        }
        let number = |prefix: &str| -> Option<usize> {
            let num = path.strip_prefix(prefix)?.strip_suffix(".html")?;
            let canonical = !num.starts_with('0') || num == "0";
            num.parse().ok().filter(|_| canonical)
        };
        match (number("/p/"), number("/c/")) {
            (Some(i), _) if i > 0 && i < self.spec.bulk => Some(Page::Bulk(i)),
            (_, Some(i)) if i < self.spec.members => Some(Page::Member(i)),
            _ => None,
        }
    }

    /// The bulk pages that link into the community, and the member each links to.
    pub fn gateways(&self) -> Vec<(usize, usize)> {
        let s = &*self.spec;
        let (start, end) = (s.bulk / 30, (s.bulk / 10).max(s.bulk / 30 + 1));
        (0..s.gateways)
            .map(|k| {
                let r = self.rand(Page::Bulk(0), 1000 + k);
                let page = start + (r % (end - start) as u64) as usize;
                (page, (r >> 32) as usize % s.members)
            })
            .collect()
    }

    /// Every member's path.
    pub fn member_paths(&self) -> Vec<String> {
        (0..self.spec.members)
            .map(|i| Community::path(Page::Member(i)))
            .collect()
    }

    /// A page's links in document order (duplicates included).
    pub fn links(&self, page: Page) -> Vec<Page> {
        let s = &*self.spec;
        let mut out = Vec::new();
        match page {
            Page::Bulk(p) => {
                let kids = (1..=s.children).map(|c| p * s.children + c);
                out.extend(kids.filter(|&q| q < s.bulk).map(Page::Bulk));
                for i in 0..s.extra_links {
                    out.push(Page::Bulk((self.rand(page, i) % s.bulk as u64) as usize));
                }
                let gates = self.gateways().into_iter().filter(|&(g, _)| g == p);
                out.extend(gates.map(|(_, m)| Page::Member(m)));
            }
            Page::Member(m) => {
                out.push(Page::Member((m + 1) % s.members));
                for i in 0..s.member_links {
                    out.push(Page::Member(
                        (self.rand(page, i) % s.members as u64) as usize,
                    ));
                }
                for i in 0..2 {
                    let r = self.rand(page, 100 + i);
                    out.push(Page::Bulk((r % s.bulk as u64) as usize));
                }
            }
        }
        out
    }

    /// The HTML of a page (links root-relative).
    pub fn render(&self, page: Page) -> String {
        let mut html = format!(
            "<!doctype html><html><head><title>{}</title></head><body>\n<p>",
            Community::path(page)
        );
        let mut r = self.rand(page, 5000);
        for i in 0..60 {
            r = mix(r);
            let member = matches!(page, Page::Member(_));
            let word = match member && i % 12 == 0 {
                true => self.spec.topic.as_str(),
                false => FILLER[(r % FILLER.len() as u64) as usize],
            };
            html.push_str(word);
            html.push(' ');
        }
        html.push_str("</p>\n<ul>\n");
        for (i, to) in self.links(page).into_iter().enumerate() {
            let _ = writeln!(
                html,
                "<li><a href=\"{}\">link {i}</a></li>",
                Community::path(to)
            );
        }
        html.push_str("</ul></body></html>\n");
        html
    }

    /// Serves the web as one host (robots.txt: 404, everything allowed).
    pub fn start(&self) -> std::io::Result<TestWeb> {
        let web = self.clone();
        TestWeb::start(vec![HostSpec::new(move |req: &Request| {
            match web.page_of_path(&req.target) {
                Some(page) => Response::html(web.render(page)),
                None => Response::not_found(),
            }
        })])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashSet, VecDeque};

    /// Breadth-first order of the pages reachable from `/`.
    fn bfs(web: &Community) -> Vec<Page> {
        let mut seen = HashSet::from([Page::Bulk(0)]);
        let mut queue = VecDeque::from([Page::Bulk(0)]);
        let mut order = Vec::new();
        while let Some(page) = queue.pop_front() {
            order.push(page);
            for to in web.links(page) {
                if seen.insert(to) {
                    queue.push_back(to);
                }
            }
        }
        order
    }

    #[test]
    fn the_community_is_reachable_late_and_only_through_gateways() {
        let web = Community::new(CommunitySpec::default());
        let order = bfs(&web);
        let s = web.spec();
        assert_eq!(order.len(), s.bulk + s.members, "everything is reachable");
        let first = order.iter().position(|p| matches!(p, Page::Member(_)));
        assert!(first.unwrap() > s.bulk / 30, "met at {first:?}");
        // Yet breadth-first reaches most of the community only after most of the bulk.
        let mut members = 0;
        let ninety = order.iter().position(|p| {
            members += usize::from(matches!(p, Page::Member(_)));
            members * 10 >= s.members * 9
        });
        assert!(ninety.unwrap() > s.bulk * 3 / 4, "90% at {ninety:?}");
        let from_bulk: HashSet<usize> = (0..s.bulk)
            .flat_map(|b| web.links(Page::Bulk(b)))
            .filter_map(|p| match p {
                Page::Member(m) => Some(m),
                Page::Bulk(_) => None,
            })
            .collect();
        assert!(from_bulk.len() <= s.gateways, "{from_bulk:?}");
    }

    #[test]
    fn only_members_mention_the_topic_and_paths_round_trip() {
        let web = Community::new(CommunitySpec::default());
        assert!(web.render(Page::Member(3)).contains("orchid"));
        assert!(!web.render(Page::Bulk(3)).contains("orchid"));
        for page in [
            Page::Bulk(0),
            Page::Bulk(17),
            Page::Member(0),
            Page::Member(99),
        ] {
            assert_eq!(web.page_of_path(&Community::path(page)), Some(page));
        }
        for bad in ["/p/0.html", "/c/100.html", "/p/07.html", "/x"] {
            assert_eq!(web.page_of_path(bad), None, "{bad}");
        }
    }
}
