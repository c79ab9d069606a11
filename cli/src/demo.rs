//! `redelay demo`: publishes ~30 messages due over ~10 s, consumes them, prints each delivery
//! with its lateness (by the Redis clock), and ends with a summary line.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use redelay::{Delivery, Failure, Message, SubscribeOptions};

use crate::units::human;

#[derive(Args)]
pub struct DemoArgs {
    /// How many messages
    #[arg(long, default_value_t = 30)]
    pub count: u32,
    /// Spread the due times over this many seconds
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
}

pub async fn run(url: &str, prefix: &str, a: DemoArgs) -> redelay::Result<ExitCode> {
    let client = crate::commands::connect(url, prefix).await?;
    let queue = client.queue(&format!("demo-{}", std::process::id()))?;
    println!(
        "redelay demo: {} messages due over {:.0} s on {} (queue {})",
        a.count,
        a.seconds,
        redelay::redact(url),
        queue.name()
    );

    // Spread the due times evenly, published in shuffled order; #7 fails once to show a retry.
    let n = a.count.max(1);
    let mut order: Vec<u32> = (0..n).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, (i * 7919 + 13) % (i + 1));
    }
    let spread = Duration::from_secs_f64(a.seconds.max(0.1));
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
    let sub = queue
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
        .await?;

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
