//! Private addresses: which addresses the crawler refuses to connect to, and the seed rule that
//! opens them again.
//!
//! A public page can link to `http://169.254.169.254/` (cloud metadata, which serves
//! credentials), to `http://10.0.0.1/admin`, or to a name that resolves to such an address; a
//! crawler on a cloud server would fetch it and archive the answer. So every address a fetch
//! would connect to is checked here after DNS (`dns::CachingResolver` filters each answer,
//! names, IP literals, redirect targets and cached answers alike; the client connects only to
//! what the resolver returns). A refused fetch is the URL-log error `private-address`
//! (`error::ErrorKind::PrivateAddress`).
//!
//! The refused ranges ([`RANGES`]) are the IANA IPv4 and IPv6 Special-Purpose Address
//! Registries' entries that are not globally reachable, plus multicast and the reserved
//! 240.0.0.0/4 and the deprecated IPv4-compatible `::/96` and site-local `fec0::/10`. Addresses
//! that embed an IPv4 address (IPv4-mapped `::ffff:0:0/96`, NAT64 `64:ff9b::/96`, 6to4
//! `2002::/16`) are judged by the embedded address.
//!
//! The seed rule (`AddressPolicy::new`): a range is open when a seed URL's host is an address
//! in it (seed `http://10.1.2.3/` opens all of 10.0.0.0/8, and nothing else; seed
//! `http://127.0.0.1:8080/` opens 127.0.0.0/8), or is `localhost` (which opens the loopback
//! ranges, RFC 6761). A seed given by any other name opens nothing: a DNS answer can never widen
//! what is allowed (a seed whose name an attacker points at 169.254.169.254 is refused). To
//! crawl an intranet by name, give `--allow-private`, which opens everything.
//!
//! A seed never opens link-local (169.254.0.0/16, fe80::/10) nor a cloud metadata address
//! inside another range ([`METADATA`]): a seed list from an untrusted source could otherwise
//! point the crawler at `169.254.169.254`, the metadata endpoint of every major cloud, and
//! archive what it answers (credentials). Only `--allow-private` opens them.
//!
//! Tests never leave loopback: `CRAWL_TEST_FORBID` (a hidden knob) lists loopback addresses a
//! test declares forbidden even though a 127.0.0.1 seed opened their range, and it accepts
//! nothing but loopback addresses.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;
use url::{Host, Url};

/// One special-purpose range: a prefix and its name (the IANA registry's, shortened).
#[derive(Debug, PartialEq, Eq)]
pub struct Range {
    pub net: IpAddr,
    pub prefix: u8,
    pub name: &'static str,
}

const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8, name: &'static str) -> Range {
    Range {
        net: IpAddr::V4(Ipv4Addr::new(a, b, c, d)),
        prefix,
        name,
    }
}

const fn v6(segments: [u16; 8], prefix: u8, name: &'static str) -> Range {
    let [a, b, c, d, e, f, g, h] = segments;
    Range {
        net: IpAddr::V6(Ipv6Addr::new(a, b, c, d, e, f, g, h)),
        prefix,
        name,
    }
}

