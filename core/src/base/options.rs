//! The options of every call, as plain data with defaults and one `validate()` each. Bindings
//! map their language's arguments onto these fields one to one; every default, range and rule
//! (such as "delay and at exclude each other") is decided here, once.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use crate::base::error::{Error, Result};
use crate::base::limits;
use crate::base::message::{Due, Message};
use crate::base::wire;
use serde::{Deserialize, Serialize};

/// How to publish one message. `Default` is "due now, the client's defaults for the rest".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PublishOptions {
    /// Your own id, unique within the queue; None generates one (all digits on a plain queue,
    /// `<ms>-<random>` in hex on a sharded one).
    pub id: Option<String>,
    /// Due this long after Redis receives the publish. Excludes `at`.
    #[serde(rename = "delay_ms", with = "wire::opt_ms")]
    pub delay: Option<Duration>,
    /// Due at this time (by the Redis clock). Excludes `delay`.
    #[serde(rename = "at_ms", with = "wire::opt_time_ms")]
    pub at: Option<SystemTime>,
    pub headers: BTreeMap<String, String>,
    /// Deliveries allowed before the message goes to the dead letters (default: the client's).
    pub max_attempts: Option<u32>,
    /// Lease length of each delivery (default: the client's).
    #[serde(rename = "ttr_ms", with = "wire::opt_ms")]
    pub ttr: Option<Duration>,
    /// First retry backoff (default: the client's); doubles at each failed attempt.
    #[serde(rename = "backoff_base_ms", with = "wire::opt_ms")]
    pub backoff_base: Option<Duration>,
    /// Largest retry backoff (default: the client's).
    #[serde(rename = "backoff_max_ms", with = "wire::opt_ms")]
    pub backoff_max: Option<Duration>,
    /// Replace an existing message with the same id instead of reporting a duplicate.
    pub replace: bool,
    /// Not delivered after this long from the publish. Excludes `expires_at`.
    #[serde(rename = "expires_in_ms", with = "wire::opt_ms")]
    pub expires_in: Option<Duration>,
    /// Not delivered after this time. Excludes `expires_in`.
    #[serde(rename = "expires_at_ms", with = "wire::opt_time_ms")]
    pub expires_at: Option<SystemTime>,
    /// On expiry, delete the message instead of keeping it as a dead letter ("expired").
    pub drop_on_expiry: bool,
}

impl PublishOptions {
    /// Checks what can be checked without a client: exclusive fields and each field's range.
    /// (The body's size and the defaults are checked by the queue at publish.)
    pub fn validate(&self) -> Result<()> {
        let due = Due::from_parts(self.delay, self.at)?;
        if self.expires_in.is_some() && self.expires_at.is_some() {
            return Err(Error::invalid("expires_in/expires_at: give one of them, not both"));
        }
        let expires = self.expires_in.map(Due::In).or(self.expires_at.map(Due::At));
        limits::check_expiry(due, expires, self.drop_on_expiry)?;
        if let Some(id) = &self.id {
            limits::check_id(id)?;
        }
        if let Some(d) = self.delay {
            limits::check_delay("delay", d)?;
        }
        if let Some(n) = self.max_attempts {
            limits::check_max_attempts("max_attempts", n)?;
        }
        if let Some(t) = self.ttr {
            limits::check_ttr("ttr", t)?;
        }
        match (self.backoff_base, self.backoff_max) {
            (Some(base), Some(max)) => limits::check_backoff_pair("backoff", base, max)?,
            (Some(base), None) => limits::check_backoff("backoff base", base)?,
            (None, Some(max)) => limits::check_backoff("backoff max", max)?,
            (None, None) => {}
        }
        limits::check_headers(self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())), self.headers.len())
    }

    /// The message with `body` and these options, after [`validate`](Self::validate).
    pub fn message(self, body: impl Into<Vec<u8>>) -> Result<Message> {
        self.validate()?;
        let mut m = Message::new(body).headers(self.headers).replace(self.replace);
        if let Some(id) = self.id {
            m = m.id(id);
        }
        m = m.due(Due::from_parts(self.delay, self.at)?);
        if let Some(n) = self.max_attempts {
            m = m.max_attempts(n);
        }
        if let Some(t) = self.ttr {
            m = m.ttr(t);
        }
        m.backoff_base = self.backoff_base;
        m.backoff_max = self.backoff_max;
        m.expires = self.expires_in.map(Due::In).or(self.expires_at.map(Due::At));
        m.drop_on_expiry = self.drop_on_expiry;
        Ok(m)
    }
}

