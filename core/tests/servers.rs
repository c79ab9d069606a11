//! Sentinel failover, TLS with a private CA, and an ACL user restricted to redelay's keys.
mod common;

use std::time::{Duration, Instant};

use redelay::{Client, Delivery, ErrorKind, Failure, Message, SubscribeOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_survives_a_sentinel_failover() {
    let s = common::Launched::start("sentinel.sh");
    let url = s.printed.clone();
    assert!(url.starts_with("redis+sentinel://"), "{url}");
    // Publishes wait for the replica: after a failover a publish the old master took in its
    // last moments fails (and is retried) instead of vanishing with its resync.
    let client = Client::builder(&url)
        .response_timeout(Duration::from_secs(2))
        // Generous: on a loaded 2-core machine the replica's ack can take a while (a CI run saw
        // 0 of 1 within 500 ms before the failover).
        .wait_for_replicas(1, Duration::from_secs(3))
        .connect()
        .await
        .unwrap();
    let q = client.queue("failover").unwrap();
    let (got, handler) = common::recording(|d| d.id().to_string());
    let sub = q
        .subscribe(
            handler,
            // A short lease: an ack lost in the failover window is redelivered within the test.
            SubscribeOptions { ttr: Some(Duration::from_secs(1)), ..SubscribeOptions::concurrency(4) },
        )
        .await
        .unwrap();
    let before: Vec<Message> = (0..50)
        .map(|i| Message::new(b"x".to_vec()).id(format!("before-{i}")).delay(Duration::from_millis(i * 40)))
        .collect();
    q.publish_batch(before).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    s.run("failover");
    // Publish after the failover, retrying while the client finds the new master.
    let t = Instant::now();
    loop {
        let after: Vec<Message> = (0..50).map(|i| Message::new(b"y".to_vec()).id(format!("after-{i}"))).collect();
        match q.publish_batch(after).await {
            Ok(_) => break,
            Err(e) => {
                assert!(t.elapsed() < Duration::from_secs(15), "no new master found: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    let t = Instant::now();
    loop {
        let ids: std::collections::HashSet<String> = got.lock().unwrap().iter().cloned().collect();
        if ids.len() == 100 {
            break;
        }
        if t.elapsed() > Duration::from_secs(30) {
            let c = sub.counters();
            let st = q.stats().await;
            panic!("{} of 100 delivered; last error {:?}; counters {c:?}; stats {st:?}", ids.len(), sub.last_error());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    sub.close().await;
    common::assert_verified(&q).await;
}

/// Publishes one message on `q` and receives it through a subscription: the body received.
async fn publish_and_receive(q: &redelay::Queue, body: &[u8]) -> Vec<u8> {
    q.publish(Message::new(body.to_vec()).id("t1")).await.unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let sub = q
        .subscribe(
            move |d: Delivery| {
                let tx = tx.clone();
                async move {
                    tx.send(d.body().to_vec()).unwrap();
                    Ok::<(), Failure>(())
                }
            },
            SubscribeOptions::concurrency(1),
        )
        .await
        .unwrap();
    let got = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await.unwrap().unwrap();
    sub.close().await;
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_a_private_ca() {
    let s = common::Launched::start("tls.sh");
    let port = &s.printed;
    let ca = s.dir.join("ca.pem");
    let client =
        Client::connect(&format!("rediss://app:app-secret@127.0.0.1:{port}/?tls_ca={}", ca.display())).await.unwrap();
    let q = client.queue("secure").unwrap();
    assert_eq!(publish_and_receive(&q, b"over tls").await, b"over tls");
    common::assert_verified(&q).await;
    q.destroy().await.unwrap();

    // The server's certificate is not trusted without the private CA.
    let e = Client::connect(&format!("rediss://app:app-secret@127.0.0.1:{port}/")).await.err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");
    assert!(e.message().contains("certificate"), "{e}");
}

/// The ACL rule the README documents (tests/users.acl, user "app") is enough for the whole API;
/// on a plain port, so that it runs on server builds without TLS too (Valkey, Redis 8).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_with_the_documented_acl_rule_runs_the_whole_api() {
    // The README's rule is the one tested, to the letter.
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let file = |p: &str| std::fs::read_to_string(format!("{root}/{p}")).unwrap();
    let readme = file("README.md");
    let documented = readme.lines().find(|l| l.starts_with("user redelay on >YOUR-PASSWORD ")).expect("README's rule");
    let users = file("tests/users.acl");
    let tested = users.lines().find(|l| l.starts_with("user app on >app-secret ")).unwrap();
    assert_eq!(documented.replacen("user redelay on >YOUR-PASSWORD", "user app on >app-secret", 1), tested);

    let s = common::Launched::start("acl.sh");
    let port = &s.printed;
    let url = |user: &str, pass: &str| format!("redis://{user}:{pass}@127.0.0.1:{port}/");

    let client = Client::connect(&url("app", "app-secret")).await.unwrap();
    let q = client.queue("secure").unwrap();
    assert_eq!(publish_and_receive(&q, b"as app").await, b"as app");
    q.publish(Message::new(b"x".to_vec()).id("t2").delay(Duration::from_secs(60))).await.unwrap();
    assert!(q.peek("t2").await.unwrap().is_some());
    q.reschedule("t2", redelay::Due::In(Duration::from_secs(30))).await.unwrap();
    assert!(q.cancel("t2").await.unwrap());
    assert_eq!(q.stats().await.unwrap().total, 0);
    assert!(q.dead_letters(0, 10).await.unwrap().is_empty());
    assert!(client.queues().await.unwrap().contains(&"secure".to_string()));
    common::assert_verified(&q).await;

    // The rest of the API through the same user: a batch of several calls (replay keys),
    // leases settled by hand, dead letters, pause, history, the views, bulk, a sharded queue.
    let batch: Vec<Message> = (0..250).map(|i| Message::new(b"b".to_vec()).id(format!("b{i}"))).collect();
    assert_eq!(q.publish_batch(batch).await.unwrap().len(), 250);
    q.publish(Message::new(b"x".to_vec()).id("dead").max_attempts(1)).await.unwrap();
    let mut got: Vec<Delivery> = Vec::new();
    for _ in 0..10 {
        if ["b0", "b1", "dead"].iter().all(|id| got.iter().any(|d| d.id() == *id)) {
            break;
        }
        got.extend(q.fetch(1000, Duration::from_secs(2)).await.unwrap()); // bounded per call
    }
    let lease = |id: &str| got.iter().find(|d| d.id() == id).expect(id);
    lease("b0").ack().await.unwrap();
    lease("b1").extend(Duration::from_secs(60)).await.unwrap();
    assert!(!lease("b1").nack(Some(Duration::from_secs(60)), "later").await.unwrap());
    assert!(lease("dead").nack(None, "broken").await.unwrap(), "dead at max_attempts 1");
    assert_eq!(q.respawn(redelay::Select::All).await.unwrap(), 1);
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    for (op, args) in [
        ("pause", serde_json::json!({})),
        ("resume", serde_json::json!({})),
        ("set_history", serde_json::json!({"on": true})),
        ("history", serde_json::json!({"since_ms": now_ms - 120_000})),
        ("history_totals", serde_json::json!({})),
        ("upcoming", serde_json::json!({"width_ms": 1000, "buckets": 10})),
        ("list", serde_json::json!({"state": "leased", "limit": 10})),
        ("search", serde_json::json!({"search": {"id_prefix": "b1"}})),
        ("bulk", serde_json::json!({"action": "cancel", "search": {"id_prefix": "b2"}})),
        ("bulk", serde_json::json!({"action": "reschedule", "ids": ["b30"], "delay_ms": 60000})),
        ("purge_dead", serde_json::json!({"all": true})),
        ("verify", serde_json::json!({})),
    ] {
        q.call(op, args).await.unwrap_or_else(|e| panic!("{op} through the restricted user: {e}"));
    }
    let sharded = client.queue_with("secure-sharded", redelay::QueueOptions::shards(4)).unwrap();
    sharded.publish_batch((0..20).map(|i| Message::new(b"s".to_vec()).id(format!("s{i}"))).collect()).await.unwrap();
    let got = sharded.fetch(20, Duration::from_secs(2)).await.unwrap();
    assert!(!got.is_empty());
    got[0].ack().await.unwrap();
    assert_eq!(client.queue_stored("secure-sharded").await.unwrap().shards(), 4);
    common::assert_verified(&sharded).await;
    sharded.destroy().await.unwrap();
    q.destroy().await.unwrap();

    // A wrong password: Connection, naming the cause, without the password.
    let e = Client::connect(&url("app", "wrong-pw")).await.err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");
    assert!(e.message().contains("authentication failed") || e.message().contains("AuthenticationFailed"), "{e}");
    assert!(!e.message().contains("wrong-pw"), "{e}");

    // A user without access to redelay's keys: Redis error naming the missing permission.
    let other = Client::connect(&url("other", "other-secret")).await.unwrap();
    let e = other.queue("q").unwrap().publish(Message::new(b"x".to_vec())).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Redis, "{e}");
    assert!(e.message().to_lowercase().contains("no permissions"), "{e}");
}

/// Through Sentinel, `Client::close` closes the connections to the master and to the Sentinel
/// (the one that asks for the master and the one that listens for `+switch-master`), although
/// a queue handle is still held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_through_sentinel_closes_its_connections() {
    let s = common::Launched::start("sentinel.sh");
    let ports: Vec<u16> =
        std::fs::read_to_string(s.dir.join("ports")).unwrap().lines().map(|p| p.parse().unwrap()).collect();
    let (master, sentinel) = (ports[0], ports[2]);
    let clients_of = |port: u16| async move {
        let mut raw = redis::Client::open(format!("redis://127.0.0.1:{port}"))
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        let info: String = redis::cmd("INFO").arg("clients").query_async(&mut raw).await.unwrap();
        // Less this look's own connection.
        info.lines().find_map(|l| l.strip_prefix("connected_clients:")).unwrap().trim().parse::<usize>().unwrap() - 1
    };
    let before = (clients_of(master).await, clients_of(sentinel).await);
    let client = Client::connect(&s.printed).await.unwrap();
    let q = client.queue("closing").unwrap();
    assert_eq!(publish_and_receive(&q, b"x").await, b"x");
    assert!(clients_of(master).await > before.0, "the client is connected to the master");
    client.close().await;
    let e = q.stats().await.unwrap_err();
    assert_eq!((e.kind(), e.message()), (ErrorKind::Connection, "client is closed"));
    let t = Instant::now();
    loop {
        let now = (clients_of(master).await, clients_of(sentinel).await);
        if now.0 <= before.0 && now.1 <= before.1 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "(master, sentinel) connections {now:?}, {before:?} before");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(q);
}
