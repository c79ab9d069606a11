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
//!
//! Destinations: a webhook reaches public addresses only, unless the operator allows a block
//! or a host name ([`ServerConfig::webhook_allow`], `redelay serve --webhook-allow CIDR|HOST`;
//! a name allowed is connected to whatever it resolves to): not loopback,
//! private, link-local (the cloud metadata address 169.254.169.254), unspecified, CGNAT,
//! multicast, reserved ... ([`NOT_PUBLIC`]), nor an IPv6 address carrying such an IPv4 one — or
//! anyone with a namespace token could make the server POST into its own network. The rule is
//! checked where it cannot be bypassed: on every address a host name resolves to, each time a
//! connection is made ([`GuardedResolver`]: a name may point elsewhere by then); on a host that
//! is an IP address, which reqwest connects to without resolving, at the `PUT` (a 400) and again
//! before each POST. Redirects are not followed (a 3xx answer is a failed delivery), and
//! proxies from the environment are not used (a proxy would resolve and reach the host itself).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use redelay::{Delivery, Queue};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::config::{Cidr, ServerConfig, WebhookAllow};
use crate::error::{ApiError, CoreExt, Style};
use crate::state::AppState;
use crate::webhook_registry::Worker;
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

/// Starts the worker of queue `q`; at its end it leaves [`Webhooks::running`] (before it is seen
/// ended, so that a [`sync`] waiting for it finds the queue free).
///
/// [`Webhooks::running`]: crate::webhook_registry::Webhooks
fn spawn(st: &AppState, http: reqwest::Client, q: String, queue: Queue, url: String) -> Worker {
    let (handle, stop, end) = Worker::new(url.clone());
    let refused = literal_refusal(&url, &st.config.webhook_allow);
    let shown = redact(&url);
    if let Some(why) = &refused {
        tracing::warn!(target: "redelay::server", "webhook of {q}: {shown}: {why}");
    }
    let (st, endpoint) = (st.clone(), Endpoint { url, shown, refused });
    tokio::spawn(async move {
        worker(http, queue, endpoint, stop).await;
        st.webhooks.remove_ended(&q, &end);
        drop(end);
    });
    handle
}

