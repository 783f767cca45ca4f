//! `--extract RULES`: the rules file of named fields per URL pattern, and a page's fields.
//!
//! A rules file is a list of rule sets (docs/extract.md has the whole format):
//!
//! ```text
//! # a whole-line comment
//! [functions]                        a rule set: its name is the SQLite table's
//! url = ^https?://[^/]+/library/     a regular expression searched in the page's URL
//! name[] = dt[id]::attr(id)          `[]`: a list of every match; without it, the first
//! signature[] = dt.sig-object::text
//! title = h1::text
//! published = jsonld:Article.datePublished
//! version = re:Python (\d+\.\d+)
//! ```
//!
//! Invariants:
//! - Every selector, regular expression and name is checked when the file is read: a bad
//!   line is an error naming `FILE:LINE` and what is wrong, before any page is fetched.
//! - A page's HTML tree is parsed at most once, and only when a rule set whose URL pattern
//!   matches the page has a CSS or JSON-LD field; a page no rule set matches costs a few regex
//!   searches of its URL and nothing else.
//! - Values are text: whitespace runs collapse to one space and the ends are trimmed; an empty
//!   value is no value (a single field is then `None`, a list leaves it out).

use anyhow::{Result, anyhow, bail};
use regex::Regex;
use scraper::{ElementRef, Html, Selector};
use std::path::Path;

/// Names a rule set's row cannot take as a field: the keys every object has.
const RESERVED: &[&str] = &["url", "fetched", "rule"];

/// A rules file, read and checked.
#[derive(Debug)]
pub struct Rules {
    pub sets: Vec<RuleSet>,
}

/// A named rule set: the pages it applies to and the fields it takes from them.
#[derive(Debug)]
pub struct RuleSet {
    /// An identifier: the JSON objects' `rule`, the SQLite table's name.
    pub name: String,
    /// Searched in the page's URL (unanchored: `^` anchors it).
    url: Regex,
    pub fields: Vec<Field>,
    /// Some field reads the HTML tree (CSS or JSON-LD), so a page it matches is parsed.
    needs_tree: bool,
}

/// One field of a rule set.
#[derive(Debug)]
pub struct Field {
    pub name: String,
    /// `name[]`: every match, in document order; otherwise the first.
    pub many: bool,
    how: How,
}

#[derive(Debug)]
enum How {
    /// Elements a CSS selector matches, and what of each.
    Css(Selector, Take),
    /// Matches of a regular expression in the page's text (the first capture group, or the
    /// whole match when it has none).
    Regex(Regex),
    /// A path into the page's JSON-LD: an optional `@type` then property names.
    JsonLd(Vec<String>),
}

/// What a CSS field takes of each element it matches.
#[derive(Debug)]
enum Take {
    /// No pseudo-element: the element's outer HTML (as Scrapy's `css("h1").get()`).
    Html,
    /// `::text`: the element's text, its descendants' included.
    Text,
    /// `::attr(name)`: the attribute's value; elements without it give nothing.
    Attr(String),
}

/// A field's value on one page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    One(Option<String>),
    Many(Vec<String>),
}

impl Value {
    /// Nothing found.
    pub fn is_empty(&self) -> bool {
        match self {
            Value::One(one) => one.is_none(),
            Value::Many(many) => many.is_empty(),
        }
    }

    /// As JSON: a string or `null`, or an array of strings.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::One(one) => one.clone().map_or(serde_json::Value::Null, Into::into),
            Value::Many(many) => many.clone().into(),
        }
    }
}

/// One rule set's fields on one page, in the set's order.
pub struct Extracted<'r> {
    pub set: &'r RuleSet,
    pub values: Vec<Value>,
}

impl Extracted<'_> {
    /// No field found anything.
    pub fn is_empty(&self) -> bool {
        self.values.iter().all(Value::is_empty)
    }
}

/// A page's fields: one `Extracted` per rule set whose URL pattern matched, and whether the
/// page's HTML tree was parsed for them.
pub struct PageFields<'r> {
    pub sets: Vec<Extracted<'r>>,
    pub parsed: bool,
}

