//! Push delivery: a queue with a webhook (`PUT /v1/queues/{queue}/webhook {"url": ...}`, kept
//! in the Redis hash `<prefix>:webhooks`) has its due messages POSTed by the server to the URL
//! as JSON (the fields of a fetched delivery, [`wire::delivery`], but the lease's `token` and
//! `lease_deadline_ms`: the server settles it): a 2xx answer acks the message, anything
//! else (or no answer within its lease) nacks it, so it is retried after the message's backoff
//! and ends in the dead letters at its last attempt. Every server with the same prefix runs the
//! webhooks it finds there (re-read every few seconds); each message goes to one of them.
//!
//! A worker stops between fetches: the fetch under way ends (it is not cut short, so what it
//! leases is the worker's), the POSTs under way are answered and settled, and what it fetched
//! but had not POSTed is released (due now, no attempt counted). A change made through this
//! server (`PUT`/`DELETE .../webhook`, a queue's destroy) is answered once the worker it
//! replaces or removes has so ended ([`sync`]): nothing more reaches the old URL from here.
//!
//! https: reqwest on rustls (ring), trusting the WebPKI roots compiled into the binary (the
//! `webpki-roots` crate, Mozilla's CA list; the system's certificate store is not read) and the
//! extra CA certificates of [`ServerConfig::webhook_ca_pem`] (`redelay serve --webhook-ca`).

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use redelay::{Delivery, Queue};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::config::ServerConfig;
use crate::error::{ApiError, CoreExt, Style};
use crate::state::AppState;
use crate::wire;

const S: Style = Style::V1;
/// Messages leased per fetch of one webhook worker (POSTed concurrently).
const BATCH: usize = 16;
/// How often a server re-reads the webhooks (those set through another server).
const RELOAD: Duration = Duration::from_secs(5);

/// A queue's webhook, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hook {
    pub url: String,
}

/// The stored webhooks: the core's settings hash `<prefix>:webhooks`, queue → [`Hook`] as JSON.
pub fn stored(st: &AppState) -> Result<redelay::Settings, ApiError> {
    st.client.settings("webhooks").api(S)
}

/// The stored webhooks, by queue (entries that are not a [`Hook`] are left out).
pub async fn load(st: &AppState) -> Result<HashMap<String, Hook>, ApiError> {
    let all = stored(st)?.all().await.api(S)?;
    Ok(all.into_iter().filter_map(|(q, v)| serde_json::from_str(&v).ok().map(|h| (q, h))).collect())
}

/// A webhook worker of this server, in [`Webhooks::running`](crate::state::Webhooks) from its
/// start until it has ended.
pub struct Worker {
    /// The URL it POSTs to.
    pub url: String,
    /// `true`: stop (at its next turn, see the module's note).
    stop: watch::Sender<bool>,
    /// Closed when the worker has ended (its sender dropped).
    ended: watch::Receiver<()>,
}

impl Worker {
    /// Asks the worker to stop; [`ended`](Self::ended) tells when it has.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    fn has_ended(&self) -> bool {
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

/// Starts and stops workers so that they match the webhooks stored in Redis, and returns once
/// every worker it (or another call) stopped has ended — so that a handler that changed a
/// webhook answers when the old worker is done — and the webhooks those gave way to have
/// started. One call at a time looks at Redis and starts workers (a call that read the
/// webhooks before a change cannot start a worker after the change's own call stopped it).
pub async fn sync(st: &AppState) {
    // None until `start` (and when it could not build the client).
    let Some(http) = st.webhooks.http.get() else { return };
    loop {
        let ending = {
            let _one = st.webhooks.sync.lock().await;
            let want = match load(st).await {
                Ok(w) => w,
                Err(e) => {
                    tracing::warn!(target: "redelay::server", "webhooks: {}", e.message);
                    return;
                }
            };
            // The lock of `running` is not held while a queue is opened (the sync lock keeps
            // other calls from starting the same webhook meanwhile).
            let (ending, missing) = {
                let mut run = st.webhooks.running.lock().unwrap();
                // (A worker that ended without being asked, e.g. a panic, left its entry.)
                run.retain(|_, w| !w.has_ended());
                let mut ending = Vec::new();
                for (q, w) in run.iter() {
                    if want.get(q).is_none_or(|h| h.url != w.url) {
                        w.stop();
                    }
                    if w.stopping() {
                        ending.push(w.ended());
                    }
                }
                // A queue whose worker is still stopping gets its new one on the next turn.
                let missing: Vec<(String, Hook)> = want.into_iter().filter(|(q, _)| !run.contains_key(q)).collect();
                (ending, missing)
            };
            for (q, hook) in missing {
                let Ok(queue) = st.queue(&q, S).await else { continue };
                let w = spawn(st, http.clone(), q.clone(), queue, hook.url);
                st.webhooks.running.lock().unwrap().insert(q, w);
            }
            ending
        };
        if ending.is_empty() {
            return;
        }
        futures_util::future::join_all(ending).await;
    }
}

/// Starts the worker of queue `q`; at its end it leaves [`Webhooks::running`] (before it is
/// seen ended, so that a [`sync`] waiting for it finds the queue free).
///
/// [`Webhooks::running`]: crate::state::Webhooks
fn spawn(st: &AppState, http: reqwest::Client, q: String, queue: Queue, url: String) -> Worker {
    let (stop, stop_rx) = watch::channel(false);
    let (ended_tx, ended) = watch::channel(());
    let (st, hook_url) = (st.clone(), url.clone());
    tokio::spawn(async move {
        worker(http, queue, hook_url, stop_rx).await;
        let me = ended_tx.subscribe();
        let mut run = st.webhooks.running.lock().unwrap();
        if run.get(&q).is_some_and(|w| w.ended.same_channel(&me)) {
            run.remove(&q);
        }
        drop(run);
        drop(ended_tx);
    });
    Worker { url, stop, ended }
}

/// The webhooks' HTTP client: the WebPKI roots, and the certificates of `webhook_ca_pem`.
pub fn http_client(config: &ServerConfig) -> redelay::Result<reqwest::Client> {
    let bad = |m: String| redelay::Error::invalid(format!("webhook_ca: {m}"));
    let mut b = reqwest::Client::builder();
    if let Some(pem) = &config.webhook_ca_pem {
        let certs =
            reqwest::Certificate::from_pem_bundle(pem).map_err(|e| bad(format!("not PEM certificates: {e}")))?;
        if certs.is_empty() {
            return Err(bad("no PEM certificate (-----BEGIN CERTIFICATE-----) in it".into()));
        }
        for c in certs {
            b = b.add_root_certificate(c);
        }
    }
    b.build().map_err(|e| bad(chain(&e)))
}

/// An error with its causes (reqwest's own message leaves out what went wrong in TLS).
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s = format!("{s}: {c}");
        cause = c.source();
    }
    s
}

