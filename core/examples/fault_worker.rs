//! The process the fault suite (tests/faults) starts and kills.
//!
//!   fault_worker publish URL QUEUE COUNT SPREAD_MS     publish m0..m{COUNT-1}, due over SPREAD_MS
//!   fault_worker consume URL QUEUE LOG CONCURRENCY WORK_MS
//!
//! The consumer appends to LOG, one unbuffered write per line (so a SIGKILL loses no line that
//! was written): `handled ID ATTEMPT PID LEASE_DEADLINE_MS` before it acks, `acked ID ATTEMPT PID`
//! after the ack succeeded. Handlers take a random 0..WORK_MS, so kills land inside them.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

use redelay::{Client, Delivery, Failure, Message, SubscribeOptions};

#[tokio::main]
async fn main() {
    let a: Vec<String> = std::env::args().collect();
    let arg = |i: usize| a.get(i).cloned().unwrap_or_else(|| panic!("usage: see core/examples/fault_worker.rs"));
    let client = loop {
        match Client::builder(&arg(2)).response_timeout(Duration::from_secs(2)).connect().await {
            Ok(c) => break c,
            Err(e) => {
                eprintln!("fault_worker: {e}; retrying");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    let q = client.queue(&arg(3)).unwrap();
    match arg(1).as_str() {
        "publish" => {
            let count: u64 = arg(4).parse().unwrap();
            let spread: u64 = arg(5).parse().unwrap();
            let mut i = 0;
            while i < count {
                let n = 1000.min(count - i);
                let msgs: Vec<Message> = (i..i + n)
                    .map(|k| {
                        Message::new(format!("body {k}").into_bytes())
                            .id(format!("m{k}"))
                            .delay(Duration::from_millis(k * spread / count.max(1)))
                            .max_attempts(1000)
                            .ttr(Duration::from_secs(2))
                    })
                    .collect();
                loop {
                    match q.publish_batch(msgs.clone()).await {
                        Ok(_) => break,
                        Err(e) => {
                            eprintln!("fault_worker publish: {e}; retrying");
                            tokio::time::sleep(Duration::from_millis(200)).await;
                        }
                    }
                }
                i += n;
            }
            println!("published {count}");
        }
        "consume" => {
            let log = Arc::new(Mutex::new(std::fs::OpenOptions::new().create(true).append(true).open(arg(4)).unwrap()));
            let concurrency: usize = arg(5).parse().unwrap();
            let work_ms: u64 = arg(6).parse().unwrap();
            let pid = std::process::id();
            let write = |log: &Arc<Mutex<std::fs::File>>, line: String| {
                log.lock().unwrap().write_all(line.as_bytes()).unwrap();
            };
            // Redis may be down while this worker (re)starts: keep trying.
            let _sub = loop {
                let log = log.clone();
                let write = write.clone();
                let r = q
                    .subscribe(
                        move |d: Delivery| {
                            let log = log.clone();
                            async move {
                                let deadline = d.lease_deadline().duration_since(UNIX_EPOCH).unwrap().as_millis();
                                write(&log, format!("handled {} {} {pid} {deadline}\n", d.id(), d.attempt()));
                                let w = if work_ms == 0 { 0 } else { rand_ms(work_ms) };
                                tokio::time::sleep(Duration::from_millis(w)).await;
                                match d.ack().await {
                                    Ok(()) => write(&log, format!("acked {} {} {pid}\n", d.id(), d.attempt())),
                                    Err(e) => eprintln!("fault_worker: ack {}: {e}", d.id()),
                                }
                                Ok::<(), Failure>(())
                            }
                        },
                        SubscribeOptions {
                            concurrency,
                            prefetch: Some(concurrency),
                            ttr: Some(Duration::from_secs(2)),
                            ..Default::default()
                        },
                    )
                    .await;
                match r {
                    Ok(s) => break s,
                    Err(e) => {
                        eprintln!("fault_worker subscribe: {e}; retrying");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            };
            std::future::pending::<()>().await;
        }
        other => panic!("unknown command {other}"),
    }
}

fn rand_ms(max: u64) -> u64 {
    let n = std::time::SystemTime::now().duration_since(UNIX_EPOCH).unwrap().subsec_nanos() as u64;
    (n ^ (n >> 7)) % max
}
