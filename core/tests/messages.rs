//! `Queue::messages`, the pull stream every binding's `messages()` is: order, batches, the
//! release of what was fetched and not handed out, bad options, and waiting for a message.
mod common;

use std::time::Duration;

use redelay::{Delivery, ErrorKind, Message, Messages, MessagesOptions, Queue, State};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A message `id` with a 60 s lease: one held by nobody would stay leased for the whole test.
fn long(id: &str) -> Message {
    Message::new(id.as_bytes().to_vec()).id(id).ttr(Duration::from_secs(60))
}

fn batch(n: usize) -> MessagesOptions {
    MessagesOptions { batch: Some(n), ..Default::default() }
}

/// Polls `cond` every 20 ms for up to 30 s.
async fn eventually<F, Fut>(what: &str, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let t = std::time::Instant::now();
    while !cond().await {
        assert!(t.elapsed() < Duration::from_secs(30), "{what}: not within 30 s");
        tokio::time::sleep(ms(20)).await;
    }
}

/// Each of `ids` is waiting, due now, with no attempt counted.
async fn released(q: &Queue, ids: &[&str]) -> bool {
    for id in ids {
        let info = q.peek(id).await.unwrap().unwrap();
        assert_eq!(info.attempts, 0, "{id}: no attempt counted");
        if info.state != State::Ready {
            return false;
        }
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hands_out_messages_in_order_fetching_a_batch_at_a_time() {
    let (_c, q) = common::queue("messages-order").await;
    let ids = ["m0", "m1", "m2", "m3", "m4"];
    q.publish_batch(ids.iter().map(|id| long(id)).collect()).await.unwrap();
    let s = q.messages(batch(2)).unwrap();
    let mut got = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let d = s.next().await.unwrap().unwrap();
        assert_eq!((d.id(), d.attempt()), (*id, 1));
        // Fetched two at a time: the second of each batch waits in the stream, leased.
        let (buffered, leased) = [(1, 2), (0, 2), (1, 4), (0, 4), (0, 5)][i];
        assert_eq!(s.buffered(), buffered, "after {id}");
        assert_eq!(q.stats().await.unwrap().leased, leased, "after {id}");
        got.push(d);
    }
    for d in &got {
        d.ack().await.unwrap();
    }
    common::assert_verified(&q).await;
}

/// A stream of batch 3 over "a", "b", "c" (60 s leases) that handed out "a": "b" and "c" wait in it.
async fn one_of_three_handed_out(name: &str) -> (redelay::Client, Queue, Messages, Delivery) {
    let (c, q) = common::queue(name).await;
    q.publish_batch(vec![long("a"), long("b"), long("c")]).await.unwrap();
    let s = q.messages(batch(3)).unwrap();
    let a = s.next().await.unwrap().unwrap();
    assert_eq!((a.id(), s.buffered()), ("a", 2));
    (c, q, s, a)
}

/// "b" and "c", released by the stream, come again as first attempts; all three are acked.
async fn redelivered_as_first_attempts(q: &Queue, a: &Delivery) {
    let again = q.fetch(3, Duration::ZERO).await.unwrap();
    let seen: Vec<_> = again.iter().map(|d| (d.id(), d.attempt())).collect();
    assert_eq!(seen, [("b", 1), ("c", 1)], "redelivered as first attempts");
    for d in again.iter().chain([a]) {
        d.ack().await.unwrap();
    }
    common::assert_verified(q).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_releases_what_was_fetched_and_not_handed_out_with_no_attempt_counted() {
    let (_c, q, s, a) = one_of_three_handed_out("messages-close").await;
    s.close().await;
    // Back at once (the close waited for Redis), not held for their 60 s leases.
    assert!(released(&q, &["b", "c"]).await);
    assert_eq!(q.peek("a").await.unwrap().unwrap().state, State::Leased, "the handed-out one keeps its lease");
    assert!(s.next().await.unwrap().is_none(), "closed: it ends");
    s.close().await; // again: nothing
    redelivered_as_first_attempts(&q, &a).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_releases_what_it_had_not_handed_out() {
    let (_c, q) = common::queue("messages-drop").await;
    q.publish_batch(vec![long("a"), long("b")]).await.unwrap();
    let s = q.messages(batch(2)).unwrap();
    let a = s.next().await.unwrap().unwrap();
    drop(s);
    eventually("the untaken message is back, due now", || released(&q, &["b"])).await;
    a.ack().await.unwrap();
    let b = q.fetch(1, Duration::ZERO).await.unwrap();
    assert_eq!((b[0].id(), b[0].attempt()), ("b", 1));
    b[0].ack().await.unwrap();
    common::assert_verified(&q).await;
}

/// `abandon` (a Node worker torn down with a stream open): from a thread outside any runtime,
/// and while the stream is still held (the JS object is not collected), the stream ends and
/// what it had not handed out is back at once, no attempt counted, not leased for its 60 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_stream_releases_what_it_had_not_handed_out_while_still_held() {
    let (_c, q, s, a) = one_of_three_handed_out("messages-abandon").await;
    let held = s.clone();
    std::thread::spawn(move || s.abandon()).join().unwrap();
    assert!(held.is_closed(), "ended at once");
    eventually("the untaken messages are back, due now", || released(&q, &["b", "c"])).await;
    assert_eq!(q.peek("a").await.unwrap().unwrap().state, State::Leased, "the handed-out one keeps its lease");
    assert!(held.next().await.unwrap().is_none(), "abandoned: it ends");
    held.abandon(); // again: nothing
    redelivered_as_first_attempts(&q, &a).await;
}

#[tokio::test]
async fn bad_options_are_refused_naming_the_field_and_its_limit() {
    let (_c, q) = common::queue("messages-bad").await;
    let cases = [
        (batch(0), "batch: must be 1 to 1000, got 0"),
        (batch(1001), "batch: must be 1 to 1000, got 1001"),
        (MessagesOptions { wait: Some(Duration::ZERO), ..Default::default() }, "wait: must be 10 ms to 3650 days"),
        (MessagesOptions { ttr: Some(ms(50)), ..Default::default() }, "ttr: must be 100 ms to 24 h, got 50 ms"),
    ];
    for (opts, words) in cases {
        let e = q.messages(opts).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().contains(words), "{e} (wanted {words})");
    }
    // The defaults are the core's.
    let d = MessagesOptions::default();
    assert_eq!((d.batch(), d.wait()), (redelay::limits::DEFAULT_FETCH_MAX, redelay::limits::DEFAULT_MESSAGES_WAIT));
    q.messages(d).unwrap();
}

/// Fetch calls Redis has run (every script call is an EVALSHA), server-wide.
async fn script_calls() -> u64 {
    let mut c = common::raw().await;
    let info: String = redis::cmd("INFO").arg("commandstats").query_async(&mut c).await.unwrap();
    let line = info.lines().find(|l| l.starts_with("cmdstat_evalsha:")).unwrap_or("calls=0,");
    line.split("calls=").nth(1).unwrap().split(',').next().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_waits_for_a_message_published_later_without_spinning() {
    let (_c, q) = common::queue("messages-wait").await;
    let s = q.messages(MessagesOptions { wait: Some(ms(200)), ..Default::default() }).unwrap();
    // A next() given up while it waits leaves the stream as it was.
    assert!(tokio::time::timeout(ms(300), s.next()).await.is_err());
    let before = script_calls().await;
    let q2 = q.clone();
    let publisher = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        q2.publish(long("later")).await.unwrap();
    });
    let d: Delivery = s.next().await.unwrap().unwrap();
    assert_eq!((d.id(), d.attempt()), ("later", 1));
    publisher.await.unwrap();
    // About one fetch per wait of 200 ms (and a look per wake); a loop that did not wait
    // would have made thousands of calls in that second.
    let calls = script_calls().await - before;
    assert!(calls < 200, "{calls} script calls while waiting about a second");
    d.ack().await.unwrap();
    common::assert_verified(&q).await;
}

