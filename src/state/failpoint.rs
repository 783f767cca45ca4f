//! Crash points and size knobs for the kill-and-resume tests.
//!
//! `CRAWL_FAILPOINT=NAME:N` makes the process kill itself with SIGKILL the N-th time it passes
//! the point `NAME`: exactly what `kill -9` or the OOM killer does, but at an instant a test can
//! name (in the middle of a merge, between a frontier append and its commit, …). Unset, a point
//! costs one relaxed atomic load. The names are listed where `hit` is called; `tests/it/resume.rs`
//! crashes at each of them.

use std::sync::OnceLock;

/// A size the tests shrink through the environment (`CRAWL_SEGMENT_BYTES`,
/// `CRAWL_CHECKPOINT_PAGES`), read once; `default` when unset or not a number.
pub fn knob(cell: &'static OnceLock<u64>, name: &str, default: u64) -> u64 {
    *cell.get_or_init(|| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    })
}
use std::sync::atomic::{AtomicU64, Ordering};

struct Armed {
    name: String,
    remaining: AtomicU64,
}

fn armed() -> Option<&'static Armed> {
    static ARMED: OnceLock<Option<Armed>> = OnceLock::new();
    ARMED
        .get_or_init(|| {
            let spec = std::env::var("CRAWL_FAILPOINT").ok()?;
            let (name, count) = spec.split_once(':').unwrap_or((&spec, "1"));
            Some(Armed {
                name: name.to_owned(),
                remaining: AtomicU64::new(count.parse().unwrap_or(1).max(1)),
            })
        })
        .as_ref()
}

/// Passes the crash point `name`: dies here if the environment armed it for this pass.
pub fn hit(name: &str) {
    if let Some(armed) = armed()
        && armed.name == name
        && armed.remaining.fetch_sub(1, Ordering::Relaxed) == 1
    {
        crate::sys::kill_self();
    }
}

/// Whether `name` is the armed point (to set up a torn write before `hit`).
pub fn armed_for(name: &str) -> bool {
    armed().is_some_and(|armed| armed.name == name)
}
