//! The seen set on disk: a sorted file of unique 8-byte URL checksums.
//!
//! Layout: a 32-byte header (magic `CRWLSEEN`, format version, hash id, key count, XXH3 digest
//! of the key bytes) followed by the keys as big-endian u64, ascending, so byte order is numeric
//! order. The file is only ever replaced whole (see `durable`): a merge reads the old file in
//! one sequential pass, writes the union with a sorted batch to a temporary file, and renames it
//! into place. The merge also tells which batch keys were absent: the novel ones.

use crate::seen::checksum::HASH_ID;
use crate::state::durable;
use anyhow::{Context, Result, bail, ensure};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::Xxh3;

const MAGIC: &[u8; 8] = b"CRWLSEEN";
const VERSION: u32 = 1;
const HEADER_LEN: u64 = 32;
const IO_BUFFER: usize = 1 << 20;

/// The sorted checksum file and what its header says.
pub struct SortedStore {
    path: PathBuf,
    len: u64,
    digest: u64,
}

impl SortedStore {
    /// Opens the store at `path`, creating an empty one if there is none.
    pub fn open(path: &Path) -> Result<SortedStore> {
        if !path.exists() {
            let mut store = SortedStore {
                path: path.to_owned(),
                len: 0,
                digest: 0,
            };
            let staged =
                store.write_new(&mut std::iter::empty(), std::iter::empty(), &mut |_| ())?;
            store.commit(staged)?;
            return Ok(store);
        }
        let mut file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let (len, digest) = read_header(&mut file, path)?;
        let actual = file.metadata()?.len();
        ensure!(
            actual == HEADER_LEN + 8 * len,
            "{}: header says {len} checksums ({} bytes) but the file has {actual} bytes; \
             the seen set is damaged (remove it to rebuild from scratch)",
            path.display(),
            HEADER_LEN + 8 * len
        );
        Ok(SortedStore {
            path: path.to_owned(),
            len,
            digest,
        })
    }

    /// Number of checksums stored.
    pub fn len(&self) -> u64 {
        self.len
    }

    #[cfg(test)]
    /// Merges a sorted batch into the store in one sequential pass and calls `on_novel` with the
    /// tag of every key that was absent. `batch` yields (key, tag) ascending by key; a key may
    /// repeat, and only its first occurrence counts (callers order ties by discovery). The old
    /// file is verified against its digest as it is read; the new one replaces it atomically.
    pub fn merge_stream<I>(&mut self, batch: I, on_novel: &mut dyn FnMut(u32)) -> Result<()>
    where
        I: Iterator<Item = Result<(u64, u32)>>,
    {
        let staged = self.stage_merge(batch, on_novel)?;
        self.commit(staged)
    }

    /// The first half of `merge_stream`: writes the union to the temporary file `seen.tmp` and
    /// fsyncs it, but leaves the store as it was until `commit`. The caller can make the novel
    /// keys' payloads durable elsewhere in between, so that a crash never leaves a key stored
    /// whose payload was lost (see `due`).
    pub fn stage_merge<I>(&mut self, batch: I, on_novel: &mut dyn FnMut(u32)) -> Result<Staged>
    where
        I: Iterator<Item = Result<(u64, u32)>>,
    {
        let file =
            File::open(&self.path).with_context(|| format!("opening {}", self.path.display()))?;
        let mut old = KeyReader::new(file, &self.path, self.len, self.digest)?;
        self.write_new(&mut old, batch, on_novel)
    }

    /// Renames a staged merge into place (the second half of `merge_stream`).
    pub fn commit(&mut self, staged: Staged) -> Result<()> {
        durable::commit(&durable::temp_path(&self.path), &self.path)
            .with_context(|| format!("replacing {}", self.path.display()))?;
        self.len = staged.len;
        self.digest = staged.digest;
        Ok(())
    }

    /// After a crash: throws away a staged merge whose payloads were not delivered (its batch
    /// is merged again). Call before `open`.
    pub fn discard_leftover(path: &Path) -> Result<()> {
        let tmp = durable::temp_path(path);
        durable::remove_if_present(&tmp).with_context(|| format!("removing {}", tmp.display()))
    }

