//! The command line: every option with a one-line help and a longer explanation.
//!
//! Values are validated here, before any machinery is built: a typo is an error (exit 2),
//! never a silent zero.

use crate::fetch::body::TypePattern;
use crate::output::urllog::LogFormat;
use crate::output::warc::Compression;
use crate::tools::cachesim::CachesimArgs;
use crate::tools::dedupe::DedupeArgs;
use crate::tools::rank::RankArgs;
use crate::tools::wacz::WaczArgs;
use crate::url::normalize::Scope;
use clap::Parser;
use std::path::PathBuf;
use std::time::Duration;

// The whole command line: `crawl SEEDS --out DIR [OPTIONS]`, or one of the subcommands. (No
// doc comment here: the about text is the crawl's own, from `Args`.)
#[derive(Parser, Debug)]
#[command(
    name = "crawl",
    version,
    max_term_width = 100,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    // A subcommand beside the crawl.
    #[command(subcommand)]
    pub command: Option<Command>,
    // The crawl's own options, when no subcommand is given.
    #[command(flatten)]
    pub crawl: Option<Args>,
}

// The subcommands beside the crawl, each with its own `--help`. (No doc comments on the
// variants: each subcommand's help is its arguments' own doc.)
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    Dedupe(DedupeArgs),
    Cachesim(CachesimArgs),
    Rank(RankArgs),
    Wacz(WaczArgs),
    Shards(crate::shard::status::ShardsArgs),
}

/// Crawl the web breadth-first from a list of seed URLs, politely, with flat memory.
///
/// The URL log (one tab-separated line per fetch: status, depth, bytes, ms, content type,
/// URL, note; or JSON lines) goes to stdout or --log FILE; progress, diagnostics and the
/// summary go to stderr. Everything else the crawl keeps lives under --out.
#[derive(Parser, Debug)]
#[command(name = "crawl", version, max_term_width = 100)]
pub struct Args {
    /// File of seed URLs, one per line (`-` for stdin).
    ///
    /// Blank lines and lines starting with `#` are skipped. A bad line is reported as
    /// FILE:LINE and nothing is crawled (exit status 2).
    #[arg(value_name = "SEEDS")]
    pub seeds: String,

    /// State directory: seen set, frontier, WARC files, summary.
    ///
    /// Created if missing. Nothing the crawl writes lands outside it (apart from stdout,
    /// stderr and --log FILE). Two crawls cannot share one directory at the same time.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// Worker threads.
    ///
    /// At most one request is in flight per host at any time, whatever the number of workers,
    /// so more workers than hosts gains nothing.
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub jobs: u32,

    /// Stop after this many pages have been fetched (with --shard: by this shard).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_pages: Option<u64>,

    /// Fetch at most this many pages from one host (host:port).
    ///
    /// Once a host's pages reach N, its further URLs are not fetched: each gets a URL-log line
    /// with status 0 and the note host-budget, and is counted in summary.json (filtered,
    /// host_budget). Ends crawler traps such as endless calendars without relying on depth.
    /// The counts survive a resume.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_pages_per_host: Option<u64>,

    /// Follow links at most this many hops from a seed (seeds are depth 0). Default 100.
    ///
    /// The default ends traps that make a new URL of every link (a calendar linking each month
    /// to the next) after 100 pages per direction. With --find the default is 4 (depth 5 when
    /// the start page counts as 1).
    #[arg(long, value_name = "N")]
    pub max_depth: Option<u32>,

    /// Stop at the first fetched page that contains TEXT and print where (at most 100 characters).
    ///
    /// Pages (2xx HTML or plain text, decoded) are searched line by line in their source, markup
    /// included. stdout then carries only the result, `URL TAB LINE_NO TAB LINE` (the URL log
    /// goes to --log FILE if given); not finding TEXT within the depth limit is said on stderr.
    /// Either way the exit status is 0. The crawl is otherwise an ordinary one: polite, obeying
    /// robots.txt, archiving to --out. With several workers the first match fetched wins; -j 1
    /// gives strict breadth-first order.
    #[arg(long, value_name = "TEXT", value_parser = crate::crawl::hunt::parse_text)]
    pub find: Option<String>,

    /// Match --find's TEXT regardless of case (Unicode case folding).
    #[arg(short = 'i', long, requires = "find")]
    pub ignore_case: bool,

