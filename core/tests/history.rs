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
    // The longest span, 1,440 minutes (33,120 counters in one script call), is read whole.
    let now = SystemTime::now();
    let day = q.history(now - Duration::from_secs(1439 * 60), now, Step::Minute).await.unwrap();
    assert_eq!(day.len(), 1440);
    assert_eq!(day.iter().map(|p| p.published).sum::<u64>(), 12);
    // The totals are read at the Redis time.
    let redis_now = q.redis_now().await.unwrap();
    let at = q.history_totals().await.unwrap().at;
    assert!(at >= redis_now && at.duration_since(redis_now).unwrap() < Duration::from_secs(60), "{at:?}");
    q.destroy().await.unwrap();
    assert_eq!(q.history_totals().await.unwrap().published, 0, "destroy deletes the history too");
}

#[tokio::test]
async fn each_delivery_lands_in_the_lateness_bucket_of_its_lateness() {
    let (_c, q) = common::queue("history-buckets").await;
    // Published already due (20 s ago): late from its publish, not from its due time; due in
    // 1 ms and fetched a second later: about a second late.
    q.publish(Message::new(b"past".to_vec()).id("past").at(SystemTime::now() - Duration::from_secs(20))).await.unwrap();
    q.publish(Message::new(b"waited".to_vec()).id("waited").delay(ms(1))).await.unwrap();
    tokio::time::sleep(ms(1_100)).await;
    let got = q.fetch(10, ms(500)).await.unwrap();
    assert_eq!(got.len(), 2);
    let late = |id: &str| got.iter().find(|d| d.id() == id).unwrap().lateness();
    assert!(late("past") < Duration::from_secs(10), "from its publish, not its due time: {:?}", late("past"));
    assert!(late("waited") >= Duration::from_secs(1), "{:?}", late("waited"));
    // The buckets: under 1 ms, then [2^(i-1), 2^i) ms, the last open.
    let bucket = |d: Duration| match d.as_millis() as u64 {
        0 => 0,
        n => (64 - n.leading_zeros() as usize).min(15),
    };
    let mut want = [0u64; 16];
    for d in &got {
        want[bucket(d.lateness())] += 1;
    }
    let total = q.history_totals().await.unwrap();
    assert_eq!(total.lateness, want);
    let sum: u64 = got.iter().map(|d| d.lateness().as_millis() as u64).sum();
    assert!(total.lateness_sum_ms.abs_diff(sum) <= 2, "{} vs {sum}", total.lateness_sum_ms);
    q.destroy().await.unwrap();
}

/// A day is the sum of its 24 UTC hours; a query by day reads up to 91 of them (the 90 days of
/// hours kept), in several script calls past 1,440 hours. Counters of past hours are planted
/// (the Redis clock cannot be moved).
#[tokio::test]
async fn a_day_is_the_sum_of_its_utc_hours_for_up_to_91_days() {
    let (c, q) = common::queue("history-days").await;
    let hist = format!("{}:{{{}}}:hist", c.prefix(), q.name());
    q.publish(Message::new(b"d".to_vec())).await.unwrap();
    let until = q.redis_now().await.unwrap();
    let day = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs() / 86400;
    let today = day(until);
    let hour = |days_ago: u64, h: u64| (today - days_ago) * 24 + h;
    let mut r = common::raw().await;
    let () = redis::pipe()
        .hset(&hist, format!("h{}:p", hour(88, 3)), 4)
        .hset(&hist, format!("h{}:a", hour(88, 3)), 2)
        .hset(&hist, format!("h{}:p", hour(88, 23)), 6)
        .hset(&hist, format!("h{}:p", hour(1, 0)), 1)
        .hset(&hist, format!("h{}:l3", hour(1, 0)), 2)
        .query_async(&mut r)
        .await
        .unwrap();
    let since = until - Duration::from_secs(90 * 86400);
    let pts = q.history(since, until, Step::Day).await.unwrap();
    assert_eq!(pts.len(), 91, "90 days touch 91 UTC days");
    assert!(pts.iter().enumerate().all(|(i, p)| day(p.at) == today - 90 + i as u64), "one point per day");
    assert!(pts.iter().all(|p| p.at.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs() % 86400 == 0));
    let (old, yesterday) = (&pts[2], &pts[89]);
    assert_eq!((old.published, old.acked), (10, 2), "two hours of one day, in the first script call");
    assert_eq!((yesterday.published, yesterday.lateness[3]), (1, 2), "in the second script call");
    assert_eq!(pts.iter().map(|p| p.published).sum::<u64>(), 12, "and today's publish");
    // The same day by hour sums to its point.
    let start = SystemTime::UNIX_EPOCH + Duration::from_secs((today - 88) * 86400);
    let hours = q.history(start, start + Duration::from_secs(86400 - 1), Step::Hour).await.unwrap();
    assert_eq!((hours.len(), hours.iter().map(|p| p.published).sum::<u64>()), (24, 10));
    // 91 days touch 92: refused, naming the limit.
    let e = q.history(until - Duration::from_secs(91 * 86400), until, Step::Day).await.unwrap_err();
    assert_eq!(e.kind(), redelay::ErrorKind::InvalidArgument);
    assert!(e.message().contains("at most 91 points"), "{e}");
    q.destroy().await.unwrap();
}

