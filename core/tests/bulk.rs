//! Bulk actions on a list of ids or on what a search finds: each action applied to the messages
//! it fits, the others skipped, bad requests refused before anything is changed.
mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redelay::{BulkAction, BulkOptions, BulkReport, Due, ErrorKind, Message, Search, State};

/// A queue with waiting `w0..w4` (due in an hour, header kind=w), dead `d0..d2` (error "boom"),
/// and one leased `l0`.
async fn mixed(name: &str) -> (redelay::Client, redelay::Queue) {
    let (c, q) = common::queue(name).await;
    for i in 0..3 {
        q.publish(Message::new(b"dead soon".to_vec()).id(format!("d{i}")).max_attempts(1)).await.unwrap();
    }
    for d in q.fetch(3, Duration::ZERO).await.unwrap() {
        d.nack(None, "boom").await.unwrap();
    }
    q.publish(Message::new(b"leased".to_vec()).id("l0")).await.unwrap();
    let held = q.fetch(1, Duration::ZERO).await.unwrap();
    assert_eq!(held.len(), 1);
    let later = (0..5)
        .map(|i| {
            Message::new(b"waiting".to_vec()).id(format!("w{i}")).header("kind", "w").delay(Duration::from_secs(3600))
        })
        .collect();
    q.publish_batch(later).await.unwrap();
    (c, q)
}

