//! Redis key names of a queue. All keys of one queue share the hash tag `{queue}`, so they live
//! in one Redis Cluster slot and every script is atomic in a cluster too.

/// The keys of one queue, in the order every script receives them (see `lua/lib.lua`).
#[derive(Debug, Clone)]
pub(crate) struct QueueKeys {
    /// `[jobs, delayed, ready, leased, tokens, dead, seq, wake]`
    pub all: [String; 8],
}

impl QueueKeys {
    pub fn new(prefix: &str, queue: &str) -> Self {
        let k = |suffix: &str| format!("{prefix}:{{{queue}}}:{suffix}");
        QueueKeys {
            all: [k("jobs"), k("delayed"), k("ready"), k("leased"), k("tokens"), k("dead"), k("seq"), k("wake")],
        }
    }

    /// The pub/sub channel that nudges idle consumers.
    pub fn wake(&self) -> &str {
        &self.all[7]
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
        assert_eq!(k.all[0], "redelay:{orders}:jobs");
        assert_eq!(k.wake(), "redelay:{orders}:wake");
        assert!(k.all.iter().all(|key| key.contains("{orders}")));
        assert_eq!(registry("p"), "p:queues");
    }
}
