//! Standard output for a command whose reader may stop early (`redelay list q | head`).
//!
//! `println!` and `print!` are replaced, for the whole crate, by versions that do not panic
//! when stdout is closed: the process ends quietly with status 141, as a Unix tool killed by
//! SIGPIPE does. SIGPIPE itself stays ignored (Rust's default), so a Redis connection closed
//! under a write is an error the client handles, never a signal that kills it.

use std::io;

/// Ends the process after a failed write to stdout: quietly with 141 when the reader went
/// away, else with the error on stderr and 74 (EX_IOERR: not 2, an unreachable Redis's).
pub fn stdout_failed(e: io::Error) -> ! {
    if e.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(141);
    }
    eprintln!("redelay: cannot write to stdout: {e}");
    std::process::exit(74)
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

/// Prints a `--json` answer on one line: the JSON the gateway's `/v1` answers with for the same
/// read, built by the same functions (`redelay_server::wire`, `redelay::wire::to_json`).
pub fn json(v: &serde_json::Value) {
    println!("{v}");
}

/// Message data (a body, a header, an error, an id) for a terminal: control characters
/// escaped (`\n`, `\r`, `\t`, `\x1b`, `\u{9b}`) and so are the bidirectional embeddings,
/// overrides and isolates (`\u{202e}`), so that data can neither drive the terminal (clear
/// it, retitle it) nor break a line of the output or reorder what it shows. Backslashes stay
/// as they are. For human output only: JSON escapes what it must by itself.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    let escape = |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !s.chars().any(escape) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if escape(c) && (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if escape(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn control_characters_are_escaped() {
        let cases = [
            ("plain text, ünïcode ✓", "plain text, ünïcode ✓"),
            ("a\x1b[2Jb", r"a\x1b[2Jb"),
            ("\x1b]0;pwned\x07", r"\x1b]0;pwned\x07"),
            ("line 1\nline 2\r\n", r"line 1\nline 2\r\n"),
            ("a\tb\0c\x7f", r"a\tb\x00c\x7f"),
            ("csi \u{9b}2J", r"csi \u{9b}2J"),
            ("abc\u{202e}fed\u{2066}x\u{2069}", r"abc\u{202e}fed\u{2066}x\u{2069}"),
            (r"C:\path\n", r"C:\path\n"),
            ("", ""),
        ];
        for (raw, want) in cases {
            assert_eq!(printable(raw), want, "{raw:?}");
        }
    }
}
