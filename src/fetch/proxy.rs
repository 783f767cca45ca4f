//! Proxies that must not resolve names for us: the private-address check through a proxy.
//!
//! An HTTP(S) `CONNECT` proxy, `socks5h://` and `socks4a://` are sent the target's *name* and
//! resolve it themselves, out of the crawler's sight: a public page linking to a name that
//! resolves to 169.254.169.254 would be fetched through the proxy unchecked. So, unless
//! `--allow-private`, the proxy is rebuilt to resolve here ([`resolved_here`]): ureq then asks
//! our resolver for the target (`dns::CachingResolver`, which refuses private addresses no seed
//! opened, and records the address for WARC-IP-Address) and the proxy is sent that address,
//! never the name. The proxy therefore can only ever connect to an address that was checked.
//! The price: a name the proxy could resolve and this machine cannot (an internal DNS behind
//! the proxy) fails here; `--allow-private` leaves names to the proxy again.
//!
//! SOCKS proxies told to resolve here send the address in the handshake (ureq's own
//! `SocksConnector`). For `CONNECT`, ureq 3.5's connector writes a resolved target badly
//! (`CONNECT 10.0.0.1:80:80`, the socket address and then the port again), so [`ConnectTunnel`]
//! replaces it in the connector chain ([`connector`]): `CONNECT 10.0.0.1:80` with the same
//! `Host`, as RFC 9112 §3.2.3 asks for an authority-form target; TLS to the target then goes on
//! top of the tunnel with the URL's name for SNI and certificate checks, as without a proxy.

use crate::fetch::private::AddressPolicy;
use base64::Engine;
use std::fmt;
use std::io::{Read, Write};
use std::sync::Arc;
use ureq::config::Config;
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, NextTimeout, RustlsConnector, SocksConnector,
    TcpConnector, Transport, TransportAdapter,
};
use ureq::{Proxy, ProxyProtocol};

/// Longest `CONNECT` reply head read from a proxy (a status line and a few headers).
const MAX_REPLY: usize = 16 * 1024;

/// The proxy as the crawl uses it: with `policy` refusing anything, one that is sent addresses
/// resolved (and checked) here instead of names; `no_proxy_env` is the environment's `NO_PROXY`
/// (kept for a proxy that came from the environment, as ureq read it).
pub fn resolved_here(
    proxy: Proxy,
    policy: &AddressPolicy,
    no_proxy_env: Option<&str>,
) -> Result<Proxy, ureq::Error> {
    if policy.allows_all() || proxy.resolve_target() {
        return Ok(proxy);
    }
    let mut builder = Proxy::builder(proxy.protocol())
        .host(proxy.host())
        .port(proxy.port())
        .resolve_target(true);
    if let Some(user) = proxy.username() {
        builder = builder.username(user);
    }
    if let Some(password) = proxy.password() {
        builder = builder.password(password);
    }
    if proxy.is_from_env() {
        for expr in no_proxy_env.unwrap_or_default().split(',') {
            builder = builder.no_proxy(expr);
        }
    }
    builder.build()
}

/// `NO_PROXY` (or `no_proxy`) as ureq reads it: the first one set.
pub fn no_proxy_env() -> Option<String> {
    ["NO_PROXY", "no_proxy"]
        .iter()
        .find_map(|name| std::env::var(name).ok())
}

/// The connector chain every connection goes through: a SOCKS proxy, or a `CONNECT` tunnel
/// ([`ConnectTunnel`]), or TCP; then TLS for `https`. `direct` is the agents' configuration
/// without the proxy, for the connection to the proxy itself.
pub fn connector(direct: Config, user_agent: &str) -> Arc<dyn Connector<Out = Box<dyn Transport>>> {
    Arc::new(
        ().chain(SocksConnector::default())
            .chain(ConnectTunnel {
                direct,
                user_agent: user_agent.to_owned(),
            })
            .chain(TcpConnector::default())
            .chain(RustlsConnector::default())
            .chain(Boxed),
    )
}

/// ureq's `CONNECT` step, writing a resolved target correctly (see the module doc).
pub struct ConnectTunnel {
    /// The agents' configuration without the proxy: the connection to the proxy itself.
    direct: Config,
    user_agent: String,
}

impl fmt::Debug for ConnectTunnel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectTunnel").finish()
    }
}

impl<In: Transport> Connector<In> for ConnectTunnel {
    type Out = Either<In, Box<dyn Transport>>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        if let Some(transport) = chained {
            return Ok(Some(Either::A(transport)));
        }
        let Some(proxy) = details.config.proxy() else {
            return Ok(None);
        };
        if !matches!(proxy.protocol(), ProxyProtocol::Http | ProxyProtocol::Https)
            || proxy.is_no_proxy(details.uri)
        {
            return Ok(None);
        }
        let target = tunnel_target(details, proxy)?;
        let proxy_addrs = details
            .resolver
            .resolve(proxy.uri(), details.config, details.timeout)?;
        let to_proxy = ConnectionDetails {
            uri: proxy.uri(),
            addrs: proxy_addrs,
            config: &self.direct,
            request_level: details.request_level,
            resolver: details.resolver,
            now: details.now,
            timeout: details.timeout,
            current_time: details.current_time.clone(),
            run_connector: details.run_connector.clone(),
            register_shutdown: details.register_shutdown.clone(),
        };
        let transport = (details.run_connector)(&to_proxy)?;
        let mut io = TransportAdapter::new(transport, details.current_time.clone());
        io.set_timeout(details.timeout);
        io.write_all(connect_head(&target, &self.user_agent, proxy).as_bytes())?;
        let reply = read_reply(&mut io)?;
        match status(&reply) {
            Some(200) => Ok(Some(Either::B(Box::new(Tunnel(io.into_inner()))))),
            _ => Err(ureq::Error::ConnectProxyFailed(format!(
                "proxy server responded {:?}",
                String::from_utf8_lossy(reply.split(|&b| b == b'\r').next().unwrap_or(&[]))
            ))),
        }
    }
}

