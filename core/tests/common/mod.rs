//! Test helpers: the Redis under test, unique queue names, and a private restartable server.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use redelay::{Client, Queue};

/// A redis-server started by a test on a free port, restartable on the same port.
pub struct RedisServer {
    pub port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

fn ensure_installed() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/ensure-redis.sh");
        let ok = Command::new("bash").arg(script).status().map(|s| s.success()).unwrap_or(false);
        assert!(ok, "tests/ensure-redis.sh could not install redis-server");
    });
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl RedisServer {
    pub fn start() -> RedisServer {
        ensure_installed();
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("redelay-test-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut s = RedisServer { port, dir, child: None };
        s.spawn();
        s
    }

    fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string(), "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server");
        self.child = Some(child);
        let t = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(t.elapsed() < Duration::from_secs(10), "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// REDIS_URL from the launcher (tests/with-redis.sh), or a private server for this test binary.
pub fn url() -> String {
    static SERVER: OnceLock<String> = OnceLock::new();
    SERVER
        .get_or_init(|| match std::env::var("REDIS_URL") {
            Ok(u) if !u.is_empty() => u,
            _ => {
                let s = Box::leak(Box::new(RedisServer::start()));
                s.url()
            }
        })
        .clone()
}

/// A name no other test uses.
pub fn unique(name: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!("{name}-{}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed), rand_suffix())
}

fn rand_suffix() -> u32 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos()
}

/// A client with its own prefix, and a fresh queue under it.
pub async fn queue(name: &str) -> (Client, Queue) {
    let client = Client::builder(&url()).prefix(unique("t")).connect().await.expect("connect");
    let q = client.queue(&unique(name)).unwrap();
    (client, q)
}

/// Asserts the invariant of docs/architecture.md holds.
pub async fn assert_verified(q: &Queue) {
    let r = q.verify().await.expect("verify");
    assert!(r.is_ok(), "verify found problems: {:#?}", r.problems);
}

/// A local Redis Cluster (3 masters + 3 replicas) from tests/cluster.sh.
pub struct Cluster {
    pub url: String,
    pub dir: PathBuf,
}

impl Cluster {
    pub fn start() -> Cluster {
        ensure_installed();
        let dir = std::env::temp_dir().join(format!("redelay-cluster-{}-{}", std::process::id(), rand_suffix()));
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/cluster.sh");
        let out = Command::new("bash").arg(script).arg("start").arg(&dir).output().expect("cluster.sh");
        assert!(out.status.success(), "cluster.sh start failed: {}", String::from_utf8_lossy(&out.stderr));
        let url = String::from_utf8(out.stdout).unwrap().trim().to_string();
        Cluster { url, dir }
    }

    pub fn ports(&self) -> Vec<u16> {
        std::fs::read_to_string(self.dir.join("ports")).unwrap().lines().map(|l| l.parse().unwrap()).collect()
    }

    /// Port of the master serving `key`'s slot, asked of any live node.
    pub fn master_of(&self, key: &str) -> u16 {
        for p in self.ports() {
            let Ok(c) = redis::Client::open(format!("redis://127.0.0.1:{p}")) else { continue };
            let Ok(mut con) = c.get_connection() else { continue };
            let slot: i64 = redis::cmd("CLUSTER").arg("KEYSLOT").arg(key).query(&mut con).unwrap();
            let slots: Vec<(i64, i64, (String, i64))> =
                match redis::cmd("CLUSTER").arg("SLOTS").query::<Vec<redis::Value>>(&mut con) {
                    Ok(v) => v
                        .into_iter()
                        .filter_map(|e| match e {
                            redis::Value::Array(f) if f.len() >= 3 => {
                                let n = |v: &redis::Value| if let redis::Value::Int(i) = v { *i } else { -1 };
                                let port = match &f[2] {
                                    redis::Value::Array(m) if m.len() >= 2 => n(&m[1]),
                                    _ => -1,
                                };
                                Some((n(&f[0]), n(&f[1]), (String::new(), port)))
                            }
                            _ => None,
                        })
                        .collect(),
                    Err(_) => continue,
                };
            if let Some((_, _, (_, port))) = slots.iter().find(|(a, b, _)| *a <= slot && slot <= *b) {
                return *port as u16;
            }
        }
        panic!("no live node knows the slot of {key}");
    }

    /// SIGKILLs the node on `port`.
    pub fn kill(&self, port: u16) {
        let pid = std::fs::read_to_string(self.dir.join(port.to_string()).join("redis.pid")).unwrap();
        let ok = Command::new("kill").arg("-9").arg(pid.trim()).status().unwrap().success();
        assert!(ok, "kill -9 {pid}");
    }

    /// Starts the node on `port` again after a [`kill`](Self::kill): with its cluster config
    /// (a master gets its slots back, a replica its master), without its data.
    pub fn restart(&self, port: u16) {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/cluster.sh");
        let out = Command::new("bash").arg(script).arg("restart").arg(&self.dir).arg(port.to_string()).output();
        let out = out.expect("cluster.sh");
        assert!(out.status.success(), "cluster.sh restart failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Every node serves the slots it has while others have no node
    /// (`cluster-require-full-coverage no`).
    pub fn serve_partial(&self) {
        for p in self.ports() {
            let mut con = redis::Client::open(format!("redis://127.0.0.1:{p}")).unwrap().get_connection().unwrap();
            let _: () =
                redis::cmd("CONFIG").arg("SET").arg("cluster-require-full-coverage").arg("no").query(&mut con).unwrap();
        }
    }

    /// Port of the replica of `master`.
    pub fn replica_of(&self, master: u16) -> u16 {
        let mut con = redis::Client::open(format!("redis://127.0.0.1:{master}")).unwrap().get_connection().unwrap();
        let info: String = redis::cmd("INFO").arg("replication").query(&mut con).unwrap();
        let line = info.lines().find(|l| l.starts_with("slave0:")).unwrap_or_else(|| panic!("no replica: {info}"));
        let port = line.split(',').find_map(|f| f.strip_prefix("port=")).unwrap();
        port.parse().unwrap()
    }

    /// SIGKILLs `master` and its replica, so that its slots have no node; returns once the
    /// other nodes mark it failed (`CLUSTER NODES`), as they answer from then on.
    pub fn lose_master(&self, master: u16) {
        let replica = self.replica_of(master);
        self.kill(master);
        self.kill(replica);
        let live = self.ports().into_iter().find(|&p| p != master && p != replica).unwrap();
        let mut con = redis::Client::open(format!("redis://127.0.0.1:{live}")).unwrap().get_connection().unwrap();
        let t = Instant::now();
        loop {
            let nodes: String = redis::cmd("CLUSTER").arg("NODES").query(&mut con).unwrap();
            let flags = nodes
                .lines()
                .find(|l| l.contains(&format!("127.0.0.1:{master}@")))
                .map(|l| l.split(' ').nth(2).unwrap_or("").split(',').map(str::to_string).collect::<Vec<_>>());
            if flags.is_some_and(|f| f.iter().any(|f| f == "fail")) {
                return;
            }
            assert!(t.elapsed() < Duration::from_secs(60), "the cluster never marked {master} failed: {nodes}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/cluster.sh");
        let _ = Command::new("bash").arg(script).arg("stop").arg(&self.dir).status();
    }
}

/// A server set started by one of the tests/*.sh launchers (`start DIR` prints what to use;
/// `stop DIR` on drop).
pub struct Launched {
    pub script: &'static str,
    pub dir: PathBuf,
    pub printed: String,
}

impl Launched {
    pub fn start(script: &'static str) -> Launched {
        ensure_installed();
        let dir = std::env::temp_dir().join(format!("redelay-{script}-{}-{}", std::process::id(), rand_suffix()));
        let out = Command::new("bash").arg(Self::path(script)).arg("start").arg(&dir).output().expect(script);
        assert!(out.status.success(), "{script} start failed: {}", String::from_utf8_lossy(&out.stderr));
        let printed = String::from_utf8(out.stdout).unwrap().trim().to_string();
        Launched { script, dir, printed }
    }

    fn path(script: &str) -> String {
        format!("{}/../tests/{script}", env!("CARGO_MANIFEST_DIR"))
    }

    /// Runs another verb of the launcher (e.g. `failover`).
    pub fn run(&self, verb: &str) {
        let out = Command::new("bash").arg(Self::path(self.script)).arg(verb).arg(&self.dir).output().unwrap();
        assert!(out.status.success(), "{} {verb}: {}", self.script, String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        let _ = Command::new("bash").arg(Self::path(self.script)).arg("stop").arg(&self.dir).status();
    }
}

/// A handler that acks every delivery and records `what(delivery)` in the returned list.
pub fn recording<F>(what: F) -> (std::sync::Arc<std::sync::Mutex<Vec<String>>>, impl redelay::Handler)
where
    F: Fn(&redelay::Delivery) -> String + Send + Sync + 'static,
{
    let got: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
    let g = got.clone();
    let handler = move |d: redelay::Delivery| {
        g.lock().unwrap().push(what(&d));
        async { Ok::<(), redelay::Failure>(()) }
    };
    (got, handler)
}

/// A TCP proxy in front of a real Redis that injects network faults: it can lose the reply to
/// the next request containing some bytes (forwarding the request, then closing the client's
/// connection without a reply), drop the next request containing some bytes (closing the
/// connection instead of forwarding it), and hold back requests containing some bytes for a
/// while (all of them, or those after the first few).
pub struct FaultProxy {
    pub port: u16,
    lose_reply_of: Pattern,
    drop_request: Pattern,
    delay: Delay,
    /// Requests whose replies were lost, or that were dropped, so far.
    pub lost: std::sync::Arc<AtomicU32>,
}

/// The bytes a fault waits for.
type Pattern = std::sync::Arc<std::sync::Mutex<Option<Vec<u8>>>>;
/// The bytes whose requests are held back, for how long, and how many such requests still go
/// on at once before that.
type Delay = std::sync::Arc<std::sync::Mutex<Option<(Vec<u8>, Duration, u32)>>>;

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

impl FaultProxy {
    /// Listens on a free port of 127.0.0.1 and forwards to `upstream_port`.
    pub async fn start(upstream_port: u16) -> FaultProxy {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let lose: Pattern = Default::default();
        let drop_request: Pattern = Default::default();
        let delay: Delay = Default::default();
        let lost = std::sync::Arc::new(AtomicU32::new(0));
        let (l2, d2, lost2, drop2) = (lose.clone(), delay.clone(), lost.clone(), drop_request.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", upstream_port)).await else { continue };
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                let cut = std::sync::Arc::new(tokio::sync::Notify::new());
                // Set once a request's reply is to be lost: nothing more reaches the client.
                let swallow = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
                let (lose, delay, lost, cut2, swallow2, dropping) =
                    (l2.clone(), d2.clone(), lost2.clone(), cut.clone(), swallow.clone(), drop2.clone());
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        let n = match cr.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        let chunk = &buf[..n];
                        let hold = match delay.lock().unwrap().as_mut() {
                            Some((p, _, pass)) if *pass > 0 && contains(chunk, p) => {
                                *pass -= 1;
                                None
                            }
                            Some((p, d, _)) if contains(chunk, p) => Some(*d),
                            _ => None,
                        };
                        if let Some(d) = hold {
                            tokio::time::sleep(d).await;
                        }
                        let hit = |pattern: &Pattern| {
                            let mut l = pattern.lock().unwrap();
                            let hit = l.as_ref().is_some_and(|p| contains(chunk, p));
                            if hit {
                                *l = None;
                            }
                            hit
                        };
                        if hit(&dropping) {
                            // Never forwarded: Redis does not see the request.
                            lost.fetch_add(1, Ordering::SeqCst);
                            cut2.notify_waiters();
                            break;
                        }
                        let losing = hit(&lose);
                        if losing {
                            swallow2.store(true, Ordering::SeqCst);
                        }
                        if sw.write_all(chunk).await.is_err() {
                            break;
                        }
                        if losing {
                            // Let Redis run the request, then drop the connection: the reply
                            // never reaches the client.
                            lost.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(200)).await;
                            cut2.notify_waiters();
                            break;
                        }
                    }
                });
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        tokio::select! {
                            r = sr.read(&mut buf) => match r {
                                Ok(0) | Err(_) => break,
                                Ok(_) if swallow.load(Ordering::SeqCst) => {}
                                Ok(n) => if cw.write_all(&buf[..n]).await.is_err() { break },
                            },
                            _ = cut.notified() => break,
                        }
                    }
                });
            }
        });
        FaultProxy { port, lose_reply_of: lose, drop_request, delay, lost }
    }

    /// The reply to the next request containing `pattern` is lost.
    pub fn lose_next_reply_of(&self, pattern: &[u8]) {
        *self.lose_reply_of.lock().unwrap() = Some(pattern.to_vec());
    }

    /// The next request containing `pattern` never reaches Redis: the connection closes.
    pub fn drop_next_request_with(&self, pattern: &[u8]) {
        *self.drop_request.lock().unwrap() = Some(pattern.to_vec());
    }

    /// Requests containing `pattern` are held back for `d` before they go on.
    pub fn delay_requests_with(&self, pattern: &[u8], d: Duration) {
        self.delay_requests_with_after(pattern, 0, d);
    }

    /// The next `pass` requests containing `pattern` go on at once; those after them are held
    /// back for `d` before they go on.
    pub fn delay_requests_with_after(&self, pattern: &[u8], pass: u32, d: Duration) {
        *self.delay.lock().unwrap() = Some((pattern.to_vec(), d, pass));
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

/// A fault proxy in front of the Redis under test, and a client through it with a fresh
/// prefix (`name`-…), which it returns too.
pub async fn through_proxy(name: &str) -> (FaultProxy, Client, String) {
    let proxy = FaultProxy::start(port_of(&url())).await;
    let prefix = unique(name);
    let client = Client::builder(&proxy.url()).prefix(&prefix).connect().await.unwrap();
    (proxy, client, prefix)
}

/// Waits (up to 10 s) until `client` reaches Redis again after a cut connection (a call may
/// still meet the broken socket while redis-rs reconnects).
pub async fn reconnected(client: &Client) {
    let t = Instant::now();
    while client.ping().await.is_err() {
        assert!(t.elapsed() < Duration::from_secs(10), "the client did not reconnect");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The one publish replay key of queue `queue` under `prefix` (the test's one queue handle),
/// read directly: field → value.
pub async fn publish_replay(prefix: &str, queue: &str) -> std::collections::HashMap<String, Vec<u8>> {
    let mut raw = raw().await;
    let keys: Vec<String> =
        redis::cmd("KEYS").arg(format!("{prefix}:{{{queue}}}:b:*")).query_async(&mut raw).await.unwrap();
    assert_eq!(keys.len(), 1, "one replay key: {keys:?}");
    redis::cmd("HGETALL").arg(&keys[0]).query_async(&mut raw).await.unwrap()
}

/// The port of a `redis://host:port` URL.
pub fn port_of(url: &str) -> u16 {
    url.rsplit(':').next().unwrap().trim_end_matches('/').split('/').next().unwrap().parse().unwrap()
}

/// A plain connection to the Redis under test, for looking at keys directly.
pub async fn raw() -> redis::aio::MultiplexedConnection {
    redis::Client::open(url()).unwrap().get_multiplexed_async_connection().await.unwrap()
}

/// Fetches and nacks until nothing is due (messages with one attempt become dead letters).
pub async fn nack_all(q: &Queue) {
    loop {
        let got = q.fetch(1000, Duration::ZERO).await.unwrap();
        if got.is_empty() {
            break;
        }
        for d in got {
            d.nack(None, "boom").await.unwrap();
        }
    }
}

/// Waits (up to 60 s) until `got` holds `n` entries.
pub async fn wait_for_len<T>(got: &std::sync::Arc<std::sync::Mutex<Vec<T>>>, n: usize) {
    let t = Instant::now();
    while got.lock().unwrap().len() < n {
        assert!(t.elapsed() < Duration::from_secs(60), "only {} of {n}", got.lock().unwrap().len());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
