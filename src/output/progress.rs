//! Progress while the crawl runs: an indicatif spinner line when stderr is a terminal, a
//! plain status line every 10 s (and one at the end) with `-v` otherwise, nothing with `-q`.
//!
//! Owns only the display: one reporter thread reads [`Gauges`] through a closure the crawl
//! gives it and never touches the crawl's state itself.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How progress is shown, decided once from the options and the terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Nothing (`-q`, or no terminal without `-v`).
    Off,
    /// A live spinner line on a terminal, cleared at the end.
    Bar,
    /// A status line every [`LINE_EVERY`] and one at the end (`-v` without a terminal).
    Lines,
}

impl Mode {
    /// `Bar` when stderr is a terminal, `Lines` with `verbose`, otherwise `Off`; `quiet` wins.
    pub fn choose(quiet: bool, verbose: bool) -> Mode {
        let tty = std::io::stderr().is_terminal();
        match (quiet, tty, verbose) {
            (true, _, _) => Mode::Off,
            (false, true, _) => Mode::Bar,
            (false, false, true) => Mode::Lines,
            (false, false, false) => Mode::Off,
        }
    }
}

/// How often the bar is refreshed.
pub const BAR_EVERY: Duration = Duration::from_millis(200);
/// How often a status line is printed without a terminal.
pub const LINE_EVERY: Duration = Duration::from_secs(10);

/// The live figures of a crawl.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gauges {
    pub pages: u64,
    pub bytes: u64,
    /// URLs waiting: on the disk frontier and in the per-host queues.
    pub frontier: u64,
    /// Distinct URLs admitted by the seen set.
    pub seen: u64,
    pub cache_hit_rate: f64,
    /// Hosts with a request in flight.
    pub hosts_busy: usize,
    /// Hosts with work queued or in flight (the only ones the scheduler holds).
    pub hosts_with_work: usize,
    /// Fetches without a response.
    pub errors: u64,
    /// Requests in flight, the workers running, and the most that may run: in flight near
    /// the most means the machine's cap (`-j`, `--max-connections`) limits the crawl.
    pub in_flight: usize,
    pub workers: usize,
    pub max_workers: usize,
    /// Hosts that may be contacted now but wait for a worker (the cap limits the crawl).
    pub hosts_ready: usize,
    /// Hosts with work resting by the delay rule (politeness limits the crawl).
    pub hosts_resting: usize,
    /// Hosts holding a slot with nothing queued (the discovery of URLs limits the crawl).
    pub hosts_starved: usize,
}

/// The figures as one line, e.g. `1200 pages (85.1/s), 12.3 MiB, frontier 4100, …`.
pub fn status_line(g: &Gauges, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        g.pages as f64 / secs
    } else {
        0.0
    };
    format!(
        "{} pages ({rate:.1}/s), {:.1} MiB, frontier {}, seen {} URLs, CLOCK hits {:.1}%, \
         hosts {} busy / {} with work, {} errors, {secs:.0}s; {} in flight ({} of {} workers), \
         hosts {} ready / {} resting / {} without URLs",
        g.pages,
        g.bytes as f64 / (1 << 20) as f64,
        g.frontier,
        g.seen,
        g.cache_hit_rate * 100.0,
        g.hosts_busy,
        g.hosts_with_work,
        g.errors,
        g.in_flight,
        g.workers,
        g.max_workers,
        g.hosts_ready,
        g.hosts_resting,
        g.hosts_starved,
    )
}

/// Shows progress until `done` is signalled or dropped, then clears the bar or prints the last
/// status line, so the summary that follows stands alone.
pub fn report(mode: Mode, started: Instant, gauges: impl Fn() -> Gauges, done: Receiver<()>) {
    match mode {
        Mode::Off => {
            let _ = done.recv();
        }
        Mode::Bar => {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            while let Err(RecvTimeoutError::Timeout) = done.recv_timeout(BAR_EVERY) {
                bar.set_message(status_line(&gauges(), started.elapsed()));
                bar.tick();
            }
            bar.finish_and_clear();
        }
        Mode::Lines => {
            while let Err(RecvTimeoutError::Timeout) = done.recv_timeout(LINE_EVERY) {
                eprintln!("crawl: {}", status_line(&gauges(), started.elapsed()));
            }
            eprintln!("crawl: {}", status_line(&gauges(), started.elapsed()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_line_shows_every_figure() {
        let g = Gauges {
            pages: 100,
            bytes: 3 << 20,
            frontier: 40,
            seen: 250,
            cache_hit_rate: 0.5,
            hosts_busy: 2,
            hosts_with_work: 7,
            errors: 1,
            in_flight: 3,
            workers: 8,
            max_workers: 512,
            hosts_ready: 4,
            hosts_resting: 5,
            hosts_starved: 6,
        };
        assert_eq!(
            status_line(&g, Duration::from_secs(4)),
            "100 pages (25.0/s), 3.0 MiB, frontier 40, seen 250 URLs, CLOCK hits 50.0%, \
             hosts 2 busy / 7 with work, 1 errors, 4s; 3 in flight (8 of 512 workers), \
             hosts 4 ready / 5 resting / 6 without URLs"
        );
    }

    #[test]
    fn quiet_wins() {
        assert_eq!(Mode::choose(true, true), Mode::Off);
    }
}
