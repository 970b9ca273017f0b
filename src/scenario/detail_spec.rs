//! The scenario format's checks on a result's details by JSON pointer
//! (`details_at`) and on its images (`image`, `images`), as users write them
//! (docs/scenarios.md); part of the serde model with `model.rs`.

use schemars::JsonSchema;
use schemars::json_schema;
use serde::Deserialize;
use serde::Deserializer;
use serde::de;
use serde::de::value::MapAccessDeserializer;
use serde::de::value::SeqAccessDeserializer;
use serde_json::Value;
use std::fmt;

use super::two_way::StringList;
use super::two_way::TwoWay;
use super::two_way::schema;
use super::two_way::two_way;

/// One `details_at` entry: a bare value (it must equal the value at the
/// pointer) or an object of matchers.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum DetailCheck {
    /// A bare scalar or list: the value equals it.
    Equals(Value),
    /// The object form.
    Matchers(DetailMatchers),
}

/// The matchers of a `details_at` entry (at least one); every one given
/// must hold.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("minProperties" = 1))]
pub(crate) struct DetailMatchers {
    /// The value equals this (numbers by value; `null` too).
    #[serde(default, deserialize_with = "present")]
    pub equals: Option<Value>,
    /// A string value contains each string; a list holds each as an item.
    pub contains: Option<StringList>,
    /// A string value contains none of the strings; a list holds none.
    pub not_contains: Option<StringList>,
    /// A string value matches the regex.
    pub matches: Option<String>,
    /// Something (`null` included) is at the pointer.
    pub exists: Option<bool>,
    /// Nothing is at the pointer.
    pub absent: Option<bool>,
    /// A number below this.
    pub lt: Option<f64>,
    /// A number at most this.
    pub le: Option<f64>,
    /// A number above this.
    pub gt: Option<f64>,
    /// A number at least this.
    pub ge: Option<f64>,
}

/// `image: true | false | { mime_type, width, height, max_bytes }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ImageExpect {
    /// The content holds (or does not hold) an image block.
    Flag(bool),
    /// It holds one, and every image block passes these checks.
    Checks(ImageChecks),
}

/// Checks on one image block.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ImageChecks {
    /// The block's MIME type, e.g. `image/png`.
    pub mime_type: Option<String>,
    /// The width in pixels, read from the image's header.
    pub width: Option<u32>,
    /// The height in pixels, read from the image's header.
    pub height: Option<u32>,
    /// The image data (decoded from base64) is at most this many bytes.
    pub max_bytes: Option<u64>,
}

/// `images: N` or `images: [ {checks}, … ]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ImagesExpect {
    /// Exactly this many image blocks.
    Count(usize),
    /// Exactly these image blocks, in order.
    Each(Vec<ImageChecks>),
}

impl<'de> de::Visitor<'de> for TwoWay<DetailCheck> {
    type Value = DetailCheck;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<DetailCheck, E> {
        Ok(DetailCheck::Equals(Value::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<DetailCheck, E> {
        Ok(DetailCheck::Equals(Value::from(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<DetailCheck, E> {
        Ok(DetailCheck::Equals(Value::from(v)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<DetailCheck, E> {
        serde_json::Number::from_f64(v)
            .map(|n| DetailCheck::Equals(Value::Number(n)))
            .ok_or_else(|| E::invalid_value(de::Unexpected::Float(v), &"a finite number"))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<DetailCheck, E> {
        Ok(DetailCheck::Equals(Value::String(v.to_owned())))
    }
    fn visit_unit<E: de::Error>(self) -> Result<DetailCheck, E> {
        Ok(DetailCheck::Equals(Value::Null))
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<DetailCheck, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(DetailCheck::Equals)
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<DetailCheck, A::Error> {
        DetailMatchers::deserialize(MapAccessDeserializer::new(map)).map(DetailCheck::Matchers)
    }
}

impl<'de> Deserialize<'de> for DetailCheck {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TwoWay::<DetailCheck>::new(
            "a value the detail must equal, or an object of matchers (equals, contains, \
             not_contains, matches, exists, absent, lt, le, gt, ge)",
        ))
    }
}

two_way!(
    ImageExpect,
    "true, false, or an object of image checks (mime_type, width, height, max_bytes)",
    {
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<ImageExpect, E> {
            Ok(ImageExpect::Flag(v))
        }
        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<ImageExpect, A::Error> {
            ImageChecks::deserialize(MapAccessDeserializer::new(map)).map(ImageExpect::Checks)
        }
    }
);

two_way!(
    ImagesExpect,
    "a number of image blocks, or a list of image checks, one per block",
    {
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<ImagesExpect, E> {
            usize::try_from(v)
                .map(ImagesExpect::Count)
                .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<ImagesExpect, A::Error> {
            Vec::<ImageChecks>::deserialize(SeqAccessDeserializer::new(seq)).map(ImagesExpect::Each)
        }
    }
);

schema!(DetailCheck, |generator| {
    let matchers = generator.subschema_for::<DetailMatchers>();
    json_schema!({
        "description": "A value the detail must equal (not an object), or an object of matchers",
        "anyOf": [
            {"type": ["string", "number", "boolean", "null", "array"]},
            matchers
        ]
    })
});

schema!(ImageExpect, |generator| {
    let checks = generator.subschema_for::<ImageChecks>();
    json_schema!({
        "description": "true, false, or checks every image block must pass",
        "anyOf": [{"type": "boolean"}, checks]
    })
});

schema!(ImagesExpect, |generator| {
    let checks = generator.subschema_for::<ImageChecks>();
    json_schema!({
        "description": "The number of image blocks, or checks on each block in order",
        "anyOf": [
            {"type": "integer", "minimum": 0},
            {"type": "array", "items": checks}
        ]
    })
});

/// A value that is there, even `null` (which `Option` alone reads as
/// missing).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// A JSON pointer (RFC 6901): empty, or `/` segments with `~` only in
/// `~0` and `~1`.
pub(super) fn json_pointer() -> Value {
    serde_json::json!({"pattern": "^(/([^~]|~[01])*)*$"})
}
