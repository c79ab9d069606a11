//! Sharded queues: one queue over N hash tags. The shard count rule, publish by id, every
//! operation over all shards (the same answers as a plain queue), and consumers that take the
//! soonest due message of any shard first.
mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use redelay::{
    shard_of, BulkAction, BulkOptions, Client, ErrorKind, Failure, Message, PublishStatus, QueueOptions, Queues,
    Search, Select, State, SubscribeOptions,
};

async fn client() -> Client {
    Client::builder(&common::url()).prefix(common::unique("s")).connect().await.unwrap()
}

fn sharded(c: &Client, name: &str, n: u32) -> redelay::Queue {
    c.queue_with(name, QueueOptions::shards(n)).unwrap()
}

async fn zcard(key: &str) -> i64 {
    let mut r = common::raw().await;
    redis::cmd("ZCARD").arg(key).query_async(&mut r).await.unwrap()
}

#[tokio::test]
async fn the_shard_count_is_one_for_all_clients() {
    // (count of the first client, count of the second, what the second gets)
    let cases: [(u32, u32, Option<&str>); 5] = [
        (4, 4, None),
        (4, 8, Some("has 4 shards in Redis and this handle was opened with 8")),
        (4, 1, Some("has 4 shards in Redis and this handle was opened with 1")),
        (1, 4, Some("holds unsharded messages")),
        (16, 16, None),
    ];
    for (first, second, want) in cases {
        let c = client().await;
        let name = common::unique("rule");
        let a = sharded(&c, &name, first);
        a.publish(Message::new(b"x".to_vec()).id("one")).await.unwrap();
        let b = c.queue_with(&name, QueueOptions::shards(second)).unwrap();
        for r in [b.stats().await.map(|_| ()), b.publish(Message::new(b"y".to_vec())).await.map(|_| ())] {
            match want {
                None => r.unwrap(),
                Some(text) => {
                    let e = r.unwrap_err();
                    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{first}->{second}: {e}");
                    assert!(e.message().contains(text), "{first}->{second}: {e}");
                    assert!(e.message().contains(&name), "names the queue: {e}");
                }
            }
        }
        assert_eq!(a.stats().await.unwrap().total, if want.is_none() { 2 } else { 1 }, "{first}->{second}");
    }
    // Bad counts are refused at once, naming the field and the limit.
    let c = client().await;
    for bad in [0, 257] {
        let e = c.queue_with("q", QueueOptions::shards(bad)).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().starts_with("shards: must be 1 to 256"), "{e}");
    }
    // One shard is the plain queue: the same keys as `queue(name)`.
    let name = common::unique("one");
    let q = c.queue_with(&name, QueueOptions::shards(1)).unwrap();
    q.publish(Message::new(b"x".to_vec()).id("a")).await.unwrap();
    assert_eq!(zcard(&format!("{}:{{{name}}}:sched", c.prefix())).await, 1);
    assert_eq!(q.shards(), 1);
    // A drained plain queue may become sharded; then the plain handle is refused.
    q.cancel("a").await.unwrap();
    let s = sharded(&c, &name, 3);
    s.publish(Message::new(b"x".to_vec()).id("a")).await.unwrap();
    assert_eq!(q.stats().await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    // destroy removes the count with the data: the queue is plain again.
    s.destroy().await.unwrap();
    q.publish(Message::new(b"x".to_vec()).id("a")).await.unwrap();
    assert_eq!(q.stats().await.unwrap().total, 1);
}

#[tokio::test]
async fn messages_spread_over_every_shard_by_id() {
    let c = client().await;
    let name = common::unique("spread");
    let q = sharded(&c, &name, 8);
    let given: Vec<Message> = (0..200).map(|i| Message::new(vec![b'g'; 3]).id(format!("o-{i}"))).collect();
    let mut msgs = given;
    msgs.extend((0..200).map(|_| Message::new(b"n".to_vec())));
    // an id repeated within the batch sees the first, as published one by one
    msgs.push(Message::new(b"dup".to_vec()).id("o-7"));
    let out = q.publish_batch(msgs).await.unwrap();
    assert_eq!(out.len(), 401);
    assert_eq!(out[7].id, "o-7");
    assert_eq!(out[400].status, PublishStatus::Duplicate);
    assert!(out[..400].iter().all(|p| p.status == PublishStatus::Stored));
    let mut per_shard = [0i64; 8];
    for (i, n) in per_shard.iter_mut().enumerate() {
        *n = zcard(&format!("{}:{{{name}/{i}}}:sched", c.prefix())).await;
    }
    assert!(per_shard.iter().all(|&n| n > 10), "{per_shard:?}");
    assert_eq!(per_shard.iter().sum::<i64>(), 400);
    assert_eq!(zcard(&format!("{}:{{{name}}}:sched", c.prefix())).await, 0);
    // Each id sits in the shard its hash names; by-id calls find it there.
    for p in out.iter().step_by(37) {
        let s = shard_of(&p.id, 8);
        let mut r = common::raw().await;
        let there: bool = redis::cmd("HEXISTS")
            .arg(format!("{}:{{{name}/{s}}}:msg", c.prefix()))
            .arg(&p.id)
            .query_async(&mut r)
            .await
            .unwrap();
        assert!(there, "{} in shard {s}", p.id);
        assert!(q.peek(&p.id).await.unwrap().is_some());
    }
    let later = q.reschedule("o-3", redelay::Due::In(Duration::from_secs(60))).await.unwrap();
    assert!(later > SystemTime::now());
    assert!(q.cancel("o-4").await.unwrap());
    assert!(!q.cancel("o-4").await.unwrap());
    let st = q.stats().await.unwrap();
    assert_eq!((st.total, st.scheduled, st.ready), (399, 1, 398));
    common::assert_verified(&q).await;
    assert_eq!(q.verify().await.unwrap().records, 399);
    // Bulk actions by search (cursor over the shards) and by ids (each to its shard).
    let r = q.bulk(&BulkOptions::search(BulkAction::Cancel, Search::IdPrefix("o-1".into()))).await.unwrap();
    assert_eq!((r.matched, r.done), (111, 111), "o-1, o-10..o-19, o-100..o-199");
    let ids = vec!["o-2".to_string(), "o-20".to_string(), "o-1".to_string()];
    let r = q.bulk(&BulkOptions::ids(BulkAction::Cancel, ids)).await.unwrap();
    assert_eq!((r.matched, r.done), (3, 2));
    assert_eq!(q.stats().await.unwrap().total, 399 - 113);
    // Publish refuses a bad message before anything is sent, naming its place in the batch.
    let bad = vec![Message::new(b"a".to_vec()).id("fine"), Message::new(b"b".to_vec()).id("")];
    let e = q.publish_batch(bad).await.unwrap_err();
    assert!(e.message().starts_with("message 1: id:"), "{e}");
    assert!(q.peek("fine").await.unwrap().is_none());
}

