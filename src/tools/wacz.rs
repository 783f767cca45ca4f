//! `crawl wacz DIR… -o FILE.wacz`: packages a crawl's archive as a WACZ file (Web Archive
//! Collection Zipped, 1.1.1), the form replayweb.page opens and pywb imports. Several
//! directories (the shards of a sharded crawl) make one package: every directory's WARC files,
//! each named `DIRNAME-FILE` in it (two shards' files are often named alike: the same second,
//! serial 0), and one index of them all. A renamed file is indexed here (its index names the
//! file), through a symbolic link of the new name in the scratch directory.
//!
//! The ZIP holds, every entry stored (not deflated, so a reader can seek into it):
//! - `archive/NAME.warc.gz`: the crawl's WARC files, byte for byte;
//! - `indexes/index.cdx`: their CDXJ indexes (`DIR/warc/NAME.warc.gz.cdxj`, the ones the crawl
//!   wrote) merged into one sorted index; a WARC file a kill left unindexed (its index is
//!   rebuilt on the crawl's next run) is indexed here, in memory;
//! - `pages/pages.jsonl`: one line per archived HTML page answered 200, with its `<title>`
//!   when the page is not content-encoded (the first 64 KiB are searched);
//! - `datapackage.json`: every other entry's path, size and SHA-256.
//!
//! WACZ holds gzip WARC files only (`.warc.zst` is not in the specification), so each
//! `.warc.zst` file of a crawl made with `--warc-compression zstd` (the default) is converted:
//! every zstd frame is decoded and written again as one gzip member, the records byte for byte
//! the same (their digests still hold; the warcinfo record's `WARC-Filename` keeps the `.zst`
//! name), as `archive/NAME.warc.gz`, indexed here. The conversion goes to a scratch directory
//! inside DIR, removed at the end; the file is written to `FILE.wacz.tmp` and renamed when
//! complete.

use crate::exit::Failure;
use crate::output::cdxj::{self, Capture};
use crate::output::names::{self, WarcDirFile};
use crate::output::warc::Compression;
use crate::state::durable;
use anyhow::{Context, Result, anyhow, bail};
use clap::Parser;
use sha2::{Digest, Sha256};
use std::fs::{self, File};
use std::io::{self, BufWriter, Seek, Write};
use std::path::{Path, PathBuf};
use zip::write::SimpleFileOptions;

/// Package a crawl's WARC files as a WACZ file, for replayweb.page and pywb.
///
/// Reads DIR/warc/ (WARC files and their CDXJ indexes) and writes FILE: the WARC files
/// under archive/, the merged index as indexes/index.cdx, the archived HTML pages with their
/// titles as pages/pages.jsonl, and datapackage.json with each file's SHA-256 (WACZ 1.1.1).
/// WACZ holds gzip WARC files only: the records of a .warc.zst file (--warc-compression zstd)
/// are gzipped again, one gzip member per record, on the way in.
///
/// Given several directories (the shards of a sharded crawl), it writes one package of them
/// all: each WARC file as archive/DIRNAME-FILE (DIRNAME the directory's own name, preceded by
/// its place among the arguments, 1-, 2-..., when two directories share a name), and one
/// sorted index of every capture.
#[derive(Parser, Debug)]
#[command(version, max_term_width = 100)]
pub struct WaczArgs {
    /// A crawl's state directory (the one given to --out); several for one package of them
    /// all (a sharded crawl's shards).
    #[arg(value_name = "DIR", required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,

    /// The WACZ file to write (replaced if it exists).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,

    /// Print nothing on stderr but errors (no summary line).
    #[arg(short, long)]
    pub quiet: bool,
}

/// What went into a package, for the summary line.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Packed {
    pub warc_files: usize,
    /// `.warc.zst` files converted to gzip records.
    pub converted: usize,
    pub captures: u64,
    pub pages: u64,
    pub bytes: u64,
}

