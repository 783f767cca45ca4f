//! `crawl rank DIR`: hubs and authorities (HITS, see `hits`) of the link graph a crawl recorded
//! in `DIR/links.tsv` (with `--link-graph`), for crawls larger than memory's comfort.
//!
//! Three kinds of streaming pass over files, never the graph in memory:
//! 1. `links.tsv` once: each URL gets a dense id through its 64-bit checksum (a map of
//!    checksum → id, 12–24 bytes per page), each line is checked (a bad line is an error naming
//!    `links.tsv:LINE`), and the edges go to a binary file of little-endian u32 pairs in a
//!    private temporary directory (under DIR, or `--tmp`), removed at the end. The graph is
//!    taken as 0/1: a page's links are one block of lines (the crawler writes them together),
//!    duplicates within the block count once, self-links not at all, and a page whose block
//!    appears again (refetched after a crash) keeps its first block only.
//! 2. The edge file twice per HITS round (authorities, then hubs).
//! 3. `links.tsv` once more, only to find the URL strings of the pages printed.
//!
//! Memory: per page, its checksum (8 bytes, the map is dropped after pass 1), two degrees
//! (8 bytes) and four f64 score vectors (32 bytes); a million pages take about 50 MB.

use crate::exit::Failure;
use crate::frontier::hits::{self, Edges, Stop};
use crate::seen::checksum::checksum;
use anyhow::{Context, Result, anyhow, bail};
use clap::Parser;
use rustc_hash::{FxHashMap, FxHashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Print the top hubs and authorities (Kleinberg's HITS) of a crawl's link graph.
///
/// Reads DIR/links.tsv (written by a crawl with --link-graph) in streaming passes. Output, one
/// tab-separated line per page: kind (`authority` or `hub`), rank (1 = best), score
/// (unit-length vector, 6 decimals), degree (distinct pages linking to it for an authority,
/// distinct pages it links to for a hub), URL. Authorities come first, then hubs; pages
/// scoring 0 are not listed.
#[derive(Parser, Debug)]
#[command(version, max_term_width = 100)]
pub struct RankArgs {
    /// A crawl's state directory (the one given to --out, with --link-graph); its links.tsv is
    /// read.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// How many authorities and how many hubs to print.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub top: u64,

    /// Stop iterating after this many rounds even if the top scores are not yet stable.
    ///
    /// Rounds stop earlier once the top N of both lists keep their order and no score moves
    /// by more than 1e-6.
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub max_rounds: u32,

    /// Directory for the temporary edge file (default: DIR); removed when done.
    #[arg(long, value_name = "DIR")]
    pub tmp: Option<PathBuf>,

    /// Print nothing on stderr but errors (no summary line).
    #[arg(short, long)]
    pub quiet: bool,
}

/// What pass 1 found.
struct Graph {
    /// Checksum of each page's URL, by id.
    checksums: Vec<u64>,
    in_degree: Vec<u32>,
    out_degree: Vec<u32>,
    edges: u64,
    duplicates: u64,
    self_links: u64,
    repeated_pages: u64,
    /// Bytes of links.tsv read (the file may still be growing).
    bytes: u64,
}

/// Runs `crawl rank`. A missing or malformed links.tsv is bad input (exit status 2); a crawl
/// writes it only with `--link-graph`, which the error says.
pub fn run(args: RankArgs) -> Result<(), Failure> {
    let links = args.dir.join(crate::output::links::FILE_NAME);
    let input = File::open(&links).map_err(|e| {
        let fix = match e.kind() {
            std::io::ErrorKind::NotFound if args.dir.is_dir() => {
                "crawl with --link-graph to record the link graph"
            }
            _ => "is DIR a crawl's --out directory, crawled with --link-graph?",
        };
        Failure::bad_input(anyhow!(
            "{}: cannot open the link graph ({e}); {fix}",
            links.display()
        ))
    })?;
    let tmp_base = args.tmp.as_deref().unwrap_or(&args.dir);
    let tmp = tempfile::Builder::new()
        .prefix("rank-tmp-")
        .tempdir_in(tmp_base)
        .with_context(|| format!("creating a temporary directory in {}", tmp_base.display()))?;
    let edge_path = tmp.path().join("edges.bin");
    let graph = read_graph(&links, input, &edge_path)?;
    let n = graph.checksums.len();
    let stop = Stop {
        top: args.top as usize,
        max_rounds: args.max_rounds,
        ..Stop::default()
    };
    let scores = hits::hits(n, &mut EdgeFile(edge_path), &stop)?;
    let top_a = hits::top(&scores.authority, args.top as usize);
    let top_h = hits::top(&scores.hub, args.top as usize);
    let names = names_of(
        &links,
        graph.bytes,
        &graph.checksums,
        top_a.iter().chain(&top_h),
    )?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let lists = [
        ("authority", &top_a, &scores.authority, &graph.in_degree),
        ("hub", &top_h, &scores.hub, &graph.out_degree),
    ];
    for (kind, ids, score, degree) in lists {
        for (rank, &id) in ids.iter().enumerate() {
            let i = id as usize;
            let url = &names[&graph.checksums[i]];
            let line = format!(
                "{kind}\t{}\t{:.6}\t{}\t{url}\n",
                rank + 1,
                score[i],
                degree[i]
            );
            if let Err(e) = out.write_all(line.as_bytes()) {
                return Ok(quiet_on_broken_pipe(e)?);
            }
        }
    }
    if let Err(e) = out.flush() {
        return Ok(quiet_on_broken_pipe(e)?);
    }
    if !args.quiet {
        eprintln!(
            "crawl rank: {n} pages, {} links ({} repeats within a page, {} self-links and {} \
             repeated pages left out), {} rounds ({})",
            graph.edges,
            graph.duplicates,
            graph.self_links,
            graph.repeated_pages,
            scores.rounds,
            if scores.converged {
                "stable"
            } else {
                "round cap reached; try a larger --max-rounds"
            }
        );
    }
    Ok(tmp.close().context("removing the temporary edge file")?)
}

/// `| head` is a normal way to stop reading.
fn quiet_on_broken_pipe(e: std::io::Error) -> Result<()> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(e).context("writing the ranking")
    }
}

