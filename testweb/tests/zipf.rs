//! Zipf-sized hosts: the sizes, reachability, serving, and the binary's delay-rule check.

mod common;

use std::time::Duration;
use testweb::graph::zipf_sizes;
use testweb::{Graph, GraphSpec};

#[test]
fn sizes_follow_zipf() {
    for (hosts, total, s) in [
        (1000, 5000, 1.0),
        (10_000, 50_000, 1.0),
        (50, 1000, 1.5),
        (7, 100, 0.0),
    ] {
        let sizes = zipf_sizes(hosts, total, s);
        assert_eq!(sizes.len(), hosts);
        let sum: usize = sizes.iter().sum();
        assert!(
            sum.abs_diff(total) <= total / 100 + 1,
            "{hosts} hosts, {total} pages, s {s}: sum {sum}"
        );
        assert!(sizes.iter().all(|&n| n >= 1));
        assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "never grows");
        assert_eq!(
            sizes[0],
            *sizes.iter().max().unwrap(),
            "host 0 is the largest"
        );
    }
    // The issue's shape: 1,000 hosts, about 5,000 pages, the largest about 13% of them.
    let sizes = zipf_sizes(1000, 5000, 1.0);
    assert!((660..=676).contains(&sizes[0]), "{}", sizes[0]);
    assert!(
        sizes[1].abs_diff(sizes[0] / 2) <= 1,
        "host 1 is half host 0"
    );
    // Fewer pages than hosts: one page each.
    assert_eq!(zipf_sizes(10, 3, 1.0), vec![1; 10]);
}

#[test]
fn every_page_is_reachable_and_served() {
    let sizes = zipf_sizes(40, 600, 1.0);
    let spec = GraphSpec {
        hosts: 40,
        children: 3,
        extra_links: 3,
        cross_host_permille: 300,
        page_padding: 100,
        seed: 11,
        ..GraphSpec::default()
    };
    let graph = Graph::with_host_pages(spec, sizes.clone());
    assert_eq!(graph.total_pages(), sizes.iter().sum::<usize>());
    for (h, &n) in sizes.iter().enumerate() {
        assert_eq!(graph.pages(h), n);
        for p in [0, n / 2, n - 1] {
            assert!(graph.links(h, p).iter().all(|&(t, q)| q < sizes[t]));
        }
    }
    let reach = graph.bfs(&graph.roots(), &|_, _| true, None);
    assert_eq!(reach.len(), graph.total_pages());
    // Without cross links too: the tree alone reaches every page of its host.
    let tree = Graph::with_host_pages(
        GraphSpec {
            hosts: 40,
            extra_links: 0,
            ..GraphSpec::default()
        },
        sizes.clone(),
    );
    let reach = tree.bfs(&tree.roots(), &|_, _| true, None);
    assert_eq!(reach.len(), graph.total_pages());

    let web = graph.start(Duration::ZERO, &|_| None).unwrap();
    for h in [0, 5, 39] {
        let mut c = common::Conn::open(web.port(h));
        let last = Graph::path(sizes[h] - 1);
        assert_eq!(c.get(&last).status, 200, "host {h} {last}");
        assert_eq!(c.get(&Graph::path(sizes[h])).status, 404, "host {h}");
    }
    web.shutdown();
}

/// The binary's JSON line with --zipf-pages and --check-delay-factor: two back-to-back requests
/// to host 0 break a 10× rule once.
#[test]
fn binary_checks_the_delay_rule() {
    let dir = std::env::temp_dir().join(format!("testweb-zipf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let seeds = dir.join("seeds");
    let args = ["--hosts", "5", "--zipf-pages", "50", "--latency-ms", "20"];
    let args = [&args[..], &["--check-delay-factor", "10"]].concat();
    let (child, urls, port) = common::start_binary(&args, &seeds);
    assert_eq!(urls.len(), 5);
    let largest = zipf_sizes(5, 50, 1.0)[0];
    let mut c = common::Conn::open(port);
    assert_eq!(c.get("/").status, 200);
    assert_eq!(c.get(&Graph::path(largest - 1)).status, 200);
    let out = common::stop_binary(child);
    let out = out.as_str();
    let want = format!(
        r#""overlaps":0,"delay_factor":10,"short_gaps":1,"largest_pages":{largest},"largest_requests":2,"largest_span_s":"#
    );
    assert!(out.contains(&want), "{out}");
    assert!(
        out.contains(r#""largest_idle_s":0.000,"ideal_s":"#),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_largest_late_web_links_host_0_only_from_deeper_pages_of_other_hosts() {
    let sizes = zipf_sizes(200, 3000, 1.0);
    let spec = GraphSpec {
        hosts: 200,
        children: 4,
        extra_links: 4,
        cross_host_permille: 200,
        seed: 18,
        ..GraphSpec::default()
    };
    let plain = Graph::with_host_pages(spec.clone(), sizes.clone());
    let late = Graph::with_host_pages(spec, sizes.clone()).with_largest_late();
    assert!(plain.links(0, 0).iter().any(|&(h, _)| h == 0));
    assert!(
        late.links(0, 0).iter().all(|&(h, _)| h != 0),
        "/ links none of its host"
    );
    let mut into_0 = 0;
    for (h, &n) in sizes.iter().enumerate().skip(1) {
        for p in 0..n {
            let to_0 = late.links(h, p).iter().filter(|&&(t, _)| t == 0).count();
            if p <= 4 {
                assert_eq!(to_0, 0, "host {h} page {p} is too shallow to link host 0");
            } else {
                assert_eq!(to_0, 1, "host {h} page {p}: its first extra link");
                into_0 += 1;
            }
        }
    }
    assert!(into_0 > 100, "{into_0}");
    // Host 0 is still crawled: most of its pages are reachable, none from a seed's page.
    let depth = late.bfs(&late.roots(), &|_, _| true, None);
    let host0: Vec<u32> = depth
        .iter()
        .filter(|((h, p), _)| *h == 0 && *p != 0)
        .map(|(_, d)| *d)
        .collect();
    assert!(
        host0.len() > sizes[0] * 9 / 10,
        "{} of {}",
        host0.len(),
        sizes[0]
    );
    assert!(
        host0.iter().all(|&d| d >= 2),
        "found only below other hosts' /"
    );
}
