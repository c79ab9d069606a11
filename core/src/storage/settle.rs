//! Coalesces the acks, nacks and extends of many handlers into few script calls.
//!
//! Every settle request — one op from `Delivery::ack` and friends, or a batch handler's whole
//! batch of outcomes — goes into one channel per queue handle. A task takes the first
//! submission, then everything already waiting (until [`MAX_BATCH`] ops), and sends one ack,
//! one nack and one extend script call per [`MAX_BATCH`] ops of each kind, concurrently on the
//! multiplexed connection (one round trip). While that is in flight new requests pile up for
//! the next batch: at low load a request goes out at once, at high load batches grow by
//! themselves. No timer is involved.

use std::future::Future;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::base::error::{Error, ErrorKind, Result};
use crate::base::keys::QueueKeys;
use crate::base::record::Token;
use crate::storage::connection::Conn;
use crate::storage::replay::{self, Replay};
use crate::storage::scripts;

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
    Ack { id: String, token: Token },
    Nack { id: String, token: Token, mode: NackMode, reason: String },
    Extend { id: String, token: Token, ttr_ms: u64 },
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

/// One submission: a single settle call, or a whole batch of a batch handler's outcomes. The
/// reply holds one result per op, in order.
struct Pending {
    ops: Vec<Op>,
    reply: oneshot::Sender<Vec<Result<Settled>>>,
}

#[derive(Clone)]
pub(crate) struct Settler {
    tx: mpsc::UnboundedSender<Pending>,
}

impl Settler {
    /// `replay`: the queue handle's replay key on Redis Cluster, for acks and nacks (an extend
    /// run twice gives the same answer and carries none).
    pub fn start(
        conn: Conn,
        keys: Arc<QueueKeys>,
        replay: Option<Arc<Replay>>,
        rt: &tokio::runtime::Handle,
    ) -> Settler {
        let (tx, rx) = mpsc::unbounded_channel();
        rt.spawn(run(Target { conn, keys, replay }, rx));
        Settler { tx }
    }

    /// True when both settle into the same queue (or shard of a queue).
    pub fn same(&self, other: &Settler) -> bool {
        self.tx.same_channel(&other.tx)
    }

    /// Queues `op` now, when called, and returns the future of its result: dropping that
    /// future (a cancelled caller) does not take the op back.
    pub fn settle(&self, op: Op) -> impl Future<Output = Result<Settled>> + Send + 'static {
        let rx = self.submit(vec![op]);
        async move { rx.await.map_err(|_| closed())?.pop().unwrap_or_else(|| Err(closed())) }
    }

    /// Queues `ops` without waiting (callable from any thread); the receiver gets one result
    /// per op, in order. All of them go out with the next batch.
    pub fn submit(&self, ops: Vec<Op>) -> oneshot::Receiver<Vec<Result<Settled>>> {
        let (reply, rx) = oneshot::channel();
        // On a closed settler the reply sender is dropped with the message: the receiver then
        // reports the closed client.
        let _ = self.tx.send(Pending { ops, reply });
        rx
    }
}

fn closed() -> Error {
    Error::client_closed()
}

/// Where a settler's calls go.
struct Target {
    conn: Conn,
    keys: Arc<QueueKeys>,
    replay: Option<Arc<Replay>>,
}

async fn run(target: Target, mut rx: mpsc::UnboundedReceiver<Pending>) {
    while let Some(first) = rx.recv().await {
        let mut n = first.ops.len();
        let mut batch = vec![first];
        while n < MAX_BATCH {
            match rx.try_recv() {
                Ok(p) => {
                    n += p.ops.len();
                    batch.push(p);
                }
                Err(_) => break,
            }
        }
        settle_batch(&target, batch).await;
    }
}

/// Where an op sits: (submission, op) indexes.
type At = (usize, usize);

