//! The delivery promises at the edges (issue 12): duplicate ids in one batch, big bodies, lost
//! replies, WAIT, a missed wake-up, panics, O(log n) changes, dead-letter snapshots, stats,
//! token uniqueness and the stored layout's version. Each runs on a real redis-server.
mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use redelay::{
    BatchHandler, Client, Completer, Delivery, ErrorKind, Failure, Handler, HandlerFuture, Handover, Message,
    PublishStatus, Select, State, SubscribeOptions,
};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Polls `cond` every 20 ms for up to `within`; panics with `what` when it never holds.
async fn eventually<F, Fut>(what: &str, within: Duration, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let t = std::time::Instant::now();
    while !cond().await {
        assert!(t.elapsed() < within, "{what}: not within {within:?}");
        tokio::time::sleep(ms(20)).await;
    }
}

fn keys_of(c: &Client, q: &redelay::Queue, suffix: &str) -> String {
    format!("{}:{{{}}}:{suffix}", c.prefix(), q.name())
}

#[tokio::test]
async fn a_duplicate_id_inside_one_batch_behaves_as_published_one_by_one() {
    let (_c, q) = common::queue("dup-batch").await;
    let r = q
        .publish_batch(vec![
            Message::new(b"now".to_vec()).id("x"),
            Message::new(b"in an hour".to_vec()).id("x").replace(true).delay(Duration::from_secs(3600)),
            Message::new(b"first".to_vec()).id("y"),
            Message::new(b"second".to_vec()).id("y"),
        ])
        .await
        .unwrap();
    let st: Vec<PublishStatus> = r.iter().map(|p| p.status).collect();
    assert_eq!(st, [PublishStatus::Stored, PublishStatus::Replaced, PublishStatus::Stored, PublishStatus::Duplicate]);
    common::assert_verified(&q).await;
    // Only "y" is due, once; "x" is the version due in an hour.
    let got = q.fetch(10, ms(300)).await.unwrap();
    assert_eq!(got.iter().map(|d| (d.id(), d.body())).collect::<Vec<_>>(), [("y", &b"first"[..])]);
    assert!(q.fetch(10, ms(100)).await.unwrap().is_empty(), "a second lease of the same message");
    let x = q.peek("x").await.unwrap().unwrap();
    assert_eq!((x.state, x.body.as_slice()), (State::Scheduled, &b"in an hour"[..]));
    got[0].ack().await.unwrap();
    common::assert_verified(&q).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_bodies_are_written_once_and_fetch_replies_are_capped_in_bytes() {
    let (c, q) = common::queue("big").await;
    let body = |i: u8| vec![i; 4 << 20];
    let msgs = (0..3u8).map(|i| Message::new(body(i)).id(format!("big-{i}")).ttr(ms(100)).max_attempts(5)).collect();
    q.publish_batch(msgs).await.unwrap();
    let mut r = common::raw().await;
    let record_len = |id: &str| {
        let mut r = r.clone();
        let key = keys_of(&c, &q, "msg");
        let id = id.to_string();
        async move { redis::cmd("HSTRLEN").arg(key).arg(id).query_async::<usize>(&mut r).await.unwrap() }
    };
    assert!(record_len("big-0").await < 1024, "the body is not in the record");
    // 4 MiB each, a reply budget of 1 MiB: one message per fetch call.
    let first = q.fetch(10, ms(500)).await.unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].body(), body(0).as_slice());
    // Let its lease run out: the reclaim rewrites the record, never the body.
    tokio::time::sleep(ms(300)).await;
    let mut seen = Vec::new();
    for _ in 0..3 {
        let got = q.fetch(10, ms(500)).await.unwrap();
        assert_eq!(got.len(), 1, "one 4 MiB message per reply");
        seen.push((got[0].id().to_string(), got[0].attempt()));
        assert_eq!(got[0].body()[0] as usize, got[0].id()[4..].parse::<usize>().unwrap());
        assert_eq!(got[0].body().len(), 4 << 20);
        got[0].nack(Some(Duration::from_secs(60)), "later").await.unwrap();
    }
    seen.sort();
    assert_eq!(seen, [("big-0".into(), 2), ("big-1".into(), 1), ("big-2".into(), 1)]);
    for i in 0..3 {
        assert!(record_len(&format!("big-{i}")).await < 1024, "nack and reclaim rewrite the small record only");
    }
    let info = q.peek("big-1").await.unwrap().unwrap();
    assert_eq!(info.body, body(1));
    let _ = &mut r;
    common::assert_verified(&q).await;
    q.destroy().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_fetch_reply_is_retried_and_gets_the_same_lease_back() {
    let (proxy, client, _) = common::through_proxy("lost").await;
    let q = client.queue("q").unwrap();
    // The fetch script cached in Redis first: the lost reply must be one of a call that ran,
    // not of a NOSCRIPT refusal that ran nothing.
    assert!(q.fetch(1, Duration::ZERO).await.unwrap().is_empty());
    q.publish(Message::new(b"once".to_vec()).id("only-try").max_attempts(1).ttr(Duration::from_secs(2))).await.unwrap();
    // The next script call is the fetch: lose its reply.
    proxy.lose_next_reply_of(b"EVALSHA");
    let got = q.fetch(1, Duration::from_secs(5)).await.unwrap();
    assert_eq!(proxy.lost.load(Ordering::SeqCst), 1, "the fault was injected");
    assert_eq!(got.len(), 1, "the retried fetch hands back the lease it made");
    assert_eq!((got[0].id(), got[0].attempt()), ("only-try", 1));
    // The ack is not what this test is about: let the client's connection settle after the cut.
    common::reconnected(&client).await;
    got[0].ack().await.unwrap();
    // Nothing was burnt: no dead letter once the first lease would have run out.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    assert!(q.fetch(1, ms(10)).await.unwrap().is_empty());
    assert_eq!(q.stats().await.unwrap().total, 0);
    common::assert_verified(&q).await;
}