/// The messages of a batch from (body, options) pairs, each checked as by
/// [`PublishOptions::message`]; an error names the message's position ("message 3: ttr: …")
/// and nothing is published.
pub fn batch_messages(items: Vec<(Vec<u8>, PublishOptions)>) -> Result<Vec<Message>> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, (body, o))| o.message(body).map_err(|e| Error::invalid(format!("message {i}: {}", e.message()))))
        .collect()
}

/// What a respawn does with each message's expiry. `Default`: keep it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RespawnExpiry {
    /// Each message keeps its own expiry: one whose expiry passed while it was dead expires as
    /// soon as it is due again, that is at once.
    #[default]
    Keep,
    /// No expiry any more: the message waits until it is delivered.
    Clear,
    /// Expires this long after the respawn (by the Redis clock, like every due time).
    In(Duration),
}

impl RespawnExpiry {
    /// The choice from its wire fields: `expires_in` or `clear_expiry` (neither keeps the
    /// expiry), checked.
    pub fn from_parts(expires_in: Option<Duration>, clear: bool) -> Result<Self> {
        let e = match (expires_in, clear) {
            (None, false) => RespawnExpiry::Keep,
            (None, true) => RespawnExpiry::Clear,
            (Some(d), false) => RespawnExpiry::In(d),
            (Some(_), true) => return Err(Error::invalid("expires_in/clear_expiry: give one of them, not both")),
        };
        e.validate()?;
        Ok(e)
    }

    /// A fresh expiry has the rules of a publish's `expires_in` for a message due now: after
    /// the due time (at least 1 ms) and within the 10-year bound.
    pub fn validate(&self) -> Result<()> {
        match *self {
            RespawnExpiry::In(d) => limits::check_expiry(Due::In(Duration::ZERO), Some(Due::In(d)), false),
            _ => Ok(()),
        }
    }

    /// The argument of `respawn.lua`: -1 keep, 0 clear, N ms after the respawn.
    pub(crate) fn script_arg(&self) -> i64 {
        match *self {
            RespawnExpiry::Keep => -1,
            RespawnExpiry::Clear => 0,
            RespawnExpiry::In(d) => d.as_millis() as i64,
        }
    }
}

/// Options of a client. `Default` is redelay's defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClientOptions {
    /// Key prefix of every queue (default `redelay`).
    pub prefix: String,
    /// Largest body accepted by publish (default 8 MiB).
    pub max_body_bytes: usize,
    /// Durability: a publish returns only after this many replicas have it, waiting at most
    /// this long (Redis WAIT); None = don't wait.
    #[serde(with = "replicas")]
    pub wait_for_replicas: Option<(u32, Duration)>,
    /// How long to try to reach Redis before a Connection error (default 5 s).
    #[serde(rename = "connect_timeout_ms", with = "wire::ms")]
    pub connect_timeout: Duration,
    /// How long to wait for any one answer from Redis before a Timeout error (default 10 s).
    #[serde(rename = "response_timeout_ms", with = "wire::ms")]
    pub response_timeout: Duration,
    /// Defaults of messages that do not set their own.
    pub default_max_attempts: u32,
    #[serde(rename = "default_ttr_ms", with = "wire::ms")]
    pub default_ttr: Duration,
    #[serde(rename = "default_backoff_base_ms", with = "wire::ms")]
    pub default_backoff_base: Duration,
    #[serde(rename = "default_backoff_max_ms", with = "wire::ms")]
    pub default_backoff_max: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            prefix: "redelay".to_string(),
            max_body_bytes: limits::DEFAULT_MAX_BODY_BYTES,
            wait_for_replicas: None,
            connect_timeout: Duration::from_secs(5),
            response_timeout: Duration::from_secs(10),
            default_max_attempts: limits::DEFAULT_MAX_ATTEMPTS,
            default_ttr: limits::DEFAULT_TTR,
            default_backoff_base: limits::DEFAULT_BACKOFF_BASE,
            default_backoff_max: limits::DEFAULT_BACKOFF_MAX,
        }
    }
}

impl ClientOptions {
    pub fn validate(&self) -> Result<()> {
        limits::check_prefix(&self.prefix)?;
        limits::check_max_body_setting(self.max_body_bytes)?;
        limits::check_max_attempts("default_max_attempts", self.default_max_attempts)?;
        limits::check_ttr("default_ttr", self.default_ttr)?;
        limits::check_backoff_pair("default_backoff", self.default_backoff_base, self.default_backoff_max)?;
        for (field, d) in [("connect_timeout", self.connect_timeout), ("response_timeout", self.response_timeout)] {
            limits::check_span(field, d, Duration::from_millis(1), Duration::from_secs(3600))?;
        }
        if let Some((n, t)) = self.wait_for_replicas {
            if n == 0 || n > 100 {
                return Err(Error::invalid(format!("wait_for_replicas.replicas: must be 1 to 100, got {n}")));
            }
            limits::check_span("wait_for_replicas.timeout", t, Duration::from_millis(1), Duration::from_secs(60))?;
        }
        Ok(())
    }
}

