//! `RedisBroker`: the exchange on Redis Streams (Redis ≥ 5; Valkey and managed Redis speak the
//! same protocol), through the `redis` crate's blocking client.
//!
//! Keys of one crawl live under its namespace (`crawl:` + a hash of the seeds, which every
//! shard computes alike). A crawl is run again and again (recrawls); each run R has keys of
//! its own, so that no shard of run R reads run R−1's reports as its own:
//! - `NS:count`: N, set by the first shard to connect; a different N is refused;
//! - `NS:run`: the run the shards crawl now; `NS:ended`: the last run whose end a shard saw
//!   (every shard idle, nothing in transit). A shard joins the current run, or starts the next
//!   one once the current has ended (`JOIN`); a shard of another run is refused (`WrongRun`);
//! - `NS:lease:K`: the token of the process holding shard K, with a TTL (across runs);
//! - `NS:rR:stream:K`: shard K's inbox in run R, one entry per batch (`from`, `urls`:
//!   `depth TAB url` lines), read through the consumer group `crawl` as consumer `shard-K`;
//! - `NS:rR:report:K`: a hash of `idle`, `pages` (written by `report`), `published` and
//!   `acked` (counted by the scripts that append and acknowledge);
//! - `NS:rR:stop`: a hash of `--find` texts found, each to the shard and URL that found it
//!   (the first finder's stays): every shard hunting that text stops at its next report.
//!
//! When run R+1 starts, run R's keys get a TTL (`FINISHED_RUN_TTL`): a straggler of run R
//! still finishing its exit finds them, and then they are gone.
//!
//! Atomic steps are Lua scripts, which Redis runs whole: `publish` checks the stream's length,
//! appends and counts `published`; `ack` acknowledges, deletes and counts `acked` by what XACK
//! actually acknowledged (an id acknowledged twice counts once). A crash of Redis between them
//! loses nothing the append-only file (`appendfsync always`) recorded before the reply.
//!
//! Connection failures (a refused or reset connection, a timeout, a server still loading its
//! append-only file) are retried on a new connection with doubling backoff for at most
//! `reconnect_limit`, then reported as `Unavailable`. A retried `publish` may append a batch
//! twice (the reply was lost, not the append): harmless. After any reconnection `read` starts
//! again with this consumer's pending entries, since a lost reply to XREADGROUP leaves entries
//! pending that were never handed over.

use crate::shard::broker::{Broker, BrokerError, Delivery, Handoff, ShardReport, decode, encode};
use redis::{Client, Connection, RedisError, RedisResult, Script, Value};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The consumer group every shard reads its stream through.
const GROUP: &str = "crawl";
/// How long one command may take before the connection counts as broken.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a new connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Batches a stream holds before `publish` refuses, unless set otherwise. Redis keeps about 65
/// bytes per URL (`benches/exchange.sh`), so a stream of full 512-URL batches holds at most
/// ~8 MiB, and Redis at most N times that whatever the shards' imbalance; 256 entries in
/// flight are plenty for a reader that takes 64 at a time.
pub const DEFAULT_MAX_STREAM_LEN: u64 = 256;
/// How long connection failures are retried before `Unavailable`, unless set otherwise.
pub const DEFAULT_RECONNECT_LIMIT: Duration = Duration::from_secs(60);
/// The first pause between retries, doubled each time up to `MAX_BACKOFF`.
const FIRST_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// How long a finished run's keys stay once the next run has started.
pub const FINISHED_RUN_TTL: Duration = Duration::from_secs(3600);
/// Ids per acknowledging script call (Lua's `unpack` has a stack limit of about 8,000).
const ACK_CHUNK: usize = 1000;

/// Appends a batch unless the stream is full, and counts it as published by the sender.
const PUBLISH: &str = r"
if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('XADD', KEYS[1], '*', 'from', ARGV[2], 'urls', ARGV[3])
redis.call('HINCRBY', KEYS[2], 'published', 1)
return 1";

/// Acknowledges and deletes batches, counting those XACK acknowledged.
const ACK: &str = r"
local n = redis.call('XACK', KEYS[1], ARGV[1], unpack(ARGV, 2))
redis.call('XDEL', KEYS[1], unpack(ARGV, 2))
if n > 0 then redis.call('HINCRBY', KEYS[2], 'acked', n) end
return n";

/// Joins run ARGV[1] (0: a fresh directory, which joins the current run, or the next one if the
/// current has ended). A later run starts once the current one has ended, and gives the
/// finished run's keys their TTL. Returns {1, run joined} or {0, current run, last ended}.
const JOIN: &str = r"
local want = tonumber(ARGV[1])
local run = tonumber(redis.call('GET', KEYS[1]) or '0')
local ended = tonumber(redis.call('GET', KEYS[2]) or '0')
if want == 0 then
  if run == 0 then want = 1 elseif ended >= run then want = run + 1 else want = run end
end
if want == run then return {1, run} end
if run == 0 or (want > run and ended >= run) then
  redis.call('SET', KEYS[1], want)
  if run > 0 then
    local prefix = ARGV[3] .. ':r' .. run .. ':'
    for k = 0, tonumber(ARGV[2]) - 1 do
      redis.call('EXPIRE', prefix .. 'stream:' .. k, ARGV[4])
      redis.call('EXPIRE', prefix .. 'report:' .. k, ARGV[4])
    end
    redis.call('EXPIRE', prefix .. 'stop', ARGV[4])
  end
  return {1, want}
