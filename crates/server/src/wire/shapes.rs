//! The shapes every input shares: the patterns a text, a title, a day or an id must match (in
//! the JSON Schemas and in the checks behind them), a JSON key given twice, the memory kinds, and
//! whole numbers that arrive as JSON numbers or query-string text.

use arbor_domain::model::MemoryKind;
use schemars::{Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer};

/// Text with something in it and no NUL (what event validation accepts), as a JSON Schema
/// pattern. ECMA's `\s` and Rust's whitespace differ only in U+FEFF (ECMA's) and U+0085
/// (Rust's), so both are excluded from the character that must be there.
pub(super) const SOME_TEXT: &str = r"^[^\x00]*[^\s\x00\x85][^\x00]*$";

/// Any text without a NUL, empty too (a chat message's content may be empty).
pub(super) const NO_NUL: &str = r"^[^\x00]*$";

/// A title: [`SOME_TEXT`] without control characters.
pub(super) const TITLE: &str = r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$";

/// A host reference (message id): no control characters.
pub(super) const REFERENCE: &str = r"^[^\x00-\x1f\x7f-\x9f]+$";

/// A date-time in the years every store can hold (1678-2261, what a 64-bit nanosecond count
/// spans), less the first and last: a pattern sees the written year, not the instant, and a
/// UTC offset moves `1678-01-01T00:00+05:00` into 1677. So the schema promises 1679-2260, and
/// the server accepts the whole range.
pub(crate) const STORABLE_YEAR: &str =
    r"^(1679|16[89][0-9]|1[7-9][0-9][0-9]|20[0-9][0-9]|21[0-9][0-9]|22[0-5][0-9]|2260)-";

/// A calendar date in the years the schema promises ([`STORABLE_YEAR`]); that the day exists
/// (no 30 February) is the server's to say.
pub(crate) const DAY: &str = r"^(1679|16[89][0-9]|1[7-9][0-9][0-9]|20[0-9][0-9]|21[0-9][0-9]|22[0-5][0-9]|2260)-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$";

/// Whether `date` has the shape [`DAY`] states: a year the schema promises, a month 01-12 and a
/// day 01-31.
pub(crate) fn has_day_shape(date: &str) -> bool {
    let number = |part: &str| part.bytes().all(|b| b.is_ascii_digit()).then(|| part.parse::<u32>().ok()).flatten();
    let parts: Vec<&str> = date.split('-').collect();
    match parts.as_slice() {
        [year, month, day] if year.len() == 4 && month.len() == 2 && day.len() == 2 => {
            matches!((number(year), number(month), number(day)), (Some(1679..=2260), Some(1..=12), Some(1..=31)))
        }
        _ => false,
    }
}

/// A UTC offset as `domain::daily::parse_offset` reads it.
pub(crate) const UTC_OFFSET: &str = r"^(Z|z|UTC|utc|\+(0[0-9]|1[0-4]):?[0-5][0-9]|-(0[0-9]|1[0-2]):?[0-5][0-9])$";

/// A tree id: `<category>:<slug>`.
pub(crate) const TREE_ID: &str = r"^(interaction|integration):[a-z0-9]+(-[a-z0-9]+)*$";

/// A leaf or summary id.
pub(crate) const NODE_ID: &str = r"^(leaf|sum)-[0-9a-z]{26}$";

/// The first key that appears twice in one object anywhere in the JSON `bytes`. `None` also
/// when the bytes are not JSON: the decoder that reads them next says what is wrong with them.
pub(crate) fn first_duplicate_key(bytes: &[u8]) -> Option<String> {
    use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};

    /// Walks a value, noting in `.0` the first key an object repeats.
    struct Walk<'a>(&'a mut Option<String>);

    impl<'de> DeserializeSeed<'de> for Walk<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
            deserializer.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Walk<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let found = self.0;
            while seq.next_element_seed(Walk(&mut *found))?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let found = self.0;
            let mut keys = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if found.is_none() && !keys.insert(key.clone()) {
                    *found = Some(key);
                }
                map.next_value_seed(Walk(&mut *found))?;
            }
            Ok(())
        }
    }

    let mut found = None;
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    Walk(&mut found).deserialize(&mut deserializer).ok()?;
    found
}

