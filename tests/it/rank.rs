//! `crawl rank DIR`: HITS on a hand-made links.tsv against a dense power-iteration reference,
//! the 0/1 reading of the graph, errors naming `links.tsv:LINE` (and the fix when a crawl
//! recorded none), the top authorities of a crawled community web, and the man page against
//! `crawl rank --help`.

use crate::util::{crawl, run_binary};
use std::path::Path;
use testweb::community::{Community, CommunitySpec};

/// Runs `crawl rank DIR ARGS…`.
fn rank(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["rank".to_owned(), dir.to_str().unwrap().to_owned()];
    all.extend(args.iter().map(|a| a.to_string()));
    run_binary(&all, None, dir)
}

/// (kind, rank, score, degree, URL) per output line.
fn parse(stdout: &str) -> Vec<(String, usize, f64, u32, String)> {
    stdout
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 5, "not 5 columns: {line:?}");
            let kind = f[0].to_owned();
            (
                kind,
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4].into(),
            )
        })
        .collect()
}

/// HITS by dense power iteration (1000 rounds) on the 0/1 adjacency matrix.
fn dense_hits(n: usize, edges: &[(usize, usize)]) -> (Vec<f64>, Vec<f64>) {
    let mut m = vec![vec![0.0; n]; n];
    for &(f, t) in edges {
        m[f][t] = 1.0;
    }
    let unit = |v: Vec<f64>| {
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.into_iter().map(|x| x / norm).collect::<Vec<f64>>()
    };
    let (mut auth, mut hub) = (vec![0.0; n], vec![1.0; n]);
    for _ in 0..1000 {
        auth = unit(
            (0..n)
                .map(|p| (0..n).map(|q| m[q][p] * hub[q]).sum())
                .collect(),
        );
        hub = unit(
            (0..n)
                .map(|p| (0..n).map(|q| m[p][q] * auth[q]).sum())
                .collect(),
        );
    }
    (auth, hub)
}

#[test]
fn scores_match_a_dense_reference_and_the_graph_is_zero_one() {
    let dir = tempfile::tempdir().unwrap();
    let url = |i: usize| format!("http://h.test/{i}");
    let edges = [
        (0, 1),
        (0, 2),
        (0, 3),
        (1, 2),
        (1, 3),
        (2, 3),
        (4, 3),
        (4, 2),
        (5, 1),
        (3, 0),
    ];
    let mut text = String::new();
    for page in 0..6 {
        for &(f, t) in edges.iter().filter(|(f, _)| *f == page) {
            text += &format!("{}\t{}\n", url(f), url(t));
            if f == 0 {
                // Repeats within a page and a self-link must not change anything.
                text += &format!("{}\t{}\n{}\t{}\n", url(f), url(t), url(f), url(f));
            }
        }
    }
    std::fs::write(dir.path().join("links.tsv"), text).unwrap();
    let (code, stdout, stderr) = rank(dir.path(), &["--top", "6"]);
    assert_eq!(code, 0, "{stderr}");
    let (auth, hub) = dense_hits(6, &edges);
    let rows = parse(&stdout);
    for (kind, reference) in [("authority", &auth), ("hub", &hub)] {
        let listed: Vec<_> = rows.iter().filter(|r| r.0 == kind).collect();
        // Pages the reference scores clearly above 0 are all listed (a score still decaying
        // towards 0 may be listed as 0.000000).
        let clear = reference.iter().filter(|&&s| s > 1e-5).count();
        assert!(listed.len() >= clear, "{kind}s listed:\n{stdout}");
        for (i, (_, rank, score, _, u)) in listed.iter().enumerate() {
            let page: usize = u.rsplit('/').next().unwrap().parse().unwrap();
            assert_eq!(*rank, i + 1);
            assert!(
                (score - reference[page]).abs() < 2e-6,
                "{kind} {u}: {score} vs {}",
                reference[page]
            );
        }
        let scores: Vec<f64> = listed.iter().map(|r| r.2).collect();
        assert!(
            scores.windows(2).all(|w| w[0] >= w[1]),
            "{kind}s not best first: {scores:?}"
        );
    }
    // Page 3 is linked from 0, 1, 2 and 4: its degree counts distinct pages.
    let top_authority = rows.iter().find(|r| r.0 == "authority").unwrap();
    assert_eq!(
        (top_authority.3, top_authority.4.as_str()),
        (4, "http://h.test/3")
    );
    assert!(
        stderr.contains("6 pages, 10 links") && stderr.contains("stable"),
        "{stderr}"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(
        leftovers.len(),
        1,
        "the temporary directory is removed: {leftovers:?}"
    );
}

#[test]
fn bad_lines_are_reported_as_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let links = dir.path().join("links.tsv");
    for (text, reason) in [
        (
            "http://a/\thttp://b/\nhttp://a/ http://b/\n",
            "links.tsv:2: expected two tab-separated URLs",
        ),
        (
            "http://a/\thttp://b/\nhttp://b/\tmailto:x\n",
            "links.tsv:2: to_url \"mailto:x\" is not an http(s) URL",
        ),
    ] {
        std::fs::write(&links, text).unwrap();
        let (code, _, stderr) = rank(dir.path(), &[]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(reason), "expected {reason:?} in {stderr:?}");
    }
    // A torn last line (a crawl still writing) is left out, with a warning.
    std::fs::write(&links, "http://a/\thttp://b/\nhttp://b/\thttp://").unwrap();
    let (code, stdout, stderr) = rank(dir.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("links.tsv:2: incomplete last line"),
        "{stderr}"
    );
    assert_eq!(parse(&stdout).len(), 2, "{stdout}");
    std::fs::remove_file(&links).unwrap();
    let (code, _, stderr) = rank(dir.path(), &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("links.tsv: cannot open the link graph"),
        "{stderr}"
    );
    assert!(
        stderr.contains("crawl with --link-graph to record the link graph"),
        "{stderr}"
    );
}

