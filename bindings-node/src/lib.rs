//! Node.js binding of redelay (napi-rs 3).
//!
//! This crate is the native half of the npm package `redelay`: it converts between JavaScript
//! values and the core's types and nothing else. Every limit and rule lives in the core. The
//! JavaScript half (`redelay.js`) turns errors into `RedelayError`, wraps deliveries in
//! `Message` objects and runs user handlers.
//!
//! Errors leave this crate as JS errors whose message is `ERR_REDELAY_<KIND>|<core message>`;
//! `redelay.js` maps them to `RedelayError` with `code` and the bare message.
//!
//! Subscriptions (`subscription.rs`) hand deliveries to JavaScript in columnar batches and take
//! outcomes back in batches; see there.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use redelay::{ErrorKind, Select};

mod subscription;

// ---------------------------------------------------------------------------------------------
// Errors and conversions
// ---------------------------------------------------------------------------------------------

fn code(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidArgument => "ERR_REDELAY_INVALID_ARGUMENT",
        ErrorKind::Connection => "ERR_REDELAY_CONNECTION",
        ErrorKind::Timeout => "ERR_REDELAY_TIMEOUT",
        ErrorKind::LeaseLost => "ERR_REDELAY_LEASE_LOST",
        ErrorKind::NotFound => "ERR_REDELAY_NOT_FOUND",
        ErrorKind::Redis => "ERR_REDELAY_REDIS",
        ErrorKind::Handler => "ERR_REDELAY_HANDLER",
    }
}

fn to_js(e: redelay::Error) -> napi::Error {
    napi::Error::new(Status::GenericFailure, format!("{}|{}", code(e.kind()), e.message()))
}

fn invalid(msg: impl std::fmt::Display) -> napi::Error {
    to_js(redelay::Error::invalid(msg.to_string()))
}

fn closed_client() -> napi::Error {
    to_js(redelay::Error::new(ErrorKind::Connection, "client is closed"))
}

trait IntoJs<T> {
    fn js(self) -> Result<T>;
}

impl<T> IntoJs<T> for redelay::Result<T> {
    fn js(self) -> Result<T> {
        self.map_err(to_js)
    }
}

/// A JS number of milliseconds as a Duration. Only the conversion is checked here (a finite,
/// non-negative number); the core checks the limits of each field.
fn ms(field: &str, v: f64) -> Result<Duration> {
    if !v.is_finite() || v < 0.0 {
        return Err(invalid(format!("{field}: must be a finite number of milliseconds >= 0, got {v}")));
    }
    micros(field, v)
}

/// |v| ms as a Duration, rounded to the microsecond (so whole milliseconds stay exact).
fn micros(field: &str, v: f64) -> Result<Duration> {
    let us = (v.abs() * 1000.0).round();
    if us >= u64::MAX as f64 {
        return Err(invalid(format!("{field}: {v} ms is out of range")));
    }
    Ok(Duration::from_micros(us as u64))
}

/// A JS number used as a count (an integer >= 0).
fn count(field: &str, v: f64) -> Result<u64> {
    if !v.is_finite() || v < 0.0 || v.fract() != 0.0 || v > 9_007_199_254_740_991.0 {
        return Err(invalid(format!("{field}: must be a whole number >= 0, got {v}")));
    }
    Ok(v as u64)
}

fn count_u32(field: &str, v: f64) -> Result<u32> {
    let n = count(field, v)?;
    // Larger values are passed on saturated, for the core to refuse with its own message.
    Ok(n.min(u32::MAX as u64) as u32)
}

fn count_usize(field: &str, v: f64) -> Result<usize> {
    Ok(count(field, v)?.min(usize::MAX as u64) as usize)
}

