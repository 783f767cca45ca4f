//! The seed list: one URL per line, blank lines and `#` comments allowed, `-` for stdin.
//!
//! Any bad line stops the crawl before it starts, with `FILE:LINE: reason` for each, so a typo
//! in a cron job's seed file is loud rather than a silently smaller crawl.

use crate::normalize::canonicalize;
use anyhow::{Context, Result, bail};
use std::io::Read;
use url::Url;

/// Longest seed line accepted (the filter's URL limit applies later as well).
const MAX_LINE: usize = 8192;

/// Reads and validates the seeds in `source` (a path, or `-` for stdin).
pub fn read_seeds(source: &str) -> Result<Vec<Url>> {
    let mut bytes = Vec::new();
    if source == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("reading seeds from stdin")?;
    } else {
        std::fs::File::open(source)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .with_context(|| format!("{source}: cannot read the seed file"))?;
    }
    let name = if source == "-" { "<stdin>" } else { source };
    parse_seeds(name, &bytes)
}

/// Parses seed text; `name` labels error lines.
pub fn parse_seeds(name: &str, bytes: &[u8]) -> Result<Vec<Url>> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut seeds = Vec::new();
    let mut errors = Vec::new();
    for (index, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_no = index + 1;
        let Ok(line) = std::str::from_utf8(raw) else {
            errors.push(format!("{name}:{line_no}: not UTF-8 text"));
            continue;
        };
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.len() > MAX_LINE {
            errors.push(format!(
                "{name}:{line_no}: line of {} bytes is longer than {MAX_LINE}",
                line.len()
            ));
            continue;
        }
        match Url::parse(line) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.host_str().is_some() => {
                seeds.push(canonicalize(url))
            }
            Ok(url) => errors.push(format!(
                "{name}:{line_no}: {}: only http and https URLs can be crawled",
                escape(line, url.scheme())
            )),
            Err(e) => errors.push(format!("{name}:{line_no}: {}: {e}", escape(line, ""))),
        }
    }
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
fn escape(line: &str, _hint: &str) -> String {
    let short: String = line.chars().take(100).collect();
    let mut out = crate::urllog::sanitize(&short);
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
}
