//! A corrupted record gives an error naming its id and goes to the dead letters, while the
//! rest of the queue keeps flowing: no panic, no stuck consumer.
mod common;

use std::time::{Duration, Instant};

use redelay::{Message, State, SubscribeOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_records_are_moved_aside_and_the_queue_keeps_flowing() {
    let prefix = common::unique("corrupt");
    let client = redelay::Client::builder(&common::url()).prefix(&prefix).connect().await.unwrap();
    let q = client.queue("q").unwrap();
    let msgs = format!("{prefix}:{{q}}:msg");
    let raw = redis::Client::open(common::url()).unwrap();
    let mut r = raw.get_multiplexed_async_connection().await.unwrap();

    q.publish_batch((0..20).map(|i| Message::new(format!("ok {i}").into_bytes()).id(format!("ok-{i}"))).collect())
        .await
        .unwrap();
    q.publish(Message::new(b"x".to_vec()).id("bad-header")).await.unwrap();
    q.publish(Message::new(b"x".to_vec()).header("k", "v").id("bad-tail")).await.unwrap();
    // Unreadable header (unknown version): the script itself refuses it.
    let _: () = redis::cmd("HSET")
        .arg(&msgs)
        .arg("bad-header")
        .arg(b"\x09 garbage garbage garbage garbage garbage".as_slice())
        .query_async(&mut r)
        .await
        .unwrap();
    // Readable header, blob promising a header that is not there: only the client notices.
    let mut rec: Vec<u8> = redis::cmd("HGET").arg(&msgs).arg("bad-tail").query_async(&mut r).await.unwrap();
    let blob_at = 56; // header, empty error
    rec.truncate(blob_at);
    rec.extend_from_slice(&[0, 5, 0, 200]);
    rec[50..54].copy_from_slice(&4u32.to_be_bytes()); // the blob length stays consistent
    let _: () = redis::cmd("HSET").arg(&msgs).arg("bad-tail").arg(rec).query_async(&mut r).await.unwrap();

    let (got, handler) = common::recording(|d| d.id().to_string());
    let sub = q.subscribe(handler, SubscribeOptions::concurrency(4)).await.unwrap();
    let t = Instant::now();
    while got.lock().unwrap().len() < 20 {
        assert!(t.elapsed() < Duration::from_secs(10), "stuck: {:?}", got.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let e = sub.last_error().expect("the consumer reports the corrupt record");
    assert!(e.message().contains("bad-"), "names the id: {e}");
    assert!(sub.counters().errors >= 2);
    sub.close().await;

    assert_eq!(got.lock().unwrap().len(), 20, "only the good ones were delivered");
    let dead = q.dead_letters(0, 10).await.unwrap();
    let mut ids: Vec<&str> = dead.iter().map(|m| m.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["bad-header", "bad-tail"]);
    for m in &dead {
        assert_eq!(m.state, State::Dead);
        let why = m.last_error.as_deref().unwrap_or("");
        assert!(why.contains(&m.id) && why.contains("corrupt"), "{}: {why}", m.id);
    }
    assert_eq!(q.stats().await.unwrap().total, 2);
    common::assert_verified(&q).await;
    assert_eq!(q.purge_dead(redelay::Select::All).await.unwrap(), 2);
}
