//! Node.js binding of redelay (napi-rs 3): the native half of the npm package `redelay`. It
//! converts between JavaScript values and the core's types and nothing else: every default,
//! limit and rule is the core's. `redelay.js` adds what needs JavaScript (Dates, `Message`
//! objects, running handlers). Errors: `errors.rs`; subscriptions: `subscription.rs`; logs:
//! `logging.rs`.

// napi-rs registers #[napi] items only outside `cfg(test)`: in the unit-test build they look unused.
#![cfg_attr(test, allow(dead_code))]

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use redelay::{Due, Select};

mod errors;
mod logging;
mod subscription;

use errors::{invalid, spawn, sync};

// ---------------------------------------------------------------------------------------------
// Conversions of JS numbers (the core checks every range)
// ---------------------------------------------------------------------------------------------

/// A number of milliseconds (finite, >= 0) as a Duration, rounded to the microsecond.
fn ms(field: &str, v: f64) -> Result<Duration> {
    if !v.is_finite() || v < 0.0 || v * 1000.0 >= u64::MAX as f64 {
        return Err(invalid(format!("{field}: must be a finite number of milliseconds >= 0, got {v}")));
    }
    Ok(Duration::from_micros((v * 1000.0).round() as u64))
}

fn opt_ms(field: &str, v: Option<f64>) -> Result<Option<Duration>> {
    v.map(|v| ms(field, v)).transpose()
}

/// A whole number >= 0; one too large for the target type becomes u32::MAX, for the core to refuse.
fn count<T: TryFrom<u64>>(field: &str, v: f64) -> Result<T> {
    let bad = || invalid(format!("{field}: must be a whole number >= 0, got {v}"));
    if !v.is_finite() || v < 0.0 || v.fract() != 0.0 || v > 9_007_199_254_740_991.0 {
        return Err(bad());
    }
    T::try_from(v as u64).or_else(|_| T::try_from(u32::MAX.into())).map_err(|_| bad())
}

/// Milliseconds since the epoch as a SystemTime (before it when negative, for the core to refuse).
fn time(field: &str, v: f64) -> Result<SystemTime> {
    let bad = || invalid(format!("{field}: must be a valid Date or a number of ms since the epoch, got {v}"));
    let d = ms(field, v.abs()).map_err(|_| bad())?;
    if v >= 0.0 { UNIX_EPOCH.checked_add(d) } else { UNIX_EPOCH.checked_sub(d) }.ok_or_else(bad)
}

fn time_ms(t: SystemTime) -> f64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64() * 1000.0,
        Err(e) => -(e.duration().as_secs_f64() * 1000.0),
    }
}

fn dur_ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A body: a string (stored as UTF-8) or a Buffer / Uint8Array (byte for byte).
type Body = Either<String, Uint8Array>;

fn body(b: Body) -> Vec<u8> {
    match b {
        Either::A(s) => s.into_bytes(),
        Either::B(b) => b.to_vec(),
    }
}

// ---------------------------------------------------------------------------------------------
// Options: one to one onto the core's (dates arrive from redelay.js as ms since the epoch)
// ---------------------------------------------------------------------------------------------

#[napi(object)]
pub struct ClientOptions {
    pub prefix: Option<String>,
    pub max_body_bytes: Option<f64>,
    pub connect_timeout_ms: Option<f64>,
    pub response_timeout_ms: Option<f64>,
    pub default_max_attempts: Option<f64>,
    pub default_ttr_ms: Option<f64>,
    pub default_backoff_base_ms: Option<f64>,
    pub default_backoff_max_ms: Option<f64>,
    pub wait_for_replicas: Option<WaitForReplicas>,
}

#[napi(object)]
pub struct WaitForReplicas {
    pub replicas: f64,
    pub timeout_ms: f64,
}

