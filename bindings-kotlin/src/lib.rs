//! Kotlin/JVM binding of redelay: the UniFFI surface over the core.
//!
//! This crate holds conversions only. The idiomatic Kotlin API (`dev.redelay.Client`, ...) lives
//! in `jvm/src/main/kotlin` and wraps the generated `dev.redelay.ffi` package.
//!
//! Every async call runs on this library's own multi-threaded tokio runtime ([`runtime`]); the
//! UniFFI future that Kotlin polls only awaits the task's join handle. Durations cross the FFI as
//! signed milliseconds and times as milliseconds (or microseconds) since the Unix epoch, so that
//! a negative Kotlin `Duration` reaches Rust and is refused with a message naming the field.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redelay::{Delivery, ErrorKind, Failure, Message, MessageInfo, Select, State};

uniffi::setup_scaffolding!();

// ---------------------------------------------------------------------------------------------
// Runtime

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 8);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("redelay-tokio")
        .enable_all()
        .build()
        .expect("redelay: cannot start the tokio runtime")
});

/// The binding's tokio runtime (multi-threaded; the core captures its handle at connect).
fn runtime() -> &'static tokio::runtime::Runtime {
    &RUNTIME
}

/// Aborts the task when the Kotlin side stops waiting (coroutine cancelled).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs `fut` on the binding's runtime and waits for it.
async fn on_rt<T, F>(fut: F) -> Result<T, NativeError>
where
    T: Send + 'static,
    F: Future<Output = Result<T, NativeError>> + Send + 'static,
{
    let mut guard = AbortOnDrop(runtime().spawn(fut));
    match (&mut guard.0).await {
        Ok(r) => r,
        Err(e) if e.is_cancelled() => Err(NativeError::Connection("redelay: the call was cancelled".into())),
        Err(e) => Err(NativeError::Handler(format!("redelay: internal task failed: {e}"))),
    }
}

// ---------------------------------------------------------------------------------------------
// Errors

/// The core's error, one variant per kind; the message is the core's message.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Error)]
#[uniffi(flat_error)]
pub enum NativeError {
    InvalidArgument(String),
    Connection(String),
    Timeout(String),
    LeaseLost(String),
    NotFound(String),
    Redis(String),
    Handler(String),
}

impl std::fmt::Display for NativeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = match self {
            NativeError::InvalidArgument(m)
            | NativeError::Connection(m)
            | NativeError::Timeout(m)
            | NativeError::LeaseLost(m)
            | NativeError::NotFound(m)
            | NativeError::Redis(m)
            | NativeError::Handler(m) => m,
        };
        f.write_str(m)
    }
}

impl std::error::Error for NativeError {}

impl From<redelay::Error> for NativeError {
    fn from(e: redelay::Error) -> Self {
        let m = e.message().to_string();
        match e.kind() {
            ErrorKind::InvalidArgument => NativeError::InvalidArgument(m),
            ErrorKind::Connection => NativeError::Connection(m),
            ErrorKind::Timeout => NativeError::Timeout(m),
            ErrorKind::LeaseLost => NativeError::LeaseLost(m),
            ErrorKind::NotFound => NativeError::NotFound(m),
            ErrorKind::Redis => NativeError::Redis(m),
            ErrorKind::Handler => NativeError::Handler(m),
        }
    }
}

type Res<T> = Result<T, NativeError>;

fn invalid(m: impl Into<String>) -> NativeError {
    NativeError::InvalidArgument(m.into())
}

fn closed_error() -> NativeError {
    NativeError::Connection("client is closed".into())
}

/// A failed handler outcome, raised by the Kotlin handler adapter: nack with `reason`, retry
/// after `retry_in_ms` (or the message's backoff when `None`).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Error)]
pub enum HandlerFailure {
    Failed { reason: String, retry_in_ms: Option<i64> },
}

impl std::fmt::Display for HandlerFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let HandlerFailure::Failed { reason, .. } = self;
        f.write_str(reason)
    }
}

impl std::error::Error for HandlerFailure {}

