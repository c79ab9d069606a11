//! Operations by name with wire-form arguments and results (`Queue::call`, `Delivery::call`,
//! `Client::call`), as the Node and Python bindings use them: every queue operation answers in
//! its wire form, bad arguments are refused naming the field, and unknown names are refused.
mod common;

use std::time::Duration;

use redelay::wire::to_json;
use redelay::{ErrorKind, Message};
use serde_json::{json, Value};

async fn call(q: &redelay::Queue, op: &str, args: Value) -> Value {
    to_json(&q.call(op, args).await.unwrap_or_else(|e| panic!("{op}: {e}")))
}

#[tokio::test]
async fn every_queue_operation_answers_in_its_wire_form() {
    let (c, q) = common::queue("call-ops").await;
    q.publish(Message::new(b"later".to_vec()).id("later").delay(Duration::from_secs(3600))).await.unwrap();
    q.publish(Message::new(b"now".to_vec()).id("now").header("k", "v")).await.unwrap();

    let stats = call(&q, "stats", Value::Null).await;
    assert_eq!((stats["total"].clone(), stats["scheduled"].clone()), (json!(2), json!(1)));
    assert!(stats["now_ms"].as_i64().unwrap() > 1_600_000_000_000, "{stats}");
    let info = call(&q, "peek", json!({"id": "now"})).await;
    assert_eq!((info["id"].clone(), info["state"].clone()), (json!("now"), json!("ready")));
    assert_eq!(info["body"], json!(b"now".to_vec()));
    assert_eq!(call(&q, "peek", json!({"id": "nope"})).await, Value::Null);

    let due = call(&q, "reschedule", json!({"id": "later", "delay_ms": 7_200_000})).await;
    assert!(due.as_i64().unwrap() > stats["now_ms"].as_i64().unwrap() + 7_000_000, "{due}");
    let page = call(&q, "list", json!({"state": "scheduled"})).await;
    assert_eq!((page["total"].clone(), page["items"][0]["id"].clone()), (json!(1), json!("later")));
    let found = call(&q, "search", json!({"search": {"header": ["k", "v"]}})).await;
    assert_eq!(found["items"][0]["id"], json!("now"));
    let from = stats["now_ms"].as_i64().unwrap() + 60_000; // after "now", before "later"
    let buckets = call(&q, "upcoming", json!({"from_ms": from, "width_ms": 3_600_000, "buckets": 3})).await;
    assert_eq!(buckets.as_array().unwrap().iter().map(|b| b["count"].as_u64().unwrap()).sum::<u64>(), 1);
    assert!(buckets[0]["at_ms"].is_i64(), "{buckets}");

    let e = q.fetch_wire(json!({"max": 1, "wait_ms": "soon"})).await.unwrap_err();
    assert!(e.message().starts_with("wait_ms: invalid type"), "{e}");
    let d = q.fetch_wire(json!({"max": 5, "ttr_ms": 2000})).await.unwrap().remove(0);
    assert_eq!(d.id(), "now");
    let lease = json!({"id": d.id(), "token": d.token()});
    assert_eq!(call(&q, "extend", json!({"id": d.id(), "token": d.token(), "ttr_ms": 5000})).await, Value::Null);
    assert_eq!(call(&q, "nack", json!({"id": d.id(), "token": d.token(), "reason": "no"})).await, json!(false));
    assert_eq!(q.call("ack", lease).await.unwrap_err().kind(), ErrorKind::LeaseLost);
    let d = q.fetch(1, Duration::ZERO).await.unwrap();
    assert!(d.is_empty(), "the nacked message waits for its backoff");

    assert_eq!(call(&q, "dead_letters", Value::Null).await, json!([]));
    assert_eq!(call(&q, "respawn", json!({"all": true})).await, json!(0));
    assert_eq!(call(&q, "purge_dead", json!({"oldest": 3})).await, json!(0));
    let report = call(&q, "bulk", json!({"action": "cancel", "ids": ["later", "nope"]})).await;
    assert_eq!((report["matched"].clone(), report["done"].clone()), (json!(2), json!(1)));
    assert_eq!(call(&q, "cancel", json!({"id": "later"})).await, json!(false));
    assert_eq!(call(&q, "pause", Value::Null).await, json!(true));
    assert_eq!(call(&q, "resume", Value::Null).await, json!(true));
    assert_eq!(call(&q, "set_history", json!({"on": true})).await, json!(false));
    assert!(call(&q, "history_totals", Value::Null).await["published"].as_u64().unwrap() >= 2);
    let since = stats["now_ms"].as_i64().unwrap() - 60_000;
    let points = call(&q, "history", json!({"since_ms": since, "until_ms": since + 120_000})).await;
    assert!(!points.as_array().unwrap().is_empty(), "{points}");
    // `until_ms` defaults to now: the last minute's point is there.
    let to_now = call(&q, "history", json!({"since_ms": since})).await;
    assert!(to_now.as_array().unwrap().len() >= 2, "{to_now}");
    assert_eq!(call(&q, "verify", Value::Null).await["problems"], json!([]));
    assert_eq!(call(&q, "destroy", Value::Null).await, Value::Null);
    assert_eq!(call(&q, "stats", Value::Null).await["total"], json!(0));

    assert_eq!(to_json(&c.call("ping").await.unwrap()), Value::Null);
    assert!(to_json(&c.call("queues").await.unwrap()).is_array());
    c.call("close").await.unwrap();
    assert_eq!(c.call("ping").await.unwrap_err().kind(), ErrorKind::Connection);
}