/// Milliseconds since the Unix epoch as a SystemTime (negative ones before it, for the core
/// to refuse).
fn time_from_ms(field: &str, v: f64) -> Result<SystemTime> {
    if !v.is_finite() {
        return Err(invalid(format!("{field}: must be a valid Date or a number of ms since the epoch, got {v}")));
    }
    let d = micros(field, v)?;
    let t = if v >= 0.0 { UNIX_EPOCH.checked_add(d) } else { UNIX_EPOCH.checked_sub(d) };
    t.ok_or_else(|| invalid(format!("{field}: {v} is out of range")))
}

fn time_to_ms(t: SystemTime) -> f64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64() * 1000.0,
        Err(e) => -(e.duration().as_secs_f64() * 1000.0),
    }
}

/// A Date or a number of ms since the epoch (anything else coerces to NaN and is refused).
fn read_time(field: &str, v: Unknown) -> Result<SystemTime> {
    let n = match v.get_type()? {
        ValueType::Number => v.coerce_to_number()?.get_double()?,
        ValueType::Object => v.coerce_to_number()?.get_double()?,
        _ => f64::NAN,
    };
    time_from_ms(field, n)
}

/// A body: string (stored as UTF-8), Buffer or Uint8Array (stored byte for byte).
fn read_body(v: Option<Unknown>) -> Result<Vec<u8>> {
    let Some(v) = v else {
        return Err(invalid("body: must be a Buffer, Uint8Array or string, got undefined"));
    };
    match v.get_type()? {
        ValueType::String => {
            let s: String = unsafe { v.cast()? };
            Ok(s.into_bytes())
        }
        ValueType::Object => {
            let b: BufferSlice =
                unsafe { v.cast() }.map_err(|_| invalid("body: must be a Buffer, Uint8Array or string"))?;
            Ok(b.to_vec())
        }
        t => Err(invalid(format!("body: must be a Buffer, Uint8Array or string, got {}", type_name(t)))),
    }
}

fn type_name(t: ValueType) -> &'static str {
    match t {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "boolean",
        ValueType::Number => "number",
        ValueType::String => "string",
        ValueType::Symbol => "symbol",
        ValueType::Object => "object",
        ValueType::Function => "function",
        _ => "an unknown type",
    }
}

fn get_opt<T: FromNapiValue + ValidateNapiValue>(o: &Object, field: &str) -> Result<Option<T>> {
    match o.get::<Unknown>(field)? {
        None => Ok(None),
        Some(v) => match v.get_type()? {
            ValueType::Undefined | ValueType::Null => Ok(None),
            _ => unsafe { T::validate(v.raw_env(), v.raw()) }
                .and_then(|_| unsafe { T::from_napi_value(v.raw_env(), v.raw()) })
                .map(Some)
                .map_err(|_| {
                    invalid(format!(
                        "{field}: must be {}, got {}",
                        T::type_name(),
                        type_name(v.get_type().unwrap_or(ValueType::Unknown))
                    ))
                }),
        },
    }
}

trait RawEnv {
    fn raw_env(&self) -> napi::sys::napi_env;
}

impl RawEnv for Unknown<'_> {
    fn raw_env(&self) -> napi::sys::napi_env {
        self.value().env
    }
}

/// Reads a message to publish: `body` plus the publish options, from one JS object (`opts`
/// for `publish`, each element for `publishBatch`).
fn read_message(body: Option<Unknown>, o: Option<&Object>) -> Result<redelay::Message> {
    let mut m = redelay::Message::new(read_body(body)?);
    let Some(o) = o else { return Ok(m) };
    if let Some(d) = get_opt::<f64>(o, "delayMs")? {
        m = m.delay(ms("delayMs", d)?);
    }
    if let Some(at) = o.get::<Unknown>("at")? {
        if !matches!(at.get_type()?, ValueType::Undefined | ValueType::Null) {
            m = m.at(read_time("at", at)?);
        }
    }
    if let Some(id) = get_opt::<String>(o, "id")? {
        m = m.id(id);
    }
    if let Some(h) = get_opt::<HashMap<String, String>>(o, "headers")? {
        m = m.headers(h.into_iter().collect::<BTreeMap<_, _>>());
    }
    if let Some(n) = get_opt::<f64>(o, "maxAttempts")? {
        m = m.max_attempts(count_u32("maxAttempts", n)?);
    }
    if let Some(t) = get_opt::<f64>(o, "ttrMs")? {
        m = m.ttr(ms("ttrMs", t)?);
    }
    if let Some(r) = get_opt::<bool>(o, "replace")? {
        m = m.replace(r);
    }
    let base = get_opt::<f64>(o, "backoffBaseMs")?;
    let max = get_opt::<f64>(o, "backoffMaxMs")?;
    if base.is_some() || max.is_some() {
        let base = ms("backoffBaseMs", base.unwrap_or(1000.0))?;
        let max = ms("backoffMaxMs", max.unwrap_or(3_600_000.0))?;
        m = m.backoff(base, max);
    }
    Ok(m)
}

