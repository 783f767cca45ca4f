//! Why the crawl stops: one `Stop`, shared by every thread, that any of them may request and
//! all of them read.
//!
//! Who requests: the signal handler (`Reason::Signal`), `--find`'s hunt when a page matches or
//! another shard's stop mark is read (`Found`), the URL log's writer when its reader goes away
//! (`LogClosed`), the dispatcher when a worker or an exchange thread fails (`Failed`). Who
//! reads: the dispatcher, in `next_work` and `host_free_or_next` (so every worker, waiting or
//! chaining pages, stops taking work), the exchange threads (which wake the workers), the stop
//! watchdog (`crawl::run`), and the report (`cli::command`: the exit status).
//!
//! Invariants: the first reason requested is the one kept (later requests change nothing), and
//! a stop is never withdrawn. A stop ends the handing out of work; pages in flight still finish
//! (their outputs are written) unless a signal's grace runs out.
//!
//! The process is never ended here by the library itself: `main` passes the function that ends
//! it (`Exit`), which a second signal, or the watchdog after a signal's grace, calls.
//!
//! Run limits are further reasons: `TimeLimit` (`--max-time`), requested by the stop watchdog's
//! loop in `crawl::run` once the deadline passes, and `ByteLimit` (`--max-bytes`), requested
//! where the worker adds a body's bytes to `Counters::bytes`. `Dispatcher::close` maps each to
//! its `Ending` (`time-limit`, `byte-limit` in summary.json; `complete` if nothing was left to
//! fetch), and the exit status is the run limit's (4), as at `--max-pages`. `--max-pages` is not a reason: it is not a stop but a
//! drain, decided under the dispatcher's lock against the pages handed out, and with `--shard`
//! its end waits for every shard (`EndGate`), which a stop does not.

use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};
use std::time::Duration;

/// Why the crawl stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Reason {
    /// SIGINT or SIGTERM (Ctrl-C): the crawl stops resumably, exit status 130.
    Signal = 1,
    /// `--find` found its text, here or (with `--shard`) in another shard.
    Found = 2,
    /// The URL log's reader went away (`crawl … | head`): nothing more would be read.
    LogClosed = 3,
    /// A fatal error (the state directory, say) in a worker or an exchange thread.
    Failed = 4,
    /// `--max-time` has passed since the crawl started: it stops resumably, exit status 4.
    TimeLimit = 5,
    /// `--max-bytes` of response bodies have been received: it stops resumably, exit status 4.
    ByteLimit = 6,
}

impl Reason {
    fn from_u8(value: u8) -> Option<Reason> {
        Some(match value {
            1 => Reason::Signal,
            2 => Reason::Found,
            3 => Reason::LogClosed,
            4 => Reason::Failed,
            5 => Reason::TimeLimit,
            6 => Reason::ByteLimit,
            _ => return None,
        })
    }
}

/// The run limits that stop a crawl resumably (`--max-time`, `--max-bytes`); `None`: no limit.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunLimits {
    /// `--max-time`, counted from the crawl's start.
    pub time: Option<Duration>,
    /// `--max-bytes`: response bodies received (`Counters::bytes`).
    pub bytes: Option<u64>,
}

impl RunLimits {
    /// Whether `received` bytes reach the byte limit: then the crawl's stop is requested
    /// (`ByteLimit`, unless another reason came first).
    pub fn bytes_reached(&self, received: u64, stop: &Stop) -> bool {
        let reached = self.bytes.is_some_and(|max| received >= max);
        reached && stop.request(Reason::ByteLimit)
    }
}

/// Ends the process at once with a status: `std::process::exit`, passed in by `main`.
pub type Exit = fn(i32) -> !;

/// The crawl's one stop: its reason once requested, and the signals received.
pub struct Stop {
    /// 0 while running, else the first `Reason` requested.
    reason: AtomicU8,
    /// Signals received, whatever the reason kept: the second ends the process at once.
    signals: AtomicU32,
    exit: Exit,
}

impl Stop {
    /// A crawl still running; `exit` ends the process (see `signal` and `exit_interrupted`).
    pub fn new(exit: Exit) -> Stop {
        Stop {
            reason: AtomicU8::new(0),
            signals: AtomicU32::new(0),
            exit,
        }
    }

    /// Asks every thread to stop for `reason`; true when it is the reason kept (the first).
    pub fn request(&self, reason: Reason) -> bool {
        self.reason
            .compare_exchange(0, reason as u8, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Why the crawl stops, once some thread asked it to.
    pub fn reason(&self) -> Option<Reason> {
        Reason::from_u8(self.reason.load(Ordering::Acquire))
    }

    /// Whether the crawl is stopping (for whatever reason).
    pub fn is_stopped(&self) -> bool {
        self.reason.load(Ordering::Acquire) != 0
    }

    /// A signal (the signal handler's whole work): the first asks the crawl to stop; the second
    /// ends the process at once with the interrupted status (the state on disk is resumable at
    /// any instant).
    pub fn signal(&self) {
        if self.signals.fetch_add(1, Ordering::AcqRel) > 0 {
            self.exit_interrupted();
        }
        self.request(Reason::Signal);
    }

    /// Whether a signal came (even if another reason was kept): the watchdog's grace runs.
    pub fn signalled(&self) -> bool {
        self.signals.load(Ordering::Acquire) > 0
    }

    /// Ends the process with the interrupted status (130), without waiting for anything.
    pub fn exit_interrupted(&self) -> ! {
        (self.exit)(crate::exit::Status::Interrupted as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_exit(status: i32) -> ! {
        panic!("exit {status}")
    }

    #[test]
    fn the_first_reason_is_kept() {
        let stop = Stop::new(no_exit);
        assert!(!stop.is_stopped() && stop.reason().is_none());
        assert!(stop.request(Reason::LogClosed));
        assert!(!stop.request(Reason::Found));
        assert!(stop.is_stopped());
        assert_eq!(stop.reason(), Some(Reason::LogClosed));
    }

    #[test]
    fn the_byte_limit_stops_once_when_reached() {
        let stop = Stop::new(no_exit);
        let limits = RunLimits {
            time: None,
            bytes: Some(100),
        };
        assert!(!limits.bytes_reached(99, &stop) && !stop.is_stopped());
        assert!(limits.bytes_reached(100, &stop));
        assert!(!limits.bytes_reached(150, &stop), "requested once");
        assert_eq!(stop.reason(), Some(Reason::ByteLimit));
        assert!(!RunLimits::default().bytes_reached(u64::MAX, &Stop::new(no_exit)));
    }

    #[test]
    fn a_signal_after_another_reason_is_counted_and_the_second_exits() {
        let stop = Stop::new(no_exit);
        stop.request(Reason::Found);
        stop.signal();
        assert!(stop.signalled());
        assert_eq!(stop.reason(), Some(Reason::Found));
        let again = std::panic::catch_unwind(|| stop.signal());
        assert!(again.is_err(), "a second signal ends the process");
    }
}
