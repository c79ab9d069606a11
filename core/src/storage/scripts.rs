//! The Lua scripts, one file each under `core/lua/`, with the parts of `lua/lib.lua` each one
//! uses prepended (Redis Lua has no `require`). See each file's header for its KEYS, ARGV and
//! reply.
//!
//! Every call runs its script's chunk from the top, so every definition of the library it
//! carries costs Lua work per call (a closure, a table); a script carries only the
//! definitions it names, directly or through another one ([`lib_for`]).
//!
//! A script runs as EVALSHA; on NOSCRIPT it runs once as EVAL with its source, which also
//! caches it on that node. EVAL is routed by key like every call, so this works the same on
//! one Redis, on a cluster and after a failover. (redis-rs' own fallback sends SCRIPT LOAD to
//! every master of a cluster, and while one of them is down that times out on every call.)

use std::collections::HashSet;
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

/// The parts of `lib` that `script` uses: the file's opening comment, then each top-level
/// definition (a line starting with `local `, with the comment lines right above it) whose
/// name `script` or another kept definition mentions, in the library's order. Mentions are
/// found by identifier, comments and strings included, so a doubt keeps a definition.
fn lib_for(lib: &str, script: &str) -> String {
    let lines: Vec<&str> = lib.lines().collect();
    // Where each definition begins (its comment lines included) and the names it defines.
    let mut defs: Vec<(usize, Vec<&str>)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("local ") else { continue };
        let names = match rest.strip_prefix("function ") {
            Some(f) => vec![f.split('(').next().unwrap_or("").trim()],
            None => rest.split('=').next().unwrap_or("").split(',').map(str::trim).collect(),
        };
        let mut begin = i;
        while begin > 0 && lines[begin - 1].starts_with("--") {
            begin -= 1;
        }
        defs.push((begin, names));
    }
    let Some(first) = defs.first().map(|d| d.0) else { return lib.to_string() };
    let text = |k: usize| {
        let end = defs.get(k + 1).map_or(lines.len(), |d| d.0);
        lines[defs[k].0..end].join("\n")
    };
    let mut named: HashSet<String> = identifiers(script);
    let mut kept = vec![false; defs.len()];
    let mut grew = true;
    while grew {
        grew = false;
        for (k, (_, names)) in defs.iter().enumerate() {
            if !kept[k] && names.iter().any(|n| named.contains(*n)) {
                kept[k] = true;
                grew = true;
                named.extend(identifiers(&text(k)));
            }
        }
    }
    let header = (first > 0).then(|| lines[..first].join("\n"));
    header.into_iter().chain((0..defs.len()).filter(|&k| kept[k]).map(text)).collect::<Vec<_>>().join("\n")
}

/// The Lua identifiers (and keywords) in `code`.
fn identifiers(code: &str) -> HashSet<String> {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_'))
        .map(str::to_string)
        .collect()
}

impl Script {
    fn new(file: &str) -> Script {
        let code = format!("{}\n{file}", lib_for(LIB, file));
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

/// The scripts, each a lazily built static (its code and SHA1), and `init_all`, which builds
/// them all now (see [`crate::init_globals`]).
macro_rules! scripts {
    ($($name:ident = $file:literal;)*) => {
        $(pub(crate) static $name: LazyLock<Script> =
            LazyLock::new(|| Script::new(include_str!(concat!("../../lua/", $file))));)*

        /// Builds every script now rather than on its first use.
        pub(crate) fn init_all() {
            $(LazyLock::force(&$name);)*
        }
    };
}

scripts! {
    PUBLISH = "publish.lua";
    FETCH = "fetch.lua";
    ACK = "ack.lua";
    NACK = "nack.lua";
    EXTEND = "extend.lua";
    CANCEL = "cancel.lua";
    RESCHEDULE = "reschedule.lua";
    PEEK = "peek.lua";
    STATS = "stats.lua";
    DEAD_LIST = "dead_list.lua";
    RESPAWN = "respawn.lua";
    PURGE_DEAD = "purge_dead.lua";
    VERIFY = "verify.lua";
    FLAG = "flag.lua";
    HISTORY = "history.lua";
    UPCOMING = "upcoming.lua";
    LIST = "list.lua";
    SEARCH = "search.lua";
    SHARDS = "shards.lua";
    TIME = "time.lua";
}

/// True for a script that writes nothing (SHARDS stores a count only when told to, and only
/// the count already there for a handle opened with the stored one).
pub(crate) fn reads_only(script: &Script) -> bool {
    [&PEEK, &STATS, &DEAD_LIST, &VERIFY, &HISTORY, &UPCOMING, &LIST, &SEARCH, &SHARDS, &TIME]
        .into_iter()
        .any(|s| std::ptr::eq(&**s, script))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = "-- lib: a header\n\
                       \n\
                       local A, B = 1, 2\n\
                       -- uses B\n\
                       local function f() return B end\n\
                       local function g() return f() end\n\
                       local function unused() return A end\n";

    #[test]
    fn a_script_carries_the_definitions_it_names_directly_or_through_another() {
        let lib = lib_for(LIB, "return g()");
        assert_eq!(
            lib,
            "-- lib: a header\n\nlocal A, B = 1, 2\n-- uses B\nlocal function f() return B end\n\
             local function g() return f() end"
        );
        assert_eq!(lib_for(LIB, "return 1"), "-- lib: a header\n", "nothing named: the header alone");
    }

    #[test]
    fn every_script_keeps_what_it_needs_of_the_library_and_drops_what_it_does_not() {
        let publish = lib_for(super::LIB, include_str!("../../lua/publish.lua"));
        // hist is named by publish.lua; fold and minute_counts only through hist.
        for needed in [
            "local function check_layout",
            "local function hist",
            "local function fold",
            "local function minute_counts",
        ] {
            assert!(publish.contains(needed), "{needed}");
        }
        for unneeded in
            ["local function lateness_bucket", "local function dead_selection", "local function replay_begin"]
        {
            assert!(!publish.contains(unneeded), "{unneeded}");
        }
        let time = lib_for(super::LIB, include_str!("../../lua/time.lua"));
        assert!(time.len() < super::LIB.len() / 4, "time.lua carries little of the library");
    }
}
