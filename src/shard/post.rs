//! The crawl's outgoing post: for each other shard, an append-only outbox file on disk that the
//! workers append a page's cross-shard URLs to, and a sender thread that publishes it to the
//! destination's stream in batches.
//!
//! On disk, in `DIR/shard/outbox/`: `<dest>` holds `depth TAB url` lines (the stream payload's
//! own encoding, `broker::encode`), and `<dest>.sent` the byte offset up to which the broker
//! has acknowledged them, replaced atomically (`state::durable`) after each `publish` that
//! returned Ok(true).
//!
//! Crash safety: an append reaches the kernel before `append` returns (the DUE's rule: a kill
//! loses nothing; the worker's page is done only after). The offset is advanced only after the
//! broker has the batch, so a kill between the two publishes the batch again (duplicates are
//! harmless: the destination's DUE drops them). Once everything is published the file is
//! emptied: first the offset is durably set to 0, then the file truncated, both under the
//! append lock; a kill between them re-publishes the file (harmless), never skips an append.
//! On open, an offset past the file's end (no longer possible, but cheap to guard) counts as 0.
//!
//! Backpressure: `publish` returns Ok(false) while the destination's stream is full; the
//! sender waits and retries, and the backlog stays here on disk, not in the broker's memory.

use crate::shard::broker::{Broker, Handoff, decode, encode};
use crate::state::durable;
use anyhow::{Context, Result, anyhow};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Bytes of outbox a sender reads for one batch at most (a stream entry's payload).
const BATCH_BYTES: usize = 256 * 1024;
/// How long a sender waits before asking a full stream again.
const FULL_WAIT: Duration = Duration::from_millis(50);

/// One destination's outbox.
struct Outbox {
    path: PathBuf,
    sent_path: PathBuf,
    state: Mutex<OutboxState>,
    /// Signalled when URLs are appended or on stop.
    more: Condvar,
}

struct OutboxState {
    file: File,
    /// Bytes in the file.
    len: u64,
    /// Bytes the broker has (`<dest>.sent`).
    sent: u64,
    /// The sender failed: appends stop the crawl with this.
    failed: Option<String>,
}

/// Every destination's outbox and sender.
pub struct Outboxes {
    boxes: Vec<Option<Arc<Outbox>>>,
    senders: Mutex<Vec<JoinHandle<()>>>,
    stop: Arc<AtomicBool>,
}

impl Outboxes {
    /// Opens the outboxes of shard `own` of `count` in `dir` and starts a sender for each.
    pub fn open(dir: &Path, own: u32, count: u32, broker: Arc<dyn Broker>) -> Result<Outboxes> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let stop = Arc::new(AtomicBool::new(false));
        let mut boxes = Vec::new();
        let mut senders = Vec::new();
        for dest in 0..count {
            if dest == own {
                boxes.push(None);
                continue;
            }
            let outbox = Arc::new(Outbox::open(dir, dest)?);
            let (outbox_ref, broker, stop) =
                (Arc::clone(&outbox), Arc::clone(&broker), Arc::clone(&stop));
            let sender = std::thread::Builder::new()
                .name(format!("sender-{dest}"))
                .spawn(move || {
                    if let Err(e) = outbox_ref.send(dest, &*broker, &stop) {
                        outbox_ref.state.lock().unwrap().failed = Some(format!("{e:#}"));
                    }
                })
                .context("starting a sender thread")?;
            boxes.push(Some(outbox));
            senders.push(sender);
        }
        Ok(Outboxes {
            boxes,
            senders: Mutex::new(senders),
            stop,
        })
    }

    /// Appends URLs to their destinations' outboxes; they are in the kernel's hands on return.
    pub fn append(&self, mut urls: Vec<(u32, Handoff)>) -> Result<()> {
        urls.sort_by_key(|(dest, _)| *dest);
        for group in urls.chunk_by(|a, b| a.0 == b.0) {
            let dest = group[0].0;
            let outbox = self.boxes[dest as usize]
                .as_ref()
                .ok_or_else(|| anyhow!("a URL of this shard's own hosts was sent"))?;
            let batch: Vec<Handoff> = group.iter().map(|(_, h)| h.clone()).collect();
            outbox.append(&encode(&batch))?;
        }
        Ok(())
    }

    /// Whether the broker has every URL appended so far.
    pub fn all_published(&self) -> bool {
        self.boxes.iter().flatten().all(|b| {
            let state = b.state.lock().unwrap();
            state.sent == state.len
        })
    }

    /// Stops the senders (what is not published stays on disk for the resume).
    pub fn finish(&self) -> Result<()> {
        self.stop.store(true, Ordering::Release);
        for outbox in self.boxes.iter().flatten() {
            let _guard = outbox.state.lock().unwrap();
            outbox.more.notify_all();
        }
        for sender in self.senders.lock().unwrap().drain(..) {
            sender
                .join()
                .map_err(|_| anyhow!("a sender thread panicked"))?;
        }
        for outbox in self.boxes.iter().flatten() {
            if let Some(failed) = &outbox.state.lock().unwrap().failed {
                return Err(anyhow!("sending {}: {failed}", outbox.path.display()));
            }
        }
        Ok(())
    }
}

