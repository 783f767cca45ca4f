//! Fetching one URL over HTTP(S) with ureq: bounded in time and size, redirects not followed.
//!
//! Every timeout ureq has is off by default, so each is set. 4xx/5xx responses are data, not
//! errors. A 3xx comes back as itself: its Location is a discovered URL that goes through the
//! filter and the DUE like a link. The body is kept as the server sent it (content-encoding
//! intact, for the archive); `decoded_body` inflates a copy for link extraction, under the same
//! size cap so a gzip bomb costs no more than a large page.
//!
//! For the archive, a response also carries what went over the wire around the body: the
//! request head as ureq sent it (copied from the connection as it is written, inside TLS and
//! any proxy tunnel, so `--header` values and cookies are in it exactly as sent), the response head (status line from the version and the canonical reason phrase,
//! ureq keeps no other; headers in the order received, names as ureq gives them, lower-case),
//! the time the request started and the address the host name resolved to.
//!
//! Request options: `--header`s go on every request; the one `CookieJar` (`cookies`) adds its
//! `Cookie` header and keeps what `Set-Cookie` sends; the proxy (`--proxy`, or ureq's reading of
//! `ALL_PROXY`/`HTTPS_PROXY`/`HTTP_PROXY` and `NO_PROXY`) and the TLS roots (`--ca-cert`,
//! `--insecure`) are the agent template's, so every host's agent has them.

use crate::fetch::body::{BodyRule, Skipped};
use crate::fetch::cookies::CookieJar;
use crate::fetch::dns::CachingResolver;
use crate::fetch::private::AddressPolicy;
use crate::lru::Lru;
use std::cell::{Cell, RefCell};
use std::io::Read;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use ureq::ResponseExt;
use ureq::http::Uri;
use ureq::tls::{Certificate, RootCerts, TlsConfig};
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::Buffers;
use ureq::unversioned::transport::{ConnectionDetails, Connector, NextTimeout, Transport};

/// The Accept-Encoding every request sends: bodies stay encoded, for the archive.
const ACCEPT_ENCODING: &str = "gzip, deflate";

/// Fetcher settings from the command line.
#[derive(Clone)]
pub struct FetchConfig {
    /// The `User-Agent` header sent with every request.
    pub user_agent: String,
    /// `--header`s, validated, sent with every request after ureq's own.
    pub headers: Vec<(String, String)>,
    /// The jar of `--load-cookies` / `--cookie-jar`; `None` sends no cookies and keeps none.
    pub cookies: Option<Arc<CookieJar>>,
    /// The proxy every request goes through (`--proxy`, or the environment's); `None` for none.
    pub proxy: Option<ureq::Proxy>,
    /// `--insecure`: certificates are not checked.
    pub insecure: bool,
    /// `--ca-cert`: roots trusted besides Mozilla's.
    pub extra_roots: Vec<Certificate<'static>>,
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
    headers: Vec<(String, String)>,
    cookies: Option<Arc<CookieJar>>,
    body_rule: BodyRule,
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

/// The one connector (TCP, a proxy if any, then rustls with its root store built once;
/// `fetch::proxy::connector`) every agent uses; each connection it makes is wrapped in
/// `Recording`, except the connection to a CONNECT proxy under the tunnel: what goes through
/// it is the CONNECT head and then the request again (as ciphertext for https), and the
/// tunnel on top is recorded already.
#[derive(Clone, Debug)]
struct SharedConnector {
    chain: Arc<dyn Connector<Out = Box<dyn Transport>>>,
    /// The proxy's URI, if any.
    proxy: Option<Uri>,
}

impl Connector for SharedConnector {
    type Out = Box<dyn Transport>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<()>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        let connection = self.chain.connect(details, chained)?;
        // `fetch::proxy::ConnectTunnel` connects to the proxy with the agents' settings
        // without the proxy; a fetch's own settings always have it.
        let to_proxy = details.config.proxy().is_none() && self.proxy.as_ref() == Some(details.uri);
        Ok(match to_proxy {
            true => connection,
            false => connection
                .map(|inner| Box::new(Recording(inner, RESOLVED.get())) as Box<dyn Transport>),
        })
    }
}

/// Longest request head kept for the archive: ours are a few hundred bytes, a long `--header`
/// or cookie a few KiB.
const MAX_SENT_HEAD: usize = 64 * 1024;

