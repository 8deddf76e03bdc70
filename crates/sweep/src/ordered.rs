//! A TOML value that keeps the order in which a file writes the keys of its tables, so
//! that the axes of a grid become columns (and loops) in the order the file gives them.
//! Dotted keys (`ou.rows = [...]` without quotes) are flattened back to `"ou.rows"`.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use toml::Value;

#[derive(Debug, Clone, PartialEq)]
pub enum Ordered {
    Table(Vec<(String, Ordered)>),
    Array(Vec<Ordered>),
    Scalar(Value),
}

impl Ordered {
    /// The leaves of a table as (dotted key, value), in file order; a non-table is one
    /// leaf with an empty key.
    pub fn flatten(&self) -> Vec<(String, Ordered)> {
        let mut out = Vec::new();
        flatten_into(self, "", &mut out);
        out
    }

    /// The value as a plain TOML value (for messages).
    pub fn to_value(&self) -> Value {
        match self {
            Ordered::Scalar(v) => v.clone(),
            Ordered::Array(a) => Value::Array(a.iter().map(Ordered::to_value).collect()),
            Ordered::Table(t) => {
                Value::Table(t.iter().map(|(k, v)| (k.clone(), v.to_value())).collect())
            }
        }
    }
}

fn flatten_into(v: &Ordered, prefix: &str, out: &mut Vec<(String, Ordered)>) {
    match v {
        Ordered::Table(t) => {
            for (k, v) in t {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten_into(v, &key, out);
            }
        }
        v => out.push((prefix.to_string(), v.clone())),
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OrderedVisitor)
    }
}

/// The key under which the TOML reader hands over a date (toml_datetime's private field).
const TOML_DATETIME_KEY: &str = "$__toml_private_datetime";

struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a TOML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::Boolean(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::Integer(v)))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Ordered, E> {
        i64::try_from(v)
            .map(|i| Ordered::Scalar(Value::Integer(i)))
            .map_err(|_| E::custom(format!("integer {v} is too large")))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::Float(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
        Ok(Ordered::Scalar(Value::String(v.to_string())))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Ordered::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = map.next_key::<String>()? {
            // The TOML reader hands a date over as a table of one private key: it is
            // kept as the date it is, so that a message tells it as one (docs/errors.md).
            if entries.is_empty() && k == TOML_DATETIME_KEY {
                let text: String = map.next_value()?;
                let date = text.parse().map_err(serde::de::Error::custom)?;
                return Ok(Ordered::Scalar(Value::Datetime(date)));
            }
            entries.push((k, map.next_value::<Ordered>()?));
        }
        Ok(Ordered::Table(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Doc {
        axes: Ordered,
    }

    #[test]
    fn keeps_file_order_and_flattens_dotted_keys() {
        let d: Doc = toml::from_str(
            "[axes]\n\"ou.rows\" = [4, 8]\ncrossbar.rows = [64]\nadc.per_crossbar = [2]\n\"a.b\" = 1\n",
        )
        .unwrap();
        let keys: Vec<String> = d.axes.flatten().into_iter().map(|(k, _)| k).collect();
        // crossbar and adc are dotted (nested) keys, ou.rows and a.b quoted ones.
        assert_eq!(
            keys,
            ["ou.rows", "crossbar.rows", "adc.per_crossbar", "a.b"]
        );
        let zyx: Doc = toml::from_str("[axes]\nz = 1\ny = 2\nx = 3\n").unwrap();
        let keys: Vec<String> = zyx.axes.flatten().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["z", "y", "x"]);
    }
}
