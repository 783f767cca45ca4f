//! `crawl cachesim`: the policies against simple reference caches and against each other, and
//! the subcommand's table, plot and errors.

use crawl::{Policy, Simulator, Trace};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

/// LRU by linear search: a list ordered from least to most recently used.
fn reference_lru(keys: &[u64], k: usize) -> u64 {
    let mut list: Vec<u64> = Vec::new();
    let mut misses = 0;
    for &key in keys {
        if let Some(at) = list.iter().position(|&x| x == key) {
            list.remove(at);
        } else {
            misses += 1;
            if list.len() == k {
                list.remove(0);
            }
        }
        list.push(key);
    }
    misses
}

/// CLOCK as the paper states it: a circle of (key, mark) and a hand.
fn reference_clock(keys: &[u64], k: usize) -> u64 {
    let (mut circle, mut hand, mut misses): (Vec<(u64, bool)>, usize, u64) = (Vec::new(), 0, 0);
    for &key in keys {
        if let Some(item) = circle.iter_mut().find(|(x, _)| *x == key) {
            item.1 = true;
            continue;
        }
        misses += 1;
        if circle.len() < k {
            circle.push((key, false));
            continue;
        }
        loop {
            let slot = hand;
            hand = (hand + 1) % k;
            if circle[slot].1 {
                circle[slot].1 = false;
            } else {
                circle[slot] = (key, false);
                break;
            }
        }
    }
    misses
}

/// Belady by brute force: on a miss with a full cache, scan the future for every cached key
/// and the new one; whichever is requested last (or never) is left out.
fn reference_min(keys: &[u64], k: usize) -> u64 {
    let mut cache: Vec<u64> = Vec::new();
    let mut misses = 0;
    for (t, &key) in keys.iter().enumerate() {
        if cache.contains(&key) {
            continue;
        }
        misses += 1;
        let next_use = |x: u64| {
            keys[t + 1..]
                .iter()
                .position(|&y| y == x)
                .unwrap_or(usize::MAX)
        };
        if cache.len() < k {
            cache.push(key);
            continue;
        }
        let (at, farthest) = cache
            .iter()
            .enumerate()
            .map(|(i, &x)| (i, next_use(x)))
            .max_by_key(|&(_, n)| n)
            .unwrap();
        if next_use(key) < farthest {
            cache[at] = key;
        }
    }
    misses
}

/// STATIC: the k most requested keys, each charged its first request.
fn reference_static(keys: &[u64], k: usize) -> u64 {
    let mut counts: HashMap<u64, u64> = HashMap::new();
    for &key in keys {
        *counts.entry(key).or_default() += 1;
    }
    let mut by_count: Vec<u64> = counts.into_values().collect();
    by_count.sort_unstable_by(|a, b| b.cmp(a));
    let hits: u64 = by_count.iter().take(k).map(|c| c - 1).sum();
    keys.len() as u64 - hits
}

/// Keys with locality: runs of recent keys mixed with fresh ones, spread over u64.
fn keys_strategy() -> impl Strategy<Value = Vec<u64>> {
    proptest::collection::vec(0u64..60, 0..400).prop_map(|small| {
        small
            .into_iter()
            .map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (k << 3))
            .collect()
    })
}

proptest! {
    #[test]
    fn lru_clock_min_and_static_agree_with_references(keys in keys_strategy(), k in 1usize..25) {
        let trace: Trace = keys.iter().copied().collect();
        let sim = Simulator::new(&trace, 7);
        prop_assert_eq!(sim.misses(Policy::Lru, k as u64), reference_lru(&keys, k));
        prop_assert_eq!(sim.misses(Policy::Clock, k as u64), reference_clock(&keys, k));
        prop_assert_eq!(sim.misses(Policy::Min, k as u64), reference_min(&keys, k));
        prop_assert_eq!(sim.misses(Policy::Static, k as u64), reference_static(&keys, k));
    }

    #[test]
    fn min_bounds_every_policy_and_infinite_counts_distinct(keys in keys_strategy(), k in 1u64..70) {
        let trace: Trace = keys.iter().copied().collect();
        let sim = Simulator::new(&trace, k);
        let distinct = keys.iter().collect::<HashSet<_>>().len() as u64;
        let min = sim.misses(Policy::Min, k);
        prop_assert_eq!(sim.misses(Policy::Infinite, k), distinct);
        prop_assert!(distinct <= min);
        for policy in [Policy::Random, Policy::Static, Policy::Lru, Policy::Clock] {
            let m = sim.misses(policy, k);
            prop_assert!(min <= m, "MIN {} > {:?} {} at size {}", min, policy, m, k);
            prop_assert!(m <= keys.len() as u64);
        }
    }
}

