//! Fetching one URL over HTTP(S) with ureq: bounded in time and size, redirects not followed.
//!
//! Every timeout ureq has is off by default, so each is set. 4xx/5xx responses are data, not
//! errors. A 3xx comes back as itself: its Location is a discovered URL that goes through the
//! filter and the DUE like a link. The body is kept as the server sent it (content-encoding
//! intact, for the archive); `decoded_body` inflates a copy for link extraction, under the same
//! size cap so a gzip bomb costs no more than a large page.
//!
//! For the archive, a response also carries what went over the wire around the body: the
//! request head as ureq sent it (reconstructed: ureq does not expose it; a test holds the two
//! together), the response head (status line from the version and the canonical reason phrase,
//! ureq keeps no other; headers in the order received, names as ureq gives them, lower-case),
//! the time the request started and the address the host name resolved to.

use crate::fetch::body::{BodyRule, Skipped};
use crate::fetch::dns::CachingResolver;
use crate::fetch::private::AddressPolicy;
use crate::lru::Lru;
use std::cell::Cell;
use std::io::Read;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use ureq::ResponseExt;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{
    ConnectionDetails, Connector, DefaultConnector, NextTimeout, Transport,
};

/// The Accept-Encoding every request sends: bodies stay encoded, for the archive.
const ACCEPT_ENCODING: &str = "gzip, deflate";

/// Fetcher settings from the command line.
#[derive(Clone, Debug)]
pub struct FetchConfig {
    /// The `User-Agent` header sent with every request.
    pub user_agent: String,
    /// Whole-request limit (connect, headers and body).
    pub timeout: Duration,
    /// Bytes of body kept; the rest is cut off and the page noted `truncated`.
    pub max_body: u64,
    /// Requests a host may have in flight at once (`--host-connections`): idle connections
    /// kept per host.
    pub host_connections: usize,
    /// Which response bodies are read (`--accept-type`, `--reject-type`, `--keep-truncated`).
    pub body: BodyRule,
    /// Which addresses may be connected to (`--allow-private`, the seeds).
    pub addresses: AddressPolicy,
}

/// A response, as received.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body was longer than `max_body` and was cut there.
    pub truncated: bool,
    /// The body was not read at all (its headers said so): `body` is empty.
    pub skipped: Option<Skipped>,
    pub elapsed: Duration,
    /// When the request started (wall clock, for WARC-Date).
    pub started: SystemTime,
    /// The address the host name resolved to for this request (the first one, which is the one
    /// connected to unless it refused); `None` when unknown (a proxy resolves, say).
    pub ip: Option<IpAddr>,
    /// The URL the response came from when redirects were followed to get it (robots.txt only).
    pub final_url: Option<String>,
    /// The request line and headers as sent, ending with the empty line.
    pub request_head: Vec<u8>,
    /// The status line and headers as received, ending with the empty line. ureq removes any
    /// chunked framing, so `Transfer-Encoding` appears as `X-Crawl-Transfer-Encoding`.
    pub response_head: Vec<u8>,
}

/// Why a fetch produced no response; `kind` is the stable word the URL log shows.
#[derive(Debug)]
pub struct FetchError {
    pub kind: &'static str,
    pub message: String,
    pub elapsed: Duration,
}

/// A reusable HTTP client shared by all workers: connections kept per host.
pub struct Fetcher {
    agents: HostAgents,
    max_body: u64,
    body_rule: BodyRule,
    user_agent: String,
}

/// Hosts whose idle connections are kept: the last 64 used (as many as the workers of a
/// `-j 64` crawl), few enough that their buffers (88 KiB each) stay a small fixed cost however
/// many hosts the crawl meets. 128 cost 5 MB more at 2,000 hosts and were no faster
/// (BENCHMARKS.md, "Speed at the web's shape").
const IDLE_HOSTS: usize = 64;

/// One ureq agent, and so one connection pool, per host, for the `IDLE_HOSTS` hosts used last.
///
/// ureq's pool is a list that every request scans, with a per-host count that is quadratic in
/// its length: kept for a thousand hosts it cost most of a crawl's CPU (76 % in
/// `Authority::eq` at 2,000 hosts). Here finding a host's connection is one hash look-up, and
/// the pool each request scans holds that host's connections only. An agent is a few `Arc`s;
/// the connector (with its TLS configuration) and the DNS cache are shared by all.
struct HostAgents {
    template: ureq::config::Config,
    connector: SharedConnector,
    resolver: RecordingResolver<CachingResolver>,
    idle: Mutex<Lru<String, ureq::Agent>>,
}

