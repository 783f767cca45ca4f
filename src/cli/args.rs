//! The command line: every option with a one-line help and a longer explanation.
//!
//! These doc comments are the only text of an option: `--help` prints them, and
//! `cargo run --example manual` renders them into man/crawl.1, the shell completions and the
//! docs/options.md (tests/it/manpage.rs fails until that has been run). An option whose
//! default clap cannot show (an `Option` whose absence means something) ends its one-line help
//! with `Default: WHAT.`, which the Default column of docs/options.md takes.
//!
//! Values are validated here, before any machinery is built: a typo is an error (exit 2),
//! never a silent zero.

use crate::content::text::TextMode;
use crate::fetch::body::TypePattern;
use crate::output::urllog::LogFormat;
use crate::output::warc::{self, Compression};
use crate::tools::cachesim::CachesimArgs;
use crate::tools::dedupe::DedupeArgs;
use crate::tools::extract::ExtractArgs;
use crate::tools::rank::RankArgs;
use crate::tools::wacz::WaczArgs;
use crate::url::minhash::NearDuplicates;
use crate::url::normalize::{Requisites, Scope};
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
    Extract(ExtractArgs),
    Neardups(crate::tools::neardups::NeardupsArgs),
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
    /// stderr, --log FILE and --cookie-jar FILE). Two crawls cannot share one directory at the
    /// same time.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// N worker threads, each one request at a time (1 to 4096): at most N requests in flight.
    /// Default: as many requests in flight as the work needs, up to --max-connections.
    ///
    /// Without -j, HTTP and HTTPS requests are kept in flight by one event loop and their pages
    /// processed by one thread per core (requests through a proxy and --focus crawls take a
    /// worker thread each while they wait, started as needed), so the requests
    /// in flight follow the hosts politeness lets the crawl contact (at 100 ms a response and
    /// the default delay rule, about one per 11 hosts with work). -j N fixes the number, for
    /// benchmarks or to go easy on the machine; with few requests in flight and the CPU the
    /// limit (a fast local web), threads cost less per page than the event loop's hand-offs.
    /// More than the hosts gains nothing, since a host gets one request at a time (see
    /// --host-connections).
    #[arg(short = 'j', long = "jobs", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub jobs: Option<u32>,

    /// Without -j: at most N requests in flight, 1 to 16384. Default:
    /// min((open files - 256) / 3, available memory / 4 / 1 MiB), within 16 to 4096.
    ///
    /// The cap that protects the machine. The crawl raises its soft open-file limit to the
    /// hard one at the start; each connection counts a socket in use and two kept idle, and
    /// 1 MiB of memory (buffers, the page it holds, a blocking request's thread stack), out of a quarter of
    /// the memory available at the start. Answers received and waiting for a processing
    /// thread count apart, up to N more (they hold their pages, not sockets): hosts past their
    /// rest are not held back by a busy machine's backlog. Ignored with -j.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=16384))]
    pub max_connections: Option<u32>,

    /// Stop after this many pages have been fetched (with --shard: by this shard). Default: no
    /// limit.
    ///
    /// A run limit, counted per run: the crawl stops resumably (summary.json's ending
    /// page-limit, exit status 4, or complete and 0 if nothing was left), and the same command
    /// fetches up to N more.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_pages: Option<u64>,

    /// Fetch at most this many pages from one host (host:port). Default: no limit.
    ///
    /// Once a host's pages reach N, its further URLs are not fetched: each gets a URL-log line
    /// with status 0 and the note host-budget, and is counted in summary.json
    /// (filtered.host_budget). Ends crawler traps such as endless calendars without relying on
    /// depth. The counts survive a resume (DIR/budget/).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_pages_per_host: Option<u64>,

    /// Stop after this long (90m, 2h, 1h30m, 30s, or plain seconds). Default: no limit.
    ///
    /// A run limit, for a nightly job that crawls for at most two hours and continues the next
    /// night: once the time has passed no more work is handed out, the fetches in flight finish
    /// (each within --timeout), the state is saved, summary.json's ending is time-limit, and
    /// the exit status is 4. Running the same command again continues where it stopped;
    /// nothing is lost and no page is fetched twice. A limit reached with nothing left to
    /// fetch ends the crawl complete (exit status 0). The same holds at --max-bytes and at
    /// --max-pages (page-limit).
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub max_time: Option<Duration>,

    /// Stop after receiving this many bytes of response bodies (suffixes K, M, G). Default: no
    /// limit.
    ///
    /// A run limit like --max-time (summary.json's ending byte-limit, exit status 4; the same
    /// command continues): the bytes counted are summary.json's `bytes`, each response's body as
    /// received, so the crawl stops with at most the bodies in flight past the limit. The
    /// suffixes are powers of 1024.
    #[arg(long, value_name = "BYTES", value_parser = bytes)]
    pub max_bytes: Option<u64>,

    /// Follow links at most this many hops from a seed (seeds are depth 0). Default: 100.
    ///
    /// The default ends traps that make a new URL of every link (a calendar linking each month
    /// to the next) after 100 pages per direction. With --find the default is 4 (depth 5 when
    /// the start page counts as 1).
    #[arg(long, value_name = "N")]
    pub max_depth: Option<u32>,

    /// Fetch what pages need to render (page requisites) one hop past --max-depth.
    ///
    /// Requisites are images (src and srcset), scripts, stylesheets, icons and preloads
    /// (<link rel>), frames, embeds, audio, video and their posters and tracks, and what CSS
    /// references (url() in stylesheets, <style> and style attributes; a stylesheet's @import
    /// and what that imports, a few hops further). The page at the last depth still gets them;
    /// a requisite's own links are not followed, a stylesheet's excepted. `scope`: on the
    /// hosts of --scope. `any`: on any host too (CDNs, font hosts), politely and within the
    /// private-address rules like any fetch. `off`: no further than links go. The URL log
    /// notes `requisite` on a URL fetched only as one. Default: scope; with --find, off (the
    /// hunt reads HTML and text only: none past its depth).
    #[arg(long, value_enum, value_name = "WHERE")]
    pub requisites: Option<Requisites>,

    /// Stop at the first fetched page that contains TEXT and print where (at most 100 characters).
    ///
    /// A keyword hunt. TEXT is a literal of 1 to 100 characters on one line, matched
    /// case-sensitively unless -i. The source of every 2xx page of type HTML or text/plain is
    /// searched line by line, markup included, after its content encoding (gzip) and its
    /// charset (the Content-Type's, else a <meta charset> near the top, else UTF-8) are undone.
    ///
    /// stdout then carries only the result, one line `URL TAB LINE_NO TAB LINE`, with control
    /// characters in the line escaped (a tab as \t); a line longer than 400 characters is shown
    /// as a window around the match. The URL log goes to --log FILE if given, and nowhere
    /// otherwise. If nothing matches within the depth limit, stdout stays empty and stderr says
    /// so (unless -q). Either way the exit status is 0 (3 if the crawl mostly failed, as
    /// --max-error-ratio says; 4 when a run limit such as --max-pages ended the hunt first).
    /// The crawl is otherwise an ordinary one:
    /// polite, obeying robots.txt, archiving to --out. With several workers the first match
    /// fetched wins; -j 1 gives strict breadth-first order.
    #[arg(long, value_name = "TEXT", value_parser = crate::crawl::hunt::parse_text)]
    pub find: Option<String>,

    /// Match --find's TEXT regardless of case (Unicode case folding). Needs --find.
    #[arg(short = 'i', long, requires = "find")]
    pub ignore_case: bool,

    /// Which hosts the crawl may visit beyond the seeds.
    ///
    /// `host`: the seeds' hosts (host and port) only. `domain`: the seeds' registrable
    /// domains (www.example.com also covers shop.example.com), any port. `any`: no limit.
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
    /// Mercator's politeness rule: after a response that took t, the host rests
    /// clamp(F × t, --min-delay, --max-delay), or its robots.txt Crawl-delay if that is
    /// longer. 0 turns it off (for benchmarks of your own servers); robots.txt Crawl-delay and
    /// --min-delay still apply.
    #[arg(long, value_name = "F", default_value_t = 10.0, value_parser = non_negative)]
    pub delay_factor: f64,

    /// Never contact a host sooner than this many seconds after its last response.
    ///
    /// Seconds may be fractional (0.5).
    #[arg(long, value_name = "SECS", default_value = "0", value_parser = seconds)]
    pub min_delay: Duration,

    /// Cap the delay rule at this many seconds.
    ///
    /// robots.txt Crawl-delay may still ask for more, up to an hour.
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = seconds)]
    pub max_delay: Duration,

    /// At most N requests in flight per host, each connection resting by the delay rule.
    ///
    /// For crawling your own server fast; the default is Mercator's one request at a time.
    /// Each connection rests by the delay rule after its own responses.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub host_connections: u32,

    /// At most N requests per second to any one host (fractional: 0.2 is one every 5 s).
    /// Default: no limit beyond the delay rule.
    ///
    /// Politeness in the unit site operators state. One more lower bound beside the delay rule
    /// (--delay-factor), robots.txt Crawl-delay and --min-delay; the strictest wins. A host's
    /// requests start at least 1/N seconds apart, and a connection rests at least 1/N seconds
    /// after each response. --host-rules may set another rate for some hosts.
    #[arg(long, value_name = "N", value_parser = crate::schedule::hostrules::parse_rate)]
    pub rate: Option<f64>,

    /// At most N requests per second across all hosts (fractional allowed). Default: no limit.
    ///
    /// For a small uplink or an agreement with a CDN. Requests (robots.txt and sitemaps
    /// included) are handed out at least 1/N seconds apart, with no burst after a pause.
    #[arg(long, value_name = "N", value_parser = crate::schedule::hostrules::parse_rate)]
    pub max_rate: Option<f64>,

    /// Per-host overrides of --rate, --host-connections and --max-pages-per-host, read from FILE.
    ///
    /// For your own servers beside the polite default for everyone else. One rule per line:
    /// a host pattern, then KEY=VALUE settings separated by spaces; `#` starts a comment,
    /// blank lines are skipped. Patterns: `example.org` (that host, any port),
    /// `example.org:8080` (that port only), `*.example.org` (example.org and every name under
    /// it, on any port: a `*.` pattern with a port is an error). Keys: `rate=N` (requests per second, as --rate; `rate=none` lifts --rate),
    /// `connections=N` (1 to 256, as --host-connections), `pages=N` (as --max-pages-per-host;
    /// `pages=none` lifts it). The most specific pattern wins: host:port, then the host, then
    /// the longest `*.` domain. Example lines: `*.intranet.example connections=8 rate=none`,
    /// `archive.example.org rate=20 pages=100000` (docs/politeness.md has a whole file).
    ///
    /// The rules may be laxer than the defaults, but robots.txt (and its Crawl-delay) still
    /// applies, and --delay-factor and --min-delay still rest each connection. A malformed line
    /// is exit status 2 naming FILE:LINE.
    #[arg(long, value_name = "FILE")]
    pub host_rules: Option<PathBuf>,

    /// Do not read sitemaps.
    ///
    /// By default each host's robots.txt `Sitemap:` lines are read (for a seed's host whose
    /// robots.txt names none, its /sitemap.xml): XML, sitemap indexes (nested down to level 3),
    /// gzip and plain text, at most 50,000 URLs and 50 MiB of text per file. The pages they
    /// list are crawled at depth 1 through the same scope, filters and seen set as links. A
    /// sitemap is fetched through its host's queue, logged and archived; it is not a page for
    /// --max-pages.
    #[arg(long)]
    pub no_sitemaps: bool,

    /// Follow links regardless of page-level robots directives (for archiving).
    ///
    /// By default a page whose <meta name="robots"> (or <meta name="TOKEN">, TOKEN being the
    /// robots.txt token) or X-Robots-Tag header (also in its `TOKEN: directives` form) says
    /// nofollow or none has none of its links followed, and a link with rel="nofollow" is not
    /// followed. noindex is only noted in the URL log: the page is archived all the same.
    #[arg(long)]
    pub ignore_page_robots: bool,

    /// Note HTML pages whose visible text nearly repeats a page crawled before them.
    ///
    /// `note`: a page whose resemblance to some earlier page of the crawl (any host; on a
    /// recrawl, the previous crawls' pages too, and those of --dedupe-against) is at least --near-duplicates-threshold is
    /// noted near-duplicate:URL in the URL log, URL the earliest such page (over its robots
    /// directives), listed in DIR/neardups.tsv (`crawl neardups DIR`) and counted in
    /// summary.json (near_duplicates). Resemblance is Broder's: the Jaccard similarity of the
    /// two pages' sets of 5-word shingles of visible text, estimated from 256-value MinHash
    /// signatures kept on disk in DIR/neardup (about 0.7 KiB a page). Pages of fewer than 50
    /// words are left out. `skip-links`: the same, and its links are not followed: a calendar
    /// or faceted search that renders the same page under endless URLs stops after its first
    /// pages (a page whose only way in is a near-duplicate is then missed). `off` computes no
    /// signature.
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = NearDuplicates::Off)]
    pub near_duplicates: NearDuplicates,

    /// The resemblance from which a page is a near-duplicate of an earlier one (--near-duplicates).
    ///
    /// A number above 0 and at most 1: 1 notes only pages whose 5-word shingles are all an
    /// earlier page's (and the earlier page's all theirs).
    #[arg(long, value_name = "R", default_value_t = 0.9, value_parser = resemblance)]
    pub near_duplicates_threshold: f64,

    /// User-Agent header; its first word (before `/`) is the robots.txt token.
    #[arg(long, value_name = "UA", default_value = concat!("crawl/", env!("CARGO_PKG_VERSION")))]
    pub user_agent: String,

    /// Send this header with every request, as `Name: value` (repeatable).
    ///
    /// Sent with every request, robots.txt included, after the crawler's own headers; a
    /// `User-Agent` here replaces --user-agent's on the wire (robots.txt still uses
    /// --user-agent's token). Host cannot be set; a malformed header is exit status 2. Values
    /// are never printed (errors name a header by its name or position); the WARC request
    /// records keep them, as sent.
    #[arg(long = "header", value_name = "'NAME: VALUE'")]
    pub headers: Vec<String>,

    /// Send the cookies of FILE (a Netscape cookie file, as curl and wget write them).
    ///
    /// A malformed line is exit status 2, reported as FILE:LINE (never with its value).
    /// Cookies are one jar for the whole crawl, sent by the domain, path, Secure and expiry
    /// rules of RFC 6265 (a cookie for Domain=example.com reaches every host under it); a
    /// Domain that is a public suffix is refused. Cookies that servers set during the crawl are
    /// kept and sent too (in memory; see --cookie-jar).
    #[arg(long, value_name = "FILE")]
    pub load_cookies: Option<PathBuf>,

    /// Keep cookies in FILE: read at the start if it exists, written back at each checkpoint
    /// and at the end (and at the start: an unwritable FILE is an error).
    ///
    /// A Netscape cookie file (curl -b and wget --load-cookies read it). Written at once at the
    /// start (a FILE that cannot be written is exit status 2), then replaced atomically
    /// (temporary file, fsync, rename) at each checkpoint (every 2 s while servers set
    /// cookies) and at the end, session cookies included (expiry 0); running the same command
    /// again (a resume) starts with the cookies it holds.
    #[arg(long, value_name = "FILE")]
    pub cookie_jar: Option<PathBuf>,

    /// Fetch everything through this proxy: http://, https:// (CONNECT), socks5:// or
    /// socks5h://. Default: the environment.
    ///
    /// http:// and https:// proxies are CONNECT tunnels, for http and https URLs alike;
    /// user:password@ works for every kind. Host names are resolved here and checked (see
    /// --allow-private), and the proxy is sent the address; with --allow-private, CONNECT and
    /// socks5h:// proxies resolve names themselves. Overrides the environment: without it, the
    /// first of ALL_PROXY, HTTPS_PROXY, HTTP_PROXY (or their lower-case forms) names the proxy
    /// for every URL, and NO_PROXY (comma-separated hosts, .domain, *.domain, *) lists hosts
    /// reached directly. A bad URL is exit status 2 (shown without its password).
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
    /// Mozilla's roots stay trusted: this adds an internal or test certificate authority. A
    /// file with no certificate is exit status 2.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Vec<PathBuf>,

    /// Make a full TLS handshake on every connection instead of resuming the server's session.
    ///
    /// By default a later connection to a server resumes the session of an earlier one (TLS 1.3
    /// tickets, TLS 1.2 session IDs and tickets), kept in memory for as many servers as idle
    /// connections are kept: a server that closes idle connections sooner than its host's rest
    /// then costs an abbreviated handshake, not a full one with its certificate. Sessions are not
    /// kept across runs. summary.json counts both (connections.tls_handshakes, .tls_resumed).
    #[arg(long)]
    pub no_tls_resume: bool,

    /// Give up on a request after this many seconds (connect, headers and body together).
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = seconds)]
    pub timeout: Duration,

    /// Give up on a response that comes slower than this many bytes a second (0: never).
    ///
    /// Measured over spans of --low-speed-time from the response's first byte on: a server
    /// that trickles a body (a byte a second, forever) holds a request only that long, not
    /// until --timeout. A `timeout` failure, retried as one. Suffixes K, M, G.
    #[arg(long, value_name = "BYTES", default_value = "100", value_parser = bytes)]
    pub low_speed_limit: u64,

    /// The span --low-speed-limit is measured over, in seconds.
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = seconds)]
    pub low_speed_time: Duration,

    /// Close a kept connection once unused for this many seconds (0: keep none).
    ///
    /// A connection is kept after its response for the host's next request. Servers keep an
    /// idle one 5 to 75 seconds; the crawler closes its side after this long, so that hosts it
    /// has finished with do not hold a socket each. A host resting longer opens a new
    /// connection. Checked as requests take and put back connections, with no timer: after a
    /// while with no request, they are closed at the next one. Seconds may be fractional.
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = seconds)]
    pub idle_timeout: Duration,

    /// Ask for a page again at most N times after a transient failure (0: never).
    ///
    /// Transient: no answer because of a timeout, a refused or reset connection, or one closed
    /// before the answer; or a 502 or 504 from a gateway. A 500 is the server's answer and is
    /// not asked again; 429 and 503 follow their Retry-After (3 times at most). The page waits
    /// --retry-wait (10 s), then four times longer at each retry (40 s, 160 s): on its own
    /// while its host answers other requests (the host serves its other URLs meanwhile), with
    /// its whole host once two new pages failed in a row, no answer between; each attempt is a URL-log line
    /// (`connect,retry-after:10`), the last one noted `retries-exhausted`. A retried page counts
    /// once (pages, --max-pages, --max-pages-per-host). A robots.txt that does not answer (no
    /// response, or a 5xx) is asked again on the same schedule; if it never answers, its
    /// host's URLs are not fetched: each is a URL-log line with status 0 and the note
    /// host-unreachable, counted in summary.json, and asked for again when the crawl is
    /// resumed. A host that fails 5 times in a row (pages or robots.txt, no answer at all) is
    /// parked: its URLs wait the schedule's next wait (160 s) once more, and if that attempt
    /// fails too they are all noted host-unreachable, without a request each.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=10))]
    pub retries: u32,

    /// Wait this long before the first retry of a transient failure (10s, 2m, 50ms).
    ///
    /// Each next retry waits four times longer; a parked host waits once more after a page's
    /// last. A plain number is seconds.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = duration)]
    pub retry_wait: Duration,

    /// Exit with status 3 if more than this share of fetches failed (0 to 1).
    ///
    /// A fetch is a page asked for (once, however often it was retried) or a URL not asked for
    /// because its host was unreachable (host-unreachable); it failed if it got no response (a
    /// timeout, a refused connection, a TLS failure...; not a private-address or bad-url
    /// refusal) or was host-unreachable. A 4xx or 5xx answer is the server's, not a failure of
    /// the crawl. A crawl in which no seed host answered at all exits 3 as well. Such a crawl
    /// is not marked complete: running the same command again resumes it (summary.json's
    /// outcome says mostly-failed or nothing-answered). 1 turns the ratio off.
    #[arg(long, value_name = "R", default_value_t = 0.5, value_parser = ratio)]
    pub max_error_ratio: f64,

    /// Keep at most this many bytes of a response body (suffixes K, M, G).
    ///
    /// The suffixes are powers of 1024. A body whose Content-Length is over it is not read at
    /// all (note too-long), unless --keep-truncated.
    #[arg(long, value_name = "BYTES", default_value = "10M", value_parser = bytes)]
    pub max_body: u64,

    /// Read only bodies of this media type (`text/html`, `text/*`; repeatable: any may match).
    /// Default: any.
    ///
    /// A pattern is a type, `type/*` or `*/*`, without parameters. Decided from the response's
    /// Content-Type (none counts as application/octet-stream), never from the URL's name. Any
    /// other body is not read: the connection is closed right after the headers, which are
    /// archived as a response record marked `WARC-Truncated: unspecified`, and the URL log
    /// notes `type-rejected`. robots.txt is always read; responses without a body (1xx, 204,
    /// 304) are taken as they are.
    #[arg(long, value_name = "PATTERN")]
    pub accept_type: Vec<TypePattern>,

    /// Never read bodies of this media type (`image/*`, `application/pdf`; repeatable).
    ///
    /// Wins over --accept-type; treated as --accept-type describes (`type-rejected`).
    #[arg(long, value_name = "PATTERN")]
    pub reject_type: Vec<TypePattern>,

    /// Read the first --max-body bytes of a body whose Content-Length is over --max-body.
    ///
    /// The URL log then notes `truncated`. Without it such a body is not read at all: the
    /// connection is closed after the headers, the record is marked `WARC-Truncated: length`,
    /// and the URL log notes `too-long`. A body without a Content-Length is cut at --max-body
    /// either way (`truncated`).
    #[arg(long)]
    pub keep_truncated: bool,

    /// Connect to private addresses too (loopback, RFC 1918, link-local, CGNAT, unique-local, …).
    ///
    /// By default the crawler refuses, after DNS, every address in a special-purpose range of
    /// the IANA registries: loopback (127.0.0.0/8, ::1), private (10/8, 172.16/12,
    /// 192.168/16), link-local (169.254/16, including the cloud metadata address
    /// 169.254.169.254, and fe80::/10), shared CGNAT (100.64/10), unique-local (fc00::/7),
    /// unspecified (0.0.0.0/8, ::), documentation, benchmarking, multicast and reserved ranges,
    /// and IPv6 addresses that embed one of these (IPv4-mapped, NAT64 64:ff9b::/96, 6to4
    /// 2002::/16). Links, redirect targets and names that resolve to such an address alike are
    /// refused without a packet sent (URL log `private-address`, counted in summary.json).
    ///
    /// A range is open when a seed's host is itself an address in it (a seed on 10.1.2.3 opens
    /// 10.0.0.0/8, a seed on 127.0.0.1 opens 127.0.0.0/8, nothing else) or is `localhost` (the
    /// loopback ranges); a seed given by another name opens nothing, whatever it resolves to.
    /// Link-local ranges (169.254/16, fe80::/10) and the cloud metadata addresses
    /// (169.254.169.254, fd00:ec2::254) never open through a seed: a seed list from an
    /// untrusted source cannot point the crawler at a cloud's metadata endpoint: such a seed
    /// address is bad input (exit status 2), refused before any connection. To crawl an
    /// intranet by name, or those ranges, give --allow-private.
    ///
    /// A proxy's own address is never refused. A proxy's targets are resolved here and
    /// checked, and every proxy is sent the checked address, never the name: an HTTP(S)
    /// CONNECT or socks5h:// proxy too (TLS through the tunnel still checks the name's
    /// certificate), so a name only the proxy's DNS knows fails. With --allow-private names are
    /// left to CONNECT and socks5h:// proxies to resolve.
    #[arg(long)]
    pub allow_private: bool,

    /// How each WARC record is compressed: `zstd` (.warc.zst) or `gzip` (.warc.gz).
    ///
    /// Every response (robots.txt included) and its request are archived under DIR/warc/.
    /// `zstd`: one zstd frame per record, with content size and checksum (.warc.zst, the
    /// warc-zstd convention, no dictionary); read .warc.zst with FastWARC, or with any WARC
    /// reader through `zstdcat FILE | warcio ...`. `gzip`: one gzip member per record
    /// (.warc.gz), for warcio, pywb and replayweb.page.
    #[arg(long, value_enum, value_name = "KIND", default_value_t = Compression::Zstd)]
    pub warc_compression: Compression,

    /// The zstd level of each WARC record: -7 to 19, default 1 (negative: zstd's fast levels).
    ///
    /// zstd is most of the archive's CPU. On HTML pages of ~20 KB, level -1 takes ~20 % less
    /// of zstd's CPU for ~17 % more archive bytes, -5 ~30 % less for ~40 % more; levels above
    /// 1 save a few percent of bytes for more CPU. Every level is read by every zstd reader.
    /// Only with --warc-compression zstd (gzip members are deflate's default level).
    #[arg(
        long,
        value_name = "LEVEL",
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(i32).range(
            *warc::ZSTD_LEVELS.start() as i64..=*warc::ZSTD_LEVELS.end() as i64
        )
    )]
    pub zstd_level: Option<i32>,

    /// Start a new WARC file once the current one reaches this size (suffixes K, M, G).
    ///
    /// Sizes are compressed bytes; a file ends after the record that crosses the limit, so a
    /// file may exceed it by one request and response.
    #[arg(long, value_name = "BYTES", default_value = "1G", value_parser = bytes)]
    pub warc_max_size: u64,

    /// Leave the WARC-Block-Digest out of response records (they keep their payload digest).
    ///
    /// By default every record carries a `sha1:` block digest, a response record's over its
    /// HTTP head and body, beside its payload digest (the SHA-1 of its body, which payload
    /// dedupe, the CDXJ index and revisit records use), as wget, warcio and Browsertrix write
    /// them: validation tools (`warcio check`, `fastwarc check`) verify it, and only it covers
    /// the HTTP head. Both digests are taken in one pass over the body; leaving the block digest
    /// out saves that second SHA-1 lane, ~3-5 % of a crawl's CPU where pages are large. Request,
    /// revisit and warcinfo records keep theirs (they are small).
    #[arg(long, conflicts_with = "no_warc")]
    pub no_warc_block_digest: bool,

    /// The default since response records carry their block digest again: accepted, so that
    /// scripts written for the release where it was opt-in keep working.
    #[arg(long, hide = true, conflicts_with_all = ["no_warc", "no_warc_block_digest"])]
    pub warc_block_digest: bool,

    /// Keep each HTML and plain-text page's text: `main` (the default) or `full`.
    ///
    /// `main` keeps the main content (paragraphs, headings, lists, tables and code, in reading
    /// order) without navigation, headers, footers, sidebars, comments and advertisements;
    /// `full` keeps all visible text. The text is written as WARC/1.1 `conversion` records in
    /// WET files beside the WARC files (DIR/warc/*.warc.wet.zst, or .warc.wet.gz with
    /// `--warc-compression gzip`), each referring to its page's response record
    /// (`WARC-Refers-To`), and, with `--log-format jsonl`, as the `text` key of the page's
    /// line, beside an HTML page's `title`, `lang`, `canonical`, `description` and `published`
    /// (each where the page says it). With `--no-warc`, only the URL log carries them.
    #[arg(long, value_enum, value_name = "MODE", num_args = 0..=1, default_missing_value = "main")]
    pub text: Option<TextMode>,

    /// Write each HTML page's main content as Markdown.
    ///
    /// The main content is what `--text main` keeps, with its links and images: ATX headings,
    /// nested lists, emphasis, links and images made absolute (against `<base href>` where the
    /// page has one), fenced code blocks with the language their classes name (`language-x`,
    /// `lang-x`, Sphinx's `highlight-x`), inline code, GFM pipe tables and blockquotes; text
    /// that would read as Markdown is escaped. Written as the `markdown` key of the page's
    /// `--log-format jsonl` line (with the metadata keys `--text` writes) and, with `--save
    /// markdown`, as DIR/markdown/HOST_PORT/PATH.md. Needs one of the two.
    #[arg(long)]
    pub markdown: bool,

    /// Do not write WARC files (the URL log and the crawl are unchanged).
    ///
    /// Cannot be combined with --warc-compression, --zstd-level or --warc-max-size.
    #[arg(long, conflicts_with_all = ["warc_compression", "zstd_level", "warc_max_size"])]
    pub no_warc: bool,

    /// Archive every payload whole, even one archived before (turns payload dedupe off).
    ///
    /// By default a 2xx page whose payload (its body, by SHA-1) was archived before, under any
    /// URL, in this crawl, an earlier run in the same --out or a crawl named by
    /// --dedupe-against, is written as a WARC `revisit` record (profile identical-payload-digest)
    /// naming the first capture's URL and date, without the body, and noted `duplicate` in the
    /// URL log; replay tools (pywb, replayweb.page) serve the first capture's body. Turn it off
    /// for tools that read each record on its own. The store of archived payloads is DIR/digests/.
    #[arg(long, conflicts_with = "no_warc")]
    pub no_payload_dedupe: bool,

    /// Also count payloads archived by the crawl in DIR as archived before (repeatable).
    ///
    /// DIR is another crawl's --out (or a directory of CDXJ indexes): its CDXJ indexes are read
    /// at the start, and a page whose payload one of its captures holds is written as a revisit
    /// of that capture. Replaying such a page needs that crawl's WARC files beside this one's.
    /// With --near-duplicates, DIR's near-duplicate index (DIR/neardup, if it has one) is read
    /// too: its pages count as crawled before this crawl's, and a page near one of them is
    /// noted near-duplicate:URL with that crawl's URL. DIR is read, never written.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["no_payload_dedupe", "no_warc"])]
    pub dedupe_against: Vec<PathBuf>,

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
    /// there was no response); absent values are null. See URL LOG in the man page.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = LogFormat::Tsv)]
    pub log_format: LogFormat,

    /// Write the URL log to FILE (created or truncated) instead of stdout. Default: stdout.
    ///
    /// A FILE that cannot be opened is bad input (exit status 2).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Also save each fetched HTML page as a file: `files` writes DIR/pages/, `markdown`
    /// DIR/markdown/ (comma-separated or repeated for both).
    ///
    /// Pages answered 2xx with an HTML type are written, content encoding (gzip) decoded, as
    /// DIR/pages/HOST_PORT/PATH, every name made safe (see STATE DIRECTORY in the man page);
    /// `markdown` writes each one's main content as Markdown (`--markdown`, which it implies)
    /// to DIR/markdown/HOST_PORT/PATH.md, the same name with `.md` added. WARC files are
    /// written as well.
    #[arg(long, value_enum, value_name = "WHAT", value_delimiter = ',')]
    pub save: Vec<Save>,

    /// Also record the link graph: DIR/links.tsv, one `from_url TAB to_url` line per link.
    ///
    /// Each link of a fetched page that passed the scope and filters, as the page has it
    /// (canonical URLs, repeats kept; not nofollow links). `crawl rank` reads it. Off by
    /// default: it is often the crawl's largest output. Appended to by each run given it:
    /// resume with it too to keep the graph whole.
    #[arg(long)]
    pub link_graph: bool,

    /// Take fields out of pages by the rule sets in RULES: JSON lines to --extract-out.
    ///
    /// RULES is a text file of rule sets, each a `[name]` line, a `url = REGEX` line (searched
    /// in the page's URL) and fields, `name = EXPR` (the first value) or `name[] = EXPR`
    /// (every value). EXPR is a CSS selector ending in `::text` (the elements' text),
    /// `::attr(NAME)` (an attribute) or nothing (the element's HTML); `re:REGEX` (over the
    /// page as served: the first capture group, or the whole match); or `jsonld:PATH` (a path
    /// into the page's JSON-LD, as `Article.datePublished`). Lines starting with `#` are
    /// comments. Each 2xx HTML or text page and each rule set whose `url` matches it gives one
    /// JSON object `{"url", "fetched", "rule", fields...}`, unless every field is empty (then
    /// it is counted in summary.json's `extract.empty`). Only pages some rule set matches are
    /// parsed into an HTML tree. A bad line is exit status 2 naming FILE:LINE. See
    /// docs/extract.md.
    #[arg(long, value_name = "RULES")]
    pub extract: Option<PathBuf>,

    /// Where --extract's JSON lines go (appended to); `-` is stdout (needs --log FILE).
    /// Default: DIR/extract.jsonl.
    #[arg(long, value_name = "FILE", requires = "extract")]
    pub extract_out: Option<PathBuf>,

    /// Also write --extract's objects as rows of the SQLite database FILE (created if absent).
    ///
    /// One table per rule set, named after it: `url` (the primary key), `fetched` (RFC 3339)
    /// and a column per field (a list as a JSON array). A later crawl or recrawl on the same
    /// FILE updates a page's row; a row replaced by other values is kept in `NAME_history`,
    /// with the time it was replaced. Fields added to RULES since add their columns.
    #[arg(long, value_name = "FILE", requires = "extract")]
    pub extract_db: Option<PathBuf>,

    /// On a state directory whose crawl completed, crawl afresh instead of recrawling.
    ///
    /// Running again on a completed crawl recrawls it: every page it fetched is asked for
    /// again with If-None-Match/If-Modified-Since and recorded as new, changed, unchanged or
    /// gone. --restart forgets the previous crawl instead (seen set, frontier, the record of
    /// fetched pages, robots.txt answers; the WARC files stay). A recrawl (and a resume)
    /// forgets only the robots.txt answers that could not be had (no answer, 5xx), so a host
    /// that was unreachable is asked again at once. On an unfinished crawl --restart also
    /// discards the progress made. See RESUME AND RECRAWL in the man page.
    #[arg(long)]
    pub restart: bool,

    /// A recrawl asks for at most N pages: those likeliest to have changed since their last
    /// visit. Default: every page, as a recrawl without it.
    ///
    /// Each page's visits and changes (by payload digest; a 304 is unchanged) are kept in
    /// DIR/fetched.tsv. Its change rate is Cho and Garcia-Molina's estimate from them, and the
    /// probability that it changed since its last visit 1 - e^(-rate x time since). Up to 15 %
    /// of N (what they leave goes to the others) go to URLs known but not fetched yet, those
    /// known longest first; the rest to the pages most likely changed. The pages left out are
    /// noted deferred and kept as they were for the next recrawl. URLs found by this recrawl
    /// are asked for while N has room, and otherwise deferred to the next recrawl's share.
    /// Sitemaps are read as usual and do not count. No effect on a first crawl.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub recrawl_budget: Option<u64>,

    /// Focused crawl: favour URLs linked from pages containing TEXT and from good hubs.
    ///
    /// TEXT is matched in each page's HTML, ignoring ASCII case. A URL scores, for each such
    /// page linking to it, 1 plus the page's hub score (HITS over the links of the matching
    /// pages seen so far, recomputed every 100 pages or more; the best hub counts 1). Links of
    /// other pages score 0, so until a matching page is found the crawl is breadth-first.
    ///
    /// Up to --focus-window URLs wait in memory, best first (equal scores first in, first
    /// out); the rest stay in the disk frontier, first in first out. The window tops itself up
    /// from the frontier's head, so it looks that many URLs ahead of breadth-first order; newly
    /// found URLs reach the disk frontier first, so a kill loses none. The per-host queues then
    /// hold at most 4 URLs per worker (at least 16), so that the order comes from the window;
    /// and when links of matching pages wait in the duplicate eliminator, it is asked to merge
    /// early (at most once per max(16, seen/64) pages); the worker that asked waits for that
    /// merge, so with -j 1 the order does not depend on how long a merge takes.
    #[arg(long, value_name = "TEXT", value_parser = non_empty)]
    pub focus: Option<String>,

    /// URLs held in the --focus priority window, in memory (about 100 bytes each).
    #[arg(long, value_name = "N", default_value_t = 10000, requires = "focus", value_parser = clap::value_parser!(u64).range(1..=1 << 24))]
    pub focus_window: u64,

    /// Crawl as shard K of N (counted from 0): only the hosts that hash to K.
    ///
    /// Needs --exchange. This process crawls only the hosts whose host:port hash to K (jump
    /// consistent hash of XXH3). Every shard reads the whole seed file (the scope comes from
    /// all seeds) and crawls the seeds it owns; a URL found for another shard's host is checked
    /// against a cache of URLs recently sent (CLOCK, 131,072 entries), written to that shard's
    /// outbox under DIR/shard/outbox/ before the page counts as done, and sent through the
    /// broker, where the other shard reads it, offers it to its seen set at the depth it had,
    /// and only then acknowledges it.
    ///
    /// Each shard has its own --out, which records K/N: another K/N on resume is refused (exit
    /// status 2), and so is an N the broker holds for these seeds already; a second process
    /// for one shard is refused by a lease in the broker. The crawl ends when every shard is
    /// idle and every batch sent has been received; a shard that has not started yet keeps the
    /// others waiting. Each shard writes its own summary.json (with a `shard` object); `crawl
    /// shards` adds them up.
    ///
    /// --max-pages counts this shard's pages. --find stops every shard: the one that finds the
    /// text prints it and leaves a stop mark in the broker, which the others read within a
    /// fraction of a second (their summary.json names the finder in shard.found_by). --focus
    /// is refused (HITS would see one shard's links only). Sitemaps of another shard's hosts
    /// are left to that shard.
    ///
    /// Recrawls: the same shard commands, run again once the crawl has completed, recrawl it
    /// as one process would (conditional requests, revisit records, payload dedupe,
    /// --recrawl-budget and --max-time per shard, --restart). The broker numbers the runs and
    /// keeps each run's reports, counters and stop marks apart (a finished run's expire an
    /// hour after the next has started); a run starts once every shard of the one before has
    /// ended it, and a shard of another run than the broker's is refused, naming both.
    #[arg(long, value_name = "K/N", requires = "exchange", value_parser = shard)]
    pub shard: Option<crate::shard::owner::Shard>,

    /// The broker the shards exchange URLs through: redis://HOST:PORT[/DB] (with --shard).
    ///
    /// Redis Streams, or Valkey. Required with --shard and only with it. Redis should run with
    /// `appendonly yes` and `appendfsync always`; otherwise a crash of the broker may lose URLs
    /// in transit, and a warning says so.
    #[arg(long, value_name = "URL", requires = "shard")]
    pub exchange: Option<String>,

    /// Print nothing on stderr but errors (no progress, no summary).
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Without a terminal, print a status line on stderr every 10 seconds and at the end.
    ///
    /// The status line: pages, pages per second, MiB, frontier size, URLs seen, CLOCK hit
    /// rate, hosts busy and with work, fetches without a response. Without a terminal, -v also
    /// prints the summary at the end (without -v, nothing but errors, so cron mails only
    /// failures). On a terminal a progress bar with the same figures is shown anyway, and
    /// cleared before the summary.
    #[arg(short, long)]
    pub verbose: bool,
}