/// A close from elsewhere (another task, a signal handler) while a `next()` waits on an empty
/// queue: that `next()` ends with `None` at once instead of waiting for a message, the close
/// returns, and nothing is left leased.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_while_next_waits_ends_that_next_with_none() {
    let (_c, q) = common::queue("messages-close-waiting").await;
    let s = q.messages(MessagesOptions { wait: Some(Duration::from_secs(120)), ..Default::default() }).unwrap();
    let waiting = tokio::spawn({
        let s = s.clone();
        async move { s.next().await }
    });
    // Time for the next() to start its fetch (were it later, it would find the stream closed).
    tokio::time::sleep(ms(300)).await;
    assert!(!waiting.is_finished(), "nothing is due: the next() waits");
    // Bounded only so that a close that does not reach the waiting next() fails, not hangs.
    tokio::time::timeout(Duration::from_secs(30), s.close()).await.expect("close returns");
    let ended = tokio::time::timeout(Duration::from_secs(30), waiting).await.expect("the waiting next() ends");
    assert!(ended.unwrap().unwrap().is_none());
    assert!(s.is_closed() && s.next().await.unwrap().is_none());
    // A message published now is not taken by the closed stream.
    q.publish(long("after")).await.unwrap();
    assert_eq!(q.stats().await.unwrap().leased, 0);
    common::assert_verified(&q).await;
}