impl HostAgents {
    fn agent_for(&self, url: &str) -> ureq::Agent {
        let key = match crate::url::normalize::origin_and_key(url) {
            Some((_, key)) => key,
            None => String::new(), // ureq will refuse it with its own error
        };
        let mut idle = self.idle.lock().unwrap();
        if let Some(agent) = idle.get(&key) {
            return agent.clone();
        }
        let agent = ureq::Agent::with_parts(
            self.template.clone(),
            self.connector.clone(),
            self.resolver.clone(),
        );
        idle.insert(key, agent.clone());
        agent
    }
}

/// The one connector (TCP, then rustls with its root store built once) every agent uses.
#[derive(Clone, Debug)]
struct SharedConnector(Arc<DefaultConnector>);

impl Connector for SharedConnector {
    type Out = Box<dyn Transport>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<()>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        self.0.connect(details, chained)
    }
}

impl Fetcher {
    /// Builds the client from `config`; connections are made as hosts are first fetched.
    pub fn new(config: &FetchConfig) -> Fetcher {
        let template = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .max_redirects_will_error(false)
            .user_agent(config.user_agent.as_str())
            .accept_encoding(ACCEPT_ENCODING)
            .timeout_global(Some(config.timeout))
            .timeout_connect(Some(config.timeout.min(Duration::from_secs(10))))
            .timeout_per_read(Some(config.timeout.min(Duration::from_secs(20))))
            .max_response_header_size(64 * 1024)
            // Our requests are a few hundred bytes and a head is at most 64 KiB: ureq's
            // default 128 KiB buffers each way per connection would be most of our memory.
            .input_buffer_size(80 * 1024)
            .output_buffer_size(8 * 1024)
            // Each agent serves one host (see `HostAgents`): its pool holds that host's idle
            // connections, as many as the host may have requests in flight.
            .max_idle_connections(config.host_connections.max(1))
            .max_idle_connections_per_host(config.host_connections.max(1))
            .build();
        let mut resolver = CachingResolver::new(config.addresses.clone());
        if let Some(proxy) = template.proxy() {
            // The proxy (from the environment) is the user's choice, private or not.
            resolver.exempt(&format!("{}:{}", proxy.host(), proxy.port()));
        }
        Fetcher {
            agents: HostAgents {
                template,
                connector: SharedConnector(Arc::new(DefaultConnector::default())),
                resolver: RecordingResolver(Arc::new(resolver)),
                idle: Mutex::new(Lru::new(IDLE_HOSTS)),
            },
            max_body: config.max_body,
            body_rule: config.body.clone(),
            user_agent: config.user_agent.clone(),
        }
    }

    /// GETs a page; a 3xx is returned as is.
    pub fn get(&self, url: &str) -> Result<Response, FetchError> {
        self.get_with(url, &[], 0, true)
    }

