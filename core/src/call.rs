//! Every operation by its name in the conformance table (`tests/conformance/cases.json`), with
//! its arguments and its result in the wire forms (`redelay::wire`): the one table of operations
//! for bindings that speak the wire form, so that none of them lists arguments, defaults or
//! rules of its own. [`Queue::call`], [`Delivery::call`] and [`Client::call`] decode the
//! arguments (an error names the field), run the operation and give a [`Reply`], which
//! serializes to the result's wire form with any serde serializer (a JS value, a Python object,
//! JSON). [`Queue::fetch_wire`] gives deliveries; publishing and subscribing, which carry bodies or
//! handlers, keep their own calls.

use std::future::Future;
use std::time::{Duration, SystemTime};

use futures_util::future::{BoxFuture, FutureExt, TryFutureExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::base::{limits, wire};
use crate::{
    BulkOptions, BulkReport, Client, DeadLetterQuery, Delivery, Due, Error, HistoryPoint, ListPage, Message,
    MessageInfo, PublishOptions, Queue, RespawnOptions, Result, Search, SearchPage, Select, State, Stats, Step,
    VerifyReport,
};

/// The result of an operation, serialized as its own wire form (`None` as null).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Reply {
    None,
    Bool(bool),
    Count(u64),
    Names(Vec<String>),
    /// A time, as ms since the Unix epoch (`reschedule`: the new due time).
    Time(#[serde(with = "wire::time_ms")] SystemTime),
    Info(Option<MessageInfo>),
    Infos(Vec<MessageInfo>),
    Stats(Stats),
    Verify(VerifyReport),
    Bulk(BulkReport),
    Point(HistoryPoint),
    Points(Vec<HistoryPoint>),
    Upcoming(Vec<Bucket>),
    List(ListPage),
    Search(SearchPage),
}

/// One span of `upcoming`: `{"at_ms": …, "count": …}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Bucket {
    #[serde(rename = "at_ms", with = "wire::time_ms")]
    pub at: SystemTime,
    pub count: u64,
}

/// The scalar arguments of the operations, by their wire names; each operation reads its own.
/// Options with a type of their own in the core (dead-letter pages, selections, bulk) are
/// decoded as that type.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Args {
    id: String,
    token: String,
    reason: String,
    on: bool,
    /// A number, read by `limits::retry_delay` (one rule for a retry delay on every path).
    retry_in_ms: Option<f64>,
    #[serde(with = "wire::opt_ms")]
    ttr_ms: Option<Duration>,
    #[serde(with = "wire::opt_ms")]
    delay_ms: Option<Duration>,
    #[serde(with = "wire::opt_time_ms")]
    at_ms: Option<SystemTime>,
    #[serde(with = "wire::opt_time_ms")]
    since_ms: Option<SystemTime>,
    #[serde(with = "wire::opt_time_ms")]
    until_ms: Option<SystemTime>,
    step: Option<Step>,
    #[serde(with = "wire::opt_time_ms")]
    from_ms: Option<SystemTime>,
    #[serde(with = "wire::opt_ms")]
    width_ms: Option<Duration>,
    buckets: usize,
    state: Option<State>,
    offset: usize,
    limit: Option<usize>,
    search: Option<Search>,
    cursor: Option<String>,
}

impl Args {
    /// The nack's retry delay, checked as every binding's is.
    fn retry_in(&self) -> Result<Option<Duration>> {
        self.retry_in_ms.map(limits::retry_delay).transpose()
    }
}

/// The wire fields each queue operation decoded as [`Args`] reads: `Args` holds the fields of
/// them all, so without this a field of another operation would be taken and read by no one
/// (a nack's `delay_ms`, a release's `reason`). None: an operation with a type of its own.
fn queue_fields(op: &str) -> Option<&'static [&'static str]> {
    Some(match op {
        "ack" | "release" => &["id", "token"],
        "nack" => &["id", "token", "retry_in_ms", "reason"],
        "extend" => &["id", "token", "ttr_ms"],
        "cancel" | "peek" => &["id"],
        "reschedule" => &["id", "delay_ms", "at_ms"],
        "stats" | "verify" | "destroy" | "pause" | "resume" | "history_totals" => &[],
        "set_history" => &["on"],
        "history" => &["since_ms", "until_ms", "step"],
        "upcoming" => &["from_ms", "width_ms", "buckets"],
        "list" => &["state", "offset", "limit"],
        "search" => &["search", "cursor"],
        _ => return None,
    })
}

