// Port of go-trafilatura/core.go

//! Web content extraction library.
//!
//! `trafilatura` extracts the main text, comments, and metadata from web pages,
//! stripping boilerplate (navigation, ads, footers) while preserving the
//! article body. It is a faithful Rust port of
//! [go-trafilatura](https://github.com/markusmobius/go-trafilatura).
//!
//! # Quick start
//!
//! ```rust
//! use trafilatura::{extract, Options};
//!
//! let html = r#"<html><body>
//!   <nav>Menu items</nav>
//!   <article><p>This is the main article content.</p></article>
//!   <footer>Copyright 2024</footer>
//! </body></html>"#;
//!
//! let result = extract(html, &Options::default()).unwrap();
//! assert!(result.content_text.contains("main article content"));
//! ```
//!
//! # Features
//!
//! - **Content extraction** — identifies and extracts the main body text using
//!   CSS selector rules, paragraph scoring, and heuristic filters.
//! - **Comment extraction** — separately extracts user comments (optional).
//! - **Metadata** — extracts title, author, date, description, categories, tags,
//!   license, and more from meta tags, OpenGraph, and JSON-LD.
//! - **Fallback strategies** — when primary extraction yields too little content,
//!   falls back to readability-based or baseline extraction.
//! - **Language filtering** — optionally reject documents that don't match a
//!   target language (detected via `whatlang`).
//! - **Deduplication** — LRU-based detection of duplicate content across multiple
//!   extractions.
//!
//! # Builder-style options
//!
//! ```rust
//! use trafilatura::{extract, Options, ExtractionFocus};
//!
//! let html = "<html><body><article><p>Hello world</p></article></body></html>";
//! let opts = Options::default()
//!     .with_fallback(true)
//!     .with_links(true)
//!     .with_focus(ExtractionFocus::FavorRecall);
//! let result = extract(html, &opts).unwrap();
//! assert_eq!(result.content_text, "Hello world");
//! ```
//!
//! # Markdown output (requires `markdown` feature)
//!
//! ```rust,ignore
//! use trafilatura::{extract, create_markdown_document, Options};
//!
//! let result = extract(html, &Options::default()).unwrap();
//!
//! // Just the content as markdown:
//! let md = result.content_markdown();
//!
//! // Full document with YAML front matter + content + comments:
//! let doc = create_markdown_document(&result);
//! ```
//!
//! # Related crates
//!
//! - [`libreadability`](https://crates.io/crates/libreadability) — Mozilla Readability
//!   port for extracting a clean article DOM subtree.
//! - [`justext`](https://crates.io/crates/justext) — paragraph-level boilerplate
//!   removal using stopword density.
//! - [`html2markdown`](https://crates.io/crates/html2markdown) — converts HTML to
//!   Markdown via an intermediate AST.

pub mod dom;
pub mod error;
pub(crate) mod extraction;
pub mod metadata;
pub mod options;
pub mod result;

/// (Patch of crawl.) The rules the main extraction applies to an element, for a caller that
/// reads a page's elements one by one instead of through a `Document`: which content rules
/// name it a main-content container, and whether the extraction prunes it.
pub mod rules {
    pub use crate::selector::Element;
    pub use crate::selector::RULE_NEEDLES as NEEDLES;
    /// The cleaning's tag list: elements removed with their content before extraction.
    pub fn cleaned_tag(tag: &str) -> bool {
        crate::settings::TAGS_TO_CLEAN.contains(tag)
    }
    /// The content rules (`selector::content::CONTENT`, tried in order: the first element
    /// matching rule 1, else rule 2, ...) element `e` matches, as bits, rule 1 the lowest.
    pub fn content_rules(e: &impl Element) -> u8 {
        crate::selector::content::content_rules_matched(e)
    }
    /// Whether pruning a content container removes `e` with its content.
    pub fn pruned(e: &impl Element) -> bool {
        crate::selector::discard::pruned_from_content(e)
    }
    /// Whether the comment sections' removal takes `e` out (comments excluded, the default).
    pub fn comments(e: &impl Element) -> bool {
        crate::selector::discard::removed_comments(e)
    }
}
pub(crate) mod selector;
pub(crate) mod settings;
pub mod utils;

// Convenience re-exports for library users and the CLI binary.
pub use error::TrafilaturaError;
pub use extraction::baseline::html2txt;
pub use options::{Config, ExtractionFocus, FallbackCandidates, HtmlDateMode, Options};
pub use result::{ExtractResult, Metadata};

#[cfg(feature = "markdown")]
pub use html2markdown::Options as MarkdownOptions;

use crate::dom::Document;
use crate::extraction::{
    baseline::{baseline, html2txt_doc},
    external::{compare_external_extraction, justext_rescue},
    html_processing::{
        convert_tags, doc_cleaning, post_cleaning, prune_unwanted_nodes, prune_unwanted_nodes_owned,
    },
    {extract_comments, extract_content},
};
use crate::settings::FORMAT_TAG_CATALOG;
use crate::utils::{
    language::{check_html_language, language_classifier},
    lru::LruCache,
    text::duplicate_test,
    trim,
};

/// Parse an HTML string and extract its main readable content.
///
/// This is the primary entry point. It parses the HTML, extracts metadata,
/// identifies the main content and (optionally) comments, and returns
/// everything as both plain text and cleaned HTML.
///
/// # Errors
///
/// Returns [`TrafilaturaError`] if:
/// - The target language doesn't match (`LanguageMismatch`)
/// - Required metadata is missing when `has_essential_metadata` is set
/// - Extracted content is too short (`InsufficientContent`)
/// - The document is a duplicate (`DuplicateContent`)
///
/// # Example
///
/// ```rust
/// use trafilatura::{extract, Options};
///
/// let html = "<html><body><article><p>Hello world</p></article></body></html>";
/// let result = extract(html, &Options::default()).unwrap();
/// assert_eq!(result.content_text, "Hello world");
/// ```
pub fn extract(html: &str, opts: &Options) -> Result<ExtractResult, TrafilaturaError> {
    let doc = Document::parse(html);
    extract_document(doc, opts)
}