/// A crawl without --link-graph leaves no links.tsv: rank names the file and the fix.
#[test]
fn a_crawl_without_link_graph_is_told_the_fix() {
    let (_graph, web) = crate::util::small_web(1, 5, 12);
    let outcome = crawl(
        &format!("{}\n", web.url(0, "/")),
        &["--delay-factor", "0", "--no-warc"],
    );
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    let (code, stdout, stderr) = rank(&outcome.out, &[]);
    assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
    let file = outcome.out.join("links.tsv");
    let want = format!(
        "{}: cannot open the link graph (No such file or directory (os error 2)); \
         crawl with --link-graph to record the link graph",
        file.display()
    );
    assert!(stderr.contains(&want), "expected {want:?} in {stderr:?}");
    // A DIR that is no directory at all gets the other question.
    let nothing = outcome.out.join("nothing").to_str().unwrap().to_owned();
    let (code, _, stderr) = run_binary(&["rank".into(), nothing], None, &outcome.out);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("is DIR a crawl's --out directory, crawled with --link-graph?"),
        "{stderr}"
    );
}

#[test]
fn the_top_authorities_of_a_crawled_community_web_are_its_members() {
    let web = Community::new(CommunitySpec {
        bulk: 300,
        members: 30,
        ..CommunitySpec::default()
    });
    let server = web.start().unwrap();
    let outcome = crawl(
        &format!("{}/\n", server.origin(0)),
        &["--delay-factor", "0", "--no-warc", "--link-graph"],
    );
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    let (code, stdout, stderr) = rank(&outcome.out, &["--top", "10"]);
    assert_eq!(code, 0, "{stderr}");
    let rows = parse(&stdout);
    assert_eq!(rows.len(), 20, "{stdout}");
    let outsiders: Vec<_> = rows.iter().filter(|r| !r.4.contains("/c/")).collect();
    assert!(
        outsiders.is_empty(),
        "top hubs and authorities outside the community: {outsiders:?}"
    );
}

#[test]
fn the_man_page_documents_exactly_the_options_of_crawl_rank_help() {
    let (code, help, _) = run_binary(&["rank".into(), "--help".into()], None, Path::new("."));
    assert_eq!(code, 0);
    let man = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/man/crawl-rank.1"))
        .unwrap()
        .replace("\\-", "-");
    let options = |text: &str| -> std::collections::BTreeSet<String> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(
        options(&help),
        options(&man),
        "crawl rank --help vs man/crawl-rank.1"
    );
}