/// Whether `value` matches [`SOME_TEXT`]: the same rule in Rust.
pub(crate) fn is_some_text(value: &str) -> bool {
    !value.contains('\0') && value.chars().any(|c| !c.is_whitespace() && c != '\u{feff}')
}

/// Whether `value` matches [`TITLE`] (or [`REFERENCE`], which asks less).
pub(crate) fn is_title(value: &str) -> bool {
    is_some_text(value) && !value.chars().any(char::is_control)
}

/// A leaf or summary id, as the API accepts it.
pub(crate) fn is_node_id(value: &str) -> bool {
    let Some((prefix, rest)) = value.split_once('-') else { return false };
    matches!(prefix, "leaf" | "sum")
        && rest.len() == 26
        && rest.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
}

pub(super) fn kind_names() -> Vec<&'static str> {
    MemoryKind::ALL.iter().map(|k| k.as_str()).collect()
}

pub(super) fn kind_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": kind_names() })
}

pub(super) fn optional_kind_schema(_: &mut SchemaGenerator) -> Schema {
    let mut names: Vec<serde_json::Value> = kind_names().into_iter().map(Into::into).collect();
    names.push(serde_json::Value::Null);
    json_schema!({ "type": ["string", "null"], "enum": names, "default": null })
}

pub(super) fn kinds_schema(generator: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "array", "items": kind_schema(generator), "maxItems": 16, "default": [] })
}

/// A number as JSON writes it, or as a query string does.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum NumberOrText {
    Number(serde_json::Number),
    Text(String),
}

/// An optional whole number: JSON Schema's `integer` includes `25.0`, so the server does too;
/// in a query string it arrives as text.
pub(super) fn whole_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u32>, D::Error> {
    let number = match Option::<NumberOrText>::deserialize(deserializer)? {
        None => return Ok(None),
        Some(NumberOrText::Number(number)) => number,
        Some(NumberOrText::Text(text)) => {
            return text.parse::<u32>().map(Some).map_err(|_| {
                serde::de::Error::custom(format!("expected a whole number from 0 to {}, got {text:?}", u32::MAX))
            });
        }
    };
    if let Some(n) = number.as_u64() {
        return u32::try_from(n).map(Some).map_err(|_| serde::de::Error::custom(format!("{n} is too large")));
    }
    match number.as_f64() {
        Some(f) if f.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&f) => Ok(Some(f as u32)),
        _ => Err(serde::de::Error::custom(format!("expected a whole number from 0 to {}, got {number}", u32::MAX))),
    }
}

/// Like [`whole_number`], for a required field.
pub(super) fn required_whole_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    whole_number(deserializer)?.ok_or_else(|| serde::de::Error::custom("expected a whole number, got null"))
}

#[cfg(test)]
mod tests {
    use super::first_duplicate_key;

    #[test]
    fn a_key_given_twice_in_one_object_is_found_at_any_depth() {
        let twice = |json: &str| first_duplicate_key(json.as_bytes());
        assert_eq!(twice(r#"{"text":"zsh","text":"fish"}"#).as_deref(), Some("text"));
        assert_eq!(twice(r#"{"params":{"arguments":{"a":1,"b":[{"c":1,"c":2}]}}}"#).as_deref(), Some("c"));
        assert_eq!(twice(r#"{"te\u0078t":"a","text":"b"}"#).as_deref(), Some("text"), "escapes decode first");
        assert_eq!(twice(r#"{"a":{"k":1},"b":{"k":1}}"#), None, "one key per object");
        assert_eq!(twice(r#"[{"a":1},{"a":2}]"#), None);
        assert_eq!(twice("not json"), None, "the decoder reports that");
    }
}
