//! From the command line to the crawl's configuration: every option validated and turned into
//! the `CrawlConfig` the crawl runs with, before anything is built. Input the user can fix (a
//! seed file, a --focus text, a busy or unusable --out) is `Failure::bad_input` (exit 2).

use crate::cli::args::{Args, Save};
use crate::crawl::config::CrawlConfig;
use crate::crawl::hunt::{self, Hunt};
use crate::crawl::links::sitemap::Sources;
use crate::exit::Failure;
use crate::fetch;
use crate::fetch::body::BodyRule;
use crate::fetch::client::FetchConfig;
use crate::fetch::conn::LowSpeed;
use crate::fetch::cookies::CookieJar;
use crate::fetch::private::AddressPolicy;
use crate::frontier::focus::Focus;
use crate::output::progress;
use crate::output::urllog::LogFormat;
use crate::output::warc::{Compression, DEFAULT_ZSTD_LEVEL, DedupeConfig, WarcConfig};
use crate::recrawl;
use crate::schedule::dispatch::{DispatchConfig, host_slots_for};
use crate::schedule::hostrules::HostRules;
use crate::schedule::politeness::DelayRule;
use crate::schedule::pool::{self, Workers};
use crate::schedule::stop::{RunLimits, Stop};
use crate::seen::due::DueConfig;
use crate::state::statedir;
use crate::state::statedir::DirLock;
use crate::url::normalize::{self, Filter, Requisites};
use crate::url::seeds;
use anyhow::{Context, anyhow, bail};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// A crawl ready to run: its configuration, where its URL log goes, and the lock on --out.
pub struct Prepared {
    pub config: CrawlConfig,
    /// Where the URL log is written: stdout, --log FILE, or nowhere (with --find).
    pub log_out: Box<dyn Write + Send>,
    pub log_format: LogFormat,
    /// `--find`'s hunt, also in `config`, for the report at the end.
    pub hunt: Option<Arc<Hunt>>,
    pub quiet: bool,
    /// Held for the life of the crawl: no second process may use --out meanwhile.
    pub lock: DirLock,
}

/// What the options say once checked, before anything is built or touched on disk.
struct Checked {
    seeds: Vec<url::Url>,
    focus: Option<Arc<Focus>>,
    headers: Vec<(String, String)>,
    host_rules: Arc<HostRules>,
    proxy: Option<fetch::proxy::Proxy>,
    extra_roots: Vec<rustls::pki_types::CertificateDer<'static>>,
    /// The address policy, which refused no seed.
    addresses: AddressPolicy,
    /// `--extract`'s rules, read and checked.
    rules: Option<crate::content::fields::Rules>,
}

/// What a crawl opens once its options are checked, for its configuration: the broker, the
/// cookie jar, the run's generation and `--find`'s hunt.
struct Opened {
    exchange: Option<Arc<crate::shard::Exchange>>,
    cookies: Option<Arc<CookieJar>>,
    generation: recrawl::Generation,
    hunt: Option<Arc<Hunt>>,
    /// `--extract`'s outputs, opened.
    extract: Option<crate::crawl::extract::Extract>,
}

/// Where the URL log is written.
type LogOut = Box<dyn Write + Send>;

impl Args {
    /// Validates every option and builds the crawl's configuration, stopped by `stop`; locks
    /// --out. Three steps: every option is checked before anything is built (`check`); then
    /// --out is locked and what the crawl keeps open is opened (`open`); then the
    /// configuration is assembled (`crawl_config`), which cannot fail.
    pub fn prepare(self, stop: Arc<Stop>) -> Result<Prepared, Failure> {
        let mut checked = self.check()?;
        let rules = checked.rules.take();
        let (lock, opened, log_out) = self.open(&checked.seeds, rules, &stop)?;
        let (log_format, quiet, hunt) = (self.log_format, self.quiet, opened.hunt.clone());
        let config = self.crawl_config(checked, opened, stop);
        Ok(Prepared {
            config,
            log_out,
            log_format,
            hunt,
            quiet,
            lock,
        })
    }

