//! `redelay bench`: the figures of BENCHMARKS.md against one Redis, as a table or JSON (the
//! schema of bench/README.md, shared with the BullMQ driver).
//!
//!  (a) publish: single calls one at a time, and batches of 1,000
//!  (b) deliver+ack with a backlog already due, no-op handler
//!  (c) lateness at low load: messages at random delays over a few seconds
//!  (d) burst: many messages due at the same instant: time to drain, p99 lateness
//!  (e) Redis memory per pending message (32-byte body)
//!  (f) with --stalls: the slowest Redis command (SLOWLOG) while a burst drains on top of a
//!      large pending backlog
//!  (g) with --big-bodies N: the slowest command while N messages of 4 MiB are leased, their
//!      leases run out, and they are fetched, nacked and peeked again
//!  (h) with --changes-over N: the slowest command of replace, cancel and reschedule (100 of
//!      each) while N messages are due and waiting
//!  (i) with --search-over N: a whole search (a header value) over N messages: its steps, total
//!      time and slowest command
//!
//! Every phase uses its own queue under a private prefix and deletes it afterwards.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use clap::Args;
use redelay::{Client, Delivery, Failure, Message, Queue, SubscribeOptions};
use serde_json::{json, Value};

#[derive(Args, Clone)]
pub struct BenchArgs {
    /// Print one JSON object instead of a table
    #[arg(long)]
    pub json: bool,
    /// A seconds-long smoke run with small counts
    #[arg(long)]
    pub quick: bool,
    /// Also measure (f): the slowest command while a burst drains over this many pending
    /// messages (e.g. 1000000)
    #[arg(long)]
    pub stalls: Option<usize>,
    /// Run with the queues' history counters off (to measure what history costs)
    #[arg(long)]
    pub no_history: bool,
    /// Also measure (g): the slowest command with this many 4 MiB bodies (e.g. 40)
    #[arg(long)]
    pub big_bodies: Option<usize>,
    /// Also measure (h): the slowest replace/cancel/reschedule over this many due messages
    /// (e.g. 500000)
    #[arg(long)]
    pub changes_over: Option<usize>,
    /// Also measure (i): a whole search over this many messages (e.g. 1000000)
    #[arg(long)]
    pub search_over: Option<usize>,
    /// Handlers per subscription in (b)-(d)
    #[arg(long, default_value_t = 200)]
    pub concurrency: usize,
    /// Run only these phases, e.g. `--only b` or `--only a,e` (default: all)
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
}

struct Counts {
    single: usize,
    batch: usize,
    backlog: usize,
    low: usize,
    low_spread: Duration,
    burst: usize,
    burst_due: Duration,
    memory: usize,
}

