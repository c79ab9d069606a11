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

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use crate::consumer::{Failure, Shared};
use crate::delivery::Delivery;
use crate::error::{ErrorKind, Result};
use crate::settle::{Op, Settled};

/// Runs deliveries handed over in batches. Every delivery passed to [`dispatch`] must be reported
/// exactly once through the [`Completer`] (with [`complete`](Completer::complete), or
/// [`give_back`](Completer::give_back) when it was not started); until then it holds its handler
/// slot, and its lease is kept alive.
///
/// `dispatch` is called from the consumer's runtime or from the thread that calls `complete`,
/// with no lock held; it must not block (queue the batch for the handler's own thread).
///
/// [`dispatch`]: BatchHandler::dispatch
pub trait BatchHandler: Send + Sync + 'static {
    fn dispatch(&self, batch: Vec<Delivery>, completer: &Completer);
}

/// Takes a batch handler's outcomes back. Cheap to clone; it does not keep the subscription
/// alive, and reports that arrive after the subscription closed are ignored (those messages come
/// back when their leases run out).
#[derive(Clone)]
pub struct Completer {
    shared: Weak<Shared>,
}

/// Batch-mode bookkeeping of a subscription.
#[derive(Default)]
pub(crate) struct BatchState {
    /// Leased, waiting for a free handler slot, in lease order.
    waiting: VecDeque<Delivery>,
    /// Free handler slots.
    free: usize,
    /// Dispatched and not yet reported.
    outstanding: usize,
    /// Settle submissions whose results are not yet counted.
    settling: usize,
    /// No more dispatches: the subscription is closing.
    closed: bool,
}

impl BatchState {
    pub fn new(concurrency: usize) -> Self {
        BatchState { free: concurrency, ..Default::default() }
    }
}

/// What a reported delivery turns into.
enum Kind {
    Ack,
    Nack,
    Release,
}

impl Completer {
    /// Reports handler outcomes: `Ok` acks, `Err` nacks with the failure's reason (after its
    /// retry delay, or the message's backoff); a delivery the handler settled itself is left as
    /// it is. Deliveries reported before (or never dispatched) are ignored.
    pub fn complete(&self, outcomes: Vec<(Delivery, std::result::Result<(), Failure>)>) {
        let Some(shared) = self.shared.upgrade() else { return };
        let mut ops = Vec::with_capacity(outcomes.len());
        let mut kinds = Vec::with_capacity(outcomes.len());
        let reported = take_held(&shared, outcomes);
        let n = reported.len();
        for (d, out) in reported {
            if d.is_settled() {
                continue;
            }
            let op = match &out {
                Ok(()) => d.ack_op().map(|op| (op, Kind::Ack)),
                Err(f) => d.nack_op(f.retry_after(), f.reason()).map(|op| (op, Kind::Nack)),
            };
            match op {
                Ok((op, kind)) => {
                    ops.push(op);
                    kinds.push(kind);
                }
                Err(e) => shared.record_error(e),
            }
        }
        shared.counters.handled.fetch_add(n as u64, Ordering::Relaxed);
        finish(&shared, n, ops, kinds);
    }

    /// Hands deliveries back that were dispatched but never started (the handler's thread is
    /// gone, say): each is due again at once, without counting an attempt.
    pub fn give_back(&self, deliveries: Vec<Delivery>) {
        let Some(shared) = self.shared.upgrade() else { return };
        let given = take_held(&shared, deliveries.into_iter().map(|d| (d, ())).collect());
        let n = given.len();
        let (ops, kinds) = release_ops(given.into_iter().map(|(d, ())| d));
        finish(&shared, n, ops, kinds);
    }
}

/// Removes the reported deliveries from the held leases, keeping only those that were held (a
/// second report of the same delivery finds nothing).
fn take_held<T>(shared: &Shared, items: Vec<(Delivery, T)>) -> Vec<(Delivery, T)> {
    if shared.finished.load(Ordering::Acquire) {
        return Vec::new();
    }
    let mut held = shared.held.lock().unwrap();
    items.into_iter().filter(|(d, _)| held.remove(d.token()).is_some()).collect()
}