/// Every refused range. Globally reachable entries of the registries (192.0.0.9/32 and
/// 192.0.0.10/32 inside 192.0.0.0/24 aside, AS112 and AMT prefixes) are not listed: they are
/// public addresses. 192.0.0.0/24 is refused whole; a crawler has nothing to fetch from a
/// PCP or TURN anycast address.
pub const RANGES: &[Range] = &[
    v4(0, 0, 0, 0, 8, "this-network"),
    v4(10, 0, 0, 0, 8, "private"),
    v4(100, 64, 0, 0, 10, "shared-cgnat"),
    v4(127, 0, 0, 0, 8, "loopback"),
    v4(169, 254, 0, 0, 16, "link-local"),
    v4(172, 16, 0, 0, 12, "private"),
    v4(192, 0, 0, 0, 24, "ietf-protocol"),
    v4(192, 0, 2, 0, 24, "documentation"),
    v4(192, 88, 99, 0, 24, "6to4-relay"),
    v4(192, 168, 0, 0, 16, "private"),
    v4(198, 18, 0, 0, 15, "benchmarking"),
    v4(198, 51, 100, 0, 24, "documentation"),
    v4(203, 0, 113, 0, 24, "documentation"),
    v4(224, 0, 0, 0, 4, "multicast"),
    v4(240, 0, 0, 0, 4, "reserved"),
    v6([0, 0, 0, 0, 0, 0, 0, 1], 128, "loopback"),
    v6([0, 0, 0, 0, 0, 0, 0, 0], 128, "unspecified"),
    v6([0, 0, 0, 0, 0, 0, 0, 0], 96, "ipv4-compatible"),
    v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48, "nat64-local"),
    v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64, "discard"),
    v6([0x100, 0, 0, 1, 0, 0, 0, 0], 64, "dummy"),
    v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32, "teredo"),
    v6([0x2001, 2, 0, 0, 0, 0, 0, 0], 48, "benchmarking"),
    v6([0x2001, 0x10, 0, 0, 0, 0, 0, 0], 28, "orchid"),
    v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, "documentation"),
    v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, "documentation"),
    v6([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16, "srv6-sid"),
    v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, "unique-local"),
    v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, "link-local"),
    v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, "site-local"),
    v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, "multicast"),
];

impl Range {
    fn contains(&self, ip: IpAddr) -> bool {
        match (self.net, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(ip) & mask == u32::from(net)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(ip) & mask == u128::from(net)
            }
            _ => false,
        }
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}/{}", self.name, self.net, self.prefix)
    }
}

/// The IPv4 address an IPv6 address stands for: IPv4-mapped (`::ffff:a.b.c.d`), NAT64's
/// well-known prefix (`64:ff9b::a.b.c.d`, RFC 6052) and 6to4 (`2002:AABB:CCDD::/48`, RFC 3056).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let last = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => Some(last(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(last(hi, lo)),
        [0x2002, hi, lo, ..] => Some(last(hi, lo)),
        _ => None,
    }
}

/// The special-purpose range `ip` is in, or `None` for a public address. An IPv6 address that
/// embeds an IPv4 address is in that address's range.
pub fn special(ip: IpAddr) -> Option<&'static Range> {
    let ip = match ip {
        IpAddr::V6(v6) => embedded_v4(v6).map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    RANGES.iter().find(|r| r.contains(ip))
}

/// Cloud metadata addresses outside link-local (which no seed opens either): AWS's IPv6
/// instance metadata endpoint, inside unique-local fc00::/7. A seed never opens them.
pub const METADATA: [IpAddr; 1] = [IpAddr::V6(Ipv6Addr::new(
    0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254,
))];

/// Whether only `--allow-private` opens `ip` of `range`, never a seed (see the module doc).
fn never_by_seed(ip: IpAddr, range: &Range) -> bool {
    range.name == "link-local" || METADATA.contains(&ip)
}

/// Why an address was refused: the URL log says `private-address`, the message says which.
#[derive(Debug)]
pub struct Refused {
    pub ip: IpAddr,
    pub range: &'static str,
    /// Link-local or a metadata address: only `--allow-private` opens it, a seed cannot.
    pub never_by_seed: bool,
}

impl Refused {
    /// The range's name, and "cloud metadata" for a metadata address (169.254.169.254 or one
    /// of [`METADATA`]).
    pub fn rule(&self) -> String {
        let metadata =
            self.ip == IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)) || METADATA.contains(&self.ip);
        match metadata {
            true => format!("{}, cloud metadata", self.range),
            false => self.range.to_owned(),
        }
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.never_by_seed {
            true => write!(
                f,
                "refused to connect to {} ({}): link-local and cloud metadata addresses are \
                 opened only by --allow-private, never by a seed",
                self.ip,
                self.rule()
            ),
            false => write!(
                f,
                "refused to connect to {} ({}): a private address no seed opened \
                 (--allow-private)",
                self.ip, self.range
            ),
        }
    }
}

impl std::error::Error for Refused {}

/// Which addresses fetches may connect to. Cheap to clone (shared).
#[derive(Clone, Debug, Default)]
pub struct AddressPolicy(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    /// `--allow-private`: nothing is refused.
    allow_all: bool,
    /// Ranges opened by seeds (indexes into `RANGES`).
    open: Vec<usize>,
    /// Loopback addresses a test declares forbidden (`CRAWL_TEST_FORBID`).
    forbidden: Vec<IpAddr>,
}

