//! Where the commands go: one Redis, a Redis Cluster, or the master that Sentinel names.
//!
//! URL forms (user and password are optional everywhere; `rediss` means TLS):
//! - `redis://[user:pass@]host:port[/db]`, `rediss://…`, `unix:///path/redis.sock`
//! - `redis+cluster://[user:pass@]host:port[,host:port…]`, `rediss+cluster://…`
//! - `redis+sentinel://[user:pass@]sentinel:port[,sentinel:port…]/master-name`,
//!   `rediss+sentinel://…` (user and password are those of the Redis nodes)
//!
//! Query parameters understood by redelay (and removed before the URL reaches redis-rs):
//! `tls_ca=/path/ca.pem` trusts that CA (PEM) for `rediss` instead of the system roots.

use std::sync::{Arc, Mutex as StdMutex, RwLock};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::sentinel::{SentinelClient, SentinelNodeConnectionInfo, SentinelServerType};
use redis::{Cmd, Pipeline, RedisFuture, Value};

use crate::base::error::{Error, Result};
use crate::base::url::redact;

/// The URL schemes redelay accepts.
pub const URL_SCHEMES: &[&str] =
    &["redis", "rediss", "unix", "redis+unix", "redis+cluster", "rediss+cluster", "redis+sentinel", "rediss+sentinel"];

/// Timeouts for every kind of connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    pub connect: Duration,
    pub response: Duration,
}

/// A parsed URL.
struct Parsed {
    kind: Kind,
    tls: bool,
    user: Option<String>,
    pass: Option<String>,
    hosts: Vec<String>,
    /// db for single, master name for sentinel
    path: String,
    /// the query string without redelay's own parameters
    query: Vec<(String, String)>,
    tls_ca: Option<Vec<u8>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Single,
    Unix,
    Cluster,
    Sentinel,
}

fn invalid(url: &str, why: impl std::fmt::Display) -> Error {
    Error::invalid(format!("url: {:?}: {why}", redact(url)))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse(url: &str) -> Result<Parsed> {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", ""));
    if !URL_SCHEMES.contains(&scheme) {
        return Err(Error::invalid(format!(
            "url: unknown scheme {scheme:?} in {:?}; use redis://, rediss://, unix://, redis+cluster:// or redis+sentinel://",
            redact(url)
        )));
    }
    let tls = scheme.starts_with("rediss");
    let kind = match scheme {
        "unix" | "redis+unix" => Kind::Unix,
        s if s.ends_with("+cluster") => Kind::Cluster,
        s if s.ends_with("+sentinel") => Kind::Sentinel,
        _ => Kind::Single,
    };
    let (rest, fragment) = match rest.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (rest, None),
    };
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let mut q = Vec::new();
    let mut tls_ca = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k == "tls_ca" {
            let path = percent_decode(v);
            let pem = std::fs::read(&path).map_err(|e| invalid(url, format!("tls_ca: cannot read {path:?}: {e}")))?;
            tls_ca = Some(pem);
        } else {
            q.push((k.to_string(), v.to_string()));
        }
    }
    if let Some(f) = fragment {
        q.push(("#".to_string(), f.to_string()));
    }
    if kind == Kind::Unix {
        return Ok(Parsed {
            kind,
            tls,
            user: None,
            pass: None,
            hosts: vec![rest.to_string()],
            path: String::new(),
            query: q,
            tls_ca,
        });
    }
    let (auth, hostpath) = match rest.rsplit_once('@') {
        Some((a, h)) => (Some(a), h),
        None => (None, rest),
    };
    let (user, pass) = match auth {
        Some(a) => match a.split_once(':') {
            Some((u, p)) => ((!u.is_empty()).then(|| percent_decode(u)), Some(percent_decode(p))),
            None => ((!a.is_empty()).then(|| percent_decode(a)), None),
        },
        None => (None, None),
    };
    let (hosts, path) = hostpath.split_once('/').unwrap_or((hostpath, ""));
    let hosts: Vec<String> = hosts.split(',').filter(|h| !h.is_empty()).map(str::to_string).collect();
    if hosts.is_empty() {
        return Err(invalid(url, "no host"));
    }
    if kind == Kind::Single && hosts.len() > 1 {
        return Err(invalid(url, "several hosts: use redis+cluster:// or redis+sentinel://"));
    }
    if kind == Kind::Sentinel && path.is_empty() {
        return Err(invalid(url, "no master name: redis+sentinel://host:port/master-name"));
    }
    Ok(Parsed { kind, tls, user, pass, hosts, path: path.to_string(), query: q, tls_ca })
}

