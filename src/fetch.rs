//! Fetching one URL over HTTP(S) with ureq: bounded in time and size, redirects not followed.
//!
//! Every timeout ureq has is off by default, so each is set. 4xx/5xx responses are data, not
//! errors. A 3xx comes back as itself: its Location is a discovered URL that goes through the
//! filter and the DUE like a link. The body is kept as the server sent it (content-encoding
//! intact, for the archive); `decoded_body` inflates a copy for link extraction, under the same
//! size cap so a gzip bomb costs no more than a large page.

use std::io::Read;
use std::time::{Duration, Instant};

/// Fetcher settings from the command line.
#[derive(Clone, Debug)]
pub struct FetchConfig {
    pub user_agent: String,
    /// Whole-request limit (connect, headers and body).
    pub timeout: Duration,
    pub max_body: u64,
}

/// A response, as received.
#[derive(Debug)]
pub struct Fetched {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body was longer than `max_body` and was cut there.
    pub truncated: bool,
    pub elapsed: Duration,
}

/// Why a fetch produced no response; `kind` is the stable word the URL log shows.
#[derive(Debug)]
pub struct FetchError {
    pub kind: &'static str,
    pub message: String,
    pub elapsed: Duration,
}

/// A reusable HTTP client (connection pool) shared by all workers.
pub struct Fetcher {
    agent: ureq::Agent,
    robots_agent: ureq::Agent,
    max_body: u64,
}

impl Fetcher {
    pub fn new(config: &FetchConfig) -> Fetcher {
        let build = |redirects: u32| -> ureq::Agent {
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .max_redirects(redirects)
                .max_redirects_will_error(false)
                .user_agent(config.user_agent.as_str())
                .accept_encoding("gzip, deflate")
                .timeout_global(Some(config.timeout))
                .timeout_connect(Some(config.timeout.min(Duration::from_secs(10))))
                .timeout_per_read(Some(config.timeout.min(Duration::from_secs(20))))
                .max_response_header_size(64 * 1024)
                .max_idle_connections(1024)
                .max_idle_connections_per_host(2)
                .build()
                .into()
        };
        // robots.txt may redirect (RFC 9309 §2.3.1.2: follow at least five hops); pages may not.
        Fetcher {
            agent: build(0),
            robots_agent: build(5),
            max_body: config.max_body,
        }
    }

    /// GETs a page; a 3xx is returned as is.
    pub fn get(&self, url: &str) -> Result<Fetched, FetchError> {
        self.get_with(&self.agent, url)
    }

    /// GETs a robots.txt, following up to five redirects.
    pub fn get_robots(&self, url: &str) -> Result<Fetched, FetchError> {
        self.get_with(&self.robots_agent, url)
    }

    fn get_with(&self, agent: &ureq::Agent, url: &str) -> Result<Fetched, FetchError> {
        let start = Instant::now();
        let fail = |kind, message: String| FetchError {
            kind,
            message,
            elapsed: start.elapsed(),
        };
        let response = agent
            .get(url)
            .call()
            .map_err(|e| fail(error_kind(&e), e.to_string()))?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let mut body = Vec::new();
        let mut reader = response.into_body().into_reader().take(self.max_body + 1);
        if let Err(e) = reader.read_to_end(&mut body) {
            let kind = if e.kind() == std::io::ErrorKind::TimedOut {
                "timeout"
            } else {
                "body"
            };
            return Err(fail(kind, format!("reading the body: {e}")));
        }
        let truncated = body.len() as u64 > self.max_body;
        body.truncate(self.max_body as usize);
        Ok(Fetched {
            status,
            headers,
            body,
            truncated,
            elapsed: start.elapsed(),
        })
    }
}

impl Fetched {
    /// The first value of a header (names are case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The media type without parameters, lower-cased ("text/html").
    pub fn media_type(&self) -> Option<String> {
        let value = self.header("content-type")?;
        Some(value.split(';').next()?.trim().to_ascii_lowercase()).filter(|t| !t.is_empty())
    }

    /// The charset parameter of Content-Type, if any.
    pub fn charset(&self) -> Option<&str> {
        let value = self.header("content-type")?;
        value.split(';').skip(1).find_map(|p| {
            let (k, v) = p.split_once('=')?;
            k.trim()
                .eq_ignore_ascii_case("charset")
                .then(|| v.trim().trim_matches('"'))
        })
    }

    /// Whether the body is worth reading links from.
    pub fn is_html(&self) -> bool {
        match self.media_type() {
            Some(t) => t == "text/html" || t == "application/xhtml+xml",
            None => self.body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<'),
        }
    }

    /// The body with its Content-Encoding (gzip, deflate) undone, at most `cap` bytes.
    pub fn decoded_body(&self, cap: u64) -> std::borrow::Cow<'_, [u8]> {
        let encoding = self
            .header("content-encoding")
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let mut out = Vec::new();
        let result = match encoding.as_str() {
            "gzip" | "x-gzip" => flate2::read::MultiGzDecoder::new(&self.body[..])
                .take(cap)
                .read_to_end(&mut out),
            "deflate" => flate2::read::ZlibDecoder::new(&self.body[..])
                .take(cap)
                .read_to_end(&mut out),
            _ => return std::borrow::Cow::Borrowed(&self.body),
        };
        // A corrupt stream still yields what was inflated before the damage.
        let _ = result;
        std::borrow::Cow::Owned(out)
    }
}

/// Stable words for the URL log's error column.
fn error_kind(e: &ureq::Error) -> &'static str {
    match e {
        ureq::Error::Timeout(_) => "timeout",
        ureq::Error::HostNotFound => "dns",
        ureq::Error::ConnectionFailed => "connect",
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => "timeout",
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => "connect",
        ureq::Error::Io(_) => "io",
        ureq::Error::BadUri(_) => "bad-url",
        ureq::Error::Protocol(_) | ureq::Error::Http(_) => "protocol",
        ureq::Error::BodyExceedsLimit(_) => "too-large",
        _ => "other",
    }
}
