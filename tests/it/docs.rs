//! The map stays a map: every pointer a module doc makes into ARCHITECTURE.md (`See
//! ARCHITECTURE.md, "NAME"`) names a heading that exists there, every folder of `src/` has
//! a heading of its own, and every limit README.md states points at the code that holds it.
//! The Markdown renders as written (whole tables, links that resolve), README.md stays a guide,
//! and every `unsafe` block carries its SAFETY note in a file ARCHITECTURE.md names.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The headings of ARCHITECTURE.md (`## Name`, `### name/`), without the hashes.
fn headings() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    text.lines()
        .filter(|line| line.starts_with("## ") || line.starts_with("### "))
        .map(|line| line.trim_start_matches('#').trim().to_owned())
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("reading src/") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_pointer_into_architecture_md_names_a_heading() {
    let headings = headings();
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut pointers = 0;
    let mut broken = Vec::new();
    for file in files {
        // A pointer may wrap onto the next `//!` line: read the doc comments as one text.
        let text = std::fs::read_to_string(&file).expect("a source file");
        let doc: String = text
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("//!"))
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = doc.as_str();
        while let Some(at) = rest.find("ARCHITECTURE.md, \"") {
            rest = &rest[at + "ARCHITECTURE.md, \"".len()..];
            let name = rest.split('"').next().unwrap_or_default();
            pointers += 1;
            if !headings.iter().any(|h| h == name) {
                broken.push(format!("{}: \"{name}\"", file.display()));
            }
        }
    }
    assert!(
        pointers >= 10,
        "only {pointers} pointers found: has their form changed?"
    );
    assert!(
        broken.is_empty(),
        "pointers to headings ARCHITECTURE.md does not have:\n{}",
        broken.join("\n")
    );
}

#[test]
fn every_folder_of_src_has_its_heading() {
    let headings = headings();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root().join("src")).expect("reading src/") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            let name = format!("{}/", path.file_name().unwrap().to_string_lossy());
            if !headings.contains(&name) {
                missing.push(name);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "folders without a heading in ARCHITECTURE.md: {missing:?}"
    );
}

/// The bullets of README.md's "Limits / not yet" section, each as one line of text.
fn readme_limits() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let section = text
        .split("\n## Limits / not yet\n")
        .nth(1)
        .expect("README.md has a \"Limits / not yet\" section");
    let section = section.split("\n## ").next().unwrap_or_default();
    let mut bullets: Vec<String> = Vec::new();
    for line in section.lines() {
        if let Some(start) = line.strip_prefix("- ") {
            bullets.push(start.to_owned());
        } else if line.starts_with("  ")
            && let Some(last) = bullets.last_mut()
        {
            last.push(' ');
            last.push_str(line.trim());
        }
    }
    bullets
}

/// Whether `file` defines `name` (a function, constant, type, static or module).
fn defines(file: &Path, name: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else {
        return false;
    };
    [
        "fn", "const", "struct", "enum", "type", "static", "mod", "trait",
    ]
    .iter()
    .any(|kind| {
        let at = format!("{kind} {name}");
        text.match_indices(&at).any(|(i, _)| {
            let after = text[i + at.len()..].chars().next().unwrap_or(' ');
            !(after.is_alphanumeric() || after == '_')
        })
    })
}