#[tokio::test]
async fn a_delivery_settles_by_name() {
    let (_c, q) = common::queue("call-delivery").await;
    q.publish(Message::new(b"x".to_vec())).await.unwrap();
    let d = q.fetch(1, Duration::ZERO).await.unwrap().remove(0);
    assert_eq!(to_json(&d.call("extend", json!({"ttr_ms": 4000})).await.unwrap()), Value::Null);
    // Another operation's field is refused before anything is sent (the lease still holds).
    let e = d.call("nack", json!({"delay_ms": 5})).await.unwrap_err();
    assert!(e.message().starts_with("delay_ms: unknown field `delay_ms`, expected one of `retry_in_ms`"), "{e}");
    assert!(!d.is_settled());
    // A retry delay is read by the one rule of every binding: a negative one is refused, by
    // its range, before anything is sent; a fraction of a ms is no type error.
    for ms in [json!(-2000), json!(-0.5), json!(315360000001_u64)] {
        let e = d.call("nack", json!({ "retry_in_ms": ms })).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().starts_with("retry_in: must be 0 to 3650 days, got "), "{e}");
        let e = q.call("nack", json!({"id": d.id(), "token": d.token(), "retry_in_ms": ms})).await.unwrap_err();
        assert!(e.message().starts_with("retry_in: must be 0 to 3650 days, got "), "{e}");
    }
    assert!(!d.is_settled());
    // Sent when called: the returned future, dropped unpolled, still acks.
    drop(d.call("ack", Value::Null));
    assert!(d.is_settled());
    assert_eq!(d.call("ack", Value::Null).await.unwrap_err().kind(), ErrorKind::LeaseLost);
    let t = std::time::Instant::now();
    while q.stats().await.unwrap().total > 0 {
        assert!(t.elapsed() < Duration::from_secs(10), "the dropped ack never applied");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let e = d.call("settle", Value::Null).await.unwrap_err();
    assert!(e.message().contains("no operation \"settle\""), "{e}");
}

