//! Batch handlers: a subscription that hands deliveries over in batches and takes their outcomes
//! back in batches, from any thread.
//!
//! This is for bindings whose handlers run on another runtime's single thread (Node's event
//! loop): waking that thread once per message, and a task per message here, cost more than the
//! Redis work itself. With a [`BatchHandler`] the consumer runs no task per message: leased
//! messages wait in a queue, [`BatchHandler::dispatch`] gets as many as there are free handler
//! slots, and [`Completer::complete`] settles a whole batch of outcomes with one settle
//! submission, frees the slots and dispatches the next waiting messages. Fetching, lease
//! keeping, counters and close behave as for a per-message [`Handler`](crate::Handler).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::sync::oneshot::error::RecvError;

use crate::base::error::Result;
use crate::ops::delivery::Delivery;
use crate::runtime::types::{Completer, Failure, Settle, Shared};
use crate::storage::settle::{Op, Settled, Settler};

impl Completer {
    pub(crate) fn of(shared: &Arc<Shared>) -> Completer {
        Completer { shared: Arc::downgrade(shared) }
    }

    /// Stops the subscription from fetching more (it then closes as by `Subscription::close`).
    pub(crate) fn stop(&self) {
        if let Some(shared) = self.shared.upgrade() {
            shared.stop();
        }
    }

    /// Reports handler outcomes by key: `Ok` acks, `Err` nacks with the failure's reason (after
    /// its retry delay, or the message's backoff); a delivery the handler settled itself is left
    /// as it is. Keys reported before (or unknown) are ignored.
    pub fn complete(&self, outcomes: Vec<(u64, std::result::Result<(), Failure>)>) {
        let Some(shared) = self.shared.upgrade() else { return };
        let reported = take_live(&shared, outcomes);
        let n = reported.len();
        let mut ops = Vec::with_capacity(n);
        for (d, out) in reported {
            if d.is_settled() {
                continue;
            }
            let op = match &out {
                Ok(()) => d.ack_op().map(|op| (d.clone(), op, Settle::Ack)),
                Err(f) => {
                    // As the consumer logs a Rust handler's failure (the reason only: the stack
                    // trace is the binding's; Python logs its own with the traceback).
                    tracing::debug!(queue = d.queue(), id = d.id(), reason = f.reason(), "handler failed");
                    d.nack_op(f.retry_after(), f.reason()).map(|op| (d.clone(), op, Settle::Nack))
                }
            };
            match op {
                Ok(op) => ops.push(op),
                Err(e) => shared.record_error(e),
            }
        }
        shared.counters.handled.fetch_add(n as u64, Ordering::Relaxed);
        finish(&shared, n, ops);
    }

    /// Hands back deliveries that were dispatched but never started (the handler's thread is
    /// gone, say): each is due again at once, without counting an attempt.
    pub fn give_back(&self, keys: Vec<u64>) {
        let Some(shared) = self.shared.upgrade() else { return };
        let given = take_live(&shared, keys.into_iter().map(|k| (k, ())).collect());
        let n = given.len();
        finish(&shared, n, release_ops(given.into_iter().map(|(d, ())| d)));
    }

    /// The dispatched delivery `key`, until it is reported (for a handler that settles or
    /// extends it itself; also after close abandoned it at the drain timeout).
    pub fn delivery(&self, key: u64) -> Option<Delivery> {
        let shared = self.shared.upgrade()?;
        let st = shared.batch.lock().unwrap();
        st.live.get(&key).or_else(|| st.abandoned.get(&key)).cloned()
    }
}

/// Takes the reported keys out of the dispatched deliveries (and their leases out of the held
/// ones), keeping only keys that were live: a second report of the same key finds nothing.
/// When it took any, it counts one settle in progress until [`finish`] has submitted theirs:
/// `close` waits while anything is live or settling, and without that count it could look in
/// between (nothing live, nothing settling yet) and return before the outcomes were settled.
fn take_live<T>(shared: &Shared, items: Vec<(u64, T)>) -> Vec<(Delivery, T)> {
    let taken: Vec<(Delivery, T)> = {
        let mut st = shared.batch.lock().unwrap();
        let st = &mut *st;
        let taken: Vec<(Delivery, T)> = items
            .into_iter()
            .filter_map(|(k, t)| match st.live.remove(&k) {
                Some(d) => Some((d, t)),
                None => {
                    st.abandoned.remove(&k); // reported after close abandoned it: ignored
                    None
                }
            })
            .collect();
        st.settling += usize::from(!taken.is_empty());
        taken
    };
    let mut held = shared.held.lock().unwrap();
    for (d, _) in &taken {
        held.remove(d.token());
    }
    taken
}

fn release_ops(deliveries: impl Iterator<Item = Delivery>) -> Vec<(Delivery, Op, Settle)> {
    deliveries.filter_map(|d| d.release_op().ok().map(|op| (d, op, Settle::Release))).collect()
}

/// Groups settle ops by their delivery's settler: a subscription of several queues, or of a
/// sharded queue (whose shards share the queue's name), settles each message through the
/// settler of the queue or shard that leased it.
fn by_queue(ops: Vec<(Delivery, Op, Settle)>) -> Vec<(Settler, Vec<Op>, Vec<Settle>)> {
    let mut groups: Vec<(Settler, Vec<Op>, Vec<Settle>)> = Vec::new();
    for (d, op, kind) in ops {
        match groups.iter_mut().find(|g| g.0.same(&d.inner.settler)) {
            Some(g) => {
                g.1.push(op);
                g.2.push(kind);
            }
            None => groups.push((d.inner.settler.clone(), vec![op], vec![kind])),
        }
    }
    groups
}

