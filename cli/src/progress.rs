//! Long runs (a bulk action by a search, respawning or purging many dead letters): their
//! progress on stderr while they run, and what they did when Ctrl-C ends them.

use std::future::Future;
use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

/// Told what a run has done so far, as text, after each of its steps.
pub type Step = Box<dyn FnMut(String) + Send>;

/// What a run has done so far, and whether its progress line is on the terminal.
#[derive(Default)]
struct Seen {
    so_far: Option<String>,
    steps: u64,
    shown: bool,
}

/// Runs `work`, which tells the [`Step`] it is given what it has done so far after each step
/// (`purged 3000`). With stderr a terminal, a run of more than one step shows that there, one
/// line rewritten after each step from the second on, cleared at the end (stdout, `--json`
/// included, is left alone). Ctrl-C ends the run: what it did so far is said on stderr
/// (`start` when no step ended) and `Ok(Err(130))` returned; what was done stays done.
pub async fn in_steps<T, F>(start: &str, work: impl FnOnce(Step) -> F) -> redelay::Result<Result<T, ExitCode>>
where
    F: Future<Output = redelay::Result<T>>,
{
    let seen = Arc::new(Mutex::new(Seen::default()));
    let tty = std::io::stderr().is_terminal();
    let s = seen.clone();
    let step = Box::new(move |text: String| {
        let mut s = s.lock().unwrap();
        s.steps += 1;
        if tty && s.steps > 1 {
            eprint!("\r\x1b[Kredelay: {text} so far...");
            s.shown = true;
        }
        s.so_far = Some(text);
    });
    let clear = || {
        if seen.lock().unwrap().shown {
            eprint!("\r\x1b[K");
        }
    };
    // Biased, Ctrl-C first: its handler is in place before the first step is sent.
    tokio::select! {
        biased;
        Ok(()) = tokio::signal::ctrl_c() => {
            clear();
            let so_far = seen.lock().unwrap().so_far.clone().unwrap_or_else(|| start.to_string());
            eprintln!(
                "redelay: interrupted: {so_far} so far, and that stays done (the step under way may \
                 have been done too); the rest is as it was"
            );
            Ok(Err(ExitCode::from(130)))
        }
        r = work(step) => {
            clear();
            r.map(Ok)
        }
    }
}
