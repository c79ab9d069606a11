//! The delivery scenarios of the core, each on its own queue, each ending with `verify`.
mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use redelay::{Client, Delivery, Due, Failure, Message, PublishStatus, Select, State, SubscribeOptions};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Pulls until `n` deliveries arrived or `within` passed.
async fn pull(q: &redelay::Queue, n: usize, within: Duration) -> Vec<Delivery> {
    let t = std::time::Instant::now();
    let mut out = Vec::new();
    while out.len() < n && t.elapsed() < within {
        out.extend(q.fetch((n - out.len()).min(1000), ms(200)).await.unwrap());
    }
    out
}

#[tokio::test]
async fn order_is_due_time_then_publish_order() {
    let (_c, q) = common::queue("order").await;
    let at = SystemTime::now() + ms(400);
    // Published out of due order; a..e share one due time and must keep publish order.
    let mut batch = vec![Message::new(b"late".to_vec()).id("late").delay(ms(700))];
    for name in ["a", "b", "c", "d", "e"] {
        batch.push(Message::new(name.as_bytes().to_vec()).id(name).at(at));
    }
    batch.push(Message::new(b"early".to_vec()).id("early").delay(ms(100)));
    q.publish_batch(batch).await.unwrap();
    q.publish(Message::new(b"f".to_vec()).id("f").at(at)).await.unwrap();
    let got = pull(&q, 8, Duration::from_secs(5)).await;
    let ids: Vec<&str> = got.iter().map(|d| d.id()).collect();
    assert_eq!(ids, ["early", "a", "b", "c", "d", "e", "f", "late"]);
    for d in &got {
        assert!(d.delivered_at() >= d.due_at(), "{} delivered before due", d.id());
        d.ack().await.unwrap();
    }
    common::assert_verified(&q).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_message_is_held_by_two_consumers() {
    let (client, q) = common::queue("exclusive").await;
    let msgs: Vec<Message> = (0..2000).map(|i| Message::new(format!("{i}").into_bytes()).delay(ms(i % 300))).collect();
    q.publish_batch(msgs).await.unwrap();
    let seen: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    let mut subs = Vec::new();
    for _ in 0..4 {
        let seen = seen.clone();
        let q = client.queue(q.name()).unwrap();
        let sub = q
            .subscribe(
                move |d: Delivery| {
                    let seen = seen.clone();
                    async move {
                        *seen.lock().unwrap().entry(d.id().to_string()).or_default() += 1;
                        tokio::time::sleep(ms(1)).await;
                        Ok::<(), Failure>(())
                    }
                },
                SubscribeOptions::concurrency(8),
            )
            .await
            .unwrap();
        subs.push(sub);
    }
    let t = std::time::Instant::now();
    while q.stats().await.unwrap().total > 0 && t.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(ms(50)).await;
    }
    for s in &subs {
        s.close().await;
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2000, "every message delivered");
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n != 1).collect();
    assert!(twice.is_empty(), "delivered more than once while leased: {twice:?}");
    let per_sub: Vec<u64> = subs.iter().map(|s| s.counters().acked).collect();
    assert_eq!(per_sub.iter().sum::<u64>(), 2000);
    common::assert_verified(&q).await;
}

#[tokio::test]
async fn an_unacked_message_comes_back_after_its_ttr_with_attempt_2() {
    let (_c, q) = common::queue("ttr").await;
    let p = q.publish(Message::new(b"x".to_vec()).ttr(ms(300))).await.unwrap();
    let first = q.fetch(1, ms(500)).await.unwrap();
    assert_eq!(first[0].attempt(), 1);
    // The consumer "dies": it never acks. Before the ttr nothing is delivered.
    assert!(q.fetch(1, ms(100)).await.unwrap().is_empty());
    let second = q.fetch(1, Duration::from_secs(2)).await.unwrap();
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].id(), p.id);
    assert_eq!(second[0].attempt(), 2);
    assert!(second[0].last_error().unwrap().contains("lease expired"));
    // The first consumer's late ack is refused and changes nothing.
    let e = first[0].ack().await.unwrap_err();
    assert_eq!(e.kind(), redelay::ErrorKind::LeaseLost);
    second[0].ack().await.unwrap();
    assert!(q.peek(&p.id).await.unwrap().is_none());
    common::assert_verified(&q).await;
}

