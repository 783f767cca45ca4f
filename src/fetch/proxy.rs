//! Proxies: `--proxy URL` or the environment's (`ALL_PROXY`, `HTTPS_PROXY`, `HTTP_PROXY`, lower
//! case too, the first set; `NO_PROXY` for an environment proxy), and the handshakes that open
//! a tunnel through one: HTTP `CONNECT` (RFC 9110 §9.3.6), SOCKS5 (RFC 1928, with RFC 1929
//! user/password) and SOCKS4/4a. Every request goes through a tunnel, `http://` ones included,
//! so the request itself is the same as without a proxy.
//!
//! The private-address check through a proxy: an HTTP `CONNECT` proxy, `socks5h://` and
//! `socks4a://` are sent the target's *name* and resolve it themselves, out of the crawler's
//! sight: a public page linking to a name that resolves to 169.254.169.254 would be fetched
//! through the proxy unchecked. So, unless `--allow-private`, every proxy is made to resolve
//! here ([`Proxy::resolved_here`]): the target's name goes through our resolver
//! (`dns::CachingResolver`, which refuses private addresses no seed opened, and gives the
//! address for WARC-IP-Address) and the proxy is sent that address, never the name. The proxy
//! therefore can only ever connect to an address that was checked. The price: a name the proxy
//! could resolve and this machine cannot (an internal DNS behind the proxy) fails here;
//! `--allow-private` leaves names to the proxy again.

use crate::fetch::dns::unbracketed;
use crate::fetch::error::{ErrorKind, Fail};
use crate::fetch::private::AddressPolicy;
use base64::Engine;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr};

/// Longest `CONNECT` reply head read from a proxy (a status line and a few headers).
const MAX_REPLY: usize = 16 * 1024;

/// The handshake a proxy speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP `CONNECT` over plain TCP.
    Http,
    /// HTTP `CONNECT` over TLS to the proxy.
    Https,
    Socks4,
    Socks5,
}

/// A proxy, parsed from its URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proxy {
    pub protocol: Protocol,
    /// The proxy's host (an IPv6 address without brackets).
    pub host: String,
    pub port: u16,
    pub username: Option<String>,
    pub password: Option<String>,
    /// Targets are resolved here and sent as addresses (`socks4://`, `socks5://`, and every
    /// proxy after `resolved_here`); else the proxy is sent names.
    pub resolve_target: bool,
    /// `NO_PROXY`'s entries (an environment proxy only): hosts reached directly.
    no_proxy: Vec<NoProxy>,
}

impl Proxy {
    /// Parses `http://[user:pass@]host[:port]` (the default without a scheme), `https://`,
    /// `socks4://`, `socks4a://`, `socks5://` or `socks5h://`.
    pub fn parse(text: &str) -> Result<Proxy, String> {
        let text = text.trim();
        let with_scheme = match text.contains("://") {
            true => text.to_owned(),
            false => format!("http://{text}"),
        };
        let url = url::Url::parse(&with_scheme).map_err(|e| e.to_string())?;
        let (protocol, default_port, resolve_target) = match url.scheme() {
            "http" => (Protocol::Http, 80, false),
            "https" => (Protocol::Https, 443, false),
            "socks4" => (Protocol::Socks4, 1080, true),
            "socks4a" => (Protocol::Socks4, 1080, false),
            "socks5" => (Protocol::Socks5, 1080, true),
            "socks5h" => (Protocol::Socks5, 1080, false),
            other => return Err(format!("unknown proxy scheme {other:?}")),
        };
        let host = match url.host() {
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            Some(host) => host.to_string(),
            None => return Err("no host".into()),
        };
        let decode = |s: &str| percent_decode(s);
        Ok(Proxy {
            protocol,
            host,
            port: url.port().unwrap_or(default_port),
            username: Some(url.username()).filter(|u| !u.is_empty()).map(decode),
            password: url.password().map(decode),
            resolve_target,
            no_proxy: Vec::new(),
        })
    }

