//! Connection errors are bounded and clear; a subscription survives a Redis restart.
mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redelay::{Client, ErrorKind, Message, SubscribeOptions};

#[tokio::test]
async fn unreachable_redis_is_a_connection_error_within_bounded_time() {
    let port = common::free_port(); // nothing listens there
    let t = Instant::now();
    let e = Client::builder(&format!("redis://127.0.0.1:{port}"))
        .connect_timeout(Duration::from_secs(1))
        .connect()
        .await
        .err()
        .expect("no server");
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");
    assert!(e.message().contains(&port.to_string()), "names the address: {e}");
    assert!(t.elapsed() < Duration::from_secs(5), "took {:?}", t.elapsed());
}

/// A server that accepts and never answers: the error comes after the connect timeout, not after
/// two of them (the connection's own retry had its own timeout). The bound is generous (the old
/// code took twice the timeout and more).
#[tokio::test]
async fn a_silent_server_is_a_connection_error_within_the_connect_timeout() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap(); // accepted by the kernel, never answered
    let port = silent.local_addr().unwrap().port();
    let timeout = Duration::from_secs(3);
    let t = Instant::now();
    let e = Client::builder(&format!("redis://127.0.0.1:{port}")).connect_timeout(timeout).connect().await.err();
    let took = t.elapsed();
    let e = e.expect("no answer");
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");
    assert!(took >= timeout - Duration::from_millis(50), "waited the timeout: {took:?}");
    assert!(took < timeout + Duration::from_secs(2), "one connect timeout, not two: took {took:?} ({e})");
}

