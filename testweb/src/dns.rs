//! A DNS server over UDP that answers every query after a fixed delay, and logs when each
//! question came: for tests and benchmarks of how a crawler resolves names (when it asks, how
//! many at once).
//!
//! It answers the A questions of the names `answer` knows (class IN, one answer record, TTL
//! [`TTL`]), an empty answer (NOERROR, no record) to any other type asked of such a name (the
//! AAAA that `getaddrinfo` sends beside each A), and NXDOMAIN for the rest. Malformed
//! packets, responses and queries that are not one standard question are dropped unanswered.
//!
//! One thread serves every query: it reads questions and sends each answer its name's delay
//! after its question came, without blocking the next question. The delay is the name's
//! own ([`DnsServer::start_with`]): one for all, or a web where a few names answer slowly, as
//! dead domains and slow authoritative servers do; answers wait in a queue ordered by when
//! they fall due.
//!
//! The benchmark web's names are [`host_name`]: `h{i}.web.test` for host i (`.test` is
//! reserved for testing, RFC 6761), answered with `server::host_address(i)`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, ErrorKind};
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The domain the benchmark web's hosts are named in.
pub const DOMAIN: &str = "web.test";

/// The TTL of every answer, in seconds.
pub const TTL: u32 = 300;

/// The receive buffer asked for: a crawl that starts thousands of look-ups at once sends a
/// burst of questions (an A and an AAAA each), which the default buffer (about 200 KiB, some
/// 300 datagrams) would drop, and a dropped question costs its client a retry 5 s later.
const RECEIVE_BUFFER: libc::c_int = 32 << 20;

/// How often the server looks at its stop flag while no answer is due.
const STOP_POLL: Duration = Duration::from_millis(50);

/// Record types and classes.
const TYPE_A: u16 = 1;
const CLASS_IN: u16 = 1;
/// Response codes.
const NOERROR: u16 = 0;
const NXDOMAIN: u16 = 3;

/// Host `i`'s name in the benchmark web.
pub fn host_name(i: usize) -> String {
    format!("h{i}.{DOMAIN}")
}

/// The host index of a benchmark name (`h{i}.web.test`, any case, no leading zeros), if it is
/// one.
pub fn host_of_name(name: &str) -> Option<usize> {
    let name = name.to_ascii_lowercase();
    let digits = name
        .strip_prefix('h')?
        .strip_suffix(DOMAIN)?
        .strip_suffix('.')?;
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok()).flatten()
}

/// One question received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// When it was read.
    pub at: Instant,
    /// The name asked for, lower-cased, without the root's trailing dot.
    pub name: String,
    /// The record type asked for (1 = A, 28 = AAAA).
    pub qtype: u16,
}

/// A running DNS server; stops on [`DnsServer::shutdown`] or drop.
pub struct DnsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    queries: Arc<Mutex<Vec<Query>>>,
    thread: Option<JoinHandle<()>>,
}

/// What the server answers for a name: its address, or None (NXDOMAIN).
pub type Answer = Box<dyn Fn(&str) -> Option<Ipv4Addr> + Send>;

/// How long after its question a name is answered.
pub type Delay = Box<dyn Fn(&str) -> Duration + Send>;

impl DnsServer {
    /// Binds `bind` (port 0 picks a free one) and answers each question `delay(name)` after it
    /// came.
    pub fn start_with(bind: SocketAddr, delay: Delay, answer: Answer) -> io::Result<DnsServer> {
        let socket = UdpSocket::bind(bind)?;
        grow_receive_buffer(&socket);
        let addr = socket.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let queries = Arc::new(Mutex::new(Vec::new()));
        let (stop2, queries2) = (stop.clone(), queries.clone());
        let thread = std::thread::Builder::new()
            .name("testweb-dns".into())
            .spawn(move || serve(socket, delay, answer, &stop2, &queries2))?;
        Ok(DnsServer {
            addr,
            stop,
            queries,
            thread: Some(thread),
        })
    }