    /// The environment's proxy: the first of `ALL_PROXY`, `all_proxy`, `HTTPS_PROXY`,
    /// `https_proxy`, `HTTP_PROXY`, `http_proxy` that parses (an empty one does not), with
    /// `NO_PROXY` (or `no_proxy`) naming the hosts reached directly.
    pub fn from_env() -> Option<Proxy> {
        let no_proxy = ["NO_PROXY", "no_proxy"]
            .iter()
            .find_map(|name| std::env::var(name).ok())
            .unwrap_or_default();
        let names = [
            "ALL_PROXY",
            "all_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "HTTP_PROXY",
            "http_proxy",
        ];
        let mut proxy = names.iter().find_map(|name| {
            let value = std::env::var(name).ok()?;
            Proxy::parse(&value)
                .ok()
                .filter(|_| !value.trim().is_empty())
        })?;
        proxy.no_proxy = no_proxy.split(',').filter_map(NoProxy::parse).collect();
        Some(proxy)
    }

    /// The proxy as the crawl uses it: unless `policy` allows every address, one that is sent
    /// addresses resolved (and checked) here instead of names.
    pub fn resolved_here(mut self, policy: &AddressPolicy) -> Proxy {
        if !policy.allows_all() {
            self.resolve_target = true;
        }
        self
    }

    /// Whether `host` is reached directly (`NO_PROXY`).
    pub fn bypassed_for(&self, host: &str) -> bool {
        let host = unbracketed(host).to_ascii_lowercase();
        self.no_proxy.iter().any(|entry| entry.matches(&host))
    }

    /// `host:port` of the proxy, as the resolver's exemption names it.
    pub fn authority(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// Opens a tunnel to `target` over `io`, a connection to the proxy.
    pub fn handshake(
        &self,
        io: &mut (impl Read + Write),
        target: &Target,
        user_agent: &str,
    ) -> Result<(), Fail> {
        let refused = |what: String| Fail::new(ErrorKind::Connect, format!("the proxy {what}"));
        let io_fail = |e: std::io::Error| Fail::io(&e, "talking to the proxy");
        match self.protocol {
            Protocol::Http | Protocol::Https => {
                let head = connect_head(&target.to_string(), user_agent, self);
                io.write_all(head.as_bytes()).map_err(io_fail)?;
                let reply = read_reply(io).map_err(refused)?;
                match status(&reply) {
                    Some(200..=299) => Ok(()),
                    _ => Err(refused(format!(
                        "responded {:?}",
                        String::from_utf8_lossy(reply.split(|&b| b == b'\r').next().unwrap_or(&[]))
                    ))),
                }
            }
            Protocol::Socks5 | Protocol::Socks4 => {
                let socks = match self.protocol {
                    Protocol::Socks5 => socks5,
                    _ => socks4,
                };
                socks(io, target, self).map_err(|e| match e {
                    Socks::Io(e) => io_fail(e),
                    Socks::Refused(what) => refused(what),
                })
            }
        }
    }
}

/// Where a tunnel goes: an address resolved here, or a name the proxy resolves.
#[derive(Clone, Debug)]
pub enum Target {
    Addr(SocketAddr),
    Name(String, u16),
}

impl std::fmt::Display for Target {
    /// `host:port`, brackets around an IPv6 address (RFC 9112 §3.2.3's authority-form).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Addr(addr) => write!(f, "{addr}"),
            Target::Name(host, port) if host.contains(':') => write!(f, "[{host}]:{port}"),
            Target::Name(host, port) => write!(f, "{host}:{port}"),
        }
    }
}

/// One `NO_PROXY` entry: `*` (every host), `.example.com` or `*.example.com` (its subdomains,
/// not itself), or a host.
#[derive(Clone, Debug, PartialEq, Eq)]
enum NoProxy {
    All,
    Subdomains(String),
    Host(String),
}

impl NoProxy {
    fn parse(entry: &str) -> Option<NoProxy> {
        let entry = entry.trim().to_ascii_lowercase();
        Some(match entry.as_str() {
            "" => return None,
            "*" => NoProxy::All,
            e if e.starts_with("*.") => NoProxy::Subdomains(e[1..].to_owned()),
            e if e.starts_with('.') => NoProxy::Subdomains(e.to_owned()),
            e => NoProxy::Host(e.to_owned()),
        })
    }

    /// `host` is lower-case (`bypassed_for`), as the entries are.
    fn matches(&self, host: &str) -> bool {
        match self {
            NoProxy::All => true,
            NoProxy::Subdomains(suffix) => host.ends_with(suffix.as_str()),
            NoProxy::Host(name) => host == name,
        }
    }
}

