//! The consumer runtime shared by every binding: `Queue::subscribe`.
//!
//! One fetch loop per subscription leases as many messages as it has free slots
//! (`concurrency` running + `prefetch` waiting), one task per message runs the handler and
//! settles the message from its outcome (with a [`BatchHandler`], deliveries go out and
//! outcomes come back in batches instead: `batch.rs`), and a lease keeper extends the leases of messages held
//! (running or waiting) before they run out. With nothing to do the loop sleeps until the next
//! due time or lease deadline that fetch reported (mapped from the Redis clock to a local
//! timer), capped by `max_idle`, and is woken early by the queue's `wake` channel. No Redis
//! blocking command is used for timing.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use crate::batch::{self, BatchHandler, BatchState};
use crate::delivery::Delivery;
use crate::error::{Error, Result};
use crate::limits;
pub use crate::options::SubscribeOptions;
use crate::queue::Queue;
use crate::settle::{Op, Settled};

/// Most leases one fetch call of a subscription takes.
const FETCH_PER_CALL: usize = 250;

/// A failed handler outcome: the message is nacked with `reason`, and retried after
/// `retry_in` or the message's backoff. Any `std::error::Error` converts into it, so `?` works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    reason: String,
    retry_in: Option<Duration>,
}

impl Failure {
    /// Retry after the message's exponential backoff.
    pub fn new(reason: impl Into<String>) -> Self {
        Failure { reason: reason.into(), retry_in: None }
    }
    /// "Retry later": retry after `delay`.
    pub fn retry_in(reason: impl Into<String>, delay: Duration) -> Self {
        Failure { reason: reason.into(), retry_in: Some(delay) }
    }
    /// The reason stored with the message.
    pub fn reason(&self) -> &str {
        &self.reason
    }
    /// The explicit retry delay, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_in
    }
}

impl<E: std::error::Error> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::new(e.to_string())
    }
}

/// The future a handler returns.
pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<(), Failure>> + Send + 'static>>;

/// Processes one delivery. Returning `Ok` acks it, `Err` nacks it (unless the handler settled
/// it itself); a panic nacks it too. Closures `Fn(Delivery) -> impl Future<Output =
/// Result<(), E>>` with `E: Into<Failure>` are handlers; bindings implement this trait.
pub trait Handler: Send + Sync + 'static {
    fn handle(&self, delivery: Delivery) -> HandlerFuture;
}

impl<F, Fut, E> Handler for F
where
    F: Fn(Delivery) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), E>> + Send + 'static,
    E: Into<Failure>,
{
    fn handle(&self, delivery: Delivery) -> HandlerFuture {
        let fut = self(delivery);
        Box::pin(async move { fut.await.map_err(Into::into) })
    }
}

/// Counts kept by a subscription.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Messages leased by this subscription.
    pub delivered: u64,
    /// Handler runs that finished (returned, failed or panicked).
    pub handled: u64,
    /// Acknowledged after the handler returned Ok (or by the handler itself).
    pub acked: u64,
    /// Nacked after the handler failed (retries and dead letters).
    pub nacked: u64,
    /// Settles refused because the lease had been lost.
    pub lease_lost: u64,
    /// Fetch or settle calls that failed (connection, timeout ...); the loop retries.
    pub errors: u64,
}

#[derive(Default)]
pub(crate) struct AtomicCounters {
    pub delivered: AtomicU64,
    pub handled: AtomicU64,
    pub acked: AtomicU64,
    pub nacked: AtomicU64,
    pub lease_lost: AtomicU64,
    pub errors: AtomicU64,
}

/// What a settle request was, for the counters.
pub(crate) enum Settle {
    Ack,
    Nack,
    /// Handed back unprocessed: not counted.
    Release,
}

/// How a subscription runs its handler.
enum Mode {
    /// One task per delivery, awaiting the handler's future.
    Each(Arc<dyn Handler>),
    /// Batches handed over and reported back (see `batch.rs`).
    Batch(Arc<dyn BatchHandler>),
}

