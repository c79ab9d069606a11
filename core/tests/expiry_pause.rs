//! Expiry (a message not delivered by its expiry time is never delivered) and pause/resume.
mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use redelay::{ErrorKind, Failure, Message, PublishOptions, State, SubscribeOptions};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test]
async fn a_message_past_its_expiry_is_dead_lettered_or_dropped_never_delivered() {
    let (_c, q) = common::queue("expiry").await;
    let t0 = SystemTime::now();
    q.publish_batch(vec![
        Message::new(b"late".to_vec()).id("dead").delay(ms(50)).expires_in(ms(150)),
        Message::new(b"late".to_vec()).id("gone").delay(ms(50)).expires_in(ms(150)).drop_on_expiry(true),
        Message::new(b"in time".to_vec()).id("ok").expires_at(t0 + Duration::from_secs(3600)),
    ])
    .await
    .unwrap();
    let info = q.peek("ok").await.unwrap().unwrap();
    assert!(info.expires_at.is_some_and(|t| t > t0));
    // Nobody consumes until both have expired.
    tokio::time::sleep(ms(400)).await;
    let got = q.fetch(10, ms(200)).await.unwrap();
    assert_eq!(got.iter().map(|d| d.id()).collect::<Vec<_>>(), ["ok"]);
    assert!(got[0].expires_at().is_some());
    got[0].ack().await.unwrap();
    let dead = q.dead_letters(0, 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!((dead[0].id.as_str(), dead[0].state), ("dead", State::Dead));
    assert!(dead[0].last_error.as_deref().unwrap().starts_with("expired"), "{:?}", dead[0].last_error);
    assert!(q.peek("gone").await.unwrap().is_none(), "dropped on expiry");
    common::assert_verified(&q).await;
}

#[tokio::test]
async fn a_retry_after_the_expiry_is_never_handed_to_a_handler() {
    let (_c, q) = common::queue("expiry-retry").await;
    q.publish(Message::new(b"x".to_vec()).id("r").expires_in(ms(300))).await.unwrap();
    let d = q.fetch(1, ms(200)).await.unwrap().remove(0);
    d.nack(Some(ms(400)), "try later").await.unwrap();
    tokio::time::sleep(ms(500)).await;
    assert!(q.fetch(1, ms(100)).await.unwrap().is_empty());
    let info = q.peek("r").await.unwrap().unwrap();
    assert_eq!(info.state, State::Dead);
    assert!(info.last_error.unwrap().starts_with("expired"));
}

#[tokio::test]
async fn an_expiry_at_or_before_the_due_time_is_refused() {
    let (_c, q) = common::queue("expiry-bad").await;
    for (m, field) in [
        (Message::new(b"x".to_vec()).delay(ms(500)).expires_in(ms(500)), "expires_in"),
        (Message::new(b"x".to_vec()).expires_at(SystemTime::now() - ms(1000)), "expires_at"),
        (Message::new(b"x".to_vec()).delay(Duration::from_secs(60)).expires_at(SystemTime::now()), "expires_at"),
    ] {
        let e = q.publish(m).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().starts_with(field) && e.message().contains("after the due time"), "{e}");
    }
    let both = PublishOptions { expires_in: Some(ms(1)), expires_at: Some(SystemTime::now()), ..Default::default() };
    assert!(both.validate().unwrap_err().message().starts_with("expires_in/expires_at"));
    assert_eq!(q.stats().await.unwrap().total, 0, "nothing was written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_queue_delivers_nothing_until_resumed_and_keeps_taking_publishes() {
    let (c, q) = common::queue("pause").await;
    assert!(q.pause().await.unwrap());
    assert!(!q.pause().await.unwrap(), "already paused");
    q.publish_batch((0..5).map(|i| Message::new(b"p".to_vec()).id(format!("p{i}"))).collect()).await.unwrap();
    let handled = Arc::new(AtomicUsize::new(0));
    let h = handled.clone();
    let sub = q
        .subscribe(
            move |_d: redelay::Delivery| {
                let h = h.clone();
                async move {
                    h.fetch_add(1, Ordering::SeqCst);
                    Ok::<(), Failure>(())
                }
            },
            SubscribeOptions::concurrency(2),
        )
        .await
        .unwrap();
    // The state lives in Redis: another client (another process) sees it.
    let other = redelay::Client::builder(&common::url()).prefix(c.prefix()).connect().await.unwrap();
    let s = other.queue(q.name()).unwrap().stats().await.unwrap();
    assert!(s.paused);
    assert_eq!(s.ready, 5);
    assert!(q.fetch(1, ms(300)).await.unwrap().is_empty(), "a pull gets nothing either");
    tokio::time::sleep(ms(500)).await;
    assert_eq!(handled.load(Ordering::SeqCst), 0);
    assert!(q.resume().await.unwrap());
    let t = std::time::Instant::now();
    while handled.load(Ordering::SeqCst) < 5 {
        assert!(t.elapsed() < Duration::from_secs(10), "not resumed");
        tokio::time::sleep(ms(10)).await;
    }
    assert!(!q.stats().await.unwrap().paused);
    sub.close().await;
    common::assert_verified(&q).await;
}
