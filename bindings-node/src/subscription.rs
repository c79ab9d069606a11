//! Subscriptions on the core's bridge (`Queue::subscribe_foreign`). The core keeps the inbox,
//! settling, slots, leases, counters and close; this file supplies the `Wake` (a non-blocking
//! call of a ThreadsafeFunction: JS then calls `take()`) and the columnar batch.
//!
//! Per message, N-API is the expensive part, so a batch goes to JavaScript in columns — one
//! Buffer holding every body, the numbers in one Float64Array — and `redelay.js` builds the
//! `Message` objects; it reports outcomes with one `complete` call per tick.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use redelay::{Delivery, Failure, Subscription, Wake};

use crate::errors::{invalid, spawn};
use crate::{count, opt_ms, time_ms, NativeDelivery};

/// Deliveries in columns; `redelay.js` builds a `Message` from row `i`.
#[napi(object, object_from_js = false)]
pub struct RawBatch {
    pub queue: String,
    /// Each delivery's key, for `complete` and `delivery`.
    pub slots: Float64Array,
    pub ids: Vec<String>,
    pub tokens: Vec<String>,
    /// Every body, one after the other; body `i` ends at `ends[i]`.
    pub bodies: Buffer,
    pub ends: Uint32Array,
    /// 7 numbers per delivery: attempt, maxAttempts, publishedAt, dueAt, deliveredAt (ms since
    /// the epoch), latenessMs, leaseDeadline (ms since the epoch).
    pub nums: Float64Array,
    /// Each delivery's headers; absent when none in the batch has any.
    pub headers: Option<Vec<HashMap<String, String>>>,
    /// Each delivery's previous failure; absent when none in the batch has one.
    pub last_errors: Option<Vec<Option<String>>>,
    /// Each delivery's handle (from `fetch`; a subscription's are asked for by slot).
    pub handles: Option<Vec<NativeDelivery>>,
}

pub(crate) fn columns(batch: Vec<(u64, Delivery)>, handles: bool) -> RawBatch {
    let n = batch.len();
    let any_headers = batch.iter().any(|(_, d)| !d.headers().is_empty());
    let any_errors = batch.iter().any(|(_, d)| d.last_error().is_some());
    let mut b = RawBatch {
        queue: batch.first().map(|(_, d)| d.queue().to_string()).unwrap_or_default(),
        slots: Float64Array::new(batch.iter().map(|(k, _)| *k as f64).collect()),
        ids: Vec::with_capacity(n),
        tokens: Vec::with_capacity(n),
        bodies: Buffer::from(batch.iter().flat_map(|(_, d)| d.body().iter().copied()).collect::<Vec<u8>>()),
        ends: Uint32Array::new(Vec::new()),
        nums: Float64Array::new(Vec::new()),
        headers: any_headers.then(|| Vec::with_capacity(n)),
        last_errors: any_errors.then(|| Vec::with_capacity(n)),
        handles: handles.then(|| Vec::with_capacity(n)),
    };
    let (mut ends, mut nums, mut end) = (Vec::with_capacity(n), Vec::with_capacity(n * 7), 0u32);
    for (_, d) in batch {
        b.ids.push(d.id().to_string());
        b.tokens.push(d.token().to_string());
        end += d.body().len() as u32;
        ends.push(end);
        nums.extend_from_slice(&[
            d.attempt() as f64,
            d.max_attempts() as f64,
            time_ms(d.published_at()),
            time_ms(d.due_at()),
            time_ms(d.delivered_at()),
            d.lateness().as_secs_f64() * 1000.0,
            time_ms(d.lease_deadline()),
        ]);
        if let Some(h) = &mut b.headers {
            h.push(d.headers().iter().map(|(k, v)| (k.clone(), v.clone())).collect());
        }
        if let Some(e) = &mut b.last_errors {
            e.push(d.last_error().map(str::to_string));
        }
        if let Some(h) = &mut b.handles {
            h.push(NativeDelivery { d });
        }
    }
    b.ends = Uint32Array::new(ends);
    b.nums = Float64Array::new(nums);
    b
}

#[napi(object)]
pub struct RawSubscribeOptions {
    pub concurrency: Option<f64>,
    pub prefetch: Option<f64>,
    pub ttr_ms: Option<f64>,
    pub drain_timeout_ms: Option<f64>,
    pub max_idle_ms: Option<f64>,
    /// Do not keep the Node.js process alive for this subscription.
    pub unref: Option<bool>,
}

fn options(o: RawSubscribeOptions) -> Result<redelay::SubscribeOptions> {
    let mut so = redelay::SubscribeOptions::default();
    if let Some(c) = o.concurrency {
        so.concurrency = count("concurrency", c)?;
    }
    so.prefetch = o.prefetch.map(|p| count("prefetch", p)).transpose()?;
    so.ttr = opt_ms("ttrMs", o.ttr_ms)?;
    so.drain_timeout = opt_ms("drainTimeoutMs", o.drain_timeout_ms)?.unwrap_or(so.drain_timeout);
    so.max_idle = opt_ms("maxIdleMs", o.max_idle_ms)?.unwrap_or(so.max_idle);
    Ok(so)
}