pub(crate) struct Shared {
    pub queue: Queue,
    mode: Mode,
    pub opts: SubscribeOptions,
    closing: watch::Sender<bool>,
    /// Handler slots (per-delivery mode).
    running: Arc<Semaphore>,
    /// Leases held, running or waiting: `concurrency + prefetch` slots.
    pub inflight: Arc<Semaphore>,
    /// Leases held (running or waiting), by lease token.
    pub held: Mutex<HashMap<String, Delivery>>,
    /// Latest (local instant, Redis µs) pair, to estimate the Redis clock.
    clock: Mutex<(Instant, i64)>,
    pub counters: AtomicCounters,
    /// Tells the lease keeper that new leases are held.
    keeper_wake: tokio::sync::Notify,
    last_error: Mutex<Option<Error>>,
    /// Batch mode: waiting deliveries and slot counts.
    pub batch: Mutex<BatchState>,
    /// Batch mode: notified when reports or settles finish (close waits on it).
    pub idle: tokio::sync::Notify,
    /// The fetch loop, until close awaits it.
    fetcher: tokio::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl crate::client::Closes for Shared {
    fn close_and_drain(&self) -> futures_util::future::BoxFuture<'_, ()> {
        Box::pin(async move {
            self.closing.send_replace(true);
            let mut fetcher = self.fetcher.lock().await;
            if let Some(h) = fetcher.take() {
                let _ = h.await;
            }
        })
    }
}

impl Shared {
    async fn closed(&self) {
        let mut rx = self.closing.subscribe();
        let _ = rx.wait_for(|c| *c).await;
    }
    fn is_closing(&self) -> bool {
        *self.closing.borrow()
    }
    /// Stops fetching; the loop then closes the subscription (drain included).
    pub fn stop(&self) {
        self.closing.send_replace(true);
    }
    fn redis_now_ms(&self) -> i64 {
        let (at, us) = *self.clock.lock().unwrap();
        us / 1000 + at.elapsed().as_millis() as i64
    }
    fn lease_ttr(&self, d: &Delivery) -> Duration {
        self.opts.ttr.unwrap_or(Duration::from_millis(d.inner.record.ttr_ms))
    }
    /// Counts one settle request's result.
    pub fn count_settle(&self, kind: Settle, r: Result<()>) {
        let c = &self.counters;
        match (r, kind) {
            (Ok(()), Settle::Ack) => c.acked.fetch_add(1, Ordering::Relaxed),
            (Ok(()), Settle::Nack) => c.nacked.fetch_add(1, Ordering::Relaxed),
            (Ok(()), Settle::Release) => 0,
            (Err(e), _) if e.kind() == crate::ErrorKind::LeaseLost => c.lease_lost.fetch_add(1, Ordering::Relaxed),
            (Err(e), _) => {
                self.record_error(e);
                0
            }
        };
    }
    pub fn record_error(&self, e: Error) {
        self.counters.errors.fetch_add(1, Ordering::Relaxed);
        *self.last_error.lock().unwrap() = Some(e);
    }
    pub fn batch_handler(&self) -> Option<&Arc<dyn BatchHandler>> {
        match &self.mode {
            Mode::Batch(h) => Some(h),
            Mode::Each(_) => None,
        }
    }
}

/// A running subscription. [`close`](Subscription::close) it to stop gracefully; dropping it
/// stops fetching too, and lets running handlers finish in the background.
pub struct Subscription {
    pub(crate) shared: Arc<Shared>,
    /// The inbox of a foreign-runtime subscription (`bridge.rs`).
    pub(crate) inbox: Option<Arc<crate::bridge::Inbox>>,
}

impl Queue {
    /// Starts consuming: `handler` runs for every due message, up to `concurrency` at a time.
    pub async fn subscribe<H: Handler>(&self, handler: H, opts: SubscribeOptions) -> Result<Subscription> {
        self.subscribe_arc(Arc::new(handler), opts).await
    }

