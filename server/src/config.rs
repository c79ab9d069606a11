//! What `redelay serve` is started with.

use std::net::SocketAddr;

/// lmstfy's defaults for parameters a request leaves out (its `config/demo-conf.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LmstfyDefaults {
    /// Time to live of a published job, seconds (0 = forever).
    pub ttl_s: u64,
    /// Deliveries of a job.
    pub tries: u32,
    /// Lease of a consumed job, seconds.
    pub ttr_s: u64,
    /// Long-poll of a consume, seconds.
    pub timeout_s: u64,
}

impl Default for LmstfyDefaults {
    fn default() -> Self {
        LmstfyDefaults { ttl_s: 24 * 3600, tries: 1, ttr_s: 120, timeout_s: 0 }
    }
}

/// The server's settings (the Redis connection itself is the [`redelay::Client`] it is given).
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The data listener: lmstfy's `/api/...` and the native `/v1/...`.
    pub listen: SocketAddr,
    /// The admin listener: lmstfy's token routes. None: not started.
    pub admin_listen: Option<SocketAddr>,
    /// The admin token (every namespace, writes, token management). None: no admin token.
    pub admin_token: Option<String>,
    /// Serve Prometheus text at `/metrics` without a token.
    pub metrics: bool,
    pub lmstfy: LmstfyDefaults,
    /// CA certificates (PEM) that webhooks to https URLs trust besides the WebPKI roots built
    /// into the binary, e.g. a private CA. None: the WebPKI roots only.
    pub webhook_ca_pem: Option<Vec<u8>>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: "127.0.0.1:7777".parse().unwrap(),
            admin_listen: Some("127.0.0.1:7778".parse().unwrap()),
            admin_token: None,
            metrics: false,
            lmstfy: LmstfyDefaults::default(),
            webhook_ca_pem: None,
        }
    }
}
