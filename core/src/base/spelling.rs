//! Field names as each language spells them. The core's messages name a field the core's way, in
//! snake_case: an option by its name (`max_attempts: must be 1 to 1000, got 0`, `ttr`,
//! `delay/at`) or a decoded wire field with its unit (`ttr_ms: invalid type …`, `at_ms`). A
//! binding whose users write fields otherwise shows each message with their spelling
//! ([`Error::spelled`](crate::Error::spelled)), so that an error names the field as it was given:
//! `maxAttempts` in Kotlin and Node, `ttrMs` in Node, `ttr_ms` in the HTTP gateway's JSON, `ttr`
//! in Python.
//!
//! What is respelled: the field path that starts a message (after a batch's `message 3: `), made
//! of snake_case names joined by `.` (nested), `/` (alternatives) or `[n]` (list items), and every
//! name in backquotes (serde's "expected one of `delay_ms`, `at_ms`", the core's "needs an expiry
//! (`expires_in` or `expires_at`)"). A head of several words ("queue name", "backoff base")
//! describes rather than names a field, and is left as it is (but in [`Spelling::SnakeMs`],
//! whose `backoff_base_ms` and `backoff_max_ms` are the fields it describes); so are names in
//! plain words.

/// How a language spells the fields of its API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// snake_case, the core's own (Python, the CLI): messages are unchanged.
    Snake,
    /// snake_case with units, the core's wire form (the HTTP gateway's JSON, `redelay::wire`):
    /// a duration or a time carries `_ms` (`ttr` is `ttr_ms`, `at` is `at_ms`, `delay/at` is
    /// `delay_ms/at_ms`), a name with its unit already stays (`ttr_ms`), and "backoff base" /
    /// "backoff max" are `backoff_base_ms` / `backoff_max_ms`.
    SnakeMs,
    /// snake_case without units (Python): a duration is seconds or a `timedelta` and a time a
    /// `datetime`, so `ttr_ms` is `ttr` and `at_ms` is `at`; and `from` is a keyword, so the
    /// start of `upcoming` is `start`.
    Python,
    /// camelCase without units (Kotlin): `max_attempts` is `maxAttempts`; a duration is a
    /// `Duration` and a time an `Instant`, so `ttr` stays `ttr` and `at_ms` is `at`.
    Camel,
    /// camelCase with units (Node): a duration in milliseconds carries `Ms` (`ttr` and `ttr_ms`
    /// are `ttrMs`), a time none (`at` and `at_ms` are `at`: a `Date` or ms since the epoch).
    CamelMs,
}

/// Options the core names without their unit that are durations in milliseconds on the wire
/// (`ttr` is `ttr_ms`): in [`Spelling::CamelMs`] they carry `Ms`, in [`Spelling::SnakeMs`]
/// `_ms`.
pub(crate) const DURATION_FIELDS: &[&str] = &[
    "delay",
    "ttr",
    "retry_in",
    "expires_in",
    "wait",
    "width",
    "timeout",
    "connect_timeout",
    "response_timeout",
    "default_ttr",
    "drain_timeout",
    "max_idle",
];

/// Options the core names without their unit that are times in ms since the Unix epoch on the
/// wire (`at` is `at_ms`).
const TIME_FIELDS: &[&str] = &["at", "expires_at", "since", "until", "from"];

impl Spelling {
    /// The options that are durations or times, as this spelling names them, each with its
    /// wire name and whether it is a time: for a binding that converts durations and times of
    /// its own into the wire's ms (Python's `ttr`, seconds, is `ttr_ms`; its `start` is
    /// `from_ms`).
    pub fn units(self) -> Vec<(String, String, bool)> {
        let all = DURATION_FIELDS.iter().map(|f| (f, false)).chain(TIME_FIELDS.iter().map(|f| (f, true)));
        all.map(|(f, time)| (field(f, self), field(f, Spelling::SnakeMs), time)).collect()
    }
}

/// Words that make a wire field `<word>_ms` or `<name>_<word>_ms` a time (ms since the epoch)
/// rather than a duration.
const TIME_WORDS: &[&str] = &["at", "now", "due", "deadline", "since", "until", "from"];

