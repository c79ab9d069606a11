//! `redelay::call`: every queue operation by name, with wire-form arguments and results, as the
//! bindings use it.
mod common;

use std::time::Duration;

use redelay::ErrorKind;
use serde_json::{json, Value};

async fn call(q: &redelay::Queue, op: &str, args: Value) -> redelay::Result<Value> {
    redelay::call(q, op, args, Vec::new()).await
}

#[tokio::test]
async fn every_operation_of_the_conformance_table_with_wire_arguments_and_results() {
    let (_c, q) = common::queue("call").await;
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;

    let p = redelay::call(&q, "publish", json!({"id": "a", "headers": {"k": "v"}}), vec![b"body".to_vec()]).await;
    assert_eq!(p.unwrap(), json!({"id": "a", "status": "stored"}));
    let batch = json!([{"id": "b", "delay_ms": 3_600_000}, {}]);
    let v = redelay::call(&q, "publish_batch", batch, vec![b"1".to_vec(), b"2".to_vec()]).await.unwrap();
    assert_eq!(v[0], json!({"id": "b", "status": "stored"}));
    assert_eq!(v.as_array().unwrap().len(), 2);

    let info = call(&q, "peek", json!({"id": "a"})).await.unwrap();
    assert_eq!((info["state"].clone(), info["body"].clone()), (json!("ready"), json!(b"body".to_vec())));
    assert_eq!(call(&q, "peek", json!({"id": "zz"})).await.unwrap(), Value::Null);
    assert_eq!(call(&q, "stats", json!({})).await.unwrap()["scheduled"], json!(1));

    let due = call(&q, "reschedule", json!({"id": "b", "delay_ms": 7_200_000})).await.unwrap();
    assert!(due.as_u64().unwrap() >= now_ms + 7_100_000, "{due}");
    let up = call(&q, "upcoming", json!({"width_ms": 3_600_000, "buckets": 3})).await.unwrap();
    assert_eq!(up.as_array().unwrap().iter().map(|p| p[1].as_u64().unwrap()).sum::<u64>(), 1, "{up}");

    let d = q.fetch(2, Duration::ZERO).await.unwrap();
    assert_eq!(d.len(), 2);
    let (id, token) = (d[0].id().to_string(), d[0].token().to_string());
    call(&q, "extend", json!({"id": id, "token": token, "ttr_ms": 5000})).await.unwrap();
    let died = call(&q, "nack", json!({"id": id, "token": token, "reason": "r", "retry_in_ms": 0})).await;
    assert_eq!(died.unwrap(), json!(false));
    let (id, token) = (d[1].id().to_string(), d[1].token().to_string());
    assert_eq!(call(&q, "ack", json!({"id": id, "token": token})).await.unwrap(), Value::Null);

    let page = call(&q, "list", json!({"state": "scheduled", "limit": 10})).await.unwrap();
    assert_eq!(page["total"], json!(1));
    let found = call(&q, "search", json!({"search": {"id_prefix": "b"}})).await.unwrap();
    assert_eq!(found["items"][0]["id"], json!("b"));
    assert_eq!(call(&q, "dead_letters", json!({})).await.unwrap(), json!([]));
    assert_eq!(call(&q, "respawn", json!({"all": true})).await.unwrap(), json!(0));
    assert_eq!(call(&q, "purge_dead", json!({"ids": ["x"]})).await.unwrap(), json!(0));
    let r = call(&q, "bulk", json!({"action": "deliver_now", "ids": ["b"]})).await.unwrap();
    assert_eq!((r["matched"].clone(), r["done"].clone()), (json!(1), json!(1)));
    assert_eq!(call(&q, "pause", json!({})).await.unwrap(), json!(true));
    assert_eq!(call(&q, "resume", json!({})).await.unwrap(), json!(true));
    assert_eq!(call(&q, "set_history", json!({"on": true})).await.unwrap(), json!(false));
    let h = call(&q, "history", json!({"since_ms": now_ms - 60_000})).await.unwrap();
    assert!(!h.as_array().unwrap().is_empty(), "{h}");
    assert!(call(&q, "history_totals", json!({})).await.unwrap()["published"].as_u64().unwrap() >= 3);
    assert_eq!(call(&q, "cancel", json!({"id": "b"})).await.unwrap(), json!(true));
    assert_eq!(call(&q, "verify", json!({})).await.unwrap()["problems"], json!([]));
    assert_eq!(call(&q, "destroy", json!({})).await.unwrap(), Value::Null);

    // Every operation of the table that takes wire data is one of `call`'s.
    let table: Value = serde_json::from_str(include_str!("../../tests/conformance/cases.json")).unwrap();
    let not_wire = ["connect", "queue", "fetch", "subscribe", "subscribe_many"];
    for op in table["operations"].as_array().unwrap().iter().map(|o| o.as_str().unwrap()) {
        if let Err(e) = call(&q, op, json!({"id": "nope", "token": "t"})).await {
            assert!(not_wire.contains(&op) || !e.message().starts_with("op: "), "{op}: {}", e.message());
        }
    }
}

#[tokio::test]
async fn bad_arguments_are_refused_naming_the_field() {
    let (_c, q) = common::queue("call-bad").await;
    let cases = [
        ("nope", json!({}), "op: no queue operation \"nope\""),
        ("nack", json!({"id": "a", "token": "t", "retry_in_ms": -1}), "retry_in_ms: "),
        ("extend", json!({"id": "a", "token": "t"}), "ttr_ms: missing"),
        ("cancel", json!({"idd": "a"}), "unknown field `idd`"),
        ("history", json!({}), "since_ms: missing"),
        ("upcoming", json!({"buckets": 2}), "width_ms: missing"),
        ("list", json!({"limit": 5}), "state: missing"),
        ("search", json!({}), "search: missing"),
        ("reschedule", json!({"id": "a", "delay_ms": 1, "at_ms": 1}), "delay"),
        ("publish", json!({"delay_ms": "soon"}), "delay_ms: "),
        ("publish_batch", json!([{}, {"ttr_ms": -5}]), "[1].ttr_ms: "),
        ("dead_letters", json!({"limit": 0}), "limit"),
        ("respawn", json!({}), "ids/oldest/all"),
    ];
    let e = redelay::call(&q, "publish_batch", json!([{}]), Vec::new()).await.unwrap_err();
    assert!(e.message().contains("0 bodies for 1 options"), "{}", e.message());
    for (op, args, words) in cases {
        let e = call(&q, op, args).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{op}: {}", e.message());
        assert!(e.message().contains(words), "{op}: {:?} lacks {words:?}", e.message());
    }
}
