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
    panic_message, AtomicCounters, BatchHandler, BatchState, Completer, Counters, Failure, Handler, Mode, Order,
    Settle, Shared,
};

/// Most leases one fetch call of a subscription takes.
const FETCH_PER_CALL: usize = 250;
/// A source whose fetch failed waits this long before its next try, doubling up to MAX_BACKOFF.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

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
        self.as_queues().start(mode, opts).await
    }

    fn as_queues(&self) -> Queues {
        Queues { list: vec![(self.clone(), 1)], order: Order::Priority }
    }
}

/// Several queues consumed by one subscription: one concurrency limit for all, each delivery
/// says its queue, and the consumer sleeps until the earliest due time across them, woken by a
/// publish to any of them. The queues may live on different Redis Cluster masters.
#[derive(Clone)]
pub struct Queues {
    list: Vec<(Queue, u32)>,
    order: Order,
}

pub use crate::base::limits::{MAX_QUEUES, MAX_WEIGHT};

impl Queues {
    /// The error for a weight outside 1 to [`MAX_WEIGHT`], naming the queue and the weight as
    /// given: also for a binding whose integers can be too large for [`ordered`](Self::ordered).
    pub fn weight_refused(queue: &str, w: impl std::fmt::Display) -> Error {
        Error::invalid(format!("weight of queue {queue:?}: must be 1 to {MAX_WEIGHT}, got {w}"))
    }

    /// Strict priority: always the first queue (in this order) that has a due message.
    pub fn priority(queues: Vec<Queue>) -> Result<Queues> {
        Self::new(queues.into_iter().map(|q| (q, 1)).collect(), Order::Priority)
    }

    /// By weights (e.g. 5/3/1): among the queues with a due message, each is picked in
    /// proportion to its weight (1 to [`MAX_WEIGHT`]).
    pub fn weighted(queues: Vec<(Queue, u32)>) -> Result<Queues> {
        Self::new(queues, Order::Weighted)
    }

    /// [`priority`](Self::priority) without `weights`, else [`weighted`](Self::weighted) with
    /// one weight per queue. The weights are taken as a foreign binding received them (any
    /// integer): one outside 1 to [`MAX_WEIGHT`] is refused as it was given.
    pub fn ordered(queues: Vec<Queue>, weights: Option<Vec<i64>>) -> Result<Queues> {
        match weights {
            None => Self::priority(queues),
            Some(w) if w.len() != queues.len() => {
                Err(Error::invalid(format!("weights: give one per queue ({}), got {}", queues.len(), w.len())))
            }
            Some(w) => {
                let each = queues.into_iter().zip(w).map(|(q, w)| match u32::try_from(w) {
                    Ok(n) if (1..=MAX_WEIGHT).contains(&n) => Ok((q, n)),
                    _ => Err(Self::weight_refused(q.name(), w)),
                });
                Self::weighted(each.collect::<Result<_>>()?)
            }
        }
    }

    fn new(list: Vec<(Queue, u32)>, order: Order) -> Result<Queues> {
        limits::check_queue_list(list.iter().map(|(q, _)| q.name()))?;
        for (q, w) in &list {
            if !(1..=MAX_WEIGHT).contains(w) {
                return Err(Self::weight_refused(q.name(), *w));
            }
            if !Arc::ptr_eq(&q.inner.ctx, &list[0].0.inner.ctx) {
                return Err(Error::invalid(format!("queues: {:?} belongs to another client", q.name())));
            }
        }
        Ok(Queues { list, order })
    }

    /// The queues, in priority order.
    pub fn queues(&self) -> impl Iterator<Item = &Queue> {
        self.list.iter().map(|(q, _)| q)
    }

    /// [`Queue::subscribe`] over these queues.
    pub async fn subscribe<H: Handler>(&self, handler: H, opts: SubscribeOptions) -> Result<Subscription> {
        self.start(Mode::Each(Arc::new(handler)), opts).await
    }

    /// [`Queue::subscribe_batch`] over these queues.
    pub async fn subscribe_batch(
        &self,
        handler: Arc<dyn BatchHandler>,
        opts: SubscribeOptions,
    ) -> Result<Subscription> {
        self.start(Mode::Batch(handler), opts).await
    }

    /// [`Queue::subscribe_foreign`] over these queues.
    pub async fn subscribe_foreign(&self, wake: Arc<dyn Wake>, opts: SubscribeOptions) -> Result<Subscription> {
        let inbox = Inbox::new(wake);
        let mut sub = self.subscribe_batch(inbox.clone(), opts).await?;
        sub.inbox = Some(inbox);
        Ok(sub)
    }