    /// The address it answers on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The questions received so far, in order.
    pub fn queries(&self) -> Vec<Query> {
        self.queries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Stops serving (answers not yet due are not sent) and returns every question received.
    pub fn shutdown(mut self) -> Vec<Query> {
        self.stop_thread();
        self.queries()
    }

    fn stop_thread(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for DnsServer {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// Asks for `RECEIVE_BUFFER` bytes of receive buffer: beyond `net.core.rmem_max` if allowed
/// (root), else as much as that allows.
fn grow_receive_buffer(socket: &UdpSocket) {
    use std::os::fd::AsRawFd;
    let size = RECEIVE_BUFFER;
    for option in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
        // SAFETY: a valid socket, and a c_int option value of the size given.
        let set = unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                libc::SOL_SOCKET,
                option,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if set == 0 {
            return;
        }
    }
}

/// An answer waiting: when it falls due, its question's arrival number, the reply, the asker.
type DueAnswer = (Instant, u64, Vec<u8>, SocketAddr);

/// Reads questions and sends each answer when due, until `stop`.
fn serve(
    socket: UdpSocket,
    delay: Delay,
    answer: Answer,
    stop: &AtomicBool,
    queries: &Mutex<Vec<Query>>,
) {
    // Answers by when they fall due, then by arrival (`sent`: the questions read before).
    let mut due: BinaryHeap<Reverse<DueAnswer>> = BinaryHeap::new();
    let mut sent = 0u64;
    let mut buf = [0u8; 1500];
    while !stop.load(Ordering::Acquire) {
        let now = Instant::now();
        while due.peek().is_some_and(|Reverse((at, ..))| *at <= now) {
            let Reverse((_, _, reply, peer)) = due.pop().expect("a first");
            let _ = socket.send_to(&reply, peer);
        }
        let wait = due
            .peek()
            .map_or(STOP_POLL, |Reverse((at, ..))| {
                at.saturating_duration_since(now)
            })
            .clamp(Duration::from_micros(100), STOP_POLL);
        if socket.set_read_timeout(Some(wait)).is_err() {
            return;
        }
        let (n, peer) = match socket.recv_from(&mut buf) {
            Ok(got) => got,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        let at = Instant::now();
        let Some(question) = parse_question(&buf[..n]) else {
            continue;
        };
        let address = answer(&question.name);
        let reply = reply(&buf[..n], &question, address);
        let at_due = at + delay(&question.name);
        queries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Query {
                at,
                name: question.name,
                qtype: question.qtype,
            });
        due.push(Reverse((at_due, sent, reply, peer)));
        sent += 1;
    }
}

/// The one question of a standard query.
struct Question {
    name: String,
    qtype: u16,
    /// Where the question section ends in the query.
    end: usize,
}

fn u16_at(packet: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*packet.get(at)?, *packet.get(at + 1)?]))
}

/// The question of a query (QR = 0, opcode 0, QDCOUNT = 1, no compression in the name).
fn parse_question(packet: &[u8]) -> Option<Question> {
    let flags = u16_at(packet, 2)?;
    if flags & 0x8000 != 0 || (flags >> 11) & 0xf != 0 || u16_at(packet, 4)? != 1 {
        return None;
    }
    let mut at = 12;
    let mut labels: Vec<String> = Vec::new();
    loop {
        let len = *packet.get(at)? as usize;
        at += 1;
        if len == 0 {
            break;
        }
        if len > 63 {
            return None; // a compression pointer or a reserved label type
        }
        let label = packet.get(at..at + len)?;
        labels.push(String::from_utf8_lossy(label).to_ascii_lowercase());
        at += len;
    }
    let qtype = u16_at(packet, at)?;
    let qclass = u16_at(packet, at + 2)?;
    (qclass == CLASS_IN).then(|| Question {
        name: labels.join("."),
        qtype,
        end: at + 4,
    })
}

/// The answer to `query`: its ID, RD and question echoed; one A record when the name has
/// `address` and the question is for A, none for another type, NXDOMAIN without an address.
fn reply(query: &[u8], question: &Question, address: Option<Ipv4Addr>) -> Vec<u8> {
    let rd = u16_at(query, 2).unwrap_or(0) & 0x0100;
    let rcode = if address.is_some() { NOERROR } else { NXDOMAIN };
    let record = address.filter(|_| question.qtype == TYPE_A);
    // QR, RD as asked, RA.
    let flags = 0x8000 | rd | 0x0080 | rcode;
    let mut out = Vec::with_capacity(question.end + 16);
    out.extend_from_slice(&query[..2]);
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes());
    out.extend_from_slice(&u16::from(record.is_some()).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&query[12..question.end]);
    if let Some(ip) = record {
        out.extend_from_slice(&[0xc0, 12]); // the name: a pointer to the question's
        out.extend_from_slice(&TYPE_A.to_be_bytes());
        out.extend_from_slice(&CLASS_IN.to_be_bytes());
        out.extend_from_slice(&TTL.to_be_bytes());
        out.extend_from_slice(&4u16.to_be_bytes());
        out.extend_from_slice(&ip.octets());
    }
    out
}

/// A standard query for `name` and `qtype` with `id` (for tests and clients of this server).
pub fn query(id: u16, name: &str, qtype: u16) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + 18);
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&0x0100u16.to_be_bytes()); // RD
    out.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.split('.').filter(|l| !l.is_empty()) {
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
    out.extend_from_slice(&qtype.to_be_bytes());
    out.extend_from_slice(&CLASS_IN.to_be_bytes());
    out
}

