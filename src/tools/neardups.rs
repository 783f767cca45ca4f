//! `crawl neardups DIR`: the clusters of near-duplicate pages a crawl found
//! (`--near-duplicates`), read from `DIR/neardups.tsv` (`seen::neardup` writes a line per
//! near-duplicate: first page of its cluster, member, resemblance, earlier page).
//!
//! A member listed twice (a page fetched again on a resume or a recrawl) keeps its last line.
//! Memory: the file's lines (one per near-duplicate), not the crawl's pages.

use crate::exit::Failure;
use crate::seen::neardup::CLUSTERS;
use anyhow::{Context, anyhow};
use clap::Parser;
use rustc_hash::FxHashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

/// List the clusters of near-duplicate pages a crawl found (with --near-duplicates).
///
/// Reads DIR/neardups.tsv. Output, clusters with the most members first (then in the order
/// they were found): a line `FIRST<TAB>N` (the cluster's first page, and how many pages nearly
/// repeat it or one of its members), then one line per member, `<TAB>RESEMBLANCE<TAB>MEMBER
/// <TAB>EARLIER`: the member's estimated resemblance to EARLIER, the earlier page its note
/// names. The summary (clusters, members) goes to stderr.
#[derive(Parser, Debug)]
#[command(version, max_term_width = 100)]
pub struct NeardupsArgs {
    /// A crawl's state directory (the one given to --out, crawled with --near-duplicates).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Print nothing on stderr but errors (no summary line).
    #[arg(short, long)]
    pub quiet: bool,
}

/// One member of a cluster.
struct Member {
    member: String,
    resemblance: String,
    earlier: String,
}

pub fn run(args: NeardupsArgs) -> Result<(), Failure> {
    let path = args.dir.join(CLUSTERS);
    let file = std::fs::File::open(&path).map_err(|e| {
        Failure::bad_input(anyhow!(
            "{}: cannot open the near-duplicate clusters ({e}); is DIR a crawl's --out \
             directory, crawled with --near-duplicates note or skip-links?",
            path.display()
        ))
    })?;
    // Cluster order by first appearance; a member's latest line wins.
    let mut order: Vec<String> = Vec::new();
    let mut clusters: FxHashMap<String, Vec<Member>> = FxHashMap::default();
    let mut where_is: FxHashMap<String, (String, usize)> = FxHashMap::default();
    for (n, line) in BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        let fields: Vec<&str> = line.split('\t').collect();
        let [first, member, resemblance, earlier] = fields[..] else {
            return Err(Failure::bad_input(anyhow!(
                "{}:{}: expected 4 tab-separated fields (first page, member, resemblance, \
                 earlier page), found {}; the file is not a crawl's cluster file",
                path.display(),
                n + 1,
                fields.len()
            )));
        };
        if let Some((cluster, i)) = where_is.remove(member) {
            // Replaced below: emptied here, skipped when printed.
            clusters.get_mut(&cluster).expect("listed")[i]
                .member
                .clear();
        }
        let list = clusters.entry(first.to_owned()).or_insert_with(|| {
            order.push(first.to_owned());
            Vec::new()
        });
        where_is.insert(member.to_owned(), (first.to_owned(), list.len()));
        list.push(Member {
            member: member.to_owned(),
            resemblance: resemblance.to_owned(),
            earlier: earlier.to_owned(),
        });
    }
    let count = |first: &String| {
        clusters[first]
            .iter()
            .filter(|m| !m.member.is_empty())
            .count()
    };
    let mut listed: Vec<(usize, &String)> = order.iter().map(|f| (count(f), f)).collect();
    listed.retain(|&(n, _)| n > 0);
    listed.sort_by_key(|&(n, _)| std::cmp::Reverse(n));
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut members = 0;
    for (n, first) in &listed {
        writeln!(out, "{first}\t{n}").context("writing to stdout")?;
        for m in clusters[*first].iter().filter(|m| !m.member.is_empty()) {
            writeln!(out, "\t{}\t{}\t{}", m.resemblance, m.member, m.earlier)
                .context("writing to stdout")?;
        }
        members += n;
    }
    out.flush().context("writing to stdout")?;
    if !args.quiet {
        eprintln!(
            "crawl neardups: {} clusters, {members} near-duplicate pages",
            listed.len()
        );
    }
    Ok(())
}