/// Starts the webhooks found in Redis, and re-reads them every few seconds until `stop`.
pub fn start(st: &AppState, mut stop: tokio::sync::watch::Receiver<bool>) {
    let st = st.clone();
    match http_client(&st.config) {
        Ok(h) => _ = st.webhooks.http.set(h),
        Err(e) => {
            // (`serve` checks this before it starts.)
            tracing::error!(target: "redelay::server", "webhooks not started: {}", e.message());
            return;
        }
    }
    tokio::spawn(async move {
        loop {
            sync(&st).await;
            tokio::select! {
                _ = tokio::time::sleep(RELOAD) => {}
                _ = stop.wait_for(|v| *v) => break,
            }
        }
        for w in st.webhooks.running.lock().unwrap().values() {
            w.stop();
        }
    });
}

/// One queue's loop: lease due messages, POST each, ack on 2xx, nack otherwise, until `stop`.
/// It stops between fetches: a fetch under way is not cut short (what it leases is handled
/// here, not left to a release after the worker has gone), the POSTs under way are answered
/// and settled, and a message fetched but not yet POSTed when `stop` came is released (due
/// now, no attempt counted). So when it returns, nothing it leased is left leased.
async fn worker(http: reqwest::Client, queue: Queue, url: String, mut stop: watch::Receiver<bool>) {
    let stopped = |stop: &watch::Receiver<bool>| *stop.borrow();
    while !stopped(&stop) {
        match queue.fetch(BATCH, Duration::from_secs(1)).await {
            Ok(ds) => {
                let fetched = std::time::Instant::now();
                let (http, url, stop) = (&http, url.as_str(), &stop);
                futures_util::future::join_all(ds.iter().map(|d| async move {
                    if stopped(stop) {
                        if let Err(e) = d.release().await {
                            let (q, id) = (d.queue(), d.id());
                            tracing::warn!(target: "redelay::server", "webhook of {q}: release {id}: {}", e.message());
                        }
                    } else {
                        push(http, url, d, fetched).await;
                    }
                }))
                .await;
            }
            Err(e) => {
                tracing::warn!(target: "redelay::server", "webhook of {}: fetch: {}", queue.name(), e.message());
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    _ = stop.wait_for(|s| *s) => {}
                }
            }
        }
    }
}

/// POSTs `d`, fetched at the local instant `fetched`, and settles it from the answer.
async fn push(http: &reqwest::Client, url: &str, d: &Delivery, fetched: std::time::Instant) {
    // What a fetch shows, but the lease: the server settles push deliveries itself.
    let mut v = wire::delivery(d);
    if let Some(m) = v.as_object_mut() {
        m.remove("token");
        m.remove("lease_deadline_ms");
    }
    // Answer before the lease runs out, so that a slow receiver is a nack, not a redelivery. The
    // lease's length is read on the Redis clock (its deadline less its start), and counted from
    // the fetch on this machine's monotonic clock: a skewed wall clock changes nothing.
    let lease = d.lease_deadline().duration_since(d.delivered_at()).unwrap_or_default();
    let left = lease.saturating_sub(fetched.elapsed());
    let timeout = left.saturating_sub(Duration::from_millis(50)).max(Duration::from_millis(50));
    let outcome = match http.post(url).json(&v).timeout(timeout).send().await {
        Ok(r) if r.status().is_success() => Ok(()),
        Ok(r) => Err(format!("webhook: HTTP {} from {url}", r.status().as_u16())),
        Err(e) => Err(format!("webhook: {url}: {}", chain(&e))),
    };
    let settled = match outcome {
        Ok(()) => d.ack().await,
        Err(reason) => d.nack(None, &reason).await.map(|_| ()),
    };
    if let Err(e) = settled {
        tracing::warn!(target: "redelay::server", "webhook of {}: settle {}: {}", d.queue(), d.id(), e.message());
    }
}