    /// [`subscribe`](Queue::subscribe) with a shared handler (for bindings).
    pub async fn subscribe_arc(&self, handler: Arc<dyn Handler>, opts: SubscribeOptions) -> Result<Subscription> {
        self.start(Mode::Each(handler), opts).await
    }

    /// Starts consuming with a [`BatchHandler`]: deliveries are handed over in batches (as
    /// many as there are free handler slots) and reported back in batches, with no task per
    /// message. For bindings whose handlers run on another runtime's thread.
    pub async fn subscribe_batch(
        &self,
        handler: Arc<dyn BatchHandler>,
        opts: SubscribeOptions,
    ) -> Result<Subscription> {
        self.start(Mode::Batch(handler), opts).await
    }

    async fn start(&self, mode: Mode, opts: SubscribeOptions) -> Result<Subscription> {
        opts.validate()?;
        let (closing, _) = watch::channel(false);
        let cap = (opts.concurrency + opts.prefetch()).min(limits::MAX_FETCH);
        let shared = Arc::new(Shared {
            queue: self.clone(),
            mode,
            running: Arc::new(Semaphore::new(opts.concurrency)),
            inflight: Arc::new(Semaphore::new(cap)),
            batch: Mutex::new(BatchState::new(opts.concurrency)),
            idle: tokio::sync::Notify::new(),
            opts,
            closing,
            held: Mutex::new(HashMap::new()),
            clock: Mutex::new((Instant::now(), 0)),
            counters: AtomicCounters::default(),
            keeper_wake: tokio::sync::Notify::new(),
            last_error: Mutex::new(None),
            fetcher: tokio::sync::Mutex::new(None),
        });
        // Fail fast on an unreachable Redis rather than spinning in the background.
        let first = self.fetch_once(0, None).await?;
        *shared.clock.lock().unwrap() = (first.local, first.now_us);
        let rt = &self.inner.client.inner.rt;
        let fetcher = rt.spawn(fetch_loop(shared.clone()));
        *shared.fetcher.try_lock().expect("new subscription") = Some(fetcher);
        let weak: std::sync::Weak<dyn crate::client::Closes> = Arc::downgrade(&shared) as _;
        self.inner.client.inner.register(weak);
        Ok(Subscription { shared, inbox: None })
    }
}

impl Subscription {
    /// Stops fetching, releases prefetched messages that did not start (due now again, no
    /// attempt counted), waits up to the drain timeout for running handlers, and returns.
    /// Calling it again (even concurrently) waits for the same drain, then returns.
    pub async fn close(&self) {
        crate::client::Closes::close_and_drain(&*self.shared).await;
    }

    /// True once close was called (or the subscription was dropped).
    pub fn is_closed(&self) -> bool {
        self.shared.is_closing()
    }

    /// Counts so far.
    pub fn counters(&self) -> Counters {
        let c = &self.shared.counters;
        Counters {
            delivered: c.delivered.load(Ordering::Relaxed),
            handled: c.handled.load(Ordering::Relaxed),
            acked: c.acked.load(Ordering::Relaxed),
            nacked: c.nacked.load(Ordering::Relaxed),
            lease_lost: c.lease_lost.load(Ordering::Relaxed),
            errors: c.errors.load(Ordering::Relaxed),
        }
    }

    /// The latest error of a fetch or settle call (the subscription retries by itself).
    pub fn last_error(&self) -> Option<Error> {
        self.shared.last_error.lock().unwrap().clone()
    }

    /// The queue this subscription consumes.
    pub fn queue(&self) -> &Queue {
        &self.shared.queue
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.shared.closing.send_replace(true);
    }
}

