//! Push delivery against a local receiver: the first POST fails (500) and the message is
//! retried after its backoff; the second succeeds and the message is acked. And https, to a
//! local TLS receiver whose certificate a private CA signed. The receivers are on 127.0.0.1,
//! which the gateway reaches only when allowed (`--webhook-allow 127.0.0.1/32`); without it,
//! non-public destinations are refused at registration or never connected to.
mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use common::{json, ADMIN};
use redelay_server::ServerConfig;
use serde_json::{json, Value};

/// The gateway's setting for this file's receivers, all on 127.0.0.1: `--webhook-allow
/// 127.0.0.1/32`.
fn allow_local_receivers(c: &mut ServerConfig) {
    c.webhook_allow = vec!["127.0.0.1/32".parse().unwrap()];
}

/// A receiver at `/hook` that records every POST and answers 500 to the first `fail` of them,
/// 200 to the rest.
fn receiver(fail: usize) -> (Router, Arc<Mutex<Vec<Value>>>) {
    let got: Arc<Mutex<Vec<Value>>> = Default::default();
    let rx = got.clone();
    let router = Router::new().route(
        "/hook",
        post(move |Json(v): Json<Value>| {
            let rx = rx.clone();
            async move {
                let mut g = rx.lock().unwrap();
                g.push(v);
                if g.len() <= fail {
                    StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    StatusCode::OK
                }
            }
        }),
    );
    (router, got)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_is_retried_with_backoff_until_it_answers_2xx() {
    let (receiver, got) = receiver(1);
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, receiver).await });

    let s = common::start_with(allow_local_receivers).await;
    let put = |body: Value| s.http.put(s.url("/v1/queues/hooked/webhook")).bearer_auth(ADMIN).json(&body).send();
    let (st, v) = json(put(json!({"url": "ftp://example.invalid/x"})).await.unwrap()).await;
    assert_eq!((st, v["error"]["code"].as_str()), (400, Some("ERR_REDELAY_INVALID_ARGUMENT")));
    let (st, v) = json(put(json!({"url": hook})).await.unwrap()).await;
    assert_eq!((st, v), (200, json!({"queue": "hooked", "url": hook})));
    let (st, v) = json(s.http.get(s.url("/v1/queues/hooked/webhook")).bearer_auth(ADMIN).send().await.unwrap()).await;
    assert_eq!((st, v["url"].as_str()), (200, Some(hook.as_str())));

    let r = s
        .http
        .post(s.url("/v1/queues/hooked/messages"))
        .bearer_auth(ADMIN)
        .json(&json!({"body": "push me", "id": "p1", "headers": {"h": "v"}, "backoff_base_ms": 100, "max_attempts": 5}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);

    let q = s.client.queue("hooked").unwrap();
    let t = Instant::now();
    loop {
        let n = got.lock().unwrap().len();
        if n >= 2 && q.stats().await.unwrap().total == 0 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "{n} POSTs, stats {:?}", q.stats().await.unwrap());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let g = got.lock().unwrap().clone();
    assert_eq!(g.len(), 2, "acked after the second POST: no third");
    assert_eq!(
        (g[0]["id"].as_str(), g[0]["attempt"].as_u64(), g[0]["body"].as_str()),
        (Some("p1"), Some(1), Some("push me"))
    );
    assert_eq!((g[1]["attempt"].as_u64(), g[1]["headers"]["h"].as_str()), (Some(2), Some("v")));
    // The fields of a fetched delivery, but the lease (the server settles it): the retry carries
    // the first failure's reason.
    let reason = format!("webhook: HTTP 500 from {hook}");
    assert_eq!((&g[0]["last_error"], g[1]["last_error"].as_str()), (&Value::Null, Some(reason.as_str())));
    for p in &g {
        let (due, at) = (p["due_at_ms"].as_i64().unwrap(), p["delivered_at_ms"].as_i64());
        assert!(at.is_some_and(|at| at >= due), "{p}");
        assert!(p["lateness_ms"].is_u64() && p["expires_at_ms"].is_null(), "{p}");
        assert!(p.get("token").is_none() && p.get("lease_deadline_ms").is_none(), "no lease: {p}");
    }
    let h = q.history_totals().await.unwrap();
    assert_eq!((h.delivered, h.retried, h.acked), (2, 1, 1));

    let (st, v) =
        json(s.http.delete(s.url("/v1/queues/hooked/webhook")).bearer_auth(ADMIN).send().await.unwrap()).await;
    assert_eq!((st, v), (200, json!({"deleted": true})));
    let (st, _) = json(s.http.get(s.url("/v1/queues/hooked/webhook")).bearer_auth(ADMIN).send().await.unwrap()).await;
    assert_eq!(st, 404);

    // Destroying the queue deletes its webhook too.
    assert_eq!(put(json!({"url": hook})).await.unwrap().status().as_u16(), 200);
    let (st, v) = json(s.http.delete(s.url("/v1/queues/hooked")).bearer_auth(ADMIN).send().await.unwrap()).await;
    assert_eq!((st, v), (200, json!({"destroyed": true})));
    let (st, _) = json(s.http.get(s.url("/v1/queues/hooked/webhook")).bearer_auth(ADMIN).send().await.unwrap()).await;
    assert_eq!(st, 404);
}

