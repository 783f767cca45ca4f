//! `crawl extract WARC… [--extract RULES] [--text [MODE]] [--markdown]`: `--extract`'s fields,
//! `--text`'s text, `--markdown`'s Markdown and the pages' metadata out of existing WARC files,
//! without crawling again (issue 43, item 5).
//!
//! Each `response` record is made the page the crawl would have handed its sinks
//! (`crawl::page::Page`: status, headers, body, its codings and charset undone once). Fields go
//! to the same sink, `crawl::extract::Extract`, with the record's `WARC-Date` as the fetch time;
//! text and Markdown are read by the same call as the crawl's (`Page::keep_content`) and
//! written as one JSON line per page (`PageLine`). So a page gives the same object, row, text
//! and Markdown whether crawled or read back. Other records
//! (requests, revisits, metadata) are skipped. A chunked payload, as other tools archive it,
//! is unframed first (the crawl's own records hold the body unframed).

use crate::content::metadata::Metadata;
use crate::content::text::TextMode;
use crate::crawl::extract::{Extract, LinesTo};
use crate::crawl::page::Page;
use crate::exit::Failure;
use crate::fetch::client::Response;
use crate::fetch::conn::Headers;
use crate::frontier::Entry;
use crate::output::cdxj::{self, Record};
use anyhow::{Result, anyhow};
use clap::Parser;
use std::io::Write;
use std::path::PathBuf;

/// Take fields, text and Markdown out of the pages of existing WARC files, without crawling.
///
/// Every response record of each WARC file (a .warc.gz of one gzip member per record, as
/// crawl, wget, Heritrix and Common Crawl write them, or crawl's .warc.zst) whose page is a 2xx
/// HTML or text answer is read as the crawl reads a fetched page. With --extract it gives the
/// same JSON objects and SQLite rows as `crawl --extract` (see docs/extract.md), with the
/// record's WARC-Date as `fetched`; with --text or --markdown, one JSON line per page: `url`,
/// `date` (its WARC-Date), the metadata keys of the URL log (`title`, `lang`, ...), `text`,
/// `markdown` (see docs/content.md). Give at least one of the three. A bad rules file is exit
/// status 2 naming FILE:LINE; so is a file that is not such a WARC file.
#[derive(Parser, Debug)]
#[command(version, max_term_width = 100)]
pub struct ExtractArgs {
    /// WARC files to read, in order.
    #[arg(value_name = "WARC", required = true)]
    pub warcs: Vec<PathBuf>,

    /// The rules file (the format of `crawl --extract`).
    #[arg(long, value_name = "RULES")]
    pub extract: Option<PathBuf>,

    /// Each page's text, as `crawl --text`: `main` (the default) or `full`.
    #[arg(long, value_enum, value_name = "MODE", num_args = 0..=1, default_missing_value = "main")]
    pub text: Option<TextMode>,

    /// Each HTML page's main content as Markdown, as `crawl --markdown`.
    #[arg(long)]
    pub markdown: bool,

    /// Where the --text and --markdown JSON lines go (appended to; `-`: stdout). Default: stdout.
    ///
    /// With --extract as well, one of --content-out and --extract-out must name a file.
    #[arg(long, value_name = "FILE")]
    pub content_out: Option<PathBuf>,

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
    let content = args.text.is_some() || args.markdown;
    let to_file = |out: &Option<PathBuf>| out.as_ref().filter(|p| p.as_os_str() != "-").cloned();
    let (content_file, extract_file) = (to_file(&args.content_out), to_file(&args.extract_out));
    match (&args.extract, content) {
        (None, false) => {
            return Err(Failure::bad_input(anyhow!(
                "crawl extract needs --extract RULES, --text or --markdown: nothing to take out"
            )));
        }
        (Some(_), true) if content_file.is_none() && extract_file.is_none() => {
            return Err(Failure::bad_input(anyhow!(
                "--extract's objects and --text/--markdown's lines would share stdout: give \
                 --extract-out FILE or --content-out FILE"
            )));
        }
        _ => {}
    }
    let rules = (args.extract.as_deref())
        .map(crate::content::fields::Rules::read)
        .transpose()
        .map_err(Failure::bad_input)?;
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
    let lines_to = |file: Option<PathBuf>| file.map_or(LinesTo::Stdout, LinesTo::File);
    let extract = rules
        .map(|rules| Extract::open(rules, lines_to(extract_file), args.extract_db.as_deref()))
        .transpose()
        .map_err(Failure::bad_input)?;
    let mut content_lines = match content {
        true => {
            let (out, _) =
                (lines_to(content_file).open("--content-out")).map_err(Failure::bad_input)?;
            Some(std::io::BufWriter::new(out))
        }
        false => None,
    };
    let (mut responses, mut pages) = (0u64, 0u64);
    for (path, compression) in files {
        cdxj::for_each_record(path, compression, |record| {
            if record.header("WARC-Type") != Some("response") {
                return Ok(());
            }
            let Some((entry, url, response)) = page_of(&record) else {
                return Ok(());
            };
            responses += 1;
            let mut page = Page::new(&entry, url, response, u64::MAX);
            let date = record.header("WARC-Date").unwrap_or_default();
            if let Some(extract) = &extract {
                extract.take_fetched(&page, date)?;
            }
            if let Some(out) = &mut content_lines
                && page.is_text()
            {
                page.keep_content(args.text, args.markdown);
                pages += 1;
                write_line(out, &PageLine::of(&page, date))?;
            }
            Ok(())
        })
        .map_err(|e| match e.chain().any(|c| c.is::<cdxj::BadWarc>()) {
            true => Failure::bad_input(e),
            false => Failure::fatal(e),
        })?;
    }
    if let Some(out) = &mut content_lines {
        out.flush()
            .map_err(|e| Failure::fatal(anyhow!("writing the page lines: {e}")))?;
    }
    let stats = extract.as_ref().map(Extract::finish).transpose();
    let stats = stats.map_err(Failure::fatal)?;
    if !args.quiet {
        let mut line = format!("crawl extract: {responses} responses read");
        if content {
            line += &format!(", {pages} pages' text or Markdown written");
        }
        if let Some(s) = stats {
            line += &format!(
                ", {} pages matched, {} objects written, {} empty, {} rows replaced",
                s.pages, s.objects, s.empty, s.replaced
            );
        }
        eprintln!("{line}");
    }
    Ok(())
}

/// One page's line of `--text`/`--markdown` output: where and when it was fetched, what it
/// says of itself, its text and Markdown (each key absent when not asked for or not there).
#[derive(serde::Serialize)]
struct PageLine<'a> {
    url: &'a str,
    /// The record's `WARC-Date`.
    date: &'a str,
    status: u16,
    #[serde(flatten)]
    meta: Option<&'a Metadata>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    markdown: Option<&'a str>,
}

impl<'a> PageLine<'a> {
    fn of(page: &'a Page, date: &'a str) -> PageLine<'a> {
        PageLine {
            url: page.url.as_str(),
            date,
            status: page.response.status,
            meta: page.meta_kept.as_ref(),
            text: page.text_kept.as_deref(),
            markdown: page.markdown_kept.as_deref(),
        }
    }
}

/// Writes `line` as one line of JSON.
fn write_line(out: &mut dyn Write, line: &PageLine) -> Result<()> {
    serde_json::to_writer(&mut *out, line)?;
    out.write_all(b"\n")?;
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
