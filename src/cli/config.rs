//! From the command line to the crawl's configuration: every option validated and turned into
//! the `CrawlConfig` the crawl runs with, before anything is built. Input the user can fix (a
//! seed file, a --focus text, a busy or unusable --out) is `Failure::bad_input` (exit 2).

use crate::cli::args::{Args, Save};
use crate::cli::exit::Failure;
use crate::crawl::hunt::{self, Hunt};
use crate::crawl::run::CrawlConfig;
use crate::crawl::sitemaps::Sources;
use crate::fetch::body::BodyRule;
use crate::fetch::client::FetchConfig;
use crate::fetch::private::AddressPolicy;
use crate::frontier::focus::Focus;
use crate::output::progress;
use crate::output::urllog::LogFormat;
use crate::output::warc::WarcConfig;
use crate::schedule::politeness::DelayRule;
use crate::seen::due::DueConfig;
use crate::state::statedir::DirLock;
use crate::state::{recrawl, statedir};
use crate::url::normalize::{self, Filter};
use crate::url::seeds;
use std::io::Write;
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

impl Args {
    /// Validates every option and builds the crawl's configuration; locks --out.
    pub fn prepare(self) -> Result<Prepared, Failure> {
        let args = self;
        // Validate everything before building anything.
        let seeds = seeds::read_seeds(&args.seeds).map_err(Failure::bad_input)?;
        let focus = match &args.focus {
            Some(topic) => Some(Arc::new(
                Focus::new(topic, args.focus_window as usize).map_err(Failure::bad_input)?,
            )),
            None => None,
        };
        let lock = statedir::open(&args.out).map_err(Failure::bad_input)?;
        let generation = recrawl::prepare(&args.out, args.restart).map_err(Failure::fatal)?;
        // With --find, stdout carries the result alone: the URL log goes only to --log FILE.
        let hunt = args
            .find
            .as_deref()
            .map(|text| Arc::new(Hunt::new(text, args.ignore_case)));
        let log_out: Box<dyn std::io::Write + Send> = match &args.log {
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

        let mut filter = Filter::new(args.scope, &seeds);
        filter.max_depth = Some(args.max_depth.unwrap_or(match hunt {
            Some(_) => hunt::DEFAULT_MAX_DEPTH,
            None => normalize::DEFAULT_MAX_DEPTH,
        }));
        filter.include = args.include;
        filter.exclude = args.exclude;
        let robots_token = args
            .user_agent
            .split(['/', ' '])
            .next()
            .unwrap_or("crawl")
            .to_owned();
        let addresses = AddressPolicy::new(&seeds, args.allow_private);
        let sitemaps = (!args.no_sitemaps).then(|| Sources::new(&seeds));
        let config = CrawlConfig {
            out: args.out.clone(),
            seeds,
            workers: args.jobs as usize,
            max_pages: args.max_pages,
            filter,
            delay: DelayRule {
                factor: args.delay_factor,
                min: args.min_delay,
                max: args.max_delay,
            },
            fetch: FetchConfig {
                user_agent: args.user_agent,
                timeout: args.timeout,
                max_body: args.max_body,
                host_connections: args.host_connections as usize,
                body: BodyRule {
                    accept: args.accept_type,
                    reject: args.reject_type,
                    keep_truncated: args.keep_truncated,
                },
                addresses,
            },
            robots_token,
            obey_page_robots: !args.ignore_page_robots,
            max_pages_per_host: args.max_pages_per_host,
            host_connections: args.host_connections as usize,
            due: DueConfig {
                cache_entries: args.cache_entries as usize,
                buffer_entries: args.buffer_entries as usize,
            },
            warc: (!args.no_warc).then(|| WarcConfig {
                dir: args.out.join("warc"),
                compression: args.warc_compression,
                max_file_bytes: args.warc_max_size,
                prefix: "crawl".into(),
                software: concat!("crawl/", env!("CARGO_PKG_VERSION")).into(),
            }),
            pages: (args.save == Some(Save::Files)).then(|| args.out.join("pages")),
            progress: progress::Mode::choose(args.quiet, args.verbose),
            generation,
            hunt: hunt.clone(),
            focus,
            sitemaps,
        };
        Ok(Prepared {
            config,
            log_out,
            log_format: args.log_format,
            hunt,
            quiet: args.quiet,
            lock,
        })
    }
}