/// A trace of 200,000 requests over 20,000 URLs with a skewed, drifting popularity: every
/// policy is checked at every default-like size, beyond what the small property cases reach.
#[test]
fn min_bounds_every_policy_on_a_long_trace() {
    let mut state = 42u64;
    let keys: Vec<u64> = (0..200_000u64)
        .map(|t| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = state >> 33;
            // Squaring skews towards small offsets; the window drifts with t.
            let offset = (r % 1000) * (r % 1000) / 50;
            (t / 10 + offset) % 20_000
        })
        .collect();
    let trace: Trace = keys.iter().copied().collect();
    let distinct = keys.iter().collect::<HashSet<_>>().len() as u64;
    let table = crawl::simulate(&trace, &[1, 32, 256, 2048, 16384, 1 << 20], 3);
    for (size, row) in table.sizes.iter().zip(&table.misses) {
        let [random, stat, lru, clock, min, infinite] = *row;
        assert_eq!(infinite, distinct, "INFINITE at size {size}");
        for (name, m) in [
            ("RANDOM", random),
            ("STATIC", stat),
            ("LRU", lru),
            ("CLOCK", clock),
        ] {
            assert!(
                infinite <= min && min <= m,
                "size {size}: MIN {min}, {name} {m}"
            );
        }
    }
    assert!(
        table.misses[5].iter().all(|&m| m == distinct),
        "a cache of 2^20 holds all"
    );
}

fn cachesim(args: &[&str], stdin: Option<&[u8]>) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec!["cachesim".to_owned()];
    all.extend(args.iter().map(|s| s.to_string()));
    crate::util::run_binary(&all, stdin, dir.path())
}

#[test]
fn subcommand_prints_a_table_and_a_plot() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (0..3000)
        .map(|i| format!("http://h/{}\n", (i * 7 % 13) * (i % 50)))
        .collect();
    let distinct = lines.iter().collect::<HashSet<_>>().len();
    let trace = dir.path().join("trace.txt");
    std::fs::write(&trace, lines.concat()).unwrap();
    let svg = dir.path().join("plot.svg");
    let (code, stdout, stderr) = cachesim(
        &[
            trace.to_str().unwrap(),
            "--counts",
            "--sizes",
            "4,2^4,64",
            "--svg",
            svg.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, 0, "stderr: {stderr}");
    assert!(
        stderr.contains(&format!("3000 requests, {distinct} distinct")),
        "{stderr}"
    );
    let rows: Vec<Vec<&str>> = stdout.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(
        rows[0],
        [
            "size", "RANDOM", "STATIC", "LRU", "CLOCK", "MIN", "INFINITE"
        ]
    );
    assert_eq!(
        rows.iter().skip(1).map(|r| r[0]).collect::<Vec<_>>(),
        ["4", "16", "64"]
    );
    for row in &rows[1..] {
        let m: Vec<u64> = row[1..].iter().map(|c| c.parse().unwrap()).collect();
        assert_eq!(m[5], distinct as u64, "INFINITE column: {row:?}");
        assert!(
            m[..4].iter().all(|&other| m[4] <= other),
            "MIN is not least: {row:?}"
        );
    }
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.starts_with("<svg") && plot.matches("<polyline").count() == 6);

    // The same trace on stdin, as rates.
    let (code, stdout, _) = cachesim(&["-", "--sizes", "64"], Some(lines.concat().as_bytes()));
    assert_eq!(code, 0);
    let rate: f64 = stdout
        .lines()
        .nth(1)
        .unwrap()
        .split('\t')
        .nth(6)
        .unwrap()
        .parse()
        .unwrap();
    assert!((rate - distinct as f64 / 3000.0).abs() < 1e-6, "{stdout}");
}

#[test]
fn bad_input_is_exit_2_naming_it() {
    let (code, _, stderr) = cachesim(&["no-such-trace.txt"], None);
    assert_eq!(code, 2);
    assert!(stderr.contains("no-such-trace.txt"), "{stderr}");
    let (code, _, stderr) = cachesim(&["-"], Some(b"\n\n"));
    assert_eq!(code, 2);
    assert!(stderr.contains("holds no URLs"), "{stderr}");
    let (code, _, stderr) = cachesim(&["-", "--sizes", "10,ten"], Some(b"http://a/\n"));
    assert_eq!(code, 2);
    assert!(stderr.contains("\"ten\""), "{stderr}");
}

/// `--long` option names in `text` (a `-` after a word character does not start one).
fn long_options(text: &str) -> HashSet<String> {
    let mut found = HashSet::new();
    for (i, _) in text.match_indices("--") {
        let before = text[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '-') {
            continue;
        }
        let name: String = text[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if name.starts_with(|c: char| c.is_ascii_alphabetic()) {
            found.insert(format!("--{name}"));
        }
    }
    found
}

#[test]
fn man_page_and_help_list_the_same_options() {
    let (code, help, _) = cachesim(&["--help"], None);
    assert_eq!(code, 0);
    let man = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/man/crawl-cachesim.1"))
        .unwrap()
        .replace("\\-", "-");
    let mut in_help = long_options(&help);
    in_help.remove("--help");
    in_help.remove("--version");
    let in_man = long_options(&man);
    assert_eq!(
        in_help, in_man,
        "crawl cachesim --help against man/crawl-cachesim.1"
    );
}
