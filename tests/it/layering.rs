//! The layering the build keeps: a module of `src/` may name (`crate::…`) only the folders and
//! files below its own in the order ARCHITECTURE.md draws (its "Layers" line), never one above.
//! Lower layers are what the higher ones compose: a stage that needs something of a later one
//! takes it as a value or a trait (`shard::exchange::Hunted`), or the thing moves down.
//!
//! Within a folder, files may name each other, but not in a cycle: the worker names the link
//! sources, never the reverse (`files_within_a_folder_name_each_other_without_a_cycle`).
//!
//! Read from the source as text: every `crate::NAME` outside comments and outside the
//! `#[cfg(test)] mod tests` that ends a file. Deliberate exceptions go in `EXCEPTIONS`, each
//! with its reason.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// `(file, module it may name although that module is above it, why)`.
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

/// `(folder, file, file it names, why)`: the one edge of a cycle within a folder kept on
/// purpose; the test drops these edges before it looks for cycles.
const CYCLES_KEPT: &[(&str, &str, &str, &str)] = &[
    (
        "fetch",
        "client",
        "reactor",
        "one HTTP client, two ways to wait: the client makes the reactor's job from a request it \
         prepared, and the reactor parses answers with the client's own code",
    ),
    (
        "schedule",
        "robotstore",
        "politeness",
        "the store of robots.txt answers keeps each as long as the politeness rules say \
         (ROBOTS_TTL, ROBOTS_RETRY)",
    ),
    (
        "url",
        "html",
        "extract",
        "the tokenizer's <noscript> bookkeeping names the differential oracle's limits \
         (extract::oracle), compiled for tests and the fuzz target only",
    ),
    (
        "url",
        "minhash",
        "extract",
        "page_fingerprint runs the extractor, which fingerprints a page in the pass that reads \
         its links (for tests and the precision measurement)",
    ),
];

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

/// `(folder, from, to)` for each file of a folder of `src` that names another of the same
/// folder (`crate::FOLDER::NAME`; a subfolder counts as one file).
fn within_folders(src: &Path) -> Vec<(String, String, String)> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let mut edges = Vec::new();
    for file in files {
        let parts: Vec<String> = file
            .strip_prefix(src)
            .unwrap()
            .components()
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_owned()
            })
            .collect();
        let [folder, from, ..] = &parts[..] else {
            continue;
        };
        if from == "mod" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        let prefix = format!("crate::{folder}::");
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (at, _) in line.match_indices(&prefix) {
                let rest = &line[at + prefix.len()..];
                let names: Vec<&str> = match rest.strip_prefix('{') {
                    Some(list) => list.split('}').next().unwrap().split(',').collect(),
                    None => vec![rest],
                };
                for name in names {
                    let to: String = name
                        .trim()
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    let is_module = src.join(folder).join(format!("{to}.rs")).is_file()
                        || src.join(folder).join(&to).is_dir();
                    if is_module && to != *from {
                        edges.push((folder.clone(), from.clone(), to));
                    }
                }
            }
        }
    }
    edges.sort();
    edges.dedup();
    edges
}

/// A cycle among `edges` (`from -> to`), as the path around it.
fn a_cycle(edges: &[(String, String)]) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &[(String, String)],
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.iter().any(|n| n == node) {
            return None;
        }
        path.push(node.to_owned());
        for (_, to) in edges.iter().filter(|(from, _)| from == node) {
            if let Some(cycle) = visit(to, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.push(node.to_owned());
        None
    }
    let mut done = Vec::new();
    edges
        .iter()
        .find_map(|(from, _)| visit(from, edges, &mut Vec::new(), &mut done))
}

#[test]
fn files_within_a_folder_name_each_other_without_a_cycle() {
    let edges = within_folders(&root().join("src"));
    let mut folders: Vec<&String> = edges.iter().map(|(folder, _, _)| folder).collect();
    folders.dedup();
    for folder in folders {
        let here: Vec<(String, String)> = edges
            .iter()
            .filter(|(f, _, _)| f == folder)
            .filter(|(f, from, to)| {
                !CYCLES_KEPT.iter().any(|&(kf, kfrom, kto, _)| {
                    kf == f.as_str() && kfrom == from.as_str() && kto == to.as_str()
                })
            })
            .map(|(_, from, to)| (from.clone(), to.clone()))
            .collect();
        if let Some(cycle) = a_cycle(&here) {
            panic!("src/{folder}/: {}", cycle.join(" -> "));
        }
    }
    // The check itself: a cycle is found, and a chain is none.
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    let cyclic = [
        pair("worker", "links"),
        pair("links", "run"),
        pair("run", "worker"),
    ];
    assert_eq!(a_cycle(&cyclic).unwrap().len(), 4);
    assert_eq!(a_cycle(&cyclic[..2]), None);
}
