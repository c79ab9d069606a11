//! One subscription over several queues: strict priority or weights, one concurrency limit,
//! each delivery naming its queue, woken by a publish to any of them.
mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use redelay::{Client, ErrorKind, Failure, Message, Queues, SubscribeOptions};

fn one_at_a_time() -> SubscribeOptions {
    SubscribeOptions { prefetch: Some(0), ..SubscribeOptions::concurrency(1) }
}

async fn fill(q: &redelay::Queue, n: usize) {
    q.publish_batch((0..n).map(|i| Message::new(b"m".to_vec()).id(format!("{}-{i}", q.name()))).collect())
        .await
        .unwrap();
}

fn recorder() -> (Arc<Mutex<Vec<String>>>, impl redelay::Handler) {
    let got: Arc<Mutex<Vec<String>>> = Default::default();
    let g = got.clone();
    let h = move |d: redelay::Delivery| {
        g.lock().unwrap().push(d.queue().to_string());
        async { Ok::<(), Failure>(()) }
    };
    (got, h)
}

async fn wait_for(got: &Arc<Mutex<Vec<String>>>, n: usize) {
    let t = std::time::Instant::now();
    while got.lock().unwrap().len() < n {
        assert!(t.elapsed() < Duration::from_secs(30), "only {} of {n}", got.lock().unwrap().len());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn three(c: &Client) -> (redelay::Queue, redelay::Queue, redelay::Queue) {
    let n = common::unique("m");
    (
        c.queue(&format!("{n}.urgent")).unwrap(),
        c.queue(&format!("{n}.default")).unwrap(),
        c.queue(&format!("{n}.bulk")).unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_priority_always_takes_the_first_queue_with_a_due_message() {
    let (c, _) = common::queue("prio").await;
    let (urgent, default, bulk) = three(&c).await;
    fill(&bulk, 10).await;
    fill(&default, 10).await;
    fill(&urgent, 10).await;
    let (got, h) = recorder();
    let qs = Queues::priority(vec![urgent.clone(), default.clone(), bulk.clone()]).unwrap();
    let sub = qs.subscribe(h, one_at_a_time()).await.unwrap();
    wait_for(&got, 30).await;
    sub.close().await;
    let got = got.lock().unwrap().clone();
    let names = |q: &redelay::Queue, n: usize| vec![q.name().to_string(); n];
    assert_eq!(got, [names(&urgent, 10), names(&default, 10), names(&bulk, 10)].concat());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weights_share_deliveries_in_proportion() {
    let (c, _) = common::queue("weights").await;
    let (a, b, z) = three(&c).await;
    for q in [&a, &b, &z] {
        fill(q, 100).await;
    }
    let (got, h) = recorder();
    let qs = Queues::weighted(vec![(a.clone(), 5), (b.clone(), 3), (z.clone(), 1)]).unwrap();
    let sub = qs.subscribe(h, one_at_a_time()).await.unwrap();
    wait_for(&got, 90).await;
    sub.close().await;
    let first: Vec<String> = got.lock().unwrap()[..90].to_vec();
    let count = |q: &redelay::Queue| first.iter().filter(|n| *n == q.name()).count();
    assert_eq!((count(&a), count(&b), count(&z)), (50, 30, 10), "{first:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_consumer_of_several_queues_is_woken_by_a_publish_to_any() {
    let (c, _) = common::queue("multiwake").await;
    let (a, b, z) = three(&c).await;
    let (got, h) = recorder();
    // The timer alone would look only every minute.
    let opts = SubscribeOptions { max_idle: Duration::from_secs(60), ..SubscribeOptions::concurrency(4) };
    let sub = Queues::priority(vec![a.clone(), b.clone(), z.clone()]).unwrap().subscribe(h, opts).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    z.publish(Message::new(b"late".to_vec()).delay(Duration::from_millis(200))).await.unwrap();
    let t = std::time::Instant::now();
    wait_for(&got, 1).await;
    assert!(t.elapsed() < Duration::from_secs(30), "woken by the publish, not the 60 s timer");
    assert_eq!(got.lock().unwrap()[0], z.name());
    sub.close().await;
}

#[tokio::test]
async fn bad_queue_lists_are_refused() {
    let (c, q) = common::queue("multibad").await;
    let e = |r: redelay::Result<Queues>| r.err().expect("refused");
    let x = e(Queues::priority(vec![]));
    assert!(x.message().starts_with("queues: give 1 to 100"), "{x}");
    let x = e(Queues::priority(vec![q.clone(), q.clone()]));
    assert!(x.message().contains("given twice"), "{x}");
    let x = e(Queues::weighted(vec![(q.clone(), 0)]));
    assert!(x.message().starts_with("weight of queue") && x.message().contains("1 to 1000"), "{x}");
    let other = Client::connect(&common::url()).await.unwrap();
    let x = e(Queues::priority(vec![q.clone(), other.queue("x").unwrap()]));
    assert_eq!(x.kind(), ErrorKind::InvalidArgument);
    drop(c);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_first_takes_the_first_queue_with_due_messages_and_waits_for_any() {
    let (c, _) = common::queue("ff").await;
    let (urgent, default, bulk) = three(&c).await;
    let qs = [urgent.clone(), default.clone(), bulk.clone()];
    fill(&bulk, 1).await;
    fill(&default, 2).await;
    let got = redelay::Queue::fetch_first(&qs, 10, Duration::ZERO, None).await.unwrap();
    assert_eq!(got.iter().map(|d| d.queue()).collect::<Vec<_>>(), vec![default.name(); 2]);
    for d in &got {
        d.ack().await.unwrap();
    }
    let got = redelay::Queue::fetch_first(&qs, 1, Duration::ZERO, None).await.unwrap();
    assert_eq!(got[0].queue(), bulk.name());
    got[0].ack().await.unwrap();

    // Nothing due in any queue: a long wait is ended by a publish to the last queue, which is
    // delivered no earlier than its due time.
    let waiter = tokio::spawn({
        let qs = qs.clone();
        async move { redelay::Queue::fetch_first(&qs, 1, Duration::from_secs(20), None).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = std::time::SystemTime::now();
    bulk.publish(Message::new(b"late".to_vec()).delay(Duration::from_millis(200))).await.unwrap();
    let got = waiter.await.unwrap().unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body(), b"late");
    assert!(got[0].delivered_at() >= got[0].due_at());
    assert!(std::time::SystemTime::now().duration_since(sent).unwrap() < Duration::from_secs(15));

    // A short wait with nothing due ends empty; bad input names the field.
    let none = redelay::Queue::fetch_first(&qs, 1, Duration::from_millis(50), None).await.unwrap();
    assert!(none.is_empty());
    // The same list rules as a subscription of several queues.
    let e = redelay::Queue::fetch_first(&[], 1, Duration::ZERO, None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().starts_with("queues: give 1 to 100 queues, got 0"), "{}", e.message());
    let e = redelay::Queue::fetch_first(&[qs[0].clone(), qs[0].clone()], 1, Duration::ZERO, None).await.unwrap_err();
    assert!(e.message().contains("is given twice"), "{}", e.message());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_consumer_of_several_queues_settles_each_message_on_its_own_queue() {
    struct Threads;
    impl redelay::Wake for Threads {
        fn wake(&self) -> bool {
            true
        }
    }
    let (c, _) = common::queue("foreign-multi").await;
    let (urgent, default, bulk) = three(&c).await;
    for q in [&urgent, &default, &bulk] {
        fill(q, 10).await;
    }
    let qs = Queues::priority(vec![urgent.clone(), default.clone(), bulk.clone()]).unwrap();
    let sub = Arc::new(qs.subscribe_foreign(Arc::new(Threads), SubscribeOptions::concurrency(8)).await.unwrap());
    let s = sub.clone();
    let worker = std::thread::spawn(move || {
        let mut handled = 0;
        let t = std::time::Instant::now();
        while handled < 30 && t.elapsed() < Duration::from_secs(60) {
            let batch = s.take_wait(Duration::from_secs(5));
            handled += batch.len();
            s.complete(batch.into_iter().map(|(k, _)| (k, Ok(()))).collect());
        }
        handled
    });
    assert_eq!(tokio::task::spawn_blocking(move || worker.join().unwrap()).await.unwrap(), 30);
    sub.close().await;
    let counters = sub.counters();
    assert_eq!((counters.acked, counters.lease_lost), (30, 0), "{counters:?}");
    for q in [&urgent, &default, &bulk] {
        assert_eq!(q.stats().await.unwrap().total, 0, "{} still holds messages", q.name());
    }
}

/// A queue whose fetches fail (here: data of another layout, written after the subscription
/// started) waits out its own backoff; the other queues go on. Under strict priority the
/// failing first queue used to be picked again at once after every backoff, so the second was
/// never fetched at all. Once the first queue is readable again, it is fetched again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_whose_fetches_fail_does_not_hold_up_the_others() {
    let (c, _) = common::queue("failing").await;
    let (first, second, _) = three(&c).await;
    let (got, h) = recorder();
    let qs = Queues::priority(vec![first.clone(), second.clone()]).unwrap();
    let sub = qs.subscribe(h, SubscribeOptions::concurrency(4)).await.unwrap();
    let meta = format!("{}:{{{}}}:meta", c.prefix(), first.name());
    let mut r = common::raw().await;
    let layout: Option<String> = redis::cmd("HGET").arg(&meta).arg("v").query_async(&mut r).await.unwrap();
    let _: () = redis::cmd("HSET").arg(&meta).arg("v").arg("99").query_async(&mut r).await.unwrap();
    fill(&second, 5).await;
    wait_for(&got, 5).await;
    // The first queue is looked at again within max_idle (1 s): its error is reported, and
    // the second goes on being served.
    let t = std::time::Instant::now();
    while !sub.last_error().is_some_and(|e| e.message().contains("layout 99")) {
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", sub.last_error());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for id in ["more-1", "more-2"] {
        second.publish(Message::new(b"m".to_vec()).id(id)).await.unwrap();
    }
    wait_for(&got, 7).await;
    let restore = match &layout {
        Some(v) => redis::cmd("HSET").arg(&meta).arg("v").arg(v).clone(),
        None => redis::cmd("HDEL").arg(&meta).arg("v").clone(),
    };
    let _: () = restore.query_async(&mut r).await.unwrap();
    fill(&first, 3).await;
    wait_for(&got, 10).await;
    sub.close().await;
    let got = got.lock().unwrap().clone();
    let names = |q: &redelay::Queue, n: usize| vec![q.name().to_string(); n];
    assert_eq!(got, [names(&second, 7), names(&first, 3)].concat());
}