/// Refuses a field of `v` that is not one of `fields` (when given), naming it as serde does.
fn only_fields(fields: Option<&[&str]>, v: &Value) -> Result<()> {
    let (Some(fields), Value::Object(m)) = (fields, v) else { return Ok(()) };
    match m.keys().find(|k| !fields.contains(&k.as_str())) {
        None => Ok(()),
        Some(k) if fields.is_empty() => Err(Error::invalid(format!("{k}: unknown field `{k}`, there are no fields"))),
        Some(k) => {
            let expected: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
            Err(Error::invalid(format!("{k}: unknown field `{k}`, expected one of {}", expected.join(", "))))
        }
    }
}

/// The arguments of `fetch`: up to `max` deliveries (default [`limits::DEFAULT_FETCH_MAX`]),
/// waiting up to `wait_ms` (default 0) for the first, leased for `ttr_ms` (default: each
/// message's own).
#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FetchArgs {
    max: usize,
    #[serde(with = "wire::ms")]
    wait_ms: Duration,
    #[serde(with = "wire::opt_ms")]
    ttr_ms: Option<Duration>,
}

impl Default for FetchArgs {
    fn default() -> Self {
        FetchArgs { max: limits::DEFAULT_FETCH_MAX, wait_ms: Duration::ZERO, ttr_ms: None }
    }
}

/// The messages of a batch from their bodies and their options in wire form: message `i` is
/// `bodies[i]` with `opts[i]`, decoded and checked as by [`crate::batch_messages`]; an error
/// names the message (`message 3: delay_ms: …`) and nothing is published.
pub fn batch_from_wire(bodies: Vec<Vec<u8>>, opts: Vec<Value>) -> Result<Vec<Message>> {
    if bodies.len() != opts.len() {
        return Err(Error::invalid(format!(
            "messages: {} bodies but {} option objects (one each)",
            bodies.len(),
            opts.len()
        )));
    }
    let items = bodies.into_iter().zip(opts).enumerate().map(|(i, (body, o))| {
        let o: PublishOptions =
            wire::from_json(o).map_err(|e| Error::invalid(format!("message {i}: {}", e.message())))?;
        Ok((body, o))
    });
    crate::batch_messages(items.collect::<Result<_>>()?)
}

/// Null (no arguments) as an empty object.
fn obj(v: Value) -> Value {
    if v.is_null() {
        Value::Object(Default::default())
    } else {
        v
    }
}

fn unknown(op: &str) -> Error {
    Error::invalid(format!("op: no operation {op:?}"))
}

impl Queue {
    /// `fetch` with its arguments in wire form (`max`, `wait_ms`, `ttr_ms`): the leased
    /// deliveries, as [`Queue::fetch_leasing`] gives them.
    pub async fn fetch_wire(&self, v: Value) -> Result<Vec<Delivery>> {
        let a: FetchArgs = wire::from_json(obj(v))?;
        self.fetch_leasing(a.max, a.wait_ms, a.ttr_ms).await
    }