end
return {0, run, ended}";

/// Records that run ARGV[1] has ended (the mark only grows).
const END_RUN: &str = r"
if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1])
end
return 1";

/// Takes or renews the lease for this token; otherwise returns the holder and its TTL.
const LEASE: &str = r"
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return {holder, redis.call('PTTL', KEYS[1])}";

/// Drops the lease if this token holds it.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0";

/// One shard's connection to the exchange.
pub struct RedisBroker {
    client: Client,
    url: String,
    namespace: String,
    shard: u32,
    count: u32,
    /// The run this shard takes part in (`JOIN`); 0 until joined.
    run_id: u64,
    /// Who we are in the lease: pid, host and a nonce, unique per broker object.
    token: String,
    max_stream_len: u64,
    reconnect_limit: Duration,
    /// Idle connections; a thread takes one for each command (a blocking read holds its own).
    pool: Mutex<Vec<Connection>>,
    /// `read`'s position among this consumer's pending entries; None once they are all read.
    history: Mutex<Option<String>>,
    /// Set on every reconnection: `read` goes back to the pending entries.
    reread: AtomicBool,
    warnings: Vec<String>,
    publish_script: Script,
    ack_script: Script,
    lease_script: Script,
    release_script: Script,
    end_run_script: Script,
}

impl RedisBroker {
    /// Connects shard `shard` of `count` to the crawl `namespace` at `url` (`redis://HOST:PORT/DB`)
    /// as a fresh shard (the current run, or the next if it ended): checks N against the one
    /// stored, creates this shard's stream and consumer group, and warns on stderr when Redis
    /// would lose acknowledged batches in a crash.
    pub fn connect(
        url: &str,
        namespace: &str,
        shard: u32,
        count: u32,
    ) -> Result<RedisBroker, BrokerError> {
        Self::connect_with(url, namespace, shard, count, DEFAULT_RECONNECT_LIMIT)
    }

    /// A broker object for `url` that has sent nothing yet (the URL and K/N checked).
    fn client(
        url: &str,
        namespace: &str,
        shard: u32,
        count: u32,
        reconnect_limit: Duration,
    ) -> Result<RedisBroker, BrokerError> {
        let bad = |message: String| BrokerError::BadUrl {
            url: url.to_owned(),
            message,
        };
        if !url.starts_with("redis://") {
            return Err(bad("expected redis://HOST:PORT/DB".into()));
        }
        if count == 0 || shard >= count {
            return Err(bad(format!("shard {shard} of {count} does not exist")));
        }
        let client = Client::open(url).map_err(|e| bad(e.to_string()))?;
        Ok(RedisBroker {
            client,
            url: url.to_owned(),
            namespace: namespace.to_owned(),
            shard,
            count,
            token: crate::shard::lease_token(&format!("pid {}", std::process::id())),
            max_stream_len: DEFAULT_MAX_STREAM_LEN,
            reconnect_limit,
            pool: Mutex::new(Vec::new()),
            history: Mutex::new(Some("0".into())),
            reread: AtomicBool::new(false),
            warnings: Vec::new(),
            publish_script: Script::new(PUBLISH),
            ack_script: Script::new(ACK),
            lease_script: Script::new(LEASE),
            release_script: Script::new(RELEASE),
            end_run_script: Script::new(END_RUN),
            run_id: 0,
        })
    }

    /// `connect`, retrying connection failures for `reconnect_limit` (here and in every later
    /// command).
    pub fn connect_with(
        url: &str,
        namespace: &str,
        shard: u32,
        count: u32,
        reconnect_limit: Duration,
    ) -> Result<RedisBroker, BrokerError> {
        Self::connect_run(url, namespace, shard, count, None, reconnect_limit)
    }

    /// `connect_with` for run `run` (None: a fresh directory's shard, see `JOIN`). Another run
    /// than the broker's current one (or the next, once the current ended) is `WrongRun`.
    pub fn connect_run(
        url: &str,
        namespace: &str,
        shard: u32,
        count: u32,
        run: Option<u64>,
        reconnect_limit: Duration,
    ) -> Result<RedisBroker, BrokerError> {
        let mut broker = Self::client(url, namespace, shard, count, reconnect_limit)?;
        broker.check_count()?;
        broker.run_id = broker.join(run.unwrap_or(0))?;
        broker.create_group()?;
        broker.warnings = broker.durability_warnings()?;
        for warning in &broker.warnings {
            eprintln!("crawl: warning: {warning}");
        }
        Ok(broker)
    }

    /// Connects to look only (`crawl shards --status`): writes nothing, creates no stream or
    /// group and stores no N. Returns None when the crawl has not started (no N stored);
    /// another N than the one stored is `WrongCount`.
    pub fn observe(
        url: &str,
        namespace: &str,
        count: u32,
    ) -> Result<Option<RedisBroker>, BrokerError> {
        let mut broker = Self::client(url, namespace, 0, count, DEFAULT_RECONNECT_LIMIT)?;
        let keys = [broker.count_key(), broker.run_key()];
        let (stored, run): (Option<String>, Option<u64>) =
            broker.run("MGET", |con| redis::cmd("MGET").arg(&keys[..]).query(con))?;
        match stored {
            None => Ok(None),
            Some(stored) => {
                broker.compare_count(stored)?;
                broker.run_id = run.unwrap_or(1);
                Ok(Some(broker))
            }
        }
    }