/// Extract readable content from an already-parsed [`Document`](dom::Document).
///
/// Use this when you have a pre-parsed DOM (e.g., from [`dom::Document::parse`])
/// and want to avoid re-parsing. The extraction pipeline is the same as [`extract`].
///
/// Port of `ExtractDocument`.
pub fn extract_document(doc: Document, opts: &Options) -> Result<ExtractResult, TrafilaturaError> {
    let result = extract_document_once(doc, opts);
    // (Patch of crawl.) justext's memo holds this page's HTML: not kept past it.
    extraction::external::forget_justext();
    result
}

/// `extract_document` itself (`extract_document` then forgets its page).
fn extract_document_once(doc: Document, opts: &Options) -> Result<ExtractResult, TrafilaturaError> {
    // Clone opts so we can mutate original_url if needed.
    let mut opts = opts.clone();

    // Prepare LRU cache for duplicate detection.
    let mut cache = LruCache::new(opts.config.cache_size);

    // HTML language check (fast early-exit before expensive extraction).
    if opts.target_language.is_some() && !check_html_language(&doc, &opts, false) {
        return Err(TrafilaturaError::LanguageMismatch {
            expected: opts.target_language.clone().unwrap_or_default(),
            got: String::new(),
        });
    }

    // Extract metadata (happens before content extraction in the Go pipeline).
    let mut meta = if opts.skip_metadata {
        Metadata::default()
    } else {
        metadata::extract_metadata(&doc, &opts)
    };

    // Check essential metadata requirements.
    if opts.has_essential_metadata {
        if meta.title.is_empty() {
            return Err(TrafilaturaError::MissingMetadata("title".into()));
        }
        if meta.url.is_empty() {
            return Err(TrafilaturaError::MissingMetadata("url".into()));
        }
        if meta.date.is_none() {
            return Err(TrafilaturaError::MissingMetadata("date".into()));
        }
    }

    // If OriginalURL was not provided, try to use the one found in metadata.
    if opts.original_url.is_none() && !meta.url.is_empty() {
        if let Ok(parsed) = url::Url::parse(&meta.url) {
            // Mirror Go's nurl.ParseRequestURI: only accept absolute URLs with a scheme.
            if matches!(parsed.scheme(), "http" | "https") {
                opts.original_url = Some(parsed);
            }
        }
    }

    // Apply user-specified prune selector (no backup — this is under full user control).
    let mut doc = doc;
    if let Some(sel) = &opts.prune_selector {
        let root = doc.root();
        let to_remove = doc.query_selector_all(root, sel);
        for id in to_remove.into_iter().rev() {
            doc.remove(id, false);
        }
    }

    // Port of go-trafilatura v2.2.x `extractionSequence` entry: on a thread-forum
    // (schema.org DiscussionForumPosting) the comment containers hold the actual
    // posts, so they are never pruned there; with comments excluded they are
    // pruned from the raw tree up front so every stage (main, external, retry)
    // inherits it.
    let is_forum = forum_thread_page(&doc);
    if opts.exclude_comments && (opts.focus == ExtractionFocus::FavorPrecision || !is_forum) {
        doc = prune_unwanted_nodes_owned(doc, selector::discard::REMOVED_COMMENTS, false);
    }

    // Clone the document before destructive cleaning for fallback strategies.
    // (Patch of crawl.) One copy, not two: upstream's second (`doc_backup2`) is never
    // changed either, only read and copied, so both names read the same tree.
    let doc_backup1 = doc.clone_document();
    let doc_backup2 = &doc_backup1;

    // Clean and normalise tags on the main work document.
    doc_cleaning(&mut doc, &opts);
    convert_tags(&mut doc, &opts);

    // Extract comments first (comments sections are removed from `doc` as a side-effect).
    // On a thread-forum the captured "comments" are the posts: route them into the
    // body instead and re-prepare the work tree (the comment containers were consumed).
    let mut forum_posts: Option<Document> = None;
    let (comments_doc, tmp_comments) = if !opts.exclude_comments {
        let (comments_doc, tmp_comments) = extract_comments(&mut doc, &mut cache, &opts);
        if !tmp_comments.is_empty() && is_forum {
            forum_posts = comments_doc;
            let mut fresh = doc_backup2.clone_document();
            doc_cleaning(&mut fresh, &opts);
            convert_tags(&mut fresh, &opts);
            doc = fresh;
            (None, String::new())
        } else {
            (comments_doc, tmp_comments)
        }
    } else {
        (None, String::new())
    };
    let len_comments = tmp_comments.chars().count();

    // Precision mode prunes comment containers post-conversion as well (lists are
    // converted elements here and match additional rules) — except on forums.
    if opts.focus == ExtractionFocus::FavorPrecision && !is_forum {
        doc = prune_unwanted_nodes_owned(doc, selector::discard::REMOVED_COMMENTS, false);
    }

    // Main content extraction.
    let (mut content_doc, mut tmp_body_text) = extract_content(&doc, &mut cache, &opts);

    // External fallback comparison (readability / justext).
    if opts.enable_fallback {
        (content_doc, tmp_body_text) =
            compare_external_extraction(&doc_backup1, content_doc, &opts);
    }

    // Rescue with baseline if text is still too short and we are not in precision mode.
    let len_text = tmp_body_text.chars().count();
    if len_text < opts.config.min_extracted_size && opts.focus != ExtractionFocus::FavorPrecision {
        (content_doc, tmp_body_text) = baseline(doc_backup2);
        // The dump saw the whole page: missing posts are boilerplate, not lost.
        forum_posts = None;
    }

    // Recall escalation (port of go-trafilatura v2.2.x / Python 2.3.1): a short
    // extraction covering little of the page suggests under-extraction
    // (non-article layout) — retry in recall mode, keep if clearly bigger.
    let len_text = tmp_body_text.chars().count();
    if opts.focus == ExtractionFocus::Balanced && len_text > 0 && len_text < 3000 {
        let page_len = html2txt_doc(doc_backup2).chars().count();
        if (len_text as f64) < 0.2 * page_len as f64 {
            // Retry on a comment-pruned copy so captured reader comments cannot
            // double into the retry output — except on a thread-forum, where the
            // retry rescues the posts.
            // The pruned variant needs an owned binding; on a forum the raw
            // backup is used as-is (recall_retry clones internally).
            let pruned_retry;
            let retry_doc: &Document = if is_forum {
                doc_backup2
            } else {
                pruned_retry =
                    prune_unwanted_nodes(doc_backup2, selector::discard::REMOVED_COMMENTS, false);
                &pruned_retry
            };
            let (retry_body, retry_text) = recall_retry(retry_doc, &opts);
            let retry_len = retry_text.chars().count();

            // A justext candidate runs alongside the rule-based retry (Python
            // parity): a different algorithm reaches div-buried content the
            // rules cannot. justext tends to over-include rather than stop at
            // page boundaries, so it needs a stricter bar than the retry's 1.5x
            // and must also beat the retry's length. Skipped in fast mode.
            let justext = if opts.enable_fallback {
                justext_rescue(retry_doc, &opts)
            } else {
                None
            };
            let justext_len = justext
                .as_ref()
                .map(|(_, text)| text.chars().count())
                .unwrap_or(0);

            if justext_len > retry_len
                && (justext_len as f64) > ESCALATION_JUSTEXT_RATIO * len_text as f64
            {
                let (j_body, j_text) = justext.expect("length checked above");
                // An accepted candidate saw the full page: its exclusions are deliberate.
                content_doc = j_body;
                tmp_body_text = j_text;
                forum_posts = None;
            } else if retry_len >= opts.config.min_extracted_size
                && (retry_len as f64) > 1.5 * len_text as f64
            {
                // An accepted candidate saw the full page: its exclusions are deliberate.
                content_doc = retry_body;
                tmp_body_text = retry_text;
                forum_posts = None;
            }
        }
    }

    // Thread-forum salvage: a gate (escalation length, precision) may have blocked
    // the cascade from restoring the posts — append the ones missing from the body.
    if let Some(posts_doc) = forum_posts {
        salvage_forum_posts(&mut content_doc, &mut tmp_body_text, &posts_doc);
    }

    // Tree size sanity check.
    if let Some(max_tree) = opts.max_tree_size {
        let content_body = content_doc.body().unwrap_or_else(|| content_doc.root());
        if content_doc.children(content_body).len() > max_tree {
            // Strip formatting tags to reduce tree size.
            let fmt_tags: Vec<&str> = FORMAT_TAG_CATALOG.iter().copied().collect();
            content_doc.strip_tags(content_body, &fmt_tags);

            let n_children = content_doc.children(content_body).len();
            if n_children > max_tree {
                return Err(TrafilaturaError::TreeTooLarge(n_children));
            }
        }
    }

    // Size checks — both must be below their minimums. If either meets its
    // threshold the document is considered valid.
    let len_text = tmp_body_text.chars().count();
    if len_text < opts.config.min_output_size && len_comments < opts.config.min_output_comment_size
    {
        return Err(TrafilaturaError::InsufficientContent {
            text_len: len_text,
            comment_len: len_comments,
            min_output_size: opts.config.min_output_size,
            min_output_comment_size: opts.config.min_output_comment_size,
        });
    }

    // Duplicate check at body level.
    if opts.deduplicate {
        let content_body = content_doc.body().unwrap_or_else(|| content_doc.root());
        if duplicate_test(&content_doc, content_body, &mut cache, &opts) {
            return Err(TrafilaturaError::DuplicateContent);
        }
    }

    // Language classification and validation.
    let lang = if opts.skip_language && opts.target_language.is_none() {
        String::new()
    } else {
        language_classifier(&tmp_body_text, &tmp_comments)
    };
    if let Some(ref target) = opts.target_language {
        // Match Go's strict semantics: reject even when lang is "" (unknown).
        // Go's `lang != opts.TargetLanguage` rejects undetected language when a target is set.
        if &lang != target {
            return Err(TrafilaturaError::LanguageMismatch {
                expected: target.clone(),
                got: lang.clone(),
            });
        }
    }
    if !lang.is_empty() {
        meta.language = lang;
    }

    // Post-cleaning of content and comments trees.
    post_cleaning(&mut content_doc);
    let mut comments_doc = comments_doc;
    if let Some(ref mut cd) = comments_doc {
        post_cleaning(cd);
    }

    // Serialise to HTML strings for the result.
    let content_body = content_doc.body().unwrap_or_else(|| content_doc.root());
    let content_html = content_doc.inner_html(content_body);

    let comments_html = if let Some(ref cd) = comments_doc {
        let comments_body = cd.body().unwrap_or_else(|| cd.root());
        cd.inner_html(comments_body)
    } else {
        String::new()
    };

    Ok(ExtractResult {
        content_text: tmp_body_text,
        comments_text: tmp_comments,
        content_html,
        comments_html,
        metadata: meta,
    })
}

