//! `redelay demo`: publishes ~30 messages due over ~10 s, consumes them, prints each delivery
//! with its lateness (by the Redis clock), and ends with a summary line.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use redelay::{Delivery, Failure, Message, Queue, SubscribeOptions, Subscription};

use crate::units::human;

#[derive(Args)]
pub struct DemoArgs {
    /// How many messages, 1 to 10000
    #[arg(long, default_value_t = 30, value_parser = count)]
    pub count: u32,
    /// Spread the due times over this many seconds, 0 to 3600
    #[arg(long, default_value_t = 10.0, value_parser = seconds, allow_hyphen_values = true)]
    pub seconds: f64,
}

fn count(s: &str) -> Result<u32, String> {
    s.trim()
        .parse()
        .ok()
        .filter(|n| (1..=10_000).contains(n))
        .ok_or_else(|| "must be a whole number, 1 to 10000".into())
}

fn seconds(s: &str) -> Result<f64, String> {
    // NaN is in no range: refused with the infinities.
    s.trim().parse().ok().filter(|x| (0.0..=3600.0).contains(x)).ok_or_else(|| "must be 0 to 3600 (seconds)".into())
}

/// Resolves on Ctrl-C (never, when the handler cannot be installed).
async fn ctrl_c() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Runs the demo on its own queue `demo-<pid>`, which goes at the end: when the demo is done,
/// fails or is interrupted by Ctrl-C (then the exit status is 130, as a shell's).
pub async fn run(url: &str, prefix: &str, a: DemoArgs) -> redelay::Result<ExitCode> {
    let client = crate::commands::connect(url, prefix).await?;
    let queue = client.queue(&format!("demo-{}", std::process::id()))?;
    println!(
        "redelay demo: {} messages due over {} s on {} (queue {})",
        a.count,
        a.seconds,
        redelay::redact(url),
        queue.name()
    );
    let mut sub = None;
    let outcome = tokio::select! {
        r = demo(&queue, &a, &mut sub) => Some(r),
        () = ctrl_c() => None,
    };
    // The subscription drains first, so that no handler settles into the queue once it is gone.
    let cleanup = async {
        if let Some(s) = &sub {
            s.close().await;
        }
        queue.destroy().await
    };
    let destroyed = match tokio::time::timeout(Duration::from_secs(10), cleanup).await {
        Ok(r) => r,
        Err(_) => Err(redelay::Error::new(redelay::ErrorKind::Timeout, "destroy: no answer in 10 s")),
    };
    match (outcome, destroyed) {
        (None, Ok(())) => {
            println!("interrupted: queue {} destroyed", queue.name());
            Ok(ExitCode::from(130))
        }
        (None, Err(e)) => {
            eprintln!("redelay: interrupted; queue {} not destroyed: {e}", queue.name());
            Ok(ExitCode::from(130))
        }
        (Some(r), Ok(())) => r,
        (Some(Ok(_)), Err(e)) => Err(e),
        (Some(Err(e)), Err(_)) => Err(e),
    }
}

/// The demo proper; the subscription is left in `sub` for `run` to close.
async fn demo(queue: &Queue, a: &DemoArgs, sub: &mut Option<Subscription>) -> redelay::Result<ExitCode> {
    // Spread the due times evenly, published in shuffled order; #7 fails once to show a retry.
    let n = a.count;
    let mut order: Vec<u32> = (0..n).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, (i * 7919 + 13) % (i + 1));
    }
    let spread = Duration::from_secs_f64(a.seconds);
    let msgs = order
        .iter()
        .map(|&i| {
            let delay = spread.mul_f64(f64::from(i + 1) / f64::from(n));
            Message::new(format!("message #{:02}", i + 1).into_bytes())
                .id(format!("demo-{:02}", i + 1))
                .delay(delay)
                .backoff(Duration::from_millis(200), Duration::from_secs(1))
        })
        .collect();
    queue.publish_batch(msgs).await?;

    let start = Instant::now();
    let lateness: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let l = lateness.clone();
    let sub = sub.insert(
        queue
            .subscribe(
                move |d: Delivery| {
                    let l = l.clone();
                    let start = start;
                    async move {
                        let body = String::from_utf8_lossy(d.body()).into_owned();
                        if d.id() == "demo-07" && d.attempt() == 1 {
                            println!(
                                "  {:>7.3}s  {body}  attempt {}  lateness {:>9}  -> fails, retried with backoff",
                                start.elapsed().as_secs_f64(),
                                d.attempt(),
                                human(d.lateness())
                            );
                            return Err(Failure::new("demo: first attempt fails on purpose"));
                        }
                        println!(
                            "  {:>7.3}s  {body}  attempt {}  lateness {:>9}",
                            start.elapsed().as_secs_f64(),
                            d.attempt(),
                            human(d.lateness())
                        );
                        l.lock().unwrap().push(d.lateness());
                        Ok(())
                    }
                },
                SubscribeOptions::concurrency(8),
            )
            .await?,
    );

    let deadline = start + spread + Duration::from_secs(10);
    while (lateness.lock().unwrap().len() as u32) < n && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    sub.close().await;
    let report = queue.verify().await?;
    let stats = queue.stats().await?;
    let mut l = lateness.lock().unwrap().clone();
    l.sort();
    let pct = |p: f64| l.get(((l.len() as f64 * p).ceil() as usize).saturating_sub(1)).copied().unwrap_or_default();
    let ok = l.len() as u32 == n && report.is_ok() && stats.total == 0;
    println!(
        "{}: {}/{} delivered and acknowledged; lateness p50 {}, p99 {}, max {}; verify {}; {} left in Redis",
        if ok { "ok" } else { "FAILED" },
        l.len(),
        n,
        human(pct(0.5)),
        human(pct(0.99)),
        human(l.last().copied().unwrap_or_default()),
        if report.is_ok() { "ok" } else { "FAILED" },
        stats.total
    );
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