impl Rules {
    /// Reads and checks `path`; errors name `path:LINE`.
    pub fn read(path: &Path) -> Result<Rules> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            anyhow!(
                "cannot read the --extract rules file {}: {e}",
                path.display()
            )
        })?;
        Rules::parse(&text, &path.display().to_string())
    }

    /// The rules of `text`, read from the file `name` (for the errors).
    pub fn parse(text: &str, name: &str) -> Result<Rules> {
        let mut sets: Vec<(usize, RuleSet)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |e: anyhow::Error| anyhow!("{name}:{}: {e}", i + 1);
            if let Some(header) = line.strip_prefix('[') {
                let set = new_set(header).map_err(at)?;
                if sets.iter().any(|(_, s)| s.name == set.name) {
                    return Err(at(anyhow!("a second rule set named [{}]", set.name)));
                }
                sets.push((i + 1, set));
                continue;
            }
            let Some((_, set)) = sets.last_mut() else {
                return Err(at(anyhow!(
                    "`{line}` comes before any rule set: start one with a `[name]` line"
                )));
            };
            add_line(set, line).map_err(at)?;
        }
        if sets.is_empty() {
            bail!(
                "{name}: no rule set: the file needs a `[name]` line, a `url = REGEX` line and fields"
            );
        }
        for (line, set) in &sets {
            if set.url.as_str().is_empty() {
                bail!(
                    "{name}:{line}: rule set [{}] has no `url = REGEX` line",
                    set.name
                );
            }
            if set.fields.is_empty() {
                bail!("{name}:{line}: rule set [{}] has no fields", set.name);
            }
        }
        Ok(Rules {
            sets: sets.into_iter().map(|(_, set)| set).collect(),
        })
    }

    /// Some rule set's URL pattern matches `url`.
    pub fn wants(&self, url: &str) -> bool {
        self.sets.iter().any(|s| s.url.is_match(url))
    }

    /// The fields of the page at `url` whose decoded text is `text` (`html`: it is HTML; CSS
    /// and JSON-LD fields find nothing in other text). Parses the tree only if a matching rule
    /// set needs it.
    pub fn extract(&self, url: &str, text: &str, html: bool) -> PageFields<'_> {
        let matched: Vec<&RuleSet> = self.sets.iter().filter(|s| s.url.is_match(url)).collect();
        let tree = (html && matched.iter().any(|s| s.needs_tree)).then(|| Tree {
            html: Html::parse_document(text),
            json_ld: std::cell::OnceCell::new(),
        });
        let sets = matched
            .into_iter()
            .map(|set| Extracted {
                set,
                values: (set.fields.iter())
                    .map(|f| f.value(text, tree.as_ref()))
                    .collect(),
            })
            .collect();
        PageFields {
            sets,
            parsed: tree.is_some(),
        }
    }
}

/// `name]` (what follows the `[`, a trailing comment allowed): a new, empty rule set.
fn new_set(header: &str) -> Result<RuleSet> {
    let header = header.split(" #").next().unwrap_or_default().trim_end();
    let Some(name) = header.strip_suffix(']') else {
        bail!("a rule set's header is `[name]`; this one has no closing `]`");
    };
    check_name(name.trim(), "rule set")?;
    if name.ends_with("_history") || name.to_ascii_lowercase().starts_with("sqlite_") {
        bail!(
            "[{name}]: a rule set's name may not end in `_history` or start with `sqlite_` \
             (SQLite's and the history tables' names)"
        );
    }
    Ok(RuleSet {
        name: name.trim().to_owned(),
        url: Regex::new("").expect("the empty pattern"),
        fields: Vec::new(),
        needs_tree: false,
    })
}

/// An identifier (a SQLite column or table, a JSON key): ASCII letters, digits and `_`, not
/// starting with a digit, at most 64 characters.
fn check_name(name: &str, what: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        bail!(
            "`{name}` is not a {what} name: use ASCII letters, digits and `_` (not first), at \
             most 64 characters"
        );
    }
    Ok(())
}

