//! Subscriptions on the core's bridge (`Queue::subscribe_foreign`). The core keeps the inbox,
//! settling, slots, leases, counters and close; this file supplies the `Wake` (a non-blocking
//! call of a ThreadsafeFunction: JS then calls `take()`) and the columnar batch.
//!
//! Per message, N-API is the expensive part, so a batch goes to JavaScript in columns — one
//! Buffer holding every body, the numbers in one Float64Array — and `redelay.js` builds the
//! `Message` objects; it reports outcomes with one `complete` call per tick.

use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use redelay::{wire, Delivery, Failure, Subscription, Wake};

use crate::errors::{spawn, sync, JsPromise};
use crate::{Headers, NativeClient, NativeDelivery, Wire};

/// Deliveries in columns; `redelay.js` builds a `Message` from row `i`.
#[napi(object, object_from_js = false)]
pub struct RawBatch {
    /// The queues of the batch; column 8 of `nums` is each delivery's index in it.
    pub queues: Vec<String>,
    /// Each delivery's key, for `complete` and `delivery`.
    pub slots: Float64Array,
    pub ids: Vec<String>,
    pub tokens: Vec<String>,
    /// Every body, one after the other; body `i` ends at `ends[i]`.
    pub bodies: Buffer,
    pub ends: Uint32Array,
    /// 9 numbers per delivery: attempt, maxAttempts, publishedAt, dueAt, deliveredAt (ms since
    /// the epoch), latenessMs, leaseDeadline (ms since the epoch), queue (index in `queues`),
    /// expiresAt (ms since the epoch; 0: none).
    pub nums: Float64Array,
    /// Each delivery's headers; absent when none in the batch has any.
    #[napi(ts_type = "Array<Record<string, string>>")]
    pub headers: Option<Vec<Headers>>,
    /// Each delivery's previous failure; absent when none in the batch has one.
    pub last_errors: Option<Vec<Option<String>>>,
    /// Each delivery's handle (from `fetch`; a subscription's are asked for by slot).
    pub handles: Option<Vec<NativeDelivery>>,
}

pub(crate) fn columns(batch: Vec<(u64, Delivery)>, handles: bool) -> RawBatch {
    let (mut queues, mut nums, mut end) = (Vec::<String>::new(), Vec::with_capacity(batch.len() * 9), 0);
    for (_, d) in &batch {
        let q = queues.iter().position(|q| q == d.queue()).unwrap_or_else(|| {
            queues.push(d.queue().to_string());
            queues.len() - 1
        });
        let (published, due, delivered) =
            (wire::epoch_ms(d.published_at()), wire::epoch_ms(d.due_at()), wire::epoch_ms(d.delivered_at()));
        let lateness = d.lateness().as_secs_f64() * 1000.0;
        let (attempt, max) = (d.attempt() as f64, d.max_attempts() as f64);
        let expires = d.expires_at().map_or(0.0, wire::epoch_ms);
        let deadline = wire::epoch_ms(d.lease_deadline());
        nums.extend([attempt, max, published, due, delivered, lateness, deadline, q as f64, expires]);
    }
    let all = |f: fn(&Delivery) -> bool| batch.iter().any(|(_, d)| f(d));
    RawBatch {
        queues,
        slots: Float64Array::new(batch.iter().map(|(k, _)| *k as f64).collect()),
        ids: batch.iter().map(|(_, d)| d.id().to_string()).collect(),
        tokens: batch.iter().map(|(_, d)| d.token().to_string()).collect(),
        bodies: Buffer::from(batch.iter().flat_map(|(_, d)| d.body().iter().copied()).collect::<Vec<u8>>()),
        ends: Uint32Array::new(batch.iter().map(|(_, d)| (end += d.body().len() as u32, end).1).collect()),
        nums: Float64Array::new(nums),
        headers: all(|d| !d.headers().is_empty())
            .then(|| batch.iter().map(|(_, d)| Headers(d.headers().clone())).collect()),
        last_errors: all(|d| d.last_error().is_some())
            .then(|| batch.iter().map(|(_, d)| d.last_error().map(str::to_string)).collect()),
        handles: handles.then(|| batch.into_iter().map(|(_, d)| NativeDelivery { d }).collect()),
    }
}

type Tsfn = ThreadsafeFunction<(), (), (), Status, false>;

/// Wakes the JS thread: queues a call of the JS `wake` function and returns at once. It holds
/// no lock of the core's and calls nothing of the subscription. False once the function was
/// released or Node refuses the call (the environment is going away): the core then gives back
/// what waits and stops.
struct JsWake {
    tsfn: Mutex<Option<Tsfn>>,
    keep: Mutex<Keep>,
}

#[derive(Default)]
struct Keep {
    /// Keeps the subscription running when JS (or its whole environment) lets go of it.
    sub: Option<Arc<Subscription>>,
    /// The environment was torn down: a subscription that starts now is abandoned at once.
    gone: bool,
}

impl Wake for JsWake {
    fn wake(&self) -> bool {
        let tsfn = self.tsfn.lock().unwrap();
        tsfn.as_ref().is_some_and(|t| t.call((), ThreadsafeFunctionCallMode::NonBlocking) == Status::Ok)
    }

    /// Called once by the core when the subscription closes, however it closed: lets go of the
    /// JS function (so that the process can exit) and of the subscription.
    fn closed(&self) {
        self.tsfn.lock().unwrap().take();
        self.keep.lock().unwrap().sub.take();
    }
}

