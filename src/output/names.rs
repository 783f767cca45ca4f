//! The names of the files in the WARC directory (`DIR/warc/`): the one place that makes them
//! and says what a name is, for the WARC writer (`output::warc`), the CDXJ indexer
//! (`output::cdxj`) and `crawl wacz` (`tools::wacz`), so that a file one of them adds (a
//! sidecar, such as a WET file) is never taken for another's.
//!
//! - `PREFIX-YYYYMMDDhhmmss-NNNNN.warc.zst` (or `.warc.gz`): a WARC file, `.open` while written.
//! - `WARC.cdxj`: its index, complete and sorted; `WARC.cdxj.open` while written, `.cdxj.tmp`
//!   while sorted.
//! - `PREFIX-YYYYMMDDhhmmss-NNNNN.warc.KIND.zst` (or `.gz`), `KIND` one of `SIDECAR_KINDS`: a
//!   file derived from the WARC file of the same stem (its records refer to that file's), `.open`
//!   while written.
//! - Anything else is no file of the crawl's and is left alone.

use std::path::{Path, PathBuf};

/// How each record is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Compression {
    /// One zstd frame per record (`.warc.zst`); read by FastWARC, or `zstdcat` into any reader.
    Zstd,
    /// One gzip member per record (`.warc.gz`); read by warcio, pywb and replayweb.page.
    Gzip,
}

impl Compression {
    /// The file name extension, without the leading dot.
    pub fn extension(self) -> &'static str {
        match self {
            Compression::Zstd => "warc.zst",
            Compression::Gzip => "warc.gz",
        }
    }
}

/// The suffix of a file still being written.
pub const OPEN: &str = ".open";
/// The suffix of a WARC file's index: `NAME.warc.gz` → `NAME.warc.gz.cdxj`.
pub const INDEX: &str = ".cdxj";
/// The suffix of an index being sorted.
const SORTING: &str = ".tmp";
/// The kinds of sidecar file a WARC file may have (`NAME.warc.KIND.zst`).
pub const SIDECAR_KINDS: [&str; 1] = ["wet"];

/// What a file of the WARC directory is, from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarcDirFile {
    /// A finished WARC file.
    Warc(Compression),
    /// A WARC file being written, or left by a kill (repaired when the writer opens).
    OpenWarc(Compression),
    /// A finished index (`.cdxj`).
    Index,
    /// An index being written or sorted (`.cdxj.open`, `.cdxj.tmp`): removed and rebuilt.
    UnfinishedIndex,
    /// A sidecar of kind `SIDECAR_KINDS[kind]`, finished or `open`.
    Sidecar {
        kind: usize,
        compression: Compression,
        open: bool,
    },
    /// No file of the crawl's.
    Other,
}

/// What the file called `name` is.
pub fn classify(name: &str) -> WarcDirFile {
    let (stem, open) = match name.strip_suffix(OPEN) {
        Some(stem) => (stem, true),
        None => (name, false),
    };
    if let Some(warc) = stem.strip_suffix(INDEX) {
        return match (open, compression_of(warc)) {
            (true, Some(_)) => WarcDirFile::UnfinishedIndex,
            (false, Some(_)) => WarcDirFile::Index,
            (_, None) => WarcDirFile::Other,
        };
    }
    if let Some(warc) = stem.strip_suffix(&format!("{INDEX}{SORTING}")) {
        return match compression_of(warc) {
            Some(_) if !open => WarcDirFile::UnfinishedIndex,
            _ => WarcDirFile::Other,
        };
    }
    if let Some(compression) = compression_of(stem) {
        return match open {
            true => WarcDirFile::OpenWarc(compression),
            false => WarcDirFile::Warc(compression),
        };
    }
    for (kind, name) in SIDECAR_KINDS.iter().enumerate() {
        for compression in [Compression::Zstd, Compression::Gzip] {
            if stem.ends_with(&format!(".{}", extension(compression, Some(name)))) {
                return WarcDirFile::Sidecar {
                    kind,
                    compression,
                    open,
                };
            }
        }
    }
    WarcDirFile::Other
}

/// The compression of a finished WARC file's name (`None`: not a WARC file's name).
pub fn compression_of(name: &str) -> Option<Compression> {
    [Compression::Gzip, Compression::Zstd]
        .into_iter()
        .find(|c| name.ends_with(&format!(".{}", c.extension())))
}

/// The extension (no leading dot) of a WARC file (`sidecar` `None`: `warc.zst`, `warc.gz`)
/// or of a sidecar of kind `sidecar` (`warc.wet.zst`, `warc.wet.gz`).
pub fn extension(compression: Compression, sidecar: Option<&str>) -> String {
    match sidecar {
        None => compression.extension().to_owned(),
        Some(kind) => {
            let codec = compression.extension().trim_start_matches("warc.");
            format!("warc.{kind}.{codec}")
        }
    }
}

