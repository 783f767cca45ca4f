//! What the liveness check costs per request: `Connection::idle_state`, the non-blocking look a
//! kept connection gets before a request is written on it (`fetch::pool`), called in a loop on
//! an idle loopback connection whose server neither writes nor closes.
//!
//! Two connections: plain TCP (one `recv(MSG_PEEK | MSG_DONTWAIT)`), and TLS after one request
//! and response over it, so that the session tickets a TLS 1.3 server sends after the handshake
//! are read and the check takes its steady path (rustls's buffered state, then the same peek).
//!
//! Usage: `idle_check_cost [CALLS]` (default 200,000 per round). Prints, per kind of connection,
//! ns per call by the wall clock and by this thread's CPU time, and what the check found (it
//! must be `Quiet` every time, or the figure measures another path).

#[path = "common/cpu.rs"]
mod cpu;

use cpu::thread_cpu_seconds;
use crawl::fetch_internals::{Connection, Framing, Idle, LowSpeed, Stream};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let calls: u32 = std::env::args()
        .nth(1)
        .map(|n| n.parse().expect("CALLS must be a number"))
        .unwrap_or(200_000);

    // Plain TCP: a listener whose accepted sockets stay open, silent, until the end.
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = listener.local_addr().unwrap();
    let mut server_sides = Vec::new();
    measure("plain TCP", calls, || {
        let tcp = TcpStream::connect(addr).expect("connecting to the loopback port");
        server_sides.push(listener.accept().expect("accepting the connection").0);
        Connection::new(Stream::Tcp(tcp), Some(addr.ip()), None)
    });

    // TLS: testweb's keep-alive HTTPS server, one request answered, then idle. The server
    // closes a connection idle for 5 s, so each round has a new one.
    let server = testweb::tls::TlsServer::start_keep_alive(|_| testweb::Response::html("hi"));
    measure("TLS", calls, || tls_connection(&server));
}

/// A TLS connection to `server` that has carried one request and read its response.
fn tls_connection(server: &testweb::tls::TlsServer) -> Connection {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(server.ca_pem().as_bytes()) {
        roots.add(cert.expect("the CA's PEM")).expect("the CA");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let origin = server.origin();
    let host_port = origin.trim_start_matches("https://");
    let tcp = TcpStream::connect(host_port).expect("connecting to the HTTPS server");
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let client = rustls::ClientConnection::new(Arc::new(config), name).expect("a TLS client");
    let stream = Stream::Tls(Box::new(rustls::StreamOwned::new(client, Stream::Tcp(tcp))));
    let mut conn = Connection::new(stream, None, None);
    let deadline = Instant::now() + Duration::from_secs(10);
    let head = format!("GET / HTTP/1.1\r\nHost: {host_port}\r\n\r\n");
    conn.send(head.as_bytes(), LowSpeed::OFF)
        .expect("sending the request");
    let head = conn.read_head(deadline).expect("the response head");
    let framing = head.framing().expect("its framing");
    assert!(matches!(framing, Framing::Length(_)), "{framing:?}");
    let mut body = Vec::new();
    conn.read_body(&head, framing, 1 << 20, deadline, &mut body)
        .expect("the response body");
    assert_eq!(body, b"hi");
    // The session tickets may come after the response: the check reads them (they are not
    // data) until it finds the connection quiet.
    let settled = Instant::now() + Duration::from_secs(10);
    while conn.idle_state() != Idle::Quiet {
        assert!(
            Instant::now() < settled,
            "the TLS connection never became quiet"
        );
        std::thread::yield_now();
    }
    conn
}

/// Calls the check `calls` times on a connection from `connect`, 5 rounds of a new one each;
/// prints the median round's ns per call.
fn measure(name: &str, calls: u32, mut connect: impl FnMut() -> Connection) {
    let mut rounds = Vec::new();
    for _ in 0..5 {
        let mut conn = connect();
        let (wall, cpu) = (Instant::now(), thread_cpu_seconds());
        let mut quiet = 0u32;
        for _ in 0..calls {
            quiet += u32::from(std::hint::black_box(conn.idle_state()) == Idle::Quiet);
        }
        let cpu = thread_cpu_seconds() - cpu;
        let wall = wall.elapsed().as_secs_f64();
        assert_eq!(
            quiet, calls,
            "{name}: the check found the idle connection not quiet"
        );
        rounds.push((wall * 1e9 / f64::from(calls), cpu * 1e9 / f64::from(calls)));
    }
    rounds.sort_by(|a, b| a.0.total_cmp(&b.0));
    let all: Vec<String> = rounds.iter().map(|r| format!("{:.0}", r.0)).collect();
    let (wall, cpu) = rounds[rounds.len() / 2];
    println!(
        "{name}: {wall:.0} ns/call wall, {cpu:.0} ns/call CPU (median of 5 rounds of {calls}; \
         wall rounds {})",
        all.join(" ")
    );
}
