//! Redis Cluster: queues on different masters, every operation without CROSSSLOT, and a
//! master killed under a running subscription; a sharded queue over all masters, and a master
//! killed under its subscriptions; batches published while their queue's slot migrates to
//! another master; a sharded queue with a shard down fails its reads naming that shard; a
//! publish that times out is not sent again, and one sent again after its
//! connection dropped is stored once; long runs (bulk actions by ids or by search, respawns,
//! purges) over a sharded queue with a shard down finish the other shards and say how far they
//! got; a burst of calls failing on a lost master leaves the live masters answering.
mod common;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use redelay::{
    BulkAction, BulkOptions, Client, Delivery, Due, Failure, Message, QueueOptions, Select, State, SubscribeOptions,
};

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

    // Messages land on every master, and every operation works across them. Due times are
    // absolute: a delay counts from when each shard's call runs, and on a loaded machine calls
    // to different shards can run more than the 10 ms apart that order m10, m11, m12 below.
    let base = SystemTime::now() + ms(1000);
    let msgs: Vec<Message> = (0..600)
        .map(|i| Message::new(format!("m{i}").into_bytes()).id(format!("m{i}")).at(base + ms(i * 10)))
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

/// A shard whose master and replica are both gone, on a cluster that serves the other slots
/// (`cluster-require-full-coverage no`): pulls and a new subscription still deliver every
/// message of the healthy shards; only the lost shards' wait for them to come back. The master
/// lost is the one holding the shard count: a handle that read it before keeps it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sharded_queue_with_one_shard_down_delivers_from_the_others() {
    let cluster = common::Cluster::start();
    cluster.serve_partial();
    let client = Client::builder(&cluster.url).response_timeout(Duration::from_secs(2)).connect().await.unwrap();
    let (name, shards) = ("partial", 16);
    let q = client.queue_with(name, QueueOptions::shards(shards)).unwrap();
    let owner = |i: u32| cluster.master_of(&format!("redelay:{{{name}/{i}}}:msg"));
    let ids: Vec<String> = (0..200).map(|i| format!("p{i}")).collect();
    q.publish_batch(ids.iter().map(|id| Message::new(id.as_bytes().to_vec()).id(id.clone())).collect()).await.unwrap();

    // The master holding the queue's shard count (its own tag) and that master's replica die
    // together: their slots, and the shards in them, have no owner.
    let victim = cluster.master_of(&format!("redelay:{{{name}}}:meta"));
    let healthy: HashSet<String> =
        ids.iter().filter(|id| owner(redelay::shard_of(id, shards)) != victim).cloned().collect();
    assert!(!healthy.is_empty() && healthy.len() < ids.len(), "{} of {}", healthy.len(), ids.len());
    let replica = cluster.replica_of(victim);
    cluster.kill(victim);
    cluster.kill(replica);

    // Pulls: half the healthy messages, acked.
    let mut pulled = HashSet::new();
    let t = Instant::now();
    while pulled.len() < healthy.len() / 2 {
        assert!(t.elapsed() < Duration::from_secs(60), "pulled {} of {}", pulled.len(), healthy.len());
        for d in q.fetch(10, ms(500)).await.unwrap() {
            assert!(healthy.contains(d.id()), "{} is on the lost shard", d.id());
            d.ack().await.unwrap();
            pulled.insert(d.id().to_string());
        }
    }
    // A subscription started now: the rest of them.
    let acked: Arc<Mutex<HashSet<String>>> = Arc::default();
    let a = acked.clone();
    let handler = move |d: Delivery| {
        let a = a.clone();
        async move {
            a.lock().unwrap().insert(d.id().to_string());
            Ok::<(), Failure>(())
        }
    };
    let sub = q.subscribe(handler, SubscribeOptions::concurrency(4)).await.unwrap();
    let t = Instant::now();
    while pulled.len() + acked.lock().unwrap().len() < healthy.len() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "{} pulled + {} acked of {}; {:?}",
            pulled.len(),
            acked.lock().unwrap().len(),
            healthy.len(),
            sub.last_error()
        );
        tokio::time::sleep(ms(100)).await;
    }
    sub.close().await;
    let got: HashSet<String> = pulled.union(&acked.lock().unwrap()).cloned().collect();
    assert_eq!(got, healthy);
    assert!(sub.last_error().is_some(), "the lost shard's failures are reported");
}