/// Pass 1: ids, degrees, and the deduplicated binary edge file.
fn read_graph(links: &Path, input: File, edge_path: &Path) -> Result<Graph, Failure> {
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let edge_file =
        File::create(edge_path).with_context(|| format!("creating {}", edge_path.display()))?;
    let mut edges_out = BufWriter::with_capacity(1 << 16, edge_file);
    let mut ids: FxHashMap<u64, u32> = FxHashMap::default();
    let mut g = Graph {
        checksums: Vec::new(),
        in_degree: Vec::new(),
        out_degree: Vec::new(),
        edges: 0,
        duplicates: 0,
        self_links: 0,
        repeated_pages: 0,
        bytes: 0,
    };
    let mut id_of = |key: u64, g: &mut Graph| -> Result<u32> {
        let next = u32::try_from(g.checksums.len()).context("more than 2^32 pages")?;
        Ok(*ids.entry(key).or_insert_with(|| {
            g.checksums.push(key);
            g.in_degree.push(0);
            g.out_degree.push(0);
            next
        }))
    };
    let mut has_links: FxHashSet<u32> = FxHashSet::default();
    let mut block: Option<u32> = None;
    let mut targets: Vec<u32> = Vec::new();
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("reading {}", links.display()))?;
        if read == 0 {
            break;
        }
        number += 1;
        if line.last() != Some(&b'\n') {
            eprintln!(
                "crawl rank: {}:{number}: incomplete last line (a crawl still writing, or \
                 stopped mid-write) left out",
                links.display()
            );
            break;
        }
        g.bytes += read as u64;
        let (from, to) = parse_line(&line).map_err(|reason| {
            Failure::bad_input(anyhow!("{}:{number}: {reason}", links.display()))
        })?;
        let (from, to) = (id_of(checksum(from), &mut g)?, id_of(checksum(to), &mut g)?);
        if block != Some(from) {
            flush_block(block, &mut targets, &mut has_links, &mut g, &mut edges_out)?;
            block = Some(from);
        }
        targets.push(to);
    }
    flush_block(block, &mut targets, &mut has_links, &mut g, &mut edges_out)?;
    edges_out
        .into_inner()
        .map_err(|e| e.into_error())
        .and_then(|f| f.sync_data())
        .with_context(|| format!("writing {}", edge_path.display()))?;
    Ok(g)
}

/// Writes one page's distinct links as edges, unless the page already had its block.
fn flush_block(
    from: Option<u32>,
    targets: &mut Vec<u32>,
    has_links: &mut FxHashSet<u32>,
    g: &mut Graph,
    out: &mut impl Write,
) -> Result<()> {
    let Some(from) = from else { return Ok(()) };
    if !has_links.insert(from) {
        g.repeated_pages += 1;
        targets.clear();
        return Ok(());
    }
    let all = targets.len();
    targets.retain(|&t| t != from);
    g.self_links += (all - targets.len()) as u64;
    let before = targets.len();
    targets.sort_unstable();
    targets.dedup();
    g.duplicates += (before - targets.len()) as u64;
    for &to in targets.iter() {
        out.write_all(&from.to_le_bytes())?;
        out.write_all(&to.to_le_bytes())?;
        g.in_degree[to as usize] += 1;
    }
    g.out_degree[from as usize] += targets.len() as u32;
    g.edges += targets.len() as u64;
    targets.clear();
    Ok(())
}