/// The retry of a fetch whose reply was lost hands back only the leases that still run: one
/// that ran out meanwhile is lost like any lapsed lease (a failed attempt, counted by the next
/// fetch), not handed out again with its deadline already past.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_fetch_leaves_out_a_lease_that_ran_out_before_the_retry() {
    let (proxy, client, _) = common::through_proxy("lapsed-replay").await;
    let q = client.queue("q").unwrap();
    // The fetch script cached in Redis first: the lost reply must be one of a call that ran,
    // not of a NOSCRIPT refusal that ran nothing.
    assert!(q.fetch(1, Duration::ZERO).await.unwrap().is_empty());
    // Both due now, leased by one fetch call with each message's own ttr.
    q.publish(Message::new(b"short".to_vec()).id("short").ttr(ms(100))).await.unwrap();
    q.publish(Message::new(b"long".to_vec()).id("long").ttr(Duration::from_secs(60))).await.unwrap();
    // The proxy cuts the connection 200 ms after Redis ran the fetch, and the client retries
    // after that: the 100 ms lease has run out by then, the 60 s one has not (the replay key
    // lives as long as the longest lease of the call).
    proxy.lose_next_reply_of(b"EVALSHA");
    let got = q.fetch(2, Duration::from_secs(5)).await.unwrap();
    assert_eq!(proxy.lost.load(Ordering::SeqCst), 1, "the fault was injected");
    let ids: Vec<&str> = got.iter().map(|d| d.id()).collect();
    assert_eq!(ids, ["long"], "only the lease that still runs comes back");
    // With the times of the call that leased it, not of the retry, which came at least 200 ms
    // later: the lease runs out 60 s after the first run, as the record in Redis says.
    let (deadline, leased_at) = (got[0].lease_deadline(), got[0].delivered_at());
    assert_eq!(deadline, leased_at + Duration::from_secs(60));
    let info = q.peek("long").await.unwrap().unwrap();
    assert_eq!(info.lease_deadline, Some(deadline), "as Redis has it");
    common::reconnected(&client).await;
    got[0].ack().await.unwrap();
    // The lapsed one is a failed attempt: delivered again as attempt 2.
    let again = q.fetch(1, Duration::from_secs(5)).await.unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!((again[0].id(), again[0].attempt()), ("short", 2));
    assert!(again[0].last_error().is_some_and(|e| e.starts_with("lease expired")), "{:?}", again[0].last_error());
    again[0].ack().await.unwrap();
    common::assert_verified(&q).await;
}