/// A sharded queue with one shard's master and replica gone: its counts, listings and check
/// fail (a partial count would be wrong), with a `Connection` error naming the first lost
/// shard by index and hash tag, so that an operator knows which node to look at; a plain
/// queue on a live master and the lost shard's neighbours by id still answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_of_a_sharded_queue_with_a_shard_down_name_the_shard() {
    let cluster = common::Cluster::start();
    cluster.serve_partial();
    let client = Client::builder(&cluster.url).response_timeout(Duration::from_secs(2)).connect().await.unwrap();
    let (name, shards) = ("named", 16);
    let q = client.queue_with(name, QueueOptions::shards(shards)).unwrap();
    let ids: Vec<String> = (0..64).map(|i| format!("n{i}")).collect();
    q.publish_batch(ids.iter().map(|id| Message::new(id.as_bytes().to_vec()).id(id.clone())).collect()).await.unwrap();
    assert_eq!(q.stats().await.unwrap().total, 64);
    // A master other than the one holding the shard count: every handle can read the count.
    let meta = cluster.master_of(&format!("redelay:{{{name}}}:meta"));
    let owner = |i: u32| cluster.master_of(&format!("redelay:{{{name}/{i}}}:msg"));
    let victim = (0..shards).map(owner).find(|&p| p != meta).expect("a shard off the count's master");
    let lost: Vec<u32> = (0..shards).filter(|&i| owner(i) == victim).collect();
    let first = lost[0];
    let alive = ids.iter().find(|id| !lost.contains(&redelay::shard_of(id, shards))).unwrap();
    cluster.lose_master(victim);

    let fresh = client.queue_stored(name).await.unwrap();
    assert_eq!(fresh.shards(), shards);
    let named = |what: &str, e: redelay::Error| {
        assert_eq!(e.kind(), redelay::ErrorKind::Connection, "{what}: {e}");
        let want = format!("shard {first} of queue \"{name}\" (hash tag {{{name}/{first}}})");
        assert!(e.message().contains(&want), "{what}: {e} (lost shards {lost:?})");
    };
    for h in [&q, &fresh] {
        named("stats", h.stats().await.unwrap_err());
        named("list", h.list(State::Scheduled, 0, 10).await.unwrap_err());
        named("verify", h.verify().await.unwrap_err());
        assert_eq!(h.peek(alive).await.unwrap().unwrap().id, *alive, "a live shard's message");
        // The Redis clock is shard 0's.
        match h.redis_now().await {
            Ok(_) => assert_ne!(first, 0),
            Err(e) => named("redis_now", e),
        }
    }
}

/// A burst of calls failing together on a lost master (one master and its replica killed, the
/// cluster serving the other slots): twenty sharded queues' stats at once, hundreds of calls on
/// the lost node, beside plain queues on the masters that stay. Each sharded read fails naming
/// its shard, each plain read answers, in the burst and after it. Before the fix in
/// third_party/redis (PATCHED.md) the cluster client wedged under such a burst: its slot
/// refresh waited forever for a lock granted to a request it no longer polled, and every call
/// to the live masters timed out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_calls_failing_on_a_lost_master_leaves_the_live_masters_answering() {
    let cluster = common::Cluster::start();
    cluster.serve_partial();
    let client = Client::builder(&cluster.url).response_timeout(Duration::from_secs(10)).connect().await.unwrap();
    let owner = |tag: &str| cluster.master_of(&format!("redelay:{{{tag}}}:msg"));
    let registry = cluster.master_of(&format!("{}:queues", client.prefix()));
    let victim = cluster.ports().into_iter().find(|&p| p != registry && is_master(p)).expect("another master");
    let shards = 16;
    // Sharded queues whose shard count lives on a master that stays, with shards on the victim.
    let lost = |name: &str| (0..shards).find(|&i| owner(&format!("{name}/{i}")) == victim);
    let sharded: Vec<(redelay::Queue, u32)> = (0..)
        .map(|k| format!("burst{k}"))
        .filter(|n| owner(n) != victim)
        .filter_map(|n| lost(&n).map(|first| (client.queue_with(&n, QueueOptions::shards(shards)).unwrap(), first)))
        .take(20)
        .collect();
    let plain: Vec<redelay::Queue> = (0..)
        .map(|k| format!("steady{k}"))
        .filter(|n| owner(n) != victim)
        .take(2)
        .map(|n| client.queue(&n).unwrap())
        .collect();
    for q in sharded.iter().map(|(q, _)| q).chain(&plain) {
        q.publish_batch((0..32).map(|i| Message::new(b"x".to_vec()).id(format!("m{i}"))).collect()).await.unwrap();
    }
    cluster.lose_master(victim);

    for round in 0..3 {
        let (bad, good) = tokio::join!(
            futures_util::future::join_all(sharded.iter().map(|(q, _)| q.stats())),
            futures_util::future::join_all(plain.iter().map(|q| q.stats())),
        );
        for ((q, first), r) in sharded.iter().zip(bad) {
            let e = r.expect_err(q.name());
            assert_eq!(e.kind(), redelay::ErrorKind::Connection, "round {round}, {}: {e}", q.name());
            let want = format!("shard {first} of queue \"{}\"", q.name());
            assert!(e.message().contains(&want), "round {round}: {e}");
        }
        for (q, r) in plain.iter().zip(good) {
            assert_eq!(r.map(|s| s.total).map_err(|e| e.to_string()), Ok(32), "round {round}, {}", q.name());
        }
    }
}