/// The same scenario on a plain queue and on sharded ones: every inspection and dead-letter
/// call answers the same.
#[tokio::test]
async fn every_operation_covers_all_shards_like_a_plain_queue() {
    let mut answers: Vec<(u32, String)> = Vec::new();
    for shards in [1u32, 3, 16] {
        let c = client().await;
        let q = sharded(&c, &common::unique("ops"), shards);
        let t0 = SystemTime::now() - Duration::from_secs(3600);
        // 30 waiting (due in 1..30 min), 20 due in the past (distinct times), 12 to kill
        let mut msgs: Vec<Message> = (0..30)
            .map(|i| Message::new(format!("later {i}")).id(format!("w{i}")).delay(Duration::from_secs(60 * (i + 1))))
            .collect();
        msgs.extend(
            (0..20).map(|i| Message::new(format!("due {i}")).id(format!("d{i}")).at(t0 + Duration::from_millis(i * 7))),
        );
        msgs.extend((0..12).map(|i| {
            Message::new(format!("doomed {i}"))
                .id(format!("x{i}"))
                .header("kind", "doomed")
                .max_attempts(1)
                .at(t0 - Duration::from_secs(60 - i))
        }));
        q.publish_batch(msgs).await.unwrap();
        // Lease the due ones one by one (the doomed come first: they are due earliest), kill
        // the doomed. (Times apart, so that no two tie.)
        let got = one_by_one(&q, 12).await;
        let ids: Vec<&str> = got.iter().map(|d| d.id()).collect();
        assert_eq!(ids, (0..12).map(|i| format!("x{i}")).collect::<Vec<_>>(), "{shards} shards: soonest due first");
        for d in &got {
            assert!(q.nack(d.id(), d.token(), None, "boom").await.unwrap());
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        let leased = one_by_one(&q, 5).await;
        let mut a = String::new();
        let st = q.stats().await.unwrap();
        a += &format!("stats {} {} {} {} {}\n", st.total, st.scheduled, st.ready, st.leased, st.dead);
        for state in [State::Scheduled, State::Ready, State::Leased, State::Dead] {
            for (off, lim) in [(0, 1000), (3, 4), (25, 10)] {
                let p = q.list(state, off, lim).await.unwrap();
                let ids: Vec<String> = p.items.iter().map(|m| m.id.clone()).collect();
                a += &format!("list {state:?} {off} {lim}: {} {ids:?}\n", p.total);
            }
        }
        let dead: Vec<String> = q.dead_letters(2, 5).await.unwrap().into_iter().map(|m| m.id).collect();
        a += &format!("dead {dead:?}\n");
        let up = q.upcoming(SystemTime::now(), Duration::from_secs(600), 4).await.unwrap();
        a += &format!("upcoming {:?}\n", up.iter().map(|x| x.1).collect::<Vec<_>>());
        // a search over all shards, cursor after cursor
        let mut found = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = q.search(&Search::Header("kind".into(), "doomed".into()), cursor.as_deref()).await.unwrap();
            found.extend(page.items.into_iter().map(|m| m.id));
            match page.cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        found.sort();
        a += &format!("search {found:?}\n");
        let h = q.history_totals().await.unwrap();
        a += &format!("history {} {} {}\n", h.published, h.delivered, h.dead);
        // dead letters: respawn the 3 oldest, purge by id, then all
        a += &format!("respawn {}\n", q.respawn(Select::Oldest(3)).await.unwrap());
        let dead: Vec<String> = q.dead_letters(0, 100).await.unwrap().into_iter().map(|m| m.id).collect();
        a += &format!("dead after respawn {dead:?}\n");
        a += &format!(
            "purge {}\n",
            q.purge_dead(Select::Ids(vec!["x5".into(), "x6".into(), "nope".into()])).await.unwrap()
        );
        a += &format!("purge all {}\n", q.purge_dead(Select::All).await.unwrap());
        // pause and resume cover every shard
        assert!(q.pause().await.unwrap());
        assert!(q.stats().await.unwrap().paused);
        assert!(q.fetch(10, Duration::ZERO).await.unwrap().is_empty());
        assert!(!q.pause().await.unwrap());
        assert!(q.resume().await.unwrap());
        for d in &leased {
            q.ack(d.id(), d.token()).await.unwrap();
        }
        let st = q.stats().await.unwrap();
        a += &format!("end {} {} {}\n", st.total, st.ready, st.dead);
        common::assert_verified(&q).await;
        answers.push((shards, a));
    }
    for (shards, a) in &answers[1..] {
        assert_eq!(a, &answers[0].1, "{shards} shards answer differently from a plain queue");
    }
    println!("{}", answers[0].1);
}

/// `k` pulls of one message, a few ms apart: each the soonest due of any shard.
async fn one_by_one(q: &redelay::Queue, k: usize) -> Vec<redelay::Delivery> {
    let mut out = Vec::new();
    for _ in 0..k {
        out.extend(q.fetch(1, Duration::from_secs(5)).await.unwrap());
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    out
}

#[tokio::test]
async fn a_bad_search_cursor_is_refused() {
    let c = client().await;
    let q = sharded(&c, &common::unique("cur"), 4);
    for bad in ["7", "4:0", "x:1", ":"] {
        let e = q.search(&Search::IdPrefix("a".into()), Some(bad)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad}");
        assert!(e.message().starts_with("cursor: "), "{e}");
    }
}

fn recorder() -> (Arc<Mutex<Vec<String>>>, impl redelay::Handler) {
    let got: Arc<Mutex<Vec<String>>> = Default::default();
    let g = got.clone();
    let h = move |d: redelay::Delivery| {
        g.lock().unwrap().push(format!("{}:{}", d.queue(), d.id()));
        async { Ok::<(), Failure>(()) }
    };
    (got, h)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_takes_the_soonest_due_message_of_any_shard_first() {
    for shards in [1u32, 4, 16] {
        let c = client().await;
        let name = common::unique("order");
        let q = sharded(&c, &name, shards);
        // A backlog, all due already, at distinct times, published in shuffled order.
        let t0 = SystemTime::now() - Duration::from_secs(60);
        let mut order: Vec<u64> = (0..60).collect();
        order.sort_by_key(|i| (i * 37) % 61);
        q.publish_batch(
            order
                .iter()
                .map(|&i| Message::new(b"m".to_vec()).id(format!("m{i:02}")).at(t0 + Duration::from_millis(i * 5)))
                .collect(),
        )
        .await
        .unwrap();
        let (got, h) = recorder();
        let opts = SubscribeOptions { prefetch: Some(0), ..SubscribeOptions::concurrency(1) };
        let sub = q.subscribe(h, opts.clone()).await.unwrap();
        common::wait_for_len(&got, 60).await;
        let want: Vec<String> = (0..60).map(|i| format!("{name}:m{i:02}")).collect();
        assert_eq!(*got.lock().unwrap(), want, "{shards} shards");
        // Woken by publishes to any shard while idle: due in 300 ms, in reverse publish order.
        got.lock().unwrap().clear();
        let soon = SystemTime::now() + Duration::from_millis(300);
        q.publish_batch(
            (0..20)
                .rev()
                .map(|i| Message::new(b"s".to_vec()).id(format!("s{i:02}")).at(soon + Duration::from_millis(i * 5)))
                .collect(),
        )
        .await
        .unwrap();
        common::wait_for_len(&got, 20).await;
        let want: Vec<String> = (0..20).map(|i| format!("{name}:s{i:02}")).collect();
        assert_eq!(*got.lock().unwrap(), want, "{shards} shards, woken");
        sub.close().await;
        assert_eq!(q.stats().await.unwrap().total, 0, "every delivery settled on its own shard");
        common::assert_verified(&q).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sharded_queue_in_a_multi_queue_subscription_keeps_its_priority() {
    let c = client().await;
    let urgent = sharded(&c, &common::unique("urgent"), 5);
    let bulk = c.queue(&common::unique("bulk")).unwrap();
    bulk.publish_batch((0..10).map(|i| Message::new(b"b".to_vec()).id(format!("b{i}"))).collect()).await.unwrap();
    urgent.publish_batch((0..25).map(|i| Message::new(b"u".to_vec()).id(format!("u{i}"))).collect()).await.unwrap();
    let (got, h) = recorder();
    let opts = SubscribeOptions { prefetch: Some(0), ..SubscribeOptions::concurrency(1) };
    let sub = Queues::priority(vec![urgent.clone(), bulk.clone()]).unwrap().subscribe(h, opts).await.unwrap();
    common::wait_for_len(&got, 35).await;
    sub.close().await;
    let got = got.lock().unwrap().clone();
    let queues: Vec<&str> = got.iter().map(|s| s.split(':').next().unwrap()).collect();
    let mut want = vec![urgent.name(); 25];
    want.extend(vec![bulk.name(); 10]);
    assert_eq!(queues, want);
    // A pull over both: the sharded one first, from several shards in one call.
    urgent.publish_batch((0..25).map(|i| Message::new(b"u".to_vec()).id(format!("v{i}"))).collect()).await.unwrap();
    bulk.publish(Message::new(b"b".to_vec()).id("late")).await.unwrap();
    let ds =
        redelay::Queue::fetch_first(&[urgent.clone(), bulk.clone()], 1000, Duration::from_secs(5), None).await.unwrap();
    assert_eq!(ds.len(), 25);
    let per: BTreeMap<u32, usize> = ds.iter().fold(BTreeMap::new(), |mut m, d| {
        *m.entry(shard_of(d.id(), 5)).or_default() += 1;
        m
    });
    assert!(per.len() > 1, "{per:?}");
    for d in ds {
        d.ack().await.unwrap();
    }
    assert_eq!(urgent.stats().await.unwrap().total, 0);
    common::assert_verified(&urgent).await;
}

/// What the bindings use: a foreign-runtime subscription (a worker thread blocked in
/// `take_wait`) over a sharded queue settles each delivery on its own shard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_runtime_subscription_settles_on_every_shard() {
    struct Worker;
    impl redelay::Wake for Worker {
        fn wake(&self) -> bool {
            true
        }
    }
    let c = client().await;
    let q = sharded(&c, &common::unique("foreign"), 8);
    q.publish_batch((0..300).map(|i| Message::new(b"f".to_vec()).id(format!("f{i}"))).collect()).await.unwrap();
    let sub = Arc::new(q.subscribe_foreign(Arc::new(Worker), SubscribeOptions::concurrency(16)).await.unwrap());
    let s2 = sub.clone();
    // The worker holds deliveries until all 16 slots are taken, then completes them in one
    // call: one call then settles messages of several shards (each must go to its own shard).
    let worker = std::thread::spawn(move || {
        let (mut n, mut held) = (0, Vec::new());
        while n < 300 {
            let batch = s2.take_wait(Duration::from_millis(200));
            n += batch.len();
            held.extend(batch.into_iter().map(|(k, _)| (k, Ok(()))));
            if held.len() >= 16 || n >= 300 {
                s2.complete(std::mem::take(&mut held));
            }
        }
    });
    let t = std::time::Instant::now();
    while q.stats().await.unwrap().total > 0 {
        assert!(t.elapsed() < Duration::from_secs(60), "{:?}", sub.counters());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    worker.join().unwrap();
    sub.close().await;
    let counters = sub.counters();
    assert_eq!((counters.delivered, counters.acked, counters.lease_lost), (300, 300, 0));
    common::assert_verified(&q).await;
}

/// What a binding's `subscribe` by name gets: each queue opened with the shard count given, or
/// the one stored in Redis; priority without weights, weighted with one weight per queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queues_named_open_each_queue_with_its_shard_count() {
    let c = client().await;
    let (s, p) = (common::unique("named-s"), common::unique("named-p"));
    sharded(&c, &s, 4).publish(Message::new(b"x".to_vec()).id("one")).await.unwrap();
    c.queue(&p).unwrap().publish(Message::new(b"y".to_vec()).id("two")).await.unwrap();
    let n = |name: &str, shards: Option<u32>| (name.to_string(), shards);
    // (queues, weights, the shard counts opened, or the error's text)
    type Case<'a> = (Vec<(String, Option<u32>)>, Option<Vec<i64>>, Result<Vec<u32>, &'a str>);
    let cases: Vec<Case> = vec![
        (vec![n(&s, None), n(&p, None)], None, Ok(vec![4, 1])),
        (vec![n(&p, None), n(&s, Some(4))], Some(vec![5, 1]), Ok(vec![1, 4])),
        (vec![n(&s, None)], Some(vec![1, 2]), Err("weights: give one per queue (1), got 2")),
        (vec![n(&s, None), n(&p, None)], Some(vec![1, -1]), Err("must be 1 to 1000, got -1")),
        (vec![n(&s, None)], Some(vec![1 << 32]), Err("must be 1 to 1000, got 4294967296")),
        (vec![n(&s, None)], Some(vec![1001]), Err("must be 1 to 1000, got 1001")),
        (vec![n(&s, None), n(&s, None)], None, Err("is given twice")),
        (vec![n("bad name", None)], None, Err("queue name")),
        (vec![], None, Err("queues: give 1 to")),
    ];
    for (names, weights, want) in cases {
        let label = format!("{names:?} {weights:?}");
        match (c.queues_named(names, weights).await, want) {
            (Ok(qs), Ok(counts)) => assert_eq!(qs.queues().map(|q| q.shards()).collect::<Vec<_>>(), counts, "{label}"),
            (Err(e), Err(text)) => {
                assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{label}: {e}");
                assert!(e.message().contains(text), "{label}: {e}");
            }
            (got, want) => panic!("{label}: got {:?}, want {want:?}", got.map(|_| ())),
        }
    }
    // A weight a binding cannot hold in 64 bits is refused with the same words, as given.
    let e = redelay::Queues::weight_refused("a", "18446744073709551616");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(e.message(), "weight of queue \"a\": must be 1 to 1000, got 18446744073709551616");
    // A queue opened by name with the stored count is consumed from every shard.
    let qs = c.queues_named(vec![n(&s, None), n(&p, None)], None).await.unwrap();
    let (got, h) = recorder();
    let sub = qs.subscribe(h, SubscribeOptions::concurrency(2)).await.unwrap();
    common::wait_for_len(&got, 2).await;
    sub.close().await;
    assert_eq!(sharded(&c, &s, 4).stats().await.unwrap().total, 0);
}

/// A destroy by a handle whose shard count is not the stored one is refused and deletes
/// nothing: it used to delete the shards it knew (or, from a plain handle, only the count and
/// the name) and leave the rest unlisted.
#[tokio::test]
async fn destroy_with_the_wrong_shard_count_is_refused_and_deletes_nothing() {
    // (count stored, count of the destroying handle, what it is told)
    for (stored, wrong, want) in [
        (8, 4, "has 8 shards in Redis and this handle was opened with 4"),
        (4, 1, "has 4 shards in Redis and this handle was opened with 1"),
    ] {
        let c = client().await;
        let name = common::unique("destroy-wrong");
        let q = sharded(&c, &name, stored);
        q.publish_batch((0..40).map(|i| Message::new(b"m".to_vec()).id(format!("m{i}"))).collect()).await.unwrap();
        let other = client_with_prefix(c.prefix()).await;
        let err = sharded(&other, &name, wrong).destroy().await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{stored}/{wrong}: {err}");
        assert!(err.message().contains(want), "{stored}/{wrong}: {err}");
        assert_eq!(q.stats().await.unwrap().total, 40, "{stored}/{wrong}: nothing deleted");
        assert_eq!(c.queues().await.unwrap(), vec![name.clone()], "{stored}/{wrong}: still registered");
    }
}

/// A handle trusts Redis' confirmation of its shard count for 5 s only. After another client
/// destroyed the queue, its next check stores the count again (a plain handle is then refused,
/// instead of seeing an empty queue); after the queue was re-created with another count, it is
/// refused instead of writing into a layout nobody reads; so is a subscription that runs on.
#[tokio::test]
async fn a_handle_notices_a_destroy_or_a_new_shard_count_by_another_client() {
    let c = client().await;
    let other = client_with_prefix(c.prefix()).await;
    let (kept, recreated) = (common::unique("kept"), common::unique("recreated"));
    let (a, b) = (sharded(&c, &kept, 4), sharded(&c, &recreated, 4));
    a.publish(Message::new(b"x".to_vec())).await.unwrap();
    b.publish(Message::new(b"x".to_vec())).await.unwrap();
    let opts = SubscribeOptions { max_idle: Duration::from_millis(100), ..Default::default() };
    let sub = b.subscribe(|_d: redelay::Delivery| async { Ok::<(), Failure>(()) }, opts).await.unwrap();
    sharded(&other, &kept, 4).destroy().await.unwrap();
    sharded(&other, &recreated, 4).destroy().await.unwrap();
    let later = Message::new(b"y".to_vec()).delay(Duration::from_secs(3600));
    sharded(&other, &recreated, 8).publish(later).await.unwrap();
    tokio::time::sleep(Duration::from_millis(5_200)).await;

    a.publish(Message::new(b"after".to_vec()).id("after")).await.unwrap();
    assert!(other.queues().await.unwrap().contains(&kept), "the queue made anew is not registered");
    let plain = other.queue(&kept).unwrap().stats().await.unwrap_err();
    assert!(plain.message().contains("has 4 shards in Redis and this handle was opened with 1"), "{plain}");
    assert_eq!(sharded(&other, &kept, 4).peek("after").await.unwrap().map(|m| m.id), Some("after".into()));

    let err = b.publish(Message::new(b"z".to_vec())).await.unwrap_err();
    assert!(err.message().contains("has 8 shards in Redis and this handle was opened with 4"), "{err}");
    assert_eq!(sharded(&other, &recreated, 8).stats().await.unwrap().total, 1);
    let t = std::time::Instant::now();
    while !sub.last_error().is_some_and(|e| e.message().contains("has 8 shards")) {
        assert!(t.elapsed() < Duration::from_secs(10), "the subscription never noticed: {:?}", sub.last_error());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    sub.close().await;
}

/// Reads of a sharded handle on a name nobody published to (a misspelt one, say) store no shard
/// count and write nothing, and nor do changes to messages that would have to exist (cancel,
/// reschedule, ack, bulk actions by ids and by search, respawn, purge), so opening the name
/// later with another count works; a publish stores the count.
#[tokio::test]
async fn reads_of_a_queue_that_does_not_exist_leave_nothing_behind() {
    let c = client().await;
    let name = common::unique("typo");
    let q = sharded(&c, &name, 8);
    let now = SystemTime::now();
    assert_eq!(q.stats().await.unwrap().total, 0);
    assert!(q.peek("x").await.unwrap().is_none());
    assert!(q.list(State::Ready, 0, 10).await.unwrap().items.is_empty());
    assert!(q.dead_letters(0, 10).await.unwrap().is_empty());
    assert!(q.search(&Search::IdPrefix("x".into()), None).await.unwrap().items.is_empty());
    assert_eq!(q.upcoming(now, Duration::from_secs(60), 3).await.unwrap().len(), 3);
    q.history(now - Duration::from_secs(600), now, redelay::Step::Minute).await.unwrap();
    assert!(q.verify().await.unwrap().problems.is_empty());
    let mut r = common::raw().await;
    let pattern = format!("{}:*", c.prefix());
    let keys: Vec<String> = redis::cmd("KEYS").arg(&pattern).query_async(&mut r).await.unwrap();
    assert_eq!(keys, Vec::<String>::new(), "reads wrote");
    // Changes to messages that are not there: nothing done, nothing written.
    assert!(!q.cancel("x").await.unwrap());
    assert_eq!(
        q.reschedule("x", redelay::Due::In(Duration::from_secs(5))).await.unwrap_err().kind(),
        redelay::ErrorKind::NotFound
    );
    assert!(q.ack("x", "token").await.is_err());
    let ids = vec!["x".to_string(), "y".to_string()];
    assert_eq!(q.bulk(&BulkOptions::ids(BulkAction::Cancel, ids.clone())).await.unwrap().done, 0);
    assert_eq!(q.bulk(&BulkOptions::ids(BulkAction::Purge, ids)).await.unwrap().done, 0);
    let search = BulkOptions::search(BulkAction::Cancel, Search::IdPrefix("x".into()));
    assert_eq!(q.bulk(&search).await.unwrap().done, 0);
    assert_eq!(q.respawn(Select::All).await.unwrap(), 0);
    assert_eq!(q.purge_dead(Select::All).await.unwrap(), 0);
    let keys: Vec<String> = redis::cmd("KEYS").arg(&pattern).query_async(&mut r).await.unwrap();
    assert_eq!(keys, Vec::<String>::new(), "changes to nothing wrote");
    q.destroy().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg(&pattern).query_async(&mut r).await.unwrap();
    assert_eq!(keys, Vec::<String>::new(), "destroy of nothing wrote");
    // Another count is taken, and stored by its first write.
    let four = sharded(&c, &name, 4);
    four.publish(Message::new(b"m".to_vec())).await.unwrap();
    let err = sharded(&c, &name, 8).stats().await.unwrap_err();
    assert!(err.message().contains("has 4 shards in Redis and this handle was opened with 8"), "{err}");
    four.destroy().await.unwrap();
}

async fn client_with_prefix(prefix: &str) -> Client {
    Client::builder(&common::url()).prefix(prefix).connect().await.unwrap()
}

/// An offset past the end, up to the largest one, is an empty page with the total, on a sharded
/// queue as on a plain one (it overflowed `offset + limit`).
#[tokio::test]
async fn a_list_offset_past_the_end_is_an_empty_page() {
    let c = client().await;
    for q in [sharded(&c, &common::unique("far"), 4), c.queue(&common::unique("far-plain")).unwrap()] {
        q.publish_batch((0..5).map(|i| Message::new(b"m".to_vec()).id(format!("m{i}"))).collect()).await.unwrap();
        for offset in [5, 1 << 40, usize::MAX] {
            let page = q.list(State::Ready, offset, 10).await.unwrap();
            assert_eq!((page.total, page.items.len()), (5, 0), "{} from {offset}", q.name());
            assert!(q.dead_letters(offset, 10).await.unwrap().is_empty());
        }
    }
}

/// The keys of shard `i` of queue `name` under `prefix` (all of `{name/i}`).
async fn shard_keys(prefix: &str, name: &str, i: u32) -> Vec<String> {
    let mut r = common::raw().await;
    redis::cmd("KEYS").arg(format!("{prefix}:{{{name}/{i}}}:*")).query_async(&mut r).await.unwrap()
}

/// The shard count mark (`of`) in the META of each of a queue's `n` shards.
async fn shard_marks(prefix: &str, name: &str, n: u32) -> Vec<Option<String>> {
    let mut r = common::raw().await;
    let mut marks = Vec::new();
    for i in 0..n {
        let meta = format!("{prefix}:{{{name}/{i}}}:meta");
        marks.push(redis::cmd("HGET").arg(meta).arg("of").query_async(&mut r).await.unwrap());
    }
    marks
}

/// A handle of 4 shards on queue `name` that confirmed its count (it published "first"), and
/// the queue then destroyed by the client `other`.
async fn confirmed_then_destroyed(c: &Client, other: &Client, name: &str) -> redelay::Queue {
    let a = sharded(c, name, 4);
    a.publish(Message::new(b"x".to_vec()).id("first")).await.unwrap();
    sharded(other, name, 4).destroy().await.unwrap();
    a
}

/// Twenty messages with ids that fall on every one of 4 shards.
fn on_every_shard(tag: &str) -> Vec<Message> {
    let ids: Vec<String> = (0..20).map(|i| format!("{tag}{i}")).collect();
    let hit: std::collections::HashSet<u32> = ids.iter().map(|id| shard_of(id, 4)).collect();
    assert_eq!(hit.len(), 4, "the ids cover every shard");
    ids.into_iter().map(|id| Message::new(b"m".to_vec()).id(id)).collect()
}

/// A handle that confirmed its shard count a moment ago, on a queue another client destroyed
/// and made again plain or with another count since, is refused — publish and pause — and
/// writes nothing into shard keys no queue reads: it used to trust its count for 5 s and store
/// the messages there, lost, reporting success.
#[tokio::test]
async fn a_handle_refuses_to_write_into_the_shards_of_a_queue_made_again_by_another_client() {
    // (count B makes the queue again with: 1 = plain, what A is told)
    for (again, want) in [
        (1, "holds unsharded messages, so it cannot be opened with 4 shards"),
        (2, "has 2 shards in Redis and this handle was opened with 4"),
    ] {
        let c = client().await;
        let other = client_with_prefix(c.prefix()).await;
        let name = common::unique("again");
        let a = sharded(&c, &name, 4);
        a.publish_batch(on_every_shard("a")).await.unwrap();
        sharded(&other, &name, 4).destroy().await.unwrap();
        let b = other.queue_with(&name, QueueOptions::shards(again)).unwrap();
        b.publish(Message::new(b"b".to_vec()).id("b")).await.unwrap();

        for (what, r) in [
            ("publish", a.publish(Message::new(b"lost".to_vec()).id("a1")).await.map(|_| ())),
            ("batch", a.publish_batch(on_every_shard("later")).await.map(|_| ())),
            ("pause", a.pause().await.map(|_| ())),
        ] {
            let e = r.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{again}: {what}: {e}");
            assert!(e.message().contains(want), "{again}: {what}: {e}");
            assert_eq!(e.shard_count_mismatch(), Some(name.as_str()), "{again}: {what}: said to code");
        }
        // Nothing written where A's messages would have gone.
        for i in again.max(1)..4 {
            assert_eq!(shard_keys(c.prefix(), &name, i).await, Vec::<String>::new(), "{again}: shard {i}");
        }
        if again == 1 {
            assert_eq!(shard_keys(c.prefix(), &name, 0).await, Vec::<String>::new(), "{again}: shard 0");
        }
        let s = b.stats().await.unwrap();
        assert_eq!((s.total, s.paused), (1, false), "{again}: B's queue holds B's message alone");
        assert_eq!(b.peek("b").await.unwrap().map(|m| m.id), Some("b".into()), "{again}");
    }
}

/// A handle that confirmed its count a moment ago, on a queue another client destroyed since
/// (and nobody made again), makes it anew at its next publish: the count is stored again, every
/// shard is marked with it, and the message is delivered.
#[tokio::test]
async fn a_publish_right_after_another_clients_destroy_makes_the_sharded_queue_anew() {
    let c = client().await;
    let other = client_with_prefix(c.prefix()).await;
    let name = common::unique("anew");
    let a = confirmed_then_destroyed(&c, &other, &name).await;

    let p = a.publish(Message::new(b"after".to_vec()).id("after")).await.unwrap();
    assert_eq!(p.status, PublishStatus::Stored);
    let mut r = common::raw().await;
    let meta = format!("{}:{{{name}}}:meta", c.prefix());
    let stored: Option<String> = redis::cmd("HGET").arg(&meta).arg("shards").query_async(&mut r).await.unwrap();
    assert_eq!(stored.as_deref(), Some("4"), "the count is stored again");
    assert_eq!(shard_marks(c.prefix(), &name, 4).await, vec![Some("4".to_string()); 4]);
    let plain = other.queue(&name).unwrap().stats().await.unwrap_err();
    assert!(plain.message().contains("has 4 shards in Redis"), "{plain}");
    let got = sharded(&other, &name, 4).fetch(10, Duration::from_secs(5)).await.unwrap();
    assert_eq!(got.iter().map(|d| d.id()).collect::<Vec<_>>(), vec!["after"]);
    assert_eq!(got[0].body(), b"after");
}

/// A sharded queue whose shards carry no count mark (made by an older version, or the marks
/// lost) takes publishes all the same — from a handle that confirmed its count and from a new
/// one — and has its marks back afterwards.
#[tokio::test]
async fn shards_without_their_count_mark_heal_at_the_next_publish() {
    let c = client().await;
    let name = common::unique("unmarked");
    let a = sharded(&c, &name, 4);
    a.publish_batch(on_every_shard("old")).await.unwrap();
    assert_eq!(shard_marks(c.prefix(), &name, 4).await, vec![Some("4".to_string()); 4], "marked when made");
    let unmark = || async {
        let mut r = common::raw().await;
        for i in 0..4 {
            let meta = format!("{}:{{{name}/{i}}}:meta", c.prefix());
            let _: i64 = redis::cmd("HDEL").arg(meta).arg("of").query_async(&mut r).await.unwrap();
        }
        assert_eq!(shard_marks(c.prefix(), &name, 4).await, vec![None; 4]);
    };

    // A batch of several calls per shard (100 messages each), refused whole and sent again.
    unmark().await;
    let big: Vec<Message> = (0..1000).map(|i| Message::new(b"m".to_vec()).id(format!("big{i}"))).collect();
    let p = a.publish_batch(big).await.unwrap();
    assert!(p.iter().all(|p| p.status == PublishStatus::Stored), "{p:?}");
    assert_eq!(shard_marks(c.prefix(), &name, 4).await, vec![Some("4".to_string()); 4], "healed");

    // A pause heals as a publish does; so does a handle's first call.
    unmark().await;
    let fresh = sharded(&client_with_prefix(c.prefix()).await, &name, 4);
    assert!(fresh.pause().await.unwrap());
    assert_eq!(shard_marks(c.prefix(), &name, 4).await, vec![Some("4".to_string()); 4], "healed");
    unmark().await;
    let fresh = sharded(&client_with_prefix(c.prefix()).await, &name, 4);
    assert_eq!(fresh.publish(Message::new(b"m".to_vec()).id("one")).await.unwrap().status, PublishStatus::Stored);
    assert_eq!(shard_marks(c.prefix(), &name, 4).await, vec![Some("4".to_string()); 4], "healed");
    let s = a.stats().await.unwrap();
    assert_eq!((s.total, s.paused), (1021, true));
    common::assert_verified(&a).await;
}

/// Changes by id — cancel, reschedule, respawn and purge (by ids and all), the bulk actions on
/// them — through a handle that confirmed its count a moment ago, on a queue another client
/// destroyed and made again with another count: refused with the InvalidArgument that names
/// both counts (`shard_count_mismatch`), writing nothing. They went to the shard of the old
/// count: a cancel answered false for a message that exists (and on a cluster left a replay
/// key in that shard for 5 minutes). On a queue only destroyed they find nothing and write
/// nothing; on shards whose marks were lost (made by an older version) they heal the marks and
/// act.
#[tokio::test]
async fn changes_by_id_through_a_handle_of_an_old_count_are_refused() {
    let c = client().await;
    let other = client_with_prefix(c.prefix()).await;
    let name = common::unique("byid");
    let a = confirmed_then_destroyed(&c, &other, &name).await;
    let b = sharded(&other, &name, 2);
    b.publish_batch(on_every_shard("m")).await.unwrap();
    // Ids whose shard of 4 is one the queue of 2 does not have.
    let ids: Vec<String> = (0..20).map(|i| format!("m{i}")).filter(|id| shard_of(id, 4) >= 2).take(3).collect();
    let (x, y, z) = (ids[0].clone(), ids[1].clone(), ids[2].clone());
    let later = redelay::Due::In(Duration::from_secs(3600));
    for (what, r) in [
        ("cancel", a.cancel(&x).await.map(|_| ())),
        ("reschedule", a.reschedule(&y, later).await.map(|_| ())),
        ("respawn", a.respawn(Select::Ids(vec![z.clone()])).await.map(|_| ())),
        ("purge", a.purge_dead(Select::Ids(vec![z.clone()])).await.map(|_| ())),
        ("respawn all", a.respawn(Select::All).await.map(|_| ())),
        ("bulk cancel", a.bulk(&BulkOptions::ids(BulkAction::Cancel, vec![x.clone()])).await.map(|_| ())),
        ("bulk deliver now", a.bulk(&BulkOptions::ids(BulkAction::DeliverNow, vec![y.clone()])).await.map(|_| ())),
    ] {
        let e = r.unwrap_err();
        assert_eq!(
            (e.kind(), e.shard_count_mismatch()),
            (ErrorKind::InvalidArgument, Some(name.as_str())),
            "{what}: {e}"
        );
        assert!(e.message().contains("has 2 shards in Redis and this handle was opened with 4"), "{what}: {e}");
    }
    for i in 2..4 {
        assert_eq!(shard_keys(c.prefix(), &name, i).await, Vec::<String>::new(), "shard {i} of the old count");
    }
    assert_eq!(b.stats().await.unwrap().total, 20, "B's messages untouched");
    let y_due = b.peek(&y).await.unwrap().unwrap().due_at;
    assert!(y_due < SystemTime::now() + Duration::from_secs(60), "not rescheduled");
    assert!(b.cancel(&x).await.unwrap(), "through the right count it is there");
    b.destroy().await.unwrap();

    // A queue only destroyed: a handle that confirmed 4 finds nothing, and writes nothing.
    let gone = common::unique("gone");
    let a = confirmed_then_destroyed(&c, &other, &gone).await;
    assert!(!a.cancel("first").await.unwrap());
    assert_eq!(a.reschedule("first", later).await.unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(a.respawn(Select::All).await.unwrap(), 0);
    assert_eq!(a.purge_dead(Select::Ids(vec!["first".into()])).await.unwrap(), 0);
    let mut r = common::raw().await;
    let keys: Vec<String> =
        redis::cmd("KEYS").arg(format!("{}:{{{gone}*", c.prefix())).query_async(&mut r).await.unwrap();
    assert_eq!(keys, Vec::<String>::new(), "changes to a destroyed queue wrote");

    // Shards without their marks: a cancel heals them and deletes.
    let old = common::unique("old");
    let a = sharded(&c, &old, 4);
    a.publish_batch(on_every_shard("o")).await.unwrap();
    for i in 0..4 {
        let meta = format!("{}:{{{old}/{i}}}:meta", c.prefix());
        let _: i64 = redis::cmd("HDEL").arg(meta).arg("of").query_async(&mut r).await.unwrap();
    }
    assert!(a.cancel("o0").await.unwrap());
    assert_eq!(shard_marks(c.prefix(), &old, 4).await, vec![Some("4".to_string()); 4], "healed");
    assert_eq!(a.stats().await.unwrap().total, 19);
}
