//! Replay keys of the calls whose second run would answer wrongly (ack, nack, cancel, respawn,
//! purge: the first run changed what the second one reads). On Redis Cluster the client sends a call
//! again by itself when its connection drops, even when Redis had run it; there each such call
//! carries its queue handle's replay key and a field of its own, where the script keeps its
//! reply for a resend (`lua/lib.lua`, `replay_begin`). A later call deletes the fields of calls
//! that have their answers; the key expires 5 minutes after the handle's last call.

use std::sync::Mutex;

use crate::base::record::hex;

/// Fields of answered calls that one call deletes, at most.
const DELETES_PER_CALL: usize = 100;

/// One queue handle's replay key on a Redis Cluster.
pub(crate) struct Replay {
    key: String,
    /// Fields of calls that have their answers: no resend of them can come any more.
    answered: Mutex<Vec<String>>,
}

/// One call's part of the replay key: its field and the answered fields it deletes.
pub(crate) struct ReplayCall<'a> {
    replay: &'a Replay,
    field: String,
    deletes: Vec<String>,
}

impl Replay {
    pub fn new(key: String) -> Replay {
        Replay { key, answered: Mutex::new(Vec::new()) }
    }

    /// The next call: a fresh random field, and answered fields to delete.
    pub fn call(&self) -> ReplayCall<'_> {
        let deletes = {
            let mut a = self.answered.lock().unwrap();
            let n = a.len().min(DELETES_PER_CALL);
            a.drain(..n).collect()
        };
        ReplayCall { replay: self, field: hex(&rand::random::<[u8; 8]>()), deletes }
    }
}

impl ReplayCall<'_> {
    /// The queue's keys with the replay key after them.
    pub fn keys(&self, queue_keys: &[String]) -> Vec<String> {
        let mut keys = queue_keys.to_vec();
        keys.push(self.replay.key.clone());
        keys
    }

    /// The leading ARGV of `replay_begin`: the call's field, the count of deletes, the deletes.
    pub fn lead_args(&self) -> Vec<Vec<u8>> {
        let mut a = vec![self.field.clone().into_bytes(), self.deletes.len().to_string().into_bytes()];
        a.extend(self.deletes.iter().map(|f| f.clone().into_bytes()));
        a
    }

    /// The call has its answer (a reply or an error): a later call deletes its field, and,
    /// when it failed, the fields it was to delete (it may not have run).
    pub fn answered(self, ok: bool) {
        let mut a = self.replay.answered.lock().unwrap();
        a.push(self.field);
        if !ok {
            a.extend(self.deletes);
        }
    }
}
