//! The state directory (`--out`): creating it and locking it against a second crawl.
//!
//! The lock is an `flock` (`File::try_lock`) on `DIR/lock`, held for the life of the process. The kernel drops it
//! when the process dies, however it dies, so a stale lock from a killed crawl never blocks the
//! next run; the file's contents (the holder's pid) only serve the error message.

use anyhow::{Context, Result, bail};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::Path;

/// Holds the directory's lock until dropped.
pub struct DirLock {
    _file: File,
}

/// Creates `dir` if needed and takes its lock.
pub fn open(dir: &Path) -> Result<DirLock> {
    if dir.exists() && !dir.is_dir() {
        bail!("--out {}: exists and is not a directory", dir.display());
    }
    fs::create_dir_all(dir)
        .with_context(|| format!("--out {}: cannot create the state directory", dir.display()))?;
    let path = dir.join("lock");
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| {
            format!(
                "--out {}: cannot write in the state directory",
                dir.display()
            )
        })?;
    if file.try_lock().is_err() {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        bail!(
            "--out {}: another crawl (pid {}) is using this directory; wait for it or stop it",
            dir.display(),
            holder.trim()
        );
    }
    file.set_len(0)?;
    file.rewind()?;
    writeln!(file, "{}", std::process::id())?;
    Ok(DirLock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_one_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let _held = open(dir.path()).unwrap();
        let err = open(dir.path()).err().unwrap().to_string();
        assert!(err.contains("another crawl"), "{err}");
    }

    #[test]
    fn a_file_is_not_a_state_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, b"x").unwrap();
        assert!(
            open(&file)
                .err()
                .unwrap()
                .to_string()
                .contains("not a directory")
        );
    }
}
