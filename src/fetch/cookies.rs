//! The cookie jar: `--load-cookies` and `--cookie-jar`, one jar for the whole crawl.
//!
//! One jar serves every host, so a cookie set for a domain goes to each of its hosts. The rules of RFC 6265
//! (domain and path matching, expiry, `Secure`) are `cookie_store`'s; we add only the public
//! suffix check (a `Domain=co.uk` cookie is refused, with the `psl` list the scope filter uses)
//! and the Netscape cookie-file format that curl and wget read and write.
//!
//! Crash safety: the jar file is replaced through `state::durable` (temp file, fsync, rename),
//! at each frontier checkpoint when a response changed the jar since the last save, and at the
//! end, so a kill leaves the old jar or the new one. A crawl started with an existing
//! `--cookie-jar` file reads it first: that is how a resumed crawl gets its cookies back.
//! Session cookies are kept in the file (expiry 0, as curl writes them) for the same reason.
//!
//! Cookie values are secrets (a login): errors name the file and line, never a value.

use anyhow::{Context, Result, bail};
use cookie_store::{CookieDomain, CookieExpiration, CookieStore, RawCookie};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use url::Url;

/// Cookies kept at most, and the longest `Set-Cookie` value kept: RFC 6265 §6.1's minimum
/// capacities (3,000 cookies of 4,096 bytes), so a server setting a new cookie on every page
/// cannot make the jar (or its file) grow without bound. Cookies past the limit are dropped.
const MAX_COOKIES: usize = 3000;
const MAX_COOKIE_BYTES: usize = 4096;

/// The crawl's cookies, shared by every host's agent.
pub struct CookieJar {
    store: Mutex<CookieStore>,
    /// Where `--cookie-jar` writes the jar back; `None` keeps cookies in memory only.
    file: Option<PathBuf>,
    /// A response changed the jar since it was last written.
    changed: AtomicBool,
}

impl CookieJar {
    /// The jar for a crawl: the cookies of `load` (`--load-cookies`), then those of `file`
    /// (`--cookie-jar`) if it exists already, which win where both name the same cookie.
    /// A malformed line is an error naming `FILE:LINE`. The jar is written to `file` at once,
    /// so a path that cannot be written is found before the crawl starts.
    pub fn open(load: Option<&Path>, file: Option<&Path>) -> Result<CookieJar> {
        let mut store = CookieStore::default();
        if let Some(path) = load {
            read_netscape(path, &mut store)?;
        }
        if let Some(path) = file.filter(|p| p.exists()) {
            read_netscape(path, &mut store)?;
        }
        let jar = CookieJar {
            store: Mutex::new(store),
            file: file.map(Path::to_path_buf),
            changed: AtomicBool::new(true),
        };
        jar.save_if_changed()?;
        Ok(jar)
    }

    /// The `Cookie` header value for a request to `url`, if any cookie applies.
    pub fn header_for(&self, url: &Url) -> Option<String> {
        let store = self.store.lock().unwrap();
        // RFC 6265 §5.4: longer paths first; then by name, so the header is the same every time.
        let mut cookies = store.matches(url);
        cookies.sort_by(|a, b| b.path.len().cmp(&a.path.len()).then(a.name().cmp(b.name())));
        let value = cookies
            .iter()
            .map(|c| format!("{}={}", c.name(), c.value()))
            .collect::<Vec<_>>()
            .join("; ");
        (!value.is_empty()).then_some(value)
    }

