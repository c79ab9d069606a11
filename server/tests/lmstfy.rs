//! The lmstfy-compatible API over real HTTP and a real Redis, driven with the requests of
//! lmstfy's doc/API.md: status codes, shapes, seconds, base64, auth, bad input, long-poll.
mod common;

use std::time::Duration;

use base64::Engine as _;
use common::{json, ADMIN};
use serde_json::json;

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_consume_delete_peek_size_as_the_doc_shows() {
    let s = common::start().await;
    let t = s.token("ns", false).await;
    let http = &s.http;

    // PUT /api/:namespace/:queue — 201 {"msg":"published","job_id"}; the X-Request-ID header.
    let r =
        http.put(s.url("/api/ns/q1?delay=1&ttl=60&tries=3")).header("X-Token", &t).body("hello").send().await.unwrap();
    assert!(r.headers().get("x-request-id").is_some());
    let (st, v) = json(r).await;
    assert_eq!(st, 201, "{v}");
    assert_eq!(v["msg"], "published");
    let id = v["job_id"].as_str().unwrap().to_string();

    // Not due yet: a consume without timeout finds nothing (404 {"msg":"no job available"}).
    let (st, v) = json(http.get(s.url("/api/ns/q1")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!((st, v), (404, json!({"msg": "no job available"})));

    // Long-poll: delivered once due, never before (elapsed_ms counts from the publish).
    let (st, v) = json(http.get(s.url(&format!("/api/ns/q1?timeout=10&ttr=30&token={t}"))).send().await.unwrap()).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["msg"], "new job");
    assert_eq!((v["namespace"].as_str(), v["queue"].as_str()), (Some("ns"), Some("q1")));
    assert_eq!(v["job_id"], id.as_str());
    assert_eq!(v["data"], b64("hello"));
    assert!(v["elapsed_ms"].as_i64().unwrap() >= 1000, "{v}");
    assert_eq!(v["remain_tries"], 2);
    let ttl = v["ttl"].as_u64().unwrap();
    assert!(ttl > 0 && ttl <= 60, "{v}");

    // GET .../job/:id while leased; DELETE (ack) 204 with no body; then 404 "job not found".
    let (st, v) =
        json(http.get(s.url(&format!("/api/ns/q1/job/{id}"))).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(st, 200);
    assert_eq!((v["job_id"].as_str(), v["data"].as_str()), (Some(id.as_str()), Some(b64("hello").as_str())));
    let r = http.delete(s.url(&format!("/api/ns/q1/job/{id}"))).header("X-Token", &t).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 204);
    assert!(r.text().await.unwrap().is_empty());
    let (st, v) =
        json(http.get(s.url(&format!("/api/ns/q1/job/{id}"))).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!((st, v), (404, json!({"error": "job not found"})));

    // Size counts ready jobs; peek shows the next ready one without consuming it.
    for body in ["a", "b"] {
        let r = http.put(s.url("/api/ns/q1")).header("X-Token", &t).body(body).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 201);
    }
    let (st, v) = json(http.get(s.url("/api/ns/q1/size")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!((st, v), (200, json!({"namespace": "ns", "queue": "q1", "size": 2})));
    let (st, v) = json(http.get(s.url("/api/ns/q1/peek")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(st, 200);
    assert_eq!(v["data"], b64("a"));
    assert_eq!(v["remain_tries"], 1);

    // count=2: an array of jobs.
    let (st, v) = json(http.get(s.url("/api/ns/q1?count=2")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(st, 200);
    let datas: Vec<_> = v.as_array().unwrap().iter().map(|j| j["data"].as_str().unwrap().to_string()).collect();
    assert_eq!(datas, vec![b64("a"), b64("b")]);
    let (_, v) = json(http.get(s.url("/api/ns/q1/peek")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(v["error"], "the queue is empty");

    // Bulk: a JSON array, each element a job.
    let r = http.put(s.url("/api/ns/q2/bulk")).header("X-Token", &t).body(r#"[{"a":1},"two",3]"#).send().await.unwrap();
    let (st, v) = json(r).await;
    assert_eq!(st, 201, "{v}");
    assert_eq!(v["msg"], "published");
    assert_eq!(v["job_ids"].as_array().unwrap().len(), 3);
    let (_, v) = json(http.get(s.url("/api/ns/q2")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(v["data"], b64(r#"{"a":1}"#));

    // PUT .../job/:id replaces a job: the old one is gone, the body is a new job.
    let r = http.put(s.url("/api/ns/q4?delay=600")).header("X-Token", &t).body("v1").send().await.unwrap();
    let old = json(r).await.1["job_id"].as_str().unwrap().to_string();
    let r = http.put(s.url(&format!("/api/ns/q4/job/{old}"))).header("X-Token", &t).body("v2").send().await.unwrap();
    let (st, v) = json(r).await;
    assert_eq!(st, 201);
    assert_ne!(v["job_id"].as_str(), Some(old.as_str()));
    let (st, _) =
        json(http.get(s.url(&format!("/api/ns/q4/job/{old}"))).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(st, 404);
    let (_, v) = json(http.get(s.url("/api/ns/q4")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(v["data"], b64("v2"));

    // DELETE /api/:ns/:queue deletes the ready jobs only.
    let r = http.put(s.url("/api/ns/q3?delay=600")).header("X-Token", &t).body("later").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let r = http.put(s.url("/api/ns/q3")).header("X-Token", &t).body("now").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let r = http.delete(s.url("/api/ns/q3")).header("X-Token", &t).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 204);
    let stats = s.client.queue("ns:q3").unwrap().stats().await.unwrap();
    assert_eq!((stats.ready, stats.scheduled), (0, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letters_respawn_and_delete() {
    let s = common::start().await;
    let t = s.token("ns", false).await;
    let http = &s.http;
    let r = http.put(s.url("/api/ns/dl?tries=1")).header("X-Token", &t).body("x").send().await.unwrap();
    let (_, v) = json(r).await;
    let id = v["job_id"].as_str().unwrap().to_string();
    // Consumed with a 1 s ttr and never deleted: out of tries, a dead letter once reclaimed.
    let (st, _) = json(http.get(s.url("/api/ns/dl?ttr=1")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(st, 200);
    let (st, v) = json(http.get(s.url("/api/ns/dl?timeout=3")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(st, 404, "{v}");
    let (st, v) = json(http.get(s.url("/api/ns/dl/deadletter")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!((st, v), (200, json!({"namespace": "ns", "queue": "dl", "deadletter_size": 1, "deadletter_head": id})));
    let (_, v) = json(http.get(s.url("/api/ns/dl/deadletter/size")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(v["size"], 1);
    let (st, v) =
        json(http.put(s.url("/api/ns/dl/deadletter?limit=5")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!((st, v), (200, json!({"msg": "respawned", "count": 1})));
    let (st, v) = json(http.get(s.url("/api/ns/dl?ttr=1")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!((st, v["job_id"].as_str()), (200, Some(id.as_str())));
    // Dead again (no tries left), then deleted from the dead letters.
    let (st, _) = json(http.get(s.url("/api/ns/dl?timeout=3")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(st, 404);
    let (_, v) = json(http.get(s.url("/api/ns/dl/deadletter")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(v["deadletter_size"], 1);
    let r = http.delete(s.url("/api/ns/dl/deadletter?limit=1")).header("X-Token", &t).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 204);
    let (_, v) = json(http.get(s.url("/api/ns/dl/deadletter")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(v, json!({"namespace": "ns", "queue": "dl", "deadletter_size": 0, "deadletter_head": ""}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_queues_in_priority_order_and_a_long_poll_woken_by_a_publish() {
    let s = common::start().await;
    let t = s.token("ns", false).await;
    let http = s.http.clone();
    for q in ["low", "high"] {
        let r = http.put(s.url(&format!("/api/ns/{q}"))).header("X-Token", &t).body(q).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 201);
    }
    for want in ["high", "low"] {
        let (st, v) =
            json(http.get(s.url("/api/ns/high,low?timeout=1")).header("X-Token", &t).send().await.unwrap()).await;
        assert_eq!((st, v["queue"].as_str()), (200, Some(want)), "{v}");
    }
    // Nothing anywhere: the long-poll waits, and a publish to the second queue ends it.
    let waiter = tokio::spawn({
        let (u, t, http) = (s.url("/api/ns/high,low?timeout=20"), t.clone(), http.clone());
        async move { json(http.get(u).header("X-Token", t).send().await.unwrap()).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = http.put(s.url("/api/ns/low")).header("X-Token", &t).body("wake").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let (st, v) = waiter.await.unwrap();
    assert_eq!((st, v["queue"].as_str(), v["data"].as_str()), (200, Some("low"), Some(b64("wake").as_str())));
}

/// `count` above 1 with several queues: an array of up to `count` jobs, filled in priority
/// order from the first queue with due jobs, then the next (a real lmstfy 1.0.15 server
/// answers x1, x2, y1, then y2 alone, to these requests); `count` 1 an object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_queues_with_count_answer_an_array_filled_in_priority_order() {
    let s = common::start().await;
    let t = s.token("ns", false).await;
    let http = s.http.clone();
    for (q, body) in [("mc1", "x1"), ("mc2", "y1"), ("mc2", "y2"), ("mc1", "x2")] {
        let r = http.put(s.url(&format!("/api/ns/{q}"))).header("X-Token", &t).body(body).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 201);
    }
    let jobs = |v: &serde_json::Value| -> Vec<(String, String)> {
        let a = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
        a.iter().map(|j| (j["queue"].as_str().unwrap().into(), j["data"].as_str().unwrap().into())).collect()
    };
    let want =
        |l: &[(&str, &str)]| -> Vec<(String, String)> { l.iter().map(|(q, b)| (q.to_string(), b64(b))).collect() };
    let (st, v) =
        json(http.get(s.url("/api/ns/mc1,mc2?timeout=1&count=3")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(jobs(&v), want(&[("mc1", "x1"), ("mc1", "x2"), ("mc2", "y1")]));
    assert_eq!((v[0]["msg"].as_str(), v[0]["namespace"].as_str()), (Some("new job"), Some("ns")), "{v}");
    // One job left: still an array.
    let (st, v) =
        json(http.get(s.url("/api/ns/mc1,mc2?timeout=1&count=3")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(jobs(&v), want(&[("mc2", "y2")]));
    let (st, v) = json(http.get(s.url("/api/ns/mc1,mc2?count=3")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!((st, v), (404, json!({"msg": "no job available"})));
    // count=1 (or none): an object.
    for body in ["z1", "z2"] {
        let r = http.put(s.url("/api/ns/mc2")).header("X-Token", &t).body(body).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 201);
    }
    for path in ["/api/ns/mc1,mc2?timeout=1&count=1", "/api/ns/mc1,mc2?timeout=1"] {
        let (st, v) = json(http.get(s.url(path)).header("X-Token", &t).send().await.unwrap()).await;
        assert_eq!(st, 200, "{path}: {v}");
        assert!(v.is_object(), "{path}: {v}");
        assert_eq!(v["queue"], "mc2", "{path}: {v}");
    }
    // Nothing anywhere: a long-poll with count waits, and a publish ends it with an array.
    let waiter = tokio::spawn({
        let (u, t, http) = (s.url("/api/ns/mc1,mc2?timeout=20&count=5"), t.clone(), http.clone());
        async move { json(http.get(u).header("X-Token", t).send().await.unwrap()).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = http.put(s.url("/api/ns/mc2")).header("X-Token", &t).body("wake").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let (st, v) = waiter.await.unwrap();
    assert_eq!(st, 200, "{v}");
    assert_eq!(jobs(&v), want(&[("mc2", "wake")]));
}

/// Several queues without `timeout` (or `timeout=0`) poll once, as lmstfy's server does: 200
/// with a job, 404 when every queue is empty, at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_queues_without_timeout_poll_once() {
    let s = common::start().await;
    let t = s.token("ns", false).await;
    let http = &s.http;
    for path in ["/api/ns/mm0,mm1", "/api/ns/mm0,mm1?timeout=0", "/api/ns/mm0,mm1?timeout=0&count=2"] {
        // One poll answers at once; a consume that waited would wait forever (30 s: a hang).
        let r = tokio::time::timeout(Duration::from_secs(30), http.get(s.url(path)).header("X-Token", &t).send());
        let (st, v) = json(r.await.expect("a poll, not a wait").unwrap()).await;
        assert_eq!((st, v), (404, json!({"msg": "no job available"})), "{path}");
    }
    let r = http.put(s.url("/api/ns/mm1")).header("X-Token", &t).body("a").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let (st, v) = json(http.get(s.url("/api/ns/mm0,mm1")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!((st, v["queue"].as_str(), v["data"].as_str()), (200, Some("mm1"), Some(b64("a").as_str())), "{v}");
    for (q, body) in [("mm1", "b"), ("mm0", "c")] {
        let r = http.put(s.url(&format!("/api/ns/{q}"))).header("X-Token", &t).body(body).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 201);
    }
    for want in ["c", "b"] {
        let (st, v) =
            json(http.get(s.url("/api/ns/mm0,mm1?timeout=0")).header("X-Token", &t).send().await.unwrap()).await;
        assert_eq!((st, v["data"].as_str()), (200, Some(b64(want).as_str())), "{v}");
    }
    let (st, v) = json(http.get(s.url("/api/ns/mm0,mm1?timeout=0")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!((st, v), (404, json!({"msg": "no job available"})));
}

/// lmstfy's job attributes: `Job-Attr-*` headers with `Enable-Job-Version: YES` are stored
/// (names lower-cased) as the message's headers and shown as `attributes` by consume and
/// both peeks; without them `attributes` is null. (A real lmstfy 1.0.15 server answers these
/// requests so, ids aside.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_attributes_round_trip_as_message_headers() {
    let s = common::start().await;
    let t = s.token("ns", false).await;
    let http = &s.http;
    let publish = |q: &str, headers: &[(&str, &str)]| {
        let mut r = http.put(s.url(&format!("/api/ns/{q}"))).header("X-Token", &t).body("x");
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        async move { json(r.send().await.unwrap()).await }
    };
    let get = |path: String| {
        let r = http.get(s.url(&path)).header("X-Token", &t);
        async move { json(r.send().await.unwrap()).await }
    };
    let (st, v) =
        publish("qa", &[("Enable-Job-Version", "YES"), ("Job-Attr-FOO", "bar"), ("Job-Attr-Trace-Id", "AbC")]).await;
    assert_eq!(st, 201, "{v}");
    let id = v["job_id"].as_str().unwrap().to_string();
    let attrs = json!({"foo": "bar", "trace-id": "AbC"});
    // Both peeks, then the consume.
    for path in [format!("/api/ns/qa/job/{id}"), "/api/ns/qa/peek".into(), "/api/ns/qa".into()] {
        let (st, v) = get(path.clone()).await;
        assert_eq!((st, &v["attributes"]), (200, &attrs), "{path}: {v}");
    }
    // They are the message's headers (what the native API and the bindings show).
    let m = s.client.queue("ns:qa").unwrap().peek(&id).await.unwrap().unwrap();
    assert_eq!(serde_json::to_value(&m.headers).unwrap(), attrs);

    // Without Enable-Job-Version (or with another value than yes), and with no attribute at
    // all: null, the key present.
    for headers in [
        &[("Job-Attr-Foo", "bar")][..],
        &[("Enable-Job-Version", "true"), ("Job-Attr-Foo", "bar")],
        &[("Enable-Job-Version", "yes")],
        &[],
    ] {
        let (st, v) = publish("qn", headers).await;
        assert_eq!(st, 201, "{headers:?}: {v}");
        let id = v["job_id"].as_str().unwrap().to_string();
        let (_, v) = get(format!("/api/ns/qn/job/{id}")).await;
        assert_eq!(v.get("attributes"), Some(&json!(null)), "{headers:?}: {v}");
        let (st, v) = get("/api/ns/qn".into()).await;
        assert_eq!((st, v.get("attributes")), (200, Some(&json!(null))), "{headers:?}: {v}");
    }

    // Any case of yes; empty values skipped; names cut to 32 bytes and values to 128.
    let (long_name, long_value) = ("k".repeat(40), "v".repeat(200));
    let long = format!("Job-Attr-{long_name}");
    let (st, _) = publish(
        "ql",
        &[("Enable-Job-Version", "yes"), ("Job-Attr-Empty", ""), (&long, &long_value), ("Job-Attr-a", "1")],
    )
    .await;
    assert_eq!(st, 201);
    let (_, v) = get("/api/ns/ql".into()).await;
    assert_eq!(v["attributes"], json!({"a": "1", "k".repeat(32): "v".repeat(128)}), "{v}");

    // Bulk: the attributes are every job's; in a consume of several, each shows its own.
    let r = http
        .put(s.url("/api/ns/qb/bulk"))
        .header("X-Token", &t)
        .header("Enable-Job-Version", "YES")
        .header("Job-Attr-r", "1")
        .body("[1,2]")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let (st, v) = get("/api/ns/qb?count=2".into()).await;
    assert_eq!(st, 200, "{v}");
    let shown: Vec<_> = v.as_array().unwrap().iter().map(|j| j["attributes"].clone()).collect();
    assert_eq!(shown, vec![json!({"r": "1"}), json!({"r": "1"})]);

    // More than 16: lmstfy's 400, nothing published.
    let many: Vec<(String, String)> = (0..17).map(|i| (format!("Job-Attr-k{i}"), format!("v{i}"))).collect();
    let mut headers = vec![("Enable-Job-Version", "YES")];
    headers.extend(many.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let (st, v) = publish("qm", &headers).await;
    assert_eq!((st, v), (400, json!({"error": "too many attributes, cannot exceed 16"})));
    let (st, v) = publish("qm", &headers[..17]).await;
    assert_eq!(st, 201, "16 are allowed: {v}");
    let (_, v) = get("/api/ns/qm".into()).await;
    assert_eq!(v["attributes"].as_object().map(|o| o.len()), Some(16), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_401_403_read_only_and_the_admin_routes() {
    let s = common::start().await;
    let http = &s.http;
    let rw = s.token("ns", false).await;
    let ro = s.token("ns", true).await;
    let put = |tok: Option<&str>, path: &str| {
        let mut r = http.put(s.url(path)).body("b");
        if let Some(t) = tok {
            r = r.header("X-Token", t);
        }
        r.send()
    };
    let (st, v) = json(put(None, "/api/ns/q").await.unwrap()).await;
    assert_eq!((st, v), (401, json!({"error": "token not found"})));
    let (st, v) = json(put(Some("nope"), "/api/ns/q").await.unwrap()).await;
    assert_eq!((st, v), (401, json!({"error": "invalid token"})));
    assert_eq!(put(Some(&rw), "/api/other/q").await.unwrap().status().as_u16(), 403);
    let (st, v) = json(put(Some(&ro), "/api/ns/q").await.unwrap()).await;
    assert_eq!((st, v), (403, json!({"error": "token is read-only"})));
    assert_eq!(put(Some(&rw), "/api/ns/q").await.unwrap().status().as_u16(), 201);
    let pooled = format!("default:{rw}");
    assert_eq!(put(Some(&pooled), "/api/ns/q").await.unwrap().status().as_u16(), 201, "lmstfy's POOL:TOKEN form");
    assert_eq!(put(Some(ADMIN), "/api/any/q").await.unwrap().status().as_u16(), 201);
    let r = http.get(s.url("/api/ns/q/size")).header("X-Token", &ro).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = http.get(s.url("/api/ns/q")).header("X-Token", &ro).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 403, "a read-only token cannot consume");
    // The size routes, public in lmstfy, need a token here too; /healthz does not.
    assert_eq!(http.get(s.url("/api/ns/q/size")).send().await.unwrap().status().as_u16(), 401);
    assert_eq!(http.get(s.url("/healthz")).send().await.unwrap().status().as_u16(), 200);
    assert_eq!(http.get(s.url("/metrics")).send().await.unwrap().status().as_u16(), 404);

    // Admin listener: the admin token only; create (201 {"token"}), list by id, revoke (204).
    let admin = |path: &str| format!("{}{path}", s.admin);
    let r = http.post(admin("/token/ns2?description=ci")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let r = http.post(admin("/token/ns2?description=ci")).header("X-Token", &rw).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let (st, v) = json(http.post(admin("/token/ns2")).header("X-Token", ADMIN).send().await.unwrap()).await;
    assert_eq!((st, v), (400, json!({"error": "invalid description"})));
    let r = http
        .post(admin("/token/ns2"))
        .basic_auth("admin", Some(ADMIN))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("description=from%20ci")
        .send()
        .await
        .unwrap();
    let (st, v) = json(r).await;
    assert_eq!(st, 201, "{v}");
    let new = v["token"].as_str().unwrap().to_string();
    assert_eq!(put(Some(&new), "/api/ns2/q").await.unwrap().status().as_u16(), 201);
    let (st, v) = json(http.get(admin("/token/ns2")).header("X-Token", ADMIN).send().await.unwrap()).await;
    assert_eq!((st, v), (200, json!({"tokens": {redelay_server::auth::hash(&new): "from ci"}})));
    let r = http.delete(admin(&format!("/token/ns2/{new}"))).header("X-Token", ADMIN).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 204);
    assert_eq!(put(Some(&new), "/api/ns2/q").await.unwrap().status().as_u16(), 401);
    // Stored hashed: the token itself is nowhere in Redis.
    let mut c = redis::Client::open(common::url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let dump: Vec<String> =
        redis::cmd("HKEYS").arg(format!("{}:tokens", s.client.prefix())).query_async(&mut c).await.unwrap();
    assert!(dump.contains(&redelay_server::auth::hash(&rw)) && !dump.contains(&rw));
}

/// A namespace's queues are `NS:QUEUE` (at most 128 bytes), so a namespace over 126 bytes could
/// name none: the admin route refuses its token, naming the limit, and a request naming it is
/// refused with the same words; the longest works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_too_long_for_any_queue_gets_no_token() {
    let s = common::start().await;
    let http = &s.http;
    let max = redelay_server::auth::MAX_NAMESPACE_BYTES;
    let long = "n".repeat(max + 1);
    let words = format!(
        "namespace name: must be 1 to {max} bytes (its queues are named NAMESPACE:QUEUE, at most {} bytes), got {}",
        redelay::limits::MAX_QUEUE_NAME_BYTES,
        max + 1
    );
    let r =
        http.post(format!("{}/token/{long}?description=ci", s.admin)).header("X-Token", ADMIN).send().await.unwrap();
    assert_eq!(json(r).await, (400, json!({ "error": words })));
    let err = s.st.tokens.create(&long, false, "ci", None).await.unwrap_err();
    assert_eq!((err.kind(), err.message()), (redelay::ErrorKind::InvalidArgument, words.as_str()));
    let r = http.put(s.url(&format!("/api/{long}/q"))).header("X-Token", ADMIN).body("b").send().await.unwrap();
    assert_eq!(json(r).await, (400, json!({ "error": words })));

    let ns = "n".repeat(max);
    let r = http.post(format!("{}/token/{ns}?description=ci", s.admin)).header("X-Token", ADMIN).send().await.unwrap();
    let (st, v) = json(r).await;
    assert_eq!(st, 201, "{v}");
    let token = v["token"].as_str().unwrap();
    let r = http.put(s.url(&format!("/api/{ns}/q"))).header("X-Token", token).body("b").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 201);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_with_lmstfy_messages() {
    let s = common::start().await;
    let t = s.token("ns", false).await;
    let http = &s.http;
    for (path, msg) in [
        ("/api/ns/q?delay=abc", "invalid delay"),
        ("/api/ns/q?delay=-1", "invalid delay"),
        ("/api/ns/q?ttl=5&delay=10", "ttl is shorter than delay"),
        ("/api/ns/q?tries=0", "tries shouldn't be zero"),
        ("/api/ns/q?tries=99999999", "invalid tries"),
    ] {
        let (st, v) = json(http.put(s.url(path)).header("X-Token", &t).body("x").send().await.unwrap()).await;
        assert_eq!((st, v), (400, json!({"error": msg})), "{path}");
    }
    // The core's own limits, with its message naming the field.
    let (st, v) =
        json(http.put(s.url("/api/ns/q?tries=2000")).header("X-Token", &t).body("x").send().await.unwrap()).await;
    assert_eq!(st, 400);
    assert!(v["error"].as_str().unwrap().starts_with("max_attempts"), "{v}");
    for (path, msg) in [
        ("/api/ns/q?count=0", "invalid count"),
        ("/api/ns/q?count=101", "invalid count"),
        ("/api/ns/q?ttr=x", "invalid ttr"),
    ] {
        let (st, v) = json(http.get(s.url(path)).header("X-Token", &t).send().await.unwrap()).await;
        assert_eq!((st, v), (400, json!({"error": msg})), "{path}");
    }
    let (st, v) = json(http.get(s.url("/api/ns/q.x/size")).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(st, 400);
    assert!(v["error"].as_str().unwrap().contains("forbidden characters"), "{v}");
    // A name lmstfy keeps for itself (a leading `_`), alone or among several: the error names it.
    for path in ["/api/ns/_x/size", "/api/ns/q,_x?timeout=0"] {
        let (st, v) = json(http.get(s.url(path)).header("X-Token", &t).send().await.unwrap()).await;
        let want = json!({"error": "queue name contains forbidden characters: \"_x\" (may not start with _)"});
        assert_eq!((st, v), (400, want), "{path}");
    }
    let (st, v) = json(
        http.put(s.url("/api/ns/q")).header("X-Token", &t).body(vec![b'x'; common::MAX_BODY + 1]).send().await.unwrap(),
    )
    .await;
    assert_eq!((st, v), (413, json!({"error": "body too large"})));
    // (Connection: close: the server drops this connection unread, the next request must not reuse it.)
    let (st, v) = json(
        http.put(s.url("/api/ns/q"))
            .header("X-Token", &t)
            .header("connection", "close")
            .body(vec![b'x'; 2 << 20])
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((st, v), (413, json!({"error": "body too large"})), "over the request limit too");
    let (st, v) = json(http.put(s.url("/api/ns/q/bulk")).header("X-Token", &t).body("{}").send().await.unwrap()).await;
    assert_eq!((st, v), (400, json!({"error": "request body should be an array of objects"})));
    let (st, v) = json(http.get(s.url("/nothing/here")).send().await.unwrap()).await;
    assert_eq!((st, v), (404, json!({"error": "api not found"})));
    // A method a route does not take is an unknown route to lmstfy (gin): its 404 and shape.
    for (method, path) in [("POST", "/api/ns/q"), ("PATCH", "/api/ns/q/job/x"), ("POST", "/healthz")] {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let (st, v) = json(http.request(m, s.url(path)).header("X-Token", &t).send().await.unwrap()).await;
        assert_eq!((st, v), (404, json!({"error": "api not found"})), "{method} {path}");
    }
}

/// `PUT .../job/:id` checks the whole request before it touches the job: a refused one (400,
/// 413) leaves the job as it was and stores nothing, as lmstfy does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_republish_keeps_the_job() {
    let s = common::start().await;
    let t = s.token("ns", false).await;
    let http = &s.http;
    let r = http.put(s.url("/api/ns/rp?delay=600")).header("X-Token", &t).body("orig").send().await.unwrap();
    let (st, v) = json(r).await;
    assert_eq!(st, 201, "{v}");
    let id = v["job_id"].as_str().unwrap().to_string();
    let attrs: Vec<(String, String)> = (0..17).map(|i| (format!("Job-Attr-k{i}"), format!("v{i}"))).collect();
    // (query, with 17 attributes, body size, answer)
    let cases = [
        ("tries=0", false, 3, 400),
        ("delay=10&ttl=5", false, 3, 400),
        ("delay=abc", false, 3, 400),
        ("", true, 3, 400),
        ("", false, common::MAX_BODY + 1, 413),
    ];
    for (query, with_attrs, size, want) in cases {
        let mut r =
            http.put(s.url(&format!("/api/ns/rp/job/{id}?{query}"))).header("X-Token", &t).body(vec![b'x'; size]);
        if with_attrs {
            r = r.header("Enable-Job-Version", "YES");
            for (k, v) in &attrs {
                r = r.header(k, v);
            }
        }
        let (st, v) = json(r.send().await.unwrap()).await;
        assert_eq!(st, want, "{query}: {v}");
        let (st, v) =
            json(http.get(s.url(&format!("/api/ns/rp/job/{id}"))).header("X-Token", &t).send().await.unwrap()).await;
        assert_eq!((st, v["data"].as_str()), (200, Some(b64("orig").as_str())), "{query}: the job after the 400");
    }
    // An id no job can have: refused before the new job is stored.
    let (st, v) = json(
        http.put(s.url(&format!("/api/ns/rp/job/{}", "i".repeat(257))))
            .header("X-Token", &t)
            .body("new")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(st, 400, "{v}");
    assert!(v["error"].as_str().unwrap().starts_with("id: "), "{v}");
    let stats = s.client.queue("ns:rp").unwrap().stats().await.unwrap();
    assert_eq!((stats.scheduled, stats.ready), (1, 0), "only the original job is stored");
}

/// lmstfy's respawn gives each job a fresh `ttl` counted from the respawn (its default when
/// absent, forever for 0), so a job whose ttl ran out while it was dead is delivered again.
/// (The same requests against a real lmstfy 1.0.15 server answer `ttl` 86400, 0 and 100 on
/// the consume after the respawn.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn respawn_gives_a_fresh_ttl_from_the_respawn() {
    let s = common::start().await;
    let t = s.token("ns", false).await;
    let http = &s.http;
    // (queue, respawn query, the ttl the respawned job shows: whole seconds left, 0 = forever)
    let cases = [("r-default", "", 86_390..=86_400), ("r-forever", "&ttl=0", 0..=0), ("r-100", "&ttl=100", 90..=100)];
    let mut ids = Vec::new();
    for (q, _, _) in &cases {
        // A 2 s ttl and one try; consumed with a 1 s ttr and never deleted: dead at its lease's end.
        let r = http.put(s.url(&format!("/api/ns/{q}?ttl=2&tries=1"))).header("X-Token", &t).body("x").send().await;
        let (st, v) = json(r.unwrap()).await;
        assert_eq!(st, 201, "{v}");
        ids.push(v["job_id"].as_str().unwrap().to_string());
        let (st, _) =
            json(http.get(s.url(&format!("/api/ns/{q}?ttr=1"))).header("X-Token", &t).send().await.unwrap()).await;
        assert_eq!(st, 200);
    }
    // Each long-poll reclaims the lease at its deadline: out of tries, dead; the 2 s ttl passes.
    let polls = cases.iter().map(|(q, _, _)| {
        let r = http.get(s.url(&format!("/api/ns/{q}?timeout=3"))).header("X-Token", &t).send();
        async move { json(r.await.unwrap()).await.0 }
    });
    assert_eq!(futures_util::future::join_all(polls).await, [404, 404, 404]);
    for ((q, query, ttl), id) in cases.iter().zip(&ids) {
        let (_, v) =
            json(http.get(s.url(&format!("/api/ns/{q}/deadletter"))).header("X-Token", &t).send().await.unwrap()).await;
        assert_eq!((v["deadletter_size"].as_u64(), v["deadletter_head"].as_str()), (Some(1), Some(id.as_str())), "{q}");
        let r = http.put(s.url(&format!("/api/ns/{q}/deadletter?limit=1{query}"))).header("X-Token", &t).send().await;
        assert_eq!(json(r.unwrap()).await, (200, json!({"msg": "respawned", "count": 1})), "{q}");
        let (st, v) =
            json(http.get(s.url(&format!("/api/ns/{q}?ttr=30"))).header("X-Token", &t).send().await.unwrap()).await;
        assert_eq!((st, v["job_id"].as_str()), (200, Some(id.as_str())), "{q}: delivered after the respawn: {v}");
        assert!(ttl.contains(&v["ttl"].as_u64().unwrap()), "{q}: ttl {} not in {ttl:?}", v["ttl"]);
    }
    // Not an int64 of at least 0 (lmstfy's parse): lmstfy's answer.
    for query in ["ttl=-1", "ttl=abc", "ttl=9223372036854775808"] {
        let r = http.put(s.url(&format!("/api/ns/r-100/deadletter?{query}"))).header("X-Token", &t).send().await;
        assert_eq!(json(r.unwrap()).await, (400, json!({"error": "invalid ttl"})), "{query}");
    }
    // An int64 beyond the core's 10-year bound (also past publish's uint32): the core's
    // message, naming the field and the limit.
    for ttl in ["4000000000", "5000000000", "9223372036854775807"] {
        let r = http.put(s.url(&format!("/api/ns/r-100/deadletter?ttl={ttl}"))).header("X-Token", &t).send().await;
        let (st, v) = json(r.unwrap()).await;
        assert_eq!(st, 400, "{ttl}");
        assert!(v["error"].as_str().unwrap().starts_with("expires_in: "), "{ttl}: {v}");
    }
}

/// A job whose `ttl` ran out before it was consumed is gone, as in lmstfy: `GET job/:id` is 404
/// and `peek` shows the next job that has not expired (or 404). It showed with `"ttl":1`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_job_is_not_found_by_peek() {
    let s = common::start().await;
    let t = s.token("ns", false).await;
    let http = &s.http;
    let get = |path: String| {
        let r = http.get(s.url(&path)).header("X-Token", &t);
        async move { json(r.send().await.unwrap()).await }
    };
    let r = http.put(s.url("/api/ns/qx?ttl=1")).header("X-Token", &t).body("short").send().await.unwrap();
    let id = json(r).await.1["job_id"].as_str().unwrap().to_string();
    let (st, v) = get(format!("/api/ns/qx/job/{id}")).await;
    assert_eq!((st, v["ttl"].as_u64()), (200, Some(1)), "not expired yet: {v}");
    tokio::time::sleep(Duration::from_millis(1300)).await;
    assert_eq!(get(format!("/api/ns/qx/job/{id}")).await, (404, json!({"error": "job not found"})));
    assert_eq!(get("/api/ns/qx/peek".into()).await, (404, json!({"error": "the queue is empty"})));
    let r = http.put(s.url("/api/ns/qx")).header("X-Token", &t).body("lasting").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let (st, v) = get("/api/ns/qx/peek".into()).await;
    assert_eq!((st, v["data"].as_str()), (200, Some(b64("lasting").as_str())), "{v}");
}

/// Job ids never repeat, as lmstfy's: after the queue is destroyed, a new job does not get an
/// old job's id (a plain queue's generated ids start over at 1), so a client holding the old
/// id cannot delete the new job by it. Bulk jobs each get their own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_ids_never_repeat_not_even_after_a_destroy() {
    let s = common::start().await;
    let t = s.token("ns", false).await;
    let http = &s.http;
    let publish = || async {
        let r = http.put(s.url("/api/ns/qd")).header("X-Token", &t).body("job").send().await.unwrap();
        let (st, v) = json(r).await;
        assert_eq!(st, 201, "{v}");
        v["job_id"].as_str().unwrap().to_string()
    };
    let old = publish().await;
    // Destroyed as the CLI, /v1 or any client destroys it (lmstfy's DELETE only empties it).
    s.client.queue("ns:qd").unwrap().destroy().await.unwrap();
    let new = publish().await;
    assert_ne!(old, new, "a new job got the id of a job of the destroyed queue");
    // Deleting by the old id leaves the new job alone.
    let r = http.delete(s.url(&format!("/api/ns/qd/job/{old}"))).header("X-Token", &t).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 204);
    let (st, v) =
        json(http.get(s.url(&format!("/api/ns/qd/job/{new}"))).header("X-Token", &t).send().await.unwrap()).await;
    assert_eq!(st, 200, "{v}");
    let r = http.put(s.url("/api/ns/qd/bulk")).header("X-Token", &t).body("[{},{},{}]").send().await.unwrap();
    let (st, v) = json(r).await;
    assert_eq!(st, 201, "{v}");
    let ids: std::collections::HashSet<&str> =
        v["job_ids"].as_array().unwrap().iter().filter_map(|i| i.as_str()).collect();
    assert_eq!(ids.len(), 3, "{v}");
    assert!(!ids.contains(old.as_str()) && !ids.contains(new.as_str()), "{v}");
}
