//! Storage layer: connections, scripts, wake-ups, settling, and the context a client shares.

pub(crate) mod connection;
pub(crate) mod ctx;
pub(crate) mod dedicated;
pub(crate) mod scripts;
pub(crate) mod settle;
pub(crate) mod wake;