    /// Keeps the cookies a response from `url` set (its `Set-Cookie` values).
    pub fn remember<'a>(&self, url: &Url, set_cookies: impl Iterator<Item = &'a str>) {
        let host = url.host_str().unwrap_or("").to_ascii_lowercase();
        let mut store = self.store.lock().unwrap();
        for value in set_cookies.filter(|v| v.len() <= MAX_COOKIE_BYTES) {
            let Ok(mut cookie) = RawCookie::parse(value.to_owned()) else {
                continue;
            };
            // RFC 6265 §5.3 step 5: a Domain attribute that is a public suffix is refused,
            // unless it is the request's own host (then the cookie is host-only).
            let domain = cookie
                .domain()
                .map(|d| d.trim_start_matches('.').to_owned());
            if let Some(domain) = domain.filter(|d| is_public_suffix(d)) {
                if !domain.eq_ignore_ascii_case(&host) {
                    continue;
                }
                cookie.unset_domain();
            }
            let full = store.iter_any().nth(MAX_COOKIES - 1).is_some();
            let path = cookie.path().unwrap_or("/");
            if full && !store.contains_any(&host, path, cookie.name()) {
                continue;
            }
            if store.insert_raw(&cookie, url).is_ok() {
                self.changed.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Writes the jar to its file if a response changed it since the last write.
    pub fn save_if_changed(&self) -> Result<()> {
        let Some(path) = &self.file else {
            return Ok(());
        };
        if !self.changed.swap(false, Ordering::Relaxed) {
            return Ok(());
        }
        let text = write_netscape(&self.store.lock().unwrap());
        crate::state::durable::replace(path, text.as_bytes()).with_context(|| {
            self.changed.store(true, Ordering::Relaxed);
            format!("writing the cookie jar {}", path.display())
        })
    }
}

/// Whether `domain` is a public suffix ("com", "co.uk"), which no cookie may be set for.
fn is_public_suffix(domain: &str) -> bool {
    let domain = domain.to_ascii_lowercase();
    psl::suffix_str(&domain) == Some(domain.as_str())
}

/// Reads a Netscape cookie file into `store`. Each line: domain, include-subdomains
/// (TRUE/FALSE), path, secure (TRUE/FALSE), expiry (Unix seconds, 0 for a session cookie),
/// name, value, separated by tabs; `#` starts a comment except the `#HttpOnly_` prefix curl
/// writes. Expired cookies are skipped, as curl and wget do.
fn read_netscape(path: &Path, store: &mut CookieStore) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the cookie file {}", path.display()))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for (number, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), number + 1);
        let line = line.trim_end_matches('\r');
        let (http_only, line) = match line.strip_prefix("#HttpOnly_") {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let [domain, subdomains, path_attr, secure, expiry, name, value] = fields[..] else {
            bail!(
                "{}: a cookie line has 7 tab-separated fields (domain, include subdomains, \
                 path, secure, expiry, name, value), this one has {}",
                at(),
                fields.len()
            );
        };
        let flag = |text: &str, what: &str| match text {
            "TRUE" => Ok(true),
            "FALSE" => Ok(false),
            _ => bail!("{}: the {what} field is TRUE or FALSE", at()),
        };
        let subdomains = flag(subdomains, "include-subdomains")?;
        let secure = flag(secure, "secure")?;
        let Ok(expiry) = expiry.parse::<u64>() else {
            bail!(
                "{}: the expiry field is Unix seconds (0 for a session cookie)",
                at()
            );
        };
        let host = domain.trim_start_matches('.');
        if host.is_empty() || name.is_empty() || !path_attr.starts_with('/') {
            bail!(
                "{}: a cookie needs a domain, a name and a path starting with /",
                at()
            );
        }
        if expiry != 0 && expiry <= now {
            continue;
        }
        let url = Url::parse(&format!("https://{host}{path_attr}"))
            .with_context(|| format!("{}: the domain or path is not part of a URL", at()))?;
        let mut cookie = RawCookie::new(name.to_owned(), value.to_owned());
        cookie.set_path(path_attr.to_owned());
        if subdomains {
            cookie.set_domain(host.to_owned());
        }
        cookie.set_secure(secure);
        cookie.set_http_only(http_only);
        if expiry != 0 {
            let seconds = i64::try_from(expiry - now).unwrap_or(i64::MAX / 2);
            cookie.set_max_age(time::Duration::seconds(seconds));
        }
        if let Err(e) = store.insert_raw(&cookie, &url) {
            bail!("{}: the cookie is not valid for its domain ({e})", at());
        }
    }
    Ok(())
}

/// The jar as a Netscape cookie file, session cookies included (expiry 0).
fn write_netscape(store: &CookieStore) -> String {
    let mut text = String::from(
        "# Netscape HTTP Cookie File\n# Written by crawl (--cookie-jar); read by curl -b and wget --load-cookies.\n\n",
    );
    for cookie in store.iter_unexpired() {
        let (domain, subdomains) = match &cookie.domain {
            CookieDomain::HostOnly(d) => (d.clone(), "FALSE"),
            CookieDomain::Suffix(d) => (format!(".{d}"), "TRUE"),
            CookieDomain::NotPresent | CookieDomain::Empty => continue,
        };
        let expiry = match &cookie.expires {
            CookieExpiration::AtUtc(at) => at.unix_timestamp().max(1),
            CookieExpiration::SessionEnd => 0,
        };
        text.push_str(&format!(
            "{}{domain}\t{subdomains}\t{}\t{}\t{expiry}\t{}\t{}\n",
            if cookie.http_only() == Some(true) {
                "#HttpOnly_"
            } else {
                ""
            },
            &*cookie.path,
            if cookie.secure() == Some(true) {
                "TRUE"
            } else {
                "FALSE"
            },
            cookie.name(),
            cookie.value(),
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(url: &str) -> Url {
        Url::parse(url).unwrap()
    }

    fn jar_from(text: &str) -> (tempfile::TempDir, Result<CookieJar>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cookies.txt");
        std::fs::write(&path, text).unwrap();
        let jar = CookieJar::open(Some(&path), None);
        (dir, jar)
    }

    /// The jar sends exactly these `Cookie` headers to these URLs.
    fn assert_sends(jar: &CookieJar, cases: &[(&str, Option<&str>)]) {
        for (url, expected) in cases {
            assert_eq!(jar.header_for(&at(url)).as_deref(), *expected, "{url}");
        }
    }

    #[test]
    fn netscape_file_cookies_are_sent_by_domain_and_path() {
        let far = 4_000_000_000u64;
        let (_dir, jar) = jar_from(&format!(
            "# Netscape HTTP Cookie File\n\n\
             .example.com\tTRUE\t/\tFALSE\t{far}\tall\t1\n\
             www.example.com\tFALSE\t/shop\tFALSE\t0\tshop\t2\n\
             #HttpOnly_example.com\tFALSE\t/\tTRUE\t{far}\tsecure\t3\n\
             example.com\tFALSE\t/\tFALSE\t1000\texpired\t4\n"
        ));
        assert_sends(
            &jar.unwrap(),
            &[
                ("http://a.example.com/x", Some("all=1")),
                ("http://www.example.com/shop/cart", Some("shop=2; all=1")),
                ("http://www.example.com/shopping", Some("all=1")),
                ("http://example.com/", Some("all=1")),
                ("https://example.com/", Some("all=1; secure=3")),
                ("http://example.org/", None),
            ],
        );
    }

    #[test]
    fn a_server_cannot_grow_the_jar_without_bound() {
        let jar = CookieJar::open(None, None).unwrap();
        let flood: Vec<String> = (0..MAX_COOKIES + 500).map(|i| format!("c{i}=1")).collect();
        let huge = format!("big={}", "x".repeat(MAX_COOKIE_BYTES));
        jar.remember(
            &at("http://a.example/"),
            flood.iter().map(String::as_str).chain([huge.as_str()]),
        );
        assert_eq!(jar.store.lock().unwrap().iter_any().count(), MAX_COOKIES);
        // A cookie already kept is still updated when the jar is full.
        jar.remember(&at("http://a.example/"), ["c0=2"].into_iter());
        let header = jar.header_for(&at("http://a.example/")).unwrap();
        assert!(header.contains("c0=2") && !header.contains("big="));
    }

    #[test]
    fn a_bad_cookie_line_names_file_and_line_but_not_the_value() {
        for (text, says) in [
            ("x.com\tTRUE\t/\tFALSE\t0\tname\n", "7 tab-separated fields"),
            (
                "x.com\tyes\t/\tFALSE\t0\tname\tsecret-value\n",
                "TRUE or FALSE",
            ),
            (
                "x.com\tTRUE\t/\tFALSE\tsoon\tname\tsecret-value\n",
                "Unix seconds",
            ),
            (
                "x.com\tTRUE\tnoslash\tFALSE\t0\tname\tsecret-value\n",
                "path starting",
            ),
        ] {
            let (_dir, jar) = jar_from(&format!("# comment\n{text}"));
            let message = format!("{:#}", jar.err().unwrap());
            assert!(message.contains("cookies.txt:2: "), "{message}");
            assert!(message.contains(says), "{message}");
            assert!(!message.contains("secret-value"), "{message}");
        }
    }

    #[test]
    fn set_cookies_follow_domain_rules_and_the_jar_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("jar.txt");
        let jar = CookieJar::open(None, Some(&file)).unwrap();
        jar.remember(
            &at("http://a.example.com/dir/page"),
            [
                "host=1",
                "wide=2; Domain=example.com; Path=/",
                "super=3; Domain=com",
                "other=4; Domain=example.org",
                "kept=5; Max-Age=3600; HttpOnly",
            ]
            .into_iter(),
        );
        assert_sends(
            &jar,
            &[
                ("http://a.example.com/dir/x", Some("host=1; kept=5; wide=2")),
                ("http://a.example.com/", Some("wide=2")),
                ("http://b.example.com/dir/", Some("wide=2")),
                ("http://other.com/dir/", None),
            ],
        );
        jar.save_if_changed().unwrap();
        let written = std::fs::read_to_string(&file).unwrap();
        assert!(
            written.contains("#HttpOnly_a.example.com\tFALSE\t/dir\tFALSE\t"),
            "{written}"
        );
        // Reopened, as a resumed crawl does: the same cookies, session ones included.
        let again = CookieJar::open(None, Some(&file)).unwrap();
        assert_eq!(
            again.header_for(&at("http://a.example.com/dir/x")),
            Some("host=1; kept=5; wide=2".into())
        );
        // Unchanged since it was opened (and written): no write.
        std::fs::remove_file(&file).unwrap();
        again.save_if_changed().unwrap();
        assert!(!file.exists());
        // A jar that cannot be written is an error at once, naming the file.
        let nowhere = dir.path().join("missing-dir").join("jar.txt");
        let message = format!("{:#}", CookieJar::open(None, Some(&nowhere)).err().unwrap());
        assert!(message.contains("missing-dir/jar.txt"), "{message}");
    }
}
