//! Node.js binding of redelay (napi-rs 3): the native half of the npm package `redelay`. Options
//! and results cross in the core's wire forms (`redelay::wire`: snake_case fields, durations and
//! times as `*_ms` numbers, bodies as Buffers); `redelay.js` maps them from and to JavaScript's
//! names and Dates in one place. Every default, limit and rule is the core's. Errors:
//! `errors.rs`; subscriptions: `subscription.rs`; logs: `logging.rs`.

// napi-rs registers #[napi] items only outside `cfg(test)`: in the unit-test build they look unused.
#![cfg_attr(test, allow(dead_code))]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use redelay::{wire, BulkAction, BulkOptions, DeadLetterQuery, Due, PublishOptions, Search, Select, State, Step};
use serde::Deserialize;

mod errors;
mod logging;
mod subscription;

use errors::{invalid, spawn, sync};

/// An argument in the core's wire form, decoded by the core. An error names the field (a napi
/// `InvalidArg` error, whose field names `redelay.js` spells the JavaScript way).
pub struct Wire<T>(T);

impl<T: serde::de::DeserializeOwned> FromNapiValue for Wire<T> {
    unsafe fn from_napi_value(env: napi::sys::napi_env, v: napi::sys::napi_value) -> Result<Self> {
        let v = serde_json::Value::from_napi_value(env, v)?;
        wire::from_json(v).map(Wire).map_err(|e| invalid(e.message()))
    }
}

/// The arguments of [`NativeQueue::call`] in wire form (the names of the conformance table);
/// each operation reads its own, and the core checks them.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Args {
    id: String,
    token: String,
    reason: String,
    on: bool,
    max: usize,
    #[serde(with = "wire::opt_ms")]
    wait_ms: Option<Duration>,
    #[serde(with = "wire::opt_ms")]
    retry_in_ms: Option<Duration>,
    #[serde(with = "wire::opt_ms")]
    ttr_ms: Option<Duration>,
    #[serde(with = "wire::opt_ms")]
    delay_ms: Option<Duration>,
    #[serde(with = "wire::opt_time_ms")]
    at_ms: Option<SystemTime>,
    #[serde(with = "wire::opt_time_ms")]
    since_ms: Option<SystemTime>,
    #[serde(with = "wire::opt_time_ms")]
    until_ms: Option<SystemTime>,
    step: Option<Step>,
    #[serde(with = "wire::opt_time_ms")]
    from_ms: Option<SystemTime>,
    #[serde(with = "wire::opt_ms")]
    width_ms: Option<Duration>,
    buckets: usize,
    state: Option<State>,
    offset: usize,
    limit: Option<usize>,
    ids: Option<Vec<String>>,
    oldest: Option<usize>,
    all: bool,
    action: Option<BulkAction>,
    search: Option<Search>,
    cursor: Option<String>,
}

impl Args {
    fn page(&self) -> redelay::Result<DeadLetterQuery> {
        let q = DeadLetterQuery { offset: self.offset, limit: self.limit.unwrap_or(DeadLetterQuery::default().limit) };
        q.validate().map(|_| q)
    }

    fn select(&mut self) -> redelay::Result<Select> {
        Select::from_parts(self.ids.take(), self.oldest, self.all)
    }

    fn bulk(self) -> redelay::Result<BulkOptions> {
        let action = self.action.ok_or_else(|| redelay::Error::invalid("action: give one"))?;
        Ok(BulkOptions { action, delay: self.delay_ms, at: self.at_ms, ids: self.ids, search: self.search })
    }
}

fn time_ms(t: SystemTime) -> f64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64() * 1000.0,
        Err(e) => -(e.duration().as_secs_f64() * 1000.0),
    }
}

