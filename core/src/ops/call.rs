//! Every queue operation by its name, with its arguments and its result in their wire forms
//! (`redelay::wire`, the names of `tests/conformance/cases.json`). A binding hands a call over
//! as `(op, args, bodies)` and converts the JSON result; no binding re-lists an operation's
//! arguments, their defaults or the operations themselves. Deliveries (`fetch`, subscribe) are
//! not wire data and stay with each binding.

use std::time::{Duration, SystemTime};

use serde::Deserialize;
use serde_json::{json, Value};

use crate::base::error::{Error, Result};
use crate::base::options::{batch_messages, DeadLetterQuery, PublishOptions};
use crate::base::time::time_to_ms;
use crate::base::wire::{self, from_json, to_json};
use crate::ops::bulk::BulkOptions;
use crate::ops::info::{Search, Select, State, Step};
use crate::ops::queue::Queue;
use crate::Due;

/// The scalar arguments of the operations, by their wire names (operations whose options have
/// a struct of their own read that struct instead).
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Args {
    id: String,
    token: String,
    reason: String,
    #[serde(with = "wire::opt_ms")]
    retry_in_ms: Option<Duration>,
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
    #[serde(with = "wire::opt_time_ms")]
    from_ms: Option<SystemTime>,
    #[serde(with = "wire::opt_ms")]
    width_ms: Option<Duration>,
    buckets: usize,
    step: Option<Step>,
    state: Option<State>,
    offset: usize,
    limit: Option<usize>,
    search: Option<Search>,
    cursor: Option<String>,
    on: bool,
}

/// `field` or an `InvalidArgument` saying it is missing.
fn required<T>(v: Option<T>, field: &str) -> Result<T> {
    v.ok_or_else(|| Error::invalid(format!("{field}: missing")))
}

/// Runs the operation `op` of `q` with `args` (its wire form; `bodies` are the bodies of
/// `publish` and `publish_batch`, message `i` taking `args[i]`) and returns its result's wire
/// form. Defaults: `until_ms` and `from_ms` now, `step` minute.
pub async fn call(q: &Queue, op: &str, args: Value, mut bodies: Vec<Vec<u8>>) -> Result<Value> {
    let a = || from_json::<Args>(args.clone());
    Ok(match op {
        "publish" => {
            let body = if bodies.is_empty() { Vec::new() } else { bodies.swap_remove(0) };
            to_json(&q.publish(from_json::<PublishOptions>(args)?.message(body)?).await?)
        }
        "publish_batch" => {
            let opts: Vec<PublishOptions> = from_json(args)?;
            if opts.len() != bodies.len() {
                return Err(Error::invalid(format!(
                    "publish_batch: {} bodies for {} options",
                    bodies.len(),
                    opts.len()
                )));
            }
            to_json(&q.publish_batch(batch_messages(bodies.into_iter().zip(opts).collect())?).await?)
        }
        "ack" => {
            let a = a()?;
            to_json(&q.ack(&a.id, &a.token).await?)
        }
        "nack" => {
            let a = a()?;
            json!(q.nack(&a.id, &a.token, a.retry_in_ms, &a.reason).await?)
        }
        "extend" => {
            let a = a()?;
            to_json(&q.extend(&a.id, &a.token, required(a.ttr_ms, "ttr_ms")?).await?)
        }
        "cancel" => json!(q.cancel(&a()?.id).await?),
        "reschedule" => {
            let a = a()?;
            json!(time_to_ms(q.reschedule(&a.id, Due::from_parts(a.delay_ms, a.at_ms)?).await?))
        }
        "peek" => to_json(&q.peek(&a()?.id).await?),
        "stats" => to_json(&q.stats().await?),
        "verify" => to_json(&q.verify().await?),
        "destroy" => to_json(&q.destroy().await?),
        "dead_letters" => {
            let o: DeadLetterQuery = from_json(args)?;
            o.validate()?;
            to_json(&q.dead_letters(o.offset, o.limit).await?)
        }
        "respawn" => json!(q.respawn(from_json::<Select>(args)?).await?),
        "purge_dead" => json!(q.purge_dead(from_json::<Select>(args)?).await?),
        "bulk" => to_json(&q.bulk(&from_json::<BulkOptions>(args)?).await?),
        "pause" => json!(q.pause().await?),
        "resume" => json!(q.resume().await?),
        "set_history" => json!(q.set_history(a()?.on).await?),
        "history" => {
            let a = a()?;
            let until = a.until_ms.unwrap_or_else(SystemTime::now);
            to_json(&q.history(required(a.since_ms, "since_ms")?, until, a.step.unwrap_or(Step::Minute)).await?)
        }
        "history_totals" => to_json(&q.history_totals().await?),
        "upcoming" => {
            let a = a()?;
            let from = a.from_ms.unwrap_or_else(SystemTime::now);
            let v = q.upcoming(from, required(a.width_ms, "width_ms")?, a.buckets).await?;
            json!(v.into_iter().map(|(t, n)| (time_to_ms(t), n)).collect::<Vec<_>>())
        }
        "list" => {
            let a = a()?;
            to_json(&q.list(required(a.state, "state")?, a.offset, required(a.limit, "limit")?).await?)
        }
        "search" => {
            let a = a()?;
            to_json(&q.search(&required(a.search, "search")?, a.cursor.as_deref()).await?)
        }
        _ => return Err(Error::invalid(format!("op: no queue operation {op:?}"))),
    })
}
