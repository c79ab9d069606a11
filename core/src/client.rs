//! Connecting to Redis: [`Client`], [`ClientBuilder`].

use std::sync::Arc;
use std::time::Duration;

use crate::base::error::{Error, ErrorKind, Result};
use crate::base::options::{ClientOptions, QueueOptions};
use crate::base::url::redact;
use crate::ops::queue::Queue;
use crate::runtime::consumer::Queues;
use crate::storage::connection::{self, Timeouts};
use crate::storage::ctx::{Closes, Ctx, Defaults};
use crate::storage::wake::WakeHub;

/// A connection to one Redis, shared by every queue handle made from it. Cheap to clone.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Ctx>,
}

/// Options for [`Client`]; start with [`Client::builder`]. Each setter sets one field of
/// [`ClientOptions`].
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    url: String,
    opts: ClientOptions,
}

impl ClientBuilder {
    /// Key prefix of every queue (default `redelay`).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.opts.prefix = prefix.into();
        self
    }
    /// Largest body accepted by publish (default 8 MiB).
    pub fn max_body_bytes(mut self, n: usize) -> Self {
        self.opts.max_body_bytes = n;
        self
    }
    /// Durability: a publish returns only after `replicas` replicas have its writes (Redis
    /// WAIT), or fails with a Redis error after `timeout`. With replication being asynchronous,
    /// a failover otherwise discards what the old master took in its last moments; with this,
    /// a publish that returned is on a replica, and one that failed can be retried (with ids,
    /// a retry is a no-op for messages that did arrive). In a cluster, WAIT goes to the master
    /// of the queue's slot. `replicas` 1 to 100, `timeout` 1 ms to 60 s (as in every binding:
    /// `connect` refuses others, naming the field); off unless called.
    pub fn wait_for_replicas(mut self, replicas: u32, timeout: Duration) -> Self {
        self.opts.wait_for_replicas = Some((replicas, timeout));
        self
    }
    /// How long to try to reach Redis before giving up with a Connection error (default 5 s).
    pub fn connect_timeout(mut self, d: Duration) -> Self {
        self.opts.connect_timeout = d;
        self
    }
    /// How long to wait for any one answer from Redis before a Timeout error (default 10 s).
    pub fn response_timeout(mut self, d: Duration) -> Self {
        self.opts.response_timeout = d;
        self
    }
    /// Default max_attempts of messages published through this client (default 10).
    pub fn default_max_attempts(mut self, n: u32) -> Self {
        self.opts.default_max_attempts = n;
        self
    }
    /// Default ttr (lease) of messages published through this client (default 30 s).
    pub fn default_ttr(mut self, ttr: Duration) -> Self {
        self.opts.default_ttr = ttr;
        self
    }
    /// Default retry backoff of messages published through this client (default 1 s .. 1 h;
    /// each 1 ms to 7 days, `base` not above `max`).
    pub fn default_backoff(mut self, base: Duration, max: Duration) -> Self {
        self.opts.default_backoff_base = base;
        self.opts.default_backoff_max = max;
        self
    }

    /// Connects. Fails with InvalidArgument for a bad URL or option, and with Connection when
    /// Redis cannot be reached within the connect timeout.
    pub async fn connect(self) -> Result<Client> {
        Client::connect_with(&self.url, self.opts).await
    }
}

impl Client {
    /// Connects to `url` with default options: `redis://[user:password@]host[:port][/db]`,
    /// `rediss://…` for TLS (add `?tls_ca=/path/ca.pem` to trust a private CA),
    /// `unix:///path/to/redis.sock`, `redis+cluster://host:port[,host:port…]`,
    /// `redis+sentinel://host:port[,host:port…]/master-name`.
    pub async fn connect(url: &str) -> Result<Client> {
        Self::builder(url).connect().await
    }

    /// A builder for a client with options.
    pub fn builder(url: &str) -> ClientBuilder {
        ClientBuilder { url: url.to_string(), opts: ClientOptions::default() }
    }

