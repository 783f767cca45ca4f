//! Shards as separate machines (issue 46, item 2): each shard in a network namespace of its own,
//! with its own address on a bridge, the broker (`redis-server`) in another. The test makes
//! the namespaces and removes them at the end, even on failure (`Lab`'s drop). It needs root
//! (`ip netns add`), as CI has; without it the test fails saying so.
//!
//! The network: namespace `B` holds the bridge `br0` (10.46.0.1/24, the broker's address) and
//! one end of each shard's veth pair; shard K's namespace holds the other end, `eth0`, with
//! 10.46.0.(10+K). The test web stays on this process's loopback: in each shard's namespace
//! the test listens on 127.0.0.1 at every host's port (a socket made there through `setns`)
//! and relays to its own 127.0.0.1, so pages are on loopback for every shard while the broker
//! is across the bridge, and taking a shard's `eth0` down cuts it off from the broker alone.
//!
//! One crawl of four shards: shard 2's link goes down for `PARTITION` (8 s here;
//! `CRAWL_NETNS_PARTITION_SECS` sets it, `benches/shards_netns.sh` runs it at 30 s) while it is
//! crawling; it waits, retries with backoff and goes on. Shard 1 is killed mid-crawl and
//! started in a new namespace (another address) from a copy of its directory. The crawl ends
//! once, every page fetched, none twice but the moved shard's pages in flight at the kill.
//! Then two recrawls on the same machines, the second after a third of the pages changed and
//! with the broker killed and restarted mid-run, each beside one process recrawling the same
//! web: the same pages, each once, the same notes.