pub fn run(args: WaczArgs) -> Result<(), Failure> {
    let warcs = named_warc_files(&args.dirs).map_err(Failure::bad_input)?;
    // A WARC file that is not the crawl's is bad input; anything else failed to be written.
    let packed = pack(&args.dirs[0], &warcs, &args.output).map_err(|e| {
        if e.chain().any(|cause| cause.is::<cdxj::BadWarc>()) {
            Failure::bad_input(e)
        } else {
            Failure::fatal(e)
        }
    })?;
    if !args.quiet {
        eprintln!(
            "crawl wacz: {} WARC files ({} converted from zstd), {} captures, {} pages, {} bytes \
             in {}",
            packed.warc_files,
            packed.converted,
            packed.captures,
            packed.pages,
            packed.bytes,
            args.output.display()
        );
    }
    Ok(())
}

/// The WARC files of `dirs`, each with its name in the package: its own for one directory,
/// else `DIRNAME-NAME` (see `WaczArgs`). A directory given twice is bad input.
fn named_warc_files(dirs: &[PathBuf]) -> Result<Vec<(String, PathBuf)>> {
    let base = |dir: &Path| -> String {
        let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
        (dir.file_name().map(|n| n.to_string_lossy().into_owned())).unwrap_or_else(|| "dir".into())
    };
    let bases: Vec<String> = dirs.iter().map(|d| base(d)).collect();
    let mut seen = std::collections::BTreeSet::new();
    for dir in dirs {
        let real = fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
        if !seen.insert(real) {
            bail!("{}: given twice; give each directory once", dir.display());
        }
    }
    let shared = |b: &String| bases.iter().filter(|o| *o == b).count() > 1;
    let mut named = Vec::new();
    for (i, dir) in dirs.iter().enumerate() {
        for warc in warc_files(dir)? {
            let name = warc
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let name = match (dirs.len(), shared(&bases[i])) {
                (1, _) => name.to_owned(),
                (_, false) => format!("{}-{name}", bases[i]),
                (_, true) => format!("{}-{}-{name}", i + 1, bases[i]),
            };
            named.push((name, warc));
        }
    }
    // A shard that owned no host has none; the package needs some.
    if named.is_empty() {
        let dirs: Vec<String> = dirs
            .iter()
            .map(|d| d.join("warc").display().to_string())
            .collect();
        bail!("{}: no WARC files to package", dirs.join(", "));
    }
    Ok(named)
}

