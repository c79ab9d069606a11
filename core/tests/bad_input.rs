//! Bad input is refused before anything is written, with InvalidArgument naming field and limit.
mod common;

use std::time::{Duration, SystemTime};

use redelay::{Client, ErrorKind, Message, SubscribeOptions};

#[tokio::test]
async fn bad_messages_are_refused_whole_and_named() {
    let (_c, q) = common::queue("bad").await;
    let big = vec![0u8; 8 * 1024 * 1024 + 1];
    let many_headers = (0..65).fold(Message::new(b"x".to_vec()), |m, i| m.header(format!("h{i}"), "v"));
    let far = SystemTime::now() + Duration::from_secs(3651 * 86400);
    // (message, words the error must contain)
    let table: Vec<(Message, &[&str])> = vec![
        (Message::new(big), &["body", "8388608"]),
        (Message::new(b"x".to_vec()).id(""), &["id", "1 to 256"]),
        (Message::new(b"x".to_vec()).id("x".repeat(257)), &["id", "256"]),
        (Message::new(b"x".to_vec()).id("12345"), &["id", "all digits"]),
        (Message::new(b"x".to_vec()).id("a\nb"), &["id", "control"]),
        (Message::new(b"x".to_vec()).delay(Duration::from_secs(3651 * 86400)), &["delay", "3650 days"]),
        (Message::new(b"x".to_vec()).at(far), &["at", "3650 days"]),
        (Message::new(b"x".to_vec()).max_attempts(0), &["max_attempts", "1 to 1000"]),
        (Message::new(b"x".to_vec()).max_attempts(1001), &["max_attempts", "1 to 1000"]),
        (Message::new(b"x".to_vec()).ttr(Duration::from_millis(99)), &["ttr", "100 ms"]),
        (Message::new(b"x".to_vec()).ttr(Duration::from_secs(86401)), &["ttr", "100 ms to 24 h, got 86401000 ms"]),
        (Message::new(b"x".to_vec()).backoff(Duration::ZERO, Duration::from_secs(1)), &["backoff base", "1 ms"]),
        (
            Message::new(b"x".to_vec()).backoff(Duration::from_secs(60), Duration::from_secs(10)),
            &["backoff: base (60000 ms) must not be above max (10000 ms)"],
        ),
        (Message::new(b"x".to_vec()).drop_on_expiry(true), &["drop_on_expiry", "needs an expiry"]),
        (many_headers, &["headers", "64"]),
        (Message::new(b"x".to_vec()).header("", "v"), &["headers", "empty"]),
        (Message::new(b"x".to_vec()).header("k", "v".repeat(65 * 1024)), &["headers", "65536"]),
    ];
    for (i, (msg, words)) in table.into_iter().enumerate() {
        // Inside a batch with good messages: nothing of the batch is written.
        let batch = vec![Message::new(b"good".to_vec()), msg.clone(), Message::new(b"good".to_vec())];
        let e = q.publish_batch(batch).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "row {i}: {e}");
        assert!(e.message().starts_with("message 1: "), "row {i}: batch errors name the message: {e}");
        let e = q.publish(msg).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "row {i}: {e}");
        for w in words {
            assert!(e.message().contains(w), "row {i}: {e:?} should mention {w:?}");
        }
    }
    assert_eq!(q.stats().await.unwrap().total, 0, "nothing was written");
    common::assert_verified(&q).await;
}

#[tokio::test]
async fn bad_names_options_and_urls() {
    let c = Client::connect(&common::url()).await.unwrap();
    for (name, word) in [("", "1 to 128"), ("a{b}", "may only contain"), ("has space", "may only contain")] {
        let e = c.queue(name).err().expect(name);
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().starts_with("queue name") && e.message().contains(word), "{e}");
    }
    assert!(c.queue(&"q".repeat(129)).is_err());
    let q = c.queue(&common::unique("opts")).unwrap();
    let cases: Vec<(SubscribeOptions, &str)> = vec![
        (SubscribeOptions { concurrency: 0, ..Default::default() }, "concurrency"),
        (SubscribeOptions { prefetch: Some(5000), ..Default::default() }, "prefetch"),
        (SubscribeOptions { ttr: Some(Duration::from_millis(5)), ..Default::default() }, "ttr"),
    ];
    for (opts, word) in cases {
        let e =
            q.subscribe(|_d: redelay::Delivery| async { Ok::<(), redelay::Failure>(()) }, opts).await.err().unwrap();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().starts_with(word), "{e}");
    }
    for (max, ok) in [(0, false), (1001, false), (1000, true)] {
        assert_eq!(q.fetch(max, Duration::ZERO).await.is_ok(), ok, "fetch max {max}");
    }
    for (url, word) in
        [("http://localhost", "unknown scheme"), ("localhost:6379", "unknown scheme"), ("redis://", "url")]
    {
        let e = Client::connect(url).await.err().unwrap();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{url}: {e}");
        assert!(e.message().contains(word), "{url}: {e}");
    }
    let e = Client::builder(&common::url()).prefix("bad prefix").connect().await.err().unwrap();
    assert!(e.message().starts_with("prefix"), "{e}");
    let e = Client::builder(&common::url()).max_body_bytes(0).connect().await.err().unwrap();
    assert!(e.message().starts_with("max_body_bytes"), "{e}");
}

#[tokio::test]
async fn max_body_is_configurable() {
    let c = Client::builder(&common::url()).prefix(common::unique("mb")).max_body_bytes(16).connect().await.unwrap();
    let q = c.queue("q").unwrap();
    q.publish(Message::new(vec![1u8; 16])).await.unwrap();
    let e = q.publish(Message::new(vec![1u8; 17])).await.unwrap_err();
    assert!(e.message().contains("limit of 16 bytes"), "{e}");
}

#[tokio::test]
async fn a_closed_client_refuses_ping_and_queues_too() {
    let c = Client::builder(&common::url()).prefix(common::unique("closedping")).connect().await.unwrap();
    c.ping().await.unwrap();
    c.close().await;
    assert_eq!(c.ping().await.unwrap_err().kind(), ErrorKind::Connection);
    assert_eq!(c.queues().await.unwrap_err().kind(), ErrorKind::Connection);
    let e = redelay::Select::from_parts(Some(vec![]), Some(1), false).unwrap_err();
    assert!(e.message().starts_with("ids/oldest/all"), "{e}");
    assert_eq!(redelay::Select::from_parts(None, None, true).unwrap(), redelay::Select::All);
}
