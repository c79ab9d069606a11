//! `redelay`: the command line of the redelay delay queue.

#[macro_use]
mod output;
mod progress;

mod bench;
mod commands;
mod demo;
mod logs;
mod serve;
mod units;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "redelay", version, about = "Delayed messages on Redis: demo, publish, inspect, dead letters, bench")]
struct Cli {
    /// Redis URL: redis://[user:pass@]host:port[/db], rediss://… (TLS), unix:///path.sock
    // (The help names REDIS_URL without its value: it may hold a password.)
    #[arg(long, global = true, env = "REDIS_URL", hide_env_values = true, default_value = "redis://127.0.0.1:6379")]
    url: String,
    /// Key prefix of the queues
    #[arg(long, global = true, env = "REDELAY_PREFIX", default_value = "redelay")]
    prefix: String,
    /// Shards of the named queue (1 to 256): needed to publish to a new sharded queue; other
    /// commands use the count stored in Redis when it is not given
    #[arg(long, global = true, env = "REDELAY_SHARDS")]
    shards: Option<u32>,
    /// The core's and the gateway's log records on stderr, up to this level
    #[arg(long, global = true, env = "REDELAY_LOG", value_name = "LEVEL", default_value = "warn", value_parser = logs::LEVELS)]
    log: String,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Publish ~30 messages due over ~10 s, consume them, print each one's lateness
    Demo(demo::DemoArgs),
    /// Publish one message
    Publish(commands::PublishArgs),
    /// Counts of queues (all registered queues when none is named)
    Stats(commands::StatsArgs),
    /// Show one message (times in ISO 8601 and relative to now; --json: as GET /v1/queues/Q/messages/ID)
    Peek {
        queue: String,
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Delete one message
    Cancel {
        queue: String,
        id: String,
        /// JSON: {"cancelled": true}, as the gateway's /v1 cancel (none: exit 1, as there a 404)
        #[arg(long)]
        json: bool,
    },
    /// Give a waiting message a new due time
    Reschedule(commands::RescheduleArgs),
    /// Dead letters: list, respawn, purge
    Dead {
        #[command(subcommand)]
        cmd: commands::DeadCmd,
    },
    /// What was published, delivered, acked, retried, dead and expired per minute, hour or UTC day
    History(commands::HistoryArgs),
    /// How many messages fall due per minute (or --every) over the next hour (or --next)
    Upcoming(commands::UpcomingArgs),
    /// A page of the messages in one state, in order
    List(commands::ListArgs),
    /// Find messages by id prefix, header, body text or last error (bounded steps)
    Search(commands::SearchArgs),
    /// Pause a queue: consumers stop receiving (held leases finish), publishes go on
    Pause {
        queue: String,
        /// JSON: {"changed"}, as the gateway's /v1 pause
        #[arg(long)]
        json: bool,
    },
    /// Resume a paused queue
    Resume {
        queue: String,
        /// JSON: {"changed"}, as the gateway's /v1 resume
        #[arg(long)]
        json: bool,
    },
    /// Check a queue's invariant (every id in exactly one state)
    Verify {
        queue: String,
        /// JSON: {"ok", "records", "problems"}, as the gateway's /v1 verify (not ok: exit 1)
        #[arg(long)]
        json: bool,
    },
    /// Delete a queue: every message in every state, and its name from the registry
    Destroy {
        queue: String,
        /// Do not ask (without it: asked on a terminal; else say how many messages would go,
        /// and exit 64)
        #[arg(long)]
        yes: bool,
        /// JSON: {"destroyed": true}, as the gateway's /v1 destroy
        #[arg(long)]
        json: bool,
    },
    /// One action on many messages, named by id or by a search: cancel, reschedule,
    /// deliver-now, respawn, purge
    Bulk(commands::BulkArgs),
    /// Turn a queue's history counters on or off, for every client
    SetHistory {
        queue: String,
        #[arg(value_parser = ["on", "off"])]
        state: String,
        /// JSON: {"changed"}, as the gateway's /v1 history switch
        #[arg(long)]
        json: bool,
    },
    /// Measure publish, deliver+ack, lateness, burst drain and memory (see BENCHMARKS.md)
    Bench(bench::BenchArgs),
    /// HTTP gateway: lmstfy-compatible /api, native /v1 JSON API, webhooks (docs/server.md)
    Serve(serve::ServeArgs),
    /// Tokens of the HTTP gateway: create, list, revoke
    Token {
        #[command(subcommand)]
        cmd: serve::TokenCmd,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Bad arguments exit 64 like any other bad input (clap's own code is 2, which is ours
        // for an unreachable Redis); --help and --version print to stdout and exit 0.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        // One line on stderr, as every error (README, "CLI"): clap's message without its
        // `error:`, usage and tips.
        Err(e) => {
            eprintln!("redelay: {}", one_line(&e.to_string()));
            return ExitCode::from(64);
        }
    };
    logs::to_stderr(&cli.log);
    let result = match cli.cmd {
        Cmd::Demo(a) => demo::run(&cli.url, &cli.prefix, a).await,
        Cmd::Bench(a) => bench::run(&cli.url, cli.shards.unwrap_or(1), a).await,
        Cmd::Serve(a) => serve::serve(&cli.url, &cli.prefix, a).await,
        Cmd::Token { cmd } => serve::token(&cli.url, &cli.prefix, cmd).await,
        cmd => {
            let client = match commands::connect(&cli.url, &cli.prefix).await {
                Ok(c) => commands::Conn { client: c, shards: cli.shards },
                Err(e) => return fail(&e),
            };
            match cmd {
                Cmd::Publish(a) => commands::publish(&client, a).await,
                Cmd::Stats(a) => commands::stats(&client, a).await,
                Cmd::Peek { queue, id, json } => commands::peek(&client, &queue, &id, json).await,
                Cmd::Cancel { queue, id, json } => commands::cancel(&client, &queue, &id, json).await,
                Cmd::Reschedule(a) => commands::reschedule(&client, a).await,
                Cmd::Dead { cmd } => commands::dead(&client, cmd).await,
                Cmd::Verify { queue, json } => commands::verify(&client, &queue, json).await,
                Cmd::Pause { queue, json } => commands::pause(&client, &queue, true, json).await,
                Cmd::Upcoming(a) => commands::upcoming(&client, a).await,
                Cmd::History(a) => commands::history(&client, a).await,
                Cmd::List(a) => commands::list(&client, a).await,
                Cmd::Search(a) => commands::search(&client, a).await,
                Cmd::Resume { queue, json } => commands::pause(&client, &queue, false, json).await,
                Cmd::Destroy { queue, yes, json } => commands::destroy(&client, &queue, yes, json).await,
                Cmd::Bulk(a) => commands::bulk(&client, a).await,
                Cmd::SetHistory { queue, state, json } => commands::set_history(&client, &queue, &state, json).await,
                Cmd::Demo(_) | Cmd::Bench(_) | Cmd::Serve(_) | Cmd::Token { .. } => unreachable!(),
            }
        }
    };
    result.unwrap_or_else(|e| fail(&e))
}

/// clap's error text as one line: its first paragraph (the message, and the lines that go
/// with it such as `[possible values: …]` or the missing arguments), without `error: `.
fn one_line(clap_text: &str) -> String {
    let first = clap_text.split("\n\n").next().unwrap_or_default();
    let lines: Vec<&str> = first.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines.join(" ").trim_start_matches("error: ").to_string()
}

/// The error on stderr, and the exit status of its kind (README, "CLI"): bad input 64, a
/// message or lease that is not there 1 (as `peek` of a missing id), Redis unreachable or
/// failing 2.
fn fail(e: &redelay::Error) -> ExitCode {
    eprintln!("redelay: {e}");
    ExitCode::from(exit_status(e.kind()))
}

fn exit_status(kind: redelay::ErrorKind) -> u8 {
    use redelay::ErrorKind as K;
    match kind {
        K::InvalidArgument => 64,
        K::NotFound | K::LeaseLost => 1,
        // Connection, Timeout, Redis, Handler, and any kind added later.
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn exit_status_by_kind() {
        use redelay::ErrorKind as K;
        let want = [
            (K::InvalidArgument, 64),
            (K::NotFound, 1),
            (K::LeaseLost, 1),
            (K::Connection, 2),
            (K::Timeout, 2),
            (K::Redis, 2),
            (K::Handler, 2),
        ];
        assert_eq!(want.len(), K::ALL.len());
        for (kind, status) in want {
            assert_eq!(super::exit_status(kind), status, "{kind:?}");
        }
    }
}
