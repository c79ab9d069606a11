//! What every handler shares: the client, its queue handles, the token store, counters.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use redelay::{Client, Queue};

use crate::auth::{self, Access, TokenStore};
use crate::config::ServerConfig;
use crate::error::{ApiError, CoreExt, Style};
use crate::webhook_registry::Webhooks;

/// How long a token looked up in Redis is trusted without asking again: a revocation holds
/// on every server within this time.
const TOKEN_CACHE: std::time::Duration = std::time::Duration::from_secs(1);
/// Tokens cached at most; past that the cache starts over.
const MAX_CACHED_TOKENS: usize = 10_000;

/// Queue handles kept at most (each has a settler task); past that the cache starts over.
const MAX_CACHED_QUEUES: usize = 10_000;
/// How long a sharded queue's handle is kept before it is opened again with the count then
/// stored: the core's handle trusts its check of the count as long, so a queue destroyed and
/// re-created by another client with another count is seen before the old handle would check
/// again and refuse every call. Meanwhile the core refuses the old handle's writes (and changes
/// by id) into shards that are not marked with its count, so nothing it publishes then is lost;
/// that refusal drops the handle at once and the request is answered again with the queue
/// opened anew (`reopen_and_retry` in `lib.rs`).
const QUEUE_HANDLE_LIFE: std::time::Duration = std::time::Duration::from_secs(5);
/// How long the handle of a queue with no shard count stored (a plain queue, or one not
/// created yet) is kept: a producer may make it sharded at any moment (a worker long-polls a
/// queue before its first publish), and until the handle is opened again every call on it is
/// refused before anything is written. Short, so that such a queue is served sharded within a
/// second; kept at all, so that a busy plain queue is not looked up at each request.
const PLAIN_HANDLE_LIFE: std::time::Duration = std::time::Duration::from_secs(1);

/// Shared by every handler. Cheap to clone.
#[derive(Clone)]
pub struct AppState(pub Arc<Inner>);

pub struct Inner {
    pub client: Client,
    pub tokens: TokenStore,
    pub config: ServerConfig,
    admin_hash: Option<String>,
    /// Queue handles, with when each was opened ([`AppState::queue_handle`]).
    queues: Mutex<HashMap<String, (Queue, std::time::Instant)>>,
    /// Token hash → (what it allows, when it was read).
    known: Mutex<HashMap<String, (Access, std::time::Instant)>>,
    /// Answers by API and status class: `[api][class]`, api 0 = lmstfy, 1 = v1, 2 = admin,
    /// 3 = the dashboard's files, 4 = the probes (`/healthz`, `/metrics`);
    /// class 0..5 = 1xx..5xx.
    pub answers: [[AtomicU64; 5]; 5],
    /// The webhook workers this server runs (`webhook.rs`).
    pub webhooks: Webhooks,
    /// The queues whose overview row is an error now (`Inner::overview_failed`): the warning
    /// is logged when a queue joins, the recovery when it leaves, nothing on the polls between;
    /// a queue destroyed leaves silently (`forget_queue`, `overview_registered`).
    unreadable: Mutex<HashSet<String>>,
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    pub fn new(client: Client, tokens: TokenStore, config: ServerConfig) -> AppState {
        let admin_hash = config.admin_token.as_deref().map(auth::hash);
        AppState(Arc::new(Inner {
            client,
            tokens,
            config,
            admin_hash,
            queues: Mutex::new(HashMap::new()),
            known: Mutex::new(HashMap::new()),
            answers: Default::default(),
            webhooks: Default::default(),
            unreadable: Mutex::new(HashSet::new()),
        }))
    }

    /// The handle of queue `name`, opened with the shard count stored in Redis.
    pub async fn queue(&self, name: &str, style: Style) -> Result<Queue, ApiError> {
        self.queue_handle(name).await.api(style)
    }

    /// [`queue`](Self::queue) with the core's error, for a caller that answers it its own way
    /// (the overview's rows).
    ///
    /// A handle is kept (one settler per queue, and one look at the count per queue and period
    /// rather than per request), then opened again with the count stored then: a sharded
    /// queue's after [`QUEUE_HANDLE_LIFE`], one with no count stored after
    /// [`PLAIN_HANDLE_LIFE`].
    pub async fn queue_handle(&self, name: &str) -> redelay::Result<Queue> {
        let cached = self.queues.lock().unwrap().get(name).cloned();
        if let Some((q, opened)) = cached {
            let life = if q.shards() > 1 { QUEUE_HANDLE_LIFE } else { PLAIN_HANDLE_LIFE };
            if opened.elapsed() < life {
                return Ok(q);
            }
        }
        // A name no URL can carry (`.`, `..`: a legacy queue `queue_stored` would open) is
        // refused as before.
        redelay::limits::check_queue_name(name)?;
        let q = self.client.queue_stored(name).await?;
        let mut m = self.queues.lock().unwrap();
        if m.len() >= MAX_CACHED_QUEUES {
            m.clear();
        }
        m.insert(name.to_string(), (q.clone(), std::time::Instant::now()));
        Ok(q)
    }