impl AddressPolicy {
    /// The policy of a crawl: everything in `RANGES` refused, except the ranges the seeds'
    /// hosts are in (see the module doc), or nothing refused with `allow_private`.
    pub fn new(seeds: &[Url], allow_private: bool) -> AddressPolicy {
        let mut open = Vec::new();
        let mut add = |ip: IpAddr| {
            let range = special(ip).filter(|r| !never_by_seed(ip, r));
            if let Some(i) = range.and_then(|r| RANGES.iter().position(|x| x == r))
                && !open.contains(&i)
            {
                open.push(i);
            }
        };
        for seed in seeds {
            match seed.host() {
                Some(Host::Ipv4(ip)) => add(IpAddr::V4(ip)),
                Some(Host::Ipv6(ip)) => add(IpAddr::V6(ip)),
                Some(Host::Domain(name)) if name == "localhost" || name.ends_with(".localhost") => {
                    add(IpAddr::V4(Ipv4Addr::LOCALHOST));
                    add(IpAddr::V6(Ipv6Addr::LOCALHOST));
                }
                _ => {}
            }
        }
        AddressPolicy(Arc::new(Inner {
            allow_all: allow_private,
            open,
            forbidden: test_forbidden(),
        }))
    }

    /// `--allow-private`: nothing is refused (a proxy may then resolve names itself).
    pub fn allows_all(&self) -> bool {
        self.0.allow_all
    }

    /// The first seed whose host is an address this policy refuses (link-local or a metadata
    /// address, which no seed opens), with why: checked before anything is built, so such a
    /// seed is bad input, not a site that did not answer. A seed by name is checked only when
    /// it resolves, like every name.
    pub fn refused_seed<'a>(&self, seeds: &'a [Url]) -> Option<(&'a Url, Refused)> {
        seeds.iter().find_map(|seed| {
            let ip = match seed.host()? {
                Host::Ipv4(ip) => IpAddr::V4(ip),
                Host::Ipv6(ip) => IpAddr::V6(ip),
                Host::Domain(_) => return None,
            };
            self.check(ip).err().map(|refused| (seed, refused))
        })
    }

    /// Whether a fetch may connect to `ip`.
    pub fn check(&self, ip: IpAddr) -> Result<(), Refused> {
        let inner = &*self.0;
        if inner.allow_all {
            return Ok(());
        }
        let Some(range) = special(ip) else {
            return Ok(());
        };
        let opened = RANGES
            .iter()
            .position(|r| r == range)
            .is_some_and(|i| inner.open.contains(&i));
        let forbidden = inner.forbidden.contains(&ip)
            || embedded(ip).is_some_and(|v4| inner.forbidden.contains(&v4));
        let never_by_seed = never_by_seed(ip, range);
        match opened && !forbidden && !never_by_seed {
            true => Ok(()),
            false => Err(Refused {
                ip,
                range: range.name,
                never_by_seed,
            }),
        }
    }
}

/// The embedded IPv4 address of an IPv6 one, as an `IpAddr`.
fn embedded(ip: IpAddr) -> Option<IpAddr> {
    match ip {
        IpAddr::V6(v6) => embedded_v4(v6).map(IpAddr::V4),
        IpAddr::V4(_) => None,
    }
}

/// `CRAWL_TEST_FORBID=127.0.0.2,...`: loopback addresses declared forbidden for a test. Anything
/// that is not a loopback address is ignored, so the knob can only ever forbid more of loopback.
fn test_forbidden() -> Vec<IpAddr> {
    loopback_list(&std::env::var("CRAWL_TEST_FORBID").unwrap_or_default())
}