/// Records (`HLEN msg`) and dead letters (`ZCARD died`) of shard `i` of queue `name`, read on
/// its own master.
fn shard_counts(cluster: &common::Cluster, name: &str, i: u32) -> (u64, u64) {
    let tag = format!("redelay:{{{name}/{i}}}");
    let port = cluster.master_of(&tag);
    let mut con = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap().get_connection().unwrap();
    let records: u64 = redis::cmd("HLEN").arg(format!("{tag}:msg")).query(&mut con).unwrap();
    let dead: u64 = redis::cmd("ZCARD").arg(format!("{tag}:died")).query(&mut con).unwrap();
    (records, dead)
}

/// A 4-shard queue with one shard's master and replica gone (`Cluster::lose_master`), for the
/// long runs below: 400 dead letters (`d0`..) and 400 messages due in an hour (`w0`..).
struct ShardDown {
    q: redelay::Queue,
    name: String,
    shards: u32,
    lost: Vec<u32>,
    live: Vec<u32>,
    dead: Vec<String>,
    waiting: Vec<String>,
    /// `live_counts` before the master was lost.
    before: Vec<(u64, u64)>,
}

impl ShardDown {
    /// The first queue `{stem}0`, `{stem}1`… whose lost master holds neither its shard count
    /// (the queue opens) nor its last shard (a live shard comes after the first lost one: a run
    /// that stopped there would leave that one undone). An answer of a live shard must not time
    /// out (it might have been done, uncounted), even beside the other tests' clusters: the
    /// lost shard's calls fail at once (refused), or within the 10 s of `client`.
    async fn start(cluster: &common::Cluster, client: &Client, stem: &str) -> ShardDown {
        let shards = 4;
        let owner = |name: &str, i: u32| cluster.master_of(&format!("redelay:{{{name}/{i}}}:msg"));
        let (name, victim) = (0..)
            .map(|k| format!("{stem}{k}"))
            .find_map(|name| {
                let meta = cluster.master_of(&format!("redelay:{{{name}}}:meta"));
                let owners: Vec<u16> = (0..shards).map(|i| owner(&name, i)).collect();
                let first = owners.iter().position(|&p| p != meta)?;
                let victim = owners[first];
                owners[first..].iter().any(|&p| p != victim).then_some((name, victim))
            })
            .unwrap();
        let q = client.queue_with(&name, QueueOptions::shards(shards)).unwrap();
        let dead: Vec<String> = (0..400).map(|i| format!("d{i}")).collect();
        q.publish_batch(dead.iter().map(|id| Message::new(b"x".to_vec()).id(id.clone()).max_attempts(1)).collect())
            .await
            .unwrap();
        common::nack_all(&q).await;
        let waiting: Vec<String> = (0..400).map(|i| format!("w{i}")).collect();
        let hour = Duration::from_secs(3600);
        q.publish_batch(waiting.iter().map(|id| Message::new(b"x".to_vec()).id(id.clone()).delay(hour)).collect())
            .await
            .unwrap();
        assert_eq!((q.stats().await.unwrap().dead, q.stats().await.unwrap().total), (400, 800));
        let lost: Vec<u32> = (0..shards).filter(|&i| owner(&name, i) == victim).collect();
        let live: Vec<u32> = (0..shards).filter(|i| !lost.contains(i)).collect();
        let mut down = ShardDown { q, name, shards, lost, live, dead, waiting, before: Vec::new() };
        down.before = down.live_counts(cluster);
        cluster.lose_master(victim);
        down
    }

    /// How many of `ids` are on a live shard.
    fn on_live(&self, ids: &[String]) -> u64 {
        ids.iter().filter(|id| !self.lost.contains(&redelay::shard_of(id, self.shards))).count() as u64
    }

    /// `shard_counts` of each live shard.
    fn live_counts(&self, cluster: &common::Cluster) -> Vec<(u64, u64)> {
        self.live.iter().map(|&i| shard_counts(cluster, &self.name, i)).collect()
    }

