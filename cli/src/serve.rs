//! `redelay serve` and `redelay token`: the HTTP gateway (crate redelay-server) and its tokens.

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use redelay::Result;
use redelay_server::auth::TokenStore;
use redelay_server::ServerConfig;

#[derive(Args)]
pub struct ServeArgs {
    /// Data listener: lmstfy's /api and the native /v1 API
    #[arg(long, default_value = "127.0.0.1:7777")]
    listen: SocketAddr,
    /// Admin listener: lmstfy's token routes (admin token only)
    #[arg(long, default_value = "127.0.0.1:7778")]
    admin_listen: SocketAddr,
    /// Do not start the admin listener
    #[arg(long)]
    no_admin: bool,
    /// Name of the environment variable holding the admin token (unset: no admin token)
    #[arg(long, default_value = "REDELAY_ADMIN_TOKEN")]
    admin_token_env: String,
    /// Serve Prometheus metrics at /metrics (without a token)
    #[arg(long)]
    metrics: bool,
    /// Largest message body, bytes
    #[arg(long, default_value_t = redelay::limits::DEFAULT_MAX_BODY_BYTES)]
    max_body_bytes: usize,
    /// PEM file of CA certificates that webhooks to https URLs trust besides the built-in
    /// WebPKI (Mozilla) roots, e.g. a private CA
    #[arg(long, env = "REDELAY_WEBHOOK_CA", value_name = "FILE")]
    webhook_ca: Option<std::path::PathBuf>,
    /// Where webhooks may go although it is not public (loopback, private, link-local ...): an
    /// address block (10.0.0.0/8, 127.0.0.1/32), or a host name allowed whatever it resolves to
    /// (hooks.internal, *.svc.cluster.local); repeat it, or separate with commas
    #[arg(long, env = "REDELAY_WEBHOOK_ALLOW", value_name = "CIDR|HOST", value_delimiter = ',')]
    webhook_allow: Vec<redelay_server::config::WebhookAllow>,
}

#[derive(Subcommand)]
pub enum TokenCmd {
    /// Create a token for a namespace; prints it (only its SHA-256 is stored)
    Create {
        #[arg(help = format!(
            "1 to {} bytes of A-Z a-z 0-9 - _ (its queues are NAMESPACE:QUEUE, at most {} bytes)",
            redelay_server::auth::MAX_NAMESPACE_BYTES,
            redelay::limits::MAX_QUEUE_NAME_BYTES
        ))]
        namespace: String,
        /// Reads only: no publish, consume or changes
        #[arg(long)]
        read_only: bool,
        #[arg(long, default_value = "created by redelay token create")]
        description: String,
    },
    /// List a namespace's tokens by id (their SHA-256)
    List { namespace: String },
    /// Revoke a token (the token or its id)
    Revoke { namespace: String, token: String },
}

pub async fn serve(url: &str, prefix: &str, a: ServeArgs) -> Result<ExitCode> {
    let client = redelay::Client::builder(url).prefix(prefix).max_body_bytes(a.max_body_bytes).connect().await?;
    let admin_token = std::env::var(&a.admin_token_env).ok().filter(|t| !t.is_empty());
    let webhook_ca_pem = match &a.webhook_ca {
        Some(f) => Some(
            std::fs::read(f)
                .map_err(|e| redelay::Error::invalid(format!("webhook_ca: cannot read {}: {e}", f.display())))?,
        ),
        None => None,
    };
    let config = ServerConfig {
        listen: a.listen,
        admin_listen: (!a.no_admin).then_some(a.admin_listen),
        admin_token,
        metrics: a.metrics,
        webhook_ca_pem,
        webhook_allow: a.webhook_allow,
        ..Default::default()
    };
    redelay_server::serve(client, config).await?;
    Ok(ExitCode::SUCCESS)
}

pub async fn token(url: &str, prefix: &str, cmd: TokenCmd) -> Result<ExitCode> {
    let client = redelay::Client::builder(url).prefix(prefix).connect().await?;
    let store = TokenStore::new(&client)?;
    match cmd {
        TokenCmd::Create { namespace, read_only, description } => {
            println!("{}", store.create(&namespace, read_only, &description, None).await?);
        }
        TokenCmd::List { namespace } => {
            for (id, i) in store.list(&namespace).await? {
                let mode = if i.read_only { "read-only" } else { "read-write" };
                println!("{id}  {mode}  {}", crate::output::printable(&i.description));
            }
        }
        TokenCmd::Revoke { namespace, token } => {
            if !store.revoke(&namespace, &token).await? {
                eprintln!("redelay: no such token in namespace {namespace:?}");
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
