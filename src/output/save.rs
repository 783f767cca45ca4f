//! `--save files`: each fetched HTML page also written as a plain file under `DIR/pages/`;
//! `--save markdown`: its Markdown under `DIR/markdown/`, named the same with `.md` added.
//!
//! Owns the mapping from a URL to a path under `DIR/pages/` and nothing else: it never reads
//! the state directory and never decides what is saved (the crawl does).
//!
//! `http://host:port/a/b.html?q=1` lands in `pages/host_port/a@/b.html,q%3D1`. The mapping is
//! injective (two URLs never share a file, and a file never sits where another URL needs a
//! directory) and cannot leave `pages/`:
//!
//! - Each path segment (and the host) is taken as the canonical URL spells it, percent escapes
//!   included, and every byte outside `[A-Za-z0-9._-]` is written `%XX`. So `%2e%2e` becomes
//!   `%252e%252e`, `%2F` becomes `%252F`, and no `/`, `\`, NUL or control byte survives.
//! - A trailing `.` is written `%2E` (so `.` and `..` become `%2E` and `.%2E`; Windows also
//!   drops trailing dots). Plain encoding never produces `%2E`, so this stays injective.
//! - Directories carry a trailing `@`, file names do not: `/a` is the file `a`, `/a/` is
//!   `a@/index.html`. A path ending in `/` (the empty last segment) is `index.html`; a real last
//!   segment called `index.html` is written `index%2Ehtml`.
//! - The query follows the last segment after a `,`, encoded the same way.
//! - An empty segment (`//`) is `~`. A name that is a Windows device (CON, NUL, COM1, …, with
//!   or without an extension) gets a `~` prefix.
//! - A name longer than [`MAX_NAME`] bytes keeps its first [`KEEP_PREFIX`] bytes, then `~`
//!   and 16 hex digits of the XXH3 of the whole encoded name.
//!
//! `@`, `,` and `~` are outside the plain alphabet, so names made by one rule never equal names
//! made by another. On case-insensitive file systems `/A` and `/a` still share a file.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use url::Url;

/// Longest file or directory name written (most file systems allow 255 bytes).
pub const MAX_NAME: usize = 100;
/// Bytes of an over-long name kept before its hash.
pub const KEEP_PREFIX: usize = 80;

const RESERVED: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

/// Percent-encodes every byte outside `[A-Za-z0-9._-]`, and a trailing `.`.
fn encode(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for &b in raw.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    if out.ends_with('.') {
        out.pop();
        out.push_str("%2E");
    }
    out
}

/// Makes an encoded name safe as one file name: empty, reserved and over-long names.
fn finish_name(encoded: String) -> String {
    if encoded.is_empty() {
        return "~".into();
    }
    let stem = encoded.split('.').next().unwrap_or("");
    let name = if RESERVED.iter().any(|r| r.eq_ignore_ascii_case(stem)) {
        format!("~{encoded}")
    } else {
        encoded
    };
    if name.len() <= MAX_NAME {
        return name;
    }
    // The encoded name is ASCII, so any byte index is a char boundary.
    let hash = xxhash_rust::xxh3::xxh3_64(name.as_bytes());
    format!("{}~{hash:016x}", &name[..KEEP_PREFIX])
}

/// The path of `url`'s page relative to `DIR/pages`, or `None` for a URL without a host.
pub fn relative_path(url: &Url) -> Option<PathBuf> {
    let host = url.host_str()?;
    let port = url.port_or_known_default().unwrap_or(0);
    let mut path = PathBuf::from(finish_name(format!("{}_{port}", encode(host))));
    let segments: Vec<&str> = url.path().strip_prefix('/')?.split('/').collect();
    let (last, dirs) = segments.split_last()?;
    for dir in dirs {
        let mut name = if dir.is_empty() {
            "~".to_owned()
        } else {
            encode(dir)
        };
        name.push('@');
        path.push(finish_name(name));
    }
    let mut file = match *last {
        "" => "index.html".to_owned(),
        "index.html" => "index%2Ehtml".to_owned(),
        other => encode(other),
    };
    if let Some(query) = url.query() {
        file.push(',');
        file.push_str(&encode(query));
    }
    path.push(finish_name(file));
    Some(path)
}

/// `root` joined with `url`'s relative path, checked to stay inside `root`: every component
/// is a plain name without a separator or NUL. `None` if the URL has no place there.
pub fn path_under(root: &Path, url: &Url) -> Option<PathBuf> {
    let relative = relative_path(url)?;
    let plain = relative.components().all(|c| match c {
        Component::Normal(name) => name
            .to_str()
            .is_some_and(|n| !n.contains(['/', '\\', '\0']) && n != "." && n != ".."),
        _ => false,
    });
    plain.then(|| root.join(relative))
}

/// Writes `body` as `url`'s file under `root` (creating directories). Not fsynced: the WARC
/// archive is the record of the crawl; these files are a convenience copy.
pub fn save(root: &Path, url: &Url, body: &[u8]) -> std::io::Result<()> {
    write_at(path_under(root, url), body)
}