    /// Merges `batch` (sorted ascending, unique) and returns, for each key, whether it was novel.
    #[cfg(test)]
    pub fn merge(&mut self, batch: &[u64]) -> Result<Vec<bool>> {
        let mut novel = vec![false; batch.len()];
        let tagged = batch.iter().enumerate().map(|(i, &k)| Ok((k, i as u32)));
        self.merge_stream(tagged, &mut |i| novel[i as usize] = true)?;
        Ok(novel)
    }

    /// Writes the union of `old` and `batch` to a temp file and commits it.
    fn write_new(
        &mut self,
        old: &mut dyn Iterator<Item = Result<u64>>,
        batch: impl Iterator<Item = Result<(u64, u32)>>,
        on_novel: &mut dyn FnMut(u32),
    ) -> Result<Staged> {
        let tmp = durable::temp_path(&self.path);
        let file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let mut out = BufWriter::with_capacity(IO_BUFFER, file);
        out.write_all(&[0; HEADER_LEN as usize])?;
        let mut hasher = Xxh3::new();
        let mut count = 0u64;
        let mut emit = |key: u64, out: &mut BufWriter<File>| -> std::io::Result<()> {
            let bytes = key.to_be_bytes();
            hasher.update(&bytes);
            count += 1;
            out.write_all(&bytes)
        };
        let mut next_old = old.next().transpose()?;
        let mut last: Option<u64> = None;
        for item in batch {
            let (key, tag) = item?;
            if last == Some(key) {
                continue;
            }
            if last.is_some_and(|l| l > key) {
                bail!(
                    "a merge batch was not sorted ({key:016x} after {:016x}); the store is unchanged",
                    last.unwrap()
                );
            }
            last = Some(key);
            while let Some(o) = next_old.filter(|&o| o < key) {
                emit(o, &mut out)?;
                next_old = old.next().transpose()?;
            }
            if next_old != Some(key) {
                on_novel(tag);
                emit(key, &mut out)?;
            }
        }
        while let Some(o) = next_old {
            emit(o, &mut out)?;
            next_old = old.next().transpose()?;
        }
        let digest = hasher.digest();
        let mut file = out.into_inner().map_err(|e| e.into_error())?;
        use std::io::{Seek, SeekFrom};
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&header(count, digest))?;
        file.sync_all()
            .with_context(|| format!("syncing {}", tmp.display()))?;
        drop(file);
        Ok(Staged { len: count, digest })
    }
}

/// A merge written to the temporary file and fsynced, not yet renamed into place.
#[must_use = "a staged merge changes nothing until it is committed"]
pub struct Staged {
    len: u64,
    digest: u64,
}

fn header(count: u64, digest: u64) -> [u8; HEADER_LEN as usize] {
    let mut h = [0u8; HEADER_LEN as usize];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&HASH_ID.to_le_bytes());
    h[16..24].copy_from_slice(&count.to_le_bytes());
    h[24..32].copy_from_slice(&digest.to_le_bytes());
    h
}

fn read_header(file: &mut File, path: &Path) -> Result<(u64, u64)> {
    use std::io::Read;
    let mut h = [0u8; HEADER_LEN as usize];
    file.read_exact(&mut h)
        .with_context(|| format!("{}: too short for a seen-set header", path.display()))?;
    if &h[..8] != MAGIC {
        bail!(
            "{}: not a seen-set file (expected magic {:?})",
            path.display(),
            "CRWLSEEN"
        );
    }
    let version = u32::from_le_bytes(h[8..12].try_into().unwrap());
    let hash = u32::from_le_bytes(h[12..16].try_into().unwrap());
    ensure!(
        version == VERSION,
        "{}: format version {version}, this crawl reads {VERSION}",
        path.display()
    );
    ensure!(
        hash == HASH_ID,
        "{}: hash id {hash}, this crawl uses {HASH_ID}",
        path.display()
    );
    Ok((
        u64::from_le_bytes(h[16..24].try_into().unwrap()),
        u64::from_le_bytes(h[24..32].try_into().unwrap()),
    ))
}

