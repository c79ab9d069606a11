//! The conformance table (tests/conformance/cases.json), run against the Rust API. Python, Node
//! and Kotlin run the same table in their own suites.
mod common;

use std::time::{Duration, UNIX_EPOCH};

use redelay::wire::from_json;
use redelay::{
    BulkOptions, Client, ClientOptions, DeadLetterQuery, Due, Error, ErrorKind, Failure, PublishOptions, Queue, Queues,
    RespawnOptions, Search, Select, State, Step, SubscribeOptions,
};
use serde_json::{json, Value};

fn s<'a>(a: &'a Value, k: &str) -> &'a str {
    a[k].as_str().unwrap_or_default()
}

fn ms(a: &Value, k: &str) -> Duration {
    Duration::from_millis(a[k].as_u64().unwrap_or_default())
}

fn at(a: &Value, k: &str) -> std::time::SystemTime {
    UNIX_EPOCH + ms(a, k)
}

/// The case's arguments without `keys`, decoded as the core's wire form of `T`.
fn options<T: serde::de::DeserializeOwned>(a: &Value, keys: &[&str]) -> Result<T, Error> {
    let mut o = a.as_object().cloned().unwrap_or_default();
    o.retain(|k, _| !keys.contains(&k.as_str()));
    from_json(Value::Object(o))
}

fn publish_options(a: &Value) -> Result<PublishOptions, Error> {
    options(a, &["body"])
}

/// Runs one operation; Ok is the case's result as JSON.
async fn run(op: &str, a: &Value, client: &Client, q: &Queue) -> Result<Value, Error> {
    let handler = |_d: redelay::Delivery| async { Ok::<(), Failure>(()) };
    Ok(match op {
        "connect" => {
            let url = s(a, "url").replace("$REDIS_URL", &common::url());
            Client::connect_with(&url, options::<ClientOptions>(a, &["url"])?).await?.close().await;
            Value::Null
        }
        "queue" => {
            client.queue_with(s(a, "name"), redelay::QueueOptions::shards(a["shards"].as_u64().unwrap_or(1) as u32))?;
            Value::Null
        }
        "publish" => json!(q.publish(publish_options(a)?.message(b"x".to_vec())?).await?.status.as_str()),
        "publish_batch" => {
            let items = a["messages"].as_array().unwrap().iter();
            let msgs = redelay::batch_messages(
                items
                    .map(|m| Ok((s(m, "body").as_bytes().to_vec(), publish_options(m)?)))
                    .collect::<Result<_, Error>>()?,
            )?;
            json!(q.publish_batch(msgs).await?.into_iter().map(|p| p.status.as_str()).collect::<Vec<_>>())
        }
        "fetch" => json!(q.fetch(a["max"].as_u64().unwrap_or(1) as usize, ms(a, "wait_ms")).await?.len()),
        "ack" => {
            q.ack(s(a, "id"), s(a, "token")).await?;
            Value::Null
        }
        "nack" => {
            let retry_in = a["retry_in_ms"].as_u64().map(Duration::from_millis);
            json!(q.nack(s(a, "id"), s(a, "token"), retry_in, s(a, "reason")).await?)
        }
        "release" => {
            q.release(s(a, "id"), s(a, "token")).await?;
            Value::Null
        }
        "extend" => {
            q.extend(s(a, "id"), s(a, "token"), ms(a, "ttr_ms")).await?;
            Value::Null
        }
        "cancel" => json!(q.cancel(s(a, "id")).await?),
        "reschedule" => {
            let o: PublishOptions = options(a, &["id"])?;
            q.reschedule(s(a, "id"), Due::required(o.delay, o.at)?).await?;
            Value::Null
        }
        "peek" => json!(q.peek(s(a, "id")).await?.map(|m| m.id)),
        "stats" => {
            let st = q.stats().await?;
            json!({"total": st.total, "scheduled": st.scheduled, "ready": st.ready, "leased": st.leased, "dead": st.dead})
        }
        "verify" => json!({"problems": q.verify().await?.problems.len()}),
        "dead_letters" => {
            let query: DeadLetterQuery = options(a, &[])?;
            query.validate()?;
            json!(q.dead_letters(query.offset, query.limit).await?.len())
        }
        "respawn" => {
            let o: RespawnOptions = options(a, &[])?;
            json!(q.respawn_with(o.select, o.expiry).await?)
        }
        "purge_dead" => json!(q.purge_dead(options::<Select>(a, &[])?).await?),
        "subscribe" => {
            q.subscribe(handler, options(a, &[])?).await?.close().await;
            json!("subscribed")
        }
        "subscribe_many" => {
            let names = a["queues"].as_array().unwrap().iter().map(|n| client.queue(n.as_str().unwrap()));
            let queues = names.collect::<Result<Vec<_>, Error>>()?;
            let weights = a["weights"].as_array().map(|w| w.iter().map(|w| w.as_i64().unwrap()).collect());
            let queues = Queues::ordered(queues, weights)?;
            let opts: SubscribeOptions = options(a, &["queues", "weights"])?;
            queues.subscribe(handler, opts).await?.close().await;
            json!("subscribed")
        }
        "pause" => json!(q.pause().await?),
        "resume" => json!(q.resume().await?),
        "set_history" => json!(q.set_history(a["on"].as_bool().unwrap()).await?),
        "history" => {
            let step: Step = from_json(a["step"].clone())?;
            json!(q.history(at(a, "since_ms"), at(a, "until_ms"), step).await?.len())
        }
        "upcoming" => {
            let buckets = a["buckets"].as_u64().unwrap() as usize;
            json!(q.upcoming(at(a, "from_ms"), ms(a, "width_ms"), buckets).await?.len())
        }
        "list" => {
            let state: State = from_json(a["state"].clone())?;
            let page = q
                .list(state, a["offset"].as_u64().unwrap_or(0) as usize, a["limit"].as_u64().unwrap() as usize)
                .await?;
            json!({"total": page.total, "items": page.items.len()})
        }
        "search" => {
            let what: Search = from_json(a["search"].clone())?;
            let page = q.search(&what, a["cursor"].as_str()).await?;
            json!({"items": page.items.len(), "done": page.cursor.is_none()})
        }
        "bulk" => {
            let r = q.bulk(&options::<BulkOptions>(a, &[])?).await?;
            json!({"matched": r.matched, "done": r.done})
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
