//! Kotlin/JVM binding of redelay: the UniFFI surface over the core, conversions only. The
//! idiomatic Kotlin API (`dev.redelay.Client`, ...) lives in `jvm/src/main/kotlin` and wraps the
//! generated `dev.redelay.ffi` package.
//!
//! Every async call runs on this library's multi-threaded tokio runtime; the UniFFI future that
//! Kotlin polls only awaits the task. Durations cross as signed milliseconds, so that a negative
//! Kotlin `Duration` is refused with a message naming the field; times as `Instant`s. Options
//! start from the core's defaults; each field Kotlin gives replaces one field of the core's.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, SystemTime};

use redelay::{Counters, Delivery, Failure, MessageInfo, PublishStatus, Published, Select, State, Stats, VerifyReport};

uniffi::setup_scaffolding!();

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 8);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("redelay-tokio")
        .enable_all()
        .build()
        .expect("redelay: cannot start the tokio runtime")
});

/// Aborts the task when Kotlin stops waiting (coroutine cancelled; closes run NonCancellable).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs `fut` on the binding's runtime and waits for it.
async fn on_rt<T: Send + 'static>(fut: impl Future<Output = Res<T>> + Send + 'static) -> Res<T> {
    let mut guard = AbortOnDrop(RUNTIME.spawn(fut));
    match (&mut guard.0).await {
        Ok(r) => r,
        Err(e) => Err(redelay::Error::new(redelay::ErrorKind::Connection, format!("redelay: call ended: {e}")).into()),
    }
}

/// `call!(handle, |h| expr)`: runs `expr` with a clone of the handle on the runtime.
macro_rules! call {
    ($s:expr, |$h:ident| $body:expr) => {{
        let $h = $s.0.clone();
        on_rt(async move { Ok($body) }).await
    }};
}

// Errors: the one conversion. Kotlin maps `kind` to its exception class (Errors.kt).

#[derive(Debug, uniffi::Error)]
pub enum NativeError {
    /// `kind` is `ErrorKind::name()`, `code` is `ErrorKind::code()`.
    Redelay { kind: String, code: String, text: String },
}

impl std::fmt::Display for NativeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let NativeError::Redelay { text, .. } = self;
        f.write_str(text)
    }
}

impl From<redelay::Error> for NativeError {
    fn from(e: redelay::Error) -> Self {
        let k = e.kind();
        NativeError::Redelay { kind: k.name().into(), code: k.code().into(), text: e.message().into() }
    }
}

type Res<T> = Result<T, NativeError>;

// Conversions

/// Signed milliseconds (a Kotlin `Duration`) to a Rust `Duration`; negative is refused.
fn dur(field: &str, ms: i64) -> Res<Duration> {
    u64::try_from(ms)
        .map(Duration::from_millis)
        .map_err(|_| redelay::Error::invalid(format!("{field}: must not be negative, got {ms} ms")).into())
}

fn opt_dur(field: &str, ms: Option<i64>) -> Res<Option<Duration>> {
    ms.map(|v| dur(field, v)).transpose()
}

/// A signed Kotlin count to an unsigned one; negative is refused (the core checks the range).
fn count<T: TryFrom<i64>>(field: &str, n: i64) -> Res<T> {
    T::try_from(n).map_err(|_| redelay::Error::invalid(format!("{field}: must not be negative, got {n}")).into())
}

fn opt_count<T: TryFrom<i64>>(field: &str, n: Option<i64>) -> Res<Option<T>> {
    n.map(|v| count(field, v)).transpose()
}

// The core's plain records cross as they are (times become `java.time.Instant`).

#[uniffi::remote(Record)]
pub struct Stats {
    pub now: SystemTime,
    pub total: u64,
    pub scheduled: u64,
    pub ready: u64,
    pub leased: u64,
    pub dead: u64,
    pub next_due: Option<SystemTime>,
    pub oldest_ready_due: Option<SystemTime>,
    pub paused: bool,
}

#[uniffi::remote(Record)]
pub struct VerifyReport {
    pub records: u64,
    pub problems: Vec<String>,
}

#[uniffi::remote(Record)]
pub struct Counters {
    pub delivered: u64,
    pub handled: u64,
    pub acked: u64,
    pub nacked: u64,
    pub lease_lost: u64,
    pub errors: u64,
}

#[uniffi::remote(Record)]
pub struct Published {
    pub id: String,
    pub status: PublishStatus,
}

#[uniffi::remote(Enum)]
pub enum PublishStatus {
    Stored,
    Duplicate,
    Replaced,
}

