//! The inspection and change subcommands.

use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::{ArgGroup, Args, Subcommand};
use redelay::limits;
use redelay::wire::to_json;
use redelay::{
    BulkAction, BulkOptions, BulkReport, Client, Due, Message, MessageInfo, Queue, QueueOptions, RespawnExpiry, Result,
    Search, SearchPage, Select, Stats,
};
use redelay_server::wire;

use crate::output::{json, printable};
use crate::progress;
use crate::units::{human, parse_duration, parse_time, relative, when};

/// A refusal of the core's (`buckets: must be 1 to 1000, got 6000`) prefixed with the flags the
/// argument came from; other errors as they are.
fn from_flags(flags: String) -> impl FnOnce(redelay::Error) -> redelay::Error {
    move |e| match e.kind() {
        redelay::ErrorKind::InvalidArgument => redelay::Error::invalid(format!("{flags}: {}", e.message())),
        _ => e,
    }
}

pub async fn connect(url: &str, prefix: &str) -> Result<Client> {
    Client::builder(url).prefix(prefix).connect_timeout(Duration::from_secs(3)).connect().await
}

/// The client, and how a command opens the queue it names: with `--shards` when given, else
/// with the shard count stored in Redis (1 for a plain queue); either way a name refused since
/// it was stored (`.` or `..`) opens while the registry holds it, to be read and destroyed.
pub struct Conn {
    pub client: Client,
    pub shards: Option<u32>,
}

