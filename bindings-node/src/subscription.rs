//! Subscriptions: the core's batch consumer (`Queue::subscribe_batch`) driving a JS dispatch
//! function on the event loop.
//!
//! Per message, N-API is the expensive part: an object with a dozen properties, a class
//! instance and a Buffer each cost more than the Redis work of the message. So deliveries go to
//! JavaScript in columns — one object per batch, one Buffer holding every body, the numbers in
//! one Float64Array — and `redelay.js` builds the `Message` objects in JS. Outcomes come back the
//! same way: JS gathers the slots of finished handlers and reports them with one `complete` call
//! per tick, which the core settles with one script call.
//!
//! Each delivery is known to JS by the key the core gave it (its "slot"); `delivery(slot)`
//! gives JS a `NativeDelivery` for `message.ack()` and friends, until the outcome is reported.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeCallContext, ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use redelay::{Completer, Delivery};

use crate::{closed_client, count_usize, ms, time_to_ms, to_js, ClientState, NativeDelivery, RawCounters};

/// Numbers per delivery in `RawBatch.nums`.
const NUMS: usize = 7;

/// One batch of deliveries, in columns; `redelay.js` builds a `Message` from row `i`.
#[napi(object, object_from_js = false)]
pub struct RawBatch {
    pub queue: String,
    /// Each delivery's key (given by the core), for `complete` and `delivery`.
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
}

/// Calls the JS dispatch function with the next batch (built on the JS thread).
type Tsfn = ThreadsafeFunction<(), (), RawBatch, Status, false>;

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

fn options(opts: Option<RawSubscribeOptions>) -> Result<(redelay::SubscribeOptions, bool)> {
    let mut so = redelay::SubscribeOptions::default();
    let Some(o) = opts else { return Ok((so, false)) };
    if let Some(c) = o.concurrency {
        so.concurrency = count_usize("concurrency", c)?;
    }
    if let Some(p) = o.prefetch {
        so.prefetch = Some(count_usize("prefetch", p)?);
    }
    if let Some(t) = o.ttr_ms {
        so.ttr = Some(ms("ttrMs", t)?);
    }
    if let Some(t) = o.drain_timeout_ms {
        so.drain_timeout = ms("drainTimeoutMs", t)?;
    }
    if let Some(t) = o.max_idle_ms {
        so.max_idle = ms("maxIdleMs", t)?;
    }
    Ok((so, o.unref.unwrap_or(false)))
}

/// The batch handler: queues what the core dispatches and wakes the JS thread once per batch
/// (deliveries that arrive while a call is queued join it).
struct JsHandler {
    /// The JS dispatch function; taken (released) on close so that the process can exit.
    tsfn: Mutex<Option<Tsfn>>,
    inbox: Arc<Inbox>,
}

#[derive(Default)]
struct Inbox {
    pending: Mutex<Vec<(u64, Delivery)>>,
    scheduled: AtomicBool,
    completer: Mutex<Option<Completer>>,
}

impl redelay::BatchHandler for JsHandler {
    fn dispatch(&self, batch: Vec<(u64, Delivery)>, completer: &Completer) {
        let mut c = self.inbox.completer.lock().unwrap();
        if c.is_none() {
            *c = Some(completer.clone());
        }
        drop(c);
        let tsfn = self.tsfn.lock().unwrap();
        let Some(tsfn) = tsfn.as_ref() else {
            // Closed: JS will never see these.
            completer.give_back(batch.into_iter().map(|(k, _)| k).collect());
            return;
        };
        self.inbox.pending.lock().unwrap().extend(batch);
        if !self.inbox.scheduled.swap(true, Ordering::SeqCst) {
            let status = tsfn.call((), ThreadsafeFunctionCallMode::NonBlocking);
            if status != Status::Ok {
                // The JS side is going away: hand the messages back unprocessed.
                self.inbox.scheduled.store(false, Ordering::SeqCst);
                let left = std::mem::take(&mut *self.inbox.pending.lock().unwrap());
                completer.give_back(left.into_iter().map(|(k, _)| k).collect());
            }
        }
    }
}

