//! Redis Cluster: one subscription over several queues whose slots sit on different masters —
//! strict priority across masters, each delivery settled on its own master, and a publish to
//! any of them waking the sleeping subscription.
mod common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redelay::{Client, Failure, Message, Queues, SubscribeOptions};

async fn wait_for(got: &Arc<Mutex<Vec<String>>>, n: usize) {
    let t = Instant::now();
    while got.lock().unwrap().len() < n {
        assert!(t.elapsed() < Duration::from_secs(30), "only {} of {n}: {:?}", got.lock().unwrap().len(), got);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_over_queues_on_different_masters() {
    let cluster = common::Cluster::start();
    let client = Client::builder(&cluster.url).response_timeout(Duration::from_secs(3)).connect().await.unwrap();

    // Three queues on three different masters.
    let mut names: Vec<String> = Vec::new();
    let mut owners = HashSet::new();
    for i in 0.. {
        let n = format!("mq{i}");
        if owners.insert(cluster.master_of(&format!("redelay:{{{n}}}:msg"))) {
            names.push(n);
        }
        if names.len() == 3 {
            break;
        }
    }
    let qs: Vec<redelay::Queue> = names.iter().map(|n| client.queue(n).unwrap()).collect();
    // Filled last-first: strict priority must still take the first queue's messages first.
    for q in qs.iter().rev() {
        q.publish_batch((0..5).map(|i| Message::new(q.name().as_bytes().to_vec()).id(format!("m{i}"))).collect())
            .await
            .unwrap();
    }

    let got: Arc<Mutex<Vec<String>>> = Default::default();
    let g = got.clone();
    let handler = move |d: redelay::Delivery| {
        assert_eq!(d.body(), d.queue().as_bytes(), "a delivery names the queue it came from");
        g.lock().unwrap().push(d.queue().to_string());
        async { Ok::<(), Failure>(()) }
    };
    let opts = SubscribeOptions { prefetch: Some(0), ..SubscribeOptions::concurrency(1) };
    let sub = Queues::priority(qs.clone()).unwrap().subscribe(handler, opts).await.unwrap();
    wait_for(&got, 15).await;
    let order = got.lock().unwrap().clone();
    let want: Vec<String> = names.iter().flat_map(|n| vec![n.clone(); 5]).collect();
    assert_eq!(order, want);

    // The subscription now sleeps; a publish to the last queue (its own master) wakes it.
    qs[2].publish(Message::new(names[2].as_bytes().to_vec()).id("late")).await.unwrap();
    wait_for(&got, 16).await;
    sub.close().await;

    // Every ack went to the message's own master: nothing leased or left anywhere.
    for q in &qs {
        let s = q.stats().await.unwrap();
        assert_eq!((s.total, s.leased, s.dead), (0, 0, 0), "{}: {s:?}", q.name());
        assert!(q.verify().await.unwrap().problems.is_empty());
    }
}