fn release_ops(deliveries: impl Iterator<Item = Delivery>) -> (Vec<Op>, Vec<Kind>) {
    let ops: Vec<Op> = deliveries.filter_map(|d| d.release_op().ok()).collect();
    let kinds = ops.iter().map(|_| Kind::Release).collect();
    (ops, kinds)
}

/// Frees `n` handler slots, submits `ops` and dispatches what waits.
fn finish(shared: &Arc<Shared>, n: usize, ops: Vec<Op>, kinds: Vec<Kind>) {
    let submit = !ops.is_empty();
    {
        let mut st = shared.batch.lock().unwrap();
        st.free += n;
        st.outstanding -= n;
        if submit {
            st.settling += 1;
        }
    }
    shared.inflight.add_permits(n);
    if submit {
        let rx = shared.queue.inner.settler.submit(ops);
        let s = shared.clone();
        shared.queue.inner.client.inner.rt.spawn(async move {
            match rx.await {
                Ok(results) => count(&s, results, kinds),
                Err(_) => s.record_error(crate::Error::new(ErrorKind::Connection, "client is closed")),
            }
            s.batch.lock().unwrap().settling -= 1;
            s.idle.notify_waiters();
        });
    } else if n > 0 {
        shared.idle.notify_waiters();
    }
    pump(shared);
}

fn count(shared: &Shared, results: Vec<Result<Settled>>, kinds: Vec<Kind>) {
    let c = &shared.counters;
    for (r, kind) in results.into_iter().zip(kinds) {
        match (r, kind) {
            (Ok(_), Kind::Ack) => c.acked.fetch_add(1, Ordering::Relaxed),
            (Ok(_), Kind::Nack) => c.nacked.fetch_add(1, Ordering::Relaxed),
            (Ok(_), Kind::Release) => 0,
            (Err(e), _) if e.kind() == ErrorKind::LeaseLost => c.lease_lost.fetch_add(1, Ordering::Relaxed),
            (Err(e), _) => {
                shared.record_error(e);
                0
            }
        };
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
    let batch: Vec<Delivery> = {
        let mut st = shared.batch.lock().unwrap();
        if st.closed {
            return;
        }
        let n = st.free.min(st.waiting.len());
        st.free -= n;
        st.outstanding += n;
        st.waiting.drain(..n).collect()
    };
    if !batch.is_empty() {
        handler.dispatch(batch, &Completer { shared: Arc::downgrade(shared) });
    }
}

/// Closing: stops dispatching, hands back what waits (no attempt counted), then waits up to the
/// drain timeout for the dispatched ones to be reported and every settle to finish. Reports
/// after that are ignored.
pub(crate) async fn close(shared: &Arc<Shared>) {
    let waiting: Vec<Delivery> = {
        let mut st = shared.batch.lock().unwrap();
        st.closed = true;
        st.waiting.drain(..).collect()
    };
    if !waiting.is_empty() {
        {
            let mut held = shared.held.lock().unwrap();
            for d in &waiting {
                held.remove(d.token());
            }
        }
        let n = waiting.len();
        let (ops, kinds) = release_ops(waiting.into_iter());
        shared.inflight.add_permits(n);
        if let Ok(results) = shared.queue.inner.settler.submit(ops).await {
            count(shared, results, kinds);
        }
    }
    let drained = tokio::time::timeout(shared.opts.drain_timeout, async {
        loop {
            let idle = shared.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            {
                let st = shared.batch.lock().unwrap();
                if st.outstanding == 0 && st.settling == 0 {
                    return;
                }
            }
            idle.await;
        }
    })
    .await;
    let _ = drained;
    shared.finished.store(true, Ordering::Release);
}