#[uniffi::remote(Enum)]
pub enum State {
    Scheduled,
    Ready,
    Leased,
    Dead,
}

// Logging: the core's `log` records (tracing emits them when no subscriber is set) go to a
// Kotlin sink, which writes them to SLF4J. `level`: 1 error, 2 warn, 3 info, 4 debug, 5 trace.
#[uniffi::export(with_foreign)]
pub trait LogSink: Send + Sync {
    fn log(&self, level: u8, target: String, message: String);
}

struct LogBridge(Arc<dyn LogSink>);

impl log::Log for LogBridge {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.target().starts_with("redelay") && m.level() <= log::max_level()
    }

    fn log(&self, r: &log::Record) {
        if self.enabled(r.metadata()) {
            self.0.log(r.level() as u8, r.target().to_string(), r.args().to_string());
        }
    }
    fn flush(&self) {}
}

/// Routes the core's records up to `max_level` (0 off .. 5 trace) to `sink`; the first call wins.
#[uniffi::export]
pub fn set_log_sink(sink: Arc<dyn LogSink>, max_level: u8) {
    if log::set_boxed_logger(Box::new(LogBridge(sink))).is_ok() {
        log::set_max_level(log::LevelFilter::iter().nth(max_level.into()).unwrap_or(log::LevelFilter::Trace));
    }
}

// Client

/// `None` keeps the core's default (`redelay::ClientOptions::default()`).
#[derive(Debug, Clone, Default, uniffi::Record)]
pub struct ClientConfig {
    pub prefix: Option<String>,
    pub max_body_bytes: Option<i64>,
    pub connect_timeout_ms: Option<i64>,
    pub response_timeout_ms: Option<i64>,
    pub default_max_attempts: Option<i64>,
    pub default_ttr_ms: Option<i64>,
    pub default_backoff_base_ms: Option<i64>,
    pub default_backoff_max_ms: Option<i64>,
    /// Replicas every publish waits for (Redis WAIT), with `wait_for_replicas_timeout_ms`.
    pub wait_for_replicas: Option<i64>,
    pub wait_for_replicas_timeout_ms: Option<i64>,
}

impl ClientConfig {
    fn into_core(self) -> Res<redelay::ClientOptions> {
        let d = redelay::ClientOptions::default();
        let replicas =
            match (opt_count("wait_for_replicas replicas", self.wait_for_replicas)?, self.wait_for_replicas_timeout_ms)
            {
                (Some(n), Some(t)) => Some((n, dur("wait_for_replicas timeout", t)?)),
                _ => None,
            };
        Ok(redelay::ClientOptions {
            prefix: self.prefix.unwrap_or(d.prefix),
            max_body_bytes: opt_count("max_body_bytes", self.max_body_bytes)?.unwrap_or(d.max_body_bytes),
            wait_for_replicas: replicas,
            connect_timeout: opt_dur("connect_timeout", self.connect_timeout_ms)?.unwrap_or(d.connect_timeout),
            response_timeout: opt_dur("response_timeout", self.response_timeout_ms)?.unwrap_or(d.response_timeout),
            default_max_attempts: opt_count("default_max_attempts", self.default_max_attempts)?
                .unwrap_or(d.default_max_attempts),
            default_ttr: opt_dur("default_ttr", self.default_ttr_ms)?.unwrap_or(d.default_ttr),
            default_backoff_base: opt_dur("default backoff base", self.default_backoff_base_ms)?
                .unwrap_or(d.default_backoff_base),
            default_backoff_max: opt_dur("default backoff max", self.default_backoff_max_ms)?
                .unwrap_or(d.default_backoff_max),
        })
    }
}

/// Connects to Redis (`redis://`, `rediss://`, `unix://`, cluster and sentinel URLs).
#[uniffi::export]
pub async fn connect(url: String, config: ClientConfig) -> Res<Arc<NativeClient>> {
    let opts = config.into_core()?;
    on_rt(async move { Ok(Arc::new(NativeClient(redelay::Client::connect_with(&url, opts).await?))) }).await
}

#[derive(uniffi::Object)]
pub struct NativeClient(redelay::Client);

#[uniffi::export]
impl NativeClient {
    pub fn queue(&self, name: String) -> Res<Arc<NativeQueue>> {
        // Queue::new starts a settle task on the client's runtime handle: enter the runtime so
        // that this works from any Kotlin thread.
        let _enter = RUNTIME.enter();
        Ok(Arc::new(NativeQueue(self.0.queue(&name)?)))
    }

    pub fn prefix(&self) -> String {
        self.0.prefix().to_string()
    }