/// The words that make a wire field `<word>_ms` or `<name>_<word>_ms` a time (ms since the
/// epoch) rather than a duration: for a binding that reads the wire forms by name (Node).
pub fn time_words() -> &'static [&'static str] {
    TIME_WORDS
}

fn is_time(stem: &str) -> bool {
    TIME_WORDS.iter().any(|w| stem == *w || stem.strip_suffix(w).is_some_and(|s| s.ends_with('_')))
}

fn camel(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut upper = false;
    for c in s.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// One snake_case field name in `spelling`.
pub(crate) fn field(name: &str, spelling: Spelling) -> String {
    match spelling {
        Spelling::Snake => name.to_string(),
        Spelling::Python => match name.strip_suffix("_ms").unwrap_or(name) {
            "from" => "start".to_string(),
            stem => stem.to_string(),
        },
        Spelling::SnakeMs if name.ends_with("_ms") => name.to_string(),
        // A time the core names without its unit (`at`, `expires_at`, `until`) is `*_ms` too.
        Spelling::SnakeMs if DURATION_FIELDS.contains(&name) || is_time(name) => format!("{name}_ms"),
        Spelling::SnakeMs => name.to_string(),
        Spelling::Camel => camel(name.strip_suffix("_ms").unwrap_or(name)),
        Spelling::CamelMs => match name.strip_suffix("_ms") {
            Some(stem) if is_time(stem) => camel(stem),
            Some(_) => camel(name),
            None if DURATION_FIELDS.contains(&name) => camel(name) + "Ms",
            None => camel(name),
        },
    }
}

/// A name of the wire, or one given for it (an unknown field): it has its unit already, if any
/// (`ttr_ms`), so none is added (an unknown `delay` stays `delay`).
fn given(name: &str, spelling: Spelling) -> String {
    match spelling {
        Spelling::CamelMs if !name.ends_with("_ms") => camel(name),
        Spelling::SnakeMs => name.to_string(),
        _ => field(name, spelling),
    }
}

fn is_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A field path (`wait_for_replicas.timeout_ms`, `delay/at`, `ids[2]`) with each name spelled
/// by `spell`, or None when `head` is not one (several words, quotes ...).
fn path(head: &str, spell: impl Fn(&str) -> String) -> Option<String> {
    let mut out = String::with_capacity(head.len() + 4);
    let mut start = 0;
    for (end, sep) in head.match_indices(['.', '/']).chain([(head.len(), "")]) {
        let part = &head[start..end];
        let (name, index) = part.split_at(part.find('[').unwrap_or(part.len()));
        let digits = index.strip_prefix('[').and_then(|i| i.strip_suffix(']'));
        if !is_name(name)
            || !(index.is_empty() || digits.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())))
        {
            return None;
        }
        out.push_str(&spell(name));
        out.push_str(index);
        out.push_str(sep);
        start = end + sep.len();
    }
    Some(out)
}

/// A head in [`Spelling::SnakeMs`] (and [`Spelling::CamelMs`], camelCased) that [`path`] would
/// leave as it is but that stands for wire fields exactly: the core's "backoff base" and
/// "backoff max" (`backoff_base_ms`, `backoff_max_ms`; "default_backoff base" alike), and the
/// "backoff" of a pair whose base is above its max (both fields).
fn snake_ms_head(head: &str) -> Option<String> {
    let (name, part) = head.rsplit_once(' ').unwrap_or((head, ""));
    if !is_name(name) || !name.ends_with("backoff") {
        return None;
    }
    match part {
        "base" | "max" => Some(format!("{name}_{part}_ms")),
        "" => Some(format!("{name}_base_ms/{name}_max_ms")),
        _ => None,
    }
}

/// Words after which the core states a value given (not a limit) in ms: `got 50 ms`,
/// `delay: 315360001000 ms is more than the limit`, `base (5000 ms)`, `it is 5 ms before`.
const GIVEN: &[&str] = &["got ", ": ", "(", "is "];