impl From<uniffi::UnexpectedUniFFICallbackError> for HandlerFailure {
    fn from(e: uniffi::UnexpectedUniFFICallbackError) -> Self {
        HandlerFailure::Failed { reason: e.reason, retry_in_ms: None }
    }
}

// ---------------------------------------------------------------------------------------------
// Conversions

/// Signed milliseconds (a Kotlin `Duration`) to a Rust `Duration`; negative is refused.
fn millis(field: &str, ms: i64) -> Res<Duration> {
    if ms < 0 {
        return Err(invalid(format!("{field}: must not be negative, got {ms} ms")));
    }
    Ok(Duration::from_millis(ms as u64))
}

fn opt_millis(field: &str, ms: Option<i64>) -> Res<Option<Duration>> {
    ms.map(|v| millis(field, v)).transpose()
}

/// A signed count to usize; negative is refused (the core checks the rest of the range).
fn count(field: &str, n: i64) -> Res<usize> {
    usize::try_from(n).map_err(|_| invalid(format!("{field}: must not be negative, got {n}")))
}

fn count_u32(field: &str, n: i32) -> Res<u32> {
    u32::try_from(n).map_err(|_| invalid(format!("{field}: must not be negative, got {n}")))
}

/// Milliseconds since the epoch (may be negative) to a `SystemTime`.
fn ms_to_time(ms: i64) -> SystemTime {
    if ms >= 0 {
        UNIX_EPOCH + Duration::from_millis(ms as u64)
    } else {
        UNIX_EPOCH - Duration::from_millis(ms.unsigned_abs())
    }
}

fn time_to_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}

fn time_to_us(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_micros() as i64,
        Err(e) => -(e.duration().as_micros() as i64),
    }
}

// ---------------------------------------------------------------------------------------------
// Client

/// Options of `connect`; `None` keeps the core's default.
#[derive(Debug, Clone, Default, uniffi::Record)]
pub struct ClientOptions {
    pub prefix: Option<String>,
    pub max_body_bytes: Option<i64>,
    pub connect_timeout_ms: Option<i64>,
    pub response_timeout_ms: Option<i64>,
    pub default_max_attempts: Option<i32>,
    pub default_ttr_ms: Option<i64>,
    pub default_backoff_base_ms: Option<i64>,
    pub default_backoff_max_ms: Option<i64>,
    /// Replicas every publish waits for (Redis WAIT), with `wait_for_replicas_timeout_ms`.
    pub wait_for_replicas: Option<i32>,
    pub wait_for_replicas_timeout_ms: Option<i64>,
}

/// Connects to Redis (`redis://`, `rediss://`, `unix://`).
#[uniffi::export]
pub async fn connect(url: String, options: ClientOptions) -> Result<Arc<NativeClient>, NativeError> {
    on_rt(async move {
        let mut b = redelay::Client::builder(&url);
        if let Some(p) = options.prefix {
            b = b.prefix(p);
        }
        if let Some(n) = options.max_body_bytes {
            b = b.max_body_bytes(count("max_body_bytes", n)?);
        }
        if let Some(ms) = options.connect_timeout_ms {
            b = b.connect_timeout(millis("connect_timeout", ms)?);
        }
        if let Some(ms) = options.response_timeout_ms {
            b = b.response_timeout(millis("response_timeout", ms)?);
        }
        if let Some(n) = options.default_max_attempts {
            b = b.default_max_attempts(count_u32("default_max_attempts", n)?);
        }
        if let Some(ms) = options.default_ttr_ms {
            b = b.default_ttr(millis("default_ttr", ms)?);
        }
        match (options.default_backoff_base_ms, options.default_backoff_max_ms) {
            (None, None) => {}
            (base, max) => {
                let base = millis("default backoff base", base.unwrap_or(1000))?;
                let max = millis("default backoff max", max.unwrap_or(3_600_000))?;
                b = b.default_backoff(base, max);
            }
        }
        if let Some(n) = options.wait_for_replicas {
            let Some(t) = options.wait_for_replicas_timeout_ms else {
                return Err(invalid("wait_for_replicas: needs a timeout too"));
            };
            b = b.wait_for_replicas(
                count_u32("wait_for_replicas replicas", n)?,
                millis("wait_for_replicas timeout", t)?,
            );
        }
        let client = b.connect().await?;
        Ok(Arc::new(NativeClient { inner: Mutex::new(Some(client)) }))
    })
    .await
}

