//! Kotlin/JVM binding of redelay: the UniFFI surface over the core, conversions only. The
//! generated package `dev.redelay` is itself the Kotlin API: records with defaults (data
//! classes), `Queue` with suspend methods and named arguments, `RedelayException`. The
//! hand-written Kotlin (`jvm/src/main/kotlin`) adds what UniFFI cannot express: `Client` (whose
//! close is the core's close, and SLF4J), subscriptions as coroutines on the core's bridge,
//! `Delivery`, `Flow`.
//!
//! Every async call runs on this library's multi-threaded tokio runtime; the UniFFI future that
//! Kotlin polls only awaits the task. Durations cross as signed milliseconds (`Ms`, a
//! `kotlin.time.Duration` in Kotlin, see uniffi.toml), so that a negative one is refused with a
//! message naming the field; times as `java.time.Instant`s; counts as signed `Int`/`Long`.
//! Options start from the core's defaults; each field Kotlin gives replaces one of the core's.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, SystemTime};

use redelay::{BulkAction, ErrorKind, Failure, PublishStatus, Published, State, Step};

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
async fn on_rt<T: Send + 'static, E: From<redelay::Error> + Send + 'static>(
    fut: impl Future<Output = Res<T, E>> + Send + 'static,
) -> Res<T, E> {
    let mut guard = AbortOnDrop(RUNTIME.spawn(fut));
    match (&mut guard.0).await {
        Ok(r) => r,
        Err(e) => Err(redelay::Error::new(ErrorKind::Connection, format!("redelay: call ended: {e}")).into()),
    }
}

/// `call!(handle, |h| expr)`: runs `expr` with a clone of the handle on the runtime.
macro_rules! call {
    ($s:expr, |$h:ident| $body:expr) => {{
        let $h = $s.0.clone();
        on_rt(async move { Ok($body) }).await
    }};
}

// Errors: one class per `ErrorKind` (Kotlin `RedelayException.InvalidArgument` ...), the
// message the core's with the field it names spelled as in Kotlin (`maxAttempts`); Errors.kt
// adds `kind`, `code` and `soFar` (from `RunError`).
macro_rules! errors {
    ($($kind:ident),*) => {
        /// Every error redelay raises, one subclass per kind of the core.
        #[derive(Debug, uniffi::Error)]
        #[uniffi(flat_error)]
        pub enum RedelayError {
            $($kind(String)),*
        }

        impl std::fmt::Display for RedelayError {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self {
                    $(Self::$kind(m))|* => f.write_str(m),
                }
            }
        }

        impl From<redelay::Error> for RedelayError {
            fn from(e: redelay::Error) -> Self {
                let e = e.spelled(redelay::Spelling::Camel);
                match e.kind() {
                    $(ErrorKind::$kind => Self::$kind(e.message().into())),*
                }
            }
        }
    };
}
errors!(InvalidArgument, Connection, Timeout, LeaseLost, NotFound, Redis, Handler);

type Res<T, E = RedelayError> = Result<T, E>;

/// The error of a long run (`bulk`, `respawn`, `purge_dead`): the `RedelayError` it ended with
/// and the run's totals so far when it stopped part way (`redelay::Error::so_far`, by wire
/// name). Kotlin's `Queue` throws its `error` with `soFar` (Errors.kt): a flat error carries
/// only its message, and a UniFFI error with fields has no message of its own.
#[derive(Debug, uniffi::Error)]
pub enum RunError {
    Failed { error: RedelayError, so_far: Option<HashMap<String, i64>> },
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let RunError::Failed { error, .. } = self;
        error.fmt(f)
    }
}

impl From<RedelayError> for RunError {
    fn from(error: RedelayError) -> Self {
        RunError::Failed { error, so_far: None }
    }
}

impl From<redelay::Error> for RunError {
    fn from(e: redelay::Error) -> Self {
        let so_far = e.so_far().map(|t| t.iter().map(|&(name, n)| (name.into(), n as i64)).collect());
        RunError::Failed { error: e.into(), so_far }
    }
}

/// A thrown exception's reason from its class name and message, worded by the core
/// (`redelay::Failure::thrown`): `"IllegalStateException: boom"`.
#[uniffi::export]
pub fn failure_reason(name: String, message: String) -> String {
    redelay::Failure::thrown(&name, &message)
}

/// The core's stable code of the error kind named `kind` (`ERR_REDELAY_INVALID_ARGUMENT` ...).
#[uniffi::export]
pub fn error_code(kind: String) -> String {
    ErrorKind::from_name(&kind).map_or("", |k| k.code()).into()
}

// Conversions in: signed Kotlin values to the core's, refusing negative ones by field name.

/// Signed milliseconds; a `kotlin.time.Duration` in Kotlin (uniffi.toml).
#[derive(Debug, Clone, Copy)]
pub struct Ms(pub i64);
uniffi::custom_newtype!(Ms, i64);

/// A duration by the core's rule of every duration in ms (`redelay::limits::non_negative_ms`).
fn dur(field: &str, ms: Ms) -> Res<Duration> {
    redelay::limits::non_negative_ms(ms.0).map_err(|e| redelay::Error::invalid(format!("{field}: {e}")).into())
}

