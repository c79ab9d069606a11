//! The conformance table (tests/conformance/cases.json), run against the Rust API. Python, Node
//! and Kotlin run the same table in their own suites.
mod common;

use std::collections::BTreeSet;
use std::time::{Duration, UNIX_EPOCH};

use redelay::wire::from_json;
use redelay::{
    limits, BulkOptions, Client, ClientOptions, DeadLetterQuery, Delivery, Due, Error, ErrorKind, Failure, Message,
    PublishOptions, Queue, Queues, RespawnOptions, Search, Select, State, Step, SubscribeOptions,
};
use serde_json::{json, Value};

fn s<'a>(a: &'a Value, k: &str) -> &'a str {
    a[k].as_str().unwrap_or_default()
}

fn ms(a: &Value, k: &str) -> Duration {
    Duration::from_millis(a[k].as_u64().unwrap_or_default())
}

/// A time in ms since the epoch; a negative one before it.
fn at(a: &Value, k: &str) -> std::time::SystemTime {
    let v = a[k].as_i64().unwrap_or_default();
    let d = Duration::from_millis(v.unsigned_abs());
    if v < 0 {
        UNIX_EPOCH - d
    } else {
        UNIX_EPOCH + d
    }
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
        "fetch" => json!(q
            .fetch(a["max"].as_u64().map_or(limits::DEFAULT_FETCH_MAX, |n| n as usize), ms(a, "wait_ms"))
            .await?
            .len()),
        "messages" => {
            // The stream first (its options are checked before anything is published), then
            // the message it is to hand out.
            let stream = q.messages(options(a, &["body"])?)?;
            q.publish(Message::new(s(a, "body").as_bytes().to_vec())).await?;
            let d = stream.next().await?.expect("an open stream hands out the message");
            d.ack().await?;
            stream.close().await;
            json!(String::from_utf8_lossy(d.body()))
        }
        "fetch_first" => {
            let names: Vec<String> = from_json(a["queues"].clone())?;
            let mut args = json!({"wait_ms": a["wait_ms"].as_u64().unwrap_or(0)});
            if !a["max"].is_null() {
                args["max"] = a["max"].clone(); // else the core's default
            }
            json!(client.fetch_first_wire(&names, args).await?.len())
        }
        "ack" => {
            q.ack(s(a, "id"), s(a, "token")).await?;
            Value::Null
        }
        "nack" => {
            // A Duration cannot be negative: read as a binding reads its number of ms.
            let retry_in = a["retry_in_ms"].as_f64().map(redelay::limits::retry_delay).transpose()?;
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
            json!({"total": st.total, "scheduled": st.scheduled, "ready": st.ready, "leased": st.leased, "lapsed": st.lapsed, "dead": st.dead})
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
                .list(
                    state,
                    a["offset"].as_u64().unwrap_or(0) as usize,
                    a["limit"].as_u64().map_or(limits::DEFAULT_PAGE_LIMIT, |n| n as usize),
                )
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

/// The keys of a wire form, without their unit (`published_at_ms` is `published_at`).
fn keys(v: impl serde::Serialize) -> BTreeSet<String> {
    let v = serde_json::to_value(v).unwrap();
    v.as_object().unwrap().keys().map(|k| k.strip_suffix("_ms").unwrap_or(k).to_string()).collect()
}

/// A delivery's field of the table, by its accessor: a name the table has and Rust does not is
/// a failure.
fn delivery_field(d: &Delivery, name: &str) -> Value {
    match name {
        "id" => json!(d.id()),
        "queue" => json!(d.queue()),
        "body" => json!(d.body()),
        "headers" => json!(d.headers()),
        "attempt" => json!(d.attempt()),
        "max_attempts" => json!(d.max_attempts()),
        "last_error" => json!(d.last_error()),
        "published_at" => json!(redelay::wire::epoch_ms(d.published_at())),
        "due_at" => json!(redelay::wire::epoch_ms(d.due_at())),
        "delivered_at" => json!(redelay::wire::epoch_ms(d.delivered_at())),
        "lateness" => json!(d.lateness().as_micros() as u64),
        "expires_at" => json!(d.expires_at().map(redelay::wire::epoch_ms)),
        "lease_deadline" => json!(redelay::wire::epoch_ms(d.lease_deadline())),
        "token" => json!(d.token()),
        "settled" => json!(d.is_settled()),
        other => panic!("a Rust Delivery has no {other:?} of the conformance table"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_value_has_exactly_the_fields_of_the_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/conformance/cases.json");
    let table: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let want = |ty: &str| -> BTreeSet<String> {
        table["results"][ty].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect()
    };
    let (_c, q) = common::queue("fields").await;
    let published = q.publish(Message::new(b"x".to_vec()).id("a").expires_in(Duration::from_secs(600))).await.unwrap();
    let mut got = vec![
        ("published", keys(&published)),
        ("stats", keys(q.stats().await.unwrap())),
        ("message_info", keys(q.peek("a").await.unwrap().unwrap())),
        ("verify_report", keys(q.verify().await.unwrap())),
        ("history_point", keys(q.history_totals().await.unwrap())),
        ("list_page", keys(q.list(State::Ready, 0, 10).await.unwrap())),
        ("search_page", keys(q.call("search", json!({"search": {"id_prefix": "a"}})).await.unwrap())),
        ("bulk_report", keys(q.call("bulk", json!({"action": "cancel", "ids": ["none"]})).await.unwrap())),
    ];
    // Counters has no wire form of its own: its fields as Debug names them.
    let debug = format!("{:?}", redelay::Counters::default());
    let names = debug.split(['{', ',', '}']).filter_map(|p| p.split(':').next()).map(str::trim);
    got.push(("counters", names.filter(|n| !n.is_empty() && *n != "Counters").map(String::from).collect()));
    for (ty, fields) in got {
        assert_eq!(fields, want(ty), "{ty}: the Rust value's fields and the table's differ");
    }
    let d = q.fetch(1, Duration::ZERO).await.unwrap().pop().unwrap();
    for f in want("delivery") {
        let _ = delivery_field(&d, &f);
    }
    assert_eq!(delivery_field(&d, "expires_at"), json!(redelay::wire::epoch_ms(d.expires_at().unwrap())));
    d.ack().await.unwrap();
}
