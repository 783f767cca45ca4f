//! `--host-rules FILE`: per-host overrides of the request rate (`--rate`), the connections
//! (`--host-connections`) and the page budget (`--max-pages-per-host`), for the user's own
//! servers beside the polite default for everyone else.
//!
//! The file is read once, before the crawl starts; a line that is not a rule is bad input
//! (exit status 2) naming FILE:LINE and what is wrong, so nothing is crawled under rules the
//! user did not mean. One rule per line: a host pattern, then `key=value` settings separated
//! by blanks; `#` starts a comment. Patterns: `host:port` (that port only), `host` (any port),
//! `*.domain` (the domain and every name under it). The most specific pattern wins: host:port,
//! then host, then the longest domain; a pattern given twice is an error.
//!
//! Invariant: the rules only change how fast and how much a host is crawled, never whether
//! robots.txt applies: the scheduler asks robots.txt before every page whatever they say.

use anyhow::{Result, anyhow, bail};
use rustc_hash::FxHashMap;
use std::path::Path;
use std::time::Duration;

/// One host's overrides; `None`: the command line's value. `Some(None)` lifts a limit.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HostRule {
    /// `rate=N` (requests per second) or `rate=none`.
    pub rate: Option<Option<f64>>,
    /// `connections=N`: requests in flight at once.
    pub connections: Option<usize>,
    /// `pages=N` or `pages=none`: the host's page budget.
    pub pages: Option<Option<u64>>,
}

/// Every rule of a `--host-rules` file, by pattern kind (empty without the option).
#[derive(Debug, Default)]
pub struct HostRules {
    /// `host:port` patterns.
    by_key: FxHashMap<String, HostRule>,
    /// `host` patterns.
    by_host: FxHashMap<String, HostRule>,
    /// `*.domain` patterns, by domain (without `*.`).
    by_domain: FxHashMap<String, HostRule>,
}

/// Connections one host may be given at most (as `--host-connections`).
pub const MAX_CONNECTIONS: usize = 256;

impl HostRules {
    /// Reads and checks `path`; errors name `path:LINE`.
    pub fn read(path: &Path) -> Result<HostRules> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow!("cannot read the --host-rules file {}: {e}", path.display()))?;
        HostRules::parse(&text, &path.display().to_string())
    }

    /// The rules of `text`, read from the file `name` (for the errors).
    pub fn parse(text: &str, name: &str) -> Result<HostRules> {
        let mut rules = HostRules::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            rules
                .add_line(line)
                .map_err(|e| anyhow!("{name}:{}: {e}", i + 1))?;
        }
        Ok(rules)
    }

    fn add_line(&mut self, line: &str) -> Result<()> {
        let mut words = line.split_whitespace();
        let pattern = words.next().expect("a non-blank line").to_ascii_lowercase();
        let mut rule = HostRule::default();
        let mut settings = 0;
        for word in words {
            settings += 1;
            let Some((key, value)) = word.split_once('=') else {
                bail!("{word:?} is not a setting KEY=VALUE (keys: rate, connections, pages)");
            };
            match key {
                "rate" => rule.rate = Some(optional(value, rate_value)?),
                "connections" => rule.connections = Some(connections(value)?),
                "pages" => rule.pages = Some(optional(value, pages)?),
                _ => bail!("unknown key {key:?} (keys: rate, connections, pages)"),
            }
        }
        if settings == 0 {
            bail!("{pattern:?} has no setting (rate=N, connections=N or pages=N after it)");
        }
        let (table, name) = match pattern.strip_prefix("*.") {
            // A domain's rule covers every port (`lookup` drops the port before the domains):
            // a port here would make a rule that never matches.
            Some(domain) if has_port(domain) => {
                bail!("{pattern:?} names a port; a *.domain rule covers every port")
            }
            Some(domain) => (&mut self.by_domain, domain.to_owned()),
            None if has_port(&pattern) => (&mut self.by_key, pattern.clone()),
            None => (&mut self.by_host, pattern.clone()),
        };
        check_host(&name, &pattern)?;
        if table.insert(name, rule).is_some() {
            bail!("{pattern:?} has a rule already");
        }
        Ok(())
    }

    /// The rule for the host `key` (`host:port`, as `url::normalize::origin_and_key` makes
    /// it), if one matches: the most specific pattern.
    pub fn lookup(&self, key: &str) -> Option<&HostRule> {
        if self.is_empty() {
            return None;
        }
        if let Some(rule) = self.by_key.get(key) {
            return Some(rule);
        }
        let host = key.rsplit_once(':').map_or(key, |(host, _)| host);
        if let Some(rule) = self.by_host.get(host) {
            return Some(rule);
        }
        // The longest domain first: the host itself, then each parent.
        let mut name = host;
        loop {
            if let Some(rule) = self.by_domain.get(name) {
                return Some(rule);
            }
            name = name.split_once('.')?.1;
        }
    }

    /// No rule at all.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty() && self.by_host.is_empty() && self.by_domain.is_empty()
    }

    fn all(&self) -> impl Iterator<Item = &HostRule> {
        (self.by_key.values())
            .chain(self.by_host.values())
            .chain(self.by_domain.values())
    }

    /// The most connections any rule gives a host (`default` if none gives more): what the
    /// connection pool keeps idle per host at most.
    pub fn max_connections(&self, default: usize) -> usize {
        (self.all().filter_map(|r| r.connections)).fold(default, usize::max)
    }

    /// Whether some rule sets a page budget: the budget is kept even without
    /// `--max-pages-per-host`.
    pub fn sets_pages(&self) -> bool {
        self.all().any(|r| matches!(r.pages, Some(Some(_))))
    }

    /// The shortest gap between two requests to `key`: `1 / rate`, the rule's or `default`'s
    /// (`--rate`).
    pub fn interval(&self, key: &str, default: Option<f64>) -> Option<Duration> {
        let rate = self.lookup(key).and_then(|r| r.rate).unwrap_or(default)?;
        Some(Duration::from_secs_f64(1.0 / rate))
    }

    /// Requests `key` may have in flight: the rule's or `default` (`--host-connections`).
    pub fn connections(&self, key: &str, default: usize) -> usize {
        self.lookup(key)
            .and_then(|r| r.connections)
            .unwrap_or(default)
    }

    /// `key`'s page budget: the rule's or `default` (`--max-pages-per-host`).
    pub fn pages(&self, key: &str, default: Option<u64>) -> Option<u64> {
        self.lookup(key).and_then(|r| r.pages).unwrap_or(default)
    }
}