    /// Runs the queue operation `op` (`ack`, `nack`, `release`, `extend`, `cancel`, `reschedule`, `peek`,
    /// `stats`, `verify`, `destroy`, `dead_letters`, `respawn`, `purge_dead`, `bulk`, `pause`,
    /// `resume`, `set_history`, `history`, `history_totals`, `upcoming`, `list`, `search`) with
    /// its arguments `v` in wire form (an object, or null for none).
    pub async fn call(&self, op: &str, v: Value) -> Result<Reply> {
        let v = obj(v);
        only_fields(queue_fields(op), &v)?;
        let typed = matches!(op, "dead_letters" | "respawn" | "purge_dead" | "bulk");
        let a: Args = if typed { Args::default() } else { wire::from_json(v.clone())? };
        let (id, token) = (a.id.as_str(), a.token.as_str());
        Ok(match op {
            "ack" => self.ack(id, token).await.map(|_| Reply::None)?,
            "nack" => Reply::Bool(self.nack(id, token, a.retry_in()?, &a.reason).await?),
            "release" => self.release(id, token).await.map(|_| Reply::None)?,
            "extend" => self.extend(id, token, a.ttr_ms.unwrap_or_default()).await.map(|_| Reply::None)?,
            "cancel" => Reply::Bool(self.cancel(id).await?),
            "reschedule" => Reply::Time(self.reschedule(id, Due::required(a.delay_ms, a.at_ms)?).await?),
            "peek" => Reply::Info(self.peek(id).await?),
            "stats" => Reply::Stats(self.stats().await?),
            "verify" => Reply::Verify(self.verify().await?),
            "destroy" => self.destroy().await.map(|_| Reply::None)?,
            "dead_letters" => {
                let q: DeadLetterQuery = wire::from_json(v)?;
                q.validate()?;
                Reply::Infos(self.dead_letters(q.offset, q.limit).await?)
            }
            "respawn" => {
                let o: RespawnOptions = wire::from_json(v)?;
                Reply::Count(self.respawn_with(o.select, o.expiry).await?)
            }
            "purge_dead" => Reply::Count(self.purge_dead(wire::from_json::<Select>(v)?).await?),
            "bulk" => Reply::Bulk(self.bulk(&wire::from_json::<BulkOptions>(v)?).await?),
            "pause" => Reply::Bool(self.pause().await?),
            "resume" => Reply::Bool(self.resume().await?),
            "set_history" => Reply::Bool(self.set_history(a.on).await?),
            "history_totals" => Reply::Point(self.history_totals().await?),
            "history" => {
                // `since_ms` is required; `until_ms` defaults to now (by the Redis clock).
                let since = a.since_ms.ok_or_else(|| Error::invalid("since_ms: missing"))?;
                let until = match a.until_ms {
                    Some(t) => t,
                    None => {
                        let now = self.redis_now().await?;
                        if since > now {
                            return Err(Error::invalid("since: is in the future (until, not given, is now)"));
                        }
                        now
                    }
                };
                Reply::Points(self.history(since, until, a.step.unwrap_or(Step::Minute)).await?)
            }
            "upcoming" => {
                // `width_ms` is required; `from_ms` defaults to now (by the Redis clock).
                let width = a.width_ms.ok_or_else(|| Error::invalid("width_ms: missing"))?;
                let from = match a.from_ms {
                    Some(t) => t,
                    None => self.redis_now().await?,
                };
                let v = self.upcoming(from, width, a.buckets).await?;
                Reply::Upcoming(v.into_iter().map(|(at, count)| Bucket { at, count }).collect())
            }
            "list" => {
                let state = a.state.ok_or_else(|| Error::invalid("state: missing"))?;
                // A page of the list (checked as a dead-letter page is): the list's default size.
                let p = DeadLetterQuery { offset: a.offset, limit: a.limit.unwrap_or(limits::DEFAULT_PAGE_LIMIT) };
                p.validate()?;
                Reply::List(self.list(state, p.offset, p.limit).await?)
            }
            "search" => {
                let what = a.search.ok_or_else(|| Error::invalid("search: give what to look for"))?;
                Reply::Search(self.search(&what, a.cursor.as_deref()).await?)
            }
            _ => return Err(unknown(op)),
        })
    }
}

impl Delivery {
    /// Runs `ack`, `nack` (`retry_in_ms`, `reason`), `release` or `extend` (`ttr_ms`) of this
    /// delivery with its arguments `v` in wire form (an object, or null for none). Like the
    /// methods it calls, the settle is sent when this is called, before the returned future is
    /// polled: a binding that runs the future later (a task on its runtime) cannot be overtaken
    /// by its subscription's own settle of the same delivery, nor lose it to a cancel.
    pub fn call(&self, op: &str, v: Value) -> impl Future<Output = Result<Reply>> + Send + 'static {
        let started = (|| -> Result<BoxFuture<'static, Result<Reply>>> {
            let v = obj(v);
            let fields: Option<&[&str]> = match op {
                "ack" | "release" => Some(&[]),
                "nack" => Some(&["retry_in_ms", "reason"]),
                "extend" => Some(&["ttr_ms"]),
                _ => None,
            };
            only_fields(fields, &v)?;
            let a: Args = wire::from_json(v)?;
            Ok(match op {
                "ack" => self.ack().map_ok(|_| Reply::None).boxed(),
                "nack" => self.nack(a.retry_in()?, &a.reason).map_ok(Reply::Bool).boxed(),
                "release" => self.release().map_ok(|_| Reply::None).boxed(),
                "extend" => self.extend(a.ttr_ms.unwrap_or_default()).map_ok(|_| Reply::None).boxed(),
                _ => return Err(unknown(op)),
            })
        })();
        async move { started?.await }
    }
}

impl Client {
    /// Runs `queues`, `ping` or `close` (every subscription of the client drains, then the
    /// connections go).
    pub async fn call(&self, op: &str) -> Result<Reply> {
        Ok(match op {
            "queues" => Reply::Names(self.queues().await?),
            "ping" => self.ping().await.map(|_| Reply::None)?,
            "close" => {
                self.close().await;
                Reply::None
            }
            _ => return Err(unknown(op)),
        })
    }

    /// A pull from several queues given by name (each opened with the shard count stored in
    /// Redis), in priority order: the deliveries of the first that has due messages, as
    /// [`Queue::fetch_first`] gives them, with its arguments in wire form (`max`, `wait_ms`,
    /// `ttr_ms`): [`Client::fetch_first`] for the bindings that speak JSON.
    pub async fn fetch_first_wire(&self, names: &[String], v: Value) -> Result<Vec<Delivery>> {
        let a: FetchArgs = wire::from_json(obj(v))?;
        self.fetch_first(names, a.max, a.wait_ms, a.ttr_ms).await
    }
}