fn client_options(o: ClientOptions) -> Result<redelay::ClientOptions> {
    let mut c = redelay::ClientOptions::default();
    if let Some(p) = o.prefix {
        c.prefix = p;
    }
    if let Some(n) = o.max_body_bytes {
        c.max_body_bytes = count("maxBodyBytes", n)?;
    }
    if let Some(n) = o.default_max_attempts {
        c.default_max_attempts = count("defaultMaxAttempts", n)?;
    }
    for (field, v, slot) in [
        ("connectTimeoutMs", o.connect_timeout_ms, &mut c.connect_timeout),
        ("responseTimeoutMs", o.response_timeout_ms, &mut c.response_timeout),
        ("defaultTtrMs", o.default_ttr_ms, &mut c.default_ttr),
        ("defaultBackoffBaseMs", o.default_backoff_base_ms, &mut c.default_backoff_base),
        ("defaultBackoffMaxMs", o.default_backoff_max_ms, &mut c.default_backoff_max),
    ] {
        if let Some(v) = v {
            *slot = ms(field, v)?;
        }
    }
    if let Some(w) = o.wait_for_replicas {
        c.wait_for_replicas =
            Some((count("waitForReplicas.replicas", w.replicas)?, ms("waitForReplicas.timeoutMs", w.timeout_ms)?));
    }
    Ok(c)
}

#[napi(object)]
pub struct PublishOptions {
    pub id: Option<String>,
    pub delay_ms: Option<f64>,
    /// Ms since the epoch (redelay.js turns a Date into it).
    pub at: Option<f64>,
    pub headers: Option<HashMap<String, String>>,
    pub max_attempts: Option<f64>,
    pub ttr_ms: Option<f64>,
    pub backoff_base_ms: Option<f64>,
    pub backoff_max_ms: Option<f64>,
    pub replace: Option<bool>,
    pub expires_in_ms: Option<f64>,
    /// Ms since the epoch (redelay.js turns a Date into it).
    pub expires_at: Option<f64>,
    pub drop_on_expiry: Option<bool>,
}

fn publish_options(o: Option<PublishOptions>) -> Result<redelay::PublishOptions> {
    let Some(o) = o else { return Ok(Default::default()) };
    Ok(redelay::PublishOptions {
        id: o.id,
        delay: opt_ms("delayMs", o.delay_ms)?,
        at: o.at.map(|v| time("at", v)).transpose()?,
        headers: o.headers.unwrap_or_default().into_iter().collect(),
        max_attempts: o.max_attempts.map(|n| count("maxAttempts", n)).transpose()?,
        ttr: opt_ms("ttrMs", o.ttr_ms)?,
        backoff_base: opt_ms("backoffBaseMs", o.backoff_base_ms)?,
        backoff_max: opt_ms("backoffMaxMs", o.backoff_max_ms)?,
        replace: o.replace.unwrap_or_default(),
        expires_in: opt_ms("expiresInMs", o.expires_in_ms)?,
        expires_at: o.expires_at.map(|v| time("expiresAt", v)).transpose()?,
        drop_on_expiry: o.drop_on_expiry.unwrap_or_default(),
    })
}

#[napi(object)]
pub struct FetchOptions {
    pub wait_ms: Option<f64>,
    pub ttr_ms: Option<f64>,
}

#[napi(object)]
pub struct NackOptions {
    pub retry_in_ms: Option<f64>,
    pub reason: Option<String>,
}

fn nack_args(o: Option<NackOptions>) -> Result<(Option<Duration>, String)> {
    let o = o.unwrap_or(NackOptions { retry_in_ms: None, reason: None });
    Ok((opt_ms("retryInMs", o.retry_in_ms)?, o.reason.unwrap_or_default()))
}

#[napi(object)]
pub struct DeadLetterOptions {
    pub offset: Option<f64>,
    pub limit: Option<f64>,
}

fn select(sel: Either3<Vec<String>, f64, String>) -> Result<Select> {
    match sel {
        Either3::A(ids) => Ok(Select::Ids(ids)),
        Either3::B(n) => Ok(Select::Oldest(count("count", n)?)),
        Either3::C(s) if s == "all" => Ok(Select::All),
        Either3::C(s) => Err(invalid(format!("select: must be an array of ids, a count or \"all\", got {s:?}"))),
    }
}