impl Inbox {
    /// On the JS thread: takes what is pending and lays it out in columns.
    fn take_batch(&self) -> RawBatch {
        // Clear the flag before taking: a delivery queued after the take schedules a new call,
        // one queued before it is in this batch.
        self.scheduled.store(false, Ordering::SeqCst);
        let batch = std::mem::take(&mut *self.pending.lock().unwrap());
        let n = batch.len();
        let mut slots = Vec::with_capacity(n);
        let mut ids = Vec::with_capacity(n);
        let mut tokens = Vec::with_capacity(n);
        let mut bodies = Vec::with_capacity(batch.iter().map(|(_, d)| d.body().len()).sum());
        let mut ends = Vec::with_capacity(n);
        let mut nums = Vec::with_capacity(n * NUMS);
        let any_headers = batch.iter().any(|(_, d)| !d.headers().is_empty());
        let any_errors = batch.iter().any(|(_, d)| d.last_error().is_some());
        let mut headers = Vec::with_capacity(if any_headers { n } else { 0 });
        let mut last_errors = Vec::with_capacity(if any_errors { n } else { 0 });
        let queue = batch.first().map(|(_, d)| d.queue().to_string()).unwrap_or_default();
        for (key, d) in batch {
            slots.push(key as f64);
            ids.push(d.id().to_string());
            tokens.push(d.token().to_string());
            bodies.extend_from_slice(d.body());
            ends.push(bodies.len() as u32);
            nums.extend_from_slice(&[
                d.attempt() as f64,
                d.max_attempts() as f64,
                time_to_ms(d.published_at()),
                time_to_ms(d.due_at()),
                time_to_ms(d.delivered_at()),
                d.lateness().as_secs_f64() * 1000.0,
                time_to_ms(d.lease_deadline()),
            ]);
            if any_headers {
                headers.push(d.headers().iter().map(|(k, v)| (k.clone(), v.clone())).collect());
            }
            if any_errors {
                last_errors.push(d.last_error().map(str::to_string));
            }
        }
        RawBatch {
            queue,
            slots: Float64Array::new(slots),
            ids,
            tokens,
            bodies: Buffer::from(bodies),
            ends: Uint32Array::new(ends),
            nums: Float64Array::new(nums),
            headers: any_headers.then_some(headers),
            last_errors: any_errors.then_some(last_errors),
        }
    }
}

/// Subscriptions that are running, so that one keeps running when JavaScript drops every
/// reference to it (it stops on close, or with the process).
static OPEN: LazyLock<Mutex<HashMap<u64, Arc<SubState>>>> = LazyLock::new(|| Mutex::new(HashMap::new()));
static NEXT_SUB: AtomicU64 = AtomicU64::new(1);

pub(crate) struct SubState {
    id: u64,
    q: redelay::Queue,
    client: Arc<ClientState>,
    handler: Arc<JsHandler>,
    opts: Mutex<Option<redelay::SubscribeOptions>>,
    sub: tokio::sync::OnceCell<redelay::Subscription>,
    closing: AtomicBool,
    done: tokio::sync::OnceCell<()>,
}

impl SubState {
    pub(crate) async fn close(&self) {
        self.closing.store(true, Ordering::Release);
        self.done
            .get_or_init(|| async {
                if let Some(sub) = self.sub.get() {
                    sub.close().await;
                }
                self.release();
                OPEN.lock().unwrap().remove(&self.id);
            })
            .await;
    }

    /// Lets go of the JS function, so that the process can exit. (The core's close already
    /// forgot what JS still holds.)
    fn release(&self) {
        self.handler.tsfn.lock().unwrap().take();
        self.handler.inbox.pending.lock().unwrap().clear();
    }
}