/// `value`, or `None` for `none`.
fn optional<T>(value: &str, parse: fn(&str) -> Result<T>) -> Result<Option<T>> {
    match value {
        "none" => Ok(None),
        _ => parse(value).map(Some),
    }
}

/// Requests per second (`--rate`, `--max-rate`, `rate=`): a positive number, fractions
/// allowed (0.2 is one every 5 s).
pub fn parse_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1e6 => Ok(v),
        _ => Err(format!(
            "expected requests per second such as 2 or 0.2 (one every 5 s), found {text:?}"
        )),
    }
}

fn rate_value(value: &str) -> Result<f64> {
    parse_rate(value).map_err(|e| anyhow!("rate={value}: {e}"))
}

fn connections(value: &str) -> Result<usize> {
    match value.parse::<usize>() {
        Ok(n) if (1..=MAX_CONNECTIONS).contains(&n) => Ok(n),
        _ => bail!("connections={value}: expected 1 to {MAX_CONNECTIONS}"),
    }
}

fn pages(value: &str) -> Result<u64> {
    match value.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => bail!("pages={value}: expected a positive number of pages, or none"),
    }
}

/// Whether a pattern names a port (`host:port`, `[v6]:port`).
fn has_port(pattern: &str) -> bool {
    match pattern.rsplit_once(':') {
        Some((host, port)) => {
            (!host.contains(':') || host.ends_with(']')) && port.parse::<u16>().is_ok()
        }
        None => false,
    }
}

/// A pattern's host part must be a plain host name or address, as URLs spell them.
fn check_host(name: &str, pattern: &str) -> Result<()> {
    let host = match has_port(name) {
        true => name.rsplit_once(':').map_or(name, |(h, _)| h),
        false => name,
    };
    let ok = !host.is_empty()
        && (host.starts_with('[') && host.ends_with(']')
            || host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_'));
    if !ok {
        bail!("{pattern:?} is not a host pattern (example.org, example.org:8080 or *.example.org)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: &str = "\
# our own servers
*.intranet.test   connections=8 rate=none
archive.test      rate=20 pages=1000   # the archive
archive.test:8080 rate=0.5
*.test            rate=1

";

    #[test]
    fn the_most_specific_pattern_wins() {
        let rules = HostRules::parse(RULES, "rules.txt").unwrap();
        let rate = |key| rules.interval(key, Some(2.0));
        assert_eq!(rate("archive.test:8080"), Some(Duration::from_secs(2)));
        assert_eq!(rate("archive.test:80"), Some(Duration::from_millis(50)));
        assert_eq!(rate("a.b.intranet.test:80"), None, "rate=none lifts --rate");
        assert_eq!(
            rate("intranet.test:443"),
            None,
            "*. covers the domain itself"
        );
        assert_eq!(rate("other.test:80"), Some(Duration::from_secs(1)));
        assert_eq!(rate("example.org:80"), Some(Duration::from_millis(500)));
        assert_eq!(rules.connections("x.intranet.test:80", 1), 8);
        assert_eq!(rules.connections("archive.test:80", 1), 1);
        assert_eq!(rules.pages("archive.test:80", None), Some(1000));
        assert_eq!(rules.pages("archive.test:8080", Some(5)), Some(5));
        assert_eq!(rules.max_connections(1), 8);
        assert!(rules.sets_pages());
        assert_eq!(parse_rate("0.2"), Ok(0.2));
        assert!(
            ["0", "-1", "inf", "x"]
                .iter()
                .all(|t| parse_rate(t).is_err())
        );
        let none = HostRules::default();
        assert_eq!(none.connections("a.test:80", 3), 3);
        assert!(!none.sets_pages() && none.lookup("a.test:80").is_none());
    }

    #[test]
    fn a_bad_line_names_its_file_and_line() {
        for (text, wanted) in [
            (
                "a.test rate=2\nb.test rate=fast\n",
                "rules.txt:2: rate=fast",
            ),
            ("a.test\n", "rules.txt:1: \"a.test\" has no setting"),
            ("a.test speed=2\n", "rules.txt:1: unknown key \"speed\""),
            ("\n\na.test connections=0\n", "rules.txt:3: connections=0"),
            ("a.test rate 2\n", "rules.txt:1: \"rate\" is not a setting"),
            (
                "a.test rate=1\nA.test pages=2\n",
                "rules.txt:2: \"a.test\" has a rule",
            ),
            (
                "http://a.test rate=1\n",
                "rules.txt:1: \"http://a.test\" is not a host",
            ),
            ("a.test pages=0\n", "rules.txt:1: pages=0"),
            (
                "*.a.test:8080 rate=1\n",
                "rules.txt:1: \"*.a.test:8080\" names a port",
            ),
        ] {
            let err = HostRules::parse(text, "rules.txt").unwrap_err().to_string();
            assert!(err.starts_with(wanted), "{text:?}: {err}");
        }
    }
}