/// `%xx` escapes of a URL's user or password undone.
fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// The request head asking the proxy for a tunnel to `target` (`host:port`).
fn connect_head(target: &str, user_agent: &str, proxy: &Proxy) -> String {
    let mut head = format!(
        "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\nUser-Agent: {user_agent}\r\n\
         Proxy-Connection: Keep-Alive\r\n"
    );
    if proxy.username.is_some() || proxy.password.is_some() {
        let pair = format!(
            "{}:{}",
            proxy.username.as_deref().unwrap_or_default(),
            proxy.password.as_deref().unwrap_or_default()
        );
        let creds = base64::engine::general_purpose::STANDARD.encode(pair);
        head.push_str(&format!("Proxy-Authorization: Basic {creds}\r\n"));
    }
    head.push_str("\r\n");
    head
}

/// The proxy's reply head, read a byte at a time so that nothing after it is taken from the
/// tunnel; at most `MAX_REPLY` bytes (the connection's timeouts bound the time).
fn read_reply(io: &mut impl Read) -> Result<Vec<u8>, String> {
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= MAX_REPLY {
            return Err(format!("sent a reply head longer than {MAX_REPLY} bytes"));
        }
        match io.read(&mut byte) {
            Ok(0) => return Err("closed the connection before answering".into()),
            Ok(_) => head.push(byte[0]),
            Err(e) => return Err(format!("did not answer: {e}")),
        }
    }
    Ok(head)
}

/// The status code of a reply head (`HTTP/1.1 200 Connection established`).
fn status(head: &[u8]) -> Option<u16> {
    let line = head.split(|&b| b == b'\r').next()?;
    let mut parts = std::str::from_utf8(line).ok()?.split(' ');
    parts.next().filter(|v| v.starts_with("HTTP/1."))?;
    parts.next()?.parse().ok()
}

/// How a SOCKS handshake failed.
enum Socks {
    Io(std::io::Error),
    Refused(String),
}

impl From<std::io::Error> for Socks {
    fn from(e: std::io::Error) -> Socks {
        Socks::Io(e)
    }
}

/// RFC 1928: no authentication or RFC 1929 user/password, then CONNECT.
fn socks5(io: &mut (impl Read + Write), target: &Target, proxy: &Proxy) -> Result<(), Socks> {
    let creds = proxy.username.is_some() || proxy.password.is_some();
    io.write_all(match creds {
        true => &[5, 2, 0, 2],
        false => &[5, 1, 0],
    })?;
    let mut reply = [0u8; 2];
    io.read_exact(&mut reply)?;
    match reply {
        [5, 0] => {}
        [5, 2] if creds => {
            let user = proxy.username.as_deref().unwrap_or_default().as_bytes();
            let pass = proxy.password.as_deref().unwrap_or_default().as_bytes();
            if user.len() > 255 || pass.len() > 255 {
                return Err(Socks::Refused("user or password over 255 bytes".into()));
            }
            let mut auth = vec![1, user.len() as u8];
            auth.extend_from_slice(user);
            auth.push(pass.len() as u8);
            auth.extend_from_slice(pass);
            io.write_all(&auth)?;
            io.read_exact(&mut reply)?;
            if reply[1] != 0 {
                return Err(Socks::Refused("refused the user and password".into()));
            }
        }
        _ => {
            return Err(Socks::Refused(format!(
                "is not SOCKS5 or wants auth ({reply:?})"
            )));
        }
    }
    let mut request = vec![5, 1, 0];
    let port = match target {
        Target::Addr(addr) => {
            match addr.ip() {
                IpAddr::V4(ip) => {
                    request.push(1);
                    request.extend_from_slice(&ip.octets());
                }
                IpAddr::V6(ip) => {
                    request.push(4);
                    request.extend_from_slice(&ip.octets());
                }
            }
            addr.port()
        }
        Target::Name(host, port) => {
            if host.len() > 255 {
                return Err(Socks::Refused(
                    "cannot be sent a name over 255 bytes".into(),
                ));
            }
            request.push(3);
            request.push(host.len() as u8);
            request.extend_from_slice(host.as_bytes());
            *port
        }
    };
    request.extend_from_slice(&port.to_be_bytes());
    io.write_all(&request)?;
    let mut fixed = [0u8; 4];
    io.read_exact(&mut fixed)?;
    if fixed[0] != 5 || fixed[1] != 0 {
        return Err(Socks::Refused(format!(
            "refused the tunnel (SOCKS5 reply {})",
            fixed[1]
        )));
    }
    // The bound address the proxy reports, then its port: read and ignored.
    let rest = match fixed[3] {
        1 => 4 + 2,
        4 => 16 + 2,
        3 => {
            let mut len = [0u8];
            io.read_exact(&mut len)?;
            len[0] as usize + 2
        }
        other => return Err(Socks::Refused(format!("sent address type {other}"))),
    };
    io.read_exact(&mut vec![0u8; rest])?;
    Ok(())
}