fn opt_dur(field: &str, ms: Option<Ms>) -> Res<Option<Duration>> {
    ms.map(|v| dur(field, v)).transpose()
}

/// A retry delay (a nack's `retryIn`), read by the core's rule of every retry delay.
fn retry_dur(ms: Option<Ms>) -> Res<Option<Duration>> {
    Ok(ms.map(|v| redelay::limits::retry_delay(v.0 as f64)).transpose()?)
}

/// A `RetryLater`'s delay, read by the core's rule of every retry delay, a nack's `retryIn` too
/// (`redelay::limits::retry_delay`): refused naming `retryIn` and the range when it is negative
/// or beyond 3650 days.
#[uniffi::export]
pub fn check_retry_delay(retry_in: Ms) -> Res<()> {
    retry_dur(Some(retry_in)).map(drop)
}

fn count<T: TryFrom<i64>>(field: &str, n: impl Into<i64>) -> Res<T> {
    let n = n.into();
    T::try_from(n).map_err(|_| redelay::Error::invalid(format!("{field}: must not be negative, got {n}")).into())
}

fn opt_count<T: TryFrom<i64>>(field: &str, n: Option<impl Into<i64>>) -> Res<Option<T>> {
    n.map(|v| count(field, v)).transpose()
}

/// A fetch's `max`; null is the core's default (`redelay::limits::DEFAULT_FETCH_MAX`).
fn fetch_max(max: Option<i32>) -> Res<usize> {
    Ok(opt_count("max", max)?.unwrap_or(redelay::limits::DEFAULT_FETCH_MAX))
}

// Conversions out: the core's records mirrored with signed counts and `Ms` durations.

trait To<T> {
    fn to(self) -> T;
}

/// `to! { From => To: |x| expr; ... }`: the conversions `mirror!` uses, field type by field type.
macro_rules! to {
    ($($a:ty => $b:ty: |$x:ident| $e:expr;)*) => { $(impl To<$b> for $a { fn to(self) -> $b { let $x = self; $e } })* };
}

/// Fields Kotlin takes as they are (strings, bytes, times, `Option`s of them ...).
impl<T> To<T> for T {
    fn to(self) -> T {
        self
    }
}

to! {
    u64 => i64: |n| n as i64;
    u32 => i32: |n| n as i32;
    Duration => Ms: |d| Ms(d.as_millis() as i64);
    [u64; 16] => Vec<i64>: |a| a.iter().map(|&n| n as i64).collect();
    BTreeMap<String, String> => HashMap<String, String>: |m| m.into_iter().collect();
    Vec<redelay::MessageInfo> => Vec<MessageInfo>: |v| v.into_iter().map(MessageInfo::from).collect();
}