impl Parsed {
    /// A single-node URL for `host` with this URL's credentials, TLS and query.
    fn node_url(&self, host: &str, db: &str) -> String {
        let scheme = if self.tls { "rediss" } else { "redis" };
        let auth = match (&self.user, &self.pass) {
            (Some(u), Some(p)) => format!("{}:{}@", enc(u), enc(p)),
            (None, Some(p)) => format!(":{}@", enc(p)),
            (Some(u), None) => format!("{}@", enc(u)),
            (None, None) => String::new(),
        };
        let mut url = format!("{scheme}://{auth}{host}/{db}");
        let mut frag = None;
        let params: Vec<String> = self
            .query
            .iter()
            .filter_map(|(k, v)| {
                if k == "#" {
                    frag = Some(v.clone());
                    None
                } else {
                    Some(format!("{k}={v}"))
                }
            })
            .collect();
        if !params.is_empty() {
            url.push('?');
            url.push_str(&params.join("&"));
        }
        if let Some(f) = frag {
            url.push('#');
            url.push_str(&f);
        }
        url
    }

    fn client(&self, url: &str) -> Result<redis::Client> {
        let r = match &self.tls_ca {
            Some(ca) => redis::Client::build_with_tls(
                url,
                redis::TlsCertificates { client_tls: None, root_cert: Some(ca.clone()) },
            ),
            None => redis::Client::open(url),
        };
        r.map_err(|e| invalid(url, e))
    }
}

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The connection every script call goes through; cheap to clone (clones share sockets and
/// its close). Closed ([`Conn::close`], by `Client::close`), it lets go of its link, so that its
/// sockets close once the calls under way are done, whatever handles (queues, deliveries) are
/// still held; every later call fails with the "client is closed" error.
#[derive(Clone)]
pub(crate) struct Conn {
    link: Arc<RwLock<Option<Link>>>,
    cluster: bool,
}

/// What a [`Conn`] sends through while it is open.
#[derive(Clone)]
pub(crate) enum Link {
    /// Multiplexed and reconnecting by itself.
    Single(ConnectionManager),
    /// Routes each script to the master of its queue's slot; follows MOVED/ASK.
    Cluster(ClusterConnection),
    /// The master Sentinel names; asks again after a connection error or READONLY.
    Sentinel(Arc<SentinelConn>),
}

/// The master Sentinel names, and the Sentinel client that asks. Both are let go of when the
/// [`Conn`] closes (`None`), with their sockets, although the client's opener and wake
/// subscriber still hold this.
pub(crate) struct SentinelConn {
    sentinel: tokio::sync::Mutex<Option<SentinelClient>>,
    current: RwLock<Option<ConnectionManager>>,
    config: ConnectionManagerConfig,
    last_resolve: StdMutex<Instant>,
}

/// Opens more connections to the same place, for work that must not share the multiplexed
/// one (a publish followed by WAIT, which blocks its connection).
pub(crate) enum Opener {
    Single(redis::Client, ConnectionManagerConfig),
    Cluster(redis::cluster::ClusterClient),
    /// A connection to the master Sentinel names now.
    Sentinel(Arc<SentinelConn>),
}

impl Opener {
    pub async fn open(&self) -> Result<Link> {
        Ok(match self {
            Opener::Single(c, config) => {
                Link::Single(ConnectionManager::new_with_config(c.clone(), config.clone()).await?)
            }
            Opener::Cluster(c) => Link::Cluster(c.get_async_connection().await?),
            Opener::Sentinel(s) => {
                let master = s.master_client().await?;
                Link::Single(ConnectionManager::new_with_config(master, s.config.clone()).await?)
            }
        })
    }
}

/// Where the wake subscriber connects.
#[derive(Clone)]
pub(crate) enum PubSubTarget {
    Client(Box<redis::Client>),
    /// Any of these nodes (PUBLISH reaches every node of a cluster).
    AnyOf(Vec<redis::Client>),
    Sentinel(Arc<SentinelConn>),
}

impl PubSubTarget {
    pub async fn pubsub(&self) -> redis::RedisResult<redis::aio::PubSub> {
        match self {
            PubSubTarget::Client(c) => c.get_async_pubsub().await,
            PubSubTarget::AnyOf(list) => {
                let mut last = None;
                for c in list {
                    match c.get_async_pubsub().await {
                        Ok(p) => return Ok(p),
                        Err(e) => last = Some(e),
                    }
                }
                Err(last.expect("at least one node"))
            }
            PubSubTarget::Sentinel(s) => s.master_client().await?.get_async_pubsub().await,
        }
    }
}

fn manager_config(t: Timeouts) -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_connection_timeout(Some(t.connect))
        .set_response_timeout(Some(t.response))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_secs(1))
}