/// SOCKS4 (an IPv4 address) or SOCKS4a (a name), the user as its user id.
fn socks4(io: &mut (impl Read + Write), target: &Target, proxy: &Proxy) -> Result<(), Socks> {
    let user = proxy.username.as_deref().unwrap_or_default().as_bytes();
    let mut request = vec![4, 1];
    match target {
        Target::Addr(SocketAddr::V4(addr)) => {
            request.extend_from_slice(&addr.port().to_be_bytes());
            request.extend_from_slice(&addr.ip().octets());
            request.extend_from_slice(user);
            request.push(0);
        }
        Target::Addr(SocketAddr::V6(_)) => {
            return Err(Socks::Refused(
                "(SOCKS4) cannot be sent an IPv6 address".into(),
            ));
        }
        Target::Name(host, port) => {
            request.extend_from_slice(&port.to_be_bytes());
            request.extend_from_slice(&[0, 0, 0, 1]);
            request.extend_from_slice(user);
            request.push(0);
            request.extend_from_slice(host.as_bytes());
            request.push(0);
        }
    }
    io.write_all(&request)?;
    let mut reply = [0u8; 8];
    io.read_exact(&mut reply)?;
    match reply[1] {
        0x5a => Ok(()),
        code => Err(Socks::Refused(format!(
            "refused the tunnel (SOCKS4 reply {code:#x})"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use url::Url;

    fn policy(allow_private: bool) -> AddressPolicy {
        AddressPolicy::new(&[Url::parse("http://127.0.0.1/").unwrap()], allow_private)
    }

    #[test]
    fn proxy_urls_parse_and_are_made_to_resolve_here() {
        let p = Proxy::parse("http://u:p%40ss@127.0.0.1:3128").unwrap();
        assert_eq!(
            (p.protocol, p.host.as_str(), p.port),
            (Protocol::Http, "127.0.0.1", 3128)
        );
        assert_eq!(
            (p.username.as_deref(), p.password.as_deref()),
            (Some("u"), Some("p@ss"))
        );
        assert_eq!(
            Proxy::parse("127.0.0.1:8080").unwrap().protocol,
            Protocol::Http
        );
        assert_eq!(Proxy::parse("https://[::1]").unwrap().host, "::1");
        assert_eq!(Proxy::parse("https://[::1]").unwrap().port, 443);
        assert!(Proxy::parse("gopher://127.0.0.1:1").is_err());
        assert!(Proxy::parse("").is_err());
        for (url, resolves_here) in [
            ("http://127.0.0.1:3128", false),
            ("https://127.0.0.1:3129", false),
            ("socks5h://127.0.0.1:1080", false),
            ("socks4a://127.0.0.1:1081", false),
            ("socks5://127.0.0.1:1080", true),
            ("socks4://127.0.0.1:1080", true),
        ] {
            let given = Proxy::parse(url).unwrap();
            assert_eq!(given.resolve_target, resolves_here, "{url}");
            let used = given.clone().resolved_here(&policy(false));
            assert!(used.resolve_target, "{url}");
            // --allow-private leaves names to the proxy.
            let open = given.clone().resolved_here(&policy(true));
            assert_eq!(open.resolve_target, resolves_here, "{url}");
        }
    }

    #[test]
    fn no_proxy_entries_match_hosts_and_subdomains() {
        let mut p = Proxy::parse("http://127.0.0.1:1").unwrap();
        p.no_proxy = "localhost, .internal,*.dev,::1"
            .split(',')
            .filter_map(NoProxy::parse)
            .collect();
        for host in ["localhost", "LocalHost", "a.internal", "x.y.dev", "[::1]"] {
            assert!(p.bypassed_for(host), "{host}");
        }
        for host in ["internal", "dev", "mylocalhost", "127.0.0.1"] {
            assert!(!p.bypassed_for(host), "{host}");
        }
        p.no_proxy = vec![NoProxy::parse("*").unwrap()];
        assert!(p.bypassed_for("anything.example"));
    }

    #[test]
    fn connect_heads_name_the_address_once_and_replies_are_bounded() {
        let proxy = Proxy::parse("http://user:pw@127.0.0.1:3128").unwrap();
        let target = Target::Addr("[::1]:8080".parse().unwrap());
        let head = connect_head(&target.to_string(), "crawl/1", &proxy);
        assert_eq!(
            head,
            "CONNECT [::1]:8080 HTTP/1.1\r\nHost: [::1]:8080\r\nUser-Agent: crawl/1\r\n\
             Proxy-Connection: Keep-Alive\r\nProxy-Authorization: Basic dXNlcjpwdw==\r\n\r\n"
        );
        let mut reply: &[u8] = b"HTTP/1.1 200 Connection established\r\n\r\nTLS bytes";
        let head = read_reply(&mut reply).unwrap();
        assert_eq!(status(&head), Some(200));
        assert_eq!(reply, b"TLS bytes", "nothing after the head is taken");
        assert_eq!(status(b"HTTP/1.0 403 Forbidden\r\n\r\n"), Some(403));
        assert_eq!(status(b"SSH-2.0\r\n\r\n"), None);
        let endless = vec![b'x'; MAX_REPLY + 10];
        assert!(read_reply(&mut endless.as_slice()).is_err());
        assert!(read_reply(&mut &b"HTTP/1.1 200 OK\r\n"[..]).is_err());
    }

    /// A scripted peer: what it answers, and what it was sent.
    struct Peer<'a> {
        answer: &'a [u8],
        sent: Vec<u8>,
    }

    impl Read for Peer<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.answer.read(buf)
        }
    }

    impl Write for Peer<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.sent.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn socks_handshakes_send_what_the_rfcs_say() {
        let addr = Target::Addr("127.0.0.1:8080".parse().unwrap());
        let name = Target::Name("www.test".into(), 80);
        // SOCKS5 with user and password, an IPv4 target; the reply names a bound address.
        let p = Proxy::parse("socks5://u:pw@127.0.0.1:1080").unwrap();
        let mut peer = Peer {
            answer: &[5, 2, 1, 0, 5, 0, 0, 1, 10, 0, 0, 1, 0x1f, 0x90, 0xee],
            sent: Vec::new(),
        };
        p.handshake(&mut peer, &addr, "ua").unwrap();
        assert_eq!(
            peer.sent,
            [
                &[5, 2, 0, 2][..],
                &[1, 1, b'u', 2, b'p', b'w'],
                &[5, 1, 0, 1, 127, 0, 0, 1, 0x1f, 0x90]
            ]
            .concat()
        );
        assert_eq!(peer.answer, [0xee], "nothing after the reply is taken");
        // socks5h: the name; a refusal is the URL log's `connect`.
        let p = Proxy::parse("socks5h://127.0.0.1:1080").unwrap();
        let mut peer = Peer {
            answer: &[5, 0, 5, 2, 0, 1, 0, 0, 0, 0, 0, 0],
            sent: Vec::new(),
        };
        let e = p.handshake(&mut peer, &name, "ua").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Connect);
        assert_eq!(
            peer.sent[3..],
            [&[5, 1, 0, 3, 8][..], b"www.test", &[0, 80]].concat()
        );
        // SOCKS4 with an address, SOCKS4a with a name.
        let p = Proxy::parse("socks4://me@127.0.0.1:1080").unwrap();
        let mut peer = Peer {
            answer: &[0, 0x5a, 0, 0, 0, 0, 0, 0],
            sent: Vec::new(),
        };
        p.handshake(&mut peer, &addr, "ua").unwrap();
        assert_eq!(peer.sent, [4, 1, 0x1f, 0x90, 127, 0, 0, 1, b'm', b'e', 0]);
        let mut peer = Peer {
            answer: &[0, 0x5b, 0, 0, 0, 0, 0, 0],
            sent: Vec::new(),
        };
        assert!(p.handshake(&mut peer, &name, "ua").is_err());
        assert_eq!(
            peer.sent,
            [&[4, 1, 0, 80, 0, 0, 0, 1, b'm', b'e', 0][..], b"www.test\0"].concat()
        );
    }
}