#[tokio::test]
async fn bad_arguments_and_names_are_refused_naming_the_field() {
    let (c, q) = common::queue("call-bad").await;
    for (op, args, words) in [
        ("reschedule", json!({"id": "a", "delay_ms": 1, "at_ms": 1}), vec!["delay", "at"]),
        ("nack", json!({"id": "a", "token": "t", "retry_in_ms": -1}), vec!["retry_in", "0 to 3650 days"]),
        ("ack", json!({"id": "a", "tokn": "t"}), vec!["unknown field `tokn`"]),
        // A field of another operation is refused too, not read by no one.
        ("nack", json!({"id": "a", "token": "t", "delay_ms": 5}), vec!["delay_ms: unknown field", "`retry_in_ms`"]),
        ("release", json!({"id": "a", "token": "t", "reason": "x"}), vec!["reason: unknown field"]),
        ("list", json!({"state": "dead", "cursor": "x"}), vec!["cursor: unknown field", "`offset`"]),
        ("stats", json!({"id": "a"}), vec!["id: unknown field", "no fields"]),
        ("dead_letters", json!({"limit": 0}), vec!["limit", "1 to"]),
        ("list", json!({"state": "dead", "limit": 5000}), vec!["limit", "1 to"]),
        ("list", json!({}), vec!["state"]),
        ("search", json!({}), vec!["search"]),
        ("respawn", json!({"ids": ["a"], "all": true}), vec!["exactly one"]),
        ("bulk", json!({"ids": ["a"]}), vec!["action"]),
        ("history", json!({"since_ms": 0, "until_ms": 60_000, "step": "week"}), vec!["step", "unknown value `week`"]),
        ("history", json!({"until_ms": 60_000}), vec!["since_ms", "missing"]),
        ("history", json!({"since_ms": 32_503_680_000_000u64}), vec!["since: is in the future", "until, not given"]),
        ("reschedule", json!({"id": "a"}), vec!["delay/at", "needs a new due time"]),
        ("search", json!({"search": {"id_prefix": ""}}), vec!["search.id_prefix: give something"]),
        ("upcoming", json!({"buckets": 3}), vec!["width_ms", "missing"]),
        ("frobnicate", Value::Null, vec!["op", "no operation \"frobnicate\""]),
    ] {
        let e = q.call(op, args).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{op}: {e}");
        for w in words {
            assert!(e.message().contains(w), "{op}: {e:?} lacks {w:?}");
        }
    }
    assert_eq!(c.call("ack").await.unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[tokio::test]
async fn a_batch_decodes_each_message_and_names_the_one_at_fault() {
    let (_c, q) = common::queue("call-batch").await;
    let bodies = vec![b"a".to_vec(), b"b".to_vec()];
    let e = redelay::batch_from_wire(bodies.clone(), vec![json!({}), json!({"delay_ms": "soon"})]).unwrap_err();
    assert!(e.message().starts_with("message 1: delay_ms: invalid type"), "{e}");
    let e = redelay::batch_from_wire(bodies.clone(), vec![json!({"id": "x"}), json!({"ttr_ms": 1})]).unwrap_err();
    assert!(e.message().starts_with("message 1: ttr"), "{e}");
    let e = redelay::batch_from_wire(bodies.clone(), vec![json!({})]).unwrap_err();
    assert!(e.message().starts_with("messages: 2 bodies but 1 option objects"), "{e}");
    let msgs = redelay::batch_from_wire(bodies, vec![json!({"id": "x"}), json!({"delay_ms": 60_000})]).unwrap();
    let published = q.publish_batch(msgs).await.unwrap();
    assert_eq!(published[0].id, "x");
    assert_eq!(q.stats().await.unwrap().scheduled, 1);
}

/// A query's default "now" (history's until, upcoming's start) is the Redis clock, read on the
/// node that holds the queue: between two TIME readings of that server.
#[tokio::test]
async fn the_default_now_is_the_redis_clock() {
    let (_c, q) = common::queue("call-now").await;
    let time_ms = |t: (i64, i64)| t.0 * 1000 + t.1 / 1000;
    let mut raw = common::raw().await;
    let before: (i64, i64) = redis::cmd("TIME").query_async(&mut raw).await.unwrap();
    let now = q.redis_now().await.unwrap();
    let buckets = call(&q, "upcoming", json!({"width_ms": 1, "buckets": 1})).await;
    let after: (i64, i64) = redis::cmd("TIME").query_async(&mut raw).await.unwrap();
    let now_ms = now.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let start_ms = buckets[0]["at_ms"].as_i64().unwrap();
    for (what, ms) in [("redis_now", now_ms), ("upcoming's start", start_ms)] {
        assert!(time_ms(before) <= ms && ms <= time_ms(after), "{what} {ms} not in [{before:?}, {after:?}]");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_from_several_queues_by_name_takes_the_first_with_due_messages() {
    let (c, low) = common::queue("call-fetch-first").await;
    let high = c.queue_with("high", redelay::QueueOptions::shards(4)).unwrap();
    low.publish(Message::new(b"l".to_vec()).id("l")).await.unwrap();
    high.publish(Message::new(b"h".to_vec()).id("h")).await.unwrap();
    let names = vec!["high".to_string(), low.name().to_string()];
    // "high" is opened with the shard count Redis holds for it.
    let got = c.fetch_first_wire(&names, json!({"max": 10})).await.unwrap();
    assert_eq!(got.iter().map(|d| (d.id(), d.queue())).collect::<Vec<_>>(), [("h", "high")]);
    let got = c.fetch_first_wire(&names, json!({"max": 10, "wait_ms": 1000, "ttr_ms": 5000})).await.unwrap();
    assert_eq!(got.iter().map(|d| d.id()).collect::<Vec<_>>(), ["l"]);
    assert!(got[0].lease_deadline() < got[0].delivered_at() + Duration::from_secs(6), "leased for ttr_ms");
    for (names, args, words) in [
        (vec![], json!({"max": 1}), "queues: give 1 to"),
        (vec!["a".to_string(), "a".to_string()], json!({"max": 1}), "given twice"),
        (names.clone(), json!({"max": 0}), "max"),
        (names.clone(), json!({"max": 1, "wait": 5}), "wait"),
    ] {
        let e = c.fetch_first_wire(&names, args).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.message().contains(words), "{e}");
    }
}

#[tokio::test]
async fn a_fetch_without_max_leases_the_cores_default_of_one() {
    let (c, q) = common::queue("call-fetch-default").await;
    for id in ["a", "b", "c"] {
        q.publish(Message::new(b"x".to_vec()).id(id)).await.unwrap();
    }
    assert_eq!(redelay::limits::DEFAULT_FETCH_MAX, 1);
    let got = q.fetch_wire(json!({})).await.unwrap();
    assert_eq!(got.iter().map(|d| d.id()).collect::<Vec<_>>(), ["a"]);
    let got = q.fetch_wire(Value::Null).await.unwrap();
    assert_eq!(got.iter().map(|d| d.id()).collect::<Vec<_>>(), ["b"]);
    let got = c.fetch_first_wire(&[q.name().to_string()], json!({"wait_ms": 0})).await.unwrap();
    assert_eq!(got.iter().map(|d| d.id()).collect::<Vec<_>>(), ["c"]);
}