/// An answer's ID, response code and A records (what a test checks of a reply).
pub fn parse_reply(packet: &[u8]) -> Option<(u16, u16, Vec<Ipv4Addr>)> {
    let id = u16_at(packet, 0)?;
    let rcode = u16_at(packet, 2)? & 0xf;
    let answers = u16_at(packet, 6)?;
    let question = parse_question_section(packet)?;
    let mut at = question;
    let mut addrs = Vec::new();
    for _ in 0..answers {
        // This server's records start with a two-byte pointer.
        let rtype = u16_at(packet, at + 2)?;
        let len = u16_at(packet, at + 10)? as usize;
        let data = packet.get(at + 12..at + 12 + len)?;
        if rtype == TYPE_A && len == 4 {
            addrs.push(Ipv4Addr::new(data[0], data[1], data[2], data[3]));
        }
        at += 12 + len;
    }
    Some((id, rcode, addrs))
}

/// Where the one question of a packet ends.
fn parse_question_section(packet: &[u8]) -> Option<usize> {
    let mut at = 12;
    loop {
        let len = *packet.get(at)? as usize;
        at += 1 + len;
        if len == 0 {
            return Some(at + 4);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host_address;

    #[test]
    fn benchmark_names_map_to_host_indexes() {
        assert_eq!(host_of_name(&host_name(0)), Some(0));
        assert_eq!(host_of_name("H123.Web.Test"), Some(123));
        for bad in [
            "h.web.test",
            "h01.web.test",
            "h1x.web.test",
            "h1.web.testx",
            "x1.web.test",
        ] {
            assert_eq!(host_of_name(bad), None, "{bad}");
        }
    }

    /// A server answering the benchmark web's names after `delay`, on loopback, and a client
    /// socket to ask it from (reads bounded, so a lost answer fails the test).
    fn web_server(delay: Delay) -> (DnsServer, UdpSocket) {
        let answer: Answer = Box::new(|name| host_of_name(name).and_then(host_address));
        let server = DnsServer::start_with("127.0.0.1:0".parse().unwrap(), delay, answer).unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        (server, client)
    }

    #[test]
    fn a_slow_name_answers_after_its_own_delay_behind_later_fast_ones() {
        let slow = Duration::from_millis(300);
        let delay: Delay = Box::new(move |name| match name {
            "h2.web.test" => slow,
            _ => Duration::ZERO,
        });
        let (server, client) = web_server(delay);
        let asked = Instant::now();
        for (id, name) in [(1, "h2.web.test"), (2, "h3.web.test")] {
            client
                .send_to(&query(id, name, TYPE_A), server.addr())
                .unwrap();
        }
        let mut buf = [0u8; 512];
        let mut order = Vec::new();
        for _ in 0..2 {
            let n = client.recv(&mut buf).unwrap();
            order.push((parse_reply(&buf[..n]).unwrap().0, asked.elapsed()));
        }
        assert_eq!(order[0].0, 2, "the fast name first: {order:?}");
        assert_eq!(order[1].0, 1, "{order:?}");
        assert!(
            order[1].1 >= slow,
            "the slow name before its delay: {order:?}"
        );
    }

    #[test]
    fn answers_come_after_the_delay_without_blocking_each_other() {
        let delay = Duration::from_millis(200);
        let (server, client) = web_server(Box::new(move |_| delay));
        let asked = Instant::now();
        // Five questions at once: all answered one delay later, not five.
        let names = [
            "h0.web.test",
            "h253.web.test",
            "h254.web.test",
            "nope.test",
            "h1.web.test",
        ];
        for (id, name) in names.iter().enumerate() {
            client
                .send_to(&query(id as u16, name, TYPE_A), server.addr())
                .unwrap();
        }
        client
            .send_to(&query(9, "h1.web.test", 28), server.addr())
            .unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 512];
        for _ in 0..6 {
            let n = client.recv(&mut buf).unwrap();
            got.push(parse_reply(&buf[..n]).unwrap());
        }
        let elapsed = asked.elapsed();
        assert!(elapsed >= delay, "answered before the delay: {elapsed:?}");
        got.sort();
        let a = |s: &str| vec![s.parse::<Ipv4Addr>().unwrap()];
        assert_eq!(
            got,
            [
                (0, NOERROR, a("127.0.0.1")),
                (1, NOERROR, a("127.0.0.254")),
                (2, NOERROR, a("127.0.1.1")),
                (3, NXDOMAIN, vec![]),
                (4, NOERROR, a("127.0.0.2")),
                (9, NOERROR, vec![]),
            ]
        );
        let log = server.shutdown();
        assert_eq!(log.len(), 6);
        assert_eq!((log[5].name.as_str(), log[5].qtype), ("h1.web.test", 28));
    }

    #[test]
    fn malformed_packets_are_dropped() {
        assert!(parse_question(&[0; 5]).is_none());
        let mut response = query(1, "h1.web.test", TYPE_A);
        response[2] |= 0x80;
        assert!(parse_question(&response).is_none());
        let mut truncated = query(1, "h1.web.test", TYPE_A);
        truncated.truncate(20);
        assert!(parse_question(&truncated).is_none());
    }
}
