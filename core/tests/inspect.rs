//! Inspection for people: the load ahead (`upcoming`), pages of one state (`list`), and a
//! bounded, resumable search by id prefix, header, body or last error.
mod common;

use std::time::{Duration, SystemTime};

use redelay::{ErrorKind, Message, QueueOptions, Search, State};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test]
async fn upcoming_counts_what_falls_due_per_bucket() {
    let (_c, q) = common::queue("upcoming").await;
    let now_ms = SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let base = std::time::UNIX_EPOCH + Duration::from_millis(now_ms) + Duration::from_secs(3600);
    let mut msgs = Vec::new();
    for (minute, n) in [(0u64, 3usize), (2, 5), (9, 1)] {
        for i in 0..n {
            msgs.push(Message::new(b"u".to_vec()).at(base + Duration::from_secs(minute * 60 + i as u64)));
        }
    }
    msgs.push(Message::new(b"now".to_vec())); // due now: before the window
    q.publish_batch(msgs).await.unwrap();
    let b = q.upcoming(base, Duration::from_secs(60), 10).await.unwrap();
    let counts: Vec<u64> = b.iter().map(|(_, c)| *c).collect();
    assert_eq!(counts, [3, 0, 5, 0, 0, 0, 0, 0, 0, 1]);
    assert_eq!(b[2].0, base + Duration::from_secs(120));
    assert_eq!(q.upcoming(base, ms(1), 0).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    // Spans ending past the longest delay (3650 days x 1000 would end past the year 9999).
    let day = Duration::from_secs(86_400);
    let e = q.upcoming(base, day * 3650, 1000).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().starts_with("width: the 1000 spans must end within 3650 days"), "{e}");
    assert_eq!(q.upcoming(base, day * 3650, 1).await.unwrap().len(), 1, "one span of the longest width");
    assert_eq!(q.upcoming(base, day * 3, 1000).await.unwrap().len(), 1000);
    q.destroy().await.unwrap();
}

