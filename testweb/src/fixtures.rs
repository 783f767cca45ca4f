//! A static directory served as one host: the `testweb --fixtures DIR` mode and [`serve_dir`].
//!
//! GET and HEAD of regular files under the root; `/` and `/x/` serve `index.html`; a directory
//! asked for without its trailing slash answers 301 to the slashed path (as static servers do).
//! Content types come from the extension. Nothing outside the root is ever served: the target
//! is percent-decoded one segment at a time, and a `..` or `.` segment (raw or encoded), an
//! encoded `/` or `\`, a NUL, a bad escape or a non-UTF-8 path is answered 400; a path that
//! still resolves outside the root (through a symlink) is answered 404, as is a dotfile.

use crate::{HostSpec, Request, Response};
use std::path::{Path, PathBuf};

/// What a request target maps to.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// A file to serve, with its content type.
    File(PathBuf, &'static str),
    /// A directory named without its trailing slash: redirect here.
    Redirect(String),
    /// Answer with this error status (400 or 404).
    Error(u16),
}

/// A host serving the files under `root` (see the module documentation).
pub fn serve_dir(root: &Path) -> std::io::Result<HostSpec> {
    let root = root.canonicalize()?;
    if !root.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a directory", root.display()),
        ));
    }
    Ok(HostSpec::new(move |req: &Request| {
        match lookup(&root, &req.target) {
            Lookup::File(path, content_type) => match std::fs::read(&path) {
                Ok(bytes) => Response::new(200, content_type, bytes),
                Err(_) => Response::not_found(),
            },
            Lookup::Redirect(location) => Response::redirect(301, &location),
            Lookup::Error(400) => Response::text(400, "bad request\n"),
            Lookup::Error(status) => Response::text(status, "not found\n"),
        }
    }))
}

/// Maps a request target to a file under `root` (which must be canonical).
pub fn lookup(root: &Path, target: &str) -> Lookup {
    let path = target.split(['?', '#']).next().unwrap_or("");
    let Some(rest) = path.strip_prefix('/') else {
        return Lookup::Error(400); // absolute-form and asterisk-form targets are not served
    };
    let mut file = root.to_path_buf();
    let mut segments: Vec<&str> = rest.split('/').collect();
    let wants_dir = segments.last() == Some(&"");
    if wants_dir {
        segments.pop();
    }
    for raw in segments {
        let Some(segment) = decode_segment(raw) else {
            return Lookup::Error(400);
        };
        if segment.is_empty() || segment == "." || segment == ".." {
            return Lookup::Error(400);
        }
        if segment.starts_with('.') {
            return Lookup::Error(404);
        }
        file.push(segment);
    }
    if wants_dir {
        file.push("index.html");
    }
    // Symlinks may point anywhere: serve only what really lies under the root.
    let Ok(real) = file.canonicalize() else {
        return Lookup::Error(404);
    };
    if !real.starts_with(root) {
        return Lookup::Error(404);
    }
    if real.is_dir() {
        return if wants_dir {
            Lookup::Error(404)
        } else {
            Lookup::Redirect(format!("{path}/"))
        };
    }
    if !real.is_file() {
        return Lookup::Error(404);
    }
    let content_type = content_type(&real);
    Lookup::File(real, content_type)
}

/// Percent-decodes one path segment; `None` for a bad escape, non-UTF-8 bytes, or a decoded
/// `/`, `\` or NUL (which would change what the segment means).
fn decode_segment(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let text = String::from_utf8(out).ok()?;
    if text.contains(['/', '\\', '\0']) {
        return None;
    }
    Some(text)
}

/// The content type for a file name's extension.
pub fn content_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "txt" => "text/plain; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "xml" => "application/xml",
        "json" => "application/json",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_decode_or_are_refused() {
        assert_eq!(decode_segment("a%20b").as_deref(), Some("a b"));
        assert_eq!(decode_segment("caf%C3%A9").as_deref(), Some("café"));
        for bad in [
            "%2f", "%2F", "%5c", "%00", "%", "%4", "%zz", "%ff", "a%2e%2F",
        ] {
            assert_eq!(decode_segment(bad), None, "{bad}");
        }
    }

    #[test]
    fn content_types_follow_extensions() {
        assert_eq!(
            content_type(Path::new("a/b.HTML")),
            "text/html; charset=utf-8"
        );
        assert_eq!(content_type(Path::new("x.jpeg")), "image/jpeg");
        assert_eq!(
            content_type(Path::new("robots.txt")),
            "text/plain; charset=utf-8"
        );
        assert_eq!(content_type(Path::new("noext")), "application/octet-stream");
    }
}