/// `message` with each value given stated in seconds, as Python gives durations (`got 0.05 s`,
/// `delay: 315360001 s is more than the limit`); limits keep the units people read (`100 ms`).
fn in_seconds(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(" ms") {
        let (before, after) = (&rest[..i], &rest[i + 3..]);
        let lead = before.trim_end_matches(|c: char| c.is_ascii_digit());
        let ms = before[lead.len()..].parse::<u128>().ok();
        let given = GIVEN.iter().any(|w| lead.strip_suffix('-').unwrap_or(lead).ends_with(w));
        match ms {
            Some(ms) if given && !after.starts_with(|c: char| c.is_alphanumeric()) => {
                let s = format!("{}.{:03}", ms / 1000, ms % 1000);
                out.push_str(lead);
                out.push_str(s.trim_end_matches('0').trim_end_matches('.'));
                out.push_str(" s");
            }
            _ => {
                out.push_str(before);
                out.push_str(" ms");
            }
        }
        rest = after;
    }
    out + rest
}

/// `message` with its leading field path and its backquoted names in `spelling` (and, in
/// [`Spelling::Python`], the values given in seconds).
pub(crate) fn respell(message: &str, spelling: Spelling) -> String {
    if spelling == Spelling::Snake {
        return message.to_string();
    }
    if spelling == Spelling::Python {
        return respell_names(&in_seconds(message), spelling);
    }
    respell_names(message, spelling)
}

