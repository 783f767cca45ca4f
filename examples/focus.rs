//! The focused crawl's must-show figures (run by `benches/focus.sh`): serves a community test
//! web (`testweb::community`) on loopback, crawls it breadth-first and with `--focus`, prints
//! how many fetches each needed to reach 90% of the community, then `crawl rank --top 10` of
//! the breadth-first crawl. One host, politeness reduced to `--min-delay 0.002` (so a DUE merge,
//! tens of milliseconds on a loaded machine, is not hundreds of loopback fetches).
//!
//! Usage: focus CRAWL_BINARY [BULK MEMBERS]   (defaults 3000 and 100)

use std::process::Command;
use testweb::community::{Community, CommunitySpec};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let binary = args
        .first()
        .expect("usage: focus CRAWL_BINARY [BULK MEMBERS]");
    let number = |i: usize, default: usize| args.get(i).map_or(default, |a| a.parse().unwrap());
    let spec = CommunitySpec {
        bulk: number(1, 3000),
        members: number(2, 100),
        ..CommunitySpec::default()
    };
    let web = Community::new(spec.clone());
    let server = web.start().expect("starting the test web");
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{}/\n", server.origin(0))).unwrap();
    println!(
        "web: {} bulk pages, {} community pages mentioning {:?}, {} gateways",
        spec.bulk, spec.members, spec.topic, spec.gateways
    );
    let members: Vec<String> = web
        .member_paths()
        .iter()
        .map(|p| server.url(0, p))
        .collect();
    for (name, extra) in [
        // `crawl rank` below reads the breadth-first crawl's link graph.
        ("breadth-first", vec!["--link-graph"]),
        ("focused", vec!["--focus", "orchid"]),
    ] {
        let out = dir.path().join(name);
        let run = Command::new(binary)
            .arg(&seeds)
            .arg("--out")
            .arg(&out)
            .args([
                "--delay-factor",
                "0",
                "--min-delay",
                "0.002",
                "--no-warc",
                "-q",
            ])
            .args(&extra)
            .output()
            .expect("running crawl");
        assert!(run.status.success(), "{run:?}");
        let log = String::from_utf8(run.stdout).unwrap();
        let urls: Vec<&str> = log
            .lines()
            .filter(|l| !l.ends_with("\trobots"))
            .map(|l| l.split('\t').nth(5).unwrap())
            .collect();
        let need = (members.len() * 9).div_ceil(10);
        let mut found = 0;
        let reached = urls.iter().position(|u| {
            found += usize::from(members.iter().any(|m| m == u));
            found >= need
        });
        println!(
            "{name}: {} fetches to reach 90% of the community ({need} of {} pages); {} fetches in all",
            reached.map_or("never".into(), |i| (i + 1).to_string()),
            members.len(),
            urls.len()
        );
        if name == "breadth-first" {
            let rank = Command::new(binary)
                .arg("rank")
                .arg(&out)
                .args(["--top", "10"])
                .output()
                .expect("running crawl rank");
            assert!(rank.status.success(), "{rank:?}");
            println!("$ crawl rank DIR --top 10   (breadth-first crawl)");
            print!("{}", String::from_utf8_lossy(&rank.stdout));
            eprint!("{}", String::from_utf8_lossy(&rank.stderr));
        }
    }
}
