//! The HTTP server: serving, keep-alive, HEAD, errors, latency, raw scripts, bounded shutdown.

mod common;

use common::{Conn, get};
use std::sync::Arc;
use std::time::{Duration, Instant};
use testweb::{Engine, HostSpec, Request, Response, TestWeb};

/// Every test below runs once per engine: both must serve and log alike.
macro_rules! on_each_engine {
    ($($test:ident),* $(,)?) => {
        mod threads {
            $(#[test]
            fn $test() {
                super::$test(testweb::Engine::Threads)
            })*
        }
        mod reactor {
            $(#[test]
            fn $test() {
                super::$test(testweb::Engine::Reactor)
            })*
        }
    };
}

on_each_engine!(
    serves_hosts_and_logs,
    keep_alive_pipelining_and_close,
    not_found_head_and_errors,
    latency_is_inside_logged_interval,
    raw_script_is_sent_verbatim,
    drop_is_bounded_with_open_connections,
    many_concurrent_clients,
    hosts_by_address_share_a_port_and_are_told_apart_by_address
);

fn start(engine: Engine, hosts: Vec<HostSpec>) -> std::io::Result<TestWeb> {
    TestWeb::start_with_engine(hosts.len(), engine, move |_| hosts)
}

fn echo(name: &'static str) -> HostSpec {
    HostSpec::new(move |r: &Request| match r.target.as_str() {
        "/missing" => Response::not_found(),
        "/moved" => Response::redirect(301, "/dest"),
        t => Response::html(format!("{name} {} {t}", r.method)),
    })
}

fn serves_hosts_and_logs(engine: Engine) {
    let web = start(engine, vec![echo("a"), echo("b")]).unwrap();
    assert_eq!(web.origin(1), format!("http://127.0.0.1:{}", web.port(1)));
    assert_eq!(web.host_of_port(web.port(1)), Some(1));
    assert_eq!(web.host_of_port(1), None);
    let r = get(web.port(0), "/x?y=1");
    assert_eq!((r.status, r.text().as_str()), (200, "a GET /x?y=1"));
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(get(web.port(1), "/robots.txt").text(), "b GET /robots.txt");
    let r = get(web.port(1), "/moved");
    assert_eq!((r.status, r.header("location")), (301, Some("/dest")));
    let log = web.log();
    let seen: Vec<(usize, &str, u16)> = log
        .iter()
        .map(|e| (e.host, e.target.as_str(), e.status))
        .collect();
    assert_eq!(
        seen,
        [
            (0, "/x?y=1", 200),
            (1, "/robots.txt", 200),
            (1, "/moved", 301)
        ]
    );
    assert!(log.iter().all(|e| e.start <= e.end && e.method == "GET"));
    let t = Instant::now();
    let port = web.port(0);
    web.shutdown();
    assert!(t.elapsed() < Duration::from_secs(2));
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "listener closed"
    );
}

