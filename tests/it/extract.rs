//! `crawl --extract RULES`: fields by CSS selector (`::text`, `::attr`), regular expression
//! and JSON-LD path, out of a small loopback site whose markup is known, as JSON lines and
//! SQLite rows (`--extract-db`); a recrawl updating rows into their history table; a bad
//! rules file; and pages no rule set matches costing no tree parse.

use crate::util::{crawl_dir, read_summary};
use rusqlite::Connection;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use testweb::{HostSpec, Response, TestWeb};

const RULES: &str = r#"# the site's API pages
[functions]
url = /docs/
title = h1::text
name[] = dt.sig-object::attr(id)
signature[] = dt.sig-object::text
version = re:Python (\d+\.\d+)

[posts]
url = ^http://[^/]+/blog/
headline = h1::text
published = jsonld:Article.datePublished
authors[] = jsonld:Article.author.name
"#;

/// An API page: its title, and a `dt.sig-object` per (id, signature).
fn api_page(title: &str, functions: &[(&str, &str)]) -> String {
    let dts: String = functions
        .iter()
        .map(|(id, sig)| {
            format!(
                "<dt class=\"sig sig-object py\" id=\"{id}\"><span>{sig}</span>\
                 <a class=\"headerlink\" href=\"#{id}\"></a></dt><dd>About it.</dd>\n"
            )
        })
        .collect();
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body>\n<h1>{title}</h1>\n\
         <p>For Python 3.11.</p>\n<dl>\n{dts}</dl>\n<dt class=\"other\" id=\"not-a-sig\">x</dt>\
         </body></html>"
    )
}

/// The site: an index linking to two API pages, an API page with no functions and no version,
/// a blog post with JSON-LD, and two pages no rule set matches. `changed` flips the second API
/// page's functions (and drops one), as a site changes between a crawl and its recrawl.
fn site(changed: Arc<AtomicBool>) -> TestWeb {
    TestWeb::start(vec![HostSpec::new(move |req| {
        let html = match req.target.as_str() {
            "/" => "<html><body><a href=/docs/a.html>a</a> <a href=/docs/b.html>b</a> \
                    <a href=/docs/empty.html>e</a> <a href=/blog/post.html>p</a> \
                    <a href=/other.html>o</a> <a href=/notes.txt>n</a></body></html>"
                .to_owned(),
            "/docs/a.html" => api_page(
                "Built-in functions",
                &[
                    ("abs", "abs(x)"),
                    ("len", "len(s)"),
                    ("max", "max(iterable, *, key=None)"),
                ],
            ),
            "/docs/b.html" if changed.load(Ordering::Relaxed) => {
                api_page("os.path", &[("os.path.join", "os.path.join(path, *paths)")])
            }
            "/docs/b.html" => api_page(
                "os.path",
                &[
                    ("os.path.join", "os.path.join(path, *paths)"),
                    ("os.path.split", "os.path.split(path)"),
                ],
            ),
            "/docs/empty.html" => "<html><body><p>Nothing here.</p></body></html>".to_owned(),
            "/blog/post.html" => r#"<html><head><script type="application/ld+json">
                {"@context":"https://schema.org","@type":"Article","datePublished":"2024-05-01",
                 "author":[{"@type":"Person","name":"Ada"},{"@type":"Person","name":"Grace"}]}
                </script></head><body><h1>  Release   notes </h1></body></html>"#
                .to_owned(),
            "/other.html" => "<html><body><h1>Not docs</h1></body></html>".to_owned(),
            "/notes.txt" => return Response::text(200, "Python 3.12 notes"),
            _ => return Response::not_found(),
        };
        Response::html(html)
    })])
    .unwrap()
}

/// Runs a crawl of `web` in `dir` with `args` after the seeds and --out, which must succeed.
fn run(dir: &Path, web: &TestWeb, args: &[&str]) {
    std::fs::write(dir.join("seeds.txt"), web.url(0, "/")).unwrap();
    let (code, _, stderr) = crawl_dir(dir, args, &[], None);
    assert_eq!(code, Some(0), "{stderr}");
}

/// The objects of a JSON lines file, by (rule, URL path).
fn objects(path: &Path, origin: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut objects: Vec<Value> = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            let url = v["url"]
                .as_str()
                .unwrap()
                .strip_prefix(origin)
                .unwrap()
                .to_owned();
            v["url"] = url.into();
            let fetched = v["fetched"].as_str().unwrap();
            assert!(fetched.len() == 20 && fetched.ends_with('Z'), "{fetched}");
            v["fetched"] = "T".into();
            v
        })
        .collect();
    objects.sort_by_key(|v| (v["rule"].to_string(), v["url"].to_string()));
    objects
}