// ---------------------------------------------------------------------------------------------
// Plain objects handed to JavaScript
// ---------------------------------------------------------------------------------------------

/// What publish reports for one message.
#[napi(object)]
pub struct Published {
    pub id: String,
    /// `stored`, `duplicate` or `replaced`.
    pub status: String,
}

fn published(p: redelay::Published) -> Published {
    let status = match p.status {
        redelay::PublishStatus::Stored => "stored",
        redelay::PublishStatus::Duplicate => "duplicate",
        redelay::PublishStatus::Replaced => "replaced",
    };
    Published { id: p.id, status: status.to_string() }
}

/// A delivery as handed to JavaScript; `redelay.js` wraps it in a `Message`.
#[napi(object, object_from_js = false)]
pub struct RawDelivery {
    pub handle: NativeDelivery,
    pub id: String,
    pub queue: String,
    pub body: Buffer,
    pub headers: HashMap<String, String>,
    pub attempt: u32,
    pub max_attempts: u32,
    pub published_at: f64,
    pub due_at: f64,
    pub delivered_at: f64,
    pub lateness_ms: f64,
    pub token: String,
    pub last_error: Option<String>,
}

fn raw_delivery(d: redelay::Delivery) -> RawDelivery {
    RawDelivery {
        id: d.id().to_string(),
        queue: d.queue().to_string(),
        body: Buffer::from(d.body().to_vec()),
        headers: d.headers().iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        attempt: d.attempt(),
        max_attempts: d.max_attempts(),
        published_at: time_to_ms(d.published_at()),
        due_at: time_to_ms(d.due_at()),
        delivered_at: time_to_ms(d.delivered_at()),
        lateness_ms: d.lateness().as_secs_f64() * 1000.0,
        token: d.token().to_string(),
        last_error: d.last_error().map(str::to_string),
        handle: NativeDelivery { d },
    }
}

/// A stored message as peek and deadLetters show it.
#[napi(object)]
pub struct RawMessageInfo {
    pub id: String,
    /// `scheduled`, `ready`, `leased` or `dead`.
    pub state: String,
    pub body: Buffer,
    pub headers: HashMap<String, String>,
    pub attempts: u32,
    pub max_attempts: u32,
    pub ttr_ms: f64,
    pub published_at: f64,
    pub due_at: f64,
    /// Lease deadline while leased; time of death while dead.
    pub state_since_or_until: Option<f64>,
    pub last_error: Option<String>,
}

fn message_info(m: redelay::MessageInfo) -> RawMessageInfo {
    RawMessageInfo {
        id: m.id,
        state: m.state.as_str().to_string(),
        body: Buffer::from(m.body),
        headers: m.headers.into_iter().collect(),
        attempts: m.attempts,
        max_attempts: m.max_attempts,
        ttr_ms: m.ttr.as_secs_f64() * 1000.0,
        published_at: time_to_ms(m.published_at),
        due_at: time_to_ms(m.due_at),
        state_since_or_until: m.lease_deadline.or(m.died_at).map(time_to_ms),
        last_error: m.last_error,
    }
}