impl std::ops::Deref for Conn {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

impl Conn {
    pub async fn queue(&self, name: &str) -> Result<Queue> {
        match self.shards {
            Some(n) => self.client.queue_stored_with(name, QueueOptions::shards(n)).await,
            None => self.client.queue_stored(name).await,
        }
    }
}

/// A due time, `--delay` or `--at` (not both): `publish`, `reschedule` and `bulk …
/// reschedule`, each with its own words for them (`mut_arg`; these are `reschedule`'s).
#[derive(Args)]
#[group(skip)]
pub struct DueArgs {
    /// Due after this long from now: 250ms, 3s, 30m, 2h (a bare number is milliseconds)
    #[arg(long, value_parser = parse_duration, allow_hyphen_values = true)]
    pub delay: Option<Duration>,
    /// Due at this time: 2026-11-23T08:00:00Z (ISO 8601 with Z or an offset) or epoch ms
    #[arg(long, visible_alias = "at-ms", conflicts_with = "delay", value_parser = parse_time)]
    pub at: Option<SystemTime>,
}

impl DueArgs {
    fn given(&self) -> bool {
        self.delay.is_some() || self.at.is_some()
    }
}

#[derive(Args)]
#[command(mut_arg("delay", |a| a.help("Due after this long: 250ms, 3s, 30m, 2h, 7d (a bare number is milliseconds)")))]
pub struct PublishArgs {
    pub queue: String,
    /// The body (UTF-8 text)
    pub body: String,
    #[command(flatten)]
    pub due: DueArgs,
    /// Your id (generated when absent)
    #[arg(long)]
    pub id: Option<String>,
    /// A header name=value (repeatable)
    #[arg(long = "header", value_name = "NAME=VALUE")]
    pub headers: Vec<String>,
    #[arg(long)]
    pub max_attempts: Option<u32>,
    /// Lease length per delivery: 30s, 5m ...
    #[arg(long, value_parser = parse_duration, allow_hyphen_values = true)]
    pub ttr: Option<Duration>,
    /// Replace a message with the same id
    #[arg(long)]
    pub replace: bool,
    /// Not delivered after this long from now: a dead letter ("expired") instead
    #[arg(long, value_parser = parse_duration, allow_hyphen_values = true)]
    pub expires_in: Option<Duration>,
    /// With --expires-in: delete the message on expiry instead of keeping a dead letter
    #[arg(long, requires = "expires_in")]
    pub drop_on_expiry: bool,
    /// JSON: {"id", "status"}, as the gateway's /v1 publish
    #[arg(long)]
    pub json: bool,
}

pub async fn publish(client: &Conn, a: PublishArgs) -> Result<ExitCode> {
    let q = client.queue(&a.queue).await?;
    let mut m = Message::new(a.body.into_bytes()).replace(a.replace);
    if let Some(d) = a.due.delay {
        m = m.delay(d);
    }
    if let Some(at) = a.due.at {
        m = m.at(at);
    }
    if let Some(id) = a.id {
        m = m.id(id);
    }
    for h in a.headers {
        let (k, v) =
            h.split_once('=').ok_or_else(|| redelay::Error::invalid(format!("header: {h:?} is not NAME=VALUE")))?;
        m = m.header(k, v);
    }
    if let Some(n) = a.max_attempts {
        m = m.max_attempts(n);
    }
    if let Some(t) = a.ttr {
        m = m.ttr(t);
    }
    if let Some(e) = a.expires_in {
        m = m.expires_in(e).drop_on_expiry(a.drop_on_expiry);
    }
    let p = q.publish(m).await?;
    if a.json {
        json(&to_json(&p));
    } else {
        println!("{} {}", p.id, format!("{:?}", p.status).to_lowercase());
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct StatsArgs {
    /// Queues to show (default: every registered queue)
    pub queues: Vec<String>,
    /// JSON: {"queues": [{"queue", "stats"}]}, one row per queue however many are named, its
    /// "stats" the gateway's /v1 stats. A queue whose counts could not be read (a shard out of
    /// reach) is {"queue", "error"} and the exit status is 2, the other queues shown as usual
    #[arg(long)]
    pub json: bool,
    /// Prometheus text exposition format
    #[arg(long, conflicts_with = "json")]
    pub prometheus: bool,
}

/// The registered queues. One whose name is refused since it was stored (`.` or `..`, from an
/// older version) is shown too, with a note on stderr: it can be read and destroyed, nothing
/// else.
async fn registered(client: &Conn) -> Result<Vec<String>> {
    let names = client.queues().await?;
    for n in &names {
        if let Err(e) = redelay::limits::check_queue_name(n) {
            eprintln!(
                "redelay: queue {n:?}: {}; stored before such names were refused, it can be read \
                 and destroyed (`redelay destroy {n} --yes`), not written to",
                e.message()
            );
        }
    }
    Ok(names)
}

/// The JSON of `stats`, however many queues are named: `{"queues": [{"queue", "stats"}]}`, the
/// rows of `GET /v1/overview` without their last hour (each `stats` as `GET …/stats` gives it),
/// so that a script reads one queue's answer as it reads several. A queue whose counts could
/// not be read is a row `{"queue", "error": {"kind", "code", "message"}}`, as in the overview.
fn stats_json(rows: &[(String, Result<Read>)]) -> serde_json::Value {
    let row = |(n, r): &(String, Result<Read>)| match r {
        Ok((s, _)) => wire::queue_stats(n, s),
        Err(e) => wire::queue_error(n, e),
    };
    serde_json::json!({ "queues": rows.iter().map(row).collect::<Vec<_>>() })
}

/// A queue's counts, and its history totals for `--prometheus`.
type Read = (Stats, Option<redelay::HistoryPoint>);

/// `redelay stats`: every queue's counts. A queue whose counts cannot be read (a sharded
/// queue with a shard out of reach, its node failing) does not hide the others: its line (or
/// JSON row) says why, the others are printed as usual, and the exit status is its error's
/// (2: README, "CLI"). Bad input (a queue name refused) still refuses the whole command.
pub async fn stats(client: &Conn, a: StatsArgs) -> Result<ExitCode> {
    let names = if a.queues.is_empty() { registered(client).await? } else { a.queues };
    let mut rows: Vec<(String, Result<Read>)> = Vec::new();
    for n in names {
        let read = async {
            let q = client.queue(&n).await?;
            let s = q.stats().await?;
            let totals = if a.prometheus { Some(q.history_totals().await?) } else { None };
            Ok::<_, redelay::Error>((s, totals))
        }
        .await;
        match read {
            Err(e) if e.kind() == redelay::ErrorKind::InvalidArgument => return Err(e),
            read => rows.push((n, read)),
        }
    }
    // Said on stderr too, so that a script or cron job sees what failed: the queues' names
    // (their lines or rows say why), or with --prometheus, whose output has no room for it,
    // one line each with the error.
    let failures: Vec<(String, String)> = rows
        .iter()
        .filter_map(|(n, r)| r.as_ref().err().map(|e| (format!("{:?}", printable(n)), e.to_string())))
        .collect();
    let failed = rows.iter().find_map(|(_, r)| r.as_ref().err()).map(|e| crate::exit_status(e.kind()));
    if a.json {
        json(&stats_json(&rows));
    } else if a.prometheus {
        let (mut ok, mut totals) = (Vec::new(), Vec::new());
        for (n, r) in rows {
            // A queue that failed is left out (said on stderr).
            if let Ok((s, t)) = r {
                ok.push((n, s));
                totals.extend(t); // always there with --prometheus
            }
        }
        print!("{}", prometheus(client.prefix(), &ok, &totals));
    } else {
        // `lapsed` is the part of `leased` whose lease ran out (not a state of its own).
        println!(
            "{:<24} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  next due",
            "queue", "total", "scheduled", "ready", "leased", "lapsed", "dead"
        );
        for (n, r) in &rows {
            let s = match r {
                Ok((s, _)) => s,
                Err(e) => {
                    println!("{n:<24} {:>10}  {}", "unavailable", printable(e.message()));
                    continue;
                }
            };
            let mut next = s.next_due.map_or("-".to_string(), |t| relative(t, s.now));
            if s.paused {
                next.push_str("  (paused)");
            }
            println!(
                "{n:<24} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  {next}",
                s.total, s.scheduled, s.ready, s.leased, s.lapsed, s.dead
            );
        }
        if rows.is_empty() {
            println!("(no queues under prefix {:?})", client.prefix());
        }
    }
    if a.prometheus {
        for (n, e) in &failures {
            eprintln!("redelay: queue {n} left out: {e}");
        }
    } else if !failures.is_empty() {
        let names: Vec<&str> = failures.iter().map(|(n, _)| n.as_str()).collect();
        let (count, why) = match (names.len(), a.json) {
            (1, false) => ("1 queue".to_string(), "its line says why"),
            (n, false) => (format!("{n} queues"), "their lines say why"),
            (1, true) => ("1 queue".to_string(), "its row's \"error\" says why"),
            (n, true) => (format!("{n} queues"), "their rows' \"error\" says why"),
        };
        eprintln!("redelay: {count} could not be read ({why}): {}", names.join(", "));
    }
    Ok(failed.map_or(ExitCode::SUCCESS, ExitCode::from))
}

/// A Prometheus counter: its name, its help text and how to read it from a queue's totals.
type Counter = (&'static str, &'static str, fn(&redelay::HistoryPoint) -> u64);

fn prometheus(prefix: &str, rows: &[(String, Stats)], totals: &[redelay::HistoryPoint]) -> String {
    let mut out = String::new();
    let counters: [Counter; 6] = [
        ("published", "Messages stored or replaced.", |t| t.published),
        ("delivered", "Deliveries (leases handed to consumers).", |t| t.delivered),
        ("acked", "Messages acknowledged.", |t| t.acked),
        ("retried", "Failed attempts to be tried again.", |t| t.retried),
        ("dead", "Messages that became dead letters out of attempts.", |t| t.dead),
        ("expired", "Messages that expired before delivery (dead-lettered or dropped).", |t| t.expired),
    ];
    for (name, help, get) in counters {
        out.push_str(&format!("# HELP redelay_{name}_total {help}\n# TYPE redelay_{name}_total counter\n"));
        for ((n, _), t) in rows.iter().zip(totals) {
            out.push_str(&format!("redelay_{name}_total{{prefix=\"{prefix}\",queue=\"{n}\"}} {}\n", get(t)));
        }
    }
    out.push_str(
        "# HELP redelay_lateness_seconds Delivery time minus due time.\n# TYPE redelay_lateness_seconds histogram\n",
    );
    for ((n, _), t) in rows.iter().zip(totals) {
        let mut cum = 0;
        for (i, c) in t.lateness.iter().enumerate() {
            cum += c;
            let ub = redelay::LATENESS_BUCKETS_MS[i];
            let le = if ub.is_finite() { format!("{}", ub / 1000.0) } else { "+Inf".to_string() };
            out.push_str(&format!(
                "redelay_lateness_seconds_bucket{{prefix=\"{prefix}\",queue=\"{n}\",le=\"{le}\"}} {cum}\n"
            ));
        }
        out.push_str(&format!(
            "redelay_lateness_seconds_sum{{prefix=\"{prefix}\",queue=\"{n}\"}} {}\n",
            t.lateness_sum_ms as f64 / 1000.0
        ));
        out.push_str(&format!("redelay_lateness_seconds_count{{prefix=\"{prefix}\",queue=\"{n}\"}} {cum}\n"));
    }
    out.push_str("# HELP redelay_messages Messages stored, by state.\n# TYPE redelay_messages gauge\n");
    for (n, s) in rows {
        for (state, v) in [("scheduled", s.scheduled), ("ready", s.ready), ("leased", s.leased), ("dead", s.dead)] {
            out.push_str(&format!("redelay_messages{{prefix=\"{prefix}\",queue=\"{n}\",state=\"{state}\"}} {v}\n"));
        }
    }
    out.push_str("# HELP redelay_lapsed_leases Leased messages whose lease deadline has passed (part of the leased count).\n# TYPE redelay_lapsed_leases gauge\n");
    for (n, s) in rows {
        out.push_str(&format!("redelay_lapsed_leases{{prefix=\"{prefix}\",queue=\"{n}\"}} {}\n", s.lapsed));
    }
    out.push_str("# HELP redelay_paused 1 while the queue is paused.\n# TYPE redelay_paused gauge\n");
    for (n, s) in rows {
        out.push_str(&format!("redelay_paused{{prefix=\"{prefix}\",queue=\"{n}\"}} {}\n", u8::from(s.paused)));
    }
    out.push_str("# HELP redelay_ready_lag_seconds Age of the oldest due message not yet delivered.\n# TYPE redelay_ready_lag_seconds gauge\n");
    for (n, s) in rows {
        let lag = s.oldest_ready_due.map_or(0.0, |t| s.now.duration_since(t).unwrap_or_default().as_secs_f64());
        out.push_str(&format!("redelay_ready_lag_seconds{{prefix=\"{prefix}\",queue=\"{n}\"}} {lag}\n"));
    }
    out
}

/// One message for people, its times relative to `now` (the Redis clock); its data escaped
/// (`printable`).
fn print_info(m: &MessageInfo, now: SystemTime) {
    println!("id:           {}", printable(&m.id));
    println!("state:        {}", m.state.as_str());
    println!("attempts:     {} of {}", m.attempts, m.max_attempts);
    println!("published:    {}", when(m.published_at, now));
    println!("due:          {}", when(m.due_at, now));
    if let Some(t) = m.lease_deadline {
        println!("lease until:  {}", when(t, now));
    }
    if let Some(t) = m.died_at {
        println!("died:         {}", when(t, now));
    }
    if let Some(t) = m.expires_at {
        println!("expires:      {}", when(t, now));
    }
    println!("ttr:          {}", human(m.ttr));
    for (k, v) in &m.headers {
        println!("header:       {}={}", printable(k), printable(v));
    }
    if let Some(e) = &m.last_error {
        println!("last error:   {}", printable(e));
    }
    match std::str::from_utf8(&m.body) {
        Ok(s) => println!("body:         {}", printable(s)),
        Err(_) => println!("body:         ({} bytes of binary)", m.body.len()),
    }
}

pub async fn peek(client: &Conn, queue: &str, id: &str, as_json: bool) -> Result<ExitCode> {
    let q = client.queue(queue).await?;
    match q.peek(id).await? {
        Some(m) if as_json => {
            json(&wire::message(&m));
            Ok(ExitCode::SUCCESS)
        }
        Some(m) => {
            print_info(&m, q.redis_now().await?);
            Ok(ExitCode::SUCCESS)
        }
        None => {
            eprintln!("redelay: no message with id {id:?} in queue {queue:?}");
            Ok(ExitCode::from(1))
        }
    }
}

pub async fn cancel(client: &Conn, queue: &str, id: &str, as_json: bool) -> Result<ExitCode> {
    if client.queue(queue).await?.cancel(id).await? {
        if as_json {
            json(&wire::cancelled());
        } else {
            println!("cancelled {id}");
        }
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("redelay: no message with id {id:?} in queue {queue:?}");
        Ok(ExitCode::from(1))
    }
}

#[derive(Args)]
#[command(group(ArgGroup::new("due").required(true).args(["delay", "at"])))]
pub struct RescheduleArgs {
    pub queue: String,
    pub id: String,
    #[command(flatten)]
    pub due: DueArgs,
    /// Print JSON: {"due_at_ms"} (epoch ms), as the gateway's /v1 reschedule
    #[arg(long)]
    pub json: bool,
}

pub async fn reschedule(client: &Conn, a: RescheduleArgs) -> Result<ExitCode> {
    let due = Due::required(a.due.delay, a.due.at)?;
    let q = client.queue(&a.queue).await?;
    let t = q.reschedule(&a.id, due).await?;
    if a.json {
        json(&wire::rescheduled(t));
    } else {
        println!("{} due at {}", a.id, when(t, q.redis_now().await?));
    }
    Ok(ExitCode::SUCCESS)
}

/// The help of a `--limit` of a page: the core's range, and its default next to the CLI's.
fn page_help(what: &str, library_default: usize) -> String {
    format!("{what} per page, 1 to {} (the CLI's default is 20; the library's is {library_default})", limits::MAX_FETCH)
}

#[derive(Subcommand)]
pub enum DeadCmd {
    /// List dead letters, oldest death first
    List {
        queue: String,
        #[arg(long, default_value_t = 20, help = page_help("Dead letters", limits::DEFAULT_DEAD_LETTER_LIMIT))]
        limit: usize,
        #[arg(long, default_value_t = 0)]
        offset: usize,
        /// JSON: {"items"}, as the gateway's /v1 dead letters
        #[arg(long)]
        json: bool,
    },
    /// Bring dead letters back (attempts reset, due now); each keeps its expiry unless told
    Respawn(RespawnArgs),
    /// Delete dead letters for good (--oldest and --all ask first, or take --yes)
    Purge(PurgeArgs),
}

#[derive(Args)]
pub struct DeadSel {
    pub queue: String,
    /// These ids
    pub ids: Vec<String>,
    /// The N that died first
    #[arg(long, conflicts_with_all = ["ids", "all"])]
    pub oldest: Option<usize>,
    /// All of them
    #[arg(long, conflicts_with = "ids")]
    pub all: bool,
}

#[derive(Args)]
pub struct RespawnArgs {
    #[command(flatten)]
    pub sel: DeadSel,
    #[command(flatten)]
    pub expiry: ExpiryArgs,
    /// JSON: {"count"}, as the gateway's /v1 respawn
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct PurgeArgs {
    #[command(flatten)]
    pub sel: DeadSel,
    /// Do not ask before purging --oldest N or --all (without it: asked on a terminal, refused
    /// with exit 64 elsewhere); ids named are purged without asking
    #[arg(long)]
    pub yes: bool,
    /// JSON: {"count"}, as the gateway's /v1 purge
    #[arg(long)]
    pub json: bool,
}

/// The expiry a respawn gives (`dead respawn`, `bulk … respawn`).
#[derive(Args)]
pub struct ExpiryArgs {
    /// A fresh expiry, this long after the respawn: 30m, 1d ...
    #[arg(long, value_parser = parse_duration, allow_hyphen_values = true)]
    pub expires_in: Option<Duration>,
    /// No expiry any more
    #[arg(long, conflicts_with = "expires_in")]
    pub clear_expiry: bool,
}

impl ExpiryArgs {
    fn expiry(&self) -> Result<RespawnExpiry> {
        RespawnExpiry::from_parts(self.expires_in, self.clear_expiry)
    }
}

impl DeadSel {
    fn select(&self) -> Result<Select> {
        if self.all {
            Ok(Select::All)
        } else if let Some(n) = self.oldest {
            Ok(Select::Oldest(n))
        } else if !self.ids.is_empty() {
            Ok(Select::Ids(self.ids.clone()))
        } else {
            Err(redelay::Error::invalid("selection: name ids, or use --oldest N or --all"))
        }
    }
}

pub async fn dead(client: &Conn, cmd: DeadCmd) -> Result<ExitCode> {
    match cmd {
        DeadCmd::List { queue, limit, offset, json: as_json } => {
            let q = client.queue(&queue).await?;
            let list = q.dead_letters(offset, limit).await?;
            if as_json {
                json(&wire::dead_letters(&list));
            } else {
                let now = q.redis_now().await?;
                for m in &list {
                    let died = m.died_at.map_or("-".into(), |t| relative(t, now));
                    println!(
                        "{:<24} died {:<14} after {} attempts: {}",
                        printable(&m.id),
                        died,
                        m.attempts,
                        printable(m.last_error.as_deref().unwrap_or("-"))
                    );
                }
                if list.is_empty() {
                    println!("(no dead letters in {queue:?})");
                }
            }
        }
        DeadCmd::Respawn(RespawnArgs { sel, expiry, json: as_json }) => {
            let expiry = expiry.expiry()?;
            let (q, select) = (client.queue(&sel.queue).await?, sel.select()?);
            let run = progress::in_steps("respawned 0", |mut step| {
                q.respawn_with_progress(select, expiry, move |n| step(format!("respawned {n}")))
            });
            return finish(run.await, as_json, |n| wire::count(*n), |n| format!("respawned {n}"));
        }
        DeadCmd::Purge(PurgeArgs { sel, yes, json: as_json }) => {
            let select = sel.select()?;
            let q = client.queue(&sel.queue).await?;
            // --oldest N and --all ask first (how many would go); ids named are purged as named.
            let most = match select {
                Select::Ids(_) => None,
                Select::Oldest(k) => Some(k as u64),
                Select::All => Some(u64::MAX),
            };
            let purge = |select| {
                progress::in_steps("purged 0", |mut step| {
                    q.purge_dead_with_progress(select, move |n| step(format!("purged {n}")))
                })
            };
            let n = match most {
                Some(k) => {
                    let dead = q.stats().await?.dead;
                    let of = format!("dead letter{} of queue {:?}", if dead == 1 { "" } else { "s" }, sel.queue);
                    let what = if k >= dead {
                        format!("all {dead} {of}")
                    } else {
                        format!("the {k} oldest of the {dead} {of}")
                    };
                    if k.min(dead) == 0 {
                        Ok(Ok(0))
                    } else if confirm(&what, yes)? {
                        purge(select).await
                    } else {
                        return Ok(ExitCode::from(1));
                    }
                }
                None => purge(select).await,
            };
            return finish(n, as_json, |n| wire::count(*n), |n| format!("purged {n}"));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The end of a long run (`dead respawn`, `dead purge`, `bulk`), as [`progress::in_steps`] gives
/// it: interrupted, its exit status; done, its result on stdout as JSON (`as_json`: `to_json`)
/// or as text (`said`). An error goes on to `main` (stderr, its exit status); one that stopped
/// the run after it had done something says how far it got (`Error::so_far`), and with
/// `--json` those totals go to stdout first, as the result's JSON would give them, with the
/// error as the gateway's `/v1` gives one: `{"count": 1000, "error": {"code", "message",
/// "so_far": {"count": 1000}}}`.
fn finish<T>(
    run: Result<std::result::Result<T, ExitCode>>,
    as_json: bool,
    to_json: impl Fn(&T) -> serde_json::Value,
    said: impl Fn(&T) -> String,
) -> Result<ExitCode> {
    match run {
        Ok(Ok(r)) if as_json => json(&to_json(&r)),
        Ok(Ok(r)) => println!("{}", said(&r)),
        Ok(Err(interrupted)) => return Ok(interrupted),
        Err(e) => {
            if let (true, Some(so_far)) = (as_json, e.so_far()) {
                let mut out: serde_json::Map<_, _> = so_far.iter().map(|(k, n)| (k.to_string(), (*n).into())).collect();
                let error =
                    serde_json::json!({ "code": e.kind().code(), "message": e.message(), "so_far": out.clone() });
                out.insert("error".into(), error);
                json(&out.into());
            }
            return Err(e);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks before deleting many messages (`what`: `all 12 dead letters of queue "q"`). With
/// `yes`, nothing is asked. With stdin and stderr a terminal, the question goes to stderr and
/// the answer comes from stdin: `y` or `yes` goes on; anything else (or none) is a no:
/// Ok(false), nothing is deleted (the command exits 1). Without a terminal to ask on (stderr
/// sent to a file would hide the question), the deletion is refused, naming `--yes` (bad
/// input, exit 64): a script says what it wants.
fn confirm(what: &str, yes: bool) -> Result<bool> {
    use std::io::IsTerminal as _;
    if yes {
        return Ok(true);
    }
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(redelay::Error::invalid(format!(
            "would delete {what}; pass --yes (no terminal to ask on: stdin and stderr must both be one)"
        )));
    }
    eprint!("redelay: delete {what}? [y/N] ");
    let mut answer = String::new();
    let confirmed = std::io::stdin().read_line(&mut answer).is_ok()
        && matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes");
    if !confirmed {
        eprintln!("redelay: not confirmed: nothing deleted");
    }
    Ok(confirmed)
}

/// `pause` / `resume`: consumers of the queue stop (or start again) receiving.
pub async fn pause(client: &Conn, queue: &str, pause: bool, as_json: bool) -> Result<ExitCode> {
    let q = client.queue(queue).await?;
    let changed = if pause { q.pause().await? } else { q.resume().await? };
    if as_json {
        json(&wire::changed(changed));
        return Ok(ExitCode::SUCCESS);
    }
    let what = if pause { "paused" } else { "resumed" };
    println!(
        "{queue}: {}",
        if changed { what.to_string() } else { format!("already {}", if pause { "paused" } else { "running" }) }
    );
    Ok(ExitCode::SUCCESS)
}

/// `destroy`: deletes the queue, every message in every state and its name from the registry;
/// without `yes`, asks on a terminal ([`confirm`]), else says what it would delete and refuses
/// (bad input: 64). A name with no
/// message that is not registered is no queue (exit 1, as a missing message's), but may still
/// hold what `pause` or `set-history` stored under it: with `yes` that goes too.
pub async fn destroy(client: &Conn, queue: &str, yes: bool, as_json: bool) -> Result<ExitCode> {
    let q = client.queue(queue).await?;
    let n = q.stats().await?.total;
    if n == 0 && !client.queues().await?.iter().any(|r| r == queue) {
        let none = format!("no queue {queue:?} under prefix {:?}: no messages, not registered", client.prefix());
        if yes {
            q.destroy().await?;
            eprintln!("redelay: {none} (anything else stored under the name, such as a pause, is deleted)");
        } else {
            eprintln!("redelay: {none} (--yes still deletes anything else stored under the name, such as a pause)");
        }
        return Ok(ExitCode::from(1));
    }
    let what = format!("{n} message{} of queue {queue:?}", if n == 1 { "" } else { "s" });
    if !confirm(&what, yes)? {
        return Ok(ExitCode::from(1));
    }
    q.destroy().await?;
    if as_json {
        json(&wire::destroyed());
    } else {
        println!("destroyed: {what}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The bulk actions as typed: the core's names (`BulkAction`), `deliver-now` hyphenated (the
/// core's `deliver_now` is taken too).
fn bulk_action() -> impl clap::builder::TypedValueParser<Value = BulkAction> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let names = ["cancel", "reschedule", "deliver-now", "respawn", "purge"].map(PossibleValue::new);
    PossibleValuesParser::new(names.map(|v| if v.get_name() == "deliver-now" { v.alias("deliver_now") } else { v }))
        .map(|n| serde_json::from_value(n.replace('-', "_").into()).expect("a possible value is a BulkAction"))
}

#[derive(Args)]
#[command(
    mut_arg("delay", |a| a.help("reschedule: due after this long from now: 250ms, 3s, 30m, 2h (a bare number is ms)")),
    mut_arg("at", |a| a.help(
        "reschedule: due at this time: 2026-11-23T08:00:00Z (ISO 8601 with Z or an offset) or epoch ms"
    ))
)]
pub struct BulkArgs {
    pub queue: String,
    /// cancel, reschedule (--delay or --at), deliver-now (waiting ones due now), respawn or
    /// purge (dead letters)
    #[arg(value_parser = bulk_action())]
    pub action: BulkAction,
    #[arg(conflicts_with_all = SEARCH_FLAGS, help = format!(
        "These ids (at most {}); or one search flag: --id-prefix, --header, --body, --error",
        limits::MAX_BULK_IDS
    ))]
    pub ids: Vec<String>,
    #[command(flatten)]
    pub what: SearchWhat,
    #[command(flatten)]
    pub due: DueArgs,
    #[command(flatten)]
    pub expiry: ExpiryArgs,
    /// cancel or purge by a search: do not ask (without it: asked on a terminal, refused with
    /// exit 64 elsewhere); ids named are acted on without asking
    #[arg(long)]
    pub yes: bool,
    /// Print the report as JSON: {"matched", "done", "scanned"}, as the gateway's /v1 bulk
    #[arg(long)]
    pub json: bool,
}

/// What a search matches, for a question: `whose last error contains "timeout"`.
fn matching(s: &Search) -> String {
    match s {
        Search::IdPrefix(p) => format!("whose id starts with {p:?}"),
        Search::Header(k, v) => format!("with header {k:?} = {v:?}"),
        Search::Body(b) => format!("whose body contains {:?}", String::from_utf8_lossy(b)),
        Search::Error(e) => format!("whose last error contains {e:?}"),
    }
}

/// `bulk`: one action on the ids named or on every message a search finds, in bounded steps
/// (not atomic: messages changed meanwhile may or may not be included).
pub async fn bulk(client: &Conn, a: BulkArgs) -> Result<ExitCode> {
    let action = a.action;
    let timed = a.due.given();
    if action == BulkAction::Reschedule && !timed {
        return Err(redelay::Error::invalid("--delay / --at: reschedule needs a new due time, give one of them"));
    }
    if action != BulkAction::Reschedule && timed {
        return Err(redelay::Error::invalid("--delay / --at: only reschedule takes a due time"));
    }
    let expiry = a.expiry.expiry()?;
    if action != BulkAction::Respawn && expiry != RespawnExpiry::Keep {
        return Err(redelay::Error::invalid("--expires-in / --clear-expiry: only respawn takes an expiry"));
    }
    let mut opts = match a.what.query()? {
        Some(search) => BulkOptions::search(action, search),
        None if !a.ids.is_empty() => BulkOptions::ids(action, a.ids),
        None => {
            return Err(redelay::Error::invalid("selection: name ids, or use --id-prefix, --header, --body or --error"))
        }
    }
    .expiry(expiry);
    if timed {
        opts = opts.due(Due::required(a.due.delay, a.due.at)?);
    }
    let q = client.queue(&a.queue).await?;
    if let (Some(search), BulkAction::Cancel | BulkAction::Purge) = (&opts.search, action) {
        let s = q.stats().await?;
        let (n, of) = if action == BulkAction::Cancel { (s.total, "message") } else { (s.dead, "dead letter") };
        let what = format!("every {of} of queue {:?} {} (of its {n})", a.queue, matching(search));
        if !confirm(&what, a.yes)? {
            return Ok(ExitCode::from(1));
        }
    }
    let start = BulkReport::default().to_string();
    let run = progress::in_steps(&start, |mut step| q.bulk_with_progress(&opts, move |r| step(r.to_string())));
    finish(run.await, a.json, to_json, BulkReport::to_string)
}

/// `set-history on|off`: the queue's history counters, for every client.
pub async fn set_history(client: &Conn, queue: &str, state: &str, as_json: bool) -> Result<ExitCode> {
    let changed = client.queue(queue).await?.set_history(state == "on").await?;
    if as_json {
        json(&wire::changed(changed));
        return Ok(ExitCode::SUCCESS);
    }
    println!("{queue}: history {} {state}", if changed { "turned" } else { "already" });
    Ok(ExitCode::SUCCESS)
}

pub async fn verify(client: &Conn, queue: &str, as_json: bool) -> Result<ExitCode> {
    let r = client.queue(queue).await?.verify().await?;
    if as_json {
        json(&wire::verified(&r));
        return Ok(ExitCode::from(if r.is_ok() { 0 } else { 1 }));
    }
    if r.is_ok() {
        println!("ok: {} records, every id in exactly one state", r.records);
        Ok(ExitCode::SUCCESS)
    } else {
        for p in &r.problems {
            println!("problem: {p}");
        }
        Ok(ExitCode::from(1))
    }
}

/// A duration as typed, for errors that name it.
#[derive(Clone)]
pub struct Typed {
    text: String,
    d: Duration,
}

fn typed(s: &str) -> std::result::Result<Typed, String> {
    Ok(Typed { text: s.trim().to_string(), d: parse_duration(s)? })
}

#[derive(Args)]
pub struct UpcomingArgs {
    pub queue: String,
    #[arg(long, default_value = "1h", value_parser = typed, help = format!(
        "How far ahead to look, from now by the Redis clock: 1h, 2d, 1h30m ... (the whole of it \
         in buckets of --every: at most {} of them)",
        limits::MAX_UPCOMING_BUCKETS
    ))]
    pub next: Typed,
    /// Bucket width: 1m, 1h ... (whole ms, at least 1ms; one longer than --next is cut to it)
    #[arg(long, default_value = "1m", value_parser = typed)]
    pub every: Typed,
    /// JSON: {"buckets": [{"at_ms", "count"}]}, as the gateway's /v1 upcoming
    #[arg(long)]
    pub json: bool,
}

/// The width (whole ms) and number of the buckets of `upcoming`: enough to cover all of
/// `next` (the last one may reach past it), at most the core's
/// [`MAX_UPCOMING_BUCKETS`](limits::MAX_UPCOMING_BUCKETS); a width longer than `next` is cut
/// to it (one bucket).
fn buckets(next: &Typed, every: &Typed) -> Result<(Duration, usize)> {
    let invalid = redelay::Error::invalid;
    if next.d < Duration::from_millis(1) {
        return Err(invalid(format!("--next: must be at least 1ms, got {:?}", next.text)));
    }
    if every.d < Duration::from_millis(1) {
        return Err(invalid(format!("--every: must be at least 1ms, got {:?}", every.text)));
    }
    let width_ms = every.d.min(next.d).as_millis();
    let n = next.d.as_micros().div_ceil(width_ms * 1000);
    if n > limits::MAX_UPCOMING_BUCKETS as u128 {
        return Err(invalid(format!(
            "--next / --every: {} in buckets of {} is {n} buckets, more than {}: widen --every or shorten --next",
            next.text,
            every.text,
            limits::MAX_UPCOMING_BUCKETS
        )));
    }
    Ok((Duration::from_millis(width_ms as u64), n as usize))
}

/// How many messages fall due per bucket, as a bar chart.
pub async fn upcoming(client: &Conn, a: UpcomingArgs) -> Result<ExitCode> {
    let (width, n) = buckets(&a.next, &a.every)?;
    let q = client.queue(&a.queue).await?;
    let b = q.upcoming(q.redis_now().await?, width, n).await.map_err(from_flags("--next / --every".into()))?;
    if a.json {
        json(&wire::upcoming(&b));
        return Ok(ExitCode::SUCCESS);
    }
    let max = b.iter().map(|(_, c)| *c).max().unwrap_or(0).max(1);
    for (t, c) in &b {
        let bar = "█".repeat(((*c as f64 / max as f64) * 50.0).ceil() as usize);
        println!("{}  {c:>8}  {bar}", crate::units::iso(*t));
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct ListArgs {
    pub queue: String,
    /// scheduled, ready, leased or dead
    #[arg(value_parser = ["scheduled", "ready", "leased", "dead"])]
    pub state: String,
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    #[arg(long, default_value_t = 20, help = page_help("Messages", limits::DEFAULT_PAGE_LIMIT))]
    pub limit: usize,
    /// JSON: {"total", "items"}, as the gateway's /v1 list of messages
    #[arg(long)]
    pub json: bool,
}

fn one_line(m: &MessageInfo, now: SystemTime) -> String {
    let when = match m.state {
        redelay::State::Leased => m.lease_deadline.map(|t| format!("lease until {}", when(t, now))),
        redelay::State::Dead => m.died_at.map(|t| format!("died {}", when(t, now))),
        _ => Some(format!("due {}", when(m.due_at, now))),
    };
    // The first 40 chars (of at most 160 bytes: no char cut in them), escaped.
    let head: String = String::from_utf8_lossy(&m.body[..m.body.len().min(160)]).chars().take(40).collect();
    let body = printable(&head);
    format!("{:<24} {:<9} {}  {body}", printable(&m.id), m.state.as_str(), when.unwrap_or_default())
}

pub async fn list(client: &Conn, a: ListArgs) -> Result<ExitCode> {
    let state = match a.state.as_str() {
        "scheduled" => redelay::State::Scheduled,
        "ready" => redelay::State::Ready,
        "leased" => redelay::State::Leased,
        _ => redelay::State::Dead,
    };
    let q = client.queue(&a.queue).await?;
    let page = q.list(state, a.offset, a.limit).await?;
    if a.json {
        json(&wire::list_page(&page));
    } else {
        let now = q.redis_now().await?;
        for m in &page.items {
            println!("{}", one_line(m, now));
        }
        println!("({} of {} {}, from {})", page.items.len(), page.total, a.state, a.offset);
    }
    Ok(ExitCode::SUCCESS)
}

/// What a search looks for: one of these flags. `search` requires one; `bulk` one or ids.
#[derive(Args)]
#[group(multiple = false)]
pub struct SearchWhat {
    /// Ids starting with this
    #[arg(long)]
    pub id_prefix: Option<String>,
    /// A header NAME=VALUE
    #[arg(long, value_name = "NAME=VALUE")]
    pub header: Option<String>,
    /// Bodies containing this text
    #[arg(long)]
    pub body: Option<String>,
    /// Last errors containing this text
    #[arg(long)]
    pub error: Option<String>,
}

#[derive(Args)]
#[command(group(ArgGroup::new("search_what").required(true).args(SEARCH_FLAGS)))]
pub struct SearchArgs {
    pub queue: String,
    #[command(flatten)]
    pub what: SearchWhat,
    /// Stop once this many matches are found; the search step that reaches it is shown whole,
    /// so that the cursor goes on right after it
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
    /// Go on from where an earlier search stopped (the `cursor` of its --json, or of the
    /// gateway's /v1 search; the same query)
    #[arg(long)]
    pub cursor: Option<String>,
    /// JSON: {"items", "scanned", "cursor"}, as one step of the gateway's /v1 search (cursor:
    /// where the scan stopped, null once it reached the end)
    #[arg(long)]
    pub json: bool,
}

/// The ids of the flags of [`SearchWhat`].
const SEARCH_FLAGS: [&str; 4] = ["id_prefix", "header", "body", "error"];

impl SearchWhat {
    /// The core's search for the flag given (None when none is).
    fn query(self) -> Result<Option<redelay::Search>> {
        Ok(Some(if let Some(p) = self.id_prefix {
            redelay::Search::IdPrefix(p)
        } else if let Some(h) = self.header {
            let (k, v) =
                h.split_once('=').ok_or_else(|| redelay::Error::invalid(format!("header: {h:?} is not NAME=VALUE")))?;
            redelay::Search::Header(k.to_string(), v.to_string())
        } else if let Some(b) = self.body {
            redelay::Search::Body(b.into_bytes())
        } else if let Some(e) = self.error {
            redelay::Search::Error(e)
        } else {
            return Ok(None);
        }))
    }
}

/// The core's search steps until `limit` matches or the end of the queue, as one page: the
/// matches cut to `limit`, the records looked at in every step, and the cursor of the last step
/// (None once the whole queue was scanned; resuming from it skips the matches cut).
async fn search_steps(q: &Queue, what: &Search, limit: usize, from: Option<String>) -> Result<SearchPage> {
    let mut all = SearchPage { items: Vec::new(), scanned: 0, cursor: from };
    loop {
        let p = q.search(what, all.cursor.as_deref()).await?;
        all.scanned += p.scanned;
        all.items.extend(p.items);
        all.cursor = p.cursor;
        // Whole steps only: a match cut from the last one would be skipped by its cursor.
        if all.cursor.is_none() || all.items.len() >= limit {
            break;
        }
    }
    Ok(all)
}

pub async fn search(client: &Conn, a: SearchArgs) -> Result<ExitCode> {
    let what = a
        .what
        .query()?
        .ok_or_else(|| redelay::Error::invalid("search: give one of --id-prefix, --header, --body or --error"))?;
    let q = client.queue(&a.queue).await?;
    let page = search_steps(&q, &what, a.limit, a.cursor).await?;
    if a.json {
        json(&wire::search_page(&page));
    } else {
        let now = q.redis_now().await?;
        for m in &page.items {
            println!("{}", one_line(m, now));
        }
        match &page.cursor {
            Some(c) => println!("({} found, {} looked at; more with --cursor {c})", page.items.len(), page.scanned),
            None => println!("({} found, {} looked at)", page.items.len(), page.scanned),
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct HistoryArgs {
    pub queue: String,
    #[arg(long, default_value = "1h", value_parser = parse_duration, help = format!(
        "How far back from now by the Redis clock: 30m, 1h, 2d, 90d ... at most {} by day, {} by \
         hour, {} by minute (one query reads at most {} points of a minute or an hour, {} of a \
         day; days and hours are kept 90 days, minutes 2 days)",
        crate::units::span(longest_span(redelay::Step::Day)),
        crate::units::span(longest_span(redelay::Step::Hour)),
        crate::units::span(longest_span(redelay::Step::Minute)),
        limits::MAX_HISTORY_POINTS,
        limits::MAX_HISTORY_DAYS,
    ))]
    pub last: Duration,
    #[arg(long, value_parser = ["minute", "hour", "day"], help = format!(
        "minute, hour or day (UTC days; default: the shortest step whose points always fit: \
         minute when --last is at most {}, hour up to {}, else day)",
        crate::units::span(longest_span(redelay::Step::Minute)),
        crate::units::span(longest_span(redelay::Step::Hour)),
    ))]
    pub step: Option<String>,
    /// JSON: {"points"}, as the gateway's /v1 history
    #[arg(long)]
    pub json: bool,
}

/// The longest `--last` whose points of `step` always fit in the core's points of one history
/// call: a span of n steps touches at most n + 1 points (23h59m of minutes, 59d23h of hours for
/// 1440 points, 90 days for 91 days).
const fn longest_span(step: redelay::Step) -> Duration {
    Duration::from_millis((step.max_points() as u64 - 1) * step.millis() as u64)
}

/// Published / delivered / acked per step, with a chart of deliveries and the lateness p99.
pub async fn history(client: &Conn, a: HistoryArgs) -> Result<ExitCode> {
    let step = match a.step.as_deref() {
        Some(s) => redelay::Step::ALL.into_iter().find(|step| step.name() == s).expect("clap allows only these"),
        None => redelay::Step::ALL.into_iter().find(|s| a.last <= longest_span(*s)).unwrap_or(redelay::Step::Day),
    };
    let longest = longest_span(step);
    if a.last > longest {
        return Err(redelay::Error::invalid(format!(
            "--last: at most {} with --step {}, got {} (one history query reads at most {} points by {})",
            crate::units::span(longest),
            step.name(),
            crate::units::span(a.last),
            step.max_points(),
            step.name(),
        )));
    }
    let q = client.queue(&a.queue).await?;
    let now = q.redis_now().await?;
    let since = now.checked_sub(a.last).unwrap_or(UNIX_EPOCH);
    let flags = format!("--last at --step {}", step.name());
    let pts = q.history(since, now, step).await.map_err(from_flags(flags))?;
    if a.json {
        json(&wire::history(&pts));
        return Ok(ExitCode::SUCCESS);
    }
    let max = pts.iter().map(|p| p.delivered).max().unwrap_or(0).max(1);
    println!(
        "{:<24} {:>9} {:>9} {:>9} {:>7} {:>6} {:>7} {:>9}  delivered",
        "from", "published", "delivered", "acked", "retried", "dead", "expired", "late p99"
    );
    for p in &pts {
        let bar = "█".repeat(((p.delivered as f64 / max as f64) * 30.0).ceil() as usize);
        println!(
            "{:<24} {:>9} {:>9} {:>9} {:>7} {:>6} {:>7} {:>9}  {bar}",
            crate::units::iso(p.at),
            p.published,
            p.delivered,
            p.acked,
            p.retried,
            p.dead,
            p.expired,
            p99_bucket(p)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The lateness bucket holding the 99th percentile, as `< 4 ms`, or `-` with no delivery.
fn p99_bucket(p: &redelay::HistoryPoint) -> String {
    match p.lateness_bound_ms(0.99) {
        None => "-".into(),
        Some(ub) if ub.is_finite() => format!("< {ub} ms"),
        Some(_) => ">= 16 s".into(),
    }
}