    /// Which hosts the crawl may visit beyond the seeds.
    ///
    /// `host`: the seeds' hosts (host and port) only. `domain`: the seeds' registrable
    /// domains (www.example.com also covers shop.example.com). `any`: no limit.
    #[arg(long, value_enum, default_value_t = Scope::Host)]
    pub scope: Scope,

    /// Only crawl URLs matching this regular expression (repeatable: any may match).
    #[arg(long, value_name = "REGEX")]
    pub include: Vec<regex::Regex>,

    /// Never crawl URLs matching this regular expression (repeatable).
    #[arg(long, value_name = "REGEX")]
    pub exclude: Vec<regex::Regex>,

    /// Wait this many times the last response time before the next request to a host.
    ///
    /// Mercator's politeness rule. 0 turns it off (for benchmarks of your own servers);
    /// robots.txt Crawl-delay and --min-delay still apply.
    #[arg(long, value_name = "F", default_value_t = 10.0, value_parser = non_negative)]
    pub delay_factor: f64,

    /// Never contact a host sooner than this many seconds after its last response.
    #[arg(long, value_name = "SECS", default_value = "0", value_parser = seconds)]
    pub min_delay: Duration,

    /// Cap the delay rule at this many seconds (robots.txt Crawl-delay may still ask for more).
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = seconds)]
    pub max_delay: Duration,

    /// At most N requests in flight per host, each connection resting by the delay rule.
    ///
    /// For crawling your own server fast; the default is Mercator's one request at a time.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub host_connections: u32,

    /// Do not read sitemaps.
    ///
    /// By default each host's robots.txt `Sitemap:` lines are read (a seed's host whose
    /// robots.txt names none: its /sitemap.xml), and the pages they list are crawled at depth 1.
    #[arg(long)]
    pub no_sitemaps: bool,
    /// Follow links regardless of page-level robots directives (for archiving).
    ///
    /// By default a page whose <meta name="robots"> (or <meta name="TOKEN">, TOKEN being the
    /// robots.txt token) or X-Robots-Tag header says nofollow or none has none of its links
    /// followed, and a link with rel="nofollow" is not followed. noindex is only noted in the
    /// URL log: the page is archived all the same.
    #[arg(long)]
    pub ignore_page_robots: bool,

    /// User-Agent header; its first word (before `/`) is the robots.txt token.
    #[arg(long, value_name = "UA", default_value = concat!("crawl/", env!("CARGO_PKG_VERSION")))]
    pub user_agent: String,

    /// Send this header with every request, as `Name: value` (repeatable).
    ///
    /// Sent after the crawler's own headers; a `User-Agent` here replaces --user-agent's on the
    /// wire (robots.txt still uses --user-agent's token). Values are never printed (only the
    /// WARC request records keep them).
    #[arg(long = "header", value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,

    /// Send the cookies of FILE (a Netscape cookie file, as curl and wget write them).
    ///
    /// Cookies are sent by the domain, path, Secure and expiry rules of RFC 6265. Cookies that
    /// servers set during the crawl are kept and sent too (in memory; see --cookie-jar).
    #[arg(long, value_name = "FILE")]
    pub load_cookies: Option<PathBuf>,

    /// Keep cookies in FILE: read at the start if it exists, written back at each checkpoint
    /// and at the end (and at the start: an unwritable FILE is an error).
    ///
    /// A Netscape cookie file (curl -b and wget --load-cookies read it), session cookies
    /// included, replaced atomically; running the same command again (a resume) starts with
    /// the cookies it holds.
    #[arg(long, value_name = "FILE")]
    pub cookie_jar: Option<PathBuf>,

    /// Fetch everything through this proxy: http://, https:// (CONNECT) or socks5://.
    ///
    /// Overrides the environment: without it, ALL_PROXY, then HTTPS_PROXY, then HTTP_PROXY
    /// (or their lower-case forms) name the proxy for every URL, and NO_PROXY lists hosts
    /// reached directly. Host names are resolved here and checked, and the proxy is sent the
    /// address; with --allow-private, CONNECT and socks5h:// proxies resolve names
    /// themselves. user:password@ works for every kind.
    #[arg(long, value_name = "URL", conflicts_with = "no_proxy")]
    pub proxy: Option<String>,

    /// Use no proxy, whatever the environment says.
    #[arg(long)]
    pub no_proxy: bool,

    /// Do not check TLS certificates (a warning is printed): for test servers only.
    #[arg(long)]
    pub insecure: bool,

    /// Also trust the certificates of this PEM file as roots (repeatable).
    ///
    /// Mozilla's roots stay trusted: this adds an internal or test certificate authority.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Vec<PathBuf>,

    /// Give up on a request after this many seconds (connect, headers and body together).
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = seconds)]
    pub timeout: Duration,

    /// Keep at most this many bytes of a response body (suffixes K, M, G).
    #[arg(long, value_name = "BYTES", default_value = "10M", value_parser = bytes)]
    pub max_body: u64,

    /// Read only bodies of this media type (`text/html`, `text/*`; repeatable: any may match).
    ///
    /// Decided from the response's Content-Type (none is application/octet-stream), never from
    /// the URL. Any other body is not read: the connection is closed after the headers, which
    /// are archived as a record marked WARC-Truncated, and the URL log notes `type-rejected`.
    /// robots.txt is always read.
    #[arg(long, value_name = "PATTERN")]
    pub accept_type: Vec<TypePattern>,

    /// Never read bodies of this media type (`image/*`, `application/pdf`; repeatable).
    ///
    /// Wins over --accept-type; treated as --accept-type describes (`type-rejected`).
    #[arg(long, value_name = "PATTERN")]
    pub reject_type: Vec<TypePattern>,

    /// Read the first --max-body bytes of a body whose Content-Length is over --max-body.
    ///
    /// Without it such a body is not read at all: the connection is closed after the headers,
    /// the record is marked WARC-Truncated: length, and the URL log notes `too-long`. A body
    /// without a Content-Length is cut at --max-body either way (`truncated`).
    #[arg(long)]
    pub keep_truncated: bool,

    /// Connect to private addresses too (loopback, RFC 1918, link-local, CGNAT, unique-local, …).
    ///
    /// By default an address in a special-purpose range is refused after DNS (URL log
    /// `private-address`), links, redirects and names alike, unless a seed's host is itself
    /// an address in that range (or `localhost`), which opens that range. Through a proxy too:
    /// names are resolved here unless this is given. See the man page.
    #[arg(long)]
    pub allow_private: bool,

    /// How each WARC record is compressed: `zstd` (.warc.zst) or `gzip` (.warc.gz).
    ///
    /// Every response (robots.txt included) and its request are archived under DIR/warc/, each
    /// record its own zstd frame or gzip member. Read .warc.zst with FastWARC, or with
    /// `zstdcat FILE | warcio ...`; choose gzip for pywb and replayweb.page.
    #[arg(long, value_enum, value_name = "KIND", default_value_t = Compression::Zstd)]
    pub warc_compression: Compression,

    /// Start a new WARC file once the current one reaches this size (suffixes K, M, G).
    ///
    /// Sizes are compressed bytes; a file ends after the record that crosses the limit, so a
    /// file may exceed it by one request and response.
    #[arg(long, value_name = "BYTES", default_value = "1G", value_parser = bytes)]
    pub warc_max_size: u64,

    /// Do not write WARC files (the URL log and the crawl are unchanged).
    #[arg(long, conflicts_with_all = ["warc_compression", "warc_max_size"])]
    pub no_warc: bool,

    /// Entries in the CLOCK cache of recently seen URL checksums.
    ///
    /// About 17 bytes each. The cache answers most "seen?" lookups without the disk.
    #[arg(long, value_name = "N", default_value_t = 65536, value_parser = clap::value_parser!(u64).range(1..=1 << 31))]
    pub cache_entries: u64,

    /// Cache misses buffered before they are merged into the on-disk seen set.
    ///
    /// Larger batches mean fewer passes over the seen-set file; each entry holds its URL in
    /// memory until the merge.
    #[arg(long, value_name = "N", default_value_t = 65536, value_parser = clap::value_parser!(u64).range(1..=1 << 28))]
    pub buffer_entries: u64,

    /// Format of the URL log: `tsv` (tab-separated columns) or `jsonl` (JSON lines).
    ///
    /// tsv columns: status, depth, bytes, ms, content type, URL, note. jsonl objects have the
    /// keys status, depth, bytes, ms, content_type, url, note and error (the error kind when
    /// there was no response); absent values are null.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = LogFormat::Tsv)]
    pub log_format: LogFormat,

    /// Write the URL log to FILE (created or truncated) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Also save each fetched HTML page as a plain file: `files` writes DIR/pages/.
    ///
    /// Pages answered 2xx with an HTML type are written, content encoding (gzip) decoded, as
    /// DIR/pages/HOST_PORT/PATH, every name made safe (see the man page). WARC files are
    /// written as well.
    #[arg(long, value_enum, value_name = "WHAT")]
    pub save: Option<Save>,

    /// On a state directory whose crawl completed, crawl afresh instead of recrawling.
    ///
    /// Running again on a completed crawl recrawls it: every page it fetched is asked for
    /// again with If-None-Match/If-Modified-Since and recorded as new, changed, unchanged or
    /// gone. --restart forgets the previous crawl instead (seen set, frontier, fetched pages,
    /// robots.txt answers; the WARC files stay). On an unfinished crawl it also discards the
    /// progress made.
    #[arg(long)]
    pub restart: bool,

    /// Focused crawl: favour URLs linked from pages containing TEXT and from good hubs.
    ///
    /// TEXT is matched in each page's HTML, ignoring ASCII case. A URL scores 1 per linking
    /// page that matched, plus that page's hub score (HITS over the link graph seen so far,
    /// recomputed every 100 pages or more; the best hub counts 1). Up to --focus-window URLs
    /// wait in memory, best first; the rest stay in the disk frontier, first in first out.
    #[arg(long, value_name = "TEXT", value_parser = non_empty)]
    pub focus: Option<String>,

    /// URLs held in the --focus priority window, in memory (about 100 bytes each).
    #[arg(long, value_name = "N", default_value_t = 10000, requires = "focus", value_parser = clap::value_parser!(u64).range(1..=1 << 24))]
    pub focus_window: u64,

    /// Crawl as shard K of N (counted from 0): only the hosts that hash to K.
    ///
    /// Every shard reads the whole seed file (the scope comes from all seeds) and crawls the
    /// seeds whose host:port it owns (jump consistent hash); URLs it finds for other shards'
    /// hosts are sent to them through --exchange. Each shard has its own --out; the crawl ends
    /// when every shard is idle and every URL sent has been received. --max-pages counts this
    /// shard's pages; --find stops every shard. The state directory keeps K/N: a resume with another is refused.
    #[arg(long, value_name = "K/N", requires = "exchange", value_parser = shard)]
    pub shard: Option<crate::shard::owner::Shard>,

    /// The broker the shards exchange URLs through: redis://HOST:PORT[/DB] (with --shard).
    ///
    /// Redis should run with appendonly yes and appendfsync always, or a crash of the broker
    /// may lose URLs in transit (a warning says so).
    #[arg(long, value_name = "URL", requires = "shard")]
    pub exchange: Option<String>,

    /// Print nothing on stderr but errors (no progress, no summary).
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Without a terminal, print a status line on stderr every 10 seconds and at the end.
    ///
    /// On a terminal a progress bar is shown anyway (and cleared before the summary).
    #[arg(short, long)]
    pub verbose: bool,
}