/// `close()` ends the stream when it is called, not when its future is first polled: a binding
/// that hands the future to its runtime (a Promise, an asyncio task) can iterate again at once
/// and get `None`, with no flag of its own. The release still waits for the future.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_ends_the_stream_before_its_future_is_polled() {
    let (_c, q) = common::queue("messages-close-at-once").await;
    q.publish_batch(vec![long("a"), long("b")]).await.unwrap();
    let s = q.messages(batch(2)).unwrap();
    let a = s.next().await.unwrap().unwrap();
    let release = s.close();
    assert!(s.is_closed(), "closed as soon as close() is called");
    assert!(s.next().await.unwrap().is_none(), "and the next next() ends, with the future not yet polled");
    assert_eq!(q.peek("b").await.unwrap().unwrap().state, State::Leased, "not released before the future runs");
    release.await;
    assert!(released(&q, &["b"]).await);
    a.ack().await.unwrap();
    common::assert_verified(&q).await;
}

/// A message that waited in the stream's buffer while the one before it was worked on is
/// handed out with a lease renewed to its ttr, not with what was left of the lease of the
/// fetch: here its ack comes after the fetch's lease would have run out, and is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_that_waited_in_the_buffer_comes_with_its_lease_renewed() {
    let (_c, q) = common::queue("messages-renewed").await;
    let ttr = Duration::from_secs(2);
    q.publish_batch(["a", "b"].map(|id| Message::new(id.as_bytes().to_vec()).id(id).ttr(ttr)).into()).await.unwrap();
    let s = q.messages(batch(2)).unwrap();
    let a = s.next().await.unwrap().unwrap();
    let fetch_deadline = a.lease_deadline(); // b was leased with it, to the same deadline
    tokio::time::sleep(ms(1_200)).await; // a's work: b's lease has less than half left
    a.ack().await.unwrap();
    let b = s.next().await.unwrap().unwrap();
    assert_eq!(b.id(), "b");
    let renewed = b.lease_deadline().duration_since(fetch_deadline).unwrap_or_default();
    assert!(renewed >= ms(1_100), "b's lease runs {renewed:?} past the fetch's");
    let stored = q.peek("b").await.unwrap().unwrap().lease_deadline.unwrap();
    assert_eq!(stored, b.lease_deadline(), "renewed in Redis");
    tokio::time::sleep(ms(1_000)).await; // past the fetch's deadline
    b.ack().await.unwrap();
    s.close().await;
    common::assert_verified(&q).await;
}

/// A message whose lease ran out while it waited in the buffer (its process paused, the work
/// on the one before took longer than the ttr) may be another consumer's by now: the stream
/// does not hand it out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_whose_lease_ran_out_in_the_buffer_is_not_handed_out() {
    let (_c, q) = common::queue("messages-lapsed").await;
    let ttr = ms(300);
    q.publish_batch(["a", "b"].map(|id| Message::new(id.as_bytes().to_vec()).id(id).ttr(ttr)).into()).await.unwrap();
    let s = q.messages(MessagesOptions { batch: Some(2), wait: Some(ms(50)), ..Default::default() }).unwrap();
    let a = s.next().await.unwrap().unwrap();
    a.ack().await.unwrap();
    tokio::time::sleep(ms(700)).await; // b's lease runs out
                                       // Leased for longer than the wait below: it stays the other consumer's.
    let other = q.fetch_leasing(1, Duration::ZERO, Some(Duration::from_secs(30))).await.unwrap();
    assert_eq!(other.iter().map(|d| (d.id(), d.attempt())).collect::<Vec<_>>(), [("b", 2)], "another consumer has it");
    // The stream skips its stale b and waits for more: nothing is due.
    let next = tokio::time::timeout(ms(500), s.next()).await;
    let handed = next.map(|d| d.map(|d| d.map(|d| (d.id().to_string(), d.attempt()))));
    assert!(handed.is_err(), "handed out {handed:?}");
    other[0].ack().await.unwrap();
    s.close().await;
    common::assert_verified(&q).await;
}
