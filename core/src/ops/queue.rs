//! A queue handle: publish, pull, settle by id, inspect, change, dead letters.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use redis::Value;

use crate::base::error::{Error, ErrorKind, Result};
use crate::base::keys::{self, QueueKeys};
use crate::base::limits;
use crate::base::message::{Due, Message, PublishStatus, Published};
use crate::base::options::{QueueOptions, RespawnExpiry};
use crate::base::record::{self, encode_blob, hex, Spec, Token, When};
use crate::base::reply::{array, bad, bytes, int, string};
use crate::base::time::{ms_to_time, sleep_precise, time_to_ms};
use crate::ops::delivery::{self, Delivery};
use crate::ops::handover::Handover;
use crate::ops::info::{
    HistoryPoint, ListPage, MessageInfo, Search, SearchPage, Select, State, Stats, Step, VerifyReport, HIST_COUNTERS,
};
use crate::ops::shard_health::ShardHealth;
use crate::storage::ctx::Ctx;
use crate::storage::replay::{self, Replay};
use crate::storage::scripts;
use crate::storage::settle::{NackMode, Op, Settled, Settler};

/// Largest queue `verify` checks (it is O(n) and blocks Redis meanwhile).
pub const VERIFY_MAX_RECORDS: u64 = 2_000_000;
/// Expired leases reclaimed per fetch call.
pub(crate) const RECLAIM_LIMIT: usize = 200;
/// A fetch stops leasing once its reply holds this many bytes of records and blobs (always at
/// least one message), so that big bodies never make one script call copy megabytes.
pub(crate) const FETCH_REPLY_BYTES: usize = 1 << 20;
/// Dead-letter pages stop at this many bytes of records and blobs (always at least one).
const DEAD_LIST_BYTES: usize = 1 << 20;
/// Offsets of list pages are passed to the scripts as at most this (beyond any queue's size,
/// and exact in Lua's numbers): a larger one is an empty page, not a Redis range error.
const MAX_OFFSET: usize = 1 << 48;
/// Replay keys of earlier fetches deleted by one fetch call, at most.
const CONFIRM_PER_FETCH: usize = 64;
/// Most fields of answered publish calls one publish call deletes from the replay key.
const REPLAY_FIELDS_PER_CALL: usize = 256;
/// Fields of answered publish calls a single publish call waits for before deleting them (a
/// batch of several calls deletes whatever is there).
const REPLAY_FIELDS_TO_DELETE: usize = 32;
/// Tries of a fetch call whose reply did not arrive (the same fetch id each time).
const FETCH_TRIES: u32 = 4;

/// A script's refusal of a shard that does not carry its queue's shard count as its mark
/// (`lua/lib.lua` check_layout: publish, flag, and the changes by id — cancel, reschedule,
/// respawn, purge): the queue was destroyed, and maybe made again plain or with another count,
/// since the handle confirmed its count; nothing was written.
pub(crate) fn is_unmarked(e: &Error) -> bool {
    e.kind() == ErrorKind::Redis && e.message().contains("redelay: shard not marked")
}

/// Errors after which a call may have run in Redis without its reply arriving.
fn retryable(e: &Error) -> bool {
    matches!(e.kind(), ErrorKind::Timeout | ErrorKind::Connection) && !e.is_client_closed()
}

fn add_args(a: &[redis::Arg<Vec<u8>>]) -> impl Fn(&mut redis::Cmd) + '_ {
    move |c: &mut redis::Cmd| {
        for x in a {
            if let redis::Arg::Simple(b) = x {
                c.arg(b);
            }
        }
    }
}

/// A bulk string, or None for a nil / false reply.
fn opt_bytes(v: Value) -> Result<Option<Vec<u8>>> {
    match v {
        Value::Nil | Value::Boolean(false) => Ok(None),
        Value::Int(0) => Ok(None),
        v => bytes(v).map(Some),
    }
}

/// A handle to one queue. Cheap to clone.
#[derive(Clone)]
pub struct Queue {
    pub(crate) inner: Arc<QueueInner>,
}

pub(crate) struct QueueInner {
    pub ctx: Arc<Ctx>,
    pub name: String,
    pub keys: Arc<QueueKeys>,
    pub settler: Settler,
    registered: AtomicBool,
    /// The shards of a sharded queue (each a plain queue handle on the tag `{name/i}`); empty
    /// for a plain queue. A sharded handle's own `keys` are those of the plain tag `{name}`,
    /// whose META records the shard count.
    pub shards: Vec<Queue>,
    /// For a shard of a sharded queue: that queue's shard count, which the scripts that create
    /// data or state (publish, flag) or change messages by id (cancel, reschedule, respawn,
    /// purge) find in the shard's META as its mark `of` or refuse
    /// ([`is_unmarked`]); 0 for a plain queue (and a sharded queue's own handle): no check.
    pub(crate) of_shards: u32,
    /// When Redis last confirmed the shard count of a sharded handle ([`mono_ms`]), 0: never.
    pub(crate) shards_checked_at: AtomicU64,
    /// Whether pulls reach this handle as a shard of a sharded queue.
    pub(crate) health: ShardHealth,
    /// Replay keys of fetch calls whose replies arrived: the next fetch call deletes them.
    confirmed: std::sync::Mutex<Vec<String>>,
    /// This handle's replay key of publish calls (`lua/publish.lua`), random per handle.
    publish_replay: String,
    /// Fields of `publish_replay` whose calls have their final answers: the next publish call
    /// deletes them.
    replied: std::sync::Mutex<Vec<String>>,
    /// On Redis Cluster: this handle's replay key of ack, nack, cancel, respawn and purge calls.
    settle_replay: Option<Arc<Replay>>,
    /// A name refused since it was stored (`.` or `..`), opened by [`Client::queue_stored`]
    /// because the registry holds it: the handle reads and destroys, and refuses every other
    /// write with the error that refuses the name.
    ///
    /// [`Client::queue_stored`]: crate::Client::queue_stored
    legacy: bool,
}

/// The reply of one fetch script call.
pub(crate) struct Fetched {
    /// Redis time of the call, µs.
    pub now_us: i64,
    /// Local instant matching `now_us` (midpoint of the round trip), to map Redis times to
    /// local timers.
    pub local: Instant,
    /// Earliest due message still scheduled, Redis ms.
    pub next_due_ms: Option<i64>,
    /// Earliest lease deadline (an expired lease is reclaimed by a fetch), Redis ms.
    pub next_lease_ms: Option<i64>,
    /// More messages are leasable right now.
    pub more: bool,
    pub deliveries: Vec<Delivery>,
    /// Messages whose stored record could not be read: moved to the dead letters, one error
    /// naming each id.
    pub corrupt: Vec<Error>,
}

impl Fetched {
    /// The reply of a shard that could not be reached, at this reply's time: nothing due,
    /// nothing to wait for (the next round looks again).
    fn unreached(&self) -> Fetched {
        Fetched {
            now_us: self.now_us,
            local: self.local,
            next_due_ms: None,
            next_lease_ms: None,
            more: false,
            deliveries: Vec::new(),
            corrupt: Vec::new(),
        }
    }

    /// The earliest Redis time at which a fetch could find work, as a local instant.
    pub fn next_wake(&self) -> Option<Instant> {
        let next = match (self.next_due_ms, self.next_lease_ms) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some(self.local_instant(next))
    }

    pub fn local_instant(&self, redis_ms: i64) -> Instant {
        let ahead_us = redis_ms * 1000 - self.now_us;
        if ahead_us <= 0 {
            self.local
        } else {
            self.local + Duration::from_micros(ahead_us as u64)
        }
    }
}

fn due_args(due: Due) -> Result<When> {
    Ok(match due {
        Due::In(d) => {
            limits::check_delay("delay", d)?;
            When::FromNow(d.as_millis() as u64)
        }
        Due::At(t) => {
            let ms = time_to_ms(t);
            limits::check_at(ms, time_to_ms(SystemTime::now()))?;
            When::At(ms as u64)
        }
    })
}

/// `publish.lua`'s answer to a chunk of a batch that arrived before the chunk ahead of it:
/// `{now, -1, ''}` (nothing written).
fn is_refused_chunk(reply: &Value) -> bool {
    matches!(reply, Value::Array(v) if matches!(v.get(1), Some(Value::Int(-1))))
}