/// A table's rows, ordered by URL: every column but `fetched` (and `replaced`), as text.
fn rows(db: &Path, sql: &str) -> Vec<Vec<Option<String>>> {
    let conn = Connection::open(db).unwrap();
    let mut statement = conn.prepare(sql).unwrap();
    let columns = statement.column_count();
    statement
        .query_map([], |row| (0..columns).map(|i| row.get(i)).collect())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn text(s: &str) -> Option<String> {
    Some(s.to_owned())
}

#[test]
fn fields_become_json_lines_and_rows_and_a_recrawl_keeps_history() {
    let changed = Arc::new(AtomicBool::new(false));
    let web = site(Arc::clone(&changed));
    let origin = web.url(0, "");
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("site.rules");
    std::fs::write(&rules, RULES).unwrap();
    let db = dir.path().join("fields.db");
    let (rules, db_arg) = (rules.to_str().unwrap(), db.to_str().unwrap());
    let args = [
        "--extract",
        rules,
        "--extract-db",
        db_arg,
        "--no-sitemaps",
        "-j",
        "2",
    ];
    run(dir.path(), &web, &args);

    // One object per page and rule set with a field found, counted from the site's markup:
    // a.html's three sig-objects (not the `dt.other`), b.html's two, the post's JSON-LD.
    let out = dir.path().join("out");
    let expected = json!([
        {"url": "/docs/a.html", "fetched": "T", "rule": "functions",
         "title": "Built-in functions", "name": ["abs", "len", "max"],
         "signature": ["abs(x)", "len(s)", "max(iterable, *, key=None)"], "version": "3.11"},
        {"url": "/docs/b.html", "fetched": "T", "rule": "functions", "title": "os.path",
         "name": ["os.path.join", "os.path.split"],
         "signature": ["os.path.join(path, *paths)", "os.path.split(path)"], "version": "3.11"},
        {"url": "/blog/post.html", "fetched": "T", "rule": "posts", "headline": "Release notes",
         "published": "2024-05-01", "authors": ["Ada", "Grace"]},
    ]);
    assert_eq!(
        Value::Array(objects(&out.join("extract.jsonl"), &origin)),
        expected
    );
    let url = |path: &str| text(&format!("{origin}{path}"));
    let functions = "SELECT url, title, name, signature, version FROM functions ORDER BY url";
    let first = vec![
        vec![
            url("/docs/a.html"),
            text("Built-in functions"),
            text(r#"["abs","len","max"]"#),
            text(r#"["abs(x)","len(s)","max(iterable, *, key=None)"]"#),
            text("3.11"),
        ],
        vec![
            url("/docs/b.html"),
            text("os.path"),
            text(r#"["os.path.join","os.path.split"]"#),
            text(r#"["os.path.join(path, *paths)","os.path.split(path)"]"#),
            text("3.11"),
        ],
    ];
    assert_eq!(rows(&db, functions), first);
    let posts = "SELECT url, headline, published, authors FROM posts";
    let post = vec![vec![
        url("/blog/post.html"),
        text("Release notes"),
        text("2024-05-01"),
        text(r#"["Ada","Grace"]"#),
    ]];
    assert_eq!(rows(&db, posts), post);
    // Matched by a rule set: a.html, b.html, empty.html (no field found), the post; not the
    // index, other.html nor notes.txt, which are neither decoded nor parsed.
    let summary = read_summary(&out);
    let counts = json!({"pages": 4, "unmatched": 3, "parsed": 4, "objects": 3, "empty": 1,
                        "replaced": 0});
    assert_eq!(summary["extract"], counts, "{summary}");

    // The recrawl: b.html lost a function. Its row is updated and the old one kept; the
    // unchanged pages' rows are the same rows (no history).
    changed.store(true, Ordering::Relaxed);
    run(dir.path(), &web, &args);
    let mut second = first.clone();
    second[1][2] = text(r#"["os.path.join"]"#);
    second[1][3] = text(r#"["os.path.join(path, *paths)"]"#);
    assert_eq!(rows(&db, functions), second);
    assert_eq!(rows(&db, posts), post);
    let history = "SELECT url, title, name, signature, version FROM functions_history";
    assert_eq!(rows(&db, history), vec![first[1].clone()]);
    let kept_at = "SELECT h.replaced = f.fetched FROM functions_history h JOIN functions f \
                   USING (url)";
    let conn = Connection::open(&db).unwrap();
    let same: bool = conn.query_row(kept_at, [], |r| r.get(0)).unwrap();
    assert!(
        same,
        "the history row's `replaced` is the new row's fetch time"
    );
    assert_eq!(
        rows(&db, "SELECT * FROM posts_history"),
        Vec::<Vec<_>>::new()
    );
    let summary = read_summary(&out);
    assert_eq!(summary["extract"]["replaced"], 1, "{summary}");
    assert_eq!(summary["extract"]["objects"], 3, "{summary}");
    // The lines file is appended to: the first crawl's objects, then the recrawl's.
    let lines = std::fs::read_to_string(out.join("extract.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 6);
}

#[test]
fn a_bad_rules_file_exits_2_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seeds.txt"), "http://127.0.0.1:9/\n").unwrap();
    let cases = [
        (
            "[a]\nurl = /docs/\n# fine\ntitle = h1::text\nsig[] = dt.sig-object[::text\n",
            5,
            "bad CSS selector",
        ),
        (
            "[a]\nurl = /docs/(\ntitle = h1::text\n",
            2,
            "bad url regular expression",
        ),
        (
            "[a]\nurl = .\nversion = re:Python (\\d+\n",
            3,
            "bad regular expression",
        ),
        ("title = h1::text\n", 1, "before any rule set"),
    ];
    for (text, line, what) in cases {
        let rules = dir.path().join("bad.rules");
        std::fs::write(&rules, text).unwrap();
        let (code, stdout, stderr) = crawl_dir(
            dir.path(),
            &["--extract", rules.to_str().unwrap()],
            &[],
            None,
        );
        assert_eq!(code, Some(2), "{stderr}");
        let at = format!("{}:{line}: ", rules.display());
        assert!(
            stderr.contains(&at) && stderr.contains(what),
            "{text:?}: {stderr}"
        );
        assert!(stdout.is_empty(), "nothing was crawled: {stdout}");
    }
    // Good rules, but their lines would share stdout with the URL log.
    let rules = dir.path().join("good.rules");
    std::fs::write(&rules, RULES).unwrap();
    let args = ["--extract", rules.to_str().unwrap(), "--extract-out", "-"];
    let (code, _, stderr) = crawl_dir(dir.path(), &args, &[], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("where the URL log goes"), "{stderr}");
}

#[test]
fn crawl_extract_reads_the_same_fields_back_from_the_warc_files() {
    let web = site(Arc::new(AtomicBool::new(false)));
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("site.rules");
    std::fs::write(&rules, RULES).unwrap();
    let rules = rules.to_str().unwrap();
    let crawled_db = dir.path().join("crawled.db");
    let db_arg = crawled_db.to_str().unwrap();
    run(
        dir.path(),
        &web,
        &["--extract", rules, "--extract-db", db_arg],
    );
    let out = dir.path().join("out");
    let crawled = std::fs::read_to_string(out.join("extract.jsonl")).unwrap();

    let read_db = dir.path().join("read.db");
    let mut args = vec!["extract".to_owned()];
    args.extend(
        crate::util::warc_files(&out, ".warc.zst")
            .iter()
            .map(|p| p.display().to_string()),
    );
    args.extend(
        [
            "--extract",
            rules,
            "--extract-db",
            read_db.to_str().unwrap(),
        ]
        .map(String::from),
    );
    let (code, stdout, stderr) = crate::util::run_binary(&args, None, dir.path());
    assert_eq!(code, 0, "{stderr}");
    // The same objects, in the order archived (the crawl's are in the order written), with
    // the same fetch times: a record's WARC-Date is the crawl's `fetched`.
    let sorted = |text: &str| {
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        lines.sort();
        lines
    };
    assert_eq!(sorted(&stdout), sorted(&crawled));
    assert_eq!(sorted(&crawled).len(), 3);
    for table in ["functions", "posts"] {
        let all = format!("SELECT * FROM {table} ORDER BY url");
        assert_eq!(rows(&read_db, &all), rows(&crawled_db, &all), "{table}");
    }
    assert!(stderr.contains("3 objects written, 1 empty"), "{stderr}");
}
