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
    Sidecar { kind: usize, open: bool },
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
            if stem.ends_with(&sidecar_extension(name, compression)) {
                return WarcDirFile::Sidecar { kind, open };
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

/// The name of a new WARC file: `PREFIX-YYYYMMDDhhmmss-NNNNN.warc.zst` (or `.gz`).
pub fn warc_name(prefix: &str, date: [u64; 6], serial: u64, compression: Compression) -> String {
    let [y, mo, d, h, mi, s] = date;
    let extension = compression.extension();
    format!("{prefix}-{y:04}{mo:02}{d:02}{h:02}{mi:02}{s:02}-{serial:05}.{extension}")
}

/// The serial number of a WARC file of `prefix` (`PREFIX-DATE-NNNNN.warc…`), open or not.
pub fn serial_of(name: &str, prefix: &str) -> Option<u64> {
    if !matches!(
        classify(name),
        WarcDirFile::Warc(_) | WarcDirFile::OpenWarc(_)
    ) {
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

/// `.warc.KIND.zst` or `.warc.KIND.gz`.
fn sidecar_extension(kind: &str, compression: Compression) -> String {
    let codec = compression.extension().trim_start_matches("warc.");
    format!(".warc.{kind}.{codec}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_one_kind() {
        use WarcDirFile::*;
        let warc = "crawl-20240101000000-00003.warc.zst";
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
                Sidecar {
                    kind: 0,
                    open: false,
                },
            ),
            (
                "crawl-20240101000000-00003.warc.wet.gz.open".into(),
                Sidecar {
                    kind: 0,
                    open: true,
                },
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
        let name = warc_name("crawl", [2024, 1, 2, 3, 4, 5], 7, Compression::Gzip);
        assert_eq!(name, "crawl-20240102030405-00007.warc.gz");
        assert_eq!(serial_of(&name, "crawl"), Some(7));
        assert_eq!(serial_of(&format!("{name}.open"), "crawl"), Some(7));
        let wet = "crawl-20240102030405-00007.warc.wet.gz";
        assert_eq!(
            classify(wet),
            WarcDirFile::Sidecar {
                kind: 0,
                open: false
            }
        );
        assert_eq!(serial_of(wet, "crawl"), None);
        assert_eq!(serial_of(&format!("{name}.cdxj"), "crawl"), None);
        assert_eq!(
            index_path(Path::new("/d/a.warc.zst")),
            Path::new("/d/a.warc.zst.cdxj")
        );
    }
}
