//! No key of a sresim file takes a TOML date or time (`1979-05-27`, `07:32:00`): a typed
//! reading takes one as its text for a string key (a preset or a table file named by a
//! date) and tells it in the TOML reader's private words elsewhere (`invalid type: map`,
//! `$__toml_private_datetime`). Every reader of a TOML file asks [`first`] first and
//! refuses the date by its key (docs/errors.md, "Files").

use toml::Value;

/// The first key (dotted from the top: `search.first_samples`, `points.ou.rows`) whose
/// value is, or whose array holds, a TOML date or time, and that date's TOML text, in
/// key order; None when there is none or `text` is no TOML (the typed reading then
/// says why).
pub fn first(text: &str) -> Option<(String, String)> {
    let table: toml::Table = text.parse().ok()?;
    in_table(&table, "")
}

fn in_table(t: &toml::Table, prefix: &str) -> Option<(String, String)> {
    t.iter()
        .find_map(|(k, v)| in_value(v, &format!("{prefix}{k}")))
}

fn in_value(v: &Value, key: &str) -> Option<(String, String)> {
    match v {
        Value::Datetime(d) => Some((key.to_string(), d.to_string())),
        Value::Array(a) => a.iter().find_map(|x| in_value(x, key)),
        Value::Table(t) => in_table(t, &format!("{key}.")),
        _ => None,
    }
}

/// The refusal of the date [`first`] found, as the text after the file's name:
/// `key: a date (1979-05-27), expected EXPECTED`.
pub fn refusal(key: &str, date: &str, expected: &str) -> String {
    format!(
        "{key}: {}, expected {expected}",
        crate::text::toml_date(date)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_is_found_by_its_key_anywhere() {
        assert_eq!(first("a = 1\nb = \"x\"\n[c]\nd = [1, 2]\n"), None);
        assert_eq!(first("not toml = = ="), None);
        assert_eq!(
            first("x = 1\n[search]\nfirst_samples = 1979-05-27\n"),
            Some(("search.first_samples".into(), "1979-05-27".into()))
        );
        assert_eq!(
            first("[[points]]\n\"ou.rows\" = 4\n[[points]]\n\"ou.rows\" = [07:32:00]\n"),
            Some(("points.ou.rows".into(), "07:32:00".into()))
        );
        assert_eq!(
            refusal("adc_mm2", "1979-05-27T07:32:00Z", "a number"),
            "adc_mm2: a date and time (1979-05-27T07:32:00Z), expected a number"
        );
    }
}