#[tokio::test]
async fn list_pages_each_state_in_its_order() {
    let (_c, q) = common::queue("list").await;
    q.publish_batch((0..5).map(|i| Message::new(b"r".to_vec()).id(format!("r{i}"))).collect()).await.unwrap();
    q.publish_batch(
        (0..3).map(|i| Message::new(b"s".to_vec()).id(format!("s{i}")).delay(Duration::from_secs(60 + i))).collect(),
    )
    .await
    .unwrap();
    let leased = q.fetch(2, ms(200)).await.unwrap();
    assert!(!leased[1].nack(Some(Duration::from_secs(600)), "later").await.unwrap(), "a retry, not dead");
    let ready = q.list(State::Ready, 0, 2).await.unwrap();
    assert_eq!(ready.total, 3);
    assert_eq!(ready.items.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["r2", "r3"]);
    assert_eq!(q.list(State::Ready, 2, 10).await.unwrap().items[0].id, "r4");
    let sched = q.list(State::Scheduled, 0, 10).await.unwrap();
    assert_eq!(sched.items.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["s0", "s1", "s2", "r1"]);
    assert!(sched.items.iter().all(|m| m.state == State::Scheduled));
    let l = q.list(State::Leased, 0, 10).await.unwrap();
    assert_eq!((l.total, l.items[0].id.as_str()), (1, "r0"));
    assert!(l.items[0].lease_deadline.is_some_and(|t| t > SystemTime::now()));
    assert_eq!(q.list(State::Dead, 0, 10).await.unwrap().total, 0);
    assert_eq!(q.list(State::Ready, 0, 0).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    leased[0].ack().await.unwrap();
    q.destroy().await.unwrap();
}

#[tokio::test]
async fn search_finds_by_id_header_body_and_error_in_bounded_steps() {
    let (_c, q) = common::queue("search").await;
    q.publish(Message::new(b"fails".to_vec()).id("bad").max_attempts(1)).await.unwrap();
    let mut msgs: Vec<Message> = (0..1200)
        .map(|i| Message::new(format!("order {i} paid").into_bytes()).id(format!("order-{i}")).header("tenant", "a"))
        .collect();
    msgs.push(Message::new(b"refund 7".to_vec()).id("refund-7").header("tenant", "b"));
    msgs.push(Message::new(vec![b'z'; 4000]).id("big").header("tenant", "b")); // a body kept apart
    q.publish_batch(msgs).await.unwrap();
    let d = q.fetch(1, ms(200)).await.unwrap();
    for x in &d {
        if x.id() == "bad" {
            x.nack(None, "card declined: insufficient funds").await.unwrap();
        }
    }
    /// Runs a search to the end; returns the ids found and the number of steps.
    async fn all(q: &redelay::Queue, what: Search) -> (Vec<String>, usize) {
        let (mut ids, mut steps, mut cursor) = (Vec::new(), 0, None::<String>);
        loop {
            let p = q.search(&what, cursor.as_deref()).await.unwrap();
            steps += 1;
            ids.extend(p.items.into_iter().map(|m| m.id));
            match p.cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        ids.sort();
        ids.dedup();
        (ids, steps)
    }
    let (ids, steps) = all(&q, Search::IdPrefix("order-11".into())).await;
    assert_eq!(ids.len(), 111, "order-11, order-110..119, order-1100..1199");
    assert!(steps > 1, "a step is bounded");
    assert_eq!(all(&q, Search::Header("tenant".into(), "b".into())).await.0, ["big", "refund-7"]);
    assert_eq!(all(&q, Search::Body(b"refund".to_vec())).await.0, ["refund-7"]);
    assert_eq!(all(&q, Search::Body(b"zzzz".to_vec())).await.0, ["big"]);
    let p = all(&q, Search::Error("declined".into())).await.0;
    assert_eq!(p, ["bad"]);
    let found = q.search(&Search::IdPrefix("bad".into()), None).await.unwrap();
    let mut states = Vec::new();
    let mut cursor = None;
    loop {
        let page = q.search(&Search::IdPrefix("bad".into()), cursor.as_deref()).await.unwrap();
        states.extend(page.items.iter().map(|m| m.state));
        match page.cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(states, [State::Dead]);
    let _ = found;
    assert_eq!(q.search(&Search::Body(vec![]), None).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        q.search(&Search::IdPrefix("x".into()), Some("abc")).await.unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    q.destroy().await.unwrap();
}

#[tokio::test]
async fn settings_hashes_under_the_prefix() {
    let (c, _q) = common::queue("settings").await;
    let s = c.settings("tokens").unwrap();
    assert_eq!(s.key(), format!("{}:tokens", c.prefix()));
    assert_eq!(s.get("a").await.unwrap(), None);
    assert!(s.set_new("a", "1").await.unwrap());
    assert!(!s.set_new("a", "2").await.unwrap());
    s.set("b", "x").await.unwrap();
    assert_eq!(s.get("a").await.unwrap().as_deref(), Some("1"));
    assert_eq!(
        s.all().await.unwrap().into_iter().collect::<Vec<_>>(),
        vec![("a".into(), "1".into()), ("b".into(), "x".into())]
    );
    assert!(s.delete("a").await.unwrap());
    assert!(!s.delete("a").await.unwrap());
    for bad in ["queues", "", "a b"] {
        let e = c.settings(bad).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().starts_with("settings name"), "{}", e.message());
    }
}

/// A search result carries what `peek` shows: a dead letter's time of death and a leased
/// message's lease deadline (both used to be missing from every search).
#[tokio::test]
async fn search_results_carry_the_time_of_death_and_the_lease_deadline() {
    let (_c, q) = common::queue("search-times").await;
    q.publish(Message::new(b"x".to_vec()).id("s-dead").max_attempts(1)).await.unwrap();
    q.publish(Message::new(b"x".to_vec()).id("s-leased").ttr(Duration::from_secs(60))).await.unwrap();
    q.publish(Message::new(b"x".to_vec()).id("s-waiting").delay(Duration::from_secs(3600))).await.unwrap();
    for d in q.fetch(2, ms(500)).await.unwrap() {
        if d.id() == "s-dead" {
            assert!(d.nack(None, "boom").await.unwrap());
        }
    }
    let mut found = Vec::new();
    let mut cursor = None;
    loop {
        let page = q.search(&Search::IdPrefix("s-".into()), cursor.as_deref()).await.unwrap();
        found.extend(page.items);
        cursor = page.cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(found.len(), 3);
    for m in found {
        let p = q.peek(&m.id).await.unwrap().unwrap();
        assert_eq!((m.state, m.died_at, m.lease_deadline), (p.state, p.died_at, p.lease_deadline), "{}", m.id);
        match m.state {
            State::Dead => assert!(m.died_at.is_some()),
            State::Leased => assert!(m.lease_deadline.is_some_and(|t| t > SystemTime::now())),
            _ => assert_eq!((m.died_at, m.lease_deadline), (None, None)),
        }
    }
}

/// A queue named `..`, stored with its messages by a version from before such names were
/// refused: `queue_stored` opens it while the registry holds it, to read and to destroy; every
/// other write is refused with the error that refuses the name (nothing is changed), a handle
/// for producers (`queue`) is still refused, and so is `.`, which is not registered.
#[tokio::test]
async fn a_registered_dot_name_opens_to_be_read_and_destroyed_only() {
    let (client, q) = common::queue("legacy").await;
    q.publish(Message::new(b"now".to_vec()).id("a")).await.unwrap();
    q.publish(Message::new(b"later".to_vec()).id("b").delay(Duration::from_secs(3600))).await.unwrap();
    // As an older version left it: the queue's keys under the tag {..}, ".." in the registry.
    let (prefix, tag) = (client.prefix().to_string(), format!("{{{}}}", q.name()));
    let mut c = common::raw().await;
    let keys: Vec<String> = redis::cmd("KEYS").arg(format!("{prefix}:{tag}:*")).query_async(&mut c).await.unwrap();
    assert!(!keys.is_empty());
    for k in keys {
        let _: () = redis::cmd("RENAME").arg(&k).arg(k.replace(&tag, "{..}")).query_async(&mut c).await.unwrap();
    }
    let registry = format!("{prefix}:queues");
    let _: () = redis::cmd("SREM").arg(&registry).arg(q.name()).query_async(&mut c).await.unwrap();
    let _: () = redis::cmd("SADD").arg(&registry).arg("..").query_async(&mut c).await.unwrap();
    let refused = |e: redelay::Error| {
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.message().contains("\"..\" is a path step in a URL"), "{e}");
    };

    let old = client.queue_stored("..").await.unwrap();
    let stats = old.stats().await.unwrap();
    assert_eq!((stats.ready, stats.scheduled), (1, 1));
    assert_eq!(old.peek("a").await.unwrap().unwrap().body, b"now");
    assert_eq!(old.list(State::Scheduled, 0, 10).await.unwrap().items[0].id, "b");
    refused(old.publish(Message::new(b"x".to_vec())).await.unwrap_err());
    refused(old.fetch(1, Duration::ZERO).await.unwrap_err());
    refused(old.cancel("a").await.unwrap_err());
    refused(old.reschedule("b", redelay::Due::In(Duration::ZERO)).await.unwrap_err());
    refused(old.respawn(redelay::Select::All).await.unwrap_err());
    refused(old.purge_dead(redelay::Select::All).await.unwrap_err());
    refused(old.ack("a", "0123456789abcdef").await.unwrap_err());
    refused(client.queue("..").err().unwrap());
    refused(client.queues_named(vec![("..".into(), None)], None).await.err().unwrap());
    let dot = client.queue_stored(".").await.err().unwrap();
    assert!(dot.message().contains("\".\" is a path step in a URL"), "{dot}");
    let stats = old.stats().await.unwrap();
    assert_eq!((stats.ready, stats.scheduled), (1, 1), "nothing changed");

    old.destroy().await.unwrap();
    assert!(client.queues().await.unwrap().is_empty());
    let left: Vec<String> = redis::cmd("KEYS").arg(format!("{prefix}:{{..}}:*")).query_async(&mut c).await.unwrap();
    assert_eq!(left, Vec::<String>::new());
    refused(client.queue_stored("..").await.err().unwrap());
}

/// A sharded queue named `..` (as an older version left it): `queue_stored_with` opens it with
/// the shard count its caller names (the CLI's `--shards`), to read and to destroy as
/// `queue_stored` does; another count is refused as on any queue, and so is every other write.
#[tokio::test]
async fn a_registered_dot_name_opens_with_a_named_shard_count_to_be_read_and_destroyed() {
    let (client, _) = common::queue("legacy-sharded").await;
    let name = common::unique("legacy-sharded");
    let q = client.queue_with(&name, QueueOptions::shards(2)).unwrap();
    for id in ["a", "b", "c", "d"] {
        q.publish(Message::new(b"x".to_vec()).id(id)).await.unwrap();
    }
    // Its keys under {..} and {../0}, {../1}; ".." in the registry.
    let prefix = client.prefix().to_string();
    let mut c = common::raw().await;
    let keys: Vec<String> = redis::cmd("KEYS").arg(format!("{prefix}:{{{name}*")).query_async(&mut c).await.unwrap();
    assert!(keys.iter().any(|k| k.contains("/1}")), "{keys:?}");
    for k in keys {
        let to = k.replace(&format!("{{{name}"), "{..");
        let _: () = redis::cmd("RENAME").arg(&k).arg(to).query_async(&mut c).await.unwrap();
    }
    let registry = format!("{prefix}:queues");
    let _: () = redis::cmd("SREM").arg(&registry).arg(&name).query_async(&mut c).await.unwrap();
    let _: () = redis::cmd("SADD").arg(&registry).arg("..").query_async(&mut c).await.unwrap();
    let refused = |e: redelay::Error| {
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.message().contains("\"..\" is a path step in a URL"), "{e}");
    };

    let old = client.queue_stored_with("..", QueueOptions::shards(2)).await.unwrap();
    assert_eq!((old.shards(), old.stats().await.unwrap().ready), (2, 4));
    assert_eq!(old.peek("c").await.unwrap().unwrap().body, b"x");
    refused(old.publish(Message::new(b"x".to_vec())).await.unwrap_err());
    refused(old.cancel("a").await.unwrap_err());
    let three = client.queue_stored_with("..", QueueOptions::shards(3)).await.unwrap();
    let e = three.stats().await.unwrap_err();
    assert!(e.message().contains("has 2 shards in Redis and this handle was opened with 3"), "{e}");
    refused(client.queue_with("..", QueueOptions::shards(2)).err().unwrap());
    let dot = client.queue_stored_with(".", QueueOptions::shards(2)).await.err().unwrap();
    assert!(dot.message().contains("\".\" is a path step in a URL"), "not registered: {dot}");
    let e = client.queue_stored_with("a/b", QueueOptions::shards(2)).await.err().unwrap();
    assert!(e.message().contains("may only contain"), "{e}");
    let e = client.queue_stored_with("..", QueueOptions::shards(0)).await.err().unwrap();
    assert!(e.message().starts_with("shards: must be 1 to 256"), "{e}");

    old.destroy().await.unwrap();
    assert!(client.queues().await.unwrap().is_empty());
    let left: Vec<String> = redis::cmd("KEYS").arg(format!("{prefix}:{{..*")).query_async(&mut c).await.unwrap();
    assert_eq!(left, Vec::<String>::new());
    refused(client.queue_stored_with("..", QueueOptions::shards(2)).await.err().unwrap());
}

/// `lapsed` counts the leases whose deadline has passed on the Redis clock (their consumer is
/// gone) within `leased`, until a fetch takes them back: on a plain queue and summed over shards.
#[tokio::test]
async fn stats_count_lapsed_leases_until_a_fetch_reclaims_them() {
    let (c, plain) = common::queue("lapsed").await;
    let sharded = c.queue_with(&common::unique("lapsed-s"), QueueOptions::shards(3)).unwrap();
    for q in [plain, sharded] {
        let shards = q.shards();
        q.publish(Message::new(b"dies".to_vec()).id("dies")).await.unwrap();
        let short = q.fetch_leasing(1, ms(500), Some(ms(100))).await.unwrap();
        q.publish(Message::new(b"works".to_vec()).id("works")).await.unwrap();
        let long = q.fetch_leasing(1, ms(500), Some(Duration::from_secs(600))).await.unwrap();
        assert_eq!((short[0].id(), long[0].id()), ("dies", "works"), "{shards} shards");
        let s = q.stats().await.unwrap();
        assert_eq!((s.leased, s.lapsed), (2, 0), "{shards} shards: both leases run");
        // The consumer of "dies" is gone: wait until its deadline has passed on Redis' clock.
        while q.redis_now().await.unwrap() <= short[0].lease_deadline() {
            tokio::time::sleep(ms(20)).await;
        }
        let s = q.stats().await.unwrap();
        assert_eq!((s.total, s.scheduled, s.ready, s.leased, s.lapsed, s.dead), (2, 0, 0, 2, 1, 0), "{shards} shards");
        // A fetch takes it back (a failed attempt) and leases it again, for longer this time.
        let again = q.fetch_leasing(1, ms(500), Some(Duration::from_secs(600))).await.unwrap();
        assert_eq!((again[0].id(), again[0].attempt()), ("dies", 2), "{shards} shards");
        let s = q.stats().await.unwrap();
        assert_eq!((s.total, s.leased, s.lapsed), (2, 2, 0), "{shards} shards");
        common::assert_verified(&q).await;
        q.destroy().await.unwrap();
    }
}
