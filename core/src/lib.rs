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

mod batch;
mod bridge;
mod client;
mod connection;
mod consumer;
mod dedicated;
mod delivery;
mod error;
mod info;
mod keys;
pub mod limits;
mod message;
mod options;
mod queue;
mod record;
mod reply;
mod scripts;
mod settle;
mod wake;

pub use batch::{BatchHandler, Completer};
pub use bridge::Wake;
pub use client::{redact, Client, ClientBuilder};
pub use connection::URL_SCHEMES;
pub use consumer::{Counters, Failure, Handler, HandlerFuture, Subscription};
pub use delivery::Delivery;
pub use error::{Error, ErrorKind, Result};
pub use info::{MessageInfo, Select, State, Stats, VerifyReport};
pub use message::{Due, Message, PublishStatus, Published};
pub use options::{batch_messages, ClientOptions, DeadLetterQuery, PublishOptions, SubscribeOptions};
pub use queue::{Queue, VERIFY_MAX_RECORDS};