/// A respawn or purge run: the script, its own arguments (before the selection), and what is
/// told how many each call did, as it returns.
#[derive(Clone, Copy)]
pub(crate) struct DeadRun<'a> {
    pub script: &'a scripts::Script,
    pub lead: &'a [Vec<u8>],
    pub on_step: &'a (dyn Fn(u64) + Send + Sync),
}

/// The running total of a long run's steps, handed to a caller's `progress` after each step
/// (steps of a sharded queue's shards may end at once: one at a time here), and how many steps
/// ended.
pub(crate) struct Running<F>(std::sync::Mutex<(u64, u64, F)>);

impl<F: FnMut(u64) + Send> Running<F> {
    pub(crate) fn new(progress: F) -> Self {
        Running(std::sync::Mutex::new((0, 0, progress)))
    }

    pub(crate) fn add(&self, n: u64) {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += n;
        g.1 += 1;
        let total = g.0;
        (g.2)(total);
    }

    /// The total so far, once a step ended (None before).
    fn so_far(&self) -> Option<u64> {
        let g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        (g.1 > 0).then_some(g.0)
    }
}

/// The error of a respawn or purge run that stopped after `so_far` (when a step had ended),
/// saying so (`verb`: `respawned`, `purged`); see [`Error::so_far`].
fn stopped(e: Error, verb: &str, so_far: Option<u64>) -> Error {
    match so_far {
        Some(n) => e.stopped(&format!("{verb} {n}"), vec![("count", n)]),
        None => e,
    }
}

/// The ARGV of one script call.
type CallArgs = Vec<redis::Arg<Vec<u8>>>;
/// One look of a pull fetch at a queue: the deliveries, whether more is due now, and each
/// shard's fetch reply (without its deliveries).
type Round = (Vec<Delivery>, bool, Vec<Fetched>);

/// A batch's publish calls ([`Queue::ordered_calls`]).
struct PublishCalls {
    keys: Vec<String>,
    calls: Vec<CallArgs>,
    /// Fields the calls store in the handle's replay key.
    stores: Vec<String>,
    /// Fields of earlier calls the first call deletes.
    deletes: Vec<String>,
}

fn args(v: Vec<Vec<u8>>) -> CallArgs {
    v.into_iter().map(redis::Arg::Simple).collect()
}