/// A TLS listener for axum: each accepted connection after its handshake (a failed handshake,
/// like a client refusing the certificate, is dropped).
struct TlsListener {
    tcp: tokio::net::TcpListener,
    tls: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((s, a)) = self.tcp.accept().await else { continue };
            if let Ok(t) = self.tls.accept(s).await {
                return (t, a);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// A private CA and a certificate it signed for 127.0.0.1, made with openssl as tests/tls.sh
/// does: (CA PEM, certificate PEM, key PEM).
fn private_ca() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let dir = std::env::temp_dir().join(common::unique("webhook-ca"));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new("openssl").args(args).current_dir(&dir).output().expect("openssl");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    let subj = ["-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
    let ca = ["-days", "2", "-subj", "/CN=redelay webhook test CA", "-keyout", "ca.key", "-out", "ca.pem"];
    run(&[&["req", "-x509"][..], &subj, &ca].concat());
    std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    run(&[&["req"][..], &subj, &["-subj", "/CN=127.0.0.1", "-keyout", "leaf.key", "-out", "leaf.csr"]].concat());
    run(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.ext",
        "-out",
        "leaf.pem",
    ]);
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    let r = (read("ca.pem"), read("leaf.pem"), read("leaf.key"));
    let _ = std::fs::remove_dir_all(&dir);
    r
}

/// [`receiver`] on https://127.0.0.1 with a certificate a private CA signed, answering 200.
async fn https_receiver(cert: &[u8], key: &[u8]) -> (String, Arc<Mutex<Vec<Value>>>) {
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use tokio_rustls::rustls::{crypto::ring, ServerConfig};
    let certs = CertificateDer::pem_slice_iter(cert).collect::<Result<Vec<_>, _>>().unwrap();
    let key = PrivateKeyDer::from_pem_slice(key).unwrap();
    let config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let (receiver, got) = receiver(0);
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("https://{}/hook", tcp.local_addr().unwrap());
    let l = TlsListener { tcp, tls: tokio_rustls::TlsAcceptor::from(Arc::new(config)) };
    tokio::spawn(async move { axum::serve(l, receiver).await });
    (hook, got)
}

/// https webhooks: reqwest on rustls trusts the WebPKI roots only, so a receiver whose
/// certificate a private CA signed is refused (the message is nacked with the TLS error) until
/// the server is given that CA (`webhook_ca_pem`, `redelay serve --webhook-ca`); then it is
/// POSTed over TLS and acked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_webhook_is_delivered_when_its_ca_is_trusted() {
    let (ca, cert, key) = private_ca();
    let (hook, got) = https_receiver(&cert, &key).await;
    for trusted in [false, true] {
        let s = common::start_with(|c| {
            allow_local_receivers(c);
            c.webhook_ca_pem = trusted.then(|| ca.clone());
        })
        .await;
        let put = s.http.put(s.url("/v1/queues/secure/webhook")).bearer_auth(ADMIN).json(&json!({"url": hook}));
        assert_eq!(json(put.send().await.unwrap()).await.0, 200);
        let msg = json!({"body": "over tls", "id": "s1", "max_attempts": 1});
        let r = s.http.post(s.url("/v1/queues/secure/messages")).bearer_auth(ADMIN).json(&msg).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 201);
        let q = s.client.queue("secure").unwrap();
        let t = Instant::now();
        loop {
            let st = q.stats().await.unwrap();
            if (trusted && st.total == 0) || (!trusted && st.dead == 1) {
                break;
            }
            assert!(t.elapsed() < Duration::from_secs(30), "trusted {trusted}: {st:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if trusted {
            let g = got.lock().unwrap().clone();
            assert_eq!(g.len(), 1);
            assert_eq!((g[0]["id"].as_str(), g[0]["body"].as_str()), (Some("s1"), Some("over tls")));
        } else {
            assert!(got.lock().unwrap().is_empty(), "nothing gets through an untrusted certificate");
            let err = q.peek("s1").await.unwrap().unwrap().last_error.unwrap();
            assert!(err.starts_with(&format!("webhook: {hook}: ")), "{err}");
            assert!(err.contains("UnknownIssuer"), "the TLS cause is in the reason: {err}");
        }
    }
    // A CA that is not PEM is refused when the server starts.
    let bad =
        redelay_server::ServerConfig { webhook_ca_pem: Some(b"not a certificate".to_vec()), ..Default::default() };
    let e = redelay_server::webhook::http_client(&bad).unwrap_err();
    assert!(e.message().starts_with("webhook_ca: "), "{}", e.message());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_slower_than_the_lease_is_a_nack_not_a_lost_lease() {
    // The first POST is answered after 3 s, past the message's 500 ms lease; later ones at once.
    let (hook, got) = recording_receiver(Duration::from_secs(3)).await;
    let s = common::start_with(allow_local_receivers).await;
    let put = s.http.put(s.url("/v1/queues/slowhook/webhook")).bearer_auth(ADMIN).json(&json!({"url": hook}));
    assert_eq!(put.send().await.unwrap().status().as_u16(), 200);
    let body = json!({"body": "m", "id": "s1", "ttr_ms": 500, "backoff_base_ms": 100, "max_attempts": 5});
    let r = s.http.post(s.url("/v1/queues/slowhook/messages")).bearer_auth(ADMIN).json(&body).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let q = s.client.queue("slowhook").unwrap();
    let t = Instant::now();
    while got.lock().unwrap().len() < 2 || q.stats().await.unwrap().total > 0 {
        assert!(t.elapsed() < Duration::from_secs(30), "POSTs {:?}", got.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The server gave up on the first POST within the lease and nacked it with its own reason;
    // a lease that ran out would say "lease expired".
    let g = got.lock().unwrap().clone();
    let reason = g[1]["last_error"].as_str().unwrap_or_default().to_string();
    assert!(reason.starts_with("webhook:") && reason.contains(&hook), "{reason}");
    assert_eq!(g[1]["attempt"].as_u64(), Some(2));
}

/// A receiver at `/hook` that records every POST and answers 200; the first POST only after
/// `hold_first`.
async fn recording_receiver(hold_first: Duration) -> (String, Arc<Mutex<Vec<Value>>>) {
    let got: Arc<Mutex<Vec<Value>>> = Default::default();
    let rx = got.clone();
    let router = Router::new().route(
        "/hook",
        post(move |Json(v): Json<Value>| {
            let rx = rx.clone();
            async move {
                let first = {
                    let mut g = rx.lock().unwrap();
                    g.push(v);
                    g.len() == 1
                };
                if first {
                    tokio::time::sleep(hold_first).await;
                }
                StatusCode::OK
            }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, router).await });
    (hook, got)
}

/// The ids of the POSTs `got` recorded.
fn ids(got: &Arc<Mutex<Vec<Value>>>) -> Vec<String> {
    got.lock().unwrap().iter().map(|v| v["id"].as_str().unwrap_or_default().to_string()).collect()
}

/// Waits until `got` holds `n` POSTs (30 s at most).
async fn wait_for_posts(got: &Arc<Mutex<Vec<Value>>>, n: usize) {
    let t = Instant::now();
    while got.lock().unwrap().len() < n {
        assert!(t.elapsed() < Duration::from_secs(30), "POSTs {:?}", got.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Deleting a webhook, replacing it, or destroying its queue answers once the old worker has
/// stopped: its fetch under way (a long-poll of up to 1 s) leases nothing more for the old URL,
/// so a message published right after the answer never reaches it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_webhook_is_deleted_or_replaced_nothing_reaches_its_old_url() {
    let s = common::start_with(allow_local_receivers).await;
    let q = s.client.queue("gone").unwrap();
    let publish = |id: &'static str| {
        let r = s.http.post(s.url("/v1/queues/gone/messages")).bearer_auth(ADMIN);
        async move { assert_eq!(r.json(&json!({"body": id, "id": id})).send().await.unwrap().status().as_u16(), 201) }
    };
    let put = |url: &str| {
        let r = s.http.put(s.url("/v1/queues/gone/webhook")).bearer_auth(ADMIN).json(&json!({ "url": url }));
        async move { assert_eq!(json(r.send().await.unwrap()).await.0, 200) }
    };
    let settled = || async {
        let t = Instant::now();
        while q.stats().await.unwrap().total > 0 {
            assert!(t.elapsed() < Duration::from_secs(30), "{:?}", q.stats().await.unwrap());
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };

    // Replaced: A got m1; once the PUT of B answers, A's worker is gone and m2 goes to B.
    let (a, got_a) = recording_receiver(Duration::ZERO).await;
    let (b, got_b) = recording_receiver(Duration::ZERO).await;
    put(&a).await;
    publish("m1").await;
    wait_for_posts(&got_a, 1).await;
    settled().await;
    put(&b).await;
    publish("m2").await;
    wait_for_posts(&got_b, 1).await;
    settled().await;

    // Deleted: the worker was waiting in its fetch; m3, published as soon as the DELETE
    // answers, is not leased, by anyone, and stays ready.
    let r = s.http.delete(s.url("/v1/queues/gone/webhook")).bearer_auth(ADMIN).send().await.unwrap();
    assert_eq!(json(r).await, (200, json!({"deleted": true})));
    publish("m3").await;

    // Destroyed with its queue: the same for the webhook of another queue.
    let (c, got_c) = recording_receiver(Duration::ZERO).await;
    let hook = s.http.put(s.url("/v1/queues/doomed/webhook")).bearer_auth(ADMIN).json(&json!({ "url": c }));
    assert_eq!(json(hook.send().await.unwrap()).await.0, 200);
    let doomed = s.client.queue("doomed").unwrap();
    let msg =
        s.http.post(s.url("/v1/queues/doomed/messages")).bearer_auth(ADMIN).json(&json!({"body": "d1", "id": "d1"}));
    assert_eq!(msg.send().await.unwrap().status().as_u16(), 201);
    wait_for_posts(&got_c, 1).await;
    while doomed.stats().await.unwrap().total > 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let r = s.http.delete(s.url("/v1/queues/doomed")).bearer_auth(ADMIN).send().await.unwrap();
    assert_eq!(json(r).await, (200, json!({"destroyed": true})));
    let msg =
        s.http.post(s.url("/v1/queues/doomed/messages")).bearer_auth(ADMIN).json(&json!({"body": "d2", "id": "d2"}));
    assert_eq!(msg.send().await.unwrap().status().as_u16(), 201);

    // Longer than a worker's fetch: a worker still running would have pushed m3 and d2.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(ids(&got_a), ["m1"]);
    assert_eq!(ids(&got_b), ["m2"]);
    assert_eq!(ids(&got_c), ["d1"]);
    for (queue, id) in [(&q, "m3"), (&doomed, "d2")] {
        let m = queue.peek(id).await.unwrap().unwrap();
        assert_eq!(m.state, redelay::State::Ready, "{id}: never leased");
        let st = queue.stats().await.unwrap();
        assert_eq!((st.ready, st.leased), (1, 0), "{id}");
    }
    assert_eq!(q.history_totals().await.unwrap().delivered, 2, "m1 and m2 only");
    assert!(s.st.webhooks.running.lock().unwrap().is_empty(), "no worker left");
}

/// A DELETE while a POST is under way waits for its answer: when it answers, the message is
/// settled (acked here), not left leased, and nothing more is POSTed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_webhook_waits_for_the_post_under_way() {
    let (hook, got) = recording_receiver(Duration::from_millis(1500)).await;
    let s = common::start_with(allow_local_receivers).await;
    let put = s.http.put(s.url("/v1/queues/busy/webhook")).bearer_auth(ADMIN).json(&json!({ "url": hook }));
    assert_eq!(json(put.send().await.unwrap()).await.0, 200);
    let msg = s.http.post(s.url("/v1/queues/busy/messages")).bearer_auth(ADMIN);
    let msg = msg.json(&json!({"body": "slow", "id": "s1", "ttr_ms": 30000}));
    assert_eq!(msg.send().await.unwrap().status().as_u16(), 201);
    wait_for_posts(&got, 1).await;
    // The receiver holds the POST for 1.5 s.
    let q = s.client.queue("busy").unwrap();
    assert_eq!(q.stats().await.unwrap().leased, 1);
    let r = s.http.delete(s.url("/v1/queues/busy/webhook")).bearer_auth(ADMIN).send().await.unwrap();
    assert_eq!(json(r).await, (200, json!({"deleted": true})));
    let st = q.stats().await.unwrap();
    assert_eq!((st.leased, st.total), (0, 0), "acked before the answer: {st:?}");
    let msg = s.http.post(s.url("/v1/queues/busy/messages")).bearer_auth(ADMIN).json(&json!({"body": "n", "id": "n"}));
    assert_eq!(msg.send().await.unwrap().status().as_u16(), 201);
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(ids(&got), ["s1"]);
    assert_eq!(q.stats().await.unwrap().ready, 1);
}

/// PUTs `url` as the webhook of queue `q`: the status and body of the answer.
async fn put_hook(s: &common::Srv, q: &str, url: &str) -> (u16, Value) {
    let r = s.http.put(s.url(&format!("/v1/queues/{q}/webhook"))).bearer_auth(ADMIN).json(&json!({ "url": url }));
    json(r.send().await.unwrap()).await
}

/// Publishes message `id` to `q` with one attempt, and waits (30 s at most) until it is settled:
/// gone (acked) or dead. The dead letter's reason, None when it was acked.
async fn deliver_once(s: &common::Srv, q: &str, id: &str) -> Option<String> {
    let msg = json!({"body": "ssrf?", "id": id, "max_attempts": 1});
    let r = s.http.post(s.url(&format!("/v1/queues/{q}/messages"))).bearer_auth(ADMIN).json(&msg).send().await;
    assert_eq!(r.unwrap().status().as_u16(), 201);
    let queue = s.client.queue(q).unwrap();
    let t = Instant::now();
    loop {
        let st = queue.stats().await.unwrap();
        if st.total == st.dead {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "{q}: not settled: {st:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    queue.peek(id).await.unwrap().and_then(|m| m.last_error)
}

/// A URL whose host is a non-public IP address is refused when it is registered: 400 naming
/// `url`, what the address is and the option that allows it; nothing is stored. With that
/// option, the allowed block (only) is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_to_a_non_public_address_is_refused_at_registration() {
    let port = 9;
    // (with --webhook-allow 127.0.0.1/32, URL, refused as: address, kind, the --webhook-allow to suggest)
    let table = [
        (false, format!("http://127.0.0.1:{port}/"), Some(("127.0.0.1", "loopback", "127.0.0.1/32"))),
        (false, format!("http://[::1]:{port}/"), Some(("::1", "loopback", "::1/128"))),
        (
            false,
            "http://169.254.169.254/".to_string(),
            Some(("169.254.169.254", "link-local, cloud metadata", "169.254.169.254/32")),
        ),
        (false, "http://10.1.2.3/".to_string(), Some(("10.1.2.3", "private", "10.1.2.3/32"))),
        (false, format!("http://[::ffff:127.0.0.1]:{port}/"), Some(("::ffff:127.0.0.1", "loopback", "127.0.0.1/32"))),
        (false, format!("http://0.0.0.0:{port}/"), Some(("0.0.0.0", "unspecified", "0.0.0.0/32"))),
        (false, "https://2130706433/".to_string(), Some(("127.0.0.1", "loopback", "127.0.0.1/32"))),
        (true, format!("http://127.0.0.2:{port}/"), Some(("127.0.0.2", "loopback", "127.0.0.2/32"))),
        (true, format!("http://[::1]:{port}/"), Some(("::1", "loopback", "::1/128"))),
        (true, format!("http://127.0.0.1:{port}/"), None),
        (true, format!("http://[::ffff:127.0.0.1]:{port}/"), None),
    ];
    let (plain, allowing) = (common::start().await, common::start_with(allow_local_receivers).await);
    for (i, (allow_127, url, refused)) in table.iter().enumerate() {
        let s = if *allow_127 { &allowing } else { &plain };
        let q = format!("guarded{i}");
        let (st, v) = put_hook(s, &q, url).await;
        let (_, stored) =
            json(s.http.get(s.url(&format!("/v1/queues/{q}/webhook"))).bearer_auth(ADMIN).send().await.unwrap()).await;
        let Some((addr, kind, hint)) = refused else {
            assert_eq!((st, &v), (200, &json!({"queue": q, "url": url})), "{url}");
            assert_eq!(stored["url"].as_str(), Some(url.as_str()), "{url}");
            continue;
        };
        let want = format!(
            "url: points at a non-public address: {addr} ({kind}); start the gateway with --webhook-allow {hint} to allow it"
        );
        assert_eq!(
            (st, v["error"]["code"].as_str(), v["error"]["message"].as_str()),
            (400, Some("ERR_REDELAY_INVALID_ARGUMENT"), Some(want.as_str())),
            "{url}: {v}"
        );
        assert_eq!(stored["error"]["code"].as_str(), Some("ERR_REDELAY_NOT_FOUND"), "{url}: nothing stored");
    }
    // A public address, or a host name (what it resolves to is checked when connecting), passes.
    for url in ["http://93.184.215.14/hook", "https://example.com/hook", "http://localhost/hook"] {
        assert_eq!(put_hook(&plain, "public", url).await, (200, json!({"queue": "public", "url": url})), "{url}");
    }
}

/// Nothing is POSTed to a non-public address the gateway does not allow, however the webhook
/// got there: a host name that resolves to loopback (accepted at registration: it may resolve
/// elsewhere by delivery), or an IP address stored before the rule (or by a server that allows
/// it). The message is nacked (here: dead at its only attempt) with the reason; the receiver sees
/// nothing. With `--webhook-allow 127.0.0.1/32` the same webhook is delivered to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_public_destination_is_never_posted_to() {
    let (hook, got) = recording_receiver(Duration::ZERO).await;
    let port = hook.rsplit(':').next().unwrap().trim_end_matches("/hook").to_string();
    let by_name = format!("http://localhost:{port}/hook");
    let plain = common::start().await;
    let allowing = common::start_with(allow_local_receivers).await;

    // Registered by name: accepted, then refused at each connection.
    assert_eq!(put_hook(&plain, "rebound", &by_name).await.0, 200);
    let reason = deliver_once(&plain, "rebound", "r1").await.expect("dead, not acked");
    assert!(reason.starts_with(&format!("webhook: {by_name}: ")), "{reason}");
    let why = "localhost resolves to non-public addresses only: ";
    assert!(reason.contains(why) && reason.contains("127.0.0.1 (loopback)"), "{reason}");
    assert!(reason.contains("start the gateway with --webhook-allow "), "{reason}");
    assert!(got.lock().unwrap().is_empty(), "nothing reached the receiver");

    // Stored as an IP address without the PUT's check (as by an older server): refused before
    // any connection.
    let stored = redelay_server::webhook::stored(&plain.st).unwrap();
    stored.set("literal", &json!({ "url": hook }).to_string()).await.unwrap();
    redelay_server::webhook::sync(&plain.st).await;
    let reason = deliver_once(&plain, "literal", "l1").await.expect("dead, not acked");
    let want = format!(
        "webhook: {hook}: points at a non-public address: 127.0.0.1 (loopback); start the gateway with \
         --webhook-allow 127.0.0.1/32 to allow it"
    );
    assert_eq!(reason, want);
    assert!(got.lock().unwrap().is_empty(), "nothing reached the receiver");

    // Allowed: both are delivered to (the receiver is reachable; the guard is what kept it out).
    assert_eq!(put_hook(&allowing, "rebound", &by_name).await.0, 200);
    assert_eq!(deliver_once(&allowing, "rebound", "r2").await, None, "acked");
    assert_eq!(put_hook(&allowing, "literal", &hook).await.0, 200);
    assert_eq!(deliver_once(&allowing, "literal", "l2").await, None, "acked");
    assert_eq!(ids(&got), ["r2", "l2"]);
}

/// A host name allowed by name (`--webhook-allow localhost`) is connected to whatever it resolves
/// to, here loopback; the addresses themselves stay refused when a URL names them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_name_allowed_by_name_is_posted_to_whatever_it_resolves_to() {
    let (hook, got) = recording_receiver(Duration::ZERO).await;
    let port = hook.rsplit(':').next().unwrap().trim_end_matches("/hook").to_string();
    let s = common::start_with(|c| c.webhook_allow = vec!["LocalHost".parse().unwrap()]).await;

    assert_eq!(put_hook(&s, "named", &format!("http://localhost:{port}/hook")).await.0, 200);
    assert_eq!(deliver_once(&s, "named", "n1").await, None, "acked");
    assert_eq!(ids(&got), ["n1"]);

    let (st, v) = put_hook(&s, "literal", &hook).await;
    assert_eq!((st, v["error"]["code"].as_str()), (400, Some("ERR_REDELAY_INVALID_ARGUMENT")), "{v}");
}

/// A redirect is not followed: an allowed receiver answering 307 to a non-public address makes
/// the delivery fail with that status, and nothing reaches the address it pointed at.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_is_not_followed() {
    // The target: 127.0.0.2, loopback, not allowed (only 127.0.0.1/32 is).
    let (target, got) = recording_receiver_on("127.0.0.2").await;
    let redirects: Arc<Mutex<usize>> = Default::default();
    let count = redirects.clone();
    let router = Router::new().route(
        "/hook",
        post(move || {
            *count.lock().unwrap() += 1;
            let to = target.clone();
            async move { (StatusCode::TEMPORARY_REDIRECT, [("location", to)]) }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, router).await });

    let s = common::start_with(allow_local_receivers).await;
    assert_eq!(put_hook(&s, "redirected", &hook).await.0, 200);
    let reason = deliver_once(&s, "redirected", "d1").await;
    assert_eq!(reason, Some(format!("webhook: HTTP 307 from {hook}")));
    assert_eq!(*redirects.lock().unwrap(), 1);
    assert!(got.lock().unwrap().is_empty(), "the redirect was not followed");
}

/// A receiver at `http://{ip}:PORT/hook` recording every POST and answering 200: its URL.
async fn recording_receiver_on(ip: &str) -> (String, Arc<Mutex<Vec<Value>>>) {
    let got: Arc<Mutex<Vec<Value>>> = Default::default();
    let rx = got.clone();
    let router = Router::new().route(
        "/hook",
        post(move |Json(v): Json<Value>| {
            rx.lock().unwrap().push(v);
            async { StatusCode::OK }
        }),
    );
    let l = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
    let url = format!("http://{}/hook", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, router).await });
    (url, got)
}

/// A webhook URL's credentials (user info, query values) never reach a failed delivery's
/// reason, kept with the message and shown to every token that reads the queue: not on an
/// HTTP error, nor when the receiver cannot be reached (reqwest's error names the URL whole).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_delivery_s_reason_shows_no_credentials_of_the_url() {
    let (receiver, _) = receiver(usize::MAX);
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(l, receiver).await });
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let s = common::start_with(allow_local_receivers).await;
    for (q, host, shown) in [
        ("cred-500", addr, format!("webhook: HTTP 500 from http://***@{addr}/hook?apikey=***&v=***")),
        ("cred-down", closed, format!("webhook: http://***@{closed}/hook?apikey=***&v=***: ")),
    ] {
        let url = format!("http://user:s3cret@{host}/hook?apikey=K123&v=2#frag");
        assert_eq!(put_hook(&s, q, &url).await.0, 200);
        let reason = deliver_once(&s, q, "w").await.expect("dead, with its reason");
        assert!(reason.starts_with(&shown), "{q}: {reason}");
        for secret in ["user", "s3cret", "K123", "frag"] {
            assert!(!reason.contains(secret), "{q}: {secret} in {reason}");
        }
    }
}
