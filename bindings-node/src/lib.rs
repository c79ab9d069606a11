//! Node.js binding of redelay (napi-rs 3): the native half of the npm package `redelay`. Options
//! and results cross in the core's wire forms (`redelay::wire`: snake_case fields, durations and
//! times as `*_ms` numbers, bodies as Buffers); `redelay.js` maps them from and to JavaScript's
//! names and Dates in one place. Every default, limit and rule is the core's. Errors:
//! `errors.rs`; subscriptions: `subscription.rs`; logs: `logging.rs`; what a JS environment lets
//! go of when it is torn down (a worker thread ends): `teardown.rs`.

// napi-rs registers #[napi] items only outside `cfg(test)`: in the unit-test build they look unused.
#![cfg_attr(test, allow(dead_code))]

use std::future::Future;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use redelay::{wire, PublishOptions, Reply};
use serde_json::Value;

mod errors;
mod logging;
mod subscription;
mod teardown;

use errors::{invalid, spawn, sync, JsPromise};

/// An argument in the core's wire form, decoded by the core. An error (a napi `InvalidArg` error)
/// names the field as JavaScript spells it.
pub struct Wire<T>(T);

impl<T: serde::de::DeserializeOwned> FromNapiValue for Wire<T> {
    unsafe fn from_napi_value(env: napi::sys::napi_env, v: napi::sys::napi_value) -> Result<Self> {
        let v = Value::from_napi_value(env, v)?;
        wire::from_json(v).map(Wire).map_err(|e| invalid(e.spelled(errors::SPELLING).message()))
    }
}

/// A message's headers as a plain object whose every name is an own data property. napi's own
/// conversions assign properties, and assigning `__proto__` sets the object's prototype
/// instead: a header of that name would be lost.
pub struct Headers(pub std::collections::BTreeMap<String, String>);

impl ToNapiValue for Headers {
    unsafe fn to_napi_value(env: napi::sys::napi_env, h: Self) -> Result<napi::sys::napi_value> {
        let env = Env::from_raw(env);
        let mut o = Object::new(&env)?;
        for (k, v) in &h.0 {
            o.set_named_property(k, v)?;
        }
        own_proto(&env, &mut o, &h.0)?;
        Ok(o.raw())
    }
}

/// Defines the header `__proto__` of `headers`, if any, as an own property of `o` (their object).
fn own_proto(env: &Env, o: &mut Object, headers: &std::collections::BTreeMap<String, String>) -> Result<()> {
    let Some(v) = headers.get("__proto__") else { return Ok(()) };
    let all = PropertyAttributes::Writable | PropertyAttributes::Enumerable | PropertyAttributes::Configurable;
    let p =
        Property::new().with_utf8_name("__proto__")?.with_napi_value(env, v.as_str())?.with_property_attributes(all);
    o.define_properties(&[p])
}

/// A queue operation's reply in wire form, as `errors::spawn` gives it, with the headers of the
/// messages in it as [`Headers`] has them.
fn reply<'e>(env: &'e Env, r: Reply) -> Result<Unknown<'e>> {
    let v = env.to_js_value(&r)?;
    let (one, many) = match &r {
        Reply::Info(Some(m)) => (Some(m), None),
        Reply::Infos(ms) => (None, Some((None, ms))),
        Reply::List(p) => (None, Some((Some("items"), &p.items))),
        Reply::Search(p) => (None, Some((Some("items"), &p.items))),
        _ => (None, None),
    };
    let headers_of = |o: Object| o.get_named_property::<Object>("headers");
    // SAFETY: the reply is an object (an info, or a page of them) or an array of infos.
    let obj = || unsafe { Object::from_napi_value(env.raw(), v.raw()) };
    if let Some(m) = one.filter(|m| m.headers.contains_key("__proto__")) {
        own_proto(env, &mut headers_of(obj()?)?, &m.headers)?;
    }
    if let Some((field, ms)) = many.filter(|(_, ms)| ms.iter().any(|m| m.headers.contains_key("__proto__"))) {
        let items = match field {
            Some(f) => obj()?.get_named_property::<Object>(f)?,
            None => obj()?,
        };
        for (i, m) in ms.iter().enumerate().filter(|(_, m)| m.headers.contains_key("__proto__")) {
            own_proto(env, &mut headers_of(items.get_element::<Object>(i as u32)?)?, &m.headers)?;
        }
    }
    Ok(v)
}