/// `from_url TAB to_url NEWLINE`, both http(s) URLs, or the reason it is not.
pub fn parse_line(line: &[u8]) -> Result<(&[u8], &[u8]), String> {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let body = body.strip_suffix(b"\r").unwrap_or(body);
    let fields: Vec<&[u8]> = body.split(|&b| b == b'\t').collect();
    if fields.len() != 2 {
        return Err(format!(
            "expected two tab-separated URLs (from_url TAB to_url), found {} field{}",
            fields.len(),
            if fields.len() == 1 { "" } else { "s" }
        ));
    }
    for (which, url) in ["from_url", "to_url"].iter().zip(&fields) {
        let scheme = url.starts_with(b"http://") || url.starts_with(b"https://");
        if !scheme
            || url
                .iter()
                .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(format!(
                "{which} {:?} is not an http(s) URL",
                String::from_utf8_lossy(url)
            ));
        }
    }
    Ok((fields[0], fields[1]))
}

/// Pass 3: the URL strings of the pages `wanted` (ids), read from the first `bytes` of links.tsv.
fn names_of<'a>(
    links: &Path,
    bytes: u64,
    checksums: &[u64],
    wanted: impl Iterator<Item = &'a u32>,
) -> Result<FxHashMap<u64, String>> {
    let mut missing: FxHashSet<u64> = wanted.map(|&id| checksums[id as usize]).collect();
    let mut names = FxHashMap::default();
    let file = File::open(links).with_context(|| format!("opening {}", links.display()))?;
    let mut reader = BufReader::with_capacity(1 << 16, file.take(bytes));
    let mut line = Vec::new();
    while !missing.is_empty() {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            bail!("{} changed while it was read", links.display());
        }
        let (from, to) = parse_line(&line).map_err(|e| anyhow!(e))?;
        for url in [from, to] {
            let key = checksum(url);
            if missing.remove(&key) {
                names.insert(key, String::from_utf8_lossy(url).into_owned());
            }
        }
    }
    Ok(names)
}

/// The binary edge file of pass 1, streamed once per call.
struct EdgeFile(PathBuf);

impl Edges for EdgeFile {
    fn each(&mut self, f: &mut dyn FnMut(u32, u32)) -> Result<()> {
        let mut file =
            File::open(&self.0).with_context(|| format!("opening {}", self.0.display()))?;
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let mut filled = 0;
            while filled < buf.len() {
                match file.read(&mut buf[filled..])? {
                    0 => break,
                    k => filled += k,
                }
            }
            if filled % 8 != 0 {
                bail!("{}: truncated edge file", self.0.display());
            }
            for pair in buf[..filled].chunks_exact(8) {
                let from = u32::from_le_bytes(pair[..4].try_into().unwrap());
                let to = u32::from_le_bytes(pair[4..].try_into().unwrap());
                f(from, to);
            }
            if filled < buf.len() {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_checked_with_a_reason() {
        let ok = parse_line(b"http://a/\thttps://b/x\n").unwrap();
        assert_eq!(ok, (&b"http://a/"[..], &b"https://b/x"[..]));
        let reason = |l: &[u8]| parse_line(l).unwrap_err();
        assert!(reason(b"http://a/\n").contains("found 1 field"));
        assert!(reason(b"http://a/\thttp://b/\thttp://c/\n").contains("found 3 fields"));
        assert!(reason(b"http://a/\tftp://b/\n").contains("to_url \"ftp://b/\""));
        assert!(reason(b"\thttp://b/\n").contains("from_url \"\""));
        assert!(reason(b"http://a b/\thttp://b/\n").contains("not an http(s) URL"));
    }

    #[test]
    fn pages_are_deduplicated_per_block_and_repeats_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let links = dir.path().join("links.tsv");
        let text = "http://a/\thttp://b/\nhttp://a/\thttp://b/\nhttp://a/\thttp://a/\n\
                    http://b/\thttp://a/\nhttp://a/\thttp://c/\nhttp://b/\thttp://c/\n";
        std::fs::write(&links, text).unwrap();
        let edges = dir.path().join("e.bin");
        let g = read_graph(&links, File::open(&links).unwrap(), &edges).unwrap();
        // a→b once; b→a; a's second block and b's second block are repeats.
        assert_eq!((g.edges, g.duplicates, g.self_links), (2, 1, 1));
        assert_eq!((g.repeated_pages, g.checksums.len()), (2, 3));
        let mut got = Vec::new();
        EdgeFile(edges).each(&mut |f, t| got.push((f, t))).unwrap();
        assert_eq!(got, vec![(0, 1), (1, 0)]);
        assert_eq!((g.in_degree, g.out_degree), (vec![1, 1, 0], vec![1, 1, 0]));
    }
}
