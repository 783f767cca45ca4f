//! Request options end to end: `--header`, cookies (`--load-cookies`, `--cookie-jar`, kill and
//! resume), proxies (`--proxy`, the environment, `--no-proxy`) and TLS (`--ca-cert`,
//! `--insecure`), each checked by what the loopback server or proxy saw.

use crate::util::{LogRow, crawl_dir, parse_log, read_summary, warc_text};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use testweb::proxy::{Proxy, Tunnel};
use testweb::tls::TlsServer;
use testweb::{HostSpec, Request, Response, TestWeb};

/// A finished crawl of `seeds` with `args` in `dir` (seeds file, `out`), with `env` added.
struct Run {
    code: Option<i32>,
    rows: Vec<LogRow>,
    stdout: String,
    stderr: String,
    out: PathBuf,
}

fn run(dir: &Path, seeds: &str, args: &[&str], env: &[(&str, String)]) -> Run {
    run_killed(dir, seeds, args, env, None)
}

fn run_killed(
    dir: &Path,
    seeds: &str,
    args: &[&str],
    env: &[(&str, String)],
    kill_after: Option<usize>,
) -> Run {
    std::fs::write(dir.join("seeds.txt"), seeds).unwrap();
    let all: Vec<&str> = ["--delay-factor", "0"]
        .iter()
        .chain(args)
        .copied()
        .collect();
    let (code, stdout, stderr) = crawl_dir(dir, &all, env, kill_after);
    let rows = match kill_after {
        Some(_) => Vec::new(),
        None => parse_log(&stdout),
    };
    Run {
        code,
        rows,
        stdout,
        stderr,
        out: dir.join("out"),
    }
}

/// The environment variables a proxy can come from, cleared so the test's own environment
/// cannot route a crawl anywhere.
fn no_proxy_env() -> Vec<(&'static str, String)> {
    [
        "ALL_PROXY",
        "all_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "NO_PROXY",
        "no_proxy",
    ]
    .into_iter()
    .map(|name| (name, String::new()))
    .collect()
}