/// A `RetryLater`'s delay (`{ retry_in_ms }` in wire form), read by the core's rule of every
/// retry delay, a nack's too (`redelay::limits::retry_delay`): refused naming `retryInMs` and
/// the range when it is negative or beyond 3650 days.
#[napi(ts_args_type = "a: object")]
pub fn check_retry_delay(env: &Env, a: Wire<RetryIn>) -> Result<()> {
    sync(env, redelay::limits::retry_delay(a.0.retry_in_ms).map(drop))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryIn {
    retry_in_ms: f64,
}

/// The bulk actions by their wire names (`deliver_now`; the core's list).
#[napi]
pub fn bulk_actions() -> Vec<&'static str> {
    redelay::BulkAction::ALL.iter().map(|a| a.name()).collect()
}

/// The words that make a wire field `*_ms` a time rather than a duration (the core's rule).
#[napi]
pub fn time_words() -> Vec<String> {
    redelay::time_words().iter().map(|w| w.to_string()).collect()
}

#[napi(ts_args_type = "url: string, opts: object")]
pub fn connect(env: &Env, url: String, opts: Wire<redelay::ClientOptions>) -> Result<PromiseRaw<'_, NativeClient>> {
    env.spawn_future_with_callback(async move { Ok(redelay::Client::connect_with(&url, opts.0).await) }, |env, r| {
        Ok(NativeClient { c: sync(env, r)? })
    })
}

#[napi]
pub struct NativeClient {
    pub(crate) c: redelay::Client,
}

#[napi]
impl NativeClient {
    #[napi(ts_args_type = "name: string, opts: object")]
    pub fn queue(&self, env: &Env, name: String, opts: Wire<redelay::QueueOptions>) -> Result<NativeQueue> {
        Ok(NativeQueue { q: sync(env, self.c.queue_with(&name, opts.0))? })
    }

    #[napi(getter)]
    pub fn prefix(&self) -> String {
        self.c.prefix().to_string()
    }

    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.c.is_closed()
    }

    /// The deliveries of the first of the queues `names` (in priority order, each opened with the
    /// shard count stored in Redis) that has due messages, as the queue's `fetch` gives them
    /// (see `redelay::Client::fetch_first_wire`).
    #[napi(ts_args_type = "names: string[], a: object")]
    pub fn fetch<'e>(
        &self,
        env: &'e Env,
        names: Vec<String>,
        a: Value,
    ) -> Result<PromiseRaw<'e, subscription::RawBatch>> {
        let c = self.c.clone();
        fetched(env, async move { c.fetch_first_wire(&names, a).await })
    }

    /// `queues`, `ping` or `close` (see `redelay::Client::call`).
    #[napi(ts_return_type = "Promise<unknown>")]
    pub fn call<'e>(&self, env: &'e Env, op: String) -> Result<JsPromise<'e>> {
        let c = self.c.clone();
        spawn(env, async move { c.call(&op).await })
    }
}