    pub async fn queues(&self) -> Res<Vec<String>> {
        call!(self, |c| c.queues().await?)
    }

    pub async fn ping(&self) -> Res<()> {
        call!(self, |c| c.ping().await?)
    }

    /// The core's close: every subscription drains, then the connections. Idempotent.
    pub async fn shutdown(&self) -> Res<()> {
        call!(self, |c| c.close().await)
    }

    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}

// Publishing

/// `redelay::PublishOptions` with a body; `None` keeps the client's default.
#[derive(Debug, Clone, uniffi::Record)]
pub struct PublishConfig {
    pub body: Vec<u8>,
    pub id: Option<String>,
    pub delay_ms: Option<i64>,
    pub at: Option<SystemTime>,
    pub headers: HashMap<String, String>,
    pub max_attempts: Option<i64>,
    pub ttr_ms: Option<i64>,
    pub backoff_base_ms: Option<i64>,
    pub backoff_max_ms: Option<i64>,
    pub replace: bool,
}

impl PublishConfig {
    fn into_core(self) -> Res<(Vec<u8>, redelay::PublishOptions)> {
        let o = redelay::PublishOptions {
            id: self.id,
            delay: opt_dur("delay", self.delay_ms)?,
            at: self.at,
            headers: self.headers.into_iter().collect(),
            max_attempts: opt_count("max_attempts", self.max_attempts)?,
            ttr: opt_dur("ttr", self.ttr_ms)?,
            backoff_base: opt_dur("backoff base", self.backoff_base_ms)?,
            backoff_max: opt_dur("backoff max", self.backoff_max_ms)?,
            replace: self.replace,
            ..Default::default() // expiry: not in the Kotlin API yet
        };
        Ok((self.body, o))
    }
}

// Deliveries

/// One delivery: its fields, plus the lease of a fetched one (a subscription's is by `key`).
#[derive(uniffi::Record)]
pub struct InDelivery {
    pub lease: Option<Arc<NativeLease>>,
    pub key: u64,
    pub id: String,
    pub queue: String,
    pub body: Vec<u8>,
    pub headers: HashMap<String, String>,
    pub attempt: u32,
    pub max_attempts: u32,
    pub last_error: Option<String>,
    pub published_at: SystemTime,
    pub due_at: SystemTime,
    pub delivered_at: SystemTime,
    pub lateness_us: i64,
    pub token: String,
}

fn in_delivery(d: &Delivery, lease: Option<Arc<NativeLease>>, key: u64) -> InDelivery {
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
        published_at: d.published_at(),
        due_at: d.due_at(),
        delivered_at: d.delivered_at(),
        lateness_us: d.lateness().as_micros() as i64,
        token: d.token().to_string(),
    }
}

/// The lease of one delivery: ack, nack, extend.
#[derive(uniffi::Object)]
pub struct NativeLease(Delivery);

#[uniffi::export]
impl NativeLease {
    pub async fn ack(&self) -> Res<()> {
        call!(self, |d| d.ack().await?)
    }

    /// True when the message went to the dead letters.
    pub async fn nack(&self, retry_in_ms: Option<i64>, reason: String) -> Res<bool> {
        let retry_in = opt_dur("retry_in", retry_in_ms)?;
        call!(self, |d| d.nack(retry_in, &reason).await?)
    }

    pub async fn extend(&self, ttr_ms: i64) -> Res<()> {
        let ttr = dur("ttr", ttr_ms)?;
        call!(self, |d| d.extend(ttr).await?)
    }

    pub fn lease_deadline(&self) -> SystemTime {
        self.0.lease_deadline()
    }

    pub fn is_settled(&self) -> bool {
        self.0.is_settled()
    }
}

// Inspection

#[derive(Debug, Clone, uniffi::Record)]
pub struct StoredMessage {
    pub id: String,
    pub state: State,
    pub body: Vec<u8>,
    pub headers: HashMap<String, String>,
    pub attempts: u32,
    pub max_attempts: u32,
    pub ttr_ms: i64,
    pub published_at: SystemTime,
    pub due_at: SystemTime,
    pub lease_deadline: Option<SystemTime>,
    pub died_at: Option<SystemTime>,
    pub last_error: Option<String>,
}

fn stored(m: MessageInfo) -> StoredMessage {
    StoredMessage {
        id: m.id,
        state: m.state,
        body: m.body,
        headers: m.headers.into_iter().collect(),
        attempts: m.attempts,
        max_attempts: m.max_attempts,
        ttr_ms: m.ttr.as_millis() as i64,
        published_at: m.published_at,
        due_at: m.due_at,
        lease_deadline: m.lease_deadline,
        died_at: m.died_at,
        last_error: m.last_error,
    }
}