/// `options!(Name { field: Type, ... })`: a record whose every field defaults (null, empty, false).
macro_rules! options {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $f:ident: $t:ty),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, uniffi::Record)]
        pub struct $name { $($(#[$fm])* #[uniffi(default)] pub $f: $t),* }
    };
}

/// `mirror!(Name from core::Type { field: KotlinType, ... })`: a record and its conversion.
macro_rules! mirror {
    ($(#[$m:meta])* $name:ident from $core:ty { $($f:ident: $t:ty),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, uniffi::Record)]
        pub struct $name { $(pub $f: $t),* }

        impl From<$core> for $name {
            fn from(s: $core) -> Self {
                Self { $($f: To::to(s.$f)),* }
            }
        }
    };
}

mirror!(
    /// Counts of one queue, read atomically (a sharded queue: each shard, summed) at `now`
    /// (Redis clock): `total` = scheduled + ready + leased + dead; `lapsed`: the part of
    /// `leased` past its lease deadline (its consumer gone; the next fetch takes it back as a
    /// failed attempt), so live leases are `leased - lapsed`; `nextDue` of the next
    /// scheduled message; `oldestReadyDue` of the oldest message due but not yet delivered;
    /// `paused`: consumers receive nothing until resumed.
    Stats from redelay::Stats {
        now: SystemTime, total: i64, scheduled: i64, ready: i64, leased: i64, lapsed: i64, dead: i64,
        next_due: Option<SystemTime>, oldest_ready_due: Option<SystemTime>, paused: bool,
    }
);

mirror!(
    /// Result of `Queue.verify`; `problems` is empty when the queue is consistent.
    VerifyReport from redelay::VerifyReport { records: i64, problems: Vec<String> }
);

mirror!(
    /// Counts kept by a subscription: messages leased; handler runs finished; acked after the
    /// handler returned; nacked after it failed (a handler's own `ack()`/`nack()` counts in
    /// neither); settles refused because the lease was lost; fetch or settle calls that failed
    /// (the loop retries).
    Counters from redelay::Counters {
        delivered: i64, handled: i64, acked: i64, nacked: i64, lease_lost: i64, errors: i64,
    }
);

mirror!(
    /// A stored message, as `peek` and `deadLetters` show it. `attempts`: failed or expired
    /// attempts so far; `leaseDeadline` while leased, `diedAt` while dead (Redis clock);
    /// `expiresAt`: not delivered after this time; `lastError`: the reason of the last failure
    /// (for a dead letter: why it died, "expired: not delivered before its expiry time" for an expired one).
    MessageInfo from redelay::MessageInfo {
        id: String, state: State, body: Vec<u8>, headers: HashMap<String, String>,
        attempts: i32, max_attempts: i32, ttr: Ms, published_at: SystemTime, due_at: SystemTime,
        lease_deadline: Option<SystemTime>, died_at: Option<SystemTime>, expires_at: Option<SystemTime>,
        last_error: Option<String>,
    }
);

mirror!(
    /// One point of `Queue.history` (the minute or hour starting `at`, Redis clock): messages
    /// published (stored or replaced), delivered, acked, retried, dead-lettered (out of
    /// attempts) and expired (dead-lettered or dropped), and the lateness of the
    /// deliveries: `lateness[i]` counts those under 2^i ms late (`lateness[0]` under 1 ms, the
    /// last 16,384 ms and more), `latenessSumMs` their sum.
    HistoryPoint from redelay::HistoryPoint {
        at: SystemTime, published: i64, delivered: i64, acked: i64, retried: i64, dead: i64, expired: i64,
        lateness: Vec<i64>, lateness_sum_ms: i64,
    }
);

mirror!(
    /// A page of `Queue.list`: the messages in that state (`total`) and this page of them.
    ListPage from redelay::ListPage { total: i64, items: Vec<MessageInfo> }
);

mirror!(
    /// One step of `Queue.search`: the matches, how many records were looked at, and the cursor
    /// of the next step (null: the search is done).
    SearchPage from redelay::SearchPage { items: Vec<MessageInfo>, scanned: i64, cursor: Option<String> }
);

mirror!(
    /// How many waiting messages fall due in the span of `Queue.upcoming` starting `at`.
    Upcoming from redelay::Bucket { at: SystemTime, count: i64 }
);

/// What `Queue.search` looks for: an id prefix, a header's value, a body substring, or a
/// substring of the last error.
#[derive(Debug, Clone, uniffi::Enum)]
pub enum Search {
    IdPrefix { prefix: String },
    Header { name: String, value: String },
    Body { bytes: Vec<u8> },
    LastError { text: String },
}

impl From<Search> for redelay::Search {
    fn from(s: Search) -> Self {
        match s {
            Search::IdPrefix { prefix } => redelay::Search::IdPrefix(prefix),
            Search::Header { name, value } => redelay::Search::Header(name, value),
            Search::Body { bytes } => redelay::Search::Body(bytes),
            Search::LastError { text } => redelay::Search::Error(text),
        }
    }
}

/// What `Queue.bulk` does to each message it matches.
#[uniffi::remote(Enum)]
pub enum BulkAction {
    Cancel,
    Reschedule,
    DeliverNow,
    Respawn,
    Purge,
}

mirror!(
    /// The result of `Queue.bulk`: messages matched (the ids given, or those the search found),
    /// those the action applied to, and the records the search looked at.
    BulkReport from redelay::BulkReport { matched: i64, done: i64, scanned: i64 }
);

/// The step of `Queue.history`: minutes (kept 2 days), hours (kept 90 days) or UTC days (the
/// sum of their hours).
#[uniffi::remote(Enum)]
pub enum Step {
    Minute,
    Hour,
    Day,
}

/// The result of publishing one message: its id (generated when none was given) and status.
#[uniffi::remote(Record)]
pub struct Published {
    pub id: String,
    pub status: PublishStatus,
}

/// Stored; a duplicate id, nothing changed; replaced.
#[uniffi::remote(Enum)]
pub enum PublishStatus {
    Stored,
    Duplicate,
    Replaced,
}

/// Where a message is in its life (Kotlin `MessageState`).
#[uniffi::remote(Enum)]
pub enum State {
    Scheduled,
    Ready,
    Leased,
    Dead,
}

// Logging: the core's records (`redelay::forward_logs`) go to a Kotlin sink, which writes them
// to SLF4J. `level`: 1 error, 2 warn, 3 info, 4 debug, 5 trace.
#[uniffi::export(with_foreign)]
pub trait LogSink: Send + Sync {
    fn log(&self, level: u8, target: String, message: String);
}

/// Routes the core's records up to `max_level` (0 off .. 5 trace) to `sink`.
#[uniffi::export]
pub fn set_log_sink(sink: Arc<dyn LogSink>, max_level: u8) {
    redelay::forward_logs(max_level.into(), move |level, target, message| sink.log(level, target.into(), message));
}

// Client

/// Retry backoff: `base` doubled at each failed attempt, capped at `max`, with jitter.
#[derive(Debug, Clone, uniffi::Record)]
pub struct Backoff {
    pub base: Ms,
    pub max: Ms,
}

/// Publishes wait until `replicas` replicas have them (Redis `WAIT`), for at most `timeout`
/// (1 ms to 60 s), and throw `RedelayException.Redis` when they do not confirm in time: the
/// message is then on the master only, so publish it again with its id.
#[derive(Debug, Clone, uniffi::Record)]
pub struct WaitForReplicas {
    pub replicas: i32,
    pub timeout: Ms,
}

options!(
    /// Options of `Client.connect`, one to one with the core's `ClientOptions`; null keeps the
    /// core's default (prefix `redelay`, 8 MiB bodies, 5 s connect and 10 s response timeouts,
    /// 10 attempts, 30 s ttr, backoff 1 s .. 1 h).
    ClientOptions {
        prefix: Option<String>, max_body_bytes: Option<i64>, connect_timeout: Option<Ms>, response_timeout: Option<Ms>,
        default_max_attempts: Option<i32>, default_ttr: Option<Ms>, default_backoff: Option<Backoff>,
        wait_for_replicas: Option<WaitForReplicas>,
    }
);

impl ClientOptions {
    fn into_core(self) -> Res<redelay::ClientOptions> {
        let d = redelay::ClientOptions::default();
        let (base, max) = match self.default_backoff {
            Some(b) => (dur("defaultBackoff.base", b.base)?, dur("defaultBackoff.max", b.max)?),
            None => (d.default_backoff_base, d.default_backoff_max),
        };
        let replicas = self.wait_for_replicas.map(|w| -> Res<_> {
            Ok((count("waitForReplicas.replicas", w.replicas)?, dur("waitForReplicas.timeout", w.timeout)?))
        });
        Ok(redelay::ClientOptions {
            prefix: self.prefix.unwrap_or(d.prefix),
            max_body_bytes: opt_count("max_body_bytes", self.max_body_bytes)?.unwrap_or(d.max_body_bytes),
            wait_for_replicas: replicas.transpose()?,
            connect_timeout: opt_dur("connect_timeout", self.connect_timeout)?.unwrap_or(d.connect_timeout),
            response_timeout: opt_dur("response_timeout", self.response_timeout)?.unwrap_or(d.response_timeout),
            default_max_attempts: opt_count("default_max_attempts", self.default_max_attempts)?
                .unwrap_or(d.default_max_attempts),
            default_ttr: opt_dur("default_ttr", self.default_ttr)?.unwrap_or(d.default_ttr),
            default_backoff_base: base,
            default_backoff_max: max,
        })
    }
}

/// Connects to Redis (`redis://`, `rediss://`, `unix://`, cluster and sentinel URLs).
#[uniffi::export]
pub async fn connect(url: String, options: ClientOptions) -> Res<Arc<NativeClient>> {
    let opts = options.into_core()?;
    on_rt(async move { Ok(Arc::new(NativeClient(redelay::Client::connect_with(&url, opts).await?))) }).await
}

/// The core's client; `dev.redelay.Client` wraps it.
#[derive(uniffi::Object)]
pub struct NativeClient(redelay::Client);

#[uniffi::export]
impl NativeClient {
    pub fn queue(&self, name: String, shards: i32) -> Res<Arc<NativeQueue>> {
        let opts = redelay::QueueOptions::shards(count("shards", shards)?);
        // Queue::new starts a settle task on the client's runtime handle: enter the runtime so
        // that this works from any Kotlin thread.
        let _enter = RUNTIME.enter();
        Ok(Arc::new(NativeQueue(self.0.queue_with(&name, opts)?)))
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

    /// The deliveries behind Kotlin's `Client.fetch`: up to `max` due messages of the first of
    /// `queues` (names in priority order, each opened with the shard count stored in Redis) that
    /// has any, waiting up to `wait` (the core's `Client::fetch_first`), handed over in a
    /// `NativeFetched` as by `NativeQueue.fetch_raw`. `max` null: the core's default (1).
    pub async fn fetch_raw(
        &self,
        queues: Vec<String>,
        max: Option<i32>,
        wait: Ms,
        ttr: Option<Ms>,
    ) -> Res<Arc<NativeFetched>> {
        let (max, wait, ttr) = (fetch_max(max)?, dur("wait", wait)?, opt_dur("ttr", ttr)?);
        call!(self, |c| NativeFetched::new(c.fetch_first(&queues, max, wait, ttr).await?))
    }
}

// Publishing

options!(
    /// A message for `Queue.publishBatch`: its body and settings, one to one with the core's
    /// `PublishOptions`; null keeps the client's default. `delay`: due this long after Redis
    /// receives the publish; `at`: due at this time (Redis clock), give one of them. `id`: your own
    /// id, unique within the queue (a publish of an existing id is reported as `DUPLICATE` and
    /// changes nothing, unless `replace`); without one redelay generates an id (all digits on a
    /// plain queue, `<ms>-<random>` in hex on a sharded one).
    /// `maxAttempts`: deliveries allowed before the dead letters; `ttr`: lease length.
    /// `expiresIn` (from the publish) or `expiresAt`: a message not delivered by then never is;
    /// it becomes a dead letter "expired", or is deleted with `dropOnExpiry`.
    Message {
        body: Vec<u8>, delay: Option<Ms>, at: Option<SystemTime>, id: Option<String>, headers: HashMap<String, String>,
        max_attempts: Option<i32>, ttr: Option<Ms>, backoff: Option<Backoff>, replace: bool,
        expires_in: Option<Ms>, expires_at: Option<SystemTime>, drop_on_expiry: bool,
    }
);

options!(
    /// The settings of `Message` without its body (`Message(body, options)`).
    PublishOptions {
        delay: Option<Ms>, at: Option<SystemTime>, id: Option<String>, headers: HashMap<String, String>,
        max_attempts: Option<i32>, ttr: Option<Ms>, backoff: Option<Backoff>, replace: bool,
        expires_in: Option<Ms>, expires_at: Option<SystemTime>, drop_on_expiry: bool,
    }
);

impl Message {
    /// The core's message, checked as by `PublishOptions::message`.
    fn into_core(self) -> Res<redelay::Message> {
        let o = redelay::PublishOptions {
            id: self.id,
            delay: opt_dur("delay", self.delay)?,
            at: self.at,
            headers: self.headers.into_iter().collect(),
            max_attempts: opt_count("max_attempts", self.max_attempts)?,
            ttr: opt_dur("ttr", self.ttr)?,
            backoff_base: self.backoff.as_ref().map(|b| dur("backoff.base", b.base)).transpose()?,
            backoff_max: self.backoff.as_ref().map(|b| dur("backoff.max", b.max)).transpose()?,
            replace: self.replace,
            expires_in: opt_dur("expires_in", self.expires_in)?,
            expires_at: self.expires_at,
            drop_on_expiry: self.drop_on_expiry,
        };
        Ok(o.message(self.body)?)
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
    pub attempt: i32,
    pub max_attempts: i32,
    pub last_error: Option<String>,
    pub published_at: SystemTime,
    pub due_at: SystemTime,
    pub delivered_at: SystemTime,
    pub expires_at: Option<SystemTime>,
    /// The lease deadline when it was handed over (the lease's own is current while it runs).
    pub lease_deadline: SystemTime,
    pub lateness_us: i64,
    pub token: String,
}

fn in_delivery(d: &redelay::Delivery, lease: Option<Arc<NativeLease>>, key: u64) -> InDelivery {
    InDelivery {
        lease,
        key,
        id: d.id().to_string(),
        queue: d.queue().to_string(),
        body: d.body().to_vec(),
        headers: d.headers().iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        attempt: d.attempt() as i32,
        max_attempts: d.max_attempts() as i32,
        last_error: d.last_error().map(str::to_string),
        published_at: d.published_at(),
        due_at: d.due_at(),
        delivered_at: d.delivered_at(),
        expires_at: d.expires_at(),
        lease_deadline: d.lease_deadline(),
        lateness_us: d.lateness().as_micros() as i64,
        token: d.token().to_string(),
    }
}

/// What a fetch leased, until Kotlin takes it. A coroutine cancelled after the fetch finished
/// never takes it: UniFFI drops it unread, and the core's handover releases the deliveries.
#[derive(uniffi::Object)]
pub struct NativeFetched(Mutex<redelay::Handover>);

impl NativeFetched {
    /// Holds `got` for Kotlin; made on the runtime, so that a drop releases what is left.
    fn new(got: Vec<redelay::Delivery>) -> Arc<Self> {
        Arc::new(Self(Mutex::new(redelay::Handover::new(got))))
    }
}

#[uniffi::export]
impl NativeFetched {
    pub fn take(&self) -> Vec<InDelivery> {
        let got = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        got.into_iter().map(|d| in_delivery(&d, Some(Arc::new(NativeLease(d.clone()))), 0)).collect()
    }
}

/// A queue's message stream (the core's `Messages`). Dropped (Kotlin's `close()`), it releases
/// what it fetched and did not hand out, as `shutdown` does.
#[derive(uniffi::Object)]
pub struct NativeMessages(redelay::Messages);

#[uniffi::export]
impl NativeMessages {
    /// The next message, handed over in a `NativeFetched` (a coroutine cancelled after it came
    /// never takes it, and it is released); empty once the stream is closed.
    pub async fn next(&self) -> Res<Arc<NativeFetched>> {
        call!(self, |m| NativeFetched::new(m.next().await?.into_iter().collect()))
    }

    /// The core's close: a waiting `next` ends (empty), and what was fetched and not handed
    /// out is released, waited for.
    pub async fn shutdown(&self) -> Res<()> {
        let release = self.0.close();
        on_rt(async move {
            release.await;
            Ok(())
        })
        .await
    }
}

/// The lease of one delivery: ack, nack, release, extend. Each is sent to the core when Kotlin
/// first polls it (not on the runtime), so a coroutine cancelled while it waits does not take
/// the settle back: only its answer is lost.
#[derive(uniffi::Object)]
pub struct NativeLease(redelay::Delivery);

#[uniffi::export]
impl NativeLease {
    pub async fn ack(&self) -> Res<()> {
        Ok(self.0.ack().await?)
    }

    /// True when the message went to the dead letters.
    pub async fn nack(&self, retry_in: Option<Ms>, reason: String) -> Res<bool> {
        Ok(self.0.nack(retry_dur(retry_in)?, &reason).await?)
    }

    pub async fn release(&self) -> Res<()> {
        Ok(self.0.release().await?)
    }

    pub async fn extend(&self, ttr: Ms) -> Res<()> {
        Ok(self.0.extend(dur("ttr", ttr)?).await?)
    }

    pub fn lease_deadline(&self) -> SystemTime {
        self.0.lease_deadline()
    }

    pub fn is_settled(&self) -> bool {
        self.0.is_settled()
    }
}

/// Which dead letters to respawn or purge: these ids, the oldest `count`, or all.
#[derive(Debug, Clone, uniffi::Enum)]
pub enum Select {
    Ids { ids: Vec<String> },
    Oldest { count: i64 },
    All,
}

impl Select {
    fn into_core(self) -> Res<redelay::Select> {
        Ok(match self {
            Select::Ids { ids } => redelay::Select::Ids(ids),
            Select::Oldest { count: n } => redelay::Select::Oldest(count("count", n)?),
            Select::All => redelay::Select::All,
        })
    }
}

/// Starts consuming `queues` through the core's bridge (`Queues::subscribe_foreign`): in
/// strict priority order, or by `weights` (one per queue); `waker` is called when
/// deliveries wait.
#[uniffi::export]
pub async fn start_subscription(
    queues: Vec<Arc<NativeQueue>>,
    weights: Option<Vec<i32>>,
    waker: Arc<dyn Waker>,
    options: SubscribeOptions,
) -> Res<Arc<NativeSubscription>> {
    let d = redelay::SubscribeOptions::default();
    let opts = redelay::SubscribeOptions {
        concurrency: opt_count("concurrency", options.concurrency)?.unwrap_or(d.concurrency),
        prefetch: opt_count("prefetch", options.prefetch)?,
        ttr: opt_dur("ttr", options.ttr)?,
        drain_timeout: opt_dur("drain_timeout", options.drain_timeout)?.unwrap_or(d.drain_timeout),
        max_idle: opt_dur("max_idle", options.max_idle)?.unwrap_or(d.max_idle),
    };
    let weights = weights.map(|w| w.into_iter().map(i64::from).collect());
    let set = redelay::Queues::ordered(queues.iter().map(|q| q.0.clone()).collect(), weights)?;
    on_rt(async move {
        Ok(Arc::new(NativeSubscription(Arc::new(set.subscribe_foreign(Arc::new(WakeBridge(waker)), opts).await?))))
    })
    .await
}

// Subscriptions: the core's bridge. Kotlin's `wake` signals its take loop; the loop takes a
// batch (one FFI crossing), runs the handlers and reports their outcomes in batches with
// `complete`; `closed` ends the Kotlin side.

#[uniffi::export(with_foreign)]
pub trait Waker: Send + Sync {
    /// Must not block nor call into the subscription; false when the Kotlin side is gone.
    fn wake(&self) -> bool;
    /// The subscription closed (by itself, its client or the Kotlin side).
    fn closed(&self);
}

struct WakeBridge(Arc<dyn Waker>);

impl redelay::Wake for WakeBridge {
    fn wake(&self) -> bool {
        self.0.wake()
    }

    fn closed(&self) {
        self.0.closed()
    }
}

/// The outcome of one handler run, by delivery key: `failure` null acks, else nacks (after
/// `retryIn`, or the message's backoff).
#[derive(Debug, Clone, uniffi::Record)]
pub struct Outcome {
    pub key: u64,
    pub failure: Option<String>,
    pub retry_in: Option<Ms>,
}

options!(
    /// Options of a subscription, one to one with the core's `SubscribeOptions`; null keeps the
    /// core's default (10 handlers, prefetch as many as concurrency up to 1000, each message's own ttr, 30 s
    /// drain, 1 s longest idle sleep between fetches in case a wake-up was lost).
    SubscribeOptions {
        concurrency: Option<i32>, prefetch: Option<i32>, ttr: Option<Ms>, drain_timeout: Option<Ms>, max_idle: Option<Ms>,
    }
);

#[derive(uniffi::Object)]
pub struct NativeSubscription(Arc<redelay::Subscription>);

#[uniffi::export]
impl NativeSubscription {
    /// The deliveries waiting for a handler (as many as there are free slots).
    pub fn take(&self) -> Vec<InDelivery> {
        self.0.take().iter().map(|(k, d)| in_delivery(d, None, *k)).collect()
    }

    pub fn complete(&self, outcomes: Vec<Outcome>) {
        let retry_in = |ms: Option<Ms>| ms.map(|ms| ms.0 as f64);
        let failure = |o: Outcome| o.failure.map_or(Ok(()), |r| Err(Failure::with_retry_ms(r, retry_in(o.retry_in))));
        self.0.complete(outcomes.into_iter().map(|o| (o.key, failure(o))).collect());
    }

    /// The lease of the running delivery `key` (of message `id`), for a handler that settles it
    /// itself; `LeaseLost` once the subscription settled it.
    pub fn lease(&self, key: u64, id: String) -> Res<Arc<NativeLease>> {
        Ok(Arc::new(NativeLease(self.0.lease(key, &id)?)))
    }

    /// Stops fetching, waits for running handlers up to the drain timeout. Idempotent.
    pub async fn stop(&self) -> Res<()> {
        call!(self, |s| s.close().await)
    }

    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    pub fn counters(&self) -> Counters {
        self.0.counters().into()
    }

    pub fn queues(&self) -> Vec<String> {
        self.0.queue_names()
    }

    /// Throws the latest fetch or settle error, if any: Kotlin's `lastError` reads it as a value.
    pub fn throw_last_error(&self) -> Res<()> {
        self.0.last_error().map_or(Ok(()), |e| Err(e.into()))
    }
}

// Queue: Kotlin's `Queue` delegates its interface to this (and adds consuming).

/// The core's queue: publish, settle by id, inspect, change, dead letters.
#[derive(uniffi::Object)]
pub struct NativeQueue(redelay::Queue);

#[uniffi::export]
impl NativeQueue {
    /// The queue's name (also the `name` property).
    pub fn name(&self) -> String {
        self.0.name().to_string()
    }

    /// Publishes one message (see `Message` for the settings); a duplicate id is reported in
    /// the result, not as an error. Kotlin's `Queue.publish(body, delay = ..., ...)` builds the
    /// `Message`: one argument, because JNA passes a call's by-value arguments wrongly on
    /// aarch64 once they no longer fit in registers (the Kotlin test `FfiTest`).
    pub async fn publish(&self, message: Message) -> Res<Published> {
        call!(self, |q| q.publish(message.into_core()?).await?)
    }

    /// Publishes many messages in one round trip (up to 100,000). One bad message refuses the
    /// whole batch (InvalidArgument naming its position) and nothing is written. Results are in
    /// order.
    pub async fn publish_batch(&self, messages: Vec<Message>) -> Res<Vec<Published>> {
        let items = messages
            .into_iter()
            .enumerate()
            .map(|(i, m)| m.into_core().map_err(|e| RedelayError::InvalidArgument(format!("message {i}: {e}"))));
        call!(self, |q| q.publish_batch(items.collect::<Res<_>>()?).await?)
    }

    /// The deliveries behind Kotlin's `fetch`: up to `max` due messages, waiting up to `wait`,
    /// handed over in a `NativeFetched` that Kotlin takes them from at once. `max` null: the
    /// core's default (1).
    pub async fn fetch_raw(&self, max: Option<i32>, wait: Ms, ttr: Option<Ms>) -> Res<Arc<NativeFetched>> {
        let (max, wait, ttr) = (fetch_max(max)?, dur("wait", wait)?, opt_dur("ttr", ttr)?);
        call!(self, |q| NativeFetched::new(q.fetch_leasing(max, wait, ttr).await?))
    }

    /// The stream behind Kotlin's `messages()` Flow (the core's `Queue::messages`): `batch` and
    /// `wait` null are the core's defaults (1, 1 s).
    pub fn messages_raw(&self, batch: Option<i32>, wait: Option<Ms>, ttr: Option<Ms>) -> Res<Arc<NativeMessages>> {
        let opts = redelay::MessagesOptions {
            batch: opt_count("batch", batch)?,
            wait: opt_dur("wait", wait)?,
            ttr: opt_dur("ttr", ttr)?,
        };
        Ok(Arc::new(NativeMessages(self.0.messages(opts)?)))
    }

    /// Acknowledges a leased message by id and lease token.
    pub async fn ack(&self, id: String, token: String) -> Res<()> {
        call!(self, |q| q.ack(&id, &token).await?)
    }

    /// Nacks a leased message by id and lease token; true when it went to the dead letters.
    #[uniffi::method(default(retry_in = None, reason = ""))]
    pub async fn nack(&self, id: String, token: String, retry_in: Option<Ms>, reason: String) -> Res<bool> {
        call!(self, |q| q.nack(&id, &token, retry_dur(retry_in)?, &reason).await?)
    }

    /// Hands a leased message back unprocessed by id and lease token: due now, no attempt
    /// counted.
    pub async fn release(&self, id: String, token: String) -> Res<()> {
        call!(self, |q| q.release(&id, &token).await?)
    }

    /// Extends a lease by id and lease token to `ttr` from now.
    pub async fn extend(&self, id: String, token: String, ttr: Ms) -> Res<()> {
        call!(self, |q| q.extend(&id, &token, dur("ttr", ttr)?).await?)
    }

    /// Deletes a message wherever it is. False when there was no such id.
    pub async fn cancel(&self, id: String) -> Res<bool> {
        call!(self, |q| q.cancel(&id).await?)
    }

    /// Makes a scheduled or ready message due `delay` from now or at `at` (give one); returns
    /// the new due time. NotFound without such id, InvalidArgument when leased or dead.
    #[uniffi::method(default(delay = None, at = None))]
    pub async fn reschedule(&self, id: String, delay: Option<Ms>, at: Option<SystemTime>) -> Res<SystemTime> {
        call!(self, |q| q.reschedule(&id, redelay::Due::required(opt_dur("delay", delay)?, at)?).await?)
    }

    /// Looks at a message without changing it; null when there is no such id.
    pub async fn peek(&self, id: String) -> Res<Option<MessageInfo>> {
        call!(self, |q| q.peek(&id).await?.map(MessageInfo::from))
    }

    /// Counts of the queue, read atomically (a sharded queue: each shard, summed).
    pub async fn stats(&self) -> Res<Stats> {
        call!(self, |q| q.stats().await?.into())
    }

    /// Dead letters, the oldest death first: `limit` (1 to 1000, default 100) from `offset`.
    #[uniffi::method(default(limit = None, offset = None))]
    pub async fn dead_letters(&self, limit: Option<i32>, offset: Option<i64>) -> Res<Vec<MessageInfo>> {
        // The core's defaults; its dead_letters checks the limit.
        let d = redelay::DeadLetterQuery::default();
        let (offset, limit) =
            (opt_count("offset", offset)?.unwrap_or(d.offset), opt_count("limit", limit)?.unwrap_or(d.limit));
        call!(self, |q| q.dead_letters(offset, limit).await?.into_iter().map(MessageInfo::from).collect())
    }

    /// Brings dead letters back (attempts reset, due now); each keeps its own expiry, or with
    /// `expires_in` expires that long after the respawn, or with `clear_expiry` never expires.
    /// Returns how many.
    #[uniffi::method(default(expires_in = None, clear_expiry = false))]
    pub async fn respawn(&self, select: Select, expires_in: Option<Ms>, clear_expiry: bool) -> Res<i64, RunError> {
        let sel = select.into_core()?;
        let expiry = redelay::RespawnExpiry::from_parts(opt_dur("expires_in", expires_in)?, clear_expiry)?;
        call!(self, |q| q.respawn_with(sel, expiry).await? as i64)
    }

    /// Deletes dead letters for good; returns how many.
    pub async fn purge_dead(&self, select: Select) -> Res<i64, RunError> {
        call!(self, |q| q.purge_dead(select.into_core()?).await? as i64)
    }

    /// Pauses the queue: consumers stop receiving (leases in flight finish), publishes go on; kept
    /// in Redis for every client. False when it was already paused.
    pub async fn pause(&self) -> Res<bool> {
        call!(self, |q| q.pause().await?)
    }

    /// Resumes a paused queue; false when it was not paused.
    pub async fn resume(&self) -> Res<bool> {
        call!(self, |q| q.resume().await?)
    }

    /// Turns the queue's history counters on (the default) or off; false when already so.
    pub async fn set_history(&self, on: bool) -> Res<bool> {
        call!(self, |q| q.set_history(on).await?)
    }

    /// The queue's history from `since` to `until` (at most 1440 points of `step`); points
    /// with nothing are zeros.
    pub async fn history(&self, since: SystemTime, until: SystemTime, step: Step) -> Res<Vec<HistoryPoint>> {
        call!(self, |q| q.history(since, until, step).await?.into_iter().map(HistoryPoint::from).collect())
    }

    /// The history counters' totals since the queue began (monotonic).
    pub async fn history_totals(&self) -> Res<HistoryPoint> {
        call!(self, |q| q.history_totals().await?.into())
    }

    /// How many waiting messages fall due in each of `buckets` (1 to 1000) spans of `width`
    /// from `from`: the load ahead. Leased messages are not counted.
    pub async fn upcoming(&self, from: SystemTime, width: Ms, buckets: i32) -> Res<Vec<Upcoming>> {
        let (width, n) = (dur("width", width)?, count("buckets", buckets)?);
        let up = |(at, count)| Upcoming::from(redelay::Bucket { at, count });
        call!(self, |q| q.upcoming(from, width, n).await?.into_iter().map(up).collect())
    }

    /// A page of the messages in `state`, in its order (due time, lease deadline or time of
    /// death): `limit` (1 to 1000, default 100) from `offset` (default 0); null is the core's
    /// default.
    #[uniffi::method(default(offset = None, limit = None))]
    pub async fn list(&self, state: State, offset: Option<i64>, limit: Option<i32>) -> Res<ListPage> {
        let (offset, limit) = (
            opt_count("offset", offset)?.unwrap_or(0),
            opt_count("limit", limit)?.unwrap_or(redelay::limits::DEFAULT_PAGE_LIMIT),
        );
        call!(self, |q| q.list(state, offset, limit).await?.into())
    }

    /// One bounded step (about 500 records) of a search over every message of the queue, from
    /// `cursor` (null to start); call again with the page's cursor until it is null.
    #[uniffi::method(default(cursor = None))]
    pub async fn search(&self, what: Search, cursor: Option<String>) -> Res<SearchPage> {
        call!(self, |q| q.search(&what.into(), cursor.as_deref()).await?.into())
    }

    /// Applies `action` to the messages `ids` (up to 10,000) or to those a `search` finds (give
    /// one; a search runs to its end in bounded steps). Only `RESCHEDULE` takes a new due time,
    /// `delay` or `at`; only `RESPAWN` takes `expires_in` or `clear_expiry` (as `respawn`).
    #[uniffi::method(default(ids = None, search = None, delay = None, at = None, expires_in = None, clear_expiry = false))]
    #[allow(clippy::too_many_arguments)]
    pub async fn bulk(
        &self,
        action: BulkAction,
        ids: Option<Vec<String>>,
        search: Option<Search>,
        delay: Option<Ms>,
        at: Option<SystemTime>,
        expires_in: Option<Ms>,
        clear_expiry: bool,
    ) -> Res<BulkReport, RunError> {
        let (delay, expires_in) = (opt_dur("delay", delay)?, opt_dur("expires_in", expires_in)?);
        let search = search.map(Into::into);
        let opts = redelay::BulkOptions { action, delay, at, ids, search, expires_in, clear_expiry };
        call!(self, |q| q.bulk(&opts).await?.into())
    }

    /// Deletes the whole queue: every message in every state (Kotlin: `destroy()`).
    pub async fn destroy_queue(&self) -> Res<()> {
        call!(self, |q| q.destroy().await?)
    }

    /// Checks the queue's invariant atomically, per shard of a sharded queue (O(n): for tests
    /// and maintenance).
    pub async fn verify(&self) -> Res<VerifyReport> {
        call!(self, |q| q.verify().await?.into())
    }
}