#[tokio::test]
async fn nack_retries_with_growing_delay_then_dead_letter_then_respawn() {
    let (_c, q) = common::queue("retry").await;
    let p = q
        .publish(Message::new(b"job".to_vec()).max_attempts(4).backoff(ms(100), Duration::from_secs(10)))
        .await
        .unwrap();
    let mut gaps = Vec::new();
    let mut last_nack = None;
    for attempt in 1..=4 {
        let d = pull(&q, 1, Duration::from_secs(5)).await.pop().expect("redelivered");
        assert_eq!(d.attempt(), attempt);
        if let Some(t) = last_nack {
            gaps.push(d.due_at().duration_since(t).unwrap_or_default());
        }
        let dead = d.nack(None, &format!("boom {attempt}")).await.unwrap();
        assert_eq!(dead, attempt == 4);
        last_nack = Some(SystemTime::now().min(d.delivered_at() + ms(5)));
    }
    // Equal jitter: the k-th retry waits between half and all of 100ms * 2^(k-1).
    for (k, g) in gaps.iter().enumerate() {
        let full = 100u64 << k;
        assert!(*g >= ms(full / 2 - 10) && *g <= ms(full + 50), "retry {k}: gap {g:?} for backoff {full}ms");
    }
    let dead = q.dead_letters(0, 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].id, p.id);
    assert_eq!(dead[0].state, State::Dead);
    assert_eq!(dead[0].last_error.as_deref(), Some("boom 4"));
    assert_eq!(q.stats().await.unwrap().dead, 1);
    common::assert_verified(&q).await;

    assert_eq!(q.respawn(Select::Ids(vec![p.id.clone()])).await.unwrap(), 1);
    let d = pull(&q, 1, Duration::from_secs(2)).await.pop().expect("respawned");
    assert_eq!(d.attempt(), 1);
    d.ack().await.unwrap();
    assert_eq!(q.stats().await.unwrap().total, 0);
    common::assert_verified(&q).await;
}

#[tokio::test]
async fn explicit_retry_delay_and_purge() {
    let (_c, q) = common::queue("purge").await;
    q.publish(Message::new(b"1".to_vec()).id("one").max_attempts(1)).await.unwrap();
    q.publish(Message::new(b"2".to_vec()).id("two").max_attempts(2)).await.unwrap();
    let got = pull(&q, 2, Duration::from_secs(2)).await;
    for d in &got {
        d.nack(Some(ms(300)), "later").await.unwrap();
    }
    let info = q.peek("two").await.unwrap().unwrap();
    assert_eq!(info.state, State::Scheduled);
    assert_eq!(info.attempts, 1);
    assert!(q.fetch(1, ms(100)).await.unwrap().is_empty(), "not before its retry delay");
    assert_eq!(q.peek("one").await.unwrap().unwrap().state, State::Dead);
    assert_eq!(q.purge_dead(Select::All).await.unwrap(), 1);
    assert!(q.peek("one").await.unwrap().is_none());
    common::assert_verified(&q).await;
}