    /// Connects with `opts`. Fails with InvalidArgument for a bad URL or option, and with
    /// Connection when Redis cannot be reached within the connect timeout.
    pub async fn connect_with(url: &str, opts: ClientOptions) -> Result<Client> {
        opts.validate()?;
        let rt = tokio::runtime::Handle::try_current()
            .map_err(|_| Error::invalid("Client::connect must run inside a tokio runtime"))?;
        let t = Timeouts { connect: opts.connect_timeout, response: opts.response_timeout };
        // The whole connect (each attempt, a retry, a sentinel's lookup), as the docs promise.
        let bound = opts.connect_timeout;
        let (conn, pubsub, opener) = match tokio::time::timeout(bound, connection::connect(url, t)).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) if e.kind() == ErrorKind::InvalidArgument => return Err(e),
            Ok(Err(e)) => {
                let kind = if e.kind() == ErrorKind::Timeout { ErrorKind::Connection } else { e.kind() };
                return Err(Error::new(kind, format!("cannot connect to {}: {}", redact(url), e.message())));
            }
            Err(_) => {
                return Err(Error::new(
                    ErrorKind::Connection,
                    format!("cannot connect to {}: no answer within {:?}", redact(url), bound),
                ))
            }
        };
        let wake = WakeHub::start(pubsub, &rt);
        let defaults = Defaults {
            max_attempts: opts.default_max_attempts,
            ttr: opts.default_ttr,
            backoff_base: opts.default_backoff_base,
            backoff_max: opts.default_backoff_max,
        };
        Ok(Client {
            inner: Arc::new(Ctx {
                conn,
                dedicated: crate::storage::dedicated::Dedicated::new(opener),
                prefix: opts.prefix,
                max_body_bytes: opts.max_body_bytes,
                wait_replicas: opts.wait_for_replicas,
                rt,
                wake,
                defaults,
                closed: Default::default(),
                subscriptions: Default::default(),
                closing: tokio::sync::Mutex::new(()),
            }),
        })
    }

    /// A handle to the queue `name` (1 to 128 bytes of `A-Z a-z 0-9 _ - . :`).
    pub fn queue(&self, name: &str) -> Result<Queue> {
        self.queue_with(name, QueueOptions::default())
    }

    /// A handle to the queue `name` with options: `QueueOptions::shards(16)` spreads its
    /// messages over 16 hash tags (see [`QueueOptions`]). InvalidArgument for a bad name or
    /// shard count; a count that differs from the one stored in Redis is refused at the
    /// handle's first call.
    pub fn queue_with(&self, name: &str, opts: QueueOptions) -> Result<Queue> {
        self.inner.check_open()?;
        Queue::new(self.inner.clone(), name, opts, false)
    }

    /// A handle to the queue `name` with the shard count stored in Redis: 1 for a queue that
    /// is not sharded (or does not exist yet). For tools that inspect queues they did not
    /// create; a producer or consumer should name its count with [`queue_with`](Self::queue_with).
    ///
    /// A name refused since it was stored (`.` or `..`, registered by an older version) opens
    /// too while the registry holds it, to be read and destroyed: any other write (publish,
    /// fetch, cancel, respawn…) is refused with the error that refuses the name.
    pub async fn queue_stored(&self, name: &str) -> Result<Queue> {
        self.inner.check_open()?;
        let legacy = self.is_legacy(name).await?;
        let meta = crate::base::keys::QueueKeys::new(&self.inner.prefix, name).all[4].clone();
        let mut c = self.inner.conn.clone();
        let n: Option<u32> = redis::cmd("HGET").arg(meta).arg("shards").query_async(&mut c).await?;
        self.inner.check_open()?;
        Queue::new(self.inner.clone(), name, QueueOptions::shards(n.unwrap_or(1)), legacy)
    }

    /// [`queue_with`](Self::queue_with) for tools whose user names the shard count (the CLI's
    /// `--shards`), checked against the one stored in Redis at the handle's first call as
    /// `queue_with`'s is; a name refused since it was stored (`.` or `..`) opens too while the
    /// registry holds it, to be read and destroyed only, as [`queue_stored`](Self::queue_stored)
    /// opens it.
    pub async fn queue_stored_with(&self, name: &str, opts: QueueOptions) -> Result<Queue> {
        self.inner.check_open()?;
        let legacy = self.is_legacy(name).await?;
        self.inner.check_open()?;
        Queue::new(self.inner.clone(), name, opts, legacy)
    }

    /// Whether `name` is one refused since it was stored (`.` or `..`) that the registry
    /// holds; false for a good name, and the name's error for any other.
    async fn is_legacy(&self, name: &str) -> Result<bool> {
        match crate::base::limits::check_queue_name(name) {
            Ok(()) => Ok(false),
            Err(e) if crate::base::limits::is_dot_segment(name) => {
                let mut c = self.inner.conn.clone();
                let registry = crate::base::keys::registry(&self.inner.prefix);
                let registered: bool = redis::cmd("SISMEMBER").arg(registry).arg(name).query_async(&mut c).await?;
                if registered {
                    Ok(true)
                } else {
                    Err(e)
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Pulls from several queues given by name, in priority order, each opened with the shard
    /// count stored in Redis: the deliveries of the first that has due messages, as
    /// [`Queue::fetch_first`] gives them. The names, `max`, `wait` and `ttr` are checked before
    /// Redis is asked anything.
    pub async fn fetch_first(
        &self,
        names: &[String],
        max: usize,
        wait: Duration,
        ttr: Option<Duration>,
    ) -> Result<Vec<crate::Delivery>> {
        crate::base::limits::check_queue_list(names.iter().map(String::as_str))?;
        crate::base::limits::check_fetch_max(max)?;
        crate::base::limits::check_delay("wait", wait)?;
        if let Some(t) = ttr {
            crate::base::limits::check_ttr("ttr", t)?;
        }
        names.iter().try_for_each(|n| crate::base::limits::check_queue_name(n))?;
        let mut queues = Vec::with_capacity(names.len());
        for name in names {
            queues.push(self.queue_stored(name).await?);
        }
        Queue::fetch_first(&queues, max, wait, ttr).await
    }

    /// The queues of a subscription given by name, as a foreign binding's `subscribe` gets
    /// them: each `(name, shards)` is opened with that shard count, or with the count stored in
    /// Redis when it is None (see [`queue_stored`](Self::queue_stored)). Without `weights` the
    /// queues are in strict priority in this order ([`Queues::priority`]); with them, one weight
    /// per queue ([`Queues::ordered`]). InvalidArgument when the weights are not one per queue
    /// or one is outside 1 to [`MAX_WEIGHT`](crate::limits::MAX_WEIGHT).
    pub async fn queues_named(&self, names: Vec<(String, Option<u32>)>, weights: Option<Vec<i64>>) -> Result<Queues> {
        // Consumers: a legacy name that `queue_stored` opens for reading is refused here.
        names.iter().try_for_each(|(n, _)| crate::base::limits::check_queue_name(n))?;
        let mut queues = Vec::with_capacity(names.len());
        for (name, shards) in &names {
            queues.push(match shards {
                Some(n) => self.queue_with(name, QueueOptions::shards(*n))?,
                None => self.queue_stored(name).await?,
            });
        }
        Queues::ordered(queues, weights)
    }

    /// The small hash of strings `<prefix>:<name>` (see [`Settings`](crate::Settings)).
    pub fn settings(&self, name: &str) -> Result<crate::ops::settings::Settings> {
        self.inner.check_open()?;
        crate::ops::settings::Settings::new(self.inner.clone(), name)
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.inner.prefix
    }

    /// The largest body publish accepts (`ClientBuilder::max_body_bytes`).
    pub fn max_body_bytes(&self) -> usize {
        self.inner.max_body_bytes
    }

    /// Names of the queues published to under this prefix (a best-effort registry).
    pub async fn queues(&self) -> Result<Vec<String>> {
        self.inner.check_open()?;
        let mut c = self.inner.conn.clone();
        let mut names: Vec<String> =
            redis::cmd("SMEMBERS").arg(crate::base::keys::registry(&self.inner.prefix)).query_async(&mut c).await?;
        names.sort();
        Ok(names)
    }

    /// Closes the client: first every subscription made through it (each stops fetching and
    /// drains: running handlers get their drain timeout), then its connections. Later calls
    /// fail with a Connection error "client is closed". Calling it again (even concurrently)
    /// waits for the same close, then returns.
    pub async fn close(&self) {
        let _one_at_a_time = self.inner.closing.lock().await;
        if self.is_closed() {
            return;
        }
        let subs: Vec<Arc<dyn Closes>> = {
            let mut list = self.inner.subscriptions.lock().unwrap();
            list.drain(..).filter_map(|w| w.upgrade()).collect()
        };
        futures_util::future::join_all(subs.iter().map(|s| s.close_and_drain())).await;
        self.inner.closed.store(true, std::sync::atomic::Ordering::Release);
        self.inner.wake.shutdown();
        // The sockets close once the calls under way are done, whatever handles are still held.
        self.inner.conn.close().await;
        self.inner.dedicated.close().await;
    }

    /// True once `close` was called.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Round trip to Redis.
    pub async fn ping(&self) -> Result<()> {
        self.inner.check_open()?;
        let mut c = self.inner.conn.clone();
        let _: String = redis::cmd("PING").query_async(&mut c).await?;
        Ok(())
    }
}
