//! The map stays a map: every pointer a module doc makes into ARCHITECTURE.md (`See
//! ARCHITECTURE.md, "NAME"`) names a heading that exists there, and every folder of `src/` has
//! a heading of its own.

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