// ---------------------------------------------------------------------------
// Recall escalation & thread-forum handling (port of go-trafilatura v2.2.x
// core.go `extractionSequence` additions, aligned with Python 2.3.1)
// ---------------------------------------------------------------------------

/// Thread-forum marker: a schema.org `DiscussionForumPosting` type in JSON-LD.
/// Matched on raw script text (not JSON-parsed) — real-world payloads can be
/// invalid JSON yet still carry the marker.
/// justext escalation candidate: justext over-includes (whole pricing tables,
/// unrelated sections) rather than stopping at page boundaries the way the
/// rule-based retry does, so it needs a stricter bar than the retry's 1.5x.
/// Calibrated against Python's benchmark suite — don't tune in isolation.
const ESCALATION_JUSTEXT_RATIO: f64 = 2.0;

static DISCUSSION_FORUM_POSTING: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(
    || {
        regex::Regex::new(
            r#""@type"[\s\v\x{1c}-\x{1f}\x{85}\p{Z}]*:[\s\v\x{1c}-\x{1f}\x{85}\p{Z}]*(?:"DiscussionForumPosting"|\[[^\]]*"DiscussionForumPosting")"#,
        )
        .expect("valid DiscussionForumPosting regex")
    },
);

/// Detects a thread-forum page where posts live in the same containers that
/// comment pruning would remove — comments are content here, unlike on a blog.
///
/// Port of Go's `forumThreadPage` / Python's `_forum_thread_page`. Q&A forums
/// (QAPage) are deliberately not matched; forums without the marker are an
/// accepted miss.
fn forum_thread_page(doc: &Document) -> bool {
    doc.scripts_with_type(&["application/ld+json"])
        .iter()
        .any(|&script_id| DISCUSSION_FORUM_POSTING.is_match(&doc.text_content(script_id)))
}