/// A `key = value` line of `set`: its `url`, or a field.
fn add_line(set: &mut RuleSet, line: &str) -> Result<()> {
    let Some((key, value)) = line.split_once('=') else {
        bail!("`{line}` is not `url = REGEX` or `field = SELECTOR` (no `=`)");
    };
    let (key, value) = (key.trim(), value.trim());
    if value.is_empty() {
        bail!("`{key}` has no value after `=`");
    }
    if key == "url" {
        if !set.url.as_str().is_empty() {
            bail!("rule set [{}] has a second `url` line", set.name);
        }
        set.url = Regex::new(value).map_err(|e| anyhow!("bad url regular expression: {e}"))?;
        if set.url.as_str().is_empty() {
            bail!("the url regular expression is empty");
        }
        return Ok(());
    }
    let (name, many) = match key.strip_suffix("[]") {
        Some(name) => (name.trim_end(), true),
        None => (key, false),
    };
    check_name(name, "field")?;
    if RESERVED.contains(&name) {
        bail!("`{name}` is a key every object has (url, fetched, rule): name the field otherwise");
    }
    if set.fields.iter().any(|f| f.name == name) {
        bail!("rule set [{}] has a second field `{name}`", set.name);
    }
    let how = how(value)?;
    set.needs_tree |= !matches!(how, How::Regex(_));
    set.fields.push(Field {
        name: name.to_owned(),
        many,
        how,
    });
    Ok(())
}

/// A field's expression: `re:REGEX`, `jsonld:PATH`, or a CSS selector with an optional
/// `::text` or `::attr(name)` at its end.
fn how(value: &str) -> Result<How> {
    if let Some(pattern) = value.strip_prefix("re:") {
        let regex = Regex::new(pattern.trim())
            .map_err(|e| anyhow!("bad regular expression `{}`: {e}", pattern.trim()))?;
        return Ok(How::Regex(regex));
    }
    if let Some(path) = value.strip_prefix("jsonld:") {
        let steps: Vec<String> = path.trim().split('.').map(str::to_owned).collect();
        if steps
            .iter()
            .any(|s| s.is_empty() || s.contains(char::is_whitespace))
        {
            bail!("bad JSON-LD path `{path}`: names separated by dots, as `Article.datePublished`");
        }
        return Ok(How::JsonLd(steps));
    }
    let (css, take) = if let Some(css) = value.strip_suffix("::text") {
        (css, Take::Text)
    } else if let Some((css, attr)) = value.rsplit_once("::attr(") {
        let Some(attr) = attr
            .strip_suffix(')')
            .map(str::trim)
            .filter(|a| !a.is_empty())
        else {
            bail!("bad `::attr(name)` at the end of `{value}`");
        };
        (css, Take::Attr(attr.to_owned()))
    } else {
        (value, Take::Html)
    };
    let selector = Selector::parse(css.trim())
        .map_err(|e| anyhow!("bad CSS selector `{}`: {e}", css.trim()))?;
    Ok(How::Css(selector, take))
}

/// A page's HTML tree and, read on first use, its JSON-LD.
struct Tree {
    html: Html,
    json_ld: std::cell::OnceCell<Vec<serde_json::Value>>,
}

impl Tree {
    /// The JSON objects of the page's `<script type="application/ld+json">` elements (those
    /// that parse), each top-level array's items and `@graph`'s as objects of their own.
    fn json_ld(&self) -> &[serde_json::Value] {
        self.json_ld.get_or_init(|| {
            let scripts = Selector::parse("script[type]").expect("a valid selector");
            let mut nodes = Vec::new();
            for script in self.html.select(&scripts) {
                let kind = script.value().attr("type").unwrap_or_default();
                if !kind.trim().eq_ignore_ascii_case("application/ld+json") {
                    continue;
                }
                let text: String = script.text().collect();
                if let Ok(json) = serde_json::from_str(&text) {
                    flatten_nodes(json, &mut nodes);
                }
            }
            nodes
        })
    }
}

/// `json`'s objects: an array's items, an object and its `@graph`'s items.
fn flatten_nodes(json: serde_json::Value, nodes: &mut Vec<serde_json::Value>) {
    match json {
        serde_json::Value::Array(items) => items.into_iter().for_each(|i| flatten_nodes(i, nodes)),
        serde_json::Value::Object(mut object) => {
            if let Some(graph) = object.remove("@graph") {
                flatten_nodes(graph, nodes);
            }
            nodes.push(serde_json::Value::Object(object));
        }
        _ => {}
    }
}