/// The env with `name` set to `value` (an empty value counts as unset, as `Proxy::from_env` reads it).
fn with(
    mut env: Vec<(&'static str, String)>,
    name: &'static str,
    value: String,
) -> Vec<(&'static str, String)> {
    env.retain(|(n, _)| *n != name);
    env.push((name, value));
    env
}

/// A host whose handler records every request, serving `pages` (target, response).
fn recording_host(
    pages: impl Fn(&str) -> Response + Send + Sync + 'static,
) -> (HostSpec, Arc<Mutex<Vec<Request>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let spec = HostSpec::new(move |req| {
        log.lock().unwrap().push(req.clone());
        pages(&req.target)
    });
    (spec, seen)
}

#[test]
fn headers_go_on_every_request_into_the_archive_and_are_never_printed() {
    let (host, seen) = recording_host(|target| match target {
        "/" => Response::html(r#"<a href="/a">a</a>"#),
        "/a" => Response::html("a"),
        _ => Response::not_found(),
    });
    let web = TestWeb::start(vec![host]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let r = run(
        dir.path(),
        &web.url(0, "/"),
        &[
            "--header",
            "X-Api-Key: s3cret-token",
            "--header",
            "Accept-Language:fr",
            "-v",
        ],
        &no_proxy_env(),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let seen = seen.lock().unwrap();
    let targets: Vec<&str> = seen.iter().map(|q| q.target.as_str()).collect();
    assert_eq!(targets, ["/robots.txt", "/", "/sitemap.xml", "/a"]);
    for request in seen.iter() {
        assert_eq!(
            request.header("x-api-key"),
            Some("s3cret-token"),
            "{request:?}"
        );
        assert_eq!(request.header("accept-language"), Some("fr"), "{request:?}");
    }
    // The archive keeps them, once per request record; nothing printed shows them.
    let warc = warc_text(&r.out, ".warc.zst");
    assert_eq!(
        warc.matches("X-Api-Key: s3cret-token\r\n").count(),
        4,
        "{warc}"
    );
    let summary = read_summary(&r.out).to_string();
    for (what, text) in [
        ("stdout", &r.stdout),
        ("stderr", &r.stderr),
        ("summary", &summary),
    ] {
        assert!(
            !text.contains("s3cret"),
            "{what} shows the header value: {text}"
        );
    }
}

#[test]
fn a_bad_header_is_exit_2_naming_it_without_its_value() {
    let dir = tempfile::tempdir().unwrap();
    for (header, says) in [
        ("Authorization Bearer s3cret", "no colon"),
        ("Bad Name: s3cret", "not a header name"),
        (
            "X-Token: s3cret\u{1}",
            "X-Token: the value has a control character",
        ),
        ("Host: s3cret.example", "Host header comes from each URL"),
    ] {
        let r = run(
            dir.path(),
            "http://127.0.0.1:9/\n",
            &["--header", header],
            &[],
        );
        assert_eq!(r.code, Some(2), "{header}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{header}: {}", r.stderr);
        assert!(!r.stderr.contains("s3cret"), "{header}: {}", r.stderr);
    }
}

/// Three hosts with names, reached through a proxy (which maps every name to loopback):
/// www.site.test sets cookies, blog.site.test shares its domain, other.test does not.
fn cookie_web() -> (TestWeb, [Arc<Mutex<Vec<Request>>>; 3]) {
    // The home page links to the other hosts, whose ports are known once the web runs.
    let ports: Arc<OnceLock<(u16, u16)>> = Arc::new(OnceLock::new());
    let links = Arc::clone(&ports);
    let (www, www_seen) = recording_host(move |target| match target {
        "/" => {
            let (blog, other) = links.get().unwrap();
            Response::html(format!(
                r#"<a href="/shop/cart">cart</a><a href="/about">about</a>
                   <a href="http://blog.site.test:{blog}/">blog</a>
                   <a href="http://other.test:{other}/">other</a>"#
            ))
            .with_header("Set-Cookie", "wide=1; Domain=site.test; Path=/")
            .with_header("Set-Cookie", "narrow=2; Path=/shop")
            .with_header("Set-Cookie", "host=3")
            .with_header("Set-Cookie", "super=4; Domain=test")
        }
        "/shop/cart" | "/about" => Response::html("page"),
        _ => Response::not_found(),
    });
    let (blog, blog_seen) = recording_host(|target| match target {
        "/" => Response::html("blog"),
        _ => Response::not_found(),
    });
    let (other, other_seen) = recording_host(|target| match target {
        "/" => Response::html("other"),
        _ => Response::not_found(),
    });
    let web = TestWeb::start(vec![www, blog, other]).unwrap();
    ports.set((web.port(1), web.port(2))).unwrap();
    (web, [www_seen, blog_seen, other_seen])
}

/// (target, Cookie header) of each request a host saw.
fn cookies_seen(seen: &Mutex<Vec<Request>>) -> Vec<(String, Option<String>)> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|q| (q.target.clone(), q.header("cookie").map(str::to_owned)))
        .collect()
}

fn pair(target: &str, cookie: Option<&str>) -> (String, Option<String>) {
    (target.to_owned(), cookie.map(str::to_owned))
}

#[test]
fn cookies_are_sent_back_by_domain_and_path_across_hosts() {
    let (web, [www, blog, other]) = cookie_web();
    let proxy = Proxy::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cookie_file = dir.path().join("cookies.txt");
    std::fs::write(
        &cookie_file,
        "# Netscape HTTP Cookie File\n.other.test\tTRUE\t/\tFALSE\t0\tloaded\tl0aded-value\n",
    )
    .unwrap();
    let seed = format!("http://www.site.test:{}/\n", web.port(0));
    let proxy_url = format!("socks5h://127.0.0.1:{}", proxy.port());
    let args = [
        "--proxy",
        &proxy_url,
        "--scope",
        "any",
        "-j",
        "1",
        "--load-cookies",
        cookie_file.to_str().unwrap(),
        // The names are the proxy's to resolve (it maps them all to loopback).
        "--allow-private",
    ];
    let r = run(dir.path(), &seed, &args, &no_proxy_env());
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        cookies_seen(&www),
        [
            pair("/robots.txt", None),
            pair("/", None),
            pair("/sitemap.xml", Some("host=3; wide=1")),
            pair("/shop/cart", Some("narrow=2; host=3; wide=1")),
            pair("/about", Some("host=3; wide=1")),
        ]
    );
    assert_eq!(
        cookies_seen(&blog),
        [
            pair("/robots.txt", Some("wide=1")),
            pair("/", Some("wide=1"))
        ]
    );
    assert_eq!(
        cookies_seen(&other),
        [
            pair("/robots.txt", Some("loaded=l0aded-value")),
            pair("/", Some("loaded=l0aded-value"))
        ]
    );
    let printed = format!("{}{}", r.stdout, r.stderr);
    assert!(!printed.contains("l0aded-value"), "{printed}");
    // The archive's request records hold the cookies as sent.
    assert!(warc_text(&r.out, ".warc.zst").contains("\r\nCookie: narrow=2; host=3; wide=1\r\n"));
}

/// One host: `/` links to `/a`.
fn two_pages() -> (TestWeb, Arc<Mutex<Vec<Request>>>) {
    let (host, seen) = recording_host(|target| match target {
        "/" => Response::html(r#"<a href="/a">a</a>"#),
        "/a" => Response::html("a"),
        _ => Response::not_found(),
    });
    (TestWeb::start(vec![host]).unwrap(), seen)
}

/// The request lines the web saw, as a proxy would show them.
fn request_lines(seen: &Mutex<Vec<Request>>) -> Vec<String> {
    let seen = seen.lock().unwrap();
    seen.iter()
        .map(|q| format!("{} {} HTTP/1.1", q.method, q.target))
        .collect()
}

/// A loopback port nothing listens on: a proxy there would fail every request.
fn dead_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Options, environment, the seed's host, and the kind of tunnel the proxy should see (none:
/// the crawl goes direct).
type ProxyCase = (
    Vec<String>,
    Vec<(&'static str, String)>,
    &'static str,
    Option<&'static str>,
);

#[test]
fn every_kind_of_proxy_sees_every_request() {
    let proxy = Proxy::start().unwrap();
    let pp = proxy.port();
    let dead = format!("http://127.0.0.1:{}", dead_port());
    let tunnel = |kind, target: String| Tunnel { kind, target };
    // (--proxy or --no-proxy, environment, the seed's host, the tunnel the proxy should see)
    let cases: Vec<ProxyCase> = vec![
        (
            vec!["--proxy".into(), format!("http://127.0.0.1:{pp}")],
            vec![],
            "127.0.0.1",
            Some("CONNECT"),
        ),
        (
            vec!["--proxy".into(), format!("socks5://127.0.0.1:{pp}")],
            vec![],
            "127.0.0.1",
            Some("SOCKS5"),
        ),
        // With --allow-private the proxy resolves the name: nothing here could reach
        // www.env.test without it (without --allow-private names are resolved here).
        (
            vec!["--allow-private".into()],
            vec![("ALL_PROXY", format!("socks5h://127.0.0.1:{pp}"))],
            "www.env.test",
            Some("SOCKS5"),
        ),
        (
            vec!["--allow-private".into()],
            vec![("HTTP_PROXY", format!("http://127.0.0.1:{pp}"))],
            "www.env.test",
            Some("CONNECT"),
        ),
        // --proxy overrides the environment's (dead) proxy.
        (
            vec!["--proxy".into(), format!("http://127.0.0.1:{pp}")],
            vec![("ALL_PROXY", dead.clone())],
            "127.0.0.1",
            Some("CONNECT"),
        ),
        // --no-proxy and NO_PROXY go direct.
        (
            vec!["--no-proxy".into()],
            vec![("ALL_PROXY", dead.clone())],
            "127.0.0.1",
            None,
        ),
        (
            vec![],
            vec![
                ("ALL_PROXY", dead.clone()),
                ("NO_PROXY", "127.0.0.1".into()),
            ],
            "127.0.0.1",
            None,
        ),
    ];
    for (args, env, host, kind) in cases {
        let (web, seen) = two_pages();
        let before = (proxy.tunnels().len(), proxy.requests().len());
        let mut all_env = no_proxy_env();
        for (name, value) in env.clone() {
            all_env = with(all_env, name, value);
        }
        let dir = tempfile::tempdir().unwrap();
        let seed = format!("http://{host}:{}/\n", web.port(0));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run(dir.path(), &seed, &args, &all_env);
        let case = format!("{args:?} {env:?}");
        assert_eq!(r.code, Some(0), "{case}: {}", r.stderr);
        let lines = request_lines(&seen);
        assert_eq!(lines.len(), 4, "{case}: {lines:?}");
        let tunnels = proxy.tunnels().split_off(before.0);
        let requests = proxy.requests().split_off(before.1);
        match kind {
            Some(kind) => {
                assert!(!tunnels.is_empty(), "{case}: no tunnel");
                let target = format!("{host}:{}", web.port(0));
                for t in &tunnels {
                    assert_eq!(t, &tunnel(kind, target.clone()), "{case}");
                }
                assert_eq!(requests, lines, "{case}: the proxy saw every request");
            }
            None => assert_eq!((tunnels, requests), (vec![], vec![]), "{case}"),
        }
        assert!(
            r.rows.iter().all(|row| row.status != 0),
            "{case}: {}",
            r.stdout
        );
        // WARC-IP-Address is the target's address when it was resolved here, never the
        // proxy's: absent only when the proxy resolved (a name, with --allow-private).
        let resolved_here = host == "127.0.0.1";
        let ips = warc_text(&r.out, ".warc.zst")
            .matches("WARC-IP-Address: 127.0.0.1\r\n")
            .count();
        let records = 2 * r.rows.len(); // a response and its request per fetch
        assert_eq!(ips, if resolved_here { records } else { 0 }, "{case}");
    }
}

#[test]
fn a_bad_proxy_url_is_exit_2_without_its_password() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(
        dir.path(),
        "http://127.0.0.1:9/\n",
        &["--proxy", "gopher://user:s3cret@127.0.0.1:1"],
        &no_proxy_env(),
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("--proxy gopher://user:***@127.0.0.1:1"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("s3cret"), "{}", r.stderr);
}

#[test]
fn tls_with_our_own_ca_is_refused_then_trusted_with_ca_cert_or_insecure() {
    let server = TlsServer::start(|req| match req.target.as_str() {
        "/" => Response::html(r#"<a href="/a">a</a>"#),
        "/a" => Response::html("a"),
        _ => Response::not_found(),
    });
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, server.ca_pem()).unwrap();
    let ca = ca.to_str().unwrap();
    let seed = format!("{}/\n", server.origin());
    let targets = |from: usize| -> Vec<String> {
        server.requests()[from..]
            .iter()
            .map(|q| q.target.clone())
            .collect()
    };

    let fresh = || tempfile::tempdir_in(dir.path()).unwrap();
    // Without -j the requests wait on the event loop, with -j each blocks a worker thread:
    // the same outcomes.
    for jobs in [&[][..], &["-j", "2"]] {
        // Mozilla's roots do not include our CA: the handshake fails, nothing is served. The
        // host never answered its robots.txt: its seed is given up, and no seed host answered.
        let (served, failed) = (server.requests().len(), server.failed_handshakes());
        let r = run(fresh().path(), &seed, jobs, &no_proxy_env());
        assert_eq!(r.code, Some(3), "{jobs:?}: {}", r.stderr);
        assert!(server.failed_handshakes() > failed, "{jobs:?}");
        assert_eq!(targets(served), Vec::<String>::new(), "{jobs:?}");
        assert_eq!(r.rows.len(), 2, "{jobs:?}: {}", r.stdout);
        assert_eq!(
            r.rows[0].note, "tls",
            "{jobs:?}: the URL log names the TLS failure: {}",
            r.stdout
        );
        assert_eq!(r.rows[1].note, "host-unreachable", "{jobs:?}: {}", r.stdout);

        let r = run(
            fresh().path(),
            &seed,
            &[jobs, &["--ca-cert", ca]].concat(),
            &no_proxy_env(),
        );
        assert_eq!(r.code, Some(0), "{jobs:?}: {}", r.stderr);
        let expected = ["/robots.txt", "/", "/sitemap.xml", "/a"];
        assert_eq!(targets(served), expected, "{jobs:?}");
        assert!(!r.stderr.contains("insecure"), "{jobs:?}: {}", r.stderr);

        let failed = server.failed_handshakes();
        let r = run(
            fresh().path(),
            &seed,
            &[jobs, &["--insecure"]].concat(),
            &no_proxy_env(),
        );
        assert_eq!(r.code, Some(0), "{jobs:?}: {}", r.stderr);
        assert_eq!(targets(served + 4), expected, "{jobs:?}");
        assert_eq!(server.failed_handshakes(), failed, "{jobs:?}");
        assert!(
            r.stderr.contains("warning: --insecure"),
            "{jobs:?}: {}",
            r.stderr
        );
    }
    let served = server.requests().len();

    // HTTPS through a CONNECT proxy: the tunnel carries TLS, the server sees the requests.
    let proxy = Proxy::start().unwrap();
    let proxy_url = format!("http://127.0.0.1:{}", proxy.port());
    let args = ["--ca-cert", ca, "--proxy", &proxy_url];
    let proxied = fresh();
    let r = run(proxied.path(), &seed, &args, &no_proxy_env());
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(targets(served), ["/robots.txt", "/", "/sitemap.xml", "/a"]);
    let port = server.origin().rsplit(':').next().unwrap().to_owned();
    assert!(!proxy.tunnels().is_empty());
    for t in proxy.tunnels() {
        assert_eq!(
            t,
            Tunnel {
                kind: "CONNECT",
                target: format!("127.0.0.1:{port}")
            }
        );
    }
    // The request records hold the heads as sent inside TLS, not the CONNECT or ciphertext.
    let warc = warc_text(&r.out, ".warc.zst");
    for target in ["/robots.txt", "/", "/sitemap.xml", "/a"] {
        let line = format!("\r\n\r\nGET {target} HTTP/1.1\r\n");
        assert!(warc.contains(&line), "{target}: {warc}");
    }
    assert!(!warc.contains("CONNECT "), "{warc}");

    // A --ca-cert that holds no certificate is bad input.
    std::fs::write(dir.path().join("empty.pem"), "not a certificate\n").unwrap();
    let empty = dir.path().join("empty.pem");
    let r = run(
        fresh().path(),
        &seed,
        &["--ca-cert", empty.to_str().unwrap()],
        &[],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("empty.pem: no certificate"),
        "{}",
        r.stderr
    );
}

/// Without -j, HTTPS requests wait on the event loop, not on a thread each: while the servers
/// hold `HOSTS` robots.txt requests at once, the crawl runs far fewer worker threads than
/// that; with `-j HOSTS` (the threads) each request in flight holds one.
#[test]
fn https_requests_in_flight_wait_on_the_event_loop_not_on_threads() {
    const HOSTS: usize = 32;
    for jobs in [&[][..], &["-j", "32"]] {
        let workers = held_at_once(HOSTS, jobs, true, |req, gate| match req.target.as_str() {
            "/robots.txt" => {
                gate.arrive();
                Response::not_found()
            }
            _ => Response::html("hi"),
        });
        let workers = workers.unwrap_or_else(|| panic!("{jobs:?}: never {HOSTS} at once"));
        match jobs.is_empty() {
            true => assert!(workers < HOSTS / 2, "{workers} worker threads"),
            false => assert!(workers >= HOSTS, "{workers} worker threads"),
        }
    }
}

/// A robots.txt's redirect is a request of the event loop's, not one the thread that took
/// the first answer makes and waits for: the moved robots.txt files of `HOSTS` plain-HTTP
/// hosts are all asked for at once (the few threads that process answers could hold only a
/// few).
#[test]
fn robots_txt_redirects_of_many_hosts_are_in_flight_at_once_on_the_loop() {
    const HOSTS: usize = 32;
    let workers = held_at_once(HOSTS, &[], false, |req, gate| match req.target.as_str() {
        "/robots.txt" => Response::redirect(301, "/moved/robots.txt"),
        "/moved/robots.txt" => {
            gate.arrive();
            Response::not_found()
        }
        _ => Response::html("hi"),
    });
    assert!(
        workers.is_some(),
        "never {HOSTS} redirects of robots.txt at once"
    );
}

/// Crawls `hosts` servers (HTTPS with `tls`, else plain HTTP) answering with `handler`, which
/// holds requests at a `Gate` of `hosts`; every host's one page is fetched. The worker threads
/// counted when all were held at once, if they ever were.
fn held_at_once(
    hosts: usize,
    jobs: &[&str],
    tls: bool,
    handler: fn(&Request, &Gate) -> Response,
) -> Option<usize> {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(Gate::new(hosts, dir.path().join("seeds.txt")));
    let gated = |gate: &Arc<Gate>| {
        let gate = Arc::clone(gate);
        move |req: &Request| handler(req, &gate)
    };
    let (tls_servers, web): (Vec<TlsServer>, Option<TestWeb>) = match tls {
        true => (
            (0..hosts).map(|_| TlsServer::start(gated(&gate))).collect(),
            None,
        ),
        false => {
            let specs = (0..hosts).map(|_| HostSpec::new(gated(&gate))).collect();
            (Vec::new(), Some(TestWeb::start(specs).unwrap()))
        }
    };
    let origins: Vec<String> = match &web {
        Some(web) => (0..hosts).map(|h| web.origin(h)).collect(),
        None => tls_servers.iter().map(TlsServer::origin).collect(),
    };
    let seeds: String = origins.iter().map(|o| format!("{o}/\n")).collect();
    let args = [jobs, &["--insecure"]].concat();
    let r = run(dir.path(), &seeds, &args, &no_proxy_env());
    assert_eq!(r.code, Some(0), "{jobs:?}: {}", r.stderr);
    assert_eq!(r.rows.iter().filter(|r| r.is_page()).count(), hosts);
    gate.workers_seen()
}

/// Holds requests until `until` are held at once (or a bounded wait passed), and counts the
/// worker threads of the crawl reading `seeds` at that moment.
struct Gate {
    until: usize,
    seeds: PathBuf,
    state: Mutex<(usize, Option<usize>)>,
    all_in: std::sync::Condvar,
}

impl Gate {
    fn new(until: usize, seeds: PathBuf) -> Gate {
        Gate {
            until,
            seeds,
            state: Mutex::new((0, None)),
            all_in: std::sync::Condvar::new(),
        }
    }

    /// One more request held; the last one in counts the threads and lets them all go.
    fn arrive(&self) {
        let mut state = self.state.lock().unwrap();
        state.0 += 1;
        if state.0 == self.until {
            state.1 = worker_threads(&self.seeds);
            self.all_in.notify_all();
            return;
        }
        let wait = std::time::Duration::from_secs(20);
        let _held = (self.all_in)
            .wait_timeout_while(state, wait, |state| state.0 < self.until)
            .unwrap();
    }

    /// The worker threads counted when all were in, if they all came.
    fn workers_seen(&self) -> Option<usize> {
        self.state.lock().unwrap().1
    }
}

/// The threads named `worker-N` of the crawl process whose command line names `seeds`.
fn worker_threads(seeds: &Path) -> Option<usize> {
    let seeds = seeds.to_str()?;
    let pid = std::fs::read_dir("/proc").ok()?.find_map(|entry| {
        let path = entry.ok()?.path();
        let cmdline = std::fs::read(path.join("cmdline")).ok()?;
        let named = cmdline
            .split(|&b| b == 0)
            .any(|arg| arg == seeds.as_bytes());
        named.then_some(path)
    })?;
    let tasks = std::fs::read_dir(pid.join("task")).ok()?;
    let names =
        tasks.filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok());
    Some(names.filter(|name| name.starts_with("worker-")).count())
}

#[test]
fn the_cookie_jar_survives_a_kill_and_the_resumed_crawl_sends_its_cookies() {
    // `/` sets a session cookie and links to 60 pages; each page answers whatever it is sent.
    const PAGES: usize = 60;
    let (host, seen) = recording_host(|target| match target {
        "/" => {
            let links: String = (0..PAGES)
                .map(|i| format!(r#"<a href="/p{i}">p</a>"#))
                .collect();
            Response::html(links).with_header("Set-Cookie", "session=s1; Path=/")
        }
        t if t.starts_with("/p") => Response::html("page"),
        _ => Response::not_found(),
    });
    let web = TestWeb::start(vec![host.with_latency(std::time::Duration::from_millis(5))]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let jar = dir.path().join("jar.txt");
    let args = ["-j", "1", "--cookie-jar", jar.to_str().unwrap()];
    let env = with(no_proxy_env(), "CRAWL_CHECKPOINT_PAGES", "1".into());
    let seed = web.url(0, "/");
    let first = run_killed(dir.path(), &seed, &args, &env, Some(10));
    assert_eq!(first.code, None, "killed: {}", first.stderr);
    let saved = std::fs::read_to_string(&jar).expect("the jar was written before the kill");
    assert!(saved.contains("\tsession\ts1\n"), "{saved}");
    let before = seen.lock().unwrap().len();

    let second = run(dir.path(), &seed, &args, &env);
    assert_eq!(second.code, Some(0), "{}", second.stderr);
    let after: Vec<Request> = seen.lock().unwrap()[before..].to_vec();
    assert!(!after.is_empty());
    assert!(
        after.iter().all(|q| q.target != "/"),
        "/ was not fetched again"
    );
    for q in &after {
        assert_eq!(q.header("cookie"), Some("session=s1"), "{q:?}");
    }
    // Every page was fetched, the resumed ones with the cookie from before the kill.
    let pages: std::collections::BTreeSet<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|q| q.target.clone())
        .collect();
    // The PAGES pages, /, /robots.txt and /sitemap.xml.
    assert_eq!(pages.len(), PAGES + 3, "{pages:?}");
}

#[test]
fn bad_cookie_files_are_exit_2_naming_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.txt"),
        "# Netscape HTTP Cookie File\nx.test\tTRUE\t/\tFALSE\tsoon\tname\ts3cret\n",
    )
    .unwrap();
    for (args, says) in [
        (["--load-cookies", "bad.txt"], "bad.txt:2: the expiry field"),
        (
            ["--load-cookies", "missing.txt"],
            "cannot read the cookie file missing.txt",
        ),
        (["--cookie-jar", "bad.txt"], "bad.txt:2: the expiry field"),
        (
            ["--cookie-jar", "no-dir/jar.txt"],
            "writing the cookie jar no-dir/jar.txt",
        ),
    ] {
        let r = run(dir.path(), "http://127.0.0.1:9/\n", &args, &[]);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("s3cret"), "{args:?}: {}", r.stderr);
    }
}

#[test]
fn through_a_proxy_a_private_target_is_refused_before_the_proxy_hears_of_it() {
    // 127.0.0.2 is an address the crawl is told is forbidden (loopback only, as everything
    // here), with a listener on it that must never see a connection. The site links to it by
    // address, and by names the test resolver maps to it; allowed.test maps to 127.0.0.1.
    let forbidden = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
    forbidden.set_nonblocking(true).unwrap();
    let fp = forbidden.local_addr().unwrap().port();
    let ports: Arc<OnceLock<u16>> = Arc::new(OnceLock::new());
    let own = Arc::clone(&ports);
    let (host, _seen) = recording_host(move |target| match target {
        "/" => Response::html(format!(
            r#"<a href="http://127.0.0.2:{fp}/literal">l</a>
               <a href="http://forbidden.test:{fp}/name">n</a>
               <a href="https://tls.forbidden.test:{fp}/tls">t</a>
               <a href="http://allowed.test:{}/ok">ok</a>"#,
            own.get().unwrap()
        )),
        "/ok" => Response::html("ok"),
        _ => Response::not_found(),
    });
    let web = TestWeb::start(vec![host]).unwrap();
    ports.set(web.port(0)).unwrap();
    let proxy = Proxy::start().unwrap();
    let env = with(
        with(no_proxy_env(), "CRAWL_TEST_FORBID", "127.0.0.2".into()),
        "CRAWL_TEST_HOSTS",
        "forbidden.test=127.0.0.2,tls.forbidden.test=127.0.0.2,allowed.test=127.0.0.1".into(),
    );
    // Every kind of proxy is handed addresses resolved (and checked) here, never a name it
    // would resolve itself: CONNECT and socks5h:// as much as socks5://.
    for scheme in ["socks5", "http", "socks5h"] {
        let before = proxy.tunnels().len();
        let dir = tempfile::tempdir().unwrap();
        let proxy_url = format!("{scheme}://127.0.0.1:{}", proxy.port());
        let args = ["--proxy", proxy_url.as_str(), "--scope", "any"];
        let r = run(dir.path(), &web.url(0, "/"), &args, &env);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        for prefix in [
            format!("http://127.0.0.2:{fp}/"),
            format!("http://forbidden.test:{fp}/"),
            format!("https://tls.forbidden.test:{fp}/"),
        ] {
            let refused: Vec<&LogRow> = r
                .rows
                .iter()
                .filter(|row| row.url.starts_with(&prefix))
                .collect();
            assert!(!refused.is_empty(), "{scheme} {prefix}: {}", r.stdout);
            for row in refused {
                let seen = (row.status, row.note.as_str());
                assert_eq!(seen, (0, "private-address"), "{scheme}: {row:?}");
            }
        }
        // The allowed name was fetched through the proxy, which was told its address.
        let ok = format!("http://allowed.test:{}/ok", web.port(0));
        assert_eq!(row(&r.rows, &ok).status, 200, "{scheme}: {}", r.stdout);
        let tunnels = proxy.tunnels().split_off(before);
        let allowed = format!("127.0.0.1:{}", web.port(0));
        assert!(
            tunnels.iter().all(|t| t.target == allowed),
            "{scheme}: {tunnels:?}"
        );
        assert!(!tunnels.is_empty(), "{scheme}: no tunnel");
        // Nothing ever connected to the forbidden address.
        let e = forbidden.accept().map(|(_, from)| from).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock, "{scheme}: {e}");
    }
}

/// The URL log's row of `url`.
fn row<'a>(rows: &'a [LogRow], url: &str) -> &'a LogRow {
    rows.iter()
        .find(|r| r.url == url)
        .unwrap_or_else(|| panic!("no row for {url}"))
}