/// A pull fetch is cancel-safe: a caller that drops it while its fetch call is under way (a
/// timeout, a `select!`, a cancelled task) does not leave the message leased to nobody until
/// its ttr runs out (then counted as a failed attempt): the call's leases are released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fetch_dropped_during_its_call_releases_what_the_call_leased() {
    let (proxy, client, _) = common::through_proxy("dropped-fetch").await;
    let q = client.queue("q").unwrap();
    // The fetch script cached first, so that the delayed request below is the one that leases.
    assert!(q.fetch(1, Duration::ZERO).await.unwrap().is_empty());
    q.publish(Message::new(b"m".to_vec()).id("m").ttr(Duration::from_secs(60))).await.unwrap();
    // Script calls reach Redis 500 ms late; the caller gives up after 100 ms, before Redis ran
    // the fetch.
    proxy.delay_requests_with(b"EVALSHA", ms(500));
    let gave_up = tokio::time::timeout(ms(100), q.fetch(1, Duration::from_secs(5))).await;
    assert!(gave_up.is_err(), "the caller gave up while the call was held back");
    proxy.delay_requests_with(b"EVALSHA", Duration::ZERO);
    // The call ran anyway and leased the message; its lease is released, not held for 60 s.
    eventually("the held-back call ran", Duration::from_secs(30), || async {
        q.history_totals().await.unwrap().delivered == 1
    })
    .await;
    eventually("the message is back, due now", Duration::from_secs(30), || async {
        let info = q.peek("m").await.unwrap().unwrap();
        assert_eq!(info.attempts, 0, "no attempt counted");
        info.state == State::Ready
    })
    .await;
    let got = q.fetch(1, Duration::ZERO).await.unwrap();
    assert_eq!((got[0].id(), got[0].attempt()), ("m", 1));
    got[0].ack().await.unwrap();
    common::assert_verified(&q).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handover_dropped_untaken_releases_its_deliveries_and_a_taken_one_keeps_its_lease() {
    let (_client, q) = common::queue("handover").await;
    let long = |id: &str| Message::new(id.as_bytes().to_vec()).id(id).ttr(Duration::from_secs(60));
    q.publish_batch(vec![long("kept"), long("dropped")]).await.unwrap();
    let mut got = q.fetch(2, Duration::ZERO).await.unwrap();
    assert_eq!(got.iter().map(Delivery::id).collect::<Vec<_>>(), ["kept", "dropped"]);
    let dropped = got.pop().unwrap();
    let mut handed = Handover::new(got);
    assert_eq!(handed.len(), 1);
    let kept = handed.take();
    assert!(handed.is_empty());
    drop(handed);
    // A caller that never took its deliveries: they are released, not held for 60 s.
    drop(Handover::new(vec![dropped]));
    eventually("the untaken delivery is back, due now", Duration::from_secs(30), || async {
        let info = q.peek("dropped").await.unwrap().unwrap();
        assert_eq!(info.attempts, 0, "no attempt counted");
        info.state == State::Ready
    })
    .await;
    // The taken one still holds its lease.
    assert_eq!(q.peek("kept").await.unwrap().unwrap().state, State::Leased);
    kept[0].ack().await.unwrap();
    let again = q.fetch(1, Duration::ZERO).await.unwrap();
    assert_eq!((again[0].id(), again[0].attempt()), ("dropped", 1));
    again[0].ack().await.unwrap();
    common::assert_verified(&q).await;
}

