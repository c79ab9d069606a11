//! redelay: a delayed-message queue on Redis.
//!
//! A producer publishes a message due at some time; at that time exactly one consumer gets it,
//! and it stays in Redis until that consumer acknowledges it. Time comes from the Redis clock,
//! delivery is at least once with leases, failures retry with exponential backoff and end in
//! dead letters. See `docs/architecture.md` for the keys, scripts and the life of a message.
//!
//! ```no_run
//! use std::time::Duration;
//! use redelay::{Client, Message, SubscribeOptions};
//!
//! # async fn demo() -> redelay::Result<()> {
//! let client = Client::connect("redis://127.0.0.1:6379").await?;
//! let orders = client.queue("orders")?;
//! orders.publish(Message::new(b"close order 42".to_vec()).delay(Duration::from_secs(30 * 60))).await?;
//!
//! let sub = orders
//!     .subscribe(|msg: redelay::Delivery| async move {
//!         println!("{} late by {:?}", msg.id(), msg.lateness());
//!         Ok::<(), redelay::Failure>(())
//!     }, SubscribeOptions::concurrency(16))
//!     .await?;
//! // ...
//! sub.close().await;
//! # Ok(()) }
//! ```

// Layers, each importing only from those above it in this list:
// base (errors, limits, keys, record, options, time, wire forms) -> storage (connections,
// scripts, replay keys, wake, settle, the client context) -> ops (queue, delivery) -> runtime
// (subscriptions) -> client, and `call` (every operation by name, over the client and queue).
mod base;
mod call;
mod client;
mod ops;
mod runtime;
mod storage;

pub use base::error::{Error, ErrorKind, Result};
pub use base::limits;
pub use base::logs::{add_log_sink, forward_logs, LogSink};
pub use base::message::{unique_id, Due, Message, PublishStatus, Published};
pub use base::options::{
    batch_messages, ClientOptions, DeadLetterQuery, MessagesOptions, PublishOptions, QueueOptions, RespawnExpiry,
    SubscribeOptions,
};
pub use base::spelling::{time_words, Spelling};
pub use base::url::redact;
pub use base::wire;
pub use call::{batch_from_wire, Bucket, Reply};
pub use client::{Client, ClientBuilder};
pub use ops::bulk::{BulkAction, BulkOptions, BulkReport, MAX_BULK_IDS};
pub use ops::delivery::Delivery;
pub use ops::handover::Handover;
pub use ops::info::{
    HistoryPoint, ListPage, MessageInfo, RespawnOptions, Search, SearchPage, Select, State, Stats, Step, VerifyReport,
    LATENESS_BUCKETS_MS,
};
pub use ops::messages::Messages;
pub use ops::queue::{Queue, VERIFY_MAX_RECORDS};
pub use ops::settings::Settings;
pub use ops::sharded::shard_of;
pub use runtime::bridge::Wake;
pub use runtime::consumer::{Queues, Subscription, MAX_QUEUES};
pub use runtime::types::{BatchHandler, Completer, Counters, Failure, Handler, HandlerFuture, Order};
pub use storage::connection::URL_SCHEMES;

/// Builds the core's lazily built globals (the Lua scripts, the origin of its monotonic clock)
/// now. A binding whose process may fork calls it before a fork can happen (Python, at each
/// connect): built on first use instead, one could be half-built by another thread at the
/// fork, and the child, which has no such thread, would wait for it for ever.
pub fn init_globals() {
    storage::scripts::init_all();
    base::time::init_mono();
}
