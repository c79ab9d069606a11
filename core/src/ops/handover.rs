//! Deliveries on their way to a caller that may be gone before it takes them.

use std::collections::VecDeque;

use tokio::runtime::Handle;

use super::delivery::Delivery;

/// Deliveries handed from a fetch to a caller that may be gone before it takes them: a fetch
/// task whose caller dropped its future, or a foreign binding's call whose coroutine was
/// cancelled after the fetch had finished (UniFFI then drops the result unread). What is not
/// [taken](Handover::take) when it is dropped is released: due again at once, no attempt
/// counted, instead of held by nobody until its lease runs out.
#[must_use = "dropped untaken, the deliveries are released"]
pub struct Handover {
    deliveries: VecDeque<Delivery>,
    /// Where the release runs; the runtime the handover was made on.
    runtime: Option<Handle>,
}

impl Handover {
    /// Holds `deliveries` until they are taken. Made outside a tokio runtime, it cannot release
    /// on drop: the leases then run out as they would have without it.
    pub fn new(deliveries: Vec<Delivery>) -> Self {
        Self { deliveries: deliveries.into(), runtime: Handle::try_current().ok() }
    }

    /// The deliveries, now the caller's; the handover is left empty.
    pub fn take(&mut self) -> Vec<Delivery> {
        std::mem::take(&mut self.deliveries).into()
    }

    /// The first delivery not yet taken, now the caller's (in the order they were given).
    pub fn take_first(&mut self) -> Option<Delivery> {
        self.deliveries.pop_front()
    }

    /// Releases the deliveries not taken (due again at once, no attempt counted) and waits for
    /// Redis to have them back; the handover is left empty.
    pub async fn release(&mut self) {
        release_all(self.take()).await
    }

    /// The first delivery not yet taken, left in the handover.
    pub(crate) fn first(&self) -> Option<&Delivery> {
        self.deliveries.front()
    }

    /// How many deliveries are still untaken.
    pub fn len(&self) -> usize {
        self.deliveries.len()
    }

    /// True when nothing is left to take.
    pub fn is_empty(&self) -> bool {
        self.deliveries.is_empty()
    }
}

impl Drop for Handover {
    fn drop(&mut self) {
        let left = self.take();
        if let (false, Some(runtime)) = (left.is_empty(), &self.runtime) {
            runtime.spawn(release_all(left));
        }
    }
}

async fn release_all(left: Vec<Delivery>) {
    // A release fails only when the lease is gone already: nothing to give back.
    futures_util::future::join_all(left.iter().map(Delivery::release)).await;
}

impl std::fmt::Debug for Handover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handover").field("deliveries", &self.deliveries).finish()
    }
}
