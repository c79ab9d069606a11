//! A queue handle: publish, pull, settle by id, inspect, change, dead letters.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use redis::Value;

use crate::client::Client;
use crate::delivery::{self, time_to_ms, Delivery};
use crate::error::{Error, ErrorKind, Result};
use crate::info::{MessageInfo, Select, State, Stats, VerifyReport};
use crate::keys::{self, QueueKeys};
use crate::limits;
use crate::message::{Due, Message, PublishStatus, Published};
use crate::record::{self, encode_tail};
use crate::reply::{array, bad, bytes, int, string};
use crate::scripts;
use crate::settle::{NackMode, Op, Settled, Settler};

/// Largest queue `verify` checks (it is O(n) and blocks Redis meanwhile).
pub const VERIFY_MAX_RECORDS: u64 = 2_000_000;
/// Due messages promoted per fetch call; expired leases reclaimed per fetch call.
pub(crate) const PROMOTE_LIMIT: usize = 250;
pub(crate) const RECLAIM_LIMIT: usize = 200;

/// A handle to one queue. Cheap to clone.
#[derive(Clone)]
pub struct Queue {
    pub(crate) inner: Arc<QueueInner>,
}

pub(crate) struct QueueInner {
    pub client: Client,
    pub name: String,
    pub keys: Arc<QueueKeys>,
    pub settler: Settler,
    registered: AtomicBool,
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

fn due_args(due: Due) -> Result<(&'static str, i64)> {
    Ok(match due {
        Due::In(d) => {
            limits::check_delay("delay", d)?;
            ("d", d.as_millis() as i64)
        }
        Due::At(t) => {
            let ms = time_to_ms(t);
            limits::check_at(ms, time_to_ms(SystemTime::now()))?;
            ("a", ms)
        }
    })
}

impl Queue {
    pub(crate) fn new(client: Client, name: &str) -> Result<Queue> {
        limits::check_queue_name(name)?;
        let keys = Arc::new(QueueKeys::new(&client.inner.prefix, name));
        let settler = Settler::start(client.inner.conn.clone(), keys.clone(), &client.inner.rt);
        Ok(Queue {
            inner: Arc::new(QueueInner {
                client,
                name: name.to_string(),
                keys,
                settler,
                registered: AtomicBool::new(false),
            }),
        })
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The client this queue belongs to.
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    fn conn(&self) -> crate::client::Conn {
        self.inner.client.inner.conn.clone()
    }

    async fn run(&self, script: &scripts::Script, args: Vec<redis::Arg<Vec<u8>>>) -> Result<Value> {
        self.inner.client.inner.check_open()?;
        let conn = &self.inner.client.inner.conn;
        let add = |c: &mut redis::Cmd| {
            for a in &args {
                if let redis::Arg::Simple(b) = a {
                    c.arg(b);
                }
            }
        };
        Ok(script.run(conn, &self.inner.keys.all, add).await?)
    }

    async fn register(&self) {
        if !self.inner.registered.swap(true, Ordering::Relaxed) {
            let mut c = self.conn();
            let r: redis::RedisResult<i64> = redis::cmd("SADD")
                .arg(keys::registry(&self.inner.client.inner.prefix))
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

    /// Publishes many messages in one round trip (up to 100,000; sent as script calls of 1000,
    /// each atomic). Every message is checked before anything is sent: one bad message refuses
    /// the whole batch with InvalidArgument, and nothing is written.
    pub async fn publish_batch(&self, msgs: Vec<Message>) -> Result<Vec<Published>> {
        limits::check_batch(msgs.len())?;
        if msgs.is_empty() {
            return Ok(Vec::new());
        }
        let d = self.inner.client.inner.defaults;
        let max_body = self.inner.client.inner.max_body_bytes;
        let mut chunks: Vec<Vec<redis::Arg<Vec<u8>>>> = Vec::new();
        for (i, chunk) in msgs.chunks(limits::PUBLISH_CHUNK).enumerate() {
            let mut args: Vec<Vec<u8>> = Vec::with_capacity(1 + chunk.len() * 9);
            args.push(chunk.len().to_string().into_bytes());
            for (j, m) in chunk.iter().enumerate() {
                let at = |e: Error| {
                    if msgs.len() == 1 {
                        e
                    } else {
                        Error::invalid(format!("message {}: {}", i * limits::PUBLISH_CHUNK + j, e.message()))
                    }
                };
                if let Some(id) = &m.id {
                    limits::check_id(id).map_err(at)?;
                }
                limits::check_body(m.body.len(), max_body).map_err(at)?;
                limits::check_headers(m.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())), m.headers.len())
                    .map_err(at)?;
                let (mode, due) = due_args(m.due).map_err(at)?;
                let max_attempts = m.max_attempts.unwrap_or(d.max_attempts);
                limits::check_max_attempts(max_attempts).map_err(at)?;
                let ttr = m.ttr.unwrap_or(d.ttr);
                limits::check_ttr("ttr", ttr).map_err(at)?;
                let (bb, bm) = m.backoff.unwrap_or((d.backoff_base, d.backoff_max));
                limits::check_backoff("backoff base", bb).map_err(at)?;
                limits::check_backoff("backoff max", bm).map_err(at)?;
                args.push(m.id.clone().unwrap_or_default().into_bytes());
                args.push(if m.replace { b"1".to_vec() } else { b"0".to_vec() });
                args.push(mode.as_bytes().to_vec());
                args.push(due.to_string().into_bytes());
                args.push(max_attempts.to_string().into_bytes());
                args.push(ttr.as_millis().to_string().into_bytes());
                args.push(bb.as_millis().to_string().into_bytes());
                args.push(bm.as_millis().max(bb.as_millis()).to_string().into_bytes());
                args.push(encode_tail(&m.headers, &m.body));
            }
            chunks.push(args.into_iter().map(redis::Arg::Simple).collect());
        }
        self.register().await;
        let calls = chunks.into_iter().map(|args| self.run(&scripts::PUBLISH, args));
        let replies = futures_util::future::join_all(calls).await;
        if let Some((n, timeout)) = self.inner.client.inner.wait_replicas {
            if replies.iter().all(Result::is_ok) {
                self.wait_replicas(n, timeout).await?;
            }
        }
        let mut out = Vec::with_capacity(msgs.len());
        for reply in replies {
            let mut items = array(reply?)?.into_iter().skip(1);
            while let (Some(id), Some(st)) = (items.next(), items.next()) {
                let status = match int(&st)? {
                    0 => PublishStatus::Duplicate,
                    2 => PublishStatus::Replaced,
                    _ => PublishStatus::Stored,
                };
                out.push(Published { id: string(id)?, status });
            }
        }
        Ok(out)
    }

    /// WAIT on the connection the publish went through (it covers every earlier write on it).
    /// In a cluster, WAIT goes to the master of the queue's slot, on the same per-node
    /// connection as the publish (redis-rs would otherwise send it to every master).
    async fn wait_replicas(&self, n: u32, timeout: Duration) -> Result<()> {
        use redis::aio::ConnectionLike;
        use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
        let cmd = redis::cmd("WAIT").arg(n).arg(timeout.as_millis() as u64).clone();
        let reply = match self.conn() {
            crate::connection::Conn::Cluster(mut c) => {
                let route = Route::with_key(&self.inner.keys.all[0], SlotAddr::Master);
                c.route_command(cmd, RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route))).await
            }
            mut c => c.req_packed_command(&cmd).await,
        };
        let got = int(&reply.and_then(Value::extract_error)?)?;
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
        Ok(())
    }

