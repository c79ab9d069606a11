//! What every call of one client shares: the connections, the wake-up hub, the runtime, the
//! client's options and defaults, and the subscriptions `Client::close` closes first. Queues and
//! subscriptions hold it; the `Client` facade is a handle to it.

use std::time::Duration;

use crate::base::error::{Error, Result};
use crate::storage::connection::Conn;
use crate::storage::wake::WakeHub;

pub(crate) struct Ctx {
    pub conn: Conn,
    /// Connections of their own for publishes that wait for replicas.
    pub dedicated: crate::storage::dedicated::Dedicated,
    pub prefix: String,
    pub max_body_bytes: usize,
    /// Replicas a publish waits for (WAIT), and for how long; None = don't wait.
    pub wait_replicas: Option<(u32, Duration)>,
    pub rt: tokio::runtime::Handle,
    pub wake: WakeHub,
    pub defaults: Defaults,
    pub closed: std::sync::atomic::AtomicBool,
    /// Subscriptions made through this client, closed by `Client::close`.
    pub subscriptions: std::sync::Mutex<Vec<std::sync::Weak<dyn Closes>>>,
    /// Serialises `Client::close`.
    pub closing: tokio::sync::Mutex<()>,
}

/// Something `Client::close` closes first: a subscription.
pub(crate) trait Closes: Send + Sync {
    fn close_and_drain(&self) -> futures_util::future::BoxFuture<'_, ()>;
}

impl Ctx {
    /// Registers a subscription to be closed with the client.
    pub fn register(&self, s: std::sync::Weak<dyn Closes>) {
        let mut list = self.subscriptions.lock().unwrap();
        list.retain(|w| w.strong_count() > 0);
        list.push(s);
    }
}

impl Ctx {
    /// True once `Client::close` finished closing.
    pub fn is_closed(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Err(Connection "client is closed") once `Client::close` was called.
    pub fn check_open(&self) -> Result<()> {
        if self.closed.load(std::sync::atomic::Ordering::Acquire) {
            return Err(Error::client_closed());
        }
        Ok(())
    }
}

/// Settings of messages that do not set their own.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Defaults {
    pub max_attempts: u32,
    pub ttr: Duration,
    pub backoff_base: Duration,
    pub backoff_max: Duration,
}
