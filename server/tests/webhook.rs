//! Push delivery against a local receiver: the first POST fails (500) and the message is
//! retried after its backoff; the second succeeds and the message is acked.
mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use common::{json, ADMIN};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_is_retried_with_backoff_until_it_answers_2xx() {
    let got: Arc<Mutex<Vec<Value>>> = Default::default();
    let rx = got.clone();
    let receiver = Router::new().route(
        "/hook",
        post(move |Json(v): Json<Value>| {
            let rx = rx.clone();
            async move {
                let mut g = rx.lock().unwrap();
                g.push(v);
                if g.len() == 1 {
                    StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    StatusCode::OK
                }
            }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, receiver).await });

    let s = common::start().await;
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
    let h = q.history_totals().await.unwrap();
    assert_eq!((h.delivered, h.retried, h.acked), (2, 1, 1));

    let (st, v) =
        json(s.http.delete(s.url("/v1/queues/hooked/webhook")).bearer_auth(ADMIN).send().await.unwrap()).await;
    assert_eq!((st, v), (200, json!({"deleted": true})));
    let (st, _) = json(s.http.get(s.url("/v1/queues/hooked/webhook")).bearer_auth(ADMIN).send().await.unwrap()).await;
    assert_eq!(st, 404);
}