    /// Every option checked, and every file an option names read: bad input is exit status 2,
    /// and nothing has been written yet.
    fn check(&self) -> Result<Checked, Failure> {
        let args = self;
        let seeds = seeds::read_seeds(&args.seeds).map_err(Failure::bad_input)?;
        let addresses = AddressPolicy::new(&seeds, args.allow_private);
        if let Some((seed, refused)) = addresses.refused_seed(&seeds) {
            return Err(Failure::bad_input(anyhow!(
                "seed {seed} is refused by the address policy: {refused}. Nothing was fetched \
                 (no connection was made); remove the seed, or give --allow-private to crawl \
                 it"
            )));
        }
        // Checked before anything starts: a bad line is exit status 2 naming FILE:LINE.
        let rules = (args.extract.as_deref())
            .map(crate::content::fields::Rules::read)
            .transpose()
            .map_err(Failure::bad_input)?;
        let focus = match &args.focus {
            Some(topic) => Some(Arc::new(
                Focus::new(topic, args.focus_window as usize).map_err(Failure::bad_input)?,
            )),
            None => None,
        };
        if let (Some(shard), Some(_)) = (args.shard, &args.focus) {
            return Err(Failure::bad_input(anyhow!(
                "--focus cannot be used with --shard {shard}: the focus ranks URLs by the link \
                 graph (HITS), and a shard sees the links of its own hosts' pages only"
            )));
        }
        let markdown_out =
            args.log_format == LogFormat::Jsonl || args.save.contains(&Save::Markdown);
        if args.markdown && !markdown_out {
            return Err(Failure::bad_input(anyhow!(
                "--markdown writes the Markdown to the URL log's jsonl lines or to DIR/markdown/: \
                 give --log-format jsonl or --save markdown (or both)"
            )));
        }
        if let (Some(level), Compression::Gzip) = (args.zstd_level, args.warc_compression) {
            return Err(Failure::bad_input(anyhow!(
                "--zstd-level {level} applies to --warc-compression zstd, not gzip: leave one out"
            )));
        }
        let headers = request_headers(&args.headers).map_err(Failure::bad_input)?;
        let host_rules = Arc::new(match &args.host_rules {
            Some(path) => HostRules::read(path).map_err(Failure::bad_input)?,
            None => HostRules::default(),
        });
        let proxy = match (&args.proxy, args.no_proxy) {
            (_, true) => None,
            (Some(url), false) => Some(proxy(url).map_err(Failure::bad_input)?),
            (None, false) => fetch::proxy::Proxy::from_env(),
        };
        let extra_roots = args
            .ca_cert
            .iter()
            .map(|path| ca_certs(path))
            .collect::<anyhow::Result<Vec<_>>>()
            .map_err(Failure::bad_input)?
            .concat();
        if args.insecure {
            eprintln!(
                "crawl: warning: --insecure: TLS certificates are not checked; anyone between \
                 here and a server can read and change what is fetched"
            );
        }
        Ok(Checked {
            seeds,
            focus,
            headers,
            host_rules,
            proxy,
            extra_roots,
            addresses,
            rules,
        })
    }

    /// Locks --out, then opens what the crawl keeps: the shard's claim and broker, the cookie
    /// jar (opening it writes it), the recrawl's generation, `--find`'s hunt, `--extract`'s
    /// outputs and the URL log.
    fn open(
        &self,
        seeds: &[url::Url],
        rules: Option<crate::content::fields::Rules>,
        stop: &Arc<Stop>,
    ) -> Result<(DirLock, Opened, LogOut), Failure> {
        let args = self;
        let lock = statedir::open(&args.out).map_err(Failure::bad_input)?;
        // After the lock: the directory's shard is checked (or recorded) by its one user.
        let claim = crate::shard::claim_dir(&args.out, args.shard, args.restart)
            .map_err(Failure::bad_input)?;
        let exchange = match (args.shard, &args.exchange, claim) {
            (Some(shard), Some(url), Some(claim)) => {
                Some(crate::shard::connect(&args.out, shard, url, seeds, &claim)?)
            }
            _ => None,
        };
        let cookies = match (&args.load_cookies, &args.cookie_jar) {
            (None, None) => None,
            (load, jar) => Some(Arc::new(
                CookieJar::open(load.as_deref(), jar.as_deref()).map_err(Failure::bad_input)?,
            )),
        };
        let generation = recrawl::prepare(&args.out, args.restart).map_err(Failure::fatal)?;
        // With --find, stdout carries the result alone: the URL log goes only to --log FILE.
        let hunt = args
            .find
            .as_deref()
            .map(|text| Arc::new(Hunt::new(text, args.ignore_case, Arc::clone(stop))));
        let log_out: LogOut = match &args.log {
            Some(path) => {
                let file = std::fs::File::create(path).map_err(|e| {
                    Failure::bad_input(
                        anyhow::Error::new(e)
                            .context(format!("cannot open the URL log file {}", path.display())),
                    )
                })?;
                // The writer flushes whenever its queue runs dry, so lines still arrive promptly.
                Box::new(std::io::BufWriter::new(file)) as Box<dyn Write + Send>
            }
            None if hunt.is_some() => Box::new(std::io::sink()),
            None => Box::new(std::io::stdout()),
        };
        let extract = match rules {
            Some(rules) => Some(open_extract(args, rules).map_err(Failure::bad_input)?),
            None => None,
        };
        let opened = Opened {
            exchange,
            cookies,
            generation,
            hunt,
            extract,
        };
        Ok((lock, opened, log_out))
    }

