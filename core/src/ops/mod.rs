//! Operations layer: a queue handle and its deliveries, over the storage layer.

pub(crate) mod bulk;
pub(crate) mod delivery;
pub(crate) mod handover;
pub(crate) mod info;
pub(crate) mod messages;
pub(crate) mod queue;
pub(crate) mod settings;
pub(crate) mod shard_health;
pub(crate) mod sharded;
