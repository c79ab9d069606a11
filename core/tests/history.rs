//! History: what the scripts counted per minute and hour, by the Redis clock, with no extra
//! round trip per message.
mod common;

use std::time::{Duration, SystemTime};

use redelay::{Message, Step};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test]
async fn the_scripts_count_what_happens_per_minute_hour_and_in_total() {
    let (_c, q) = common::queue("history").await;
    let t0 = SystemTime::now();
    let msgs = (0..10).map(|i| Message::new(b"h".to_vec()).id(format!("h{i}")).max_attempts(1)).collect();
    q.publish_batch(msgs).await.unwrap();
    q.publish(Message::new(b"e".to_vec()).id("expires").delay(ms(10)).expires_in(ms(20))).await.unwrap();
    q.publish(Message::new(b"r".to_vec()).id("retry").max_attempts(5)).await.unwrap();
    tokio::time::sleep(ms(50)).await;
    let got = q.fetch(100, ms(200)).await.unwrap();
    assert_eq!(got.len(), 11, "ten, the retry, not the expired one");
    for d in &got {
        match d.id() {
            "retry" => assert!(!d.nack(Some(Duration::from_secs(3600)), "later").await.unwrap()),
            "h0" => assert!(d.nack(None, "broken").await.unwrap(), "dead at max_attempts 1"),
            _ => d.ack().await.unwrap(),
        }
    }
    let total = q.history_totals().await.unwrap();
    assert_eq!(
        (total.published, total.delivered, total.acked, total.retried, total.dead, total.expired),
        (12, 11, 9, 1, 1, 1)
    );
    assert_eq!(total.lateness.iter().sum::<u64>(), 11, "one lateness count per delivery");
    let pts = q.history(t0 - Duration::from_secs(60), SystemTime::now(), Step::Minute).await.unwrap();
    let sum = |f: fn(&redelay::HistoryPoint) -> u64| pts.iter().map(f).sum::<u64>();
    assert_eq!((sum(|p| p.published), sum(|p| p.acked), sum(|p| p.expired)), (12, 9, 1));
    assert!(
        pts.len() >= 2 && pts.windows(2).all(|w| w[1].at.duration_since(w[0].at).unwrap() == Duration::from_secs(60))
    );
    let hours = q.history(t0, SystemTime::now(), Step::Hour).await.unwrap();
    assert_eq!(hours.iter().map(|p| p.delivered).sum::<u64>(), 11);
    // Off: nothing more is counted.
    assert!(q.set_history(false).await.unwrap());
    q.publish(Message::new(b"x".to_vec())).await.unwrap();
    assert_eq!(q.history_totals().await.unwrap().published, 12);
    assert!(q.set_history(true).await.unwrap());
    let e = q.history(SystemTime::now(), t0 - Duration::from_secs(3600), Step::Minute).await.unwrap_err();
    assert!(e.message().starts_with("until"), "{e}");
    let e = q.history(t0 - Duration::from_secs(86400 * 2), t0, Step::Minute).await.unwrap_err();
    assert!(e.message().contains("1440"), "{e}");
    q.destroy().await.unwrap();
    assert_eq!(q.history_totals().await.unwrap().published, 0, "destroy deletes the history too");
}

#[tokio::test]
async fn each_delivery_lands_in_the_lateness_bucket_of_its_lateness() {
    let (_c, q) = common::queue("history-buckets").await;
    let now = SystemTime::now();
    // Due 5 s ago: 4,096 to 8,192 ms late (bucket 13); due 20 s ago: over 16,384 ms (bucket 15).
    q.publish(Message::new(b"5s".to_vec()).at(now - Duration::from_secs(5))).await.unwrap();
    q.publish(Message::new(b"20s".to_vec()).at(now - Duration::from_secs(20))).await.unwrap();
    let got = q.fetch(10, ms(500)).await.unwrap();
    assert_eq!(got.len(), 2);
    let total = q.history_totals().await.unwrap();
    let mut want = [0u64; 16];
    want[13] = 1;
    want[15] = 1;
    assert_eq!(total.lateness, want);
    assert!(total.lateness_sum_ms >= 25_000, "{}", total.lateness_sum_ms);
    q.destroy().await.unwrap();
}