/// Connects to what `url` names. Errors: InvalidArgument for the URL, else what Redis said.
pub(crate) async fn connect(url: &str, t: Timeouts) -> Result<(Conn, PubSubTarget, Opener)> {
    let p = parse(url)?;
    if p.tls {
        // rustls needs a process-wide crypto provider; keep one the application installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    match p.kind {
        Kind::Single | Kind::Unix => {
            let node = if p.kind == Kind::Unix {
                let mut u = url.to_string();
                if let Some(i) = u.find("tls_ca=") {
                    u.truncate(i.saturating_sub(1));
                }
                u
            } else {
                p.node_url(&p.hosts[0], &p.path)
            };
            let client = p.client(&node)?;
            let conn = ConnectionManager::new_with_config(client.clone(), manager_config(t)).await?;
            let opener = Opener::Single(client.clone(), manager_config(t));
            Ok((Conn::new(Link::Single(conn)), PubSubTarget::Client(Box::new(client)), opener))
        }
        Kind::Cluster => {
            let nodes: Vec<String> = p.hosts.iter().map(|h| p.node_url(h, "")).collect();
            let mut b = ClusterClientBuilder::new(nodes.clone())
                .connection_timeout(t.connect)
                .response_timeout(t.response)
                .retries(3);
            if let Some(ca) = &p.tls_ca {
                b = b.certs(redis::TlsCertificates { client_tls: None, root_cert: Some(ca.clone()) });
            }
            let cluster = b.build().map_err(|e| invalid(url, e))?;
            let conn = cluster.get_async_connection().await?;
            let subs = nodes.iter().map(|n| p.client(n)).collect::<Result<Vec<_>>>()?;
            Ok((Conn::new(Link::Cluster(conn)), PubSubTarget::AnyOf(subs), Opener::Cluster(cluster)))
        }
        Kind::Sentinel => {
            let sentinels: Vec<String> = p.hosts.iter().map(|h| format!("redis://{h}")).collect();
            let tls = p.tls.then_some(if p.query.iter().any(|(k, v)| k == "#" && v == "insecure") {
                redis::TlsMode::Insecure
            } else {
                redis::TlsMode::Secure
            });
            let mut info = redis::RedisConnectionInfo::default();
            if let Some(u) = &p.user {
                info = info.set_username(u);
            }
            if let Some(pw) = &p.pass {
                info = info.set_password(pw);
            }
            let mut node = SentinelNodeConnectionInfo::default().set_redis_connection_info(info);
            if let Some(mode) = tls {
                node = node.set_tls_mode(mode);
            }
            let mut sc = SentinelClient::build(sentinels, p.path.clone(), Some(node), SentinelServerType::Master)
                .map_err(|e| invalid(url, e))?;
            let master = sc.async_get_client().await?;
            let config = manager_config(t);
            let cm = ConnectionManager::new_with_config(master, config.clone()).await?;
            let s = Arc::new(SentinelConn {
                sentinel: tokio::sync::Mutex::new(Some(sc)),
                current: RwLock::new(Some(cm)),
                config,
                last_resolve: StdMutex::new(Instant::now()),
            });
            tokio::spawn(watch_switch_master(Arc::downgrade(&s)));
            Ok((Conn::new(Link::Sentinel(s.clone())), PubSubTarget::Sentinel(s.clone()), Opener::Sentinel(s)))
        }
    }
}

impl SentinelConn {
    /// The current master's connection, until closed.
    fn current(&self) -> redis::RedisResult<ConnectionManager> {
        self.current.read().unwrap().clone().ok_or_else(closed)
    }

    /// A client for the master Sentinel names now, until closed.
    async fn master_client(&self) -> redis::RedisResult<redis::Client> {
        self.sentinel.lock().await.as_mut().ok_or_else(closed)?.async_get_client().await
    }

