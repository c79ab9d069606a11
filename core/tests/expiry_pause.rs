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

/// How a respawn case is called: the typed call, the wire form (`Queue::call`, as every binding
/// and the HTTP gateway), or a bulk respawn.
#[derive(Clone, Copy, Debug)]
enum Via {
    Typed,
    Wire,
    Bulk,
}

/// What the respawned messages' expiry must be.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// Their own, already passed: they expire again instead of being delivered.
    Own,
    None,
    /// This long after the respawn.
    After(Duration),
}

#[tokio::test]
async fn respawn_keeps_clears_or_renews_the_expiry_on_plain_and_sharded_queues() {
    use redelay::{BulkAction, BulkOptions, QueueOptions, RespawnExpiry as E, Select};
    use serde_json::json;
    let minute = Duration::from_secs(60);
    let cases: &[(&str, u32, Via, Select, E, Want)] = &[
        ("keep", 1, Via::Typed, Select::All, E::Keep, Want::Own),
        ("clear", 1, Via::Typed, Select::Oldest(2), E::Clear, Want::None),
        ("fresh", 1, Via::Typed, Select::Ids(vec!["a".into(), "b".into()]), E::In(minute), Want::After(minute)),
        ("wire-keep", 1, Via::Wire, Select::Oldest(5), E::Keep, Want::Own),
        ("wire-clear", 1, Via::Wire, Select::All, E::Clear, Want::None),
        ("wire-fresh", 1, Via::Wire, Select::Oldest(2), E::In(minute), Want::After(minute)),
        ("bulk-fresh", 1, Via::Bulk, Select::Ids(vec!["a".into(), "b".into()]), E::In(minute), Want::After(minute)),
        ("bulk-clear", 1, Via::Bulk, Select::Ids(vec!["a".into(), "b".into()]), E::Clear, Want::None),
        ("sharded-fresh", 4, Via::Typed, Select::Oldest(2), E::In(minute), Want::After(minute)),
        ("sharded-all-clear", 4, Via::Wire, Select::All, E::Clear, Want::None),
        ("sharded-keep", 4, Via::Typed, Select::Ids(vec!["a".into(), "b".into()]), E::Keep, Want::Own),
    ];
    for (name, shards, via, sel, expiry, want) in cases.iter().cloned() {
        let (c, _) = common::queue("respawn-expiry").await;
        let q = c.queue_with(&common::unique(name), QueueOptions::shards(shards)).unwrap();
        // Two messages that expire soon die (out of attempts) before they expire.
        for id in ["a", "b"] {
            q.publish(Message::new(b"x".to_vec()).id(id).max_attempts(1).expires_in(ms(300))).await.unwrap();
        }
        let mut leased = Vec::new();
        while leased.len() < 2 {
            leased.extend(q.fetch(2, ms(1000)).await.unwrap());
        }
        for d in leased {
            assert!(d.nack(None, "boom").await.unwrap(), "{name}: dead");
        }
        let mut own = std::collections::HashMap::new();
        for id in ["a", "b"] {
            own.insert(id, q.peek(id).await.unwrap().unwrap().expires_at.unwrap());
        }
        // Their expiry passes while they are dead.
        while own.values().any(|&t| SystemTime::now() < t + ms(100)) {
            tokio::time::sleep(ms(50)).await;
        }
        let before = SystemTime::now();
        let n = match via {
            Via::Typed => q.respawn_with(sel, expiry).await.unwrap(),
            Via::Wire => {
                let mut a = match sel {
                    Select::Ids(ids) => json!({ "ids": ids }),
                    Select::Oldest(n) => json!({ "oldest": n }),
                    Select::All => json!({ "all": true }),
                };
                match expiry {
                    E::Keep => {}
                    E::Clear => a["clear_expiry"] = json!(true),
                    E::In(d) => a["expires_in_ms"] = json!(d.as_millis() as u64),
                }
                let r = q.call("respawn", a).await.unwrap();
                serde_json::to_value(r).unwrap().as_u64().unwrap()
            }
            Via::Bulk => {
                let Select::Ids(ids) = sel else { unreachable!() };
                q.bulk(&BulkOptions::ids(BulkAction::Respawn, ids).expiry(expiry)).await.unwrap().done
            }
        };
        let after = SystemTime::now();
        assert_eq!(n, 2, "{name}: respawned");
        for id in ["a", "b"] {
            let info = q.peek(id).await.unwrap().unwrap();
            match want {
                Want::Own => assert_eq!(info.expires_at, Some(own[id]), "{name}: {id} keeps its expiry"),
                Want::None => assert_eq!(info.expires_at, None, "{name}: {id} has no expiry"),
                Want::After(d) => {
                    // Counted by the Redis clock, which is this machine's: within a second.
                    let at = info.expires_at.expect("an expiry");
                    assert!(
                        at + ms(1000) >= before + d && at <= after + d + ms(1000),
                        "{name}: {id} expires at {at:?}"
                    );
                }
            }
        }
        match want {
            Want::Own => {
                assert!(q.fetch(10, ms(300)).await.unwrap().is_empty(), "{name}: expired again, not delivered");
                for id in ["a", "b"] {
                    let info = q.peek(id).await.unwrap().unwrap();
                    assert_eq!(info.state, State::Dead, "{name}: {id}");
                    assert!(info.last_error.unwrap().starts_with("expired"), "{name}: {id}");
                }
            }
            _ => {
                let mut got = Vec::new();
                let deadline = std::time::Instant::now() + Duration::from_secs(30);
                while got.len() < 2 && std::time::Instant::now() < deadline {
                    got.extend(q.fetch(2, ms(1000)).await.unwrap());
                }
                let mut ids: Vec<_> = got.iter().map(|d| d.id().to_string()).collect();
                ids.sort();
                assert_eq!(ids, ["a", "b"], "{name}: delivered after the respawn");
                for d in got {
                    d.ack().await.unwrap();
                }
            }
        }
        common::assert_verified(&q).await;
    }
}