fn respell_names(message: &str, spelling: Spelling) -> String {
    // "message 3: " of a batch stays; the path after it ends at the first ": ".
    let skip = message
        .strip_prefix("message ")
        .and_then(|r| r.find(": ").filter(|&n| n > 0 && r[..n].bytes().all(|b| b.is_ascii_digit())))
        .map_or(0, |n| "message ".len() + n + 2);
    let (pre, rest) = message.split_at(skip);
    let mut out = String::from(pre);
    // The head of "unknown field" names a field as given; any other names one of the core's.
    let head = |n: usize| match rest[n..].starts_with(": unknown field") {
        true => path(&rest[..n], |f| given(f, spelling)),
        false if spelling == Spelling::SnakeMs => {
            snake_ms_head(&rest[..n]).or_else(|| path(&rest[..n], |f| field(f, spelling)))
        }
        false if spelling == Spelling::CamelMs => {
            snake_ms_head(&rest[..n]).and_then(|h| path(&h, camel)).or_else(|| path(&rest[..n], |f| field(f, spelling)))
        }
        false => path(&rest[..n], |f| field(f, spelling)),
    };
    let rest = match rest.find(": ").and_then(|n| head(n).map(|p| (p, n))) {
        Some((p, n)) => {
            out.push_str(&p);
            &rest[n..]
        }
        None => rest,
    };
    // `name` anywhere after the path.
    let mut parts = rest.split('`');
    out.push_str(parts.next().unwrap_or(""));
    // serde's "unknown variant `x`, expected one of …" lists values, not fields: no unit is
    // added to them (`deliver_now` is no time).
    let values = rest.contains("unknown variant `");
    for (i, part) in parts.enumerate() {
        out.push('`');
        if values && spelling == Spelling::SnakeMs {
            out.push_str(part);
        } else if i % 2 == 0 && is_name(part) {
            // serde's "unknown field `x`" names a field as given; other names are the core's.
            let unknown = out.ends_with("unknown field `");
            out.push_str(&if unknown { given(part, spelling) } else { field(part, spelling) });
        } else {
            out.push_str(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_in_each_spelling() {
        // (core's name, Kotlin, Node)
        let table = [
            ("max_attempts", "maxAttempts", "maxAttempts"),
            ("ttr", "ttr", "ttrMs"),
            ("ttr_ms", "ttr", "ttrMs"),
            ("at_ms", "at", "at"),
            ("expires_at_ms", "expiresAt", "expiresAt"),
            ("expires_in", "expiresIn", "expiresInMs"),
            ("default_ttr", "defaultTtr", "defaultTtrMs"),
            ("default_max_attempts", "defaultMaxAttempts", "defaultMaxAttempts"),
            ("since_ms", "since", "since"),
            ("width_ms", "width", "widthMs"),
            ("drop_on_expiry", "dropOnExpiry", "dropOnExpiry"),
            ("id", "id", "id"),
        ];
        for (core, kotlin, node) in table {
            assert_eq!(field(core, Spelling::Snake), core);
            assert_eq!(field(core, Spelling::Python), core.strip_suffix("_ms").unwrap_or(core), "{core} in Python");
            assert_eq!(field(core, Spelling::Camel), kotlin, "{core} in Kotlin");
            assert_eq!(field(core, Spelling::CamelMs), node, "{core} in Node");
        }
    }

    #[test]
    fn only_bad_input_is_respelled() {
        use crate::{Error, ErrorKind};
        let e = Error::invalid("max_attempts: must be 1 to 1000, got 0").spelled(Spelling::CamelMs);
        assert_eq!((e.kind(), e.message()), (ErrorKind::InvalidArgument, "maxAttempts: must be 1 to 1000, got 0"));
        let lost = "no_such: a message of another kind keeps its words";
        for kind in ErrorKind::ALL.into_iter().filter(|k| *k != ErrorKind::InvalidArgument) {
            assert_eq!(Error::new(kind, lost).spelled(Spelling::Camel).message(), lost, "{kind:?}");
        }
    }

    #[test]
    fn messages_in_each_spelling() {
        // (core's message, Kotlin, Node)
        let table = [
            (
                "max_attempts: must be 1 to 1000, got 0",
                "maxAttempts: must be 1 to 1000, got 0",
                "maxAttempts: must be 1 to 1000, got 0",
            ),
            (
                "ttr: must be 100 ms to 24 h, got 50 ms",
                "ttr: must be 100 ms to 24 h, got 50 ms",
                "ttrMs: must be 100 ms to 24 h, got 50 ms",
            ),
            (
                "delay/at: give one of them, not both",
                "delay/at: give one of them, not both",
                "delayMs/at: give one of them, not both",
            ),
            ("message 3: retry_in: too long", "message 3: retryIn: too long", "message 3: retryInMs: too long"),
            (
                "wait_for_replicas.timeout_ms: invalid type: string \"x\", expected milliseconds",
                "waitForReplicas.timeout: invalid type: string \"x\", expected milliseconds",
                "waitForReplicas.timeoutMs: invalid type: string \"x\", expected milliseconds",
            ),
            ("ids[2]: invalid type", "ids[2]: invalid type", "ids[2]: invalid type"),
            (
                "delay: unknown field `delay`, expected one of `id`, `delay_ms`, `at_ms`, `max_attempts`",
                "delay: unknown field `delay`, expected one of `id`, `delay`, `at`, `maxAttempts`",
                "delay: unknown field `delay`, expected one of `id`, `delayMs`, `at`, `maxAttempts`",
            ),
            (
                "unknown field `delay`, expected one of `id`, `delay_ms`, `at_ms`, `max_attempts`",
                "unknown field `delay`, expected one of `id`, `delay`, `at`, `maxAttempts`",
                "unknown field `delay`, expected one of `id`, `delayMs`, `at`, `maxAttempts`",
            ),
            (
                "drop_on_expiry: needs an expiry (`expires_in` or `expires_at`)",
                "dropOnExpiry: needs an expiry (`expiresIn` or `expiresAt`)",
                "dropOnExpiry: needs an expiry (`expiresInMs` or `expiresAt`)",
            ),
            // Descriptions, not field names: as they are.
            (
                "queue name: must be 1 to 128 bytes",
                "queue name: must be 1 to 128 bytes",
                "queue name: must be 1 to 128 bytes",
            ),
            (
                "weight of queue \"b_c\": must be 1 to 1000",
                "weight of queue \"b_c\": must be 1 to 1000",
                "weight of queue \"b_c\": must be 1 to 1000",
            ),
            ("no message with id \"x_y\"", "no message with id \"x_y\"", "no message with id \"x_y\""),
            ("message 12", "message 12", "message 12"),
        ];
        for (core, kotlin, node) in table {
            assert_eq!(respell(core, Spelling::Snake), core);
            assert_eq!(respell(core, Spelling::Camel), kotlin);
            assert_eq!(respell(core, Spelling::CamelMs), node);
        }
    }

    #[test]
    fn python_names_have_no_unit_and_no_keyword() {
        let messages = [
            ("from_ms: invalid value: floating point `-1.0`", "start: invalid value: floating point `-1.0`"),
            ("from: -5 ms is before the Unix epoch", "start: -0.005 s is before the Unix epoch"),
            ("message 2: at_ms: invalid type", "message 2: at: invalid type"),
            ("wait_for_replicas.timeout_ms: invalid type", "wait_for_replicas.timeout: invalid type"),
            ("ttr: must be 100 ms to 24 h, got 50 ms", "ttr: must be 100 ms to 24 h, got 0.05 s"),
            (
                "unknown field `dealy`, expected one of `id`, `delay_ms`",
                "unknown field `dealy`, expected one of `id`, `delay`",
            ),
            ("max_attempts: must be 1 to 1000, got 0", "max_attempts: must be 1 to 1000, got 0"),
            ("queue name: must be 1 to 128 bytes", "queue name: must be 1 to 128 bytes"),
        ];
        for (core, python) in messages {
            assert_eq!(respell(core, Spelling::Python), python);
        }
    }

    #[test]
    fn python_sends_its_durations_and_times_under_their_wire_names() {
        let units = Spelling::Python.units();
        let unit = |name: &str| units.iter().find(|u| u.0 == name).map(|u| (u.1.as_str(), u.2));
        assert_eq!(unit("delay"), Some(("delay_ms", false)));
        assert_eq!(unit("drain_timeout"), Some(("drain_timeout_ms", false)));
        assert_eq!(unit("expires_in"), Some(("expires_in_ms", false)));
        assert_eq!(unit("expires_at"), Some(("expires_at_ms", true)));
        assert_eq!(unit("start"), Some(("from_ms", true)), "`from` is a keyword in Python");
        assert_eq!(unit("from"), None);
        assert_eq!(unit("max_attempts"), None);
        for (python, wire, time) in &units {
            // Each wire name is a duration or a time of the gateway's JSON, named back as Python does.
            assert_eq!(field(wire, Spelling::Python), *python);
            assert_eq!(is_time(wire.strip_suffix("_ms").unwrap()), *time, "{wire}");
        }
    }

    #[test]
    fn python_is_told_the_durations_it_gave_in_seconds() {
        // A value given is in seconds, as Python gives it; a limit in the units people read.
        let messages = [
            (
                "delay: 315360001000 ms is more than the limit of 3650 days",
                "delay: 315360001 s is more than the limit of 3650 days",
            ),
            ("ttr: must be 100 ms to 24 h, got 50 ms", "ttr: must be 100 ms to 24 h, got 0.05 s"),
            ("max_idle: must be 10 ms to 1 min, got 1 ms", "max_idle: must be 10 ms to 1 min, got 0.001 s"),
            ("wait_ms: must be 0 ms to 1 min, got 120000 ms", "wait: must be 0 ms to 1 min, got 120 s"),
            (
                "message 2: backoff: base (60000 ms) must not be above max (10500 ms)",
                "message 2: backoff: base (60 s) must not be above max (10.5 s)",
            ),
            (
                "expires_at: must be after the due time; it is 5 ms before or at it",
                "expires_at: must be after the due time; it is 0.005 s before or at it",
            ),
            ("wait_for_replicas.timeout: must be 1 ms to 1 min", "wait_for_replicas.timeout: must be 1 ms to 1 min"),
            ("headers: 5 msgs", "headers: 5 msgs"),
        ];
        for (core, python) in messages {
            assert_eq!(respell(core, Spelling::Python), python);
        }
        // The other spellings give durations in ms (Node) or as a Duration (Kotlin): unchanged.
        assert_eq!(respell(messages[0].0, Spelling::Camel), messages[0].0);
    }

    #[test]
    fn the_gateways_json_names_carry_their_unit() {
        // (core's name, the gateway's JSON)
        let table = [
            ("ttr", "ttr_ms"),
            ("ttr_ms", "ttr_ms"),
            ("delay", "delay_ms"),
            ("at", "at_ms"),
            ("at_ms", "at_ms"),
            ("expires_in", "expires_in_ms"),
            ("expires_at", "expires_at_ms"),
            ("retry_in", "retry_in_ms"),
            ("wait", "wait_ms"),
            ("width", "width_ms"),
            ("since", "since_ms"),
            ("until", "until_ms"),
            ("from", "from_ms"),
            ("max_attempts", "max_attempts"),
            ("drop_on_expiry", "drop_on_expiry"),
            ("clear_expiry", "clear_expiry"),
            ("state", "state"),
            ("max", "max"),
            ("id", "id"),
        ];
        for (core, json) in table {
            assert_eq!(field(core, Spelling::SnakeMs), json, "{core}");
        }
        let messages = [
            ("ttr: must be 100 ms to 24 h, got 50 ms", "ttr_ms: must be 100 ms to 24 h, got 50 ms"),
            (
                "delay: 1125899906842624 ms is more than the limit of 3650 days",
                "delay_ms: 1125899906842624 ms is more than the limit of 3650 days",
            ),
            ("delay/at: give one of them, not both", "delay_ms/at_ms: give one of them, not both"),
            ("at: -5 ms is before the Unix epoch", "at_ms: -5 ms is before the Unix epoch"),
            ("expires_at: more than 3650 days in the future", "expires_at_ms: more than 3650 days in the future"),
            ("expires_in/clear_expiry: give one of them", "expires_in_ms/clear_expiry: give one of them"),
            ("message 1: ttr: must be 100 ms to 24 h, got 1 ms", "message 1: ttr_ms: must be 100 ms to 24 h, got 1 ms"),
            ("wait: 1 ms is more than the limit", "wait_ms: 1 ms is more than the limit"),
            ("width: must be 1 ms to 3650 days, got 0 ms", "width_ms: must be 1 ms to 3650 days, got 0 ms"),
            ("until: must not be before since", "until_ms: must not be before since"),
            (
                "since/until: at most 1440 points of the step, got 2000",
                "since_ms/until_ms: at most 1440 points of the step, got 2000",
            ),
            ("backoff base: must be 1 ms to 7 days, got 0 ms", "backoff_base_ms: must be 1 ms to 7 days, got 0 ms"),
            (
                "message 2: backoff max: must be 1 ms to 7 days, got 0 ms",
                "message 2: backoff_max_ms: must be 1 ms to 7 days, got 0 ms",
            ),
            (
                "backoff: base (5 ms) must not be above max (1 ms)",
                "backoff_base_ms/backoff_max_ms: base (5 ms) must not be above max (1 ms)",
            ),
            (
                "drop_on_expiry: needs an expiry (`expires_in` or `expires_at`)",
                "drop_on_expiry: needs an expiry (`expires_in_ms` or `expires_at_ms`)",
            ),
            ("wait_for_replicas.timeout: must be 1 ms to 1 min", "wait_for_replicas.timeout_ms: must be 1 ms to 1 min"),
            // Names given (an unknown field) and wire names stay as they are.
            (
                "delay: unknown field `delay`, expected one of `id`, `delay_ms`, `at_ms`",
                "delay: unknown field `delay`, expected one of `id`, `delay_ms`, `at_ms`",
            ),
            (
                "ttr_ms: invalid type: string \"x\", expected milliseconds",
                "ttr_ms: invalid type: string \"x\", expected milliseconds",
            ),
            ("max_attempts: must be 1 to 1000, got 0", "max_attempts: must be 1 to 1000, got 0"),
            // Descriptions, not field names.
            ("queue name: must be 1 to 128 bytes", "queue name: must be 1 to 128 bytes"),
            ("backoff of queue \"a\": no", "backoff of queue \"a\": no"),
            ("no message with id \"at\"", "no message with id \"at\""),
        ];
        for (core, json) in messages {
            assert_eq!(respell(core, Spelling::SnakeMs), json);
        }
        // Node names them as its options do; Kotlin and Python give a pair, described as such.
        assert_eq!(respell("backoff base: x", Spelling::CamelMs), "backoffBaseMs: x");
        assert_eq!(respell("default_backoff max: x", Spelling::CamelMs), "defaultBackoffMaxMs: x");
        assert_eq!(respell("backoff: base above max", Spelling::CamelMs), "backoffBaseMs/backoffMaxMs: base above max");
        assert_eq!(respell("backoff base: x", Spelling::Camel), "backoff base: x");
        // Values of an enum are no fields: `deliver_now` gets no unit.
        let variant = "action: unknown variant `x`, expected one of `cancel`, `deliver_now`, `purge`";
        assert_eq!(respell(variant, Spelling::SnakeMs), variant);
        assert_eq!(respell("search.id_prefix: empty", Spelling::CamelMs), "search.idPrefix: empty");
        let e = crate::Error::invalid("ttr: must be 100 ms to 24 h, got 50 ms").spelled(Spelling::SnakeMs);
        assert_eq!(e.message(), "ttr_ms: must be 100 ms to 24 h, got 50 ms");
    }
}
