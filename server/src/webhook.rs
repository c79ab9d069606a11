//! Push delivery: a queue with a webhook has its due messages POSTed to a URL by the server.

/// The webhooks this server runs.
#[derive(Default)]
pub struct Webhooks {}

/// Starts the webhook workers of the queues that have one (until `stop` turns true).
pub fn start(_st: &crate::AppState, _stop: tokio::sync::watch::Receiver<bool>) {}
