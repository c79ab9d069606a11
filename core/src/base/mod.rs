//! Base layer: errors, limits, keys, log forwarding, the record codec, options, time, wire forms, spellings. Touches no connection.

pub(crate) mod error;
pub(crate) mod keys;
pub mod limits;
pub(crate) mod logs;
pub(crate) mod message;
pub(crate) mod options;
pub(crate) mod record;
pub(crate) mod reply;
pub(crate) mod spelling;
pub(crate) mod time;
pub(crate) mod url;
pub mod wire;
