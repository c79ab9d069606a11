//! Redis key names of a queue. All keys of one queue share the hash tag `{queue}`, so they live
//! in one Redis Cluster slot and every script is atomic in a cluster too.

/// The keys of one queue, in the order every script receives them (see `lua/lib.lua`).
#[derive(Debug, Clone)]
pub(crate) struct QueueKeys {
    /// `[msg, sched, body, died, meta, legacy marker, hist, wake]`
    pub all: [String; 8],
    /// Prefix of the replay keys of fetch calls (`{prefix}:{{queue}}:f:`).
    fetch_prefix: String,
    /// Prefix of the replay keys of publish calls, one per queue handle (`…:b:`).
    batch_prefix: String,
    /// Prefix of the replay keys of ack, nack, cancel, respawn and purge calls on Redis
    /// Cluster, one per queue handle (`…:r:`).
    settle_prefix: String,
}

impl QueueKeys {
    pub fn new(prefix: &str, queue: &str) -> Self {
        Self::tagged(prefix, queue)
    }

    /// The keys of shard `index` of a sharded queue: the hash tag `{queue/index}` (a queue
    /// name cannot hold `/`, so no plain queue has these keys).
    pub fn shard(prefix: &str, queue: &str, index: u32) -> Self {
        Self::tagged(prefix, &format!("{queue}/{index}"))
    }

    fn tagged(prefix: &str, tag: &str) -> Self {
        let k = |suffix: &str| format!("{prefix}:{{{tag}}}:{suffix}");
        QueueKeys {
            all: [k("msg"), k("sched"), k("body"), k("died"), k("meta"), k("jobs"), k("hist"), k("wake")],
            fetch_prefix: k("f:"),
            batch_prefix: k("b:"),
            settle_prefix: k("r:"),
        }
    }

    /// The pub/sub channel that nudges idle consumers.
    pub fn wake(&self) -> &str {
        &self.all[7]
    }

    /// The queue's META hash (layout version, flags, a sharded queue's shard count).
    pub fn meta(&self) -> &str {
        &self.all[4]
    }

    /// The keys holding the queue's data (everything but the wake channel), for `destroy`.
    pub fn data(&self) -> &[String] {
        &self.all[..7]
    }

    /// The replay key of the fetch call `fetch_id` (hex): the ids it leased, so that a retry
    /// of a call whose reply was lost gets the same leases back.
    pub fn fetch_replay(&self, fetch_id: &str) -> String {
        format!("{}{fetch_id}", self.fetch_prefix)
    }

    /// The replay key of the publish calls of the queue handle `handle_id` (hex): for each
    /// batch the index of its last call that ran, and each call's reply, so that a batch's
    /// calls run in order and once each (`lua/publish.lua`).
    pub fn publish_replay(&self, handle_id: &str) -> String {
        format!("{}{handle_id}", self.batch_prefix)
    }

    /// The replay key of the ack, nack, cancel, respawn and purge calls of the queue handle
    /// `handle_id` (hex) on Redis Cluster: each call's reply, so that a call the cluster client
    /// sends again after it ran gets the same answer (`lua/lib.lua`'s `replay_begin`).
    pub fn settle_replay(&self, handle_id: &str) -> String {
        format!("{}{handle_id}", self.settle_prefix)
    }
}

/// The best-effort registry of queue names under `prefix` (outside any hash tag).
pub(crate) fn registry(prefix: &str) -> String {
    format!("{prefix}:queues")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_one_hash_tag() {
        let k = QueueKeys::new("redelay", "orders");
        assert_eq!(k.all[0], "redelay:{orders}:msg");
        assert_eq!(k.wake(), "redelay:{orders}:wake");
        assert_eq!(k.fetch_replay("00ff"), "redelay:{orders}:f:00ff");
        assert_eq!(k.publish_replay("00ff"), "redelay:{orders}:b:00ff");
        assert_eq!(k.settle_replay("00ff"), "redelay:{orders}:r:00ff");
        assert!(k.all.iter().all(|key| key.contains("{orders}")));
        assert_eq!(registry("p"), "p:queues");
        let s = QueueKeys::shard("redelay", "orders", 15);
        assert_eq!(s.all[1], "redelay:{orders/15}:sched");
        assert_eq!(s.wake(), "redelay:{orders/15}:wake");
    }
}