    /// The run this shard takes part in (or, observing, the broker's current run).
    pub fn current_run(&self) -> u64 {
        self.run_id
    }

    /// Joins run `want` (0: as a fresh directory) with `JOIN`; returns the run joined.
    fn join(&self, want: u64) -> Result<u64, BrokerError> {
        let keys = [self.run_key(), self.ended_key()];
        let script = Script::new(JOIN);
        let answer: Vec<u64> = self.run("SET", |con| {
            script
                .key(&keys[0])
                .key(&keys[1])
                .arg(want)
                .arg(self.count)
                .arg(&self.namespace)
                .arg(FINISHED_RUN_TTL.as_secs())
                .invoke(con)
        })?;
        match answer[..] {
            [1, joined] => Ok(joined),
            [0, current, _] => Err(BrokerError::WrongRun {
                namespace: self.namespace.clone(),
                shard: self.shard,
                count: self.count,
                given: want,
                current,
            }),
            _ => Err(BrokerError::Malformed {
                stream: keys[0].clone(),
                id: String::new(),
                why: format!("the run script answered {answer:?}"),
            }),
        }
    }

    /// Sets how many batches a destination's stream may hold before `publish` refuses.
    pub fn with_max_stream_len(mut self, max: u64) -> RedisBroker {
        self.max_stream_len = max.max(1);
        self
    }

    /// Holds the lease under `token` instead of a token of this process's own: the crawl
    /// gives each state directory one, so a shard restarted after a kill renews the lease its
    /// killed run held instead of waiting for it to expire (the directory's lock already keeps
    /// a second process off the directory).
    pub fn with_lease_token(mut self, token: &str) -> RedisBroker {
        self.token = token.to_owned();
        self
    }

    /// What `connect` warned about (Redis's durability settings), for tests and the summary.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Redis's `used_memory` and `used_memory_peak` in bytes (INFO memory), for the note.
    pub fn memory(&self) -> Result<(u64, u64), BrokerError> {
        let info: String = self.run("INFO", |con| redis::cmd("INFO").arg("memory").query(con))?;
        let field = |name: &str| {
            info.lines()
                .find_map(|line| {
                    line.strip_prefix(name)?
                        .strip_prefix(':')?
                        .trim()
                        .parse()
                        .ok()
                })
                .unwrap_or(0)
        };
        Ok((field("used_memory"), field("used_memory_peak")))
    }

    /// Batches waiting in shard `k`'s stream (read or not, not yet acknowledged).
    pub fn stream_len(&self, k: u32) -> Result<u64, BrokerError> {
        let key = self.stream_key(k);
        self.run("XLEN", |con| redis::cmd("XLEN").arg(&key).query(con))
    }

    fn stream_key(&self, k: u32) -> String {
        format!("{}:r{}:stream:{k}", self.namespace, self.run_id)
    }

    fn report_key(&self, k: u32) -> String {
        format!("{}:r{}:report:{k}", self.namespace, self.run_id)
    }

    fn run_key(&self) -> String {
        format!("{}:run", self.namespace)
    }

    fn ended_key(&self) -> String {
        format!("{}:ended", self.namespace)
    }

    fn lease_key(&self) -> String {
        format!("{}:lease:{}", self.namespace, self.shard)
    }

    fn stop_key(&self) -> String {
        format!("{}:r{}:stop", self.namespace, self.run_id)
    }

    fn consumer(&self) -> String {
        format!("shard-{}", self.shard)
    }

    fn count_key(&self) -> String {
        format!("{}:count", self.namespace)
    }

    /// Stores N unless one is stored, and checks it against the one stored.
    fn check_count(&self) -> Result<(), BrokerError> {
        let key = self.count_key();
        let stored: String = self.run("SET", |con| {
            redis::cmd("SET")
                .arg(&key)
                .arg(self.count)
                .arg("NX")
                .exec(con)?;
            redis::cmd("GET").arg(&key).query(con)
        })?;
        self.compare_count(stored)
    }

    /// Checks `stored`, the broker's N, against this shard's.
    fn compare_count(&self, stored: String) -> Result<(), BrokerError> {
        match stored.parse::<u32>() {
            Ok(stored) if stored == self.count => Ok(()),
            Ok(stored) => Err(BrokerError::WrongCount {
                namespace: self.namespace.clone(),
                stored,
                given: self.count,
            }),
            Err(_) => Err(BrokerError::Malformed {
                stream: self.count_key(),
                id: String::new(),
                why: format!("{stored:?} is not a number of shards"),
            }),
        }
    }

    /// Creates this shard's stream and its consumer group if they are not there yet (a Redis
    /// that lost its data, or the first run).
    fn create_group(&self) -> Result<(), BrokerError> {
        let stream = self.stream_key(self.shard);
        self.run("XGROUP CREATE", |con| create_group(con, &stream))
    }