thread_local! {
    /// The bytes of the request head the last request on this thread wrote (see `Recording`).
    static SENT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A connection that copies what the request writes into `SENT`: the plain text, since it
/// wraps the outermost transport (TLS and any proxy tunnel are inside it). A GET has no body,
/// so everything written is the head; a write after a complete head starts the next request's
/// (a robots.txt redirect), so `SENT` ends up holding the last request's head.
///
/// It also keeps the address its connection was made to (`RESOLVED` when it was made: none
/// when a proxy resolved) and sets `RESOLVED` to it whenever a request is written, so a request
/// on a reused connection, for which nothing is resolved, still has its WARC-IP-Address.
#[derive(Debug)]
struct Recording(Box<dyn Transport>, Option<IpAddr>);

impl Transport for Recording {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.0.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let written = &self.0.buffers().output()[..amount];
        RESOLVED.set(self.1);
        SENT.with_borrow_mut(|sent| {
            if sent.ends_with(b"\r\n\r\n") {
                sent.clear();
            }
            let room = MAX_SENT_HEAD.saturating_sub(sent.len());
            sent.extend_from_slice(&written[..amount.min(room)]);
        });
        self.0.transmit_output(amount, timeout)
    }

    fn maybe_await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.0.maybe_await_input(timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.0.await_input(timeout)
    }

    fn is_open(&mut self) -> bool {
        self.0.is_open()
    }

    fn is_tls(&self) -> bool {
        self.0.is_tls()
    }
}

/// The TLS settings: Mozilla's roots plus `--ca-cert`'s, or no checks with `--insecure`.
fn tls_config(config: &FetchConfig) -> TlsConfig {
    let roots = match config.extra_roots.is_empty() {
        true => RootCerts::WebPki,
        false => webpki_root_certs::TLS_SERVER_ROOT_CERTS
            .iter()
            .map(|der| Certificate::from_der(der.as_ref()))
            .chain(config.extra_roots.iter().cloned())
            .into(),
    };
    TlsConfig::builder()
        .root_certs(roots)
        .disable_verification(config.insecure)
        .build()
}

impl Fetcher {
    /// Builds the client from `config`; connections are made as hosts are first fetched.
    pub fn new(config: &FetchConfig) -> Fetcher {
        let template = |proxy: Option<ureq::Proxy>| {
            ureq::Agent::config_builder()
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
                .proxy(proxy)
                .tls_config(tls_config(config))
                .build()
        };
        // The connection to a CONNECT proxy itself is made with the same settings, no proxy.
        let direct = template(None);
        let template = template(config.proxy.clone());
        let mut resolver = CachingResolver::new(config.addresses.clone());
        if let Some(proxy) = template.proxy() {
            // The proxy (from the environment) is the user's choice, private or not.
            resolver.exempt(&format!("{}:{}", proxy.host(), proxy.port()));
        }
        Fetcher {
            agents: HostAgents {
                template,
                connector: SharedConnector {
                    chain: crate::fetch::proxy::connector(direct, &config.user_agent),
                    proxy: config.proxy.as_ref().map(|p| p.uri().clone()),
                },
                resolver: RecordingResolver(Arc::new(resolver)),
                idle: Mutex::new(Lru::new(IDLE_HOSTS)),
            },
            max_body: config.max_body,
            headers: config.headers.clone(),
            cookies: config.cookies.clone(),
            body_rule: config.body.clone(),
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
        SENT.with_borrow_mut(Vec::clear);
        let agent = self.agents.agent_for(url);
        let mut request = agent.get(url);
        if redirects > 0 {
            request = request.config().max_redirects(redirects).build();
        }
        for (name, value) in extra {
            request = request.header(*name, value.as_str());
        }
        // A `--header 'Cookie: …'` and the jar's cookies go in one header (RFC 6265 §5.4).
        let jar = self.cookies.as_ref().and_then(|jar| jar.header_for(url));
        let mut cookie = None;
        for (name, value) in &self.headers {
            match &jar {
                Some(_) if name.eq_ignore_ascii_case("cookie") => {
                    cookie = Some(match cookie {
                        Some(before) => format!("{before}; {value}"),
                        None => value.clone(),
                    });
                }
                _ => request = request.header(name.as_str(), value.as_str()),
            }
        }
        if let Some(value) = match (cookie, jar) {
            (Some(own), Some(jar)) => Some(format!("{own}; {jar}")),
            (own, jar) => own.or(jar),
        } {
            request = request.header("cookie", value);
        }
        let response = request
            .call()
            .map_err(|e| fail(error_kind(&e), e.to_string()))?;
        let ip = RESOLVED.take();
        let status = response.status().as_u16();
        let uri = response.get_uri();
        let final_url = (uri != url).then(|| uri.to_string());
        if let Some(jar) = &self.cookies {
            let set = response.headers().get_all(ureq::http::header::SET_COOKIE);
            jar.remember(&uri.to_string(), set.iter().filter_map(|v| v.to_str().ok()));
        }
        let request_head = SENT.take();
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
        if !is_proxy_lookup(uri, config) {
            RESOLVED.set(addrs.first().map(|a| a.ip()));
        }
        Ok(addrs)
    }
}

/// Whether a look-up of `uri` is of the proxy's own address (ureq resolves the proxy through
/// the same resolver), not of a page's host: it is not the page's WARC-IP-Address (a proxy's
/// target is, as every proxy resolves here unless `--allow-private`: `fetch::proxy`).
fn is_proxy_lookup(uri: &Uri, config: &ureq::config::Config) -> bool {
    config.proxy().is_some_and(|p| p.uri() == uri)
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
/// `io`, `bad-url`, `protocol` (not HTTP), `too-large` (a head over 64 KiB), `tls` (a handshake
/// failed: a certificate refused, say), `private-address` (the address is refused:
/// `fetch::private`), `other`.
fn error_kind(e: &ureq::Error) -> &'static str {
    use std::io::ErrorKind;
    match e {
        ureq::Error::Timeout(_) => "timeout",
        ureq::Error::HostNotFound => "dns",
        ureq::Error::ConnectionFailed => "connect",
        ureq::Error::Io(io) if io.get_ref().is_some_and(|e| e.is::<rustls::Error>()) => "tls",
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

    /// Reads one request head (a GET has no body) off `socket`.
    fn read_head(socket: &mut std::net::TcpStream) -> Vec<u8> {
        let mut seen = Vec::new();
        let mut buf = [0u8; 1024];
        while !seen.ends_with(b"\r\n\r\n") {
            let n = socket.read(&mut buf).unwrap();
            assert!(n > 0, "connection closed mid-request: {seen:?}");
            seen.extend_from_slice(&buf[..n]);
        }
        seen
    }

    /// Serves one connection: records the request head, answers with `response`.
    fn serve_once(response: &'static [u8]) -> (String, std::thread::JoinHandle<Vec<u8>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let seen = read_head(&mut socket);
            socket.write_all(response).unwrap();
            seen
        });
        (format!("http://{addr}"), server)
    }

