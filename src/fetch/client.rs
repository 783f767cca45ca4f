//! Fetching one URL over HTTP(S) with our own HTTP/1.1 client: bounded in time and size,
//! redirects not followed.
//!
//! A request goes over a kept connection to its origin (`pool`) or a new one: the name
//! resolved and checked (`dns`, `private`), TCP, a proxy's tunnel if any (`proxy`), TLS for
//! `https` (`tls`). One request per connection at a time, keep-alive (`conn`). A request that
//! fails on a reused connection before any byte of the response (the server closed it while it
//! was idle, or answered with bytes that are not HTTP) is sent once more on a fresh connection,
//! and never a third time. A kept connection is taken only when quiet (`pool`).
//!
//! 4xx/5xx responses are data, not errors. A 3xx comes back as itself: its Location is a
//! discovered URL that goes through the filter and the DUE like a link (robots.txt alone
//! follows redirects). The body is kept as the server sent it (content-encoding intact, for
//! the archive; only the chunked framing is removed); `decoded_body` decodes a copy for link
//! extraction (transfer codings under `chunked`, then gzip, deflate, br, zstd content codings),
//! under the same size cap so a compression bomb costs no more than a large page.
//!
//! For the archive, a response carries what went over the wire around the body: the request
//! head as written (`--header` values and cookies exactly as sent), the response head exactly
//! as received (status line, header names and order as the server wrote them; only a
//! `Transfer-Encoding` whose chunked framing was removed is renamed
//! `X-Crawl-Transfer-Encoding`, so a reader does not de-chunk the body again), the time the
//! request started and the address connected to.
//!
//! Request options: `--header`s go on every request (one named like ours, `User-Agent` say,
//! replaces ours); the one `CookieJar` (`cookies`) adds its `Cookie` header and keeps what
//! `Set-Cookie` sends; the proxy (`--proxy`, or the environment's) and the TLS roots
//! (`--ca-cert`, `--insecure`) are the fetcher's.

use crate::fetch::body::{BodyRule, Skipped};
use crate::fetch::conn::{After, Connection, Framing, Head, Headers, LowSpeed, PER_READ, Stream};
use crate::fetch::cookies::CookieJar;
use crate::fetch::dns::{Addrs, CachingResolver, Lookup, Notify, Resolution, unbracketed};
use crate::fetch::error::{ErrorKind, Fail};
use crate::fetch::pool::{ConnectionEvents, Pool};
use crate::fetch::private::AddressPolicy;
use crate::fetch::proxy::{Protocol, Proxy, Target};
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, HandshakeKind, StreamOwned};
use std::io::Read;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use url::Url;

/// The Accept-Encoding every request sends: bodies stay encoded, for the archive (each coding
/// is decoded for link extraction, `decoded_body`). `br` is asked for: at servers' levels it
/// takes 5–23 % fewer bytes than gzip on the wire and so in the archive, for no more decoding
/// CPU (BENCHMARKS.md, issue 29). `zstd` is decoded when sent but not asked for.
const ACCEPT_ENCODING: &str = "gzip, deflate, br";
/// Longest wait for a TCP connection to open, whatever time the request has left.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Fetcher settings from the command line.
#[derive(Clone)]
pub struct FetchConfig {
    /// The `User-Agent` header sent with every request.
    pub user_agent: String,
    /// `--header`s, validated, sent with every request after ours.
    pub headers: Vec<(String, String)>,
    /// The jar of `--load-cookies` / `--cookie-jar`; `None` sends no cookies and keeps none.
    pub cookies: Option<Arc<CookieJar>>,
    /// The proxy every request goes through (`--proxy`, or the environment's); `None` for none.
    pub proxy: Option<Proxy>,
    /// `--insecure`: certificates are not checked.
    pub insecure: bool,
    /// `--ca-cert`: roots trusted besides Mozilla's.
    pub extra_roots: Vec<CertificateDer<'static>>,
    /// TLS sessions are resumed on later connections to a server (off: `--no-tls-resume`).
    pub tls_resume: bool,
    /// Whole-request limit (connect, headers and body).
    pub timeout: Duration,
    /// `--low-speed-limit` over `--low-speed-time`: a response slower than this is given up.
    pub low_speed: LowSpeed,
    /// Bytes of body kept; the rest is cut off and the page noted `truncated`.
    pub max_body: u64,
    /// Requests a host may have in flight at once (`--host-connections`): idle connections
    /// kept per host.
    pub host_connections: usize,
    /// Hosts whose idle connections are kept (`idle_hosts`).
    pub idle_hosts: usize,
    /// `--idle-timeout`: a kept connection unused this long is closed (`pool`).
    pub idle_timeout: Duration,
    /// Which response bodies are read (`--accept-type`, `--reject-type`, `--keep-truncated`).
    pub body: BodyRule,
    /// Which addresses may be connected to (`--allow-private`, the seeds).
    pub addresses: AddressPolicy,
}

impl FetchConfig {
    /// Settings for the tests' loopback servers: no extra headers, cookies or proxy, a 10 s
    /// request limit, 1 MiB bodies, one connection per host, 127.0.0.1 opened as a seed would.
    pub fn loopback(user_agent: &str) -> FetchConfig {
        let loopback = Url::parse("http://127.0.0.1/").expect("a valid URL");
        FetchConfig {
            user_agent: user_agent.into(),
            headers: Vec::new(),
            cookies: None,
            proxy: None,
            insecure: false,
            extra_roots: Vec::new(),
            tls_resume: true,
            timeout: Duration::from_secs(10),
            low_speed: LowSpeed::DEFAULT,
            max_body: 1 << 20,
            host_connections: 1,
            idle_hosts: MIN_IDLE_HOSTS,
            idle_timeout: crate::fetch::pool::IDLE_TIMEOUT,
            body: BodyRule::default(),
            addresses: AddressPolicy::new(&[loopback], false),
        }
    }
}

/// A reactor job's name still being looked up, and how the job fails once the addresses come
/// (a host that is no TLS server name: the blocking client meets that after the addresses).
pub(crate) struct Unresolved {
    lookup: Lookup,
    then: Result<(), Fail>,
}

impl Unresolved {
    /// Whether the look-up answered; if not, `notify` is called (on the look-up's thread) once
    /// it does.
    pub(crate) fn answered_or_notify(&self, notify: Notify) -> bool {
        self.lookup.answered_or_notify(notify)
    }

    /// The job's failure when its look-up took all of its `timeout`, as a fetch that waits
    /// for the answer words it.
    pub(crate) fn timed_out(&self, timeout: Duration) -> Fail {
        self.lookup.timed_out(timeout)
    }
}

/// Open files kept aside from connections: the state directory's files, the WARC, the logs.
pub const RESERVED_FILES: u64 = 256;
/// Hosts whose idle connections are kept at least, however few the workers.
pub const MIN_IDLE_HOSTS: usize = 128;
/// Hosts whose idle connections are kept at most (an idle plain connection costs a socket and
/// about 200 bytes here: its read buffer is lent back to the thread while it is idle): as many
/// as may hold a queue (`dispatch::MAX_HOST_SLOTS`).
pub const MAX_IDLE_HOSTS: usize = 32_768;

/// Hosts whose idle connections are kept for a crawl of `jobs` requests in flight: the open
/// files left once those and the state directory's (`RESERVED_FILES`) are set
/// aside, at most `MAX_IDLE_HOSTS`, and never fewer than `max(2 × jobs, MIN_IDLE_HOSTS)`. The
/// scheduler cycles through all hosts with work, each resting between its requests, so a pool
/// smaller than their number is an LRU that always misses (BENCHMARKS.md): every request after
/// a rest would open a connection again, at the cost of a connect and a close on both sides.
pub fn idle_hosts(jobs: usize) -> usize {
    let files = crate::sys::open_files_limit().unwrap_or(u64::MAX);
    let left = files.saturating_sub(RESERVED_FILES + jobs as u64);
    let left = usize::try_from(left).unwrap_or(usize::MAX);
    left.min(MAX_IDLE_HOSTS).max(2 * jobs).max(MIN_IDLE_HOSTS)
}

