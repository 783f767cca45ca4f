//! `crawl extract WARC… --extract RULES`: `--extract`'s fields out of existing WARC files,
//! without crawling again (issue 43, item 5).
//!
//! Each `response` record is made the page the crawl would have handed its sinks
//! (`crawl::page::Page`: status, headers, body, its codings and charset undone once) and given
//! to the same sink, `crawl::extract::Extract`, with the record's `WARC-Date` as the fetch time.
//! So a page gives the same object and row whether crawled or read back. Other records
//! (requests, revisits, metadata) are skipped. A chunked payload, as other tools archive it,
//! is unframed first (the crawl's own records hold the body unframed).

use crate::crawl::extract::{Extract, LinesTo};
use crate::crawl::page::Page;
use crate::exit::Failure;
use crate::fetch::client::Response;
use crate::fetch::conn::Headers;
use crate::frontier::Entry;
use crate::output::cdxj::{self, Record};
use anyhow::{Result, anyhow};
use clap::Parser;
use std::path::PathBuf;

/// Take fields out of the pages of existing WARC files by --extract's rules, without crawling.
///
/// Every response record of each WARC file (a .warc.gz of one gzip member per record, as
/// crawl, wget, Heritrix and Common Crawl write them, or crawl's .warc.zst) whose page is a 2xx
/// HTML or text answer is read as the crawl reads a fetched page, and gives the same JSON
/// objects and SQLite rows as `crawl --extract` (see docs/extract.md), with the record's
/// WARC-Date as `fetched`. A bad rules file is exit status 2 naming FILE:LINE; so is a file that
/// is not such a WARC file.
#[derive(Parser, Debug)]
#[command(version, max_term_width = 100)]
pub struct ExtractArgs {
    /// WARC files to read, in order.
    #[arg(value_name = "WARC", required = true)]
    pub warcs: Vec<PathBuf>,

    /// The rules file (the format of `crawl --extract`).
    #[arg(long, value_name = "RULES")]
    pub extract: PathBuf,

    /// Where the JSON lines go (appended to). Default: stdout.
    #[arg(long, value_name = "FILE")]
    pub extract_out: Option<PathBuf>,

    /// Also write the objects as rows of the SQLite database FILE (as `crawl --extract-db`).
    #[arg(long, value_name = "FILE")]
    pub extract_db: Option<PathBuf>,

    /// Print nothing on stderr but errors (no summary line).
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(args: ExtractArgs) -> Result<(), Failure> {
    let rules = crate::content::fields::Rules::read(&args.extract).map_err(Failure::bad_input)?;
    let mut files = Vec::new();
    for path in &args.warcs {
        let name = path.to_string_lossy();
        let Some(compression) = crate::output::names::compression_of(&name) else {
            return Err(Failure::bad_input(anyhow!(
                "{name}: not a .warc.gz or .warc.zst file (compressed one record per gzip member \
                 or zstd frame)"
            )));
        };
        files.push((path, compression));
    }
    let lines = match &args.extract_out {
        Some(path) if path.as_os_str() != "-" => LinesTo::File(path.clone()),
        _ => LinesTo::Stdout,
    };
    let extract =
        Extract::open(rules, lines, args.extract_db.as_deref()).map_err(Failure::bad_input)?;
    let mut responses = 0u64;
    for (path, compression) in files {
        cdxj::for_each_record(path, compression, |record| {
            if record.header("WARC-Type") != Some("response") {
                return Ok(());
            }
            let Some((entry, url, response)) = page_of(&record) else {
                return Ok(());
            };
            responses += 1;
            let page = Page::new(&entry, url, response, u64::MAX);
            extract.take_fetched(&page, record.header("WARC-Date").unwrap_or_default())
        })
        .map_err(|e| match e.chain().any(|c| c.is::<cdxj::BadWarc>()) {
            true => Failure::bad_input(e),
            false => Failure::fatal(e),
        })?;
    }
    let stats = extract.finish().map_err(Failure::fatal)?;
    if !args.quiet {
        eprintln!(
            "crawl extract: {responses} responses read, {} pages matched, {} objects written, \
             {} empty, {} rows replaced",
            stats.pages, stats.objects, stats.empty, stats.replaced
        );
    }
    Ok(())
}

/// The page a response record holds: its URL (`WARC-Target-URI`, `<…>` of WARC/1.0
/// removed), and the response as the crawl's client would have made it. `None` for a record
/// without a URL or an HTTP head.
fn page_of(record: &Record) -> Option<(Entry, url::Url, Response)> {
    let uri = record.header("WARC-Target-URI")?;
    let uri = uri.trim_start_matches('<').trim_end_matches('>');
    let url = url::Url::parse(uri).ok()?;
    let (head, payload) = record.http_parts();
    let mut parsed = [httparse::EMPTY_HEADER; 128];
    let mut http = httparse::Response::new(&mut parsed);
    http.parse(head).ok()?.is_complete().then_some(())?;
    let mut headers = Headers::with_capacity(http.headers.len(), head.len());
    for h in http.headers.iter() {
        headers.push(h.name, &String::from_utf8_lossy(h.value));
    }
    let chunked =
        (headers.values("transfer-encoding")).any(|v| v.to_ascii_lowercase().contains("chunked"));
    let body = match chunked {
        true => unchunk(payload).unwrap_or_else(|| payload.to_vec()),
        false => payload.to_vec(),
    };
    let response = Response::read_back(http.code?, headers, body, head.to_vec());
    Some((Entry::new(uri.to_owned(), 0, 0), url, response))
}

/// A chunked body unframed; `None` when it is not one.
fn unchunk(mut framed: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::with_capacity(framed.len());
    loop {
        let line_end = framed.windows(2).position(|w| w == b"\r\n")?;
        let size = std::str::from_utf8(&framed[..line_end]).ok()?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        framed = &framed[line_end + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(framed.get(..size)?);
        framed = framed.get(size..)?.strip_prefix(b"\r\n")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_payloads_are_unframed() {
        assert_eq!(
            unchunk(b"3\r\nabc\r\n2;x=1\r\nde\r\n0\r\n\r\n").unwrap(),
            b"abcde"
        );
        assert_eq!(unchunk(b"<html>"), None);
        assert_eq!(unchunk(b"5\r\nab"), None);
    }
}