impl Queue {
    /// A handle to `name`; `legacy`: a name refused since it was stored, found in the registry
    /// (see [`QueueInner::legacy`]).
    pub(crate) fn new(ctx: Arc<Ctx>, name: &str, opts: QueueOptions, legacy: bool) -> Result<Queue> {
        if !legacy {
            limits::check_queue_name(name)?;
        }
        opts.validate()?;
        let shards = if opts.shards > 1 {
            (0..opts.shards)
                .map(|i| {
                    let keys = QueueKeys::shard(&ctx.prefix, name, i);
                    Self::with_keys(ctx.clone(), name, keys, (vec![], opts.shards), legacy)
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(Self::with_keys(ctx.clone(), name, QueueKeys::new(&ctx.prefix, name), (shards, 0), legacy))
    }

    /// A handle on `keys`; `(shards, of_shards)`: see [`QueueInner::shards`] and
    /// [`QueueInner::of_shards`].
    fn with_keys(ctx: Arc<Ctx>, name: &str, keys: QueueKeys, layout: (Vec<Queue>, u32), legacy: bool) -> Queue {
        let (shards, of_shards) = layout;
        let keys = Arc::new(keys);
        let settle_replay =
            ctx.conn.is_cluster().then(|| Arc::new(Replay::new(keys.settle_replay(&hex(&rand::random::<[u8; 8]>())))));
        let settler = Settler::start(ctx.conn.clone(), keys.clone(), settle_replay.clone(), &ctx.rt);
        let publish_replay = keys.publish_replay(&hex(&rand::random::<[u8; 8]>()));
        Queue {
            inner: Arc::new(QueueInner {
                ctx,
                name: name.to_string(),
                keys,
                settler,
                registered: AtomicBool::new(false),
                shards,
                of_shards,
                shards_checked_at: AtomicU64::new(0),
                health: ShardHealth::default(),
                confirmed: Default::default(),
                publish_replay,
                replied: Default::default(),
                settle_replay,
                legacy,
            }),
        }
    }

    /// Refuses a write to a queue whose name is refused since it was stored (read and destroy
    /// only), with the error that refuses the name.
    fn check_writable(&self) -> Result<()> {
        if self.inner.legacy {
            limits::check_queue_name(&self.inner.name)?;
        }
        Ok(())
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    pub(crate) fn conn(&self) -> crate::storage::connection::Conn {
        self.inner.ctx.conn.clone()
    }

    pub(crate) async fn run(&self, script: &scripts::Script, args: Vec<redis::Arg<Vec<u8>>>) -> Result<Value> {
        self.run_keys(script, &self.inner.keys.all, args).await
    }

    /// The keys and arguments of a batch's publish calls, and the fields they store in this
    /// handle's replay key. The calls of a batch of several, and every call on a Redis Cluster
    /// (whose client sends a call again by itself when its connection drops), carry the replay
    /// key after the queue's keys, and after their arguments the batch's id, their index and
    /// the count; the first call also carries fields of earlier calls to delete (a call that
    /// has no reply to store carries the key for that alone, with an empty batch id). Hand the
    /// calls to [`Self::answered`] once none of them can be sent again.
    fn ordered_calls(&self, calls: Vec<Vec<Vec<u8>>>) -> PublishCalls {
        let (mut keys, count) = (self.inner.keys.all.to_vec(), calls.len());
        let replayed = count > 1 || self.inner.ctx.conn.is_cluster();
        let deletes: Vec<String> = {
            let mut r = self.inner.replied.lock().unwrap();
            // Deleted in bulk: a delete is a command of its own in the script.
            if r.len() >= REPLAY_FIELDS_TO_DELETE || count > 1 {
                let n = r.len().min(REPLAY_FIELDS_PER_CALL);
                r.drain(..n).collect()
            } else {
                Vec::new()
            }
        };
        let batch = if replayed { hex(&rand::random::<[u8; 8]>()) } else { String::new() };
        let mut stores: Vec<String> = Vec::new();
        if replayed {
            stores.extend((0..count).map(|i| format!("{batch}:{i}")));
            if count > 1 {
                stores.push(batch.clone());
            }
        }
        let carries_key = replayed || !deletes.is_empty();
        if carries_key {
            keys.push(self.inner.publish_replay.clone());
        }
        let calls = calls
            .into_iter()
            .enumerate()
            .map(|(i, mut a)| {
                if carries_key {
                    a.extend([batch.clone().into_bytes(), i.to_string().into_bytes(), count.to_string().into_bytes()]);
                    if i == 0 {
                        a.extend(deletes.iter().map(|f| f.clone().into_bytes()));
                    }
                }
                args(a)
            })
            .collect();
        PublishCalls { keys, calls, stores, deletes }
    }

    /// Every call of `calls` has its final answer, `ok` or not: the next publish call deletes
    /// the fields they stored, and those they were to delete when they may not have run.
    fn answered(&self, calls: PublishCalls, ok: bool) {
        let mut r = self.inner.replied.lock().unwrap();
        r.extend(calls.stores);
        if !ok {
            r.extend(calls.deletes);
        }
    }

    /// The publish calls `calls` (a batch's chunks), pipelined, run in this order, once each.
    /// With several (or on a cluster), each carries the batch's replay key and its index, and
    /// `publish.lua` refuses a chunk whose predecessor has not run: a call that a cluster
    /// redirect or a resend made arrive early is sent again here, alone, once the chunks before
    /// it are done; so a batch that fails at one chunk has stored exactly the chunks before it.
    /// A call that arrives again after it ran gets its first reply from the replay key.
    /// The first is sent with the script's source, so that the others find it cached and the
    /// common case stays one round trip (see [`scripts::Script::run_as`]).
    async fn publish_in_order(&self, calls: Vec<Vec<Vec<u8>>>, send_order: Option<&[usize]>) -> Result<Vec<Value>> {
        self.inner.ctx.check_open()?;
        let calls = self.ordered_calls(calls);
        let r = self.send_in_order(&calls.keys, &calls.calls, send_order).await;
        self.answered(calls, r.is_ok());
        r
    }

    async fn send_in_order(
        &self,
        keys: &[String],
        calls: &[CallArgs],
        send_order: Option<&[usize]>,
    ) -> Result<Vec<Value>> {
        let script = &*scripts::PUBLISH;
        let (conn, count) = (&self.inner.ctx.conn, calls.len());
        let order: Vec<usize> = send_order.map_or_else(|| (0..count).collect(), <[usize]>::to_vec);
        let runs = order.iter().map(|&i| script.run_as(count > 1 && i == order[0], conn, keys, add_args(&calls[i])));
        let mut replies: Vec<Option<redis::RedisResult<Value>>> = (0..count).map(|_| None).collect();
        for (&i, r) in order.iter().zip(futures_util::future::join_all(runs).await) {
            replies[i] = Some(r);
        }
        let mut out = Vec::with_capacity(count);
        for (i, reply) in replies.into_iter().enumerate() {
            let reply = reply.ok_or_else(|| Error::invalid(format!("send order: chunk {i} missing")))?;
            let mut reply = reply.map_err(|e| self.refused_sharded(e.into()))?;
            if is_refused_chunk(&reply) {
                tracing::debug!("publish: chunk {i} of {count} ran before the one ahead of it; sending it again");
                reply =
                    script.run(conn, keys, add_args(&calls[i])).await.map_err(|e| self.refused_sharded(e.into()))?;
                if is_refused_chunk(&reply) {
                    return Err(Error::new(
                        ErrorKind::Redis,
                        format!(
                            "publish: chunk {i} of {count} of a batch was refused twice: its replay key is gone \
                             (the batch took over 5 minutes); chunks 0 to {} are stored",
                            i.saturating_sub(1)
                        ),
                    ));
                }
            }
            out.push(reply);
        }
        Ok(out)
    }

    /// [`run`](Self::run) for a script whose second run would answer differently (cancel,
    /// respawn, purge): on Redis Cluster, whose client sends a call again by itself when its
    /// connection drops, the call carries the handle's replay key (`storage/replay.rs`).
    async fn run_replayed(&self, script: &scripts::Script, own: Vec<Vec<u8>>) -> Result<Value> {
        self.inner.ctx.check_open()?;
        self.check_writable()?;
        let (replay, a) = (self.inner.settle_replay.as_deref(), args(own));
        let sent = replay::run(replay, script, &self.inner.ctx.conn, &self.inner.keys.all, add_args(&a)).await;
        sent.map_err(|e| self.refused_sharded(e.into()))
    }

    async fn run_keys(
        &self,
        script: &scripts::Script,
        keys: &[String],
        args: Vec<redis::Arg<Vec<u8>>>,
    ) -> Result<Value> {
        self.inner.ctx.check_open()?;
        if !scripts::reads_only(script) {
            self.check_writable()?;
        }
        let conn = &self.inner.ctx.conn;
        script.run(conn, keys, add_args(&args)).await.map_err(|e| self.refused_sharded(e.into()))
    }

    /// Adds the queue's name to the client's registry (`Client::queues`), once per handle; and
    /// again after a publish that made the queue anew (see [`send_batch`](Self::send_batch)).
    pub(crate) async fn register(&self) {
        if !self.inner.registered.swap(true, Ordering::Relaxed) {
            let mut c = self.conn();
            let r: redis::RedisResult<i64> = redis::cmd("SADD")
                .arg(keys::registry(&self.inner.ctx.prefix))
                .arg(&self.inner.name)
                .query_async(&mut c)
                .await;
            if r.is_err() {
                self.inner.registered.store(false, Ordering::Relaxed);
            }
        }
    }

    /// Publishes one message. A duplicate id is reported in the result, not as an error.
    pub async fn publish(&self, msg: Message) -> Result<Published> {
        let mut v = self.publish_batch(vec![msg]).await?;
        v.pop().ok_or_else(|| bad("empty publish reply"))
    }

    /// The plain-queue case of [`Queue::publish_batch`], on this handle's own keys.
    pub(crate) async fn publish_batch_here(&self, msgs: Vec<Message>) -> Result<Vec<Published>> {
        limits::check_batch(msgs.len())?;
        if msgs.is_empty() {
            return Ok(Vec::new());
        }
        let chunks = self.encode_batch(&msgs, &|i| i, msgs.len() == 1)?;
        self.register().await;
        self.send_batch(chunks, msgs.iter().map(|m| m.id.clone()).collect()).await
    }

    /// Checks and encodes a batch into the arguments of its script calls (100 messages each).
    /// An error names the message by `position(index in msgs)`, unless `single`.
    pub(crate) fn encode_batch(
        &self,
        msgs: &[Message],
        position: &dyn Fn(usize) -> usize,
        single: bool,
    ) -> Result<Vec<Vec<Vec<u8>>>> {
        self.check_writable()?;
        let d = self.inner.ctx.defaults;
        let max_body = self.inner.ctx.max_body_bytes;
        let mut chunks: Vec<Vec<Vec<u8>>> = Vec::new();
        for (i, chunk) in msgs.chunks(limits::PUBLISH_CHUNK).enumerate() {
            let mut a: Vec<Vec<u8>> = Vec::with_capacity(1 + chunk.len() * 3);
            a.push(chunk.len().to_string().into_bytes());
            for (j, m) in chunk.iter().enumerate() {
                let at = |e: Error| {
                    if single {
                        e
                    } else {
                        let k = position(i * limits::PUBLISH_CHUNK + j);
                        Error::invalid(format!("message {k}: {}", e.message()))
                    }
                };
                if let Some(id) = &m.id {
                    limits::check_id(id).map_err(at)?;
                }
                limits::check_body(m.body.len(), max_body).map_err(at)?;
                limits::check_headers(m.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())), m.headers.len())
                    .map_err(at)?;
                limits::check_expiry(m.due, m.expires, m.drop_on_expiry).map_err(at)?;
                let due = due_args(m.due).map_err(at)?;
                let expire = m.expires.map(due_args).transpose().map_err(at)?;
                let max_attempts = m.max_attempts.unwrap_or(d.max_attempts);
                limits::check_max_attempts("max_attempts", max_attempts).map_err(at)?;
                let ttr = m.ttr.unwrap_or(d.ttr);
                limits::check_ttr("ttr", ttr).map_err(at)?;
                let (bb, bm) = (m.backoff_base.unwrap_or(d.backoff_base), m.backoff_max.unwrap_or(d.backoff_max));
                match (m.backoff_base, m.backoff_max) {
                    (Some(_), Some(_)) => limits::check_backoff_pair("backoff", bb, bm).map_err(at)?,
                    _ => {
                        limits::check_backoff("backoff base", bb).map_err(at)?;
                        limits::check_backoff("backoff max", bm).map_err(at)?;
                    }
                }
                let blob = encode_blob(&m.headers, &m.body);
                let spec = Spec {
                    inline: blob.len() <= record::INLINE_MAX,
                    drop_on_expiry: m.drop_on_expiry,
                    max_attempts,
                    ttr_ms: ttr.as_millis() as u64,
                    backoff_base_ms: bb.as_millis() as u64,
                    backoff_max_ms: bm.as_millis().max(bb.as_millis()) as u64,
                    replace: m.replace,
                    due,
                    expire,
                };
                a.push(m.id.clone().unwrap_or_default().into_bytes());
                a.push(spec.encode());
                a.push(blob);
            }
            a.push(self.of_arg());
            chunks.push(a);
        }
        Ok(chunks)
    }

    /// Sends encoded script calls (pipelined) and reads the statuses of the messages, whose
    /// given ids are `given` (None: generated by the script). A call that made the queue anew
    /// (it had no data) registers its name again: another client's destroy removed it.
    pub(crate) async fn send_batch(
        &self,
        chunks: Vec<Vec<Vec<u8>>>,
        given: Vec<Option<String>>,
    ) -> Result<Vec<Published>> {
        self.send_batch_in(chunks, given, None).await
    }

    /// Test support, not part of the API: publishes `msgs` on a plain queue with its chunks (of
    /// 100 messages) sent in `send_order`, a permutation of their indexes, as a cluster
    /// redirect or a retry could make them arrive; the result is as for
    /// [`publish_batch`](Self::publish_batch).
    #[doc(hidden)]
    pub async fn publish_batch_sending_chunks_in(
        &self,
        msgs: Vec<Message>,
        send_order: &[usize],
    ) -> Result<Vec<Published>> {
        let chunks = self.encode_batch(&msgs, &|i| i, false)?;
        let mut sorted = send_order.to_vec();
        sorted.sort_unstable();
        if sorted != (0..chunks.len()).collect::<Vec<_>>() {
            return Err(Error::invalid(format!("send_order: not a permutation of the {} chunks", chunks.len())));
        }
        self.register().await;
        self.send_batch_in(chunks, msgs.iter().map(|m| m.id.clone()).collect(), Some(send_order)).await
    }

    async fn send_batch_in(
        &self,
        chunks: Vec<Vec<Vec<u8>>>,
        given: Vec<Option<String>>,
        send_order: Option<&[usize]>,
    ) -> Result<Vec<Published>> {
        let count = given.len();
        let replies = match self.inner.ctx.wait_replicas {
            None => self.publish_in_order(chunks, send_order).await?,
            Some((n, timeout)) => self.publish_and_wait(chunks, n, timeout).await?,
        };
        let mut out = Vec::with_capacity(count);
        let mut given = given.into_iter();
        let mut created = false;
        for reply in replies {
            let v = array(reply)?;
            created |= v.len() > 3;
            let (seq0, statuses) = match (v.get(1), v.get(2)) {
                (Some(s), Some(st)) => (int(s)?, bytes(st.clone())?),
                _ => return Err(bad("publish")),
            };
            for (k, st) in statuses.iter().enumerate() {
                let id = match given.next().ok_or_else(|| bad("publish: more statuses than messages"))? {
                    Some(id) => id,
                    None => (seq0 + k as i64 + 1).to_string(),
                };
                let status = match st {
                    b'0' => PublishStatus::Duplicate,
                    b'2' => PublishStatus::Replaced,
                    _ => PublishStatus::Stored,
                };
                out.push(Published { id, status });
            }
        }
        if out.len() != count {
            return Err(bad("publish: fewer statuses than messages"));
        }
        if created {
            // The queue had no data before this publish: it is new, or was destroyed (by any
            // client) since this handle registered it, which took its name out of the registry.
            self.inner.registered.store(false, Ordering::Relaxed);
            self.register().await;
        }
        Ok(out)
    }

    /// Durable publish: the script calls and a `WAIT n timeout` go out together, in that order,
    /// on one connection of their own (WAIT blocks the connection it runs on, so it never runs
    /// on the connection that fetches and settles), and a publish reports success only when
    /// WAIT confirmed those very writes. A connection that drops in between fails the call.
    async fn publish_and_wait(&self, chunks: Vec<Vec<Vec<u8>>>, n: u32, timeout: Duration) -> Result<Vec<Value>> {
        self.inner.ctx.check_open()?;
        let count = chunks.len();
        let calls = self.ordered_calls(chunks);
        let (keys, dedicated) = (&calls.keys, &self.inner.ctx.dedicated);
        let replies = dedicated.run_and_wait(&scripts::PUBLISH, &keys[0], keys, &calls.calls, n, timeout).await;
        self.answered(calls, replies.is_ok());
        let mut replies = replies?;
        // One pipeline on one connection runs in order; a redirect that reordered it gets an
        // error here, not a resend (that would run after WAIT).
        if let Some(i) = replies.iter().position(is_refused_chunk) {
            return Err(Error::new(
                ErrorKind::Redis,
                format!(
                    "publish: call {i} of {count} of the batch reached Redis before the one ahead of it \
                     (a cluster redirect?) and was refused; the calls before it are stored: publish again \
                     (ids make it safe)"
                ),
            ));
        }
        let got = replies.pop().ok_or_else(|| bad("WAIT"))?;
        let got = int(&got)?;
        if got < i64::from(n) {
            return Err(Error::new(
                ErrorKind::Redis,
                format!(
                    "publish: stored on the master but only {got} of {n} replicas confirmed within {} ms; \
                     it may be lost if the master fails now (retry: ids make it safe)",
                    timeout.as_millis()
                ),
            ));
        }
        Ok(replies)
    }

    /// One fetch call (reclaim, then lease up to `max`, 0 = none), tried again with the same
    /// fetch id while its reply does not arrive: a retry of a call that did run in Redis gets
    /// the same leases back, so a lost reply costs no attempt.
    pub(crate) async fn fetch_once(&self, max: usize, ttr: Option<Duration>) -> Result<Fetched> {
        let fid = record::new_fetch_id();
        let mut tries = 0;
        loop {
            match self.fetch_call(&fid, max, ttr).await {
                Err(e) if retryable(&e) && tries + 1 < FETCH_TRIES && !self.inner.ctx.is_closed() => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(50 * u64::from(tries))).await;
                }
                other => return other,
            }
        }
    }