/// Writes `markdown` as `url`'s Markdown file under `root` (`--save markdown`): the name
/// `save` gives the page, with `.md` added. Every file name gets the same suffix and no
/// directory name ends in it (they end in `@`), so the mapping stays injective.
pub fn save_markdown(root: &Path, url: &Url, markdown: &str) -> std::io::Result<()> {
    let path = path_under(root, url).map(|mut path| {
        path.as_mut_os_string().push(".md");
        path
    });
    write_at(path, markdown.as_bytes())
}

/// Writes `body` at `path` (creating directories); nothing for a URL without a place.
fn write_at(path: Option<PathBuf>, body: &[u8]) -> std::io::Result<()> {
    let Some(path) = path else {
        return Ok(());
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn rel(url: &str) -> String {
        let url = Url::parse(url).unwrap();
        let root = Path::new("/root/pages");
        let path = path_under(root, &url).expect("a path");
        assert!(path.starts_with(root));
        path.strip_prefix(root)
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn ordinary_urls_map_to_readable_paths() {
        assert_eq!(rel("http://h:8080/"), "h_8080/index.html");
        assert_eq!(rel("http://h/p/1.html"), "h_80/p@/1.html");
        assert_eq!(rel("https://h/a/?q=1&b"), "h_443/a@/index.html,q%3D1%26b");
        assert_eq!(rel("http://[::1]:9/x"), "%5B%3A%3A1%5D_9/x");
    }

    #[test]
    fn dot_segments_and_encoded_separators_cannot_climb_out() {
        // The URL parser resolves dot segments, `%2e` spellings included (WHATWG)...
        assert_eq!(rel("http://h/a/../../etc/passwd"), "h_80/etc@/passwd");
        assert_eq!(rel("http://h/%2e%2e/%2E%2E/x"), "h_80/x");
        assert_eq!(rel("http://h/.%2e/x"), "h_80/x");
        // ...and the mapping would not let one through anyway.
        assert_eq!(encode(".."), ".%2E");
        assert_eq!(encode("."), "%2E");
        assert_eq!(encode("%2e%2e"), "%252e%252e");
        assert_eq!(
            rel("http://h/a%2F..%2F..%2Fb"),
            "h_80/a%252F..%252F..%252Fb"
        );
        assert_eq!(rel("http://h/a..b/c."), "h_80/a..b@/c%2E");
        assert_eq!(rel("http://h/..%00/%00"), "h_80/..%2500@/%2500");
        assert_eq!(rel("http://h/a\\b"), "h_80/a@/b");
    }

    #[test]
    fn hostile_names_are_encoded_capped_or_prefixed() {
        assert_eq!(rel("http://h/a//b"), "h_80/a@/~@/b");
        assert_eq!(rel("http://h/CON"), "h_80/~CON");
        assert_eq!(rel("http://h/nul.txt"), "h_80/~nul.txt");
        assert_eq!(rel("http://h/com1@/x"), "h_80/com1%40@/x");
        assert_eq!(rel("http://con/"), "con_80/index.html");
        let long = format!("http://h/{}/{}", "a".repeat(300), "b".repeat(300));
        let path = rel(&long);
        for name in path.split('/') {
            assert!(name.len() <= MAX_NAME, "{name:?} is too long");
        }
        assert_ne!(rel(&long), rel(&format!("{long}c")));
    }

    #[test]
    fn no_two_urls_share_a_file_or_put_a_file_where_a_directory_goes() {
        let urls = [
            "http://h/a",
            "http://h/a/",
            "http://h/a/index.html",
            "http://h/a%2F",
            "http://h/a?",
            "http://h/a?x",
            "http://h/a%3Fx",
            "http://h/a,x",
            "http://h/a@",
            "http://h/a@/",
            "http://h/~",
            "http://h//",
            "http://h/%7E",
            "http://h/CON",
            "http://h/~CON",
            "http://h/a.",
            "http://h/a%2E",
            "http://h/index.html",
            "http://h/",
            "http://h:81/",
            "https://h/",
        ];
        let files: Vec<String> = urls.iter().map(|u| rel(u)).collect();
        let unique: HashSet<&String> = files.iter().collect();
        assert_eq!(unique.len(), files.len(), "{files:#?}");
        // No file is a directory of another path.
        for f in &files {
            for g in &files {
                assert!(
                    !g.starts_with(&format!("{f}/")),
                    "{f} is a file and a directory"
                );
            }
        }
    }

    #[test]
    fn saving_writes_the_body_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let url = Url::parse("http://h/a/..%2F..%2Fb?c").unwrap();
        save(dir.path(), &url, b"hi").unwrap();
        let expected = dir.path().join("h_80/a@/..%252F..%252Fb,c");
        assert_eq!(std::fs::read(expected).unwrap(), b"hi");
        save_markdown(dir.path(), &Url::parse("http://h/x/").unwrap(), "# X").unwrap();
        let markdown = dir.path().join("h_80/x@/index.html.md");
        assert_eq!(std::fs::read_to_string(markdown).unwrap(), "# X");
    }
}
