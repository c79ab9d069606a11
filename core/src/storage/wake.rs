//! The `wake` pub/sub channel: one subscriber connection per client, shared by every consumer
//! and waiting `fetch` of that client. A wake carries the due time (Redis ms) of a message that
//! became the earliest one; a consumer moves its timer forward to it. After the subscriber
//! connection is lost and comes back, every listener is signalled "due now", so that a wake lost
//! meanwhile costs one fetch, not a late message.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::{mpsc, Notify};

use crate::storage::connection::PubSubTarget;

/// What one listener (a subscription or a waiting fetch) waits on.
pub(crate) struct WakeSlot {
    due: AtomicI64,
    pub notify: Notify,
}

impl WakeSlot {
    fn signal(&self, due_ms: i64) {
        self.due.fetch_min(due_ms, Ordering::AcqRel);
        self.notify.notify_one();
    }

    /// The earliest due time signalled since the last call, if any.
    pub fn take(&self) -> Option<i64> {
        let d = self.due.swap(i64::MAX, Ordering::AcqRel);
        (d != i64::MAX).then_some(d)
    }
}

enum Cmd {
    Add(String, Arc<WakeSlot>),
    Remove(String, Arc<WakeSlot>),
    Shutdown,
}

/// Handle to the client's wake task.
#[derive(Clone)]
pub(crate) struct WakeHub {
    tx: mpsc::UnboundedSender<Cmd>,
}

/// A listener's registration; dropping it unsubscribes.
pub(crate) struct Listener {
    hub: WakeHub,
    channel: String,
    pub slot: Arc<WakeSlot>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.hub.tx.send(Cmd::Remove(self.channel.clone(), self.slot.clone()));
    }
}

impl WakeHub {
    pub fn start(client: PubSubTarget, rt: &tokio::runtime::Handle) -> WakeHub {
        let (tx, rx) = mpsc::unbounded_channel();
        rt.spawn(run(client, rx));
        WakeHub { tx }
    }

    /// Ends the task and its connection.
    pub fn shutdown(&self) {
        let _ = self.tx.send(Cmd::Shutdown);
    }

    pub fn listen(&self, channel: &str) -> Listener {
        let slot = Arc::new(WakeSlot { due: AtomicI64::new(i64::MAX), notify: Notify::new() });
        let _ = self.tx.send(Cmd::Add(channel.to_string(), slot.clone()));
        Listener { hub: self.clone(), channel: channel.to_string(), slot }
    }
}

type Subs = HashMap<String, Vec<Arc<WakeSlot>>>;

/// Applies a command to the table; returns the channel to (un)subscribe, if any.
fn apply(subs: &mut Subs, cmd: Cmd) -> Option<(bool, String)> {
    match cmd {
        Cmd::Shutdown => None, // the task returns before it gets here
        Cmd::Add(ch, slot) => {
            let list = subs.entry(ch.clone()).or_default();
            list.push(slot);
            (list.len() == 1).then_some((true, ch))
        }
        Cmd::Remove(ch, slot) => {
            let list = subs.get_mut(&ch)?;
            list.retain(|s| !Arc::ptr_eq(s, &slot));
            if list.is_empty() {
                subs.remove(&ch);
                return Some((false, ch));
            }
            None
        }
    }
}

async fn run(client: PubSubTarget, mut rx: mpsc::UnboundedReceiver<Cmd>) {
    let mut subs: Subs = HashMap::new();
    let mut backoff = Duration::from_millis(50);
    loop {
        // Connect only while somebody listens.
        while subs.is_empty() {
            match rx.recv().await {
                Some(Cmd::Shutdown) | None => return,
                Some(cmd) => {
                    apply(&mut subs, cmd);
                }
            }
        }
        let pubsub = match tokio::time::timeout(Duration::from_secs(5), client.pubsub()).await {
            Ok(Ok(p)) => p,
            _ => {
                // Keep taking commands while Redis is away.
                let sleep = tokio::time::sleep(backoff);
                tokio::pin!(sleep);
                loop {
                    tokio::select! {
                        _ = &mut sleep => break,
                        cmd = rx.recv() => match cmd {
                            Some(Cmd::Shutdown) | None => return,
                            Some(cmd) => { apply(&mut subs, cmd); }
                        },
                    }
                }
                backoff = (backoff * 2).min(Duration::from_secs(1));
                continue;
            }
        };
        let (mut sink, mut stream) = pubsub.split();
        let mut ok = true;
        for ch in subs.keys() {
            if sink.subscribe(ch).await.is_err() {
                ok = false;
                break;
            }
        }
        if !ok {
            continue;
        }
        backoff = Duration::from_millis(50);
        // Anything published while we were not subscribed: look now.
        for slot in subs.values().flatten() {
            slot.signal(0);
        }
        loop {
            tokio::select! {
                msg = stream.next() => match msg {
                    Some(msg) => {
                        let due = std::str::from_utf8(msg.get_payload_bytes()).ok()
                            .and_then(|s| s.parse::<i64>().ok()).unwrap_or(0);
                        if let Some(list) = subs.get(msg.get_channel_name()) {
                            for slot in list {
                                slot.signal(due);
                            }
                        }
                    }
                    None => break,
                },
                cmd = rx.recv() => match cmd {
                    Some(Cmd::Shutdown) | None => return,
                    Some(cmd) => {
                        // A new listener looks once as soon as it is registered: a publish
                        // between its last fetch and now would otherwise be missed.
                        let added = match &cmd { Cmd::Add(_, slot) => Some(slot.clone()), _ => None };
                        let r = match apply(&mut subs, cmd) {
                            Some((true, ch)) => sink.subscribe(&ch).await,
                            Some((false, ch)) => sink.unsubscribe(&ch).await,
                            None => Ok(()),
                        };
                        if r.is_err() { break; }
                        if let Some(slot) = added { slot.signal(0); }
                    }
                },
            }
        }
    }
}