/// The loopback addresses of a comma-separated list; anything else is dropped.
fn loopback_list(list: &str) -> Vec<IpAddr> {
    list.split(',')
        .filter_map(|a| a.trim().parse::<IpAddr>().ok())
        .filter(IpAddr::is_loopback)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn range_of(text: &str) -> Option<&'static str> {
        special(ip(text)).map(|r| r.name)
    }

    #[test]
    fn every_range_is_classified_at_its_edges() {
        // The first and last address of every range are in it; the addresses just outside
        // are not in it (they may be in a neighbouring range).
        for range in RANGES {
            let (first, last, before, after) = match range.net {
                IpAddr::V4(net) => {
                    let n = u32::from(net);
                    let size = 1u64 << (32 - range.prefix);
                    let last = (u64::from(n) + size - 1) as u32;
                    (
                        IpAddr::V4(n.into()),
                        IpAddr::V4(last.into()),
                        n.checked_sub(1).map(|b| IpAddr::V4(b.into())),
                        last.checked_add(1).map(|a| IpAddr::V4(a.into())),
                    )
                }
                IpAddr::V6(net) => {
                    let n = u128::from(net);
                    let last = n | u128::MAX.checked_shr(u32::from(range.prefix)).unwrap_or(0);
                    (
                        IpAddr::V6(n.into()),
                        IpAddr::V6(last.into()),
                        n.checked_sub(1).map(|b| IpAddr::V6(b.into())),
                        last.checked_add(1).map(|a| IpAddr::V6(a.into())),
                    )
                }
            };
            assert!(range.contains(first) && range.contains(last), "{range}");
            for outside in [before, after].into_iter().flatten() {
                assert!(!range.contains(outside), "{outside} in {range}");
            }
            assert!(
                special(first).is_some() && special(last).is_some(),
                "{range}"
            );
        }
    }

    #[test]
    fn the_issue_s_ranges_are_refused_and_public_addresses_are_not() {
        let cases = [
            ("127.0.0.1", Some("loopback")),
            ("127.255.255.254", Some("loopback")),
            ("10.0.0.1", Some("private")),
            ("172.16.0.1", Some("private")),
            ("172.31.255.255", Some("private")),
            ("192.168.1.1", Some("private")),
            ("169.254.169.254", Some("link-local")),
            ("100.64.0.1", Some("shared-cgnat")),
            ("100.127.255.255", Some("shared-cgnat")),
            ("0.0.0.0", Some("this-network")),
            ("255.255.255.255", Some("reserved")),
            ("224.0.0.1", Some("multicast")),
            ("192.0.2.7", Some("documentation")),
            ("::1", Some("loopback")),
            ("::", Some("unspecified")),
            ("fc00::1", Some("unique-local")),
            ("fd12:3456::1", Some("unique-local")),
            ("fe80::1", Some("link-local")),
            ("ff02::1", Some("multicast")),
            // IPv4 addresses inside IPv6 ones are judged as themselves.
            ("::ffff:127.0.0.1", Some("loopback")),
            ("::ffff:169.254.169.254", Some("link-local")),
            ("::ffff:10.1.1.1", Some("private")),
            ("64:ff9b::a9fe:a9fe", Some("link-local")),
            ("2002:c0a8:0101::1", Some("private")),
            ("::127.0.0.1", Some("ipv4-compatible")),
            // Public addresses, some right beside private ranges.
            ("8.8.8.8", None),
            ("1.1.1.1", None),
            ("172.15.255.255", None),
            ("172.32.0.0", None),
            ("100.63.255.255", None),
            ("100.128.0.0", None),
            ("169.253.255.255", None),
            ("11.0.0.0", None),
            ("192.0.3.0", None),
            ("2606:4700:4700::1111", None),
            ("2001:4860:4860::8888", None),
            ("::ffff:8.8.8.8", None),
            ("64:ff9b::808:808", None),
            ("2002:0808:0808::1", None),
        ];
        for (text, want) in cases {
            assert_eq!(range_of(text), want, "{text}");
        }
    }

    fn policy(seeds: &[&str], allow: bool) -> AddressPolicy {
        let seeds: Vec<Url> = seeds.iter().map(|s| Url::parse(s).unwrap()).collect();
        let mut policy = AddressPolicy::new(&seeds, allow);
        Arc::get_mut(&mut policy.0).unwrap().forbidden.clear(); // whatever the environment says
        policy
    }

    #[test]
    fn a_seed_opens_its_own_range_and_nothing_else() {
        let public = policy(&["http://example.com/"], false);
        for refused in ["127.0.0.1", "10.0.0.1", "169.254.169.254", "::1", "fd00::1"] {
            let e = public.check(ip(refused)).unwrap_err();
            assert_eq!(e.ip, ip(refused));
        }
        assert!(public.check(ip("93.184.216.34")).is_ok());

        let loopback = policy(&["http://127.0.0.1:8080/"], false);
        assert!(loopback.check(ip("127.0.0.2")).is_ok());
        assert!(loopback.check(ip("::ffff:127.0.0.9")).is_ok());
        assert!(
            loopback.check(ip("0.0.0.0")).is_err(),
            "0.0.0.0 is not loopback"
        );
        assert!(loopback.check(ip("10.0.0.1")).is_err());
        assert!(loopback.check(ip("::1")).is_err(), "::1 is its own range");

        let intranet = policy(&["http://10.1.2.3/"], false);
        assert!(intranet.check(ip("10.200.0.1")).is_ok());
        assert_eq!(
            intranet.check(ip("192.168.0.1")).unwrap_err().range,
            "private"
        );
        assert!(intranet.check(ip("169.254.169.254")).is_err());

        let named = policy(&["http://localhost:3000/"], false);
        assert!(named.check(ip("127.0.0.1")).is_ok() && named.check(ip("::1")).is_ok());
        assert!(named.check(ip("10.0.0.1")).is_err());
        let v6 = policy(&["http://[fd00::5]/"], false);
        assert!(v6.check(ip("fdff::1")).is_ok() && v6.check(ip("fe80::1")).is_err());

        let all = policy(&["http://example.com/"], true);
        assert!(all.check(ip("169.254.169.254")).is_ok() && all.check(ip("::")).is_ok());
    }

    #[test]
    fn no_seed_opens_link_local_or_a_metadata_address() {
        // Nothing here connects: the policy is asked, no socket is made.
        for seeds in [
            &["http://169.254.169.254/latest/meta-data/"][..],
            &["http://169.254.1.1/", "http://[fe80::1]/"],
            &["http://[::ffff:169.254.169.254]/"],
            &["http://[fd00:ec2::254]/", "http://[fd00::5]/"],
        ] {
            let seeded = policy(seeds, false);
            for refused in ["169.254.169.254", "169.254.1.1", "fe80::1", "fd00:ec2::254"] {
                let e = seeded.check(ip(refused)).unwrap_err();
                assert!(e.never_by_seed, "{seeds:?}: {refused}");
                let message = e.to_string();
                assert!(
                    message.contains(refused) && message.contains("only by --allow-private"),
                    "{message}"
                );
            }
        }
        // The rest of unique-local is still opened by a seed in it; --allow-private opens all.
        assert!(
            policy(&["http://[fd00::5]/"], false)
                .check(ip("fd00::6"))
                .is_ok()
        );
        assert!(
            policy(&["http://[fd00::5]/"], false)
                .check(ip("fd00:ec2::253"))
                .is_ok()
        );
        let all = policy(&["http://169.254.169.254/"], true);
        for opened in ["169.254.169.254", "fe80::1", "fd00:ec2::254"] {
            assert!(all.check(ip(opened)).is_ok(), "{opened}");
        }
        // Other refusals keep their message.
        let e = policy(&["http://example.com/"], false)
            .check(ip("10.0.0.1"))
            .unwrap_err();
        assert!(
            !e.never_by_seed && e.to_string().contains("no seed opened"),
            "{e}"
        );
    }

    #[test]
    fn the_test_knob_forbids_loopback_addresses_only() {
        let mut forbid = policy(&["http://127.0.0.1/"], false);
        Arc::get_mut(&mut forbid.0).unwrap().forbidden = vec![ip("127.0.0.2")];
        assert!(forbid.check(ip("127.0.0.1")).is_ok());
        assert_eq!(forbid.check(ip("127.0.0.2")).unwrap_err().range, "loopback");
        assert!(forbid.check(ip("::ffff:127.0.0.2")).is_err());
        // The knob keeps loopback addresses only: it can never make a test reach further.
        let kept = loopback_list("127.0.0.2, 10.0.0.1,::1,8.8.8.8,169.254.169.254,junk");
        assert_eq!(kept, [ip("127.0.0.2"), ip("::1")]);
    }
}
