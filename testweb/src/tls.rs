//! An HTTPS test server with a certificate authority of its own, made at start (rcgen): the
//! CA's PEM is what a test passes to `crawl --ca-cert`, and nothing else trusts it.
//!
//! The server certificate names `localhost` and `127.0.0.1`. Each connection answers one
//! request with the handler's response (a `Body::Bytes` one) and closes; a `Body::Raw` script
//! is written as it is (no head) and the connection closes, so an empty one closes it without
//! answering (on a kept connection: a client's stale connection). Requests whose handshake
//! completed are logged, handshakes that failed are counted. Bounded: 5 s read and write
//! timeouts per connection, heads up to 64 KiB, and dropping it stops the accept thread.

use crate::accept::Listener;
use crate::http::{self, MAX_HEAD, head_end};
use crate::{Body, Request, Response};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type TlsHandler = Arc<dyn Fn(&Request) -> Response + Send + Sync>;

/// A running HTTPS server; stops on drop.
pub struct TlsServer {
    listener: Listener,
    ca_pem: String,
    log: Arc<Mutex<Vec<Request>>>,
    failed_handshakes: Arc<AtomicUsize>,
    connections: Arc<AtomicUsize>,
}

impl TlsServer {
    /// Makes a CA and a server certificate it signs, and starts serving on a free loopback port.
    pub fn start(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> TlsServer {
        TlsServer::start_with(handler, false)
    }

    /// Like [`TlsServer::start`], but each connection answers requests until the client
    /// closes it (keep-alive), for the tests of connection reuse over TLS.
    pub fn start_keep_alive(
        handler: impl Fn(&Request) -> Response + Send + Sync + 'static,
    ) -> TlsServer {
        TlsServer::start_with(handler, true)
    }

    fn start_with(
        handler: impl Fn(&Request) -> Response + Send + Sync + 'static,
        keep_alive: bool,
    ) -> TlsServer {
        let ca_key = rcgen::KeyPair::generate().expect("a CA key");
        let mut ca_params = rcgen::CertificateParams::new(Vec::new()).expect("CA parameters");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "testweb CA");
        ca_params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca_params.self_signed(&ca_key).expect("the CA certificate");
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let key = rcgen::KeyPair::generate().expect("a server key");
        let params =
            rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
                .expect("server certificate parameters");
        let cert = params
            .signed_by(&key, &issuer)
            .expect("the server certificate");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone(), ca_cert.der().clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )
            .expect("the server's TLS configuration");
        let config = Arc::new(config);

        let log = Arc::new(Mutex::new(Vec::new()));
        let failed_handshakes = Arc::new(AtomicUsize::new(0));
        let handler: TlsHandler = Arc::new(handler);
        let (served, failed) = (Arc::clone(&log), Arc::clone(&failed_handshakes));
        let connections = Arc::new(AtomicUsize::new(0));
        let accepted = Arc::clone(&connections);
        let listener = Listener::start(move |stream, _stop| {
            accepted.fetch_add(1, Ordering::Relaxed);
            let config = Arc::clone(&config);
            serve(stream, config, &handler, &served, &failed, keep_alive)
        })
        .expect("a loopback port");
        TlsServer {
            listener,
            ca_pem: ca_cert.pem(),
            log,
            failed_handshakes,
            connections,
        }
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::Relaxed)
    }

    /// `https://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        format!("https://127.0.0.1:{}", self.listener.port())
    }

    /// The CA certificate, PEM: the one root that makes this server trusted.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The requests served so far (those whose TLS handshake completed), in order.
    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }

    /// Connections whose TLS handshake failed (the client refused the certificate, say).
    pub fn failed_handshakes(&self) -> usize {
        self.failed_handshakes.load(Ordering::Relaxed)
    }
}

/// One connection: the handshake, one request (or, with `keep_alive`, each request until the
/// client closes or a `Body::Raw` script is written), its response, close.
fn serve(
    stream: TcpStream,
    config: Arc<rustls::ServerConfig>,
    handler: &TlsHandler,
    log: &Mutex<Vec<Request>>,
    failed: &AtomicUsize,
    keep_alive: bool,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let Ok(conn) = rustls::ServerConnection::new(config) else {
        return;
    };
    let mut tls = rustls::StreamOwned::new(conn, stream);
    while tls.conn.is_handshaking() {
        if tls.conn.complete_io(&mut tls.sock).is_err() {
            failed.fetch_add(1, Ordering::Relaxed);
            return;
        }
    }
    while answer(&mut tls, handler, log, keep_alive).unwrap_or(false) && keep_alive {}
    tls.conn.send_close_notify();
    let _ = tls.flush();
}

/// Reads one request head and writes the handler's answer; whether the connection may serve
/// another (not after a `Body::Raw` script).
fn answer(
    tls: &mut rustls::StreamOwned<rustls::ServerConnection, TcpStream>,
    handler: &TlsHandler,
    log: &Mutex<Vec<Request>>,
    keep_alive: bool,
) -> io::Result<bool> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(end) = head_end(&buf, 0) {
            break end;
        }
        if buf.len() > MAX_HEAD {
            return Ok(false);
        }
        let n = tls.read(&mut chunk)?;
        if n == 0 {
            return Ok(false);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let Ok(head) = http::parse_head(&buf[..end]) else {
        tls.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")?;
        return Ok(false);
    };
    log.lock().unwrap().push(head.request.clone());
    let response = handler(&head.request);
    if let Body::Raw(script) = &response.body {
        for (pause, bytes) in script {
            std::thread::sleep(*pause);
            tls.write_all(bytes)?;
            tls.flush()?;
        }
        return Ok(false);
    }
    let body = match &response.body {
        Body::Bytes(bytes) => bytes.clone(),
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    let head_only = head.request.method == "HEAD";
    if http::write_head(
        &mut out,
        &response,
        body.len(),
        head_only,
        keep_alive,
        false,
    ) {
        out.extend_from_slice(&body);
    }
    tls.write_all(&out)?;
    Ok(true)
}
