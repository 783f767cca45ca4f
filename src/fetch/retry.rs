//! When to ask a host again after it answered 429 (Too Many Requests) or 503 (Service
//! Unavailable). The page goes back to the front of its host's queue and the host rests until
//! then (`Scheduler::page_retry`), `MAX_RETRIES` times at most.

use std::time::{Duration, SystemTime};

/// A page answered 429 or 503 is asked for again this many times at most.
pub const MAX_RETRIES: u32 = 3;
/// The longest Retry-After honoured; a server asking for more is not asked again.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);

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