    /// A client for a Sentinel (for its events), until closed.
    async fn sentinel_client(&self) -> redis::RedisResult<redis::Client> {
        self.sentinel.lock().await.as_mut().ok_or_else(closed)?.async_get_sentinel_client().await
    }

    /// Lets go of the master's connection and the Sentinel client's (`Conn::close`).
    async fn close(&self) {
        self.current.write().unwrap().take();
        self.sentinel.lock().await.take();
    }

    fn is_closed(&self) -> bool {
        self.current.read().unwrap().is_none()
    }

    /// After an error that may mean the master moved: ask Sentinel again (at most every 250 ms).
    async fn maybe_resolve(&self, e: &redis::RedisError) {
        let moved = e.is_io_error()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
            || e.is_timeout()
            || e.code() == Some("READONLY")
            || e.to_string().contains("READONLY");
        if !moved {
            return;
        }
        {
            let mut last = self.last_resolve.lock().unwrap();
            if last.elapsed() < Duration::from_millis(250) {
                return;
            }
            *last = Instant::now();
        }
        self.resolve().await;
    }

    /// Asks Sentinel for the master and switches to it.
    async fn resolve(&self) {
        let client = match self.master_client().await {
            Ok(c) => c,
            Err(_) => return,
        };
        if let Ok(cm) = ConnectionManager::new_with_config(client, self.config.clone()).await {
            let mut current = self.current.write().unwrap();
            if current.is_some() {
                tracing::info!("following Sentinel: connected to the current master");
                *current = Some(cm);
            }
        }
    }
}

