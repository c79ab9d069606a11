//! A delivered message: its fields, and ack / nack / extend of its lease.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::base::time::ms_to_time;

use crate::base::error::{Error, Result};
use crate::base::limits;
use crate::base::record::{Record, Token};
use crate::storage::settle::{NackMode, Op, Settled, Settler};

/// One delivery of a message to one consumer. It holds a lease until `lease_deadline`; settle
/// it with [`ack`](Delivery::ack) or [`nack`](Delivery::nack) (a subscription does that from the
/// handler's outcome). Cheap to clone: clones share the same lease.
#[derive(Clone)]
pub struct Delivery {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub id: String,
    pub queue: String,
    pub token: Token,
    /// `token` in hex, as [`Delivery::token`] hands it out.
    pub token_hex: String,
    pub record: Record,
    pub delivered_at_us: i64,
    pub lease_deadline_ms: AtomicI64,
    pub settled: AtomicBool,
    /// Set when an extend found the lease gone: the keeper stops trying to extend it.
    pub lost: AtomicBool,
    pub settler: Settler,
}

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delivery")
            .field("id", &self.id())
            .field("queue", &self.queue())
            .field("attempt", &self.attempt())
            .field("body_len", &self.body().len())
            .field("lateness", &self.lateness())
            .finish()
    }
}

impl Delivery {
    /// The message id.
    pub fn id(&self) -> &str {
        &self.inner.id
    }
    /// The queue it came from.
    pub fn queue(&self) -> &str {
        &self.inner.queue
    }
    /// The body, byte for byte as published.
    pub fn body(&self) -> &[u8] {
        &self.inner.record.body
    }
    /// The headers as published.
    pub fn headers(&self) -> &BTreeMap<String, String> {
        &self.inner.record.headers
    }
    /// 1 on the first delivery, one more for every failed or expired attempt before.
    pub fn attempt(&self) -> u32 {
        self.inner.record.attempts + 1
    }
    /// Deliveries allowed before the message goes to the dead letters.
    pub fn max_attempts(&self) -> u32 {
        self.inner.record.max_attempts
    }
    /// The reason given by the previous failed attempt, if any.
    pub fn last_error(&self) -> Option<&str> {
        self.inner.record.last_error.as_deref()
    }
    /// When Redis stored the message (Redis clock).
    pub fn published_at(&self) -> SystemTime {
        ms_to_time(self.inner.record.published_at_ms)
    }
    /// When the message became due (Redis clock); for a retry, when the retry became due.
    pub fn due_at(&self) -> SystemTime {
        ms_to_time(self.inner.record.due_at_ms)
    }
    /// When the message expires, if it does: it is not delivered again after that.
    pub fn expires_at(&self) -> Option<SystemTime> {
        (self.inner.record.expire_at_ms > 0).then(|| ms_to_time(self.inner.record.expire_at_ms))
    }
    /// When this delivery was leased (Redis clock, microsecond precision).
    pub fn delivered_at(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_micros(self.inner.delivered_at_us.max(0) as u64)
    }
    /// How late the delivery is, by the Redis clock: `delivered_at - due_at`, or `delivered_at -
    /// published_at` for a message published already due (an `at` in the past, or a producer
    /// whose clock runs ahead of Redis'), so that lateness measures the queue's own delay.
    pub fn lateness(&self) -> Duration {
        let from_ms = self.inner.record.due_at_ms.max(self.inner.record.published_at_ms);
        let us = self.inner.delivered_at_us - from_ms * 1000;
        Duration::from_micros(us.max(0) as u64)
    }
    /// The current lease deadline (Redis clock).
    pub fn lease_deadline(&self) -> SystemTime {
        ms_to_time(self.inner.lease_deadline_ms.load(Ordering::Relaxed))
    }
    /// The lease token (for `Queue::ack` and friends, when settling by id).
    pub fn token(&self) -> &str {
        &self.inner.token_hex
    }
    /// True once ack or nack was called (successfully or not).
    pub fn is_settled(&self) -> bool {
        self.inner.settled.load(Ordering::Acquire)
    }