#[tokio::test]
async fn wait_for_replicas_out_of_range_is_refused_at_connect_as_in_every_binding() {
    for (n, t, field) in [(0, ms(100), "replicas: must be 1 to 100, got 0"), (1, Duration::ZERO, "timeout")] {
        let e = Client::builder(&common::url()).wait_for_replicas(n, t).connect().await.err().unwrap();
        assert_eq!(e.kind(), redelay::ErrorKind::InvalidArgument);
        assert!(e.message().starts_with("wait_for_replicas.") && e.message().contains(field), "{e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_replicas_never_blocks_the_shared_connection() {
    // No replica at all: every WAIT runs its whole timeout and confirms nothing.
    let prefix = common::unique("wait");
    let client = Client::builder(&common::url())
        .prefix(&prefix)
        .wait_for_replicas(1, Duration::from_secs(4))
        .connect()
        .await
        .unwrap();
    let q = client.queue("q").unwrap();
    // The publish script is not cached on that server (SCRIPT FLUSH: a fresh server, a restart
    // or a failover look alike): the durable publish must still store at once, not after WAIT
    // ran out its timeout for a NOSCRIPT.
    let mut raw = redis::Client::open(common::url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("SCRIPT").arg("FLUSH").query_async(&mut raw).await.unwrap();
    let q2 = q.clone();
    let publish = tokio::spawn(async move { q2.publish(Message::new(b"d".to_vec()).id("durable")).await });
    // Calls on the same client go through while WAIT blocks its own connection.
    let t = std::time::Instant::now();
    let mut stats = q.stats().await.unwrap();
    while stats.total == 0 && t.elapsed() < Duration::from_secs(3) {
        tokio::time::sleep(ms(20)).await;
        stats = q.stats().await.unwrap();
    }
    let fetched = q.fetch(1, Duration::ZERO).await.unwrap();
    assert!(!publish.is_finished(), "the publish is still waiting for a replica");
    assert_eq!(stats.total, 1, "stored on the master meanwhile");
    assert_eq!(fetched.len(), 1);
    let e = publish.await.unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Redis);
    assert!(e.message().contains("0 of 1 replicas"), "{e}");
    fetched[0].ack().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_fetch_sees_a_publish_made_while_its_wake_listener_subscribes() {
    let proxy = common::FaultProxy::start(common::port_of(&common::url())).await;
    // The wake subscription takes 1.5 s to reach Redis.
    proxy.delay_requests_with(b"SUBSCRIBE", Duration::from_millis(1500));
    let prefix = common::unique("window");
    let client = Client::builder(&proxy.url()).prefix(&prefix).connect().await.unwrap();
    let q = client.queue("q").unwrap();
    let direct = Client::builder(&common::url()).prefix(&prefix).connect().await.unwrap();
    // The client's wake connection is already up (a subscription on another queue), so the
    // fetch's listener joins it with a SUBSCRIBE of its own.
    let other = client.queue("other").unwrap();
    let (_, handler) = common::recording(|d| d.id().to_string());
    let sub = other.subscribe(handler, SubscribeOptions::concurrency(1)).await.unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let waiting = tokio::spawn(async move { q.fetch(1, Duration::from_secs(120)).await });
    tokio::time::sleep(ms(300)).await;
    direct.queue("q").unwrap().publish(Message::new(b"now".to_vec()).id("w")).await.unwrap();
    // Far below the 120 s wait: the fetch looks again (capped sleeps, and a look once its
    // listener is subscribed) instead of sleeping through the publish.
    let got =
        tokio::time::timeout(Duration::from_secs(30), waiting).await.expect("missed the wake-up").unwrap().unwrap();
    assert_eq!(got[0].id(), "w");
    got[0].ack().await.unwrap();
    sub.close().await;
}

/// A batch handler whose hand-over always panics.
struct PanickingDispatch;

impl BatchHandler for PanickingDispatch {
    fn dispatch(&self, _batch: Vec<(u64, Delivery)>, _completer: &Completer) {
        panic!("cannot reach the event loop");
    }
}

/// A handler that panics before it returns its future.
struct PanicsSynchronously(Arc<AtomicUsize>);

impl Handler for PanicsSynchronously {
    fn handle(&self, _d: Delivery) -> HandlerFuture {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("synchronous part failed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panics_release_leases_instead_of_keeping_them_forever() {
    let (_c, q) = common::queue("panics").await;
    let m = |id: &str| Message::new(b"p".to_vec()).id(id).ttr(ms(200)).max_attempts(2).backoff(ms(1), ms(1));
    q.publish(m("dispatch")).await.unwrap();
    let sub = q.subscribe_batch(Arc::new(PanickingDispatch), SubscribeOptions::concurrency(2)).await.unwrap();
    eventually("the dispatch panic dead-letters the message", Duration::from_secs(10), || async {
        q.peek("dispatch").await.unwrap().is_some_and(|i| i.state == State::Dead)
    })
    .await;
    let why = q.peek("dispatch").await.unwrap().unwrap().last_error.unwrap();
    assert!(why.contains("panicked") && why.contains("cannot reach the event loop"), "{why}");
    sub.close().await;

    q.publish(m("sync")).await.unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let sub = q.subscribe(PanicsSynchronously(calls.clone()), SubscribeOptions::concurrency(2)).await.unwrap();
    eventually("the synchronous panic dead-letters the message", Duration::from_secs(10), || async {
        q.peek("sync").await.unwrap().is_some_and(|i| i.state == State::Dead)
    })
    .await;
    assert_eq!(calls.load(Ordering::SeqCst), 2, "two attempts, each released at once");
    let why = q.peek("sync").await.unwrap().unwrap().last_error.unwrap();
    assert!(why.contains("synchronous part failed"), "{why}");
    sub.close().await;
    common::assert_verified(&q).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_cancel_and_reschedule_never_scan_what_is_waiting() {
    let (_c, q) = common::queue("no-scan").await;
    let msgs: Vec<Message> = (0..20_000).map(|i| Message::new(b"w".to_vec()).id(format!("m{i}"))).collect();
    q.publish_batch(msgs).await.unwrap();
    // A fetch looks at the due messages (today's layout lost its ready list; before, this
    // moved them into it, where every change was an O(n) LREM).
    let d = q.fetch(1, ms(100)).await.unwrap();
    let mut r = common::raw().await;
    let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query_async(&mut r).await.unwrap();
    let p = q.publish(Message::new(b"new".to_vec()).id("m10").replace(true)).await.unwrap();
    assert_eq!(p.status, PublishStatus::Replaced);
    assert!(q.cancel("m20").await.unwrap());
    q.reschedule("m30", redelay::Due::In(Duration::from_secs(60))).await.unwrap();
    let info: String = redis::cmd("INFO").arg("commandstats").query_async(&mut r).await.unwrap();
    for scan in ["cmdstat_lrem", "cmdstat_lrange", "cmdstat_lpos", "cmdstat_zscan", "cmdstat_hscan"] {
        assert!(!info.contains(scan), "{scan} ran: {info}");
    }
    d[0].ack().await.unwrap();
    common::assert_verified(&q).await;
    q.destroy().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn respawn_and_purge_work_on_a_snapshot_of_the_dead_letters() {
    let (c, q) = common::queue("snapshot").await;
    let n = 1500;
    let msgs: Vec<Message> = (0..n).map(|i| Message::new(b"d".to_vec()).id(format!("d{i}")).max_attempts(1)).collect();
    q.publish_batch(msgs).await.unwrap();
    let failing = |_d: Delivery| async { Err::<(), Failure>(Failure::new("always fails")) };
    let sub = q.subscribe(failing, SubscribeOptions::concurrency(50)).await.unwrap();
    eventually("all dead", Duration::from_secs(30), || async { q.stats().await.unwrap().dead == n as u64 }).await;
    // The consumer keeps killing whatever is respawned, while the respawn runs in steps.
    let respawned = q.respawn(Select::All).await.unwrap();
    assert_eq!(respawned, n as u64, "exactly the dead letters there were, each once");
    eventually("all dead again", Duration::from_secs(30), || async { q.stats().await.unwrap().dead == n as u64 }).await;
    sub.close().await;

    // An unreadable record at the head does not end "the oldest N" early.
    let mut r = common::raw().await;
    let _: () =
        redis::cmd("HSET").arg(keys_of(&c, &q, "msg")).arg("broken").arg("garbage").query_async(&mut r).await.unwrap();
    let _: () = redis::cmd("ZADD").arg(keys_of(&c, &q, "died")).arg(0).arg("broken").query_async(&mut r).await.unwrap();
    assert_eq!(q.respawn(Select::Oldest(3)).await.unwrap(), 3);
    assert_eq!(q.purge_dead(Select::All).await.unwrap(), n as u64 - 3 + 1);
    let left = q.stats().await.unwrap();
    assert_eq!((left.dead, left.total), (0, 3));
    common::assert_verified(&q).await;
    q.destroy().await.unwrap();
}

#[tokio::test]
async fn stats_count_due_messages_a_fetch_has_already_looked_at() {
    let (_c, q) = common::queue("stats-ready").await;
    q.publish_batch((0..100).map(|i| Message::new(b"s".to_vec()).id(format!("s{i}"))).collect()).await.unwrap();
    let d = q.fetch(1, ms(100)).await.unwrap();
    let s = q.stats().await.unwrap();
    assert_eq!((s.ready, s.leased, s.scheduled), (99, 1, 0));
    assert!(s.oldest_ready_due.is_some_and(|t| t <= SystemTime::now()), "{s:?}");
    d[0].ack().await.unwrap();
}

#[tokio::test]
async fn a_token_from_before_a_destroy_cannot_settle_a_new_message() {
    let (_c, q) = common::queue("tokens").await;
    q.publish(Message::new(b"1".to_vec()).id("t")).await.unwrap();
    let old = q.fetch(1, ms(200)).await.unwrap().remove(0);
    q.destroy().await.unwrap();
    q.publish(Message::new(b"2".to_vec()).id("t")).await.unwrap();
    let new = q.fetch(1, ms(200)).await.unwrap().remove(0);
    assert_ne!(old.token(), new.token());
    assert_eq!(q.ack("t", old.token()).await.unwrap_err().kind(), ErrorKind::LeaseLost);
    assert_eq!(old.ack().await.unwrap_err().kind(), ErrorKind::LeaseLost);
    new.ack().await.unwrap();
    common::assert_verified(&q).await;
}

#[tokio::test]
async fn data_of_another_layout_is_refused_not_misread() {
    let (c, q) = common::queue("layout").await;
    let mut r = common::raw().await;
    // Layout 1 kept records in the `jobs` hash: a queue holding such data is refused.
    let _: () =
        redis::cmd("HSET").arg(keys_of(&c, &q, "jobs")).arg("old").arg("v1 record").query_async(&mut r).await.unwrap();
    let e = q.publish(Message::new(b"x".to_vec())).await.unwrap_err();
    assert!(e.message().contains("layout 1"), "{e}");
    assert!(q.fetch(1, ms(10)).await.unwrap_err().message().contains("layout 1"));
    let _: () = redis::cmd("DEL").arg(keys_of(&c, &q, "jobs")).query_async(&mut r).await.unwrap();
    // A queue of this layout leaves a marker where layout 1 looks, so an old client fails loudly.
    q.publish(Message::new(b"x".to_vec())).await.unwrap();
    let t: String = redis::cmd("TYPE").arg(keys_of(&c, &q, "jobs")).query_async(&mut r).await.unwrap();
    assert_eq!(t, "string");
    let e = redis::cmd("HGET").arg(keys_of(&c, &q, "jobs")).arg("x").query_async::<Option<String>>(&mut r).await;
    assert!(e.unwrap_err().to_string().contains("WRONGTYPE"));
    // A future layout is refused as well.
    let _: () = redis::cmd("HSET").arg(keys_of(&c, &q, "meta")).arg("v").arg("3").query_async(&mut r).await.unwrap();
    assert!(q.stats().await.unwrap_err().message().contains("layout 3"));
    q.destroy().await.unwrap();
}

/// A batch's calls store their replies in the handle's replay key, and a later batch deletes
/// them. When that later batch fails before Redis saw it (here its connection drops before its
/// first call is forwarded), the deletions it carried are handed back, and the next batch
/// makes them: no replay field outlives its batch while the handle keeps publishing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_fields_of_a_batch_are_deleted_even_when_the_batch_meant_to_delete_them_fails() {
    let (proxy, client, prefix) = common::through_proxy("replay").await;
    let q = client.queue("q").unwrap();
    let batch = |tag: &str| -> Vec<Message> {
        (0..150).map(|i| Message::new(format!("{tag}{i}").into_bytes()).delay(Duration::from_secs(3600))).collect()
    };
    let fields = || async {
        let mut f: Vec<String> = common::publish_replay(&prefix, "q").await.into_keys().filter(|f| f != "t").collect();
        f.sort();
        f
    };

    q.publish_batch(batch("a")).await.unwrap();
    let first = fields().await;
    assert_eq!(first.len(), 3, "2 calls and the batch's progress: {first:?}");

    proxy.drop_next_request_with(b"bx0"); // the first call's first body (hex ids hold no x)
    assert!(q.publish_batch(batch("bx")).await.is_err(), "the batch's connection dropped");
    assert_eq!(proxy.lost.load(Ordering::SeqCst), 1, "the fault was injected");
    assert_eq!(fields().await, first, "Redis saw nothing of the failed batch");

    common::reconnected(&client).await;
    q.publish_batch(batch("c")).await.unwrap();
    let last = fields().await;
    assert_eq!(last.len(), 3, "only the last batch's fields: {last:?}");
    assert!(last.iter().all(|f| !first.contains(f)), "the first batch's fields are gone: {last:?}");
    assert_eq!(q.stats().await.unwrap().total, 300, "a and c stored, b not");
}

/// A settle goes out when it is called: a caller cancelled while it waits for the answer (a
/// binding's cancelled coroutine or asyncio task drops the future) does not take it back. Each
/// future here is dropped without ever being polled.
#[tokio::test]
async fn a_settle_is_sent_when_called_even_if_its_future_is_dropped() {
    let (_c, q) = common::queue("settle-dropped").await;
    let msgs = ["acked", "nacked", "released", "extended"].map(|id| Message::new(b"x".to_vec()).id(id).ttr(ms(5_000)));
    q.publish_batch(msgs.into()).await.unwrap();
    let got = q.fetch(4, ms(500)).await.unwrap();
    let by_id = |id: &str| got.iter().find(|d| d.id() == id).unwrap();
    let before = by_id("extended").lease_deadline();
    drop(by_id("acked").ack());
    drop(by_id("nacked").nack(Some(Duration::from_secs(3600)), "dropped"));
    drop(by_id("released").release());
    drop(by_id("extended").extend(Duration::from_secs(600)));
    eventually("the four settles applied", Duration::from_secs(10), || async {
        let (n, r, e) = (q.peek("nacked").await.unwrap(), q.peek("released").await.unwrap(), q.peek("extended"));
        let e = e.await.unwrap().unwrap();
        q.peek("acked").await.unwrap().is_none()
            && n.is_some_and(|n| {
                (n.state, n.attempts, n.last_error.as_deref()) == (State::Scheduled, 1, Some("dropped"))
            })
            && r.is_some_and(|r| (r.state, r.attempts) == (State::Ready, 0))
            && e.lease_deadline.is_some_and(|d| d > before + Duration::from_secs(60))
    })
    .await;
    // A second settle of the same delivery is refused at the call, not at the await.
    let again = by_id("acked").ack();
    assert_eq!(again.await.unwrap_err().kind(), ErrorKind::LeaseLost);
    common::assert_verified(&q).await;
}

/// A record that is not leased stores the zero token, and a fetch never hands it out: settling
/// by id with that token changes nothing, whatever the message's state (an ack used to delete a
/// scheduled or ready message, an extend to lease one nobody fetched).
#[tokio::test]
async fn the_zero_token_settles_nothing() {
    let (_c, q) = common::queue("zero-token").await;
    let zero = "0".repeat(16);
    q.publish(Message::new(b"s".to_vec()).id("scheduled").delay(Duration::from_secs(600))).await.unwrap();
    q.publish(Message::new(b"r".to_vec()).id("ready")).await.unwrap();
    q.publish(Message::new(b"d".to_vec()).id("dead").max_attempts(1)).await.unwrap();
    let d = q.fetch(2, ms(500)).await.unwrap();
    let dead = d.iter().find(|d| d.id() == "dead").unwrap();
    dead.nack(None, "to the dead letters").await.unwrap();
    let ready = d.iter().find(|d| d.id() == "ready").unwrap();
    ready.release().await.unwrap();
    for id in ["scheduled", "ready", "dead"] {
        let before = q.peek(id).await.unwrap().unwrap();
        let calls = [
            ("ack", q.ack(id, &zero).await.map(|_| ())),
            ("nack", q.nack(id, &zero, None, "x").await.map(|_| ())),
            ("release", q.release(id, &zero).await),
            ("extend", q.extend(id, &zero, Duration::from_secs(60)).await),
        ];
        for (call, r) in calls {
            assert_eq!(r.map_err(|e| e.kind()), Err(ErrorKind::LeaseLost), "{call} of {id}");
        }
        let after = q.peek(id).await.unwrap().unwrap();
        assert_eq!((after.state, after.attempts, after.lease_deadline), (before.state, before.attempts, None), "{id}");
    }
    common::assert_verified(&q).await;
}

/// At maxmemory with `noeviction`, publishes fail cleanly and acks still go through, so
/// consumers drain a full server. An ack used to be refused (its first write was a history
/// counter, which Redis refuses out of memory), so handled messages came back and a full
/// queue never drained.
#[tokio::test]
async fn at_maxmemory_publishes_fail_and_acks_still_drain() {
    let server = common::RedisServer::start();
    let c = Client::builder(&server.url()).connect().await.unwrap();
    let q = c.queue("full").unwrap();
    q.publish_batch((0..10).map(|i| Message::new(vec![b'x'; 2048]).id(format!("m{i}"))).collect()).await.unwrap();
    let got = q.fetch(10, ms(500)).await.unwrap();
    assert_eq!(got.len(), 10);
    let mut r = redis::Client::open(server.url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let info: String = redis::cmd("INFO").arg("memory").query_async(&mut r).await.unwrap();
    let used: u64 = info.lines().find_map(|l| l.strip_prefix("used_memory:")).unwrap().trim().parse().unwrap();
    let config = |k: &str, v: String| redis::cmd("CONFIG").arg("SET").arg(k).arg(v).clone();
    let _: () = config("maxmemory-policy", "noeviction".into()).query_async(&mut r).await.unwrap();
    let _: () = config("maxmemory", (used / 2).to_string()).query_async(&mut r).await.unwrap();

    let e = q.publish(Message::new(b"more".to_vec()).id("more")).await.unwrap_err();
    assert!(e.message().contains("OOM"), "{e}");
    for d in &got {
        d.ack().await.unwrap_or_else(|e| panic!("ack of {} out of memory: {e}", d.id()));
    }
    let _: () = config("maxmemory", "0".into()).query_async(&mut r).await.unwrap();
    let st = q.stats().await.unwrap();
    assert_eq!((st.total, st.leased), (0, 0));
    assert!(q.peek("more").await.unwrap().is_none(), "the refused publish stored nothing");
    assert_eq!(q.history_totals().await.unwrap().acked, 10, "the acks were counted too");
    common::assert_verified(&q).await;
}

/// A subscription that sat on prefetched deliveries past their lease (its process paused — here
/// a handler that blocks the only runtime thread, like a long GC pause — so the keeper could
/// not extend them) does not start their handlers: another consumer may be running those
/// messages by then. They run once Redis hands them out again, as attempt 2. (They used to
/// run at attempt 1 after the pause, a second execution beside the new holder's.)
#[tokio::test(flavor = "current_thread")]
async fn prefetched_deliveries_whose_lease_ran_out_are_not_started() {
    let (_c, q) = common::queue("lapsed").await;
    let ids = ["m0", "m1", "m2", "m3"];
    q.publish_batch(ids.iter().map(|id| Message::new(b"x".to_vec()).id(*id).ttr(ms(300))).collect()).await.unwrap();
    let runs: Arc<std::sync::Mutex<Vec<(String, u32)>>> = Default::default();
    let r = runs.clone();
    let handler = move |d: Delivery| {
        r.lock().unwrap().push((d.id().to_string(), d.attempt()));
        if d.id() == "m0" && d.attempt() == 1 {
            std::thread::sleep(ms(1_000)); // blocks the runtime: nothing extends the leases
        }
        async { Ok::<(), Failure>(()) }
    };
    let opts = SubscribeOptions { prefetch: Some(3), ..SubscribeOptions::concurrency(1) };
    let sub = q.subscribe(handler, opts).await.unwrap();
    eventually("every message handled", Duration::from_secs(20), || async { q.stats().await.unwrap().total == 0 })
        .await;
    sub.close().await;
    let runs = runs.lock().unwrap().clone();
    for id in &ids[1..] {
        let attempts: Vec<u32> = runs.iter().filter(|(i, _)| i == id).map(|(_, a)| *a).collect();
        assert_eq!(attempts, [2], "{id} ran once, after Redis gave it out again: {runs:?}");
    }
    assert!(sub.counters().lease_lost >= 3, "{:?}", sub.counters());
}

/// Once an extend finds a lease gone (here the message was cancelled while its handler ran),
/// the keeper stops extending it; it used to try again every tick until the handler returned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keeper_stops_extending_a_lease_that_is_gone() {
    let server = common::RedisServer::start();
    let c = Client::builder(&server.url()).connect().await.unwrap();
    let q = c.queue("gone").unwrap();
    q.publish(Message::new(b"x".to_vec()).id("g").ttr(ms(200))).await.unwrap();
    let (started_tx, started) = tokio::sync::oneshot::channel::<()>();
    let started_tx = std::sync::Mutex::new(Some(started_tx));
    let handler = move |_d: Delivery| {
        if let Some(tx) = started_tx.lock().unwrap().take() {
            let _ = tx.send(());
        }
        async {
            tokio::time::sleep(ms(2_500)).await;
            Ok::<(), Failure>(())
        }
    };
    let sub = q.subscribe(handler, SubscribeOptions::concurrency(1)).await.unwrap();
    started.await.unwrap();
    assert!(q.cancel("g").await.unwrap());
    let mut r = redis::Client::open(server.url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let evalsha = |info: String| -> u64 {
        let line = info.lines().find(|l| l.starts_with("cmdstat_evalsha:")).unwrap_or("calls=0,");
        line.split("calls=").nth(1).and_then(|s| s.split(',').next()).unwrap().parse().unwrap()
    };
    tokio::time::sleep(ms(300)).await; // the keeper's first refused extend
    let before = evalsha(redis::cmd("INFO").arg("commandstats").query_async(&mut r).await.unwrap());
    tokio::time::sleep(ms(1_500)).await; // about 30 keeper ticks of a 200 ms ttr
    let after = evalsha(redis::cmd("INFO").arg("commandstats").query_async(&mut r).await.unwrap());
    assert!(after - before <= 3, "{} script calls while nothing was leased", after - before);
    sub.close().await;
    assert_eq!(sub.counters().lease_lost, 1, "the handler's ack found the lease gone");
}