fn progress(label: &str, done: usize, total: usize) {
    let mut e = std::io::stderr();
    let width = 30;
    let filled = (done * width).checked_div(total).unwrap_or(width);
    let _ = write!(e, "\r  {label:<28} [{}{}] {done}/{total}", "#".repeat(filled), ".".repeat(width - filled));
    if done >= total {
        let _ = writeln!(e);
    }
    let _ = e.flush();
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

pub async fn run(url: &str, shards: u32, a: BenchArgs) -> redelay::Result<ExitCode> {
    let c = if a.quick {
        Counts {
            single: 300,
            batch: 5_000,
            backlog: 3_000,
            low: 50,
            low_spread: Duration::from_secs(1),
            burst: 2_000,
            burst_due: Duration::from_secs(1),
            memory: 5_000,
        }
    } else {
        Counts {
            single: 10_000,
            batch: 100_000,
            backlog: 100_000,
            low: 500,
            low_spread: Duration::from_secs(5),
            burst: 50_000,
            burst_due: Duration::from_secs(3),
            memory: 100_000,
        }
    };
    let prefix = format!("redelay-bench-{}", std::process::id());
    let client = Client::builder(url).prefix(&prefix).response_timeout(Duration::from_secs(30)).connect().await?;
    SHARDS.store(shards, std::sync::atomic::Ordering::Relaxed);
    // INFO, SLOWLOG and memory go to one node (of a cluster: the first one named).
    let raw = redis::Client::open(one_node(url)).map_err(redelay::Error::from)?;
    let mut rc = raw.get_multiplexed_async_connection().await.map_err(redelay::Error::from)?;
    let conc = a.concurrency;
    NO_HISTORY.store(a.no_history, std::sync::atomic::Ordering::Relaxed);
    eprintln!(
        "redelay bench against {} (concurrency {conc}, {shards} shard{}{})",
        redelay::redact(url),
        if shards == 1 { "" } else { "s" },
        if a.quick { ", quick" } else { "" }
    );

    let on = |p: &str| a.only.is_empty() || a.only.iter().any(|o| o == p);
    let mut cpu = RedisCpu::default();
    let (single, batched) = if on("a") { publish_phase(&client, &mut rc, &c, &mut cpu).await? } else { (0.0, 0.0) };
    let deliver = if on("b") { deliver_phase(&client, &mut rc, c.backlog, conc, &mut cpu).await? } else { 0.0 };
    let low = if on("c") { lateness_phase(&client, c.low, c.low_spread, conc).await? } else { Vec::new() };
    let (burst_lat, drain) =
        if on("d") { burst_phase(&client, "burst", c.burst, c.burst_due, conc).await? } else { (Vec::new(), 0.0) };
    let mem = if on("e") { memory_phase(&client, &mut rc, c.memory).await? } else { 0.0 };
    let stalls = match a.stalls {
        Some(n) => Some(stall_phase(&client, &mut rc, n, c.burst, conc).await?),
        None => None,
    };
    let big = match a.big_bodies {
        Some(n) => Some(big_body_phase(&client, &mut rc, n).await?),
        None => None,
    };
    let changes = match a.changes_over {
        Some(n) => Some(changes_phase(&client, &mut rc, n).await?),
        None => None,
    };
    let search = match a.search_over {
        Some(n) => Some(search_phase(&client, &mut rc, n).await?),
        None => None,
    };

    let sorted = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v
    };
    let low = sorted(low);
    let burst_lat = sorted(burst_lat);
    let redis_version: String = redis::cmd("INFO")
        .arg("server")
        .query_async::<String>(&mut rc)
        .await
        .map_err(redelay::Error::from)?
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:").map(str::to_string))
        .unwrap_or_default();
    let out = json!({
        "system": "redelay",
        "version": env!("CARGO_PKG_VERSION"),
        "redis_version": redis_version,
        "settings": { "shards": shards, "concurrency": conc, "prefetch": conc, "publish_batch_size": 1000, "quick": a.quick, "history": !a.no_history },
        "publish_single_per_s": single.round(),
        "publish_batch_per_s": batched.round(),
        "deliver_ack_per_s": deliver.round(),
        "redis_cpu_us_per_msg": {
            "publish_single": cpu.publish_single, "publish_batch": cpu.publish_batch, "deliver_ack": cpu.deliver_ack,
        },
        "redis_profile_us_per_msg": { "publish_batch": cpu.profile_publish_batch, "deliver_ack": cpu.profile_deliver_ack },
        "low_load": {
            "count": low.len(),
            "p50_ms": round3(percentile(&low, 0.5)), "p90_ms": round3(percentile(&low, 0.9)),
            "p99_ms": round3(percentile(&low, 0.99)), "max_ms": round3(low.last().copied().unwrap_or(0.0)),
            "lateness_ms": low.iter().map(|x| round3(*x)).collect::<Vec<_>>(),
        },
        "burst": {
            "count": burst_lat.len(), "drain_s": round3(drain),
            "p50_ms": round3(percentile(&burst_lat, 0.5)), "p99_ms": round3(percentile(&burst_lat, 0.99)),
            "max_ms": round3(burst_lat.last().copied().unwrap_or(0.0)),
            "lateness_ms": burst_lat.iter().map(|x| round3(*x)).collect::<Vec<_>>(),
        },
        "memory": { "count": c.memory, "body_bytes": 32, "bytes_per_message": mem.round() },
        "stalls": stalls.unwrap_or(Value::Null),
        "big_bodies": big.unwrap_or(Value::Null),
        "changes": changes.unwrap_or(Value::Null),
        "search": search.unwrap_or(Value::Null),
    });
    if a.json {
        println!("{out}");
    } else {
        print_table(&out);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(v: &Value) {
    let f = |p: &str| v.pointer(p).and_then(Value::as_f64).unwrap_or(0.0);
    println!("redelay bench (Redis {})", v["redis_version"].as_str().unwrap_or("?"));
    println!("  (a) publish, one at a time        {:>12.0} msg/s", f("/publish_single_per_s"));
    println!("  (a) publish, batches of 1000      {:>12.0} msg/s", f("/publish_batch_per_s"));
    println!("  (b) deliver+ack, due backlog      {:>12.0} msg/s", f("/deliver_ack_per_s"));
    println!(
        "  Redis CPU per message: publish single {:.2} µs, batched {:.2} µs, deliver+ack {:.2} µs",
        f("/redis_cpu_us_per_msg/publish_single"),
        f("/redis_cpu_us_per_msg/publish_batch"),
        f("/redis_cpu_us_per_msg/deliver_ack")
    );
    for (label, phase) in [("batched publish", "publish_batch"), ("deliver+ack", "deliver_ack")] {
        let p = |k: &str| f(&format!("/redis_profile_us_per_msg/{phase}/{k}"));
        if p("scripts_us") > 0.0 {
            println!(
                "    {label}: scripts {:.2} µs/msg = commands {:.2} + the scripts' own Lua work {:.2}",
                p("scripts_us"),
                p("commands_us"),
                p("lua_us")
            );
        }
    }
    println!(
        "  (c) lateness, low load            p50 {:.3} ms  p90 {:.3} ms  p99 {:.3} ms  max {:.3} ms",
        f("/low_load/p50_ms"),
        f("/low_load/p90_ms"),
        f("/low_load/p99_ms"),
        f("/low_load/max_ms")
    );
    println!(
        "  (d) burst of {:<6} at one instant drained in {:.3} s, lateness p50 {:.1} ms p99 {:.1} ms",
        f("/burst/count"),
        f("/burst/drain_s"),
        f("/burst/p50_ms"),
        f("/burst/p99_ms")
    );
    println!("  (e) memory per pending message    {:>12.0} bytes (32-byte body)", f("/memory/bytes_per_message"));
    if !v["stalls"].is_null() {
        println!(
            "  (f) slowest command during a burst over {} pending: {:.2} ms ({} commands over 5 ms)",
            f("/stalls/pending"),
            f("/stalls/max_ms"),
            f("/stalls/over_5ms")
        );
    }
    if !v["big_bodies"].is_null() {
        println!(
            "  (g) slowest command with {} bodies of 4 MiB leased, expired and fetched again: {:.2} ms ({})",
            f("/big_bodies/count"),
            f("/big_bodies/max_ms"),
            v.pointer("/big_bodies/slowest_command").and_then(Value::as_str).unwrap_or("-")
        );
    }
    if !v["search"].is_null() {
        println!(
            "  (i) a whole search over {} messages: {} steps, {:.2} s, slowest command {:.2} ms",
            f("/search/messages"),
            f("/search/steps"),
            f("/search/seconds"),
            f("/search/max_ms")
        );
    }
    if !v["changes"].is_null() {
        println!(
            "  (h) slowest replace/cancel/reschedule over {} due messages: {:.2} ms ({})",
            f("/changes/due"),
            f("/changes/max_ms"),
            v.pointer("/changes/slowest_command").and_then(Value::as_str).unwrap_or("-")
        );
    }
}

static NO_HISTORY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Shards of every queue the bench makes (`--shards`).
static SHARDS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

/// A plain `redis://` URL of one node of `url` (the first node of a cluster URL).
fn one_node(url: &str) -> String {
    match url.strip_prefix("redis+cluster://") {
        Some(rest) => format!("redis://{}", rest.split(',').next().unwrap_or(rest)),
        None => url.to_string(),
    }
}

async fn fresh(client: &Client, name: &str) -> redelay::Result<Queue> {
    let shards = redelay::QueueOptions::shards(SHARDS.load(std::sync::atomic::Ordering::Relaxed));
    let q = client.queue_with(name, shards)?;
    q.destroy().await?;
    if NO_HISTORY.load(std::sync::atomic::Ordering::Relaxed) {
        q.set_history(false).await?;
    }
    Ok(q)
}

/// Redis' own CPU time (user + system) per message in phases (a) and (b), in µs: `INFO cpu`
/// read before and after, so it does not depend on what else the machine runs. And where the
/// time of batched publish and deliver+ack went ([`profile`]).
#[derive(Default)]
struct RedisCpu {
    publish_single: f64,
    publish_batch: f64,
    deliver_ack: f64,
    profile_publish_batch: Value,
    profile_deliver_ack: Value,
}

/// µs Redis spent in each command so far (`INFO commandstats`: name -> usec).
async fn command_usec(rc: &mut redis::aio::MultiplexedConnection) -> redelay::Result<BTreeMap<String, u64>> {
    let info: String = redis::cmd("INFO").arg("commandstats").query_async(rc).await.map_err(redelay::Error::from)?;
    Ok(info
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let usec = rest.split(',').find_map(|kv| kv.strip_prefix("usec="))?.parse().ok()?;
            Some((name.to_string(), usec))
        })
        .collect())
}

