//! Coalesces the acks, nacks and extends of many handlers into few script calls.
//!
//! Every settle request goes into one channel per queue handle. A task takes the first request,
//! then everything already waiting (up to [`MAX_BATCH`]), and sends at most one ack, one nack
//! and one extend script call for the lot, concurrently on the multiplexed connection (one
//! round trip). While that is in flight new requests pile up for the next batch: at low load a
//! request goes out at once, at high load batches grow by themselves. No timer is involved.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::client::Conn;
use crate::error::{Error, ErrorKind, Result};
use crate::keys::QueueKeys;
use crate::scripts;

const MAX_BATCH: usize = 500;

/// How a nack schedules the retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NackMode {
    /// After the message's exponential backoff with jitter.
    Backoff,
    /// After this many ms.
    After(u64),
    /// Unprocessed: back to due now, no attempt counted.
    Release,
    /// Straight to the dead letters (the record could not be read).
    Bury,
}

#[derive(Debug)]
pub(crate) enum Op {
    Ack { id: String, token: String },
    Nack { id: String, token: String, mode: NackMode, reason: String },
    Extend { id: String, token: String, ttr_ms: u64 },
}

/// Outcome of one settle request, as the scripts report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Settled {
    Done,
    /// nack moved the message to the dead letters.
    Dead,
    /// extend: the new lease deadline, Redis ms.
    Extended(i64),
}

struct Pending {
    op: Op,
    reply: oneshot::Sender<Result<Settled>>,
}

/// Handle to a queue's settle task. Cloned into every delivery; the task ends when the last
/// handle is dropped.
#[derive(Clone)]
pub(crate) struct Settler {
    tx: mpsc::UnboundedSender<Pending>,
}

impl Settler {
    pub fn start(conn: Conn, keys: Arc<QueueKeys>, rt: &tokio::runtime::Handle) -> Settler {
        let (tx, rx) = mpsc::unbounded_channel();
        rt.spawn(run(conn, keys, rx));
        Settler { tx }
    }

    pub async fn settle(&self, op: Op) -> Result<Settled> {
        let (reply, rx) = oneshot::channel();
        self.tx.send(Pending { op, reply }).map_err(|_| closed())?;
        rx.await.map_err(|_| closed())?
    }
}

fn closed() -> Error {
    Error::new(ErrorKind::Connection, "client is closed")
}

async fn run(conn: Conn, keys: Arc<QueueKeys>, mut rx: mpsc::UnboundedReceiver<Pending>) {
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(p) => batch.push(p),
                Err(_) => break,
            }
        }
        settle_batch(&conn, &keys, batch).await;
    }
}

async fn settle_batch(conn: &Conn, keys: &QueueKeys, batch: Vec<Pending>) {
    let (mut acks, mut nacks, mut extends) = (Vec::new(), Vec::new(), Vec::new());
    for p in batch {
        match &p.op {
            Op::Ack { .. } => acks.push(p),
            Op::Nack { .. } => nacks.push(p),
            Op::Extend { .. } => extends.push(p),
        }
    }
    tokio::join!(
        call(conn, keys, &scripts::ACK, acks, 0),
        call(conn, keys, &scripts::NACK, nacks, 0),
        call(conn, keys, &scripts::EXTEND, extends, 1),
    );
}

/// Runs one script for `items` and answers each; `skip` leading reply elements are not per-item
/// (extend puts the Redis time first).
async fn call(conn: &Conn, keys: &QueueKeys, script: &scripts::Script, items: Vec<Pending>, skip: usize) {
    if items.is_empty() {
        return;
    }
    let add = |c: &mut redis::Cmd| {
        for p in &items {
            match &p.op {
                Op::Ack { id, token } => {
                    c.arg(id).arg(token);
                }
                Op::Nack { id, token, mode, reason } => {
                    c.arg(id).arg(token);
                    match mode {
                        NackMode::Backoff => c.arg("b").arg(rand::random::<f64>()),
                        NackMode::After(ms) => c.arg("d").arg(*ms),
                        NackMode::Release => c.arg("r").arg(0),
                        NackMode::Bury => c.arg("x").arg(0),
                    };
                    c.arg(reason);
                }
                Op::Extend { id, token, ttr_ms } => {
                    c.arg(id).arg(token).arg(*ttr_ms);
                }
            }
        }
    };
    let reply: Result<Vec<i64>> = match script.run(conn, &keys.all, add).await {
        Ok(v) => redis::FromRedisValue::from_redis_value(v).map_err(|e| Error::from(redis::RedisError::from(e))),
        Err(e) => Err(Error::from(e)),
    };
    match reply {
        Ok(codes) if codes.len() == items.len() + skip => {
            let now = if skip > 0 { codes[0] } else { 0 };
            for (p, code) in items.into_iter().zip(&codes[skip..]) {
                let id = match &p.op {
                    Op::Ack { id, .. } | Op::Nack { id, .. } | Op::Extend { id, .. } => id,
                };
                let out = match (code, &p.op) {
                    (0, _) => Err(Error::lease_lost(id)),
                    (2, Op::Nack { .. }) => Ok(Settled::Dead),
                    (_, Op::Extend { ttr_ms, .. }) => Ok(Settled::Extended(now + *ttr_ms as i64)),
                    _ => Ok(Settled::Done),
                };
                let _ = p.reply.send(out);
            }
        }
        Ok(codes) => {
            let e = Error::new(ErrorKind::Redis, format!("settle: unexpected reply of {} items", codes.len()));
            for p in items {
                let _ = p.reply.send(Err(e.clone()));
            }
        }
        Err(e) => {
            for p in items {
                let _ = p.reply.send(Err(e.clone()));
            }
        }
    }
}
