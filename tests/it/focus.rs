//! `--focus`: on a test web with a planted topical community, the focused crawl reaches 90% of
//! the community with clearly fewer fetches than breadth-first, and still fetches every page
//! exactly once. Counts, not timing: with one worker the crawl's order does not depend on how
//! long the DUE's merges take (measured 621 against 1,045, the same under load).

use crate::util::{assert_same_set, counts, crawl};
use testweb::community::{Community, CommunitySpec};

/// Fetches (robots.txt left out) until `share` of `members` have been fetched, or None.
fn fetches_to_reach(urls: &[String], members: &[String], share: f64) -> Option<usize> {
    let need = (members.len() as f64 * share).ceil() as usize;
    let mut found = 0;
    urls.iter()
        .position(|u| {
            found += usize::from(members.contains(u));
            found >= need
        })
        .map(|i| i + 1)
}

#[test]
fn focused_crawl_reaches_the_community_with_fewer_fetches_than_breadth_first() {
    let web = Community::new(CommunitySpec {
        bulk: 1000,
        members: 50,
        ..CommunitySpec::default()
    });
    let server = web.start().unwrap();
    let seeds = format!("{}/\n", server.origin(0));
    let members: Vec<String> = web
        .member_paths()
        .iter()
        .map(|p| server.url(0, p))
        .collect();
    // One worker: the worker that asks for the focus's early merge waits for it, so with -j 1
    // the links it asked for are in the window before its next fetch and the order depends on
    // pages, not on how fast a merge runs: the focused crawl is run twice and must fetch in
    // the same order. (With -j 4 and a 1 ms rest, a loaded machine's slow merges let
    // breadth-first fetches run ahead: 816 fetches against a bound of 784, and 1,045 under a
    // busy loop on each core.) Without sitemaps: the seed host's /sitemap.xml (a 404) is not
    // the point here.
    let polite = [
        "--delay-factor",
        "0",
        "-j",
        "1",
        "--no-warc",
        "--no-sitemaps",
    ];
    let mut reached = Vec::new();
    let mut fetched_sets = Vec::new();
    let focus = ["--focus", "ORCHID"];
    for focus in [&[][..], &focus[..], &focus[..]] {
        let args: Vec<&str> = polite.iter().chain(focus).copied().collect();
        let outcome = crawl(&seeds, &args);
        assert_eq!(outcome.code, 0, "{}", outcome.stderr);
        let urls: Vec<String> = outcome.pages().iter().map(|r| r.url.clone()).collect();
        let twice: Vec<_> = counts(urls.iter())
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .collect();
        assert!(twice.is_empty(), "fetched more than once: {twice:?}");
        reached.push(fetches_to_reach(&urls, &members, 0.9).expect("community reached"));
        fetched_sets.push(urls);
    }
    assert_same_set(
        "pages of the focused crawl",
        &fetched_sets[0],
        &fetched_sets[1],
    );
    let (first, again) = (&fetched_sets[1], &fetched_sets[2]);
    let diverge = (0..first.len().max(again.len())).find(|&i| first.get(i) != again.get(i));
    assert_eq!(
        diverge, None,
        "two focused crawls fetched in different orders from this fetch on (merge timing leaks \
         into the order)"
    );
    let (breadth_first, focused) = (reached[0], reached[1]);
    assert!(
        breadth_first > 900,
        "breadth-first met the community at {breadth_first}: the test web lost its point"
    );
    assert!(
        focused * 4 <= breadth_first * 3,
        "focused crawl needed {focused} fetches for 90% of the community, breadth-first {breadth_first}"
    );
}
