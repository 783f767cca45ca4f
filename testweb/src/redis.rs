//! A `redis-server` of the test's own, for the shard exchange's tests (crawl's `src/shard/`).
//!
//! Each [`RedisServer`] is Debian's `redis-server` on a free loopback port, with the durability
//! the exchange asks for (`appendonly yes`, `appendfsync always`, no RDB snapshots) and its data
//! in a temporary directory of its own. [`RedisServer::kill`] is SIGKILL, and
//! [`RedisServer::restart`] starts it again on the same port and directory, so a test can crash
//! the broker mid-stream and check what survived. Dropping it kills the server: no test leaves
//! one behind. Readiness is polled (`PING` until `+PONG`, which a server still loading its
//! append-only file does not answer) with a deadline, never slept for.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to answer its first `PING` (it replays its append-only file).
const START_DEADLINE: Duration = Duration::from_secs(20);

/// A running `redis-server` on `127.0.0.1`, killed on drop.
pub struct RedisServer {
    port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts a server on a free loopback port with an empty data directory.
    pub fn start() -> io::Result<RedisServer> {
        // A port found free may be taken before the server binds it: try a few.
        let mut last = None;
        for _ in 0..5 {
            let mut server = RedisServer {
                port: free_port()?,
                dir: tempfile::tempdir()?,
                child: None,
            };
            match server.spawn() {
                Ok(()) => return Ok(server),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("redis-server did not start")))
    }

    /// `redis://127.0.0.1:PORT/0`, the URL the crawl's `--exchange` takes.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its data directory (the append-only file lives under it).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// SIGKILLs the server and waits for it to be gone (no shutdown, no final fsync: a crash).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port and directory (after [`RedisServer::kill`]),
    /// and waits until it has loaded its append-only file and answers.
    pub fn restart(&mut self) -> io::Result<()> {
        self.kill();
        self.spawn()
    }

    /// Sends one command (arguments as RESP bulk strings) and returns the raw reply, for the
    /// few things a test asks the server directly (`INFO memory`, `XLEN`).
    pub fn command(&self, args: &[&str]) -> io::Result<String> {
        let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut request = format!("*{}\r\n", args.len());
        for arg in args {
            request.push_str(&format!("${}\r\n{}\r\n", arg.len(), arg));
        }
        stream.write_all(request.as_bytes())?;
        read_reply(&mut stream)
    }

    fn spawn(&mut self) -> io::Result<()> {
        let log = std::fs::File::create(self.log_path())?;
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ])
            .arg("--dir")
            .arg(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "redis-server: {e} (the Debian package redis-server; .ci/run installs it)"
                    ),
                )
            })?;
        self.child = Some(child);
        let deadline = Instant::now() + START_DEADLINE;
        loop {
            // The answer must come from our child: another test's server may hold the port
            // (a free port is free only until someone binds it), and then ours exits.
            let pid = self.child.as_ref().map_or(0, Child::id);
            if let Ok(reply) = self.command(&["PING"])
                && reply == "+PONG"
                && let Ok(info) = self.command(&["INFO", "server"])
                && info
                    .lines()
                    .any(|line| line.trim() == format!("process_id:{pid}"))
            {
                return Ok(());
            }
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                self.child = None;
                let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
                return Err(io::Error::other(format!(
                    "redis-server on port {} exited ({status}): {}",
                    self.port,
                    log.lines().last().unwrap_or("")
                )));
            }
            if Instant::now() > deadline {
                self.kill();
                return Err(io::Error::other(format!(
                    "redis-server on port {} did not answer PING within {START_DEADLINE:?}",
                    self.port
                )));
            }
            // The poll's interval: each try is a connection, and the server needs the CPU to load.
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("redis.log")
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A port the kernel says is free on 127.0.0.1 right now.
fn free_port() -> io::Result<u16> {
    let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))?;
    Ok(listener.local_addr()?.port())
}

/// One RESP reply, rendered as text: `+OK`, `-ERR …`, `:5`, a bulk string's contents, or an
/// array's items one a line. Enough for the test's own questions, not a client.
fn read_reply(stream: &mut TcpStream) -> io::Result<String> {
    let line = read_line(stream)?;
    let (kind, rest) = line.split_at(1.min(line.len()));
    match kind {
        "$" => {
            let len: i64 = rest.parse().map_err(io::Error::other)?;
            if len < 0 {
                return Ok(String::new());
            }
            let mut body = vec![0; len as usize + 2];
            stream.read_exact(&mut body)?;
            body.truncate(len as usize);
            Ok(String::from_utf8_lossy(&body).into_owned())
        }
        "*" => {
            let count: i64 = rest.parse().map_err(io::Error::other)?;
            let mut items = Vec::new();
            for _ in 0..count.max(0) {
                items.push(read_reply(stream)?);
            }
            Ok(items.join("\n"))
        }
        _ => Ok(line),
    }
}

fn read_line(stream: &mut TcpStream) -> io::Result<String> {
    let mut line = Vec::new();
    let mut byte = [0u8];
    while !line.ends_with(b"\r\n") {
        if stream.read(&mut byte)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "redis closed"));
        }
        line.push(byte[0]);
    }
    line.truncate(line.len() - 2);
    Ok(String::from_utf8_lossy(&line).into_owned())
}
