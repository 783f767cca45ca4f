//! The manual page, the shell completions, docs/ and the README against `crawl --help`, so that
//! none can drift from the options the binary really has.
//!
//! The clap definitions (src/cli/args.rs) are the source of truth: `cargo run --example manual`
//! renders man/crawl.1, completions/ and docs/options.md from them (and docs/summary-json.md and
//! docs/url-log.md from the format tables the crawler's own tests check), and the committed
//! files must be byte for byte what it renders. Beyond that, every option `--help` lists must be
//! documented in the man page's OPTIONS section (as a `.TP` entry) and in docs/options.md, with
//! `--help`'s defaults, and every option the man page, README.md, ARCHITECTURE.md and the
//! hand-written docs mention must exist.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// The generator's renderer itself, so the test compares with exactly what it writes.
#[path = "../../examples/manual/render.rs"]
mod render;

#[test]
fn generated_manual_is_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = render::render(root).unwrap_or_else(|e| panic!("rendering the manual: {e}"));
    let paths: Vec<&str> = files.iter().map(|(path, _)| *path).collect();
    for expected in [
        "man/crawl.1",
        "completions/crawl.bash",
        "docs/options.md",
        "docs/summary-json.md",
        "docs/url-log.md",
    ] {
        assert!(
            paths.contains(&expected),
            "{expected} not rendered: {paths:?}"
        );
    }
    let stale: Vec<&str> = files
        .iter()
        .filter(|(path, bytes)| std::fs::read(root.join(path)).ok().as_ref() != Some(bytes))
        .map(|(path, _)| *path)
        .collect();
    assert!(
        stale.is_empty(),
        "{} differ from what src/cli/args.rs and man/crawl.roff render: run `{}` and commit the result",
        stale.join(", "),
        render::REGENERATE
    );
}

/// An option as `--help` lists it: its names (`-j`, `--jobs`) and its default, if any.
#[derive(Debug)]
struct HelpOption {
    names: Vec<String>,
    default: Option<String>,
}

fn help_text() -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_crawl"))
        .arg("--help")
        .output()
        .expect("running crawl --help");
    assert!(out.status.success(), "crawl --help failed: {out:?}");
    String::from_utf8(out.stdout).expect("--help is UTF-8")
}

/// The options of clap's long help: a definition line is indented at most 6 columns and starts
/// with `-`; description lines (and `- value:` lists) are indented further.
fn help_options(help: &str) -> Vec<HelpOption> {
    let mut options: Vec<HelpOption> = Vec::new();
    for line in help.lines() {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim();
        if indent <= 6 && trimmed.starts_with('-') {
            // `--name <VALUE>`, or `--name [<VALUE>]` for an optional value.
            let spec = trimmed.split(" <").next().unwrap();
            let spec = spec.split(" [").next().unwrap();
            let names = spec.split(", ").map(str::to_owned).collect();
            options.push(HelpOption {
                names,
                default: None,
            });
        } else if let Some(default) = trimmed
            .strip_prefix("[default: ")
            .and_then(|d| d.strip_suffix(']'))
        {
            let last = options.last_mut().expect("a default before any option");
            last.default = Some(default.to_owned());
        }
    }
    assert!(
        options.len() >= 10,
        "parsed only {} options from --help; has its layout changed?\n{help}",
        options.len()
    );
    options
}

fn help_names(help: &str) -> BTreeSet<String> {
    help_options(help)
        .into_iter()
        .flat_map(|o| o.names)
        .collect()
}