/// A connection to one Redis. `disconnect` drops it; queues made from it stop working.
#[derive(uniffi::Object)]
pub struct NativeClient {
    inner: Mutex<Option<redelay::Client>>,
}

impl NativeClient {
    fn client(&self) -> Res<redelay::Client> {
        self.inner.lock().unwrap().clone().ok_or_else(closed_error)
    }
}

#[uniffi::export]
impl NativeClient {
    /// A handle to the queue `name`.
    pub fn queue(&self, name: String) -> Result<Arc<NativeQueue>, NativeError> {
        let client = self.client()?;
        // Queue::new starts the queue's settle task on the client's runtime handle; enter the
        // runtime so that this works from any Kotlin thread.
        let _enter = runtime().enter();
        let q = client.queue(&name)?;
        Ok(Arc::new(NativeQueue { inner: Mutex::new(Some(q)), name }))
    }

    /// The key prefix.
    pub fn prefix(&self) -> Result<String, NativeError> {
        Ok(self.client()?.prefix().to_string())
    }

    /// Names of the queues published to under this prefix (best effort).
    pub async fn queues(&self) -> Result<Vec<String>, NativeError> {
        let c = self.client()?;
        on_rt(async move { Ok(c.queues().await?) }).await
    }

    /// Round trip to Redis.
    pub async fn ping(&self) -> Result<(), NativeError> {
        let c = self.client()?;
        on_rt(async move { Ok(c.ping().await?) }).await
    }

    /// Drops this handle's connection (queues keep theirs until they are disconnected too).
    pub fn disconnect(&self) {
        self.inner.lock().unwrap().take();
    }

    pub fn is_closed(&self) -> bool {
        self.inner.lock().unwrap().is_none()
    }
}

// ---------------------------------------------------------------------------------------------
// Messages

#[derive(Debug, Clone, uniffi::Record)]
pub struct Backoff {
    pub base_ms: i64,
    pub max_ms: i64,
}

/// A message to publish. `delay_ms` and `at_ms` (epoch ms) are exclusive; neither means now.
#[derive(Debug, Clone, uniffi::Record)]
pub struct OutMessage {
    pub body: Vec<u8>,
    pub id: Option<String>,
    pub delay_ms: Option<i64>,
    pub at_ms: Option<i64>,
    pub headers: HashMap<String, String>,
    pub max_attempts: Option<i32>,
    pub ttr_ms: Option<i64>,
    pub backoff: Option<Backoff>,
    pub replace: bool,
}