async fn fetch_loop(shared: Arc<Shared>) {
    let opts = shared.opts.clone();
    let cap = (opts.concurrency + opts.prefetch()).min(limits::MAX_FETCH);
    let inflight = shared.inflight.clone();
    // Leases per fetch call: keeps each script call short (SLOWLOG stays under a few ms even
    // over a million pending messages); more slots just mean more calls in a row.
    let per_call = cap.min(FETCH_PER_CALL);
    let listener = shared.queue.inner.client.inner.wake.listen(shared.queue.inner.keys.wake());
    let slot = listener.slot.clone();
    let mut tasks = JoinSet::new();
    // The keeper lives exactly as long as this loop: if the loop ends in any way (a panic
    // included), dropping the guard stops it, and the leases it kept run out.
    let _keeper = AbortOnDrop(tokio::spawn(lease_keeper(shared.clone())));
    // A fetch whose reply did not arrive is retried with the same fetch id (its leases come
    // back instead of running out unseen); a new id once a reply arrived.
    let mut fetch_id = crate::record::new_fetch_id();
    let mut backoff = Duration::from_millis(50);
    let mut saturated = false;
    let mut idle_spins = 0u32;

    'outer: while !shared.is_closing() {
        while tasks.try_join_next().is_some() {}
        let need = if saturated { (per_call / 2).max(1) } else { 1 };
        let mut permit = tokio::select! {
            p = inflight.clone().acquire_many_owned(need as u32) => match p { Ok(p) => p, Err(_) => break },
            _ = shared.closed() => break,
        };
        while permit.num_permits() < per_call {
            match inflight.clone().try_acquire_owned() {
                Ok(p) => permit.merge(p),
                Err(_) => break,
            }
        }
        let n = permit.num_permits();
        let mut f = match shared.queue.fetch_call(&fetch_id, n, opts.ttr).await {
            Ok(f) => {
                fetch_id = crate::record::new_fetch_id();
                f
            }
            Err(e) => {
                drop(permit);
                shared.record_error(e);
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = shared.closed() => break,
                }
                backoff = (backoff * 2).min(Duration::from_secs(2));
                continue;
            }
        };
        backoff = Duration::from_millis(50);
        *shared.clock.lock().unwrap() = (f.local, f.now_us);
        if let Some(e) = f.corrupt.last() {
            shared.counters.errors.fetch_add(f.corrupt.len() as u64 - 1, Ordering::Relaxed);
            shared.record_error(e.clone());
        }
        let got = f.deliveries.len();
        shared.counters.delivered.fetch_add(got as u64, Ordering::Relaxed);
        {
            let mut held = shared.held.lock().unwrap();
            for d in &f.deliveries {
                held.insert(d.token().to_string(), d.clone());
            }
        }
        match &shared.mode {
            Mode::Each(_) => {
                for d in f.deliveries.iter() {
                    let p = permit.split(1).expect("one permit per leased message");
                    tasks.spawn(run_one(shared.clone(), d.clone(), p));
                }
            }
            Mode::Batch(_) => {
                // Slots come back through the Completer (add_permits), not by dropping permits.
                if let Some(p) = permit.split(got) {
                    p.forget();
                }
                batch::enqueue(&shared, std::mem::take(&mut f.deliveries));
            }
        }
        drop(permit);
        if got > 0 {
            shared.keeper_wake.notify_one();
        }
        saturated = f.more && got == n;
        if f.more {
            idle_spins = 0;
            continue;
        }
        // Idle: sleep until the next due time or lease deadline, or a wake.
        let now = Instant::now();
        let mut target = f.next_wake().unwrap_or(now + opts.max_idle).min(now + opts.max_idle);
        if target <= now {
            // Due by our estimate of the Redis clock but not yet by Redis itself: look again
            // at once a few times, then give the clocks a millisecond.
            idle_spins += 1;
            if idle_spins <= 3 {
                continue;
            }
            target = now + Duration::from_millis(1);
        }
        idle_spins = 0;
        loop {
            tokio::select! {
                _ = sleep_precise(target) => break,
                _ = slot.notify.notified() => {
                    if let Some(due) = slot.take() {
                        let t = f.local_instant(due);
                        if t <= Instant::now() { break; }
                        target = target.min(t);
                    }
                }
                _ = shared.closed() => break 'outer,
            }
        }
    }

    // Closing: handlers that have not started release their messages (run_one sees the flag);
    // running ones get the drain timeout.
    if shared.batch_handler().is_some() {
        batch::close(&shared).await;
    }
    let drained = tokio::time::timeout(opts.drain_timeout, async { while tasks.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }
    drop(listener);
}

