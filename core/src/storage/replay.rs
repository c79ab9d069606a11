//! Replay keys of the calls whose second run would answer wrongly (ack, nack, cancel,
//! respawn, purge: the first run changed what the second one reads). On Redis Cluster the
//! client sends a call again by itself when its connection drops, even when Redis had run it;
//! there each such call carries its queue handle's replay key and a field of its own, where the
//! script keeps its reply for a resend (`lua/lib.lua`, `replay_begin`). A later call deletes
//! the fields of calls that have their answers; the key expires 5 minutes after the handle's
//! last call.

use std::sync::Mutex;

use redis::{Cmd, RedisResult, Value};

use crate::base::record::hex;
use crate::storage::connection::Conn;
use crate::storage::scripts::Script;

/// Fields of answered calls that one call deletes, at most.
const DELETES_PER_CALL: usize = 100;

/// One queue handle's replay key on a Redis Cluster.
pub(crate) struct Replay {
    key: String,
    /// Fields of calls that have their answers: no resend of them can come any more.
    answered: Mutex<Vec<String>>,
}

/// One call's part of the replay key: its field and the answered fields it deletes.
struct ReplayCall<'a> {
    replay: &'a Replay,
    field: String,
    deletes: Vec<String>,
}

impl Replay {
    pub fn new(key: String) -> Replay {
        Replay { key, answered: Mutex::new(Vec::new()) }
    }

    /// The next call: a fresh random field, and answered fields to delete.
    fn call(&self) -> ReplayCall<'_> {
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
    fn keys(&self, queue_keys: &[String]) -> Vec<String> {
        let mut keys = queue_keys.to_vec();
        keys.push(self.replay.key.clone());
        keys
    }

    /// The leading ARGV of `replay_begin`: the call's field, the count of deletes, the deletes.
    fn lead_args(&self) -> Vec<Vec<u8>> {
        let mut a = vec![self.field.clone().into_bytes(), self.deletes.len().to_string().into_bytes()];
        a.extend(self.deletes.iter().map(|f| f.clone().into_bytes()));
        a
    }

    /// The call has its answer (a reply or an error): a later call deletes its field, and,
    /// when it failed, the fields it was to delete (it may not have run).
    fn answered(self, ok: bool) {
        let mut a = self.replay.answered.lock().unwrap();
        a.push(self.field);
        if !ok {
            a.extend(self.deletes);
        }
    }
}

/// Runs `script` on `queue_keys` with the arguments `add` gives. With `replay` (a Redis
/// Cluster), the call carries the replay key after the queue's keys and `replay_begin`'s
/// arguments before its own, and its field is marked answered when the reply (or error) came.
pub(crate) async fn run(
    replay: Option<&Replay>,
    script: &Script,
    conn: &Conn,
    queue_keys: &[String],
    add: impl Fn(&mut Cmd),
) -> RedisResult<Value> {
    let Some(call) = replay.map(Replay::call) else {
        return script.run(conn, queue_keys, add).await;
    };
    let lead = call.lead_args();
    let sent = script
        .run(conn, &call.keys(queue_keys), |c| {
            c.arg(&lead);
            add(c)
        })
        .await;
    call.answered(sent.is_ok());
    sent
}