    /// The crawl's configuration from the checked options and what was opened.
    fn crawl_config(self, checked: Checked, opened: Opened, stop: Arc<Stop>) -> CrawlConfig {
        let args = self;
        let Checked {
            seeds,
            focus,
            headers,
            host_rules,
            proxy,
            extra_roots,
            addresses,
            rules: _,
        } = checked;
        let Opened {
            exchange,
            cookies,
            generation,
            hunt,
            extract,
        } = opened;
        let mut filter = Filter::new(args.scope, &seeds);
        filter.max_depth = Some(args.max_depth.unwrap_or(match hunt {
            Some(_) => hunt::DEFAULT_MAX_DEPTH,
            None => normalize::DEFAULT_MAX_DEPTH,
        }));
        // A hunt reads HTML and text only: requisites only when asked for.
        filter.requisites = args.requisites.unwrap_or(match hunt {
            Some(_) => Requisites::Off,
            None => Requisites::Scope,
        });
        filter.include = args.include;
        filter.exclude = args.exclude;
        let robots_token = args
            .user_agent
            .split(['/', ' '])
            .next()
            .unwrap_or("crawl")
            .to_owned();
        // A proxy is sent addresses checked here, not names it would resolve unchecked.
        let proxy = proxy.map(|p| p.resolved_here(&addresses));
        let sitemaps = (!args.no_sitemaps).then(|| Sources::new(&seeds));
        let workers = match args.jobs {
            Some(n) => Workers::fixed(n as usize),
            None => Workers::elastic(match args.max_connections {
                Some(n) => n as usize,
                None => pool::default_max_connections(
                    crate::sys::raise_open_files_limit(),
                    crate::sys::available_memory(),
                ),
            }),
        };
        let seed_hosts = crate::crawl::outcome::SeedHosts::new(&seeds);
        CrawlConfig {
            out: args.out.clone(),
            seeds,
            dispatch: DispatchConfig {
                queue_limit: 4 * host_slots_for(
                    workers.max,
                    args.delay_factor,
                    args.host_connections as usize,
                ),
                workers,
                max_pages: args.max_pages,
                max_pages_per_host: args.max_pages_per_host,
                max_rate: args.max_rate,
            },
            filter,
            delay: DelayRule {
                factor: args.delay_factor,
                min: args.min_delay,
                max: args.max_delay,
            },
            rate: args.rate,
            host_connections: args.host_connections as usize,
            host_rules: Arc::clone(&host_rules),
            fetch: FetchConfig {
                user_agent: args.user_agent,
                headers,
                cookies,
                proxy,
                insecure: args.insecure,
                extra_roots,
                tls_resume: !args.no_tls_resume,
                timeout: args.timeout,
                low_speed: LowSpeed {
                    bytes_per_sec: args.low_speed_limit,
                    time: args.low_speed_time,
                },
                max_body: args.max_body,
                // The connections kept idle per host: as many as a host may have in flight.
                host_connections: host_rules.max_connections(args.host_connections as usize),
                idle_hosts: fetch::client::idle_hosts(workers.max),
                idle_timeout: args.idle_timeout,
                body: BodyRule {
                    accept: args.accept_type,
                    reject: args.reject_type,
                    keep_truncated: args.keep_truncated,
                },
                addresses,
            },
            robots_token,
            retry: fetch::retry::Transient {
                retries: args.retries,
                first_wait: args.retry_wait,
            },
            max_error_ratio: args.max_error_ratio,
            seed_hosts,
            obey_page_robots: !args.ignore_page_robots,
            near_duplicates: args.near_duplicates,
            near_duplicates_threshold: args.near_duplicates_threshold,
            due: DueConfig {
                cache_entries: args.cache_entries as usize,
                buffer_entries: args.buffer_entries as usize,
            },
            warc: (!args.no_warc).then(|| WarcConfig {
                dir: args.out.join("warc"),
                compression: args.warc_compression,
                zstd_level: args.zstd_level.unwrap_or(DEFAULT_ZSTD_LEVEL),
                max_file_bytes: args.warc_max_size,
                prefix: "crawl".into(),
                software: concat!("crawl/", env!("CARGO_PKG_VERSION")).into(),
                dedupe: (!args.no_payload_dedupe).then(|| DedupeConfig {
                    store: args.out.join("digests"),
                    against: args.dedupe_against.clone(),
                }),
                response_block_digests: !args.no_warc_block_digest,
            }),
            pages: args
                .save
                .contains(&Save::Files)
                .then(|| args.out.join("pages")),
            markdown_dir: (args.save.contains(&Save::Markdown)).then(|| args.out.join("markdown")),
            text: args.text,
            markdown: args.markdown || args.save.contains(&Save::Markdown),
            link_graph: args.link_graph,
            progress: progress::Mode::choose(args.quiet, args.verbose),
            generation,
            recrawl_budget: args.recrawl_budget,
            extract,
            hunt: hunt.clone(),
            focus,
            sitemaps,
            exchange,
            stop,
            limits: RunLimits {
                time: args.max_time,
                bytes: args.max_bytes,
            },
        }
    }
}