/// The webhooks' HTTP client: the WebPKI roots, and the certificates of `webhook_ca_pem`; host
/// names resolved by a [`GuardedResolver`] of `webhook_allow`; no redirects, no proxy.
pub fn http_client(config: &ServerConfig) -> redelay::Result<reqwest::Client> {
    let bad = |m: String| redelay::Error::invalid(format!("webhook_ca: {m}"));
    let mut b = reqwest::Client::builder()
        // Straight to the receiver: a proxy would resolve the host and reach it unchecked.
        .no_proxy()
        // A redirect could lead to any address: a 3xx answer is a failed delivery.
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(Arc::new(GuardedResolver { allow: config.webhook_allow.clone().into() }));
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
async fn worker(http: reqwest::Client, queue: Queue, endpoint: Endpoint, mut stop: watch::Receiver<bool>) {
    let stopped = |stop: &watch::Receiver<bool>| *stop.borrow();
    while !stopped(&stop) {
        match queue.fetch(BATCH, Duration::from_secs(1)).await {
            Ok(ds) => {
                let fetched = std::time::Instant::now();
                let (http, endpoint, stop) = (&http, &endpoint, &stop);
                futures_util::future::join_all(ds.iter().map(|d| async move {
                    if stopped(stop) {
                        if let Err(e) = d.release().await {
                            let (q, id) = (d.queue(), d.id());
                            tracing::warn!(target: "redelay::server", "webhook of {q}: release {id}: {}", e.message());
                        }
                    } else {
                        push(http, endpoint, d, fetched).await;
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

/// Where a worker POSTs: the webhook's URL, and why it may not when its host is an IP address a
/// webhook may not reach (checked again here: it may have been stored before the rule existed,
/// or through a server that allows more).
struct Endpoint {
    url: String,
    /// The URL as reasons and logs show it ([`redact`]).
    shown: String,
    refused: Option<String>,
}

/// A webhook URL as a failed delivery's reason (kept with the message, shown to every token
/// that reads the queue) and the logs show it: the user info (`user:password@`, or a token as
/// the user) is `***`, and so is each query value (`?apikey=***`), where credentials go too.
pub fn redact(url: &str) -> String {
    let Ok(mut u) = reqwest::Url::parse(url) else {
        // Not a URL reqwest would POST to: at least no password (the core's rule).
        return redelay::redact(url);
    };
    if !u.username().is_empty() || u.password().is_some() {
        let _ = u.set_password(None);
        let _ = u.set_username("***");
    }
    if let Some(q) = u.query().map(str::to_string) {
        let hidden: Vec<String> =
            q.split('&').map(|kv| format!("{}=***", kv.split_once('=').map_or(kv, |(k, _)| k))).collect();
        u.set_query(Some(&hidden.join("&")));
    }
    u.set_fragment(None);
    u.to_string()
}

/// POSTs `d`, fetched at the local instant `fetched`, and settles it from the answer (a refused
/// endpoint is not POSTed to: the message is nacked with the reason).
async fn push(http: &reqwest::Client, endpoint: &Endpoint, d: &Delivery, fetched: std::time::Instant) {
    let (url, shown) = (endpoint.url.as_str(), endpoint.shown.as_str());
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
    let outcome = match &endpoint.refused {
        Some(why) => Err(format!("webhook: {shown}: {why}")),
        None => post(http, url, shown, &v, timeout).await,
    };
    let settled = match outcome {
        Ok(()) => d.ack().await,
        Err(reason) => d.nack(None, &reason).await.map(|_| ()),
    };
    if let Err(e) = settled {
        tracing::warn!(target: "redelay::server", "webhook of {}: settle {}: {}", d.queue(), d.id(), e.message());
    }
}

/// POSTs `v` to `url`: Ok on a 2xx answer, else the reason of the failure, naming the URL as
/// `shown` ([`redact`]; reqwest's own error, which would name it whole, without it).
async fn post(
    http: &reqwest::Client,
    url: &str,
    shown: &str,
    v: &serde_json::Value,
    timeout: Duration,
) -> Result<(), String> {
    match http.post(url).json(v).timeout(timeout).send().await {
        Ok(r) if r.status().is_success() => Ok(()),
        Ok(r) => Err(format!("webhook: HTTP {} from {shown}", r.status().as_u16())),
        Err(e) => Err(format!("webhook: {shown}: {}", chain(&e.without_url()))),
    }
}

/// Address blocks that are not public, with what they are: a webhook may not reach them unless
/// [`ServerConfig::webhook_allow`] allows it (a block inside another comes first, to be named).
pub const NOT_PUBLIC: &[(Cidr, &str)] = &[
    (Cidr::v4([0, 0, 0, 0], 8), "unspecified"),
    (Cidr::v4([10, 0, 0, 0], 8), "private"),
    (Cidr::v4([100, 64, 0, 0], 10), "shared, CGNAT"),
    (Cidr::v4([127, 0, 0, 0], 8), "loopback"),
    (Cidr::v4([169, 254, 0, 0], 16), "link-local, cloud metadata"),
    (Cidr::v4([172, 16, 0, 0], 12), "private"),
    (Cidr::v4([192, 0, 0, 0], 24), "IETF protocol assignments"),
    (Cidr::v4([192, 0, 2, 0], 24), "documentation"),
    (Cidr::v4([192, 168, 0, 0], 16), "private"),
    (Cidr::v4([198, 18, 0, 0], 15), "benchmarking"),
    (Cidr::v4([198, 51, 100, 0], 24), "documentation"),
    (Cidr::v4([203, 0, 113, 0], 24), "documentation"),
    (Cidr::v4([224, 0, 0, 0], 4), "multicast"),
    (Cidr::v4([240, 0, 0, 0], 4), "reserved, broadcast"),
    (Cidr::v6([0, 0, 0, 0, 0, 0, 0, 0], 128), "unspecified"),
    (Cidr::v6([0, 0, 0, 0, 0, 0, 0, 1], 128), "loopback"),
    (Cidr::v6([0, 0, 0, 0, 0, 0, 0, 0], 96), "IPv4-compatible"),
    (Cidr::v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48), "NAT64 local-use"),
    (Cidr::v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64), "discard-only"),
    (Cidr::v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32), "Teredo"),
    (Cidr::v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32), "documentation"),
    (Cidr::v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7), "unique local, private"),
    (Cidr::v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10), "link-local"),
    (Cidr::v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10), "site-local"),
    (Cidr::v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8), "multicast"),
];

/// The kind of [`NOT_PUBLIC`] address `ip` is — itself or the IPv4 address it carries
/// (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`) — or None
/// for a public address.
pub fn non_public_kind(ip: IpAddr) -> Option<&'static str> {
    let kind = |ip: IpAddr| NOT_PUBLIC.iter().find(|(block, _)| block.contains(ip)).map(|(_, k)| *k);
    match ip.to_canonical() {
        IpAddr::V6(v6) => embedded_v4(v6).and_then(|v4| kind(v4.into())).or_else(|| kind(v6.into())),
        v4 => kind(v4),
    }
}

