//! The Lua scripts, one file each under `core/lua/`, with `lua/lib.lua` prepended (Redis Lua has
//! no `require`). See each file's header for its KEYS, ARGV and reply.
//!
//! A script runs as EVALSHA; on NOSCRIPT it runs once as EVAL with its source, which also
//! caches it on that node. EVAL is routed by key like every call, so this works the same on
//! one Redis, on a cluster and after a failover. (redis-rs' own fallback sends SCRIPT LOAD to
//! every master of a cluster, and while one of them is down that times out on every call.)

use std::sync::LazyLock;

use redis::aio::ConnectionLike;
use redis::{Cmd, RedisResult, Value};

use crate::storage::connection::Conn;

const LIB: &str = include_str!("../../lua/lib.lua");

/// One script: its source (with the library) and its SHA1.
pub(crate) struct Script {
    code: String,
    hash: String,
}

impl Script {
    fn new(file: &str) -> Script {
        let code = format!("{LIB}\n{file}");
        let hash = redis::Script::new(&code).get_hash().to_string();
        Script { code, hash }
    }

    /// The command that runs the script: EVALSHA, or with `source` EVAL (which also caches it).
    pub fn cmd(&self, source: bool, keys: &[String], args: impl Fn(&mut Cmd)) -> Cmd {
        let mut c = if source { redis::cmd("EVAL") } else { redis::cmd("EVALSHA") };
        c.arg(if source { &self.code } else { &self.hash }).arg(keys.len()).arg(keys);
        args(&mut c);
        c
    }

    /// Runs the script with the queue's `keys`; `args` adds ARGV to the command.
    pub async fn run(&self, conn: &Conn, keys: &[String], args: impl Fn(&mut Cmd)) -> RedisResult<Value> {
        self.run_as(false, conn, keys, args).await
    }

    /// [`run`](Self::run), sent as EVAL with the source when `source`: the first of several
    /// calls that must run in the order they are sent. Sent after it on the same connection, the
    /// others find the script cached; with EVALSHA first, a NOSCRIPT retry would run that call
    /// after the later ones (a batch's chunks out of order, so its seqs not in publish order).
    pub async fn run_as(
        &self,
        source: bool,
        conn: &Conn,
        keys: &[String],
        args: impl Fn(&mut Cmd),
    ) -> RedisResult<Value> {
        let mut con = conn.clone();
        if source {
            return con.req_packed_command(&self.cmd(true, keys, &args)).await.and_then(Value::extract_error);
        }
        // A server error may arrive as a value; `extract_error` makes it an Err (nested ones too).
        match con.req_packed_command(&self.cmd(false, keys, &args)).await.and_then(Value::extract_error) {
            Err(e) if is_noscript(&e) => {
                tracing::debug!("script not cached on that node (a restart or failover): sending its source");
                con.req_packed_command(&self.cmd(true, keys, &args)).await.and_then(Value::extract_error)
            }
            other => other,
        }
    }
}

/// True for Redis' NOSCRIPT (the script is not cached on that node: send its source).
pub(crate) fn is_noscript(e: &redis::RedisError) -> bool {
    e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript)
}

macro_rules! script {
    ($name:ident, $file:literal) => {
        pub(crate) static $name: LazyLock<Script> =
            LazyLock::new(|| Script::new(include_str!(concat!("../../lua/", $file))));
    };
}

script!(PUBLISH, "publish.lua");
script!(FETCH, "fetch.lua");
script!(ACK, "ack.lua");
script!(NACK, "nack.lua");
script!(EXTEND, "extend.lua");
script!(CANCEL, "cancel.lua");
script!(RESCHEDULE, "reschedule.lua");
script!(PEEK, "peek.lua");
script!(STATS, "stats.lua");
script!(DEAD_LIST, "dead_list.lua");
script!(RESPAWN, "respawn.lua");
script!(PURGE_DEAD, "purge_dead.lua");
script!(VERIFY, "verify.lua");
script!(FLAG, "flag.lua");
script!(HISTORY, "history.lua");
script!(UPCOMING, "upcoming.lua");
script!(LIST, "list.lua");
script!(SEARCH, "search.lua");
script!(SHARDS, "shards.lua");