    fn durability_warnings(&self) -> Result<Vec<String>, BrokerError> {
        let mut warnings = Vec::new();
        for (name, wanted) in [("appendonly", "yes"), ("appendfsync", "always")] {
            let got: RedisResult<Vec<String>> =
                self.run_raw(|con| redis::cmd("CONFIG").arg("GET").arg(name).query(con));
            match got {
                Ok(pair) if pair.get(1).is_some_and(|v| v == wanted) => {}
                Ok(pair) => warnings.push(format!(
                    "exchange {}: Redis runs with {name} {}, not {wanted}: a crash of Redis may \
                     lose URLs it acknowledged",
                    self.url,
                    pair.get(1).map_or("(unset)", String::as_str)
                )),
                Err(e) => warnings.push(format!(
                    "exchange {}: could not read Redis's {name} ({e}); it must be {wanted} for a \
                     crash of Redis to lose nothing",
                    self.url
                )),
            }
        }
        Ok(warnings)
    }

    /// Runs `op` on a pooled connection, retrying connection failures with backoff for at most
    /// `reconnect_limit`; other errors are `Refused`, naming `command`.
    fn run<T>(
        &self,
        command: &'static str,
        mut op: impl FnMut(&mut Connection) -> RedisResult<T>,
    ) -> Result<T, BrokerError> {
        let started = Instant::now();
        let mut backoff = FIRST_BACKOFF;
        let mut attempts = 0;
        loop {
            attempts += 1;
            match self.run_raw(&mut op) {
                Ok(value) => return Ok(value),
                Err(e) if transient(&e) => {
                    self.reread.store(true, Ordering::Relaxed);
                    let tried_for = started.elapsed();
                    if tried_for + backoff > self.reconnect_limit {
                        return Err(BrokerError::Unavailable {
                            url: self.url.clone(),
                            tried_for,
                            attempts,
                            last: e.to_string(),
                        });
                    }
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
                Err(e) => {
                    return Err(BrokerError::Refused {
                        url: self.url.clone(),
                        command,
                        message: e.to_string(),
                    });
                }
            }
        }
    }

    /// One try of `op`: a connection that failed is dropped, any other goes back to the pool.
    fn run_raw<T>(&self, mut op: impl FnMut(&mut Connection) -> RedisResult<T>) -> RedisResult<T> {
        let pooled = self.pool.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut con = match pooled {
            Some(con) => con,
            None => {
                let con = self.client.get_connection_with_timeout(CONNECT_TIMEOUT)?;
                con.set_read_timeout(Some(COMMAND_TIMEOUT))?;
                con.set_write_timeout(Some(COMMAND_TIMEOUT))?;
                con
            }
        };
        let result = op(&mut con);
        if !matches!(&result, Err(e) if transient(e)) {
            self.pool
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(con);
        }
        result
    }

    /// XREADGROUP from `from` (an id: this consumer's pending entries after it; `>`: new ones).
    fn read_group(
        &self,
        from: &str,
        max: usize,
        wait: Option<Duration>,
    ) -> Result<Vec<Entry>, BrokerError> {
        let stream = self.stream_key(self.shard);
        let consumer = self.consumer();
        let value: Value = self.run("XREADGROUP", |con| {
            let mut cmd = redis::cmd("XREADGROUP");
            cmd.arg("GROUP")
                .arg(GROUP)
                .arg(&consumer)
                .arg("COUNT")
                .arg(max.max(1));
            if let Some(wait) = wait {
                cmd.arg("BLOCK").arg(wait.as_millis().max(1) as u64);
                con.set_read_timeout(Some(COMMAND_TIMEOUT + wait))?;
            }
            cmd.arg("STREAMS").arg(&stream).arg(from);
            let result = cmd.query(con);
            if wait.is_some() {
                con.set_read_timeout(Some(COMMAND_TIMEOUT))?;
            }
            match result {
                // A Redis that lost its data lost the group too: make it again and read on.
                Err(e) if e.code() == Some("NOGROUP") => {
                    create_group(con, &stream)?;
                    cmd.query(con)
                }
                other => other,
            }
        })?;
        entries(&value).map_err(|why| BrokerError::Malformed {
            stream,
            id: String::new(),
            why,
        })
    }

    /// Turns entries into deliveries; an entry deleted while pending (no fields) is dropped.
    fn deliveries(&self, entries: Vec<Entry>) -> Result<Vec<Delivery>, BrokerError> {
        let stream = self.stream_key(self.shard);
        let malformed = |id: &str, why: String| BrokerError::Malformed {
            stream: stream.clone(),
            id: id.to_owned(),
            why,
        };
        let mut deliveries = Vec::new();
        for entry in entries {
            let Some(fields) = entry.fields else { continue };
            let field = |name: &str| {
                fields
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.as_str())
            };
            let from = field("from")
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| malformed(&entry.id, "no `from` shard number".into()))?;
            let text =
                field("urls").ok_or_else(|| malformed(&entry.id, "no `urls` field".into()))?;
            let urls = decode(text).map_err(|why| malformed(&entry.id, why))?;
            deliveries.push(Delivery {
                id: entry.id,
                from,
                urls,
            });
        }
        Ok(deliveries)
    }
}

