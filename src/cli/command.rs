//! The command-line entry point: parses the command line, runs the command, maps its outcome
//! to an exit status.

use crate::cli::args::{Args, Save};
use crate::cli::exit::Status;
use crate::crawl::hunt::{self, Hunt};
use crate::crawl::run::{CrawlConfig, Report, run};
use crate::fetch::client::FetchConfig;
use crate::frontier::focus::Focus;
use crate::output::progress;
use crate::output::summary;
use crate::output::urllog::UrlLog;
use crate::output::warc::WarcConfig;
use crate::schedule::dispatch::Ending;
use crate::schedule::politeness::DelayRule;
use crate::seen::due::DueConfig;
use crate::state::{durable, recrawl, statedir};
use crate::url::normalize::{self, Filter};
use crate::url::seeds;
use anyhow::Result;
use clap::Parser;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs `crawl` with the process's arguments and returns its exit status.
pub fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == "dedupe") {
        let args = crate::tools::dedupe::DedupeArgs::parse_from(&argv[1..]);
        return match crate::tools::dedupe::run(args) {
            Ok(()) => Status::Done.into(),
            Err(error) => {
                eprintln!("crawl dedupe: {error:#}");
                Status::Fatal.into()
            }
        };
    }
    if argv.get(1).is_some_and(|a| a == "cachesim") {
        return crate::tools::cachesim::main(crate::tools::cachesim::CachesimArgs::parse_from(
            &argv[1..],
        ));
    }
    if argv.get(1).is_some_and(|a| a == "rank") {
        let args = crate::tools::rank::RankArgs::parse_from(&argv[1..]);
        return match crate::tools::rank::run(args) {
            Ok(()) => Status::Done.into(),
            Err(error) => {
                eprintln!("crawl rank: {error:#}");
                match crate::tools::rank::is_bad_input(&error) {
                    true => Status::BadInput.into(),
                    false => Status::Fatal.into(),
                }
            }
        };
    }
    let args = Args::parse();
    match run_cli(args) {
        Ok(status) => status.into(),
        Err(failure) => {
            eprintln!("crawl: {:#}", failure.error);
            failure.status.into()
        }
    }
}

/// An error and the exit status it maps to.
struct Failure {
    status: Status,
    error: anyhow::Error,
}

fn bad_input(error: anyhow::Error) -> Failure {
    Failure {
        status: Status::BadInput,
        error,
    }
}

fn fatal(error: anyhow::Error) -> Failure {
    Failure {
        status: Status::Fatal,
        error,
    }
}

fn run_cli(args: Args) -> Result<Status, Failure> {
    // Validate everything before building anything.
    let seeds = seeds::read_seeds(&args.seeds).map_err(bad_input)?;
    let focus = match &args.focus {
        Some(topic) => Some(Arc::new(
            Focus::new(topic, args.focus_window as usize).map_err(bad_input)?,
        )),
        None => None,
    };
    let _lock = statedir::open(&args.out).map_err(bad_input)?;
    let generation = recrawl::prepare(&args.out, args.restart).map_err(fatal)?;
    // With --find, stdout carries the result alone: the URL log goes only to --log FILE.
    let hunt = args
        .find
        .as_deref()
        .map(|text| Arc::new(Hunt::new(text, args.ignore_case)));
    let log_out: Box<dyn std::io::Write + Send> = match &args.log {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| {
                bad_input(
                    anyhow::Error::new(e)
                        .context(format!("cannot open the URL log file {}", path.display())),
                )
            })?;
            // The writer flushes whenever its queue runs dry, so lines still arrive promptly.
            Box::new(std::io::BufWriter::new(file))
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
        },
        robots_token,
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
    };
    let progress = config.progress;
    let max_depth = config.filter.max_depth;

    let stop = Arc::new(AtomicBool::new(false));
    let handler_stop = Arc::clone(&stop);
    ctrlc::set_handler(move || {
        if handler_stop.swap(true, Ordering::SeqCst) {
            // A second Ctrl-C: leave now; the state on disk is resumable at any instant.
            std::process::exit(Status::Interrupted as i32);
        }
    })
    .map_err(|e| fatal(e.into()))?;

    let log = UrlLog::start(log_out, args.log_format);
    let outcome = run(config, &log, &stop);
    let log_result = log.finish();
    let report = outcome.map_err(fatal)?;
    log_result.map_err(|e| fatal(anyhow::Error::new(e).context("writing the URL log")))?;

    durable::replace(
        &args.out.join("summary.json"),
        summary::to_json(&report).as_bytes(),
    )
    .map_err(|e| fatal(anyhow::Error::new(e).context("writing summary.json")))?;
    if report.ending == Ending::Complete {
        recrawl::mark_complete(&args.out).map_err(fatal)?;
    }
    // cron mails whatever a job prints: without a terminal the summary waits for -v.
    if progress != progress::Mode::Off {
        eprint!("{}", summary::to_text(&report));
    }
    if let Some(hunt) = &hunt {
        report_hunt(hunt, &report, max_depth, args.quiet).map_err(fatal)?;
    }
    Ok(match report.ending {
        Ending::Stopped if stop.load(Ordering::Relaxed) => Status::Interrupted,
        _ => Status::Done,
    })
}

/// Prints what `--find` found on stdout, or says on stderr that it found nothing.
fn report_hunt(hunt: &Hunt, report: &Report, max_depth: Option<u32>, quiet: bool) -> Result<()> {
    use std::io::Write;
    if let Some(found) = hunt.found() {
        let mut stdout = std::io::stdout().lock();
        return match writeln!(stdout, "{}", found.to_tsv()).and_then(|()| stdout.flush()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(anyhow::Error::new(e).context("printing the --find result"))
            }
            _ => Ok(()),
        };
    }
    if quiet || report.ending == Ending::Stopped {
        return Ok(());
    }
    let pages = report.counters.pages.load(Ordering::Relaxed);
    let limit = match (report.ending, max_depth) {
        (Ending::PageLimit, _) => "--max-pages".to_owned(),
        (_, Some(d)) => format!("depth {d} (depth {} counting the seeds as 1)", d + 1),
        (_, None) => "the end of the crawl".to_owned(),
    };
    eprintln!(
        "crawl: {:?} not found in {pages} pages, up to {limit}",
        hunt.text
    );
    Ok(())
}