/// A response, as received.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// The headers in the order received, names as the server wrote them.
    pub headers: Headers,
    pub body: Vec<u8>,
    /// The body was longer than `max_body` and was cut there.
    pub truncated: bool,
    /// The body was not read at all (its headers said so): `body` is empty.
    pub skipped: Option<Skipped>,
    pub elapsed: Duration,
    /// When the request started (wall clock, for WARC-Date).
    pub started: SystemTime,
    /// When the whole response had arrived: its host's rest counts from here, not from when
    /// a thread got to process it (the event loop's answers may wait for one). `None` for a
    /// response read back from an archive.
    pub answered: Option<Instant>,
    /// The address the request went to; `None` when a proxy resolved the name.
    pub ip: Option<IpAddr>,
    /// The URL the response came from when redirects were followed to get it (robots.txt only).
    pub final_url: Option<String>,
    /// The request line and headers as sent, ending with the empty line.
    pub request_head: Vec<u8>,
    /// The status line and headers as received, ending with the empty line (see the module
    /// doc for `X-Crawl-Transfer-Encoding`).
    pub response_head: Vec<u8>,
}

/// Why a fetch produced no response: `kind` is what went wrong (its word is the URL log's
/// note), `message` the details for a person, `elapsed` the time spent until it failed.
#[derive(Debug)]
pub struct FetchError {
    pub kind: ErrorKind,
    pub message: String,
    pub elapsed: Duration,
}

impl Fail {
    /// The fetch's error, `start` being when its first request was sent.
    pub(crate) fn into_error(self, start: Instant) -> FetchError {
        FetchError {
            kind: self.kind,
            message: self.message,
            elapsed: start.elapsed(),
        }
    }
}

/// `url` parsed, or the `bad-url` failure a fetch of it ends with.
pub fn parse(url: &str) -> Result<Url, FetchError> {
    Url::parse(url).map_err(|e| FetchError {
        kind: ErrorKind::BadUrl,
        message: e.to_string(),
        elapsed: Duration::ZERO,
    })
}

/// A reusable HTTP client shared by all workers: connections kept per origin.
pub struct Fetcher {
    pool: Pool,
    resolver: Arc<CachingResolver>,
    tls: Arc<ClientConfig>,
    proxy: Option<Proxy>,
    user_agent: String,
    timeout: Duration,
    low_speed: LowSpeed,
    max_body: u64,
    headers: Vec<(String, String)>,
    cookies: Option<Arc<CookieJar>>,
    body_rule: BodyRule,
}

/// A page's GET sent ahead on a kept connection (`Fetcher::send_ahead`), its response not
/// read yet (`Fetcher::finish`). Dropped unfinished, it closes the connection.
pub struct Sent {
    url: Url,
    origin: String,
    conn: Connection,
    request_head: Vec<u8>,
    start: Instant,
    started: SystemTime,
}

/// An http(s) URL's host, port and origin (`scheme://host:port`, the pool's key).
fn origin_of(url: &Url) -> Result<(&str, u16, String), Fail> {
    match (url.scheme(), url.host_str(), url.port_or_known_default()) {
        ("http" | "https", Some(host), Some(port)) if !host.is_empty() => {
            // The pool's key, a request's: built without `fmt`.
            let mut digits = itoa::Buffer::new();
            let origin = [url.scheme(), "://", host, ":", digits.format(port)].concat();
            Ok((host, port, origin))
        }
        _ => Err(Fail::new(
            ErrorKind::BadUrl,
            format!("not an http(s) URL: {url}"),
        )),
    }
}

/// Redirects a robots.txt's fetch follows (RFC 9309 §2.3.1.2: at least five).
pub const ROBOTS_REDIRECTS: u32 = 5;

/// Where `response`, from `url`, redirects to, if it is a redirect to follow after `followed`
/// of at most `max`.
pub fn redirect_target(url: &Url, response: &Response, followed: u32, max: u32) -> Option<Url> {
    (followed < max)
        .then(|| location(url, response.status, response.header("location")))
        .flatten()
}

/// The http(s) URL a 3xx from `current` leads to: its `Location`, resolved.
fn location(current: &Url, status: u16, location: Option<&str>) -> Option<Url> {
    (300..400)
        .contains(&status)
        .then_some(location)
        .flatten()
        .and_then(|to| current.join(to).ok())
        .filter(|to| matches!(to.scheme(), "http" | "https"))
}

/// How long a response took: from its (last hop's) request sent until its last bytes arrived,
/// by the kernel's stamp when the socket has one (`conn::last_round_trip`), else since `start`
/// (the fetch's beginning, connect included); never longer than the latter. A worker that
/// waited for a busy CPU before reading does not lengthen its host's rest (ten times this).
fn elapsed_until_arrival(start: Instant) -> Duration {
    let elapsed = start.elapsed();
    crate::fetch::conn::last_round_trip()
        .filter(|took| *took <= elapsed)
        .unwrap_or(elapsed)
}

/// A response as read on one connection (one hop of a redirect chain), with the request head
/// sent: a `Response` but for when it started, how long it took and where redirects led.
pub(crate) struct RawResponse {
    head: Head,
    body: Vec<u8>,
    truncated: bool,
    skipped: Option<Skipped>,
    ip: Option<IpAddr>,
    request_head: Vec<u8>,
}

impl RawResponse {
    /// The response of a request (not redirected) sent at `started`, that took `elapsed` and
    /// arrived at `arrived` (now, if not known).
    pub(crate) fn into_response_took(
        self,
        request_head: Vec<u8>,
        (started, elapsed): (SystemTime, Duration),
        arrived: Option<Instant>,
    ) -> Response {
        Response {
            status: self.head.status,
            final_url: None,
            response_head: self.head.raw,
            headers: self.head.headers,
            body: self.body,
            truncated: self.truncated,
            skipped: self.skipped,
            elapsed,
            started,
            answered: Some(arrived.map_or_else(Instant::now, |at| at.min(Instant::now()))),
            ip: self.ip,
            request_head,
        }
    }

    /// The response, `start` and `started` being when its request (the first of a redirect
    /// chain) was sent.
    fn into_response(
        self,
        final_url: Option<String>,
        start: Instant,
        started: SystemTime,
    ) -> Response {
        Response {
            status: self.head.status,
            final_url,
            response_head: self.head.raw,
            headers: self.head.headers,
            body: self.body,
            truncated: self.truncated,
            skipped: self.skipped,
            elapsed: elapsed_until_arrival(start),
            started,
            answered: Some(Instant::now()),
            ip: self.ip,
            request_head: self.request_head,
        }
    }
}

impl Fetcher {
    /// Builds the client from `config`; connections are made as hosts are first fetched.
    pub fn new(config: &FetchConfig) -> Fetcher {
        Fetcher::with_resolver(config, CachingResolver::new(config.addresses.clone()))
    }