/// Which dead letters to respawn or purge.
#[derive(Debug, Clone, uniffi::Enum)]
pub enum DeadSelect {
    Ids { ids: Vec<String> },
    Oldest { count: i64 },
    All,
}

fn select(s: DeadSelect) -> Res<Select> {
    Ok(match s {
        DeadSelect::Ids { ids } => Select::Ids(ids),
        DeadSelect::Oldest { count: n } => Select::Oldest(count("count", n)?),
        DeadSelect::All => Select::All,
    })
}

// Subscriptions: the core's bridge (`Queue::subscribe_foreign`). Kotlin's `wake` signals its
// take loop; the loop takes a batch (one FFI crossing), runs the handlers and reports their
// outcomes in batches with `complete`.

#[uniffi::export(with_foreign)]
pub trait Waker: Send + Sync {
    /// Must not block nor call into the subscription; false when the Kotlin side is gone.
    fn wake(&self) -> bool;
}

struct WakeBridge(Arc<dyn Waker>);

impl redelay::Wake for WakeBridge {
    fn wake(&self) -> bool {
        self.0.wake()
    }
}

/// The outcome of one handler run, by delivery key: `failure` None acks, Some nacks (after
/// `retry_in_ms`, or the message's backoff).
#[derive(Debug, Clone, uniffi::Record)]
pub struct Outcome {
    pub key: u64,
    pub failure: Option<String>,
    pub retry_in_ms: Option<i64>,
}

/// `redelay::SubscribeOptions`; `None` keeps the core's default.
#[derive(Debug, Clone, uniffi::Record)]
pub struct SubscribeConfig {
    pub concurrency: Option<i64>,
    pub prefetch: Option<i64>,
    pub ttr_ms: Option<i64>,
    pub drain_timeout_ms: Option<i64>,
    pub max_idle_ms: Option<i64>,
}

#[derive(uniffi::Object)]
pub struct NativeSubscription(Arc<redelay::Subscription>);

#[uniffi::export]
impl NativeSubscription {
    /// The deliveries waiting for a handler (as many as there are free slots).
    pub fn take(&self) -> Vec<InDelivery> {
        self.0.take().iter().map(|(k, d)| in_delivery(d, None, *k)).collect()
    }

    pub fn complete(&self, outcomes: Vec<Outcome>) {
        let failure = |o: Outcome| match (o.failure, o.retry_in_ms) {
            (None, _) => Ok(()),
            (Some(r), None) => Err(Failure::new(r)),
            (Some(r), Some(ms)) => Err(Failure::retry_in(r, Duration::from_millis(ms.max(0) as u64))),
        };
        self.0.complete(outcomes.into_iter().map(|o| (o.key, failure(o))).collect());
    }

    /// The lease of the running delivery `key`, for a handler that settles it itself.
    pub fn lease(&self, key: u64) -> Res<Arc<NativeLease>> {
        let lost = "lease lost: the handler of this delivery has returned and the subscription settled it";
        let d = self.0.delivery(key).ok_or_else(|| redelay::Error::new(redelay::ErrorKind::LeaseLost, lost))?;
        Ok(Arc::new(NativeLease(d)))
    }

    /// Stops fetching, waits for running handlers up to the drain timeout. Idempotent.
    pub async fn stop(&self) -> Res<()> {
        call!(self, |s| s.close().await)
    }

    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    pub fn counters(&self) -> Counters {
        self.0.counters()
    }
}

// Queue

#[derive(uniffi::Object)]
pub struct NativeQueue(redelay::Queue);

#[uniffi::export]
impl NativeQueue {
    pub fn name(&self) -> String {
        self.0.name().to_string()
    }

    pub async fn publish(&self, message: PublishConfig) -> Res<Published> {
        let (q, (body, o)) = (self.0.clone(), message.into_core()?);
        let m = o.message(body)?;
        on_rt(async move { Ok(q.publish(m).await?) }).await
    }

    pub async fn publish_batch(&self, messages: Vec<PublishConfig>) -> Res<Vec<Published>> {
        // A conversion error names the message's position as the core's errors do.
        let items = messages.into_iter().enumerate().map(|(i, m)| {
            m.into_core()
                .map_err(|NativeError::Redelay { text, .. }| redelay::Error::invalid(format!("message {i}: {text}")))
        });
        let items = items.collect::<Result<Vec<_>, _>>()?;
        let (q, msgs) = (self.0.clone(), redelay::batch_messages(items)?);
        on_rt(async move { Ok(q.publish_batch(msgs).await?) }).await
    }

