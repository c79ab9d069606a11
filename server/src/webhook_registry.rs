//! What this server keeps of its webhook workers (`webhook.rs` runs them): the registry the
//! shared state (`AppState`) holds, and each worker's handle. It knows nothing of queues or
//! requests, so the state holds it without importing the workers' code, which takes the state.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Mutex, OnceLock};

use tokio::sync::watch;

/// The webhook workers of this server, by queue: each one's URL, its stop signal and its end (a
/// worker stays here until it has ended, stopped or not); one `sync` at a time (its lock); and
/// the HTTP client of every worker (one connection pool), made when the webhooks start.
#[derive(Default)]
pub struct Webhooks {
    pub running: Mutex<HashMap<String, Worker>>,
    pub sync: tokio::sync::Mutex<()>,
    pub http: OnceLock<reqwest::Client>,
}

impl Webhooks {
    /// The worker of queue `q` whose end is `end` has ended: its entry goes (unless another
    /// worker of `q` took its place), so that a `sync` waiting for it finds the queue free.
    pub fn remove_ended(&self, q: &str, end: &watch::Sender<()>) {
        let me = end.subscribe();
        let mut run = self.running.lock().unwrap();
        if run.get(q).is_some_and(|w| w.ended.same_channel(&me)) {
            run.remove(q);
        }
    }
}

/// A webhook worker's handle, in [`Webhooks::running`] from its start until it has ended.
pub struct Worker {
    /// The URL it POSTs to.
    pub url: String,
    /// `true`: stop (between fetches: see `webhook.rs`).
    stop: watch::Sender<bool>,
    /// Closed when the worker has ended (its sender dropped).
    ended: watch::Receiver<()>,
}

impl Worker {
    /// The handle of a worker of `url`, with what the worker's task keeps: the stop signal it
    /// watches, and its end, to drop when it has ended.
    pub fn new(url: String) -> (Worker, watch::Receiver<bool>, watch::Sender<()>) {
        let (stop, stop_rx) = watch::channel(false);
        let (end, ended) = watch::channel(());
        (Worker { url, stop, ended }, stop_rx, end)
    }

    /// Asks the worker to stop; [`ended`](Self::ended) tells when it has.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// Whether it was asked to stop.
    pub fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Whether it has ended (asked to or not: a panic ends it too).
    pub fn has_ended(&self) -> bool {
        self.ended.has_changed().is_err()
    }

    /// Resolves once the worker has ended (its POSTs settled, what it did not push released).
    pub fn ended(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut ended = self.ended.clone();
        async move {
            // Nothing is ever sent: this returns when the sender is dropped, at the worker's end.
            while ended.changed().await.is_ok() {}
        }
    }
}
