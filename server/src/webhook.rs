//! Push delivery: a queue with a webhook (`PUT /v1/queues/{queue}/webhook {"url": ...}`, kept
//! in the Redis hash `<prefix>:webhooks`) has its due messages POSTed by the server to the URL
//! as JSON (the fields of a fetched delivery, [`wire::delivery`], but the lease's `token` and
//! `lease_deadline_ms`: the server settles it): a 2xx answer acks the message, anything
//! else (or no answer within its lease) nacks it, so it is retried after the message's backoff
//! and ends in the dead letters at its last attempt. Every server with the same prefix runs the
//! webhooks it finds there (re-read every few seconds); each message goes to one of them.
//!
//! https: reqwest on rustls (ring), trusting the WebPKI roots compiled into the binary (the
//! `webpki-roots` crate, Mozilla's CA list; the system's certificate store is not read) and the
//! extra CA certificates of [`ServerConfig::webhook_ca_pem`] (`redelay serve --webhook-ca`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redelay::{Delivery, Queue};
use serde::{Deserialize, Serialize};

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

/// Starts and stops workers so that they match the webhooks stored in Redis.
pub async fn sync(st: &AppState) {
    // None until `start` (and when it could not build the client).
    let Some(http) = st.webhooks.http.get() else { return };
    let want = match load(st).await {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!(target: "redelay::server", "webhooks: {}", e.message);
            return;
        }
    };
    // The lock is not held while a queue is opened (one task runs `sync`, so nothing starts
    // the same webhook meanwhile).
    let missing: Vec<(String, Hook)> = {
        let mut run = st.webhooks.running.lock().unwrap();
        run.retain(|q, (url, stop)| {
            let keep = want.get(q).is_some_and(|h| &h.url == url);
            if !keep {
                stop.store(true, Ordering::Release);
            }
            keep
        });
        want.into_iter().filter(|(q, _)| !run.contains_key(q)).collect()
    };
    for (q, hook) in missing {
        let Ok(queue) = st.queue(&q, S).await else { continue };
        let stop = Arc::new(AtomicBool::new(false));
        tokio::spawn(worker(http.clone(), queue, hook.url.clone(), stop.clone()));
        st.webhooks.running.lock().unwrap().insert(q, (hook.url, stop));
    }
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
        for (_, stop) in st.webhooks.running.lock().unwrap().values() {
            stop.store(true, Ordering::Release);
        }
    });
}

/// One queue's loop: lease due messages, POST each, ack on 2xx, nack otherwise. It stops
/// between fetches (never in the middle of one, so no lease is dropped unanswered).
async fn worker(http: reqwest::Client, queue: Queue, url: String, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Acquire) {
        match queue.fetch(BATCH, Duration::from_secs(1)).await {
            Ok(ds) => {
                let fetched = std::time::Instant::now();
                futures_util::future::join_all(ds.iter().map(|d| push(&http, &url, d, fetched))).await;
            }
            Err(e) => {
                tracing::warn!(target: "redelay::server", "webhook of {}: fetch: {}", queue.name(), e.message());
                tokio::time::sleep(Duration::from_secs(1)).await;
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
