//! The map stays a map: every pointer a module doc makes into ARCHITECTURE.md (`See
//! ARCHITECTURE.md, "NAME"`) names a heading that exists there, every folder of `src/` has
//! a heading of its own, and every limit README.md states points at the code that holds it.

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