/// The finished WARC files of a crawl, in name order; what cannot be packaged is an error naming
/// the file and what to do.
fn warc_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let warc_dir = dir.join("warc");
    let entries = fs::read_dir(&warc_dir).with_context(|| {
        format!(
            "{}: no WARC directory (is {} a crawl's --out directory, crawled without --no-warc?)",
            warc_dir.display(),
            dir.display()
        )
    })?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let kind = names::classify(name);
        if matches!(
            kind,
            WarcDirFile::OpenWarc(_) | WarcDirFile::Sidecar { open: true, .. }
        ) {
            bail!(
                "{}: a WARC file still being written (a crawl is running, or was killed: run \
                 it again on {} to finish it first)",
                path.display(),
                dir.display()
            );
        }
        if matches!(kind, WarcDirFile::Warc(_)) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Writes the package of `warcs` (each its name in the package, and its gzip or zstd WARC file;
/// zstd ones converted) to `output`, with a scratch directory in `dir`.
pub fn pack(dir: &Path, warcs: &[(String, PathBuf)], output: &Path) -> Result<Packed> {
    let scratch = tempfile::Builder::new()
        .prefix("wacz-")
        .tempdir_in(dir)
        .with_context(|| format!("creating a scratch directory in {}", dir.display()))?;
    let mut packed = Packed {
        warc_files: warcs.len(),
        ..Packed::default()
    };
    // Each file under its name in the package: converted, linked to under a new name, or
    // itself (its CDXJ index beside it).
    let mut gzipped = Vec::with_capacity(warcs.len());
    for (name, warc) in warcs {
        let own = warc.file_name().and_then(|n| n.to_str()) == Some(name.as_str());
        if names::compression_of(name) == Some(Compression::Zstd) {
            let gz_name = format!("{}.warc.gz", name.trim_end_matches(".warc.zst"));
            gzipped.push(to_gzip(warc, &scratch.path().join(gz_name))?);
            packed.converted += 1;
        } else if own {
            gzipped.push(warc.clone());
        } else {
            let link = scratch.path().join(name);
            let target = fs::canonicalize(warc)?;
            std::os::unix::fs::symlink(&target, &link)
                .with_context(|| format!("linking {} to {}", link.display(), warc.display()))?;
            gzipped.push(link);
        }
    }
    let warcs = &gzipped;

    // The sorted index of each file: the crawl's, or built here for a file without one.
    let mut indexes = Vec::new();
    for (i, warc) in warcs.iter().enumerate() {
        let index = names::index_path(warc);
        if index.exists() {
            indexes.push(index);
            continue;
        }
        let mut lines = Vec::new();
        cdxj::for_each_capture(warc, Compression::Gzip, |c: &Capture| {
            lines.push(cdxj::line(c) + "\n");
            Ok(())
        })?;
        lines.sort_unstable();
        let built = scratch.path().join(format!("{i}{}", names::INDEX));
        fs::write(&built, lines.concat())?;
        indexes.push(built);
    }
    let merged = scratch.path().join("index.cdx");
    let mut index = BufWriter::new(File::create(&merged)?);
    packed.captures = cdxj::merge_sorted(&indexes, &mut index)?;
    index.flush()?;

    let pages = scratch.path().join("pages.jsonl");
    packed.pages = write_pages(warcs, &pages)?;

    let mut entries: Vec<(String, PathBuf)> = warcs
        .iter()
        .map(|w| {
            let name = w.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            (format!("archive/{name}"), w.clone())
        })
        .collect();
    entries.push(("indexes/index.cdx".into(), merged));
    entries.push(("pages/pages.jsonl".into(), pages));

    let tmp = durable::temp_path(output);
    let written = write_zip(&entries, &tmp);
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written?;
    durable::commit(&tmp, output).with_context(|| format!("renaming {}", tmp.display()))?;
    packed.bytes = fs::metadata(output)?.len();
    Ok(packed)
}

/// Writes the ZIP: `entries` (name in the package, file) stored, then `datapackage.json` with
/// their sizes and SHA-256 and `datapackage-digest.json`; synced.
fn write_zip(entries: &[(String, PathBuf)], tmp: &Path) -> Result<()> {
    let file = File::create(tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let mut zip = zip::ZipWriter::new(BufWriter::new(file));
    let mut resources = Vec::new();
    for (name, path) in entries {
        let size = fs::metadata(path)?.len();
        let options = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .large_file(size >= u64::from(u32::MAX));
        zip.start_file(name.as_str(), options)?;
        let mut input = File::open(path).with_context(|| format!("reading {}", path.display()))?;
        let mut hashing = HashingWriter {
            inner: &mut zip,
            sha: Sha256::new(),
            bytes: 0,
        };
        io::copy(&mut input, &mut hashing)?;
        let hash = format!(
            "sha256:{}",
            data_encoding::HEXLOWER.encode(&hashing.sha.finalize())
        );
        let resource_name = name.rsplit('/').next().unwrap_or(name).to_lowercase();
        resources.push(serde_json::json!({
            "name": resource_name,
            "path": name,
            "hash": hash,
            "bytes": hashing.bytes,
        }));
    }
    let package = serde_json::json!({
        "profile": "data-package",
        "resources": resources,
        "created": crate::output::warc::warc_date(std::time::SystemTime::now()),
        "wacz_version": "1.1.1",
        "software": format!("crawl {}", env!("CARGO_PKG_VERSION")),
    });
    let package = serde_json::to_vec_pretty(&package)?;
    zip.start_file(
        "datapackage.json",
        SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored),
    )?;
    zip.write_all(&package)?;
    let digest = serde_json::json!({
        "path": "datapackage.json",
        "hash": format!("sha256:{}", data_encoding::HEXLOWER.encode(&Sha256::digest(&package))),
    });
    zip.start_file(
        "datapackage-digest.json",
        SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored),
    )?;
    zip.write_all(&serde_json::to_vec_pretty(&digest)?)?;
    let file = zip
        .finish()?
        .into_inner()
        .map_err(|e| anyhow!("writing {}: {}", tmp.display(), e.error()))?;
    file.sync_all()?;
    Ok(())
}