    fn begin_settle(&self) -> Result<()> {
        if self.inner.settled.swap(true, Ordering::AcqRel) {
            return Err(Error::lease_lost(&self.inner.id));
        }
        Ok(())
    }

    /// Marks the delivery settled and returns its ack request.
    pub(crate) fn ack_op(&self) -> Result<Op> {
        self.begin_settle()?;
        Ok(Op::Ack { id: self.inner.id.clone(), token: self.inner.token })
    }

    /// Checks `retry_in`, marks the delivery settled and returns its nack request.
    pub(crate) fn nack_op(&self, retry_in: Option<Duration>, reason: &str) -> Result<Op> {
        if let Some(d) = retry_in {
            limits::check_retry_in(d)?;
        }
        self.begin_settle()?;
        let mode = match retry_in {
            Some(d) => NackMode::After(d.as_millis() as u64),
            None => NackMode::Backoff,
        };
        Ok(Op::Nack {
            id: self.inner.id.clone(),
            token: self.inner.token,
            mode,
            reason: truncate(reason, limits::MAX_REASON_BYTES),
        })
    }

    /// Marks the delivery settled and returns the request that hands it back unprocessed.
    pub(crate) fn release_op(&self) -> Result<Op> {
        self.begin_settle()?;
        Ok(Op::Nack {
            id: self.inner.id.clone(),
            token: self.inner.token,
            mode: NackMode::Release,
            reason: String::new(),
        })
    }

    /// Acknowledge: the message is done and deleted. `LeaseLost` if the lease had expired (the
    /// message may then be delivered again) or it was already settled.
    ///
    /// Like every settle, it is sent when called: dropping the returned future (a caller
    /// cancelled while it waits) does not take it back, only the answer is lost.
    pub fn ack(&self) -> impl Future<Output = Result<()>> + Send + 'static {
        let sent = self.ack_op().map(|op| self.inner.settler.settle(op));
        async move { sent?.await.map(|_| ()) }
    }

    /// Give the message back for another attempt: after `retry_in`, or after the message's
    /// exponential backoff when `None`. At max_attempts it goes to the dead letters with
    /// `reason`. Returns true when it went to the dead letters. Sent when called (see `ack`).
    pub fn nack(
        &self,
        retry_in: Option<Duration>,
        reason: &str,
    ) -> impl Future<Output = Result<bool>> + Send + 'static {
        let sent = self.nack_op(retry_in, reason).map(|op| self.inner.settler.settle(op));
        async move { Ok(sent?.await? == Settled::Dead) }
    }

    /// Hand the message back unprocessed, due now, without counting an attempt (for a
    /// consumer that cannot start the work, e.g. while shutting down). Sent when called.
    pub fn release(&self) -> impl Future<Output = Result<()>> + Send + 'static {
        let sent = self.release_op().map(|op| self.inner.settler.settle(op));
        async move { sent?.await.map(|_| ()) }
    }

    /// Extend the lease to `ttr` from now (Redis clock). A subscription does this by itself
    /// while the handler runs; pulled deliveries (`Queue::fetch`) need it for long work. Sent
    /// when called.
    pub fn extend(&self, ttr: Duration) -> impl Future<Output = Result<()>> + Send + 'static {
        let inner = self.inner.clone();
        let sent = limits::check_ttr("ttr", ttr).and_then(|()| {
            if self.is_settled() {
                return Err(Error::lease_lost(&inner.id));
            }
            let op = Op::Extend { id: inner.id.clone(), token: inner.token, ttr_ms: ttr.as_millis() as u64 };
            Ok(inner.settler.settle(op))
        });
        async move {
            if let Settled::Extended(deadline) = sent?.await? {
                inner.lease_deadline_ms.store(deadline, Ordering::Relaxed);
            }
            Ok(())
        }
    }
}

pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}