/// Runs a fetch on the runtime; the promise resolves to its deliveries in the columns of a
/// subscription batch, with a handle each.
fn fetched<'e, F>(env: &'e Env, fut: F) -> Result<PromiseRaw<'e, subscription::RawBatch>>
where
    F: Future<Output = redelay::Result<Vec<redelay::Delivery>>> + Send + 'static,
{
    env.spawn_future_with_callback(async move { Ok(fut.await) }, |env, r| {
        let batch = sync(env, r)?.into_iter().enumerate().map(|(i, d)| (i as u64, d)).collect();
        Ok(subscription::columns(batch, true))
    })
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

    #[napi(getter)]
    pub fn shards(&self) -> u32 {
        self.q.shards()
    }

    #[napi(ts_args_type = "body: Uint8Array, opts: object", ts_return_type = "Promise<unknown>")]
    pub fn publish<'e>(&self, env: &'e Env, b: Uint8Array, opts: Wire<PublishOptions>) -> Result<JsPromise<'e>> {
        let (q, m) = (self.q.clone(), sync(env, opts.0.message(b.to_vec()))?);
        spawn(env, async move { q.publish(m).await })
    }

    /// Message `i` is `bodies[i]` with `opts[i]`.
    #[napi(ts_args_type = "bodies: Uint8Array[], opts: object[]", ts_return_type = "Promise<unknown>")]
    pub fn publish_batch<'e>(&self, env: &'e Env, bodies: Vec<Uint8Array>, opts: Vec<Value>) -> Result<JsPromise<'e>> {
        let bodies = bodies.into_iter().map(|b| b.to_vec()).collect();
        let (q, msgs) = (self.q.clone(), sync(env, redelay::batch_from_wire(bodies, opts))?);
        spawn(env, async move { q.publish_batch(msgs).await })
    }

    /// Up to `max` leased deliveries in the columns of a subscription batch, with a handle each.
    #[napi(ts_args_type = "a: object")]
    pub fn fetch<'e>(&self, env: &'e Env, a: Value) -> Result<PromiseRaw<'e, subscription::RawBatch>> {
        let q = self.q.clone();
        fetched(env, async move { q.fetch_wire(a).await })
    }

    /// The core's message stream of this queue (`opts`: its `MessagesOptions` in wire form).
    #[napi(ts_args_type = "opts: object")]
    pub fn messages(&self, env: &Env, opts: Wire<redelay::MessagesOptions>) -> Result<NativeMessages> {
        Ok(NativeMessages { m: sync(env, self.q.messages(opts.0))? })
    }

    /// Every other operation, by the core's name, with its arguments in wire form; resolves to
    /// the result in wire form (see `redelay::Queue::call`).
    #[napi(ts_args_type = "op: string, a: object", ts_return_type = "Promise<unknown>")]
    pub fn call<'e>(&self, env: &'e Env, op: String, a: Value) -> Result<JsPromise<'e>> {
        let q = self.q.clone();
        env.spawn_future_with_callback(async move { Ok(q.call(&op, a).await) }, |env, r| reply(env, sync(env, r)?))
    }
}

/// A queue's message stream (the core's `Messages`). Garbage-collected unclosed, or finalized
/// when its environment is torn down (a worker thread terminated), it ends and releases what it
/// fetched and did not hand out, as `close` does, without waiting on JS.
#[napi]
pub struct NativeMessages {
    m: redelay::Messages,
}

impl Drop for NativeMessages {
    /// A `next()` that waits holds the stream too, and would go on fetching for nobody: the
    /// stream is abandoned (`redelay::Messages::abandon`), not merely let go of.
    fn drop(&mut self) {
        self.m.abandon();
    }
}

#[napi]
impl NativeMessages {
    /// The next message, as a batch of one in columns (as `fetch` gives them); an empty batch
    /// once the stream is closed.
    #[napi]
    pub fn next<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, subscription::RawBatch>> {
        let m = self.m.clone();
        fetched(env, async move { Ok(m.next().await?.into_iter().collect()) })
    }

    /// The core's close: the stream ends at once (a waiting `next` ends empty, as every later
    /// one does), and what was fetched and not handed out is released, waited for.
    #[napi(ts_return_type = "Promise<unknown>")]
    pub fn close<'e>(&self, env: &'e Env) -> Result<JsPromise<'e>> {
        let release = self.m.close();
        spawn(env, async move {
            release.await;
            Ok(())
        })
    }
}

#[napi]
pub struct NativeDelivery {
    d: redelay::Delivery,
}

#[napi]
impl NativeDelivery {
    /// `ack`, `nack`, `release` or `extend` of this delivery, with its arguments in wire form:
    /// sent now, on the JS thread (the core's `Delivery::call`), so that a handler's settle it
    /// did not await is not overtaken by its subscription's settle of the handler's outcome.
    #[napi(ts_args_type = "op: string, a: object", ts_return_type = "Promise<unknown>")]
    pub fn call<'e>(&self, env: &'e Env, op: String, a: Value) -> Result<JsPromise<'e>> {
        spawn(env, self.d.call(&op, a))
    }

    #[napi(getter)]
    pub fn settled(&self) -> bool {
        self.d.is_settled()
    }

    #[napi(getter)]
    pub fn lease_deadline(&self) -> f64 {
        wire::epoch_ms(self.d.lease_deadline())
    }
}