/// Creates a subscription that is not started yet (`start()` starts it): JS holds it before the
/// first batch can arrive, and reports outcomes through it.
pub(crate) fn create(
    env: &Env,
    q: redelay::Queue,
    client: Arc<ClientState>,
    dispatch: Function<'_, RawBatch, ()>,
    opts: Option<RawSubscribeOptions>,
) -> Result<NativeSubscription> {
    client.check()?;
    let (so, unref) = options(opts)?;
    let inbox = Arc::new(Inbox::default());
    let ib = inbox.clone();
    let mut tsfn: Tsfn = dispatch
        .build_threadsafe_function::<()>()
        .callee_handled::<false>()
        .build_callback(move |_ctx: ThreadsafeCallContext<()>| Ok(ib.take_batch()))?;
    if unref {
        #[allow(deprecated)]
        tsfn.unref(env)?;
    }
    let s = Arc::new(SubState {
        id: NEXT_SUB.fetch_add(1, Ordering::Relaxed),
        q,
        client,
        handler: Arc::new(JsHandler { tsfn: Mutex::new(Some(tsfn)), inbox }),
        opts: Mutex::new(Some(so)),
        sub: tokio::sync::OnceCell::new(),
        closing: AtomicBool::new(false),
        done: tokio::sync::OnceCell::new(),
    });
    Ok(NativeSubscription { s })
}

#[napi]
pub struct NativeSubscription {
    s: Arc<SubState>,
}

impl NativeSubscription {
    fn completer(&self) -> Option<Completer> {
        self.s.handler.inbox.completer.lock().unwrap().clone()
    }
}

#[napi]
impl NativeSubscription {
    /// Starts fetching. Rejects (and lets go of the dispatch function) when Redis cannot be
    /// reached or the options are refused by the core.
    #[napi]
    pub async fn start(&self) -> Result<()> {
        let s = self.s.clone();
        let Some(opts) = s.opts.lock().unwrap().take() else {
            return Err(to_js(redelay::Error::invalid("subscription: already started")));
        };
        let sub = match s.q.subscribe_batch(s.handler.clone(), opts).await {
            Ok(sub) => sub,
            Err(e) => {
                s.release();
                return Err(to_js(e));
            }
        };
        let _ = s.sub.set(sub);
        OPEN.lock().unwrap().insert(s.id, s.clone());
        s.client.subs.lock().unwrap().push(Arc::downgrade(&s));
        if s.client.closed.load(Ordering::Acquire) || s.closing.load(Ordering::Acquire) {
            // Closed while starting.
            s.close().await;
            return Err(closed_client());
        }
        Ok(())
    }

    /// Stops fetching, hands back what did not start, waits for running handlers (up to the
    /// drain timeout) and lets go of the JS function, so that the process can exit. Calling it
    /// again is a no-op.
    #[napi]
    pub async fn close(&self) -> Result<()> {
        self.s.close().await;
        Ok(())
    }

    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.s.closing.load(Ordering::Acquire) || self.s.sub.get().is_some_and(|s| s.is_closed())
    }

    #[napi]
    pub fn counters(&self) -> RawCounters {
        let c = self.s.sub.get().map(|s| s.counters()).unwrap_or_default();
        RawCounters {
            delivered: c.delivered as f64,
            acked: c.acked as f64,
            nacked: c.nacked as f64,
            lease_lost: c.lease_lost as f64,
            errors: c.errors as f64,
        }
    }

    /// Reports finished handlers: `acks` succeeded; `fails[i]` failed with `reasons[i]`, to be
    /// retried after `retryInMs[i]` (NaN: the message's backoff). Unknown slots are ignored.
    #[napi]
    pub fn complete(&self, acks: Vec<f64>, fails: Vec<f64>, reasons: Vec<String>, retry_in_ms: Vec<f64>) {
        let Some(completer) = self.completer() else { return };
        let mut out = Vec::with_capacity(acks.len() + fails.len());
        out.extend(acks.iter().map(|&slot| (slot as u64, Ok(()))));
        for (i, &slot) in fails.iter().enumerate() {
            let reason = reasons.get(i).cloned().unwrap_or_default();
            let failure = match retry_in_ms.get(i) {
                Some(&r) if r.is_finite() && r >= 0.0 => {
                    redelay::Failure::retry_in(reason, Duration::from_micros((r.min(1e15) * 1000.0) as u64))
                }
                _ => redelay::Failure::new(reason),
            };
            out.push((slot as u64, Err(failure)));
        }
        completer.complete(out);
    }

    /// The delivery in `slot`, for `message.ack()` and friends while its handler runs; null
    /// once its outcome was reported.
    #[napi]
    pub fn delivery(&self, slot: f64) -> Option<NativeDelivery> {
        let d = self.completer()?.delivery(slot as u64)?;
        Some(NativeDelivery { d })
    }
}
