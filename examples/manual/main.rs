//! Writes the manual from the clap definitions in src/cli/args.rs: `man/crawl.1`, the shell
//! completions `completions/crawl.bash`, `completions/_crawl` (zsh) and
//! `completions/crawl.fish`, and `docs/options.md`; and `docs/summary-json.md` and
//! `docs/url-log.md` from the format tables in src/crawl/summary.rs and src/output/urllog.rs.
//! Run it after changing an option or a format; tests/it/manpage.rs fails until the committed
//! files are what it writes.
//!
//! Usage: cargo run --example manual

mod render;

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = match render::render(root) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("`{}`: {e}", render::REGENERATE);
            return ExitCode::FAILURE;
        }
    };
    for (path, bytes) in files {
        let full = root.join(path);
        if std::fs::read(&full).is_ok_and(|old| old == bytes) {
            continue;
        }
        let written = full
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&full, &bytes));
        match written {
            Ok(()) => eprintln!("manual: wrote {path}"),
            Err(e) => {
                eprintln!("manual: {path}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