impl Broker for RedisBroker {
    fn publish(&self, to: u32, batch: &[Handoff]) -> Result<bool, BrokerError> {
        if to >= self.count {
            return Err(BrokerError::BadUrl {
                url: self.url.clone(),
                message: format!("no shard {to} among {}", self.count),
            });
        }
        let stream = self.stream_key(to);
        let report = self.report_key(self.shard);
        let payload = encode(batch);
        let added: i64 = self.run("XADD", |con| {
            self.publish_script
                .key(&stream)
                .key(&report)
                .arg(self.max_stream_len)
                .arg(self.shard)
                .arg(&payload)
                .invoke(con)
        })?;
        Ok(added == 1)
    }

    fn read(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>, BrokerError> {
        let mut history = self.history.lock().unwrap_or_else(|e| e.into_inner());
        if self.reread.swap(false, Ordering::Relaxed) {
            *history = Some("0".into());
        }
        while let Some(after) = history.clone() {
            let entries = self.read_group(&after, max, None)?;
            match entries.last() {
                None => *history = None,
                Some(last) => {
                    *history = Some(last.id.clone());
                    let deliveries = self.deliveries(entries)?;
                    if !deliveries.is_empty() {
                        return Ok(deliveries);
                    }
                }
            }
        }
        let wait = (!wait.is_zero()).then_some(wait);
        let entries = self.read_group(">", max, wait)?;
        self.deliveries(entries)
    }

    fn ack(&self, ids: &[String]) -> Result<(), BrokerError> {
        let stream = self.stream_key(self.shard);
        let report = self.report_key(self.shard);
        for chunk in ids.chunks(ACK_CHUNK) {
            let _: i64 = self.run("XACK", |con| {
                let mut call = self.ack_script.key(&stream);
                call.key(&report).arg(GROUP);
                for id in chunk {
                    call.arg(id);
                }
                call.invoke(con)
            })?;
        }
        Ok(())
    }

    fn report(&self, report: &ShardReport) -> Result<(), BrokerError> {
        let key = self.report_key(self.shard);
        self.run("HSET", |con| {
            redis::cmd("HSET")
                .arg(&key)
                .arg("idle")
                .arg(u8::from(report.idle))
                .arg("pages")
                .arg(report.pages)
                .exec(con)
        })
    }

    fn reports(&self) -> Result<Vec<Option<ShardReport>>, BrokerError> {
        let rows: Vec<Vec<Option<u64>>> = self.run("HMGET", |con| {
            let mut pipe = redis::pipe();
            for k in 0..self.count {
                pipe.cmd("HMGET")
                    .arg(self.report_key(k))
                    .arg(&["idle", "published", "acked", "pages"][..]);
            }
            pipe.query(con)
        })?;
        Ok(rows
            .into_iter()
            .map(|row| match row[..] {
                [Some(idle), published, acked, pages] => Some(ShardReport {
                    idle: idle == 1,
                    published: published.unwrap_or(0),
                    acked: acked.unwrap_or(0),
                    pages: pages.unwrap_or(0),
                }),
                _ => None,
            })
            .collect())
    }

    fn lease(&self, ttl: Duration) -> Result<(), BrokerError> {
        let key = self.lease_key();
        let answer: Value = self.run("SET", |con| {
            self.lease_script
                .key(&key)
                .arg(&self.token)
                .arg(ttl.as_millis().max(1) as u64)
                .invoke(con)
        })?;
        match answer {
            Value::Int(1) => Ok(()),
            Value::Array(items) => {
                let holder = match items.first() {
                    Some(Value::BulkString(bytes)) => String::from_utf8_lossy(bytes).into_owned(),
                    _ => "another process".into(),
                };
                let millis = match items.get(1) {
                    Some(Value::Int(ms)) => (*ms).max(0) as u64,
                    _ => 0,
                };
                Err(BrokerError::Claimed {
                    shard: self.shard,
                    count: self.count,
                    holder,
                    expires_in: Duration::from_millis(millis),
                })
            }
            other => Err(BrokerError::Malformed {
                stream: key,
                id: String::new(),
                why: format!("lease script answered {other:?}"),
            }),
        }
    }

    fn release(&self) -> Result<(), BrokerError> {
        let key = self.lease_key();
        let _: i64 = self.run("DEL", |con| {
            self.release_script.key(&key).arg(&self.token).invoke(con)
        })?;
        Ok(())
    }

    fn stop(&self, text: &str, by: &str) -> Result<(), BrokerError> {
        let key = self.stop_key();
        self.run("HSETNX", |con| {
            redis::cmd("HSETNX").arg(&key).arg(text).arg(by).exec(con)
        })
    }

    fn stopped(&self, text: &str) -> Result<Option<String>, BrokerError> {
        let key = self.stop_key();
        self.run("HGET", |con| {
            redis::cmd("HGET").arg(&key).arg(text).query(con)
        })
    }

    fn end_run(&self) -> Result<(), BrokerError> {
        let key = self.ended_key();
        let _: i64 = self.run("SET", |con| {
            self.end_run_script.key(&key).arg(self.run_id).invoke(con)
        })?;
        Ok(())
    }
}

/// Failures a new connection may mend: the server gone, restarting, or still loading.
fn transient(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || matches!(e.code(), Some("LOADING" | "MASTERDOWN" | "TRYAGAIN"))
}

fn create_group(con: &mut Connection, stream: &str) -> RedisResult<()> {
    let created = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(stream)
        .arg(GROUP)
        .arg("0")
        .arg("MKSTREAM")
        .exec(con);
    match created {
        Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
        other => other,
    }
}

/// One stream entry as XREADGROUP returns it; `fields` is None for an entry deleted while
/// pending.
struct Entry {
    id: String,
    fields: Option<Vec<(String, String)>>,
}

/// The entries of an XREADGROUP reply on one stream (nil: none within the wait).
fn entries(value: &Value) -> Result<Vec<Entry>, String> {
    let streams = match value {
        Value::Nil => return Ok(Vec::new()),
        Value::Array(streams) => streams,
        other => return Err(format!("XREADGROUP answered {other:?}")),
    };
    let mut out = Vec::new();
    for stream in streams {
        let Value::Array(pair) = stream else {
            return Err(format!("stream reply {stream:?}"));
        };
        let Some(Value::Array(items)) = pair.get(1) else {
            return Err(format!("stream reply {pair:?}"));
        };
        for item in items {
            let Value::Array(item) = item else {
                return Err(format!("entry {item:?}"));
            };
            let id = match item.first() {
                Some(value) => text(value)?,
                None => return Err("entry without an id".into()),
            };
            let fields = match item.get(1) {
                Some(Value::Array(flat)) => Some(
                    flat.chunks(2)
                        .map(|kv| Ok((text(&kv[0])?, text(kv.get(1).unwrap_or(&Value::Nil))?)))
                        .collect::<Result<Vec<_>, String>>()?,
                ),
                _ => None,
            };
            out.push(Entry { id, fields });
        }
    }
    Ok(out)
}

fn text(value: &Value) -> Result<String, String> {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).map_err(|e| e.to_string()),
        Value::SimpleString(s) => Ok(s.clone()),
        other => Err(format!("expected a string, got {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use testweb::redis::RedisServer;

    const NS: &str = "crawl:test";

    fn batch(tag: &str, n: usize) -> Vec<Handoff> {
        (0..n)
            .map(|i| Handoff {
                url: format!("http://{tag}.test/{i}"),
                depth: i as u32,
            })
            .collect()
    }

    /// The batches `read` hands over now, without waiting.
    fn read_urls(broker: &RedisBroker) -> Vec<Vec<Handoff>> {
        let deliveries = broker.read(100, Duration::ZERO).unwrap();
        deliveries.into_iter().map(|d| d.urls).collect()
    }

    fn report(broker: &RedisBroker, k: u32) -> ShardReport {
        broker.reports().unwrap()[k as usize].expect("reported")
    }

    #[test]
    fn a_stop_mark_is_seen_by_every_shard_and_the_first_finder_stays() {
        let server = RedisServer::start().unwrap();
        let zero = RedisBroker::connect(&server.url(), NS, 0, 2).unwrap();
        let one = RedisBroker::connect(&server.url(), NS, 1, 2).unwrap();
        assert_eq!(one.stopped("needle").unwrap(), None);
        zero.stop("needle", "shard 0/2 at http://a.test/").unwrap();
        one.stop("needle", "shard 1/2 at http://b.test/").unwrap();
        assert_eq!(
            one.stopped("needle").unwrap().as_deref(),
            Some("shard 0/2 at http://a.test/")
        );
        assert_eq!(zero.stopped("other text").unwrap(), None);
    }

    #[test]
    fn a_published_batch_is_read_once_and_acknowledged_batches_balance_the_counters() {
        let server = RedisServer::start().unwrap();
        let zero = RedisBroker::connect(&server.url(), NS, 0, 2).unwrap();
        let one = RedisBroker::connect(&server.url(), NS, 1, 2).unwrap();
        assert!(zero.warnings().is_empty(), "{:?}", zero.warnings());
        assert!(zero.publish(1, &batch("a", 3)).unwrap());
        assert!(zero.publish(1, &batch("b", 2)).unwrap());
        assert_eq!(
            zero.reports().unwrap(),
            vec![None, None],
            "no shard has reported yet"
        );

        let got = one.read(10, Duration::from_millis(10)).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].from, &got[0].urls), (0, &batch("a", 3)));
        assert_eq!((got[1].from, &got[1].urls), (0, &batch("b", 2)));
        assert!(
            one.read(10, Duration::from_millis(10)).unwrap().is_empty(),
            "read once"
        );
        assert!(
            zero.read(10, Duration::ZERO).unwrap().is_empty(),
            "shard 0's stream is its own"
        );