#[tokio::test]
async fn wrong_password_is_a_connection_error() {
    let mut u = common::url();
    u = u.replacen("redis://", "redis://nobody:wrong@", 1);
    let e = Client::connect(&u).await.err().expect("refused");
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");
    assert!(!e.message().contains("wrong"), "password is not echoed: {e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_keeps_delivering_after_redis_restarts() {
    let mut server = common::RedisServer::start();
    let client = Client::builder(&server.url()).response_timeout(Duration::from_secs(2)).connect().await.unwrap();
    let q = client.queue("restart").unwrap();
    let (got, handler) = common::recording(|d| String::from_utf8_lossy(d.body()).into_owned());
    let sub = q.subscribe(handler, SubscribeOptions::concurrency(2)).await.unwrap();
    q.publish(Message::new(b"before".to_vec())).await.unwrap();
    wait_for(&got, 1).await;

    server.restart(); // no persistence: Redis comes back empty
                      // Publishing may fail while the client reconnects; retry like a producer would.
    let t = Instant::now();
    loop {
        match q.publish(Message::new(b"after".to_vec()).delay(Duration::from_millis(200))).await {
            Ok(_) => break,
            Err(e) => {
                assert!(matches!(e.kind(), ErrorKind::Connection | ErrorKind::Timeout), "{e}");
                assert!(t.elapsed() < Duration::from_secs(10), "never reconnected: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    q.publish(Message::new(b"after-now".to_vec())).await.unwrap();
    wait_for(&got, 3).await;
    sub.close().await;
    let got = got.lock().unwrap().clone();
    assert_eq!(got[0], "before");
    assert!(got.contains(&"after".to_string()) && got.contains(&"after-now".to_string()), "{got:?}");
    common::assert_verified(&q).await;
}

async fn wait_for(got: &Arc<Mutex<Vec<String>>>, n: usize) {
    let t = Instant::now();
    while got.lock().unwrap().len() < n {
        assert!(t.elapsed() < Duration::from_secs(10), "only {:?}", got.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unix_socket_url_works_for_every_call_and_a_subscription() {
    let dir = std::env::temp_dir().join(common::unique("sock"));
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("redis.sock");
    let mut child = std::process::Command::new("redis-server")
        .args(["--port", "0", "--save", "", "--appendonly", "no", "--unixsocket"])
        .arg(&sock)
        .arg("--dir")
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("redis-server");
    let t = Instant::now();
    while !sock.exists() {
        assert!(t.elapsed() < Duration::from_secs(10), "no socket");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let client = Client::connect(&format!("unix://{}", sock.display())).await.unwrap();
    let q = client.queue("over-unix").unwrap();
    let (got, handler) = common::recording(|d| d.id().to_string());
    let sub = q.subscribe(handler, SubscribeOptions::concurrency(2)).await.unwrap();
    q.publish(Message::new(b"x".to_vec()).id("u1").delay(Duration::from_millis(100))).await.unwrap();
    wait_for(&got, 1).await;
    sub.close().await;
    assert_eq!(q.stats().await.unwrap().total, 0);
    common::assert_verified(&q).await;
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

fn redis_cli(port: u16, args: &[&str]) {
    let ok = std::process::Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "redis-cli {args:?}");
}

/// A master that became a replica (what a client still connected to it sees after a failover)
/// refuses writes with READONLY: that is "not now", a Connection error like a dropped
/// connection, not a Redis error (which says the call itself is wrong), and nothing is written.
/// MOVED/TRYAGAIN/CLUSTERDOWN during a cluster failover are classed the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_became_a_replica_is_a_connection_error_until_it_is_a_master_again() {
    let server = common::RedisServer::start();
    let client = Client::connect(&server.url()).await.unwrap();
    let q = client.queue("demoted").unwrap();
    q.publish(Message::new(b"before".to_vec()).id("before")).await.unwrap();

    let nobody = common::free_port().to_string();
    redis_cli(server.port, &["REPLICAOF", "127.0.0.1", &nobody]);
    let e = q.publish(Message::new(b"during".to_vec()).id("during")).await.expect_err("a replica refuses writes");
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");
    assert!(e.message().contains("read only replica") && e.message().contains("unavailable for now"), "{e}");
    let e = q.fetch(1, Duration::ZERO).await.expect_err("a fetch writes too");
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");

    redis_cli(server.port, &["REPLICAOF", "NO", "ONE"]);
    q.publish(Message::new(b"after".to_vec()).id("after")).await.unwrap();
    assert_eq!(q.stats().await.unwrap().total, 2, "the refused publish left nothing behind");
}

/// After Redis restarts, the first call goes through: the connection it was to use had closed
/// before the call began, so nothing of it was sent, and it is sent again on a new connection.
/// Each kind of call is the first on its own client: a script that writes (publish), one that
/// leases (fetch), a plain command (ping) and a read (stats).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_call_after_redis_restarts_goes_through() {
    let mut server = common::RedisServer::start();
    let mut clients = Vec::new();
    for _ in 0..4 {
        let c = Client::connect(&server.url()).await.unwrap();
        // Each client's connection is open and its scripts are cached before the restart.
        let q = c.queue("restarted").unwrap();
        q.publish(Message::new(b"warm".to_vec()).id("warm")).await.unwrap();
        q.cancel("warm").await.unwrap();
        assert!(q.fetch(1, Duration::ZERO).await.unwrap().is_empty());
        clients.push((c, q));
    }
    server.restart(); // no persistence: Redis comes back empty, without the scripts
                      // The old connections see the server close them.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let (_, q) = &clients[0];
    q.publish(Message::new(b"after".to_vec()).id("after")).await.expect("the first publish after the restart");
    let (_, q) = &clients[1];
    let got = q.fetch(1, Duration::ZERO).await.expect("the first fetch after the restart");
    assert_eq!(got.iter().map(|d| d.id()).collect::<Vec<_>>(), ["after"]);
    got[0].ack().await.unwrap();
    let (c, _) = &clients[2];
    c.ping().await.expect("the first ping after the restart");
    let (_, q) = &clients[3];
    assert_eq!(q.stats().await.expect("the first read after the restart").total, 0);
}