#[tokio::test]
async fn cancel_reschedule_duplicate_replace_peek_stats() {
    let (_c, q) = common::queue("change").await;
    let a = q.publish(Message::new(b"a".to_vec()).id("a").delay(Duration::from_secs(60))).await.unwrap();
    assert_eq!(a.status, PublishStatus::Stored);
    let dup = q.publish(Message::new(b"other".to_vec()).id("a")).await.unwrap();
    assert!(dup.is_duplicate());
    let info = q.peek("a").await.unwrap().unwrap();
    assert_eq!(info.body, b"a", "a duplicate publish changes nothing");
    assert_eq!(info.state, State::Scheduled);

    let rep =
        q.publish(Message::new(b"new".to_vec()).id("a").delay(Duration::from_secs(120)).replace(true)).await.unwrap();
    assert_eq!(rep.status, PublishStatus::Replaced);
    assert_eq!(q.peek("a").await.unwrap().unwrap().body, b"new");

    q.publish(Message::new(b"b".to_vec()).id("b").delay(Duration::from_secs(60))).await.unwrap();
    q.publish(Message::new(b"c".to_vec()).id("c")).await.unwrap();
    let s = q.stats().await.unwrap();
    assert_eq!((s.total, s.scheduled, s.ready, s.leased, s.dead), (3, 2, 1, 0, 0));
    assert!(s.next_due.is_some());

    assert!(q.cancel("b").await.unwrap());
    assert!(!q.cancel("b").await.unwrap());
    assert!(q.peek("b").await.unwrap().is_none());

    // Reschedule the 2-minute message to now: it is delivered right away.
    q.reschedule("a", Due::In(Duration::ZERO)).await.unwrap();
    let got = pull(&q, 2, Duration::from_secs(2)).await;
    let mut ids: Vec<&str> = got.iter().map(|d| d.id()).collect();
    ids.sort();
    assert_eq!(ids, ["a", "c"]);
    // Leased: reschedule refused, cancel allowed (the holder then loses its lease).
    let e = q.reschedule("a", Due::In(ms(10))).await.unwrap_err();
    assert_eq!(e.kind(), redelay::ErrorKind::InvalidArgument);
    let e = q.reschedule("zz", Due::In(ms(10))).await.unwrap_err();
    assert_eq!(e.kind(), redelay::ErrorKind::NotFound);
    assert!(q.cancel("a").await.unwrap());
    let d = got.iter().find(|d| d.id() == "a").unwrap();
    assert_eq!(d.ack().await.unwrap_err().kind(), redelay::ErrorKind::LeaseLost);
    got.iter().find(|d| d.id() == "c").unwrap().ack().await.unwrap();
    assert_eq!(q.stats().await.unwrap().total, 0);
    common::assert_verified(&q).await;
}

#[tokio::test]
async fn batch_of_ten_thousand() {
    let (_c, q) = common::queue("batch").await;
    let msgs: Vec<Message> = (0..10_000).map(|i| Message::new(vec![(i % 251) as u8; 32]).delay(ms(200))).collect();
    let r = q.publish_batch(msgs).await.unwrap();
    assert_eq!(r.len(), 10_000);
    assert!(r.iter().all(|p| p.status == PublishStatus::Stored));
    let ids: std::collections::HashSet<_> = r.iter().map(|p| p.id.clone()).collect();
    assert_eq!(ids.len(), 10_000, "generated ids are unique");
    // A generated id is the decimal text of the message's seq (the queue's first is 1): the
    // script builds it from per-hundred texts, so every digit count and hundred boundary shows.
    let want: Vec<String> = (1..=10_000).map(|s: u64| s.to_string()).collect();
    assert_eq!(r.iter().map(|p| p.id.clone()).collect::<Vec<_>>(), want);
    let s = q.stats().await.unwrap();
    assert_eq!((s.total, s.scheduled + s.ready, s.leased), (10_000, 10_000, 0));
    let mut n = 0;
    let t = std::time::Instant::now();
    while n < 10_000 && t.elapsed() < Duration::from_secs(20) {
        let got = q.fetch(1000, ms(500)).await.unwrap();
        n += got.len();
        for d in got {
            d.ack().await.unwrap();
        }
    }
    assert_eq!(n, 10_000);
    common::assert_verified(&q).await;
    assert_eq!(q.stats().await.unwrap().total, 0);
}

#[tokio::test]
async fn a_closed_client_refuses_calls() {
    let (c, q) = common::queue("closed").await;
    q.publish(Message::new(b"x".to_vec())).await.unwrap();
    c.close().await;
    assert!(c.is_closed());
    let e = q.publish(Message::new(b"y".to_vec())).await.unwrap_err();
    assert_eq!((e.kind(), e.message()), (redelay::ErrorKind::Connection, "client is closed"));
    assert_eq!(q.stats().await.unwrap_err().kind(), redelay::ErrorKind::Connection);
}

