//! Storage layer: connections, scripts, replay keys, wake-ups, settling, and the context a
//! client shares.

pub(crate) mod connection;
pub(crate) mod ctx;
pub(crate) mod dedicated;
pub(crate) mod replay;
pub(crate) mod scripts;
pub(crate) mod settle;
pub(crate) mod wake;