type Tsfn = ThreadsafeFunction<(), (), (), Status, false>;

/// Wakes the JS thread: queues a call of the JS `wake` function and returns at once. It holds
/// no lock of the core's and calls nothing of the subscription. False once the function was
/// released or Node refuses the call (the environment is going away): the core then gives back
/// what waits and stops.
struct JsWake {
    tsfn: Mutex<Option<Tsfn>>,
    /// Keeps the subscription running when JS (or its whole environment) lets go of it.
    keep: Mutex<Option<Arc<Subscription>>>,
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
        self.keep.lock().unwrap().take();
    }
}

pub(crate) fn create(
    env: &Env,
    q: redelay::Queue,
    wake: Function<'_, (), ()>,
    opts: Option<RawSubscribeOptions>,
) -> Result<NativeSubscription> {
    let unref = opts.as_ref().and_then(|o| o.unref).unwrap_or(false);
    let so = opts.map(options).transpose()?.unwrap_or_default();
    let mut tsfn: Tsfn = wake.build_threadsafe_function().callee_handled::<false>().build()?;
    if unref {
        #[allow(deprecated)]
        tsfn.unref(env)?;
    }
    Ok(NativeSubscription {
        q,
        opts: Mutex::new(Some(so)),
        wake: Arc::new(JsWake { tsfn: Mutex::new(Some(tsfn)), keep: Mutex::default() }),
        sub: Arc::new(OnceLock::new()),
    })
}

#[napi]
pub struct NativeSubscription {
    q: redelay::Queue,
    opts: Mutex<Option<redelay::SubscribeOptions>>,
    wake: Arc<JsWake>,
    sub: Arc<OnceLock<Arc<Subscription>>>,
}

#[napi]
impl NativeSubscription {
    /// Starts fetching; rejects (and lets go of the JS function) when the core refuses.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn start<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, ()>> {
        let opts = self.opts.lock().unwrap().take().ok_or_else(|| invalid("subscription: already started"))?;
        let (q, wake, cell) = (self.q.clone(), self.wake.clone(), self.sub.clone());
        spawn(env, async move {
            let sub = q.subscribe_foreign(wake.clone(), opts).await.inspect_err(|_| wake.closed())?;
            let sub = Arc::new(sub);
            let _ = cell.set(sub.clone());
            *wake.keep.lock().unwrap() = Some(sub.clone());
            if sub.is_closed() {
                wake.keep.lock().unwrap().take(); // closed meanwhile: `closed` may have run
            }
            Ok(())
        })
    }

    /// What waits in the inbox, in columns (on the JS thread, after a wake).
    #[napi]
    pub fn take(&self) -> RawBatch {
        columns(self.sub.get().map(|s| s.take()).unwrap_or_default(), false)
    }

    /// Reports finished handlers: `acks` succeeded; `fails[i]` failed with `reasons[i]`, to be
    /// retried after `retryInMs[i]` (NaN: the message's backoff). Unknown slots are ignored.
    #[napi]
    pub fn complete(&self, acks: Vec<f64>, fails: Vec<f64>, reasons: Vec<String>, retry_in_ms: Vec<f64>) {
        let Some(sub) = self.sub.get() else { return };
        let mut out: Vec<(u64, std::result::Result<(), Failure>)> = acks.iter().map(|&k| (k as u64, Ok(()))).collect();
        for ((&k, reason), &r) in fails.iter().zip(reasons).zip(&retry_in_ms) {
            let f = match crate::ms("retryInMs", r) {
                Ok(d) => Failure::retry_in(reason, d),
                Err(_) => Failure::new(reason),
            };
            out.push((k as u64, Err(f)));
        }
        sub.complete(out);
    }

    /// The delivery in `slot`, for `message.ack()` and friends while its handler runs; null
    /// once its outcome was reported.
    #[napi]
    pub fn delivery(&self, slot: f64) -> Option<NativeDelivery> {
        Some(NativeDelivery { d: self.sub.get()?.delivery(slot as u64)? })
    }

    /// Stops fetching, gives back what did not start, waits for running handlers (up to the
    /// drain timeout) and lets go of the JS function. Idempotent.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, ()>> {
        self.opts.lock().unwrap().take();
        let (sub, wake) = (self.sub.get().cloned(), self.wake.clone());
        spawn(env, async move {
            match sub {
                Some(sub) => sub.close().await,
                None => wake.closed(),
            }
            Ok(())
        })
    }

    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.sub.get().map_or_else(|| self.opts.lock().unwrap().is_none(), |s| s.is_closed())
    }

    #[napi]
    pub fn counters(&self) -> RawCounters {
        let c = self.sub.get().map(|s| s.counters()).unwrap_or_default();
        RawCounters {
            delivered: c.delivered as f64,
            acked: c.acked as f64,
            nacked: c.nacked as f64,
            lease_lost: c.lease_lost as f64,
            errors: c.errors as f64,
        }
    }
}

#[napi(object)]
pub struct RawCounters {
    pub delivered: f64,
    pub acked: f64,
    pub nacked: f64,
    pub lease_lost: f64,
    pub errors: f64,
}