    /// Asserts that `e` (of the run `what`) is a `Connection` error naming the first lost shard.
    fn named(&self, what: &str, e: &redelay::Error) {
        assert_eq!(e.kind(), redelay::ErrorKind::Connection, "{what}: {e}");
        let (name, first) = (&self.name, self.lost[0]);
        let want = format!("shard {first} of queue \"{name}\" (hash tag {{{name}/{first}}}) could not be reached");
        assert!(e.message().contains(&want), "{what}: {e} (lost shards {:?})", self.lost);
    }
}

/// Long runs over a sharded queue with one shard's master and replica gone: a bulk purge and
/// cancel by ids, a respawn and a purge of every dead letter. Each ends with the failure's kind
/// (`Connection`), naming the lost shard, after doing everything on the other shards (each
/// shard's calls are its own: one shard out of reach does not stop the others), and its
/// `so_far` counts exactly that, as Redis shows on each live shard. A purge of "the oldest n"
/// must read every shard first: it fails before doing anything, and says no totals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_runs_over_a_sharded_queue_with_a_shard_down_finish_the_others_and_say_so() {
    let cluster = common::Cluster::start();
    cluster.serve_partial();
    let client = Client::builder(&cluster.url).response_timeout(Duration::from_secs(10)).connect().await.unwrap();
    let down = ShardDown::start(&cluster, &client, "long").await;
    let (q, dead, waiting, before) = (&down.q, &down.dead, &down.waiting, &down.before);
    let live_counts = || down.live_counts(&cluster);

    // A bulk purge of half the dead letters, by id: the live shards' share is gone.
    let half: Vec<String> = dead.iter().step_by(2).cloned().collect();
    let e = q.bulk(&BulkOptions::ids(BulkAction::Purge, half.clone())).await.unwrap_err();
    down.named("bulk purge", &e);
    let purged = down.on_live(&half);
    assert_eq!(e.so_far(), Some(&[("matched", 200), ("done", purged), ("scanned", 0)][..]), "{e}");
    let after: Vec<(u64, u64)> = live_counts();
    let gone: u64 = before.iter().zip(&after).map(|(b, a)| b.1 - a.1).sum();
    assert_eq!(gone, purged, "dead letters purged on the live shards: {before:?} -> {after:?}");

    // A purge of the oldest must merge every shard's list first: nothing done, no totals.
    let e = q.purge_dead(Select::Oldest(10)).await.unwrap_err();
    down.named("purge oldest", &e);
    assert_eq!(e.so_far(), None, "{e}");
    assert_eq!(live_counts(), after);

    // A respawn of every dead letter: each live shard's are respawned (due now).
    let mut totals = Vec::new();
    let e = q.respawn_with_progress(Select::All, redelay::RespawnExpiry::Keep, |n| totals.push(n)).await.unwrap_err();
    down.named("respawn", &e);
    let respawned = down.on_live(dead) - purged;
    assert_eq!(e.so_far(), Some(&[("count", respawned)][..]), "{e}");
    assert_eq!(totals.last(), Some(&respawned), "{totals:?}");
    let after_respawn = live_counts();
    assert!(after_respawn.iter().zip(&after).all(|(n, a)| n.1 == 0 && n.0 == a.0), "{after:?} -> {after_respawn:?}");

    // Dead again (pulls leave the lost shards out), then purged all: the live shards' only.
    common::nack_all(q).await;
    let e = q.purge_dead_with_progress(Select::All, |_| {}).await.unwrap_err();
    down.named("purge all", &e);
    assert_eq!(e.so_far(), Some(&[("count", respawned)][..]), "{e}");
    let after_purge = live_counts();
    let gone: u64 = after_respawn.iter().zip(&after_purge).map(|(b, a)| b.0 - a.0).sum();
    assert_eq!((gone, after_purge.iter().map(|c| c.1).sum::<u64>()), (respawned, 0), "{after_purge:?}");

    // A bulk cancel by id (one call per message): every waiting message of a live shard is
    // cancelled, and counted.
    let e = q.bulk(&BulkOptions::ids(BulkAction::Cancel, waiting.clone())).await.unwrap_err();
    down.named("bulk cancel", &e);
    let cancelled = down.on_live(waiting);
    assert_eq!(e.so_far(), Some(&[("matched", 400), ("done", cancelled), ("scanned", 0)][..]), "{e}");
    let left: u64 = live_counts().iter().map(|c| c.0).sum();
    assert_eq!(left, 0, "records left on the live shards");
}

