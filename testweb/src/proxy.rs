//! A proxy on loopback for the proxy tests: HTTP `CONNECT` and SOCKS5 on one port, recording
//! every tunnel it is asked for and, in plain-HTTP tunnels, every request line that goes
//! through (a GET has no body, so the client's bytes are request heads one after another).
//!
//! It only ever connects to loopback: an IP target outside 127.0.0.0/8 is refused, and any
//! host *name* is taken to mean 127.0.0.1 (so a test can crawl `www.site.test` and
//! `blog.site.test` through it, real names for the cookie domain rules, without DNS). Bounded:
//! each connection's threads read with a short timeout, look at the stop flag, and give up after
//! `TUNNEL_LIFETIME`; dropping the proxy stops the accept thread and raises the stop flag.

use crate::accept::Listener;
use crate::http::{MAX_HEAD, head_end};
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How often a relaying thread looks at the stop flag.
const POLL: Duration = Duration::from_millis(100);
/// A tunnel is cut after this long, whatever goes through it.
const TUNNEL_LIFETIME: Duration = Duration::from_secs(60);

/// One tunnel asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tunnel {
    /// `CONNECT` or `SOCKS5`.
    pub kind: &'static str,
    /// The target as the client named it: `host:port` (a name, or an address).
    pub target: String,
}

/// What went through the proxy.
#[derive(Default)]
struct Log {
    tunnels: Vec<Tunnel>,
    requests: Vec<String>,
}

/// A running proxy; stops on drop.
pub struct Proxy {
    listener: Listener,
    log: Arc<Mutex<Log>>,
}

impl Proxy {
    /// Starts the proxy on a free loopback port.
    pub fn start() -> io::Result<Proxy> {
        let log = Arc::new(Mutex::new(Log::default()));
        let served = Arc::clone(&log);
        let listener = Listener::start(move |stream, stop| {
            let _ = serve(stream, &served, stop);
        })?;
        Ok(Proxy { listener, log })
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.listener.port()
    }

    /// Every tunnel asked for so far, in order.
    pub fn tunnels(&self) -> Vec<Tunnel> {
        self.log.lock().unwrap().tunnels.clone()
    }

    /// The request lines (`GET /a HTTP/1.1`) that went through plain-HTTP tunnels, in order.
    pub fn requests(&self) -> Vec<String> {
        self.log.lock().unwrap().requests.clone()
    }
}

/// One client: the handshake (SOCKS5 if its first byte is 5, else an HTTP `CONNECT`), then
/// bytes relayed both ways.
fn serve(mut client: TcpStream, log: &Mutex<Log>, stop: &AtomicBool) -> io::Result<()> {
    client.set_read_timeout(Some(Duration::from_secs(5)))?;
    client.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut first = [0u8; 1];
    client.read_exact(&mut first)?;
    let (kind, host, port) = match first[0] {
        5 => socks5_handshake(&mut client)?,
        byte => connect_handshake(&mut client, byte)?,
    };
    log.lock().unwrap().tunnels.push(Tunnel {
        kind,
        target: format!("{host}:{port}"),
    });
    let ip = match host.parse::<IpAddr>() {
        Ok(ip) if ip.is_loopback() => ip,
        Ok(_) => return refuse(&mut client, kind),
        Err(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
    };
    let Ok(server) = TcpStream::connect_timeout(&SocketAddr::new(ip, port), Duration::from_secs(5))
    else {
        return refuse(&mut client, kind);
    };
    match kind {
        "SOCKS5" => client.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0])?,
        _ => client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?,
    }
    relay(client, server, log, stop)
}

/// Tells the client the tunnel failed.
fn refuse(client: &mut TcpStream, kind: &str) -> io::Result<()> {
    match kind {
        "SOCKS5" => client.write_all(&[5, 2, 0, 1, 0, 0, 0, 0, 0, 0]),
        _ => client.write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"),
    }
}