/// The `CONNECT` target: the checked address ureq resolved when the proxy resolves here, else
/// the URL's `host:port`.
fn tunnel_target(details: &ConnectionDetails, proxy: &Proxy) -> Result<String, ureq::Error> {
    if proxy.resolve_target() {
        // The resolver returns an error rather than an empty answer; be safe anyway.
        return match details.addrs.first() {
            Some(addr) => Ok(addr.to_string()),
            None => Err(ureq::Error::HostNotFound),
        };
    }
    let authority = details.uri.authority().ok_or(ureq::Error::HostNotFound)?;
    let port = authority
        .port_u16()
        .unwrap_or(match details.uri.scheme_str() {
            Some("https") => 443,
            _ => 80,
        });
    Ok(format!("{}:{port}", authority.host()))
}

/// The request head asking the proxy for a tunnel to `target` (`host:port`).
fn connect_head(target: &str, user_agent: &str, proxy: &Proxy) -> String {
    let mut head = format!(
        "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\nUser-Agent: {user_agent}\r\n\
         Proxy-Connection: Keep-Alive\r\n"
    );
    if proxy.username().is_some() || proxy.password().is_some() {
        let pair = format!(
            "{}:{}",
            proxy.username().unwrap_or_default(),
            proxy.password().unwrap_or_default()
        );
        let creds = base64::engine::general_purpose::STANDARD.encode(pair);
        head.push_str(&format!("Proxy-Authorization: Basic {creds}\r\n"));
    }
    head.push_str("\r\n");
    head
}

/// The proxy's reply head, read a byte at a time so that nothing after it is taken from the
/// tunnel; at most `MAX_REPLY` bytes, within the connect timeout (the adapter's).
fn read_reply(io: &mut impl Read) -> Result<Vec<u8>, ureq::Error> {
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= MAX_REPLY {
            return Err(ureq::Error::ConnectProxyFailed(format!(
                "proxy reply head longer than {MAX_REPLY} bytes"
            )));
        }
        if io.read(&mut byte)? == 0 {
            return Err(ureq::Error::ConnectProxyFailed(
                "proxy closed the connection before answering".into(),
            ));
        }
        head.push(byte[0]);
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

/// The tunnel: the connection to the proxy, which is not TLS to the target even when it is
/// TLS to an `https://` proxy (so TLS to the target goes on top).
#[derive(Debug)]
struct Tunnel(Box<dyn Transport>);

impl Transport for Tunnel {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.0.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.0.transmit_output(amount, timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.0.await_input(timeout)
    }

    fn is_open(&mut self) -> bool {
        self.0.is_open()
    }

    fn is_tls(&self) -> bool {
        false
    }
}

/// The last link of the chain: whatever connection was made, boxed.
#[derive(Debug)]
struct Boxed;

impl<In: Transport> Connector<In> for Boxed {
    type Out = Box<dyn Transport>;

    fn connect(
        &self,
        _: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        Ok(chained.map(|t| Box::new(t) as Box<dyn Transport>))
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
    fn proxies_that_resolve_names_are_made_to_resolve_here() {
        for url in [
            "http://u:p%40ss@127.0.0.1:3128",
            "https://127.0.0.1:3129",
            "socks5h://127.0.0.1:1080",
            "socks4a://127.0.0.1:1081",
        ] {
            let given = Proxy::new(url).unwrap();
            assert!(!given.resolve_target(), "{url}");
            let used = resolved_here(given.clone(), &policy(false), None).unwrap();
            assert!(used.resolve_target(), "{url}");
            assert_eq!(
                (used.protocol(), used.host(), used.port()),
                (given.protocol(), given.host(), given.port()),
                "{url}"
            );
            assert_eq!(
                (used.username(), used.password()),
                (given.username(), given.password())
            );
            // --allow-private leaves names to the proxy.
            let open = resolved_here(given, &policy(true), None).unwrap();
            assert!(!open.resolve_target(), "{url}");
        }
        // A proxy that resolves here already is kept as it is.
        let socks5 = Proxy::new("socks5://127.0.0.1:1080").unwrap();
        assert!(
            resolved_here(socks5, &policy(false), None)
                .unwrap()
                .resolve_target()
        );
    }

    #[test]
    fn connect_heads_name_the_address_once_and_replies_are_bounded() {
        let proxy = Proxy::new("http://user:pw@127.0.0.1:3128").unwrap();
        let head = connect_head("[::1]:8080", "crawl/1", &proxy);
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
}