/// `Client::close` closes the client's sockets even while its handles (a queue, a delivery, a
/// message stream) are still held, hands back what an open stream fetched and did not hand
/// out, and a held delivery's settle is refused as every later call is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_closes_the_sockets_and_streams_while_handles_are_held() {
    let server = common::RedisServer::start();
    let other = Client::connect(&server.url()).await.unwrap(); // to look, and to count
    let mut raw = redis::Client::open(server.url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let connected = |info: String| -> usize {
        info.lines().find_map(|l| l.strip_prefix("connected_clients:")).unwrap().trim().parse().unwrap()
    };
    other.ping().await.unwrap();
    let before = connected(redis::cmd("INFO").arg("clients").query_async(&mut raw).await.unwrap());
    let c = Client::connect(&server.url()).await.unwrap();
    let q = c.queue("q").unwrap();
    let ttr = Duration::from_secs(60);
    q.publish_batch(["a", "b", "c"].map(|id| Message::new(id.as_bytes().to_vec()).id(id).ttr(ttr)).into())
        .await
        .unwrap();
    let s = q.messages(redelay::MessagesOptions { batch: Some(3), ..Default::default() }).unwrap();
    let a = s.next().await.unwrap().unwrap();
    c.close().await;
    // What the stream fetched and did not hand out is back, due now, no attempt counted.
    let look = other.queue("q").unwrap();
    for id in ["b", "c"] {
        let info = look.peek(id).await.unwrap().unwrap();
        assert_eq!((info.state, info.attempts), (State::Ready, 0), "{id}");
    }
    assert!(s.next().await.unwrap().is_none(), "the stream is closed");
    let e = a.ack().await.unwrap_err();
    assert_eq!((e.kind(), e.message()), (redelay::ErrorKind::Connection, "client is closed"));
    // The sockets close although `q`, `a` and `s` are still held.
    let t = std::time::Instant::now();
    loop {
        let now = connected(redis::cmd("INFO").arg("clients").query_async(&mut raw).await.unwrap());
        if now <= before {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "{now} connections, {before} before the client");
        tokio::time::sleep(ms(50)).await;
    }
    drop((q, a, s));
}

#[tokio::test]
async fn destroy_deletes_every_state() {
    let (c, q) = common::queue("destroy").await;
    q.publish(Message::new(b"s".to_vec()).delay(Duration::from_secs(60))).await.unwrap();
    q.publish(Message::new(b"r".to_vec())).await.unwrap();
    q.publish(Message::new(b"l".to_vec())).await.unwrap();
    let _held = q.fetch(1, ms(500)).await.unwrap();
    assert!(c.queues().await.unwrap().contains(&q.name().to_string()));
    q.destroy().await.unwrap();
    let s = q.stats().await.unwrap();
    assert_eq!((s.total, s.scheduled, s.ready, s.leased, s.dead), (0, 0, 0, 0, 0));
    assert!(!c.queues().await.unwrap().contains(&q.name().to_string()));
    common::assert_verified(&q).await;
}