        for broker in [&zero, &one] {
            broker
                .report(&ShardReport {
                    idle: true,
                    pages: 7,
                    ..ShardReport::default()
                })
                .unwrap();
        }
        assert_eq!((report(&zero, 0).published, report(&zero, 1).acked), (2, 0));
        assert_eq!(
            one.stream_len(1).unwrap(),
            2,
            "read but not acknowledged: still there"
        );
        let ids: Vec<String> = got.iter().map(|d| d.id.clone()).collect();
        one.ack(&ids).unwrap();
        one.ack(&ids).unwrap();
        let (sent, received) = (report(&zero, 0), report(&zero, 1));
        assert_eq!(
            (sent.published, received.acked),
            (2, 2),
            "a second ack counts nothing"
        );
        assert_eq!((received.idle, received.pages), (true, 7));
        assert_eq!(
            one.stream_len(1).unwrap(),
            0,
            "acknowledged batches are deleted"
        );
    }

    #[test]
    fn a_full_stream_refuses_and_takes_again_once_its_reader_acknowledges() {
        let server = RedisServer::start().unwrap();
        let zero = RedisBroker::connect(&server.url(), NS, 0, 2)
            .unwrap()
            .with_max_stream_len(2);
        let one = RedisBroker::connect(&server.url(), NS, 1, 2).unwrap();
        assert!(zero.publish(1, &batch("a", 1)).unwrap());
        assert!(zero.publish(1, &batch("b", 1)).unwrap());
        assert!(!zero.publish(1, &batch("c", 1)).unwrap(), "full");
        assert_eq!(one.stream_len(1).unwrap(), 2);
        let got = one.read(1, Duration::ZERO).unwrap();
        assert!(
            !zero.publish(1, &batch("c", 1)).unwrap(),
            "read is not enough: ack frees room"
        );
        one.ack(&[got[0].id.clone()]).unwrap();
        assert!(zero.publish(1, &batch("c", 1)).unwrap());
        one.report(&ShardReport::default()).unwrap();
        zero.report(&ShardReport::default()).unwrap();
        assert_eq!(
            report(&zero, 0).published,
            3,
            "a refused batch is not counted"
        );
        assert_eq!(
            read_urls(&one),
            vec![batch("b", 1), batch("c", 1)],
            "nothing lost, in order"
        );
    }

    #[test]
    fn a_batch_read_and_not_acknowledged_comes_again_to_the_next_reader_of_the_shard() {
        let server = RedisServer::start().unwrap();
        let zero = RedisBroker::connect(&server.url(), NS, 0, 2).unwrap();
        for tag in ["a", "b", "c"] {
            assert!(zero.publish(1, &batch(tag, 2)).unwrap());
        }
        let first = RedisBroker::connect(&server.url(), NS, 1, 2).unwrap();
        let got = first.read(2, Duration::ZERO).unwrap();
        assert_eq!(got.len(), 2);
        first.ack(&[got[0].id.clone()]).unwrap();
        drop(first); // killed between reading "b" and acknowledging it

        let again = RedisBroker::connect(&server.url(), NS, 1, 2).unwrap();
        let pending = again.read(10, Duration::ZERO).unwrap();
        assert_eq!(pending.len(), 1, "first the batch read before");
        assert_eq!(
            (&pending[0].id, &pending[0].urls),
            (&got[1].id, &batch("b", 2))
        );
        let new = again.read(10, Duration::ZERO).unwrap();
        assert_eq!(
            new.iter().map(|d| &d.urls).collect::<Vec<_>>(),
            vec![&batch("c", 2)]
        );
        assert!(
            again.read(10, Duration::ZERO).unwrap().is_empty(),
            "each once in a run"
        );
    }

    #[test]
    fn a_second_claimant_is_refused_while_the_lease_is_renewed_and_takes_it_after_the_ttl() {
        let server = RedisServer::start().unwrap();
        let first = RedisBroker::connect(&server.url(), NS, 1, 2).unwrap();
        let second = RedisBroker::connect(&server.url(), NS, 1, 2).unwrap();
        let other_shard = RedisBroker::connect(&server.url(), NS, 0, 2).unwrap();
        // Long enough that a loaded machine renews in time; short enough for a quick test.
        let ttl = Duration::from_secs(1);
        first.lease(ttl).unwrap();
        other_shard.lease(ttl).unwrap();
        let err = second.lease(ttl).unwrap_err();
        assert!(
            matches!(err, BrokerError::Claimed { shard: 1, .. }),
            "{err}"
        );
        assert!(err.is_usage());
        assert!(
            err.to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        // Renewed more often than the TTL, the lease stays with the first for several TTLs.
        let renewing = Instant::now();
        let mut renewed = renewing;
        while renewing.elapsed() < ttl * 2 {
            renewed = Instant::now();
            first.lease(ttl).unwrap();
            assert!(second.lease(ttl).is_err(), "taken while renewed");
            std::thread::sleep(ttl / 10);
        }
        // The first stops renewing (as a killed process would): the second gets it after the TTL.
        let deadline = Instant::now() + Duration::from_secs(10);
        while second.lease(ttl).is_err() {
            assert!(Instant::now() < deadline, "lease never expired");
            std::thread::sleep(Duration::from_millis(20));
        }
        // The lease's expiry is at least `ttl` after `renewed` (the renewal was sent after it).
        assert!(
            renewed.elapsed() >= ttl * 9 / 10,
            "taken over before the TTL ran out"
        );
        second.lease(Duration::from_secs(60)).unwrap(); // renewed by its new holder
        assert!(first.lease(ttl).is_err(), "the first lost it");
        second.release().unwrap();
        first.release().unwrap(); // not its lease: nothing happens
        first.lease(ttl).unwrap();
    }

    #[test]
    fn runs_are_kept_apart_and_a_run_starts_once_the_one_before_has_ended() {
        let server = RedisServer::start().unwrap();
        let limit = DEFAULT_RECONNECT_LIMIT;
        let join = |k, run| RedisBroker::connect_run(&server.url(), NS, k, 2, run, limit);
        let zero = join(0, None).unwrap();
        let one = join(1, Some(1)).unwrap();
        assert_eq!((zero.current_run(), one.current_run()), (1, 1));
        assert!(zero.publish(1, &batch("a", 2)).unwrap());
        zero.stop("needle", "shard 0/2 at http://a.test/").unwrap();
        for broker in [&zero, &one] {
            broker
                .report(&ShardReport {
                    idle: true,
                    pages: 5,
                    ..ShardReport::default()
                })
                .unwrap();
        }
        // Run 2 waits for run 1's end, and the refusal names both runs.
        let err = join(0, Some(2)).err().expect("refused");
        assert!(err.is_usage(), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("run 2") && text.contains("run 1 has not ended"),
            "{text}"
        );
        zero.end_run().unwrap();
        one.end_run().unwrap();
        // A fresh directory now starts run 2 too; run 1 is refused, naming both.
        let fresh = join(1, None).unwrap();
        assert_eq!(fresh.current_run(), 2);
        let err = join(1, Some(1)).err().expect("refused");
        assert!(
            err.to_string().contains("run 1") && err.to_string().contains("at run 2"),
            "{err}"
        );
        let second = join(0, Some(2)).unwrap();
        assert_eq!(
            second.reports().unwrap(),
            vec![None, None],
            "run 1's reports are not run 2's"
        );
        assert_eq!(second.stopped("needle").unwrap(), None, "nor its stop mark");
        assert!(
            fresh.read(10, Duration::ZERO).unwrap().is_empty(),
            "nor its streams"
        );
        // Run 1's keys expire; run 2's do not.
        let ttl = |key: &str| server.command(&["TTL", key]).unwrap();
        for key in [
            format!("{NS}:r1:report:0"),
            format!("{NS}:r1:stream:1"),
            format!("{NS}:r1:stop"),
        ] {
            let left: i64 = ttl(&key).trim_start_matches(':').parse().unwrap();
            assert!(
                left > 0 && left <= FINISHED_RUN_TTL.as_secs() as i64,
                "{key}: {left}"
            );
        }
        second.report(&ShardReport::default()).unwrap();
        assert_eq!(ttl(&format!("{NS}:r2:report:0")), ":-1");
    }

    #[test]
    fn a_different_number_of_shards_is_refused() {
        let server = RedisServer::start().unwrap();
        RedisBroker::connect(&server.url(), NS, 0, 4).unwrap();
        let err = RedisBroker::connect(&server.url(), NS, 1, 3)
            .err()
            .expect("refused");
        assert!(
            matches!(
                err,
                BrokerError::WrongCount {
                    stored: 4,
                    given: 3,
                    ..
                }
            ),
            "{err}"
        );
        assert!(
            err.is_usage() && err.to_string().contains("4 shards, not 3"),
            "{err}"
        );
        RedisBroker::connect(&server.url(), "crawl:other", 1, 3).unwrap();
        assert!(
            RedisBroker::connect(&server.url(), NS, 4, 4).is_err(),
            "no shard 4 of 4"
        );
    }

    #[test]
    fn redis_without_fsync_always_is_warned_about() {
        let server = RedisServer::start().unwrap();
        assert_eq!(
            server
                .command(&["CONFIG", "SET", "appendfsync", "everysec"])
                .unwrap(),
            "+OK"
        );
        let broker = RedisBroker::connect(&server.url(), NS, 0, 1).unwrap();
        assert_eq!(broker.warnings().len(), 1, "{:?}", broker.warnings());
        assert!(broker.warnings()[0].contains("appendfsync everysec, not always"));
    }

    #[test]
    fn commands_wait_for_a_restarted_redis_and_give_up_after_the_limit() {
        let mut server = RedisServer::start().unwrap();
        let zero =
            RedisBroker::connect_with(&server.url(), NS, 0, 2, Duration::from_secs(30)).unwrap();
        let one = RedisBroker::connect(&server.url(), NS, 1, 2).unwrap();
        assert!(zero.publish(1, &batch("a", 2)).unwrap());
        server.kill();
        std::thread::scope(|scope| {
            let publishing = scope.spawn(|| zero.publish(1, &batch("b", 2)));
            server.restart().unwrap();
            assert!(
                publishing.join().unwrap().unwrap(),
                "published once Redis was back"
            );
        });
        assert_eq!(
            read_urls(&one),
            vec![batch("a", 2), batch("b", 2)],
            "the append-only file kept both"
        );

        let impatient =
            RedisBroker::connect_with(&server.url(), NS, 0, 2, Duration::from_millis(200)).unwrap();
        server.kill();
        let started = Instant::now();
        let err = impatient.publish(1, &batch("c", 1)).unwrap_err();
        assert!(matches!(err, BrokerError::Unavailable { .. }), "{err}");
        assert!(err.to_string().contains(&server.url()), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