/// Appends captured forum posts that the main cascade did not already recover
/// into the body, then recomputes the body text.
///
/// Port of the forum-salvage block in Go's `extractionSequence`. Post elements
/// move between documents via serialize/re-parse (NodeIds do not transfer
/// across `Document` instances; see DEVIATIONS.md) — a lossless round-trip.
fn salvage_forum_posts(
    content_doc: &mut Document,
    tmp_body_text: &mut String,
    posts_doc: &Document,
) {
    let body = content_doc.body().unwrap_or_else(|| content_doc.root());
    let existing: Vec<String> = content_doc
        .children(body)
        .iter()
        .map(|&child| trim(&content_doc.text_content(child)))
        .collect();
    let mut body_text = existing.join("\n");

    let mut salvaged_html = Vec::new();
    if let Some(posts_body) = posts_doc.body() {
        for &post_id in &posts_doc.children(posts_body) {
            let post_text = trim(&posts_doc.text_content(post_id));
            // Track accepted posts in the dedupe text: a captured parent post
            // and a nested inline fragment of it (e.g. a <b> captured
            // separately by the comments pass) must not both be appended.
            if !post_text.is_empty() && !body_text.contains(&post_text) {
                salvaged_html.push(posts_doc.outer_html(post_id));
                body_text.push_str(&post_text);
            }
        }
    }
    if salvaged_html.is_empty() {
        return;
    }

    // Rebuild via inner_html: unlike children()+outer_html, it keeps bare text
    // children and tails (e.g. promoted by the final div strip in extract_content).
    let existing_html = content_doc.inner_html(body);
    let full_html = format!(
        "<html><body>{existing_html}{}</body></html>",
        salvaged_html.concat()
    );
    *content_doc = Document::parse(&full_html);
    let new_body = content_doc.body().unwrap_or_else(|| content_doc.root());
    *tmp_body_text = trim(&content_doc.iter_text(new_body, " "));
}

/// Re-runs content extraction in FavorRecall mode on a prepared copy of the
/// original document, for the recall-escalation tier.
///
/// Port of Go's `recallRetry`: fresh cache, recall focus, optional external
/// fallback comparison on the original tree.
fn recall_retry(doc: &Document, opts: &Options) -> (Document, String) {
    let mut retry_opts = opts.clone();
    retry_opts.focus = ExtractionFocus::FavorRecall;
    let mut cache = LruCache::new(retry_opts.config.cache_size);

    let mut work = doc.clone_document();
    doc_cleaning(&mut work, &retry_opts);
    convert_tags(&mut work, &retry_opts);
    let (mut body, mut text) = extract_content(&work, &mut cache, &retry_opts);
    if retry_opts.enable_fallback {
        (body, text) = compare_external_extraction(doc, body, &retry_opts);
    }
    (body, text)
}

