//! The layering the build keeps: a module of `src/` may name (`crate::…`) only the folders and
//! files below its own in the order ARCHITECTURE.md draws (its "Layers" line), never one above.
//! Lower layers are what the higher ones compose: a stage that needs something of a later one
//! takes it as a value or a trait (`shard::exchange::Hunted`), or the thing moves down.
//!
//! Read from the source as text: every `crate::NAME` outside comments and outside the
//! `#[cfg(test)] mod tests` that ends a file. Deliberate exceptions go in `EXCEPTIONS`, each
//! with its reason.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// `(file, module it may name although that module is above it, why)`.
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The layers, bottom first, from ARCHITECTURE.md's line
/// `Layers, bottom first: a b < c < …` (names in one layer may name each other).
fn layers(architecture: &str) -> Vec<Vec<String>> {
    let line = architecture
        .lines()
        .find_map(|l| l.strip_prefix("Layers, bottom first: "))
        .expect("ARCHITECTURE.md has a line starting `Layers, bottom first: `");
    line.trim_end_matches('.')
        .split('<')
        .map(|layer| {
            layer
                .split_whitespace()
                .map(|name| name.trim_matches(|c| c == '`' || c == ',').to_owned())
                .filter(|name| !name.is_empty())
                .collect()
        })
        .collect()
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of `src` belongs to (`src/fetch/dns.rs`: `fetch`;
/// `src/sys.rs`: `sys`); `None` for the crate roots.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.trim_end_matches(".rs");
    (!matches!(name, "lib" | "main")).then(|| name.to_owned())
}

/// Every upward `crate::` path of the source under `src`: `(file:line, from, to)`.
fn upward(src: &Path, rank: &HashMap<String, usize>) -> Vec<(String, String, String)> {
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let Some(from) = module_of(src, &file) else {
            continue;
        };
        let shown = file.strip_prefix(src.parent().unwrap()).unwrap();
        let shown = shown.display().to_string();
        let from_rank = *rank
            .get(&from)
            .unwrap_or_else(|| panic!("src/{from} is in no layer of ARCHITECTURE.md"));
        let text = std::fs::read_to_string(&file).unwrap();
        let code = match text.find("#[cfg(test)]\nmod tests") {
            Some(at) => &text[..at],
            None => &text,
        };
        for (n, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for (at, _) in line.match_indices("crate::") {
                let rest = &line[at + "crate::".len()..];
                let to: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let Some(&to_rank) = rank.get(&to) else {
                    continue;
                };
                let excepted = EXCEPTIONS
                    .iter()
                    .any(|&(f, m, _)| shown.ends_with(f) && m == to);
                if to_rank > from_rank && !excepted {
                    found.push((format!("{shown}:{}", n + 1), from.clone(), to));
                }
            }
        }
    }
    found
}

fn ranks() -> HashMap<String, usize> {
    let architecture = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut rank = HashMap::new();
    for (i, layer) in layers(&architecture).into_iter().enumerate() {
        for name in layer {
            assert!(
                rank.insert(name.clone(), i).is_none(),
                "{name} is in two layers"
            );
        }
    }
    rank
}

#[test]
fn no_module_names_one_above_it_in_the_layers() {
    let rank = ranks();
    // Every folder and file of src/ is placed, and every name placed exists.
    let mut files = Vec::new();
    sources(&root().join("src"), &mut files);
    for file in &files {
        if let Some(module) = module_of(&root().join("src"), file) {
            assert!(rank.contains_key(&module), "src/{module} is in no layer");
        }
    }
    for name in rank.keys() {
        let src = root().join("src");
        assert!(
            src.join(name).is_dir() || src.join(format!("{name}.rs")).is_file(),
            "ARCHITECTURE.md's layers name {name}, which src/ does not have"
        );
    }
    let found = upward(&root().join("src"), &rank);
    let shown: Vec<String> = found
        .iter()
        .map(|(at, from, to)| format!("{at}: {from} names {to}, a layer above it"))
        .collect();
    assert!(shown.is_empty(), "upward imports:\n{}", shown.join("\n"));
}

#[test]
fn an_upward_import_is_found() {
    // The check itself: a copy of one file that names a module above its own is caught.
    let rank = ranks();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("url")).unwrap();
    let text = "//! A module doc naming crate::crawl in a comment is fine.\n\
                use crate::seen::checksum::checksum;\n\
                use crate::crawl::worker::WorkerContext;\n\
                #[cfg(test)]\nmod tests {\n    use crate::cli::args::Args;\n}\n";
    std::fs::write(src.join("url").join("upward.rs"), text).unwrap();
    let found = upward(&src, &rank);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "src/url/upward.rs:3", "{found:?}");
    assert_eq!((found[0].1.as_str(), found[0].2.as_str()), ("url", "crawl"));
}