impl OutMessage {
    fn into_core(self) -> Res<Message> {
        let mut m = Message::new(self.body);
        match (self.delay_ms, self.at_ms) {
            (Some(_), Some(_)) => return Err(invalid("delay/at: give one of them, not both")),
            (Some(d), None) => m = m.delay(millis("delay", d)?),
            (None, Some(at)) => m = m.at(ms_to_time(at)),
            (None, None) => {}
        }
        if let Some(id) = self.id {
            m = m.id(id);
        }
        if !self.headers.is_empty() {
            m = m.headers(self.headers.into_iter().collect());
        }
        if let Some(n) = self.max_attempts {
            m = m.max_attempts(count_u32("max_attempts", n)?);
        }
        if let Some(t) = self.ttr_ms {
            m = m.ttr(millis("ttr", t)?);
        }
        if let Some(b) = self.backoff {
            m = m.backoff(millis("backoff base", b.base_ms)?, millis("backoff max", b.max_ms)?);
        }
        Ok(m.replace(self.replace))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum PublishStatus {
    Stored,
    Duplicate,
    Replaced,
}

#[derive(Debug, Clone, uniffi::Record)]
pub struct PublishResult {
    pub id: String,
    pub status: PublishStatus,
}

impl From<redelay::Published> for PublishResult {
    fn from(p: redelay::Published) -> Self {
        let status = match p.status {
            redelay::PublishStatus::Stored => PublishStatus::Stored,
            redelay::PublishStatus::Duplicate => PublishStatus::Duplicate,
            redelay::PublishStatus::Replaced => PublishStatus::Replaced,
        };
        PublishResult { id: p.id, status }
    }
}

// ---------------------------------------------------------------------------------------------
// Deliveries

/// One delivery: its fields, plus the lease to settle it with.
#[derive(uniffi::Record)]
pub struct InDelivery {
    /// The lease of a fetched delivery; `None` for a subscription's (settled by `key`).
    pub lease: Option<Arc<NativeLease>>,
    /// The subscription's key of this delivery (0 for a fetched one).
    pub key: u64,
    pub id: String,
    pub queue: String,
    pub body: Vec<u8>,
    pub headers: HashMap<String, String>,
    pub attempt: u32,
    pub max_attempts: u32,
    pub last_error: Option<String>,
    pub published_at_ms: i64,
    pub due_at_ms: i64,
    pub delivered_at_us: i64,
    pub lateness_us: i64,
    pub token: String,
}

impl InDelivery {
    fn from_core(d: Delivery, lease: Option<Arc<NativeLease>>, key: u64) -> InDelivery {
        InDelivery {
            lease,
            key,
            id: d.id().to_string(),
            queue: d.queue().to_string(),
            body: d.body().to_vec(),
            headers: d.headers().iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            attempt: d.attempt(),
            max_attempts: d.max_attempts(),
            last_error: d.last_error().map(str::to_string),
            published_at_ms: time_to_ms(d.published_at()),
            due_at_ms: time_to_ms(d.due_at()),
            delivered_at_us: time_to_us(d.delivered_at()),
            lateness_us: d.lateness().as_micros() as i64,
            token: d.token().to_string(),
        }
    }
}

/// The lease of one delivery: ack, nack, extend.
#[derive(uniffi::Object)]
pub struct NativeLease {
    inner: Delivery,
}

#[uniffi::export]
impl NativeLease {
    pub async fn ack(&self) -> Result<(), NativeError> {
        let d = self.inner.clone();
        on_rt(async move { Ok(d.ack().await?) }).await
    }

    /// Returns true when the message went to the dead letters.
    pub async fn nack(&self, retry_in_ms: Option<i64>, reason: String) -> Result<bool, NativeError> {
        let d = self.inner.clone();
        let retry_in = opt_millis("retry_in", retry_in_ms)?;
        on_rt(async move { Ok(d.nack(retry_in, &reason).await?) }).await
    }

    pub async fn extend(&self, ttr_ms: i64) -> Result<(), NativeError> {
        let d = self.inner.clone();
        let ttr = millis("ttr", ttr_ms)?;
        on_rt(async move { Ok(d.extend(ttr).await?) }).await
    }

    pub fn lease_deadline_ms(&self) -> i64 {
        time_to_ms(self.inner.lease_deadline())
    }

    pub fn is_settled(&self) -> bool {
        self.inner.is_settled()
    }
}

// ---------------------------------------------------------------------------------------------
// Inspection

#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum MessageState {
    Scheduled,
    Ready,
    Leased,
    Dead,
}

#[derive(Debug, Clone, uniffi::Record)]
pub struct StoredMessage {
    pub id: String,
    pub state: MessageState,
    pub body: Vec<u8>,
    pub headers: HashMap<String, String>,
    pub attempts: u32,
    pub max_attempts: u32,
    pub ttr_ms: i64,
    pub published_at_ms: i64,
    pub due_at_ms: i64,
    pub state_since_or_until_ms: Option<i64>,
    pub last_error: Option<String>,
}

impl From<MessageInfo> for StoredMessage {
    fn from(m: MessageInfo) -> Self {
        StoredMessage {
            id: m.id,
            state: match m.state {
                State::Scheduled => MessageState::Scheduled,
                State::Ready => MessageState::Ready,
                State::Leased => MessageState::Leased,
                State::Dead => MessageState::Dead,
            },
            body: m.body,
            headers: m.headers.into_iter().collect(),
            attempts: m.attempts,
            max_attempts: m.max_attempts,
            ttr_ms: m.ttr.as_millis() as i64,
            published_at_ms: time_to_ms(m.published_at),
            due_at_ms: time_to_ms(m.due_at),
            state_since_or_until_ms: m.lease_deadline.or(m.died_at).map(time_to_ms),
            last_error: m.last_error,
        }
    }
}

#[derive(Debug, Clone, uniffi::Record)]
pub struct QueueStats {
    pub now_ms: i64,
    pub total: u64,
    pub scheduled: u64,
    pub ready: u64,
    pub leased: u64,
    pub dead: u64,
    pub next_due_ms: Option<i64>,
    pub oldest_ready_due_ms: Option<i64>,
}

#[derive(Debug, Clone, uniffi::Record)]
pub struct VerifyResult {
    pub records: u64,
    pub problems: Vec<String>,
}

/// Which dead letters to respawn or purge.
#[derive(Debug, Clone, uniffi::Enum)]
pub enum DeadSelect {
    Ids { ids: Vec<String> },
    Oldest { count: i64 },
    All,
}

impl DeadSelect {
    fn into_core(self) -> Res<Select> {
        Ok(match self {
            DeadSelect::Ids { ids } => Select::Ids(ids),
            DeadSelect::Oldest { count: n } => Select::Oldest(count("count", n)?),
            DeadSelect::All => Select::All,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Subscriptions
//
// The core's batch consumer (`Queue::subscribe_batch`) runs the subscription: fetch loop,
// concurrency, leases, drain. The bridge here hands its batches to Kotlin and Kotlin reports
// outcomes back in batches: one FFI crossing per batch each way instead of several per message
// (JNA allocates native memory for every struct it passes, which made a per-message foreign
// async call cost ~150 µs of CPU).

/// Receives the deliveries of a subscription, implemented in Kotlin: it starts one coroutine per
/// delivery and reports each outcome through [`DeliverySink::complete`]. Must not block.
#[uniffi::export(with_foreign)]
pub trait DeliveryListener: Send + Sync {
    fn on_deliveries(&self, sink: Arc<DeliverySink>, batch: Vec<InDelivery>) -> Result<(), HandlerFailure>;
}

/// The outcome of one handler run, by delivery key.
#[derive(Debug, Clone, uniffi::Record)]
pub struct Outcome {
    pub key: u64,
    /// `None`: the handler returned normally (ack). `Some(reason)`: it failed (nack).
    pub failure: Option<String>,
    /// With a failure: retry after this many ms instead of the message's backoff.
    pub retry_in_ms: Option<i64>,
}

/// Where Kotlin reports outcomes and finds its deliveries, by the key the core gave each one.
#[derive(uniffi::Object)]
pub struct DeliverySink {
    /// Dispatched by the core, not yet passed to Kotlin.
    pending: Mutex<Vec<(u64, Delivery)>>,
    completer: Mutex<Option<redelay::Completer>>,
    notify: tokio::sync::Notify,
    closed: std::sync::atomic::AtomicBool,
}

impl DeliverySink {
    fn new() -> Arc<DeliverySink> {
        Arc::new(DeliverySink {
            pending: Mutex::new(Vec::new()),
            completer: Mutex::new(None),
            notify: tokio::sync::Notify::new(),
            closed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    fn completer(&self) -> Option<redelay::Completer> {
        self.completer.lock().unwrap().clone()
    }

    fn delivery(&self, key: u64) -> Res<Delivery> {
        self.completer().and_then(|c| c.delivery(key)).ok_or_else(|| {
            NativeError::LeaseLost(
                "lease lost: the handler of this delivery has returned and the subscription settled it".into(),
            )
        })
    }

    /// After the subscription closed: stops the dispatch loop. (The core's close already
    /// forgot what Kotlin still holds: late outcomes are ignored, the leases run out.)
    fn close(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::Release);
        self.notify.notify_one();
    }

    fn report(&self, outcomes: Vec<(u64, Result<(), Failure>)>) {
        if let Some(c) = self.completer() {
            c.complete(outcomes);
        }
    }

    /// Sends pending deliveries to Kotlin in batches until closed.
    async fn dispatch(self: Arc<Self>, listener: Arc<dyn DeliveryListener>) {
        loop {
            let batch: Vec<(u64, Delivery)> = std::mem::take(&mut *self.pending.lock().unwrap());
            if batch.is_empty() {
                if self.closed.load(std::sync::atomic::Ordering::Acquire) {
                    break;
                }
                self.notify.notified().await;
                continue;
            }
            let keys: Vec<u64> = batch.iter().map(|(k, _)| *k).collect();
            let items = batch.into_iter().map(|(k, d)| InDelivery::from_core(d, None, k)).collect();
            let sink = self.clone();
            let listener = listener.clone();
            // A JVM call: run it where blocking briefly does not stall the runtime's workers.
            let r = tokio::task::spawn_blocking(move || listener.on_deliveries(sink, items)).await;
            let failed = match r {
                Ok(Ok(())) => None,
                Ok(Err(HandlerFailure::Failed { reason, .. })) => Some(reason),
                Err(e) => Some(format!("handler dispatch failed: {e}")),
            };
            if let Some(reason) = failed {
                self.report(keys.into_iter().map(|k| (k, Err(Failure::new(reason.clone())))).collect());
            }
        }
    }
}

#[uniffi::export]
impl DeliverySink {
    /// Outcomes of finished handlers; unknown keys (abandoned after the drain timeout) are skipped.
    pub fn complete(&self, outcomes: Vec<Outcome>) {
        self.report(
            outcomes
                .into_iter()
                .map(|o| {
                    let r = match o.failure {
                        None => Ok(()),
                        Some(reason) => Err(match o.retry_in_ms {
                            Some(ms) => Failure::retry_in(reason, Duration::from_millis(ms.max(0) as u64)),
                            None => Failure::new(reason),
                        }),
                    };
                    (o.key, r)
                })
                .collect(),
        );
    }

    pub async fn ack(&self, key: u64) -> Result<(), NativeError> {
        let d = self.delivery(key)?;
        on_rt(async move { Ok(d.ack().await?) }).await
    }

    pub async fn nack(&self, key: u64, retry_in_ms: Option<i64>, reason: String) -> Result<bool, NativeError> {
        let d = self.delivery(key)?;
        let retry_in = opt_millis("retry_in", retry_in_ms)?;
        on_rt(async move { Ok(d.nack(retry_in, &reason).await?) }).await
    }

    pub async fn extend(&self, key: u64, ttr_ms: i64) -> Result<(), NativeError> {
        let d = self.delivery(key)?;
        let ttr = millis("ttr", ttr_ms)?;
        on_rt(async move { Ok(d.extend(ttr).await?) }).await
    }

    pub fn lease_deadline_ms(&self, key: u64) -> Result<i64, NativeError> {
        Ok(time_to_ms(self.delivery(key)?.lease_deadline()))
    }

    /// True once settled, or once the handler returned (the subscription settles it then).
    pub fn is_settled(&self, key: u64) -> bool {
        self.delivery(key).map_or(true, |d| d.is_settled())
    }
}

/// The core's batch handler: queues each batch for the dispatch loop.
struct BatchBridge(Arc<DeliverySink>);

impl redelay::BatchHandler for BatchBridge {
    fn dispatch(&self, batch: Vec<(u64, Delivery)>, completer: &redelay::Completer) {
        let sink = &self.0;
        sink.completer.lock().unwrap().get_or_insert_with(|| completer.clone());
        if sink.closed.load(std::sync::atomic::Ordering::Acquire) {
            completer.give_back(batch.into_iter().map(|(k, _)| k).collect());
            return;
        }
        sink.pending.lock().unwrap().extend(batch);
        // Wakes the dispatch loop (a permit is kept if it is busy sending the previous batch).
        sink.notify.notify_one();
    }
}

#[derive(Debug, Clone, uniffi::Record)]
pub struct SubscribeConfig {
    pub concurrency: i32,
    pub prefetch: Option<i32>,
    pub ttr_ms: Option<i64>,
    pub drain_timeout_ms: Option<i64>,
    pub max_idle_ms: Option<i64>,
}

#[derive(Debug, Clone, Copy, uniffi::Record)]
pub struct SubscriptionCounters {
    pub delivered: u64,
    pub acked: u64,
    pub nacked: u64,
    pub lease_lost: u64,
    pub errors: u64,
}

/// A running subscription.
#[derive(uniffi::Object)]
pub struct NativeSubscription {
    inner: Arc<redelay::Subscription>,
    sink: Arc<DeliverySink>,
}

impl Drop for NativeSubscription {
    fn drop(&mut self) {
        self.sink.close();
    }
}

#[uniffi::export]
impl NativeSubscription {
    /// Stops fetching, waits for running handlers up to the drain timeout. Idempotent.
    pub async fn stop(&self) {
        let s = self.inner.clone();
        let sink = self.sink.clone();
        // Not aborted when the caller stops waiting: a close, once started, completes.
        let _ = runtime()
            .spawn(async move {
                s.close().await;
                sink.close();
            })
            .await;
    }

    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }

    pub fn counters(&self) -> SubscriptionCounters {
        let c = self.inner.counters();
        SubscriptionCounters {
            delivered: c.delivered,
            acked: c.acked,
            nacked: c.nacked,
            lease_lost: c.lease_lost,
            errors: c.errors,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Queue

/// A handle to one queue.
#[derive(uniffi::Object)]
pub struct NativeQueue {
    inner: Mutex<Option<redelay::Queue>>,
    name: String,
}

impl NativeQueue {
    fn q(&self) -> Res<redelay::Queue> {
        self.inner.lock().unwrap().clone().ok_or_else(closed_error)
    }
}

#[uniffi::export]
impl NativeQueue {
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// Drops this handle (its settle task ends once running deliveries are settled).
    pub fn disconnect(&self) {
        self.inner.lock().unwrap().take();
    }

    pub async fn publish(&self, message: OutMessage) -> Result<PublishResult, NativeError> {
        let q = self.q()?;
        let m = message.into_core()?;
        on_rt(async move { Ok(q.publish(m).await?.into()) }).await
    }

    pub async fn publish_batch(&self, messages: Vec<OutMessage>) -> Result<Vec<PublishResult>, NativeError> {
        let q = self.q()?;
        let mut msgs = Vec::with_capacity(messages.len());
        for (i, m) in messages.into_iter().enumerate() {
            msgs.push(m.into_core().map_err(|e| invalid(format!("message {i}: {e}")))?);
        }
        on_rt(async move { Ok(q.publish_batch(msgs).await?.into_iter().map(Into::into).collect()) }).await
    }

    /// Pulls up to `max` due messages, waiting up to `wait_ms` for the first.
    pub async fn fetch(&self, max: i32, wait_ms: i64, ttr_ms: Option<i64>) -> Result<Vec<InDelivery>, NativeError> {
        let q = self.q()?;
        let max = count("max", max as i64)?;
        let wait = millis("wait", wait_ms)?;
        let ttr = opt_millis("ttr", ttr_ms)?;
        on_rt(async move {
            let v = q.fetch_leasing(max, wait, ttr).await?;
            Ok(v.into_iter()
                .map(|d| InDelivery::from_core(d.clone(), Some(Arc::new(NativeLease { inner: d })), 0))
                .collect())
        })
        .await
    }

    pub async fn ack(&self, id: String, token: String) -> Result<(), NativeError> {
        let q = self.q()?;
        on_rt(async move { Ok(q.ack(&id, &token).await?) }).await
    }

    pub async fn nack(
        &self,
        id: String,
        token: String,
        retry_in_ms: Option<i64>,
        reason: String,
    ) -> Result<bool, NativeError> {
        let q = self.q()?;
        let retry_in = opt_millis("retry_in", retry_in_ms)?;
        on_rt(async move { Ok(q.nack(&id, &token, retry_in, &reason).await?) }).await
    }

    pub async fn extend(&self, id: String, token: String, ttr_ms: i64) -> Result<(), NativeError> {
        let q = self.q()?;
        let ttr = millis("ttr", ttr_ms)?;
        on_rt(async move { Ok(q.extend(&id, &token, ttr).await?) }).await
    }

    pub async fn cancel(&self, id: String) -> Result<bool, NativeError> {
        let q = self.q()?;
        on_rt(async move { Ok(q.cancel(&id).await?) }).await
    }

    /// New due time: `delay_ms` from now or at `at_ms` (exactly one). Returns the due time, ms.
    pub async fn reschedule(&self, id: String, delay_ms: Option<i64>, at_ms: Option<i64>) -> Result<i64, NativeError> {
        let q = self.q()?;
        let due = match (delay_ms, at_ms) {
            (Some(d), None) => redelay::Due::In(millis("delay", d)?),
            (None, Some(a)) => redelay::Due::At(ms_to_time(a)),
            _ => return Err(invalid("delay/at: give exactly one of them")),
        };
        on_rt(async move { Ok(time_to_ms(q.reschedule(&id, due).await?)) }).await
    }

    pub async fn peek(&self, id: String) -> Result<Option<StoredMessage>, NativeError> {
        let q = self.q()?;
        on_rt(async move { Ok(q.peek(&id).await?.map(Into::into)) }).await
    }

    pub async fn stats(&self) -> Result<QueueStats, NativeError> {
        let q = self.q()?;
        on_rt(async move {
            let s = q.stats().await?;
            Ok(QueueStats {
                now_ms: time_to_ms(s.now),
                total: s.total,
                scheduled: s.scheduled,
                ready: s.ready,
                leased: s.leased,
                dead: s.dead,
                next_due_ms: s.next_due.map(time_to_ms),
                oldest_ready_due_ms: s.oldest_ready_due.map(time_to_ms),
            })
        })
        .await
    }

    pub async fn dead_letters(&self, offset: i64, limit: i32) -> Result<Vec<StoredMessage>, NativeError> {
        let q = self.q()?;
        let offset = count("offset", offset)?;
        let limit = count("limit", limit as i64)?;
        on_rt(async move { Ok(q.dead_letters(offset, limit).await?.into_iter().map(Into::into).collect()) }).await
    }

    pub async fn respawn(&self, select: DeadSelect) -> Result<u64, NativeError> {
        let q = self.q()?;
        let sel = select.into_core()?;
        on_rt(async move { Ok(q.respawn(sel).await?) }).await
    }

    pub async fn purge_dead(&self, select: DeadSelect) -> Result<u64, NativeError> {
        let q = self.q()?;
        let sel = select.into_core()?;
        on_rt(async move { Ok(q.purge_dead(sel).await?) }).await
    }

    /// Deletes the whole queue: every message in every state.
    pub async fn destroy_queue(&self) -> Result<(), NativeError> {
        let q = self.q()?;
        on_rt(async move { Ok(q.destroy().await?) }).await
    }

    pub async fn verify(&self) -> Result<VerifyResult, NativeError> {
        let q = self.q()?;
        on_rt(async move {
            let r = q.verify().await?;
            Ok(VerifyResult { records: r.records, problems: r.problems })
        })
        .await
    }

    /// Starts consuming: deliveries go to `listener` in batches.
    pub async fn subscribe(
        &self,
        listener: Arc<dyn DeliveryListener>,
        config: SubscribeConfig,
    ) -> Result<Arc<NativeSubscription>, NativeError> {
        let q = self.q()?;
        let concurrency = count("concurrency", config.concurrency as i64)?;
        let mut opts = redelay::SubscribeOptions::concurrency(concurrency);
        if let Some(p) = config.prefetch {
            opts.prefetch = Some(count("prefetch", p as i64)?);
        }
        opts.ttr = opt_millis("ttr", config.ttr_ms)?;
        if let Some(d) = config.drain_timeout_ms {
            opts.drain_timeout = millis("drain_timeout", d)?;
        }
        if let Some(d) = config.max_idle_ms {
            opts.max_idle = millis("max_idle", d)?;
        }
        on_rt(async move {
            let sink = DeliverySink::new();
            let sub = q.subscribe_batch(Arc::new(BatchBridge(sink.clone())), opts).await?;
            runtime().spawn(sink.clone().dispatch(listener));
            Ok(Arc::new(NativeSubscription { inner: Arc::new(sub), sink }))
        })
        .await
    }
}