/// Creates a complete, self-contained HTML document from an [`ExtractResult`].
///
/// The output has metadata encoded as `<meta>` tags in `<head>`, article
/// content in `<div id="content-body">`, and comments (if any) in
/// `<div id="comments-body">`.
///
/// Port of `CreateReadableDocument`.
pub fn create_readable_document(result: &ExtractResult) -> String {
    let m = &result.metadata;

    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('"', "&quot;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };

    let date_str = match m.date {
        Some(d) => d.format("%Y-%m-%d").to_string(),
        None => String::new(),
    };

    let categories = m.categories.join(", ");
    let tags = m.tags.join("; ");

    let mut html = String::with_capacity(1024);
    html.push_str("<html><head>");

    for (name, value) in &[
        ("title", m.title.as_str()),
        ("author", m.author.as_str()),
        ("url", m.url.as_str()),
        ("hostname", m.hostname.as_str()),
        ("description", m.description.as_str()),
        ("sitename", m.sitename.as_str()),
        ("date", date_str.as_str()),
        ("categories", categories.as_str()),
        ("tags", tags.as_str()),
        ("license", m.license.as_str()),
    ] {
        html.push_str(r#"<meta name=""#);
        html.push_str(name);
        html.push_str(r#"" content=""#);
        html.push_str(&escape(value));
        html.push_str(r#""/>"#);
    }

    html.push_str("</head><body>");

    if !result.content_html.is_empty() {
        html.push_str(r#"<div id="content-body">"#);
        html.push_str(&result.content_html);
        html.push_str("</div>");
    }

    if !result.comments_html.is_empty() {
        html.push_str(r#"<div id="comments-body">"#);
        html.push_str(&result.comments_html);
        html.push_str("</div>");
    }

    html.push_str("</body></html>");
    html
}

// ---------------------------------------------------------------------------
// Markdown document builder
// ---------------------------------------------------------------------------

/// Creates a complete Markdown document from an [`ExtractResult`], with
/// metadata encoded as YAML front matter.
///
/// The output has the form:
///
/// ```text
/// ---
/// title: "Article Title"
/// author: "Jane Doe"
/// date: "2025-03-07"
/// ---
///
/// Article content in Markdown...
///
/// ## Comments
///
/// Comments in Markdown...
/// ```
///
/// All string values in front matter are double-quoted for safety. Empty
/// metadata fields are omitted. This is the Markdown counterpart of
/// [`create_readable_document`].
#[cfg(feature = "markdown")]
pub fn create_markdown_document(result: &ExtractResult) -> String {
    create_markdown_document_with(result, &MarkdownOptions::default())
}

/// Creates a complete Markdown document with custom [`MarkdownOptions`].
///
/// See [`create_markdown_document`] for details on the output format.
#[cfg(feature = "markdown")]
pub fn create_markdown_document_with(result: &ExtractResult, options: &MarkdownOptions) -> String {
    let mut out = String::with_capacity(1024);

    // Front matter
    write_front_matter(&mut out, &result.metadata);

    // Content
    let content = result.content_markdown_with(options);
    out.push_str(&content);

    // Comments — only emit the heading when there's content to separate from.
    let comments = result.comments_markdown_with(options);
    if !comments.is_empty() {
        // Ensure exactly one blank line before the heading.
        if !out.ends_with("\n\n") {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push('\n');
        }
        out.push_str("## Comments\n\n");
        out.push_str(&comments);
    }

    out
}

/// Escape a string for use as a YAML double-quoted scalar.
///
/// Handles backslash, double-quote, common whitespace escapes, and all
/// ASCII control characters (per YAML 1.2 §7.3.1).
#[cfg(feature = "markdown")]
fn yaml_escape(s: &str) -> String {
    let mut escaped = String::with_capacity(s.len() + 2);
    escaped.push('"');
    for ch in s.chars() {
        match ch {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            '\n' => escaped.push_str("\\n"),
            '\r' => escaped.push_str("\\r"),
            '\t' => escaped.push_str("\\t"),
            '\0' => escaped.push_str("\\0"),
            // Remaining ASCII control characters and DEL.
            ch if (ch as u32) < 0x20 || ch == '\x7f' => {
                escaped.push_str(&format!("\\u{:04X}", ch as u32));
            }
            _ => escaped.push(ch),
        }
    }
    escaped.push('"');
    escaped
}

/// Write YAML front matter for the given metadata.
#[cfg(feature = "markdown")]
fn write_front_matter(out: &mut String, m: &Metadata) {
    out.push_str("---\n");

    let date_str = m.date.map(|d| d.format("%Y-%m-%d").to_string());

    for (key, value) in [
        ("title", Some(m.title.as_str())),
        ("author", Some(m.author.as_str())),
        ("url", Some(m.url.as_str())),
        ("hostname", Some(m.hostname.as_str())),
        ("description", Some(m.description.as_str())),
        ("sitename", Some(m.sitename.as_str())),
        ("date", date_str.as_deref()),
        ("license", Some(m.license.as_str())),
        ("language", Some(m.language.as_str())),
        ("image", Some(m.image.as_str())),
    ] {
        if let Some(v) = value {
            if !v.is_empty() {
                out.push_str(key);
                out.push_str(": ");
                out.push_str(&yaml_escape(v));
                out.push('\n');
            }
        }
    }

    if !m.categories.is_empty() {
        out.push_str("categories:\n");
        for cat in &m.categories {
            out.push_str("  - ");
            out.push_str(&yaml_escape(cat));
            out.push('\n');
        }
    }

    if !m.tags.is_empty() {
        out.push_str("tags:\n");
        for tag in &m.tags {
            out.push_str("  - ");
            out.push_str(&yaml_escape(tag));
            out.push('\n');
        }
    }

    out.push_str("---\n\n");
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    // ---------------------------------------------------------------------------
    // Forum detection (python-2.2.0-reference.json `forums` samples)
    // ---------------------------------------------------------------------------

    // The detection regex deliberately matches raw script text rather than parsed
    // JSON: real-world payloads can be invalid JSON yet still carry the marker,
    // and conversely a padded or URL-prefixed type must not match.
    const FORUM_SAMPLES: &[(&str, bool)] = &[
    // (html, is_forum)
    (r#"<script type="application/ld+json">null</script>"#, false),
    (r#"<script type="application/json">null</script>"#, false),
    (r#"<script type="APPLICATION/LD+JSON">null</script>"#, false),
    (
        r#"<script type="application/ld+json">{"@type":"DiscussionForumPosting"}</script>"#,
        true,
    ),
    (
        r#"<script type="application/json">{"@type":"DiscussionForumPosting"}</script>"#,
        false,
    ),
    (
        r#"<script type="APPLICATION/LD+JSON">{"@type":"DiscussionForumPosting"}</script>"#,
        false,
    ),
    // padded type inside array: not the exact quoted string
    (
        r#"<script type="application/ld+json">{"@type":["Article"," DiscussionForumPosting "]}</script>"#,
        false,
    ),
    (
        r#"<script type="application/json">{"@type":["Article"," DiscussionForumPosting "]}</script>"#,
        false,
    ),
    (
        r#"<script type="APPLICATION/LD+JSON">{"@type":["Article"," DiscussionForumPosting "]}</script>"#,
        false,
    ),
    // case-sensitive type name
    (
        r#"<script type="application/ld+json">{"@graph":{"mainEntity":[{"child":{"@type":"DISCUSSIONFORUMPOSTING"}}]}}</script>"#,
        false,
    ),
    (
        r#"<script type="application/json">{"@graph":{"mainEntity":[{"child":{"@type":"DISCUSSIONFORUMPOSTING"}}]}}</script>"#,
        false,
    ),
    (
        r#"<script type="APPLICATION/LD+JSON">{"@graph":{"mainEntity":[{"child":{"@type":"DISCUSSIONFORUMPOSTING"}}]}}</script>"#,
        false,
    ),
    // nested arrays
    (
        r#"<script type="application/ld+json">[{"@type":"Article"},[{"@type":"DiscussionForumPosting"}]]</script>"#,
        true,
    ),
    (
        r#"<script type="application/json">[{"@type":"Article"},[{"@type":"DiscussionForumPosting"}]]</script>"#,
        false,
    ),
    (
        r#"<script type="APPLICATION/LD+JSON">[{"@type":"Article"},[{"@type":"DiscussionForumPosting"}]]</script>"#,
        false,
    ),
    // URL-prefixed type: not an exact match
    (
        r#"<script type="application/ld+json">{"@type":"https://schema.org/DiscussionForumPosting"}</script>"#,
        false,
    ),
    (
        r#"<script type="application/json">{"@type":"https://schema.org/DiscussionForumPosting"}</script>"#,
        false,
    ),
    (
        r#"<script type="APPLICATION/LD+JSON">{"@type":"https://schema.org/DiscussionForumPosting"}</script>"#,
        false,
    ),
    // marker on an unrelated key
    (
        r#"<script type="application/ld+json">{"unrelated":"DiscussionForumPosting"}</script>"#,
        false,
    ),
    (
        r#"<script type="application/json">{"unrelated":"DiscussionForumPosting"}</script>"#,
        false,
    ),
    (
        r#"<script type="APPLICATION/LD+JSON">{"unrelated":"DiscussionForumPosting"}</script>"#,
        false,
    ),
    (
        r#"<script type="application/ld+json">{"@type":5}</script>"#,
        false,
    ),
    (
        r#"<script type="application/json">{"@type":5}</script>"#,
        false,
    ),
    (
        r#"<script type="APPLICATION/LD+JSON">{"@type":5}</script>"#,
        false,
    ),
    // invalid JSON (trailing comma) still carries the marker
    (
        r#"<script type="application/ld+json">{"@type":"DiscussionForumPosting",}</script>"#,
        true,
    ),
    (
        r#"<script type="application/json">{"@type":"DiscussionForumPosting",}</script>"#,
        false,
    ),
    (
        r#"<script type="APPLICATION/LD+JSON">{"@type":"DiscussionForumPosting",}</script>"#,
        false,
    ),
    // raw newline inside the JSON string
    (
        "<script type=\"application/ld+json\">{\"@type\":\"DiscussionForumPosting\",\"text\":\"raw\nnewline\"}</script>",
        true,
    ),
    (
        "<script type=\"application/json\">{\"@type\":\"DiscussionForumPosting\",\"text\":\"raw\nnewline\"}</script>",
        false,
    ),
    (
        "<script type=\"APPLICATION/LD+JSON\">{\"@type\":\"DiscussionForumPosting\",\"text\":\"raw\nnewline\"}</script>",
        false,
    ),
];

    #[test]
    fn test_salvage_forum_posts_keeps_bare_text_body() {
        // A wild-text body can hold bare text children (promoted when the final
        // div strip removes their wrappers). Salvage appends captured posts via
        // serialize/re-parse; the rebuild must keep those text nodes.
        let mut content_doc = Document::parse(
            "<html><body>Opening post text<div><p>kept paragraph</p></div></body></html>",
        );
        let mut body_text = content_doc
            .iter_text(content_doc.body().unwrap(), " ")
            .trim()
            .to_string();
        let posts_doc = Document::parse(
            "<html><body><p>Reply number 0 genuine post</p><p>Reply number 1 genuine post</p></body></html>",
        );

        salvage_forum_posts(&mut content_doc, &mut body_text, &posts_doc);

        assert!(body_text.contains("Opening post text"), "lost: {body_text}");
        assert!(body_text.contains("kept paragraph"), "lost: {body_text}");
        assert_eq!(body_text.matches("Reply number").count(), 2);
    }

    #[test]
    fn test_forum_thread_page_reference_samples() {
        for (html, expected) in FORUM_SAMPLES {
            let doc = Document::parse(html);
            assert_eq!(forum_thread_page(&doc), *expected, "input: {html}");
        }
    }

    fn simple_article(body: &str) -> String {
        format!("<html><head><title>Test</title></head><body>{body}</body></html>")
    }

    #[test]
    fn test_extract_basic_article() {
        let html = simple_article(
            "<article><p>This is the main content of the article. It has enough text to pass \
             the minimum size threshold for extraction and should appear in the result.</p></article>",
        );
        let result = extract(&html, &Options::default()).unwrap();
        assert!(
            !result.content_text.is_empty(),
            "should extract content text"
        );
        assert!(
            result.content_text.contains("main content"),
            "content should contain article text"
        );
    }

    #[test]
    fn test_extract_strips_scripts_and_nav() {
        let html = simple_article(
            "<nav>Navigation</nav>\
             <script>alert('x')</script>\
             <article><p>Real content here that is long enough to be extracted without \
             any issues from the minimum size requirements.</p></article>",
        );
        let result = extract(&html, &Options::default()).unwrap();
        assert!(
            !result.content_text.contains("Navigation"),
            "nav should be stripped"
        );
        assert!(
            !result.content_text.contains("alert"),
            "script should be stripped"
        );
    }

    #[test]
    fn test_extract_empty_html_returns_error() {
        let result = extract("", &Options::default());
        assert!(result.is_err(), "empty HTML should return an error");
    }

    #[test]
    fn test_extract_exclude_comments() {
        let html = simple_article(
            "<article><p>Article content that is long enough to pass the threshold for \
             minimum extracted size in the extractor pipeline.</p></article>\
             <div id=\"comments\"><p>User comment here</p></div>",
        );
        let opts = Options::default().with_exclude_comments(true);
        let result = extract(&html, &opts).unwrap();
        assert!(
            result.comments_text.is_empty(),
            "comments should be excluded"
        );
    }

    #[test]
    fn test_extract_missing_essential_metadata_title() {
        let html = "<html><body><p>Content that is long enough to pass the minimum size \
                    threshold for the extraction algorithm to work properly.</p></body></html>";
        let opts = Options::default().with_essential_metadata(true);
        let result = extract(html, &opts);
        // No <title> in this document → should fail with MissingMetadata
        assert!(
            matches!(result, Err(TrafilaturaError::MissingMetadata(_))),
            "should fail with missing metadata"
        );
    }

    #[test]
    fn test_extract_favor_recall_option() {
        let html = simple_article(
            "<div class='content'><p>Some content in a div that recall mode should pick up \
             even without a standard article tag structure.</p></div>",
        );
        let opts = Options::default().with_focus(ExtractionFocus::FavorRecall);
        // Should not error; recall mode is more permissive
        let _ = extract(&html, &opts); // result may or may not have content; just check no panic
    }

    #[test]
    fn test_extract_document_returns_metadata() {
        let html = r#"<html>
            <head>
                <title>My Article Title</title>
                <meta name="author" content="Jane Doe" />
            </head>
            <body>
                <article>
                    <p>Article content that is long enough to pass the minimum size threshold
                    for the extraction algorithm to return a valid result without errors.</p>
                </article>
            </body>
        </html>"#;
        let result = extract(html, &Options::default()).unwrap();
        assert!(!result.metadata.title.is_empty(), "should extract title");
    }

    #[test]
    fn test_extract_content_html_populated() {
        let html = simple_article(
            "<article><p>Content text that is long enough to pass all minimum size checks \
             and produce a non-empty HTML output in the result struct.</p></article>",
        );
        let result = extract(&html, &Options::default()).unwrap();
        assert!(
            !result.content_html.is_empty(),
            "content_html should be populated"
        );
    }

    #[test]
    fn test_extract_missing_essential_metadata_url() {
        // Document has title and enough content but no canonical URL → MissingMetadata("url")
        let html = "<html><head><title>My Title</title></head>\
                    <body><article><p>Content that is long enough to pass the minimum \
                    size threshold for the extraction algorithm.</p></article></body></html>";
        let opts = Options::default().with_essential_metadata(true);
        let result = extract(html, &opts);
        assert!(
            matches!(result, Err(TrafilaturaError::MissingMetadata(_))),
            "should fail: no URL in metadata"
        );
    }

    #[test]
    fn test_extract_missing_essential_metadata_date() {
        // Provide title + canonical URL but no date → MissingMetadata("date")
        let html = r#"<html>
            <head>
                <title>My Title</title>
                <link rel="canonical" href="https://example.com/article" />
            </head>
            <body><article><p>Content that is long enough to pass the minimum size
            threshold for the extraction algorithm to work correctly.</p></article></body>
        </html>"#;
        let opts = Options::default().with_essential_metadata(true);
        let result = extract(html, &opts);
        assert!(
            matches!(result, Err(TrafilaturaError::MissingMetadata(_))),
            "should fail: no date in metadata"
        );
    }

    #[test]
    fn test_extract_prune_selector() {
        // The prune_selector should remove matched elements before any extraction.
        let html = simple_article(
            "<article><p>Keep this content that is definitely long enough to \
             pass the minimum size threshold.</p></article>\
             <div class=\"sidebar\"><p>Remove this sidebar text.</p></div>",
        );
        let opts = Options::default().with_prune_selector(".sidebar");
        let result = extract(&html, &opts).unwrap();
        assert!(
            !result.content_text.contains("Remove this sidebar"),
            "pruned element should not appear in output"
        );
        assert!(
            result.content_text.contains("Keep this content"),
            "non-pruned content should survive"
        );
    }

    #[test]
    fn test_extract_max_tree_size_error() {
        // Build a body with many direct children to trigger TreeTooLarge.
        let many_ps: String = (0..200)
            .map(|i| format!("<p>Paragraph number {i} with enough text.</p>"))
            .collect();
        let html = simple_article(&many_ps);
        let opts = Options::default().with_max_tree_size(10);
        let result = extract(&html, &opts);
        assert!(
            matches!(result, Err(TrafilaturaError::TreeTooLarge(_))),
            "should return TreeTooLarge when tree exceeds max_tree_size"
        );
    }

    #[test]
    fn test_extract_target_language_rejects_unknown() {
        // When whatlang cannot detect the language (short/ambiguous text) and a target
        // language is set, Go rejects the content. Rust should do the same.
        // Use a very short snippet that whatlang cannot classify reliably.
        let html = simple_article(
            "<article><p>Short text that is just barely long enough to pass the minimum \
             size threshold but may not be long enough to detect a language reliably.</p></article>",
        );
        let opts = Options::default().with_target_language("zh");
        let result = extract(&html, &opts);
        // Either the language was detected (and mismatched) or empty (and mismatched with "zh").
        // Either way, the result must be an error.
        assert!(
            matches!(result, Err(TrafilaturaError::LanguageMismatch { .. })),
            "should reject content when detected language != target language"
        );
    }

    // ---------------------------------------------------------------------------
    // create_readable_document
    // ---------------------------------------------------------------------------

    #[test]
    fn test_create_readable_document_structure() {
        let result = ExtractResult {
            content_text: "Hello world".into(),
            comments_text: String::new(),
            content_html: "<p>Hello world</p>".into(),
            comments_html: String::new(),
            metadata: crate::result::Metadata {
                title: "My Title".into(),
                author: "Jane Doe".into(),
                url: "https://example.com/article".into(),
                hostname: "example.com".into(),
                description: "A description".into(),
                sitename: "Example".into(),
                date: chrono::NaiveDate::from_ymd_opt(2023, 4, 5),
                categories: vec!["Tech".into(), "News".into()],
                tags: vec!["rust".into(), "web".into()],
                license: "CC BY 4.0".into(),
                ..Default::default()
            },
        };

        let html = create_readable_document(&result);

        // Should have proper HTML shell.
        assert!(
            html.starts_with("<html><head>"),
            "should start with html/head"
        );
        assert!(
            html.ends_with("</body></html>"),
            "should end with /body/html"
        );

        // Meta tags.
        assert!(html.contains(r#"name="title" content="My Title""#));
        assert!(html.contains(r#"name="author" content="Jane Doe""#));
        assert!(html.contains(r#"name="url" content="https://example.com/article""#));
        assert!(html.contains(r#"name="hostname" content="example.com""#));
        assert!(html.contains(r#"name="description" content="A description""#));
        assert!(html.contains(r#"name="sitename" content="Example""#));
        assert!(html.contains(r#"name="date" content="2023-04-05""#));
        assert!(html.contains(r#"name="categories" content="Tech, News""#));
        assert!(html.contains(r#"name="tags" content="rust; web""#));
        assert!(html.contains(r#"name="license" content="CC BY 4.0""#));

        // Content div.
        assert!(html.contains(r#"<div id="content-body">"#));
        assert!(html.contains("<p>Hello world</p>"));

        // No empty comments div when comments_html is empty.
        assert!(!html.contains(r#"id="comments-body""#));
    }

    #[test]
    fn test_create_readable_document_with_comments() {
        let result = ExtractResult {
            content_html: "<p>Article</p>".into(),
            comments_html: "<p>A comment</p>".into(),
            ..Default::default()
        };

        let html = create_readable_document(&result);
        assert!(html.contains(r#"<div id="comments-body">"#));
        assert!(html.contains("<p>A comment</p>"));
    }

    #[test]
    fn test_create_readable_document_no_date() {
        let result = ExtractResult {
            content_html: "<p>Content</p>".into(),
            ..Default::default()
        };

        let html = create_readable_document(&result);
        // Date meta tag should exist but have empty content.
        assert!(html.contains(r#"name="date" content="""#));
    }

    #[test]
    fn test_create_readable_document_escapes_special_chars() {
        let result = ExtractResult {
            content_html: "<p>Content</p>".into(),
            metadata: crate::result::Metadata {
                title: r#"Title with "quotes" & <tags>"#.into(),
                ..Default::default()
            },
            ..Default::default()
        };

        let html = create_readable_document(&result);
        // The title value in the attribute should be escaped.
        assert!(html.contains("&quot;quotes&quot;"));
        assert!(html.contains("&amp;"));
        assert!(html.contains("&lt;tags&gt;"));
    }

    // ---------------------------------------------------------------------------
    // create_markdown_document
    // ---------------------------------------------------------------------------

    #[cfg(feature = "markdown")]
    #[test]
    fn test_create_markdown_document_front_matter() {
        let result = ExtractResult {
            content_text: "Hello world".into(),
            content_html: "<p>Hello world</p>".into(),
            comments_html: String::new(),
            metadata: crate::result::Metadata {
                title: "My Title".into(),
                author: "Jane Doe".into(),
                url: "https://example.com/article".into(),
                hostname: "example.com".into(),
                description: "A description".into(),
                sitename: "Example".into(),
                date: chrono::NaiveDate::from_ymd_opt(2023, 4, 5),
                categories: vec!["Tech".into(), "News".into()],
                tags: vec!["rust".into(), "web".into()],
                license: "CC BY 4.0".into(),
                ..Default::default()
            },
            ..Default::default()
        };

        let md = create_markdown_document(&result);

        // Front matter delimiters.
        assert!(md.starts_with("---\n"), "should start with front matter");
        assert!(md.contains("\n---\n\n"), "should close front matter");

        // Metadata fields — all values are always double-quoted.
        assert!(md.contains("title: \"My Title\"\n"));
        assert!(md.contains("author: \"Jane Doe\"\n"));
        assert!(md.contains("url: \"https://example.com/article\"\n"));
        assert!(md.contains("hostname: \"example.com\"\n"));
        assert!(md.contains("description: \"A description\"\n"));
        assert!(md.contains("sitename: \"Example\"\n"));
        assert!(md.contains("date: \"2023-04-05\"\n"));
        assert!(md.contains("categories:\n  - \"Tech\"\n  - \"News\"\n"));
        assert!(md.contains("tags:\n  - \"rust\"\n  - \"web\"\n"));

        // Content.
        assert!(md.contains("Hello world"));
    }

    #[cfg(feature = "markdown")]
    #[test]
    fn test_create_markdown_document_omits_empty_fields() {
        let result = ExtractResult {
            content_html: "<p>Content</p>".into(),
            metadata: crate::result::Metadata {
                title: "Only Title".into(),
                ..Default::default()
            },
            ..Default::default()
        };

        let md = create_markdown_document(&result);
        assert!(md.contains("title: \"Only Title\"\n"));
        assert!(!md.contains("author:"));
        assert!(!md.contains("url:"));
        assert!(!md.contains("date:"));
        assert!(!md.contains("categories:"));
        assert!(!md.contains("tags:"));
    }

    #[cfg(feature = "markdown")]
    #[test]
    fn test_create_markdown_document_with_comments() {
        let result = ExtractResult {
            content_html: "<p>Article</p>".into(),
            comments_html: "<p>A comment</p>".into(),
            ..Default::default()
        };

        let md = create_markdown_document(&result);
        assert!(md.contains("Article"));
        assert!(md.contains("\n## Comments\n\n"));
        assert!(md.contains("A comment"));
    }

    #[cfg(feature = "markdown")]
    #[test]
    fn test_create_markdown_document_escapes_yaml_special_chars() {
        let result = ExtractResult {
            content_html: "<p>Content</p>".into(),
            metadata: crate::result::Metadata {
                title: "Title: with colon".into(),
                ..Default::default()
            },
            ..Default::default()
        };

        let md = create_markdown_document(&result);
        assert!(
            md.contains(r#"title: "Title: with colon""#),
            "colons should be quoted"
        );
    }

    #[cfg(feature = "markdown")]
    #[test]
    fn test_yaml_escape_backslashes_and_quotes() {
        let result = ExtractResult {
            content_html: "<p>Content</p>".into(),
            metadata: crate::result::Metadata {
                title: r#"C:\Users & "quotes""#.into(),
                ..Default::default()
            },
            ..Default::default()
        };

        let md = create_markdown_document(&result);
        assert!(
            md.contains(r#"title: "C:\\Users & \"quotes\"""#),
            "backslashes and quotes should be escaped, got: {}",
            md
        );
    }

    #[cfg(feature = "markdown")]
    #[test]
    fn test_yaml_escape_newlines() {
        let result = ExtractResult {
            content_html: "<p>Content</p>".into(),
            metadata: crate::result::Metadata {
                title: "Line one\nLine two".into(),
                ..Default::default()
            },
            ..Default::default()
        };

        let md = create_markdown_document(&result);
        assert!(
            md.contains(r#"title: "Line one\nLine two""#),
            "newlines should be escaped"
        );
    }

    #[cfg(feature = "markdown")]
    #[test]
    fn test_yaml_escape_categories_and_tags() {
        let result = ExtractResult {
            content_html: "<p>Content</p>".into(),
            metadata: crate::result::Metadata {
                categories: vec!["Science: Physics".into(), "*Breaking*".into()],
                tags: vec!["C:\\path".into()],
                ..Default::default()
            },
            ..Default::default()
        };

        let md = create_markdown_document(&result);
        assert!(md.contains(r#"  - "Science: Physics""#));
        assert!(md.contains(r#"  - "*Breaking*""#));
        assert!(md.contains(r#"  - "C:\\path""#));
    }
}