impl Drop for Outboxes {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

impl Outbox {
    fn open(dir: &Path, dest: u32) -> Result<Outbox> {
        let path = dir.join(dest.to_string());
        let sent_path = dir.join(format!("{dest}.sent"));
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        let len = file.metadata()?.len();
        let sent = match std::fs::read_to_string(&sent_path) {
            Ok(text) => text
                .trim()
                .parse::<u64>()
                .with_context(|| format!("{}: not a byte offset", sent_path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => return Err(e).with_context(|| format!("reading {}", sent_path.display())),
        };
        Ok(Outbox {
            path,
            sent_path,
            state: Mutex::new(OutboxState {
                file,
                len,
                sent: if sent > len { 0 } else { sent },
                failed: None,
            }),
            more: Condvar::new(),
        })
    }

    fn append(&self, lines: &str) -> Result<()> {
        let mut state = self.state.lock().unwrap();
        if let Some(failed) = &state.failed {
            return Err(anyhow!("sending {}: {failed}", self.path.display()));
        }
        state
            .file
            .write_all(lines.as_bytes())
            .with_context(|| format!("appending to {}", self.path.display()))?;
        state.len += lines.len() as u64;
        self.more.notify_one();
        Ok(())
    }

    /// The sender's loop: publish from the offset, advance it, empty the file when all is sent.
    fn send(&self, dest: u32, broker: &dyn Broker, stop: &AtomicBool) -> Result<()> {
        let mut reader =
            File::open(&self.path).with_context(|| format!("opening {}", self.path.display()))?;
        let mut buffer = vec![0u8; BATCH_BYTES];
        loop {
            let (from, to) = {
                let mut state = self.state.lock().unwrap();
                while state.sent == state.len && !stop.load(Ordering::Acquire) {
                    state = self
                        .more
                        .wait_timeout(state, Duration::from_millis(200))
                        .unwrap()
                        .0;
                }
                if state.sent == state.len {
                    return Ok(()); // stopped with nothing left
                }
                if stop.load(Ordering::Acquire) {
                    return Ok(()); // stopped: the rest waits on disk
                }
                (state.sent, state.len.min(state.sent + BATCH_BYTES as u64))
            };
            reader.seek(SeekFrom::Start(from))?;
            let read = &mut buffer[..(to - from) as usize];
            reader
                .read_exact(read)
                .with_context(|| format!("reading {}", self.path.display()))?;
            // Whole lines only (an append is whole lines, so the end of the file is one).
            let end = read.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            if end == 0 {
                return Err(anyhow!(
                    "{}: a line longer than {BATCH_BYTES} bytes",
                    self.path.display()
                ));
            }
            let text = std::str::from_utf8(&read[..end]).context("an outbox line is not UTF-8")?;
            let batch = decode(text).map_err(|e| anyhow!("{}: {e}", self.path.display()))?;
            while !broker
                .publish(dest, &batch)
                .map_err(|e| anyhow!("publishing to shard {dest}: {e}"))?
            {
                if stop.load(Ordering::Acquire) {
                    return Ok(());
                }
                std::thread::sleep(FULL_WAIT);
            }
            let mut state = self.state.lock().unwrap();
            let sent = from + end as u64;
            if sent == state.len {
                // All published: the offset goes back to 0 first, then the file is emptied.
                durable::replace(&self.sent_path, b"0\n")?;
                state.file.set_len(0)?;
                state.len = 0;
                state.sent = 0;
            } else {
                durable::replace(&self.sent_path, format!("{sent}\n").as_bytes())?;
                state.sent = sent;
            }
        }
    }
}