fn read(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Roff source with `\-` as `-` and font escapes (`\fB`, `\fI`, `\fR`, `\fP`) removed.
fn unroff(text: &str) -> String {
    let mut out = text.replace("\\-", "-");
    for font in ["\\fB", "\\fI", "\\fR", "\\fP"] {
        out = out.replace(font, "");
    }
    out
}

/// Option names in `text`: `--long` words, and `-x` short ones if `short` (a `-` after a
/// word character, as in `max-depth`, does not start one).
fn option_words(text: &str, short: bool) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    let mut found = BTreeSet::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i] == b'-' && (i == 0 || !word(bytes[i - 1]));
        if !starts {
            i += 1;
            continue;
        }
        let end = (i + 1..bytes.len())
            .find(|&j| !word(bytes[j]))
            .unwrap_or(bytes.len());
        let token = &text[i..end];
        let name = token.trim_end_matches('-');
        let long =
            name.len() >= 3 && name.starts_with("--") && name.as_bytes()[2].is_ascii_alphabetic();
        let is_short = name.len() == 2 && name.as_bytes()[1].is_ascii_alphabetic();
        if long || (short && is_short) {
            found.insert(name.to_owned());
        }
        i = end.max(i + 1);
    }
    found
}

/// The option names of the man page's OPTIONS section: the tag line after each `.TP`.
fn man_option_tags(man: &str) -> BTreeSet<String> {
    let man = unroff(man);
    let mut in_options = false;
    let mut after_tp = false;
    let mut tags = BTreeSet::new();
    for line in man.lines() {
        if let Some(section) = line.strip_prefix(".SH ") {
            in_options = section.trim() == "OPTIONS";
            continue;
        }
        if in_options && after_tp {
            tags.extend(option_words(line, true));
        }
        after_tp = line.trim() == ".TP";
    }
    tags
}

fn fail_if_any(what: &str, missing: &BTreeSet<String>) {
    assert!(
        missing.is_empty(),
        "{what}: {}",
        missing.iter().cloned().collect::<Vec<_>>().join(" ")
    );
}

#[test]
fn every_help_option_is_in_the_man_page() {
    let help = help_names(&help_text());
    let man = read("man/crawl.1");
    let tags = man_option_tags(&man);
    let missing: BTreeSet<String> = help.difference(&tags).cloned().collect();
    fail_if_any(
        "options in `crawl --help` but not documented in man/crawl.1 (OPTIONS, `.TP` entries)",
        &missing,
    );
}

/// groff without preconv reads bytes as Latin-1: a UTF-8 character such as `…` draws the
/// warning "invalid input character" (`groff -man -ww -z`) and renders as garbage on some
/// terminals. Non-ASCII characters are written as escapes (`\[u2026]`).
#[test]
fn man_pages_are_ascii() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = format!("man/{}", entry.unwrap().file_name().to_string_lossy());
        let bad: Vec<String> = read(&path)
            .lines()
            .enumerate()
            .filter(|(_, line)| !line.is_ascii())
            .map(|(i, line)| format!("{path}:{}: {line}", i + 1))
            .collect();
        assert!(
            bad.is_empty(),
            "non-ASCII in a man page (use \\[uXXXX]):\n{}",
            bad.join("\n")
        );
    }
}

#[test]
fn every_man_page_option_is_in_help() {
    let help = help_names(&help_text());
    let man = read("man/crawl.1");
    // Every entry of OPTIONS, and every long option mentioned anywhere (examples included).
    let mut mentioned = man_option_tags(&man);
    mentioned.extend(option_words(&unroff(&man), false));
    let stale: BTreeSet<String> = mentioned.difference(&help).cloned().collect();
    fail_if_any(
        "options in man/crawl.1 that `crawl --help` does not have",
        &stale,
    );
}

/// docs/options.md's index table: rows starting with `` | [`- ``, as (names, default cell).
fn options_table(doc: &str) -> Vec<(BTreeSet<String>, String)> {
    doc.lines()
        .filter(|l| l.starts_with("| [`-"))
        .map(|row| {
            let cells: Vec<&str> = row.split(" | ").collect();
            let names = option_words(cells[0], true);
            let default = cells.get(1).copied().unwrap_or("").replace('`', "");
            (names, default.trim().to_owned())
        })
        .collect()
}