/// Where a phase's Redis time went, in µs per message, from two `command_usec` readings: the
/// script calls (time inside EVALSHA/EVAL, the commands they call included), the other
/// commands (nearly all called by those scripts), the difference (the scripts' own work in Lua:
/// argument and reply conversion, record building), and each command. Wall time inside Redis:
/// on a busy machine it includes time the server was descheduled (`redis_cpu_us_per_msg` does
/// not).
fn profile(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>, n: usize) -> Value {
    const SCRIPTS: [&str; 3] = ["evalsha", "eval", "fcall"];
    let per = |us: u64| (us as f64 / n.max(1) as f64 * 100.0).round() / 100.0;
    let spent: BTreeMap<&str, u64> = after
        .iter()
        .map(|(k, v)| (k.as_str(), v.saturating_sub(before.get(k).copied().unwrap_or(0))))
        .filter(|&(k, d)| d > 0 && k != "info")
        .collect();
    let scripts: u64 = spent.iter().filter(|(k, _)| SCRIPTS.contains(k)).map(|(_, d)| d).sum();
    let commands: u64 = spent.iter().filter(|(k, _)| !SCRIPTS.contains(k)).map(|(_, d)| d).sum();
    json!({
        "scripts_us": per(scripts),
        "commands_us": per(commands),
        "lua_us": per(scripts.saturating_sub(commands)),
        "by_command": spent.iter().map(|(k, d)| (k.to_string(), json!(per(*d)))).collect::<serde_json::Map<_, _>>(),
    })
}

