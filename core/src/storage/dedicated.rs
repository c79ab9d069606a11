//! Connections of their own for durable publishes: the publish script calls and `WAIT` go out
//! as one pipeline on a connection nothing else uses. WAIT blocks the connection it runs on (up
//! to its timeout when a replica is down), so on the shared multiplexed connection it would
//! hold up every fetch, ack and extend; and sent separately, a WAIT that went out on a fresh
//! connection after a reconnect would confirm nothing (that connection carried no write) yet
//! report success. In one pipeline on one connection, WAIT covers exactly the publish's writes,
//! and a connection that drops in between fails the whole call.

use std::time::Duration;

use redis::aio::ConnectionLike;
use redis::cluster_routing::{Route, SingleNodeRoutingInfo, SlotAddr};
use redis::{Pipeline, Value};

use crate::base::error::{Error, Result};
use crate::storage::connection::{Link, Opener};
use crate::storage::scripts::Script;

/// Idle dedicated connections kept for the next durable publish.
const KEEP: usize = 4;

pub(crate) struct Dedicated {
    opener: Opener,
    idle: tokio::sync::Mutex<Vec<Link>>,
}

impl Dedicated {
    pub fn new(opener: Opener) -> Self {
        Dedicated { opener, idle: tokio::sync::Mutex::new(Vec::new()) }
    }

    /// Closes the idle connections (`Client::close`; the client refuses publishes from then on).
    pub async fn close(&self) {
        self.idle.lock().await.clear();
    }

    /// Runs `script` once per element of `calls` (its ARGV) with `keys`, then `WAIT replicas
    /// timeout`, as one pipeline on a dedicated connection (in a cluster: to the master of
    /// `route_key`'s slot). Returns the script replies followed by WAIT's reply.
    pub async fn run_and_wait(
        &self,
        script: &Script,
        route_key: &str,
        keys: &[String],
        calls: &[Vec<redis::Arg<Vec<u8>>>],
        replicas: u32,
        timeout: Duration,
    ) -> Result<Vec<Value>> {
        let conn = self.idle.lock().await.pop();
        let mut conn = match conn {
            Some(c) => c,
            None => self.opener.open().await?,
        };
        // The first call carries the script's source (EVAL, which also caches it); the others, run
        // after it on this connection, find it cached. With EVALSHA first, a script missing on
        // that node (a fresh server, a restart, a failover) would come back as NOSCRIPT only
        // with the pipeline's last reply: after WAIT had run out its whole timeout for writes
        // that never happened, before the publish could even be sent again.
        let mut p = Pipeline::new();
        for (i, a) in calls.iter().enumerate() {
            p.add_command(script.cmd(i == 0, keys, |c| {
                for x in a {
                    if let redis::Arg::Simple(b) = x {
                        c.arg(b);
                    }
                }
            }));
        }
        p.cmd("WAIT").arg(replicas).arg(timeout.as_millis() as u64);
        let replies = send(&mut conn, p, route_key, calls.len() + 1).await?;
        let mut out = Vec::with_capacity(replies.len());
        for v in replies {
            out.push(v.extract_error().map_err(Error::from)?);
        }
        let mut idle = self.idle.lock().await;
        if idle.len() < KEEP {
            idle.push(conn);
        }
        Ok(out)
    }
}

async fn send(conn: &mut Link, p: Pipeline, route_key: &str, n: usize) -> Result<Vec<Value>> {
    let r = match conn {
        Link::Cluster(c) => {
            let route = SingleNodeRoutingInfo::SpecificNode(Route::with_key(route_key, SlotAddr::Master));
            c.route_pipeline(p, 0, n, route).await
        }
        c => c.req_packed_commands(&p, 0, n).await,
    };
    r.map_err(Error::from)
}