impl JsWake {
    /// Keeps `sub` running, or abandons it when its environment is already gone.
    fn keep(&self, sub: &Arc<Subscription>) {
        let gone = {
            let mut k = self.keep.lock().unwrap();
            if !k.gone {
                k.sub = Some(sub.clone());
            }
            k.gone
        };
        if gone {
            sub.abandon();
        } else if sub.is_closed() {
            self.keep.lock().unwrap().sub.take(); // closed meanwhile: `closed` may have run already
        }
    }
}

impl crate::teardown::Abandon for JsWake {
    /// The environment is gone: nothing will take or report again, so the core closes the
    /// subscription without waiting on JS (`Subscription::abandon`).
    fn abandon(&self) {
        let sub = {
            let mut k = self.keep.lock().unwrap();
            k.gone = true;
            k.sub.clone()
        };
        if let Some(sub) = sub {
            sub.abandon();
        }
    }
}

#[napi]
impl NativeClient {
    /// A subscription over the queues `names`, in strict priority in this order or by `weights`
    /// (one per queue): `wake` is called on the JS thread when deliveries wait (JS then calls
    /// `take()` and reports with `complete`); it must not throw, and may come before the promise
    /// resolves (JS takes once then). Rejects, letting go of `wake`, when the core refuses.
    /// `shards` is the shard count every queue is opened with (a queue handle's own, for its
    /// `subscribe`); without it each queue is opened with the count stored in Redis.
    #[napi(
        ts_args_type = "names: string[], shards: number | null, weights: number[] | null, wake: () => void, opts: object, unref: boolean"
    )]
    #[allow(clippy::too_many_arguments)]
    pub fn subscription<'e>(
        &self,
        env: &'e Env,
        names: Vec<String>,
        shards: Option<u32>,
        weights: Option<Vec<i64>>,
        wake: Function<'_, (), ()>,
        opts: Wire<redelay::SubscribeOptions>,
        unref: bool,
    ) -> Result<PromiseRaw<'e, NativeSubscription>> {
        let client = self.c.clone();
        let names = names.into_iter().map(|n| (n, shards)).collect();
        let mut tsfn: Tsfn = wake.build_threadsafe_function().callee_handled::<false>().build()?;
        if unref {
            #[allow(deprecated)]
            tsfn.unref(env)?;
        }
        let wake = Arc::new(JsWake { tsfn: Mutex::new(Some(tsfn)), keep: Mutex::default() });
        crate::teardown::track(env, &wake)?;
        let started = async move {
            let qs = client.queues_named(names, weights).await.inspect_err(|_| wake.closed())?;
            let sub = Arc::new(qs.subscribe_foreign(wake.clone(), opts.0).await.inspect_err(|_| wake.closed())?);
            wake.keep(&sub);
            Ok(sub)
        };
        env.spawn_future_with_callback(async move { Ok(started.await) }, |env, r| {
            Ok(NativeSubscription { sub: sync(env, r)? })
        })
    }
}

#[napi]
pub struct NativeSubscription {
    sub: Arc<Subscription>,
}

#[napi]
impl NativeSubscription {
    /// What waits in the inbox, in columns (on the JS thread, after a wake).
    #[napi]
    pub fn take(&self) -> RawBatch {
        columns(self.sub.take(), false)
    }

    /// Reports finished handlers: `slots[i]` succeeded when `reasons[i]` is null, else failed
    /// with that reason, to be retried after `retryInMs[i]` (NaN: the message's backoff).
    /// Unknown slots are ignored.
    #[napi]
    pub fn complete(&self, slots: Vec<f64>, reasons: Vec<Option<String>>, retry_in_ms: Vec<f64>) {
        let failure = |reason, r: f64| Failure::with_retry_ms(reason, Some(r));
        let out = slots.iter().zip(reasons).zip(&retry_in_ms);
        self.sub.complete(
            out.map(|((&k, reason), &r)| (k as u64, reason.map_or(Ok(()), |s| Err(failure(s, r))))).collect(),
        );
    }

    /// The delivery in `slot`, for `message.ack()` and friends while its handler runs; null
    /// once its outcome was reported.
    #[napi]
    pub fn delivery(&self, slot: f64) -> Option<NativeDelivery> {
        Some(NativeDelivery { d: self.sub.delivery(slot as u64)? })
    }

    /// Stops fetching, gives back what did not start, waits for running handlers (up to the
    /// drain timeout) and lets go of the JS function. Idempotent.
    #[napi(ts_return_type = "Promise<unknown>")]
    pub fn close<'e>(&self, env: &'e Env) -> Result<JsPromise<'e>> {
        let sub = self.sub.clone();
        spawn(env, async move {
            sub.close().await;
            Ok(())
        })
    }

    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.sub.is_closed()
    }

    #[napi(getter)]
    pub fn queues(&self) -> Vec<String> {
        self.sub.queue_names()
    }

    /// The latest fetch or settle error, as calls reject with it; null when none.
    #[napi(getter, ts_return_type = "Error | null")]
    pub fn last_error<'e>(&self, env: &'e Env) -> Result<Option<Object<'e>>> {
        self.sub.last_error().map(|e| crate::errors::error_object(env, e)).transpose()
    }

    /// The counts (`redelay::Counters`) in the core's wire form.
    #[napi(ts_return_type = "unknown")]
    pub fn counters<'e>(&self, env: &'e Env) -> Result<Unknown<'e>> {
        env.to_js_value(&self.sub.counters())
    }
}