fn ids(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn each_action_applies_to_the_messages_it_fits_and_skips_the_rest() {
    // (action, named ids, done, the states of the named ids afterwards: None = gone)
    let all = ["w0", "w1", "d0", "l0", "nope"];
    let table: Vec<(BulkAction, u64, Vec<Option<State>>)> = vec![
        (BulkAction::Cancel, 4, vec![None, None, None, None, None]),
        (
            BulkAction::DeliverNow,
            2,
            vec![Some(State::Ready), Some(State::Ready), Some(State::Dead), Some(State::Leased), None],
        ),
        (
            BulkAction::Respawn,
            1,
            vec![Some(State::Scheduled), Some(State::Scheduled), Some(State::Ready), Some(State::Leased), None],
        ),
        (BulkAction::Purge, 1, vec![Some(State::Scheduled), Some(State::Scheduled), None, Some(State::Leased), None]),
    ];
    for (action, done, states) in table {
        let (_c, q) = mixed(&format!("bulk-{action:?}")).await;
        let r = q.bulk(&BulkOptions::ids(action, ids(&all))).await.unwrap();
        assert_eq!((r.matched, r.done), (5, done), "{action:?}");
        for (id, want) in all.iter().zip(states) {
            assert_eq!(q.peek(id).await.unwrap().map(|m| m.state), want, "{action:?} {id}");
        }
        common::assert_verified(&q).await;
        q.destroy().await.unwrap();
    }
}

#[tokio::test]
async fn reschedule_by_search_moves_every_match_in_bounded_steps() {
    let (_c, q) = mixed("bulk-search").await;
    // more than one search step (~500 records) of matches
    let many =
        (0..1200).map(|i| Message::new(b"x".to_vec()).id(format!("m{i}")).delay(Duration::from_secs(7200))).collect();
    q.publish_batch(many).await.unwrap();
    let opts = BulkOptions::search(BulkAction::Reschedule, Search::IdPrefix("m".into())).due(Due::In(Duration::ZERO));
    let r = q.bulk(&opts).await.unwrap();
    assert_eq!((r.matched, r.done), (1200, 1200));
    assert!(r.scanned >= 1200, "{r:?}");
    assert_eq!(q.stats().await.unwrap().ready, 1200);
    // by header: the five waiting ones, cancelled
    let r = q.bulk(&BulkOptions::search(BulkAction::Cancel, Search::Header("kind".into(), "w".into()))).await.unwrap();
    assert_eq!((r.matched, r.done), (5, 5));
    // by last error: the dead ones, respawned
    let r = q.bulk(&BulkOptions::search(BulkAction::Respawn, Search::Error("boom".into()))).await.unwrap();
    assert_eq!(r.done, 3);
    assert_eq!(q.stats().await.unwrap().dead, 0);
    common::assert_verified(&q).await;
    q.destroy().await.unwrap();
}

#[tokio::test]
async fn bad_bulk_requests_are_refused_before_anything_changes() {
    let (_c, q) = mixed("bulk-bad").await;
    let too_many = vec!["a".to_string(); redelay::MAX_BULK_IDS + 1];
    let both = BulkOptions {
        search: Some(Search::IdPrefix("w".into())),
        ..BulkOptions::ids(BulkAction::Cancel, ids(&["w0"]))
    };
    let table: Vec<(BulkOptions, &str)> = vec![
        (BulkOptions::ids(BulkAction::Cancel, too_many), "ids: at most 10000"),
        (both, "ids/search"),
        (BulkOptions { ids: None, ..BulkOptions::ids(BulkAction::Cancel, vec![]) }, "ids/search"),
        (BulkOptions::ids(BulkAction::Reschedule, ids(&["w0"])), "delay/at"),
        (BulkOptions::ids(BulkAction::Cancel, ids(&["w0"])).due(Due::In(Duration::ZERO)), "delay/at"),
        (BulkOptions::ids(BulkAction::Cancel, ids(&["w0", ""])), "id:"),
    ];
    for (opts, words) in table {
        let e = q.bulk(&opts).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{opts:?}");
        assert!(e.message().starts_with(words), "{:?} should start with {words:?}", e.message());
    }
    assert_eq!(q.stats().await.unwrap().total, 9, "nothing was changed");
    // the wire form decodes to the same options
    let wire: BulkOptions =
        redelay::wire::from_json(serde_json::json!({"action": "deliver_now", "ids": ["w0"]})).unwrap();
    assert_eq!(wire, BulkOptions::ids(BulkAction::DeliverNow, ids(&["w0"])));
    q.destroy().await.unwrap();
}

/// Publishes `n` messages `{prefix}0` .. with one attempt each and fails them all: `n` dead letters.
async fn dead_letters(q: &redelay::Queue, prefix: &str, n: usize) {
    let many = (0..n).map(|i| Message::new(b"x".to_vec()).id(format!("{prefix}{i}")).max_attempts(1)).collect();
    q.publish_batch(many).await.unwrap();
    common::nack_all(q).await;
    assert_eq!(q.stats().await.unwrap().dead, n as u64);
}

/// Respawns the dead letters whose id starts with `prefix`, by a search, and checks its
/// progress: at least `steps` reports that never go back, the last one what the call returns,
/// `matched` of them found and respawned.
async fn respawn_with_progress(q: &redelay::Queue, prefix: &str, matched: u64, steps: usize) -> Vec<BulkReport> {
    let mut reports = Vec::new();
    let opts = BulkOptions::search(BulkAction::Respawn, Search::IdPrefix(prefix.into()));
    let r = q.bulk_with_progress(&opts, |r| reports.push(r)).await.unwrap();
    assert_eq!((r.matched, r.done), (matched, matched));
    assert!(reports.len() >= steps, "{reports:?}");
    assert_eq!(reports.last(), Some(&r));
    for w in reports.windows(2) {
        assert!(w[0].scanned <= w[1].scanned && w[0].done <= w[1].done, "{reports:?}");
    }
    reports
}

/// A long run tells its caller how far it got after each step (a search by pages of ~500
/// records, a purge by calls of up to 1,000 dead letters): running totals that grow step by
/// step and end at what the call returns. (A search's last page may look at nothing new: the
/// scan of a hash can end with an empty step, so a total may repeat, never go back.)
#[tokio::test]
async fn long_runs_report_their_running_totals_after_each_step() {
    let (_c, q) = common::queue("bulk-progress").await;
    dead_letters(&q, "m", 2500).await;
    // m1, m10..m19, m100..m199, m1000..m1999: 1111 of the 2500 records
    let reports = respawn_with_progress(&q, "m1", 1111, 5).await;
    assert!(reports.iter().any(|p| p.done > 0 && p.done < 1111), "{reports:?}");

    let mut totals = Vec::new();
    let n = q.purge_dead_with_progress(redelay::Select::All, |n| totals.push(n)).await.unwrap();
    assert_eq!(n, 1389);
    assert_eq!((totals.first(), totals.last()), (Some(&1000), Some(&1389)), "{totals:?}");
    assert!(totals.windows(2).all(|w| w[0] <= w[1]), "{totals:?}");
    let mut respawned = Vec::new();
    let ids: Vec<String> = (1000..2000).map(|i| format!("m{i}")).chain(["m1".into()]).collect();
    q.bulk(&BulkOptions::ids(BulkAction::Cancel, ids)).await.unwrap();
    for d in q.fetch(1000, Duration::ZERO).await.unwrap() {
        d.nack(None, "again").await.unwrap();
    }
    let n = q.respawn_with_progress(redelay::Select::All, redelay::RespawnExpiry::Keep, |n| respawned.push(n)).await;
    assert_eq!((n.unwrap(), respawned), (110, vec![110]));
    common::assert_verified(&q).await;
    q.destroy().await.unwrap();
}

/// The same on a sharded queue: the shards run side by side and each of their steps is added to
/// one running total, which grows and ends at what the call returns.
#[tokio::test]
async fn a_sharded_queue_reports_one_running_total_over_its_shards() {
    let (c, _) = common::queue("bulk-progress-s").await;
    let q = c.queue_with(&common::unique("bulk-progress-s"), redelay::QueueOptions::shards(3)).unwrap();
    dead_letters(&q, "s", 1500).await;
    // s1, s10..s19, s100..s199, s1000..s1499: 611 records spread over the shards, a step each
    respawn_with_progress(&q, "s1", 611, 3).await;

    let mut totals = Vec::new();
    let n = q.purge_dead_with_progress(redelay::Select::All, |n| totals.push(n)).await.unwrap();
    assert_eq!(n, 1500 - 611);
    assert!(totals.len() >= 3, "a step per shard at least: {totals:?}");
    assert_eq!(totals.last(), Some(&n));
    assert!(totals.windows(2).all(|w| w[0] <= w[1]), "{totals:?}");
    common::assert_verified(&q).await;
    q.destroy().await.unwrap();
}

/// A long run that Redis fails in the middle (here its connection drops after the first step:
/// the proxy closes it instead of sending the next script call on) ends with an error of the
/// failure's own kind that says how far it got: in its message, and as its totals by wire name
/// (`Error::so_far`) — the same totals the last progress report gave, and what Redis shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_fails_in_the_middle_says_how_far_it_got() {
    let (proxy, client, _) = common::through_proxy("bulk-stop").await;
    let q = client.queue("q").unwrap();
    dead_letters(&q, "m", 2500).await;
    // Once armed, the first step's end makes the next script call never reach Redis: its
    // connection drops.
    let armed = AtomicBool::new(false);
    let cut = || {
        if armed.swap(false, Ordering::SeqCst) {
            proxy.drop_next_request_with(b"EVALSHA");
        }
    };

    armed.store(true, Ordering::SeqCst);
    let mut totals = Vec::new();
    let e = q
        .purge_dead_with_progress(redelay::Select::All, |n| {
            totals.push(n);
            cut();
        })
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");
    assert_eq!(totals, [1000]);
    assert_eq!(e.so_far(), Some(&[("count", 1000)][..]), "{e}");
    assert!(e.message().contains("; stopped: purged 1000 so far, and that stays done"), "{e}");
    common::reconnected(&client).await;
    assert_eq!(q.stats().await.unwrap().dead, 1500);

    armed.store(true, Ordering::SeqCst);
    let e = q.respawn_with_progress(redelay::Select::All, redelay::RespawnExpiry::Keep, |_| cut()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");
    assert_eq!(e.so_far(), Some(&[("count", 1000)][..]), "{e}");
    assert!(e.message().contains("; stopped: respawned 1000 so far"), "{e}");
    common::reconnected(&client).await;
    assert_eq!(q.stats().await.unwrap().dead, 500);

    // A bulk cancel by a search: its first page is cancelled, the search of the second fails.
    armed.store(true, Ordering::SeqCst);
    let mut reports = Vec::new();
    let opts = BulkOptions::search(BulkAction::Cancel, Search::IdPrefix("m".into()));
    let e = q
        .bulk_with_progress(&opts, |r| {
            reports.push(r);
            cut();
        })
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");
    let [r] = reports[..] else { panic!("one step: {reports:?}") };
    assert!(r.done > 0 && r.done < 1500 && r.done == r.matched, "{r:?}");
    let so_far = [("matched", r.matched), ("done", r.done), ("scanned", r.scanned)];
    assert_eq!(e.so_far(), Some(&so_far[..]), "{e}");
    assert!(e.message().contains(&format!("; stopped: {r} so far")), "{e}");
    common::reconnected(&client).await;
    assert_eq!(q.stats().await.unwrap().total, 1500 - r.done);
    assert_eq!(proxy.lost.load(Ordering::SeqCst), 3, "each fault was injected");

    // A run that fails before any step ended carries no totals: nothing was done.
    proxy.drop_next_request_with(b"EVALSHA");
    let e = q.purge_dead(redelay::Select::All).await.unwrap_err();
    assert_eq!((e.kind(), e.so_far()), (ErrorKind::Connection, None), "{e}");
    assert!(!e.message().contains("stopped"), "{e}");
    common::reconnected(&client).await;
    common::assert_verified(&q).await;
    q.destroy().await.unwrap();

    // A list of ids is one step, whose calls (1,000 dead letters each here) are counted as
    // they end: the second call never reaches Redis.
    let q = client.queue("ids").unwrap();
    dead_letters(&q, "n", 2500).await;
    proxy.drop_next_request_with(b"n1500");
    let ids = (0..2500).map(|i| format!("n{i}")).collect();
    let e = q.bulk(&BulkOptions::ids(BulkAction::Respawn, ids)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");
    assert_eq!(e.so_far(), Some(&[("matched", 2500), ("done", 1000), ("scanned", 0)][..]), "{e}");
    assert!(e.message().contains("; stopped: matched 2500, done 1000 (scanned 0) so far"), "{e}");
    common::reconnected(&client).await;
    assert_eq!(q.stats().await.unwrap().dead, 1500);
    q.destroy().await.unwrap();
}

/// `BulkAction::ALL` names every action by its wire name, the one options take: what a binding
/// lists when it refuses another spelling.
#[test]
fn every_bulk_action_is_listed_by_its_wire_name() {
    for a in BulkAction::ALL {
        assert_eq!(serde_json::to_value(a).unwrap(), a.name());
        assert_eq!(serde_json::from_value::<BulkAction>(a.name().into()).unwrap(), a);
        // Exhaustive: a new action fails to compile here until it is listed.
        match a {
            BulkAction::Cancel
            | BulkAction::Reschedule
            | BulkAction::DeliverNow
            | BulkAction::Respawn
            | BulkAction::Purge => {}
        }
    }
    assert_eq!(BulkAction::ALL.iter().map(|a| a.name()).collect::<std::collections::HashSet<_>>().len(), 5);
}