/// The whole command line as clap sees it, for the manual's generator (`examples/manual/`):
/// the man page, the shell completions and docs/options.md are rendered from it.
pub fn cli_command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// What `--save` writes besides the WARC archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Save {
    /// Each HTML page as a file under DIR/pages/.
    Files,
    /// Each HTML page's main content as Markdown under DIR/markdown/ (implies --markdown).
    Markdown,
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

/// A share from 0 to 1 (`--max-error-ratio`).
fn resemblance(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if r > 0.0 && r <= 1.0 => Ok(r),
        _ => Err(format!(
            "expected a resemblance above 0 and at most 1 such as 0.9, found {text:?}"
        )),
    }
}

fn ratio(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
        _ => Err(format!(
            "expected a share from 0 to 1 such as 0.5, found {text:?}"
        )),
    }
}

/// A length of time (`--max-time`, `--retry-wait`): `90m`, `2h`, `1h30m`, `30s`, `50ms`
/// (fractions allowed: `1.5h`), or plain seconds; never zero.
pub fn duration(text: &str) -> Result<Duration, String> {
    let fail =
        || format!("expected a duration such as 90m, 2h, 1h30m, 30s, 50ms or 3600, found {text:?}");
    let t = text.trim();
    if let Ok(secs) = t.parse::<f64>() {
        return match Duration::try_from_secs_f64(secs) {
            Ok(d) if !d.is_zero() => Ok(d),
            _ => Err(fail()),
        };
    }
    let mut total = Duration::ZERO;
    let mut rest = t;
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(fail)?;
        let (number, after) = rest.split_at(split);
        let (scale, unit_len) = match after.as_bytes() {
            [b'm', b's', ..] => (0.001, 2),
            [b's', ..] => (1.0, 1),
            [b'm', ..] => (60.0, 1),
            [b'h', ..] => (3600.0, 1),
            [b'd', ..] => (86400.0, 1),
            _ => return Err(fail()),
        };
        let value: f64 = number.parse().map_err(|_| fail())?;
        total += Duration::try_from_secs_f64(value * scale).map_err(|_| fail())?;
        rest = &after[unit_len..];
    }
    match total.is_zero() {
        true => Err(fail()),
        false => Ok(total),
    }
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
        assert_eq!(duration("50ms"), Ok(Duration::from_millis(50)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert!(duration("soon").is_err() && duration("5q").is_err() && duration("-1s").is_err());
        assert_eq!(ratio("0.5"), Ok(0.5));
        assert!(ratio("1.5").is_err() && ratio("x").is_err());
        assert!(seconds("-1").is_err() && seconds("nan").is_err());
        assert_eq!(duration("90m"), Ok(Duration::from_secs(5400)));
        assert_eq!(duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(duration("45"), Ok(Duration::from_secs(45)));
        assert_eq!(duration("1.5h"), Ok(Duration::from_secs(5400)));
        for bad in ["", "0", "2x", "h", "-5", "1h30", "m5"] {
            assert!(duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_idle_timeout_defaults_to_the_pools() {
        let parse = |extra: &[&str]| {
            Args::try_parse_from(["crawl", "seeds", "--out", "d"].iter().chain(extra))
        };
        let timeout = |extra: &[&str]| parse(extra).ok().map(|a| a.idle_timeout);
        assert_eq!(timeout(&[]), Some(crate::fetch::pool::IDLE_TIMEOUT));
        assert_eq!(
            timeout(&["--idle-timeout", "0.5"]),
            Some(Duration::from_millis(500))
        );
        assert_eq!(timeout(&["--idle-timeout", "0"]), Some(Duration::ZERO));
        assert_eq!(timeout(&["--idle-timeout", "-1"]), None);
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
        assert!(!args.no_warc_block_digest);
        assert!(
            parse(&["--no-warc-block-digest"])
                .unwrap()
                .no_warc_block_digest
        );
        assert!(parse(&["--no-warc-block-digest", "--no-warc"]).is_err());
        // The old opt-in is the default now: accepted, and it changes nothing.
        assert!(
            !parse(&["--warc-block-digest"])
                .unwrap()
                .no_warc_block_digest
        );
        assert!(parse(&["--warc-block-digest", "--no-warc-block-digest"]).is_err());
        let args_zstd_level = |extra: &[&str]| parse(extra).ok().and_then(|a| a.zstd_level);
        assert_eq!(args_zstd_level(&[]), None);
        assert_eq!(args_zstd_level(&["--zstd-level", "-5"]), Some(-5));
        assert_eq!(args_zstd_level(&["--zstd-level", "19"]), Some(19));
        assert_eq!(args_zstd_level(&["--zstd-level", "-8"]), None);
        assert_eq!(args_zstd_level(&["--zstd-level", "20"]), None);
        assert!(parse(&["--no-warc", "--zstd-level", "3"]).is_err());
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
        assert!(args.log.is_none() && args.save.is_empty() && !args.verbose);
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
        assert_eq!(args.save, [Save::Files]);
        assert!(parse(&["--log-format", "csv"]).is_err());
        assert!(parse(&["--save", "warc"]).is_err());
        let both = parse(&["--save", "files,markdown"]).unwrap().save;
        assert_eq!(both, [Save::Files, Save::Markdown]);
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