    /// The overview could not read `queue` (`e`, its row's error). A warning says so when the
    /// queue was readable before (or not seen yet), and nothing while it stays unreadable: the
    /// dashboard polls every 2 s, and an outage would otherwise log a line per failing queue,
    /// per poll, per open dashboard. The set holds only the queues failing now (at most
    /// [`MAX_CACHED_QUEUES`]; past that it starts over, so each still failing is said again once).
    pub fn overview_failed(&self, queue: &str, e: &redelay::Error) {
        let mut failing = self.unreadable.lock().unwrap();
        if failing.contains(queue) {
            return;
        }
        if failing.len() >= MAX_CACHED_QUEUES {
            failing.clear();
        }
        failing.insert(queue.to_string());
        drop(failing);
        tracing::warn!(
            target: "redelay::server",
            "overview: queue {queue:?} unavailable (logged once until it is read again): {}: {}",
            e.kind().name(),
            e.message()
        );
    }

    /// The overview read `queue`: if it was unreadable, an info line says it is available again
    /// (good news that needs no action, as the core's "fetching again after errors").
    pub fn overview_read(&self, queue: &str) {
        if self.unreadable.lock().unwrap().remove(queue) {
            tracing::info!(target: "redelay::server", "overview: queue {queue:?} available again");
        }
    }

    /// The overview read the registry whole: `registered`, sorted (as `Client::queues` gives
    /// it). A queue unreadable here that it no longer lists (destroyed, through this server or
    /// another) leaves the set, so that a queue made later under its name is said again when it
    /// fails. One binary search per queue failing now: nothing while every queue reads.
    pub fn overview_registered(&self, registered: &[String]) {
        debug_assert!(registered.is_sorted());
        self.unreadable.lock().unwrap().retain(|q| registered.binary_search(q).is_ok());
    }

    /// Drops what this server keeps of queue `name`, after a destroy: its handle (the next
    /// request opens it again with the shard count then stored in Redis, none for a destroyed
    /// sharded queue), and its place among the overview's unreadable queues (a queue made later
    /// under its name is said again when it fails).
    pub fn forget_queue(&self, name: &str) {
        self.drop_handle(name);
        self.unreadable.lock().unwrap().remove(name);
    }

    /// Drops the kept handle of queue `name`: the next request opens it again with the shard
    /// count then stored in Redis. For a handle the core refused for its count (the queue was
    /// made again with another count by another client): the request is then answered again
    /// once (`reopen_and_retry` in `lib.rs`, the overview's rows).
    pub fn drop_handle(&self, name: &str) {
        self.queues.lock().unwrap().remove(name);
    }

    /// What the request's token allows: 401 without a token or with an unknown one.
    pub async fn access(&self, headers: &HeaderMap, query: Option<&str>, style: Style) -> Result<Access, ApiError> {
        let Some(token) = auth::request_token(headers, query, true) else {
            return Err(auth::unauthorized("token not found", style));
        };
        self.access_of(&token, style).await
    }

    /// What `token` allows. lmstfy's `POOL:TOKEN` form is accepted for its default pool.
    pub async fn access_of(&self, token: &str, style: Style) -> Result<Access, ApiError> {
        let token = token.strip_prefix("default:").unwrap_or(token);
        let h = auth::hash(token);
        if self.admin_hash.as_deref() == Some(h.as_str()) {
            return Ok(Access::admin());
        }
        if let Some((a, at)) = self.known.lock().unwrap().get(&h) {
            if at.elapsed() < TOKEN_CACHE {
                return Ok(a.clone());
            }
        }
        let a = match self.tokens.lookup(token).await.api(style)? {
            Some(i) => Access { admin: false, namespace: Some(i.namespace), read_only: i.read_only },
            None => return Err(auth::unauthorized("invalid token", style)),
        };
        let mut known = self.known.lock().unwrap();
        if known.len() >= MAX_CACHED_TOKENS {
            known.clear();
        }
        known.insert(h, (a.clone(), std::time::Instant::now()));
        Ok(a)
    }

    /// Drops a revoked token (given as itself or its hash) from this server's cache.
    pub fn forget(&self, token_or_hash: &str) {
        let mut known = self.known.lock().unwrap();
        known.remove(token_or_hash);
        known.remove(&auth::hash(token_or_hash));
    }

    /// `Queue::fetch_first`. A client that goes away during a long-poll drops the request and
    /// with it the fetch, which is cancel-safe: the wait ends, and what a fetch call under way
    /// leased is released (back at its due time, no attempt counted) instead of waiting out
    /// its lease.
    pub async fn fetch(
        &self,
        queues: Vec<Queue>,
        max: usize,
        wait: std::time::Duration,
        ttr: Option<std::time::Duration>,
        style: Style,
    ) -> Result<Vec<redelay::Delivery>, ApiError> {
        Queue::fetch_first(&queues, max, wait, ttr).await.api(style)
    }

    pub fn client_max_body(&self) -> usize {
        self.client.max_body_bytes()
    }

    pub fn count(&self, api: usize, status: u16) {
        let class = (status / 100).clamp(1, 5) as usize - 1;
        self.answers[api][class].fetch_add(1, Ordering::Relaxed);
    }
}