/// A handle registers its queue's name once; a destroy by another client takes the name out.
/// The handle's next publish makes the queue anew and must put the name back, or the queue
/// holds messages that `queues()` (and so the dashboard's overview) never lists.
#[tokio::test]
async fn a_publish_after_another_clients_destroy_registers_the_queue_again() {
    let (c, q) = common::queue("re-registered").await;
    let other = redelay::Client::builder(&common::url()).prefix(c.prefix()).connect().await.unwrap();
    let name = q.name().to_string();
    q.publish(Message::new(b"before".to_vec())).await.unwrap();
    other.queue(&name).unwrap().destroy().await.unwrap();
    assert!(!other.queues().await.unwrap().contains(&name));
    q.publish(Message::new(b"after".to_vec()).id("after")).await.unwrap();
    assert!(other.queues().await.unwrap().contains(&name), "a queue with data is not registered");
    assert_eq!(other.queue(&name).unwrap().stats().await.unwrap().total, 1);
    // A publish to a queue that holds data registers nothing again: the name stays once.
    q.publish(Message::new(b"more".to_vec())).await.unwrap();
    assert_eq!(other.queues().await.unwrap().iter().filter(|n| **n == name).count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handler_outcomes_ack_nack_panic_and_manual() {
    let (_c, q) = common::queue("outcomes").await;
    for id in ["ok", "err", "panic", "manual", "later"] {
        q.publish(Message::new(id.as_bytes().to_vec()).id(id).max_attempts(1)).await.unwrap();
    }
    let sub = q
        .subscribe(
            |d: Delivery| async move {
                match d.id() {
                    "ok" => Ok(()),
                    "err" => Err(Failure::new("it failed")),
                    "panic" => panic!("kaboom"),
                    "manual" => {
                        d.nack(Some(Duration::from_secs(60)), "manual").await.unwrap();
                        Ok(())
                    }
                    _ => Err(Failure::retry_in("not yet", Duration::from_secs(60))),
                }
            },
            SubscribeOptions::concurrency(4),
        )
        .await
        .unwrap();
    let t = std::time::Instant::now();
    while sub.counters().handled < 5 && t.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(ms(20)).await;
    }
    sub.close().await;
    assert!(q.peek("ok").await.unwrap().is_none());
    let err = q.peek("err").await.unwrap().unwrap();
    assert_eq!((err.state, err.last_error.as_deref()), (State::Dead, Some("it failed")));
    let p = q.peek("panic").await.unwrap().unwrap();
    assert_eq!(p.state, State::Dead);
    assert!(p.last_error.unwrap().contains("kaboom"));
    let m = q.peek("manual").await.unwrap().unwrap();
    assert_eq!((m.state, m.last_error.as_deref()), (State::Dead, Some("manual")), "max_attempts 1: dead");
    let l = q.peek("later").await.unwrap().unwrap();
    assert_eq!(l.state, State::Dead);
    let c = sub.counters();
    assert_eq!(
        (c.delivered, c.handled, c.acked, c.nacked),
        (5, 5, 1, 3),
        "manual nacks are not counted as handler nacks"
    );
    common::assert_verified(&q).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_are_extended_while_the_handler_runs() {
    let (_c, q) = common::queue("extend").await;
    q.publish(Message::new(b"slow".to_vec()).ttr(ms(200))).await.unwrap();
    let runs = Arc::new(Mutex::new(0));
    let r2 = runs.clone();
    let sub = q
        .subscribe(
            move |_d: Delivery| {
                let runs = r2.clone();
                async move {
                    *runs.lock().unwrap() += 1;
                    tokio::time::sleep(ms(1200)).await; // six times the ttr
                    Ok::<(), Failure>(())
                }
            },
            SubscribeOptions::concurrency(2),
        )
        .await
        .unwrap();
    tokio::time::sleep(ms(1600)).await;
    sub.close().await;
    assert_eq!(*runs.lock().unwrap(), 1, "not redelivered while its handler ran");
    assert_eq!(sub.counters().acked, 1);
    assert_eq!(q.stats().await.unwrap().total, 0);
    common::assert_verified(&q).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_consumer_is_woken_by_a_publish_not_by_its_timer() {
    let (_c, q) = common::queue("wake").await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let opts = SubscribeOptions { max_idle: Duration::from_secs(30), ..SubscribeOptions::concurrency(1) };
    let sub = q
        .subscribe(
            move |d: Delivery| {
                let tx = tx.clone();
                async move {
                    tx.send(d.lateness()).unwrap();
                    Ok::<(), Failure>(())
                }
            },
            opts,
        )
        .await
        .unwrap();
    tokio::time::sleep(ms(200)).await; // the consumer is asleep now, with nothing scheduled
    q.publish(Message::new(b"now".to_vec())).await.unwrap();
    q.publish(Message::new(b"soon".to_vec()).delay(ms(300))).await.unwrap();
    for _ in 0..2 {
        let lateness = tokio::time::timeout(Duration::from_secs(3), rx.recv()).await.expect("woken").unwrap();
        assert!(lateness < Duration::from_secs(1), "lateness {lateness:?}");
    }
    sub.close().await;
    common::assert_verified(&q).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_releases_prefetched_messages_without_counting_an_attempt() {
    let (_c, q) = common::queue("close").await;
    let msgs = (0..6).map(|i| Message::new(vec![i]).max_attempts(1)).collect();
    q.publish_batch(msgs).await.unwrap();
    let sub = q
        .subscribe(
            |_d: Delivery| async move {
                tokio::time::sleep(ms(300)).await;
                Ok::<(), Failure>(())
            },
            SubscribeOptions { concurrency: 1, prefetch: Some(5), ..Default::default() },
        )
        .await
        .unwrap();
    tokio::time::sleep(ms(100)).await;
    sub.close().await;
    // One ran to completion; the five prefetched went back, due now, still on attempt 1.
    assert_eq!(sub.counters().acked, 1);
    let s = q.stats().await.unwrap();
    assert_eq!((s.total, s.ready, s.leased, s.dead), (5, 5, 0, 0));
    for d in pull(&q, 5, Duration::from_secs(2)).await {
        assert_eq!(d.attempt(), 1);
        d.ack().await.unwrap();
    }
    common::assert_verified(&q).await;
}

/// A batch is stored in publish order even when Redis has lost its script cache (a restart, a
/// failover, SCRIPT FLUSH): no chunk of it runs after a later one (a NOSCRIPT retry did, which
/// gave that chunk later seqs, so its messages came after later ones of the same due time).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_keeps_publish_order_when_the_script_cache_is_empty() {
    for durable in [false, true] {
        let q_prefix = common::unique("order");
        let b = Client::builder(&common::url()).prefix(&q_prefix);
        // No replica here: WAIT confirms nothing, the publish fails after storing on the master.
        let b = if durable { b.wait_for_replicas(1, ms(1)) } else { b };
        let q = b.connect().await.unwrap().queue("q").unwrap();
        for round in 0..3 {
            let mut raw = common::raw().await;
            let _: () = redis::cmd("SCRIPT").arg("FLUSH").query_async(&mut raw).await.unwrap();
            let n = 5_000;
            let r = q.publish_batch((0..n).map(|i| Message::new(i.to_string().into_bytes())).collect()).await;
            assert_eq!(r.is_err(), durable, "{r:?}");
            let mut bodies = Vec::new();
            while bodies.len() < n {
                let got = q.fetch(1000, ms(500)).await.unwrap();
                assert!(!got.is_empty(), "durable {durable} round {round}: {} of {n}", bodies.len());
                bodies.extend(got.iter().map(|d| String::from_utf8(d.body().to_vec()).unwrap()));
                for d in got {
                    d.ack().await.unwrap();
                }
            }
            let want: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            assert!(bodies == want, "durable {durable} round {round}: delivered out of publish order");
            // On both paths (pipelined calls, WAIT's dedicated pipeline) the handle's replay key
            // holds this batch's 50 calls, its progress and when its expiry was set, and no
            // earlier batch's: a batch deletes what the calls before it stored.
            let fields = common::publish_replay(&q_prefix, "q").await.len();
            assert_eq!(fields, 52, "durable {durable} round {round}: replay fields (and 't')");
        }
    }
}

/// A batch's chunks that reach Redis out of order (a cluster redirect or a retry of one of the
/// pipelined calls) are stored as if they had arrived in order: `publish.lua` refuses a chunk
/// whose predecessor has not run and the client sends it again after. Table of send orders of
/// a 3-chunk batch; an id repeated across chunks, and generated ids, follow the batch's order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_whose_chunks_arrive_out_of_order_is_stored_in_batch_order() {
    let c = Client::builder(&common::url()).prefix(common::unique("reorder")).connect().await.unwrap();
    let at = SystemTime::now() + Duration::from_secs(3600); // one due time: order is publish order
    for (case, order) in [[0, 1, 2], [2, 1, 0], [1, 0, 2], [0, 2, 1], [1, 2, 0]].iter().enumerate() {
        let q = c.queue(&format!("q{case}")).unwrap();
        // 300 messages: m0 .. m299, ids generated for every 7th, and m250 repeats m10 (chunk 0).
        let id_of = |i: usize| match i {
            250 => Some("m10".to_string()),
            i if i % 7 == 0 => None,
            i => Some(format!("m{i}")),
        };
        let msgs = (0..300)
            .map(|i| {
                let m = Message::new(format!("{i}").into_bytes()).at(at);
                match id_of(i) {
                    Some(id) => m.id(id),
                    None => m,
                }
            })
            .collect();
        let got = q.publish_batch_sending_chunks_in(msgs, order).await.unwrap();
        for (i, p) in got.iter().enumerate() {
            let want = if i == 250 { PublishStatus::Duplicate } else { PublishStatus::Stored };
            assert_eq!(p.status, want, "order {order:?}: message {i}");
        }
        let generated: Vec<u64> = (0..300).filter(|i| i % 7 == 0).map(|i| got[i].id.parse().unwrap()).collect();
        assert!(generated.windows(2).all(|w| w[0] < w[1]), "order {order:?}: generated ids {generated:?}");
        let page = q.list(State::Scheduled, 0, 1000).await.unwrap();
        let bodies: Vec<String> = page.items.iter().map(|m| String::from_utf8(m.body.clone()).unwrap()).collect();
        let want: Vec<String> = (0..300).filter(|&i| i != 250).map(|i| i.to_string()).collect();
        assert!(bodies == want, "order {order:?}: stored out of batch order: {bodies:?}");
        // The batch's replay fields stay until the handle's next batch deletes them.
        let replay = common::publish_replay(c.prefix(), &format!("q{case}")).await;
        let batch: Vec<&String> = replay.keys().filter(|f| f.as_str() != "t" && !f.contains(':')).collect();
        assert_eq!(batch.len(), 1, "order {order:?}: one batch's progress: {replay:?}");
        assert_eq!(replay[batch[0]], b"2", "order {order:?}: its last call ran");
        let calls: Vec<String> = (0..3).map(|i| format!("{}:{i}", batch[0])).collect();
        assert!(calls.iter().all(|c| replay.contains_key(c)), "order {order:?}: each call's reply: {replay:?}");
        assert_eq!(replay.len(), 5, "order {order:?}: and 't': {replay:?}");
        q.publish_batch((0..150).map(|i| Message::new(format!("next {i}").into_bytes()).at(at)).collect())
            .await
            .unwrap();
        let replay = common::publish_replay(c.prefix(), &format!("q{case}")).await;
        assert!(!replay.contains_key(batch[0].as_str()), "order {order:?}: the first batch's progress is gone");
        assert!(calls.iter().all(|c| !replay.contains_key(c)), "order {order:?}: its replies are gone: {replay:?}");
        assert_eq!(replay.len(), 4, "order {order:?}: the second batch's 2 calls, progress and 't': {replay:?}");
        let v = q.verify().await.unwrap();
        assert!(v.problems.is_empty(), "{:?}", v.problems);
    }
    let q = c.queue("bad").unwrap();
    let e = q.publish_batch_sending_chunks_in((0..150).map(|_| Message::new(b"x".to_vec())).collect(), &[0, 0]);
    assert!(e.await.unwrap_err().message().contains("send_order: not a permutation of the 2 chunks"));
}

/// `concurrency` above 1,000 (the most one fetch leases) runs that many handlers at once, and
/// the default prefetch is the concurrency up to 1,000: the total held is not cut to 1,000.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_above_a_thousand_runs_that_many_handlers_at_once() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (_c, q) = common::queue("wide").await;
    let (concurrency, n) = (1_200, 1_300);
    q.publish_batch((0..n).map(|i| Message::new(vec![(i % 251) as u8])).collect()).await.unwrap();
    let running = Arc::new(AtomicUsize::new(0));
    let go = Arc::new(tokio::sync::Notify::new());
    let go_flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sub = q
        .subscribe(
            {
                let (running, go, go_flag) = (running.clone(), go.clone(), go_flag.clone());
                move |_d: Delivery| {
                    let (running, go, go_flag) = (running.clone(), go.clone(), go_flag.clone());
                    async move {
                        running.fetch_add(1, Ordering::SeqCst);
                        while !go_flag.load(Ordering::SeqCst) {
                            let _ = tokio::time::timeout(ms(50), go.notified()).await;
                        }
                        Ok::<(), Failure>(())
                    }
                }
            },
            SubscribeOptions::concurrency(concurrency),
        )
        .await
        .unwrap();
    assert_eq!(SubscribeOptions::concurrency(concurrency).prefetch(), 1_000, "the default prefetch, capped");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while running.load(Ordering::SeqCst) < concurrency && std::time::Instant::now() < deadline {
        tokio::time::sleep(ms(50)).await;
    }
    assert_eq!(running.load(Ordering::SeqCst), concurrency, "handlers running at once");
    // The other 100 are prefetched (leased, waiting for a slot).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while q.stats().await.unwrap().leased < n as u64 && std::time::Instant::now() < deadline {
        tokio::time::sleep(ms(50)).await;
    }
    assert_eq!(q.stats().await.unwrap().leased, n as u64);
    go_flag.store(true, Ordering::SeqCst);
    go.notify_waiters();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while sub.counters().acked < n as u64 && std::time::Instant::now() < deadline {
        tokio::time::sleep(ms(50)).await;
    }
    assert_eq!(sub.counters().acked, n as u64);
    sub.close().await;
    common::assert_verified(&q).await;
}