/// Bulk actions by search over a sharded queue with one shard's master and replica gone (a
/// purge of dead letters, then a cancel): the search goes through the shards one after another,
/// and the lost shard stops only its own part — the shards after it are still searched and
/// acted on to their end. Each ends with a `Connection` error naming the first lost shard, its
/// `so_far` counts exactly what the live shards held and had done, as Redis shows on each, and
/// the last progress report says the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_by_search_over_a_sharded_queue_with_a_shard_down_searches_the_others_and_says_so() {
    let cluster = common::Cluster::start();
    cluster.serve_partial();
    let client = Client::builder(&cluster.url).response_timeout(Duration::from_secs(10)).connect().await.unwrap();
    let down = ShardDown::start(&cluster, &client, "found").await;
    let (q, before) = (&down.q, &down.before);
    let totals = |r: &redelay::BulkReport| vec![("matched", r.matched), ("done", r.done), ("scanned", r.scanned)];

    // A purge of the dead letters found by id: every live shard's are gone, its records all
    // looked at.
    let mut reports = Vec::new();
    let found = BulkOptions::search(BulkAction::Purge, redelay::Search::IdPrefix("d".into()));
    let e = q.bulk_with_progress(&found, |r| reports.push(r)).await.unwrap_err();
    down.named("purge by search", &e);
    let purged = down.on_live(&down.dead);
    let want = redelay::BulkReport { matched: purged, done: purged, scanned: purged + down.on_live(&down.waiting) };
    assert_eq!(e.so_far(), Some(&totals(&want)[..]), "{e}");
    assert_eq!(reports.last(), Some(&want), "{reports:?}");
    let after = down.live_counts(&cluster);
    let gone: u64 = before.iter().zip(&after).map(|(b, a)| b.0 - a.0).sum();
    assert_eq!((gone, after.iter().map(|c| c.1).sum::<u64>()), (purged, 0), "{before:?} -> {after:?}");

    // A cancel of the waiting messages found by id: none is left on a live shard.
    let mut reports = Vec::new();
    let found = BulkOptions::search(BulkAction::Cancel, redelay::Search::IdPrefix("w".into()));
    let e = q.bulk_with_progress(&found, |r| reports.push(r)).await.unwrap_err();
    down.named("cancel by search", &e);
    let cancelled = down.on_live(&down.waiting);
    let want = redelay::BulkReport { matched: cancelled, done: cancelled, scanned: cancelled };
    assert_eq!(e.so_far(), Some(&totals(&want)[..]), "{e}");
    assert_eq!(reports.last(), Some(&want), "{reports:?}");
    let left: u64 = down.live_counts(&cluster).iter().map(|c| c.0).sum();
    assert_eq!(left, 0, "records left on the live shards");
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

