//! Standard output for a command whose reader may stop early (`redelay list q | head`).
//!
//! `println!` and `print!` are replaced, for the whole crate, by versions that do not panic
//! when stdout is closed: the process ends quietly with status 141, as a Unix tool killed by
//! SIGPIPE does. SIGPIPE itself stays ignored (Rust's default), so a Redis connection closed
//! under a write is an error the client handles, never a signal that kills it.

use std::io;

/// Ends the process after a failed write to stdout: quietly when the reader went away, else
/// with the error on stderr.
pub fn stdout_failed(e: io::Error) -> ! {
    if e.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(141);
    }
    eprintln!("redelay: cannot write to stdout: {e}");
    std::process::exit(2)
}

macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            $crate::output::stdout_failed(e)
        }
    }};
}

macro_rules! print {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!(std::io::stdout(), $($arg)*).and_then(|_| std::io::stdout().flush()) {
            $crate::output::stdout_failed(e)
        }
    }};
}
