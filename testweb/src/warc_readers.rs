//! The independent WARC readers the tests check archives with: `warcio` and `fastwarc` (PyPI)
//! and `zstdcat` (the zstd CLI), none of which shares code with the crawler. `.ci/run` installs
//! them; a missing one fails the test with the install hint, it is never skipped. Shared by the
//! WARC writer's unit tests and the integration tests.

use std::path::Path;
use std::process::{Command, Stdio};

/// What to do when a reader is missing.
pub const PIP_HINT: &str = "the WARC tests need independent readers and archive tools: pip \
                            install warcio fastwarc cdxj-indexer wacz pywb (and the zstd CLI); \
                            .ci/run installs them";

/// Runs a reader, feeding it `stdin` if given. Returns whether it succeeded, and its stdout and
/// stderr together.
pub fn run(cmd: &mut Command, stdin: Option<Stdio>) -> (bool, String) {
    cmd.stdin(stdin.unwrap_or(Stdio::null()));
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}\n{PIP_HINT}"));
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// Runs `tool args… FILE`. A `.warc.zst` goes through `zstdcat` into the tool's `/dev/stdin`
/// (warcio reads no zstd). Returns whether the tool succeeded and what it printed.
pub fn run_on(tool: &str, args: &[&str], file: &Path) -> (bool, String) {
    if !file.to_string_lossy().ends_with(".zst") {
        return run(Command::new(tool).args(args).arg(file), None);
    }
    let mut cat = Command::new("zstdcat")
        .arg(file)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run zstdcat: {e}\n{PIP_HINT}"));
    let stdin = Stdio::from(cat.stdout.take().expect("a piped stdout"));
    let result = run(Command::new(tool).args(args).arg("/dev/stdin"), Some(stdin));
    assert!(cat.wait().unwrap().success(), "zstdcat {}", file.display());
    result
}

/// `run_on`, and the test fails with the reader's report unless it succeeded.
pub fn check_with(tool: &str, args: &[&str], file: &Path) -> String {
    let (ok, text) = run_on(tool, args, file);
    assert!(ok, "{tool} {args:?} {} failed:\n{text}", file.display());
    text
}
