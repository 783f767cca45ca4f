//! Exit statuses: what a shell script or cron learns from `$?`.

use std::process::ExitCode;

/// The crawler's exit statuses, in one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The crawl completed. Pages that failed are data in the URL log, not errors.
    Done = 0,
    /// A fatal runtime error (the state directory could not be written, say).
    Fatal = 1,
    /// Bad usage or bad input (options, seed file); nothing was crawled.
    BadInput = 2,
    /// Stopped by SIGINT/SIGTERM; running the same command again resumes.
    Interrupted = 130,
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> ExitCode {
        ExitCode::from(status as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_the_documented_numbers() {
        assert_eq!(Status::Done as u8, 0);
        assert_eq!(Status::Fatal as u8, 1);
        assert_eq!(Status::BadInput as u8, 2);
        assert_eq!(Status::Interrupted as u8, 130);
    }
}