#[napi(object)]
pub struct RawStats {
    pub now: f64,
    pub total: f64,
    pub scheduled: f64,
    pub ready: f64,
    pub leased: f64,
    pub dead: f64,
    pub next_due: Option<f64>,
    pub oldest_ready_due: Option<f64>,
}

#[napi(object)]
pub struct RawVerifyReport {
    pub records: f64,
    pub problems: Vec<String>,
}

#[napi(object)]
pub struct RawCounters {
    pub delivered: f64,
    pub acked: f64,
    pub nacked: f64,
    pub lease_lost: f64,
    pub errors: f64,
}

// ---------------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------------

struct ClientState {
    client: redelay::Client,
    closed: AtomicBool,
    subs: Mutex<Vec<Weak<subscription::SubState>>>,
}

impl ClientState {
    fn check(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(closed_client());
        }
        Ok(())
    }
}

#[napi(object)]
pub struct ClientOptions {
    /// Key prefix of every queue (default `redelay`).
    pub prefix: Option<String>,
    /// Largest body accepted by publish (default 8 MiB).
    pub max_body_bytes: Option<f64>,
    /// How long to try to reach Redis (default 5000).
    pub connect_timeout_ms: Option<f64>,
    /// How long to wait for any one answer from Redis (default 10000).
    pub response_timeout_ms: Option<f64>,
    /// Default max attempts of messages published through this client (default 10).
    pub default_max_attempts: Option<f64>,
    /// Default ttr (lease) of messages published through this client (default 30000).
    pub default_ttr_ms: Option<f64>,
    /// Every publish waits until this many replicas have it (Redis WAIT), or rejects.
    pub wait_for_replicas: Option<WaitForReplicas>,
}

/// Durability: a publish resolves only once `replicas` replicas have it; after `timeoutMs` it
/// rejects with ERR_REDELAY_REDIS instead (the message is on the master: publish it again with
/// its id).
#[napi(object)]
pub struct WaitForReplicas {
    pub replicas: f64,
    pub timeout_ms: f64,
}

/// Connects to Redis. See `Client.connect` in `redelay.js`.
#[napi]
pub async fn connect(url: String, opts: Option<ClientOptions>) -> Result<NativeClient> {
    let mut b = redelay::Client::builder(&url);
    if let Some(o) = opts {
        if let Some(p) = o.prefix {
            b = b.prefix(p);
        }
        if let Some(n) = o.max_body_bytes {
            b = b.max_body_bytes(count_usize("maxBodyBytes", n)?);
        }
        if let Some(t) = o.connect_timeout_ms {
            b = b.connect_timeout(ms("connectTimeoutMs", t)?);
        }
        if let Some(t) = o.response_timeout_ms {
            b = b.response_timeout(ms("responseTimeoutMs", t)?);
        }
        if let Some(n) = o.default_max_attempts {
            b = b.default_max_attempts(count_u32("defaultMaxAttempts", n)?);
        }
        if let Some(t) = o.default_ttr_ms {
            b = b.default_ttr(ms("defaultTtrMs", t)?);
        }
        if let Some(w) = o.wait_for_replicas {
            b = b.wait_for_replicas(
                count_u32("waitForReplicas.replicas", w.replicas)?,
                ms("waitForReplicas.timeoutMs", w.timeout_ms)?,
            );
        }
    }
    let client = b.connect().await.js()?;
    Ok(NativeClient {
        state: Arc::new(ClientState { client, closed: AtomicBool::new(false), subs: Mutex::new(Vec::new()) }),
    })
}

#[napi]
pub struct NativeClient {
    state: Arc<ClientState>,
}

#[napi]
impl NativeClient {
    #[napi]
    pub fn queue(&self, name: String) -> Result<NativeQueue> {
        self.state.check()?;
        let q = self.state.client.queue(&name).js()?;
        Ok(NativeQueue { state: self.state.clone(), q })
    }