/// The IPv4 address an IPv6 address of a translation block carries: NAT64's `64:ff9b::/96`
/// (its last 32 bits) and 6to4's `2002::/16` (the 32 bits after the prefix).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = ip.to_bits();
    if Cidr::v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96).contains(ip.into()) {
        Some(Ipv4Addr::from_bits(bits as u32))
    } else if Cidr::v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16).contains(ip.into()) {
        Some(Ipv4Addr::from_bits((bits >> 80) as u32))
    } else {
        None
    }
}

/// Why a webhook may not reach `ip`: the kind of non-public address it is, or None when it is
/// public or in `allow` (an IPv4-mapped address is matched as its IPv4 address).
pub fn refused_kind(ip: IpAddr, allow: &[WebhookAllow]) -> Option<&'static str> {
    if allow.iter().filter_map(WebhookAllow::block).any(|block| block.contains(ip.to_canonical())) {
        return None;
    }
    non_public_kind(ip)
}

/// The end of a refusal: the option that would allow `ip`.
fn allow_hint(ip: IpAddr) -> String {
    format!("start the gateway with --webhook-allow {} to allow it", Cidr::single(ip.to_canonical()))
}

/// The IP address a URL's host is, None for a host name (or a URL that does not parse). As
/// reqwest (hyper) sees it: the parsed URL's host, an IPv6 one without its brackets.
fn literal_host(url: &str) -> Option<IpAddr> {
    let parsed = reqwest::Url::parse(url).ok()?;
    let host = parsed.host_str()?;
    host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host).parse().ok()
}

/// Why a webhook may not POST to `url` when its host is an IP address it may not reach (reqwest
/// connects to an IP address without resolving it: [`GuardedResolver`] never sees it).
fn literal_refusal(url: &str, allow: &[WebhookAllow]) -> Option<String> {
    let ip = literal_host(url)?;
    let kind = refused_kind(ip, allow)?;
    Some(format!("points at a non-public address: {ip} ({kind}); {}", allow_hint(ip)))
}

/// At a webhook's `PUT`: a 400 naming `url` when its host is an IP address a webhook may not
/// reach. A host name passes: what it resolves to is checked at each connection.
pub fn check_destination(url: &str, config: &ServerConfig) -> Result<(), ApiError> {
    match literal_refusal(url, &config.webhook_allow) {
        Some(why) => Err(ApiError::invalid(format!("url: {why}"), S)),
        None => Ok(()),
    }
}

/// The webhooks' resolver: the system's (getaddrinfo, through tokio's `lookup_host`), keeping
/// only the addresses a webhook may reach, at each connection — a name that pointed at a
/// public address when the webhook was stored may point at 127.0.0.1 now (DNS rebinding).
struct GuardedResolver {
    /// [`ServerConfig::webhook_allow`].
    allow: Arc<[WebhookAllow]>,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let (host, allow) = (name.as_str().to_string(), self.allow.clone());
        Box::pin(async move {
            // Port 0: reqwest puts the URL's port in.
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let addrs: reqwest::dns::Addrs = Box::new(reachable(&host, found, &allow)?.into_iter());
            Ok(addrs)
        })
    }
}

