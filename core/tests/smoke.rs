mod common;

use std::time::Duration;

use redelay::{Message, State};

#[tokio::test]
async fn publish_fetch_ack_round_trip() {
    let (_c, q) = common::queue("smoke").await;
    let p = q.publish(Message::new(b"hello".to_vec()).header("k", "v")).await.unwrap();
    let info = q.peek(&p.id).await.unwrap().unwrap();
    assert_eq!(info.state, State::Ready);
    let got = q.fetch(10, Duration::from_secs(2)).await.unwrap();
    assert_eq!(got.len(), 1);
    let d = &got[0];
    assert_eq!(d.id(), p.id);
    assert_eq!(d.body(), b"hello");
    assert_eq!(d.headers().get("k").map(String::as_str), Some("v"));
    assert_eq!(d.attempt(), 1);
    assert!(d.delivered_at() >= d.due_at());
    assert_eq!(q.peek(&p.id).await.unwrap().unwrap().state, State::Leased);
    d.ack().await.unwrap();
    assert!(q.peek(&p.id).await.unwrap().is_none());
    common::assert_verified(&q).await;
}