    fn config(user_agent: &str) -> FetchConfig {
        FetchConfig {
            user_agent: user_agent.into(),
            headers: Vec::new(),
            cookies: None,
            proxy: None,
            insecure: false,
            extra_roots: Vec::new(),
            timeout: Duration::from_secs(10),
            max_body: 1 << 20,
            host_connections: 1,
            body: BodyRule::default(),
            addresses: AddressPolicy::new(&[url::Url::parse("http://127.0.0.1/").unwrap()], false),
        }
    }

    fn fetcher(user_agent: &str) -> Fetcher {
        Fetcher::new(&config(user_agent))
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
    fn a_reused_connection_keeps_its_address() {
        // One connection, two requests on it: nothing is resolved for the second, yet it has
        // the address (WARC-IP-Address) of the connection it went over.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            for _ in 0..2 {
                read_head(&mut socket);
                socket
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
                    .unwrap();
            }
        });
        let fetcher = fetcher("t/1");
        for path in ["/a", "/b"] {
            let fetched = fetcher.get(&format!("http://{addr}{path}")).unwrap();
            assert_eq!(fetched.ip, Some(addr.ip()), "{path}");
        }
        server.join().unwrap();
    }

    #[test]
    fn headers_and_cookies_are_sent_and_recorded_as_sent() {
        let dir = tempfile::tempdir().unwrap();
        let jar_file = dir.path().join("jar.txt");
        std::fs::write(
            &jar_file,
            "127.0.0.1\tFALSE\t/\tFALSE\t0\tfrom_file\tf1\n\
             127.0.0.1\tFALSE\t/elsewhere\tFALSE\t0\tnot_here\tx\n",
        )
        .unwrap();
        let jar = Arc::new(CookieJar::open(Some(&jar_file), None).unwrap());
        let fetcher = Fetcher::new(&FetchConfig {
            headers: vec![
                ("X-Token".into(), "secret 1".into()),
                ("User-Agent".into(), "mine/2".into()),
                ("Cookie".into(), "own=1".into()),
                ("cookie".into(), "own=2".into()),
            ],
            cookies: Some(Arc::clone(&jar)),
            ..config("crawl-test/1.0")
        });
        let (base, server) = serve_once(
            b"HTTP/1.1 200 OK\r\nSet-Cookie: session=s2; Path=/\r\nContent-Length: 0\r\n\
              Connection: close\r\n\r\n",
        );
        let fetched = fetcher.get(&format!("{base}/a")).unwrap();
        let sent = String::from_utf8(server.join().unwrap()).unwrap();
        assert_eq!(String::from_utf8_lossy(&fetched.request_head), sent);
        assert!(sent.contains("\r\nx-token: secret 1\r\n"), "{sent}");
        assert!(sent.contains("\r\nuser-agent: mine/2\r\n"), "{sent}");
        assert!(
            !sent.contains("crawl-test"),
            "--header's User-Agent replaces ours: {sent}"
        );
        assert!(
            sent.contains("\r\ncookie: own=1; own=2; from_file=f1\r\n"),
            "{sent}"
        );
        assert_eq!(sent.matches("cookie:").count(), 1, "{sent}");
        // The cookie the server set goes back on the next request, with the file's.
        let (base, server) =
            serve_once(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        let fetched = fetcher.get(&format!("{base}/b")).unwrap();
        let sent = String::from_utf8(server.join().unwrap()).unwrap();
        assert_eq!(String::from_utf8_lossy(&fetched.request_head), sent);
        assert!(
            sent.contains("\r\ncookie: own=1; own=2; from_file=f1; session=s2\r\n"),
            "{sent}"
        );
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