/// SOCKS5 (RFC 1928), no authentication, CONNECT only: returns the target.
fn socks5_handshake(client: &mut TcpStream) -> io::Result<(&'static str, String, u16)> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    let mut n = [0u8; 1];
    client.read_exact(&mut n)?;
    let mut methods = vec![0u8; n[0] as usize];
    client.read_exact(&mut methods)?;
    if !methods.contains(&0) {
        client.write_all(&[5, 0xff])?;
        return Err(bad("no acceptable SOCKS5 method"));
    }
    client.write_all(&[5, 0])?;
    let mut head = [0u8; 4];
    client.read_exact(&mut head)?;
    if head[..3] != [5, 1, 0] {
        return Err(bad("not a SOCKS5 CONNECT"));
    }
    let host = match head[3] {
        1 => {
            let mut a = [0u8; 4];
            client.read_exact(&mut a)?;
            Ipv4Addr::from(a).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            client.read_exact(&mut len)?;
            let mut name = vec![0u8; len[0] as usize];
            client.read_exact(&mut name)?;
            String::from_utf8(name).map_err(|_| bad("a host name that is not UTF-8"))?
        }
        4 => {
            let mut a = [0u8; 16];
            client.read_exact(&mut a)?;
            std::net::Ipv6Addr::from(a).to_string()
        }
        _ => return Err(bad("unknown SOCKS5 address type")),
    };
    let mut port = [0u8; 2];
    client.read_exact(&mut port)?;
    Ok(("SOCKS5", host, u16::from_be_bytes(port)))
}

/// An HTTP `CONNECT host:port` request (its first byte already read): returns the target.
fn connect_handshake(client: &mut TcpStream, first: u8) -> io::Result<(&'static str, String, u16)> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    let mut head = vec![first];
    let mut byte = [0u8; 1];
    // Byte by byte: nothing after the head may be consumed (the client waits for our answer).
    while head_end(&head, 0).is_none() {
        if head.len() > MAX_HEAD {
            return Err(bad("a CONNECT head over 64 KiB"));
        }
        client.read_exact(&mut byte)?;
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head);
    let mut words = text.split(' ');
    let (Some("CONNECT"), Some(target)) = (words.next(), words.next()) else {
        client.write_all(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")?;
        return Err(bad("not a CONNECT request"));
    };
    let (host, port) = target
        .rsplit_once(':')
        .and_then(|(h, p)| Some((h.trim_matches(['[', ']']).to_owned(), p.parse().ok()?)))
        .ok_or_else(|| bad("a CONNECT target without a port"))?;
    Ok(("CONNECT", host, port))
}

/// Copies bytes both ways until either side closes, the proxy stops or the tunnel's time is up.
fn relay(
    client: TcpStream,
    server: TcpStream,
    log: &Mutex<Log>,
    stop: &AtomicBool,
) -> io::Result<()> {
    let deadline = Instant::now() + TUNNEL_LIFETIME;
    let (c2, s2) = (client.try_clone()?, server.try_clone()?);
    thread::scope(|scope| {
        scope.spawn(|| pipe(c2, s2, Some(log), stop, deadline));
        pipe(server, client, None, stop, deadline);
    });
    Ok(())
}

/// Copies `from` to `to` until `from` ends; then closes `to`'s writing side. With `log`, the
/// request line of each head that goes through is recorded (not in a TLS tunnel: its first
/// byte is a TLS record's, 0x16).
fn pipe(
    mut from: TcpStream,
    mut to: TcpStream,
    log: Option<&Mutex<Log>>,
    stop: &AtomicBool,
    deadline: Instant,
) {
    let _ = from.set_read_timeout(Some(POLL));
    let mut buf = [0u8; 16 * 1024];
    let mut head: Option<Vec<u8>> = None;
    let mut first = true;
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if first && log.is_some() && buf[0] != 0x16 {
                    head = Some(Vec::new());
                }
                first = false;
                if let (Some(head), Some(log)) = (head.as_mut(), log) {
                    head.extend_from_slice(&buf[..n]);
                    while let Some(end) = head_end(head, 0) {
                        let text = String::from_utf8_lossy(&head[..end]).into_owned();
                        let line = text.lines().next().unwrap_or("").to_owned();
                        log.lock().unwrap().requests.push(line);
                        head.drain(..end);
                    }
                    head.truncate(MAX_HEAD);
                }
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}
