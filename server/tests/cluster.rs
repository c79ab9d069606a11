//! The gateway over a Redis Cluster (tests/cluster.sh) with a sharded queue's shard out of
//! reach: the overview answers with every other queue and marks that one, and says so in its
//! log once per outage; with many such queues at once it still answers, and reads the live
//! ones.
mod common;
#[path = "../../core/tests/common/mod.rs"]
mod harness;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Srv, ADMIN};
use redelay::{Message, QueueOptions};

/// A gateway over a fresh cluster serving partial slots, with the sharded queue `name`
/// (`shards` shards, a message on each of 32 ids) and the master to lose: one holding shards of
/// the queue, but neither its shard count (so the queue opens) nor the registry of names (so
/// the overview has its list); with the first shard it holds.
async fn sharded_and_a_victim(cluster: &harness::Cluster, name: &str, shards: u32) -> (Srv, u16, u32) {
    cluster.serve_partial();
    let s = common::start_on(&cluster.url, |_| {}).await;
    let sharded = s.client.queue_with(name, QueueOptions::shards(shards)).unwrap();
    let ids: Vec<String> = (0..32).map(|i| format!("m{i}")).collect();
    sharded
        .publish_batch(ids.iter().map(|id| Message::new(id.as_bytes().to_vec()).id(id.clone())).collect())
        .await
        .unwrap();
    let owner = |key: &str| cluster.master_of(key);
    let spared = [owner(&format!("x:{{{name}}}:meta")), owner(&format!("{}:queues", s.client.prefix()))];
    let shard_owner = |i: u32| owner(&format!("x:{{{name}/{i}}}:msg"));
    let victim = (0..shards).map(shard_owner).find(|p| !spared.contains(p)).expect("a master with shards only");
    let first = (0..shards).find(|&i| shard_owner(i) == victim).unwrap();
    (s, victim, first)
}

/// `GET /v1/overview` as the admin: its JSON.
async fn overview(s: &Srv) -> serde_json::Value {
    let r = s.http.get(s.url("/v1/overview")).bearer_auth(ADMIN).send().await.unwrap();
    let (status, v) = common::json(r).await;
    assert_eq!(status, 200, "{v}");
    v
}

/// The row of queue `n` in an overview.
fn row(v: &serde_json::Value, n: &str) -> serde_json::Value {
    v["queues"].as_array().unwrap().iter().find(|r| r["queue"] == n).cloned().unwrap_or_else(|| panic!("{n}: {v}"))
}

/// One shard of a sharded queue lost (its master and replica killed, the cluster serving the
/// other slots): `GET /v1/overview` answers 200 with the plain queues' rows as usual and the
/// sharded queue's row `{"queue", "error"}`, a `Connection` error naming the shard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_marks_a_queue_with_a_shard_out_of_reach_and_shows_the_others() {
    let cluster = harness::Cluster::start();
    let name = "app:sharded";
    let (s, victim, first) = sharded_and_a_victim(&cluster, name, 16).await;
    // Plain queues on the masters that stay.
    let plain: Vec<String> = (0..)
        .map(|i| format!("app:plain{i}"))
        .filter(|n| cluster.master_of(&format!("x:{{{n}}}:msg")) != victim)
        .take(2)
        .collect();
    for n in &plain {
        s.client.queue(n).unwrap().publish(Message::new(b"x".to_vec())).await.unwrap();
    }
    cluster.lose_master(victim);

    let v = overview(&s).await;
    assert_eq!(v["total"], 3, "{v}");
    for n in &plain {
        let r = row(&v, n);
        assert_eq!((r["stats"]["total"].as_u64(), r.get("error")), (Some(1), None), "{v}");
    }
    let bad = row(&v, name);
    assert_eq!(bad["error"]["kind"], "Connection", "{v}");
    assert_eq!(bad["error"]["code"], "ERR_REDELAY_CONNECTION", "{v}");
    let message = bad["error"]["message"].as_str().unwrap();
    let want = format!("shard {first} of queue \"{name}\" (hash tag {{{name}/{first}}})");
    assert!(message.contains(&want), "{message}");
    assert_eq!(bad.as_object().unwrap().keys().collect::<Vec<_>>(), ["error", "queue"], "only queue and error: {v}");
}

