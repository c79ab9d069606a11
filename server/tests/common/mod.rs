//! A gateway on 127.0.0.1 (free ports) over the Redis of tests/with-redis.sh, with its own prefix.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

use redelay::Client;
use redelay_server::auth::TokenStore;
use redelay_server::{AppState, ServerConfig};

pub const ADMIN: &str = "admin-token-for-the-tests";
/// Largest body of the test servers.
pub const MAX_BODY: usize = 4096;

pub fn url() -> String {
    std::env::var("REDIS_URL").expect("REDIS_URL: run the tests through tests/with-redis.sh")
}

pub struct Srv {
    /// `http://127.0.0.1:PORT` of the data listener.
    pub base: String,
    /// Of the admin listener.
    pub admin: String,
    pub st: AppState,
    pub client: Client,
    pub http: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    served: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Drop for Srv {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

pub fn unique(name: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    format!("{name}-{}-{}-{nanos}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

pub async fn start() -> Srv {
    start_with(|_| {}).await
}

pub async fn start_with(f: impl FnOnce(&mut ServerConfig)) -> Srv {
    start_on(&url(), f).await
}

/// A gateway over the Redis (or Redis Cluster) at `url`.
pub async fn start_on(url: &str, f: impl FnOnce(&mut ServerConfig)) -> Srv {
    let prefix = unique("gw");
    let client = Client::builder(url).prefix(&prefix).max_body_bytes(MAX_BODY).connect().await.unwrap();
    let tokens = TokenStore::new(&client).unwrap();
    let data = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let admin = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (base, admin_base) =
        (format!("http://{}", data.local_addr().unwrap()), format!("http://{}", admin.local_addr().unwrap()));
    let mut config = ServerConfig { admin_token: Some(ADMIN.to_string()), ..Default::default() };
    f(&mut config);
    let st = AppState::new(client.clone(), tokens, config);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(redelay_server::run(st.clone(), data, Some(admin), async move {
        let _ = rx.await;
    }));
    Srv { base, admin: admin_base, st, client, http: reqwest::Client::new(), stop: Some(tx), served: Some(served) }
}

impl Srv {
    /// Asks the server to stop and waits until `run` returns.
    pub async fn shutdown(&mut self) -> std::io::Result<()> {
        let _ = self.stop.take().unwrap().send(());
        self.served.take().unwrap().await.unwrap()
    }

    /// A new token of `ns`.
    pub async fn token(&self, ns: &str, read_only: bool) -> String {
        self.st.tokens.create(ns, read_only, "test", None).await.unwrap()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// Status and JSON body of a response (Null when the body is empty).
pub async fn json(r: reqwest::Response) -> (u16, serde_json::Value) {
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    let v = if text.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
    };
    (status, v)
}