#[test]
fn options_md_documents_every_option() {
    let help = help_names(&help_text());
    let doc = read("docs/options.md");
    let table = options_table(&doc);
    let listed: BTreeSet<String> = table.iter().flat_map(|(n, _)| n.clone()).collect();
    let unlisted: BTreeSet<String> = help.difference(&listed).cloned().collect();
    fail_if_any(
        "options of `crawl --help` missing from docs/options.md's table",
        &unlisted,
    );
    let stale: BTreeSet<String> = listed.difference(&help).cloned().collect();
    fail_if_any(
        "options in docs/options.md's table that `crawl --help` does not have",
        &stale,
    );
    let sections: BTreeSet<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("### "))
        .map(str::to_owned)
        .collect();
    let without: BTreeSet<String> = help
        .iter()
        .filter(|n| n.starts_with("--") && !sections.contains(*n))
        .cloned()
        .collect();
    fail_if_any("options without a section in docs/options.md", &without);
}

#[test]
fn options_md_defaults_are_the_binarys() {
    let help = help_text();
    let defaults: BTreeMap<String, String> = help_options(&help)
        .into_iter()
        .filter_map(|o| Some((o.names.last()?.clone(), o.default?)))
        .collect();
    assert!(defaults.contains_key("--delay-factor"), "{defaults:?}");
    let doc = read("docs/options.md");
    let version = env!("CARGO_PKG_VERSION");
    let mut wrong = Vec::new();
    for (names, cell) in options_table(&doc) {
        let Some(long) = names.iter().find(|n| n.starts_with("--")) else {
            continue;
        };
        if let Some(default) = defaults.get(long) {
            let documented = cell.replace("VERSION", version);
            if documented != *default {
                wrong.push(format!(
                    "{long}: docs/options.md says {cell:?}, --help says {default:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Long options of other programs that the guides name (cargo, fastwarc, the loopback test
/// web, GNU wget), which `crawl --help` rightly lacks.
const OTHER_PROGRAMS: &[&str] = &[
    "--release",
    "--example",
    "--test",
    "--workspace",
    "--verify-payloads",
    "--fixtures",
    "--seeds-out",
    "--hostile",
    "--page-requisites",
];

/// The subcommands `crawl --help` lists (not `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.split("\nCommands:\n")
        .nth(1)
        .expect("--help lists its commands")
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every long option README.md, ARCHITECTURE.md and the hand-written pages of docs/ mention is
/// one of crawl's (or of a subcommand's): a renamed or removed option fails here until the
/// guides say what the binary does.
#[test]
fn guides_mention_only_real_options() {
    let help = help_text();
    let mut known = help_names(&help);
    for sub in subcommands(&help) {
        let out = Command::new(env!("CARGO_BIN_EXE_crawl"))
            .args([sub.as_str(), "--help"])
            .output()
            .expect("running crawl SUB --help");
        assert!(out.status.success(), "crawl {sub} --help failed: {out:?}");
        known.extend(option_words(&String::from_utf8_lossy(&out.stdout), false));
    }
    assert!(
        known.contains("--svg") && known.contains("--top"),
        "{known:?}"
    );
    known.extend(OTHER_PROGRAMS.iter().map(|o| o.to_string()));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut guides = vec!["README.md".to_owned(), "ARCHITECTURE.md".to_owned()];
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/") {
        let name = entry.expect("a directory entry").file_name();
        guides.push(format!("docs/{}", name.to_string_lossy()));
    }
    let mut stale = BTreeSet::new();
    for guide in &guides {
        for option in option_words(&read(guide), false).difference(&known) {
            stale.insert(format!("{guide}: {option}"));
        }
    }
    fail_if_any("options no `--help` of crawl's has", &stale);
}

#[test]
fn option_words_finds_options_not_hyphenated_words() {
    let found = option_words(
        "use -j, --max-depth N; a well-known x-ray; -- alone; --x",
        true,
    );
    let expected: BTreeSet<String> = ["-j", "--max-depth", "--x"].map(String::from).into();
    assert_eq!(found, expected);
    assert_eq!(
        unroff(r"\fB\-\-out\fR \-\-jobs"),
        "--out --jobs",
        "roff escapes"
    );
}