    /// One fetch script call: reclaim, promote, lease up to `max` (0 = none).
    pub(crate) async fn fetch_once(&self, max: usize, ttr: Option<Duration>) -> Result<Fetched> {
        let ttr_ms = ttr.map(|t| t.as_millis() as u64).unwrap_or(0);
        let args = [max as u64, ttr_ms, PROMOTE_LIMIT as u64, RECLAIM_LIMIT as u64]
            .iter()
            .map(|n| redis::Arg::Simple(n.to_string().into_bytes()))
            .collect();
        let sent = Instant::now();
        let reply = self.run(&scripts::FETCH, args).await?;
        // Redis read its clock about halfway through the round trip.
        let local = sent + sent.elapsed() / 2;
        let v = array(reply)?;
        if v.len() < 6 || (v.len() - 6) % 4 != 0 {
            return Err(bad("fetch"));
        }
        let now_us = int(&v[0])? * 1000 + int(&v[1])?;
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
        let mut deliveries = Vec::new();
        while let (Some(id), Some(token), Some(deadline), Some(rec)) = (it.next(), it.next(), it.next(), it.next()) {
            let id = string(id)?;
            let token = string(token)?;
            let record = match record::decode(&id, &bytes(rec)?) {
                Ok(r) => r,
                Err(e) => {
                    // Readable header, unreadable rest: dead letter it now; the others flow on.
                    let op = Op::Nack { id: id.clone(), token, mode: NackMode::Bury, reason: e.message().to_string() };
                    self.inner.settler.settle(op).await?;
                    corrupt.push(e);
                    continue;
                }
            };
            deliveries.push(Delivery {
                inner: Arc::new(delivery::Inner {
                    id,
                    queue: self.inner.name.clone(),
                    token,
                    record,
                    delivered_at_us: now_us,
                    lease_deadline_ms: AtomicI64::new(int(&deadline)?),
                    settled: AtomicBool::new(false),
                    settler: self.inner.settler.clone(),
                }),
            });
        }
        Ok(Fetched { now_us, local, next_due_ms, next_lease_ms, more, deliveries, corrupt })
    }

