//! The lease keeper of a subscription: it extends every held lease (running or waiting) once
//! less than half of its ttr is left. It is owned by the fetch loop and ends with it.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::runtime::types::Shared;
use crate::storage::settle::{Op, Settled};

/// Extends every held lease once less than half of its ttr is left.
pub(crate) async fn lease_keeper(shared: Arc<Shared>) {
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
                let lost = d.inner.lost.load(Ordering::Relaxed);
                if !d.is_settled() && !lost && left < (ttr.as_millis() / 2) as i64 {
                    due.push((d.clone(), ttr));
                }
            }
            (due, tick.max(Duration::from_millis(10)))
        };
        let extends = due.into_iter().map(|(d, ttr)| {
            let settler = d.inner.settler.clone();
            async move {
                let op = Op::Extend { id: d.id().to_string(), token: d.inner.token, ttr_ms: ttr.as_millis() as u64 };
                match settler.settle(op).await {
                    Ok(Settled::Extended(deadline)) => d.inner.lease_deadline_ms.store(deadline, Ordering::Relaxed),
                    // Gone for good (it ran out, or the message was cancelled or replaced): not
                    // tried again every tick; the handler's own settle reports it.
                    Err(e) if e.kind() == crate::ErrorKind::LeaseLost => d.inner.lost.store(true, Ordering::Relaxed),
                    _ => {}
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