/// The addresses of `found` (what `host` resolved to) a webhook may reach: all of them when the
/// host is allowed by name; an error naming the host and the addresses when there are none but
/// refused ones.
fn reachable(host: &str, found: Vec<SocketAddr>, allow: &[WebhookAllow]) -> Result<Vec<SocketAddr>, String> {
    if allow.iter().any(|a| a.allows_name(host)) {
        return Ok(found);
    }
    let (ok, refused): (Vec<_>, Vec<_>) = found.into_iter().partition(|a| refused_kind(a.ip(), allow).is_none());
    let Some(first) = refused.first().filter(|_| ok.is_empty()) else { return Ok(ok) };
    let list: Vec<String> =
        refused.iter().map(|a| format!("{} ({})", a.ip(), refused_kind(a.ip(), allow).unwrap_or_default())).collect();
    let block = Cidr::single(first.ip().to_canonical());
    let hint = format!("start the gateway with --webhook-allow {block} or --webhook-allow {host} to allow it");
    Err(format!("{host} resolves to non-public addresses only: {}; {hint}", list.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn only_public_addresses_are_reached_by_default() {
        for (addr, kind) in [
            ("127.0.0.1", Some("loopback")),
            ("127.255.0.9", Some("loopback")),
            ("::1", Some("loopback")),
            ("10.1.2.3", Some("private")),
            ("172.16.0.1", Some("private")),
            ("192.168.1.1", Some("private")),
            ("fd12::1", Some("unique local, private")),
            ("169.254.169.254", Some("link-local, cloud metadata")),
            ("fe80::1", Some("link-local")),
            ("0.0.0.0", Some("unspecified")),
            ("::", Some("unspecified")),
            ("100.64.0.1", Some("shared, CGNAT")),
            ("224.0.0.1", Some("multicast")),
            ("ff02::1", Some("multicast")),
            ("255.255.255.255", Some("reserved, broadcast")),
            ("::ffff:127.0.0.1", Some("loopback")),
            ("::ffff:169.254.169.254", Some("link-local, cloud metadata")),
            ("::127.0.0.1", Some("IPv4-compatible")),
            ("64:ff9b::a01:203", Some("private")),
            ("2002:7f00:1::", Some("loopback")),
            ("8.8.8.8", None),
            ("1.1.1.1", None),
            ("172.32.0.1", None),
            ("100.128.0.1", None),
            ("2606:4700:4700::1111", None),
            ("::ffff:8.8.8.8", None),
            ("64:ff9b::808:808", None),
        ] {
            assert_eq!(non_public_kind(ip(addr)), kind, "{addr}");
            assert_eq!(refused_kind(ip(addr), &[]), kind, "{addr}");
        }
    }

    #[test]
    fn an_allowed_block_is_reached() {
        let allow: Vec<WebhookAllow> =
            ["127.0.0.1/32", "10.0.0.0/8", "fd00::/8"].iter().map(|c| c.parse().unwrap()).collect();
        for (addr, refused) in [
            ("127.0.0.1", false),
            ("::ffff:127.0.0.1", false),
            ("127.0.0.2", true),
            ("::1", true),
            ("10.200.0.1", false),
            ("fd00::5", false),
            ("fc00::5", true),
            ("169.254.169.254", true),
        ] {
            assert_eq!(refused_kind(ip(addr), &allow).is_some(), refused, "{addr}");
        }
    }

    #[test]
    fn a_literal_host_is_read_as_reqwest_connects_to_it() {
        for (url, host) in [
            ("http://127.0.0.1:9/x", Some("127.0.0.1")),
            ("http://[::1]:9/x", Some("::1")),
            ("http://[::ffff:127.0.0.1]/", Some("::ffff:127.0.0.1")),
            // The URL parser's forms of an IPv4 address.
            ("http://2130706433/", Some("127.0.0.1")),
            ("http://0x7f.1/", Some("127.0.0.1")),
            ("http://127.1/", Some("127.0.0.1")),
            ("https://example.com/", None),
            ("http://localhost:9/", None),
            ("not a url", None),
        ] {
            assert_eq!(literal_host(url), host.map(ip), "{url}");
        }
        let e = check_destination("http://[::ffff:127.0.0.1]:9/", &ServerConfig::default()).unwrap_err();
        assert_eq!(
            e.message,
            "url: points at a non-public address: ::ffff:127.0.0.1 (loopback); start the gateway with \
             --webhook-allow 127.0.0.1/32 to allow it"
        );
    }

    #[test]
    fn a_name_is_connected_to_its_reachable_addresses_only() {
        let sa = |s: &str| SocketAddr::new(ip(s), 0);
        let mixed = vec![sa("127.0.0.1"), sa("93.184.215.14")];
        assert_eq!(reachable("h", mixed, &[]), Ok(vec![sa("93.184.215.14")]));
        let e = reachable("localhost", vec![sa("::1"), sa("127.0.0.1")], &[]).unwrap_err();
        assert_eq!(
            e,
            "localhost resolves to non-public addresses only: ::1 (loopback), 127.0.0.1 (loopback); start \
             the gateway with --webhook-allow ::1/128 or --webhook-allow localhost to allow it"
        );
        let allow = ["127.0.0.1/32".parse().unwrap()];
        assert_eq!(reachable("localhost", vec![sa("::1"), sa("127.0.0.1")], &allow), Ok(vec![sa("127.0.0.1")]));
        assert_eq!(reachable("h", vec![], &[]), Ok(vec![]));
        // Allowed by name: every address it resolves to, whatever it is.
        let by_name = ["*.internal".parse().unwrap(), "localhost".parse().unwrap()];
        let found = vec![sa("::1"), sa("169.254.169.254")];
        assert_eq!(reachable("localhost", found.clone(), &by_name), Ok(found.clone()));
        assert_eq!(reachable("hooks.internal", found.clone(), &by_name), Ok(found.clone()));
        assert!(reachable("internal", found, &by_name).is_err(), "*.internal is the names under it");
    }
}
