//! When to ask again.
//!
//! - After a 429 (Too Many Requests) or 503 (Service Unavailable): the page goes back to the
//!   front of its host's queue and the host rests until then (`Scheduler::page_retry`),
//!   `MAX_RETRIES` times at most, as the server's `Retry-After` asks (`wait`).
//! - After a transient failure (`Transient`): no answer (`ErrorKind::is_retried`: timeout,
//!   connection refused or reset, closed before an answer) or a 502/504 from a gateway. A 500
//!   is the server's own answer and is not asked again. The page waits `--retry-wait` (10 s,
//!   wget's and wget2's), then 4 times longer at each retry (40 s, 160 s), `--retries` times at
//!   most (2): on its own (deferred with its not-before instant) while its host answers other
//!   requests, with its whole host once two new pages failed in a row, no answer between
//!   (`schedule::politeness`). A robots.txt that does not answer (no response, or a 5xx) is asked again on the same schedule before its host's pages are given
//!   up (RFC 9309 §2.3.1.3-4), and a host parked after `PARK_AFTER` failures in a row waits the
//!   next wait of the schedule (160 s by default) once more (`schedule::politeness`).

use std::time::{Duration, SystemTime};

/// A page answered 429 or 503 is asked for again this many times at most.
pub const MAX_RETRIES: u32 = 3;
/// The longest Retry-After honoured; a server asking for more is not asked again.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);

/// Consecutive connection-level failures of one host (across its pages and robots.txt) after
/// which it is parked: its URLs wait `Transient::park_wait`, and if the next attempt fails too
/// they are all given up (`host-unreachable`) without a request each.
pub const PARK_AFTER: u32 = 5;

/// Each wait of the transient schedule is this many times the one before.
const GROWTH: u32 = 4;

/// The schedule of retries after transient failures (`--retries`, `--retry-wait`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transient {
    /// Retries of one page (or one host's robots.txt) at most.
    pub retries: u32,
    /// The wait before the first retry; each next one is `GROWTH` times longer.
    pub first_wait: Duration,
}

impl Default for Transient {
    fn default() -> Transient {
        Transient {
            retries: 2,
            first_wait: Duration::from_secs(10),
        }
    }
}

impl Transient {
    /// The wait before retry number `done + 1`, after `done` retries already; None once the
    /// retries are used up.
    pub fn wait(&self, done: u32) -> Option<Duration> {
        (done < self.retries).then(|| self.nth_wait(done))
    }

    /// How long a parked host waits once more: the schedule's next wait after a page's last.
    pub fn park_wait(&self) -> Duration {
        self.nth_wait(self.retries)
    }

    fn nth_wait(&self, n: u32) -> Duration {
        let factor = GROWTH.saturating_pow(n);
        self.first_wait
            .checked_mul(factor)
            .unwrap_or(MAX_RETRY_AFTER)
            .min(MAX_RETRY_AFTER)
    }
}

/// Whether a status is a gateway's transient failure, asked for again on the transient
/// schedule: 502 (Bad Gateway) and 504 (Gateway Timeout).
pub fn is_transient_status(status: u16) -> bool {
    matches!(status, 502 | 504)
}

/// How long to wait before asking again, or None when the page is done: other statuses,
/// retries used up, or a wait over `MAX_RETRY_AFTER`. `retry_after` is the header's value:
/// seconds or an HTTP date (RFC 9110 §10.2.3); without a usable one the wait doubles from
/// 10 seconds with each retry.
pub fn wait(status: u16, retry_after: Option<&str>, retries: u32) -> Option<Duration> {
    if !matches!(status, 429 | 503) || retries >= MAX_RETRIES {
        return None;
    }
    let doubling = Duration::from_secs(10 << retries);
    let wait = match retry_after.map(str::trim) {
        Some(value) if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
            Duration::from_secs(value.parse().unwrap_or(u64::MAX))
        }
        Some(value) => match httpdate::parse_http_date(value) {
            Ok(at) => at.duration_since(SystemTime::now()).unwrap_or_default(),
            Err(_) => doubling,
        },
        None => doubling,
    };
    (wait <= MAX_RETRY_AFTER).then_some(wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_429_and_503_are_asked_again_within_the_limits() {
        assert_eq!(wait(200, Some("5"), 0), None);
        assert_eq!(wait(500, Some("5"), 0), None);
        assert_eq!(wait(429, Some("5"), 0), Some(Duration::from_secs(5)));
        assert_eq!(wait(503, Some(" 7 "), 2), Some(Duration::from_secs(7)));
        assert_eq!(wait(503, Some("5"), MAX_RETRIES), None, "retries used up");
        assert_eq!(wait(429, Some("3601"), 0), None, "longer than we wait");
        assert_eq!(wait(429, Some("99999999999999999999999"), 0), None);
    }

    #[test]
    fn without_a_usable_value_the_wait_doubles_from_ten_seconds() {
        assert_eq!(wait(429, None, 0), Some(Duration::from_secs(10)));
        assert_eq!(wait(429, None, 1), Some(Duration::from_secs(20)));
        assert_eq!(wait(503, Some("soon"), 2), Some(Duration::from_secs(40)));
    }

    #[test]
    fn transient_waits_grow_fourfold_and_stop_at_the_retries() {
        let schedule = Transient::default();
        assert_eq!(schedule.wait(0), Some(Duration::from_secs(10)));
        assert_eq!(schedule.wait(1), Some(Duration::from_secs(40)));
        assert_eq!(schedule.wait(2), None, "2 retries by default");
        assert_eq!(schedule.park_wait(), Duration::from_secs(160));
        let short = Transient {
            retries: 3,
            first_wait: Duration::from_millis(50),
        };
        assert_eq!(short.wait(2), Some(Duration::from_millis(800)));
        let long = Transient {
            retries: 40,
            first_wait: Duration::from_secs(30),
        };
        assert_eq!(long.wait(39), Some(MAX_RETRY_AFTER), "capped at an hour");
        assert!(is_transient_status(502) && is_transient_status(504));
        assert!(!is_transient_status(500) && !is_transient_status(503));
    }

    #[test]
    fn an_http_date_is_a_wait_until_then() {
        let in_a_minute = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(60));
        let got = wait(503, Some(&in_a_minute), 0).unwrap();
        assert!(
            got > Duration::from_secs(55) && got <= Duration::from_secs(60),
            "{got:?}"
        );
        let past = httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(60));
        assert_eq!(wait(503, Some(&past), 0), Some(Duration::ZERO));
    }
}