/// Seconds of CPU the Redis server has used (`used_cpu_user + used_cpu_sys`).
async fn redis_cpu_s(rc: &mut redis::aio::MultiplexedConnection) -> redelay::Result<f64> {
    let info: String = redis::cmd("INFO").arg("cpu").query_async(rc).await.map_err(redelay::Error::from)?;
    Ok(info
        .lines()
        .filter_map(|l| l.strip_prefix("used_cpu_user:").or_else(|| l.strip_prefix("used_cpu_sys:")))
        .filter_map(|v| v.trim().parse::<f64>().ok())
        .sum())
}

/// µs of Redis CPU per message since `since` (a `redis_cpu_s` reading), rounded to 0.01.
async fn cpu_us_per(rc: &mut redis::aio::MultiplexedConnection, since: f64, n: usize) -> redelay::Result<f64> {
    let used = redis_cpu_s(rc).await? - since;
    Ok((used * 1e6 / n.max(1) as f64 * 100.0).round() / 100.0)
}

async fn publish_phase(
    client: &Client,
    rc: &mut redis::aio::MultiplexedConnection,
    c: &Counts,
    cpu: &mut RedisCpu,
) -> redelay::Result<(f64, f64)> {
    let q = fresh(client, "publish").await?;
    let body = vec![b'x'; 32];
    let cpu0 = redis_cpu_s(rc).await?;
    let t = Instant::now();
    for i in 0..c.single {
        q.publish(Message::new(body.clone()).delay(Duration::from_secs(3600))).await?;
        if i % 1000 == 999 {
            progress("(a) publish single", i + 1, c.single);
        }
    }
    progress("(a) publish single", c.single, c.single);
    let single = c.single as f64 / t.elapsed().as_secs_f64();
    cpu.publish_single = cpu_us_per(rc, cpu0, c.single).await?;
    q.destroy().await?;
    let (cpu0, usec0) = (redis_cpu_s(rc).await?, command_usec(rc).await?);
    let t = Instant::now();
    let mut done = 0;
    while done < c.batch {
        let n = 1000.min(c.batch - done);
        q.publish_batch((0..n).map(|_| Message::new(body.clone()).delay(Duration::from_secs(3600))).collect()).await?;
        done += n;
        if done % 10_000 == 0 || done == c.batch {
            progress("(a) publish batches of 1000", done, c.batch);
        }
    }
    let batched = c.batch as f64 / t.elapsed().as_secs_f64();
    cpu.publish_batch = cpu_us_per(rc, cpu0, c.batch).await?;
    cpu.profile_publish_batch = profile(&usec0, &command_usec(rc).await?, c.batch);
    q.destroy().await?;
    Ok((single, batched))
}

