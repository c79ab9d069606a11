//! What a producer publishes: [`Message`], and what it gets back: [`Published`].

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// A message id that no earlier one had, in any queue, even one destroyed and made again: the
/// time (ms, hex) and 64 random bits, e.g. `18c2f3a4b5c-9f3e0d1c2b3a4958`. Never all digits
/// (those are a plain queue's generated ids, which count per queue and start over when it is
/// destroyed). A sharded queue's client gives one to each message published without an id; the
/// gateway's lmstfy API gives one to every job, as lmstfy's ids never repeat.
pub fn unique_id() -> String {
    format!("{:x}-{:016x}", crate::base::time::time_to_ms(SystemTime::now()).max(0), rand::random::<u64>())
}

/// When a message becomes due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// This long after Redis receives the publish (by the Redis clock).
    In(Duration),
    /// At this wall-clock time (compared with the Redis clock).
    At(SystemTime),
}

impl Due {
    /// The due time from a `delay` or an `at` (the form every binding's options take): one of
    /// them, not both; neither is "due now".
    pub fn from_parts(delay: Option<Duration>, at: Option<SystemTime>) -> crate::Result<Due> {
        match (delay, at) {
            (Some(_), Some(_)) => Err(crate::Error::invalid("delay/at: give one of them, not both")),
            (_, Some(t)) => Ok(Due::At(t)),
            (d, None) => Ok(Due::In(d.unwrap_or_default())),
        }
    }

    /// [`from_parts`](Self::from_parts) for a new due time (a reschedule): one of them must be
    /// given, since giving neither would silently mean "now".
    pub fn required(delay: Option<Duration>, at: Option<SystemTime>) -> crate::Result<Due> {
        if delay.is_none() && at.is_none() {
            return Err(crate::Error::invalid("delay/at: reschedule needs a new due time (`delay` or `at`)"));
        }
        Self::from_parts(delay, at)
    }
}

/// A message to publish. Built with chained setters:
/// `Message::new(b"hello".to_vec()).delay(Duration::from_secs(5)).id("order-7")`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub(crate) body: Vec<u8>,
    pub(crate) id: Option<String>,
    pub(crate) due: Due,
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) max_attempts: Option<u32>,
    pub(crate) ttr: Option<Duration>,
    pub(crate) backoff_base: Option<Duration>,
    pub(crate) backoff_max: Option<Duration>,
    pub(crate) replace: bool,
    pub(crate) expires: Option<Due>,
    pub(crate) drop_on_expiry: bool,
}

impl Message {
    /// A message with `body`, due now, with the queue's default settings.
    pub fn new(body: impl Into<Vec<u8>>) -> Self {
        Message {
            body: body.into(),
            id: None,
            due: Due::In(Duration::ZERO),
            headers: BTreeMap::new(),
            max_attempts: None,
            ttr: None,
            backoff_base: None,
            backoff_max: None,
            replace: false,
            expires: None,
            drop_on_expiry: false,
        }
    }

    /// Due `delay` after Redis receives the publish.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.due = Due::In(delay);
        self
    }

    /// Due at `at` (by the Redis clock). A time in the past means due now.
    pub fn at(mut self, at: SystemTime) -> Self {
        self.due = Due::At(at);
        self
    }

    /// Sets the due time.
    pub fn due(mut self, due: Due) -> Self {
        self.due = due;
        self
    }

    /// Your own id, unique within the queue. Publishing an id that exists is reported as a
    /// duplicate and changes nothing, unless [`Message::replace`] is set. Without an id,
    /// redelay generates one (all digits on a plain queue, `<ms>-<random>` in hex on a sharded
    /// one).
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Adds a header (a string pair carried with the message).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// Sets all headers.
    pub fn headers(mut self, headers: BTreeMap<String, String>) -> Self {
        self.headers = headers;
        self
    }

    /// Deliveries allowed before the message goes to the dead letters (1 to 1000; default 10).
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = Some(n);
        self
    }

    /// Lease length (time to run) of each delivery, unless the consumer sets its own
    /// (100 ms to 24 h; default 30 s).
    pub fn ttr(mut self, ttr: Duration) -> Self {
        self.ttr = Some(ttr);
        self
    }

    /// Retry backoff: `base` doubled at each failed attempt, capped at `max`, with jitter
    /// (default 1 s and 1 h). Each is 1 ms to 7 days, and `base` may not be above `max`.
    pub fn backoff(mut self, base: Duration, max: Duration) -> Self {
        self.backoff_base = Some(base);
        self.backoff_max = Some(max);
        self
    }

    /// Not delivered after this long from the publish (by the Redis clock): a message not yet
    /// delivered by then becomes a dead letter with the reason "expired: not delivered before its expiry time" (or is deleted, with
    /// [`drop_on_expiry`](Message::drop_on_expiry)). Must be after the due time.
    pub fn expires_in(mut self, d: Duration) -> Self {
        self.expires = Some(Due::In(d));
        self
    }

    /// Not delivered after `at` (by the Redis clock); see [`expires_in`](Message::expires_in).
    pub fn expires_at(mut self, at: SystemTime) -> Self {
        self.expires = Some(Due::At(at));
        self
    }

    /// On expiry, delete the message instead of keeping it as a dead letter.
    pub fn drop_on_expiry(mut self, drop: bool) -> Self {
        self.drop_on_expiry = drop;
        self
    }

    /// Replace an existing message with the same id instead of reporting a duplicate. A
    /// consumer holding the old one loses its lease.
    pub fn replace(mut self, replace: bool) -> Self {
        self.replace = replace;
        self
    }
}

/// What happened to one published message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PublishStatus {
    /// Stored and scheduled.
    Stored,
    /// A message with this id already existed; nothing was changed.
    Duplicate,
    /// A message with this id existed and was replaced.
    Replaced,
}

impl PublishStatus {
    /// Lower-case name: `stored`, `duplicate`, `replaced`.
    pub fn as_str(self) -> &'static str {
        match self {
            PublishStatus::Stored => "stored",
            PublishStatus::Duplicate => "duplicate",
            PublishStatus::Replaced => "replaced",
        }
    }
}

/// The result of publishing one message.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Published {
    /// The message id (generated when none was given).
    pub id: String,
    /// Stored, duplicate or replaced.
    pub status: PublishStatus,
}

impl Published {
    /// True when an existing message with this id made the publish a no-op.
    pub fn is_duplicate(&self) -> bool {
        self.status == PublishStatus::Duplicate
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn unique_ids_are_unique_and_never_all_digits() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| super::unique_id()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| crate::base::limits::check_id(id).is_ok()));
    }
}