/// Listens to Sentinel's `+switch-master` event and switches at once. Without it a client
/// finds out only when the old master refuses a write, and until Sentinel demotes it (up to
/// its 10 s INFO period after a manual failover) the old master keeps taking leases and acks
/// that its resync will discard. Ends when the connection is dropped.
async fn watch_switch_master(conn: std::sync::Weak<SentinelConn>) {
    use futures_util::StreamExt;
    loop {
        let Some(s) = conn.upgrade() else { return };
        if s.is_closed() {
            return;
        }
        let client = s.sentinel_client().await;
        drop(s);
        let pubsub = match client {
            Ok(c) => c.get_async_pubsub().await,
            Err(e) => Err(e),
        };
        let mut pubsub = match pubsub {
            Ok(p) => p,
            Err(_) => {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        if pubsub.subscribe("+switch-master").await.is_err() {
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        }
        let mut stream = pubsub.on_message();
        loop {
            match tokio::time::timeout(Duration::from_secs(1), stream.next()).await {
                Ok(Some(_)) => match conn.upgrade() {
                    Some(s) => s.resolve().await,
                    None => return,
                },
                Ok(None) => break,
                Err(_) => {
                    if conn.upgrade().is_none_or(|s| s.is_closed()) {
                        return;
                    }
                }
            }
        }
    }
}

impl Conn {
    fn new(link: Link) -> Self {
        let cluster = matches!(link, Link::Cluster(_));
        Conn { link: Arc::new(RwLock::new(Some(link))), cluster }
    }

    /// True on Redis Cluster, whose client sends a call again by itself when its connection
    /// drops (after a reconnect), even when Redis had run it.
    pub(crate) fn is_cluster(&self) -> bool {
        self.cluster
    }

    /// Lets go of the link: calls under way finish, later ones fail with "client is closed".
    /// Sentinel's connections close too, although the opener and wake subscriber hold them.
    pub(crate) async fn close(&self) {
        let link = self.link.write().unwrap().take();
        if let Some(Link::Sentinel(s)) = link {
            s.close().await;
        }
    }

    /// The link to send a call through, while open.
    fn link(&self) -> redis::RedisResult<Link> {
        self.link.read().unwrap().clone().ok_or_else(closed)
    }
}

/// The redis error of a call on a closed [`Conn`]; `Error::from` knows it by its payload's type
/// and makes it the core's "client is closed".
fn closed() -> redis::RedisError {
    redis::RedisError::from(std::io::Error::new(std::io::ErrorKind::NotConnected, crate::base::error::ClientClosed))
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        let link = self.link();
        Box::pin(async move { link?.req_packed_command(cmd).await })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        let link = self.link();
        Box::pin(async move { link?.req_packed_commands(cmd, offset, count).await })
    }

    fn get_db(&self) -> i64 {
        self.link().map_or(0, |l| l.get_db())
    }
}

/// The message of the error redis-rs gives (with the patch in `third_party/redis`,
/// `request_not_sent_error`) when a request's connection had closed before the request was
/// handed to it: none of it reached Redis. A copy, since the crate keeps its own private.
const REQUEST_NOT_SENT: &str = "connection closed before the request was sent";

/// True when `e` says that nothing of the request reached Redis: its connection had closed
/// before (Redis restarted, or closed an idle connection), and it may be sent again as it is.
fn never_sent(e: &redis::RedisError) -> bool {
    e.is_io_error() && e.to_string() == REQUEST_NOT_SENT
}

/// Runs `send` again, once, when its first run was refused before anything was sent: the
/// connection manager has begun to reconnect by then, and the second run waits for it. Any
/// other error stands, since the request may have run (a script's second run may answer
/// wrongly, or run it twice).
async fn resend_if_never_sent<T, F, Fut>(mut send: F) -> redis::RedisResult<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = redis::RedisResult<T>>,
{
    match send().await {
        Err(e) if never_sent(&e) => {
            tracing::info!("the connection to Redis had closed (a restart?): sending on a new one");
            send().await
        }
        r => r,
    }
}

impl Link {
    /// Sends, through a single Redis' or Sentinel's current master's connection manager, what
    /// `send` sends through one; again, once, if nothing of it was sent
    /// ([`resend_if_never_sent`]). For Sentinel, an error that may mean the master moved makes
    /// it ask Sentinel again first. Not for a cluster, whose client retries by itself.
    fn through_manager<'a, T, F, Fut>(&self, send: F) -> RedisFuture<'a, T>
    where
        F: Fn(ConnectionManager) -> Fut + Send + 'a,
        Fut: std::future::Future<Output = redis::RedisResult<T>> + Send + 'a,
        T: Send + 'a,
    {
        match self {
            Link::Single(c) => {
                let c = c.clone();
                Box::pin(resend_if_never_sent(move || send(c.clone())))
            }
            Link::Sentinel(s) => {
                let s = s.clone();
                Box::pin(resend_if_never_sent(move || {
                    let s = s.clone();
                    let sent = s.current().map(&send);
                    async move {
                        let r = match sent {
                            Ok(sent) => sent.await,
                            Err(e) => Err(e),
                        };
                        if let Err(e) = &r {
                            s.maybe_resolve(e).await;
                        }
                        r
                    }
                }))
            }
            Link::Cluster(_) => unreachable!("a cluster connection retries by itself"),
        }
    }
}

impl ConnectionLike for Link {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Link::Cluster(c) => c.req_packed_command(cmd),
            _ => self.through_manager(move |mut c| async move { c.req_packed_command(cmd).await }),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Link::Cluster(c) => c.req_packed_commands(cmd, offset, count),
            _ => self.through_manager(move |mut c| async move { c.req_packed_commands(cmd, offset, count).await }),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Link::Single(c) => c.get_db(),
            Link::Cluster(c) => c.get_db(),
            Link::Sentinel(s) => s.current().map_or(0, |c| c.get_db()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_forms() {
        let p = parse("redis+sentinel://u:p%40ss@s1:26379,s2:26380/mymaster").unwrap();
        assert_eq!((p.kind, p.tls), (Kind::Sentinel, false));
        assert_eq!(p.hosts, ["s1:26379", "s2:26380"]);
        assert_eq!((p.user.as_deref(), p.pass.as_deref(), p.path.as_str()), (Some("u"), Some("p@ss"), "mymaster"));
        let p = parse("rediss+cluster://:pw@a:1,b:2?protocol=resp3#insecure").unwrap();
        assert_eq!((p.kind, p.tls), (Kind::Cluster, true));
        assert_eq!(p.node_url("a:1", ""), "rediss://:pw@a:1/?protocol=resp3#insecure");
        assert!(parse("redis+sentinel://s1:26379").err().unwrap().message().contains("master name"));
        assert!(parse("redis://a:1,b:2").err().unwrap().message().contains("several hosts"));
        assert!(parse("ftp://x").err().unwrap().message().contains("unknown scheme"));
        assert!(parse("rediss://h:1/?tls_ca=/nonexistent.pem").err().unwrap().message().contains("tls_ca"));
        assert_eq!(percent_decode("a%2Fb%zz%e2%9c%93%"), "a/b%zz✓%");
        let p = parse("redis://h:1/2").unwrap();
        assert_eq!(p.node_url(&p.hosts[0], &p.path), "redis://h:1/2");
    }
}
