//! The seed list: one URL per line, blank lines and `#` comments allowed, `-` for stdin.
//!
//! Any bad line stops the crawl before it starts, with `FILE:LINE: reason` for each, so a typo
//! in a cron job's seed file is loud rather than a silently smaller crawl.

use crate::url::normalize::canonicalize;
use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufReader};
use url::Url;

/// Longest seed line accepted (the filter's URL limit applies later as well). Longer lines are
/// read past, not into memory, so a huge or binary file costs no more than its good lines.
const MAX_LINE: usize = 8192;

/// Reads and validates the seeds in `source` (a path, or `-` for stdin).
pub fn read_seeds(source: &str) -> Result<Vec<Url>> {
    if source == "-" {
        return parse_seeds_from("<stdin>", std::io::stdin().lock())
            .context("reading seeds from stdin")?;
    }
    let file = std::fs::File::open(source)
        .with_context(|| format!("{source}: cannot read the seed file"))?;
    parse_seeds_from(source, BufReader::new(file))
        .with_context(|| format!("{source}: cannot read the seed file"))?
}

/// Parses seed text; `name` labels error lines.
pub fn parse_seeds(name: &str, bytes: &[u8]) -> Result<Vec<Url>> {
    parse_seeds_from(name, bytes).context("reading seeds")?
}

/// Parses seeds line by line from `reader`. The outer error is a read failure; the inner one
/// lists the bad lines.
fn parse_seeds_from(name: &str, mut reader: impl BufRead) -> std::io::Result<Result<Vec<Url>>> {
    let mut seeds = Vec::new();
    let mut errors = Vec::new();
    let mut line = Vec::with_capacity(256);
    let mut line_no = 0;
    loop {
        line.clear();
        let Some(len) = read_line(&mut reader, &mut line)? else {
            break;
        };
        line_no += 1;
        let raw = if line_no == 1 {
            line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line)
        } else {
            &line[..]
        };
        if len > MAX_LINE {
            errors.push(format!(
                "{name}:{line_no}: line of {len} bytes is longer than {MAX_LINE}"
            ));
            continue;
        }
        match parse_line(raw) {
            Ok(Some(url)) => seeds.push(url),
            Ok(None) => {}
            Err(reason) => errors.push(format!("{name}:{line_no}: {reason}")),
        }
    }
    Ok(finish(name, seeds, errors))
}

/// Reads one line (without its `\n`) into `line`, keeping at most `MAX_LINE + 1` bytes of it;
/// returns its full length, or `None` at the end of input.
fn read_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<Option<usize>> {
    let mut len = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((len > 0).then_some(len));
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        let room = (MAX_LINE + 1).saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        len += chunk.len();
        let used = chunk.len() + usize::from(done);
        reader.consume(used);
        if done {
            return Ok(Some(len));
        }
    }
}

/// One line: a seed, nothing (blank or comment), or why it is bad.
fn parse_line(raw: &[u8]) -> Result<Option<Url>, String> {
    let Ok(line) = std::str::from_utf8(raw) else {
        return Err("not UTF-8 text".into());
    };
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    match Url::parse(line) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host_str().is_some() => {
            Ok(Some(canonicalize(url)))
        }
        Ok(_) => Err(format!(
            "{}: only http and https URLs can be crawled",
            escape(line)
        )),
        Err(e) => Err(format!("{}: {e}", escape(line))),
    }
}

fn finish(name: &str, seeds: Vec<Url>, errors: Vec<String>) -> Result<Vec<Url>> {
    if !errors.is_empty() {
        let shown = errors.len().min(20);
        let more = if errors.len() > shown {
            format!("\n(and {} more bad lines)", errors.len() - shown)
        } else {
            String::new()
        };
        bail!("{}{more}", errors[..shown].join("\n"));
    }
    if seeds.is_empty() {
        bail!("{name}: no seed URLs (one URL per line; blank lines and # comments are skipped)");
    }
    Ok(seeds)
}

/// A seed line, shortened and with control characters escaped, for an error message.
fn escape(line: &str) -> String {
    let short: String = line.chars().take(100).collect();
    let mut out = crate::url::escape::sanitize(&short);
    if short.len() < line.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_blanks_bom_and_crlf_are_fine() {
        let seeds = parse_seeds(
            "s.txt",
            b"\xEF\xBB\xBF# mine\r\nhttp://A.test/x#f\r\n\r\n  https://b.test  \n",
        )
        .unwrap();
        let seeds: Vec<String> = seeds.iter().map(Url::to_string).collect();
        assert_eq!(seeds, ["http://a.test/x", "https://b.test/"]);
    }

    #[test]
    fn bad_lines_are_named_by_file_and_line() {
        let err = parse_seeds(
            "s.txt",
            b"http://ok.test/\nnot a url\nftp://x.test/\n\xff\xfe\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("s.txt:2: not a url"), "{err}");
        assert!(
            err.contains("s.txt:3: ftp://x.test/: only http and https"),
            "{err}"
        );
        assert!(err.contains("s.txt:4: not UTF-8"), "{err}");
        let err = parse_seeds("e.txt", b"# nothing\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("e.txt: no seed URLs"), "{err}");
    }

    #[test]
    fn huge_lines_are_measured_not_kept() {
        let mut text = b"http://ok.test/\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', 1 << 20));
        text.extend(b"\nhttp://ok.test/last");
        let err = format!("{:#}", parse_seeds("s.txt", &text).unwrap_err());
        assert!(
            err.contains("s.txt:2: line of 1048576 bytes is longer than 8192"),
            "{err}"
        );
        let mut line = Vec::new();
        let mut reader = &text[16..];
        assert_eq!(read_line(&mut reader, &mut line).unwrap(), Some(1 << 20));
        assert_eq!(line.len(), MAX_LINE + 1);
        line.clear();
        assert_eq!(read_line(&mut reader, &mut line).unwrap(), Some(19));
        assert_eq!(read_line(&mut reader, &mut line).unwrap(), None);
    }
}
