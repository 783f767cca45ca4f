//! The command-line entry point: parses the command line (clap: `crawl SEEDS --out DIR
//! [OPTIONS]`, or a subcommand), runs the command, and maps its outcome to an exit status.
//! Every command returns the one error type, `Failure`, which carries its status; this is
//! the one place an error is printed.

use crate::cli::args::{Args, Cli, Command};
use crate::cli::config::Prepared;
use crate::crawl::hunt::Hunt;
use crate::crawl::outcome::RunOutcome;
use crate::crawl::run::{Report, run};
use crate::crawl::summary;
use crate::exit::{Failure, Status};
use crate::output::progress;
use crate::output::urllog::UrlLog;
use crate::schedule::dispatch::Ending;
use crate::schedule::stop::{Exit, Reason, Stop};
use crate::state::durable;
use anyhow::{Context, Result};
use clap::Parser;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Runs `crawl` with the process's arguments and returns its exit status. `exit` ends the
/// process at once (`std::process::exit`, from the binary): the library never does by itself.
pub fn main(exit: Exit) -> ExitCode {
    let cli = Cli::parse();
    let (name, outcome) = match cli.command {
        Some(Command::Dedupe(args)) => (
            "crawl dedupe",
            crate::tools::dedupe::run(args).map(|()| Status::Done),
        ),
        Some(Command::Cachesim(args)) => (
            "crawl cachesim",
            crate::tools::cachesim::run(args).map(|()| Status::Done),
        ),
        Some(Command::Rank(args)) => (
            "crawl rank",
            crate::tools::rank::run(args).map(|()| Status::Done),
        ),
        Some(Command::Wacz(args)) => (
            "crawl wacz",
            crate::tools::wacz::run(args).map(|()| Status::Done),
        ),
        Some(Command::Extract(args)) => (
            "crawl extract",
            crate::tools::extract::run(args).map(|()| Status::Done),
        ),
        Some(Command::Neardups(args)) => (
            "crawl neardups",
            crate::tools::neardups::run(args).map(|()| Status::Done),
        ),
        Some(Command::Shards(args)) => (
            "crawl shards",
            crate::shard::status::run(args).map(|()| Status::Done),
        ),
        None => match cli.crawl {
            Some(args) => ("crawl", crawl(args, exit)),
            // Neither SEEDS nor a subcommand: the plain form's parser says what is missing
            // (exit 2), as `crawl SEEDS --out DIR` always has.
            None => ("crawl", crawl(Args::parse(), exit)),
        },
    };
    match outcome {
        Ok(status) => status.into(),
        Err(failure) => {
            eprintln!("{name}: {:#}", failure.error);
            failure.status.into()
        }
    }
}

/// Runs a crawl to its end and reports it (summary.json, the summary on stderr, `--find`).
fn crawl(args: Args, exit: Exit) -> Result<Status, Failure> {
    let stop = Arc::new(Stop::new(exit));
    let Prepared {
        config,
        log_out,
        log_format,
        hunt,
        quiet,
        lock: _lock,
    } = args.prepare(Arc::clone(&stop))?;
    let out = config.out.clone();
    let progress = config.progress;
    let max_depth = config.filter.max_depth;

    // A second Ctrl-C ends the process at once (`Stop::signal`).
    let handler_stop = Arc::clone(&stop);
    ctrlc::set_handler(move || handler_stop.signal()).map_err(Failure::fatal)?;

    let log_stop = Arc::clone(&stop);
    let on_closed = Box::new(move || {
        log_stop.request(Reason::LogClosed);
    });
    let log = UrlLog::start(log_out, log_format, on_closed);
    let outcome = run(config, &log);
    let log_result = log.finish();
    let report = outcome?;
    log_result.context("writing the URL log")?;

    durable::replace(
        &out.join("summary.json"),
        summary::to_json(&report).as_bytes(),
    )
    .context("writing summary.json")?;
    // A crawl that mostly failed is not complete: the next run resumes it.
    if report.outcome == RunOutcome::Ended(Ending::Complete) {
        crate::shard::mark_complete(&out)?;
    }
    // cron mails whatever a job prints: without a terminal the summary waits for -v.
    if progress != progress::Mode::Off {
        eprint!("{}", summary::to_text(&report));
    }
    if let Some(hunt) = &hunt {
        report_hunt(hunt, &report, max_depth, quiet)?;
    }
    if report.outcome.failed() {
        // Said whatever -q or the terminal: cron mails stderr, and this is what went wrong.
        eprintln!("crawl: {}", summary::failure_text(&report));
        return Ok(match report.outcome {
            RunOutcome::SeedsRefused => Status::BadInput,
            _ => Status::MostlyFailed,
        });
    }
    Ok(match report.ending {
        Ending::Stopped if stop.reason() == Some(Reason::Signal) => Status::Interrupted,
        Ending::TimeLimit | Ending::ByteLimit | Ending::PageLimit => {
            if progress != progress::Mode::Off {
                eprintln!(
                    "crawl: stopped at {}; run the same command again to continue",
                    run_limit(report.ending)
                );
            }
            Status::RunLimit
        }
        _ => Status::Done,
    })
}

/// The option whose run limit ended the crawl.
fn run_limit(ending: Ending) -> &'static str {
    match ending {
        Ending::TimeLimit => "--max-time",
        Ending::ByteLimit => "--max-bytes",
        _ => "--max-pages",
    }
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
    // With --shard: another shard found it (and printed the result on its stdout).
    if let Some(by) = hunt.found_elsewhere() {
        eprintln!("crawl: {:?} found by {by}", hunt.text);
        return Ok(());
    }
    let pages = report.counters.pages.load(Ordering::Relaxed);
    let limit = match (report.ending, max_depth) {
        (Ending::PageLimit | Ending::TimeLimit | Ending::ByteLimit, _) => {
            run_limit(report.ending).to_owned()
        }
        (_, Some(d)) => format!("depth {d} (depth {} counting the seeds as 1)", d + 1),
        (_, None) => "the end of the crawl".to_owned(),
    };
    eprintln!(
        "crawl: {:?} not found in {pages} pages, up to {limit}",
        hunt.text
    );
    Ok(())
}