/// Options of a subscription. `Default`: 10 handlers, as many prefetched, each message's own
/// ttr, 30 s drain, 1 s longest idle sleep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SubscribeOptions {
    /// Handlers running at once (default 10; 1 to [`MAX_CONCURRENCY`](limits::MAX_CONCURRENCY)).
    pub concurrency: usize,
    /// Messages leased ahead and waiting for a free handler slot (None: as many as
    /// `concurrency`, at most [`MAX_FETCH`](limits::MAX_FETCH); 0 to `MAX_FETCH`). Their leases
    /// are kept alive too.
    pub prefetch: Option<usize>,
    /// Lease length of each delivery; None uses each message's own ttr.
    #[serde(rename = "ttr_ms", with = "wire::opt_ms")]
    pub ttr: Option<Duration>,
    /// How long `close` waits for running handlers (default 30 s). Those still running then
    /// are abandoned; their messages are delivered again when their leases run out (a
    /// handler's own ack, nack or extend still reaches its lease while it holds).
    #[serde(rename = "drain_timeout_ms", with = "wire::ms")]
    pub drain_timeout: Duration,
    /// Longest idle sleep between fetches, in case a wake-up was lost (default 1 s; 10 ms to
    /// 60 s).
    #[serde(rename = "max_idle_ms", with = "wire::ms")]
    pub max_idle: Duration,
}

impl Default for SubscribeOptions {
    fn default() -> Self {
        SubscribeOptions {
            concurrency: 10,
            prefetch: None,
            ttr: None,
            drain_timeout: Duration::from_secs(30),
            max_idle: Duration::from_secs(1),
        }
    }
}

impl SubscribeOptions {
    /// Default options with `concurrency` handlers (and as many prefetched).
    pub fn concurrency(n: usize) -> Self {
        SubscribeOptions { concurrency: n, ..Default::default() }
    }

    /// The prefetch in effect.
    pub fn prefetch(&self) -> usize {
        self.prefetch.unwrap_or(self.concurrency.min(limits::MAX_FETCH))
    }

    /// Messages a subscription holds at most: `concurrency` running and `prefetch` waiting.
    pub fn in_flight(&self) -> usize {
        self.concurrency + self.prefetch()
    }

    pub fn validate(&self) -> Result<()> {
        limits::check_concurrency(self.concurrency)?;
        if let Some(p) = self.prefetch {
            if p > limits::MAX_FETCH {
                return Err(Error::invalid(format!("prefetch: must be 0 to {}, got {p}", limits::MAX_FETCH)));
            }
        }
        if let Some(t) = self.ttr {
            limits::check_ttr("ttr", t)?;
        }
        limits::check_span("drain_timeout", self.drain_timeout, Duration::ZERO, Duration::from_secs(24 * 3600))?;
        limits::check_span("max_idle", self.max_idle, Duration::from_millis(10), Duration::from_secs(60))?;
        Ok(())
    }
}

/// Which page of dead letters to list. `Default`: the oldest 100.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeadLetterQuery {
    pub offset: usize,
    /// 1 to [`MAX_FETCH`](limits::MAX_FETCH) (default [`DEFAULT_DEAD_LETTER_LIMIT`](limits::DEFAULT_DEAD_LETTER_LIMIT)).
    pub limit: usize,
}

impl Default for DeadLetterQuery {
    fn default() -> Self {
        DeadLetterQuery { offset: 0, limit: limits::DEFAULT_DEAD_LETTER_LIMIT }
    }
}

impl DeadLetterQuery {
    pub fn validate(&self) -> Result<()> {
        limits::check_fetch_count("limit", self.limit)
    }
}