/// Subscribes with a no-op handler that records lateness (ms); returns when `n` were acked.
async fn consume(
    q: &Queue,
    n: usize,
    conc: usize,
    label: &str,
    within: Duration,
) -> redelay::Result<(Vec<f64>, Instant)> {
    let lat: Arc<Mutex<Vec<f64>>> = Arc::new(Mutex::new(Vec::with_capacity(n)));
    let l = lat.clone();
    let sub = q
        .subscribe(
            move |d: Delivery| {
                l.lock().unwrap().push(d.lateness().as_secs_f64() * 1000.0);
                async { Ok::<(), Failure>(()) }
            },
            SubscribeOptions::concurrency(conc),
        )
        .await?;
    let start = Instant::now();
    let mut last = Instant::now();
    loop {
        let acked = sub.counters().acked as usize;
        if acked >= n || start.elapsed() > within {
            break;
        }
        if last.elapsed() > Duration::from_millis(250) {
            progress(label, acked, n);
            last = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let end = Instant::now();
    progress(label, sub.counters().acked as usize, n);
    sub.close().await;
    let v = lat.lock().unwrap().clone();
    Ok((v, end))
}

async fn deliver_phase(
    client: &Client,
    rc: &mut redis::aio::MultiplexedConnection,
    n: usize,
    conc: usize,
    cpu: &mut RedisCpu,
) -> redelay::Result<f64> {
    let q = fresh(client, "deliver").await?;
    let body = vec![b'x'; 32];
    let mut done = 0;
    while done < n {
        let k = 1000.min(n - done);
        q.publish_batch((0..k).map(|_| Message::new(body.clone())).collect()).await?;
        done += k;
    }
    let (cpu0, usec0) = (redis_cpu_s(rc).await?, command_usec(rc).await?);
    let t = Instant::now();
    let (_, end) = consume(&q, n, conc, "(b) deliver+ack", Duration::from_secs(300)).await?;
    let rate = n as f64 / end.duration_since(t).as_secs_f64();
    cpu.deliver_ack = cpu_us_per(rc, cpu0, n).await?;
    cpu.profile_deliver_ack = profile(&usec0, &command_usec(rc).await?, n);
    q.destroy().await?;
    Ok(rate)
}

async fn lateness_phase(client: &Client, n: usize, spread: Duration, conc: usize) -> redelay::Result<Vec<f64>> {
    let q = fresh(client, "low-load").await?;
    // Deterministic pseudo-random delays (xorshift), spread over `spread`.
    let mut x: u64 = 0x9E3779B97F4A7C15;
    let msgs = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let delay = Duration::from_micros(200_000 + x % (spread.as_micros() as u64));
            Message::new(vec![b'x'; 32]).delay(delay)
        })
        .collect();
    // Subscribe first, so that the consumer is idle and waiting, as in production.
    let q2 = q.clone();
    let consumer =
        tokio::spawn(async move { consume(&q2, n, conc, "(c) low-load lateness", Duration::from_secs(60)).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    q.publish_batch(msgs).await?;
    let (lat, _) = consumer.await.expect("consumer task")?;
    q.destroy().await?;
    Ok(lat)
}

async fn burst_phase(
    client: &Client,
    name: &str,
    n: usize,
    due_in: Duration,
    conc: usize,
) -> redelay::Result<(Vec<f64>, f64)> {
    let q = fresh(client, name).await?;
    let at = SystemTime::now() + due_in;
    let due_local = Instant::now() + due_in;
    let mut done = 0;
    while done < n {
        let k = 1000.min(n - done);
        q.publish_batch((0..k).map(|_| Message::new(vec![b'x'; 32]).at(at)).collect()).await?;
        done += k;
    }
    let q2 = q.clone();
    let label = format!("({}) burst drain", if name == "burst" { "d" } else { "f" });
    let consumer = tokio::spawn(async move { consume(&q2, n, conc, &label, Duration::from_secs(300)).await });
    let (lat, end) = consumer.await.expect("consumer task")?;
    let drain = end.saturating_duration_since(due_local).as_secs_f64();
    q.destroy().await?;
    Ok((lat, drain))
}

async fn used_memory(rc: &mut redis::aio::MultiplexedConnection) -> redelay::Result<f64> {
    let info: String = redis::cmd("INFO").arg("memory").query_async(rc).await.map_err(redelay::Error::from)?;
    Ok(info.lines().find_map(|l| l.strip_prefix("used_memory:")).and_then(|v| v.trim().parse().ok()).unwrap_or(0.0))
}

async fn memory_phase(client: &Client, rc: &mut redis::aio::MultiplexedConnection, n: usize) -> redelay::Result<f64> {
    let q = fresh(client, "memory").await?;
    tokio::time::sleep(Duration::from_millis(200)).await; // let lazy frees of earlier phases finish
    let before = used_memory(rc).await?;
    let mut done = 0;
    while done < n {
        let k = 1000.min(n - done);
        q.publish_batch((0..k).map(|_| Message::new(vec![b'x'; 32]).delay(Duration::from_secs(3600))).collect())
            .await?;
        done += k;
        if done % 10_000 == 0 || done == n {
            progress("(e) memory", done, n);
        }
    }
    let after = used_memory(rc).await?;
    q.destroy().await?;
    Ok((after - before) / n as f64)
}

async fn stall_phase(
    client: &Client,
    rc: &mut redis::aio::MultiplexedConnection,
    pending: usize,
    burst: usize,
    conc: usize,
) -> redelay::Result<Value> {
    let q = fresh(client, "stalls").await?;
    let mut done = 0;
    while done < pending {
        let k = 1000.min(pending - done);
        q.publish_batch((0..k).map(|_| Message::new(vec![b'x'; 32]).delay(Duration::from_secs(7200))).collect())
            .await?;
        done += k;
        if done % 50_000 == 0 || done == pending {
            progress("(f) pending backlog", done, pending);
        }
    }
    slowlog_start(rc, 1000).await?;
    // The burst lands on the same queue as the backlog: fetch must stay bounded over 1M members.
    let at = SystemTime::now() + Duration::from_secs(2);
    let mut done = 0;
    while done < burst {
        let k = 1000.min(burst - done);
        q.publish_batch((0..k).map(|_| Message::new(vec![b'x'; 32]).at(at)).collect()).await?;
        done += k;
    }
    let (lat, _) = consume(&q, burst, conc, "(f) burst over backlog", Duration::from_secs(300)).await?;
    let slow = slowlog_stop(rc).await?;
    q.destroy().await?;
    let mut s = lat;
    s.sort_by(f64::total_cmp);
    Ok(json!({
        "pending": pending, "burst": burst, "over_1ms": slow.count, "over_5ms": slow.over_5ms,
        "max_ms": slow.max_ms, "slowest_command": slow.slowest,
        "burst_p99_ms": round3(percentile(&s, 0.99)),
    }))
}

/// What SLOWLOG recorded between [`slowlog_start`] and [`slowlog_stop`].
struct Slow {
    count: usize,
    over_5ms: usize,
    max_ms: f64,
    /// The slowest entry's command and its first argument after the script (its SHA) or key.
    slowest: String,
}

fn cfg(k: &str, v: &str) -> redis::Cmd {
    redis::cmd("CONFIG").arg("SET").arg(k).arg(v).clone()
}

/// Logs every command slower than `us` from now on.
async fn slowlog_start(rc: &mut redis::aio::MultiplexedConnection, us: u64) -> redelay::Result<()> {
    let _: () = cfg("slowlog-log-slower-than", &us.to_string()).query_async(rc).await.map_err(redelay::Error::from)?;
    let _: () = cfg("slowlog-max-len", "100000").query_async(rc).await.map_err(redelay::Error::from)?;
    let _: () = redis::cmd("SLOWLOG").arg("RESET").query_async(rc).await.map_err(redelay::Error::from)?;
    Ok(())
}

async fn slowlog_stop(rc: &mut redis::aio::MultiplexedConnection) -> redelay::Result<Slow> {
    let log: Vec<redis::Value> =
        redis::cmd("SLOWLOG").arg("GET").arg(100000).query_async(rc).await.map_err(redelay::Error::from)?;
    let mut slow = Slow { count: log.len(), over_5ms: 0, max_ms: 0.0, slowest: String::new() };
    for e in &log {
        if let redis::Value::Array(f) = e {
            if let (Some(redis::Value::Int(us)), Some(redis::Value::Array(args))) = (f.get(2), f.get(3)) {
                let ms = *us as f64 / 1000.0;
                if ms >= 5.0 {
                    slow.over_5ms += 1;
                }
                if ms > slow.max_ms {
                    slow.max_ms = ms;
                    slow.slowest = args
                        .iter()
                        .take(2)
                        .map(|a| match a {
                            redis::Value::BulkString(b) => String::from_utf8_lossy(&b[..b.len().min(16)]).into_owned(),
                            _ => String::new(),
                        })
                        .collect::<Vec<_>>()
                        .join(" ");
                }
            }
        }
    }
    let _: () = cfg("slowlog-log-slower-than", "10000").query_async(rc).await.map_err(redelay::Error::from)?;
    Ok(slow)
}

/// (g) Bodies of 4 MiB: leased, their leases run out, fetched (one per reply), nacked, peeked.
async fn big_body_phase(
    client: &Client,
    rc: &mut redis::aio::MultiplexedConnection,
    n: usize,
) -> redelay::Result<Value> {
    let q = fresh(client, "big-bodies").await?;
    for i in 0..n {
        q.publish(Message::new(vec![(i % 251) as u8; 4 << 20]).ttr(Duration::from_millis(500))).await?;
        progress("(g) 4 MiB bodies", i + 1, n);
    }
    slowlog_start(rc, 1000).await?;
    let mut leased = 0;
    while leased < n {
        leased += q.fetch(1000, Duration::from_secs(1)).await?.len();
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    let mut again = 0;
    while again < n {
        for d in q.fetch(1000, Duration::from_secs(1)).await? {
            d.nack(Some(Duration::ZERO), "again").await?;
            let _ = q.peek(d.id()).await?;
            again += 1;
        }
    }
    let slow = slowlog_stop(rc).await?;
    q.destroy().await?;
    Ok(
        json!({ "count": n, "body_bytes": 4 << 20, "over_1ms": slow.count, "max_ms": slow.max_ms, "slowest_command": slow.slowest }),
    )
}

/// (i) A whole search for a header value over `n` messages (1 in 1000 match).
async fn search_phase(client: &Client, rc: &mut redis::aio::MultiplexedConnection, n: usize) -> redelay::Result<Value> {
    let q = fresh(client, "search").await?;
    let mut done = 0;
    while done < n {
        let k = 1000.min(n - done);
        let batch = (done..done + k)
            .map(|i| {
                Message::new(vec![b'x'; 32])
                    .delay(Duration::from_secs(7200))
                    .header("tenant", if i % 1000 == 0 { "needle" } else { "hay" })
            })
            .collect();
        q.publish_batch(batch).await?;
        done += k;
        if done % 50_000 == 0 || done == n {
            progress("(i) messages to search", done, n);
        }
    }
    slowlog_start(rc, 1000).await?;
    let what = redelay::Search::Header("tenant".into(), "needle".into());
    let (t, mut steps, mut found, mut cursor) = (std::time::Instant::now(), 0, 0, None::<String>);
    loop {
        let p = q.search(&what, cursor.as_deref()).await?;
        steps += 1;
        found += p.items.len();
        match p.cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let slow = slowlog_stop(rc).await?;
    q.destroy().await?;
    Ok(
        json!({ "messages": n, "found": found, "steps": steps, "seconds": round3(secs), "over_1ms": slow.count, "max_ms": slow.max_ms }),
    )
}

/// (h) replace, cancel and reschedule 100 messages each among `due` due ones.
async fn changes_phase(
    client: &Client,
    rc: &mut redis::aio::MultiplexedConnection,
    due: usize,
) -> redelay::Result<Value> {
    let q = fresh(client, "changes").await?;
    let mut done = 0;
    while done < due {
        let k = 1000.min(due - done);
        q.publish_batch((done..done + k).map(|i| Message::new(vec![b'x'; 32]).id(format!("c{i}"))).collect()).await?;
        done += k;
        if done % 50_000 == 0 || done == due {
            progress("(h) due messages", done, due);
        }
    }
    slowlog_start(rc, 100).await?;
    let step = (due / 300).max(1);
    for k in 0..100 {
        let id = |j: usize| format!("c{}", (j * step) % due);
        q.publish(Message::new(b"new".to_vec()).id(id(3 * k)).replace(true)).await?;
        q.cancel(&id(3 * k + 1)).await?;
        q.reschedule(&id(3 * k + 2), redelay::Due::In(Duration::from_secs(60))).await?;
    }
    let slow = slowlog_stop(rc).await?;
    q.destroy().await?;
    Ok(json!({ "due": due, "over_100us": slow.count, "max_ms": slow.max_ms, "slowest_command": slow.slowest }))
}