impl Field {
    /// This field's value on a page of `text`, parsed as `tree` when it is HTML and a field
    /// needs it.
    fn value(&self, text: &str, tree: Option<&Tree>) -> Value {
        let mut found = Vec::new();
        // Keeps a value; true once a single field has its value.
        let mut push = |value: &str| {
            let value = squeeze(value);
            let kept = !value.is_empty();
            if kept {
                found.push(value);
            }
            kept && !self.many
        };
        match (&self.how, tree) {
            (How::Regex(regex), _) => {
                for captures in regex.captures_iter(text) {
                    let m = captures.get(1).or_else(|| captures.get(0));
                    if m.is_some_and(|m| push(m.as_str())) {
                        break;
                    }
                }
            }
            (How::Css(selector, take), Some(tree)) => {
                for element in tree.html.select(selector) {
                    let done = match take {
                        Take::Html => push(&element.html()),
                        Take::Text => push(&text_of(element)),
                        Take::Attr(name) => element.value().attr(name).is_some_and(&mut push),
                    };
                    if done {
                        break;
                    }
                }
            }
            (How::JsonLd(path), Some(tree)) => {
                let mut leaves = Vec::new();
                for node in tree.json_ld() {
                    json_path(node, path, &mut leaves);
                }
                for leaf in leaves {
                    if push(&leaf) {
                        break;
                    }
                }
            }
            (_, None) => {}
        }
        match self.many {
            true => Value::Many(found),
            false => Value::One(found.into_iter().next()),
        }
    }
}

/// An element's text, its descendants' included.
fn text_of(element: ElementRef) -> String {
    element.text().collect()
}