/// A queue's slot migrated to another master (`CLUSTER SETSLOT … MIGRATING/IMPORTING`,
/// `MIGRATE`, `SETSLOT … NODE`) while batches of 1,000 messages (10 pipelined calls each) are
/// published to it: the calls may meet ASK, TRYAGAIN, MOVED and NOSCRIPT on the way (redis-rs
/// follows them), and each batch is still stored in its order — whole, or (when it failed)
/// exactly its first calls — after the batches before it. (In these runs redis-rs kept the
/// calls in order; `scenarios.rs` sends a batch's calls out of order on purpose.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_published_while_their_queue_migrates_to_another_master_keep_their_order() {
    let cluster = common::Cluster::start();
    let client = Client::builder(&cluster.url).response_timeout(Duration::from_secs(5)).connect().await.unwrap();
    let name = "migrating";
    let key = format!("redelay:{{{name}}}:msg");
    let source = cluster.master_of(&key);
    let target = cluster.ports().into_iter().find(|&p| p != source && is_master(p)).unwrap();
    let masters: Vec<u16> = cluster.ports().into_iter().filter(|&p| is_master(p)).collect();
    let q = client.queue(name).unwrap();
    let at = std::time::SystemTime::now() + Duration::from_secs(3600); // one due time: publish order
    let batch = |k: usize| -> Vec<Message> {
        (0..1000).map(|i| Message::new(format!("{k}/{i}").into_bytes()).id(format!("{k}/{i}")).at(at)).collect()
    };
    q.publish_batch(batch(0)).await.unwrap();

    // The migration, on a thread of its own, while the batches go out.
    let migrated = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let done = migrated.clone();
    let mover = std::thread::spawn(move || {
        let con = |p: u16| redis::Client::open(format!("redis://127.0.0.1:{p}")).unwrap().get_connection().unwrap();
        let (mut src, mut dst) = (con(source), con(target));
        let id = |c: &mut redis::Connection| -> String { redis::cmd("CLUSTER").arg("MYID").query(c).unwrap() };
        let (src_id, dst_id) = (id(&mut src), id(&mut dst));
        let slot: u16 = redis::cmd("CLUSTER").arg("KEYSLOT").arg(&key).query(&mut src).unwrap();
        let setslot = |c: &mut redis::Connection, how: &str, node: &str| {
            let _: () = redis::cmd("CLUSTER").arg("SETSLOT").arg(slot).arg(how).arg(node).query(c).unwrap();
        };
        std::thread::sleep(ms(100));
        setslot(&mut dst, "IMPORTING", &src_id);
        setslot(&mut src, "MIGRATING", &dst_id);
        loop {
            let keys: Vec<String> =
                redis::cmd("CLUSTER").arg("GETKEYSINSLOT").arg(slot).arg(1).query(&mut src).unwrap();
            if keys.is_empty() {
                break;
            }
            // One key at a time, with publishes in between: the queue is half here, half there.
            let _: () = redis::cmd("MIGRATE")
                .arg("127.0.0.1")
                .arg(target)
                .arg("")
                .arg(0)
                .arg(10_000)
                .arg("KEYS")
                .arg(&keys)
                .query(&mut src)
                .unwrap();
            std::thread::sleep(ms(20));
        }
        setslot(&mut dst, "NODE", &dst_id);
        setslot(&mut src, "NODE", &dst_id);
        for p in masters.into_iter().filter(|&p| p != source && p != target) {
            setslot(&mut con(p), "NODE", &dst_id);
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
    });

    // Batch k is stored whole, or its first j calls (j * 100 messages) when it failed.
    let mut stored: Vec<(usize, Result<(), String>)> = vec![(0, Ok(()))];
    let mut after = 0;
    let mut k = 1;
    while after < 3 {
        if migrated.load(std::sync::atomic::Ordering::SeqCst) {
            after += 1;
        }
        let r = q.publish_batch(batch(k)).await.map(|_| ()).map_err(|e| e.to_string());
        stored.push((k, r));
        k += 1;
        assert!(k < 2000, "the migration did not finish");
    }
    mover.join().unwrap();
    assert_eq!(cluster.master_of(&format!("redelay:{{{name}}}:msg")), target);

    let mut ids = Vec::new();
    loop {
        let page = q.list(State::Scheduled, ids.len(), 1000).await.unwrap();
        if page.items.is_empty() {
            break;
        }
        ids.extend(page.items.into_iter().map(|m| m.id));
    }
    let mut at_id = 0;
    for (k, r) in &stored {
        let n = (0..1000).take_while(|i| ids.get(at_id + i).is_some_and(|id| *id == format!("{k}/{i}"))).count();
        match r {
            Ok(()) => assert_eq!(n, 1000, "batch {k} (stored): {n} of its messages in order at {at_id}"),
            Err(e) => assert!(n % 100 == 0, "batch {k} failed ({e}) and stored {n} messages: not whole calls"),
        }
        at_id += n;
    }
    assert_eq!(at_id, ids.len(), "messages stored beyond the batches' ids in order: {:?}", &ids[at_id..]);
    let failed: Vec<_> = stored.iter().filter_map(|(k, r)| r.as_ref().err().map(|e| (k, e))).collect();
    println!("{} batches, {} failed: {failed:?}", stored.len(), failed.len());
    common::assert_verified(&q).await;
}

/// A publish whose reply does not come in time fails with a Timeout and is not sent again by the
/// cluster client (redis-rs resends a call only when its connection drops): so the message is
/// stored at most once, and the caller, who saw the error, decides whether to publish it again
/// (with an id, idempotently). RELIABILITY.md, "A lost reply".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_that_times_out_in_a_cluster_is_not_sent_again() {
    let cluster = common::Cluster::start();
    let client = Client::builder(&cluster.url).response_timeout(ms(300)).connect().await.unwrap();
    let q = client.queue("timed-out").unwrap();
    q.publish(Message::new(b"first".to_vec()).id("first")).await.unwrap();
    // A script that keeps the queue's master busy for a second: the publish waits behind it.
    let port = cluster.master_of("redelay:{timed-out}:msg");
    let (started, busy) = std::sync::mpsc::channel();
    let blocker = std::thread::spawn(move || {
        let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap().get_connection().unwrap();
        let script = "local t = redis.call('TIME'); local s = t[1] * 1000000 + t[2]; \
                      repeat local n = redis.call('TIME') until n[1] * 1000000 + n[2] - s > 1000000; return 1";
        started.send(()).unwrap();
        let _: i64 = redis::cmd("EVAL").arg(script).arg(0).query(&mut c).unwrap();
    });
    busy.recv().unwrap();
    std::thread::sleep(ms(200));
    let err = q.publish(Message::new(b"second".to_vec())).await.unwrap_err();
    assert_eq!(err.kind(), redelay::ErrorKind::Timeout, "{err}");
    blocker.join().unwrap();
    // The timed-out call ran at most once: after the script (Redis 7.0), or not at all when the
    // server dropped it with the connection the client gave up on (Valkey 8, Redis 8). A
    // resend would have been sent at once.
    tokio::time::sleep(ms(500)).await;
    let stats = q.stats().await.unwrap();
    assert!((1..=2).contains(&stats.total), "\"first\" and at most one \"second\": {stats:?}");
    assert!(q.verify().await.unwrap().is_ok());
}

