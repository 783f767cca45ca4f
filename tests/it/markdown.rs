//! `--markdown`: a page's main content as Markdown, in the JSON-lines URL log and under
//! `--save markdown`, checked as written and as an independent renderer (pandoc) reads it back:
//! the same headings (level and text) and the same absolute links and images as the page's own
//! main content, read from the fixture with html5ever and the URL standard's join, not with the
//! converter. `crawl extract` reads the same text and Markdown back out of WARC files, ours and
//! GNU wget's.

use std::collections::BTreeMap;
use std::process::Command;

use crate::util::crawl_unparsed;
use scraper::{ElementRef, Html, Selector};
use serde_json::Value;
use testweb::{HostSpec, Response, TestWeb};
use url::Url;

/// The main content, between navigation and a footer: headings of three levels (one with code
/// and characters Markdown reads as emphasis), nested lists, code in Sphinx's and rustdoc's
/// markup, a table, a blockquote, relative links and images under a `<base href>`.
const MAIN: &str = r#"<main><article>
    <h1>Reading the manual</h1>
    <p>The manual has <em>three</em> parts; read <a href="intro.html">the introduction</a>
    first, then <a href="../api/index.html#top">the API</a>, or <a href="/faq?q=a b">the
    questions</a> and <a href="https://other.example/x_(y)">another site</a>.
    Stars * and [brackets] stay text here, long enough for the extractor to keep.</p>
    <h2>Installing</h2>
    <ul><li>From source<ul><li>clone the <a href="repo/">repository</a></li>
    <li>build it</li></ul></li><li>From a package</li></ul>
    <div class="highlight-python3 notranslate"><div class="highlight"><pre><span class="k">import</span> crawl
crawl.run(depth=2)</pre></div></div>
    <p>The same call from Rust, which the manual shows beside the Python one above:</p>
    <pre class="rust"><code>fn main() {
    crawl::run(2);
}</code></pre>
    <h3>The <code>run</code> *options*</h3>
    <table><thead><tr><th>Option</th><th>Meaning</th></tr></thead>
    <tbody><tr><td><code>depth</code></td><td>how far | to go</td></tr>
    <tr><td><code>delay</code></td><td>how long to wait</td></tr></tbody></table>
    <blockquote><p>Crawl politely: one request per host at a time, as the manual says.</p></blockquote>
    <p>The architecture: <img src="img/arch.png" alt="the pipeline"> from seeds to archive,
    drawn by the authors of the manual for its readers.</p>
    </article></main>"#;

fn page() -> String {
    format!(
        "<!doctype html><html lang=en><head><title>Manual</title><base href=\"/docs/v1/\">\
         </head><body><nav><a href=/>Home</a> <a href=/blog>Blog</a></nav>{MAIN}\
         <footer><p>Copyright the authors. <a href=/legal>Legal</a></p></footer></body></html>"
    )
}

/// Headings (level, text with whitespace collapsed), links and image sources (absolute
/// against `base`) of `html`'s elements under `root`, in document order.
type Outline = (Vec<(u8, String)>, Vec<String>, Vec<String>);