/// Removes a delivery from the held (lease-kept) ones when dropped: whatever ends a handler's
/// task — its end, a panic, or the abort at the drain timeout — the keeper lets go of the lease.
struct Held<'a>(&'a Shared, &'a Delivery);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.held.lock().unwrap().remove(self.1.token());
    }
}

/// Aborts a task when dropped.
pub(crate) struct AbortOnDrop<T>(pub tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn run_one(shared: Arc<Shared>, d: Delivery, _slot: OwnedSemaphorePermit) {
    let _held = Held(&shared, &d);
    let run = tokio::select! {
        biased;
        _ = shared.closed() => None,
        p = shared.running.clone().acquire_owned() => p.ok(),
    };
    match run {
        Some(_permit) => {
            let Mode::Each(handler) = &shared.mode else { unreachable!("run_one in batch mode") };
            // A panic in the handler's synchronous part counts like one in its future.
            let out = match std::panic::catch_unwind(AssertUnwindSafe(|| handler.handle(d.clone()))) {
                Ok(fut) => AssertUnwindSafe(fut).catch_unwind().await,
                Err(panic) => Err(panic),
            };
            shared.counters.handled.fetch_add(1, Ordering::Relaxed);
            if !d.is_settled() {
                let (kind, r) = match out {
                    Ok(Ok(())) => (Settle::Ack, d.ack().await),
                    Ok(Err(f)) => (Settle::Nack, d.nack(f.retry_after(), f.reason()).await.map(|_| ())),
                    Err(panic) => (Settle::Nack, d.nack(None, &panic_message(panic)).await.map(|_| ())),
                };
                shared.count_settle(kind, r);
            }
        }
        None => {
            let _ = d.release().await;
        }
    }
}

/// Sleeps until `target` with sub-millisecond precision: tokio's timer (1 ms granularity,
/// rounding up) to about 1.5 ms before, then yielding until the instant. The spin costs at
/// most that long per idle wake-up and is what brings lateness under a millisecond.
pub(crate) async fn sleep_precise(target: Instant) {
    const SPIN: Duration = Duration::from_micros(1500);
    if let Some(early) = target.checked_sub(SPIN) {
        if early > Instant::now() {
            tokio::time::sleep_until(early.into()).await;
        }
    }
    while Instant::now() < target {
        tokio::task::yield_now().await;
    }
}

pub(crate) fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    let what = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    format!("handler panicked: {what}")
}

/// Extends every held lease once less than half of its ttr is left.
async fn lease_keeper(shared: Arc<Shared>) {
    loop {
        let (due, tick) = {
            let held = shared.held.lock().unwrap();
            let now = shared.redis_now_ms();
            let mut tick = Duration::from_millis(500);
            let mut due = Vec::new();
            for d in held.values() {
                let ttr = shared.lease_ttr(d);
                tick = tick.min(ttr / 4);
                let left = d.inner.lease_deadline_ms.load(Ordering::Relaxed) - now;
                if !d.is_settled() && left < (ttr.as_millis() / 2) as i64 {
                    due.push((d.clone(), ttr));
                }
            }
            (due, tick.max(Duration::from_millis(10)))
        };
        let extends = due.into_iter().map(|(d, ttr)| {
            let settler = d.inner.settler.clone();
            async move {
                let op = Op::Extend { id: d.id().to_string(), token: d.inner.token, ttr_ms: ttr.as_millis() as u64 };
                if let Ok(Settled::Extended(deadline)) = settler.settle(op).await {
                    d.inner.lease_deadline_ms.store(deadline, Ordering::Relaxed);
                }
            }
        });
        futures_util::future::join_all(extends).await;
        tokio::select! {
            _ = tokio::time::sleep(tick) => {}
            _ = shared.keeper_wake.notified() => {}
        }
    }
}