/// Streams the keys of a store file, checking the digest once the last key is read.
struct KeyReader {
    input: BufReader<File>,
    path: PathBuf,
    remaining: u64,
    expected_digest: u64,
    hasher: Xxh3,
}

impl KeyReader {
    fn new(mut file: File, path: &Path, len: u64, digest: u64) -> Result<KeyReader> {
        read_header(&mut file, path)?;
        Ok(KeyReader {
            input: BufReader::with_capacity(IO_BUFFER, file),
            path: path.to_owned(),
            remaining: len,
            expected_digest: digest,
            hasher: Xxh3::new(),
        })
    }

    fn read_key(&mut self) -> Result<u64> {
        let buf = self.input.fill_buf()?;
        let key = if buf.len() >= 8 {
            let bytes: [u8; 8] = buf[..8].try_into().unwrap();
            self.input.consume(8);
            bytes
        } else {
            let mut bytes = [0u8; 8];
            std::io::Read::read_exact(&mut self.input, &mut bytes)
                .with_context(|| format!("{}: truncated", self.path.display()))?;
            bytes
        };
        self.hasher.update(&key);
        self.remaining -= 1;
        if self.remaining == 0 && self.hasher.digest() != self.expected_digest {
            bail!(
                "{}: digest mismatch (expected {:016x}, found {:016x}); the seen set is damaged \
                 (remove it to rebuild from scratch)",
                self.path.display(),
                self.expected_digest,
                self.hasher.digest()
            );
        }
        Ok(u64::from_be_bytes(key))
    }
}

impl Iterator for KeyReader {
    type Item = Result<u64>;
    fn next(&mut self) -> Option<Result<u64>> {
        (self.remaining > 0).then(|| self.read_key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn merges_report_novel_keys_and_persist_the_union() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seen");
        let mut store = SortedStore::open(&path).unwrap();
        assert_eq!(store.merge(&[3, 5, 9]).unwrap(), vec![true, true, true]);
        assert_eq!(store.merge(&[1, 5, 10]).unwrap(), vec![true, false, true]);
        assert_eq!(
            store.merge(&[0, 1, 3, 9, 10, u64::MAX]).unwrap(),
            vec![true, false, false, false, false, true]
        );
        let reopened = SortedStore::open(&path).unwrap();
        assert_eq!(reopened.len(), 7);
        let bytes = std::fs::read(&path).unwrap();
        let keys: Vec<u64> = bytes[32..]
            .chunks(8)
            .map(|c| u64::from_be_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(keys, vec![0, 1, 3, 5, 9, 10, u64::MAX]);
    }

    #[test]
    fn matches_a_btreeset_over_many_random_batches() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SortedStore::open(&dir.path().join("seen")).unwrap();
        let mut reference = BTreeSet::new();
        let mut x = 7u64;
        for _ in 0..50 {
            let mut batch: Vec<u64> = (0..200)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % 5000
                })
                .collect();
            batch.sort_unstable();
            batch.dedup();
            let expected: Vec<bool> = batch.iter().map(|k| reference.insert(*k)).collect();
            assert_eq!(store.merge(&batch).unwrap(), expected);
        }
        assert_eq!(store.len(), reference.len() as u64);
    }

    #[test]
    fn damaged_file_is_reported_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seen");
        let mut store = SortedStore::open(&path).unwrap();
        store.merge(&[1, 2, 3]).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[40] ^= 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let err = SortedStore::open(&path).unwrap().merge(&[4]).unwrap_err();
        assert!(format!("{err:#}").contains("digest mismatch"), "{err:#}");
        std::fs::write(&path, &bytes[..44]).unwrap();
        let err = SortedStore::open(&path).err().unwrap();
        assert!(format!("{err:#}").contains("seen"), "{err:#}");
    }
}
