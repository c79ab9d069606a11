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

use crate::ops::delivery::Delivery;
use crate::runtime::types::{BatchHandler, Completer};

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
    pub(crate) fn take(&self) -> Vec<(u64, Delivery)> {
        let mut st = self.state.lock().unwrap();
        st.woken = false;
        std::mem::take(&mut st.items)
    }

    pub(crate) fn take_wait(&self, timeout: Duration) -> Vec<(u64, Delivery)> {
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
    pub(crate) fn close(&self) -> Vec<u64> {
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

impl Inbox {
    pub(crate) fn new(waker: Arc<dyn Wake>) -> Arc<Inbox> {
        Arc::new(Inbox { state: Mutex::default(), ready: Condvar::new(), waker })
    }
}