/// An event is written once, into its minute. The minute's counters reach its hour and the
/// totals when the first event of a later minute folds them in, once; until then the reads of
/// hours and totals add the minute not yet folded (meta `hmin`). Other minutes are made here by
/// moving the counters and `hmin` (the Redis clock cannot be moved).
#[tokio::test]
async fn a_minute_is_folded_into_its_hour_and_the_totals_once_when_a_later_minute_begins() {
    use redis::AsyncCommands;
    use std::collections::HashMap;
    let (c, q) = common::queue("history-fold").await;
    let key = |k: &str| format!("{}:{{{}}}:{k}", c.prefix(), q.name());
    let (hist, meta) = (key("hist"), key("meta"));
    let mut r = common::raw().await;
    let publish = || q.publish(Message::new(b"f".to_vec()));
    publish().await.unwrap();
    let now: i64 = r.hget(&meta, "hmin").await.unwrap();
    let fields: HashMap<String, i64> = r.hgetall(&hist).await.unwrap();
    assert_eq!(fields, HashMap::from([(format!("m{now}:p"), 1)]), "one counter per event: its minute's");
    assert_eq!(q.history_totals().await.unwrap().published, 1, "the totals add the unfolded minute");

    // As if five were published two hours ago, and nothing since.
    let old = now - 120;
    let () = redis::pipe()
        .hdel(&hist, format!("m{now}:p"))
        .hset(&hist, format!("m{old}:p"), 5)
        .hset(&meta, "hmin", old)
        .query_async(&mut r)
        .await
        .unwrap();
    let old_hour = SystemTime::UNIX_EPOCH + Duration::from_secs(old as u64 / 60 * 3600);
    let hours = || q.history(old_hour, SystemTime::now(), Step::Hour);
    let pts = hours().await.unwrap();
    assert_eq!((pts[0].at, pts[0].published), (old_hour, 5), "its hour adds the unfolded minute");
    assert_eq!(q.history_totals().await.unwrap().published, 5);

    // The next events fold that minute into its hour and the totals, once.
    publish().await.unwrap();
    publish().await.unwrap();
    let h: i64 = r.hget(&hist, format!("h{}:p", old / 60)).await.unwrap();
    assert_eq!(h, 5, "folded once");
    let pts = hours().await.unwrap();
    assert_eq!(pts[0].published, 5);
    assert_eq!(pts.iter().map(|p| p.published).sum::<u64>(), 7);
    assert_eq!(q.history_totals().await.unwrap().published, 7);
    let mins = q.history(old_hour + Duration::from_secs(old as u64 % 60 * 60), SystemTime::now(), Step::Minute);
    assert_eq!(mins.await.unwrap()[0].published, 5, "the minute keeps its own counter");

    // A Redis clock that stepped back (the unfolded minute is ahead of it) counts into the
    // unfolded minute, so that no minute is left behind it unfolded.
    let now: i64 = r.hget(&meta, "hmin").await.unwrap();
    let ahead = now + 3;
    let n: i64 = r.hget(&hist, format!("m{now}:p")).await.unwrap();
    let () = redis::pipe()
        .hdel(&hist, format!("m{now}:p"))
        .hset(&hist, format!("m{ahead}:p"), n)
        .hset(&meta, "hmin", ahead)
        .query_async(&mut r)
        .await
        .unwrap();
    publish().await.unwrap();
    let fields: HashMap<String, i64> = r.hgetall(&hist).await.unwrap();
    assert_eq!(fields.get(&format!("m{ahead}:p")), Some(&(n + 1)), "{fields:?}");
    assert!(!fields.contains_key(&format!("m{now}:p")), "{fields:?}");
    assert_eq!(q.history_totals().await.unwrap().published, 8);
    q.destroy().await.unwrap();
}