    /// One fetch script call with the fetch id `fid`.
    pub(crate) async fn fetch_call(&self, fid: &[u8; 6], max: usize, ttr: Option<Duration>) -> Result<Fetched> {
        let replay = self.inner.keys.fetch_replay(&hex(fid));
        let mut keys = self.inner.keys.all.to_vec();
        keys.push(replay.clone());
        let confirmed: Vec<String> = {
            let mut c = self.inner.confirmed.lock().unwrap();
            let n = c.len().min(CONFIRM_PER_FETCH);
            c.drain(..n).collect()
        };
        keys.extend(confirmed);
        let ttr_ms = ttr.map(|t| t.as_millis() as u64).unwrap_or(0);
        let a = vec![
            max.to_string().into_bytes(),
            ttr_ms.to_string().into_bytes(),
            fid.to_vec(),
            FETCH_REPLY_BYTES.to_string().into_bytes(),
            RECLAIM_LIMIT.to_string().into_bytes(),
        ];
        let sent = Instant::now();
        let reply = self.run_keys(&scripts::FETCH, &keys, args(a)).await?;
        // Redis read its clock about halfway through the round trip.
        let local = sent + sent.elapsed() / 2;
        let f = self.read_fetched(reply, local, ttr)?;
        if !f.deliveries.is_empty() {
            self.inner.confirmed.lock().unwrap().push(replay);
        }
        Ok(f)
    }

    fn read_fetched(&self, reply: Value, local: Instant, ttr: Option<Duration>) -> Result<Fetched> {
        let v = array(reply)?;
        if v.len() < 8 {
            return Err(bad("fetch"));
        }
        let now_ms = int(&v[0])?;
        let now_us = now_ms * 1000 + int(&v[1])?;
        let opt = |x: i64| (x >= 0).then_some(x);
        let next_due_ms = opt(int(&v[2])?);
        let next_lease_ms = opt(int(&v[3])?);
        let more = int(&v[4])? == 1;
        let mut it = v.into_iter();
        // Records the script itself could not read were already moved to the dead letters.
        let mut corrupt: Vec<Error> = array(it.nth(5).ok_or_else(|| bad("fetch"))?)?
            .into_iter()
            .map(|id| string(id).map(|id| record::corrupt(&id)))
            .collect::<Result<_>>()?;
        // The expired count; then a replayed fetch's (its first reply was lost) lease deadlines.
        let _ = it.next();
        let replayed: Vec<i64> =
            array(it.next().ok_or_else(|| bad("fetch"))?)?.iter().map(int).collect::<Result<_>>()?;
        let mut deliveries = Vec::new();
        let mut nth = 0;
        while let (Some(id), Some(rec)) = (it.next(), it.next()) {
            nth += 1;
            let id = string(id)?;
            let rec = bytes(rec)?;
            let blob = if record::is_inline(&rec) {
                None
            } else {
                Some(bytes(it.next().ok_or_else(|| bad("fetch: blob missing"))?)?)
            };
            let record = match record::decode(&id, &rec, blob.as_deref()) {
                Ok(r) => r,
                Err(e) => {
                    // Readable header, unreadable rest: dead letter it now; the others flow on.
                    let token = Token(rec.get(42..50).and_then(|t| t.try_into().ok()).unwrap_or([0; 8]));
                    let op = Op::Nack { id: id.clone(), token, mode: NackMode::Bury, reason: e.message().to_string() };
                    drop(self.inner.settler.submit(vec![op]));
                    corrupt.push(e);
                    continue;
                }
            };
            let lease_ms = ttr.map(|t| t.as_millis() as i64).unwrap_or(record.ttr_ms as i64);
            // A replayed lease keeps the times of the call that made it.
            let (delivered_at_us, deadline_ms) = match replayed.get(nth - 1) {
                Some(&d) => ((d - lease_ms) * 1000, d),
                None => (now_us, now_ms + lease_ms),
            };
            deliveries.push(Delivery {
                inner: Arc::new(delivery::Inner {
                    id,
                    queue: self.inner.name.clone(),
                    token: record.token,
                    token_hex: record.token.to_string(),
                    record,
                    delivered_at_us,
                    lease_deadline_ms: AtomicI64::new(deadline_ms),
                    settled: AtomicBool::new(false),
                    lost: AtomicBool::new(false),
                    settler: self.inner.settler.clone(),
                }),
            });
        }
        Ok(Fetched { now_us, local, next_due_ms, next_lease_ms, more, deliveries, corrupt })
    }