/// Frees the `n` handler slots [`take_live`] took, submits `ops` and dispatches what waits. The
/// settle `take_live` counted in progress becomes one per submission, in one step.
fn finish(shared: &Arc<Shared>, n: usize, ops: Vec<(Delivery, Op, Settle)>) {
    let groups = by_queue(ops);
    let submit = !groups.is_empty();
    {
        let mut st = shared.batch.lock().unwrap();
        st.free += n;
        st.settling = st.settling + groups.len() - usize::from(n > 0);
    }
    shared.inflight.add_permits(n);
    for (settler, ops, kinds) in groups {
        let rx = settler.submit(ops);
        let s = shared.clone();
        shared.queue.inner.ctx.rt.spawn(async move {
            count(&s, rx.await, kinds);
            s.batch.lock().unwrap().settling -= 1;
            s.idle.notify_waiters();
        });
    }
    if !submit && n > 0 {
        shared.idle.notify_waiters();
    }
    pump(shared);
}

/// Counts the results of one submission.
fn count(shared: &Shared, results: std::result::Result<Vec<Result<Settled>>, RecvError>, kinds: Vec<Settle>) {
    match results {
        Ok(results) => {
            for (r, kind) in results.into_iter().zip(kinds) {
                shared.count_settle(kind, r.map(|_| ()));
            }
        }
        Err(_) => shared.record_error(crate::Error::client_closed()),
    }
}

/// Queues freshly leased deliveries (already held and counted against the in-flight limit) and
/// dispatches what fits.
pub(crate) fn enqueue(shared: &Arc<Shared>, deliveries: Vec<Delivery>) {
    shared.batch.lock().unwrap().waiting.extend(deliveries);
    pump(shared);
}

/// Dispatches waiting deliveries to the free handler slots.
fn pump(shared: &Arc<Shared>) {
    let Some(handler) = shared.batch_handler() else { return };
    let (batch, lapsed): (Vec<(u64, Delivery)>, Vec<Delivery>) = {
        let mut st = shared.batch.lock().unwrap();
        // Once close began nothing more starts: what waits is released by `close`.
        if st.closed || shared.is_closing() {
            return;
        }
        let (mut batch, mut lapsed, now) = (Vec::new(), Vec::new(), shared.redis_now_ms());
        while st.free > 0 {
            let Some(d) = st.waiting.pop_front() else { break };
            // Waited past its lease: another consumer may be running it now; not dispatched.
            if crate::runtime::types::lapsed_by(&d, now) {
                lapsed.push(d);
                continue;
            }
            st.free -= 1;
            let key = st.next_key;
            st.next_key += 1;
            st.live.insert(key, d.clone());
            batch.push((key, d));
        }
        (batch, lapsed)
    };
    if !lapsed.is_empty() {
        let mut held = shared.held.lock().unwrap();
        for d in &lapsed {
            tracing::warn!(queue = d.queue(), id = d.id(), "lease ran out before the handler started; not run");
            held.remove(d.token());
        }
        drop(held);
        shared.counters.lease_lost.fetch_add(lapsed.len() as u64, Ordering::Relaxed);
        shared.inflight.add_permits(lapsed.len());
    }
    if !batch.is_empty() {
        let keys: Vec<u64> = batch.iter().map(|(k, _)| *k).collect();
        let completer = Completer { shared: Arc::downgrade(shared) };
        let dispatched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler.dispatch(batch, &completer)));
        if let Err(panic) = dispatched {
            // The handler's hand-over failed: release these leases as failed attempts (with the
            // panic as the reason) rather than keep extending leases nobody works on.
            let why = crate::runtime::types::panic_message(panic)
                .replace("handler panicked", "batch handler's dispatch panicked");
            completer.complete(keys.into_iter().map(|k| (k, Err(Failure::new(why.clone())))).collect());
        }
    }
}

/// Closing: stops dispatching, hands back what waits (no attempt counted), then waits up to the
/// drain timeout for the dispatched ones to be reported and every settle to finish. What is
/// still dispatched then is abandoned: later reports change nothing and the leases run out,
/// but a handler's own ack, nack or extend still reaches its delivery while the lease holds.
pub(crate) async fn close(shared: &Arc<Shared>) {
    let waiting: Vec<Delivery> = {
        let mut st = shared.batch.lock().unwrap();
        st.closed = true;
        st.waiting.drain(..).collect()
    };
    if let Some(h) = shared.batch_handler() {
        h.closing(&Completer::of(shared));
    }
    if !waiting.is_empty() {
        {
            let mut held = shared.held.lock().unwrap();
            for d in &waiting {
                held.remove(d.token());
            }
        }
        shared.inflight.add_permits(waiting.len());
        for (settler, ops, kinds) in by_queue(release_ops(waiting.into_iter())) {
            count(shared, settler.submit(ops).await, kinds);
        }
    }
    let _ = tokio::time::timeout(shared.opts.drain_timeout, async {
        loop {
            let idle = shared.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            {
                let st = shared.batch.lock().unwrap();
                if st.live.is_empty() && st.settling == 0 {
                    return;
                }
            }
            idle.await;
        }
    })
    .await;
    let mut st = shared.batch.lock().unwrap();
    let running = std::mem::take(&mut st.live);
    st.abandoned.extend(running);
}
