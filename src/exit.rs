//! Exit statuses: what a shell script or cron learns from `$?`, and the one error type every
//! command returns (`Failure`: an error with the status it ends the process with).

use std::process::ExitCode;

/// The crawler's exit statuses, in one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The crawl completed. Pages that failed are data in the URL log, not errors (unless
    /// most did: `MostlyFailed`).
    Done = 0,
    /// A fatal runtime error (the state directory could not be written, say).
    Fatal = 1,
    /// Bad usage or bad input (options, seed file); nothing was crawled.
    BadInput = 2,
    /// The crawl finished but mostly failed: no seed host answered at all, or more than
    /// `--max-error-ratio` of the fetches failed (`crawl::outcome`). Not marked complete:
    /// running the same command again resumes it.
    MostlyFailed = 3,
    /// Stopped at a run limit (`--max-time`, `--max-bytes`, `--max-pages`): resumable, nothing
    /// lost; running the same command again continues the crawl.
    RunLimit = 4,
    /// Stopped by SIGINT/SIGTERM; running the same command again resumes.
    Interrupted = 130,
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> ExitCode {
        ExitCode::from(status as u8)
    }
}

/// Why a command failed, and the exit status that says so. `?` on any other error makes a
/// `Fatal` failure; input the user can fix is marked with `Failure::bad_input`.
#[derive(Debug)]
pub struct Failure {
    /// `Fatal` or `BadInput`.
    pub status: Status,
    /// The message printed, with its chain of causes.
    pub error: anyhow::Error,
}

impl Failure {
    /// Bad usage or bad input (exit status 2): the user can fix it and run again.
    pub fn bad_input(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            status: Status::BadInput,
            error: error.into(),
        }
    }

    /// A failure of the machine (exit status 1): a disk, a thread, a state file.
    pub fn fatal(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            status: Status::Fatal,
            error: error.into(),
        }
    }
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(error: E) -> Failure {
        Failure::fatal(error)
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
        assert_eq!(Status::MostlyFailed as u8, 3);
        assert_eq!(Status::RunLimit as u8, 4);
        assert_eq!(Status::Interrupted as u8, 130);
    }
}