/// Options of a queue's message stream (`Queue::messages`). `Default`: the core's defaults
/// ([`DEFAULT_FETCH_MAX`](limits::DEFAULT_FETCH_MAX) per fetch, each fetch waiting
/// [`DEFAULT_MESSAGES_WAIT`](limits::DEFAULT_MESSAGES_WAIT), each message's own ttr).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MessagesOptions {
    /// Messages leased by each fetch (1 to [`MAX_FETCH`](limits::MAX_FETCH); None: the default).
    pub batch: Option<usize>,
    /// How long each fetch waits for a first message before the stream fetches again
    /// ([`MIN_MESSAGES_WAIT`](limits::MIN_MESSAGES_WAIT) to [`MAX_DELAY`](limits::MAX_DELAY);
    /// None: the default).
    #[serde(rename = "wait_ms", with = "wire::opt_ms")]
    pub wait: Option<Duration>,
    /// Lease length of each delivery; None uses each message's own ttr.
    #[serde(rename = "ttr_ms", with = "wire::opt_ms")]
    pub ttr: Option<Duration>,
}

impl MessagesOptions {
    /// The messages each fetch leases.
    pub fn batch(&self) -> usize {
        self.batch.unwrap_or(limits::DEFAULT_FETCH_MAX)
    }

    /// How long each fetch waits.
    pub fn wait(&self) -> Duration {
        self.wait.unwrap_or(limits::DEFAULT_MESSAGES_WAIT)
    }

    pub fn validate(&self) -> Result<()> {
        limits::check_fetch_count("batch", self.batch())?;
        limits::check_span("wait", self.wait(), limits::MIN_MESSAGES_WAIT, limits::MAX_DELAY)?;
        if let Some(t) = self.ttr {
            limits::check_ttr("ttr", t)?;
        }
        Ok(())
    }
}

/// `wait_for_replicas` as `{"replicas": n, "timeout_ms": ms}` or null.
mod replicas {
    use super::*;

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Wire {
        replicas: u32,
        #[serde(with = "wire::ms")]
        timeout_ms: Duration,
    }

    pub fn serialize<S: serde::Serializer>(v: &Option<(u32, Duration)>, s: S) -> std::result::Result<S::Ok, S::Error> {
        v.map(|(replicas, timeout_ms)| Wire { replicas, timeout_ms }).serialize(s)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<Option<(u32, Duration)>, D::Error> {
        Ok(Option::<Wire>::deserialize(d)?.map(|w| (w.replicas, w.timeout_ms)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_exclusive_fields_are_refused() {
        PublishOptions::default().validate().unwrap();
        ClientOptions::default().validate().unwrap();
        SubscribeOptions::default().validate().unwrap();
        DeadLetterQuery::default().validate().unwrap();
        let both = PublishOptions { delay: Some(Duration::ZERO), at: Some(SystemTime::now()), ..Default::default() };
        assert!(both.validate().unwrap_err().message().starts_with("delay/at"));
        assert_eq!(SubscribeOptions::concurrency(7).prefetch(), 7);
        assert_eq!(SubscribeOptions { prefetch: Some(0), ..SubscribeOptions::concurrency(7) }.prefetch(), 0);
        for (o, word) in [
            (SubscribeOptions { concurrency: 0, ..Default::default() }, "concurrency"),
            (SubscribeOptions { prefetch: Some(1001), ..Default::default() }, "prefetch"),
            (SubscribeOptions { max_idle: Duration::from_millis(1), ..Default::default() }, "max_idle"),
        ] {
            assert!(o.validate().unwrap_err().message().starts_with(word));
        }
        let c = ClientOptions { wait_for_replicas: Some((1, Duration::ZERO)), ..Default::default() };
        assert!(c.validate().unwrap_err().message().starts_with("wait_for_replicas.timeout"));
        assert!(DeadLetterQuery { offset: 0, limit: 0 }.validate().unwrap_err().message().starts_with("limit"));
    }
}

/// Options of a queue handle (`Client::queue_with`). `Default`: one shard, the plain queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QueueOptions {
    /// Hash tags the queue's messages are spread over (1 to 256, default 1). 1 is the plain
    /// queue, one hash tag `{name}`; N > 1 spreads messages by id over `{name/0}` ..
    /// `{name/N-1}`, so that in a Redis Cluster one queue uses many masters. Every client
    /// must open a queue with the same count: the first sharded use stores it in Redis, and a
    /// handle with another count is refused with InvalidArgument.
    pub shards: u32,
}

impl Default for QueueOptions {
    fn default() -> Self {
        QueueOptions { shards: 1 }
    }
}

impl QueueOptions {
    /// Default options with `n` shards.
    pub fn shards(n: u32) -> Self {
        QueueOptions { shards: n }
    }

    pub fn validate(&self) -> Result<()> {
        if self.shards == 0 || self.shards > limits::MAX_SHARDS {
            return Err(Error::invalid(format!("shards: must be 1 to {}, got {}", limits::MAX_SHARDS, self.shards)));
        }
        Ok(())
    }
}