    /// Pulls up to `max` due messages, waiting up to `wait_ms` for the first.
    pub async fn fetch(&self, max: i64, wait_ms: i64, ttr_ms: Option<i64>) -> Res<Vec<InDelivery>> {
        let q = self.0.clone();
        let (max, wait, ttr) = (count("max", max)?, dur("wait", wait_ms)?, opt_dur("ttr", ttr_ms)?);
        on_rt(async move {
            let v = q.fetch_leasing(max, wait, ttr).await?;
            Ok(v.into_iter().map(|d| in_delivery(&d, Some(Arc::new(NativeLease(d.clone()))), 0)).collect())
        })
        .await
    }

    pub async fn ack(&self, id: String, token: String) -> Res<()> {
        call!(self, |q| q.ack(&id, &token).await?)
    }

    pub async fn nack(&self, id: String, token: String, retry_in_ms: Option<i64>, reason: String) -> Res<bool> {
        let retry_in = opt_dur("retry_in", retry_in_ms)?;
        call!(self, |q| q.nack(&id, &token, retry_in, &reason).await?)
    }

    pub async fn extend(&self, id: String, token: String, ttr_ms: i64) -> Res<()> {
        let ttr = dur("ttr", ttr_ms)?;
        call!(self, |q| q.extend(&id, &token, ttr).await?)
    }

    pub async fn cancel(&self, id: String) -> Res<bool> {
        call!(self, |q| q.cancel(&id).await?)
    }

    /// New due time from `delay_ms` or `at` (`Due::from_parts`); returns it.
    pub async fn reschedule(&self, id: String, delay_ms: Option<i64>, at: Option<SystemTime>) -> Res<SystemTime> {
        let q = self.0.clone();
        let due = redelay::Due::from_parts(opt_dur("delay", delay_ms)?, at)?;
        on_rt(async move { Ok(q.reschedule(&id, due).await?) }).await
    }

    pub async fn peek(&self, id: String) -> Res<Option<StoredMessage>> {
        call!(self, |q| q.peek(&id).await?.map(stored))
    }

    pub async fn stats(&self) -> Res<Stats> {
        call!(self, |q| q.stats().await?)
    }

    /// `redelay::DeadLetterQuery`; `None` keeps its defaults.
    pub async fn dead_letters(&self, offset: Option<i64>, limit: Option<i64>) -> Res<Vec<StoredMessage>> {
        let (q, d) = (self.0.clone(), redelay::DeadLetterQuery::default());
        let query = redelay::DeadLetterQuery {
            offset: opt_count("offset", offset)?.unwrap_or(d.offset),
            limit: opt_count("limit", limit)?.unwrap_or(d.limit),
        };
        query.validate()?;
        on_rt(async move { Ok(q.dead_letters(query.offset, query.limit).await?.into_iter().map(stored).collect()) })
            .await
    }

    pub async fn respawn(&self, select: DeadSelect) -> Res<u64> {
        let sel = self::select(select)?;
        call!(self, |q| q.respawn(sel).await?)
    }

    pub async fn purge_dead(&self, select: DeadSelect) -> Res<u64> {
        let sel = self::select(select)?;
        call!(self, |q| q.purge_dead(sel).await?)
    }

    pub async fn destroy_queue(&self) -> Res<()> {
        call!(self, |q| q.destroy().await?)
    }

    pub async fn verify(&self) -> Res<VerifyReport> {
        call!(self, |q| q.verify().await?)
    }

    /// Starts consuming through the core's bridge: `waker` is called when deliveries wait.
    pub async fn subscribe(&self, waker: Arc<dyn Waker>, config: SubscribeConfig) -> Res<Arc<NativeSubscription>> {
        let d = redelay::SubscribeOptions::default();
        let opts = redelay::SubscribeOptions {
            concurrency: opt_count("concurrency", config.concurrency)?.unwrap_or(d.concurrency),
            prefetch: opt_count("prefetch", config.prefetch)?,
            ttr: opt_dur("ttr", config.ttr_ms)?,
            drain_timeout: opt_dur("drain_timeout", config.drain_timeout_ms)?.unwrap_or(d.drain_timeout),
            max_idle: opt_dur("max_idle", config.max_idle_ms)?.unwrap_or(d.max_idle),
        };
        let q = self.0.clone();
        on_rt(async move {
            let sub = q.subscribe_foreign(Arc::new(WakeBridge(waker)), opts).await?;
            Ok(Arc::new(NativeSubscription(Arc::new(sub))))
        })
        .await
    }
}
