//! Page sinks: the consumers of a fetched page (`crawl::page::Page`), in the order the crawl
//! hands it to them, after its links were offered. The shape of ripgrep's `Sink` or Scrapy's
//! item pipeline: each sink reads the page and writes its own output; none changes the page.
//!
//! The sinks, in order (`PageSinks::new` builds the list once per crawl, from the configuration):
//! 1. the URL log (`output::urllog`): the page's line;
//! 2. `fetched.tsv` (`recrawl::FetchLog`): what the next recrawl compares with;
//! 3. `--save files` (`output::save`): an HTML page's decoded body under `DIR/pages/`;
//!    `--save markdown`: its Markdown under `DIR/markdown/`;
//! 4. `--find` (`crawl::hunt`): the page's text searched;
//! 5. `--extract` (`crawl::extract`): the page's fields, as JSON lines and SQLite rows.
//!
//! Then the archive takes the page by move (`WorkerContext::archive_page`): its body is moved,
//! not copied, into the WARC writer's queue, so the archive is the last consumer, not a sink
//! in the list. The page is done once its record is written (or at once without an archive).
//!
//! Invariants: a sink takes what it needs from the page (`Page::body` and `Page::text` decode
//! once, whichever sink asks first); a sink's `Err` is a failure of the state directory or an
//! output, and stops the crawl, as every such failure does; a sink that writes a file of its
//! own writes it before `take` returns, so the page's "done" (after the archive) covers it.
//! A new output is one type with `impl PageSink` and one line in `PageSinks::new`.

use crate::crawl::config::CrawlConfig;
use crate::crawl::extract::Extract;
use crate::crawl::hunt::Hunt;
use crate::crawl::links::Source;
use crate::crawl::page::Page;
use crate::output::urllog::{LogLine, UrlLog};
use crate::recrawl::{self, FetchLog};
use anyhow::{Context, Result};
use std::path::PathBuf;

/// A consumer of every fetched page.
pub trait PageSink: Sync {
    /// Reads `page` and writes this sink's output of it.
    fn take(&self, page: &Page) -> Result<()>;
}

/// A sink borrowed from the stage that owns it (the URL log, `fetched.tsv`, the hunt).
impl<T: PageSink + ?Sized> PageSink for &T {
    fn take(&self, page: &Page) -> Result<()> {
        (**self).take(page)
    }
}

/// The crawl's sinks, in order.
pub struct PageSinks<'a> {
    sinks: Vec<Box<dyn PageSink + 'a>>,
}

impl<'a> PageSinks<'a> {
    /// The URL log and `fetched.tsv` always, then those the options ask for (`--save files`,
    /// `--find`, `--extract`). A new output is one more line here.
    pub fn new(config: &'a CrawlConfig, log: &'a UrlLog, fetched: &'a FetchLog) -> PageSinks<'a> {
        let mut sinks: Vec<Box<dyn PageSink + 'a>> = vec![Box::new(log), Box::new(fetched)];
        if let Some(dir) = &config.pages {
            sinks.push(Box::new(SavedFiles { dir: dir.clone() }));
        }
        if let Some(dir) = &config.markdown_dir {
            sinks.push(Box::new(SavedMarkdown { dir: dir.clone() }));
        }
        if let Some(hunt) = &config.hunt {
            sinks.push(Box::new(&**hunt));
        }
        if let Some(extract) = &config.extract {
            sinks.push(Box::new(extract));
        }
        PageSinks { sinks }
    }

    /// Hands `page` to every sink in order; the first error stops the rest.
    pub fn take(&self, page: &Page) -> Result<()> {
        self.sinks.iter().try_for_each(|sink| sink.take(page))
    }
}

impl PageSink for UrlLog {
    fn take(&self, page: &Page) -> Result<()> {
        let (response, note) = (&page.response, page.note.to_string());
        self.write(&LogLine {
            status: response.status,
            depth: page.entry.depth,
            bytes: response.body.len() as u64,
            millis: response.elapsed.as_millis(),
            content_type: response.header("content-type"),
            url: &page.entry.url,
            note: &note,
            text: page.text_kept.as_deref(),
            meta: page.meta_kept.as_ref(),
            markdown: page.markdown_kept.as_deref(),
        });
        Ok(())
    }
}

impl PageSink for FetchLog {
    /// The capture a recrawl compares with: status, validators, digest and date, with the
    /// page's history carried on.
    fn take(&self, page: &Page) -> Result<()> {
        let previous = page.entry.previous.as_ref();
        let got = recrawl::capture(previous, &page.response, &page.digest);
        self.record(&crate::frontier::Entry {
            previous: Some(got),
            ..page.entry.clone()
        })
    }
}

/// `--save files`: each 2xx HTML page's body, its content codings undone, under a directory.
struct SavedFiles {
    dir: PathBuf,
}

impl PageSink for SavedFiles {
    fn take(&self, page: &Page) -> Result<()> {
        // The pages read as HTML (a requisite's too, though its links are not followed).
        if Source::of(&page.response, false) != Some(Source::Html) {
            return Ok(());
        }
        crate::output::save::save(&self.dir, &page.url, page.body())
            .with_context(|| format!("saving {} under {}", page.entry.url, self.dir.display()))
    }
}

/// `--save markdown`: each HTML page's Markdown (`Page::markdown_kept`), under a directory.
struct SavedMarkdown {
    dir: PathBuf,
}

impl PageSink for SavedMarkdown {
    fn take(&self, page: &Page) -> Result<()> {
        let Some(markdown) = &page.markdown_kept else {
            return Ok(());
        };
        crate::output::save::save_markdown(&self.dir, &page.url, markdown).with_context(|| {
            format!(
                "saving {}'s Markdown under {}",
                page.entry.url,
                self.dir.display()
            )
        })
    }
}

impl PageSink for Extract {
    /// The page's fields, dated by its fetch (`crawl extract` dates them by a WARC record's).
    fn take(&self, page: &Page) -> Result<()> {
        let fetched = crate::output::warc::warc_date(page.response.started);
        self.take_fetched(page, &fetched)
    }
}

impl PageSink for Hunt {
    fn take(&self, page: &Page) -> Result<()> {
        self.search(page);
        Ok(())
    }
}