    /// Pulls up to `max` (1 to [`MAX_FETCH`](limits::MAX_FETCH)) due messages, waiting up to
    /// `wait` for the first one. Each is leased for its ttr: ack, nack or extend it before then,
    /// or it is delivered again.
    ///
    /// Cancel-safe: dropping the future (a `select!`, a timeout, a cancelled task or a caller
    /// that went away) ends the wait, and what a fetch call already under way leases is
    /// released — due again at once, no attempt counted — instead of held until its lease runs
    /// out. The same holds for [`fetch_leasing`](Queue::fetch_leasing) and
    /// [`fetch_first`](Queue::fetch_first).
    pub async fn fetch(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>> {
        self.fetch_leasing(max, wait, None).await
    }

    /// [`fetch`](Queue::fetch) with a lease of `ttr` for every message instead of each one's own.
    /// While waiting it sleeps until the next due time, woken early by a publish; each sleep is
    /// capped at one second, in case a wake-up is lost.
    pub async fn fetch_leasing(&self, max: usize, wait: Duration, ttr: Option<Duration>) -> Result<Vec<Delivery>> {
        Queue::fetch_first(std::slice::from_ref(self), max, wait, ttr).await
    }

    /// Pulls up to `max` due messages from the first of `queues` (1 to
    /// [`MAX_QUEUES`](limits::MAX_QUEUES), in priority order) that has any, waiting up to `wait`
    /// for the first one: each round looks at every queue in order, then sleeps until the
    /// earliest next due time of any of them, woken early by a publish to any of them (each
    /// sleep capped at one second, in case a wake-up is lost). All deliveries of one call come
    /// from one queue; each names it. `ttr` as in [`fetch_leasing`](Queue::fetch_leasing).
    /// A sharded queue counts as one queue: one call may lease from several of its shards, the
    /// soonest due first.
    pub async fn fetch_first(
        queues: &[Queue],
        max: usize,
        wait: Duration,
        ttr: Option<Duration>,
    ) -> Result<Vec<Delivery>> {
        const MAX_IDLE: Duration = Duration::from_secs(1);
        limits::check_queue_list(queues.iter().map(Queue::name))?;
        limits::check_fetch_max(max)?;
        limits::check_delay("wait", wait)?;
        if let Some(t) = ttr {
            limits::check_ttr("ttr", t)?;
        }
        for q in queues {
            q.check_shards().await?;
        }
        let deadline = Instant::now() + wait;
        // Every shard of every queue (a plain queue is its own one shard), in order.
        let parts: Vec<&Queue> = queues.iter().flat_map(|q| q.parts()).collect();
        let mut listeners: Vec<Option<crate::storage::wake::Listener>> = parts.iter().map(|_| None).collect();
        'round: loop {
            let mut seen = Vec::with_capacity(parts.len());
            for q in queues {
                let (got, more, fetched) = q.fetch_round_detached(max, ttr).await?;
                if !got.is_empty() {
                    return Ok(got);
                }
                if more && Instant::now() < deadline {
                    continue 'round;
                }
                seen.extend(fetched);
            }
            if Instant::now() >= deadline {
                return Ok(Vec::new());
            }
            // A listener signals "look now" once its subscription is in place, so a publish
            // between this round's fetch and the subscription is not missed.
            for (l, q) in listeners.iter_mut().zip(&parts) {
                l.get_or_insert_with(|| q.inner.ctx.wake.listen(q.inner.keys.wake()));
            }
            let cap = (Instant::now() + MAX_IDLE).min(deadline);
            let until = seen.iter().filter_map(Fetched::next_wake).fold(cap, Instant::min);
            let slots: Vec<_> = listeners.iter().flatten().map(|l| l.slot.clone()).collect();
            let woken = futures_util::future::select_all(slots.iter().map(|s| Box::pin(s.notify.notified())));
            tokio::select! {
                _ = sleep_precise(until) => {}
                (_, i, _) = woken => {
                    if let Some(due) = slots[i].take() {
                        sleep_precise(seen[i].local_instant(due).min(cap)).await;
                    }
                }
            }
        }
    }

