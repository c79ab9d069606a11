//! Runtime layer: subscriptions (per-message handlers, batch handlers, the foreign-runtime bridge).

pub(crate) mod batch;
pub(crate) mod bridge;
pub(crate) mod consumer;
pub(crate) mod keeper;
pub(crate) mod types;
