//! Property tests of the public inputs against a real Redis: any id, body and headers either
//! round-trip exactly or are refused with InvalidArgument before anything is written.
mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use proptest::prelude::*;
use redelay::{ErrorKind, Message};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    #[test]
    fn any_message_round_trips_or_is_refused(
        id in proptest::option::of(any::<String>()),
        body in proptest::collection::vec(any::<u8>(), 0..300),
        headers in proptest::collection::btree_map(any::<String>(), any::<String>(), 0..4),
        delay_ms in 0u64..400,
        attempts in 0u32..1100,
    ) {
        rt().block_on(async {
            let (_c, q) = common::queue("fuzz").await;
            let mut m = Message::new(body.clone()).headers(headers.clone()).delay(Duration::from_millis(delay_ms)).max_attempts(attempts);
            if let Some(id) = &id {
                m = m.id(id.clone());
            }
            match q.publish(m).await {
                Ok(p) => {
                    let got = q.fetch(1, Duration::from_secs(2)).await.unwrap();
                    prop_assert_eq!(got.len(), 1);
                    let d = &got[0];
                    prop_assert_eq!(d.id(), p.id.as_str());
                    prop_assert_eq!(d.body(), body.as_slice());
                    prop_assert_eq!(d.headers(), &headers);
                    prop_assert_eq!(d.max_attempts(), attempts);
                    d.ack().await.unwrap();
                }
                Err(e) => {
                    prop_assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{}", e);
                    prop_assert_eq!(q.stats().await.unwrap().total, 0);
                }
            }
            let r = q.verify().await.unwrap();
            prop_assert!(r.is_ok(), "{:?}", r.problems);
            Ok(())
        })?;
    }

    #[test]
    fn any_queue_name_is_accepted_or_refused_cleanly(name in any::<String>()) {
        rt().block_on(async {
            let c = redelay::Client::connect(&common::url()).await.unwrap();
            match c.queue(&name) {
                Ok(q) => { q.stats().await.unwrap(); }
                Err(e) => prop_assert_eq!(e.kind(), ErrorKind::InvalidArgument),
            }
            Ok(())
        })?;
    }
}

#[test]
fn headers_map_type_is_a_btreemap() {
    // Headers keep a stable order (names sorted), so records are byte-identical across languages.
    let m: BTreeMap<String, String> = [("b".to_string(), "2".to_string()), ("a".to_string(), "1".to_string())].into();
    assert_eq!(m.keys().collect::<Vec<_>>(), ["a", "b"]);
}