    /// [`fetch_round`](Queue::fetch_round) in a task of its own, so that the fetch is
    /// cancel-safe: when the caller drops its future while a call is under way, the task lets
    /// the call finish and releases what it leased (no attempt counted).
    async fn fetch_round_detached(&self, max: usize, ttr: Option<Duration>) -> Result<Round> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let q = self.clone();
        tokio::spawn(async move {
            let round = q.fetch_round(max, ttr).await;
            // A caller that is gone drops the handover unread, which releases the deliveries.
            let _ = tx.send(round.map(|(got, more, seen)| (Handover::new(got), more, seen)));
        });
        let (mut got, more, seen) =
            rx.await.map_err(|_| Error::new(ErrorKind::Connection, "fetch: its task ended"))??;
        Ok((got.take(), more, seen))
    }

    /// One look of [`fetch_first`](Queue::fetch_first) at this queue: up to `max` deliveries,
    /// whether more is due now, and each shard's fetch reply (without its deliveries). A plain
    /// queue is one fetch call. A sharded one asks every shard (concurrently, leasing nothing)
    /// for its earliest due time, then leases from the shards with something due, the soonest
    /// due first, until it has `max`.
    ///
    /// A shard that fails (its master down, on a cluster that serves the other slots) is left
    /// out of the rounds, with a warning, and probed again in the background after a backoff
    /// ([`ShardHealth`]): the healthy shards' messages flow on without waiting for its timeout,
    /// and what was leased before a failure is handed out rather than lost to its lease. When
    /// every shard is out, the round asks them all and fails with the first error.
    async fn fetch_round(&self, max: usize, ttr: Option<Duration>) -> Result<Round> {
        if !self.is_sharded() {
            let mut f = self.fetch_once(max, ttr).await?;
            let got = std::mem::take(&mut f.deliveries);
            return Ok((got, f.more, vec![f]));
        }
        let shards = self.parts();
        let all_out = shards.iter().all(|q| q.inner.health.is_held());
        let probes = futures_util::future::join_all(shards.iter().map(|q| async move {
            if !all_out && q.inner.health.is_held() {
                if q.inner.health.take_probe() {
                    q.probe_in_background();
                }
                return None;
            }
            Some(q.fetch_once(0, ttr).await)
        }))
        .await;
        let mut seen = self.reachable_shards(probes)?;
        let mut due: Vec<usize> = (0..seen.len()).filter(|&i| seen[i].more).collect();
        due.sort_by_key(|&i| (seen[i].next_due_ms.unwrap_or(seen[i].now_us / 1000), i));
        let mut got = Vec::new();
        for i in due {
            if got.len() >= max {
                break;
            }
            match shards[i].fetch_once(max - got.len(), ttr).await {
                Ok(mut f) => {
                    got.append(&mut f.deliveries);
                    seen[i] = f;
                }
                Err(e) => {
                    shards[i].shard_failed(&e);
                    seen[i] = seen[i].unreached();
                }
            }
        }
        let more = seen.iter().any(|f| f.more);
        Ok((got, more, seen))
    }

    /// Each shard's probe reply (None: left out), a failed or left-out shard's as
    /// [`Fetched::unreached`]; the first error when no shard answered.
    fn reachable_shards(&self, probes: Vec<Option<Result<Fetched>>>) -> Result<Vec<Fetched>> {
        let Some(model) = probes.iter().flatten().find_map(|p| p.as_ref().ok()).map(Fetched::unreached) else {
            return Err(probes.into_iter().flatten().find_map(Result::err).unwrap_or_else(|| bad("fetch: no shard")));
        };
        let shards = self.parts();
        let seen = probes.into_iter().zip(shards).map(|(p, q)| match p {
            Some(Ok(f)) => {
                q.shard_reached();
                f
            }
            Some(Err(e)) => {
                q.shard_failed(&e);
                model.unreached()
            }
            None => model.unreached(),
        });
        Ok(seen.collect())
    }

    /// Looks at a shard left out of pulls, in a task of its own: back in the rounds when it
    /// answers, left out for a longer backoff when not.
    fn probe_in_background(&self) {
        let q = self.clone();
        self.inner.ctx.rt.spawn(async move {
            match q.fetch_once(0, None).await {
                Ok(_) => q.shard_reached(),
                Err(e) => q.shard_failed(&e),
            }
        });
    }

    fn shard_reached(&self) {
        if self.inner.health.reached() {
            tracing::info!(queue = self.name(), "a shard answers pulls again");
        }
    }

    fn shard_failed(&self, e: &Error) {
        if self.inner.health.failed() {
            tracing::warn!(queue = self.name(), error = %e, "a shard failed; pulls leave it out and look again with backoff");
        }
    }

    /// A token that is not one a delivery carries cannot be the current lease: LeaseLost.
    fn op_id_token(&self, id: &str, token: &str) -> Result<(String, Token)> {
        self.check_writable()?;
        limits::check_id_any(id)?;
        let token = Token::parse(token).ok_or_else(|| Error::lease_lost(id))?;
        Ok((id.to_string(), token))
    }

    /// The plain-queue case of [`Queue::ack`], on this handle's own keys.
    pub(crate) async fn ack_here(&self, id: &str, token: &str) -> Result<()> {
        let (id, token) = self.op_id_token(id, token)?;
        self.inner.settler.settle(Op::Ack { id, token }).await.map(|_| ())
    }

    /// The plain-queue case of [`Queue::nack`], on this handle's own keys.
    pub(crate) async fn nack_here(
        &self,
        id: &str,
        token: &str,
        retry_in: Option<Duration>,
        reason: &str,
    ) -> Result<bool> {
        if let Some(d) = retry_in {
            limits::check_retry_in(d)?;
        }
        let (id, token) = self.op_id_token(id, token)?;
        let mode = retry_in.map_or(NackMode::Backoff, |d| NackMode::After(d.as_millis() as u64));
        let reason = delivery::truncate(reason, limits::MAX_REASON_BYTES);
        Ok(self.inner.settler.settle(Op::Nack { id, token, mode, reason }).await? == Settled::Dead)
    }

    /// The plain-queue case of [`Queue::release`], on this handle's own keys.
    pub(crate) async fn release_here(&self, id: &str, token: &str) -> Result<()> {
        let (id, token) = self.op_id_token(id, token)?;
        let op = Op::Nack { id, token, mode: NackMode::Release, reason: String::new() };
        self.inner.settler.settle(op).await.map(|_| ())
    }

    /// The plain-queue case of [`Queue::extend`], on this handle's own keys.
    pub(crate) async fn extend_here(&self, id: &str, token: &str, ttr: Duration) -> Result<()> {
        limits::check_ttr("ttr", ttr)?;
        let (id, token) = self.op_id_token(id, token)?;
        let ttr_ms = ttr.as_millis() as u64;
        self.inner.settler.settle(Op::Extend { id, token, ttr_ms }).await.map(|_| ())
    }

    /// The argument of the scripts that require a shard's mark (`lua/lib.lua` check_layout):
    /// [`QueueInner::of_shards`], `0` (no mark required) for a plain queue.
    fn of_arg(&self) -> Vec<u8> {
        self.inner.of_shards.to_string().into_bytes()
    }

    /// The plain-queue case of [`Queue::cancel`], on this handle's own keys (refused
    /// [`is_unmarked`] on a shard that does not carry its queue's count).
    pub(crate) async fn cancel_here(&self, id: &str) -> Result<bool> {
        limits::check_id_any(id)?;
        let r = self.run_replayed(&scripts::CANCEL, vec![self.of_arg(), id.as_bytes().to_vec()]).await?;
        Ok(int(&r)? == 1)
    }

    /// The plain-queue case of [`Queue::reschedule`], on this handle's own keys (refused
    /// [`is_unmarked`] on a shard that does not carry its queue's count).
    pub(crate) async fn reschedule_here(&self, id: &str, due: Due) -> Result<SystemTime> {
        limits::check_id_any(id)?;
        let (mode, value) = match due_args(due)? {
            When::FromNow(ms) => ("d", ms),
            When::At(ms) => ("a", ms),
        };
        let a = vec![id.as_bytes().to_vec(), mode.as_bytes().to_vec(), value.to_string().into_bytes(), self.of_arg()];
        let r = array(self.run(&scripts::RESCHEDULE, args(a)).await?)?;
        let (status, due) =
            (int(r.first().ok_or_else(|| bad("reschedule"))?)?, int(r.get(1).ok_or_else(|| bad("reschedule"))?)?);
        match status {
            1 => Ok(ms_to_time(due)),
            0 => Err(Error::not_found(id)),
            -1 => {
                Err(Error::invalid(format!("id: message {id:?} is leased (being processed); it cannot be rescheduled")))
            }
            -2 => Err(Error::invalid(format!("id: message {id:?} is dead; respawn it instead of rescheduling"))),
            -4 => Err(Error::invalid(format!(
                "due: the new due time of message {id:?} is at or after its expiry time ({} ms)",
                due
            ))),
            _ => Err(record::corrupt(id)),
        }
    }

    /// The plain-queue case of [`Queue::peek`], on this handle's own keys.
    pub(crate) async fn peek_here(&self, id: &str) -> Result<Option<MessageInfo>> {
        limits::check_id_any(id)?;
        let r = self.run(&scripts::PEEK, vec![redis::Arg::Simple(id.as_bytes().to_vec())]).await?;
        if matches!(r, Value::Nil) {
            return Ok(None);
        }
        let mut v = array(r)?.into_iter();
        let (_now, state, score, rec, blob) = match (v.next(), v.next(), v.next(), v.next(), v.next()) {
            (Some(a), Some(b), Some(c), Some(d), Some(e)) => (a, b, c, d, e),
            _ => return Err(bad("peek")),
        };
        let state = match string(state)?.as_str() {
            "scheduled" => State::Scheduled,
            "leased" => State::Leased,
            "dead" => State::Dead,
            _ => State::Ready,
        };
        let blob = opt_bytes(blob)?;
        Ok(Some(MessageInfo::from_raw(id.to_string(), state, &bytes(rec)?, blob.as_deref(), int(&score)?)))
    }

    /// Pauses the queue: consumers stop receiving (leases already held run and settle as
    /// usual), publishes go on. Stored in Redis: it survives restarts and holds for every
    /// consumer. Returns false when it was already paused.
    pub async fn pause(&self) -> Result<bool> {
        self.flag("paused", true).await
    }

    pub(crate) async fn flag_here(&self, name: &str, on: bool) -> Result<bool> {
        let on = if on { b"1".to_vec() } else { b"0".to_vec() };
        let a = vec![name.as_bytes().to_vec(), on, self.of_arg()];
        Ok(int(&self.run(&scripts::FLAG, args(a)).await?)? == 1)
    }

    /// Turns the queue's history counters on (the default) or off, for every client.
    /// Returns false when it already was so.
    pub async fn set_history(&self, on: bool) -> Result<bool> {
        self.flag("nohist", !on).await
    }

    /// The history of the queue from `since` to `until` (at most [`Step::max_points`] points of
    /// `step`): what was published, delivered, acked, retried, dead-lettered and expired, and the
    /// lateness of the deliveries, per minute (kept 2 days), per hour (kept 90 days) or per UTC
    /// day (its hours summed). Counted by the scripts that do the work, by the Redis clock;
    /// points with nothing are zeros.
    pub async fn history(&self, since: SystemTime, until: SystemTime, step: Step) -> Result<Vec<HistoryPoint>> {
        let point = step.millis();
        let (since_ms, until_ms) = (time_to_ms(since).max(0), time_to_ms(until).max(0));
        if until_ms < since_ms {
            return Err(Error::invalid("until: must not be before since"));
        }
        let (a, b) = (since_ms / point, until_ms / point);
        let n = (b - a + 1) as usize;
        if n > step.max_points() {
            return Err(Error::invalid(format!(
                "since/until: at most {} points of the step, got {n}",
                step.max_points()
            )));
        }
        // A point sums `per` units of the script (a day: its 24 hours), read in calls of at most
        // MAX_HISTORY_POINTS units each.
        let (kind, per) = step.units();
        let (first, units) = (a * per as i64, n * per);
        let mut counts = Vec::with_capacity(units * HIST_COUNTERS);
        while counts.len() < units * HIST_COUNTERS {
            let done = counts.len() / HIST_COUNTERS;
            let len = (units - done).min(limits::MAX_HISTORY_POINTS);
            counts.extend(self.history_call(kind, first + done as i64, len).await?.1);
        }
        Ok(counts
            .chunks(HIST_COUNTERS * per)
            .enumerate()
            .map(|(i, c)| {
                let mut sum = [0u64; HIST_COUNTERS];
                for unit in c.chunks(HIST_COUNTERS) {
                    sum.iter_mut().zip(unit).for_each(|(s, x)| *s += x);
                }
                HistoryPoint::from_counts(ms_to_time((a + i as i64) * point), &sum)
            })
            .collect())
    }

    /// The Redis clock (of the node holding the queue, or its first shard): what a query's
    /// "now" means when the caller gives no time.
    pub async fn redis_now(&self) -> Result<SystemTime> {
        let time = self.parts()[0].run(&scripts::TIME, Vec::new()).await;
        let v = array(if self.is_sharded() { time.map_err(|e| self.in_shard(0, e)) } else { time }?)?;
        Ok(ms_to_time(int(v.first().ok_or_else(|| bad("time"))?)?))
    }

    /// The history counters' totals since the queue began (monotonic, for Prometheus), read at
    /// the Redis time of the point's `at` (of a sharded queue: its latest shard's).
    pub async fn history_totals(&self) -> Result<HistoryPoint> {
        let (now, v) = self.history_call("t", 0, 1).await?;
        Ok(HistoryPoint::from_counts(ms_to_time(now), &v))
    }

    /// The Redis time of the call (ms) and its [`HIST_COUNTERS`] counters per unit.
    pub(crate) async fn history_call_here(&self, kind: &str, first: i64, n: usize) -> Result<(i64, Vec<u64>)> {
        let a = vec![kind.as_bytes().to_vec(), first.to_string().into_bytes(), n.to_string().into_bytes()];
        let v = array(self.run(&scripts::HISTORY, args(a)).await?)?;
        if v.len() != 1 + HIST_COUNTERS * n {
            return Err(bad("history"));
        }
        let counts = v[1..].iter().map(|x| int(x).map(|i| i.max(0) as u64)).collect::<Result<_>>()?;
        Ok((int(&v[0])?, counts))
    }

    /// Resumes a paused queue; idle consumers are woken at once. Returns false when it was not
    /// paused.
    pub async fn resume(&self) -> Result<bool> {
        self.flag("paused", false).await
    }

    /// The plain-queue case of [`Queue::upcoming`], on this handle's own keys.
    pub(crate) async fn upcoming_here(
        &self,
        from: SystemTime,
        width: Duration,
        buckets: usize,
    ) -> Result<Vec<(SystemTime, u64)>> {
        if buckets == 0 || buckets > limits::MAX_UPCOMING_BUCKETS {
            return Err(Error::invalid(format!(
                "buckets: must be 1 to {}, got {buckets}",
                limits::MAX_UPCOMING_BUCKETS
            )));
        }
        limits::check_span("width", width, Duration::from_millis(1), limits::MAX_DELAY)?;
        // The spans end within the longest delay too: their start times stay times every
        // language can show (3650 days x 1000 would end past the year 9999).
        if width.saturating_mul(buckets as u32) > limits::MAX_DELAY {
            return Err(Error::invalid(format!(
                "width: the {buckets} spans must end within {} days of the start (width x buckets), got {} days",
                limits::MAX_DELAY.as_secs() / 86_400,
                width.saturating_mul(buckets as u32).as_secs() / 86_400
            )));
        }
        let start = time_to_ms(from);
        limits::check_time("from", start, time_to_ms(SystemTime::now()))?;
        let w = width.as_millis() as i64;
        let a = vec![start.to_string().into_bytes(), w.to_string().into_bytes(), buckets.to_string().into_bytes()];
        let v = array(self.run(&scripts::UPCOMING, args(a)).await?)?;
        if v.len() != buckets + 1 {
            return Err(bad("upcoming"));
        }
        v[1..].iter().enumerate().map(|(i, c)| Ok((ms_to_time(start + i as i64 * w), int(c)? as u64))).collect()
    }

    /// The plain-queue case of [`Queue::list`], on this handle's own keys.
    pub(crate) async fn list_here(&self, state: State, offset: usize, limit: usize) -> Result<ListPage> {
        limits::check_fetch_count("limit", limit)?;
        let a = vec![
            state.as_str().as_bytes().to_vec(),
            offset.min(MAX_OFFSET).to_string().into_bytes(),
            limit.to_string().into_bytes(),
            DEAD_LIST_BYTES.to_string().into_bytes(),
        ];
        let v = array(self.run(&scripts::LIST, args(a)).await?)?;
        let total = int(v.get(1).ok_or_else(|| bad("list"))?)? as u64;
        let mut items = Vec::new();
        let mut it = v.into_iter().skip(2);
        while let (Some(id), Some(score), Some(rec), Some(blob)) = (it.next(), it.next(), it.next(), it.next()) {
            let raw = opt_bytes(rec)?.unwrap_or_default();
            let blob = opt_bytes(blob)?;
            items.push(MessageInfo::from_raw(string(id)?, state, &raw, blob.as_deref(), int(&score)?));
        }
        Ok(ListPage { total, items })
    }

    /// The plain-queue case of [`Queue::search`], on this handle's own keys.
    pub(crate) async fn search_here(&self, what: &Search, cursor: Option<&str>) -> Result<SearchPage> {
        const STEP: usize = 500;
        let (kind, needle, name): (&str, Vec<u8>, &str) = match what {
            Search::IdPrefix(p) => ("id", p.as_bytes().to_vec(), ""),
            Search::Header(n, v) => ("header", v.as_bytes().to_vec(), n.as_str()),
            Search::Body(b) => ("body", b.clone(), ""),
            Search::Error(e) => ("error", e.as_bytes().to_vec(), ""),
        };
        if needle.is_empty() && kind != "header" {
            let field = if kind == "id" { "id_prefix" } else { kind };
            return Err(Error::invalid(format!("search.{field}: give something to look for (it is empty)")));
        }
        if kind == "header" && name.is_empty() {
            return Err(Error::invalid("search.header: the header name is empty"));
        }
        let cursor = cursor.unwrap_or("0");
        if cursor.is_empty() || !cursor.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Error::invalid(format!("cursor: {cursor:?} is not a cursor a search returned")));
        }
        let a = vec![
            cursor.as_bytes().to_vec(),
            STEP.to_string().into_bytes(),
            kind.as_bytes().to_vec(),
            needle,
            name.as_bytes().to_vec(),
        ];
        let v = array(self.run(&scripts::SEARCH, args(a)).await?)?;
        if v.len() < 3 || (v.len() - 3) % 4 != 0 {
            return Err(bad("search"));
        }
        let matches = (v.len() - 3) / 4;
        let mut it = v.into_iter();
        let next = string(it.next().ok_or_else(|| bad("search"))?)?;
        let scanned = int(&it.next().ok_or_else(|| bad("search"))?)? as u64;
        let now = int(&it.next().ok_or_else(|| bad("search"))?)?;
        let rest: Vec<Value> = it.collect();
        let (found, blobs) = rest.split_at(3 * matches);
        let mut items = Vec::with_capacity(matches);
        for (k, m) in found.chunks(3).enumerate() {
            let id = string(m[0].clone())?;
            let raw = bytes(m[1].clone())?;
            let when_ms = int(&m[2])?;
            let blob = opt_bytes(blobs[k].clone())?;
            items.push(MessageInfo::from_raw_any(id, &raw, blob.as_deref(), now, when_ms));
        }
        Ok(SearchPage { items, scanned, cursor: (next != "0").then_some(next) })
    }

    /// The plain-queue case of [`Queue::stats`], on this handle's own keys.
    pub(crate) async fn stats_here(&self) -> Result<Stats> {
        let v = array(self.run(&scripts::STATS, vec![]).await?)?;
        if v.len() != 10 {
            return Err(bad("stats"));
        }
        let n = |i: usize| int(&v[i]);
        let t = |i: usize| -> Result<Option<SystemTime>> {
            let x = int(&v[i])?;
            Ok((x >= 0).then(|| ms_to_time(x)))
        };
        Ok(Stats {
            now: ms_to_time(n(0)?),
            total: n(1)? as u64,
            scheduled: n(2)? as u64,
            ready: n(3)? as u64,
            leased: n(4)? as u64,
            lapsed: n(9)? as u64,
            dead: n(5)? as u64,
            next_due: t(6)?,
            oldest_ready_due: t(7)?,
            paused: n(8)? == 1,
        })
    }

    /// The plain-queue case of [`Queue::dead_letters`], on this handle's own keys.
    pub(crate) async fn dead_letters_here(&self, offset: usize, limit: usize) -> Result<Vec<MessageInfo>> {
        limits::check_fetch_count("limit", limit)?;
        let a = vec![
            offset.min(MAX_OFFSET).to_string().into_bytes(),
            limit.to_string().into_bytes(),
            DEAD_LIST_BYTES.to_string().into_bytes(),
        ];
        let v = array(self.run(&scripts::DEAD_LIST, args(a)).await?)?;
        let mut out = Vec::new();
        let mut it = v.into_iter().skip(1);
        while let (Some(id), Some(at), Some(rec), Some(blob)) = (it.next(), it.next(), it.next(), it.next()) {
            let id = string(id)?;
            let raw = opt_bytes(rec)?.unwrap_or_default();
            let blob = opt_bytes(blob)?;
            out.push(MessageInfo::from_raw(id, State::Dead, &raw, blob.as_deref(), int(&at)?));
        }
        Ok(out)
    }

    /// Respawn or purge: ids in calls of 1000; "oldest n" and "all" as a run of calls over one
    /// snapshot of the dead letters (those that died before the run began: a message the run
    /// respawns that dies again is not respawned again, and an unreadable one is skipped).
    /// Refused [`is_unmarked`] on a shard that does not carry its queue's count.
    pub(crate) async fn on_dead_here(&self, run: &DeadRun<'_>, sel: Select) -> Result<u64> {
        const STEP: usize = 1000;
        let DeadRun { script, lead, on_step } = *run;
        let call = |a: Vec<Vec<u8>>| self.run_replayed(script, [vec![self.of_arg()], lead.to_vec(), a].concat());
        let parse = |v: Value| -> Result<[i64; 5]> {
            let v = array(v)?;
            if v.len() != 5 {
                return Err(bad("dead letters"));
            }
            Ok([int(&v[0])?, int(&v[1])?, int(&v[2])?, int(&v[3])?, int(&v[4])?])
        };
        if let Select::Ids(ids) = &sel {
            let mut n = 0;
            for id in ids {
                limits::check_id_any(id)?;
            }
            for chunk in ids.chunks(STEP) {
                let mut a = vec![b"ids".to_vec()];
                a.extend(chunk.iter().map(|id| id.as_bytes().to_vec()));
                let k = parse(call(a).await?)?[0] as u64;
                n += k;
                on_step(k);
            }
            return Ok(n);
        }
        let mut left = match sel {
            Select::Oldest(n) => n,
            _ => usize::MAX,
        };
        let (mut t0, mut s0, mut offset, mut done) = (-1i64, -1i64, 0i64, 0u64);
        while left > 0 {
            let step = left.min(STEP);
            let a = vec![
                b"oldest".to_vec(),
                step.to_string().into_bytes(),
                t0.to_string().into_bytes(),
                s0.to_string().into_bytes(),
                offset.to_string().into_bytes(),
            ];
            let [n, skipped, exhausted, t, s] = parse(call(a).await?)?;
            (t0, s0) = (t, s);
            done += n as u64;
            on_step(n as u64);
            offset += skipped;
            left -= (n as usize).min(left);
            if exhausted == 1 {
                break;
            }
        }
        Ok(done)
    }

    /// Brings dead letters back: attempts reset, due now, each with its own expiry. Returns
    /// how many.
    pub async fn respawn(&self, sel: Select) -> Result<u64> {
        self.respawn_with(sel, RespawnExpiry::Keep).await
    }

    /// [`respawn`](Self::respawn) with a choice of expiry: keep each message's own, clear it,
    /// or a fresh one counted from the respawn (by the Redis clock).
    pub async fn respawn_with(&self, sel: Select, expiry: RespawnExpiry) -> Result<u64> {
        self.respawn_with_progress(sel, expiry, |_| {}).await
    }

    /// [`respawn_with`](Self::respawn_with), telling `progress` how many it has respawned so
    /// far after each step (see [`purge_dead_with_progress`](Self::purge_dead_with_progress)).
    pub async fn respawn_with_progress(
        &self,
        sel: Select,
        expiry: RespawnExpiry,
        progress: impl FnMut(u64) + Send,
    ) -> Result<u64> {
        self.dead_run(Some(expiry), sel, progress).await.map_err(|(e, n)| stopped(e, "respawned", n))
    }

    /// Deletes dead letters for good. Returns how many.
    pub async fn purge_dead(&self, sel: Select) -> Result<u64> {
        self.purge_dead_with_progress(sel, |_| {}).await
    }

    /// [`purge_dead`](Self::purge_dead), telling `progress` how many it has deleted so far
    /// after each step: each call to Redis (up to 1,000 dead letters of one shard; a sharded
    /// queue's shards run side by side, each step counted as it ends). What a run did before
    /// it failed or was dropped stays done: the last total `progress` got says how much, and
    /// so does the error of a run that failed after a step ended (its message, and
    /// [`Error::so_far`]: `count`).
    pub async fn purge_dead_with_progress(&self, sel: Select, progress: impl FnMut(u64) + Send) -> Result<u64> {
        self.dead_run(None, sel, progress).await.map_err(|(e, n)| stopped(e, "purged", n))
    }

    /// Respawns (`Some(expiry)`) or purges (None) the dead letters `sel` names, telling
    /// `progress` the total after each step; an error comes with the total done before it,
    /// once a step had ended.
    pub(crate) async fn dead_run(
        &self,
        respawn: Option<RespawnExpiry>,
        sel: Select,
        progress: impl FnMut(u64) + Send,
    ) -> std::result::Result<u64, (Error, Option<u64>)> {
        let (script, lead) = match respawn {
            Some(expiry) => {
                expiry.validate().map_err(|e| (e, None))?;
                (&scripts::RESPAWN, vec![expiry.script_arg().to_string().into_bytes()])
            }
            None => (&scripts::PURGE_DEAD, vec![]),
        };
        let running = Running::new(progress);
        let run = DeadRun { script, lead: &lead, on_step: &|n| running.add(n) };
        self.on_dead(&run, sel).await.map_err(|e| (e, running.so_far()))
    }

    /// Takes the queue's name out of the registry, first thing in [`Queue::destroy`]: a publish
    /// that lands on keys already deleted makes the queue anew and adds the name back (see
    /// [`send_batch`](Self::send_batch)), so what a destroy leaves is registered exactly when it
    /// holds data.
    pub(crate) async fn unregister(&self) -> Result<()> {
        let mut c = self.conn();
        let _: () = redis::cmd("SREM")
            .arg(keys::registry(&self.inner.ctx.prefix))
            .arg(&self.inner.name)
            .query_async(&mut c)
            .await?;
        self.inner.registered.store(false, Ordering::Relaxed);
        Ok(())
    }

    /// Deletes this handle's own keys (a plain queue's, a shard's, or a sharded queue's count).
    pub(crate) async fn destroy_here(&self) -> Result<()> {
        let mut c = self.conn();
        let _: () = redis::cmd("UNLINK").arg(self.inner.keys.data()).query_async(&mut c).await?;
        Ok(())
    }

    /// The plain-queue case of [`Queue::verify`], on this handle's own keys.
    pub(crate) async fn verify_here(&self) -> Result<VerifyReport> {
        let arg = redis::Arg::Simple(VERIFY_MAX_RECORDS.to_string().into_bytes());
        let r = self.run(&scripts::VERIFY, vec![arg]).await.map_err(|e| {
            if e.message().contains("more than the limit") {
                Error::new(ErrorKind::InvalidArgument, e.message().to_string())
            } else {
                e
            }
        })?;
        let mut v = array(r)?.into_iter();
        let records = int(&v.next().ok_or_else(|| bad("verify"))?)? as u64;
        let problems = array(v.next().ok_or_else(|| bad("verify"))?)?.into_iter().map(string).collect::<Result<_>>()?;
        Ok(VerifyReport { records, problems })
    }
}