/// An ack, a nack, a cancel, a respawn and a purge whose connection drops after Redis ran them
/// are sent again by the cluster client, unasked: each resend gets the first run's answer from
/// the queue handle's replay key, not "lease lost", "no such id" or a count of 0, and changes
/// nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settles_and_cancels_sent_again_after_their_connection_dropped_get_their_first_answer() {
    let cluster = common::Cluster::start();
    let proxy = behind_proxy(&cluster, "redelay:{settled}:msg").await;
    let client = Client::builder(&cluster.url).response_timeout(Duration::from_secs(5)).connect().await.unwrap();
    let q = client.queue("settled").unwrap();
    for id in ["warm-ack", "warm-nack", "warm-cancel", "to-ack", "to-nack", "to-cancel"] {
        q.publish(Message::new(b"x".to_vec()).id(id).max_attempts(5)).await.unwrap();
    }
    for id in ["dead-1", "dead-2", "dead-3"] {
        q.publish(Message::new(b"x".to_vec()).id(id).max_attempts(1)).await.unwrap();
    }
    let got = q.fetch(10, Duration::from_secs(2)).await.unwrap();
    let leased = |id: &str| got.iter().find(|d| d.id() == id).unwrap();
    assert_eq!(got.len(), 9);
    for id in ["dead-1", "dead-2", "dead-3"] {
        assert!(leased(id).nack(None, "broken").await.unwrap(), "dead at max_attempts 1");
    }
    // Each script cached on that master first: a lost reply of a NOSCRIPT error ran nothing.
    leased("warm-ack").ack().await.unwrap();
    assert!(!leased("warm-nack").nack(Some(Duration::from_secs(3600)), "later").await.unwrap());
    assert!(q.cancel("warm-cancel").await.unwrap());
    assert_eq!(q.respawn(Select::Ids(vec!["none".into()])).await.unwrap(), 0);
    assert_eq!(q.purge_dead(Select::Ids(vec!["none".into()])).await.unwrap(), 0);

    let ack = losing_reply(&proxy, &client, b"to-ack", || leased("to-ack").ack()).await;
    ack.expect("the first run's answer: acknowledged");
    let later = Some(Duration::from_secs(3600));
    let nack = losing_reply(&proxy, &client, b"to-nack", || leased("to-nack").nack(later, "later")).await;
    assert!(!nack.expect("the first run's answer: retried"), "retried, not dead");
    let cancel = losing_reply(&proxy, &client, b"to-cancel", || q.cancel("to-cancel")).await;
    assert!(cancel.unwrap(), "the first run's answer: deleted");
    let respawn = losing_reply(&proxy, &client, b"dead-1", || q.respawn(Select::Ids(vec!["dead-1".into()]))).await;
    assert_eq!(respawn.unwrap(), 1, "the first run's count");
    let purge = losing_reply(&proxy, &client, b"oldest", || q.purge_dead(Select::All)).await;
    assert_eq!(purge.unwrap(), 2, "the first run's count: dead-2 and dead-3");

    let respawned = q.peek("dead-1").await.unwrap().expect("respawned");
    assert_eq!((respawned.state, respawned.attempts), (State::Ready, 0), "due now, attempts reset");
    assert!(q.peek("dead-2").await.unwrap().is_none());
    assert!(q.peek("to-ack").await.unwrap().is_none());
    assert!(q.peek("to-cancel").await.unwrap().is_none());
    let nacked = q.peek("to-nack").await.unwrap().expect("scheduled again");
    assert_eq!((nacked.state, nacked.attempts), (State::Scheduled, 1), "nacked once");
    // A later call deletes the answered calls' fields: the last call's reply alone is kept,
    // in a key that expires.
    assert!(!q.cancel("to-cancel").await.unwrap());
    let port = cluster.master_of("redelay:{settled}:msg");
    let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap().get_connection().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("redelay:{settled}:r:*").query(&mut c).unwrap();
    assert_eq!(keys.len(), 1, "one replay key per queue handle: {keys:?}");
    let fields: HashMap<String, String> = redis::cmd("HGETALL").arg(&keys[0]).query(&mut c).unwrap();
    assert_eq!(fields.into_values().collect::<Vec<_>>(), vec!["0".to_string()], "the last cancel's reply");
    let ttl: i64 = redis::cmd("PTTL").arg(&keys[0]).query(&mut c).unwrap();
    assert!(ttl > 0 && ttl <= 300_000, "{ttl}");
    assert!(q.verify().await.unwrap().is_ok());
}