/// `--extract`'s outputs, opened (in --out, which is locked): `--extract-out` (default
/// `DIR/extract.jsonl`; `-` is stdout, when neither the URL log nor `--find`'s result is
/// there) and `--extract-db`.
fn open_extract(
    args: &Args,
    rules: crate::content::fields::Rules,
) -> anyhow::Result<crate::crawl::extract::Extract> {
    use crate::crawl::extract::{Extract, LinesTo};
    let lines = match &args.extract_out {
        Some(path) if path.as_os_str() == "-" => {
            if args.find.is_some() {
                bail!("--extract-out - writes to stdout, where --find's result goes: give FILE");
            }
            if args.log.is_none() {
                bail!(
                    "--extract-out - writes to stdout, where the URL log goes: give --log FILE \
                     too, or --extract-out FILE"
                );
            }
            LinesTo::Stdout
        }
        Some(path) => LinesTo::File(path.clone()),
        None => LinesTo::File(args.out.join("extract.jsonl")),
    };
    Extract::open(rules, lines, args.extract_db.as_deref())
}

/// The `--header` values as (name, value), each checked to be a valid HTTP header. Errors name
/// the header by its position and name, never its value (a token, say).
fn request_headers(texts: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let Some((name, value)) = text.split_once(':') else {
                bail!(
                    "--header number {} is not 'Name: value' (it has no colon)",
                    i + 1
                );
            };
            let name = name.trim();
            if !crate::fetch::body::is_token(name) {
                bail!("--header number {}: {name:?} is not a header name", i + 1);
            }
            if name.eq_ignore_ascii_case("host") {
                bail!("--header {name}: the Host header comes from each URL");
            }
            let value = value.trim();
            if value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
                bail!("--header {name}: the value has a control character or a line break");
            }
            Ok((name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// `--proxy URL`, checked. The error shows the URL without its password.
fn proxy(url: &str) -> anyhow::Result<fetch::proxy::Proxy> {
    fetch::proxy::Proxy::parse(url).map_err(|e| {
        let shown = match url::Url::parse(url) {
            Ok(mut parsed) if parsed.password().is_some() => {
                let _ = parsed.set_password(Some("***"));
                parsed.to_string()
            }
            _ => url.to_owned(),
        };
        anyhow!(
            "--proxy {shown}: not a proxy URL such as http://HOST:PORT, https://HOST:PORT or \
             socks5://HOST:PORT ({e})"
        )
    })
}

/// The certificates of a `--ca-cert` PEM file; a file with none is an error.
fn ca_certs(path: &Path) -> anyhow::Result<Vec<rustls::pki_types::CertificateDer<'static>>> {
    let pem = std::fs::read(path)
        .with_context(|| format!("cannot read the --ca-cert file {}", path.display()))?;
    let certs = fetch::tls::pem_certificates(&pem)
        .map_err(|e| anyhow!("--ca-cert {}: not PEM ({e})", path.display()))?;
    if certs.is_empty() {
        bail!(
            "--ca-cert {}: no certificate (a PEM file with -----BEGIN CERTIFICATE-----)",
            path.display()
        );
    }
    Ok(certs)
}
