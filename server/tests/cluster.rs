//! The gateway over a Redis Cluster (tests/cluster.sh) with a sharded queue's shard out of
//! reach: the overview answers with every other queue and marks that one.
mod common;
#[path = "../../core/tests/common/mod.rs"]
mod harness;

use common::ADMIN;
use redelay::{Message, QueueOptions};

/// One shard of a sharded queue lost (its master and replica killed, the cluster serving the
/// other slots): `GET /v1/overview` answers 200 with the plain queues' rows as usual and the
/// sharded queue's row `{"queue", "error"}`, a `Connection` error naming the shard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_marks_a_queue_with_a_shard_out_of_reach_and_shows_the_others() {
    let cluster = harness::Cluster::start();
    cluster.serve_partial();
    let s = common::start_on(&cluster.url, |_| {}).await;
    let (name, shards) = ("app:sharded", 16);
    let sharded = s.client.queue_with(name, QueueOptions::shards(shards)).unwrap();
    let ids: Vec<String> = (0..32).map(|i| format!("m{i}")).collect();
    sharded
        .publish_batch(ids.iter().map(|id| Message::new(id.as_bytes().to_vec()).id(id.clone())).collect())
        .await
        .unwrap();

    // The master lost: one holding shards of the queue, but neither its shard count (so the
    // queue opens) nor the registry of names (so the overview has its list).
    let owner = |key: &str| cluster.master_of(key);
    let spared = [owner(&format!("x:{{{name}}}:meta")), owner(&format!("{}:queues", s.client.prefix()))];
    let shard_owner = |i: u32| owner(&format!("x:{{{name}/{i}}}:msg"));
    let victim = (0..shards).map(shard_owner).find(|p| !spared.contains(p)).expect("a master with shards only");
    let first = (0..shards).find(|&i| shard_owner(i) == victim).unwrap();
    // Plain queues on the masters that stay.
    let plain: Vec<String> =
        (0..).map(|i| format!("app:plain{i}")).filter(|n| owner(&format!("x:{{{n}}}:msg")) != victim).take(2).collect();
    for n in &plain {
        s.client.queue(n).unwrap().publish(Message::new(b"x".to_vec())).await.unwrap();
    }
    cluster.lose_master(victim);

    let r = s.http.get(s.url("/v1/overview")).bearer_auth(ADMIN).send().await.unwrap();
    let (status, v) = common::json(r).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["total"], 3, "{v}");
    let row = |n: &str| v["queues"].as_array().unwrap().iter().find(|r| r["queue"] == n).cloned().unwrap();
    for n in &plain {
        let r = row(n);
        assert_eq!((r["stats"]["total"].as_u64(), r.get("error")), (Some(1), None), "{v}");
    }
    let bad = row(name);
    assert_eq!(bad["error"]["kind"], "Connection", "{v}");
    assert_eq!(bad["error"]["code"], "ERR_REDELAY_CONNECTION", "{v}");
    let message = bad["error"]["message"].as_str().unwrap();
    let want = format!("shard {first} of queue \"{name}\" (hash tag {{{name}/{first}}})");
    assert!(message.contains(&want), "{message}");
    assert_eq!(bad.as_object().unwrap().keys().collect::<Vec<_>>(), ["error", "queue"], "only queue and error: {v}");
}