/// Runs `call` with the next reply that carries `pattern` lost on its way back (the cluster
/// client then sends the call again by itself), checks that the fault was injected, and waits
/// until the client has reconnected.
async fn losing_reply<T, F: std::future::Future<Output = T>>(
    proxy: &common::FaultProxy,
    client: &Client,
    pattern: &[u8],
    call: impl FnOnce() -> F,
) -> T {
    use std::sync::atomic::Ordering::SeqCst;
    let lost = proxy.lost.load(SeqCst);
    proxy.lose_next_reply_of(pattern);
    let answer = call().await; // made after the fault is armed: a settle is sent when called
    assert_eq!(proxy.lost.load(SeqCst), lost + 1, "the fault was injected");
    common::reconnected(client).await;
    answer
}

/// A master reached only through a fault proxy: it announces the proxy's port to the cluster
/// (its bus keeps its own), so every client connection to it crosses the proxy.
async fn behind_proxy(cluster: &common::Cluster, key: &str) -> common::FaultProxy {
    let port = cluster.master_of(key);
    let proxy = common::FaultProxy::start(port).await;
    let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap().get_connection().unwrap();
    let set = |c: &mut redis::Connection, k: &str, v: u16| {
        let _: () = redis::cmd("CONFIG").arg("SET").arg(k).arg(v).query(c).unwrap();
    };
    set(&mut c, "cluster-announce-bus-port", port + 10000);
    set(&mut c, "cluster-announce-port", proxy.port);
    let t = Instant::now();
    while cluster.ports().into_iter().any(|p| {
        let Ok(mut c) = redis::Client::open(format!("redis://127.0.0.1:{p}")).and_then(|c| c.get_connection()) else {
            return false;
        };
        let nodes: String = redis::cmd("CLUSTER").arg("NODES").query(&mut c).unwrap_or_default();
        !nodes.contains(&format!("127.0.0.1:{}@", proxy.port))
    }) {
        assert!(t.elapsed() < Duration::from_secs(20), "the cluster did not learn the proxy's port");
        tokio::time::sleep(ms(100)).await;
    }
    proxy
}

/// A publish whose connection drops after Redis ran it is sent again by the cluster client,
/// unasked (redis-rs reconnects and resends): the resend gets the first run's reply from the
/// call's replay key, so the message is stored once, with the id the first run gave it. The
/// same for a batch of several calls whose replies are all lost at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publishes_sent_again_after_their_connection_dropped_are_stored_once() {
    use std::sync::atomic::Ordering::SeqCst;
    let cluster = common::Cluster::start();
    let proxy = behind_proxy(&cluster, "redelay:{resent}:msg").await;
    let client = Client::builder(&cluster.url).response_timeout(Duration::from_secs(5)).connect().await.unwrap();
    let q = client.queue("resent").unwrap();
    let at = std::time::SystemTime::now() + Duration::from_secs(3600); // one due time: publish order
    q.publish(Message::new(b"first".to_vec()).at(at)).await.unwrap();

    let p = losing_reply(&proxy, &client, b"cut-one", || q.publish(Message::new(b"cut-one".to_vec()).at(at))).await;
    let p = p.unwrap();
    assert_eq!((p.id.as_str(), p.status), ("2", redelay::PublishStatus::Stored), "the first run's reply");

    // 250 messages: three calls, pipelined; the cut takes the replies of whatever was in flight.
    let batch: Vec<Message> = (0..250).map(|i| Message::new(format!("b{i}").into_bytes()).at(at)).collect();
    proxy.lose_next_reply_of(b"b120");
    common::reconnected(&client).await;
    let got = q.publish_batch(batch).await.unwrap();
    assert_eq!(proxy.lost.load(SeqCst), 2, "the fault was injected");
    let ids: Vec<String> = got.iter().map(|p| p.id.clone()).collect();
    assert_eq!(ids, (3..253).map(|i| i.to_string()).collect::<Vec<_>>());

    let page = q.list(State::Scheduled, 0, 1000).await.unwrap();
    let bodies: Vec<String> = page.items.iter().map(|m| String::from_utf8(m.body.clone()).unwrap()).collect();
    let mut want = vec!["first".to_string(), "cut-one".to_string()];
    want.extend((0..250).map(|i| format!("b{i}")));
    assert!(bodies == want, "stored once each, in publish order: {bodies:?}");
    assert!(q.verify().await.unwrap().is_ok());
}