/// README.md's limits stay true: every bullet of "Limits / not yet" points at the code or test
/// that makes it so (`FILE::NAME`), and each pointer names a file that still defines NAME.
/// A limit lifted removes its code, and this fails until the bullet goes.
#[test]
fn every_readme_limit_points_at_code_that_still_holds_it() {
    let bullets = readme_limits();
    assert!(
        bullets.len() >= 5,
        "only {} limits found: has the list's form changed?",
        bullets.len()
    );
    let mut problems = Vec::new();
    for bullet in &bullets {
        let pointers: Vec<&str> = bullet
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|code| code.contains("::") && code.split("::").next().unwrap().contains('/'))
            .collect();
        let shown = bullet.chars().take(60).collect::<String>();
        if pointers.is_empty() {
            problems.push(format!("no `FILE::NAME` pointer: {shown}…"));
        }
        for pointer in pointers {
            let (file, name) = pointer.split_once("::").unwrap();
            if !defines(&root().join(file), name) {
                problems.push(format!("`{pointer}` is not defined there: {shown}…"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "README.md, Limits / not yet:\n{}",
        problems.join("\n")
    );
}

/// The Markdown files people read: README.md, ARCHITECTURE.md and docs/.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md"), root().join("ARCHITECTURE.md")];
    for entry in std::fs::read_dir(root().join("docs")).expect("reading docs/") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files
}

/// The pipes that separate a table row's cells (`\|` is a pipe inside a cell).
fn cell_separators(row: &str) -> usize {
    let bytes = row.as_bytes();
    (0..bytes.len())
        .filter(|&i| bytes[i] == b'|' && (i == 0 || bytes[i - 1] != b'\\'))
        .count()
}

/// Every table renders as one: a run of `|` lines has the delimiter row second and as many
/// cells in each row as in its header. A blank line inside a table ends it, and the rows after
/// it, with no header of their own, render as literal pipes: this fails on them.
#[test]
fn markdown_tables_are_whole() {
    let mut problems = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).expect("a Markdown file");
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        let mut fenced = false;
        let mut table: Vec<(usize, &str)> = Vec::new();
        for (i, line) in text.lines().chain([""]).enumerate() {
            fenced ^= line.starts_with("```");
            if line.starts_with('|') && !fenced {
                table.push((i + 1, line));
                continue;
            }
            if let Some(&(first, header)) = table.first() {
                let delimiter = table.get(1).is_some_and(|(_, l)| l.starts_with("|---"));
                if !delimiter {
                    problems.push(format!("{name}:{first}: rows without a header row"));
                }
                let cells = cell_separators(header);
                for &(at, row) in &table[1..] {
                    if cell_separators(row) != cells {
                        problems.push(format!("{name}:{at}: not the header's cell count"));
                    }
                }
            }
            table.clear();
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A heading's anchor as GitHub makes it: lower-case, spaces as `-`, punctuation other than
/// `-` and `_` dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every relative link of the Markdown files names a file that exists, and a `#part` a heading
/// of that file: moving a section breaks no link silently.
#[test]
fn relative_links_resolve() {
    let mut links = 0;
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).expect("a Markdown file");
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let target = rest.split(')').next().unwrap_or_default();
            if target.contains("://") || target.contains(' ') || target.is_empty() {
                continue;
            }
            links += 1;
            let (path, part) = target.split_once('#').unwrap_or((target, ""));
            let linked = match path {
                "" => file.clone(),
                path => file.parent().unwrap().join(path),
            };
            let Ok(linked_text) = std::fs::read_to_string(&linked) else {
                broken.push(format!("{name}: {target}: no such file"));
                continue;
            };
            let headings: Vec<String> = linked_text
                .lines()
                .filter_map(|l| l.strip_prefix('#'))
                .map(|l| anchor(l.trim_start_matches('#')))
                .collect();
            if !part.is_empty() && !headings.iter().any(|h| h == part) {
                broken.push(format!("{name}: {target}: no such heading"));
            }
        }
    }
    assert!(links >= 20, "only {links} relative links found");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// README.md is a guide, not the reference (issue 42): the reference lives in docs/.
#[test]
fn readme_stays_a_guide() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 350,
        "README.md has {lines} lines: move the reference to docs/"
    );
    for command in ["cargo build --release", "scripts/demo.sh", "bash .ci/run"] {
        assert!(readme.contains(command), "README.md lost `{command}`");
    }
}

/// The `unsafe` blocks outside tests of a source file: the line of each, and whether the
/// comment lines just above it (or the line itself) hold a `// SAFETY:` note.
fn unsafe_blocks(text: &str) -> Vec<(usize, bool)> {
    let code = text
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default();
    let lines: Vec<&str> = code.lines().collect();
    let mut blocks = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let before_comment = line.split("//").next().unwrap_or_default();
        let opens = before_comment.match_indices("unsafe").any(|(at, _)| {
            before_comment[at + "unsafe".len()..]
                .trim_start()
                .starts_with('{')
        });
        if !opens {
            continue;
        }
        let noted = lines[..i]
            .iter()
            .rev()
            .map(|l| l.trim())
            .take_while(|l| l.starts_with("//") && !l.starts_with("///"))
            .any(|l| l.starts_with("// SAFETY:"));
        blocks.push((i + 1, noted));
    }
    blocks
}

/// Every `unsafe` block outside tests says why it is sound (`// SAFETY:` just above it), and
/// every file that has one is named in ARCHITECTURE.md's "Invariants", which says where unsafe
/// code lives.
#[test]
fn unsafe_code_is_noted_and_mapped() {
    let architecture =
        std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let invariants = architecture
        .split("\n## Invariants\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("ARCHITECTURE.md has an Invariants section");
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut problems = Vec::new();
    let mut blocks = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a source file");
        let found = unsafe_blocks(&text);
        if found.is_empty() {
            continue;
        }
        blocks += found.len();
        let name = file
            .strip_prefix(root().join("src"))
            .unwrap()
            .display()
            .to_string();
        for (line, noted) in found {
            if !noted {
                problems.push(format!(
                    "src/{name}:{line}: unsafe without a `// SAFETY:` note"
                ));
            }
        }
        if !invariants.contains(&format!("`{name}`")) {
            problems.push(format!(
                "src/{name} has unsafe code: name it in ARCHITECTURE.md, Invariants"
            ));
        }
    }
    assert!(
        blocks >= 10,
        "only {blocks} unsafe blocks found: has their form changed?"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
