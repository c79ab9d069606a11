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