fn keep_alive_pipelining_and_close(engine: Engine) {
    let web = start(engine, vec![echo("a")]).unwrap();
    let mut c = Conn::open(web.port(0));
    assert_eq!(c.get("/1").text(), "a GET /1");
    assert_eq!(c.get("/2").text(), "a GET /2");
    c.send_raw(b"GET /3 HTTP/1.1\r\nHost: t\r\n\r\nGET /4 HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.read(false).text(), "a GET /3");
    assert_eq!(c.read(false).text(), "a GET /4");
    c.send("GET", "/5", "Connection: close\r\n");
    let r = c.read(false);
    assert_eq!(
        (r.text().as_str(), r.header("connection")),
        ("a GET /5", Some("close"))
    );
    assert!(c.at_eof());
    assert_eq!(web.request_count(), 5);

    // HTTP/1.0 closes unless asked to keep alive.
    let mut c = Conn::open(web.port(0));
    c.send_raw(b"GET /old HTTP/1.0\r\n\r\n");
    assert_eq!(c.read(false).text(), "a GET /old");
    assert!(c.at_eof());
    let mut c = Conn::open(web.port(0));
    c.send_raw(b"GET /k HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assert_eq!(c.read(false).header("connection"), Some("keep-alive"));
    assert_eq!(c.get("/k2").status, 200);
}

fn not_found_head_and_errors(engine: Engine) {
    let web = start(engine, vec![echo("a")]).unwrap();
    assert_eq!(get(web.port(0), "/missing").status, 404);
    let mut c = Conn::open(web.port(0));
    c.send("HEAD", "/h", "");
    let r = c.read(true);
    assert_eq!((r.status, r.header("content-length")), (200, Some("9")));
    assert_eq!(c.get("/after").text(), "a GET /after", "HEAD sent no body");
    c.send("POST", "/p", "Content-Length: 3\r\n");
    c.send_raw(b"abc");
    assert_eq!(c.read(false).status, 405);
    assert_eq!(c.get("/still").status, 200);

    for bad in [
        "NONSENSE\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n",
        "GET / HTTP/1.1\r\nno colon\r\n\r\n",
    ] {
        let mut c = Conn::open(web.port(0));
        c.send_raw(bad.as_bytes());
        assert_eq!(c.read(false).status, 400, "{bad:?}");
        assert!(c.at_eof());
    }
    let mut c = Conn::open(web.port(0));
    c.send_raw(format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "x".repeat(70_000)).as_bytes());
    assert_eq!(c.read(false).status, 400);
    let statuses: Vec<u16> = web.log().iter().map(|e| e.status).collect();
    assert_eq!(statuses, [404, 200, 200, 405, 200, 400, 400, 400, 400]);
}

fn latency_is_inside_logged_interval(engine: Engine) {
    let web = start(
        engine,
        vec![echo("a").with_latency(Duration::from_millis(120))],
    )
    .unwrap();
    let t = Instant::now();
    assert_eq!(get(web.port(0), "/slow").status, 200);
    assert!(t.elapsed() >= Duration::from_millis(120));
    let e = &web.log()[0];
    assert!(
        e.end - e.start >= Duration::from_millis(120),
        "{:?}",
        e.end - e.start
    );
}

fn raw_script_is_sent_verbatim(engine: Engine) {
    let script = vec![
        (
            Duration::ZERO,
            b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n".to_vec(),
        ),
        (Duration::from_millis(30), b"short".to_vec()),
    ];
    let web = start(
        engine,
        vec![HostSpec::new(move |_| Response::raw(200, script.clone()))],
    )
    .unwrap();
    let mut c = Conn::open(web.port(0));
    c.send("GET", "/", "");
    let mut got = Vec::new();
    std::io::Read::read_to_end(&mut c.reader, &mut got).unwrap();
    assert_eq!(got, b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort");
    assert_eq!(web.log()[0].status, 200);
}

fn drop_is_bounded_with_open_connections(engine: Engine) {
    // Host 1 answers with a raw script that pauses 30 s; it tells the test when it has been called.
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let slow = HostSpec::new(move |_| {
        let _ = tx.try_send(());
        Response::raw(200, vec![(Duration::from_secs(30), b"late".to_vec())])
    });
    let web = start(engine, vec![echo("a"), slow]).unwrap();
    let _silent = Conn::open(web.port(0)); // connected, never sends
    let mut partial = Conn::open(web.port(0));
    partial.send_raw(b"GET / HTTP/1.1\r\nHost"); // half a head
    let mut idle = Conn::open(web.port(0));
    assert_eq!(idle.get("/").status, 200); // then idle in keep-alive
    let mut waiting = Conn::open(web.port(1));
    waiting.send("GET", "/", "");
    rx.recv_timeout(Duration::from_secs(5))
        .expect("slow handler called");
    let t = Instant::now();
    drop(web);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(idle.at_eof());
    assert!(waiting.at_eof());
}

fn many_concurrent_clients(engine: Engine) {
    let web = Arc::new(start(engine, vec![echo("a"), echo("b")]).unwrap());
    let threads: Vec<_> = (0..60)
        .map(|t| {
            let web = web.clone();
            std::thread::spawn(move || {
                let mut c = Conn::open(web.port(t % 2));
                for i in 0..20 {
                    assert_eq!(c.get(&format!("/{t}/{i}")).status, 200);
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    assert_eq!(web.request_count(), 1200);
}

/// GET `path` on `addr` with a fresh connection; the whole answer as text ("" when the server
/// closes without one).
fn get_at(addr: std::net::SocketAddr, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").as_bytes())
        .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

fn hosts_by_address_share_a_port_and_are_told_apart_by_address(engine: Engine) {
    use std::net::Ipv4Addr;
    use testweb::{host_address, host_index};
    // The address plan: 254 hosts per /24, never .0 or .255, and back.
    assert_eq!(host_address(0), Some(Ipv4Addr::new(127, 0, 0, 1)));
    assert_eq!(host_address(253), Some(Ipv4Addr::new(127, 0, 0, 254)));
    assert_eq!(host_address(254), Some(Ipv4Addr::new(127, 0, 1, 1)));
    assert_eq!(host_address(9_999), Some(Ipv4Addr::new(127, 0, 39, 94)));
    for i in [0, 1, 253, 254, 9_999, 65_536 * 254 - 1] {
        assert_eq!(host_index(host_address(i).unwrap()), Some(i));
    }
    assert_eq!(host_address(65_536 * 254), None);
    assert_eq!(host_index(Ipv4Addr::new(127, 0, 1, 0)), None);
    assert_eq!(host_index(Ipv4Addr::new(127, 0, 1, 255)), None);
    assert_eq!(host_index(Ipv4Addr::new(10, 0, 0, 1)), None);

    // Bound to host 1's address only (0.0.0.0 would take every address, and the machine's
    // interfaces with them): its connections are host 1's, logged as host 1.
    let bind = "127.0.0.2:0".parse().unwrap();
    let web = TestWeb::start_by_address(3, bind, engine, |origins| {
        assert_eq!(origins.len(), 3);
        vec![echo("a"), echo("b"), echo("c")]
    })
    .unwrap();
    let port = web.port(0);
    assert!((0..3).all(|h| web.port(h) == port));
    assert_eq!(web.origin(0), format!("http://127.0.0.1:{port}"));
    assert_eq!(web.origin(2), format!("http://127.0.0.3:{port}"));
    assert_eq!(web.host_of_port(port), Some(0));
    let answer = get_at(format!("127.0.0.2:{port}").parse().unwrap(), "/x");
    assert!(answer.ends_with("b GET /x"), "{answer}");
    let log = web.log();
    assert_eq!(
        (log.len(), log[0].host, log[0].target.as_str()),
        (1, 1, "/x")
    );
    web.shutdown();

    // An address that names no host: the connection closes unanswered, nothing is logged.
    let bind = "127.0.0.5:0".parse().unwrap();
    let web = TestWeb::start_by_address(3, bind, engine, |_| vec![echo("a"), echo("b"), echo("c")])
        .unwrap();
    let addr = format!("127.0.0.5:{}", web.port(0)).parse().unwrap();
    assert_eq!(get_at(addr, "/x"), "");
    assert_eq!(web.request_count(), 0);
}
