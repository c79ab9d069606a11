//! The `redelay` binary against a real Redis (REDIS_URL from tests/with-redis.sh).

use std::process::{Command, Output};

#[path = "../../core/tests/common/mod.rs"]
mod common;

/// REDIS_URL from the launcher, or a private redis-server for this test binary.
fn redis_url() -> String {
    common::url()
}

fn redelay(prefix: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_redelay"))
        .args(["--url", &redis_url(), "--prefix", prefix])
        .args(args)
        .output()
        .expect("run redelay")
}

/// An error as the README promises it: one line on stderr, `redelay: …`.
fn one_error_line(o: &Output) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("redelay: ") && err.ends_with('\n') && err.lines().count() == 1, "{o:?}");
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn unreachable_redis_is_one_line_on_stderr_and_exit_2() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let o = Command::new(env!("CARGO_BIN_EXE_redelay"))
        .args(["--url", &format!("redis://127.0.0.1:{port}"), "stats"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.starts_with("redelay: cannot connect to redis://127.0.0.1:"), "{err}");
}

#[test]
fn publish_inspect_change_dead_letters_verify() {
    let prefix = format!("cli{}", std::process::id());
    let o = redelay(&prefix, &["publish", "jobs", "hello", "--id", "a", "--delay", "1h", "--header", "k=v"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(text(&o).trim(), "a stored");
    assert_eq!(text(&redelay(&prefix, &["publish", "jobs", "again", "--id", "a"])).trim(), "a duplicate");

    let peek = text(&redelay(&prefix, &["peek", "jobs", "a"]));
    assert!(
        peek.contains("state:        scheduled")
            && peek.contains("header:       k=v")
            && peek.contains("body:         hello"),
        "{peek}"
    );

    let stats = text(&redelay(&prefix, &["stats", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(v["queues"][0]["queue"], "jobs");
    assert_eq!(v["queues"][0]["stats"]["scheduled"], 1);
    let prom = text(&redelay(&prefix, &["stats", "--prometheus"]));
    assert!(
        prom.contains(&format!("redelay_messages{{prefix=\"{prefix}\",queue=\"jobs\",state=\"scheduled\"}} 1")),
        "{prom}"
    );

    let o = redelay(&prefix, &["reschedule", "jobs", "a", "--delay", "2h"]);
    assert!(o.status.success(), "{o:?}");
    let o = redelay(&prefix, &["reschedule", "jobs", "nope", "--delay", "2h"]);
    assert_eq!(o.status.code(), Some(1), "no message: as peek's and cancel's");
    assert!(String::from_utf8_lossy(&o.stderr).contains("no message with id \"nope\""));

    assert!(redelay(&prefix, &["cancel", "jobs", "a"]).status.success());
    assert_eq!(redelay(&prefix, &["cancel", "jobs", "a"]).status.code(), Some(1));
    assert_eq!(redelay(&prefix, &["peek", "jobs", "a"]).status.code(), Some(1));

    // A message with one attempt whose lease expires: lapsed (still leased) until a fetch
    // reclaims it, then a dead letter.
    redelay(&prefix, &["publish", "jobs", "x", "--id", "d", "--max-attempts", "1", "--ttr", "100ms"]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let c = rt.block_on(redelay::Client::builder(&redis_url()).prefix(&prefix).connect()).unwrap();
    let q = c.queue("jobs").unwrap();
    rt.block_on(async {
        let d = q.fetch(1, std::time::Duration::from_secs(1)).await.unwrap().remove(0);
        while q.redis_now().await.unwrap() <= d.lease_deadline() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    });
    let s = stats_json(&prefix, "jobs");
    assert_eq!((s["total"].as_u64(), s["leased"].as_u64(), s["lapsed"].as_u64()), (Some(1), Some(1), Some(1)), "{s}");
    let table = text(&redelay(&prefix, &["stats", "jobs"]));
    let head: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(head[..7], ["queue", "total", "scheduled", "ready", "leased", "lapsed", "dead"], "{table}");
    assert_eq!(row[..7], ["jobs", "1", "0", "0", "1", "1", "0"], "{table}");
    let prom = text(&redelay(&prefix, &["stats", "jobs", "--prometheus"]));
    assert!(prom.contains(&format!("redelay_lapsed_leases{{prefix=\"{prefix}\",queue=\"jobs\"}} 1\n")), "{prom}");
    assert!(rt.block_on(q.fetch(1, std::time::Duration::ZERO)).unwrap().is_empty(), "reclaims it: dead");
    assert_eq!(stats_json(&prefix, "jobs")["lapsed"], 0);
    let list = text(&redelay(&prefix, &["dead", "list", "jobs"]));
    assert!(list.starts_with("d ") && list.contains("lease expired"), "{list}");
    let o = redelay(&prefix, &["dead", "respawn", "jobs", "d", "--expires-in", "0s"]);
    assert_eq!(o.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&o.stderr).contains("expires_in: must be after the due time"));
    assert_eq!(text(&redelay(&prefix, &["dead", "respawn", "jobs", "d", "--expires-in", "1h"])).trim(), "respawned 1");
    let o = redelay(&prefix, &["peek", "jobs", "d", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let left = v["expires_at_ms"].as_i64().unwrap() - v["due_at_ms"].as_i64().unwrap();
    assert_eq!(left, 3_600_000, "a fresh hour from the respawn, which made it due: {v}");
    assert_eq!(stats_json(&prefix, "jobs")["ready"], 1);
    let v = redelay(&prefix, &["verify", "jobs"]);
    assert!(v.status.success() && text(&v).starts_with("ok: 1 records"), "{v:?}");
    assert_eq!(redelay(&prefix, &["dead", "purge", "jobs"]).status.code(), Some(64), "a selection is required");
    // Arguments clap refuses are bad input too (64, not clap's 2: that is an unreachable Redis).
    for args in [&["dead", "list", "jobs", "--limit", "abc"][..], &["publish"], &["no-such-command"]] {
        let o = redelay(&prefix, args);
        assert_eq!(o.status.code(), Some(64), "{args:?}: {o:?}");
        one_error_line(&o);
    }
    // The line says what clap says: the value and what it should be, the missing arguments.
    let err = stderr(&redelay(&prefix, &["publish", "q", "x", "--delay", "5x"]));
    assert!(err.starts_with("redelay: invalid value '5x' for '--delay <DELAY>'"), "{err}");
    let err = stderr(&redelay(&prefix, &["publish"]));
    assert!(err.contains("the following required arguments were not provided: <QUEUE> <BODY>"), "{err}");
    let o = redelay(&prefix, &["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o).contains("Usage: redelay"), "{o:?}");
}

#[test]
fn pause_resume_and_expiry_from_the_command_line() {
    let prefix = format!("clipause{}", std::process::id());
    let o = redelay(&prefix, &["pause", "jobs"]);
    assert_eq!((o.status.code(), text(&o).trim()), (Some(0), "jobs: paused"));
    assert_eq!(text(&redelay(&prefix, &["pause", "jobs"])).trim(), "jobs: already paused");
    let o = redelay(&prefix, &["publish", "jobs", "hello", "--id", "e1", "--expires-in", "1h"]);
    assert_eq!(text(&o).trim(), "e1 stored", "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stats_json(&prefix, "jobs")["paused"], true);
    assert!(text(&redelay(&prefix, &["stats", "jobs"])).contains("(paused)"));
    assert!(text(&redelay(&prefix, &["stats", "jobs", "--prometheus"])).contains("redelay_paused{"));
    assert_eq!(text(&redelay(&prefix, &["resume", "jobs"])).trim(), "jobs: resumed");
    let o = redelay(&prefix, &["publish", "jobs", "x", "--delay", "2h", "--expires-in", "1h"]);
    assert_eq!(o.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&o.stderr).contains("expires_in: must be after the due time"));
    let o = redelay(&prefix, &["cancel", "jobs", "e1"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn times_for_people_and_machines() {
    let prefix = format!("clitimes{}", std::process::id());
    let o = redelay(&prefix, &["publish", "q", "hi", "--id", "t1", "--at", "2030-01-02T03:04:05Z"]);
    assert_eq!(text(&o).trim(), "t1 stored", "{}", String::from_utf8_lossy(&o.stderr));
    let peek = text(&redelay(&prefix, &["peek", "q", "t1"]));
    assert!(peek.contains("due:          2030-01-02T03:04:05.000Z, in "), "{peek}");
    assert!(peek.contains("published:    20") && peek.contains("ago"), "{peek}");
    let o = redelay(&prefix, &["peek", "q", "t1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["due_at_ms"], 1_893_553_445_000u64);
    let o = redelay(&prefix, &["reschedule", "q", "t1", "--at", "2030-01-02T04:04:05+01:00"]);
    assert!(text(&o).contains("2030-01-02T03:04:05.000Z"), "{}", text(&o));
    let o = redelay(&prefix, &["reschedule", "q", "t1", "--at", "next tuesday"]);
    assert_eq!(o.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&o.stderr).contains("ISO 8601"));
    redelay(&prefix, &["cancel", "q", "t1"]);
}

#[test]
fn upcoming_list_and_search_from_the_command_line() {
    let prefix = format!("cliinspect{}", std::process::id());
    for (id, delay) in [("a1", "10m"), ("a2", "10m"), ("b1", "40m")] {
        let o = redelay(&prefix, &["publish", "q", &format!("body of {id}"), "--id", id, "--delay", delay]);
        assert_eq!(o.status.code(), Some(0));
    }
    let o = redelay(&prefix, &["upcoming", "q", "--next", "1h", "--every", "10m", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let counts: Vec<u64> = v["buckets"].as_array().unwrap().iter().map(|b| b["count"].as_u64().unwrap()).collect();
    assert_eq!(counts.iter().sum::<u64>(), 3);
    assert_eq!(counts.len(), 6);
    assert!(text(&redelay(&prefix, &["upcoming", "q"])).contains("█"));
    let o = redelay(&prefix, &["list", "q", "scheduled", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["total"], 3);
    assert_eq!(v["items"][2]["id"], "b1");
    let o = redelay(&prefix, &["search", "q", "--id-prefix", "a", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["items"].as_array().unwrap().len(), 2);
    assert_eq!((v["scanned"].as_u64(), &v["cursor"]), (Some(3), &serde_json::Value::Null), "{v}");
    assert!(text(&redelay(&prefix, &["search", "q", "--body", "of b1"])).contains("1 found"));
    // A reader that went away (`redelay list q scheduled | head -0`): a quiet end, as SIGPIPE's.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = Command::new(env!("CARGO_BIN_EXE_redelay"))
        .args(["--url", &redis_url(), "--prefix", &prefix, "list", "q", "scheduled"])
        .stdout(writer)
        .output()
        .unwrap();
    assert_eq!((o.status.code(), String::from_utf8_lossy(&o.stderr).as_ref()), (Some(141), ""));
    for id in ["a1", "a2", "b1"] {
        redelay(&prefix, &["cancel", "q", id]);
    }
}

#[test]
fn history_as_a_table_json_and_prometheus_counters() {
    let prefix = format!("clihist{}", std::process::id());
    for i in 0..3 {
        redelay(&prefix, &["publish", "h", "x", "--id", &format!("h{i}")]);
    }
    let o = redelay(&prefix, &["history", "h", "--last", "10m", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let published: u64 = v["points"].as_array().unwrap().iter().map(|p| p["published"].as_u64().unwrap()).sum();
    assert_eq!(published, 3);
    assert!(text(&redelay(&prefix, &["history", "h"])).contains("published"));
    let prom = text(&redelay(&prefix, &["stats", "h", "--prometheus"]));
    assert!(prom.contains("# TYPE redelay_published_total counter"), "{prom}");
    assert!(prom.contains(&format!("redelay_published_total{{prefix=\"{prefix}\",queue=\"h\"}} 3")), "{prom}");
    assert!(prom.contains("# TYPE redelay_lateness_seconds histogram") && prom.contains("le=\"+Inf\""));
    for i in 0..3 {
        redelay(&prefix, &["cancel", "h", &format!("h{i}")]);
    }
}

/// The `at_ms` of each of the `points` (history) or `buckets` (upcoming) of a JSON answer, and
/// the gaps between them.
fn gaps(o: &Output, list: &str) -> (usize, Vec<i64>) {
    assert!(o.status.success(), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let at: Vec<i64> = v[list].as_array().unwrap().iter().map(|p| p["at_ms"].as_i64().unwrap()).collect();
    (at.len(), at.windows(2).map(|w| w[1] - w[0]).collect())
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn history_steps_fit_the_point_limit_and_a_too_long_span_names_it() {
    let prefix = format!("clihiststep{}", std::process::id());
    // A day is 1441 minute points: hours are picked (25 points).
    for last in ["1d", "24h"] {
        let (n, gaps) = gaps(&redelay(&prefix, &["history", "h", "--last", last, "--json"]), "points");
        assert_eq!(n, 25, "{last}");
        assert!(gaps.iter().all(|&g| g == 3_600_000), "{last}: {gaps:?}");
        assert!(redelay(&prefix, &["history", "h", "--last", last]).status.success(), "{last}");
    }
    let (n, minutes) = gaps(&redelay(&prefix, &["history", "h", "--last", "10m", "--json"]), "points");
    assert_eq!(n, 11);
    assert!(minutes.iter().all(|&g| g == 60_000), "{minutes:?}");
    // Minutes forced over too long a span: refused, naming the flags and the limit.
    for (last, got) in [("1d", "1d00h"), ("2d", "2d00h")] {
        let o = redelay(&prefix, &["history", "h", "--last", last, "--step", "minute"]);
        assert_eq!(o.status.code(), Some(64), "{o:?}");
        let err = stderr(&o);
        let want = format!(
            "--last: at most 23h59m with --step minute, got {got} (one history query reads at most 1440 points by minute)"
        );
        assert!(err.contains(&want), "{err}");
    }
    // 1440 hour points are 59d23h: the longest span by hour is usable, a longer one is read by
    // day (hours are kept 90 days: 90 days by day are 91 points), and hours forced over it are
    // refused naming the limit.
    let (n, hours) = gaps(&redelay(&prefix, &["history", "h", "--last", "59d23h", "--json"]), "points");
    assert_eq!(n, 1440);
    assert!(hours.iter().all(|&g| g == 3_600_000), "{hours:?}");
    for (last, points) in [("60d", 61), ("90d", 91)] {
        let (n, days) = gaps(&redelay(&prefix, &["history", "h", "--last", last, "--json"]), "points");
        assert_eq!(n, points, "{last}");
        assert!(days.iter().all(|&g| g == 86_400_000), "{last}: {days:?}");
    }
    let o = redelay(&prefix, &["history", "h", "--last", "60d", "--step", "hour"]);
    assert_eq!(o.status.code(), Some(64), "{o:?}");
    one_error_line(&o);
    let want =
        "--last: at most 59d23h with --step hour, got 60d00h (one history query reads at most 1440 points by hour)";
    assert!(stderr(&o).contains(want), "{o:?}");
    let o = redelay(&prefix, &["history", "h", "--last", "91d"]);
    assert_eq!(o.status.code(), Some(64), "{o:?}");
    let want = "--last: at most 90d00h with --step day, got 91d00h (one history query reads at most 91 points by day)";
    assert!(stderr(&o).contains(want), "{o:?}");
    let help = text(&redelay(&prefix, &["history", "--help"]));
    assert!(help.contains("minute when --last is at most 23h59m, hour up to 59d23h"), "{help}");
}

/// The help names `REDIS_URL` but never shows its value, which may hold a password (clap
/// printed `[env: REDIS_URL=redis://app:hunter2@…]`).
#[test]
fn help_shows_no_password_of_redis_url() {
    for args in [&["--help"][..], &["stats", "--help"], &["serve", "--help"]] {
        let o = Command::new(env!("CARGO_BIN_EXE_redelay"))
            .args(args)
            .env("REDIS_URL", "redis://app:hunter2@127.0.0.1:1/0")
            .output()
            .unwrap();
        let help = text(&o);
        assert!(help.contains("[env: REDIS_URL]"), "{args:?}: {help}");
        assert!(!help.contains("hunter2"), "{args:?}: {help}");
    }
}

/// `stats --help` describes the JSON `stats --json` prints: `{"queues": [...]}` whatever the
/// number of queues named (it said one queue named gave the bare stats object).
#[test]
fn stats_help_describes_the_json_it_prints() {
    let prefix = format!("clistatshelp{}", std::process::id());
    assert!(redelay(&prefix, &["publish", "q", "x"]).status.success());
    let help = text(&redelay(&prefix, &["stats", "--help"]));
    assert!(help.contains(r#"{"queues": [{"queue", "stats"}]}, one row per queue however many are named"#), "{help}");
    let v: serde_json::Value = serde_json::from_str(&text(&redelay(&prefix, &["stats", "q", "--json"]))).unwrap();
    assert_eq!((v["queues"][0]["queue"].as_str(), v["queues"][0]["stats"]["ready"].as_u64()), (Some("q"), Some(1)));
    redelay(&prefix, &["destroy", "q", "--yes"]);
}

/// The limits the help texts state are the core's, which the core enforces: one number each,
/// written once (in `redelay::limits`).
#[test]
fn help_texts_state_the_limits_of_the_core() {
    use redelay::limits;
    let help = |cmd: &[&str]| {
        let o = redelay("clihelplimits", &[cmd, &["--help"]].concat());
        text(&o).split_whitespace().collect::<Vec<_>>().join(" ")
    };
    for (cmd, what, library) in [
        (&["list"][..], "Messages", limits::DEFAULT_PAGE_LIMIT),
        (&["dead", "list"], "Dead letters", limits::DEFAULT_DEAD_LETTER_LIMIT),
    ] {
        let want = format!(
            "{what} per page, 1 to {} (the CLI's default is 20; the library's is {library}) [default: 20]",
            limits::MAX_FETCH
        );
        assert!(help(cmd).contains(&want), "{cmd:?}: {}", help(cmd));
    }
    let bulk = help(&["bulk"]);
    assert!(bulk.contains(&format!("These ids (at most {});", limits::MAX_BULK_IDS)), "{bulk}");
    let upcoming = help(&["upcoming"]);
    assert!(upcoming.contains(&format!("at most {} of them", limits::MAX_UPCOMING_BUCKETS)), "{upcoming}");
    let history = help(&["history"]);
    let (points, minutes) = (limits::MAX_HISTORY_POINTS, limits::MAX_HISTORY_POINTS - 1);
    let (hours, days) = (limits::MAX_HISTORY_POINTS - 1, limits::MAX_HISTORY_DAYS - 1);
    let last = format!(
        "at most {days}d00h by day, {}d{:02}h by hour, {}h{:02}m by minute (one query reads at most {points} \
         points of a minute or an hour, {} of a day;",
        hours / 24,
        hours % 24,
        minutes / 60,
        minutes % 60,
        limits::MAX_HISTORY_DAYS
    );
    assert!(history.contains(&last), "{history}");
    let step = format!(
        "minute when --last is at most {}h{:02}m, hour up to {}d{:02}h, else day",
        minutes / 60,
        minutes % 60,
        hours / 24,
        hours % 24
    );
    assert!(history.contains(&step), "{history}");
}

#[test]
fn upcoming_refuses_more_than_1000_buckets_and_list_help_states_its_default() {
    let prefix = format!("clibuckets{}", std::process::id());
    let (n, gaps) = gaps(&redelay(&prefix, &["upcoming", "q", "--next", "1000m", "--json"]), "buckets");
    assert_eq!(n, 1000);
    assert!(gaps.iter().all(|&g| g == 60_000), "{gaps:?}");
    let o = redelay(&prefix, &["upcoming", "q", "--next", "2h", "--every", "1s"]);
    assert_eq!(o.status.code(), Some(64), "{o:?}");
    let err = stderr(&o);
    assert!(err.contains("--next / --every: 2h in buckets of 1s is 7200 buckets, more than 1000"), "{err}");
    // The CLI's pages are smaller than the library's, and say so.
    for cmd in [&["list", "--help"][..], &["dead", "list", "--help"]] {
        let help = text(&redelay(&prefix, cmd));
        assert!(help.contains("the CLI's default is 20") && help.contains("[default: 20]"), "{help}");
    }
}

/// One HTTP/1.1 request over a plain socket: (status, body).
fn http(port: u16, method: &str, path: &str, token: &str, body: &str) -> Option<(u16, String)> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nX-Token: {token}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let status = out.split(' ').nth(1)?.parse().ok()?;
    Some((status, out.split("\r\n\r\n").nth(1).unwrap_or("").to_string()))
}

#[test]
fn tokens_and_serve_from_the_command_line() {
    let prefix = format!("clisrv{}", std::process::id());
    let o = redelay(&prefix, &["token", "create", "shop", "--description", "ci"]);
    assert!(o.status.success(), "{o:?}");
    let token = text(&o).trim().to_string();
    assert_eq!(token.len(), 32);
    let list = text(&redelay(&prefix, &["token", "list", "shop"]));
    assert!(list.contains("read-write  ci"), "{list}");
    assert!(!list.contains(&token), "only the hash is stored: {list}");

    let gw = Gateway::start(&prefix, None);
    let port = gw.port;
    let published = http(port, "PUT", "/api/shop/orders", &token, "hello");
    let refused = http(port, "PUT", "/api/other/orders", &token, "hello");
    assert!(redelay(&prefix, &["token", "revoke", "shop", &token]).status.success());
    assert_eq!(redelay(&prefix, &["token", "revoke", "shop", &token]).status.code(), Some(1));
    std::thread::sleep(std::time::Duration::from_millis(1100)); // the server trusts a token for 1 s
    let revoked = http(port, "PUT", "/api/shop/orders", &token, "hello");
    drop(gw);
    let (st, body) = published.unwrap();
    assert_eq!(st, 201, "{body}");
    assert!(body.contains("\"msg\":\"published\""), "{body}");
    assert_eq!(refused.unwrap().0, 403);
    assert_eq!(revoked.unwrap().0, 401);
    assert_eq!(stats_json(&prefix, "shop:orders")["ready"], 1);
}

/// A namespace's queues are `NS:QUEUE`, at most 128 bytes: the longest namespace the gateway
/// takes gets a token that works, and one byte more is refused at creation (it was stored, and
/// every request with it refused later), naming the field and the gateway's limit.
#[test]
fn token_create_refuses_a_namespace_too_long_to_use() {
    let prefix = format!("clitokenns{}", std::process::id());
    let max = redelay_server::auth::MAX_NAMESPACE_BYTES;
    assert_eq!(max, 126);
    let o = redelay(&prefix, &["token", "create", &"n".repeat(max + 1)]);
    assert_eq!(o.status.code(), Some(64), "{o:?}");
    one_error_line(&o);
    let want = format!(
        "namespace name: must be 1 to {max} bytes (its queues are named NAMESPACE:QUEUE, at most 128 bytes), got {}",
        max + 1
    );
    assert!(stderr(&o).contains(&want), "{o:?}");
    assert_eq!(text(&redelay(&prefix, &["token", "list", &"n".repeat(max + 1)])).trim(), "", "nothing stored");
    let help = text(&redelay(&prefix, &["token", "create", "--help"]));
    assert!(help.contains(&format!("1 to {max} bytes of A-Z a-z 0-9 - _")), "{help}");

    let ns = "n".repeat(max);
    let o = redelay(&prefix, &["token", "create", &ns]);
    assert!(o.status.success(), "{o:?}");
    let token = text(&o).trim().to_string();
    let gw = Gateway::start(&prefix, None);
    let published = http(gw.port, "PUT", &format!("/api/{ns}/q"), &token, "hello");
    drop(gw);
    let (st, body) = published.unwrap();
    assert_eq!(st, 201, "{body}");
}

#[test]
fn shards_are_named_once_and_found_in_redis_afterwards() {
    let prefix = format!("clishard{}", std::process::id());
    for i in 0..20 {
        let id = format!("o{i}");
        let o = redelay(&prefix, &["--shards", "4", "publish", "orders", "x", "--id", &id, "--delay", "1h"]);
        assert!(o.status.success(), "{o:?}");
    }
    // Other commands find the count in Redis.
    let v: serde_json::Value = serde_json::from_str(&text(&redelay(&prefix, &["stats", "--json"]))).unwrap();
    let row = &v["queues"][0];
    assert_eq!((row["queue"].as_str(), row["stats"]["scheduled"].as_u64()), (Some("orders"), Some(20)));
    assert!(text(&redelay(&prefix, &["peek", "orders", "o7"])).contains("state:        scheduled"));
    assert!(redelay(&prefix, &["cancel", "orders", "o7"]).status.success());
    let o = redelay(&prefix, &["verify", "orders"]);
    assert!(o.status.success(), "{o:?}");
    let list = text(&redelay(&prefix, &["list", "orders", "scheduled", "--limit", "1000"]));
    assert_eq!(list.matches("o1").count(), 11, "o1 and o10..o19: {list}");
    // Another count is refused, naming both (exit 64: bad input).
    let o = redelay(&prefix, &["--shards", "8", "stats", "orders"]);
    assert_eq!(o.status.code(), Some(64), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("has 4 shards in Redis and this handle was opened with 8"), "{err}");
}

/// The keys under `prefix` that belong to `queue` (its own, and its shards' `{queue/N}`).
fn keys_of(prefix: &str, queue: &str) -> Vec<String> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let keys: Vec<String> = rt.block_on(async {
        redis::cmd("KEYS").arg(format!("{prefix}:*")).query_async(&mut common::raw().await).await.unwrap()
    });
    let (own, shard) = (format!("{prefix}:{{{queue}}}:"), format!("{prefix}:{{{queue}/"));
    keys.into_iter().filter(|k| k.starts_with(&own) || k.starts_with(&shard)).collect()
}

/// The names of the registered queues, from `redelay stats --json`.
fn registered(prefix: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(&text(&redelay(prefix, &["stats", "--json"]))).unwrap();
    v["queues"].as_array().unwrap().iter().map(|s| s["queue"].as_str().unwrap().to_string()).collect()
}

#[test]
fn destroy_asks_for_yes_then_deletes_every_message_and_the_name() {
    let prefix = format!("clidestroy{}", std::process::id());
    for (id, delay) in [("s1", "1h"), ("s2", "1h"), ("r1", "0s")] {
        let o = redelay(&prefix, &["publish", "jobs", "x", "--id", id, "--delay", delay]);
        assert!(o.status.success(), "{o:?}");
    }
    redelay(&prefix, &["publish", "keep", "x", "--id", "k1"]);
    for i in 0..6 {
        let o = redelay(&prefix, &["--shards", "3", "publish", "sharded", "x", "--id", &format!("o{i}")]);
        assert!(o.status.success(), "{o:?}");
    }

    // Without --yes: what would go, exit 64, nothing deleted.
    let o = redelay(&prefix, &["destroy", "jobs"]);
    assert_eq!(o.status.code(), Some(64), "{o:?}");
    assert!(stderr(&o).contains("would delete 3 messages of queue \"jobs\"; pass --yes"), "{}", stderr(&o));
    assert_eq!(total(&prefix, "jobs"), 3);

    let o = redelay(&prefix, &["destroy", "jobs", "--yes"]);
    assert_eq!((o.status.code(), text(&o).trim()), (Some(0), "destroyed: 3 messages of queue \"jobs\""), "{o:?}");
    assert_eq!(total(&prefix, "jobs"), 0);
    assert_eq!(keys_of(&prefix, "jobs"), Vec::<String>::new());
    let mut names = registered(&prefix);
    names.sort();
    assert_eq!(names, ["keep", "sharded"]);
    // Gone: a second destroy finds no queue (exit 1, as a missing message's).
    let o = redelay(&prefix, &["destroy", "jobs", "--yes"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(stderr(&o).contains("no queue \"jobs\""), "{}", stderr(&o));

    // A sharded queue, opened with the count stored in Redis: every shard goes.
    assert!(!keys_of(&prefix, "sharded").is_empty());
    let o = redelay(&prefix, &["destroy", "sharded", "--yes"]);
    assert_eq!(text(&o).trim(), "destroyed: 6 messages of queue \"sharded\"", "{o:?}");
    assert_eq!(keys_of(&prefix, "sharded"), Vec::<String>::new());
    assert_eq!(registered(&prefix), ["keep"]);
    assert!(redelay(&prefix, &["peek", "keep", "k1"]).status.success(), "the other queue is untouched");
    redelay(&prefix, &["destroy", "keep", "--yes"]);
}

/// Makes messages `ids` of `queue` (which has no other due message) dead letters: one attempt
/// each, whose lease expires.
fn dead_letters(prefix: &str, queue: &str, ids: &[&str]) {
    for id in ids {
        let o = redelay(prefix, &["publish", queue, "x", "--id", id, "--max-attempts", "1", "--ttr", "100ms"]);
        assert!(o.status.success(), "{o:?}");
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = redelay::Client::builder(&redis_url()).prefix(prefix).connect().await.unwrap();
        let q = c.queue(queue).unwrap();
        assert_eq!(q.fetch(ids.len(), std::time::Duration::from_secs(1)).await.unwrap().len(), ids.len());
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        assert!(q.fetch(1, std::time::Duration::ZERO).await.unwrap().is_empty());
        // reclaims it: dead
    });
}

/// `peek --json` of one message, or None when there is none.
fn peek_json(prefix: &str, queue: &str, id: &str) -> Option<serde_json::Value> {
    let o = redelay(prefix, &["peek", queue, id, "--json"]);
    o.status.success().then(|| serde_json::from_slice(&o.stdout).unwrap())
}

#[test]
fn bulk_by_search_or_ids_and_the_flags_each_action_takes() {
    let prefix = format!("clibulk{}", std::process::id());
    for (id, tenant) in [("a1", "acme"), ("a2", "other"), ("b1", "acme"), ("b2", "other")] {
        let o =
            redelay(&prefix, &["publish", "q", id, "--id", id, "--delay", "1h", "--header", &format!("t={tenant}")]);
        assert!(o.status.success(), "{o:?}");
    }
    dead_letters(&prefix, "q", &["d1", "d2"]);

    // Bad input: exit 64, the flags named, nothing changed.
    let bad: [(&[&str], &str); 7] = [
        (&["bulk", "q", "reschedule", "a1"], "--delay / --at: reschedule needs a new due time"),
        (&["bulk", "q", "cancel", "a1", "--delay", "5m"], "--delay / --at: only reschedule takes a due time"),
        (&["bulk", "q", "cancel", "a1", "--expires-in", "1h"], "--expires-in / --clear-expiry: only respawn"),
        (&["bulk", "q", "cancel"], "selection: name ids, or use --id-prefix, --header, --body or --error"),
        (&["bulk", "q", "cancel", "a1", "--header", "t=acme"], "'[IDS]...' cannot be used with '--header"),
        (&["bulk", "q", "explode", "a1"], "[possible values: cancel, reschedule, deliver-now, respawn, purge]"),
        (&["bulk", "q", "cancel", "--header", "tacme"], "header: \"tacme\" is not NAME=VALUE"),
    ];
    for (args, want) in bad {
        let o = redelay(&prefix, args);
        assert_eq!(o.status.code(), Some(64), "{args:?}: {o:?}");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(total(&prefix, "q"), 6);

    // cancel by header: only the matching messages go.
    let o = redelay(&prefix, &["bulk", "q", "cancel", "--header", "t=acme", "--yes", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["matched"].as_u64(), v["done"].as_u64(), v["scanned"].as_u64()), (Some(2), Some(2), Some(6)), "{v}");
    assert_eq!(total(&prefix, "q"), 4);
    assert!(peek_json(&prefix, "q", "a1").is_none() && peek_json(&prefix, "q", "b1").is_none());
    assert!(peek_json(&prefix, "q", "a2").is_some() && peek_json(&prefix, "q", "b2").is_some());

    // reschedule by ids (an unknown one is matched but not done), then deliver-now by prefix.
    let o = redelay(&prefix, &["bulk", "q", "reschedule", "a2", "b2", "nope", "--at", "2030-01-02T03:04:05Z"]);
    assert_eq!(text(&o).trim(), "matched 3, done 2 (scanned 0)", "{o:?}");
    for id in ["a2", "b2"] {
        assert_eq!(peek_json(&prefix, "q", id).unwrap()["due_at_ms"], 1_893_553_445_000u64);
    }
    let o = redelay(&prefix, &["bulk", "q", "deliver_now", "--id-prefix", "a"]);
    assert_eq!(text(&o).trim(), "matched 1, done 1 (scanned 4)", "{o:?}");
    assert_eq!(peek_json(&prefix, "q", "a2").unwrap()["state"], "ready");
    assert_eq!(peek_json(&prefix, "q", "b2").unwrap()["state"], "scheduled");

    // respawn and purge act on dead letters only; deliver-now on waiting messages only.
    let o = redelay(&prefix, &["bulk", "q", "purge", "a2", "b2"]);
    assert_eq!(text(&o).trim(), "matched 2, done 0 (scanned 0)", "{o:?}");
    let o = redelay(&prefix, &["bulk", "q", "deliver-now", "d2"]);
    assert_eq!(text(&o).trim(), "matched 1, done 0 (scanned 0)", "a dead letter is not waiting: {o:?}");
    let o = redelay(&prefix, &["bulk", "q", "respawn", "--id-prefix", "d1", "--expires-in", "1h"]);
    assert_eq!(text(&o).trim(), "matched 1, done 1 (scanned 4)", "{o:?}");
    let v = peek_json(&prefix, "q", "d1").unwrap();
    assert_eq!(v["state"], "ready");
    assert_eq!(v["expires_at_ms"].as_i64().unwrap() - v["due_at_ms"].as_i64().unwrap(), 3_600_000);
    let o = redelay(&prefix, &["bulk", "q", "purge", "--error", "lease expired", "--yes", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["done"], 1, "{v}");
    assert!(peek_json(&prefix, "q", "d2").is_none());
    assert_eq!(peek_json(&prefix, "q", "d1").unwrap()["state"], "ready");
    assert!(redelay(&prefix, &["verify", "q"]).status.success());
    redelay(&prefix, &["destroy", "q", "--yes"]);
}

/// A long run that Redis fails in the middle (its connection drops: a proxy closes it instead
/// of sending a call on) exits with the status of the failure and says how far it got: on
/// stderr, and with `--json` on stdout as the result's JSON would, with the error as the
/// gateway's `/v1` gives one. A list of 2,500 ids goes in calls of 1,000.
#[test]
fn a_run_that_fails_in_the_middle_says_how_far_it_got() {
    let prefix = format!("clistop{}", std::process::id());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let proxy = rt.block_on(async {
        let c = redelay::Client::builder(&redis_url()).prefix(&prefix).connect().await.unwrap();
        let q = c.queue("q").unwrap();
        let batch = (0..2500).map(|i| redelay::Message::new(b"x".to_vec()).id(format!("n{i}")).max_attempts(1));
        q.publish_batch(batch.collect()).await.unwrap();
        while let Ok(got @ [_, ..]) = q.fetch(1000, std::time::Duration::ZERO).await.as_deref() {
            for d in got {
                d.nack(None, "boom").await.unwrap();
            }
        }
        assert_eq!(q.stats().await.unwrap().dead, 2500);
        common::FaultProxy::start(common::port_of(&redis_url())).await
    });
    let ids: Vec<String> = (0..2500).map(|i| format!("n{i}")).collect();
    // The run's call holding `cut` never reaches Redis.
    let run = |cut: &str, args: &[&str]| {
        proxy.drop_next_request_with(cut.as_bytes());
        let o = Command::new(env!("CARGO_BIN_EXE_redelay"))
            .args(["--url", &proxy.url(), "--prefix", &prefix])
            .args(args)
            .args(&ids)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "a connection error: {o:?}");
        o
    };
    let stopped = |o: &Output, said: &str| {
        let line = format!("; stopped: {said} so far, and that stays done (the step under way may have been done too)");
        assert!(stderr(o).starts_with("redelay: redis connection: ") && stderr(o).contains(&line), "{}", stderr(o));
        if o.stdout.is_empty() {
            return serde_json::Value::Null;
        }
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let error = v.as_object_mut().unwrap().remove("error").unwrap();
        assert_eq!(error["code"], "ERR_REDELAY_CONNECTION", "{error}");
        assert!(stderr(o).contains(error["message"].as_str().unwrap()), "{error}");
        assert_eq!(error["so_far"], v, "the error as the gateway's /v1 gives one");
        v
    };

    // n0..n999 respawned, then the second call is cut.
    let o = run("n1500", &["dead", "respawn", "q", "--json"]);
    assert_eq!(stopped(&o, "respawned 1000"), serde_json::json!({ "count": 1000 }));
    // The first call finds no dead letter among n0..n999, the second purges n1000..n1999.
    let o = run("n2000", &["bulk", "q", "purge", "--json"]);
    let v = stopped(&o, "matched 2500, done 1000 (scanned 0)");
    assert_eq!(v, serde_json::json!({ "matched": 2500, "done": 1000, "scanned": 0 }));
    // Without --json: stdout is empty; a step that did nothing counts as a step.
    let o = run("n2000", &["dead", "purge", "q"]);
    assert_eq!(stopped(&o, "purged 0"), serde_json::Value::Null);
    let v = stats_json(&prefix, "q");
    assert_eq!((v["ready"].as_u64(), v["dead"].as_u64()), (Some(1000), Some(500)), "{v}");
    assert!(redelay(&prefix, &["verify", "q"]).status.success());
    redelay(&prefix, &["destroy", "q", "--yes"]);
}

#[test]
fn set_history_off_then_on_reports_the_change_and_stops_the_counters() {
    let prefix = format!("clisethist{}", std::process::id());
    let published = || {
        let o = redelay(&prefix, &["history", "h", "--last", "10m", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["points"].as_array().unwrap().iter().map(|p| p["published"].as_u64().unwrap()).sum::<u64>()
    };
    let o = redelay(&prefix, &["set-history", "h", "off"]);
    assert_eq!((o.status.code(), text(&o).trim()), (Some(0), "h: history turned off"), "{o:?}");
    assert_eq!(text(&redelay(&prefix, &["set-history", "h", "off"])).trim(), "h: history already off");
    redelay(&prefix, &["publish", "h", "x", "--id", "h1"]);
    assert_eq!(published(), 0, "not counted while off");
    assert_eq!(text(&redelay(&prefix, &["set-history", "h", "on"])).trim(), "h: history turned on");
    assert_eq!(text(&redelay(&prefix, &["set-history", "h", "on"])).trim(), "h: history already on");
    redelay(&prefix, &["publish", "h", "x", "--id", "h2"]);
    assert_eq!(published(), 1, "counted again");
    for args in [&["set-history", "h", "maybe"][..], &["set-history", "h"]] {
        let o = redelay(&prefix, args);
        assert_eq!(o.status.code(), Some(64), "{args:?}: {o:?}");
        one_error_line(&o);
    }
    redelay(&prefix, &["destroy", "h", "--yes"]);
}

/// Runs `redelay` with stdout going to `stdout`.
fn redelay_to(prefix: &str, args: &[&str], stdout: std::process::Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_redelay"))
        .args(["--url", &redis_url(), "--prefix", prefix])
        .args(args)
        .stdout(stdout)
        .output()
        .expect("run redelay")
}

/// `stats QUEUE --json`'s one row's counts, as `GET /v1/queues/{queue}/stats` gives them.
fn stats_json(prefix: &str, queue: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&text(&redelay(prefix, &["stats", queue, "--json"]))).unwrap();
    assert_eq!((v["queues"].as_array().map(Vec::len), v["queues"][0]["queue"].as_str()), (Some(1), Some(queue)), "{v}");
    v["queues"][0]["stats"].clone()
}

/// A queue's total, from `stats --json`.
fn total(prefix: &str, queue: &str) -> u64 {
    stats_json(prefix, queue)["total"].as_u64().unwrap()
}

#[test]
fn bad_times_and_durations_are_refused_with_64_naming_the_flag_and_the_value() {
    let prefix = format!("clibadtime{}", std::process::id());
    assert!(redelay(&prefix, &["publish", "q", "x", "--id", "a", "--delay", "1h"]).status.success());
    let non_ascii = "2026-11-23T08:00:00+0é00";
    // (flag, value, what stderr says besides the flag and the value)
    let cases = [
        ("--at", non_ascii, "not a time like 2026-11-23T08:00:00Z"),
        ("--at", "2026-11-23T08:00:00+0é:0", "not a time like"),
        ("--at", "2026-11-23T08:00:00é", "not a time like"),
        ("--at", "2026-11-2éT08:00:00Z", "not a time like"),
        ("--at", "2026-02-31T08:00:00Z", "February 2026 has 28 days"),
        ("--at", "2026-02-29T08:00:00Z", "February 2026 has 28 days"),
        ("--at", "2026-04-31T08:00:00Z", "April 2026 has 30 days"),
        ("--at", "2026-00-10T08:00:00Z", "month must be 01 to 12"),
        ("--at", "2026-11-00T08:00:00Z", "November 2026 has 30 days"),
        ("--at", "2026-11-23T08:00:00+99:99", "offset must be -23:59 to +23:59"),
        ("--at", "2026-11-23T08:00:00+24:00", "offset must be -23:59 to +23:59"),
        ("--at", "2026-11-23T08:00:00+01:60", "offset must be -23:59 to +23:59"),
        ("--at", "2026-11-23T08:00:00+-1:00", "not a time like"),
        ("--at", "2026-+1-23T08:00:00Z", "not a time like"),
        ("--at", "2026-11-23T+8:00:00Z", "not a time like"),
        ("--at", "2026-11-23T08:00: 1Z", "not a time like"),
        ("--at", "2026-11-23T08:00:60Z", "second must be 00 to 59"),
        ("--at", "2026-11-23T24:00:00Z", "hour must be 00 to 23"),
        ("--at", "2026-11-23T08:60:00Z", "minute must be 00 to 59"),
        ("--at", "18446744073709551615", "out of range"),
        ("--at", "99999999999999999999", "out of range"),
        ("--delay", "99999999999999999999999d", "longer than"),
        ("--delay", "1h30", "not a duration like"),
        ("--delay", "1x", "unknown unit \"x\""),
    ];
    for (flag, value, want) in cases {
        let runs: [&[&str]; 3] = [
            &["publish", "q", "x", flag, value],
            &["reschedule", "q", "a", flag, value],
            &["bulk", "q", "reschedule", "a", flag, value],
        ];
        for args in runs {
            let o = redelay(&prefix, args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(64), "{args:?}: {err}");
            assert!(
                err.contains(want) && err.contains(flag) && err.contains(value) && !err.contains("panicked"),
                "{args:?}: {err}"
            );
        }
    }
    assert_eq!(total(&prefix, "q"), 1, "nothing published");
    assert_eq!(peek_json(&prefix, "q", "a").unwrap()["state"], "scheduled");
    // What is right is taken: a leap day, offsets at the ends, compound durations.
    for (flag, value) in [
        ("--at", "2028-02-29T08:00:00Z"),
        ("--at", "2028-02-29T08:00:00-23:59"),
        ("--at", "2028-02-29T08:00:00.123456+23:59"),
        ("--delay", "1h30m"),
        ("--delay", "1d2h3m4s5ms"),
    ] {
        let o = redelay(&prefix, &["reschedule", "q", "a", flag, value, "--json"]);
        assert!(o.status.success(), "{flag} {value}: {o:?}");
    }
    let before = peek_json(&prefix, "q", "a").unwrap();
    let o = redelay(&prefix, &["reschedule", "q", "a", "--delay", "1h30m", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let left = v["due_at_ms"].as_i64().unwrap() - before["published_at_ms"].as_i64().unwrap();
    assert!((5_400_000..5_460_000).contains(&left), "1h30m from now: {left} ms");
    redelay(&prefix, &["destroy", "q", "--yes"]);
}

#[test]
fn reschedule_without_a_time_names_both_flags() {
    let o = redelay("clinotime", &["reschedule", "q", "a"]);
    assert_eq!(o.status.code(), Some(64), "{o:?}");
    let err = stderr(&o);
    assert!(err.contains("--delay") && err.contains("--at"), "{err}");
}

/// `publish`, `reschedule` and `bulk` share their `--delay` / `--at` flags, each saying them in
/// its own words.
#[test]
fn each_command_says_its_own_words_for_delay_and_at() {
    let at = "Due at this time: 2026-11-23T08:00:00Z (ISO 8601 with Z or an offset) or epoch ms";
    let cases = [
        ("publish", "Due after this long: 250ms, 3s, 30m, 2h, 7d (a bare number is milliseconds)", at.to_string()),
        ("reschedule", "Due after this long from now: 250ms, 3s, 30m, 2h (a bare number is milliseconds)", at.into()),
        (
            "bulk",
            "reschedule: due after this long from now: 250ms, 3s, 30m, 2h (a bare number is ms)",
            format!("reschedule: d{}", &at[1..]),
        ),
    ];
    for (cmd, delay, at) in cases {
        let o = redelay("clihelp", &[cmd, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        let help = text(&o).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(help.contains(&format!("--delay <DELAY> {delay}")), "{cmd}: {help}");
        assert!(help.contains(&format!("--at <AT> {at} [alias: --at-ms]")), "{cmd}: {help}");
    }
}

#[test]
fn demo_refuses_bad_counts_and_spreads_naming_the_flag_and_range() {
    for (args, want) in [
        (&["demo", "--seconds", "inf"][..], "--seconds"),
        (&["demo", "--seconds", "1e300"], "--seconds"),
        (&["demo", "--seconds", "nan"], "--seconds"),
        (&["demo", "--seconds", "-1"], "--seconds"),
        (&["demo", "--seconds", "3601"], "--seconds"),
        (&["demo", "--count", "0"], "--count"),
        (&["demo", "--count", "10001"], "--count"),
    ] {
        let o = redelay("clidemobad", args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(64), "{args:?}: {err}");
        assert!(err.contains(want) && !err.contains("panicked"), "{args:?}: {err}");
        assert!(err.contains("0 to 3600") || err.contains("1 to 10000"), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}: nothing done");
    }
}

/// The queue a demo run named on its first line.
fn demo_queue(first_line: &str) -> String {
    let q = first_line.rsplit("(queue ").next().unwrap().trim_end().trim_end_matches(')');
    assert!(q.starts_with("demo-"), "{first_line}");
    q.to_string()
}

#[test]
fn demo_destroys_its_queue_at_the_end_and_on_ctrl_c() {
    let prefix = format!("clidemo{}", std::process::id());
    let o = redelay(&prefix, &["demo", "--count", "3", "--seconds", "0.3"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = text(&o);
    assert!(out.contains("ok: 3/3 delivered"), "{out}");
    let q = demo_queue(out.lines().next().unwrap());
    assert_eq!((lasting_keys(&prefix, &q), registered(&prefix)), (vec![], vec![]), "{out}");

    // Ctrl-C while messages wait: the queue goes too, and the demo ends with 130.
    let mut child = Command::new(env!("CARGO_BIN_EXE_redelay"))
        .args(["--url", &redis_url(), "--prefix", &prefix, "demo", "--count", "5", "--seconds", "600"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let q = demo_queue(&lines.next().unwrap().unwrap());
    let t = std::time::Instant::now();
    while keys_of(&prefix, &q).is_empty() {
        assert!(t.elapsed() < std::time::Duration::from_secs(10), "never published");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200)); // subscribed
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let rest: Vec<String> = lines.map_while(|l| l.ok()).collect();
    assert_eq!(o.status.code(), Some(130), "{rest:?} {}", stderr(&o));
    assert!(rest.iter().any(|l| l.contains(&format!("queue {q} destroyed"))), "{rest:?}");
    assert_eq!((lasting_keys(&prefix, &q), registered(&prefix)), (vec![], vec![]));
}

/// The keys of `queue` that do not expire by themselves (a fetch's replay key, which lives
/// at most a lease, does).
fn lasting_keys(prefix: &str, queue: &str) -> Vec<String> {
    let keys = keys_of(prefix, queue);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = common::raw().await;
        let mut out = Vec::new();
        for k in keys {
            let ttl: i64 = redis::cmd("PTTL").arg(&k).query_async(&mut c).await.unwrap();
            if ttl < 0 {
                out.push(k);
            }
        }
        out
    })
}

#[test]
fn exit_codes_follow_the_kind_of_error() {
    let prefix = format!("cliexit{}", std::process::id());
    assert!(redelay(&prefix, &["publish", "q", "x", "--id", "a", "--delay", "1h"]).status.success());
    // (--url, --prefix, command, exit code, what stderr says)
    let url = redis_url();
    let cases: [(&str, &str, &[&str], i32, &str); 9] = [
        (&url, &prefix, &["reschedule", "q", "nosuch", "--delay", "1s"], 1, "no message with id \"nosuch\""),
        (&url, &prefix, &["peek", "q", "nosuch"], 1, "no message with id \"nosuch\""),
        (&url, &prefix, &["cancel", "q", "nosuch"], 1, "no message with id \"nosuch\""),
        ("notaurl", &prefix, &["stats"], 64, "url: unknown scheme"),
        ("redis://127.0.0.1:1/abc", &prefix, &["stats"], 64, "url: "),
        (&url, "a\"b", &["stats"], 64, "prefix: must be"),
        (&url, "", &["stats"], 64, "prefix: must be"),
        ("notaurl", &prefix, &["demo"], 64, "url: unknown scheme"),
        (&url, "a\"b", &["token", "list", "ns"], 64, "prefix: must be"),
    ];
    for (url, prefix, args, code, want) in cases {
        let o = Command::new(env!("CARGO_BIN_EXE_redelay"))
            .args(["--url", url, "--prefix", prefix])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(code), "{url} {prefix} {args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{url} {prefix} {args:?}: {}", stderr(&o));
    }
    // A failed write to stdout (a full disk) is no unreachable Redis: 74 (EX_IOERR).
    if std::path::Path::new("/dev/full").exists() {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let o = redelay_to(&prefix, &["stats"], full.into());
        assert_eq!(o.status.code(), Some(74), "{}", stderr(&o));
        assert!(stderr(&o).contains("cannot write to stdout"), "{}", stderr(&o));
    }
    // A stdout closed at start (`>&-`) is no failed write (README): Rust's runtime opens
    // /dev/null in its place before the command runs, so the command succeeds.
    let o = Command::new("sh")
        .args(["-c", r#""$0" "$@" >&-"#, env!("CARGO_BIN_EXE_redelay"), "--url", &redis_url(), "--prefix", &prefix])
        .arg("stats")
        .output()
        .unwrap();
    assert_eq!((o.status.code(), stderr(&o)), (Some(0), String::new()));
    redelay(&prefix, &["destroy", "q", "--yes"]);
}

#[test]
fn destroy_deletes_what_pause_or_set_history_stored_for_an_unknown_queue() {
    let prefix = format!("clidestroyleft{}", std::process::id());
    for (queue, args) in [("p", &["pause", "p"][..]), ("h", &["set-history", "h", "off"])] {
        assert!(redelay(&prefix, args).status.success());
        assert!(!keys_of(&prefix, queue).is_empty(), "{queue}: something stored");
        // No queue (no message, not registered): exit 1, as before, but --yes deletes the rest.
        let o = redelay(&prefix, &["destroy", queue]);
        assert_eq!(o.status.code(), Some(1), "{queue}: without --yes: {o:?}");
        assert!(stderr(&o).contains(&format!("no queue \"{queue}\"")), "{o:?}");
        assert!(!keys_of(&prefix, queue).is_empty(), "{queue}: kept without --yes");
        let o = redelay(&prefix, &["destroy", queue, "--yes"]);
        assert_eq!(o.status.code(), Some(1), "{queue}: {o:?}");
        assert!(stderr(&o).contains(&format!("no queue \"{queue}\"")), "{o:?}");
        assert_eq!(keys_of(&prefix, queue), Vec::<String>::new(), "{queue}: nothing left");
    }
    assert_eq!(registered(&prefix), Vec::<String>::new());
}

#[test]
fn upcoming_covers_the_whole_window_and_refuses_zero_or_too_many_buckets() {
    let prefix = format!("cliwindow{}", std::process::id());
    // (--next, --every, buckets, width ms)
    for (next, every, n, width) in [
        ("90m", "1h", 2, 3_600_000),
        ("1h", "1h", 1, 3_600_000),
        ("61m", "1m", 61, 60_000),
        ("1h", "7m", 9, 420_000),
        ("1000m", "1m", 1000, 60_000),
        ("1h", "2h", 1, 3_600_000),
        ("30s", "1m", 1, 30_000),
    ] {
        let o = redelay(&prefix, &["upcoming", "q", "--next", next, "--every", every, "--json"]);
        assert!(o.status.success(), "{next}/{every}: {o:?}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let from: Vec<i64> = v["buckets"].as_array().unwrap().iter().map(|b| b["at_ms"].as_i64().unwrap()).collect();
        assert_eq!(from.len(), n, "{next}/{every}");
        assert!(from.windows(2).all(|w| w[1] - w[0] == width), "{next}/{every}: {from:?}");
    }
    for (next, every, want) in [
        ("1h", "0", "--every: must be at least 1ms, got \"0\""),
        ("1h", "0.5ms", "--every: must be at least 1ms, got \"0.5ms\""),
        ("0", "1m", "--next: must be at least 1ms, got \"0\""),
        ("0.9ms", "1m", "--next: must be at least 1ms, got \"0.9ms\""),
        ("2h", "1s", "--next / --every: 2h in buckets of 1s is 7200 buckets, more than 1000"),
        ("1001m", "1m", "--next / --every: 1001m in buckets of 1m is 1001 buckets, more than 1000"),
    ] {
        let o = redelay(&prefix, &["upcoming", "q", "--next", next, "--every", every]);
        assert_eq!(o.status.code(), Some(64), "{next}/{every}: {o:?}");
        assert!(stderr(&o).contains(want), "{next}/{every}: {}", stderr(&o));
    }
}

/// Publishes through the library (bodies and headers the command line cannot give).
fn publish_raw(prefix: &str, queue: &str, id: &str, body: &[u8], headers: &[(&str, &str)], max_attempts: u32) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = redelay::Client::builder(&redis_url()).prefix(prefix).connect().await.unwrap();
        let mut m = redelay::Message::new(body.to_vec()).id(id).max_attempts(max_attempts);
        for (k, v) in headers {
            m = m.header(*k, *v);
        }
        c.queue(queue).unwrap().publish(m).await.unwrap();
    });
}

/// A search over several steps, a `--limit` at a time and on with `--cursor`, finds every match
/// once: a step's matches past the limit are shown, not cut (its cursor goes on after them).
#[test]
fn a_search_goes_on_with_its_cursor_and_skips_no_match() {
    let prefix = format!("clicursor{}", std::process::id());
    let ids: std::collections::BTreeSet<String> = (0..1500).map(|i| format!("m{i}")).collect();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = redelay::Client::builder(&redis_url()).prefix(&prefix).connect().await.unwrap();
        let batch = ids.iter().map(|id| redelay::Message::new(b"x".to_vec()).id(id.clone()).header("k", "v"));
        c.queue("q").unwrap().publish_batch(batch.collect()).await.unwrap();
    });
    let (mut found, mut cursor, mut calls) = (Vec::new(), None::<String>, 0);
    loop {
        let mut args = vec!["search", "q", "--header", "k=v", "--limit", "7", "--json"];
        if let Some(c) = &cursor {
            args.extend(["--cursor", c.as_str()]);
        }
        let v: serde_json::Value = serde_json::from_str(&text(&redelay(&prefix, &args))).unwrap();
        found.extend(v["items"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_string()));
        cursor = v["cursor"].as_str().map(str::to_string);
        calls += 1;
        if cursor.is_none() {
            break;
        }
        assert!(calls < 100, "the cursor never ends");
    }
    assert!(calls > 1, "one call found everything: the test needs several steps");
    assert_eq!(found.len(), ids.len(), "each match once");
    assert_eq!(found.into_iter().collect::<std::collections::BTreeSet<_>>(), ids);
    let human = text(&redelay(&prefix, &["search", "q", "--header", "k=v", "--limit", "1"]));
    assert!(human.contains("more with --cursor "), "{human}");
    redelay(&prefix, &["destroy", "q", "--yes"]);
}

#[test]
fn json_bodies_are_text_or_null_with_base64_as_the_gateway_gives_them() {
    let prefix = format!("clibinary{}", std::process::id());
    let binary: &[u8] = &[0xff, 0xfe, 0x00, 0x80];
    publish_raw(&prefix, "q", "x-bin", binary, &[], 1);
    publish_raw(&prefix, "q", "x-txt", b"hello", &[], 1);
    let want = |id: &str| match id {
        "x-bin" => (serde_json::Value::Null, "//4AgA=="),
        _ => (serde_json::json!("hello"), "aGVsbG8="),
    };
    let check = |what: &str, m: &serde_json::Value| {
        let id = m["id"].as_str().unwrap();
        let (body, b64) = want(id);
        assert_eq!((&m["body"], m["body_base64"].as_str()), (&body, Some(b64)), "{what}: {m}");
    };
    for id in ["x-bin", "x-txt"] {
        check("peek", &peek_json(&prefix, "q", id).unwrap());
    }
    let v: serde_json::Value =
        serde_json::from_str(&text(&redelay(&prefix, &["list", "q", "ready", "--json"]))).unwrap();
    assert_eq!(v["items"].as_array().unwrap().len(), 2);
    v["items"].as_array().unwrap().iter().for_each(|m| check("list", m));
    let v: serde_json::Value =
        serde_json::from_str(&text(&redelay(&prefix, &["search", "q", "--id-prefix", "x-", "--json"]))).unwrap();
    assert_eq!(v["items"].as_array().unwrap().len(), 2);
    v["items"].as_array().unwrap().iter().for_each(|m| check("search", m));
    // Dead letters too.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = redelay::Client::builder(&redis_url()).prefix(&prefix).connect().await.unwrap();
        let q = c.queue("q").unwrap();
        for d in q.fetch(2, std::time::Duration::from_secs(1)).await.unwrap() {
            q.nack(d.id(), d.token(), None, "failed").await.unwrap();
        }
    });
    let v: serde_json::Value =
        serde_json::from_str(&text(&redelay(&prefix, &["dead", "list", "q", "--json"]))).unwrap();
    assert_eq!(v["items"].as_array().unwrap().len(), 2);
    v["items"].as_array().unwrap().iter().for_each(|m| check("dead list", m));
    redelay(&prefix, &["destroy", "q", "--yes"]);
}

#[test]
fn control_characters_in_message_data_are_escaped_for_people_not_in_json() {
    let prefix = format!("cliescape{}", std::process::id());
    let body = "a\x1b[2Jb\x1b]0;pwned\x07c\nd\te\u{202e}f\u{9b}g";
    let escaped = r"a\x1b[2Jb\x1b]0;pwned\x07c\nd\te\u{202e}f\u{9b}g";
    publish_raw(&prefix, "q", "e1", body.as_bytes(), &[("k\x1b[31m", "v\nline 2\r")], 1);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = redelay::Client::builder(&redis_url()).prefix(&prefix).connect().await.unwrap();
        let q = c.queue("q").unwrap();
        let d = q.fetch(1, std::time::Duration::from_secs(1)).await.unwrap().remove(0);
        q.nack(d.id(), d.token(), None, "boom\x1b]0;pwned\x07\nsecond line").await.unwrap();
    });
    let raw = |s: &str| s.chars().any(|c| c.is_control() && c != '\n' || ('\u{202a}'..='\u{202e}').contains(&c));
    let peek = text(&redelay(&prefix, &["peek", "q", "e1"]));
    assert!(!raw(&peek), "{peek:?}");
    assert!(peek.contains(&format!("body:         {escaped}\n")), "{peek}");
    assert!(peek.contains("header:       k\\x1b[31m=v\\nline 2\\r\n"), "{peek}");
    assert!(peek.contains("last error:   boom\\x1b]0;pwned\\x07\\nsecond line\n"), "{peek}");
    // One line per message (and a summary line).
    for (args, lines) in
        [(&["list", "q", "dead"][..], 2), (&["search", "q", "--body", "pwned"], 2), (&["dead", "list", "q"], 1)]
    {
        let out = text(&redelay(&prefix, args));
        assert!(!raw(&out), "{args:?}: {out:?}");
        assert!(out.contains(r"\x1b"), "{args:?}: {out}");
        assert_eq!(out.lines().count(), lines, "{args:?}: {out}");
    }
    // JSON keeps the data as it is (JSON escapes it).
    let v = peek_json(&prefix, "q", "e1").unwrap();
    assert_eq!((v["body"].as_str(), v["headers"]["k\x1b[31m"].as_str()), (Some(body), Some("v\nline 2\r")), "{v}");
    assert_eq!(v["last_error"].as_str(), Some("boom\x1b]0;pwned\x07\nsecond line"));
    redelay(&prefix, &["destroy", "q", "--yes"]);
}

#[test]
fn history_takes_compound_durations_as_its_help_says() {
    let prefix = format!("clicompound{}", std::process::id());
    for (last, points, step) in [("1h30m", 91, 60_000), ("23h59m", 1440, 60_000), ("1d1h", 26, 3_600_000)] {
        let (n, gaps) = gaps(&redelay(&prefix, &["history", "h", "--last", last, "--json"]), "points");
        assert_eq!(n, points, "{last}");
        assert!(gaps.iter().all(|&g| g == step), "{last}: {gaps:?}");
    }
}

/// `redelay serve` on a free port of 127.0.0.1 (`--listen 127.0.0.1:0`: the port is read from
/// what it prints), without the admin listener; stopped when dropped.
struct Gateway {
    child: std::process::Child,
    port: u16,
    /// Reads what it writes to stderr after its first line (as it comes: a closed pipe would
    /// fail the server's next line), and returns it at the end of the pipe.
    reader: Option<std::thread::JoinHandle<String>>,
}

impl Gateway {
    /// Starts it for `prefix`, with `admin_token` as its admin token (which may read every queue).
    fn start(prefix: &str, admin_token: Option<&str>) -> Gateway {
        Self::start_with(prefix, admin_token, &[])
    }

    /// As [`start`](Self::start), with `args` before `serve` (`--log info`).
    fn start_with(prefix: &str, admin_token: Option<&str>, args: &[&str]) -> Gateway {
        use std::io::{BufRead, Read};
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_redelay"));
        cmd.args(["--url", &redis_url(), "--prefix", prefix])
            .args(args)
            .args(["serve", "--no-admin", "--listen", "127.0.0.1:0"])
            .env_remove("REDELAY_LOG")
            .env_remove("REDELAY_ADMIN_TOKEN")
            .stderr(std::process::Stdio::piped());
        if let Some(t) = admin_token {
            cmd.env("REDELAY_ADMIN_TOKEN", t);
        }
        let mut child = cmd.spawn().expect("redelay serve");
        let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        stderr.read_line(&mut first).unwrap();
        let reader = std::thread::spawn(move || {
            let mut logged = Vec::new();
            let _ = stderr.read_to_end(&mut logged);
            String::from_utf8_lossy(&logged).into_owned()
        });
        let port = first
            .split("http://127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {first:?}"));
        Gateway { child, port, reader: Some(reader) }
    }

    /// Stops it; what it wrote to stderr after its first line.
    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.reader.take().unwrap().join().unwrap()
    }

    /// Sends it `signal` (`TERM`, `INT`) and waits for it to end: its exit status, and what it
    /// wrote to stderr after its first line.
    fn signal(mut self, signal: &str) -> (std::process::ExitStatus, String) {
        let kill = Command::new("kill").args([&format!("-{signal}"), &self.child.id().to_string()]).status().unwrap();
        assert!(kill.success());
        let status = self.child.wait().unwrap();
        (status, self.reader.take().unwrap().join().unwrap())
    }

    /// `GET path` with `token`: the status and the body as JSON.
    fn get_json(&self, path: &str, token: &str) -> (u16, serde_json::Value) {
        let (status, body) = http(self.port, "GET", path, token, "").expect("the gateway answers");
        (status, serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}")))
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `serve --listen 127.0.0.1:0` takes any free port and says which (it printed `:0`).
#[test]
fn serve_on_port_zero_prints_the_port_it_got() {
    let gw = Gateway::start(&format!("cliport{}", std::process::id()), None);
    assert_ne!(gw.port, 0);
    assert_eq!(http(gw.port, "GET", "/healthz", "", "").map(|(st, _)| st), Some(200));
}

/// SIGTERM (what `kill`, systemd, Docker and Kubernetes send) stops `redelay serve` as Ctrl-C
/// (SIGINT) does: a long-poll in flight is still answered (here with a job published after the
/// signal), the server says it stops, and it exits 0.
#[test]
fn serve_stops_gracefully_on_sigterm_as_on_sigint() {
    let prefix = format!("clisig{}", std::process::id());
    let mut c = redis::Client::open(redis_url().as_str()).unwrap().get_connection().unwrap();
    for sig in ["TERM", "INT"] {
        let gw = Gateway::start(&prefix, Some("adm"));
        let (port, q) = (gw.port, format!("q{sig}"));
        let path = format!("/api/ns/{q}?timeout=60");
        let poll = std::thread::spawn(move || http(port, "GET", &path, "adm", ""));
        // The long-poll's fetch waits once the queue's wake channel has its subscriber.
        let channel = format!("{prefix}:{{ns:{q}}}:wake");
        let t = std::time::Instant::now();
        loop {
            let (_, n): (String, u64) = redis::cmd("PUBSUB").arg("NUMSUB").arg(&channel).query(&mut c).unwrap();
            if n > 0 {
                break;
            }
            assert!(t.elapsed() < std::time::Duration::from_secs(30), "the long-poll never waited");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let stopping = std::thread::spawn(move || gw.signal(sig));
        assert!(redelay(&prefix, &["publish", &format!("ns:{q}"), "late"]).status.success());
        let (status, logged) = stopping.join().unwrap();
        let answer = poll.join().unwrap();
        assert_eq!(status.code(), Some(0), "SIG{sig}: {status:?} {logged}");
        assert!(logged.contains(&format!("redelay serve: SIG{sig}: stopping")), "SIG{sig}: {logged}");
        let (st, body) = answer.unwrap_or_else(|| panic!("SIG{sig}: the long-poll got no answer"));
        assert_eq!(st, 200, "SIG{sig}: {body}");
        assert!(body.contains(r#""msg":"new job""#), "SIG{sig}: {body}");
    }
}

/// `redelay serve` logs the gateway's warnings on stderr (a request that failed in Redis), one
/// line each with the time, level and target; `--log off` keeps them back, and a level that is
/// none is refused naming the flag and the levels.
#[test]
fn serve_logs_a_failed_request_on_stderr_unless_told_not_to() {
    let prefix = format!("clilog{}", std::process::id());
    assert!(redelay(&prefix, &["publish", "q", "x"]).status.success());
    // The queue's schedule is no sorted set any more: its stats fail in Redis (a 500).
    let mut c = redis::Client::open(redis_url().as_str()).unwrap().get_connection().unwrap();
    let _: () = redis::cmd("SET").arg(format!("{prefix}:{{q}}:sched")).arg("x").query(&mut c).unwrap();
    for (args, logs) in [(&[][..], true), (&["--log", "off"][..], false)] {
        let gw = Gateway::start_with(&prefix, Some("adm"), args);
        let (status, body) = gw.get_json("/v1/queues/q/stats", "adm");
        assert_eq!(status, 500, "{body}");
        let logged = gw.stop();
        let line = logged.lines().find(|l| l.contains("WRONGTYPE"));
        if logs {
            let line = line.unwrap_or_else(|| panic!("no warning in {logged:?}"));
            let (time, rest) = line.split_once(' ').unwrap();
            assert!(units_iso(time), "{line}");
            assert!(rest.starts_with("WARN redelay::server: Redis: "), "{line}");
        } else {
            assert_eq!(line, None, "{args:?}: {logged:?}");
        }
    }
    let o = redelay(&prefix, &["--log", "loud", "stats"]);
    assert_eq!(o.status.code(), Some(64));
    let err = stderr(&o);
    assert!(
        err.contains("'loud' for '--log <LEVEL>'") && err.contains("off, error, warn, info, debug, trace"),
        "{err}"
    );
    redelay(&prefix, &["destroy", "q", "--yes"]);
}

/// `2026-11-26T22:48:31.506Z`: an ISO 8601 UTC time to the millisecond.
fn units_iso(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 24 && b[4] == b'-' && b[10] == b'T' && b[19] == b'.' && b[23] == b'Z'
}

/// Sets every field named `names`, at any depth, to null: values that differ between two reads
/// made at different moments (`now_ms`), while the field itself must be in both.
fn blank(v: &mut serde_json::Value, names: &[&str]) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if names.contains(&k.as_str()) {
                    *x = serde_json::Value::Null;
                } else {
                    blank(x, names);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| blank(x, names)),
        _ => {}
    }
}

/// Waits, when the next minute is less than 5 s away, until it has begun: a history read
/// twice then sees the same minutes.
fn clear_of_a_minute_boundary() {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() % 60_000;
    if ms >= 55_000 {
        std::thread::sleep(std::time::Duration::from_millis((60_000 - ms) as u64 + 100));
    }
}

/// Every read's `--json` is what the gateway's `/v1` answers for the same request (the same
/// serializers, `redelay_server::wire`): one script reads both.
#[test]
fn json_of_every_read_is_what_the_gateway_answers() {
    let prefix = format!("cliv1{}", std::process::id());
    let admin = format!("admin-{prefix}");
    // A message in each state: dead (a last error), leased, scheduled (a header, an expiry) and
    // ready (a body that is not UTF-8).
    dead_letters(&prefix, "q", &["d1"]);
    publish_raw(&prefix, "q", "l1", b"leased", &[], 3);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = redelay::Client::builder(&redis_url()).prefix(&prefix).connect().await.unwrap();
        let got = c
            .queue("q")
            .unwrap()
            .fetch_leasing(1, std::time::Duration::from_secs(1), Some(std::time::Duration::from_secs(3600)))
            .await;
        assert_eq!(got.unwrap().len(), 1, "l1 leased for an hour");
    });
    let o = redelay(
        &prefix,
        &["publish", "q", "later", "--id", "s1", "--delay", "30m", "--header", "k=v", "--expires-in", "2h"],
    );
    assert!(o.status.success(), "{o:?}");
    publish_raw(&prefix, "q", "r1", &[0xff, 0x00, 0x80], &[("k", "w")], 3);

    let gw = Gateway::start(&prefix, Some(&admin));
    // (CLI arguments, the /v1 GET of the same request, the fields two moments give apart)
    let reads: [(&[&str], &str, &[&str]); 12] = [
        (&["peek", "q", "r1"], "messages/r1", &[]),
        (&["peek", "q", "s1"], "messages/s1", &[]),
        (&["peek", "q", "l1"], "messages/l1", &[]),
        (&["peek", "q", "d1"], "messages/d1", &[]),
        (&["list", "q", "ready"], "messages?state=ready&offset=0&limit=20", &[]),
        (&["list", "q", "leased", "--offset", "0", "--limit", "5"], "messages?state=leased&offset=0&limit=5", &[]),
        (&["list", "q", "dead"], "messages?state=dead&offset=0&limit=20", &[]),
        (&["search", "q", "--header", "k=v"], "search?header=k:v", &[]),
        (&["search", "q", "--error", "lease"], "search?error=lease", &[]),
        (&["dead", "list", "q"], "dead?offset=0&limit=20", &[]),
        (&["history", "q"], "history", &[]),
        (&["upcoming", "q", "--next", "2h", "--every", "1h"], "upcoming?width_ms=3600000&buckets=2", &["at_ms"]),
    ];
    let mut unlike = Vec::new();
    for (args, path, differ) in reads {
        clear_of_a_minute_boundary();
        let o = redelay(&prefix, &[args, &["--json"]].concat());
        assert!(o.status.success(), "{args:?}: {o:?}");
        let mut cli: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let (status, mut v1) = gw.get_json(&format!("/v1/queues/q/{path}"), &admin);
        assert_eq!(status, 200, "{path}: {v1}");
        blank(&mut cli, differ);
        blank(&mut v1, differ);
        if cli != v1 {
            unlike.push(format!("{args:?} --json:\n  {cli}\nGET /v1/queues/q/{path}:\n  {v1}"));
        }
    }
    // `stats Q` is a row of the several-queue form; its counts are the gateway's.
    let (status, mut v1) = gw.get_json("/v1/queues/q/stats", &admin);
    assert_eq!(status, 200, "{v1}");
    let mut cli = stats_json(&prefix, "q");
    blank(&mut cli, &["now_ms"]);
    blank(&mut v1, &["now_ms"]);
    if cli != v1 {
        unlike.push(format!("[\"stats\", \"q\"] --json's row:\n  {cli}\nGET /v1/queues/q/stats:\n  {v1}"));
    }
    assert!(
        unlike.is_empty(),
        "{} of {} reads unlike the gateway's:\n{}",
        unlike.len(),
        reads.len() + 1,
        unlike.join("\n")
    );
    // And a change's answer: a reschedule's (within the hour before s1 expires).
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let at = (now.as_millis() + 3_600_000).to_string();
    let o = redelay(&prefix, &["reschedule", "q", "s1", "--at", &at, "--json"]);
    assert!(o.status.success(), "{o:?}");
    let cli: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let (status, body) =
        http(gw.port, "POST", "/v1/queues/q/messages/s1/reschedule", &admin, &format!("{{\"at_ms\":{at}}}")).unwrap();
    assert_eq!((status, cli), (200, serde_json::from_str::<serde_json::Value>(&body).unwrap()), "{body}");
    drop(gw);
    redelay(&prefix, &["destroy", "q", "--yes"]);
}

/// Every change's `--json` is what the gateway's `/v1` answers for the same change: the CLI acts
/// on queue `c`, the gateway on `g`, both made alike.
#[test]
fn json_of_every_change_is_what_the_gateway_answers() {
    let prefix = format!("clichg{}", std::process::id());
    let admin = format!("admin-{prefix}");
    for q in ["c", "g"] {
        dead_letters(&prefix, q, &["d1", "d2", "d3"]);
        assert!(redelay(&prefix, &["publish", q, "x", "--id", "s1", "--delay", "1h"]).status.success());
    }
    let gw = Gateway::start(&prefix, Some(&admin));
    // (CLI arguments on `c`, the /v1 request on `g`: method, path under /v1/queues, body)
    let changes: [(&[&str], &str, &str, &str); 15] = [
        (
            &["publish", "c", "hello", "--id", "p1", "--delay", "1h"],
            "POST",
            "g/messages",
            r#"{"body":"hello","id":"p1","delay_ms":3600000}"#,
        ),
        (&["publish", "c", "again", "--id", "p1"], "POST", "g/messages", r#"{"body":"again","id":"p1"}"#),
        (&["cancel", "c", "p1"], "DELETE", "g/messages/p1", ""),
        (&["pause", "c"], "POST", "g/pause", ""),
        (&["pause", "c"], "POST", "g/pause", ""),
        (&["resume", "c"], "POST", "g/resume", ""),
        (&["set-history", "c", "off"], "PUT", "g/history", r#"{"on":false}"#),
        (&["set-history", "c", "on"], "PUT", "g/history", r#"{"on":true}"#),
        (&["verify", "c"], "POST", "g/verify", ""),
        (
            &["dead", "respawn", "c", "d1", "--expires-in", "1h"],
            "POST",
            "g/dead/respawn",
            r#"{"ids":["d1"],"expires_in_ms":3600000}"#,
        ),
        (&["dead", "purge", "c", "--oldest", "1", "--yes"], "POST", "g/dead/purge", r#"{"oldest":1}"#),
        (&["dead", "purge", "c", "--all", "--yes"], "POST", "g/dead/purge", r#"{"all":true}"#),
        (
            &["bulk", "c", "cancel", "--id-prefix", "s", "--yes"],
            "POST",
            "g/bulk",
            r#"{"action":"cancel","search":{"id_prefix":"s"}}"#,
        ),
        (&["reschedule", "c", "d1", "--delay", "30m"], "POST", "g/messages/d1/reschedule", r#"{"delay_ms":1800000}"#),
        (&["destroy", "c", "--yes"], "DELETE", "g", ""),
    ];
    let (mut unlike, mut said) = (Vec::new(), Vec::new());
    for (args, method, path, body) in changes {
        let o = redelay(&prefix, &[args, &["--json"]].concat());
        assert!(o.status.success(), "{args:?}: {o:?}");
        let mut cli: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let (status, v1) = http(gw.port, method, &format!("/v1/queues/{path}"), &admin, body).unwrap();
        assert!(status == 200 || status == 201, "{method} {path}: {status} {v1}");
        let mut v1: serde_json::Value = serde_json::from_str(&v1).unwrap();
        blank(&mut cli, &["due_at_ms"]);
        blank(&mut v1, &["due_at_ms"]);
        if cli != v1 {
            unlike.push(format!("{args:?} --json:\n  {cli}\n{method} /v1/queues/{path}:\n  {v1}"));
        }
        said.push(cli.to_string());
    }
    drop(gw);
    assert!(
        unlike.is_empty(),
        "{} of {} changes unlike the gateway's:\n{}",
        unlike.len(),
        changes.len(),
        unlike.join("\n")
    );
    // What the answers say, not only that they agree.
    let want = [
        r#"{"id":"p1","status":"stored"}"#,
        r#"{"id":"p1","status":"duplicate"}"#,
        r#"{"cancelled":true}"#,
        r#"{"changed":true}"#,
        r#"{"changed":false}"#,
        r#"{"changed":true}"#,
        r#"{"changed":true}"#,
        r#"{"changed":true}"#,
        r#"{"ok":true,"problems":[],"records":4}"#,
        r#"{"count":1}"#,
        r#"{"count":1}"#,
        r#"{"count":1}"#,
        r#"{"done":1,"matched":1,"scanned":2}"#,
        r#"{"due_at_ms":null}"#,
        r#"{"destroyed":true}"#,
    ];
    assert_eq!(said, want);
    assert!(registered(&prefix).is_empty(), "both destroyed");
}

/// `redelay args` on a terminal (a pty, by util-linux `script`; `redirect`: a shell redirection
/// after it) on which `typed` is typed: the exit status and what the terminal showed (the
/// question, the answer echoed, the output).
fn redelay_on_a_terminal(prefix: &str, args: &[&str], redirect: &str, typed: &str) -> (Option<i32>, String) {
    use std::io::Write;
    use std::process::Stdio;
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let url = redis_url();
    let line: Vec<String> = [env!("CARGO_BIN_EXE_redelay"), "--url", &url, "--prefix", prefix]
        .iter()
        .chain(args)
        .map(|a| quote(a))
        .collect();
    let mut child = Command::new("script")
        .args(["-qec", &format!("{} {redirect}", line.join(" ")), "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux `script` (runs a command on a terminal)");
    child.stdin.take().unwrap().write_all(typed.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned())
}

/// Deleting many messages by a selection (`dead purge --oldest/--all`, `bulk cancel/purge` by a
/// search, `destroy`) asks on a terminal, saying what would go; elsewhere it needs --yes.
#[test]
fn bulk_deletions_ask_on_a_terminal_and_need_yes_elsewhere() {
    let prefix = format!("cliyes{}", std::process::id());
    dead_letters(&prefix, "q", &["d1", "d2", "d3"]);
    for id in ["a1", "a2"] {
        assert!(redelay(&prefix, &["publish", "q", "x", "--id", id, "--delay", "1h"]).status.success());
    }
    // No terminal, no --yes: refused (64), what would go and --yes named, nothing deleted.
    let refused: [(&[&str], &str); 5] = [
        (&["dead", "purge", "q", "--all"], "would delete all 3 dead letters of queue \"q\"; pass --yes"),
        (
            &["dead", "purge", "q", "--oldest", "2"],
            "would delete the 2 oldest of the 3 dead letters of queue \"q\"; pass --yes",
        ),
        (
            &["bulk", "q", "cancel", "--id-prefix", "a"],
            "would delete every message of queue \"q\" whose id starts with \"a\" (of its 5); pass --yes",
        ),
        (
            &["bulk", "q", "purge", "--error", "lease"],
            "would delete every dead letter of queue \"q\" whose last error contains \"lease\" (of its 3); pass --yes",
        ),
        (&["destroy", "q"], "would delete 5 messages of queue \"q\"; pass --yes"),
    ];
    for (args, want) in refused {
        let o = redelay(&prefix, args);
        assert_eq!(o.status.code(), Some(64), "{args:?}: {o:?}");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("(no terminal to ask on: stdin and stderr must both be one)"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    assert_eq!(total(&prefix, "q"), 5);

    // On a terminal: asked; anything but y or yes (nothing typed too) deletes nothing, exit 1.
    for typed in ["n\n", "\n", "", "yess\n"] {
        let (code, shown) = redelay_on_a_terminal(&prefix, &["dead", "purge", "q", "--all"], "", typed);
        assert_eq!(code, Some(1), "{typed:?}: {shown}");
        assert!(shown.contains("redelay: delete all 3 dead letters of queue \"q\"? [y/N]"), "{typed:?}: {shown}");
        assert!(shown.contains("not confirmed: nothing deleted"), "{typed:?}: {shown}");
    }
    assert_eq!(stats_json(&prefix, "q")["dead"], 3);
    // stderr sent elsewhere would hide the question: refused, as without a terminal.
    let (code, shown) = redelay_on_a_terminal(&prefix, &["dead", "purge", "q", "--all"], "2>/dev/null", "y\n");
    assert_eq!(code, Some(64), "{shown}");
    assert!(!shown.contains("[y/N]"), "{shown}");
    assert_eq!(stats_json(&prefix, "q")["dead"], 3);
    let (code, shown) = redelay_on_a_terminal(&prefix, &["dead", "purge", "q", "--oldest", "1"], "", "y\n");
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("delete the 1 oldest of the 3 dead letters") && shown.contains("purged 1"), "{shown}");
    let (code, shown) = redelay_on_a_terminal(&prefix, &["bulk", "q", "cancel", "--id-prefix", "a"], "", "YES\n");
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("matched 2, done 2"), "{shown}");
    assert_eq!((stats_json(&prefix, "q")["dead"].as_u64(), total(&prefix, "q")), (Some(2), 2));

    // Ids named, or nothing to delete: no question, also without a terminal.
    let o = redelay(&prefix, &["dead", "purge", "q", "d2"]);
    assert_eq!((o.status.code(), text(&o).trim()), (Some(0), "purged 1"), "{o:?}");
    let o = redelay(&prefix, &["bulk", "q", "purge", "d3", "--json"]);
    assert_eq!(text(&o).trim(), r#"{"done":1,"matched":1,"scanned":0}"#, "{o:?}");
    let o = redelay(&prefix, &["dead", "purge", "q", "--all"]);
    assert_eq!((o.status.code(), text(&o).trim()), (Some(0), "purged 0"), "{o:?}");
    assert!(redelay(&prefix, &["verify", "q"]).status.success());
    redelay(&prefix, &["destroy", "q", "--yes"]);
    assert!(registered(&prefix).is_empty());
}

/// A queue named `..` registered before such names were refused: `stats` of every queue shows
/// it with a note on stderr (it failed whole, exit 64; then it was left out), `stats ..` reads
/// it, publishing to it is refused, and `destroy .. --yes` removes it (only redis-cli could).
#[test]
fn a_queue_with_a_name_refused_since_can_be_read_and_destroyed() {
    let prefix = format!("clidots{}", std::process::id());
    assert!(redelay(&prefix, &["publish", "ok", "x"]).status.success());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = redis::Client::open(redis_url()).unwrap().get_multiplexed_async_connection().await.unwrap();
        let _: () = redis::cmd("SADD").arg(format!("{prefix}:queues")).arg("..").query_async(&mut c).await.unwrap();
    });
    for args in [&["stats"][..], &["stats", "--json"], &["stats", "--prometheus"]] {
        let o = redelay(&prefix, args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {o:?}");
        assert!(text(&o).contains("ok") && text(&o).contains(".."), "{args:?}: {}", text(&o));
        let note = "redelay: queue \"..\": queue name: \"..\" is a path step in a URL, so HTTP could not name it; \
                    stored before such names were refused, it can be read and destroyed (`redelay destroy .. --yes`)";
        assert!(stderr(&o).contains(note), "{}", stderr(&o));
    }
    let o = redelay(&prefix, &["stats", "..", "--json"]);
    assert!(o.status.success() && text(&o).contains(r#""queue":"..""#), "{o:?}");
    let o = redelay(&prefix, &["publish", "..", "x"]);
    assert_eq!(o.status.code(), Some(64), "{o:?}");
    assert!(stderr(&o).contains("\"..\" is a path step in a URL"), "{}", stderr(&o));
    let o = redelay(&prefix, &["destroy", "..", "--yes"]);
    assert_eq!((o.status.code(), text(&o).trim()), (Some(0), "destroyed: 0 messages of queue \"..\""), "{o:?}");
    assert_eq!(registered(&prefix), ["ok"]);
    redelay(&prefix, &["destroy", "ok", "--yes"]);
}

/// The same with `--shards N`, for a sharded queue named `..`: read with its count (every
/// registered queue too), refused with another, not written to, destroyed.
#[test]
fn shards_named_for_a_queue_with_a_name_refused_since() {
    let prefix = format!("clidotshards{}", std::process::id());
    for id in ["a", "b", "c", "d"] {
        assert!(redelay(&prefix, &["--shards", "2", "publish", "lg", "x", "--id", id]).status.success());
    }
    let keys = keys_of(&prefix, "lg");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = redis::Client::open(redis_url()).unwrap().get_multiplexed_async_connection().await.unwrap();
        for k in keys {
            let to = k.replace("{lg", "{..");
            let _: () = redis::cmd("RENAME").arg(&k).arg(to).query_async(&mut c).await.unwrap();
        }
        let registry = format!("{prefix}:queues");
        let _: () = redis::cmd("SREM").arg(&registry).arg("lg").query_async(&mut c).await.unwrap();
        let _: () = redis::cmd("SADD").arg(&registry).arg("..").query_async(&mut c).await.unwrap();
    });
    for args in [&["--shards", "2", "stats", "..", "--json"][..], &["--shards", "2", "stats", "--json"]] {
        let o = redelay(&prefix, args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {o:?}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!((&v["queues"][0]["queue"], &v["queues"][0]["stats"]["ready"]), (&"..".into(), &4.into()), "{v}");
    }
    assert!(redelay(&prefix, &["--shards", "2", "peek", "..", "c"]).status.success());
    let o = redelay(&prefix, &["--shards", "2", "publish", "..", "x"]);
    assert_eq!(o.status.code(), Some(64), "{o:?}");
    assert!(stderr(&o).contains("\"..\" is a path step in a URL"), "{}", stderr(&o));
    let o = redelay(&prefix, &["--shards", "3", "stats", ".."]);
    assert_eq!(o.status.code(), Some(64), "{o:?}");
    assert!(stderr(&o).contains("has 2 shards in Redis and this handle was opened with 3"), "{}", stderr(&o));
    let o = redelay(&prefix, &["--shards", "2", "destroy", "..", "--yes"]);
    assert_eq!((o.status.code(), text(&o).trim()), (Some(0), "destroyed: 4 messages of queue \"..\""), "{o:?}");
    assert!(registered(&prefix).is_empty());
    assert_eq!(keys_of(&prefix, ".."), Vec::<String>::new());
}

/// `count` messages `p0..` of `queue`, waiting (due in an hour), published at once.
fn waiting(prefix: &str, queue: &str, count: usize) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = redelay::Client::builder(&redis_url()).prefix(prefix).connect().await.unwrap();
        let hour = std::time::Duration::from_secs(3600);
        let msgs = (0..count).map(|i| redelay::Message::new(b"x".to_vec()).id(format!("p{i}")).delay(hour)).collect();
        c.queue(queue).unwrap().publish_batch(msgs).await.unwrap();
    });
}

/// `count` dead letters of `queue` (which has no other due message), made at once.
fn many_dead(prefix: &str, queue: &str, count: usize) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = redelay::Client::builder(&redis_url()).prefix(prefix).connect().await.unwrap();
        let q = c.queue(queue).unwrap();
        let msgs =
            (0..count).map(|i| redelay::Message::new(b"x".to_vec()).id(format!("d{i}")).max_attempts(1)).collect();
        q.publish_batch(msgs).await.unwrap();
        loop {
            let got = q.fetch(1000, std::time::Duration::ZERO).await.unwrap();
            if got.is_empty() {
                break;
            }
            for d in got {
                d.nack(None, "boom").await.unwrap();
            }
        }
        assert_eq!(q.stats().await.unwrap().dead, count as u64);
    });
}

/// A run of several steps (a bulk action by a search: ~500 records a step; a purge: 1,000
/// dead letters a step) shows its progress on a terminal, on stderr, one line rewritten (from
/// the second step on) and cleared at the end; elsewhere nothing, and `--json` is unchanged.
#[test]
fn long_runs_show_their_progress_on_a_terminal_only() {
    let prefix = format!("cliprogress{}", std::process::id());
    waiting(&prefix, "q", 1500);
    let (code, shown) = redelay_on_a_terminal(&prefix, &["bulk", "q", "cancel", "--id-prefix", "p1", "--yes"], "", "");
    assert_eq!(code, Some(0), "{shown}");
    // p1, p10..p19, p100..p199, p1000..p1499: 611, found in 3 or more steps
    assert!(shown.contains("\r\x1b[Kredelay: matched "), "{shown:?}");
    assert!(shown.contains(" so far...") && shown.contains("\r\x1b[Kmatched 611, done 611"), "{shown:?}");
    // stderr elsewhere: no progress (stderr sent away by the shell, stdout still the terminal)
    let (code, shown) =
        redelay_on_a_terminal(&prefix, &["bulk", "q", "cancel", "--id-prefix", "p", "--yes"], "2>/dev/null", "");
    assert_eq!(code, Some(0), "{shown}");
    assert_eq!(shown.trim(), "matched 889, done 889 (scanned 889)", "{shown:?}");

    many_dead(&prefix, "q", 2100);
    let o = redelay(&prefix, &["bulk", "q", "respawn", "--error", "boom", "--json"]);
    assert_eq!((text(&o).trim(), stderr(&o)), (r#"{"done":2100,"matched":2100,"scanned":2100}"#, "".into()));
    let o = redelay(&prefix, &["stats", "q", "--json"]);
    assert!(text(&o).contains(r#""ready":2100"#), "{o:?}");
    redelay(&prefix, &["destroy", "q", "--yes"]);
    many_dead(&prefix, "q", 2100);
    let (code, shown) = redelay_on_a_terminal(&prefix, &["dead", "purge", "q", "--all", "--yes"], "", "");
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("redelay: purged 2000 so far...") && shown.contains("\r\x1b[Kpurged 2100"), "{shown:?}");
    assert!(!shown.contains("purged 1000 so far"), "the first step is not shown: {shown:?}");
    redelay(&prefix, &["destroy", "q", "--yes"]);
}

/// Ctrl-C in a long run ends it saying what was done so far, which stays done (exit 130).
/// The run goes through a proxy that holds back the call of its third search page: the run
/// shows its progress after two steps and cannot end before Ctrl-C ends it (but for the
/// CLI's response timeout, 10 s: then it fails, exit 2), while every other test's calls go on.
#[test]
fn ctrl_c_in_a_long_run_says_what_was_done_and_it_stays_done() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let prefix = format!("cliinterrupt{}", std::process::id());
    waiting(&prefix, "q", 20_000);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let proxy = rt.block_on(async {
        // The search script is cached, so that each page is one call (no NOSCRIPT retry).
        let c = redelay::Client::builder(&redis_url()).prefix(&prefix).connect().await.unwrap();
        c.queue("q").unwrap().search(&redelay::Search::IdPrefix("zzz".into()), None).await.unwrap();
        common::FaultProxy::start(common::port_of(&redis_url())).await
    });
    // A search page's call (`--id-prefix p`: the arguments "id", "p"), not a cancel's.
    proxy.delay_requests_with_after(b"$2\r\nid\r\n$1\r\np\r\n", 2, std::time::Duration::from_secs(60));
    let line = format!(
        "'{}' --url '{}' --prefix {prefix} bulk q cancel --id-prefix p --yes",
        env!("CARGO_BIN_EXE_redelay"),
        proxy.url()
    );
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("util-linux `script` (runs a command on a terminal)");
    let mut out = child.stdout.take().unwrap();
    let (mut shown, mut buf) = (Vec::new(), [0u8; 4096]);
    while !String::from_utf8_lossy(&shown).contains(" so far...") {
        let n = out.read(&mut buf).unwrap();
        assert!(n > 0, "ended before showing progress: {}", String::from_utf8_lossy(&shown));
        shown.extend_from_slice(&buf[..n]);
    }
    child.stdin.as_mut().unwrap().write_all(b"\x03").unwrap();
    out.read_to_end(&mut shown).unwrap();
    let code = child.wait().unwrap().code();
    let shown = String::from_utf8_lossy(&shown).into_owned();
    assert_eq!(code, Some(130), "{shown}");
    let progress = shown.split("redelay: ").nth(1).and_then(|s| s.split(" so far...").next()).unwrap();
    let said = shown.split("redelay: interrupted: ").nth(1).unwrap_or_else(|| panic!("{shown:?}"));
    assert!(
        said.starts_with(&format!(
            "{progress} so far, and that stays done (the step under way may have been done too)"
        )),
        "what the progress line said, two steps: {shown:?}"
    );
    let done: u64 = said.split(", done ").nth(1).and_then(|s| s.split(' ').next()).unwrap().parse().unwrap();
    assert!(progress.starts_with(&format!("matched {done}, done {done} (scanned ")), "{progress}");
    let left = total(&prefix, "q");
    // what was said is gone, no more (the third step's search never reached Redis)
    assert!(done > 0 && 20_000 - left == done, "said {done}, {left} left: {shown:?}");
    redelay(&prefix, &["destroy", "q", "--yes"]);
}

/// `redelay stats` on a cluster (tests/cluster.sh) where a sharded queue's shard has no node
/// (its master and replica killed, the cluster serving the other slots): the plain queue's
/// line as usual, the sharded queue's marked unavailable with the error naming the shard, and
/// exit 2; `--json` carries that queue's error, `--prometheus` leaves it out.
#[test]
fn stats_of_every_queue_marks_one_with_a_shard_out_of_reach_and_exits_2() {
    let cluster = common::Cluster::start();
    cluster.serve_partial();
    let prefix = format!("clicluster{}", std::process::id());
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_redelay"))
            .args(["--url", &cluster.url, "--prefix", &prefix])
            .args(args)
            .output()
            .unwrap()
    };
    let (name, shards) = ("sharded", 16);
    let o = run(&["--shards", "16", "publish", name, "x", "--id", "s1", "--delay", "1h"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The master lost holds shards of the queue, but neither its shard count nor the registry
    // of names; the plain queue lives elsewhere.
    let spared = [cluster.master_of(&format!("x:{{{name}}}:meta")), cluster.master_of(&format!("{prefix}:queues"))];
    let owners: Vec<u16> = (0..shards).map(|i| cluster.master_of(&format!("x:{{{name}/{i}}}:msg"))).collect();
    let victim = *owners.iter().find(|p| !spared.contains(p)).expect("a master with shards only");
    let first = owners.iter().position(|&p| p == victim).unwrap();
    let plain =
        (0..).map(|i| format!("plain{i}")).find(|n| cluster.master_of(&format!("x:{{{n}}}:msg")) != victim).unwrap();
    assert!(run(&["publish", &plain, "x", "--delay", "1h"]).status.success());
    cluster.lose_master(victim);
    let want = format!("shard {first} of queue \"{name}\" (hash tag {{{name}/{first}}}) could not be reached");

    let o = run(&["stats"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let out = text(&o);
    let line =
        |q: &str| out.lines().find(|l| l.split_whitespace().next() == Some(q)).unwrap_or_else(|| panic!("{out}"));
    assert_eq!(line(&plain).split_whitespace().take(3).collect::<Vec<_>>(), [plain.as_str(), "1", "1"], "{out}");
    assert!(line(name).contains("unavailable") && line(name).contains(&want), "{out}");
    assert!(
        stderr(&o).contains(&format!("1 queue could not be read (its line says why): \"{name}\"")),
        "{}",
        stderr(&o)
    );

    let o = run(&["stats", "--json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&text(&o)).unwrap();
    let row = |q: &str| v["queues"].as_array().unwrap().iter().find(|r| r["queue"] == q).cloned().unwrap();
    assert_eq!(row(&plain)["stats"]["scheduled"], 1, "{v}");
    let bad = row(name);
    assert_eq!((&bad["error"]["kind"], bad.get("stats")), (&serde_json::json!("Connection"), None), "{v}");
    assert!(bad["error"]["message"].as_str().unwrap().contains(&want), "{v}");

    let o = run(&["stats", "--prometheus"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let prom = text(&o);
    assert!(prom.contains(&format!("queue=\"{plain}\",state=\"scheduled\"}} 1")), "{prom}");
    assert!(!prom.contains(&format!("queue=\"{name}\"")), "{prom}");
    assert!(stderr(&o).contains(&format!("redelay: queue \"{name}\" left out: {want}")), "{}", stderr(&o));
}
