//! The native /v1 API over real HTTP and a real Redis: every operation, errors with the core's
//! codes, auth, and the OpenAPI document checked against the router.
mod common;
#[path = "../../core/tests/common/mod.rs"]
mod harness;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{json, Srv, ADMIN};
use serde_json::{json, Value};

async fn call(s: &Srv, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    call_as(s, ADMIN, method, path, body).await
}

async fn call_as(s: &Srv, token: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut r = s.http.request(m, s.url(path)).bearer_auth(token);
    if let Some(b) = body {
        r = r.json(&b);
    }
    json(r.send().await.unwrap()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_fetch_settle_and_inspect() {
    let s = common::start().await;
    let q = "/v1/queues/app:orders";
    let (st, v) = call(
        &s,
        "POST",
        &format!("{q}/messages"),
        Some(json!({
            "body": "close 42", "id": "order-42", "headers": {"kind": "close"}, "delay_ms": 300, "max_attempts": 3
        })),
    )
    .await;
    assert_eq!((st, v), (201, json!({"id": "order-42", "status": "stored"})));
    let (_, v) = call(&s, "POST", &format!("{q}/messages"), Some(json!({"body": "again", "id": "order-42"}))).await;
    assert_eq!(v["status"], "duplicate");

    // Peek: waiting, in ms.
    let (st, m) = call(&s, "GET", &format!("{q}/messages/order-42"), None).await;
    assert_eq!(st, 200);
    assert_eq!(
        (m["state"].as_str(), m["body"].as_str(), m["headers"]["kind"].as_str()),
        (Some("scheduled"), Some("close 42"), Some("close"))
    );
    assert!(m["due_at_ms"].as_i64().unwrap() >= m["published_at_ms"].as_i64().unwrap() + 300);
    // Without its body (for polling a large one): the rest alike, the size instead.
    let (st, lean) = call(&s, "GET", &format!("{q}/messages/order-42?body=false"), None).await;
    assert_eq!(st, 200, "{lean}");
    assert_eq!(lean["body_bytes"], 8);
    let mut full = m.clone();
    for k in ["body", "body_base64"] {
        assert!(lean.get(k).is_none(), "{k} in {lean}");
        full.as_object_mut().unwrap().remove(k);
    }
    full["body_bytes"] = json!(8);
    assert_eq!(lean, full);
    let (_, same) = call(&s, "GET", &format!("{q}/messages/order-42?body=true"), None).await;
    assert_eq!(same, m);
    let (st, v) = call(&s, "GET", &format!("{q}/messages/order-42?body=no"), None).await;
    assert_eq!((st, v["error"]["message"].as_str()), (400, Some("body: must be true or false, got \"no\"")), "{v}");

    // Fetch waits for the due time; never early.
    let (st, v) =
        call(&s, "POST", &format!("{q}/fetch"), Some(json!({"max": 5, "wait_ms": 10000, "ttr_ms": 5000}))).await;
    assert_eq!(st, 200, "{v}");
    let d = v["messages"][0].clone();
    assert_eq!(
        (d["id"].as_str(), d["attempt"].as_u64(), d["queue"].as_str()),
        (Some("order-42"), Some(1), Some("app:orders"))
    );
    assert!(d["delivered_at_ms"].as_i64() >= d["due_at_ms"].as_i64());
    assert_eq!(d["body_base64"], "Y2xvc2UgNDI=");
    let token = d["token"].as_str().unwrap().to_string();

    // Extend, nack with a delay and a reason, then the next attempt shows it.
    let (st, _) =
        call(&s, "POST", &format!("{q}/messages/order-42/extend"), Some(json!({"token": token, "ttr_ms": 10000})))
            .await;
    assert_eq!(st, 200);
    let (st, v) = call(
        &s,
        "POST",
        &format!("{q}/messages/order-42/nack"),
        Some(json!({"token": token, "delay_ms": 100, "reason": "db down"})),
    )
    .await;
    assert_eq!((st, v), (200, json!({"dead": false})));
    // No token is a malformed request, for every settle; a stale one is 409 with the core's code.
    let settles = [
        ("ack", json!({})),
        ("nack", json!({"token": ""})),
        ("release", json!({})),
        ("extend", json!({"ttr_ms": 1000})),
    ];
    for (op, body) in settles {
        let (st, v) = call(&s, "POST", &format!("{q}/messages/order-42/{op}"), Some(body)).await;
        assert_eq!((st, v["error"]["code"].as_str()), (400, Some("ERR_REDELAY_INVALID_ARGUMENT")), "{op}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().starts_with("token: required"), "{op}: {v}");
    }
    let (st, v) = call(&s, "POST", &format!("{q}/messages/order-42/ack"), Some(json!({"token": token}))).await;
    assert_eq!(st, 409);
    assert_eq!(v["error"]["code"], "ERR_REDELAY_LEASE_LOST");
    let (_, v) = call(&s, "POST", &format!("{q}/fetch"), Some(json!({"wait_ms": 10000}))).await;
    let d = v["messages"][0].clone();
    assert_eq!((d["attempt"].as_u64(), d["last_error"].as_str()), (Some(2), Some("db down")));
    // Released: due now, and the next delivery is the same attempt again.
    let (st, v) = call(&s, "POST", &format!("{q}/messages/order-42/release"), Some(json!({"token": d["token"]}))).await;
    assert_eq!((st, v), (200, json!({"released": true})));
    let (st, v) = call(&s, "POST", &format!("{q}/messages/order-42/release"), Some(json!({"token": d["token"]}))).await;
    assert_eq!((st, v["error"]["code"].as_str()), (409, Some("ERR_REDELAY_LEASE_LOST")));
    let (_, v) = call(&s, "POST", &format!("{q}/fetch"), Some(json!({"wait_ms": 10000}))).await;
    let d = v["messages"][0].clone();
    assert_eq!(d["attempt"].as_u64(), Some(2), "a release counts no attempt: {d}");
    let (st, v) = call(&s, "POST", &format!("{q}/messages/order-42/ack"), Some(json!({"token": d["token"]}))).await;
    assert_eq!((st, v), (200, json!({"acked": true})));
    let (st, v) = call(&s, "GET", &format!("{q}/messages/order-42"), None).await;
    assert_eq!((st, v["error"]["code"].as_str()), (404, Some("ERR_REDELAY_NOT_FOUND")));

    // Batch with expiry; a bad message refuses the whole batch, naming it.
    let (st, v) = call(
        &s,
        "POST",
        &format!("{q}/messages/batch"),
        Some(json!({"messages": [
            {"body": "a", "id": "a", "delay_ms": 60000, "expires_in_ms": 120000},
            {"body_base64": "//4=", "id": "b", "delay_ms": 120000},
            {"body": "c", "id": "c", "delay_ms": 120000, "headers": {"tenant": "t1"}}
        ]})),
    )
    .await;
    assert_eq!(st, 201, "{v}");
    assert_eq!(v["results"].as_array().unwrap().len(), 3);
    let (st, v) = call(
        &s,
        "POST",
        &format!("{q}/messages/batch"),
        Some(json!({"messages": [{"body": "x"}, {"body": "y", "ttr_ms": 1}]})),
    )
    .await;
    assert_eq!((st, v["error"]["code"].as_str()), (400, Some("ERR_REDELAY_INVALID_ARGUMENT")));
    assert!(v["error"]["message"].as_str().unwrap().starts_with("message 1: ttr_ms: must be 100 ms to 24 h"), "{v}");
    let (_, m) = call(&s, "GET", &format!("{q}/messages/a"), None).await;
    assert!(m["expires_at_ms"].as_i64().is_some());
    let (_, m) = call(&s, "GET", &format!("{q}/messages/b"), None).await;
    assert_eq!((m["body"].clone(), m["body_base64"].as_str()), (Value::Null, Some("//4=")));

    // Reschedule, list, stats, upcoming, search, cancel.
    let (st, v) = call(&s, "POST", &format!("{q}/messages/b/reschedule"), Some(json!({"delay_ms": 30000}))).await;
    assert_eq!(st, 200);
    assert!(v["due_at_ms"].as_i64().is_some());
    let (_, v) = call(&s, "GET", &format!("{q}/messages?state=scheduled&limit=10"), None).await;
    let ids: Vec<&str> = v["items"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!((v["total"].as_u64(), ids), (Some(3), vec!["b", "a", "c"]));
    let (_, v) = call(&s, "GET", &format!("{q}/stats"), None).await;
    assert_eq!((v["scheduled"].as_u64(), v["ready"].as_u64(), v["paused"].as_bool()), (Some(3), Some(0), Some(false)));
    let (_, v) = call(&s, "GET", &format!("{q}/upcoming?width_ms=60000&buckets=3"), None).await;
    let counts: Vec<u64> = v["buckets"].as_array().unwrap().iter().map(|b| b["count"].as_u64().unwrap()).collect();
    assert_eq!(counts.iter().sum::<u64>(), 3);
    let mut found = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = format!(
            "{q}/search?header=tenant:t1{}",
            cursor.as_ref().map(|c| format!("&cursor={c}")).unwrap_or_default()
        );
        let (st, v) = call(&s, "GET", &path, None).await;
        assert_eq!(st, 200, "{v}");
        found.extend(v["items"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_string()));
        match v["cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(found, vec!["c"]);
    let (st, v) = call(&s, "DELETE", &format!("{q}/messages/c"), None).await;
    assert_eq!((st, v), (200, json!({"cancelled": true})));
    let (st, _) = call(&s, "DELETE", &format!("{q}/messages/c"), None).await;
    assert_eq!(st, 404);

    // Pause / resume, history, verify, queues.
    assert_eq!(call(&s, "POST", &format!("{q}/pause"), None).await.1, json!({"changed": true}));
    assert_eq!(call(&s, "GET", &format!("{q}/stats"), None).await.1["paused"], true);
    assert_eq!(call(&s, "POST", &format!("{q}/resume"), None).await.1, json!({"changed": true}));
    let (_, v) = call(&s, "GET", &format!("{q}/history/totals"), None).await;
    assert_eq!((v["published"].as_u64(), v["acked"].as_u64(), v["retried"].as_u64()), (Some(4), Some(1), Some(1)));
    let (st, v) = call(&s, "GET", &format!("{q}/history?step=minute"), None).await;
    assert_eq!(st, 200);
    assert!(v["points"].as_array().unwrap().iter().map(|p| p["published"].as_u64().unwrap()).sum::<u64>() >= 4);
    // Each point with the lateness buckets of its p50 and p99 (null without deliveries).
    let pts = v["points"].as_array().unwrap();
    assert!(pts.iter().any(|p| p["lateness_p99_below_ms"].is_number() || p["lateness_p99_below_ms"] == "inf"), "{v}");
    assert!(pts.iter().all(|p| p.get("lateness_p50_below_ms").is_some()), "{v}");
    let (_, v) = call(&s, "POST", &format!("{q}/verify"), None).await;
    assert_eq!((v["ok"].as_bool(), v["records"].as_u64()), (Some(true), Some(2)));
    let (_, v) = call(&s, "GET", "/v1/queues", None).await;
    assert_eq!(v, json!({"queues": ["app:orders"]}));

    // The overview: every queue's stats and last hour in one request.
    let (st, v) = call(&s, "GET", "/v1/overview", None).await;
    assert_eq!((st, v["total"].as_u64()), (200, Some(1)), "{v}");
    let row = &v["queues"][0];
    assert_eq!((row["queue"].as_str(), row["stats"]["scheduled"].as_u64()), (Some("app:orders"), Some(2)));
    assert_eq!((row["last_hour"]["delivered"].as_u64(), row["last_hour"]["published"].as_u64()), (Some(3), Some(4)));
    assert!(row["lateness_p99_below_ms"].is_number() || row["lateness_p99_below_ms"] == "inf", "{row}");
    let (st, _) = call(&s, "GET", "/v1/overview?limit=0", None).await;
    assert_eq!(st, 400);
    // A query number that is not one names the parameter and what it takes.
    for (query, want) in [
        ("limit=-1", "limit: must be a whole number >= 0, got \"-1\""),
        ("offset=x", "offset: must be a whole number, got \"x\""),
    ] {
        let (st, v) = call(&s, "GET", &format!("/v1/queues/app:orders/dead?{query}"), None).await;
        assert_eq!((st, v["error"]["message"].as_str()), (400, Some(want)), "{query}");
    }
    // A parameter the route does not read is refused, not ignored (`token` is everyone's).
    for (path, want) in [
        ("/v1/queues/app:orders/dead?limt=5", "limt: unknown query parameter; expected offset, limit"),
        ("/v1/overview?limit=5&stpe=hour", "stpe: unknown query parameter; expected offset, limit, contains"),
        ("/v1/queues/app:orders/history?stpe=hour", "stpe: unknown query parameter; expected since_ms, until_ms, step"),
    ] {
        let (st, v) = call(&s, "GET", path, None).await;
        assert_eq!((st, v["error"]["message"].as_str()), (400, Some(want)), "{path}");
    }
}

/// `GET /v1/overview?contains=`: only the queues whose name holds the text (ASCII letters in
/// either case), paged among themselves, `total` counting them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_filters_queues_by_name() {
    let s = common::start().await;
    for q in ["app:orders", "app:Orders-eu", "app:mail", "app:order", "app:returns"] {
        let (st, v) = call(&s, "POST", &format!("/v1/queues/{q}/messages"), Some(json!({"body": "x"}))).await;
        assert_eq!(st, 201, "{v}");
    }
    let names = |v: &Value| -> Vec<String> {
        v["queues"].as_array().unwrap().iter().map(|r| r["queue"].as_str().unwrap().to_string()).collect()
    };
    let (st, v) = call(&s, "GET", "/v1/overview?contains=ORDER", None).await;
    assert_eq!((st, v["total"].as_u64()), (200, Some(3)), "{v}");
    assert_eq!(names(&v), ["app:Orders-eu", "app:order", "app:orders"]);
    assert_eq!(v["queues"][0]["stats"]["ready"], 1, "{v}");
    let (_, v) = call(&s, "GET", "/v1/overview?contains=order&offset=1&limit=1", None).await;
    assert_eq!((v["total"].as_u64(), names(&v)), (Some(3), vec!["app:order".to_string()]));
    let (_, v) = call(&s, "GET", "/v1/overview?contains=nowhere", None).await;
    assert_eq!((v["total"].as_u64(), names(&v).len()), (Some(0), 0), "{v}");
    let (_, v) = call(&s, "GET", "/v1/overview?contains=", None).await;
    assert_eq!(v["total"].as_u64(), Some(5), "an empty filter is none: {v}");
}

/// A queue named `.` or `..`, registered before such names were refused, can be opened by no
/// client: the overview lists it apart instead of failing whole (a 400 for every page).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_lists_apart_the_names_no_client_can_open() {
    let s = common::start().await;
    let (st, _) = call(&s, "POST", "/v1/queues/app:ok/messages", Some(json!({"body": "x"}))).await;
    assert_eq!(st, 201);
    let mut c = redis::Client::open(common::url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("SADD")
        .arg(format!("{}:queues", s.client.prefix()))
        .arg("..")
        .arg(".")
        .query_async(&mut c)
        .await
        .unwrap();
    let (st, v) = call(&s, "GET", "/v1/overview", None).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!((v["total"].as_u64(), v["queues"][0]["queue"].as_str()), (Some(1), Some("app:ok")), "{v}");
    assert_eq!(v["unreachable"], json!([".", ".."]), "{v}");
    let (_, v) = call(&s, "GET", "/v1/overview?contains=ok", None).await;
    assert_eq!((v["total"].as_u64(), &v["unreachable"]), (Some(1), &json!([])), "{v}");
}

/// The overview says once that a queue cannot be read, until it is read again; a queue
/// destroyed meanwhile is forgotten, so a new queue of its name that cannot be read is said
/// again: destroyed through this server (its route forgets it at once) or elsewhere (the next
/// overview no longer finds it registered).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_says_again_that_a_queue_made_anew_cannot_be_read() {
    let (here, elsewhere) = ("app:unread-destroyed-here", "app:unread-destroyed-elsewhere");
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = lines.clone();
    // The gateway's warnings of this test's queues only: other tests run beside it.
    assert!(redelay::forward_logs(2, move |_, target, msg| {
        if target == "redelay::server" && [here, elsewhere].iter().any(|q| msg.contains(&format!("{q:?}"))) {
            sink.lock().unwrap().push(msg);
        }
    }));
    let warned = |q: &str| {
        let said = format!("overview: queue {q:?} unavailable");
        lines.lock().unwrap().iter().filter(|l| l.starts_with(&said)).count()
    };
    let s = common::start().await;
    let mut c = redis::Client::open(common::url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    for q in [here, elsewhere] {
        for round in 1..=2 {
            // (Through a new handle, which registers the name: the server's handle of a queue
            // destroyed elsewhere takes it for registered still.)
            s.client.queue(q).unwrap().publish(redelay::Message::new(b"x".to_vec())).await.unwrap();
            // Its schedule no sorted set any more: its stats fail in Redis (WRONGTYPE).
            let key = format!("{}:{{{q}}}:sched", s.client.prefix());
            let _: () = redis::cmd("SET").arg(key).arg("x").query_async(&mut c).await.unwrap();
            for _ in 0..2 {
                let (st, v) = call(&s, "GET", "/v1/overview", None).await;
                let row = v["queues"].as_array().unwrap().iter().find(|r| r["queue"] == q).cloned();
                assert_eq!(
                    (st, row.map(|r| r["error"]["kind"].clone())),
                    (200, Some(json!("Redis"))),
                    "{q} {round}: {v}"
                );
            }
            assert_eq!(warned(q), round, "{q}: once per queue that cannot be read: {:#?}", lines.lock().unwrap());
            if q == here {
                let (st, v) = call(&s, "DELETE", &format!("/v1/queues/{q}"), None).await;
                assert_eq!((st, v), (200, json!({"destroyed": true})));
            } else {
                s.client.queue(q).unwrap().destroy().await.unwrap();
                let (_, v) = call(&s, "GET", "/v1/overview", None).await;
                assert!(v["queues"].as_array().unwrap().iter().all(|r| r["queue"] != q), "{v}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letters_several_queues_and_bad_input() {
    let s = common::start().await;
    let q = "/v1/queues/jobs";
    for i in 0..3 {
        let (st, _) = call(
            &s,
            "POST",
            &format!("{q}/messages"),
            Some(json!({"body": format!("m{i}"), "id": format!("m{i}"), "max_attempts": 1})),
        )
        .await;
        assert_eq!(st, 201);
    }
    let (_, v) = call(&s, "POST", &format!("{q}/fetch"), Some(json!({"max": 3}))).await;
    for d in v["messages"].as_array().unwrap() {
        let (_, r) = call(
            &s,
            "POST",
            &format!("{q}/messages/{}/nack", d["id"].as_str().unwrap()),
            Some(json!({"token": d["token"], "reason": "boom"})),
        )
        .await;
        assert_eq!(r, json!({"dead": true}));
    }
    let (_, v) = call(&s, "GET", &format!("{q}/dead?limit=10"), None).await;
    let dead: Vec<&str> = v["items"].as_array().unwrap().iter().map(|m| m["last_error"].as_str().unwrap()).collect();
    assert_eq!(dead, vec!["boom"; 3]);
    assert_eq!(
        call(&s, "POST", &format!("{q}/dead/respawn"), Some(json!({"ids": ["m0"]}))).await.1,
        json!({"count": 1})
    );
    assert_eq!(call(&s, "POST", &format!("{q}/dead/purge"), Some(json!({"oldest": 1}))).await.1, json!({"count": 1}));
    assert_eq!(call(&s, "POST", &format!("{q}/dead/purge"), Some(json!({"all": true}))).await.1, json!({"count": 1}));
    let (st, v) = call(&s, "POST", &format!("{q}/dead/purge"), Some(json!({"all": true, "oldest": 2}))).await;
    assert_eq!((st, v["error"]["message"].as_str()), (400, Some("ids/oldest/all: give exactly one of them")));

    // Several queues: priority order, and a long wait ended by a publish to the last one.
    let (_, v) = call(&s, "POST", "/v1/fetch", Some(json!({"queues": ["hi", "jobs"], "max": 5}))).await;
    assert_eq!(v["messages"][0]["id"], "m0");
    let waiter = tokio::spawn({
        let (http, u) = (s.http.clone(), s.url("/v1/fetch"));
        async move {
            json(
                http.post(u)
                    .bearer_auth(ADMIN)
                    .json(&json!({"queues": ["hi", "lo"], "wait_ms": 20000}))
                    .send()
                    .await
                    .unwrap(),
            )
            .await
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    call(&s, "POST", "/v1/queues/lo/messages", Some(json!({"body": "wake"}))).await;
    let (st, v) = waiter.await.unwrap();
    assert_eq!(
        (st, v["messages"][0]["body"].as_str(), v["messages"][0]["queue"].as_str()),
        (200, Some("wake"), Some("lo"))
    );

    // Bad input: the field and the limit, with the core's code.
    for (path, body, starts) in [
        (format!("{q}/messages"), json!({"body": "x", "delay_ms": 1u64 << 50}), "delay_ms: "),
        // A negative duration in the core's words, as every language words it.
        (format!("{q}/messages"), json!({"body": "x", "delay_ms": -5}), "delay_ms: must not be negative, got -5 ms"),
        (format!("{q}/fetch"), json!({"wait_ms": -1}), "wait_ms: must not be negative, got -1 ms"),
        (format!("{q}/messages/x/extend"), json!({"ttr_ms": -1}), "ttr_ms: must not be negative, got -1 ms"),
        (format!("{q}/messages/x/reschedule"), json!({"delay_ms": -5}), "delay_ms: must not be negative, got -5 ms"),
        (format!("{q}/messages"), json!({"body": "x", "bogus": 1}), "bogus: unknown field `bogus`"),
        (format!("{q}/messages"), json!({"body": "x", "body_base64": "eA=="}), "body/body_base64"),
        (format!("{q}/messages"), json!({"id": "123"}), "id:"),
        (format!("{q}/fetch"), json!({"max": 0}), "max:"),
        // A retry delay by the core's rule of every language (the token is not even read).
        (format!("{q}/messages/x/nack"), json!({"retry_in_ms": -5}), "retry_in_ms: must be 0 to 3650 days, got -5 ms"),
        (format!("{q}/messages"), json!([{"body": "x"}]), "a message: must be a JSON object"),
        (format!("{q}/fetch"), json!([{"max": 1}]), "body: expected a JSON object, got an array"),
        (format!("{q}/fetch"), json!("x"), "body: expected a JSON object, got a string"),
        ("/v1/queues/bad%20name/stats".to_string(), json!(null), "queue name"),
    ] {
        let method = if path.ends_with("stats") { "GET" } else { "POST" };
        let (st, v) = call(&s, method, &path, (!body.is_null()).then_some(body)).await;
        assert_eq!((st, v["error"]["code"].as_str()), (400, Some("ERR_REDELAY_INVALID_ARGUMENT")), "{path}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().starts_with(starts), "{path}: {v}");
    }
    let big = "x".repeat(common::MAX_BODY + 1);
    let (st, v) = call(&s, "POST", &format!("{q}/messages"), Some(json!({ "body": big }))).await;
    assert_eq!(st, 400);
    assert!(v["error"]["message"].as_str().unwrap().starts_with("body:"), "{v}");
    let huge = "x".repeat(2 << 20);
    // (Connection: close: the server drops this connection unread, the next request must not reuse it.)
    let big_req = s.http.post(s.url(&format!("{q}/messages"))).bearer_auth(ADMIN).header("connection", "close");
    let (st, v) = json(big_req.json(&json!({ "body": huge })).send().await.unwrap()).await;
    assert_eq!((st, v["error"]["code"].as_str()), (413, Some("ERR_REDELAY_TOO_LARGE")), "{v}");
    let (st, v) = call(&s, "GET", "/v1/nothing", None).await;
    assert_eq!((st, v["error"]["code"].as_str()), (404, Some("ERR_REDELAY_NO_ROUTE")));
    // A method the route does not take: 405 in the API's shape (it had no body).
    let (st, v) = call(&s, "GET", &format!("{q}/fetch"), None).await;
    let want = json!({"error": {"code": "ERR_REDELAY_METHOD_NOT_ALLOWED",
        "message": format!("method: GET is not allowed on {q}/fetch")}});
    assert_eq!((st, v), (405, want));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_tokens_and_read_only_tokens() {
    let s = common::start().await;
    let rw = s.token("app", false).await;
    let ro = s.token("app", true).await;
    async fn publish(s: &Srv, t: &str, q: &str) -> (u16, Value) {
        call_as(s, t, "POST", &format!("/v1/queues/{q}/messages"), Some(json!({"body": "x"}))).await
    }
    let (st, v) = json(s.http.get(s.url("/v1/queues/app:a/stats")).send().await.unwrap()).await;
    assert_eq!((st, v["error"]["code"].as_str()), (401, Some("ERR_REDELAY_UNAUTHORIZED")));
    assert_eq!(publish(&s, "wrong", "app:a").await.0, 401);
    assert_eq!(publish(&s, &rw, "app:a").await.0, 201);
    let (st, v) = publish(&s, &rw, "other:a").await;
    assert_eq!((st, v["error"]["code"].as_str()), (403, Some("ERR_REDELAY_FORBIDDEN")));
    assert_eq!(publish(&s, &rw, "plain").await.0, 403, "queues outside every namespace: admin only");
    assert_eq!(publish(&s, &ro, "app:a").await.0, 403);
    assert_eq!(call_as(&s, &ro, "GET", "/v1/queues/app:a/stats", None).await.0, 200);
    assert_eq!(call_as(&s, &ro, "POST", "/v1/queues/app:a/fetch", None).await.0, 403);
    assert_eq!(publish(&s, ADMIN, "plain").await.0, 201);
    // X-Token and ?token= work too; the queue list shows only the namespace's queues.
    let r = s.http.get(s.url("/v1/queues")).header("X-Token", &ro).send().await.unwrap();
    assert_eq!(json(r).await.1, json!({"queues": ["app:a"]}));
    let r = s.http.get(s.url(&format!("/v1/queues?token={rw}"))).send().await.unwrap();
    assert_eq!(json(r).await.1, json!({"queues": ["app:a"]}));
    // The Authorization scheme in any case (RFC 9110); another scheme is no token.
    for (header, want) in [(format!("BEARER {ro}"), 200), (format!("bearer {ro}"), 200), (format!("Token {ro}"), 401)] {
        let r = s.http.get(s.url("/v1/queues")).header("Authorization", &header).send().await.unwrap();
        assert_eq!(r.status().as_u16(), want, "{header}");
    }
    let (_, v) = call(&s, "GET", "/v1/queues", None).await;
    assert_eq!(v, json!({"queues": ["app:a", "plain"]}));
}

/// The (method, path) pairs of `.route(...)` calls in a source file.
fn routes_in_source(src: &str) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for part in src.split(".route(").skip(1) {
        let path = part.split('"').nth(1).unwrap().to_string();
        // The methods of this call: up to the next route.
        let mut depth = 1;
        let mut end = 0;
        for (i, c) in part.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = i;
                break;
            }
        }
        let call = &part[..end];
        for m in ["get", "post", "put", "delete", "patch"] {
            if call.contains(&format!(" {m}("))
                || call.contains(&format!("({m}("))
                || call.contains(&format!(".{m}("))
                || call.contains(&format!("\n{m}("))
            {
                out.insert((m.to_uppercase(), path.clone()));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_lists_exactly_the_routes() {
    let s = common::start().await;
    let (st, doc) = call(&s, "GET", "/v1/openapi.json", None).await;
    assert_eq!(st, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    let mut documented = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for m in item.as_object().unwrap().keys().filter(|k| *k != "parameters") {
            documented.insert((m.to_uppercase(), path.clone()));
        }
    }
    let src = include_str!("../src/routes_v1.rs");
    let routed =
        routes_in_source(&src[src.find("pub fn router()").unwrap()..src.find("/// The namespace of a queue").unwrap()]);
    assert!(routed.len() >= 25, "{routed:?}");
    assert_eq!(documented, routed, "the document and the router differ");
    // And the live router answers each documented route (401 without a token), not 404/405.
    for (m, path) in &documented {
        let p = path.replace("{queue}", "app:q").replace("{id}", "x");
        let r = s.http.request(reqwest::Method::from_bytes(m.as_bytes()).unwrap(), s.url(&p)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 401, "{m} {path}");
    }
    let r = s.http.patch(s.url("/v1/queues/app:q/stats")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 405);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_whose_client_left_gives_its_message_back() {
    let s = common::start().await;
    // This client gives up after 300 ms of a 20 s wait.
    let gone = s
        .http
        .post(s.url("/v1/queues/left/fetch"))
        .bearer_auth(ADMIN)
        .json(&json!({"wait_ms": 20000, "ttr_ms": 60000}))
        .timeout(Duration::from_millis(300))
        .send()
        .await;
    assert!(gone.is_err());
    let (st, _) = call(&s, "POST", "/v1/queues/left/messages", Some(json!({"body": "x", "id": "k"}))).await;
    assert_eq!(st, 201);
    // Whoever fetches next gets it at once, first attempt: the abandoned fetch did not keep it
    // for its 60 s lease.
    let (st, v) = call(&s, "POST", "/v1/queues/left/fetch", Some(json!({"wait_ms": 20000}))).await;
    assert_eq!(st, 200);
    assert_eq!((v["messages"][0]["id"].as_str(), v["messages"][0]["attempt"].as_u64()), (Some("k"), Some(1)), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_whose_client_left_stops_waiting() {
    let s = common::start().await;
    let gone = s
        .http
        .post(s.url("/v1/queues/ghost/fetch"))
        .bearer_auth(ADMIN)
        .json(&json!({"wait_ms": 30000}))
        .timeout(Duration::from_millis(300))
        .send()
        .await;
    assert!(gone.is_err());
    // A message due in 1 s: a fetch still waiting for the client that left would lease it then
    // (and give it back). Nobody else fetches, so nothing may be delivered.
    let (st, _) = call(&s, "POST", "/v1/queues/ghost/messages", Some(json!({"body": "x", "delay_ms": 1000}))).await;
    assert_eq!(st, 201);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let q = s.client.queue("ghost").unwrap();
    assert_eq!(q.history_totals().await.unwrap().delivered, 0, "the abandoned long-poll stopped waiting");
    assert_eq!(q.stats().await.unwrap().ready, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_when_enabled_need_no_token() {
    let s = common::start_with(|c| c.metrics = true).await;
    assert_eq!(call(&s, "GET", "/v1/queues", None).await.0, 200);
    assert_eq!(call_as(&s, "nope", "GET", "/v1/queues", None).await.0, 401);
    assert_eq!(s.http.get(s.url("/dashboard.css")).send().await.unwrap().status().as_u16(), 200);
    // A health probe, and a scrape before this one: the probes' answers, not lmstfy's.
    assert_eq!(s.http.get(s.url("/healthz")).send().await.unwrap().status().as_u16(), 200);
    assert_eq!(s.http.get(s.url("/metrics")).send().await.unwrap().status().as_u16(), 200);
    let r = s.http.get(s.url("/metrics")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let text = r.text().await.unwrap();
    assert!(text.contains("redelay_http_answers_total{api=\"probe\",code=\"2xx\"} 2\n"), "{text}");
    assert!(text.contains("redelay_http_answers_total{api=\"v1\",code=\"2xx\"} 1\n"), "{text}");
    assert!(text.contains("redelay_http_answers_total{api=\"v1\",code=\"4xx\"} 1\n"), "{text}");
    assert!(text.contains("redelay_http_answers_total{api=\"dashboard\",code=\"2xx\"} 1\n"), "{text}");
    assert!(text.contains("redelay_http_answers_total{api=\"lmstfy\",code=\"2xx\"} 0\n"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_cuts_a_long_poll_after_the_grace() {
    let mut s = common::start().await;
    let poll = tokio::spawn({
        let (http, u) = (s.http.clone(), s.url("/v1/queues/idle/fetch"));
        async move { http.post(u).bearer_auth(ADMIN).json(&json!({"wait_ms": 600000})).send().await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    // A ten-minute long-poll does not hold the server: run returns after the grace.
    tokio::time::timeout(Duration::from_secs(120), s.shutdown()).await.expect("run returned").unwrap();
    assert!(!poll.is_finished(), "the poll was still waiting: the grace ended it, not the poll");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_actions_dead_letter_groups_and_whoami() {
    let s = common::start().await;
    let q = "/v1/queues/app:bulk";
    for i in 0..6 {
        let m = json!({"body": format!("m{i}"), "id": format!("m{i}"), "max_attempts": 1, "delay_ms": 600000});
        assert_eq!(call(&s, "POST", &format!("{q}/messages"), Some(m)).await.0, 201);
    }
    // Deliver now by ids: due at once, so a fetch gets them; each nacked into a dead letter
    // with one of two errors.
    let (st, v) =
        call(&s, "POST", &format!("{q}/bulk"), Some(json!({"action": "deliver_now", "ids": ["m0", "m1", "m2"]}))).await;
    assert_eq!((st, v), (200, json!({"matched": 3, "done": 3, "scanned": 0})));
    let (_, v) = call(&s, "POST", &format!("{q}/fetch"), Some(json!({"max": 10, "wait_ms": 5000}))).await;
    let got = v["messages"].as_array().unwrap();
    assert_eq!(got.len(), 3, "{v}");
    for d in got {
        let reason = if d["id"] == "m0" { "timeout talking to x" } else { "bad input" };
        let path = format!("{q}/messages/{}/nack", d["id"].as_str().unwrap());
        let (_, r) = call(&s, "POST", &path, Some(json!({"token": d["token"], "reason": reason}))).await;
        assert_eq!(r, json!({"dead": true}));
    }
    let (st, v) = call(&s, "GET", &format!("{q}/dead/errors"), None).await;
    assert_eq!((st, v["total"].as_u64(), v["scanned"].as_u64()), (200, Some(3), Some(3)), "{v}");
    let groups = v["groups"].as_array().unwrap();
    assert_eq!((groups[0]["error"].as_str(), groups[0]["count"].as_u64()), (Some("bad input"), Some(2)), "{v}");
    assert_eq!((groups[1]["error"].as_str(), groups[1]["count"].as_u64()), (Some("timeout talking to x"), Some(1)));
    assert_eq!(groups[0]["sample_ids"].as_array().unwrap().len(), 2);

    // A read-only token sees, but bulk is refused.
    let ro = s.token("app", true).await;
    let (st, v) = call_as(&s, &ro, "GET", "/v1/whoami", None).await;
    assert_eq!((st, v), (200, json!({"admin": false, "namespace": "app", "read_only": true})));
    assert_eq!(call_as(&s, &ro, "GET", &format!("{q}/dead/errors"), None).await.0, 200);
    let (st, v) =
        call_as(&s, &ro, "POST", &format!("{q}/bulk"), Some(json!({"action": "respawn", "search": {"error": "bad"}})))
            .await;
    assert_eq!((st, v["error"]["code"].as_str()), (403, Some("ERR_REDELAY_FORBIDDEN")));
    assert_eq!(call(&s, "GET", "/v1/whoami", None).await.1["admin"], true);

    // Respawn by a search of the error: only that group comes back.
    let (st, v) =
        call(&s, "POST", &format!("{q}/bulk"), Some(json!({"action": "respawn", "search": {"error": "bad input"}})))
            .await;
    assert_eq!((st, v["matched"].as_u64(), v["done"].as_u64()), (200, Some(2), Some(2)), "{v}");
    assert!(v["scanned"].as_u64().unwrap() >= 6, "{v}");
    let (_, v) = call(&s, "GET", &format!("{q}/stats"), None).await;
    assert_eq!((v["dead"].as_u64(), v["ready"].as_u64(), v["scheduled"].as_u64()), (Some(1), Some(2), Some(3)), "{v}");

    // Reschedule by an id prefix, purge by ids, cancel.
    let at = v["now_ms"].as_i64().unwrap() + 3_600_000;
    let body = json!({"action": "reschedule", "at_ms": at, "search": {"id_prefix": "m"}});
    let (_, v) = call(&s, "POST", &format!("{q}/bulk"), Some(body)).await;
    // The waiting five move; the dead one is skipped.
    assert_eq!((v["matched"].as_u64(), v["done"].as_u64()), (Some(6), Some(5)), "{v}");
    let (_, m) = call(&s, "GET", &format!("{q}/messages/m5"), None).await;
    assert_eq!(m["due_at_ms"].as_i64(), Some(at));
    let (_, v) = call(&s, "POST", &format!("{q}/bulk"), Some(json!({"action": "purge", "ids": ["m0", "m1"]}))).await;
    assert_eq!((v["matched"].as_u64(), v["done"].as_u64()), (Some(2), Some(1)), "{v}");
    let (_, v) =
        call(&s, "POST", &format!("{q}/bulk"), Some(json!({"action": "cancel", "search": {"body": "m3"}}))).await;
    assert_eq!(v["done"].as_u64(), Some(1), "{v}");
    let (_, v) = call(&s, "GET", &format!("{q}/stats"), None).await;
    assert_eq!((v["total"].as_u64(), v["dead"].as_u64()), (Some(4), Some(0)), "{v}");

    // Bad input names the field, with the core's rules.
    for (body, starts) in [
        (json!({"action": "explode", "ids": ["a"]}), "action: unknown value `explode`"),
        (json!({"action": "cancel"}), "ids/search"),
        (json!({"action": "reschedule", "ids": ["a"]}), "delay_ms/at_ms: "),
        (json!({"action": "cancel", "ids": ["a"], "delay_ms": -1}), "delay_ms:"),
        (json!({"action": "cancel", "ids": ["a"], "nope": 1}), "nope: unknown field `nope`"),
    ] {
        let (st, v) = call(&s, "POST", &format!("{q}/bulk"), Some(body.clone())).await;
        assert_eq!((st, v["error"]["code"].as_str()), (400, Some("ERR_REDELAY_INVALID_ARGUMENT")), "{body}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().starts_with(starts), "{body}: {v}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_assets_are_embedded_and_public_its_data_is_not() {
    let s = common::start().await;
    for (path, ty, has) in [
        ("/", "text/html", "/dashboard.mjs"),
        ("/dashboard.mjs", "text/javascript", "/v1/overview"),
        ("/dashboard.css", "text/css", "tabular-nums"),
        ("/icon.svg", "image/svg+xml", "<svg"),
    ] {
        let r = s.http.get(s.url(path)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200, "{path}");
        assert!(r.headers()["content-type"].to_str().unwrap().starts_with(ty), "{path}");
        assert!(r.headers()["content-security-policy"].to_str().unwrap().contains("script-src 'self'"), "{path}");
        assert!(r.text().await.unwrap().contains(has), "{path}");
    }
    // Every /v1 route the page calls is in the router (and so in openapi.json).
    let script = redelay_server::dashboard::SCRIPT;
    for route in
        ["/v1/whoami", "/v1/overview", "/stats", "/upcoming?", "/history?", "/dead/errors", "/bulk", "/search?"]
    {
        assert!(script.contains(route), "{route}");
    }
    assert_eq!(call_as(&s, "", "GET", "/v1/overview", None).await.0, 401);
    let (st, v) = call(&s, "GET", "/nothing.js", None).await;
    assert_eq!((st, v), (404, json!({"error": "api not found"})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sharded_queue_is_served_with_its_stored_shard_count() {
    let s = common::start().await;
    let sharded = s.client.queue_with("app:sharded", redelay::QueueOptions::shards(4)).unwrap();
    let msgs = (0..8).map(|i| redelay::Message::new(b"x".to_vec()).id(format!("s{i}"))).collect();
    sharded.publish_batch(msgs).await.unwrap();
    let q = "/v1/queues/app:sharded";
    let (st, v) = call(&s, "GET", &format!("{q}/stats"), None).await;
    assert_eq!((st, v["total"].as_u64()), (200, Some(8)), "{v}");
    let (st, v) = call(&s, "POST", &format!("{q}/messages"), Some(json!({"body": "via http", "id": "h1"}))).await;
    assert_eq!((st, v["status"].as_str()), (201, Some("stored")), "{v}");
    assert_eq!(sharded.peek("h1").await.unwrap().unwrap().body, b"via http");
}

/// A queue read (or long-polled) before anyone created it, then made sharded by a producer:
/// the gateway serves it with its count from then on (it kept a 1-shard handle, and every
/// later call was refused: "has 4 shards in Redis and this handle was opened with 1").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_made_sharded_after_the_gateway_first_saw_it_is_served_sharded() {
    let s = common::start().await;
    let q = "/v1/queues/app:later";
    let (st, v) = call(&s, "POST", &format!("{q}/fetch"), Some(json!({"wait_ms": 0}))).await;
    assert_eq!((st, v), (200, json!({"messages": []})));
    let (st, v) = call(&s, "GET", &format!("{q}/stats"), None).await;
    assert_eq!((st, v["total"].as_u64()), (200, Some(0)), "{v}");
    let sharded = s.client.queue_with("app:later", redelay::QueueOptions::shards(4)).unwrap();
    sharded.publish(redelay::Message::new(b"first".to_vec()).id("p1")).await.unwrap();
    // The plain handle is kept a second (until then a call on it is refused, nothing written).
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let (st, v) = call(&s, "POST", &format!("{q}/fetch"), Some(json!({"wait_ms": 0}))).await;
    assert_eq!((st, v["messages"][0]["id"].as_str()), (200, Some("p1")), "{v}");
    let (st, v) = call(&s, "POST", &format!("{q}/messages"), Some(json!({"body": "x", "id": "h1"}))).await;
    assert_eq!(st, 201, "{v}");
    assert!(sharded.peek("h1").await.unwrap().is_some());
}

/// A sharded queue the gateway serves, destroyed by another client and made again with another
/// count: the core refuses the gateway's kept handle of the old count before anything is
/// written (a publish went into shard keys no queue reads, lost, answered 201), and the gateway
/// opens the queue anew with the count now stored and answers the request again — at once, not
/// with a 400 until its handle aged out (5 s). So for each route that writes (publish, batch,
/// pause, lmstfy's publish, a cancel by id) with the queue made again each time, 4 shards to 2
/// and back. A
/// client that opened the queue with an explicit count that is no longer the queue's is still
/// refused with the InvalidArgument naming both counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sharded_queue_re_created_with_another_count_is_served_with_the_new_one() {
    let s = common::start().await;
    let (name, q) = ("app:recount", "/v1/queues/app:recount");
    let open = |n: u32| s.client.queue_with(name, redelay::QueueOptions::shards(n)).unwrap();
    open(4).publish(redelay::Message::new(b"x".to_vec()).id("a")).await.unwrap();
    let (st, v) = call(&s, "GET", &format!("{q}/stats"), None).await;
    assert_eq!((st, v["total"].as_u64()), (200, Some(1)), "{v}");
    // Another client destroys the queue (the gateway keeps its handle of `from` shards) and
    // makes it again with `to`, holding one message.
    let remake = |from: u32, to: u32, id: &str| {
        let id = id.to_string();
        let (old, new) = (open(from), open(to));
        async move {
            old.destroy().await.unwrap();
            new.publish(redelay::Message::new(b"x".to_vec()).id(id)).await.unwrap();
        }
    };
    let mut r = harness::raw().await;
    remake(4, 2, "b").await;
    let (st, v) = call(&s, "POST", &format!("{q}/messages"), Some(json!({"body": "y", "id": "c"}))).await;
    assert_eq!((st, v["status"].as_str()), (201, Some("stored")), "{v}");
    assert_eq!(open(2).peek("c").await.unwrap().map(|m| m.body), Some(b"y".to_vec()), "in the queue of 2 shards");
    for i in [2, 3] {
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{}:{{{name}/{i}}}:*", s.client.prefix()))
            .query_async(&mut r)
            .await
            .unwrap();
        assert_eq!(keys, Vec::<String>::new(), "shard {i} of the old count");
    }

    remake(2, 4, "d").await;
    let batch = json!({"messages": [{"body": "e", "id": "e"}, {"body": "f", "id": "f"}]});
    let (st, v) = call(&s, "POST", &format!("{q}/messages/batch"), Some(batch)).await;
    assert_eq!((st, v["results"][1]["status"].as_str()), (201, Some("stored")), "{v}");
    assert_eq!(open(4).stats().await.unwrap().total, 3, "d, e and f in the queue of 4 shards");

    remake(4, 2, "g").await;
    let (st, v) = call(&s, "POST", &format!("{q}/pause"), None).await;
    assert_eq!((st, v["changed"].as_bool()), (200, Some(true)), "{v}");
    assert!(open(2).stats().await.unwrap().paused);

    remake(2, 4, "h").await;
    let t = s.token("app", false).await;
    let res = s.http.put(s.url("/api/app/recount")).header("X-Token", &t).body("via lmstfy").send().await.unwrap();
    let (st, v) = json(res).await;
    assert_eq!(st, 201, "{v}");
    assert_eq!(open(4).stats().await.unwrap().total, 2, "h and the lmstfy job in the queue of 4 shards");
    let (st, v) = call(&s, "GET", &format!("{q}/stats"), None).await;
    assert_eq!((st, v["total"].as_u64()), (200, Some(2)), "{v}");

    // A change by id, to a message whose shard of 4 the queue of 2 does not have.
    let id = (0..).map(|i| format!("k{i}")).find(|id| redelay::shard_of(id, 4) >= 2).unwrap();
    remake(4, 2, &id).await;
    let (st, v) = call(&s, "DELETE", &format!("{q}/messages/{id}"), None).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(open(2).stats().await.unwrap().total, 0, "cancelled in the queue of 2 shards");

    // A handle opened with an explicit count that is no longer the queue's is refused.
    let e = open(4).publish(redelay::Message::new(b"z".to_vec())).await.unwrap_err();
    assert_eq!((e.kind(), e.shard_count_mismatch()), (redelay::ErrorKind::InvalidArgument, Some(name)), "{e}");
    assert!(e.message().contains("has 2 shards in Redis and this handle was opened with 4"), "{e}");
}

/// `/dead/respawn` and a bulk respawn take the core's expiry choice: `expires_in_ms` (fresh,
/// from the respawn), `clear_expiry`, or neither (each keeps its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn respawn_keeps_clears_or_renews_the_expiry() {
    let s = common::start().await;
    let q = "/v1/queues/exp";
    for id in ["keep", "clear", "fresh", "bulk"] {
        let m = json!({"body": id, "id": id, "max_attempts": 1, "expires_in_ms": 3_600_000});
        assert_eq!(call(&s, "POST", &format!("{q}/messages"), Some(m)).await.0, 201);
    }
    let mut dead = Vec::new();
    while dead.len() < 4 {
        let (_, v) = call(&s, "POST", &format!("{q}/fetch"), Some(json!({"max": 4, "wait_ms": 5000}))).await;
        dead.extend(v["messages"].as_array().unwrap().iter().cloned());
    }
    for d in &dead {
        let path = format!("{q}/messages/{}/nack", d["id"].as_str().unwrap());
        assert_eq!(call(&s, "POST", &path, Some(json!({"token": d["token"]}))).await.1, json!({"dead": true}));
    }
    let expiry = |id: &'static str| {
        let s = &s;
        async move { call(s, "GET", &format!("{q}/messages/{id}"), None).await.1["expires_at_ms"].clone() }
    };
    let own = expiry("keep").await;
    assert!(own.is_i64(), "{own}");
    let now_ms = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let before = now_ms();
    for (path, body, answer) in [
        ("dead/respawn", json!({"ids": ["keep"]}), json!({"count": 1})),
        ("dead/respawn", json!({"ids": ["clear"], "clear_expiry": true}), json!({"count": 1})),
        ("dead/respawn", json!({"ids": ["fresh"], "expires_in_ms": 60_000}), json!({"count": 1})),
        (
            "bulk",
            json!({"action": "respawn", "ids": ["bulk"], "expires_in_ms": 120_000}),
            json!({"matched": 1, "done": 1, "scanned": 0}),
        ),
    ] {
        assert_eq!(call(&s, "POST", &format!("{q}/{path}"), Some(body.clone())).await, (200, answer), "{body}");
    }
    let after = now_ms();
    assert_eq!(expiry("keep").await, own);
    assert_eq!(expiry("clear").await, Value::Null);
    for (id, d) in [("fresh", 60_000), ("bulk", 120_000)] {
        // Counted from the respawn by the Redis clock, which is this machine's: within a second.
        let at = expiry(id).await.as_i64().unwrap();
        assert!(at >= before + d - 1000 && at <= after + d + 1000, "{id}: {at} not {d} ms after {before}..{after}");
    }

    // Bad input: the field and the limit, with the core's code.
    for (path, body, starts) in [
        ("dead/respawn", json!({"all": true, "expires_in_ms": 0}), "expires_in_ms: must be after the due time"),
        ("dead/respawn", json!({"all": true, "expires_in_ms": 1u64 << 50}), "expires_in_ms: "),
        ("dead/respawn", json!({"all": true, "expires_in_ms": 5, "clear_expiry": true}), "expires_in_ms/clear_expiry"),
        ("dead/respawn", json!({"all": true, "expires_in_ms": "soon"}), "expires_in_ms: invalid type"),
        (
            "bulk",
            json!({"action": "cancel", "ids": ["x"], "clear_expiry": true}),
            "expires_in_ms/clear_expiry: only respawn",
        ),
    ] {
        let (st, v) = call(&s, "POST", &format!("{q}/{path}"), Some(body.clone())).await;
        assert_eq!((st, v["error"]["code"].as_str()), (400, Some("ERR_REDELAY_INVALID_ARGUMENT")), "{body}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().starts_with(starts), "{body}: {v}");
    }
}

/// The Redis clock, in ms since the epoch, read with a raw connection.
async fn redis_ms() -> i64 {
    let mut c = redis::Client::open(common::url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let (s, us): (i64, i64) = redis::cmd("TIME").query_async(&mut c).await.unwrap();
    s * 1000 + us / 1000
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_upcoming_and_overview_default_to_the_redis_clock() {
    let s = common::start().await;
    let q = "/v1/queues/app:clock";
    assert_eq!(call(&s, "POST", &format!("{q}/messages"), Some(json!({"body": "x", "delay_ms": 90_000}))).await.0, 201);
    let before = redis_ms().await;
    let (st, h) = call(&s, "GET", &format!("{q}/history"), None).await;
    let (st2, u) = call(&s, "GET", &format!("{q}/upcoming"), None).await;
    let after = redis_ms().await;
    assert_eq!((st, st2), (200, 200), "{h} {u}");
    // By minute, until now: the last point is the minute holding the Redis time, the first an
    // hour before it.
    let pts = h["points"].as_array().unwrap();
    let (first, last) = (pts[0]["at_ms"].as_i64().unwrap(), pts.last().unwrap()["at_ms"].as_i64().unwrap());
    assert!(last > before - 60_000 - 1000 && last <= after, "last point {last}, Redis {before}..{after}");
    assert_eq!(last - first, 3_600_000, "{} points", pts.len());
    // From now: the first bucket starts at the Redis time; the message falls due in the second.
    let b = u["buckets"].as_array().unwrap();
    let from = b[0]["at_ms"].as_i64().unwrap();
    assert!(from >= before - 1000 && from <= after + 1000, "first bucket {from}, Redis {before}..{after}");
    assert_eq!((b.len(), b[1]["count"].as_u64()), (60, Some(1)), "{u}");
    let (st, v) = call(&s, "GET", "/v1/overview", None).await;
    assert_eq!((st, v["queues"][0]["queue"].as_str()), (200, Some("app:clock")), "{v}");
    assert_eq!(v["queues"][0]["last_hour"]["published"].as_u64(), Some(1), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nack_takes_retry_in_ms_or_its_old_name_delay_ms_not_both() {
    let s = common::start().await;
    let q = "/v1/queues/app:nacks";
    let m = json!({"body": "x", "id": "n1", "max_attempts": 10, "backoff_base_ms": 1, "backoff_max_ms": 1});
    assert_eq!(call(&s, "POST", &format!("{q}/messages"), Some(m)).await.0, 201);
    let lease = || async {
        let (_, v) = call(&s, "POST", &format!("{q}/fetch"), Some(json!({"wait_ms": 10000}))).await;
        v["messages"][0]["token"].as_str().unwrap().to_string()
    };
    // Each name is honoured (the backoff alone would be 1 ms), fractions too; then due now again.
    for field in ["retry_in_ms", "delay_ms"] {
        let token = lease().await;
        let before = redis_ms().await;
        let body = json!({"token": token, field: 60_000.5, "reason": field});
        let (st, v) = call(&s, "POST", &format!("{q}/messages/n1/nack"), Some(body)).await;
        assert_eq!((st, v), (200, json!({"dead": false})), "{field}");
        let (_, m) = call(&s, "GET", &format!("{q}/messages/n1"), None).await;
        let due = m["due_at_ms"].as_i64().unwrap();
        assert!(due >= before + 60_000 && due <= redis_ms().await + 60_001, "{field}: due {due}, nacked {before}");
        assert_eq!(m["last_error"].as_str(), Some(field));
        let (st, _) = call(&s, "POST", &format!("{q}/messages/n1/reschedule"), Some(json!({"delay_ms": 0}))).await;
        assert_eq!(st, 200);
    }
    // Both: refused, naming both, and the lease is still held.
    let token = lease().await;
    let both = json!({"token": token, "retry_in_ms": 10, "delay_ms": 10});
    let (st, v) = call(&s, "POST", &format!("{q}/messages/n1/nack"), Some(both)).await;
    assert_eq!((st, v["error"]["code"].as_str()), (400, Some("ERR_REDELAY_INVALID_ARGUMENT")), "{v}");
    assert!(v["error"]["message"].as_str().unwrap().starts_with("retry_in_ms/delay_ms: "), "{v}");
    let (st, v) =
        call(&s, "POST", &format!("{q}/messages/n1/nack"), Some(json!({"token": token, "retry_in_ms": -1}))).await;
    assert_eq!(st, 400);
    assert!(v["error"]["message"].as_str().unwrap().starts_with("retry_in_ms: "), "{v}");
    let (st, v) = call(&s, "POST", &format!("{q}/messages/n1/ack"), Some(json!({"token": token}))).await;
    assert_eq!((st, v), (200, json!({"acked": true})));
}

/// Ids of one state of a queue, by the list route.
async fn ids_in(s: &Srv, q: &str, state: &str) -> Vec<String> {
    let (st, v) = call(s, "GET", &format!("{q}/messages?state={state}&limit=100"), None).await;
    assert_eq!(st, 200, "{v}");
    v["items"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_removes_the_queue_in_every_state_for_a_token_that_may_write() {
    let s = common::start().await;
    let q = "/v1/queues/app:gone";
    let msgs = format!("{q}/messages");
    let publish = |m: Value| call(&s, "POST", &msgs, Some(m));
    // One message in each state: dead, leased, ready, scheduled; and the queue paused.
    assert_eq!(publish(json!({"body": "d", "id": "d", "max_attempts": 1})).await.0, 201);
    let (_, v) = call(&s, "POST", &format!("{q}/fetch"), Some(json!({"wait_ms": 5000}))).await;
    let d = &v["messages"][0];
    let nack = call(&s, "POST", &format!("{q}/messages/d/nack"), Some(json!({"token": d["token"]}))).await;
    assert_eq!(nack.1, json!({"dead": true}));
    assert_eq!(publish(json!({"body": "l", "id": "l"})).await.0, 201);
    let (_, v) = call(&s, "POST", &format!("{q}/fetch"), Some(json!({"wait_ms": 5000, "ttr_ms": 60000}))).await;
    let lease = v["messages"][0]["token"].clone();
    assert_eq!(v["messages"][0]["id"], "l", "{v}");
    assert_eq!(publish(json!({"body": "r", "id": "r"})).await.0, 201);
    assert_eq!(publish(json!({"body": "s", "id": "s", "delay_ms": 600_000})).await.0, 201);
    assert_eq!(call(&s, "POST", &format!("{q}/pause"), None).await.1, json!({"changed": true}));
    assert_eq!(call(&s, "POST", "/v1/queues/app:kept/messages", Some(json!({"body": "k", "id": "k"}))).await.0, 201);
    let (_, v) = call(&s, "GET", &format!("{q}/stats"), None).await;
    let counts = |v: &Value| ["scheduled", "ready", "leased", "dead"].map(|k| v[k].as_u64().unwrap());
    assert_eq!(counts(&v), [1, 1, 1, 1], "{v}");

    // Refused to a read-only token and to another namespace's: nothing is deleted.
    let (ro, other, rw) = (s.token("app", true).await, s.token("other", false).await, s.token("app", false).await);
    for t in [&ro, &other] {
        let (st, v) = call_as(&s, t, "DELETE", q, None).await;
        assert_eq!((st, v["error"]["code"].as_str()), (403, Some("ERR_REDELAY_FORBIDDEN")), "{v}");
    }
    assert_eq!(counts(&call(&s, "GET", &format!("{q}/stats"), None).await.1), [1, 1, 1, 1]);

    // The namespace's token may: every state is gone, the flags and counters too.
    let (st, v) = call_as(&s, &rw, "DELETE", q, None).await;
    assert_eq!((st, v), (200, json!({"destroyed": true})));
    let (_, v) = call(&s, "GET", &format!("{q}/stats"), None).await;
    assert_eq!((counts(&v), v["total"].as_u64(), v["paused"].as_bool()), ([0; 4], Some(0), Some(false)), "{v}");
    for state in ["scheduled", "ready", "leased", "dead"] {
        assert!(ids_in(&s, q, state).await.is_empty(), "{state}");
    }
    for id in ["d", "l", "r", "s"] {
        let (st, v) = call(&s, "GET", &format!("{q}/messages/{id}"), None).await;
        assert_eq!((st, v["error"]["code"].as_str()), (404, Some("ERR_REDELAY_NOT_FOUND")), "{id}: {v}");
    }
    let (st, _) = call(&s, "POST", &format!("{q}/messages/l/ack"), Some(json!({"token": lease}))).await;
    assert_eq!(st, 409, "the lease went with the queue");
    assert_eq!(call(&s, "GET", &format!("{q}/history/totals"), None).await.1["published"].as_u64(), Some(0));
    assert_eq!(call(&s, "GET", "/v1/queues", None).await.1, json!({"queues": ["app:kept"]}));
    assert_eq!(ids_in(&s, "/v1/queues/app:kept", "ready").await, vec!["k"]);
    // Again: nothing to destroy, same answer.
    assert_eq!(call(&s, "DELETE", q, None).await, (200, json!({"destroyed": true})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_takes_a_sharded_queue_with_its_shard_count() {
    let s = common::start().await;
    let sharded = s.client.queue_with("app:sh", redelay::QueueOptions::shards(4)).unwrap();
    let msgs = (0..8).map(|i| redelay::Message::new(b"x".to_vec()).id(format!("s{i}"))).collect();
    sharded.publish_batch(msgs).await.unwrap();
    let q = "/v1/queues/app:sh";
    // The server opens it (and keeps the handle) with its stored count.
    assert_eq!(call(&s, "GET", &format!("{q}/stats"), None).await.1["total"].as_u64(), Some(8));
    assert_eq!(call(&s, "DELETE", q, None).await, (200, json!({"destroyed": true})));
    assert_eq!(sharded.stats().await.unwrap().total, 0);
    assert_eq!(s.client.queue_stored("app:sh").await.unwrap().shards(), 1, "the shard count went too");
    // The next request opens it afresh: a plain queue now.
    assert_eq!(call(&s, "POST", &format!("{q}/messages"), Some(json!({"body": "y", "id": "p"}))).await.0, 201);
    assert_eq!(s.client.queue("app:sh").unwrap().peek("p").await.unwrap().unwrap().body, b"y");
    assert_eq!(call(&s, "GET", "/v1/queues", None).await.1, json!({"queues": ["app:sh"]}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_counters_switch_off_and_on() {
    let s = common::start().await;
    let q = "/v1/queues/app:hist";
    let published = || async { call(&s, "GET", &format!("{q}/history/totals"), None).await.1["published"].as_u64() };
    let (msgs, hist) = (format!("{q}/messages"), format!("{q}/history"));
    let publish = || call(&s, "POST", &msgs, Some(json!({"body": "x"})));
    let switch = |on: bool| call(&s, "PUT", &hist, Some(json!({ "on": on })));
    assert_eq!(publish().await.0, 201);
    assert_eq!(published().await, Some(1));

    // Off: a publish is not counted; switching off again changes nothing.
    assert_eq!(switch(false).await, (200, json!({"changed": true})));
    assert_eq!(switch(false).await, (200, json!({"changed": false})));
    assert_eq!(publish().await.0, 201);
    assert_eq!(published().await, Some(1), "counters are off");
    assert_eq!(call(&s, "GET", &format!("{q}/stats"), None).await.1["ready"].as_u64(), Some(2));
    // The GET on the same path still answers the history.
    let (st, v) = call(&s, "GET", &format!("{q}/history"), None).await;
    assert_eq!((st, v["points"].as_array().map(Vec::len)), (200, Some(61)), "{v}");

    // On again: changed, then not; publishes count again.
    assert_eq!(switch(true).await, (200, json!({"changed": true})));
    assert_eq!(switch(true).await, (200, json!({"changed": false})));
    assert_eq!(publish().await.0, 201);
    assert_eq!(published().await, Some(2));

    // A body without a boolean `on`: 400 naming it, in the gateway's error shape.
    let raw = |body: &'static str| {
        let r = s.http.put(s.url(&format!("{q}/history"))).bearer_auth(ADMIN);
        async move { json(r.header("content-type", "application/json").body(body).send().await.unwrap()).await }
    };
    for (body, starts) in [
        ("", "on: required, true or false"),
        ("{}", "on: required, true or false"),
        (r#"{"on": null}"#, "on: required, true or false"),
        (r#"{"on": "yes"}"#, "on: invalid type: string \"yes\", expected a boolean"),
        (r#"{"on": 1}"#, "on: invalid type"),
        (r#"{"on": true, "off": true}"#, "off: unknown field `off`, expected `on`"),
        ("true", "on: required, true or false (body: expected a JSON object, got a boolean)"),
        ("{on}", "on: required, true or false (body: not JSON"),
    ] {
        let (st, v) = raw(body).await;
        assert_eq!((st, v["error"]["code"].as_str()), (400, Some("ERR_REDELAY_INVALID_ARGUMENT")), "{body}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().starts_with(starts), "{body}: {v}");
    }
    assert_eq!(published().await, Some(2));

    // A read-only token may read the history, not switch it.
    let ro = s.token("app", true).await;
    let (st, v) = call_as(&s, &ro, "PUT", &format!("{q}/history"), Some(json!({"on": false}))).await;
    assert_eq!((st, v["error"]["code"].as_str()), (403, Some("ERR_REDELAY_FORBIDDEN")), "{v}");
    assert_eq!(call_as(&s, &ro, "GET", &format!("{q}/history/totals"), None).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tokens_creation_time_is_the_redis_clock() {
    let s = common::start().await;
    let before = redis_ms().await;
    let token = s.token("app", false).await;
    let after = redis_ms().await;
    let info = s.st.tokens.lookup(&token).await.unwrap().unwrap();
    assert!(
        info.created_at_ms >= before - 2000 && info.created_at_ms <= after + 2000,
        "created_at_ms {} not within Redis TIME {before}..{after}",
        info.created_at_ms
    );
    // The admin route's tokens too.
    let r = s.http.post(format!("{}/token/app?description=d", s.admin)).bearer_auth(ADMIN).send().await.unwrap();
    let (st, v) = json(r).await;
    assert_eq!(st, 201, "{v}");
    let info = s.st.tokens.lookup(v["token"].as_str().unwrap()).await.unwrap().unwrap();
    let now = redis_ms().await;
    assert!(info.created_at_ms >= before - 2000 && info.created_at_ms <= now + 2000, "{}", info.created_at_ms);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_times_out_of_range_are_a_400_naming_the_field() {
    let s = common::start().await;
    let q = "/v1/queues/app:range";
    assert_eq!(call(&s, "POST", &format!("{q}/messages"), Some(json!({"body": "x"}))).await.0, 201);
    let range = "must be 0 (the Unix epoch) to 3650 days from now, in ms since the epoch; got";
    for (query, field, got) in [
        // The default `since` (an hour before `until`) would overflow.
        ("history?until_ms=-9223372036854775808", "until_ms", "-9223372036854775808"),
        ("history?until_ms=9223372036854775807", "until_ms", "9223372036854775807"),
        ("history?since_ms=-1&until_ms=0", "since_ms", "-1"),
        ("history?since_ms=-9223372036854775808&until_ms=9223372036854775807", "since_ms", "-9223372036854775808"),
        ("history?since_ms=9223372036854775807", "since_ms", "9223372036854775807"),
        // The upcoming buckets' start alike.
        ("upcoming?from_ms=-9223372036854775808", "from_ms", "-9223372036854775808"),
        ("upcoming?from_ms=9223372036854775807", "from_ms", "9223372036854775807"),
    ] {
        let (st, v) = call(&s, "GET", &format!("{q}/{query}"), None).await;
        assert_eq!((st, v["error"]["code"].as_str()), (400, Some("ERR_REDELAY_INVALID_ARGUMENT")), "{query}: {v}");
        assert_eq!(v["error"]["message"].as_str(), Some(format!("{field}: {range} {got}").as_str()), "{query}");
    }
    // The bounds themselves are fine: the epoch (the default `since` stops there), and a day
    // by hour.
    let (st, v) = call(&s, "GET", &format!("{q}/history?until_ms=0"), None).await;
    assert_eq!((st, v["points"].as_array().map(Vec::len)), (200, Some(1)), "{v}");
    let (st, v) = call(&s, "GET", &format!("{q}/history?since_ms=0&until_ms=86400000&step=hour"), None).await;
    assert_eq!((st, v["points"].as_array().map(Vec::len)), (200, Some(25)), "{v}");
    // By UTC day: 90 days are 91 points, each at a midnight; a step the core has not is named.
    let (st, v) =
        call(&s, "GET", &format!("{q}/history?since_ms=0&until_ms={}&step=day", 90 * 86_400_000_i64), None).await;
    let at: Vec<i64> = v["points"].as_array().unwrap().iter().map(|p| p["at_ms"].as_i64().unwrap()).collect();
    assert_eq!((st, at.len()), (200, 91), "{v}");
    assert!(at.iter().enumerate().all(|(i, &t)| t == i as i64 * 86_400_000), "{at:?}");
    let (st, v) = call(&s, "GET", &format!("{q}/history?step=week"), None).await;
    assert_eq!((st, v["error"]["message"].as_str()), (400, Some("step: minute, hour or day, got \"week\"")), "{v}");
    // Inside the range, the core's own rules, with the JSON's names.
    let (st, v) = call(&s, "GET", &format!("{q}/history?since_ms=7200000&until_ms=0"), None).await;
    assert_eq!((st, v["error"]["message"].as_str()), (400, Some("until_ms: must not be before since")), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_settle_refuses_the_fields_of_the_others() {
    let s = common::start().await;
    let q = "/v1/queues/app:settle";
    assert_eq!(call(&s, "POST", &format!("{q}/messages"), Some(json!({"body": "x", "id": "m"}))).await.0, 201);
    let (_, v) = call(&s, "POST", &format!("{q}/fetch"), Some(json!({"wait_ms": 5000}))).await;
    let token = v["messages"][0]["token"].clone();
    assert!(token.is_string(), "{v}");
    for (op, field, value, want) in [
        ("release", "retry_in_ms", json!(60000), "retry_in_ms: unknown field `retry_in_ms`, expected `token`"),
        ("release", "reason", json!("r"), "reason: unknown field `reason`, expected `token`"),
        ("release", "ttr_ms", json!(1000), "ttr_ms: unknown field `ttr_ms`, expected `token`"),
        ("ack", "reason", json!("r"), "reason: unknown field `reason`, expected `token`"),
        ("ack", "delay_ms", json!(5), "delay_ms: unknown field `delay_ms`, expected `token`"),
        (
            "nack",
            "ttr_ms",
            json!(1000),
            "ttr_ms: unknown field `ttr_ms`, expected one of `token`, `retry_in_ms`, `delay_ms`, `reason`",
        ),
        ("extend", "reason", json!("r"), "reason: unknown field `reason`, expected `token` or `ttr_ms`"),
        ("extend", "retry_in_ms", json!(5), "retry_in_ms: unknown field `retry_in_ms`, expected `token` or `ttr_ms`"),
    ] {
        let mut body = json!({"token": token, "ttr_ms": 1000});
        if op != "extend" {
            body.as_object_mut().unwrap().remove("ttr_ms");
        }
        body[field] = value;
        let (st, v) = call(&s, "POST", &format!("{q}/messages/m/{op}"), Some(body)).await;
        assert_eq!((st, v["error"]["code"].as_str()), (400, Some("ERR_REDELAY_INVALID_ARGUMENT")), "{op} {field}: {v}");
        assert_eq!(v["error"]["message"].as_str(), Some(want), "{op} {field}");
    }
    // Nothing was done: the lease is still held, and its own fields work.
    let (_, m) = call(&s, "GET", &format!("{q}/messages/m"), None).await;
    assert_eq!((m["state"].as_str(), m["last_error"].as_str()), (Some("leased"), None), "{m}");
    let body = json!({"token": token, "ttr_ms": 30000});
    assert_eq!(call(&s, "POST", &format!("{q}/messages/m/extend"), Some(body)).await, (200, json!({"extended": true})));
    let body = json!({"token": token});
    assert_eq!(
        call(&s, "POST", &format!("{q}/messages/m/release"), Some(body)).await,
        (200, json!({"released": true}))
    );
}

/// The query parameters `openapi.json` documents for each route, by (METHOD, path).
fn documented_query_params(doc: &Value) -> Vec<((String, String), BTreeSet<String>)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (m, op) in item.as_object().unwrap().iter().filter(|(k, _)| *k != "parameters") {
            let params = op["parameters"].as_array().cloned().unwrap_or_default();
            let query = params.iter().filter(|p| p["in"] == "query").map(|p| p["name"].as_str().unwrap().to_string());
            out.push(((m.to_uppercase(), path.clone()), query.collect()));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_refuses_a_query_parameter_it_does_not_read() {
    let s = common::start().await;
    let (_, doc) = call(&s, "GET", "/v1/openapi.json", None).await;
    let routes = documented_query_params(&doc);
    // The router's table is the document's.
    for ((m, path), documented) in &routes {
        let reads: BTreeSet<String> =
            redelay_server::routes_v1::query_params(m, path).iter().map(|p| p.to_string()).collect();
        assert_eq!(&reads, documented, "{m} {path}");
    }
    for (m, path, _) in redelay_server::routes_v1::QUERY_PARAMS {
        assert!(routes.iter().any(|((dm, dp), _)| dm == m && dp == path), "{m} {path} is not a route");
    }

    let q = "/v1/queues/app:strict";
    assert_eq!(call(&s, "POST", &format!("{q}/messages"), Some(json!({"body": "x", "id": "k"}))).await.0, 201);
    let hook = json!({"url": "http://127.0.0.1:9/hook"});
    // Every route, each with a body it would take: the parameter is refused before anything
    // is done (the queue is not destroyed, paused, fetched from ...).
    for ((m, path), reads) in &routes {
        let p = path.replace("{queue}", "app:strict").replace("{id}", "k");
        let body = match (m.as_str(), path.rsplit('/').next().unwrap()) {
            ("POST", "messages") => Some(json!({"body": "y"})),
            ("POST", "fetch") if path == "/v1/fetch" => Some(json!({"queues": ["app:strict"]})),
            ("PUT", "webhook") => Some(hook.clone()),
            ("PUT", "history") => Some(json!({"on": false})),
            ("POST", "bulk") => Some(json!({"action": "cancel", "ids": ["k"]})),
            _ => None,
        };
        let (st, v) = call(&s, m, &format!("{p}?token={ADMIN}&x=1"), body).await;
        let expected = if reads.is_empty() {
            "this route reads none".to_string()
        } else {
            let table = redelay_server::routes_v1::query_params(m, path);
            format!("expected {}", table.join(", "))
        };
        let want = format!("x: unknown query parameter; {expected}");
        assert_eq!((st, v["error"]["message"].as_str()), (400, Some(want.as_str())), "{m} {path}: {v}");
    }
    let (_, v) = call(&s, "GET", &format!("{q}/stats"), None).await;
    assert_eq!(
        (v["ready"].as_u64(), v["total"].as_u64(), v["paused"].as_bool()),
        (Some(1), Some(1), Some(false)),
        "{v}"
    );
    assert_eq!(call(&s, "GET", &format!("{q}/history/totals"), None).await.1["published"].as_u64(), Some(1));
    assert_eq!(call(&s, "GET", &format!("{q}/webhook"), None).await.0, 404);
    // Of several unknown ones, the first by name; `token` is everyone's.
    let (st, v) = call(&s, "GET", &format!("{q}/stats?zz=1&aa=2&token={ADMIN}"), None).await;
    assert_eq!((st, v["error"]["message"].as_str()), (400, Some("aa: unknown query parameter; this route reads none")));
    let (st, v) = call(&s, "POST", &format!("{q}/fetch?max=5"), None).await;
    assert_eq!(
        (st, v["error"]["message"].as_str()),
        (400, Some("max: unknown query parameter; this route reads none"))
    );
    assert_eq!(call(&s, "GET", &format!("{q}/stats?token={ADMIN}"), None).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_resume_verify_and_deletes_refuse_a_body() {
    let s = common::start().await;
    let q = "/v1/queues/app:nobody";
    assert_eq!(call(&s, "POST", &format!("{q}/messages"), Some(json!({"body": "x", "id": "k"}))).await.0, 201);
    let raw = |m: &str, path: String, body: &'static str| {
        let m = reqwest::Method::from_bytes(m.as_bytes()).unwrap();
        let r = s.http.request(m, s.url(&path)).bearer_auth(ADMIN).header("content-type", "application/json");
        async move { json(r.body(body).send().await.unwrap()).await }
    };
    for (m, path) in [
        ("POST", format!("{q}/pause")),
        ("POST", format!("{q}/resume")),
        ("POST", format!("{q}/verify")),
        ("DELETE", format!("{q}/messages/k")),
        ("DELETE", format!("{q}/webhook")),
        ("DELETE", q.to_string()),
    ] {
        for (body, want) in [
            (r#"{"paused": true}"#, "paused: unknown field `paused`, this route takes no body"),
            ("[1]", "body: this route takes no body (send none, or {})"),
            ("true", "body: this route takes no body (send none, or {})"),
            ("{x", "body: not JSON"),
        ] {
            let (st, v) = raw(m, path.clone(), body).await;
            assert_eq!(
                (st, v["error"]["code"].as_str()),
                (400, Some("ERR_REDELAY_INVALID_ARGUMENT")),
                "{m} {path} {body}: {v}"
            );
            assert!(v["error"]["message"].as_str().unwrap().starts_with(want), "{m} {path} {body}: {v}");
        }
    }
    // Nothing was done.
    let (_, v) = call(&s, "GET", &format!("{q}/stats"), None).await;
    assert_eq!((v["total"].as_u64(), v["paused"].as_bool()), (Some(1), Some(false)), "{v}");
    // No body, or an empty object, is fine.
    assert_eq!(raw("POST", format!("{q}/pause"), "{}").await, (200, json!({"changed": true})));
    assert_eq!(raw("POST", format!("{q}/resume"), " ").await, (200, json!({"changed": true})));
    assert_eq!(raw("POST", format!("{q}/verify"), "{ }").await.1["ok"], true);
    assert_eq!(raw("DELETE", format!("{q}/messages/k"), "{}").await, (200, json!({"cancelled": true})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn range_errors_name_the_json_field() {
    let s = common::start().await;
    let q = "/v1/queues/app:names";
    let m = json!({"body": "x", "id": "m", "max_attempts": 5});
    assert_eq!(call(&s, "POST", &format!("{q}/messages"), Some(m)).await.0, 201);
    let (_, v) = call(&s, "POST", &format!("{q}/fetch"), Some(json!({"wait_ms": 5000}))).await;
    let token = v["messages"][0]["token"].clone();
    let big = 1u64 << 50;
    let cases = [
        ("POST", "messages", json!({"body": "x", "ttr_ms": 50}), "ttr_ms: must be 100 ms to 24 h, got 50 ms"),
        ("POST", "messages", json!({"body": "x", "delay_ms": big}), "delay_ms: 1125899906842624 ms is more than"),
        ("POST", "messages", json!({"body": "x", "expires_in_ms": big}), "expires_in_ms: "),
        ("POST", "messages", json!({"body": "x", "at_ms": big}), "at_ms: more than 3650 days in the future"),
        ("POST", "messages", json!({"body": "x", "delay_ms": 5, "at_ms": 5}), "delay_ms/at_ms: give one of them"),
        ("POST", "messages", json!({"body": "x", "backoff_base_ms": 0}), "backoff_base_ms: must be 1 ms to 7 days"),
        (
            "POST",
            "messages",
            json!({"body": "x", "backoff_base_ms": 5, "backoff_max_ms": 1}),
            "backoff_base_ms/backoff_max_ms: base (5 ms) must not be above max (1 ms)",
        ),
        (
            "POST",
            "messages/batch",
            json!({"messages": [{"body": "x"}, {"body": "y", "ttr_ms": 1}]}),
            "message 1: ttr_ms: must be 100 ms to 24 h",
        ),
        ("POST", "fetch", json!({"wait_ms": big}), "wait_ms: "),
        ("POST", "fetch", json!({"ttr_ms": 1}), "ttr_ms: must be 100 ms to 24 h, got 1 ms"),
        ("POST", "messages/m/nack", json!({"token": token, "retry_in_ms": big}), "retry_in_ms: "),
        ("POST", "messages/m/extend", json!({"token": token, "ttr_ms": 1}), "ttr_ms: must be 100 ms to 24 h"),
        ("POST", "messages/m/reschedule", json!({"at_ms": big}), "at_ms: more than 3650 days in the future"),
        ("POST", "messages/m/reschedule", json!({}), "delay_ms/at_ms: "),
        ("POST", "dead/respawn", json!({"all": true, "expires_in_ms": 0}), "expires_in_ms: must be after the due time"),
        ("GET", "upcoming?width_ms=0", Value::Null, "width_ms: must be 1 ms to 3650 days, got 0 ms"),
    ];
    for (m, path, body, starts) in cases {
        let (st, v) = call(&s, m, &format!("{q}/{path}"), (!body.is_null()).then_some(body.clone())).await;
        assert_eq!(
            (st, v["error"]["code"].as_str()),
            (400, Some("ERR_REDELAY_INVALID_ARGUMENT")),
            "{path} {body}: {v}"
        );
        assert!(v["error"]["message"].as_str().unwrap().starts_with(starts), "{path} {body}: {v}");
    }
    let body = json!({"token": token});
    assert_eq!(call(&s, "POST", &format!("{q}/messages/m/ack"), Some(body)).await, (200, json!({"acked": true})));
}

/// A lease whose deadline passed on the Redis clock (its consumer gone) is `lapsed` within
/// `leased` in `/stats` and the overview, until a fetch takes it back; `openapi.json`'s `Stats`
/// lists exactly the fields a stats answer has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_and_the_overview_count_lapsed_leases() {
    let s = common::start().await;
    let q = "/v1/queues/app:lapsed";
    assert_eq!(call(&s, "POST", &format!("{q}/messages"), Some(json!({"body": "dies"}))).await.0, 201);
    let (_, v) = call(&s, "POST", &format!("{q}/fetch"), Some(json!({"ttr_ms": 100}))).await;
    let deadline = v["messages"][0]["lease_deadline_ms"].as_i64().unwrap();
    let mut stats = call(&s, "GET", &format!("{q}/stats"), None).await.1;
    while stats["now_ms"].as_i64().unwrap() <= deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        stats = call(&s, "GET", &format!("{q}/stats"), None).await.1;
    }
    let counts = |v: &Value| ["total", "leased", "lapsed"].map(|k| v[k].as_u64().unwrap());
    assert_eq!(counts(&stats), [1, 1, 1], "{stats}");
    let (_, v) = call(&s, "GET", "/v1/overview?contains=lapsed", None).await;
    assert_eq!(counts(&v["queues"][0]["stats"]), [1, 1, 1], "{v}");
    let (_, doc) = call(&s, "GET", "/v1/openapi.json", None).await;
    let documented: BTreeSet<&String> =
        doc["components"]["schemas"]["Stats"]["properties"].as_object().unwrap().keys().collect();
    assert_eq!(documented, stats.as_object().unwrap().keys().collect(), "openapi.json's Stats and a stats answer");
    let (_, v) = call(&s, "POST", &format!("{q}/fetch"), Some(json!({"ttr_ms": 60000}))).await;
    assert_eq!(v["messages"][0]["attempt"], 2, "{v}");
    let (_, v) = call(&s, "GET", &format!("{q}/stats"), None).await;
    assert_eq!(counts(&v), [1, 1, 0], "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_fails_in_the_middle_says_how_far_it_got() {
    let proxy = harness::FaultProxy::start(harness::port_of(&common::url())).await;
    let s = common::start_on(&proxy.url(), |_| {}).await;
    let qu = s.client.queue("app:stop").unwrap();
    let batch = (0..2500).map(|i| redelay::Message::new(b"x".to_vec()).id(format!("n{i}")).max_attempts(1));
    qu.publish_batch(batch.collect()).await.unwrap();
    while let Ok(got @ [_, ..]) = qu.fetch(1000, Duration::ZERO).await.as_deref() {
        for d in got {
            d.nack(None, "boom").await.unwrap();
        }
    }
    assert_eq!(qu.stats().await.unwrap().dead, 2500);
    let ids: Vec<String> = (0..2500).map(|i| format!("n{i}")).collect();
    // The run's call holding `cut` never reaches Redis: its connection drops.
    let run = |cut: &'static str, path: &'static str, body: Value| {
        proxy.drop_next_request_with(cut.as_bytes());
        let s = &s;
        async move {
            let (st, mut v) = call(s, "POST", &format!("/v1/queues/app:stop/{path}"), Some(body)).await;
            harness::reconnected(&s.client).await;
            assert_eq!((st, &v["error"]["code"]), (503, &json!("ERR_REDELAY_CONNECTION")), "{v}");
            v["error"].as_object_mut().unwrap().remove("so_far")
        }
    };
    let said = |so_far: &str| format!("; stopped: {so_far} so far, and that stays done");

    // n0..n999 respawned, then the second call is cut.
    let so_far = run("n1500", "dead/respawn", json!({ "ids": ids })).await;
    assert_eq!(so_far, Some(json!({ "count": 1000 })));
    // The first call finds no dead letter among n0..n999, the second purges n1000..n1999.
    let so_far = run("n2000", "bulk", json!({ "action": "purge", "ids": ids })).await;
    assert_eq!(so_far, Some(json!({ "matched": 2500, "done": 1000, "scanned": 0 })));
    // The message says the same; a step that did nothing counts as a step.
    proxy.drop_next_request_with(b"n2000");
    let (st, v) = call(&s, "POST", "/v1/queues/app:stop/dead/purge", Some(json!({ "ids": ids }))).await;
    harness::reconnected(&s.client).await;
    assert_eq!((st, &v["error"]["so_far"]), (503, &json!({ "count": 0 })), "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains(&said("purged 0")), "{v}");
    // A run that fails before any step ended says nothing more than any error: nothing was done.
    let so_far = run("n0", "dead/purge", json!({ "ids": ids })).await;
    assert_eq!(so_far, None);
    let stats = qu.stats().await.unwrap();
    assert_eq!((stats.ready, stats.dead), (1000, 500));
    harness::assert_verified(&qu).await;
}

/// The limits and defaults `openapi.json` (a static file) states are the ones the core and the
/// gateway enforce: a change of either that leaves the document behind fails here.
#[test]
fn the_openapi_document_states_the_limits_and_defaults_in_force() {
    use redelay::limits;
    use redelay_server::routes_v1 as v1;
    let doc: Value = serde_json::from_str(v1::OPENAPI).unwrap();
    let paths = &doc["paths"];
    let param = |path: &str, name: &str| {
        let op = &paths[path]["get"];
        let p = op["parameters"].as_array().unwrap().iter().find(|p| p["name"] == name);
        p.unwrap_or_else(|| panic!("{path}: no {name}"))["description"].as_str().unwrap().to_string()
    };
    let page = |max: usize, default: usize| format!("1 to {max} (default {default})");
    let q = "/v1/queues/{queue}";
    assert_eq!(param(&format!("{q}/messages"), "limit"), page(limits::MAX_FETCH, limits::DEFAULT_PAGE_LIMIT));
    assert_eq!(param(&format!("{q}/dead"), "limit"), page(limits::MAX_FETCH, limits::DEFAULT_DEAD_LETTER_LIMIT));
    assert_eq!(param("/v1/overview", "limit"), page(v1::MAX_OVERVIEW_PAGE, limits::DEFAULT_PAGE_LIMIT));
    let upcoming = format!("{q}/upcoming");
    assert_eq!(param(&upcoming, "buckets"), page(limits::MAX_UPCOMING_BUCKETS, v1::DEFAULT_UPCOMING_BUCKETS));
    assert_eq!(param(&upcoming, "width_ms"), format!("default {}", v1::DEFAULT_UPCOMING_WIDTH_MS));

    // Every time a query takes, within the bound of a message's due time; every queue named
    // in a path, within the bound of a queue name.
    let days = format!("0 to {} days from now", limits::MAX_DELAY.as_secs() / 86_400);
    let name = format!("Queue name (1 to {} bytes", limits::MAX_QUEUE_NAME_BYTES);
    let (mut times, mut names) = (0, 0);
    for (path, item) in paths.as_object().unwrap() {
        let path_params = item["parameters"].as_array().into_iter().flatten();
        let op_params = item.as_object().unwrap().values().filter_map(|op| op["parameters"].as_array()).flatten();
        for p in path_params.chain(op_params) {
            let text = p["description"].as_str().unwrap_or_default();
            if text.contains("days from now") {
                assert!(text.contains(&days), "{path} {}: {text}", p["name"]);
                times += 1;
            }
            if p["name"] == "queue" {
                assert!(text.starts_with(&name), "{path}: {text}");
                names += 1;
            }
        }
    }
    assert!(times >= 3 && names >= 20, "{times} times, {names} queue names");

    let schemas = &doc["components"]["schemas"];
    assert_eq!(schemas["BulkRequest"]["properties"]["ids"]["maxItems"], json!(limits::MAX_BULK_IDS));
    for schema in ["BulkRequest", "RespawnRequest"] {
        let expires = &schemas[schema]["properties"]["expires_in_ms"];
        assert_eq!(expires["maximum"], json!(limits::MAX_DELAY.as_millis() as u64), "{schema}");
    }

    let errors = &paths[&format!("{q}/dead/errors")]["get"];
    let summary = errors["summary"].as_str().unwrap();
    let grouped = v1::MAX_GROUPED.to_string();
    let grouped = format!("{},{}", &grouped[..grouped.len() - 3], &grouped[grouped.len() - 3..]);
    let bound = format!("the first {grouped} dead letters, and stops after {} MiB", v1::MAX_GROUPED_BYTES >> 20);
    assert!(summary.contains(&bound), "{summary}");
    let group = &errors["responses"]["200"]["content"]["application/json"]["schema"]["properties"]["groups"]["items"];
    assert_eq!(group["properties"]["sample_ids"]["maxItems"], json!(v1::SAMPLE_IDS));
}

/// hyper refuses a request target over 65,534 bytes itself (`MAX_URI_LEN`, a constant it has no
/// setting for), before any handler runs: `414` with an empty body, the one error without the
/// gateway's JSON (docs/server.md says so). One byte less reaches the gateway, which answers in
/// JSON. This pins the limit the docs state; if hyper ever lets the gateway answer, it fails.
/// (Over a plain socket: reqwest, on the same `http` crate, refuses to send such a URL.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_request_target_over_hypers_limit_gets_an_empty_414() {
    let s = common::start().await;
    let addr = s.base.trim_start_matches("http://").to_string();
    let get = |len: usize| {
        let addr = addr.clone();
        tokio::task::spawn_blocking(move || {
            use std::io::{Read, Write};
            let path = "/v1/queues?x=";
            let target = format!("{path}{}", "a".repeat(len - path.len()));
            let mut c = std::net::TcpStream::connect(addr).unwrap();
            write!(c, "GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
            let mut out = String::new();
            c.read_to_string(&mut out).unwrap();
            let (head, body) = out.split_once("\r\n\r\n").unwrap();
            (head.split(' ').nth(1).unwrap().to_string(), body.to_string())
        })
    };
    let (status, body) = get(65_534).await.unwrap();
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((status.as_str(), v["error"]["code"].as_str()), ("401", Some("ERR_REDELAY_UNAUTHORIZED")), "{v}");
    assert_eq!(get(65_535).await.unwrap(), ("414".to_string(), String::new()));
}
