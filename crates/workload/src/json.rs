//! The one JSON parser of the documents sresim reads as values (manifest.json, shard.json):
//! serde_json's values, with every object's keys unique. serde_json keeps the last of two
//! equal keys, so `{"samples": 2, "samples": 9}` read as 9 and the first went unseen; a
//! document that names a key twice is ambiguous and refused, naming the key by its path
//! (`layers[0].name`). sweep.json is read into typed structures whose derived readers
//! refuse a repeated field the same way (`duplicate field`).

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::RefCell;
use std::fmt;

/// `text` as a JSON value, or the problem: `layers[0].name: the key appears twice (...)`
/// for a repeated key, else `invalid JSON: ...` as serde_json says it.
pub fn parse(text: &str) -> Result<Value, String> {
    let twice = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let v = Seed {
        path: String::new(),
        twice: &twice,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    match (v, twice.into_inner()) {
        (Ok(v), _) => Ok(v),
        (Err(e), Some(key)) => Err(format!(
            "{key}: the key appears twice (line {}, column {}); a JSON object names each key once",
            e.line(),
            e.column()
        )),
        (Err(e), None) => Err(format!("invalid JSON: {e}")),
    }
}

/// `v` (a value [`parse`] read) as the typed document `T`, or the problem naming the
/// field by its path: `records: invalid type: null, expected a string`,
/// `range[1]: invalid type: floating point ...` (serde's message alone names no field).
/// The one typed reader of the JSON documents read as values.
pub fn typed<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, String> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        match path.as_str() {
            "" | "." => inner.to_string(),
            p => format!("{p}: {inner}"),
        }
    })
}

/// A value at `path`; the first repeated key found goes to `twice`.
struct Seed<'a> {
    path: String,
    twice: &'a RefCell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let seed = Seed {
                path: format!("{}[{}]", self.path, items.len()),
                twice: self.twice,
            };
            match seq.next_element_seed(seed)? {
                Some(v) => items.push(v),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = match self.path.is_empty() {
                true => key.clone(),
                false => format!("{}.{key}", self.path),
            };
            if out.contains_key(&key) {
                *self.twice.borrow_mut() = Some(path);
                return Err(A::Error::custom("a repeated key"));
            }
            let v = map.next_value_seed(Seed {
                path,
                twice: self.twice,
            })?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_values_as_serde_json_and_repeated_keys_refused() {
        let text =
            r#"{"a": [1, -2, 3.5, 18446744073709551615, "x", null, true, {"b": {}}], "c": 1e300}"#;
        assert_eq!(
            parse(text),
            Ok(serde_json::from_str::<Value>(text).unwrap())
        );
        assert_eq!(
            parse("{\"samples\": 2, \"samples\": 9}").unwrap_err(),
            "samples: the key appears twice (line 1, column 24); a JSON object names each key once"
        );
        let e = parse("{\"layers\": [{\"name\": \"a\"}, {\"name\": \"b\",\n \"name\": \"c\"}]}")
            .unwrap_err();
        assert!(
            e.starts_with("layers[1].name: the key appears twice (line 2,"),
            "{e}"
        );
        // Equal keys in different objects are not repeated.
        assert!(parse("{\"a\": {\"k\": 1}, \"b\": {\"k\": 1}}").is_ok());
        assert!(parse("{\"a\": 1} x")
            .unwrap_err()
            .starts_with("invalid JSON: trailing"));
        assert!(parse("[1,").unwrap_err().starts_with("invalid JSON: EOF"));
    }
}