    #[napi(getter)]
    pub fn prefix(&self) -> String {
        self.state.client.prefix().to_string()
    }

    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.state.closed.load(Ordering::Acquire)
    }

    #[napi]
    pub async fn queues(&self) -> Result<Vec<String>> {
        self.state.check()?;
        self.state.client.queues().await.js()
    }

    #[napi]
    pub async fn ping(&self) -> Result<()> {
        self.state.check()?;
        self.state.client.ping().await.js()
    }

    /// Closes every subscription made through this client (gracefully, see
    /// `Subscription.close`); later calls fail with a Connection error.
    #[napi]
    pub async fn close(&self) -> Result<()> {
        self.state.closed.store(true, Ordering::Release);
        let subs: Vec<Arc<subscription::SubState>> = {
            let mut v = self.state.subs.lock().unwrap();
            v.drain(..).filter_map(|w| w.upgrade()).collect()
        };
        futures_util::future::join_all(subs.iter().map(|s| s.close())).await;
        // Then the core client: its wake-up connection goes, later core calls fail too.
        self.state.client.close().await;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Queue
// ---------------------------------------------------------------------------------------------

#[napi(object)]
pub struct FetchOptions {
    /// How long to wait for the first message (default 0: return at once).
    pub wait_ms: Option<f64>,
    /// Lease of every fetched message instead of each one's own ttr.
    pub ttr_ms: Option<f64>,
}

#[napi(object)]
pub struct NackOptions {
    /// Retry after this long instead of the message's exponential backoff.
    pub retry_in_ms: Option<f64>,
    /// Stored with the message (the dead letter's cause at the last attempt).
    pub reason: Option<String>,
}

#[napi(object)]
pub struct DeadLetterOptions {
    pub offset: Option<f64>,
    pub limit: Option<f64>,
}

#[napi]
pub struct NativeQueue {
    state: Arc<ClientState>,
    q: redelay::Queue,
}

fn nack_args(opts: Option<NackOptions>) -> Result<(Option<Duration>, String)> {
    let o = opts.unwrap_or(NackOptions { retry_in_ms: None, reason: None });
    let retry = o.retry_in_ms.map(|v| ms("retryInMs", v)).transpose()?;
    Ok((retry, o.reason.unwrap_or_default()))
}

fn select(sel: Either3<Vec<String>, f64, String>) -> Result<Select> {
    match sel {
        Either3::A(ids) => Ok(Select::Ids(ids)),
        Either3::B(n) => Ok(Select::Oldest(count_usize("count", n)?)),
        Either3::C(s) if s == "all" => Ok(Select::All),
        Either3::C(s) => Err(invalid(format!("select: must be an array of ids, a count or \"all\", got {s:?}"))),
    }
}

#[napi]
impl NativeQueue {
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.q.name().to_string()
    }

    #[napi(
        ts_args_type = "body: Buffer | Uint8Array | string, opts?: object | undefined | null",
        ts_return_type = "Promise<Published>"
    )]
    pub fn publish<'e>(&self, env: &'e Env, body: Unknown, opts: Option<Unknown>) -> Result<PromiseRaw<'e, Published>> {
        self.state.check()?;
        let opts: Option<Object> = match opts {
            None => None,
            Some(v) => match v.get_type()? {
                ValueType::Undefined | ValueType::Null => None,
                ValueType::Object => Some(unsafe { v.cast()? }),
                t => return Err(invalid(format!("opts: must be an object, got {}", type_name(t)))),
            },
        };
        let m = read_message(Some(body), opts.as_ref())?;
        let q = self.q.clone();
        env.spawn_future(async move { q.publish(m).await.map(published).js() })
    }

    #[napi(ts_args_type = "messages: Array<object>", ts_return_type = "Promise<Array<Published>>")]
    pub fn publish_batch<'e>(&self, env: &'e Env, messages: Array) -> Result<PromiseRaw<'e, Vec<Published>>> {
        self.state.check()?;
        let mut msgs = Vec::with_capacity(messages.len() as usize);
        for i in 0..messages.len() {
            let not_object = || invalid(format!("message {i}: must be an object with a body"));
            let v = messages.get::<Unknown>(i)?.ok_or_else(not_object)?;
            if v.get_type()? != ValueType::Object {
                return Err(not_object());
            }
            let o: Object = unsafe { v.cast()? };
            let body = o.get::<Unknown>("body")?;
            let m = read_message(body, Some(&o)).map_err(|e| {
                let msg = e.reason.clone();
                match msg.split_once('|') {
                    Some((c, rest)) => napi::Error::new(Status::GenericFailure, format!("{c}|message {i}: {rest}")),
                    None => e,
                }
            })?;
            msgs.push(m);
        }
        let q = self.q.clone();
        env.spawn_future(async move {
            let v = q.publish_batch(msgs).await.js()?;
            Ok(v.into_iter().map(published).collect::<Vec<_>>())
        })
    }

    #[napi]
    pub async fn fetch(&self, max: f64, opts: Option<FetchOptions>) -> Result<Vec<RawDelivery>> {
        self.state.check()?;
        let max = count_usize("max", max)?;
        let (wait, ttr) = match opts {
            Some(o) => (
                o.wait_ms.map(|v| ms("waitMs", v)).transpose()?.unwrap_or(Duration::ZERO),
                o.ttr_ms.map(|v| ms("ttrMs", v)).transpose()?,
            ),
            None => (Duration::ZERO, None),
        };
        let v = self.q.fetch_leasing(max, wait, ttr).await.js()?;
        Ok(v.into_iter().map(|d| raw_delivery(d)).collect())
    }

    #[napi]
    pub async fn ack(&self, id: String, token: String) -> Result<()> {
        self.state.check()?;
        self.q.ack(&id, &token).await.js()
    }

    /// Returns true when the message went to the dead letters.
    #[napi]
    pub async fn nack(&self, id: String, token: String, opts: Option<NackOptions>) -> Result<bool> {
        self.state.check()?;
        let (retry, reason) = nack_args(opts)?;
        self.q.nack(&id, &token, retry, &reason).await.js()
    }

    #[napi]
    pub async fn extend(&self, id: String, token: String, ttr_ms: f64) -> Result<()> {
        self.state.check()?;
        self.q.extend(&id, &token, ms("ttrMs", ttr_ms)?).await.js()
    }

    #[napi]
    pub async fn cancel(&self, id: String) -> Result<bool> {
        self.state.check()?;
        self.q.cancel(&id).await.js()
    }

    /// `when`: a Date or ms since the epoch (`at`), or `{ delayMs }` / `{ at }`. Returns the
    /// new due time in ms since the epoch.
    #[napi(
        ts_args_type = "id: string, when: Date | number | { at?: Date | number, delayMs?: number }",
        ts_return_type = "Promise<number>"
    )]
    pub fn reschedule<'e>(&self, env: &'e Env, id: String, when: Unknown) -> Result<PromiseRaw<'e, f64>> {
        self.state.check()?;
        let due = match when.get_type()? {
            ValueType::Number => redelay::Due::At(read_time("at", when)?),
            ValueType::Object => {
                let o: Object = unsafe { when.cast()? };
                let delay = get_opt::<f64>(&o, "delayMs")?;
                let at = o
                    .get::<Unknown>("at")?
                    .filter(|v| !matches!(v.get_type(), Ok(ValueType::Undefined | ValueType::Null)));
                match (delay, at) {
                    (Some(d), None) => redelay::Due::In(ms("delayMs", d)?),
                    (None, Some(at)) => redelay::Due::At(read_time("at", at)?),
                    (None, None) => redelay::Due::At(read_time("at", when)?),
                    (Some(_), Some(_)) => return Err(invalid("when: give delayMs or at, not both")),
                }
            }
            t => {
                return Err(invalid(format!(
                    "when: must be a Date, a number or {{ delayMs }} / {{ at }}, got {}",
                    type_name(t)
                )))
            }
        };
        let q = self.q.clone();
        env.spawn_future(async move { q.reschedule(&id, due).await.map(time_to_ms).js() })
    }

    #[napi]
    pub async fn peek(&self, id: String) -> Result<Option<RawMessageInfo>> {
        self.state.check()?;
        Ok(self.q.peek(&id).await.js()?.map(message_info))
    }

    #[napi]
    pub async fn stats(&self) -> Result<RawStats> {
        self.state.check()?;
        let s = self.q.stats().await.js()?;
        Ok(RawStats {
            now: time_to_ms(s.now),
            total: s.total as f64,
            scheduled: s.scheduled as f64,
            ready: s.ready as f64,
            leased: s.leased as f64,
            dead: s.dead as f64,
            next_due: s.next_due.map(time_to_ms),
            oldest_ready_due: s.oldest_ready_due.map(time_to_ms),
        })
    }

    #[napi]
    pub async fn dead_letters(&self, opts: Option<DeadLetterOptions>) -> Result<Vec<RawMessageInfo>> {
        self.state.check()?;
        let (offset, limit) = match opts {
            Some(o) => (
                o.offset.map(|v| count_usize("offset", v)).transpose()?.unwrap_or(0),
                o.limit.map(|v| count_usize("limit", v)).transpose()?.unwrap_or(100),
            ),
            None => (0, 100),
        };
        let v = self.q.dead_letters(offset, limit).await.js()?;
        Ok(v.into_iter().map(message_info).collect())
    }

    #[napi(ts_args_type = "select: string[] | number | 'all'")]
    pub async fn respawn(&self, select_: Either3<Vec<String>, f64, String>) -> Result<f64> {
        self.state.check()?;
        Ok(self.q.respawn(select(select_)?).await.js()? as f64)
    }

    #[napi(ts_args_type = "select: string[] | number | 'all'")]
    pub async fn purge_dead(&self, select_: Either3<Vec<String>, f64, String>) -> Result<f64> {
        self.state.check()?;
        Ok(self.q.purge_dead(select(select_)?).await.js()? as f64)
    }

    #[napi]
    pub async fn verify(&self) -> Result<RawVerifyReport> {
        self.state.check()?;
        let r = self.q.verify().await.js()?;
        Ok(RawVerifyReport { records: r.records as f64, problems: r.problems })
    }

    /// A subscription, not started yet: `dispatch` is called on the JS thread with batches of
    /// deliveries (`RawBatch`), and JS reports their outcomes with `complete`. It must not throw.
    #[napi(ts_args_type = "dispatch: (batch: RawBatch) => void, opts?: RawSubscribeOptions | undefined | null")]
    pub fn subscription(
        &self,
        env: &Env,
        dispatch: Function<'_, subscription::RawBatch, ()>,
        opts: Option<subscription::RawSubscribeOptions>,
    ) -> Result<subscription::NativeSubscription> {
        subscription::create(env, self.q.clone(), self.state.clone(), dispatch, opts)
    }
}

// ---------------------------------------------------------------------------------------------
// Deliveries
// ---------------------------------------------------------------------------------------------

#[napi]
pub struct NativeDelivery {
    d: redelay::Delivery,
}

#[napi]
impl NativeDelivery {
    #[napi]
    pub async fn ack(&self) -> Result<()> {
        self.d.ack().await.js()
    }

    /// Returns true when the message went to the dead letters.
    #[napi]
    pub async fn nack(&self, opts: Option<NackOptions>) -> Result<bool> {
        let (retry, reason) = nack_args(opts)?;
        self.d.nack(retry, &reason).await.js()
    }

    #[napi]
    pub async fn extend(&self, ttr_ms: f64) -> Result<()> {
        self.d.extend(ms("ttrMs", ttr_ms)?).await.js()
    }

    #[napi(getter)]
    pub fn settled(&self) -> bool {
        self.d.is_settled()
    }

    #[napi(getter)]
    pub fn lease_deadline(&self) -> f64 {
        time_to_ms(self.d.lease_deadline())
    }
}
