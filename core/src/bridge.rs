//! Handing deliveries to a foreign runtime — an event loop (Node, Python asyncio), a JVM
//! thread, or a pool of threads — in batches.
//!
//! A binding supplies one thing, [`Wake`]: "wake my thread". The core keeps the inbox: when
//! deliveries are leased and handler slots are free, they go into the inbox and the foreign
//! thread is woken once (not once per message); on that thread the binding calls
//! [`Subscription::take`] (or a worker thread blocks in [`Subscription::take_wait`]), converts
//! the batch into its language, runs the handlers, and reports outcomes with
//! [`Subscription::complete`] — as many at a time as it likes, from any thread. Deliveries it
//! never starts go back with [`Subscription::give_back`]. Settling, freeing slots, lease
//! keeping, counters and closing (what waits in the inbox is given back at once; what runs gets
//! the drain timeout) are the core's.
//!
//! No lock is held while the core calls `wake`, and `wake` must not call back into the
//! subscription synchronously: nothing re-enters.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::batch::{BatchHandler, Completer};
use crate::consumer::{Failure, Subscription};
use crate::delivery::Delivery;
use crate::error::Result;
use crate::options::SubscribeOptions;
use crate::queue::Queue;

/// Wakes a foreign runtime's thread so that it calls [`Subscription::take`].
pub trait Wake: Send + Sync + 'static {
    /// Deliveries wait in the inbox, and the thread was not woken since it last took them.
    /// Must not block and must not call into the subscription before returning (queue the
    /// call on the thread instead). Return false when the runtime is gone: what waits is
    /// given back (due again, no attempt counted) and the subscription stops.
    fn wake(&self) -> bool;
}

/// The inbox of a foreign-runtime subscription.
pub(crate) struct Inbox {
    state: Mutex<InboxState>,
    ready: Condvar,
    waker: Arc<dyn Wake>,
}

#[derive(Default)]
struct InboxState {
    items: Vec<(u64, Delivery)>,
    /// The thread was woken and has not taken since.
    woken: bool,
    /// No more deliveries: the subscription is closing, or the runtime is gone.
    closed: bool,
}

impl Inbox {
    fn take(&self) -> Vec<(u64, Delivery)> {
        let mut st = self.state.lock().unwrap();
        st.woken = false;
        std::mem::take(&mut st.items)
    }

    fn take_wait(&self, timeout: Duration) -> Vec<(u64, Delivery)> {
        let deadline = Instant::now() + timeout;
        let mut st = self.state.lock().unwrap();
        while st.items.is_empty() && !st.closed {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            st = self.ready.wait_timeout(st, left).unwrap().0;
        }
        st.woken = false;
        std::mem::take(&mut st.items)
    }

    /// Closes the inbox; returns the keys nobody took.
    fn close(&self) -> Vec<u64> {
        let keys = {
            let mut st = self.state.lock().unwrap();
            st.closed = true;
            st.items.drain(..).map(|(k, _)| k).collect()
        };
        self.ready.notify_all();
        keys
    }
}

impl BatchHandler for Inbox {
    fn dispatch(&self, batch: Vec<(u64, Delivery)>, completer: &Completer) {
        let wake = {
            let mut st = self.state.lock().unwrap();
            if st.closed {
                drop(st);
                completer.give_back(batch.into_iter().map(|(k, _)| k).collect());
                return;
            }
            st.items.extend(batch);
            !std::mem::replace(&mut st.woken, true)
        };
        self.ready.notify_all();
        if wake && !self.waker.wake() {
            let keys = self.close();
            completer.give_back(keys);
            completer.stop();
        }
    }

    fn closing(&self, completer: &Completer) {
        let keys = self.close();
        if !keys.is_empty() {
            completer.give_back(keys);
        }
    }
}

impl Queue {
    /// Starts consuming for a foreign runtime: deliveries collect in the subscription's inbox
    /// and `wake` is called once whenever the inbox fills after a take; the binding takes them
    /// with [`Subscription::take`] and reports with [`Subscription::complete`].
    pub async fn subscribe_foreign(&self, wake: Arc<dyn Wake>, opts: SubscribeOptions) -> Result<Subscription> {
        let inbox = Arc::new(Inbox { state: Mutex::default(), ready: Condvar::new(), waker: wake });
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
