//! The machinery of the scenario format's two-way values (a string or an
//! object, one item or a list): a visitor that says what it expected, and
//! the macros that write a value's `Deserialize` and `JsonSchema` through it.
//! The values themselves are in `model.rs` and `detail_spec.rs`.

use std::marker::PhantomData;

use schemars::json_schema;
use serde::Deserialize;
use serde::de;
use serde::de::value::SeqAccessDeserializer;

/// A visitor for "a scalar of one kind, or a map, or a sequence".
pub(crate) struct TwoWay<T> {
    /// What the value may be, for the message that refuses anything else.
    pub(crate) expecting: &'static str,
    marker: PhantomData<T>,
}

impl<T> TwoWay<T> {
    pub(crate) fn new(expecting: &'static str) -> Self {
        Self {
            expecting,
            marker: PhantomData,
        }
    }
}

/// `Deserialize` for a two-way value through a [`TwoWay`] visitor that
/// expects `$expecting` and has the given `visit_*` methods; any other
/// shape is refused with `$expecting` in the message.
macro_rules! two_way {
    ($ty:ident, $expecting:literal, { $($visit:tt)* }) => {
        impl<'de> ::serde::de::Visitor<'de> for $crate::scenario::two_way::TwoWay<$ty> {
            type Value = $ty;
            fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.expecting)
            }
            $($visit)*
        }

        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any($crate::scenario::two_way::TwoWay::<$ty>::new($expecting))
            }
        }
    };
}
pub(crate) use two_way;

/// `JsonSchema` named after the type, its schema made by `$schema` from the
/// generator.
macro_rules! schema {
    ($ty:ident, |$generator:pat_param| $schema:expr) => {
        impl ::schemars::JsonSchema for $ty {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($ty).into()
            }
            fn json_schema($generator: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                $schema
            }
        }
    };
}
pub(crate) use schema;

/// One string or a list of strings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct StringList(pub Vec<String>);

two_way!(StringList, "a string or a list of strings", {
    fn visit_str<E: de::Error>(self, v: &str) -> Result<StringList, E> {
        Ok(StringList(vec![v.to_owned()]))
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<StringList, A::Error> {
        Vec::<String>::deserialize(SeqAccessDeserializer::new(seq)).map(StringList)
    }
});

schema!(StringList, |_| json_schema!({
    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
}));