    /// Pulls up to `max` (1 to 1000) due messages, waiting up to `wait` for the first one. Each
    /// is leased for its ttr: ack, nack or extend it before then, or it is delivered again.
    pub async fn fetch(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>> {
        self.fetch_leasing(max, wait, None).await
    }

    /// [`fetch`](Queue::fetch) with a lease of `ttr` for every message instead of each one's own.
    pub async fn fetch_leasing(&self, max: usize, wait: Duration, ttr: Option<Duration>) -> Result<Vec<Delivery>> {
        limits::check_fetch_max(max)?;
        limits::check_delay("wait", wait)?;
        if let Some(t) = ttr {
            limits::check_ttr("ttr", t)?;
        }
        let deadline = Instant::now() + wait;
        let mut listener = None;
        loop {
            let f = self.fetch_once(max, ttr).await?;
            if !f.deliveries.is_empty() || Instant::now() >= deadline {
                return Ok(f.deliveries);
            }
            if f.more {
                continue;
            }
            let l = listener.get_or_insert_with(|| self.inner.client.inner.wake.listen(self.inner.keys.wake()));
            let until = f.next_wake().map_or(deadline, |t| t.min(deadline));
            let slot = l.slot.clone();
            tokio::select! {
                _ = crate::consumer::sleep_precise(until) => {}
                _ = slot.notify.notified() => {
                    if let Some(due) = slot.take() {
                        let t = f.local_instant(due).min(deadline);
                        crate::consumer::sleep_precise(t).await;
                    }
                }
            }
        }
    }

    fn op_id_token(id: &str, token: &str) -> Result<(String, String)> {
        limits::check_id_any(id)?;
        Ok((id.to_string(), token.to_string()))
    }

    /// Acknowledges a leased message by id and lease token (see [`Delivery::ack`]).
    pub async fn ack(&self, id: &str, token: &str) -> Result<()> {
        let (id, token) = Self::op_id_token(id, token)?;
        self.inner.settler.settle(Op::Ack { id, token }).await.map(|_| ())
    }

    /// Nacks a leased message by id and lease token (see [`Delivery::nack`]). Returns true when
    /// it went to the dead letters.
    pub async fn nack(&self, id: &str, token: &str, retry_in: Option<Duration>, reason: &str) -> Result<bool> {
        let (id, token) = Self::op_id_token(id, token)?;
        if let Some(d) = retry_in {
            limits::check_delay("retry_in", d)?;
        }
        let mode = retry_in.map_or(NackMode::Backoff, |d| NackMode::After(d.as_millis() as u64));
        let reason = delivery::truncate(reason, limits::MAX_REASON_BYTES);
        Ok(self.inner.settler.settle(Op::Nack { id, token, mode, reason }).await? == Settled::Dead)
    }

    /// Extends a lease by id and lease token to `ttr` from now.
    pub async fn extend(&self, id: &str, token: &str, ttr: Duration) -> Result<()> {
        let (id, token) = Self::op_id_token(id, token)?;
        limits::check_ttr("ttr", ttr)?;
        let ttr_ms = ttr.as_millis() as u64;
        self.inner.settler.settle(Op::Extend { id, token, ttr_ms }).await.map(|_| ())
    }

    /// Deletes a message wherever it is. Returns false when there was no such id.
    pub async fn cancel(&self, id: &str) -> Result<bool> {
        limits::check_id_any(id)?;
        let r = self.run(&scripts::CANCEL, vec![redis::Arg::Simple(id.as_bytes().to_vec())]).await?;
        Ok(int(&r)? == 1)
    }

    /// Gives a scheduled or ready message a new due time. NotFound when there is no such id;
    /// InvalidArgument when it is leased (being processed) or dead (respawn it instead).
    pub async fn reschedule(&self, id: &str, due: Due) -> Result<SystemTime> {
        limits::check_id_any(id)?;
        let (mode, value) = due_args(due)?;
        let args = vec![id.as_bytes().to_vec(), mode.as_bytes().to_vec(), value.to_string().into_bytes()];
        let r = array(self.run(&scripts::RESCHEDULE, args.into_iter().map(redis::Arg::Simple).collect()).await?)?;
        let (status, due) =
            (int(r.first().ok_or_else(|| bad("reschedule"))?)?, int(r.get(1).ok_or_else(|| bad("reschedule"))?)?);
        match status {
            1 => Ok(delivery::ms_to_time(due)),
            0 => Err(Error::not_found(id)),
            -1 => {
                Err(Error::invalid(format!("id: message {id:?} is leased (being processed); it cannot be rescheduled")))
            }
            -2 => Err(Error::invalid(format!("id: message {id:?} is dead; respawn it instead of rescheduling"))),
            _ => Err(record::corrupt(id)),
        }
    }

    /// Looks at a message without changing it; `None` when there is no such id.
    pub async fn peek(&self, id: &str) -> Result<Option<MessageInfo>> {
        limits::check_id_any(id)?;
        let r = self.run(&scripts::PEEK, vec![redis::Arg::Simple(id.as_bytes().to_vec())]).await?;
        if matches!(r, Value::Nil) {
            return Ok(None);
        }
        let mut v = array(r)?.into_iter();
        let (_now, state, score, rec) = match (v.next(), v.next(), v.next(), v.next()) {
            (Some(a), Some(b), Some(c), Some(d)) => (a, b, c, d),
            _ => return Err(bad("peek")),
        };
        let state = match string(state)?.as_str() {
            "scheduled" => State::Scheduled,
            "leased" => State::Leased,
            "dead" => State::Dead,
            _ => State::Ready,
        };
        Ok(Some(MessageInfo::from_raw(id.to_string(), state, &bytes(rec)?, int(&score)?)))
    }

    /// Counts of the queue.
    pub async fn stats(&self) -> Result<Stats> {
        let v = array(self.run(&scripts::STATS, vec![]).await?)?;
        if v.len() != 8 {
            return Err(bad("stats"));
        }
        let n = |i: usize| int(&v[i]);
        let t = |i: usize| -> Result<Option<SystemTime>> {
            let x = int(&v[i])?;
            Ok((x >= 0).then(|| delivery::ms_to_time(x)))
        };
        Ok(Stats {
            now: delivery::ms_to_time(n(0)?),
            total: n(1)? as u64,
            scheduled: n(2)? as u64,
            ready: n(3)? as u64,
            leased: n(4)? as u64,
            dead: n(5)? as u64,
            next_due: t(6)?,
            oldest_ready_due: t(7)?,
        })
    }

    /// Dead letters, the oldest death first, `limit` (1 to 1000) from `offset`.
    pub async fn dead_letters(&self, offset: usize, limit: usize) -> Result<Vec<MessageInfo>> {
        limits::check_fetch_max(limit).map_err(|e| Error::invalid(e.message().replace("max:", "limit:")))?;
        let args = vec![offset.to_string().into_bytes(), limit.to_string().into_bytes()];
        let v = array(self.run(&scripts::DEAD_LIST, args.into_iter().map(redis::Arg::Simple).collect()).await?)?;
        let mut out = Vec::new();
        let mut it = v.into_iter().skip(1);
        while let (Some(id), Some(at), Some(rec)) = (it.next(), it.next(), it.next()) {
            let id = string(id)?;
            let raw = if matches!(rec, Value::Nil) { Vec::new() } else { bytes(rec)? };
            out.push(MessageInfo::from_raw(id, State::Dead, &raw, int(&at)?));
        }
        Ok(out)
    }

    async fn on_dead(&self, script: &scripts::Script, sel: Select) -> Result<u64> {
        const STEP: usize = 1000;
        let call = |args: Vec<Vec<u8>>| self.run(script, args.into_iter().map(redis::Arg::Simple).collect());
        match sel {
            Select::Ids(ids) => {
                let mut n = 0;
                for chunk in ids.chunks(STEP) {
                    let mut args = vec![b"ids".to_vec()];
                    for id in chunk {
                        limits::check_id_any(id)?;
                        args.push(id.as_bytes().to_vec());
                    }
                    n += int(&call(args).await?)? as u64;
                }
                Ok(n)
            }
            Select::Oldest(count) => {
                let mut n = 0u64;
                let mut left = count;
                while left > 0 {
                    let step = left.min(STEP);
                    let done = int(&call(vec![b"oldest".to_vec(), step.to_string().into_bytes()]).await?)? as u64;
                    n += done;
                    left -= step;
                    if done < step as u64 {
                        break;
                    }
                }
                Ok(n)
            }
            Select::All => {
                let mut n = 0u64;
                loop {
                    let done = int(&call(vec![b"oldest".to_vec(), STEP.to_string().into_bytes()]).await?)? as u64;
                    n += done;
                    if done == 0 {
                        return Ok(n);
                    }
                }
            }
        }
    }

    /// Brings dead letters back: attempts reset, due now. Returns how many.
    pub async fn respawn(&self, sel: Select) -> Result<u64> {
        self.on_dead(&scripts::RESPAWN, sel).await
    }

    /// Deletes dead letters for good. Returns how many.
    pub async fn purge_dead(&self, sel: Select) -> Result<u64> {
        self.on_dead(&scripts::PURGE_DEAD, sel).await
    }

    /// Deletes the whole queue: every message in every state, and its name from the registry.
    /// Uses UNLINK, so Redis frees the memory in the background without blocking.
    pub async fn destroy(&self) -> Result<()> {
        let mut c = self.conn();
        let _: () = redis::cmd("UNLINK").arg(&self.inner.keys.all[..7]).query_async(&mut c).await?;
        let _: () = redis::cmd("SREM")
            .arg(keys::registry(&self.inner.client.inner.prefix))
            .arg(&self.inner.name)
            .query_async(&mut c)
            .await?;
        self.inner.registered.store(false, Ordering::Relaxed);
        Ok(())
    }

    /// Checks the queue's invariant atomically (O(n): for tests and maintenance).
    pub async fn verify(&self) -> Result<VerifyReport> {
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