    /// GETs a page with extra request headers (a recrawl's `If-None-Match`,
    /// `If-Modified-Since`); a 3xx (304 included) is returned as is.
    pub fn get_conditional(
        &self,
        url: &str,
        headers: &[(&'static str, String)],
    ) -> Result<Response, FetchError> {
        self.get_with(url, headers, 0, true)
    }

    /// GETs a robots.txt, following up to five redirects (RFC 9309 §2.3.1.2: at least five).
    /// Its body is read whatever its type (`--accept-type` is for pages).
    pub fn get_robots(&self, url: &str) -> Result<Response, FetchError> {
        self.get_with(url, &[], 5, false)
    }

    /// The GET; with `filtered`, the body is read only if `BodyRule` wants it (else the
    /// connection is dropped after the headers, which closes it).
    fn get_with(
        &self,
        url: &str,
        extra: &[(&'static str, String)],
        redirects: u32,
        filtered: bool,
    ) -> Result<Response, FetchError> {
        let start = Instant::now();
        let started = SystemTime::now();
        let fail = |kind, message: String| FetchError {
            kind,
            message,
            elapsed: start.elapsed(),
        };
        RESOLVED.set(None);
        let agent = self.agents.agent_for(url);
        let mut request = agent.get(url);
        if redirects > 0 {
            request = request.config().max_redirects(redirects).build();
        }
        for (name, value) in extra {
            request = request.header(*name, value.as_str());
        }
        let response = request
            .call()
            .map_err(|e| fail(error_kind(&e), e.to_string()))?;
        let ip = RESOLVED.take();
        let status = response.status().as_u16();
        let uri = response.get_uri();
        let final_url = (uri != url).then(|| uri.to_string());
        let request_head = request_head(uri, &self.user_agent, extra);
        let response_head = response_head(&response);
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect::<Vec<(String, String)>>();
        // Names as ureq gives them: lower-case.
        let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| &**v);
        let skipped = filtered
            .then(|| {
                self.body_rule.skip(
                    status,
                    header("content-type"),
                    header("content-length"),
                    self.max_body,
                )
            })
            .flatten();
        let mut body = Vec::new();
        let mut truncated = false;
        match skipped {
            // Dropped unread: ureq pools only a connection read to its end, so this closes it.
            Some(_) => drop(response),
            None => {
                let mut reader = response.into_body().into_reader().take(self.max_body + 1);
                if let Err(e) = reader.read_to_end(&mut body) {
                    let e = ureq::Error::from(e);
                    let kind = match error_kind(&e) {
                        "closed" => "short-body",
                        "io" | "other" => "body",
                        kind => kind,
                    };
                    return Err(fail(
                        kind,
                        format!("reading the body (after {} bytes): {e}", body.len()),
                    ));
                }
                truncated = body.len() as u64 > self.max_body;
                body.truncate(self.max_body as usize);
            }
        }
        Ok(Response {
            status,
            headers,
            body,
            truncated,
            skipped,
            elapsed: start.elapsed(),
            started,
            ip,
            final_url,
            request_head,
            response_head,
        })
    }
}

/// The request head ureq sends for a GET of `uri` with this agent configuration: its request
/// line, then the headers it adds, in its order and casing (`tests::request_head_is_what_ureq_sends`
/// compares the two on a socket).
fn request_head(uri: &Uri, user_agent: &str, extra: &[(&'static str, String)]) -> Vec<u8> {
    let target = uri.path_and_query().map_or("/", |p| p.as_str());
    let slash = if target.starts_with('?') { "/" } else { "" };
    let host = uri.host().unwrap_or("");
    let default_port = match uri.scheme_str() {
        Some("https") => 443,
        _ => 80,
    };
    let port = uri
        .port_u16()
        .filter(|&p| p != default_port)
        .map(|p| format!(":{p}"))
        .unwrap_or_default();
    let mut head =
        format!("GET {slash}{target} HTTP/1.1\r\naccept-encoding: {ACCEPT_ENCODING}\r\n");
    if !user_agent.is_empty() {
        head.push_str(&format!("user-agent: {user_agent}\r\n"));
    }
    head.push_str(&format!("accept: */*\r\nhost: {host}{port}\r\n"));
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// The response's status line and headers, in the order received, as bytes.
fn response_head<B>(response: &ureq::http::Response<B>) -> Vec<u8> {
    let status = response.status();
    let mut head = format!(
        "{:?} {} {}\r\n",
        response.version(),
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    )
    .into_bytes();
    for (name, value) in response.headers() {
        let name = if name == ureq::http::header::TRANSFER_ENCODING {
            "X-Crawl-Transfer-Encoding"
        } else {
            name.as_str()
        };
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    head
}

thread_local! {
    /// The address `RecordingResolver` last resolved on this thread. ureq is blocking and
    /// resolves on the calling thread, so after a call it is that call's address.
    static RESOLVED: Cell<Option<IpAddr>> = const { Cell::new(None) };
}

/// A resolver (ureq's own by default) that notes the first address of each answer for
/// WARC-IP-Address (ureq does not expose the peer address). Wraps any other resolver, a
/// caching one say, the same way; clones share it (every host's agent uses the one DNS cache).
#[derive(Debug, Default)]
struct RecordingResolver<R = DefaultResolver>(Arc<R>);

impl<R> Clone for RecordingResolver<R> {
    fn clone(&self) -> Self {
        RecordingResolver(Arc::clone(&self.0))
    }
}

impl<R: Resolver> Resolver for RecordingResolver<R> {
    fn resolve(
        &self,
        uri: &Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let addrs = self.0.resolve(uri, config, timeout)?;
        RESOLVED.set(addrs.first().map(|a| a.ip()));
        Ok(addrs)
    }
}

impl Response {
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

/// Stable words for the URL log's error column: `timeout` (the `--timeout` for the whole
/// request passed, e.g. a server trickling bytes), `dns`, `connect`, `reset` (the server reset
/// the connection), `closed` (it closed the connection before answering; while reading the
/// body this becomes `short-body`: fewer bytes than its Content-Length or chunking promised),
/// `io`, `bad-url`, `protocol` (not HTTP), `too-large` (a head over 64 KiB), `tls`,
/// `private-address` (the address is refused: `fetch::private`), `other`.
fn error_kind(e: &ureq::Error) -> &'static str {
    use std::io::ErrorKind;
    match e {
        ureq::Error::Timeout(_) => "timeout",
        ureq::Error::HostNotFound => "dns",
        ureq::Error::ConnectionFailed => "connect",
        ureq::Error::Io(io) => match io.kind() {
            ErrorKind::TimedOut | ErrorKind::WouldBlock => "timeout",
            ErrorKind::ConnectionRefused => "connect",
            ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe => {
                "reset"
            }
            ErrorKind::UnexpectedEof => "closed",
            _ => "io",
        },
        ureq::Error::BadUri(_) => "bad-url",
        ureq::Error::Protocol(_) | ureq::Error::Http(_) => "protocol",
        ureq::Error::BodyExceedsLimit(_) | ureq::Error::LargeResponseHeader(..) => "too-large",
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) => "tls",
        e if crate::fetch::dns::is_refused(e) => crate::fetch::private::KIND,
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    /// Serves one connection: records the request head, answers with `response`.
    fn serve_once(response: &'static [u8]) -> (String, std::thread::JoinHandle<Vec<u8>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut seen = Vec::new();
            let mut buf = [0u8; 1024];
            while !seen.ends_with(b"\r\n\r\n") {
                let n = socket.read(&mut buf).unwrap();
                assert!(n > 0, "connection closed mid-request: {seen:?}");
                seen.extend_from_slice(&buf[..n]);
            }
            socket.write_all(response).unwrap();
            seen
        });
        (format!("http://{addr}"), server)
    }

    fn fetcher(user_agent: &str) -> Fetcher {
        Fetcher::new(&FetchConfig {
            user_agent: user_agent.into(),
            timeout: Duration::from_secs(10),
            max_body: 1 << 20,
            host_connections: 1,
            body: BodyRule::default(),
            addresses: AddressPolicy::new(&[url::Url::parse("http://127.0.0.1/").unwrap()], false),
        })
    }

    #[test]
    fn request_head_is_what_ureq_sends() {
        for (ua, path) in [("crawl-test/1.0 (+x)", "/a/b?x=1&y"), ("", "/")] {
            let (base, server) = serve_once(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nhi",
            );
            let fetched = fetcher(ua).get(&format!("{base}{path}")).unwrap();
            let sent = server.join().unwrap();
            assert_eq!(
                String::from_utf8_lossy(&fetched.request_head),
                String::from_utf8_lossy(&sent)
            );
            assert_eq!(fetched.body, b"hi");
            assert_eq!(fetched.final_url, None);
        }
        // A recrawl's conditional request: the extra headers are reconstructed where ureq puts
        // them.
        let (base, server) = serve_once(b"HTTP/1.1 304 Not Modified\r\nConnection: close\r\n\r\n");
        let extra = [
            ("if-none-match", "\"v1\"".to_owned()),
            (
                "if-modified-since",
                "Sat, 01 Nov 2026 00:00:00 GMT".to_owned(),
            ),
        ];
        let fetched = fetcher("t/1")
            .get_conditional(&format!("{base}/p"), &extra)
            .unwrap();
        let sent = server.join().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&fetched.request_head),
            String::from_utf8_lossy(&sent)
        );
        assert_eq!(fetched.status, 304);
    }

    #[test]
    fn response_head_keeps_header_order_and_renames_transfer_encoding() {
        let (base, server) = serve_once(
            b"HTTP/1.1 404 Whatever\r\nX-Zeta: 1\r\nTransfer-Encoding: chunked\r\nX-Alpha: 2\r\n\
              Connection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        );
        let fetched = fetcher("t").get(&format!("{base}/")).unwrap();
        server.join().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&fetched.response_head),
            "HTTP/1.1 404 Not Found\r\nx-zeta: 1\r\nX-Crawl-Transfer-Encoding: chunked\r\n\
             x-alpha: 2\r\nconnection: close\r\n\r\n"
        );
        assert_eq!(fetched.body, b"hello", "chunked framing removed");
        assert_eq!(fetched.ip, Some(IpAddr::from([127, 0, 0, 1])));
        let age = SystemTime::now().duration_since(fetched.started).unwrap();
        assert!(age < Duration::from_secs(10));
    }
}
