//! The text of a TOML file a config reads (a config, a device preset): its parse, with a
//! syntax error naming its line and an integer TOML cannot hold naming its key; a TOML
//! date refused by its key; the source (a file or a `--set`) a key's message names.

use anyhow::{anyhow, bail, Result};
use toml::{Table, Value};

/// The table of TOML file `origin` (a config or a device preset): a syntax error names
/// its line, an integer TOML cannot hold its key too.
pub(super) fn parse_toml(text: &str, origin: &str) -> Result<Table> {
    text.parse().map_err(|e: toml::de::Error| {
        let at = e.span().map_or(String::new(), |s| {
            let line = text.get(..s.start).map_or(0, |t| t.matches('\n').count()) + 1;
            format!("line {line}: ")
        });
        if let Some((key, v)) = e.span().and_then(|s| integer_too_large(text, s.start)) {
            return anyhow!("{origin}: {at}{key}: {}", above_toml(v));
        }
        anyhow!("{origin}: {at}{} (expected TOML)", one_line(&e))
    })
}

/// Whether `raw` is an integer literal above the largest TOML holds (2^63 - 1): digits
/// (`_` between them allowed) after an optional `+`. TOML cannot read it as a number, and
/// `--set` would take it for a string.
pub(super) fn beyond_toml(raw: &str) -> bool {
    let d = raw.strip_prefix('+').unwrap_or(raw);
    d.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && d.bytes().all(|b| b.is_ascii_digit() || b == b'_')
        && d.replace('_', "").parse::<i64>().is_err()
}

/// The refusal of an integer `v` above what TOML holds, whatever the key accepts.
pub(super) fn above_toml(v: &str) -> String {
    format!(
        "{v} is above the largest accepted value, {} (TOML integers stop at 2^63 - 1)",
        i64::MAX
    )
}

/// The key and value of the line of config `text` at byte `at` when its value is an
/// integer TOML cannot hold ([`beyond_toml`]): the key with its table (`limits.max_layer_bytes`).
pub(super) fn integer_too_large(text: &str, at: usize) -> Option<(String, &str)> {
    let start = text.get(..at)?.rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?;
    let (key, value) = line.split_once('=')?;
    let value = value.split('#').next()?.trim();
    if !beyond_toml(value) {
        return None;
    }
    let clean = |k: &str| -> String {
        k.split('.')
            .map(|p| p.trim().trim_matches('"').trim_matches('\''))
            .collect::<Vec<_>>()
            .join(".")
    };
    let table = text[..start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| clean(l.trim_start_matches('[').split(']').next().unwrap_or("")));
    let key = clean(key);
    let key = match table {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key,
    };
    Some((bounds::text::printable(&key).into_owned(), value))
}

pub(super) fn one_line(e: &toml::de::Error) -> String {
    e.message().replace('\n', " ")
}

/// No key takes a TOML date or time: one (`preset = 1979-05-27`, `--set
/// device.preset=1979-05-27`) is refused by its key, in an array too. The typed reading
/// would take it as its text for a string key (device.preset then named no preset and
/// was passed over) and tell it in the TOML reader's private words elsewhere.
pub(super) fn refuse_dates(
    table: &Table,
    defaults: &Table,
    sets: &[String],
    origin: &str,
) -> Result<()> {
    fn date_in(v: &Value) -> Option<&toml::value::Datetime> {
        match v {
            Value::Datetime(d) => Some(d),
            Value::Array(a) => a.iter().find_map(date_in),
            _ => None,
        }
    }
    fn walk(
        t: &Table,
        d: Option<&Table>,
        prefix: &str,
        out: &mut Option<(String, String, String)>,
    ) {
        for (k, v) in t {
            if out.is_some() {
                return;
            }
            let key = format!("{prefix}{k}");
            let default = d.and_then(|d| d.get(k));
            if let Value::Table(sub) = v {
                walk(
                    sub,
                    default.and_then(Value::as_table),
                    &format!("{key}."),
                    out,
                );
            } else if let Some(date) = date_in(v) {
                let expected = match (key.as_str(), default) {
                    ("device.preset", _) => "a preset name (a string)",
                    ("chip.preset", _) => "\"isaac\", \"pp_sim\" or a preset file (a string)",
                    ("chip.count", _) => "a number of chips or \"auto\"",
                    (_, Some(Value::String(_))) => "a string",
                    (_, Some(Value::Integer(_))) => "an integer",
                    (_, Some(Value::Float(_))) => "a number",
                    (_, Some(Value::Boolean(_))) => "true or false",
                    (_, Some(Value::Array(_))) => "an array",
                    _ => "a number or a string",
                };
                *out = Some((key, date.to_string(), expected.to_string()));
            }
        }
    }
    let mut found = None;
    walk(table, Some(defaults), "", &mut found);
    match found {
        Some((key, date, expected)) => bail!(
            "{}: {key}: {}, expected {expected}",
            source_of_key(&key, sets, origin),
            bounds::text::toml_date(&date)
        ),
        None => Ok(()),
    }
}

/// Where `key`'s value came from: the last `--set` naming it, else the file `origin`.
pub(super) fn source_of_key(key: &str, sets: &[String], origin: &str) -> String {
    sets.iter()
        .rev()
        .find(|s| s.split_once('=').is_some_and(|(sk, _)| sk.trim() == key))
        .map_or_else(|| origin.to_string(), |s| format!("--set {s}"))
}