/// Writes the records of a `.warc.zst` file again as the gzip WARC file `path`, each zstd frame
/// one gzip member.
fn to_gzip(zst: &Path, path: &Path) -> Result<PathBuf> {
    let mut out = BufWriter::new(File::create(path)?);
    cdxj::for_each_unit(zst, Compression::Zstd, |record, _, _| {
        let mut member = flate2::write::GzEncoder::new(&mut out, flate2::Compression::default());
        member.write_all(&record)?;
        member.finish()?;
        Ok(())
    })?;
    out.flush()?;
    Ok(path.to_owned())
}

/// Copies into a ZIP entry while hashing what passes.
struct HashingWriter<'a, W: Write + Seek> {
    inner: &'a mut zip::ZipWriter<W>,
    sha: Sha256,
    bytes: u64,
}

impl<W: Write + Seek> Write for HashingWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sha.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes `pages.jsonl`: its header line, then each HTML page answered 200; returns the count.
fn write_pages(warcs: &[PathBuf], out: &Path) -> Result<u64> {
    let mut output = BufWriter::new(File::create(out)?);
    let header =
        serde_json::json!({"format": "json-pages-1.0", "id": "pages", "title": "All Pages"});
    writeln!(output, "{header}")?;
    let mut count = 0;
    for warc in warcs {
        cdxj::for_each_record(warc, Compression::Gzip, |record| {
            if record.header("WARC-Type") != Some("response") {
                return Ok(());
            }
            let (head, payload) = record.http_parts();
            let head = String::from_utf8_lossy(head);
            let mut lines = head.split("\r\n");
            if lines.next().and_then(|l| l.split(' ').nth(1)) != Some("200") {
                return Ok(());
            }
            let header = |name: &str| {
                head.split("\r\n")
                    .skip(1)
                    .filter_map(|l| l.split_once(':'))
                    .find(|(n, _)| n.trim().eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.trim().to_ascii_lowercase())
            };
            if !header("content-type").is_some_and(|t| t.starts_with("text/html")) {
                return Ok(());
            }
            let mut page = serde_json::json!({
                "id": record
                    .header("WARC-Record-ID")
                    .unwrap_or_default()
                    .trim_start_matches("<urn:uuid:")
                    .trim_end_matches('>'),
                "url": record.header("WARC-Target-URI").unwrap_or_default(),
                "ts": record.header("WARC-Date").unwrap_or_default(),
            });
            if header("content-encoding").is_none()
                && let Some(title) = title(payload)
            {
                page["title"] = title.into();
            }
            writeln!(output, "{page}")?;
            count += 1;
            Ok(())
        })?;
    }
    output.flush()?;
    Ok(count)
}

/// The text of a page's first `<title>` within its first 64 KiB, entities decoded and white
/// space collapsed; None when there is none or it is empty.
fn title(html: &[u8]) -> Option<String> {
    let head = &html[..html.len().min(64 << 10)];
    let lower = head.to_ascii_lowercase();
    let find = |from: usize, needle: &[u8]| {
        lower[from..]
            .windows(needle.len())
            .position(|w| w == needle)
            .map(|i| i + from)
    };
    let open = find(0, b"<title")?;
    let start = open + lower[open..].iter().position(|&b| b == b'>')? + 1;
    let end = find(start, b"</title")?;
    let text = String::from_utf8_lossy(&head[start..end]);
    let text = html_escape::decode_html_entities(&text);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_found_decoded_and_collapsed() {
        assert_eq!(
            title(b"<html><HEAD><Title lang=en>\n A &amp; B  </title>").as_deref(),
            Some("A & B")
        );
        assert_eq!(title(b"<title></title>"), None);
        assert_eq!(title(b"<p>no title</p>"), None);
        assert_eq!(title(b"<title>never closed"), None);
    }
}