    async fn start(&self, mode: Mode, opts: SubscribeOptions) -> Result<Subscription> {
        opts.validate()?;
        let first = self.list[0].0.clone();
        let (closing, _) = watch::channel(false);
        let cap = opts.in_flight();
        let shared = Arc::new(Shared {
            queue: first.clone(),
            sources: self.list.clone(),
            order: self.order,
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
        // Fail fast on an unreachable Redis (or data of another layout) rather than spinning
        // in the background: every queue must answer, a sharded one from at least one shard.
        // A shard that does not (its master down, on a cluster serving the other slots) is
        // looked at first, and then backs off like any failing source.
        // The same look tells each shard's earliest due message, so that the first fetches of
        // a sharded queue go soonest due first too.
        let mut due_at = Vec::new();
        for (q, _) in &self.list {
            q.check_shards().await?;
            let looks = futures_util::future::join_all(q.parts().iter().map(|part| part.fetch_once(0, None))).await;
            let Some(now_ms) = looks.iter().find_map(|f| f.as_ref().ok()).map(|f| f.now_us / 1000) else {
                return Err(looks.into_iter().find_map(Result::err).expect("a queue has a shard"));
            };
            for (shard, f) in looks.into_iter().enumerate() {
                match f {
                    Ok(f) => {
                        *shared.clock.lock().unwrap() = (f.local, f.now_us);
                        due_at.push(f.more.then(|| f.next_due_ms.unwrap_or(f.now_us / 1000)));
                    }
                    Err(e) => {
                        tracing::warn!(queue = q.name(), shard, error = %e, "a shard did not answer; retrying it with backoff");
                        due_at.push(Some(now_ms));
                    }
                }
            }
        }
        let rt = &first.inner.ctx.rt;
        let fetcher = rt.spawn(fetch_loop(shared.clone(), due_at));
        *shared.fetcher.try_lock().expect("new subscription") = Some(fetcher);
        let weak: std::sync::Weak<dyn crate::storage::ctx::Closes> = Arc::downgrade(&shared) as _;
        first.inner.ctx.register(weak);
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

    /// The latest error of a fetch or settle call (the subscription retries by itself; counted
    /// in [`Counters::errors`]), kept after the subscription recovered; `None` when there was none.
    pub fn last_error(&self) -> Option<Error> {
        self.shared.last_error.lock().unwrap().clone()
    }

    /// The queue this subscription consumes (the first one, for several queues).
    pub fn queue(&self) -> &Queue {
        &self.shared.queue
    }

    /// The names of the queues this subscription consumes, in priority order (or in the order
    /// their weights were given): what every binding shows as the subscription's `queues`.
    pub fn queue_names(&self) -> Vec<String> {
        self.shared.sources.iter().map(|(q, _)| q.name().to_string()).collect()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.shared.closing.send_replace(true);
    }
}

/// One queue a subscription consumes: its shards are `members` of the sources (a plain queue
/// is one source). The order picks a group; within it, the shard due soonest.
struct Group {
    weight: i64,
    /// Smooth weighted round robin: grows by the weight while eligible, shrinks when picked.
    credit: i64,
    members: std::ops::Range<usize>,
}

/// What the fetch loop knows of one shard (or plain queue) it consumes.
struct Source {
    queue: Queue,
    /// The queue this source is a shard of (or the queue itself): its shard count is checked
    /// again before a fetch once the last confirmation is 5 s old (`Queue::check_shards`).
    whole: Queue,
    /// When this source was last picked (a count of picks): ties go to the longest unpicked.
    picked: u64,
    /// A fetch whose reply did not arrive is retried with the same fetch id (its leases come
    /// back instead of running out unseen); a new id once a reply arrived.
    fetch_id: [u8; 6],
    /// Earliest local instant worth fetching at (a due time or lease deadline); None: now.
    next: Option<Instant>,
    /// The same as a Redis time (ms), which keeps its order when it is past: the order of the
    /// shards of one queue. None: not known yet.
    due_ms: Option<i64>,
    /// The last fetch said more is leasable at once.
    more: bool,
    /// Looks that found nothing although our estimate of the Redis clock said due.
    spins: u32,
    /// (local instant, Redis µs) of the last fetch, to map Redis times to local ones.
    clock: (Instant, i64),
    listener: crate::storage::wake::Listener,
    /// After a failed fetch: not picked again before this instant (a wake does not lift it),
    /// so that one failing queue or shard neither starves the others nor is retried in a spin.
    hold: Option<Instant>,
    /// The wait after this source's next failed fetch: 50 ms, doubling up to 2 s.
    backoff: Duration,
}

impl Source {
    fn local_instant(&self, redis_ms: i64) -> Instant {
        let ahead_us = redis_ms * 1000 - self.clock.1;
        if ahead_us <= 0 {
            self.clock.0
        } else {
            self.clock.0 + Duration::from_micros(ahead_us as u64)
        }
    }

    fn eligible(&self, now: Instant) -> bool {
        self.hold.is_none_or(|t| t <= now) && (self.more || self.next.is_none_or(|t| t <= now))
    }

    /// When this source is next worth a look when idle (its `next`, but not before its hold).
    fn next_look(&self) -> Option<Instant> {
        match (self.next, self.hold) {
            (Some(n), h) => Some(h.map_or(n, |h| n.max(h))),
            (None, h) => h,
        }
    }

    /// Takes what the wake channel signalled: a due time moves `next` earlier.
    fn take_wake(&mut self) -> bool {
        match self.listener.slot.take() {
            Some(due) => {
                // 0 is "look now" (a new or renewed subscription), not a due time.
                if due > 0 {
                    self.due_ms = Some(self.due_ms.map_or(due, |d| d.min(due)));
                }
                let t = self.local_instant(due);
                self.next = Some(self.next.map_or(t, |n| n.min(t)));
                true
            }
            None => false,
        }
    }
}

/// The source to fetch from now: the queue by priority, or by smooth weighted round robin among
/// those with something due; then, of that queue's shards with something due, the one whose
/// earliest message is due soonest (ties: the one picked longest ago). None when nothing is due
/// anywhere.
fn pick(groups: &mut [Group], sources: &mut [Source], order: Order, now: Instant, tick: u64) -> Option<usize> {
    let due = |g: &Group| g.members.clone().any(|i| sources[i].eligible(now));
    let g = match order {
        Order::Priority => groups.iter().position(due)?,
        Order::Weighted => {
            let eligible: Vec<usize> = (0..groups.len()).filter(|&g| due(&groups[g])).collect();
            let total: i64 = eligible.iter().map(|&g| groups[g].weight).sum();
            for &g in &eligible {
                groups[g].credit += groups[g].weight;
            }
            let best = *eligible.iter().max_by_key(|&&g| (groups[g].credit, std::cmp::Reverse(g)))?;
            groups[best].credit -= total;
            best
        }
    };
    let i = groups[g]
        .members
        .clone()
        .filter(|&i| sources[i].eligible(now))
        .min_by_key(|&i| (sources[i].due_ms.unwrap_or(i64::MIN), sources[i].picked))?;
    sources[i].picked = tick;
    Some(i)
}

/// `due_at`: per shard, when its earliest due message fell due, Redis ms (if any was due at the
/// start).
async fn fetch_loop(shared: Arc<Shared>, due_at: Vec<Option<i64>>) {
    let opts = shared.opts.clone();
    let cap = opts.in_flight();
    let inflight = shared.inflight.clone();
    // Leases per fetch call: keeps each script call short (SLOWLOG stays under a few ms even
    // over a million pending messages); more slots just mean more calls in a row.
    let per_call = cap.min(FETCH_PER_CALL);
    let start = *shared.clock.lock().unwrap();
    let mut sources: Vec<Source> = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    for (q, w) in &shared.sources {
        let first = sources.len();
        sources.extend(q.parts().iter().enumerate().map(|(k, part)| Source {
            listener: part.inner.ctx.wake.listen(part.inner.keys.wake()),
            queue: part.clone(),
            whole: q.clone(),
            picked: 0,
            fetch_id: crate::base::record::new_fetch_id(),
            next: None,
            due_ms: due_at.get(first + k).copied().flatten(),
            more: false,
            spins: 0,
            clock: start,
            hold: None,
            backoff: FIRST_BACKOFF,
        }));
        groups.push(Group { weight: i64::from(*w), credit: 0, members: first..sources.len() });
    }
    let mut tick = 0u64;
    let mut tasks = JoinSet::new();
    // The keeper lives exactly as long as this loop: if the loop ends in any way (a panic
    // included), dropping the guard stops it, and the leases it kept run out.
    let _keeper = AbortOnDrop(tokio::spawn(lease_keeper(shared.clone())));
    let mut saturated = false;

    'outer: while !shared.is_closing() {
        while tasks.try_join_next().is_some() {}
        for s in sources.iter_mut() {
            s.take_wake();
        }
        tick += 1;
        let Some(i) = pick(&mut groups, &mut sources, shared.order, Instant::now(), tick) else {
            // Idle: sleep until the earliest due time or lease deadline of any queue, or a wake.
            let now = Instant::now();
            let cap_at = now + opts.max_idle;
            let target = sources.iter().filter_map(Source::next_look).min().unwrap_or(cap_at).min(cap_at);
            let slept = {
                let slots: Vec<_> = sources.iter().map(|s| s.listener.slot.clone()).collect();
                let woken = futures_util::future::select_all(slots.iter().map(|s| Box::pin(s.notify.notified())));
                tokio::select! {
                    _ = sleep_precise(target) => true,
                    _ = woken => false,
                    _ = shared.closed() => break 'outer,
                }
            };
            if slept {
                // Time to look again at whatever was due, and after a capped sleep at everything.
                let now = Instant::now();
                for s in sources.iter_mut() {
                    if s.next.is_none_or(|t| t <= now) || target >= cap_at {
                        s.next = None;
                    }
                }
            }
            continue;
        };
        let need = if saturated { (per_call / 2).max(1) } else { 1 };
        // Closing wins over a slot that frees at the same moment: nothing is fetched once close
        // began (what a fetch already under way brings is released, not handed to the handler).
        let mut permit = tokio::select! {
            biased;
            _ = shared.closed() => break,
            p = inflight.clone().acquire_many_owned(need as u32) => match p { Ok(p) => p, Err(_) => break },
        };
        if shared.is_closing() {
            break;
        }
        while permit.num_permits() < per_call {
            match inflight.clone().try_acquire_owned() {
                Ok(p) => permit.merge(p),
                Err(_) => break,
            }
        }
        let n = permit.num_permits();
        let others_failing = sources.iter().any(|s| s.hold.is_some());
        let src = &mut sources[i];
        let fetched = match src.whole.check_shards().await {
            Ok(()) => src.queue.fetch_call(&src.fetch_id, n, opts.ttr).await,
            Err(e) => Err(e),
        };
        let mut f = match fetched {
            Ok(f) => {
                src.fetch_id = crate::base::record::new_fetch_id();
                f
            }
            Err(e) => {
                // This source alone waits: the other queues (and shards) go on being fetched.
                drop(permit);
                // One warning per outage: a source that starts failing while others already are
                // (Redis down under a many-queue or many-shard subscription) logs at debug.
                if src.backoff == FIRST_BACKOFF && !others_failing {
                    tracing::warn!(queue = src.queue.name(), error = %e, "fetch failed; retrying with backoff");
                } else if src.backoff == FIRST_BACKOFF {
                    tracing::debug!(queue = src.queue.name(), error = %e, "fetch failed; retrying with backoff");
                }
                shared.record_error(e);
                let retry_at = Instant::now() + src.backoff;
                (src.hold, src.next, src.more) = (Some(retry_at), Some(retry_at), false);
                src.backoff = (src.backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        if src.backoff > FIRST_BACKOFF {
            tracing::info!(queue = src.queue.name(), "fetching again after errors");
        }
        (src.hold, src.backoff) = (None, FIRST_BACKOFF);
        *shared.clock.lock().unwrap() = (f.local, f.now_us);
        src.clock = (f.local, f.now_us);
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
        src.more = f.more;
        // The shard's rank among its queue's shards: its earliest waiting message. A lease
        // deadline only stands in when nothing waits: the earliest lease is most often one this
        // subscription holds and keeps alive (or has settled since), which would rank the
        // shard by a due time it does not have.
        src.due_ms = f.next_due_ms.or(f.next_lease_ms);
        let now = Instant::now();
        src.next = Some(f.next_wake().unwrap_or(now + opts.max_idle).min(now + opts.max_idle));
        if got == 0 && !f.more && src.next.is_some_and(|t| t <= now) {
            // Due by our estimate of the Redis clock but not yet by Redis itself: look again at
            // once a few times, then give the clocks a millisecond.
            src.spins += 1;
            src.next = if src.spins <= 3 { None } else { Some(now + Duration::from_millis(1)) };
        } else {
            src.spins = 0;
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
    drop(sources);
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
        Some(_permit) if shared.lease_lapsed(&d) => {
            // Waited past its lease: another consumer may be running it now. Not started;
            // Redis gives it to the next fetch (or has already).
            tracing::warn!(queue = d.queue(), id = d.id(), "lease ran out before the handler started; not run");
            shared.counters.lease_lost.fetch_add(1, Ordering::Relaxed);
        }
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
        self.as_queues().subscribe_foreign(wake, opts).await
    }
}

impl Subscription {
    /// The deliveries waiting in the inbox (at most as many as there were free handler slots),
    /// each with its key; re-arms the wake. Empty for a subscription not made with
    /// [`Queue::subscribe_foreign`].
    pub fn take(&self) -> Vec<(u64, Delivery)> {
        self.unlapsed(self.inbox.as_ref().map(|i| i.take()).unwrap_or_default())
    }

    /// [`take`](Self::take), blocking the calling thread up to `timeout` until something
    /// arrives or the subscription closes (for worker threads). Empty on timeout or close.
    pub fn take_wait(&self, timeout: Duration) -> Vec<(u64, Delivery)> {
        self.unlapsed(self.inbox.as_ref().map(|i| i.take_wait(timeout)).unwrap_or_default())
    }

    /// `taken` without the deliveries whose lease ran out while they sat in the inbox (the
    /// foreign runtime was busy or paused): another consumer may be running those now, so
    /// they are reported back unstarted instead of handed to a handler.
    fn unlapsed(&self, taken: Vec<(u64, Delivery)>) -> Vec<(u64, Delivery)> {
        let now = self.shared.redis_now_ms();
        let (lapsed, live): (Vec<_>, Vec<_>) =
            taken.into_iter().partition(|(_, d)| crate::runtime::types::lapsed_by(d, now));
        if !lapsed.is_empty() {
            for (_, d) in &lapsed {
                tracing::warn!(queue = d.queue(), id = d.id(), "lease ran out before the handler started; not run");
            }
            self.give_back(lapsed.into_iter().map(|(k, _)| k).collect());
        }
        live
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

    /// Hands `keys` back as [`give_back`](Self::give_back) does and closes the subscription,
    /// for a handler that says the program is stopping (Python's `KeyboardInterrupt` or
    /// `SystemExit`): its message did not fail. Fetching and dispatching stop first, then the
    /// keys go back: the other way round, the message, due again at once, could be leased
    /// straight back by this subscription and run again before its close. The close (drain
    /// included) goes on in the background, as after [`Completer::stop`].
    pub fn give_back_and_stop(&self, keys: Vec<u64>) {
        self.shared.stop();
        self.give_back(keys);
    }

    /// The foreign runtime is gone for good (a Node worker was terminated, its environment torn
    /// down): closes at once without waiting on it, since nothing will ever be reported. Fetching
    /// stops; what was leased and not yet taken by a handler is given back (due again at once, no
    /// attempt counted); the deliveries whose handlers were running are let go: their leases are
    /// no longer kept, so they come back when their ttr runs out, that attempt counted (a handler
    /// that killed its runtime is not retried for free). Calls no method of the `Wake` but
    /// `closed`; later reports are ignored. Idempotent; also after a close.
    pub fn abandon(&self) {
        self.shared.stop();
        if let Some(inbox) = &self.inbox {
            self.give_back(inbox.close());
        }
        let running = std::mem::take(&mut self.shared.batch.lock().unwrap().live);
        {
            let mut held = self.shared.held.lock().unwrap();
            for d in running.values() {
                held.remove(d.token());
            }
        }
        self.shared.batch.lock().unwrap().abandoned.extend(running);
        self.shared.idle.notify_waiters();
    }

    /// The taken delivery `key`, until it is reported (for a handler that acks, nacks or extends
    /// it itself).
    pub fn delivery(&self, key: u64) -> Option<Delivery> {
        self.completer().delivery(key)
    }

    /// [`delivery`](Self::delivery) of message `id` as a result: `LeaseLost` (as for a settled
    /// delivery) once its outcome was reported, when the subscription settled it.
    pub fn lease(&self, key: u64, id: &str) -> Result<Delivery> {
        self.delivery(key).ok_or_else(|| Error::lease_lost(id))
    }

    /// A handle for reporting from callbacks; it does not keep the subscription alive.
    pub fn completer(&self) -> Completer {
        Completer::of(&self.shared)
    }
}
