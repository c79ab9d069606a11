//! The Lua scripts, one file each under `core/lua/`, with `lua/lib.lua` prepended (Redis Lua has
//! no `require`). Each is run by EVALSHA; on NOSCRIPT it is loaded and run again (redis-rs'
//! `Script` does this). See each file's header for its KEYS, ARGV and reply.

use std::sync::LazyLock;

use redis::Script;

const LIB: &str = include_str!("../lua/lib.lua");

macro_rules! script {
    ($name:ident, $file:literal) => {
        pub(crate) static $name: LazyLock<Script> =
            LazyLock::new(|| Script::new(&format!("{}\n{}", LIB, include_str!(concat!("../lua/", $file)))));
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
