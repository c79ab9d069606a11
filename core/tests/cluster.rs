//! Redis Cluster: queues on different masters, every operation without CROSSSLOT, and a
//! master killed under a running subscription; a sharded queue over all masters, and a master
//! killed under its subscriptions.
mod common;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redelay::{Client, Delivery, Due, Failure, Message, QueueOptions, Select, State, SubscribeOptions};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

async fn pull_one(q: &redelay::Queue) -> Delivery {
    let t = Instant::now();
    loop {
        if let Some(d) = q.fetch(1, ms(300)).await.unwrap().pop() {
            return d;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "nothing delivered on {}", q.name());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_on_queues_spread_over_masters_then_a_master_dies() {
    let cluster = common::Cluster::start();
    let client = Client::builder(&cluster.url).response_timeout(Duration::from_secs(3)).connect().await.unwrap();

    // Queues whose slots land on at least two (in practice three) different masters.
    let names: Vec<String> = (0..6).map(|i| format!("cq{i}")).collect();
    let owners: HashSet<u16> = names.iter().map(|n| cluster.master_of(&format!("redelay:{{{n}}}:msg"))).collect();
    assert!(owners.len() >= 2, "queues should span masters, got {owners:?}");

    for name in &names {
        let q = client.queue(name).unwrap();
        let r = q
            .publish_batch(vec![
                Message::new(b"a".to_vec()).id("a"),
                Message::new(b"b".to_vec()).id("b").max_attempts(1),
                Message::new(b"c".to_vec()).id("c").delay(Duration::from_secs(60)),
                Message::new(b"dup".to_vec()).id("a"),
            ])
            .await
            .unwrap();
        assert!(r[3].is_duplicate());
        assert_eq!(q.peek("c").await.unwrap().unwrap().state, State::Scheduled);
        let s = q.stats().await.unwrap();
        assert_eq!((s.total, s.ready, s.scheduled), (3, 2, 1));
        let mut got = Vec::new();
        while got.len() < 2 {
            got.push(pull_one(&q).await);
        }
        for d in got {
            d.extend(Duration::from_secs(5)).await.unwrap();
            if d.id() == "a" {
                d.ack().await.unwrap();
            } else {
                assert!(d.nack(None, "to the dead letters").await.unwrap());
            }
        }
        assert_eq!(q.dead_letters(0, 10).await.unwrap()[0].id, "b");
        assert_eq!(q.respawn(Select::All).await.unwrap(), 1);
        let d = pull_one(&q).await;
        assert!(d.nack(None, "again").await.unwrap());
        assert_eq!(q.purge_dead(Select::Ids(vec!["b".into()])).await.unwrap(), 1);
        q.reschedule("c", Due::In(ms(50))).await.unwrap();
        let d = pull_one(&q).await;
        assert_eq!(d.id(), "c");
        d.ack().await.unwrap();
        q.publish(Message::new(b"x".to_vec()).id("x").delay(Duration::from_secs(60))).await.unwrap();
        assert!(q.cancel("x").await.unwrap());
        common::assert_verified(&q).await;
        q.destroy().await.unwrap();
    }

    // Durability in a cluster: WAIT goes to the master of each queue's slot. Every master has
    // one replica, so waiting for 1 succeeds and waiting for 2 fails, whichever master it is.
    let durable = Client::builder(&cluster.url).wait_for_replicas(1, Duration::from_secs(2)).connect().await.unwrap();
    let greedy = Client::builder(&cluster.url).wait_for_replicas(2, ms(200)).connect().await.unwrap();
    for name in &names {
        let q = durable.queue(name).unwrap();
        q.publish(Message::new(b"w".to_vec()).id("w")).await.unwrap();
        let e = greedy.queue(name).unwrap().publish(Message::new(b"w".to_vec()).id("w2")).await.unwrap_err();
        assert!(e.message().contains("only 1 of 2 replicas confirmed"), "{name}: {e}");
        assert_eq!(q.stats().await.unwrap().total, 2, "{name}: both stored on the master");
        q.destroy().await.unwrap();
    }

    // Subscriptions on every queue at once, then the master of one queue is killed.
    let victim = names[0].clone();
    let victim_port = cluster.master_of(&format!("redelay:{{{victim}}}:msg"));
    let acked: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    let mut subs = Vec::new();
    for name in &names {
        let q = client.queue(name).unwrap();
        let msgs = (0..200)
            .map(|i| Message::new(format!("{name}/{i}").into_bytes()).id(format!("{name}-m{i}")).delay(ms(i * 20)))
            .collect();
        q.publish_batch(msgs).await.unwrap();
        let a = acked.clone();
        let sub = q
            .subscribe(
                move |d: Delivery| {
                    let a = a.clone();
                    async move {
                        *a.lock().unwrap().entry(d.id().to_string()).or_default() += 1;
                        Ok::<(), Failure>(())
                    }
                },
                SubscribeOptions::concurrency(4),
            )
            .await
            .unwrap();
        subs.push(sub);
    }
    // Let replication catch up with the publishes (it is asynchronous), then kill the master.
    tokio::time::sleep(ms(1000)).await;
    cluster.kill(victim_port);
    let t = Instant::now();
    while acked.lock().unwrap().len() < 1200 {
        if t.elapsed() > Duration::from_secs(40) {
            let per: Vec<(String, usize)> = names
                .iter()
                .map(|n| (n.clone(), acked.lock().unwrap().keys().filter(|k| k.starts_with(&format!("{n}-"))).count()))
                .collect();
            let counters: Vec<_> = subs.iter().map(|s| (s.counters().errors, s.last_error())).collect();
            panic!(
                "only {} of 1200 acked after failover; per queue {per:?}; victim {victim}; counters {counters:#?}",
                acked.lock().unwrap().len()
            );
        }
        tokio::time::sleep(ms(100)).await;
    }
    for s in &subs {
        s.close().await;
    }
    let acked = acked.lock().unwrap().clone();
    assert_eq!(acked.len(), 1200, "every message acked");
    for name in &names {
        settled_after_failover(&client.queue(name).unwrap()).await;
    }
    assert_ne!(cluster.master_of(&format!("redelay:{{{victim}}}:msg")), victim_port, "a replica took over");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sharded_queue_spans_every_master_and_a_master_dies_under_its_subscriptions() {
    let cluster = common::Cluster::start();
    let client = Client::builder(&cluster.url).response_timeout(Duration::from_secs(3)).connect().await.unwrap();
    let name = "sharded";
    let shards = 16;
    let q = client.queue_with(name, QueueOptions::shards(shards)).unwrap();
    let masters: HashSet<u16> = cluster.ports().into_iter().filter(|&p| is_master(p)).collect();
    assert_eq!(masters.len(), 3);
    let owner = |i: u32| cluster.master_of(&format!("redelay:{{{name}/{i}}}:msg"));

    // Messages land on every master, and every operation works across them.
    let msgs: Vec<Message> = (0..600)
        .map(|i| Message::new(format!("m{i}").into_bytes()).id(format!("m{i}")).delay(ms(1000 + i * 10)))
        .collect();
    q.publish_batch(msgs).await.unwrap();
    let mut per_master: HashMap<u16, i64> = HashMap::new();
    for i in 0..shards {
        let port = owner(i);
        let mut con = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap().get_connection().unwrap();
        let n: i64 = redis::cmd("ZCARD").arg(format!("redelay:{{{name}/{i}}}:sched")).query(&mut con).unwrap();
        *per_master.entry(port).or_default() += n;
    }
    assert_eq!(per_master.keys().copied().collect::<HashSet<_>>(), masters, "{per_master:?}");
    assert!(per_master.values().all(|&n| n > 0), "{per_master:?}");
    assert_eq!(per_master.values().sum::<i64>(), 600);
    let s = q.stats().await.unwrap();
    assert_eq!((s.total, s.scheduled), (600, 600));
    assert_eq!(q.peek("m7").await.unwrap().unwrap().state, State::Scheduled);
    assert_eq!(
        q.list(State::Scheduled, 10, 3).await.unwrap().items.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
        ["m10", "m11", "m12"]
    );
    common::assert_verified(&q).await;

    // Two live subscriptions over all shards, then the master of one shard is killed.
    let acked: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    let mut subs = Vec::new();
    for _ in 0..2 {
        let a = acked.clone();
        let handler = move |d: Delivery| {
            let a = a.clone();
            async move {
                *a.lock().unwrap().entry(d.id().to_string()).or_default() += 1;
                Ok::<(), Failure>(())
            }
        };
        subs.push(q.subscribe(handler, SubscribeOptions::concurrency(4)).await.unwrap());
    }
    // Replication is asynchronous: let it catch up with the publishes, then kill a master.
    tokio::time::sleep(ms(1000)).await;
    let victim = owner(0);
    cluster.kill(victim);
    let t = Instant::now();
    while acked.lock().unwrap().len() < 600 {
        if t.elapsed() > Duration::from_secs(60) {
            let counters: Vec<_> = subs.iter().map(|s| (s.counters(), s.last_error())).collect();
            panic!("only {} of 600 acked after failover; counters {counters:#?}", acked.lock().unwrap().len());
        }
        tokio::time::sleep(ms(100)).await;
    }
    for s in &subs {
        s.close().await;
    }
    assert_eq!(acked.lock().unwrap().len(), 600, "every message acked");
    settled_after_failover(&q).await;
    assert_ne!(owner(0), victim, "a replica took over");
}

/// Once the cluster answers again: no dead letter and the invariant holds. An ack lost in the
/// failover shows up as a message still there (redelivered later), never as a loss.
async fn settled_after_failover(q: &redelay::Queue) {
    let t = Instant::now();
    let s = loop {
        match q.stats().await {
            Ok(s) => break s,
            Err(e) => assert!(t.elapsed() < Duration::from_secs(10), "{e}"),
        }
    };
    assert_eq!(s.dead, 0, "{}", q.name());
    common::assert_verified(q).await;
}

fn is_master(port: u16) -> bool {
    let mut con = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap().get_connection().unwrap();
    let info: String = redis::cmd("INFO").arg("replication").query(&mut con).unwrap();
    info.contains("role:master")
}
