//! Whether pulls can reach one shard of a sharded queue. A shard whose fetch failed is held out
//! of the rounds of [`Queue::fetch_first`](crate::Queue::fetch_first) for a backoff (1 s,
//! doubling to 8 s) and looked at again by a probe of its own in the background, so that a
//! dead master costs the healthy shards' pulls its timeout once, not on every call.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::base::time::mono_ms;

const FIRST_HOLD_MS: u64 = 1_000;
const MAX_HOLD_MS: u64 = 8_000;

/// One shard's reachability as pulls saw it.
#[derive(Default)]
pub(crate) struct ShardHealth {
    /// Held out of rounds until this [`mono_ms`]; 0: reachable.
    held_until: AtomicU64,
    /// The hold after the next failure.
    next_hold: AtomicU64,
    /// A background probe is under way.
    probing: AtomicBool,
}

impl ShardHealth {
    /// True while the shard failed last (a round leaves it out).
    pub fn is_held(&self) -> bool {
        self.held_until.load(Ordering::Acquire) != 0
    }

    /// True when a held shard's hold has passed and no probe is under way: the caller starts
    /// one (and reports its outcome).
    pub fn take_probe(&self) -> bool {
        let until = self.held_until.load(Ordering::Acquire);
        until != 0 && mono_ms() >= until && !self.probing.swap(true, Ordering::AcqRel)
    }

    /// A fetch from the shard worked: it is in the rounds again. Returns true when it was held.
    pub fn reached(&self) -> bool {
        self.probing.store(false, Ordering::Release);
        self.next_hold.store(0, Ordering::Release);
        self.held_until.swap(0, Ordering::AcqRel) != 0
    }

    /// A fetch from the shard failed: held out for the next backoff. Returns true when it was
    /// reachable before (the first failure, worth a warning).
    pub fn failed(&self) -> bool {
        let hold = self.next_hold.load(Ordering::Acquire).max(FIRST_HOLD_MS);
        self.next_hold.store((hold * 2).min(MAX_HOLD_MS), Ordering::Release);
        let was = self.held_until.swap(mono_ms() + hold, Ordering::AcqRel);
        self.probing.store(false, Ordering::Release);
        was == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_shard_is_held_then_probed_once_and_back_when_reached() {
        let h = ShardHealth::default();
        // Holds below are set to 1 ms on the monotonic clock: let that clock pass it.
        mono_ms();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(!h.is_held() && !h.take_probe());
        assert!(h.failed(), "the first failure");
        assert!(h.is_held());
        assert!(!h.take_probe(), "not before its hold has passed");
        h.held_until.store(1, Ordering::Release); // the hold has passed
        assert!(h.take_probe());
        assert!(!h.take_probe(), "one probe at a time");
        assert!(!h.failed(), "not the first failure");
        assert_eq!(h.next_hold.load(Ordering::Acquire), 4_000, "1 s, then 2 s, then 4 s");
        h.held_until.store(1, Ordering::Release);
        assert!(h.take_probe());
        assert!(h.reached());
        assert!(!h.is_held() && !h.take_probe());
        assert!(h.failed(), "a failure after recovery is a first one again");
        assert_eq!(h.next_hold.load(Ordering::Acquire), 2_000);
    }
}
