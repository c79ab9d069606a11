//! The consumer runtime shared by every binding: `Queue::subscribe`.
//!
//! One fetch loop per subscription leases as many messages as it has free slots
//! (`concurrency` running + `prefetch` waiting), one task per message runs the handler and
//! settles the message from its outcome (with a [`BatchHandler`](crate::BatchHandler),
//! deliveries go out and outcomes come back in batches instead: `batch.rs`), and a lease keeper
//! (`keeper.rs`) extends the leases of messages held (running or waiting) before they run out.
//! With nothing to do the loop sleeps until the next due time or lease deadline that fetch
//! reported (mapped from the Redis clock to a local timer), capped by `max_idle`, and is woken
//! early by the queue's `wake` channel. No Redis blocking command is used for timing.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use crate::base::error::{Error, Result};
use crate::base::limits;
use crate::base::options::SubscribeOptions;
use crate::base::time::sleep_precise;
use crate::ops::delivery::Delivery;
use crate::ops::queue::Queue;
use crate::runtime::batch;
use crate::runtime::bridge::{Inbox, Wake};
use crate::runtime::keeper::lease_keeper;
use crate::runtime::types::{
    panic_message, AtomicCounters, BatchHandler, BatchState, Completer, Counters, Failure, Handler, Mode, Settle,
    Shared,
};

/// Most leases one fetch call of a subscription takes.
const FETCH_PER_CALL: usize = 250;

/// A running subscription. [`close`](Subscription::close) it to stop gracefully; dropping it
/// stops fetching too, and lets running handlers finish in the background.
pub struct Subscription {
    pub(crate) shared: Arc<Shared>,
    /// The inbox of a foreign-runtime subscription (`bridge.rs`).
    pub(crate) inbox: Option<Arc<crate::runtime::bridge::Inbox>>,
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
        let rt = &self.inner.ctx.rt;
        let fetcher = rt.spawn(fetch_loop(shared.clone()));
        *shared.fetcher.try_lock().expect("new subscription") = Some(fetcher);
        let weak: std::sync::Weak<dyn crate::storage::ctx::Closes> = Arc::downgrade(&shared) as _;
        self.inner.ctx.register(weak);
        Ok(Subscription { shared, inbox: None })
    }
}

impl Subscription {
    /// Stops fetching, releases prefetched messages that did not start (due now again, no
    /// attempt counted), waits up to the drain timeout for running handlers, and returns.
    /// Calling it again (even concurrently) waits for the same drain, then returns.
    pub async fn close(&self) {
        crate::storage::ctx::Closes::close_and_drain(&*self.shared).await;
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
    let listener = shared.queue.inner.ctx.wake.listen(shared.queue.inner.keys.wake());
    let slot = listener.slot.clone();
    let mut tasks = JoinSet::new();
    // The keeper lives exactly as long as this loop: if the loop ends in any way (a panic
    // included), dropping the guard stops it, and the leases it kept run out.
    let _keeper = AbortOnDrop(tokio::spawn(lease_keeper(shared.clone())));
    // A fetch whose reply did not arrive is retried with the same fetch id (its leases come
    // back instead of running out unseen); a new id once a reply arrived.
    let mut fetch_id = crate::base::record::new_fetch_id();
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
                fetch_id = crate::base::record::new_fetch_id();
                f
            }
            Err(e) => {
                drop(permit);
                if backoff == Duration::from_millis(50) {
                    tracing::warn!(queue = shared.queue.name(), error = %e, "fetch failed; retrying with backoff");
                }
                shared.record_error(e);
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = shared.closed() => break,
                }
                backoff = (backoff * 2).min(Duration::from_secs(2));
                continue;
            }
        };
        if backoff > Duration::from_millis(50) {
            tracing::info!(queue = shared.queue.name(), "fetching again after errors");
        }
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
    tracing::debug!(queue = shared.queue.name(), drained = drained.is_ok(), "subscription closed");
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
                    Ok(Err(f)) => {
                        tracing::debug!(queue = d.queue(), id = d.id(), reason = f.reason(), "handler failed");
                        (Settle::Nack, d.nack(f.retry_after(), f.reason()).await.map(|_| ()))
                    }
                    Err(panic) => {
                        let why = panic_message(panic);
                        tracing::warn!(queue = d.queue(), id = d.id(), reason = %why, "handler panicked");
                        (Settle::Nack, d.nack(None, &why).await.map(|_| ()))
                    }
                };
                shared.count_settle(kind, r);
            }
        }
        None => {
            let _ = d.release().await;
        }
    }
}

// The foreign-runtime bridge (`bridge.rs`): the subscription side.

impl Queue {
    /// Starts consuming for a foreign runtime: deliveries collect in the subscription's inbox
    /// and `wake` is called once whenever the inbox fills after a take; the binding takes them
    /// with [`Subscription::take`] and reports with [`Subscription::complete`].
    pub async fn subscribe_foreign(&self, wake: Arc<dyn Wake>, opts: SubscribeOptions) -> Result<Subscription> {
        let inbox = Inbox::new(wake);
        let mut sub = self.subscribe_batch(inbox.clone(), opts).await?;
        sub.inbox = Some(inbox);
        Ok(sub)
    }
}

impl Subscription {
    /// The deliveries waiting in the inbox (at most as many as there were free handler slots),
    /// each with its key; re-arms the wake. Empty for a subscription not made with
    /// [`Queue::subscribe_foreign`].
    pub fn take(&self) -> Vec<(u64, Delivery)> {
        self.inbox.as_ref().map(|i| i.take()).unwrap_or_default()
    }

    /// [`take`](Self::take), blocking the calling thread up to `timeout` until something
    /// arrives or the subscription closes (for worker threads). Empty on timeout or close.
    pub fn take_wait(&self, timeout: Duration) -> Vec<(u64, Delivery)> {
        self.inbox.as_ref().map(|i| i.take_wait(timeout)).unwrap_or_default()
    }

    /// Reports outcomes by key: `Ok` acks, `Err` nacks with the failure's reason (after its
    /// retry delay, or the message's backoff). A delivery the handler settled itself is left as
    /// it is; keys reported before, or unknown, are ignored.
    pub fn complete(&self, outcomes: Vec<(u64, std::result::Result<(), Failure>)>) {
        self.completer().complete(outcomes);
    }

    /// Hands back deliveries taken but never started: due again, no attempt counted.
    pub fn give_back(&self, keys: Vec<u64>) {
        self.completer().give_back(keys);
    }

    /// The taken delivery `key`, until it is reported (for a handler that acks, nacks or extends
    /// it itself).
    pub fn delivery(&self, key: u64) -> Option<Delivery> {
        self.completer().delivery(key)
    }

    /// A handle for reporting from callbacks; it does not keep the subscription alive.
    pub fn completer(&self) -> Completer {
        Completer::of(&self.shared)
    }
}
