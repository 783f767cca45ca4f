//! Writes the manual from the clap definitions in src/cli/args.rs: `man/crawl.1`, the shell
//! completions `completions/crawl.bash`, `completions/_crawl` (zsh) and
//! `completions/crawl.fish`, and the option table of README.md. Run it after changing an option;
//! tests/it/manpage.rs fails until the committed files are what it writes.
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
