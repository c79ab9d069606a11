//! [`Settings`]: a small hash of strings under the client's prefix, for tools built on the core
//! (the HTTP gateway keeps its hashed tokens and its webhooks in two of them). It goes through
//! the client's connection, so it works on every topology the client does (a single Redis,
//! Cluster, Sentinel with failover, TLS).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::base::error::{Error, Result};
use crate::base::limits;
use crate::storage::ctx::Ctx;

/// The hash `<prefix>:<name>`. Cheap to clone.
#[derive(Clone)]
pub struct Settings {
    ctx: Arc<Ctx>,
    key: String,
}

impl Settings {
    /// `name`: the characters of a queue name, and not `queues` (the queue registry's key).
    pub(crate) fn new(ctx: Arc<Ctx>, name: &str) -> Result<Settings> {
        limits::check_queue_name(name)
            .map_err(|e| Error::invalid(e.message().replacen("queue name", "settings name", 1)))?;
        if name == "queues" {
            return Err(Error::invalid("settings name: \"queues\" is the queue registry's key"));
        }
        Ok(Settings { key: format!("{}:{name}", ctx.prefix), ctx })
    }

    /// The Redis key.
    pub fn key(&self) -> &str {
        &self.key
    }

    async fn query<T: redis::FromRedisValue>(&self, cmd: &mut redis::Cmd) -> Result<T> {
        self.ctx.check_open()?;
        let mut c = self.ctx.conn.clone();
        Ok(cmd.query_async(&mut c).await?)
    }

    /// The value of `field`, None when there is none.
    pub async fn get(&self, field: &str) -> Result<Option<String>> {
        self.query(redis::cmd("HGET").arg(&self.key).arg(field)).await
    }

    /// Sets `field` to `value`.
    pub async fn set(&self, field: &str, value: &str) -> Result<()> {
        self.query::<i64>(redis::cmd("HSET").arg(&self.key).arg(field).arg(value)).await.map(|_| ())
    }

    /// Sets `field` to `value` unless it exists; true when it was set.
    pub async fn set_new(&self, field: &str, value: &str) -> Result<bool> {
        Ok(self.query::<i64>(redis::cmd("HSETNX").arg(&self.key).arg(field).arg(value)).await? == 1)
    }

    /// Deletes `field`; true when it existed.
    pub async fn delete(&self, field: &str) -> Result<bool> {
        Ok(self.query::<i64>(redis::cmd("HDEL").arg(&self.key).arg(field)).await? == 1)
    }

    /// Every field and value.
    pub async fn all(&self) -> Result<BTreeMap<String, String>> {
        self.query(redis::cmd("HGETALL").arg(&self.key)).await
    }
}
