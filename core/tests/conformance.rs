//! The conformance table (tests/conformance/cases.json), run against the Rust API. Python, Node
//! and Kotlin run the same table in their own suites.
mod common;

use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};

use redelay::{
    Client, ClientOptions, DeadLetterQuery, Due, Error, ErrorKind, Failure, PublishOptions, PublishStatus, Queue,
    Select, SubscribeOptions,
};
use serde_json::{json, Value};

fn ms(v: &Value) -> Option<Duration> {
    v.as_u64().map(Duration::from_millis)
}

fn at(v: &Value) -> Option<std::time::SystemTime> {
    v.as_u64().map(|m| UNIX_EPOCH + Duration::from_millis(m))
}

fn s<'a>(a: &'a Value, k: &str) -> &'a str {
    a[k].as_str().unwrap_or_default()
}

fn publish_options(a: &Value) -> PublishOptions {
    let headers: BTreeMap<String, String> = a["headers"]
        .as_object()
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect())
        .unwrap_or_default();
    PublishOptions {
        id: a["id"].as_str().map(str::to_string),
        delay: ms(&a["delay_ms"]),
        at: at(&a["at_ms"]),
        headers,
        max_attempts: a["max_attempts"].as_u64().map(|n| n as u32),
        ttr: ms(&a["ttr_ms"]),
        ..Default::default()
    }
}

fn status(p: PublishStatus) -> &'static str {
    p.as_str()
}

fn select(a: &Value) -> Result<Select, Error> {
    let ids = a["ids"].as_array().map(|v| v.iter().map(|i| i.as_str().unwrap_or_default().to_string()).collect());
    Select::from_parts(ids, a["oldest"].as_u64().map(|n| n as usize), a["all"].as_bool().unwrap_or(false))
}

/// Runs one operation; Ok is the case's result as JSON.
async fn run(op: &str, a: &Value, client: &Client, q: &Queue) -> Result<Value, Error> {
    Ok(match op {
        "connect" => {
            let url = s(a, "url").replace("$REDIS_URL", &common::url());
            let d = ClientOptions::default();
            let opts = ClientOptions {
                prefix: a["prefix"].as_str().map_or(d.prefix.clone(), str::to_string),
                max_body_bytes: a["max_body_bytes"].as_u64().map_or(d.max_body_bytes, |n| n as usize),
                default_max_attempts: a["default_max_attempts"].as_u64().map_or(d.default_max_attempts, |n| n as u32),
                default_ttr: ms(&a["default_ttr_ms"]).unwrap_or(d.default_ttr),
                connect_timeout: ms(&a["connect_timeout_ms"]).unwrap_or(d.connect_timeout),
                ..d
            };
            Client::connect_with(&url, opts).await?.close().await;
            Value::Null
        }
        "queue" => {
            client.queue(s(a, "name"))?;
            Value::Null
        }
        "publish" => json!(status(q.publish(publish_options(a).message(b"x".to_vec())?).await?.status)),
        "publish_batch" => {
            let items = a["messages"].as_array().unwrap().iter();
            let msgs = redelay::batch_messages(
                items.map(|m| (s(m, "body").as_bytes().to_vec(), publish_options(m))).collect(),
            )?;
            json!(q.publish_batch(msgs).await?.into_iter().map(|p| status(p.status)).collect::<Vec<_>>())
        }
        "fetch" => {
            let max = a["max"].as_u64().unwrap_or(1) as usize;
            json!(q.fetch(max, ms(&a["wait_ms"]).unwrap_or_default()).await?.len())
        }
        "ack" => {
            q.ack(s(a, "id"), s(a, "token")).await?;
            Value::Null
        }
        "nack" => json!(q.nack(s(a, "id"), s(a, "token"), ms(&a["retry_in_ms"]), s(a, "reason")).await?),
        "extend" => {
            q.extend(s(a, "id"), s(a, "token"), ms(&a["ttr_ms"]).unwrap_or_default()).await?;
            Value::Null
        }
        "cancel" => json!(q.cancel(s(a, "id")).await?),
        "reschedule" => {
            let due = Due::from_parts(ms(&a["delay_ms"]), at(&a["at_ms"]))?;
            q.reschedule(s(a, "id"), due).await?;
            Value::Null
        }
        "peek" => json!(q.peek(s(a, "id")).await?.map(|m| m.id)),
        "stats" => {
            let st = q.stats().await?;
            json!({"total": st.total, "scheduled": st.scheduled, "ready": st.ready, "leased": st.leased, "dead": st.dead})
        }
        "verify" => json!({"problems": q.verify().await?.problems.len()}),
        "dead_letters" => {
            let d = DeadLetterQuery::default();
            let query = DeadLetterQuery { offset: 0, limit: a["limit"].as_u64().map_or(d.limit, |n| n as usize) };
            query.validate()?;
            json!(q.dead_letters(query.offset, query.limit).await?.len())
        }
        "respawn" => json!(q.respawn(select(a)?).await?),
        "purge_dead" => json!(q.purge_dead(select(a)?).await?),
        "subscribe" => {
            let d = SubscribeOptions::default();
            let opts = SubscribeOptions {
                concurrency: a["concurrency"].as_u64().map_or(d.concurrency, |n| n as usize),
                prefetch: a["prefetch"].as_u64().map(|n| n as usize),
                ttr: ms(&a["ttr_ms"]),
                max_idle: ms(&a["max_idle_ms"]).unwrap_or(d.max_idle),
                ..d
            };
            let sub = q.subscribe(|_d: redelay::Delivery| async { Ok::<(), Failure>(()) }, opts).await?;
            sub.close().await;
            json!("subscribed")
        }
        "destroy" => {
            q.destroy().await?;
            Value::Null
        }
        other => panic!("the Rust API has no operation {other:?} of the conformance table"),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_case_of_the_conformance_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/conformance/cases.json");
    let table: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (client, _) = common::queue("conformance").await;
    let mut failures = Vec::new();
    let cases = table["cases"].as_array().unwrap();
    for (i, case) in cases.iter().enumerate() {
        let op = case["op"].as_str().unwrap();
        let q = client.queue(&common::unique(&format!("c{i}"))).unwrap();
        let got = run(op, &case["args"], &client, &q).await;
        let expect = &case["expect"];
        let ok = match (&got, expect.get("error")) {
            (Err(e), Some(kind)) => {
                let kind = ErrorKind::from_name(kind.as_str().unwrap()).expect("a kind of the table");
                let words = expect["message"].as_array().map(Vec::as_slice).unwrap_or_default();
                e.kind() == kind && words.iter().all(|w| e.message().contains(w.as_str().unwrap()))
            }
            (Ok(v), None) => v == &expect["result"],
            _ => false,
        };
        if !ok {
            failures.push(format!("case {i} {op} {}: got {got:?}, expected {expect}", case["args"]));
        }
        let _ = q.destroy().await;
    }
    for op in table["operations"].as_array().unwrap() {
        assert!(cases.iter().any(|c| c["op"] == *op), "no case for {op}");
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
    client.close().await;
}