fn outline(html: &str, root: &str, base: &Url) -> Outline {
    let doc = Html::parse_document(html);
    let select = |s: &str| Selector::parse(&format!("{root} {s}")).unwrap();
    let text = |e: ElementRef| {
        e.text()
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let headings = doc
        .select(&select("h1, h2, h3, h4, h5, h6"))
        .map(|h| (h.value().name().as_bytes()[1] - b'0', text(h)))
        .collect();
    let absolute = |e: ElementRef, attr: &str| {
        base.join(e.value().attr(attr).unwrap())
            .unwrap()
            .to_string()
    };
    let links = doc
        .select(&select("a[href]"))
        .map(|a| absolute(a, "href"))
        .collect();
    let images = doc
        .select(&select("img[src]"))
        .map(|i| absolute(i, "src"))
        .collect();
    (headings, links, images)
}

/// `markdown` rendered to HTML by pandoc, reading GitHub-flavoured Markdown.
fn pandoc(markdown: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("page.md");
    std::fs::write(&input, markdown).unwrap();
    let out = Command::new("pandoc")
        .args(["--from", "gfm", "--to", "html", "--no-highlight"])
        .arg(&input)
        .output()
        .expect("pandoc runs (Debian's pandoc package; .ci/run installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Crawls `page`, served at `path`, with `--markdown --save markdown --log-format jsonl`:
/// the page's URL, its URL-log line (which must have a `markdown` key) and the run.
fn crawl_markdown(page: String, path: &'static str) -> (String, Value, crate::util::Outcome) {
    let web = TestWeb::start(vec![HostSpec::new(move |req| {
        if req.target == path {
            Response::html(page.clone())
        } else {
            Response::not_found()
        }
    })])
    .unwrap();
    let url = web.url(0, path);
    let args = [
        "--delay-factor",
        "0",
        "--max-depth",
        "0",
        "--markdown",
        "--save",
        "markdown",
        "--log-format",
        "jsonl",
    ];
    let run = crawl_unparsed(&format!("{url}\n"), &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let line: Value = (run.stdout.lines())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["url"] == url.as_str())
        .unwrap_or_else(|| panic!("{url} not logged: {}", run.stdout));
    assert!(line["markdown"].is_string(), "no markdown key: {line}");
    (url, line, run)
}

#[test]
fn markdown_of_the_main_content_reads_back_with_its_headings_links_and_images() {
    let (url, line, run) = crawl_markdown(page(), "/guide/manual.html");
    let markdown = line["markdown"].as_str().unwrap().to_owned();
    assert_eq!(line["title"], "Manual");

    // The same Markdown under DIR/markdown/, named as --save files names the page, plus .md.
    let port = Url::parse(&url).unwrap().port().unwrap();
    let saved = run
        .out
        .join(format!("markdown/127.0.0.1_{port}/guide@/manual.html.md"));
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), markdown);

    // As written: each construct, links and images absolute against the <base href>.
    let origin = url.trim_end_matches("/guide/manual.html");
    for part in [
        "# Reading the manual\n\n".to_string(),
        "\n\n## Installing\n\n".into(),
        "\n\n### The `run` \\*options\\*\n\n".into(),
        "The manual has *three* parts; read [the introduction]".into(),
        format!("({origin}/docs/v1/intro.html)"),
        format!("({origin}/docs/api/index.html#top)"),
        format!("({origin}/faq?q=a%20b)"),
        "(https://other.example/x_\\(y\\))".into(),
        "Stars \\* and \\[brackets\\] stay text".into(),
        "- From source\n  - clone the [repository]".into(),
        "\n  - build it\n- From a package".into(),
        "```python3\nimport crawl\ncrawl.run(depth=2)\n```".into(),
        "```rust\nfn main() {\n    crawl::run(2);\n}\n```".into(),
        "| Option | Meaning |\n| --- | --- |\n| `depth` | how far \\| to go |".into(),
        "> Crawl politely".into(),
        format!("![the pipeline]({origin}/docs/v1/img/arch.png)"),
    ] {
        assert!(markdown.contains(&part), "{part:?} not in:\n{markdown}");
    }
    for boilerplate in ["Home", "Blog", "Copyright", "Legal"] {
        assert!(
            !markdown.contains(boilerplate),
            "{boilerplate:?} in:\n{markdown}"
        );
    }

    // As read back: pandoc's HTML has the main content's headings, links and images.
    let base = Url::parse(&url).unwrap().join("/docs/v1/").unwrap();
    let expected = outline(&page(), "main", &base);
    let rendered = pandoc(&markdown);
    let got = outline(
        &rendered,
        "body",
        &Url::parse("http://unused.invalid/").unwrap(),
    );
    assert_eq!(got.0, expected.0, "headings, in:\n{rendered}");
    assert_eq!(got.1, expected.1, "links, in:\n{rendered}");
    assert_eq!(got.2, expected.2, "images, in:\n{rendered}");
    assert_eq!(expected.0.len(), 3);
    assert_eq!(expected.1.len(), 5);
    // The code blocks' languages and the table survive the round trip.
    for part in [
        "class=\"python3\"",
        "class=\"rust\"",
        "<th>Option</th>",
        "<td>how far | to go</td>",
    ] {
        assert!(rendered.contains(part), "{part:?} not in:\n{rendered}");
    }
}

/// The keys of a page's line compared between the crawl's log and `crawl extract`.
const KEYS: [&str; 5] = ["title", "text", "markdown", "lang", "lang_detected"];

/// `url -> values of KEYS` (`null` where absent) of the JSON lines that have a `text` key.
fn contents(lines: &str) -> BTreeMap<String, Vec<Value>> {
    (lines.lines())
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .filter(|l| l.get("text").is_some())
        .map(|l| {
            let url = l["url"].as_str().unwrap().to_owned();
            (url, KEYS.iter().map(|k| l[*k].clone()).collect())
        })
        .collect()
}

/// A page in German without a `lang` attribute: its language is detected.
const GERMAN: &str = "<html><head><title>Anleitung</title></head><body><article><p>Der \
    Crawler fragt jeden Rechner nach einer Seite zur gleichen Zeit und wartet danach zehnmal \
    so lange, wie der Rechner für seine Antwort gebraucht hat, bevor er wieder fragt.</p>\
    </article></body></html>";

/// `crawl extract` gives the text, Markdown and metadata the crawl gave, out of the crawl's own
/// WARC files and out of GNU wget's (`--warc-file`) of the same pages.
#[test]
fn crawl_extract_reads_the_same_text_and_markdown_from_our_warc_files_and_wgets() {
    let web = TestWeb::start(vec![HostSpec::new(|req| match req.target.as_str() {
        "/guide/manual.html" => Response::html(page()),
        "/notes.txt" => Response::text(200, b"first note\r\nsecond note\r\n".to_vec()),
        "/de.html" => Response::html(GERMAN),
        _ => Response::not_found(),
    })])
    .unwrap();
    let urls = [
        web.url(0, "/de.html"),
        web.url(0, "/guide/manual.html"),
        web.url(0, "/notes.txt"),
    ];
    let args = [
        "--delay-factor",
        "0",
        "--max-depth",
        "0",
        "--text",
        "--markdown",
        "--log-format",
        "jsonl",
    ];
    let run = crawl_unparsed(&(urls.join("\n") + "\n"), &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let crawled = contents(&run.stdout);
    assert_eq!(
        crawled.keys().collect::<Vec<_>>(),
        urls.iter().collect::<Vec<_>>()
    );
    let manual = &crawled[&urls[1]];
    assert_eq!(
        (manual[0].as_str(), manual[2].is_string()),
        (Some("Manual"), true)
    );
    assert!(
        manual[1].as_str().unwrap().contains("Crawl politely"),
        "{manual:?}"
    );
    // The page's own lang attribute, or (only without one) the language detected.
    assert_eq!((manual[3].as_str(), &manual[4]), (Some("en"), &Value::Null));
    let german = &crawled[&urls[0]];
    assert_eq!(
        (&german[3], german[4].as_str()),
        (&Value::Null, Some("deu"))
    );
    let notes = &crawled[&urls[2]];
    assert_eq!(notes[1], "first note\nsecond note\n");
    assert!(notes[2].is_null(), "no Markdown of plain text");

    let dir = tempfile::tempdir().unwrap();
    let extract = |warcs: Vec<String>, extra: &[&str]| {
        let mut args = vec!["extract".to_owned()];
        args.extend(warcs);
        args.extend(extra.iter().map(|s| s.to_string()));
        crate::util::run_binary(&args, None, dir.path())
    };
    let ours: Vec<String> = std::fs::read_dir(run.out.join("warc"))
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".warc.zst"))
        .collect();
    let (code, stdout, stderr) = extract(ours.clone(), &["--text", "--markdown"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(contents(&stdout), crawled, "{stdout}");
    let line: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert!(line["date"].as_str().unwrap().ends_with('Z'), "{line}");

    // GNU wget's WARC file of the same two pages (one gzip member per record).
    let wget = Command::new("wget")
        .args(["-q", "--tries=1", "--timeout=10", "--warc-file=wget"])
        .args(["-P", "files"])
        .args(&urls)
        .current_dir(dir.path())
        .status()
        .expect("wget runs (Debian's wget package; .ci/run installs it)");
    assert!(wget.success());
    let out = dir.path().join("pages.jsonl");
    let wget_warc = vec![
        dir.path()
            .join("wget.warc.gz")
            .to_string_lossy()
            .into_owned(),
    ];
    let content_out = [
        "--text",
        "--markdown",
        "--content-out",
        out.to_str().unwrap(),
    ];
    let (code, stdout, stderr) = extract(wget_warc, &content_out);
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    assert_eq!(contents(&std::fs::read_to_string(&out).unwrap()), crawled);

    // Nothing asked for, or two kinds of lines on one stdout: exit status 2, saying so.
    let (code, _, stderr) = extract(ours.clone(), &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--text or --markdown"), "{stderr}");
    let rules = dir.path().join("rules");
    std::fs::write(&rules, "[pages]\nurl = .\ntitle = title::text\n").unwrap();
    let (code, _, stderr) = extract(ours, &["--text", "--extract", rules.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--content-out FILE"), "{stderr}");
}

/// rustdoc's headings, as pandoc reads them back: the same levels and text as the page's.
/// - rustdoc breaks a heading before each `where` bound with `<br>`; a heading is one line of
///   Markdown, so the break is a space (a hard break, `\` before the line's end, would be a
///   literal backslash in an ATX heading);
/// - a method's heading is in a `<summary>`, which the extractor keeps as `<b>` around the
///   method's `<section>`: the heading stays a heading, not bold text in a paragraph.
#[test]
fn rustdoc_headings_read_back_with_their_levels_and_text() {
    const MAIN: &str = "<main><h1>Struct RangeTo</h1>\
        <p>A range only bounded exclusively above, which the documentation describes at length \
        for its readers, with the implementations below and what each of them needs.</p>\
        <h3 class=\"code-header\">impl&lt;Idx&gt; RangeTo&lt;Idx&gt; <span class=\"where \
        fmt-newline\">where<br>&nbsp;&nbsp;&nbsp;&nbsp;Idx: PartialOrd&lt;Idx&gt;,</span></h3>\
        <details class=\"rustdoc-toggle method-toggle\" open><summary><section \
        id=\"method.contains\" class=\"method\"><a class=\"srclink\" href=\"../src.html\">\
        source</a><h4 class=\"code-header\">pub fn <a href=\"#method.contains\">contains</a>\
        &lt;U&gt;(&amp;self, item: &amp;U) -&gt; bool</h4></section></summary>\
        <div class=\"docblock\"><p>Returns true if the item is contained in the range, as the \
        methods of this block document, one paragraph each, long enough for the extractor to \
        keep.</p></div></details>\
        <p>Line one<br>line two of a paragraph, where a break stays a hard break.</p></main>";
    let page = format!(
        "<!doctype html><html lang=en><head><title>RangeTo</title></head><body>\
         <nav><a href=/>Home</a></nav>{MAIN}<footer>Copyright</footer></body></html>"
    );
    let (url, line, _run) = crawl_markdown(page, "/std/ops/struct.RangeTo.html");
    let markdown = line["markdown"].as_str().unwrap();
    assert!(
        markdown.contains("### impl\\<Idx\\> RangeTo\\<Idx\\> where Idx: PartialOrd\\<Idx\\>,\n"),
        "{markdown}"
    );
    assert!(markdown.contains("Line one\\\nline two"), "{markdown}");
    assert!(
        markdown.contains("\n\n#### pub fn [contains]("),
        "{markdown}"
    );
    let base = Url::parse(&url).unwrap();
    let expected = outline(MAIN, "main", &base);
    let got = outline(&pandoc(markdown), "body", &base);
    // The extractor writes a `<summary>` twice (once as `<b>`, once as its own content), so
    // the method's heading comes twice in a row: compared once.
    let mut headings = got.0;
    headings.dedup();
    assert_eq!(headings, expected.0, "headings of:\n{markdown}");
    assert_eq!(expected.0.len(), 3);
}