/// The name of a new file: `PREFIX-YYYYMMDDhhmmss-NNNNN.EXTENSION` (`extension`).
pub fn file_name(prefix: &str, date: [u64; 6], serial: u64, extension: &str) -> String {
    let [y, mo, d, h, mi, s] = date;
    format!("{prefix}-{y:04}{mo:02}{d:02}{h:02}{mi:02}{s:02}-{serial:05}.{extension}")
}

/// The compression of a file a writer of `sidecar`'s kind (`None`: WARC files) left `.open`.
pub fn open_compression(name: &str, sidecar: Option<&str>) -> Option<Compression> {
    match (classify(name), sidecar) {
        (WarcDirFile::OpenWarc(compression), None) => Some(compression),
        (
            WarcDirFile::Sidecar {
                kind,
                compression,
                open: true,
            },
            Some(wanted),
        ) if SIDECAR_KINDS[kind] == wanted => Some(compression),
        _ => None,
    }
}

/// The serial number of a file of `prefix` (`PREFIX-DATE-NNNNN.warc…`), open or not, of
/// `sidecar`'s kind (`None`: a WARC file).
pub fn serial_of(name: &str, prefix: &str, sidecar: Option<&str>) -> Option<u64> {
    let ours = match (classify(name), sidecar) {
        (WarcDirFile::Warc(_) | WarcDirFile::OpenWarc(_), None) => true,
        (WarcDirFile::Sidecar { kind, .. }, Some(wanted)) => SIDECAR_KINDS[kind] == wanted,
        _ => false,
    };
    if !ours {
        return None;
    }
    let rest = name.strip_prefix(prefix)?.strip_prefix('-')?;
    rest.split(['-', '.']).nth(1)?.parse().ok()
}

/// `path` with `suffix` appended to its file name.
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// The index of the WARC file at `warc`.
pub fn index_path(warc: &Path) -> PathBuf {
    with_suffix(warc, INDEX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_one_kind() {
        use WarcDirFile::*;
        let warc = "crawl-20240101000000-00003.warc.zst";
        let sidecar = |compression, open| Sidecar {
            kind: 0,
            compression,
            open,
        };
        let cases = [
            (warc.to_owned(), Warc(Compression::Zstd)),
            (format!("{warc}.open"), OpenWarc(Compression::Zstd)),
            (
                "c-20240101000000-00000.warc.gz".into(),
                Warc(Compression::Gzip),
            ),
            (format!("{warc}.cdxj"), Index),
            (format!("{warc}.cdxj.open"), UnfinishedIndex),
            (format!("{warc}.cdxj.tmp"), UnfinishedIndex),
            (
                "crawl-20240101000000-00003.warc.wet.zst".into(),
                sidecar(Compression::Zstd, false),
            ),
            (
                "crawl-20240101000000-00003.warc.wet.gz.open".into(),
                sidecar(Compression::Gzip, true),
            ),
            ("notes.txt".into(), Other),
            ("x.cdxj".into(), Other),
            ("x.warc.wet.zst.cdxj".into(), Other),
        ];
        for (name, kind) in cases {
            assert_eq!(classify(&name), kind, "{name}");
        }
    }

    #[test]
    fn names_made_here_are_read_back() {
        let date = [2024, 1, 2, 3, 4, 5];
        let name = file_name("crawl", date, 7, &extension(Compression::Gzip, None));
        assert_eq!(name, "crawl-20240102030405-00007.warc.gz");
        assert_eq!(serial_of(&name, "crawl", None), Some(7));
        assert_eq!(serial_of(&format!("{name}.open"), "crawl", None), Some(7));
        let open = open_compression(&format!("{name}.open"), None);
        assert_eq!(open, Some(Compression::Gzip));
        let wet = file_name("crawl", date, 7, &extension(Compression::Gzip, Some("wet")));
        assert_eq!(wet, "crawl-20240102030405-00007.warc.wet.gz");
        assert_eq!(serial_of(&wet, "crawl", None), None);
        assert_eq!(serial_of(&wet, "crawl", Some("wet")), Some(7));
        assert_eq!(open_compression(&format!("{wet}.open"), None), None);
        let open_wet = open_compression(&format!("{wet}.open"), Some("wet"));
        assert_eq!(open_wet, Some(Compression::Gzip));
        assert_eq!(serial_of(&format!("{name}.cdxj"), "crawl", None), None);
        assert_eq!(
            index_path(Path::new("/d/a.warc.zst")),
            Path::new("/d/a.warc.zst.cdxj")
        );
    }
}