use crate::shards::{
    ShardRun, ShardSpec, assert_changes_captured, host_of, reachable, single_run, spawn_netns,
    validating_web, wait_all, write_seeds,
};
use crate::util::{CRAWL_DEADLINE, counts, parse_log, read_summary, small_graph};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Runs `ip ARGS…` (or another tool), failing the test with its stderr.
fn sh(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} {args:?}: {e}"));
    assert!(
        out.status.success(),
        "{program} {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The namespaces of one test, their relays and processes; all removed on drop.
struct Lab {
    prefix: String,
    namespaces: Vec<String>,
    stop: Arc<AtomicBool>,
    relays: Vec<JoinHandle<()>>,
    broker: Option<Child>,
    broker_dir: tempfile::TempDir,
}

impl Lab {
    /// The broker's namespace with its bridge at 10.46.0.1.
    fn new() -> Lab {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        assert!(
            root,
            "the namespace test needs root (ip netns add), as CI runs it; run it as root"
        );
        let mut lab = Lab {
            prefix: format!("c46-{}", std::process::id()),
            namespaces: Vec::new(),
            stop: Arc::new(AtomicBool::new(false)),
            relays: Vec::new(),
            broker: None,
            broker_dir: tempfile::tempdir().unwrap(),
        };
        let b = lab.add("b");
        sh("ip", &["-n", &b, "link", "add", "br0", "type", "bridge"]);
        sh(
            "ip",
            &["-n", &b, "addr", "add", "10.46.0.1/24", "dev", "br0"],
        );
        sh("ip", &["-n", &b, "link", "set", "br0", "up"]);
        lab
    }

    /// Adds namespace `PREFIX-name` with its loopback up; returns its name.
    fn add(&mut self, name: &str) -> String {
        let ns = format!("{}-{name}", self.prefix);
        sh("ip", &["netns", "add", &ns]);
        self.namespaces.push(ns.clone());
        sh("ip", &["-n", &ns, "link", "set", "lo", "up"]);
        ns
    }

    fn broker_ns(&self) -> String {
        format!("{}-b", self.prefix)
    }

    /// A machine: namespace `name` on the bridge at 10.46.0.`host`, with relays to this
    /// process's loopback at `ports` (the test web's).
    fn machine(&mut self, name: &str, host: u8, ports: &[u16]) -> String {
        let ns = self.add(name);
        let b = self.broker_ns();
        let veth = format!("v{host}");
        sh(
            "ip",
            &[
                "-n", &b, "link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns",
                &ns,
            ],
        );
        sh("ip", &["-n", &b, "link", "set", &veth, "master", "br0"]);
        sh("ip", &["-n", &b, "link", "set", &veth, "up"]);
        let address = format!("10.46.0.{host}/24");
        sh("ip", &["-n", &ns, "addr", "add", &address, "dev", "eth0"]);
        sh("ip", &["-n", &ns, "link", "set", "eth0", "up"]);
        for listener in listen_in(&ns, ports) {
            let stop = Arc::clone(&self.stop);
            self.relays
                .push(std::thread::spawn(move || relay_loop(listener, &stop)));
        }
        ns
    }

    /// Starts `redis-server` in the broker's namespace on 10.46.0.1:6379 (durable as the
    /// exchange asks) and waits for its PONG.
    fn start_broker(&mut self) -> String {
        let ns = self.broker_ns();
        let log = std::fs::File::create(self.broker_dir.path().join("log")).unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", &ns, "redis-server", "--bind", "10.46.0.1"])
            .args(["--port", "6379", "--protected-mode", "no", "--save", ""])
            .args(["--appendonly", "yes"])
            .args(["--appendfsync", "always", "--dir"])
            .arg(self.broker_dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("redis-server");
        self.broker = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.redis(&["PING"]) != "PONG" {
            assert!(Instant::now() < deadline, "redis-server did not answer");
            std::thread::sleep(Duration::from_millis(20));
        }
        "redis://10.46.0.1:6379/0".into()
    }

    /// Kills the broker (SIGKILL, as a lost machine) and starts it again on its directory:
    /// what it had acknowledged comes back from its append-only file.
    fn restart_broker(&mut self) {
        let mut broker = self.broker.take().expect("a broker to restart");
        broker.kill().unwrap();
        broker.wait().unwrap();
        self.start_broker();
    }

    /// `redis-cli ARGS…` from the broker's namespace: its answer, trimmed.
    fn redis(&self, args: &[&str]) -> String {
        let out = Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.broker_ns(),
                "redis-cli",
                "-h",
                "10.46.0.1",
            ])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Takes namespace `ns`'s link to the bridge down or up.
    fn link(&self, ns: &str, up: bool) {
        let state = if up { "up" } else { "down" };
        sh("ip", &["-n", ns, "link", "set", "eth0", state]);
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(mut broker) = self.broker.take() {
            let _ = broker.kill();
            let _ = broker.wait();
        }
        // Deleting a namespace deletes its links (and the bridge) with it.
        for ns in self.namespaces.iter().rev() {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
        for relay in self.relays.drain(..) {
            let _ = relay.join();
        }
    }
}

/// Listeners on 127.0.0.1 at `ports` inside namespace `ns`: made by a thread that enters `ns`
/// (setns), binds them and ends; the sockets stay in `ns`, and every other thread of this
/// process, which accepts on them and connects on, stays in this process's own namespace.
fn listen_in(ns: &str, ports: &[u16]) -> Vec<TcpListener> {
    let path = format!("/run/netns/{ns}");
    let ports = ports.to_vec();
    std::thread::spawn(move || {
        let target = std::fs::File::open(&path).unwrap();
        // SAFETY: setns on this thread only, with a namespace descriptor we hold open.
        let entered = unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(
            entered,
            0,
            "setns {path}: {}",
            std::io::Error::last_os_error()
        );
        ports
            .iter()
            .map(|port| {
                let listener = TcpListener::bind(("127.0.0.1", *port)).unwrap();
                listener.set_nonblocking(true).unwrap();
                listener
            })
            .collect()
    })
    .join()
    .unwrap()
}

/// Accepts on `listener` and relays each connection to the same port on this process's
/// loopback, until `stop`.
fn relay_loop(listener: TcpListener, stop: &Arc<AtomicBool>) {
    let port = listener.local_addr().unwrap().port();
    let mut pipes = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((client, _)) => {
                client.set_nonblocking(false).unwrap();
                let Ok(server) = TcpStream::connect(("127.0.0.1", port)) else {
                    continue;
                };
                for (from, to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    let stop = Arc::clone(stop);
                    pipes.push(std::thread::spawn(move || pipe(from, to, &stop)));
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    for pipe in pipes {
        let _ = pipe.join();
    }
}

/// Copies `from` to `to` until end of file or `stop` (reads time out to look at it).
fn pipe(mut from: TcpStream, mut to: TcpStream, stop: &AtomicBool) {
    from.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut buf = [0u8; 16 * 1024];
    while !stop.load(Ordering::Relaxed) {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// How long the partition lasts: `CRAWL_NETNS_PARTITION_SECS`, else 8 s (the crawl's reconnect
/// limit is 60 s; the bench runs 30 s).
fn partition() -> Duration {
    let secs = std::env::var("CRAWL_NETNS_PARTITION_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    Duration::from_secs(secs)
}

/// Polls until `shard` has logged `lines` URLs (it must still be running then).
fn until_lines(shard: &mut ShardRun, lines: usize, what: &str) {
    let deadline = Instant::now() + CRAWL_DEADLINE;
    while shard.lines() < lines {
        assert!(shard.still_running(), "{what}: ended before {lines} lines");
        assert!(Instant::now() < deadline, "{what}: stalled");
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(shard.still_running(), "{what}: ended");
}

#[test]
fn shards_on_machines_of_their_own_ride_out_a_partition_and_a_move() {
    const HOSTS: usize = 32;
    let graph = small_graph(HOSTS, 15, 46);
    // A little latency, so that the partition and the kill land mid-crawl.
    let version = Arc::new(AtomicUsize::new(0));
    let web = validating_web(&graph, Arc::clone(&version), Duration::from_millis(5));
    let ports: Vec<u16> = (0..HOSTS)
        .map(|h| {
            let origin = host_of(&web.url(h, "/"));
            origin.rsplit(':').next().unwrap().parse().unwrap()
        })
        .collect();
    let mut lab = Lab::new();
    let exchange = lab.start_broker();
    let dir = tempfile::tempdir().unwrap();
    write_seeds(dir.path(), &web, HOSTS);
    let machines: Vec<String> = (0..4)
        .map(|k| lab.machine(&format!("s{k}"), 10 + k as u8, &ports))
        .collect();
    let outs = ["shard-0", "shard-1", "shard-2", "shard-3"];
    // Shard `k` of 4 in `out`, its logs named after `run`.
    let spec = |out, k: usize, run| ShardSpec {
        dir: dir.path(),
        out,
        k: k as u32,
        n: 4,
        exchange: &exchange,
        run,
        extra: &[],
    };
    let mut shards: Vec<ShardRun> = (0..4)
        .map(|k| spawn_netns(&machines[k], &spec(outs[k], k, 0)))
        .collect();

    // Shard 2 cut off from the broker while it crawls: it goes on with its own hosts, and
    // nothing of it reaches the broker until the link is back.
    until_lines(&mut shards[2], 10, "shard 2");
    let namespace = crate::shards::namespace(&web, HOSTS);
    let key = format!("{namespace}:r1:report:2");
    let reported = |lab: &Lab| {
        lab.redis(&["HGET", &key, "pages"])
            .parse::<u64>()
            .unwrap_or(0)
    };
    let deadline = Instant::now() + CRAWL_DEADLINE;
    while reported(&lab) < 5 {
        assert!(
            shards[2].still_running() && Instant::now() < deadline,
            "shard 2 never reported"
        );
    }
    lab.link(&machines[2], false);
    let cut = Instant::now();
    let lines_at_cut = shards[2].lines();
    let pages_at_cut = reported(&lab);
    // Meanwhile shard 1's machine is lost (SIGKILL) and its directory, copied, starts on a
    // new machine with another address.
    until_lines(&mut shards[1], 10, "shard 1");
    shards[1].child.kill().unwrap();
    shards[1].child.wait().unwrap();
    let moved_logs = vec![shards[1].log.clone()];
    let copy = dir.path().join("shard-1-moved");
    sh(
        "cp",
        &[
            "-a",
            dir.path().join("shard-1").to_str().unwrap(),
            copy.to_str().unwrap(),
        ],
    );
    let elsewhere = lab.machine("s1b", 21, &ports);
    shards[1] = spawn_netns(&elsewhere, &spec("shard-1-moved", 1, 1));
    let left = partition().saturating_sub(cut.elapsed());
    std::thread::sleep(left);
    let pages_in_partition = reported(&lab);
    let lines_in_partition = shards[2].lines();
    assert!(shards[2].still_running(), "shard 2 gave up while cut off");
    lab.link(&machines[2], true);
    eprintln!(
        "shard 2 cut off for {:.1} s: its URL log went from {lines_at_cut} to \
         {lines_in_partition} lines, its report in the broker stayed at {pages_at_cut} pages \
         (then {pages_in_partition})",
        cut.elapsed().as_secs_f64()
    );
    assert_eq!(
        pages_at_cut, pages_in_partition,
        "the broker heard from shard 2"
    );
    for (k, shard) in shards.iter_mut().enumerate() {
        assert!(
            shard.still_running(),
            "shard {k} ended during the partition"
        );
    }
    wait_all(shards);

    // The crawl ended once, complete, with every page; none fetched twice but the moved
    // shard's in flight at the kill.
    let expected = reachable(&graph);
    let requested = crate::util::page_requests(&web);
    let unique: Vec<(usize, usize)> = requested
        .iter()
        .copied()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    crate::util::assert_same_set("pages fetched", &expected, &unique);
    let mut moved_hosts = BTreeSet::new();
    for log in &moved_logs {
        for row in parse_log(&std::fs::read_to_string(log).unwrap()) {
            moved_hosts.insert(host_of(&row.url));
        }
    }
    let again: Vec<_> = counts(requested)
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .collect();
    for ((host, _), _) in &again {
        let origin = host_of(&web.url(*host, "/"));
        assert!(
            moved_hosts.contains(&origin),
            "host {host} of a shard not moved fetched twice"
        );
    }
    let extra: usize = again.iter().map(|(_, n)| n - 1).sum();
    assert!(
        extra <= 6 * 4 + 1,
        "{extra} refetches after one kill: {again:?}"
    );
    for out in ["shard-0", "shard-1-moved", "shard-2", "shard-3"] {
        let summary = read_summary(&dir.path().join(out));
        assert_eq!(summary["ending"], "complete", "{out}: {summary}");
    }
    eprintln!(
        "4 shards in namespaces: {} pages, {} fetched twice (shard 1's in flight at its kill), \
         crawl complete",
        expected.len(),
        extra
    );

    // Runs 2 and 3, recrawls on the same machines (shard 1 on its new one), each beside one
    // process recrawling the same web: every page once, every shard complete; run 2 finds
    // every page unchanged (a 304, or the same payload digest), run 3 every changed page.
    let single = tempfile::tempdir().unwrap();
    write_seeds(single.path(), &web, HOSTS);
    single_run(single.path(), &web, &expected, 1);
    let hosts = [&machines[0], &elsewhere, &machines[2], &machines[3]];
    let outs = ["shard-0", "shard-1-moved", "shard-2", "shard-3"];
    // `mid` is called once the shards have started.
    let recrawl = |run: usize, mid: &mut dyn FnMut(&mut [ShardRun])| {
        let start = web.request_count();
        let mut shards: Vec<ShardRun> = (0..4)
            .map(|k| spawn_netns(hosts[k], &spec(outs[k], k, run)))
            .collect();
        let logs: Vec<_> = shards.iter().map(|s| s.log.clone()).collect();
        mid(&mut shards);
        wait_all(shards);
        let again: Vec<(usize, usize)> = web.log()[start..]
            .iter()
            .filter(|e| crate::util::is_page_target(&e.target))
            .map(|e| (e.host, testweb::Graph::page_of_path(&e.target).unwrap()))
            .collect();
        assert_eq!(again.len(), expected.len(), "each page once in run {run}");
        crate::util::assert_same_set(&format!("run {run}"), &expected, &again);
        for out in outs {
            let summary = read_summary(&dir.path().join(out));
            assert_eq!(
                (&summary["ending"], &summary["shard"]["run"]),
                (&"complete".into(), &run.into()),
                "{out}"
            );
        }
        logs.iter()
            .flat_map(|l| parse_log(&std::fs::read_to_string(l).unwrap()))
            .filter(|r| r.is_page())
            .map(|r| (r.url, r.note))
            .collect::<BTreeMap<String, String>>()
    };
    let second = recrawl(2, &mut |_| {});
    assert_eq!(
        counts(second.values().cloned()),
        [("unchanged".to_owned(), expected.len())].into()
    );
    assert_eq!(second, single_run(single.path(), &web, &expected, 2));
    eprintln!(
        "run 2 in namespaces: {} pages, each once, all unchanged, as one process found",
        expected.len()
    );

    // Run 3 after a third of the pages changed, with the broker killed and restarted in its
    // namespace while the shards crawl.
    version.store(1, Ordering::SeqCst);
    let third = recrawl(3, &mut |shards| {
        until_lines(&mut shards[0], 20, "shard 0 in run 3");
        lab.restart_broker();
        for (k, shard) in shards.iter_mut().enumerate() {
            assert!(
                shard.still_running(),
                "run 3: shard {k} ended before the broker came back"
            );
        }
    });
    let changed = assert_changes_captured(&web, &expected, &third);
    assert_eq!(third, single_run(single.path(), &web, &expected, 3));
    eprintln!(
        "run 3 in namespaces, after {} of the pages changed and with the broker restarted: {} \
         pages, each once, every change captured, as one process found",
        changed.len(),
        expected.len()
    );
}
