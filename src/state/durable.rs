//! Durable file replacement: the one way the crawler updates a state file.
//!
//! A state file is never modified in place. Its new contents go to a temporary file in the same
//! directory, which is fsynced and renamed over the old name, and then the directory is fsynced so
//! the rename itself survives a power loss. A crash at any instant leaves either the old file or
//! the new one, never a mixture.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The temporary name a new version of `path` is written under before it is renamed into place.
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Makes a rename or a newly created file in `dir` durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Renames a fully written and fsynced `tmp` over `path`, then syncs the directory.
pub fn commit(tmp: &Path, path: &Path) -> io::Result<()> {
    fs::rename(tmp, path)?;
    sync_dir(dir_of(path))
}

/// The directory holding `path`; a bare file name's parent is "", the current directory.
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Removes a file or a directory tree, if it is there; "not there" is not an error.
pub fn remove_if_present(path: &Path) -> io::Result<()> {
    let result = if path.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    match result {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Replaces `path` atomically with `bytes`.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temp_path(path);
    let mut file = File::create(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    commit(&tmp, path)
}

/// Replaces `path` with `bytes` atomically against a kill (write, then rename), without the
/// fsyncs: for caches whose loss on a power cut only costs work done again (a host's saved
/// robots.txt, fetched again). Two fsyncs per host were most of a many-host crawl's system time.
pub fn replace_unsynced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temp_path(path);
    fs::write(&tmp, bytes)?;
    fs::rename(&tmp, path)
}

/// Opens (creating it if needed) an append-only file of lines for appending, with a torn last
/// line cut off; returns it and its length.
pub fn open_log(path: &Path) -> io::Result<(File, u64)> {
    let file = fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)?;
    let len = cut_torn_line(&file)?;
    Ok((file, len))
}

/// Cuts a torn last line (a kill in the middle of a write) off an append-only file of lines
/// and returns the length kept: the record was not yet counted durable by its writer (its page
/// not done), so it is made again.
fn cut_torn_line(mut file: &File) -> io::Result<u64> {
    let len = file.metadata()?.len();
    let mut end = len;
    let mut chunk = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(chunk.len() as u64);
        let part = &mut chunk[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(part)?;
        if let Some(i) = part.iter().rposition(|&b| b == b'\n') {
            end = start + i as u64 + 1;
            break;
        }
        end = start;
    }
    if end < len {
        file.set_len(end)?;
        file.sync_all()?;
    }
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_writes_new_contents_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        replace(&path, b"one").unwrap();
        replace(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert!(!temp_path(&path).exists());
    }

    #[test]
    fn a_bare_file_name_lives_in_the_current_directory() {
        assert_eq!(dir_of(Path::new("plot.svg")), Path::new("."));
        assert_eq!(dir_of(Path::new("out/seen")), Path::new("out"));
        assert_eq!(dir_of(Path::new("/seen")), Path::new("/"));
    }
}