/// The whole command line as clap sees it, for the manual's generator (`examples/manual/`):
/// the man page, the shell completions and the README's option table are rendered from it.
pub fn cli_command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// What `--save` writes besides the WARC archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Save {
    /// Each HTML page as a file under DIR/pages/.
    Files,
}

fn shard(text: &str) -> Result<crate::shard::owner::Shard, String> {
    crate::shard::owner::Shard::parse(text).map_err(|e| e.to_string())
}

fn non_empty(text: &str) -> Result<String, String> {
    match text.is_empty() {
        true => Err("expected a word or phrase, found an empty string".into()),
        false => Ok(text.to_owned()),
    }
}

fn non_negative(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("expected a non-negative number, found {text:?}")),
    }
}

fn seconds(text: &str) -> Result<Duration, String> {
    non_negative(text)
        .and_then(|v| Duration::try_from_secs_f64(v).map_err(|e| e.to_string()))
        .map_err(|_| format!("expected a number of seconds such as 0.5 or 30, found {text:?}"))
}

/// A byte count with an optional K/M/G suffix (powers of 1024).
fn bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let scale: u64 = match unit
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => {
            return Err(format!(
                "expected bytes such as 65536, 512K or 10M, found {text:?}"
            ));
        }
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            format!("expected a positive byte count such as 512K or 10M, found {text:?}")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_parse_or_fail_loudly() {
        assert_eq!(bytes("10M"), Ok(10 << 20));
        assert_eq!(bytes("512k"), Ok(512 << 10));
        assert_eq!(bytes("7"), Ok(7));
        assert!(bytes("ten").is_err() && bytes("0").is_err() && bytes("5X").is_err());
        assert_eq!(seconds("0.5"), Ok(Duration::from_millis(500)));
        assert!(seconds("-1").is_err() && seconds("nan").is_err());
    }

    #[test]
    fn warc_options_parse_and_conflict() {
        let parse = |extra: &[&str]| {
            Args::try_parse_from(["crawl", "seeds", "--out", "d"].iter().chain(extra))
        };
        let args = parse(&[]).unwrap();
        assert_eq!(args.warc_compression, Compression::Zstd);
        assert_eq!(args.warc_max_size, 1 << 30);
        assert!(!args.no_warc);
        let args = parse(&["--warc-compression", "gzip", "--warc-max-size", "20K"]).unwrap();
        assert_eq!(args.warc_compression, Compression::Gzip);
        assert_eq!(args.warc_max_size, 20 << 10);
        assert!(parse(&["--no-warc"]).unwrap().no_warc);
        assert!(parse(&["--warc-compression", "xz"]).is_err());
        assert!(parse(&["--warc-max-size", "0"]).is_err());
        assert!(parse(&["--no-warc", "--warc-compression", "gzip"]).is_err());
    }

    #[test]
    fn output_options_parse_and_conflict() {
        let parse = |extra: &[&str]| {
            Args::try_parse_from(["crawl", "seeds", "--out", "d"].iter().chain(extra))
        };
        let args = parse(&[]).unwrap();
        assert_eq!(args.log_format, LogFormat::Tsv);
        assert!(args.log.is_none() && args.save.is_none() && !args.verbose);
        let args = parse(&[
            "--log-format",
            "jsonl",
            "--log",
            "f",
            "--save",
            "files",
            "-v",
        ])
        .unwrap();
        assert_eq!(args.log_format, LogFormat::Jsonl);
        assert_eq!(args.save, Some(Save::Files));
        assert!(parse(&["--log-format", "csv"]).is_err());
        assert!(parse(&["--save", "warc"]).is_err());
        assert!(parse(&["-q", "-v"]).is_err());
    }

    #[test]
    fn find_options_parse_and_check_the_text() {
        let parse = |extra: &[&str]| {
            Args::try_parse_from(["crawl", "seeds", "--out", "d"].iter().chain(extra))
        };
        let args = parse(&[]).unwrap();
        assert!(args.find.is_none() && !args.ignore_case);
        let args = parse(&["--find", "needle", "-i"]).unwrap();
        assert_eq!(args.find.as_deref(), Some("needle"));
        assert!(args.ignore_case);
        assert!(parse(&["--find", &"x".repeat(100)]).is_ok());
        let too_long = parse(&["--find", &"x".repeat(101)]).unwrap_err();
        assert_eq!(too_long.exit_code(), 2);
        assert!(parse(&["-i"]).is_err(), "-i needs --find");
    }

    #[test]
    fn focus_options_parse_and_depend() {
        let parse = |extra: &[&str]| {
            Args::try_parse_from(["crawl", "seeds", "--out", "d"].iter().chain(extra))
        };
        let args = parse(&["--focus", "orchid"]).unwrap();
        assert_eq!(
            (args.focus.as_deref(), args.focus_window),
            (Some("orchid"), 10000)
        );
        assert!(parse(&[]).unwrap().focus.is_none());
        assert!(parse(&["--focus", ""]).is_err());
        assert!(parse(&["--focus-window", "5"]).is_err(), "needs --focus");
        assert!(parse(&["--focus", "x", "--focus-window", "0"]).is_err());
    }

    #[test]
    fn shard_options_come_together() {
        let parse = |extra: &[&str]| {
            Args::try_parse_from(["crawl", "seeds", "--out", "d"].iter().chain(extra))
        };
        let args = parse(&["--shard", "2/8", "--exchange", "redis://127.0.0.1:1/0"]).unwrap();
        assert_eq!(args.shard.map(|s| (s.index, s.count)), Some((2, 8)));
        for alone in [
            &["--shard", "2/8"][..],
            &["--exchange", "redis://127.0.0.1:1/0"],
        ] {
            let err = parse(alone).unwrap_err();
            assert_eq!(err.exit_code(), 2);
            let missing = if alone[0] == "--shard" {
                "--exchange"
            } else {
                "--shard"
            };
            assert!(err.to_string().contains(missing), "{err}");
        }
        let err = parse(&["--shard", "8/8", "--exchange", "redis://x"]).unwrap_err();
        assert!(err.to_string().contains("below N"), "{err}");
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Args::command().debug_assert();
        Cli::command().debug_assert();
    }
}