    /// `new`, names resolved by `resolver` (a test's may hold its answers).
    pub(crate) fn with_resolver(config: &FetchConfig, mut resolver: CachingResolver) -> Fetcher {
        if let Some(proxy) = &config.proxy {
            // The proxy is the user's choice, private or not.
            resolver.exempt(&proxy.authority());
        }
        Fetcher {
            pool: Pool::new(
                config.idle_hosts,
                config.host_connections,
                config.idle_timeout,
            ),
            resolver: Arc::new(resolver),
            tls: crate::fetch::tls::client_config(
                &config.extra_roots,
                config.insecure,
                match config.tls_resume {
                    true => config.idle_hosts,
                    false => 0,
                },
            ),
            proxy: config.proxy.clone(),
            user_agent: config.user_agent.clone(),
            timeout: config.timeout,
            low_speed: config.low_speed,
            max_body: config.max_body,
            headers: config.headers.clone(),
            cookies: config.cookies.clone(),
            body_rule: config.body.clone(),
        }
    }

    /// What resolves a host's name as soon as the scheduler knows the host (`fetch::dns`);
    /// None when a proxy resolves the names.
    pub fn resolver_ahead(&self) -> Option<crate::fetch::dns::HostAhead> {
        if self.proxy.as_ref().is_some_and(|p| !p.resolve_target) {
            return None;
        }
        self.resolver.ahead_hook()
    }

    /// Connections closed for what their servers did (summary.json).
    pub fn events(&self) -> &ConnectionEvents {
        &self.pool.events
    }

    /// The idle connections, shared with the reactor (which makes a kept one non-blocking,
    /// and a thread that blocks makes it blocking again: `blocking_take`).
    pub(crate) fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The slowest a response may come (`--low-speed-limit`, `--low-speed-time`).
    pub(crate) fn low_speed(&self) -> LowSpeed {
        self.low_speed
    }

    /// A kept connection to `origin` for a thread that blocks.
    fn blocking_take(&self, origin: &str) -> Option<Connection> {
        let mut conn = self.pool.take(origin)?;
        conn.set_blocking().ok()?;
        Some(conn)
    }