async fn settle_batch(t: &Target, batch: Vec<Pending>) {
    let (mut acks, mut nacks, mut extends) = (Vec::new(), Vec::new(), Vec::new());
    for (pi, p) in batch.iter().enumerate() {
        for (oi, op) in p.ops.iter().enumerate() {
            match op {
                Op::Ack { .. } => acks.push((pi, oi)),
                Op::Nack { .. } => nacks.push((pi, oi)),
                Op::Extend { .. } => extends.push((pi, oi)),
            }
        }
    }
    let (a, n, e) = tokio::join!(
        // Extends carry no replay key: run twice, an extend answers the same.
        call(t, &scripts::ACK, &batch, acks, Shape { skip: 0, replayed: true }),
        call(t, &scripts::NACK, &batch, nacks, Shape { skip: 0, replayed: true }),
        call(t, &scripts::EXTEND, &batch, extends, Shape { skip: 1, replayed: false }),
    );
    let mut results: Vec<Vec<Option<Result<Settled>>>> =
        batch.iter().map(|p| p.ops.iter().map(|_| None).collect()).collect();
    for ((pi, oi), r) in a.into_iter().chain(n).chain(e) {
        results[pi][oi] = Some(r);
    }
    for (p, r) in batch.into_iter().zip(results) {
        let _ = p.reply.send(r.into_iter().map(|r| r.unwrap_or_else(|| Err(closed()))).collect());
    }
}

/// How a settle script is called and answers.
#[derive(Clone, Copy)]
struct Shape {
    /// Leading reply elements that are not per op (extend puts the Redis time first).
    skip: usize,
    /// Whether its calls carry the replay key on Redis Cluster (`storage/replay.rs`).
    replayed: bool,
}

/// Runs one script for the ops at `at` (in calls of at most [`MAX_BATCH`], concurrently) and
/// returns each one's result.
async fn call(
    t: &Target,
    script: &scripts::Script,
    batch: &[Pending],
    at: Vec<At>,
    how: Shape,
) -> Vec<(At, Result<Settled>)> {
    let chunks = at.chunks(MAX_BATCH).map(|chunk| call_chunk(t, script, batch, chunk, how));
    futures_util::future::join_all(chunks).await.into_iter().flatten().collect()
}

async fn call_chunk(
    t: &Target,
    script: &scripts::Script,
    batch: &[Pending],
    at: &[At],
    how: Shape,
) -> Vec<(At, Result<Settled>)> {
    if at.is_empty() {
        return Vec::new();
    }
    let op = |&(pi, oi): &At| &batch[pi].ops[oi];
    let add = |c: &mut redis::Cmd| {
        for a in at {
            match op(a) {
                Op::Ack { id, token } => {
                    c.arg(id).arg(&token.0[..]);
                }
                Op::Nack { id, token, mode, reason } => {
                    c.arg(id).arg(&token.0[..]);
                    match mode {
                        NackMode::Backoff => c.arg("b").arg(rand::random::<f64>()),
                        NackMode::After(ms) => c.arg("d").arg(*ms),
                        NackMode::Release => c.arg("r").arg(0),
                        NackMode::Bury => c.arg("x").arg(0),
                    };
                    c.arg(reason);
                }
                Op::Extend { id, token, ttr_ms } => {
                    c.arg(id).arg(&token.0[..]).arg(*ttr_ms);
                }
            }
        }
    };
    let replay = t.replay.as_deref().filter(|_| how.replayed);
    let sent = replay::run(replay, script, &t.conn, &t.keys.all, add).await;
    // ack and nack reply one status byte per op; extend the Redis time, then an integer each
    let reply: Result<Vec<i64>> = match sent {
        Ok(redis::Value::BulkString(b)) => Ok(b.iter().map(|c| i64::from(*c) - i64::from(b'0')).collect()),
        Ok(v) => redis::FromRedisValue::from_redis_value(v).map_err(|e| Error::from(redis::RedisError::from(e))),
        Err(e) => Err(Error::from(e)),
    };
    match reply {
        Ok(codes) if codes.len() == at.len() + how.skip => {
            let now = if how.skip > 0 { codes[0] } else { 0 };
            at.iter()
                .zip(&codes[how.skip..])
                .map(|(a, code)| {
                    let o = op(a);
                    let id = match o {
                        Op::Ack { id, .. } | Op::Nack { id, .. } | Op::Extend { id, .. } => id,
                    };
                    let out = match (code, o) {
                        (0, _) => Err(Error::lease_lost(id)),
                        (2, Op::Nack { .. }) => Ok(Settled::Dead),
                        (_, Op::Extend { ttr_ms, .. }) => Ok(Settled::Extended(now + *ttr_ms as i64)),
                        _ => Ok(Settled::Done),
                    };
                    (*a, out)
                })
                .collect()
        }
        Ok(codes) => {
            let e = Error::new(ErrorKind::Redis, format!("settle: unexpected reply of {} items", codes.len()));
            at.iter().map(|a| (*a, Err(e.clone()))).collect()
        }
        Err(e) => at.iter().map(|a| (*a, Err(e.clone()))).collect(),
    }
}
