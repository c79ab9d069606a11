//! The load of bench/http.sh through the Rust client instead of HTTP, for the gateway's
//! overhead: C tasks publish N messages one per call (max_attempts 3, no expiry), then lease one
//! per call (ttr 30 s, waiting up to 1 s) and delete it by id, as `DELETE .../job/:id` does.
//! Prints the same JSON lines as bench/http/main.go.
//!
//!   REDIS_URL=... cargo run --release -p redelay-server --example direct_load -- N C QUEUE

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redelay::{Client, Message, Queue};

fn pct(v: &mut [Duration], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort();
    v[(p * (v.len() - 1) as f64) as usize].as_micros() as f64 / 1000.0
}

async fn phase<F, Fut>(name: &str, n: usize, c: usize, q: &Queue, work: F)
where
    F: Fn(Queue) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let left = Arc::new(AtomicI64::new(n as i64));
    let start = Instant::now();
    let tasks: Vec<_> = (0..c)
        .map(|_| {
            let (left, q, work) = (left.clone(), q.clone(), work.clone());
            tokio::spawn(async move {
                let (mut lat, mut errs) = (Vec::new(), 0u64);
                while left.fetch_sub(1, Ordering::Relaxed) > 0 {
                    let t = Instant::now();
                    if work(q.clone()).await {
                        lat.push(t.elapsed());
                    } else {
                        errs += 1;
                    }
                }
                (lat, errs)
            })
        })
        .collect();
    let (mut all, mut errors) = (Vec::new(), 0);
    for t in tasks {
        let (l, e) = t.await.unwrap();
        all.extend(l);
        errors += e;
    }
    let secs = start.elapsed().as_secs_f64();
    let line = serde_json::json!({
        "system": "rust client", "phase": name, "clients": c, "jobs": all.len(), "seconds": secs,
        "per_second": all.len() as f64 / secs, "p50_ms": pct(&mut all, 0.5), "p99_ms": pct(&mut all, 0.99),
        "errors": errors,
    });
    println!("{line}");
}

#[tokio::main]
async fn main() {
    let a: Vec<String> = std::env::args().collect();
    let n: usize = a.get(1).and_then(|s| s.parse().ok()).unwrap_or(20000);
    let c: usize = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(16);
    let name = a.get(3).cloned().unwrap_or_else(|| "direct".into());
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let client = Client::connect(&url).await.expect("connect");
    let q = client.queue(&format!("bench:{name}")).unwrap();
    let body = vec![b'x'; 32];
    phase("publish", n, c, &q, move |q: Queue| {
        let body = body.clone();
        async move { q.publish(Message::new(body).max_attempts(3)).await.is_ok() }
    })
    .await;
    phase("consume+delete", n, c, &q, |q: Queue| async move {
        loop {
            match q.fetch_leasing(1, Duration::from_secs(1), Some(Duration::from_secs(30))).await {
                Ok(d) if d.is_empty() => continue,
                Ok(d) => return q.cancel(d[0].id()).await.is_ok(),
                Err(_) => return false,
            }
        }
    })
    .await;
}