// ---------------------------------------------------------------------------------------------
// Plain objects handed to JavaScript
// ---------------------------------------------------------------------------------------------

#[napi(object)]
pub struct Published {
    pub id: String,
    /// `stored`, `duplicate` or `replaced`.
    pub status: String,
}

fn published(p: redelay::Published) -> Published {
    Published { id: p.id, status: p.status.as_str().to_string() }
}

/// A stored message as peek and deadLetters show it (times in ms since the epoch).
#[napi(object)]
pub struct RawMessageInfo {
    pub id: String,
    pub state: String,
    pub body: Buffer,
    pub headers: HashMap<String, String>,
    pub attempts: u32,
    pub max_attempts: u32,
    pub ttr_ms: f64,
    pub published_at: f64,
    pub due_at: f64,
    pub lease_deadline: Option<f64>,
    pub died_at: Option<f64>,
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
        ttr_ms: dur_ms(m.ttr),
        published_at: time_ms(m.published_at),
        due_at: time_ms(m.due_at),
        lease_deadline: m.lease_deadline.map(time_ms),
        died_at: m.died_at.map(time_ms),
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

// ---------------------------------------------------------------------------------------------
// Client and Queue
// ---------------------------------------------------------------------------------------------

#[napi(ts_return_type = "Promise<NativeClient>")]
pub fn connect(env: &Env, url: String, opts: Option<ClientOptions>) -> Result<PromiseRaw<'_, NativeClient>> {
    let opts = opts.map(client_options).transpose()?.unwrap_or_default();
    spawn(env, async move { Ok(NativeClient { c: redelay::Client::connect_with(&url, opts).await? }) })
}

/// The core's `ping` and `queues` do not refuse a closed client yet (its other calls do).
fn open(c: &redelay::Client) -> redelay::Result<&redelay::Client> {
    c.queue("_").map(|_| c)
}

#[napi]
pub struct NativeClient {
    c: redelay::Client,
}

#[napi]
impl NativeClient {
    #[napi]
    pub fn queue(&self, env: &Env, name: String) -> Result<NativeQueue> {
        Ok(NativeQueue { q: sync(env, self.c.queue(&name))? })
    }

    #[napi(getter)]
    pub fn prefix(&self) -> String {
        self.c.prefix().to_string()
    }

    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.c.is_closed()
    }

    #[napi(ts_return_type = "Promise<string[]>")]
    pub fn queues<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, Vec<String>>> {
        let c = self.c.clone();
        spawn(env, async move { open(&c)?.queues().await })
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn ping<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, ()>> {
        let c = self.c.clone();
        spawn(env, async move { open(&c)?.ping().await })
    }

    /// The core's close: every subscription of this client drains, then the connections go.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, ()>> {
        let c = self.c.clone();
        spawn(env, async move {
            c.close().await;
            Ok(())
        })
    }
}

#[napi]
pub struct NativeQueue {
    q: redelay::Queue,
}