/// While a shard is out of reach, the dashboard's polls of the overview log one warning for
/// that queue, with the reason, not one per poll; once the shard is back (its master and
/// replica restarted), one info line says the queue is available again. Other endpoints'
/// failures keep their warning per request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_logs_an_unreadable_queue_once_per_outage() {
    let name = "app:flaky";
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = lines.clone();
    // The gateway's records, as `level message` (2 warn, 3 info), of this test's queue only:
    // the other test of this file runs beside it.
    assert!(redelay::forward_logs(3, move |level, target, msg| {
        if target == "redelay::server" && msg.contains(&format!("{name:?}")) {
            sink.lock().unwrap().push(format!("{level} {msg}"));
        }
    }));
    let said = || lines.lock().unwrap().clone();
    let cluster = harness::Cluster::start();
    let (s, victim, first) = sharded_and_a_victim(&cluster, name, 16).await;
    let replica = cluster.replica_of(victim);
    assert_eq!(row(&overview(&s).await, name)["stats"]["total"], 32);
    assert_eq!(said(), Vec::<String>::new(), "a readable queue logs nothing");

    cluster.lose_master(victim);
    for _ in 0..5 {
        let r = row(&overview(&s).await, name);
        assert_eq!(r["error"]["kind"], "Connection", "{r}");
    }
    let got = said();
    assert_eq!(got.len(), 1, "one line over five polls: {got:#?}");
    let shard = format!("shard {first} of queue \"{name}\" (hash tag {{{name}/{first}}})");
    assert!(got[0].starts_with(&format!("2 overview: queue \"{name}\" unavailable")), "{got:#?}");
    assert!(got[0].contains(&shard), "the reason: {got:#?}");

    // A request that failed is worth a line each.
    for _ in 0..2 {
        let r = s.http.get(s.url(&format!("/v1/queues/{name}/stats"))).bearer_auth(ADMIN).send().await.unwrap();
        assert_eq!(r.status(), 503);
    }
    let got = said();
    assert_eq!(got.len(), 3, "{got:#?}");
    assert!(got[1..].iter().all(|l| l.starts_with("2 Connection: ") && l.contains(&shard)), "{got:#?}");

    // The shard back (empty: the nodes keep no data): the next poll that reads it says so once.
    cluster.restart(victim);
    cluster.restart(replica);
    // Meanwhile the cluster client may find its connections gone: a whole answer can fail
    // too (the registry's read timing out), which is not the queue's line.
    let mut polls = 0;
    loop {
        let r = s.http.get(s.url("/v1/overview")).bearer_auth(ADMIN).send().await.unwrap();
        let (status, v) = common::json(r).await;
        if status == 200 && row(&v, name).get("error").is_none() {
            break;
        }
        polls += 1;
        assert!(polls < 120, "the shard never came back: {v} {:#?}", said());
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    overview(&s).await;
    let got = said();
    assert_eq!(got.len(), 4, "{got:#?}");
    assert_eq!(got[3], format!("3 overview: queue \"{name}\" available again"));
}

/// Twenty sharded queues with shards on one master, lost, beside plain queues on the masters
/// that stay: one overview asks for them all at once, hundreds of calls failing together on
/// the lost node. The overview answers with every sharded queue's row a `Connection` error
/// naming its shard and every plain queue's row read, and the gateway reads the live queues
/// after it. Before: the cluster client (redis-rs 1.8.1) wedged under such a burst — its slot
/// refresh waiting forever for a lock granted to a request it no longer polled — so that
/// every call timed out, to live masters too (third_party/redis/PATCHED.md).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_of_many_queues_with_a_shard_down_answers_and_the_gateway_still_reads() {
    let cluster = harness::Cluster::start();
    cluster.serve_partial();
    let s = common::start_on(&cluster.url, |_| {}).await;
    let owner = |tag: &str| cluster.master_of(&format!("x:{{{tag}}}:msg"));
    // The victim holds neither the registry of names nor any queue's shard count (each opens).
    let registry = cluster.master_of(&format!("{}:queues", s.client.prefix()));
    let victim = cluster.ports().into_iter().find(|&p| p != registry && is_master(p)).expect("another master");
    let shards = 16;
    let lost = |name: &str| (0..shards).find(|&i| owner(&format!("{name}/{i}")) == victim);
    let sharded: Vec<(String, u32)> = (0..)
        .map(|k| format!("app:many{k}"))
        .filter(|n| owner(n) != victim)
        .filter_map(|n| lost(&n).map(|first| (n, first)))
        .take(20)
        .collect();
    let plain: Vec<String> = (0..).map(|k| format!("app:plain{k}")).filter(|n| owner(n) != victim).take(2).collect();
    for (n, _) in &sharded {
        let q = s.client.queue_with(n, QueueOptions::shards(shards)).unwrap();
        let msgs = (0..32).map(|i| Message::new(b"x".to_vec()).id(format!("m{i}"))).collect();
        q.publish_batch(msgs).await.unwrap();
    }
    for n in &plain {
        s.client.queue(n).unwrap().publish(Message::new(b"x".to_vec())).await.unwrap();
    }
    // The dashboard was polling: the gateway has every queue open.
    assert_eq!(overview(&s).await["total"], 22);
    cluster.lose_master(victim);

    // Generous: "it answers at all", not how fast.
    let patience = Duration::from_secs(30);
    let v = tokio::time::timeout(patience, overview(&s)).await.expect("the overview answers");
    assert_eq!(v["total"], 22, "{v}");
    for (n, first) in &sharded {
        let r = row(&v, n);
        assert_eq!(r["error"]["kind"], "Connection", "{n}: {r}");
        let message = r["error"]["message"].as_str().unwrap();
        let want = format!("shard {first} of queue \"{n}\" (hash tag {{{n}/{first}}})");
        assert!(message.contains(&want), "{n}: {r}");
    }
    for n in &plain {
        let r = row(&v, n);
        assert_eq!((r["stats"]["total"].as_u64(), r.get("error")), (Some(1), None), "{n}: {r}");
    }
    // Plain requests to the live queues right after: each answers.
    for n in &plain {
        let ask = s.http.get(s.url(&format!("/v1/queues/{n}/stats"))).bearer_auth(ADMIN).send();
        let r = tokio::time::timeout(patience, ask).await.expect("the stats answer").unwrap();
        let (status, v) = common::json(r).await;
        assert_eq!((status, v["total"].as_u64()), (200, Some(1)), "{n}: {v}");
    }
}

fn is_master(port: u16) -> bool {
    let mut con = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap().get_connection().unwrap();
    let info: String = redis::cmd("INFO").arg("replication").query(&mut con).unwrap();
    info.contains("role:master")
}