#[napi(ts_args_type = "url: string, opts: object")]
pub fn connect(env: &Env, url: String, opts: Wire<redelay::ClientOptions>) -> Result<PromiseRaw<'_, NativeClient>> {
    env.spawn_future_with_callback(async move { Ok(redelay::Client::connect_with(&url, opts.0).await) }, |env, r| {
        Ok(NativeClient { c: sync(env, r)? })
    })
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

    /// `queues`, `ping` or `close` (every subscription of the client drains, then the
    /// connections go).
    #[napi]
    pub fn call<'e>(&self, env: &'e Env, op: String) -> Result<PromiseRaw<'e, Unknown<'e>>> {
        let c = self.c.clone();
        match op.as_str() {
            "queues" => spawn(env, async move { c.queues().await }),
            "ping" => spawn(env, async move { c.ping().await }),
            "close" => spawn(env, async move {
                c.close().await;
                Ok(())
            }),
            _ => Err(invalid(format!("op: no operation {op:?}"))),
        }
    }

    /// A subscription over several queues (see `NativeQueue::subscription`): strict priority in
    /// this order, or by `weights` (one per queue).
    #[napi(ts_args_type = "names: string[], weights: number[] | null, wake: () => void, opts: object, unref: boolean")]
    pub fn subscription<'e>(
        &self,
        env: &'e Env,
        names: Vec<String>,
        weights: Option<Vec<u32>>,
        wake: Function<'_, (), ()>,
        opts: Wire<redelay::SubscribeOptions>,
        unref: bool,
    ) -> Result<PromiseRaw<'e, subscription::NativeSubscription>> {
        let qs = sync(env, names.iter().map(|n| self.c.queue(n)).collect::<redelay::Result<Vec<_>>>())?;
        let qs = match weights {
            None => redelay::Queues::priority(qs),
            Some(w) => redelay::Queues::weighted(qs.into_iter().zip(w).collect()),
        };
        subscription::start(env, qs, wake, opts.0, unref)
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

    #[napi(ts_args_type = "body: Uint8Array, opts: object")]
    pub fn publish<'e>(
        &self,
        env: &'e Env,
        b: Uint8Array,
        opts: Wire<PublishOptions>,
    ) -> Result<PromiseRaw<'e, Unknown<'e>>> {
        let (q, m) = (self.q.clone(), sync(env, opts.0.message(b.to_vec()))?);
        spawn(env, async move { q.publish(m).await })
    }

    /// Message `i` is `bodies[i]` with `opts[i]`.
    #[napi(ts_args_type = "bodies: Uint8Array[], opts: object[]")]
    pub fn publish_batch<'e>(
        &self,
        env: &'e Env,
        bodies: Vec<Uint8Array>,
        opts: Vec<serde_json::Value>,
    ) -> Result<PromiseRaw<'e, Unknown<'e>>> {
        let mut items = Vec::with_capacity(bodies.len());
        for (i, (b, o)) in bodies.into_iter().zip(opts).enumerate() {
            let o = wire::from_json(o).map_err(|e| invalid(format!("message {i}: {}", e.message())))?;
            items.push((b.to_vec(), o));
        }
        let (q, msgs) = (self.q.clone(), sync(env, redelay::batch_messages(items))?);
        spawn(env, async move { q.publish_batch(msgs).await })
    }

    /// Up to `max` leased deliveries in the columns of a subscription batch, with a handle each.
    #[napi(ts_args_type = "a: object")]
    pub fn fetch<'e>(&self, env: &'e Env, a: Wire<Args>) -> Result<PromiseRaw<'e, subscription::RawBatch>> {
        let (q, a) = (self.q.clone(), a.0);
        env.spawn_future_with_callback(
            async move { Ok(q.fetch_leasing(a.max, a.wait_ms.unwrap_or_default(), a.ttr_ms).await) },
            |env, r| {
                Ok(subscription::columns(
                    sync(env, r)?.into_iter().enumerate().map(|(i, d)| (i as u64, d)).collect(),
                    true,
                ))
            },
        )
    }

    /// Every other operation, by the core's name, with its arguments in wire form; resolves to
    /// the result in wire form.
    #[napi(ts_args_type = "op: string, a: object")]
    pub fn call<'e>(&self, env: &'e Env, op: String, a: Wire<Args>) -> Result<PromiseRaw<'e, Unknown<'e>>> {
        let (q, mut a) = (self.q.clone(), a.0);
        let (id, token) = (std::mem::take(&mut a.id), std::mem::take(&mut a.token));
        match op.as_str() {
            "ack" => spawn(env, async move { q.ack(&id, &token).await }),
            "nack" => spawn(env, async move { q.nack(&id, &token, a.retry_in_ms, &a.reason).await }),
            "extend" => spawn(env, async move { q.extend(&id, &token, a.ttr_ms.unwrap_or_default()).await }),
            "cancel" => spawn(env, async move { q.cancel(&id).await }),
            "reschedule" => {
                let due = sync(env, Due::from_parts(a.delay_ms, a.at_ms))?;
                spawn(env, async move { q.reschedule(&id, due).await.map(time_ms) })
            }
            "peek" => spawn(env, async move { q.peek(&id).await }),
            "stats" => spawn(env, async move { q.stats().await }),
            "verify" => spawn(env, async move { q.verify().await }),
            "destroy" => spawn(env, async move { q.destroy().await }),
            "dead_letters" => {
                let p = sync(env, a.page())?;
                spawn(env, async move { q.dead_letters(p.offset, p.limit).await })
            }
            "respawn" => spawn(env, async move { q.respawn(a.select()?).await }),
            "purge_dead" => spawn(env, async move { q.purge_dead(a.select()?).await }),
            "bulk" => spawn(env, async move { q.bulk(&a.bulk()?).await }),
            "pause" => spawn(env, async move { q.pause().await }),
            "resume" => spawn(env, async move { q.resume().await }),
            "set_history" => spawn(env, async move { q.set_history(a.on).await }),
            "history_totals" => spawn(env, async move { q.history_totals().await }),
            "history" => spawn(env, async move {
                let (since, until) = (a.since_ms.unwrap_or(UNIX_EPOCH), a.until_ms.unwrap_or(UNIX_EPOCH));
                q.history(since, until, a.step.unwrap_or(Step::Minute)).await
            }),
            "upcoming" => spawn(env, async move {
                let (from, width) = (a.from_ms.unwrap_or(UNIX_EPOCH), a.width_ms.unwrap_or_default());
                let v = q.upcoming(from, width, a.buckets).await?;
                Ok(v.into_iter().map(|(t, n)| (time_ms(t), n)).collect::<Vec<_>>())
            }),
            "list" => spawn(env, async move {
                let (state, p) = (a.state.ok_or_else(|| redelay::Error::invalid("state: missing"))?, a.page()?);
                q.list(state, p.offset, p.limit).await
            }),
            "search" => spawn(env, async move {
                let what = a.search.ok_or_else(|| redelay::Error::invalid("search: give what to look for"))?;
                q.search(&what, a.cursor.as_deref()).await
            }),
            _ => Err(invalid(format!("op: no operation {op:?}"))),
        }
    }

    /// A subscription of this queue (see `subscription::start`).
    #[napi(ts_args_type = "wake: () => void, opts: object, unref: boolean")]
    pub fn subscription<'e>(
        &self,
        env: &'e Env,
        wake: Function<'_, (), ()>,
        opts: Wire<redelay::SubscribeOptions>,
        unref: bool,
    ) -> Result<PromiseRaw<'e, subscription::NativeSubscription>> {
        subscription::start(env, redelay::Queues::priority(vec![self.q.clone()]), wake, opts.0, unref)
    }
}

#[napi]
pub struct NativeDelivery {
    d: redelay::Delivery,
}

#[napi]
impl NativeDelivery {
    /// `ack`, `nack` or `extend` of this delivery, with its arguments in wire form.
    #[napi(ts_args_type = "op: string, a: object")]
    pub fn call<'e>(&self, env: &'e Env, op: String, a: Wire<Args>) -> Result<PromiseRaw<'e, Unknown<'e>>> {
        let (d, a) = (self.d.clone(), a.0);
        match op.as_str() {
            "ack" => spawn(env, async move { d.ack().await }),
            "nack" => spawn(env, async move { d.nack(a.retry_in_ms, &a.reason).await }),
            "extend" => spawn(env, async move { d.extend(a.ttr_ms.unwrap_or_default()).await }),
            _ => Err(invalid(format!("op: no operation {op:?}"))),
        }
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