#[napi]
impl NativeQueue {
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.q.name().to_string()
    }

    #[napi(ts_return_type = "Promise<Published>")]
    pub fn publish<'e>(
        &self,
        env: &'e Env,
        b: Body,
        opts: Option<PublishOptions>,
    ) -> Result<PromiseRaw<'e, Published>> {
        let m = sync(env, publish_options(opts)?.message(body(b)))?;
        let q = self.q.clone();
        spawn(env, async move { q.publish(m).await.map(published) })
    }

    /// Message `i` is `bodies[i]` with `opts[i]`.
    #[napi(ts_return_type = "Promise<Published[]>")]
    pub fn publish_batch<'e>(
        &self,
        env: &'e Env,
        bodies: Vec<Body>,
        opts: Vec<PublishOptions>,
    ) -> Result<PromiseRaw<'e, Vec<Published>>> {
        let mut items = Vec::with_capacity(bodies.len());
        for (i, (b, o)) in bodies.into_iter().zip(opts).enumerate() {
            let o = publish_options(Some(o)).map_err(|e| invalid(format!("message {i}: {}", e.reason)))?;
            items.push((body(b), o));
        }
        let msgs = sync(env, redelay::batch_messages(items))?;
        let q = self.q.clone();
        spawn(env, async move { Ok(q.publish_batch(msgs).await?.into_iter().map(published).collect()) })
    }

    /// Leased deliveries in the columns of a subscription batch, with a handle each.
    #[napi(ts_return_type = "Promise<RawBatch>")]
    pub fn fetch<'e>(
        &self,
        env: &'e Env,
        max: f64,
        opts: Option<FetchOptions>,
    ) -> Result<PromiseRaw<'e, subscription::RawBatch>> {
        let o = opts.unwrap_or(FetchOptions { wait_ms: None, ttr_ms: None });
        let (max, wait, ttr) = (count("max", max)?, opt_ms("waitMs", o.wait_ms)?, opt_ms("ttrMs", o.ttr_ms)?);
        let q = self.q.clone();
        spawn(env, async move {
            let v = q.fetch_leasing(max, wait.unwrap_or_default(), ttr).await?;
            Ok(subscription::columns(v.into_iter().enumerate().map(|(i, d)| (i as u64, d)).collect(), true))
        })
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn ack<'e>(&self, env: &'e Env, id: String, token: String) -> Result<PromiseRaw<'e, ()>> {
        let q = self.q.clone();
        spawn(env, async move { q.ack(&id, &token).await })
    }

    /// Resolves to true when the message went to the dead letters.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn nack<'e>(
        &self,
        env: &'e Env,
        id: String,
        token: String,
        opts: Option<NackOptions>,
    ) -> Result<PromiseRaw<'e, bool>> {
        let (retry, reason) = nack_args(opts)?;
        let q = self.q.clone();
        spawn(env, async move { q.nack(&id, &token, retry, &reason).await })
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn extend<'e>(&self, env: &'e Env, id: String, token: String, ttr_ms: f64) -> Result<PromiseRaw<'e, ()>> {
        let (q, ttr) = (self.q.clone(), ms("ttrMs", ttr_ms)?);
        spawn(env, async move { q.extend(&id, &token, ttr).await })
    }

    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn cancel<'e>(&self, env: &'e Env, id: String) -> Result<PromiseRaw<'e, bool>> {
        let q = self.q.clone();
        spawn(env, async move { q.cancel(&id).await })
    }

    /// The new due time, in ms since the epoch.
    #[napi(ts_return_type = "Promise<number>")]
    pub fn reschedule<'e>(
        &self,
        env: &'e Env,
        id: String,
        delay_ms: Option<f64>,
        at: Option<f64>,
    ) -> Result<PromiseRaw<'e, f64>> {
        let due = sync(env, Due::from_parts(opt_ms("delayMs", delay_ms)?, at.map(|v| time("at", v)).transpose()?))?;
        let q = self.q.clone();
        spawn(env, async move { q.reschedule(&id, due).await.map(time_ms) })
    }

    #[napi(ts_return_type = "Promise<RawMessageInfo | null>")]
    pub fn peek<'e>(&self, env: &'e Env, id: String) -> Result<PromiseRaw<'e, Option<RawMessageInfo>>> {
        let q = self.q.clone();
        spawn(env, async move { Ok(q.peek(&id).await?.map(message_info)) })
    }

    #[napi(ts_return_type = "Promise<RawStats>")]
    pub fn stats<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, RawStats>> {
        let q = self.q.clone();
        spawn(env, async move {
            let s = q.stats().await?;
            Ok(RawStats {
                now: time_ms(s.now),
                total: s.total as f64,
                scheduled: s.scheduled as f64,
                ready: s.ready as f64,
                leased: s.leased as f64,
                dead: s.dead as f64,
                next_due: s.next_due.map(time_ms),
                oldest_ready_due: s.oldest_ready_due.map(time_ms),
            })
        })
    }

    #[napi(ts_return_type = "Promise<RawMessageInfo[]>")]
    pub fn dead_letters<'e>(
        &self,
        env: &'e Env,
        opts: Option<DeadLetterOptions>,
    ) -> Result<PromiseRaw<'e, Vec<RawMessageInfo>>> {
        let mut dq = redelay::DeadLetterQuery::default();
        if let Some(o) = opts {
            dq.offset = o.offset.map(|n| count("offset", n)).transpose()?.unwrap_or(dq.offset);
            dq.limit = o.limit.map(|n| count("limit", n)).transpose()?.unwrap_or(dq.limit);
        }
        sync(env, dq.validate())?;
        let q = self.q.clone();
        spawn(
            env,
            async move { Ok(q.dead_letters(dq.offset, dq.limit).await?.into_iter().map(message_info).collect()) },
        )
    }

    #[napi(ts_args_type = "select: string[] | number | 'all'", ts_return_type = "Promise<number>")]
    pub fn respawn<'e>(&self, env: &'e Env, select_: Either3<Vec<String>, f64, String>) -> Result<PromiseRaw<'e, f64>> {
        let (q, sel) = (self.q.clone(), select(select_)?);
        spawn(env, async move { Ok(q.respawn(sel).await? as f64) })
    }

    #[napi(ts_args_type = "select: string[] | number | 'all'", ts_return_type = "Promise<number>")]
    pub fn purge_dead<'e>(
        &self,
        env: &'e Env,
        select_: Either3<Vec<String>, f64, String>,
    ) -> Result<PromiseRaw<'e, f64>> {
        let (q, sel) = (self.q.clone(), select(select_)?);
        spawn(env, async move { Ok(q.purge_dead(sel).await? as f64) })
    }

    #[napi(ts_return_type = "Promise<RawVerifyReport>")]
    pub fn verify<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, RawVerifyReport>> {
        let q = self.q.clone();
        spawn(env, async move {
            let r = q.verify().await?;
            Ok(RawVerifyReport { records: r.records as f64, problems: r.problems })
        })
    }

    /// Deletes the queue and everything in it.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn destroy<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, ()>> {
        let q = self.q.clone();
        spawn(env, async move { q.destroy().await })
    }

    /// A subscription, not started yet: `wake` is called on the JS thread when deliveries wait
    /// (JS then calls `take()` and reports with `complete`). It must not throw.
    #[napi(ts_args_type = "wake: () => void, opts?: RawSubscribeOptions | undefined | null")]
    pub fn subscription(
        &self,
        env: &Env,
        wake: Function<'_, (), ()>,
        opts: Option<subscription::RawSubscribeOptions>,
    ) -> Result<subscription::NativeSubscription> {
        subscription::create(env, self.q.clone(), wake, opts)
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
    #[napi(ts_return_type = "Promise<void>")]
    pub fn ack<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, ()>> {
        let d = self.d.clone();
        spawn(env, async move { d.ack().await })
    }

    /// Resolves to true when the message went to the dead letters.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn nack<'e>(&self, env: &'e Env, opts: Option<NackOptions>) -> Result<PromiseRaw<'e, bool>> {
        let (d, (retry, reason)) = (self.d.clone(), nack_args(opts)?);
        spawn(env, async move { d.nack(retry, &reason).await })
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn extend<'e>(&self, env: &'e Env, ttr_ms: f64) -> Result<PromiseRaw<'e, ()>> {
        let (d, ttr) = (self.d.clone(), ms("ttrMs", ttr_ms)?);
        spawn(env, async move { d.extend(ttr).await })
    }

    #[napi(getter)]
    pub fn settled(&self) -> bool {
        self.d.is_settled()
    }

    #[napi(getter)]
    pub fn lease_deadline(&self) -> f64 {
        time_ms(self.d.lease_deadline())
    }
}