#[tokio::test]
async fn a_bad_respawn_expiry_is_refused_naming_the_field_and_the_limit() {
    use redelay::{BulkAction, BulkOptions, RespawnExpiry as E, Select};
    use serde_json::json;
    let (_c, q) = common::queue("respawn-expiry-bad").await;
    let over = redelay::limits::MAX_DELAY + ms(1);
    for (e, words) in [
        (E::In(Duration::ZERO), &["expires_in", "after the due time"][..]),
        (E::In(Duration::from_micros(500)), &["expires_in", "after the due time"]),
        (E::In(over), &["expires_in", "limit of 3650 days"]),
    ] {
        let err = q.respawn_with(Select::All, e).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{e:?}");
        assert!(words.iter().all(|w| err.message().contains(w)), "{e:?}: {}", err.message());
    }
    for (a, words) in [
        (json!({"all": true, "expires_in_ms": 0}), &["expires_in", "after the due time"][..]),
        (json!({"all": true, "expires_in_ms": -1}), &["expires_in_ms", "must not be negative, got -1 ms"]),
        (json!({"all": true, "expires_in_ms": over.as_millis() as u64}), &["expires_in", "limit of 3650 days"]),
        (json!({"all": true, "expires_in_ms": 5, "clear_expiry": true}), &["expires_in/clear_expiry", "not both"]),
        (json!({"oldest": 1, "all": true}), &["ids/oldest/all"]),
        (json!({"all": true, "expiry": 5}), &["unknown field", "expiry"]),
    ] {
        let err = q.call("respawn", a.clone()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{a}");
        assert!(words.iter().all(|w| err.message().contains(w)), "{a}: {}", err.message());
    }
    let ids = vec!["a".to_string()];
    let bad = BulkOptions::ids(BulkAction::Cancel, ids.clone()).expiry(E::In(ms(5)));
    assert!(q.bulk(&bad).await.unwrap_err().message().contains("only respawn takes an expiry"));
    let bad = BulkOptions::ids(BulkAction::Respawn, ids).expiry(E::In(Duration::ZERO));
    assert!(q.bulk(&bad).await.unwrap_err().message().starts_with("expires_in"));
}