/// `text` with each run of whitespace made one space, its ends trimmed.
fn squeeze(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// The leaves at `path` from the JSON-LD object `node`, as text. A first step starting with an
/// uppercase letter is a `@type` (schema.org's types are capitalized, its properties not): the
/// node must have it. Arrays on the way are stepped through item by item.
fn json_path(node: &serde_json::Value, path: &[String], leaves: &mut Vec<String>) {
    let mut path = path;
    if let Some(first) = path
        .first()
        .filter(|s| s.starts_with(|c: char| c.is_ascii_uppercase()))
        && path.len() > 1
    {
        let is = |t: &serde_json::Value| t.as_str() == Some(first.as_str());
        let typed = match node.get("@type") {
            Some(serde_json::Value::Array(types)) => types.iter().any(is),
            Some(t) => is(t),
            None => false,
        };
        if !typed {
            return;
        }
        path = &path[1..];
    }
    walk(node, path, leaves);
}

/// `value`'s leaves down `path`.
fn walk(value: &serde_json::Value, path: &[String], leaves: &mut Vec<String>) {
    match (value, path.split_first()) {
        (serde_json::Value::Array(items), _) => items.iter().for_each(|i| walk(i, path, leaves)),
        (serde_json::Value::Object(object), Some((step, rest))) => {
            if let Some(next) = object.get(step.as_str()) {
                walk(next, rest, leaves);
            }
        }
        (serde_json::Value::String(s), None) => leaves.push(s.clone()),
        (serde_json::Value::Null, _) => {}
        (leaf, None) => leaves.push(leaf.to_string()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"<!doctype html><html><head><title>T</title>
<script type="application/ld+json">{"@context":"https://schema.org","@graph":[
 {"@type":"Article","datePublished":"2024-05-01","author":[{"name":"A"},{"name":"B"}]},
 {"@type":"WebSite","name":"Site"}]}</script></head>
<body><h1> Hello   <em>world</em> </h1>
<dl><dt id="f" class="sig">f(<em>x</em>)</dt><dt class="sig" id="g">g()</dt><dt class="sig">h</dt></dl>
<p>Python 3.11 and Python 3.12</p></body></html>"#;

    fn fields(rules: &str, url: &str) -> Vec<(String, Value)> {
        let rules = Rules::parse(rules, "r.rules").unwrap();
        let page = rules.extract(url, PAGE, true);
        (page.sets.into_iter())
            .flat_map(|e| {
                let names = e.set.fields.iter().map(|f| f.name.clone());
                names.zip(e.values).collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn css_regex_and_json_ld_fields() {
        let rules = "[a]\nurl = ^http://h/\ntitle = h1::text\nids[] = dt.sig::attr(id)\n\
                     sigs[] = dt.sig::text\nfirst = dt.sig\nversion = re:Python (\\d+\\.\\d+)\n\
                     versions[] = re:Python (\\d+\\.\\d+)\npublished = jsonld:Article.datePublished\n\
                     authors[] = jsonld:Article.author.name\nsite = jsonld:WebSite.name\n\
                     missing = jsonld:Article.name\n";
        let one = |s: &str| Value::One(Some(s.to_owned()));
        let many = |v: &[&str]| Value::Many(v.iter().map(|s| s.to_string()).collect());
        let got = fields(rules, "http://h/p");
        let expected = [
            ("title", one("Hello world")),
            ("ids", many(&["f", "g"])),
            ("sigs", many(&["f(x)", "g()", "h"])),
            ("first", one(r#"<dt class="sig" id="f">f(<em>x</em>)</dt>"#)),
            ("version", one("3.11")),
            ("versions", many(&["3.11", "3.12"])),
            ("published", one("2024-05-01")),
            ("authors", many(&["A", "B"])),
            ("site", one("Site")),
            ("missing", Value::One(None)),
        ];
        let expected: Vec<_> = expected
            .into_iter()
            .map(|(n, v)| (n.to_owned(), v))
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn only_matching_sets_and_only_sets_with_tree_fields_parse() {
        let rules = Rules::parse(
            "[a]\nurl = /doc/\nt = h1::text\n[b]\nurl = .\nv = re:(\\d+)\n",
            "r",
        )
        .unwrap();
        let page = rules.extract("http://h/other", PAGE, true);
        assert!(!page.parsed);
        assert_eq!(page.sets.len(), 1);
        // The page as served: the JSON-LD's date comes first.
        assert_eq!(page.sets[0].values, vec![Value::One(Some("2024".into()))]);
        assert!(rules.extract("http://h/doc/x", PAGE, true).parsed);
        assert!(!rules.extract("http://h/doc/x", PAGE, false).parsed);
    }

    #[test]
    fn bad_lines_are_named_by_file_and_line() {
        let error = |text: &str| Rules::parse(text, "r.rules").unwrap_err().to_string();
        assert!(error("[a]\nurl = x\nt = h1[::text\n").starts_with("r.rules:3: bad CSS selector"));
        assert!(error("[a]\nurl = (\nt = h1\n").starts_with("r.rules:2: bad url regular"));
        assert!(error("# c\n\n[a]\nurl = x\nt = re:(\n").starts_with("r.rules:5: bad regular"));
        assert!(error("t = h1\n").starts_with("r.rules:1: `t = h1` comes before"));
        assert!(error("[a]\nt = h1\n").starts_with("r.rules:1: rule set [a] has no `url"));
        assert!(error("[a]\nurl = x\n").starts_with("r.rules:1: rule set [a] has no fields"));
        assert!(error("[a]\nurl = x\nurl = h1\n").starts_with("r.rules:3:"));
        assert!(error("[a]\nurl = x\nrule = h1\n").starts_with("r.rules:3:"));
        assert!(error("[a]\nurl = x\nt = h1\nt[] = h2\n").starts_with("r.rules:4:"));
        assert!(error("[a b]\n").starts_with("r.rules:1:"));
        assert!(error("[a]\nurl = x\nt = h1\n[a]\n").starts_with("r.rules:4: a second"));
        assert!(error("[a]\nurl = x\nt = jsonld:a..b\n").starts_with("r.rules:3: bad JSON-LD"));
        assert!(error("[a]\nurl = x\nt = a::attr()\n").starts_with("r.rules:3: bad `::attr"));
        assert!(error("").starts_with("r.rules: no rule set"));
    }
}