    /// A GET of `url` for the reactor (`fetch::reactor`): None when it is not HTTP(S)
    /// straight to its server (through a proxy: those block a thread as before); else the
    /// job, or the failure that ends the fetch before anything is sent. Never waits: the
    /// name's addresses, when known (an IP literal, the cache the look-ahead resolver fills),
    /// are checked against the policy here; else the job carries the look-up, started or
    /// joined (`dns::CachingResolver::resolve_or_start`), and the loop checks its answer.
    pub fn reactor_job<T>(
        &self,
        token: T,
        url: Url,
        extra: &[(&'static str, String)],
        filtered: bool,
    ) -> Option<Result<crate::fetch::reactor::Job<T>, (T, Url, FetchError)>> {
        let https = match url.scheme() {
            "http" => false,
            "https" => true,
            _ => return None,
        };
        let name = unbracketed(url.host_str()?);
        if self.proxy.as_ref().is_some_and(|p| !p.bypassed_for(name)) {
            return None;
        }
        let start = Instant::now();
        let started = SystemTime::now();
        let deadline = start + self.timeout;
        let prepared = origin_of(&url).and_then(|(host, port, origin)| {
            // Checked after the addresses, as the blocking client meets them.
            let tls = https.then(|| tls_name(unbracketed(host))).transpose();
            match self.resolver.resolve_or_start(host, port) {
                Resolution::Now(addrs) => Ok((origin, addrs?, None, tls?)),
                Resolution::Coming(lookup) => {
                    let (tls, then) = match tls {
                        Ok(tls) => (tls, Ok(())),
                        Err(fail) => (None, Err(fail)),
                    };
                    let unresolved = Unresolved { lookup, then };
                    Ok((origin, Addrs::from([]), Some(unresolved), tls))
                }
            }
        });
        let (origin, addrs, unresolved, tls) = match prepared {
            Ok(prepared) => prepared,
            Err(f) => return Some(Err((token, url, f.into_error(start)))),
        };
        let request_head = self.request_head(&url, extra);
        Some(Ok(crate::fetch::reactor::Job {
            token,
            url,
            origin,
            addrs,
            unresolved,
            tls,
            request_head,
            filtered,
            start,
            started,
            deadline,
        }))
    }

    /// The addresses of a reactor job whose look-up answered (`Unresolved::answered_or_notify`),
    /// or its failure: as `reactor_job` would have had them at once.
    pub(crate) fn resolved(&self, unresolved: Unresolved) -> Result<Addrs, Fail> {
        let addrs = self.resolver.checked(&unresolved.lookup)?;
        unresolved.then.map(|()| addrs)
    }

    /// GETs a page; a 3xx is returned as is.
    pub fn get(&self, url: &str) -> Result<Response, FetchError> {
        self.get_with(&parse(url)?, &[], 0, true)
    }

    /// GETs a page, already parsed by the caller, with extra request headers (a recrawl's
    /// `If-None-Match`, `If-Modified-Since`); a 3xx (304 included) is returned as is.
    pub fn get_conditional(
        &self,
        url: &Url,
        headers: &[(&'static str, String)],
    ) -> Result<Response, FetchError> {
        self.get_with(url, headers, 0, true)
    }

    /// GETs a robots.txt, following up to five redirects (RFC 9309 §2.3.1.2: at least five).
    /// Its body is read whatever its type (`--accept-type` is for pages).
    pub fn get_robots(&self, url: &str) -> Result<Response, FetchError> {
        self.get_with(&parse(url)?, &[], ROBOTS_REDIRECTS, false)
    }

    /// The GET, following up to `redirects` redirects; with `filtered`, the body is read only
    /// if `BodyRule` wants it (else the connection is closed after the head).
    fn get_with(
        &self,
        url: &Url,
        extra: &[(&'static str, String)],
        redirects: u32,
        filtered: bool,
    ) -> Result<Response, FetchError> {
        let start = Instant::now();
        let started = SystemTime::now();
        let deadline = start + self.timeout;
        let fail = |f: Fail| f.into_error(start);
        // The URL a redirect led to; the caller's until then.
        let mut redirected: Option<Url> = None;
        let mut hops = 0;
        loop {
            let current = redirected.as_ref().unwrap_or(url);
            let raw = self
                .exchange(current, extra, filtered, deadline)
                .map_err(fail)?;
            let location = (hops < redirects)
                .then(|| location(current, raw.head.status, raw.head.headers.get("location")))
                .flatten();
            if let Some(to) = location {
                redirected = Some(to);
                hops += 1;
                continue;
            }
            return Ok(raw.into_response(redirected.map(String::from), start, started));
        }
    }

    /// Sends a page's GET (no extra headers, no redirect followed: `get_conditional`'s with
    /// none) on the origin's kept idle connection now, for `finish` to read its response
    /// later; the server works on it meanwhile. None when no connection is kept (or the kept
    /// one fails the send): the page is then fetched as usual.
    pub fn send_ahead(&self, url: Url) -> Option<Sent> {
        let (_, _, origin) = origin_of(&url).ok()?;
        let mut conn = self.blocking_take(&origin)?;
        let (start, started) = (Instant::now(), SystemTime::now());
        let request_head = self.request_head(&url, &[]);
        conn.send(&request_head, self.low_speed).ok()?;
        Some(Sent {
            url,
            origin,
            conn,
            request_head,
            start,
            started,
        })
    }

    /// Reads the response to a request sent ahead, as `get_conditional` would have: the
    /// deadline and the elapsed time count from the send, and a kept connection found closed
    /// before answering is replaced once by a new one, the request sent again on it. Gives the
    /// URL back with the response (the worker's page URL, parsed once).
    pub fn finish(&self, sent: Sent) -> Result<(Url, Response), FetchError> {
        let Sent {
            url,
            origin,
            conn,
            request_head,
            start,
            started,
        } = sent;
        let deadline = start + self.timeout;
        let answer = self.receive_on(conn, &url, true, deadline);
        let raw = self
            .settle(answer, true, &url, origin, request_head, true, deadline)
            .map_err(|f| f.into_error(start))?;
        Ok((url, raw.into_response(None, start, started)))
    }

    /// One request and its response, over a kept connection or a new one; a kept one that
    /// turns out closed is replaced once by a new one.
    fn exchange(
        &self,
        url: &Url,
        extra: &[(&'static str, String)],
        filtered: bool,
        deadline: Instant,
    ) -> Result<RawResponse, Fail> {
        let (host, port, origin) = origin_of(url)?;
        let request_head = self.request_head(url, extra);
        let https = url.scheme() == "https";
        let kept = self.blocking_take(&origin);
        let reused = kept.is_some();
        let conn = match kept {
            Some(conn) => conn,
            None => self.connect(https, host, port, deadline)?,
        };
        let answer = self.round_trip(conn, &request_head, url, filtered, deadline);
        self.settle(
            answer,
            reused,
            url,
            origin,
            request_head,
            filtered,
            deadline,
        )
    }

    /// The response to `request_head`, given the `answer` read on the connection it was first
    /// sent on: when the server had closed that kept (`reused`) connection before answering,
    /// once more on a new one. The connection goes back to the pool when it can carry another
    /// request. Shared by a request sent now (`exchange`) and one sent ahead (`finish`).
    #[allow(clippy::too_many_arguments)]
    fn settle(
        &self,
        answer: Result<(RawResponse, Option<Connection>), Fail>,
        reused: bool,
        url: &Url,
        origin: String,
        request_head: Vec<u8>,
        filtered: bool,
        deadline: Instant,
    ) -> Result<RawResponse, Fail> {
        let (raw, conn) = match answer {
            Err(f) if f.stale && reused => {
                let (host, port, _) = origin_of(url)?;
                let conn = self.connect(url.scheme() == "https", host, port, deadline)?;
                self.round_trip(conn, &request_head, url, filtered, deadline)?
            }
            answer => answer?,
        };
        if let Some(conn) = conn {
            self.pool.put(origin, conn);
        }
        Ok(RawResponse {
            request_head,
            ..raw
        })
    }

    /// Sends the request and reads the response; the connection comes back when it can carry
    /// another request.
    fn round_trip(
        &self,
        mut conn: Connection,
        request_head: &[u8],
        url: &Url,
        filtered: bool,
        deadline: Instant,
    ) -> Result<(RawResponse, Option<Connection>), Fail> {
        conn.send(request_head, self.low_speed)?;
        self.receive_on(conn, url, filtered, deadline)
    }

    /// `receive`, the connection given back when it can carry another request.
    fn receive_on(
        &self,
        mut conn: Connection,
        url: &Url,
        filtered: bool,
        deadline: Instant,
    ) -> Result<(RawResponse, Option<Connection>), Fail> {
        let (raw, reuse) = self.receive(&mut conn, url, filtered, deadline)?;
        Ok((raw, reuse.then_some(conn)))
    }

    /// Reads the response to the request just sent on `conn`, and whether the connection can
    /// carry another request. On a non-blocking connection (`fetch::reactor`) it ends with a
    /// `Fail::pending` where it would wait; the reactor parses again from the start when more
    /// bytes came (a cookie then is remembered twice, which changes nothing).
    pub(crate) fn receive(
        &self,
        conn: &mut Connection,
        url: &Url,
        filtered: bool,
        deadline: Instant,
    ) -> Result<(RawResponse, bool), Fail> {
        let mut head = conn.read_head(deadline)?;
        if let Some(jar) = &self.cookies {
            let set = head.headers.values("set-cookie");
            jar.remember(url, set);
        }
        let framing = head.framing()?;
        let skipped = filtered
            .then(|| {
                self.body_rule
                    .skip(framing, head.headers.get("content-type"), self.max_body)
            })
            .flatten();
        let mut body = match skipped {
            None => crate::fetch::conn::spare_body(),
            Some(_) => Vec::new(),
        };
        let mut truncated = false;
        let mut after = After::Close;
        if skipped.is_none() {
            after = conn
                .read_body(&head, framing, self.max_body, deadline, &mut body)
                .map_err(|mut f| {
                    f.kind = f.kind.in_body();
                    f.message = format!(
                        "reading the body (after {} bytes): {}",
                        body.len(),
                        f.message
                    );
                    f
                })?;
            truncated = body.len() as u64 > self.max_body;
            body.truncate(self.max_body as usize);
        }
        if framing == Framing::Chunked {
            rename_transfer_encoding(&mut head.raw);
        }
        let events = &self.pool.events;
        match after {
            After::Unsolicited => ConnectionEvents::add(&events.unsolicited),
            After::Ambiguous => ConnectionEvents::add(&events.ambiguous),
            After::Reuse | After::Close => {}
        }
        let ip = conn.ip;
        let raw = RawResponse {
            head,
            body,
            truncated,
            skipped,
            ip,
            request_head: Vec::new(),
        };
        Ok((raw, after == After::Reuse))
    }

    /// The request head: the request line, `Host`, ours (`User-Agent`, `Accept`,
    /// `Accept-Encoding`) unless a `--header` of that name replaces it, `extra`, the
    /// `--header`s, and one `Cookie` with a `--header 'Cookie: …'` and the jar's cookies
    /// (RFC 6265 §5.4).
    fn request_head(&self, url: &Url, extra: &[(&'static str, String)]) -> Vec<u8> {
        let path = &url[url::Position::BeforePath..url::Position::AfterQuery];
        let path = if path.is_empty() { "/" } else { path };
        let host = &url[url::Position::BeforeHost..url::Position::AfterPort];
        let given = |name: &str| {
            self.headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(name))
        };
        let mut head = Vec::with_capacity(256);
        head.extend_from_slice(b"GET ");
        head.extend_from_slice(path.as_bytes());
        head.extend_from_slice(b" HTTP/1.1\r\n");
        let mut line = |name: &str, value: &str| {
            head.extend_from_slice(name.as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(value.as_bytes());
            head.extend_from_slice(b"\r\n");
        };
        line("Host", host);
        if !self.user_agent.is_empty() && !given("user-agent") {
            line("User-Agent", &self.user_agent);
        }
        if !given("accept") {
            line("Accept", "*/*");
        }
        if !given("accept-encoding") {
            line("Accept-Encoding", ACCEPT_ENCODING);
        }
        for (name, value) in extra {
            line(name, value);
        }
        let jar = self.cookies.as_ref().and_then(|jar| jar.header_for(url));
        let mut cookie: Option<String> = None;
        for (name, value) in &self.headers {
            match &jar {
                Some(_) if name.eq_ignore_ascii_case("cookie") => {
                    cookie = Some(match cookie {
                        Some(before) => format!("{before}; {value}"),
                        None => value.clone(),
                    });
                }
                _ => line(name, value),
            }
        }
        if let Some(value) = match (cookie, jar) {
            (Some(own), Some(jar)) => Some(format!("{own}; {jar}")),
            (own, jar) => own.or(jar),
        } {
            line("Cookie", &value);
        }
        head.extend_from_slice(b"\r\n");
        head
    }

    /// A new connection to `host:port`: directly, or through the proxy's tunnel; TLS on top for
    /// `https`. The target's address is resolved (and checked) before anything is connected
    /// to, the proxy included, unless the proxy resolves names (`--allow-private`).
    fn connect(
        &self,
        https: bool,
        host: &str,
        port: u16,
        deadline: Instant,
    ) -> Result<Connection, Fail> {
        let left = || deadline.saturating_duration_since(Instant::now());
        let name = unbracketed(host);
        let proxy = self.proxy.as_ref().filter(|p| !p.bypassed_for(name));
        let (stream, ip, wait) = match proxy {
            None => {
                let addrs = self.resolver.resolve(name, port, left())?;
                let (tcp, addr, wait) = connect_any(&addrs, deadline)?;
                crate::sys::stamp_arrivals(&tcp);
                (Stream::Tcp(tcp), Some(addr.ip()), wait)
            }
            Some(proxy) => {
                let target = match proxy.resolve_target {
                    true => {
                        let addrs = self.resolver.resolve(name, port, left())?;
                        Target::Addr(addrs[0])
                    }
                    false => Target::Name(name.to_owned(), port),
                };
                let proxy_addrs = self.resolver.resolve(&proxy.host, proxy.port, left())?;
                let (tcp, _, wait) = connect_any(&proxy_addrs, deadline)?;
                let mut stream = Stream::Tcp(tcp);
                if proxy.protocol == Protocol::Https {
                    stream = self.tls(stream, &proxy.host)?;
                }
                proxy.handshake(&mut stream, &target, &self.user_agent)?;
                let ip = match target {
                    Target::Addr(addr) => Some(addr.ip()),
                    Target::Name(..) => None,
                };
                (stream, ip, wait)
            }
        };
        let stream = match https {
            true => self.tls(stream, name)?,
            false => stream,
        };
        // The read timeout connect_any set: `conn` sets it again only when it must shrink.
        Ok(Connection::new(stream, ip, Some(wait)))
    }

    /// TLS over `stream` to `name` (SNI and the certificate check), the handshake done.
    fn tls(&self, mut stream: Stream, name: &str) -> Result<Stream, Fail> {
        let mut conn = self.tls_session(tls_name(name)?)?;
        crate::fetch::conn::drive_handshake(&mut conn, &mut stream, false)?;
        self.handshaken(conn.handshake_kind() == Some(HandshakeKind::Resumed));
        Ok(Stream::Tls(Box::new(StreamOwned::new(conn, stream))))
    }

    /// A TLS handshake completed, `resumed` a session or not: counted (summary.json).
    pub(crate) fn handshaken(&self, resumed: bool) {
        let events = &self.pool.events;
        ConnectionEvents::add(&events.tls_handshakes);
        if resumed {
            ConnectionEvents::add(&events.tls_resumed);
        }
    }

    /// A TLS session to `name` (its SNI, the name the certificate must have), with the
    /// crawl's roots (`--ca-cert`) or none checked (`--insecure`); its handshake not begun.
    pub(crate) fn tls_session(&self, name: ServerName<'static>) -> Result<ClientConnection, Fail> {
        ClientConnection::new(Arc::clone(&self.tls), name)
            .map_err(|e| Fail::new(ErrorKind::Tls, e.to_string()))
    }
}

/// `name` as a TLS server name (an address is checked as one, and sends no SNI), or the
/// `bad-url` failure.
fn tls_name(name: &str) -> Result<ServerName<'static>, Fail> {
    ServerName::try_from(name.to_owned()).map_err(|e| {
        Fail::new(
            ErrorKind::BadUrl,
            format!("{name:?} is not a TLS server name: {e}"),
        )
    })
}

/// A TCP connection to the first of `addrs` that answers, within `CONNECT_TIMEOUT` each and the
/// deadline in all; its reads and writes then time out as `conn` expects, after the returned
/// wait (the deadline's time left, at most `PER_READ`).
fn connect_any(
    addrs: &[SocketAddr],
    deadline: Instant,
) -> Result<(TcpStream, SocketAddr, Duration), Fail> {
    let mut last = Fail::new(ErrorKind::Dns, "no address");
    for addr in addrs {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Fail::new(
                ErrorKind::Timeout,
                "the request took longer than --timeout",
            ));
        }
        match TcpStream::connect_timeout(addr, left.min(CONNECT_TIMEOUT)) {
            Ok(tcp) => {
                let wait = left.min(PER_READ);
                let set = tcp
                    .set_read_timeout(Some(wait))
                    .and_then(|()| tcp.set_write_timeout(Some(wait)))
                    .and_then(|()| tcp.set_nodelay(true));
                return set
                    .map(|()| (tcp, *addr, wait))
                    .map_err(|e| Fail::io(&e, "setting up the connection"));
            }
            Err(e) => {
                let kind = match e.kind() {
                    std::io::ErrorKind::TimedOut => ErrorKind::Timeout,
                    _ => ErrorKind::Connect,
                };
                last = Fail::new(kind, format!("connecting to {addr}: {e}"));
            }
        }
    }
    Err(last)
}

/// Renames `Transfer-Encoding` to `X-Crawl-Transfer-Encoding` in a raw head, the rest of each
/// line as received (`Transfer-Encoding : chunked`, whitespace before the colon, included: the
/// parser read it as the header).
fn rename_transfer_encoding(raw: &mut Vec<u8>) {
    const NAME: &[u8] = b"transfer-encoding";
    let mut out = Vec::with_capacity(raw.len() + 16);
    for line in raw.split_inclusive(|&b| b == b'\n') {
        let named = line.len() > NAME.len()
            && line[..NAME.len()].eq_ignore_ascii_case(NAME)
            && line[NAME.len()..].trim_ascii_start().starts_with(b":");
        if named {
            out.extend_from_slice(b"X-Crawl-Transfer-Encoding");
            out.extend_from_slice(&line[NAME.len()..]);
        } else {
            out.extend_from_slice(line);
        }
    }
    *raw = out;
}

impl Response {
    /// The first value of a header (names are case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }

    /// A response not fetched but read back (from a WARC record, `crawl extract`): its status,
    /// headers, body and head as received, without timings, address or request.
    pub fn read_back(status: u16, headers: Headers, body: Vec<u8>, head: Vec<u8>) -> Response {
        Response {
            status,
            headers,
            body,
            truncated: false,
            skipped: None,
            elapsed: Duration::ZERO,
            started: SystemTime::UNIX_EPOCH,
            answered: None,
            ip: None,
            final_url: None,
            request_head: Vec::new(),
            response_head: head,
        }
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
        // `media_type` without its lower-cased copy: this runs for every page.
        let media_type = self
            .header("content-type")
            .map(|v| v.split(';').next().unwrap_or("").trim());
        match media_type.filter(|t| !t.is_empty()) {
            Some(t) => {
                t.eq_ignore_ascii_case("text/html")
                    || t.eq_ignore_ascii_case("application/xhtml+xml")
            }
            None => self.body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<'),
        }
    }

    /// The body with its codings undone, at most `cap` bytes, for link extraction: the
    /// transfer codings but `chunked` (`gzip, chunked`: the framing was removed, the gzip
    /// layer is still on), then the content codings, each last applied first undone. gzip,
    /// deflate, br (brotli) and zstd are known; a body with an unknown coding is returned as
    /// it is. Decoding streams through every layer and stops at `cap` bytes out, so a bomb
    /// costs no more than a large page; a corrupt stream yields what decoded before the damage.
    pub fn decoded_body(&self, cap: u64) -> std::borrow::Cow<'_, [u8]> {
        let codings: Vec<String> = ["content-encoding", "transfer-encoding"]
            .into_iter()
            .flat_map(|name| self.headers.values(name))
            .flat_map(|v| v.split(','))
            .map(|c| c.trim().to_ascii_lowercase())
            .filter(|c| !c.is_empty() && c != "identity" && c != "chunked")
            .collect();
        if codings.is_empty() {
            return std::borrow::Cow::Borrowed(&self.body);
        }
        match undo_codings(&self.body, &codings, cap) {
            Some(decoded) => std::borrow::Cow::Owned(decoded),
            None => std::borrow::Cow::Borrowed(&self.body),
        }
    }
}

/// `body` with `codings` undone (the last applied first), at most `cap` bytes; `None` for a
/// coding it does not know. Out of line, and each decoder built by a function of its own: a
/// decoder's state can be tens of KB, and a frame that holds it is touched whole (stack
/// probes) by every call, so built inside `decoded_body` it cost every worker's stack that
/// much memory on every page, coded or not.
#[inline(never)]
fn undo_codings(body: &[u8], codings: &[String], cap: u64) -> Option<Vec<u8>> {
    let mut reader: Box<dyn Read + '_> = Box::new(body);
    for coding in codings.iter().rev() {
        reader = match coding.as_str() {
            "gzip" | "x-gzip" => decoder::gzip(reader),
            "deflate" => decoder::zlib(reader),
            "br" => decoder::brotli(reader),
            "zstd" => match decoder::zstd(reader) {
                Some(reader) => reader,
                None => return Some(Vec::new()),
            },
            _ => return None,
        };
    }
    let mut out = Vec::new();
    // A corrupt stream still yields what was decoded before the damage.
    let _ = reader.take(cap).read_to_end(&mut out);
    Some(out)
}

/// One decoder per content coding, each built in a frame of its own (see `undo_codings`).
mod decoder {
    use std::io::Read;

    type Reader<'a> = Box<dyn Read + 'a>;

    #[inline(never)]
    pub fn gzip(reader: Reader<'_>) -> Reader<'_> {
        Box::new(flate2::read::MultiGzDecoder::new(reader))
    }

    #[inline(never)]
    pub fn zlib(reader: Reader<'_>) -> Reader<'_> {
        Box::new(flate2::read::ZlibDecoder::new(reader))
    }

    #[inline(never)]
    pub fn brotli(reader: Reader<'_>) -> Reader<'_> {
        Box::new(brotli_decompressor::Decompressor::new(reader, 16 * 1024))
    }

    /// RFC 9659: a zstd content coding's window is at most 8 MiB; a larger one would cost its
    /// memory before the cap applies. `None` when the decoder cannot be set up.
    #[inline(never)]
    pub fn zstd(reader: Reader<'_>) -> Option<Reader<'_>> {
        let mut decoder = zstd::stream::read::Decoder::new(reader).ok()?;
        decoder.window_log_max(23).ok()?;
        Some(Box::new(decoder))
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
        FetchConfig::loopback(user_agent)
    }

    fn fetcher(user_agent: &str) -> Fetcher {
        Fetcher::new(&config(user_agent))
    }

    /// A 200 response with `headers` and `body`, as the tests of its methods need it.
    fn response_with(headers: &[(&str, &str)], body: Vec<u8>) -> Response {
        Response::read_back(200, headers.iter().copied().collect(), body, Vec::new())
    }

    #[test]
    fn html_is_told_by_the_media_type_in_any_case_or_by_the_body() {
        let response = |content_type: Option<&str>, body: &[u8]| {
            let headers: Vec<_> = content_type
                .map(|t| ("Content-Type", t))
                .into_iter()
                .collect();
            response_with(&headers, body.to_vec())
        };
        assert!(response(Some("text/html"), b"").is_html());
        assert!(response(Some(" Text/HTML ; charset=utf-8"), b"").is_html());
        assert!(response(Some("APPLICATION/XHTML+XML"), b"").is_html());
        assert!(!response(Some("text/plain"), b"<html>").is_html());
        assert!(!response(Some("text/html-x"), b"").is_html());
        assert!(response(None, b"  <html>").is_html());
        assert!(response(Some(";charset=utf-8"), b"<p>").is_html());
        assert!(!response(None, b"plain").is_html());
    }

    /// `bytes` as a brotli stream of one uncompressed meta-block (RFC 7932 §9.2): valid
    /// brotli without an encoder.
    fn brotli_stored(bytes: &[u8]) -> Vec<u8> {
        assert!(!bytes.is_empty() && bytes.len() <= 1 << 16);
        // WBITS 16 (one 0 bit), ISLAST 0, MNIBBLES 4, MLEN - 1 in 16 bits, ISUNCOMPRESSED.
        let header = ((bytes.len() as u32 - 1) << 4) | (1 << 20);
        let mut out = header.to_le_bytes()[..3].to_vec();
        out.extend_from_slice(bytes);
        out.push(0b11); // ISLAST, ISLASTEMPTY
        out
    }

    #[test]
    fn transfer_and_content_codings_are_undone_for_links() {
        use flate2::write::{GzEncoder, ZlibEncoder};
        let page = b"<a href=\"/x\">x</a>".repeat(10);
        let gzip = |bytes: &[u8]| {
            let mut e = GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(bytes).unwrap();
            e.finish().unwrap()
        };
        let zlib = |bytes: &[u8]| {
            let mut e = ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(bytes).unwrap();
            e.finish().unwrap()
        };
        let response = response_with;
        let cases = [
            (vec![("Content-Encoding", "gzip")], gzip(&page)),
            (vec![("Content-Encoding", "x-gzip")], gzip(&page)),
            (vec![("Content-Encoding", "deflate")], zlib(&page)),
            (vec![("Content-Encoding", "br")], brotli_stored(&page)),
            (
                vec![("Content-Encoding", "zstd")],
                zstd::encode_all(&page[..], 3).unwrap(),
            ),
            (vec![("Transfer-Encoding", "gzip, chunked")], gzip(&page)),
            (vec![("Transfer-Encoding", "deflate")], zlib(&page)),
            // Content coding first, the transfer coding on top: undone in reverse.
            (
                vec![
                    ("Content-Encoding", "br"),
                    ("Transfer-Encoding", "gzip, chunked"),
                ],
                gzip(&brotli_stored(&page)),
            ),
            (vec![("Content-Encoding", "gzip, identity")], gzip(&page)),
        ];
        for (headers, body) in cases {
            let r = response(&headers, body);
            assert_eq!(r.decoded_body(1 << 20).as_ref(), &page[..], "{headers:?}");
            // Capped, whatever the layers.
            assert_eq!(r.decoded_body(7).as_ref(), &page[..7], "{headers:?}");
        }
        // No coding but the framing: the body itself (already cut at --max-body).
        let plain = response(&[("Transfer-Encoding", "chunked")], page.clone());
        assert!(matches!(plain.decoded_body(7), std::borrow::Cow::Borrowed(b) if b == page));
        // Unknown: left as it is.
        let odd = response(&[("Content-Encoding", "compress")], b"?".to_vec());
        assert_eq!(odd.decoded_body(100).as_ref(), b"?");
        // Corrupt: what decoded before the damage.
        let mut cut = gzip(&page);
        cut.truncate(cut.len() - 8);
        let cut = response(&[("Content-Encoding", "gzip")], cut);
        assert_eq!(cut.decoded_body(1 << 20).as_ref(), &page[..]);
    }

    #[test]
    fn request_head_is_what_was_sent() {
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
        // A recrawl's conditional request: the extra headers go after ours.
        let (base, server) = serve_once(b"HTTP/1.1 304 Not Modified\r\nConnection: close\r\n\r\n");
        let extra = [
            ("if-none-match", "\"v1\"".to_owned()),
            (
                "if-modified-since",
                "Sat, 01 Nov 2026 00:00:00 GMT".to_owned(),
            ),
        ];
        let fetched = fetcher("t/1")
            .get_conditional(&Url::parse(&format!("{base}/p")).unwrap(), &extra)
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
        assert!(sent.contains("\r\nX-Token: secret 1\r\n"), "{sent}");
        assert!(sent.contains("\r\nUser-Agent: mine/2\r\n"), "{sent}");
        assert!(
            sent.contains("\r\nAccept-Encoding: gzip, deflate, br\r\n"),
            "{sent}"
        );
        assert!(
            !sent.contains("crawl-test"),
            "--header's User-Agent replaces ours: {sent}"
        );
        assert!(
            sent.contains("\r\nCookie: own=1; own=2; from_file=f1\r\n"),
            "{sent}"
        );
        assert_eq!(
            sent.to_ascii_lowercase().matches("cookie:").count(),
            1,
            "{sent}"
        );
        // The cookie the server set goes back on the next request, with the file's.
        let (base, server) =
            serve_once(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        let fetched = fetcher.get(&format!("{base}/b")).unwrap();
        let sent = String::from_utf8(server.join().unwrap()).unwrap();
        assert_eq!(String::from_utf8_lossy(&fetched.request_head), sent);
        assert!(
            sent.contains("\r\nCookie: own=1; own=2; from_file=f1; session=s2\r\n"),
            "{sent}"
        );
    }

    #[test]
    fn response_head_is_as_received_but_for_transfer_encoding() {
        let (base, server) = serve_once(
            b"HTTP/1.1 404 Whatever\r\nX-Zeta: 1\r\nTransfer-Encoding: chunked\r\nX-Alpha: 2\r\n\
              Connection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        );
        let fetched = fetcher("t").get(&format!("{base}/")).unwrap();
        server.join().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&fetched.response_head),
            "HTTP/1.1 404 Whatever\r\nX-Zeta: 1\r\nX-Crawl-Transfer-Encoding: chunked\r\n\
             X-Alpha: 2\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(fetched.body, b"hello", "chunked framing removed");
        assert_eq!(fetched.ip, Some(IpAddr::from([127, 0, 0, 1])));
        let age = SystemTime::now().duration_since(fetched.started).unwrap();
        assert!(age < Duration::from_secs(10));
    }

    #[test]
    fn a_chunked_body_is_read_whatever_its_content_length_and_a_long_one_is_refused() {
        // RFC 9112 §6.3: Transfer-Encoding wins, a Content-Length beside it is ignored.
        let fetcher = fetcher("t");
        let (base, server) = serve_once(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 99999999999\r\n\
              Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        );
        let fetched = fetcher.get(&format!("{base}/chunked")).unwrap();
        server.join().unwrap();
        assert_eq!(fetched.skipped, None);
        assert_eq!(
            (&fetched.body[..], fetched.truncated),
            (&b"hello"[..], false)
        );
        // The same length without chunked framing is over the cap (1 MiB): not read.
        let (base, server) = serve_once(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 99999999999\r\n\
              Connection: close\r\n\r\nhello",
        );
        let fetched = fetcher.get(&format!("{base}/long")).unwrap();
        server.join().unwrap();
        assert_eq!(fetched.skipped, Some(Skipped::TooLong));
        assert!(fetched.body.is_empty());
    }

    #[test]
    fn a_recycled_body_is_the_next_response_s_buffer() {
        use crate::fetch::conn::{recycle_body, spare_body};
        let fetcher = fetcher("t");
        let page = |path: &str, response: &'static [u8]| {
            let (base, server) = serve_once(response);
            let fetched = fetcher.get(&format!("{base}{path}")).unwrap();
            server.join().unwrap();
            fetched
        };
        let first = page(
            "/a",
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
        );
        let buffer = first.body.as_ptr();
        recycle_body(first.body);
        let second = page(
            "/b",
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
        );
        assert_eq!(
            (second.body.as_slice(), second.body.as_ptr()),
            (&b"abc"[..], buffer)
        );
        // A large one is freed, not kept.
        recycle_body(Vec::with_capacity(1 << 20));
        assert_eq!(spare_body().capacity(), 0);
    }

    /// The next connection to `listener` within `wait`, if any (polled: the listener is
    /// non-blocking, so a server thread never waits forever for a client that does not come).
    fn accept_within(listener: &TcpListener, wait: Duration) -> Option<std::net::TcpStream> {
        listener.set_nonblocking(true).unwrap();
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            match listener.accept() {
                Ok((socket, _)) => {
                    socket.set_nonblocking(false).unwrap();
                    socket
                        .set_read_timeout(Some(Duration::from_secs(10)))
                        .unwrap();
                    return Some(socket);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                Err(e) => panic!("{e}"),
            }
        }
        None
    }

    const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";

    #[test]
    fn keep_alive_reuses_one_connection_and_connection_close_ends_it() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let wait = Duration::from_secs(10);
            // Three requests on the first connection, the third answered `Connection: close`
            // (the socket left open: the client must not send on it again).
            let mut first = accept_within(&listener, wait).unwrap();
            for reply in [
                OK,
                OK,
                b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi",
            ] {
                read_head(&mut first);
                first.write_all(reply).unwrap();
            }
            let mut second = accept_within(&listener, wait).expect("a new connection");
            read_head(&mut second);
            second.write_all(OK).unwrap();
            let third = accept_within(&listener, Duration::from_millis(200));
            third.is_some()
        });
        let fetcher = fetcher("t/1");
        for path in ["/a", "/b", "/c", "/d"] {
            let fetched = fetcher.get(&format!("http://{addr}{path}")).unwrap();
            assert_eq!((fetched.status, fetched.body.as_slice()), (200, &b"hi"[..]));
        }
        assert!(!server.join().unwrap(), "two connections for four requests");
    }

    #[test]
    fn a_reused_connection_the_server_closed_is_retried_once_not_twice() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let wait = Duration::from_secs(10);
            let mut connections = 0;
            // Answers one request and closes, keep-alive notwithstanding: twice.
            for _ in 0..2 {
                let mut socket = accept_within(&listener, wait).unwrap();
                connections += 1;
                read_head(&mut socket);
                socket.write_all(OK).unwrap();
            }
            // Then one that closes without answering at all.
            let socket = accept_within(&listener, wait).unwrap();
            connections += 1;
            drop(socket);
            while accept_within(&listener, Duration::from_millis(200)).is_some() {
                connections += 1;
            }
            connections
        });
        let fetcher = fetcher("t/1");
        let url = |path| format!("http://{addr}{path}");
        assert_eq!(fetcher.get(&url("/a")).unwrap().body, b"hi");
        // On the kept connection, closed meanwhile: sent again on a new one.
        assert_eq!(fetcher.get(&url("/b")).unwrap().body, b"hi");
        // Kept and closed again, and the new one closes too: an error, no third attempt.
        let e = fetcher.get(&url("/c")).unwrap_err();
        assert!(
            [ErrorKind::Closed, ErrorKind::Reset].contains(&e.kind),
            "{e:?}"
        );
        assert_eq!(server.join().unwrap(), 3);
    }

    /// `send_ahead` sends on the kept connection at once (the server has the request before
    /// `finish` is called), needs a kept connection, and `finish` replaces a kept connection
    /// found closed once, sending the request again.
    #[test]
    fn a_request_sent_ahead_is_on_the_wire_before_its_response_is_read() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (heard, told) = std::sync::mpsc::channel();
        let server = std::thread::spawn(move || {
            let wait = Duration::from_secs(10);
            let mut first = accept_within(&listener, wait).unwrap();
            for _ in 0..2 {
                let head = read_head(&mut first);
                heard.send(String::from_utf8(head).unwrap()).unwrap();
                first.write_all(OK).unwrap();
            }
            // Closed while kept: the request sent ahead on it must go again on a new one.
            drop(first);
            heard.send("closed".into()).unwrap();
            let mut second = accept_within(&listener, wait).expect("a new connection");
            let head = read_head(&mut second);
            second.write_all(OK).unwrap();
            String::from_utf8(head).unwrap()
        });
        let fetcher = fetcher("t/1");
        let url = |path: &str| parse(&format!("http://{addr}{path}")).unwrap();
        let wait = Duration::from_secs(10);
        assert!(
            fetcher.send_ahead(url("/a")).is_none(),
            "no kept connection"
        );
        assert_eq!(
            fetcher.get_conditional(&url("/a"), &[]).unwrap().body,
            b"hi"
        );
        assert!(told.recv_timeout(wait).unwrap().starts_with("GET /a "));
        let sent = fetcher
            .send_ahead(url("/b"))
            .expect("sent on the kept connection");
        assert!(
            told.recv_timeout(wait).unwrap().starts_with("GET /b "),
            "not sent"
        );
        let (answered, response) = fetcher.finish(sent).unwrap();
        assert_eq!(answered, url("/b"));
        assert_eq!(
            (response.status, response.body.as_slice()),
            (200, &b"hi"[..])
        );
        assert!(response.request_head.starts_with(b"GET /b "));
        assert_eq!(told.recv_timeout(wait).unwrap(), "closed");
        let sent = fetcher.send_ahead(url("/c"));
        let response = match sent {
            Some(sent) => fetcher.finish(sent).map(|(_, response)| response),
            // The send itself may already see the close: then no send ahead.
            None => fetcher.get_conditional(&url("/c"), &[]),
        };
        assert_eq!(response.unwrap().body, b"hi");
        assert!(server.join().unwrap().starts_with("GET /c "));
    }

    /// A response the server writes on the idle kept connection, unasked, is never read as the
    /// next request's: the connection is closed, the request goes on a fresh one, and the
    /// event is counted; the same for a request sent ahead.
    #[test]
    fn bytes_on_an_idle_connection_are_not_the_next_response() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (written, told) = std::sync::mpsc::channel();
        let (go, now) = std::sync::mpsc::channel::<()>();
        let server = std::thread::spawn(move || {
            let wait = Duration::from_secs(10);
            let mut targets = Vec::new();
            let mut kept = Vec::new();
            for _ in 0..2 {
                let mut socket = accept_within(&listener, wait).unwrap();
                let head = read_head(&mut socket);
                targets.push(String::from_utf8(head).unwrap());
                socket.write_all(OK).unwrap();
                // Once the client has the response: a second one, unasked.
                now.recv().unwrap();
                socket
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nSTRAY")
                    .unwrap();
                written.send(()).unwrap();
                kept.push(socket); // open: only the check can tell
            }
            let mut third = accept_within(&listener, wait).unwrap();
            let head = read_head(&mut third);
            targets.push(String::from_utf8(head).unwrap());
            third.write_all(OK).unwrap();
            targets
        });
        let fetcher = fetcher("t/1");
        let url = |path: &str| parse(&format!("http://{addr}{path}")).unwrap();
        let wait = Duration::from_secs(10);
        let unsolicited = || {
            let events = fetcher.events();
            events
                .unsolicited
                .load(std::sync::atomic::Ordering::Relaxed)
        };
        assert_eq!(
            fetcher.get_conditional(&url("/a"), &[]).unwrap().body,
            b"hi"
        );
        go.send(()).unwrap();
        told.recv_timeout(wait).unwrap();
        let b = fetcher.get_conditional(&url("/b"), &[]).unwrap();
        assert_eq!((b.status, b.body.as_slice()), (200, &b"hi"[..]));
        assert_eq!(unsolicited(), 1);
        go.send(()).unwrap();
        told.recv_timeout(wait).unwrap();
        assert!(
            fetcher.send_ahead(url("/c")).is_none(),
            "the kept one is not quiet"
        );
        assert_eq!(unsolicited(), 2);
        assert_eq!(
            fetcher.get_conditional(&url("/c"), &[]).unwrap().body,
            b"hi"
        );
        let targets = server.join().unwrap();
        let lines: Vec<&str> = targets.iter().map(|t| t.lines().next().unwrap()).collect();
        assert_eq!(
            lines,
            ["GET /a HTTP/1.1", "GET /b HTTP/1.1", "GET /c HTTP/1.1"]
        );
    }

    /// Over TLS a kept connection is reused too: the records a TLS 1.3 server sends after the
    /// handshake (session tickets) carry no data and do not make it look unquiet.
    #[test]
    fn a_kept_tls_connection_is_reused() {
        let server = testweb::tls::TlsServer::start_keep_alive(|_| testweb::Response::html("hi"));
        let fetcher = Fetcher::new(&FetchConfig {
            extra_roots: crate::fetch::tls::pem_certificates(server.ca_pem().as_bytes()).unwrap(),
            ..config("t/1")
        });
        for path in ["/a", "/b", "/c"] {
            let fetched = fetcher.get(&format!("{}{path}", server.origin())).unwrap();
            assert_eq!((fetched.status, fetched.body.as_slice()), (200, &b"hi"[..]));
        }
        assert_eq!(server.requests().len(), 3);
        assert_eq!(server.connections(), 1, "one connection for three requests");
        let events = fetcher.events();
        let load = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(
            (load(&events.unsolicited), load(&events.closed_idle)),
            (0, 0)
        );
    }

    /// Garbage instead of a response on a reused connection is a stale connection: the request
    /// goes once more on a fresh one.
    #[test]
    fn garbage_on_a_reused_connection_is_retried_on_a_fresh_one() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let wait = Duration::from_secs(10);
            let mut first = accept_within(&listener, wait).unwrap();
            read_head(&mut first);
            first.write_all(OK).unwrap();
            read_head(&mut first);
            first.write_all(b"\x00\x01garbage\r\n\r\n").unwrap();
            let mut second = accept_within(&listener, wait).expect("a fresh connection");
            let head = read_head(&mut second);
            second.write_all(OK).unwrap();
            String::from_utf8(head).unwrap()
        });
        let fetcher = fetcher("t/1");
        for path in ["/a", "/b"] {
            let fetched = fetcher.get(&format!("http://{addr}{path}")).unwrap();
            assert_eq!(fetched.body, b"hi", "{path}");
        }
        assert!(server.join().unwrap().starts_with("GET /b "));
    }

    #[test]
    fn a_head_over_the_cap_is_too_large_and_a_bad_url_is_named() {
        let mut big = b"HTTP/1.1 200 OK\r\n".to_vec();
        while big.len() <= crate::fetch::conn::MAX_HEAD {
            big.extend_from_slice(b"X-Filler: 0123456789012345678901234567890123456789\r\n");
        }
        big.extend_from_slice(b"\r\n");
        let (base, server) = serve_once(big.leak());
        let e = fetcher("t").get(&format!("{base}/")).unwrap_err();
        let _ = server.join();
        assert_eq!(e.kind, ErrorKind::TooLarge, "{e:?}");
        let e = fetcher("t").get("ftp://127.0.0.1/").unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadUrl, "{e:?}");
    }

    #[test]
    fn idle_hosts_cover_the_workers_within_the_open_file_limit() {
        let files = crate::sys::open_files_limit().unwrap_or(u64::MAX);
        let reserved = RESERVED_FILES;
        for jobs in [1, 64, 3000] {
            let n = idle_hosts(jobs);
            assert!(n >= (2 * jobs).max(MIN_IDLE_HOSTS), "{jobs}: {n}");
            assert!(n <= MAX_IDLE_HOSTS.max(2 * jobs), "{jobs}: {n}");
            // Within the files left beside the requests in flight, unless the floor is more.
            let left = files.saturating_sub(reserved + jobs as u64);
            assert!(
                n as u64 <= left.max(2 * jobs as u64).max(MIN_IDLE_HOSTS as u64),
                "{jobs}: {n}"
            );
        }
    }
}
