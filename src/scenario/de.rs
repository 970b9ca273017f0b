//! serde deserialisation from the positioned YAML tree ([`super::yaml`]),
//! with every error placed at the node it concerns.
//!
//! A type error, an unknown key or a missing key carries the position and
//! the path of its node (an unknown key: the key itself; a missing key:
//! the mapping that lacks it). [`deserialize_all`] goes on after an error:
//! it records it, removes the offending entry or item from the tree, and
//! deserialises again, so one pass lists every such problem of a document.
//!
//! Scalars are read as serde_yaml 0.9 read them: a string wanted gets the
//! scalar's text whatever it looks like (`name: 5` is `"5"`), a number or
//! a boolean wanted needs a plain scalar that reads as one (`lines: "5"` is
//! a type error), and `deserialize_any` resolves plain scalars by the YAML
//! 1.2 core schema.

use std::fmt;

use serde::Deserialize;
use serde::de;
use serde::de::DeserializeSeed;
use serde::de::IntoDeserializer;
use serde::de::Unexpected;
use serde::de::Visitor;

use super::yaml::Kind;
use super::yaml::Node;
use super::yaml::Pos;
use super::yaml::Resolved;
use super::yaml::Scalar;
use super::yaml::Seg;
use super::yaml::resolve;

/// Problems listed per document at most; the rest are not searched for.
pub(crate) const MAX_PROBLEMS: usize = 50;

/// Where an error is: the node's position, its path, and the indices
/// that lead to the entry or item holding it (for removing it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Located {
    /// The node's position.
    pub pos: Pos,
    /// The path shown in the message.
    pub path: Vec<Seg>,
    /// The path of the entry or item to remove (an unknown key's own
    /// path, where `path` is its mapping's).
    pub entry: Vec<Seg>,
    /// Indices from the root to the entry or item to remove.
    pub steps: Vec<usize>,
}

/// A deserialisation error, located once it passes through the node it
/// concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Error {
    /// What is wrong.
    pub message: String,
    /// Where (set by the innermost node the error passes).
    pub at: Option<Located>,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self {
            message: msg.to_string(),
            at: None,
        }
    }

    fn invalid_type(unexpected: Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        let expected = expected.to_string();
        let message = in_words(unexpected, &expected)
            .unwrap_or_else(|| format!("invalid type: {unexpected}, expected {expected}"));
        de::Error::custom(message)
    }

    fn invalid_value(unexpected: Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        let expected = expected.to_string();
        let message = in_words(unexpected, &expected)
            .unwrap_or_else(|| format!("invalid value: {unexpected}, expected {expected}"));
        de::Error::custom(message)
    }
}

/// A number or a boolean that is not one, said in the words of the file
/// rather than of Rust's types (`expected u64`): what the key takes, and
/// what it was given. `None` for what serde words well enough itself.
fn in_words(unexpected: Unexpected<'_>, expected: &str) -> Option<String> {
    let unsigned_max = match expected {
        "u8" => Some(u64::from(u8::MAX)),
        "u16" => Some(u64::from(u16::MAX)),
        "u32" => Some(u64::from(u32::MAX)),
        "u64" | "u128" | "usize" => Some(u64::MAX),
        _ => None,
    };
    let wanted = match (expected, unsigned_max) {
        (_, Some(max)) => match unexpected {
            // Too large for the key (a width of a picture, say).
            Unexpected::Unsigned(_) => format!("must be a whole number from 0 to {max}"),
            _ => "must be a whole number ≥ 0".to_owned(),
        },
        ("i8" | "i16" | "i32" | "i64" | "i128" | "isize", None) => {
            "must be a whole number".to_owned()
        }
        ("f32" | "f64", None) => "must be a number".to_owned(),
        ("a boolean", None) => "must be `true` or `false`".to_owned(),
        _ => return None,
    };
    let given = match unexpected {
        Unexpected::Unsigned(n) => format!("`{n}`"),
        Unexpected::Signed(n) => format!("`{n}`"),
        Unexpected::Float(f) => format!("`{f:?}`"),
        Unexpected::Bool(b) => format!("`{b}`"),
        Unexpected::Unit => "empty".to_owned(),
        Unexpected::Seq => "a list".to_owned(),
        Unexpected::Map => "a mapping".to_owned(),
        Unexpected::Str(text) => given_string(text, expected),
        other => other.to_string(),
    };
    Some(format!("{wanted} (it is {given})"))
}

/// A string given where a number or a boolean is wanted, and what was
/// meant by it when that can be told.
fn given_string(text: &str, expected: &str) -> String {
    let shown = text.escape_debug();
    if expected == "a boolean" {
        let meant = match text.to_ascii_lowercase().as_str() {
            "yes" | "y" | "on" => Some(true),
            "no" | "n" | "off" => Some(false),
            _ => None,
        };
        if let Some(meant) = meant {
            return format!(
                "`{shown}`, which YAML 1.2 reads as a string, not a boolean; write `{meant}`"
            );
        }
    }
    let plain = Scalar {
        text: text.to_owned(),
        plain: true,
        tag: None,
    };
    let float = matches!(expected, "f32" | "f64");
    let signed = float || expected.starts_with('i');
    let typed = match resolve(&plain) {
        Resolved::Bool(_) => expected == "a boolean",
        Resolved::Unsigned(_) => expected != "a boolean",
        Resolved::Signed(_) => signed,
        Resolved::Float(_) => float,
        _ => false,
    };
    if typed {
        // Unquoted, it would have been what is wanted.
        return format!("`\"{shown}\"`, a string because it is quoted; write it without quotes");
    }
    format!("the string `{shown}`")
}

/// The way from the root to a node: each link is one key or index.
struct Trail<'t> {
    parent: Option<&'t Trail<'t>>,
    /// The segment for paths, and the index in the parent collection.
    link: Option<(Seg, usize)>,
}

impl Trail<'_> {
    fn collect(&self) -> (Vec<Seg>, Vec<usize>) {
        let mut segs = Vec::new();
        let mut steps = Vec::new();
        let mut at = Some(self);
        while let Some(trail) = at {
            if let Some((seg, step)) = &trail.link {
                segs.push(seg.clone());
                steps.push(*step);
            }
            at = trail.parent;
        }
        segs.reverse();
        steps.reverse();
        (segs, steps)
    }
}

/// Deserialises one node.
struct NodeDe<'de, 't> {
    node: &'de Node,
    trail: &'t Trail<'t>,
    /// The node is a mapping key: errors show the mapping's path.
    key: bool,
}

impl<'de> NodeDe<'de, '_> {
    fn locate(&self, mut err: Error) -> Error {
        if err.at.is_none() {
            let (entry, steps) = self.trail.collect();
            let mut path = entry.clone();
            if self.key {
                path.pop();
            }
            err.at = Some(Located {
                pos: self.node.pos,
                path,
                entry,
                steps,
            });
        }
        err
    }

    fn unexpected(&self) -> Unexpected<'de> {
        match &self.node.kind {
            Kind::Seq(_) => Unexpected::Seq,
            Kind::Map(_) => Unexpected::Map,
            Kind::Scalar(s) => match resolve(s) {
                Resolved::Null => Unexpected::Unit,
                Resolved::Bool(b) => Unexpected::Bool(b),
                Resolved::Unsigned(n) => Unexpected::Unsigned(n),
                Resolved::Signed(n) => Unexpected::Signed(n),
                Resolved::Float(f) => Unexpected::Float(f),
                Resolved::Str | Resolved::Invalid => Unexpected::Str(&s.text),
            },
        }
    }

    fn invalid(&self, expected: &dyn de::Expected) -> Error {
        de::Error::invalid_type(self.unexpected(), expected)
    }

    fn any<V: Visitor<'de>>(&self, visitor: V) -> Result<V::Value, Error> {
        match &self.node.kind {
            Kind::Scalar(s) => match resolve(s) {
                Resolved::Null => visitor.visit_unit(),
                Resolved::Bool(b) => visitor.visit_bool(b),
                Resolved::Unsigned(n) => visitor.visit_u64(n),
                Resolved::Signed(n) => visitor.visit_i64(n),
                Resolved::Float(f) => visitor.visit_f64(f),
                Resolved::Str => visitor.visit_borrowed_str(&s.text),
                Resolved::Invalid => Err(de::Error::custom(format!(
                    "`{}` does not fit the tag written before it",
                    s.text
                ))),
            },
            Kind::Seq(items) => visitor.visit_seq(SeqDe {
                items: items.iter().enumerate(),
                trail: self.trail,
            }),
            Kind::Map(entries) => visitor.visit_map(MapDe {
                entries: entries.iter().enumerate(),
                current: None,
                trail: self.trail,
            }),
        }
    }
}

struct SeqDe<'de, 't> {
    items: std::iter::Enumerate<std::slice::Iter<'de, Node>>,
    trail: &'t Trail<'t>,
}

impl<'de> de::SeqAccess<'de> for SeqDe<'de, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let Some((index, node)) = self.items.next() else {
            return Ok(None);
        };
        let trail = Trail {
            parent: Some(self.trail),
            link: Some((Seg::Index(index), index)),
        };
        seed.deserialize(NodeDe {
            node,
            trail: &trail,
            key: false,
        })
        .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct MapDe<'de, 't> {
    entries: std::iter::Enumerate<std::slice::Iter<'de, (Node, Node)>>,
    current: Option<(usize, &'de Node, Seg)>,
    trail: &'t Trail<'t>,
}

impl<'de> de::MapAccess<'de> for MapDe<'de, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((index, (key, value))) = self.entries.next() else {
            return Ok(None);
        };
        let seg = Seg::Key(key.text().unwrap_or("?").to_owned());
        let trail = Trail {
            parent: Some(self.trail),
            link: Some((seg.clone(), index)),
        };
        let result = seed.deserialize(NodeDe {
            node: key,
            trail: &trail,
            key: true,
        });
        self.current = Some((index, value, seg));
        result.map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let Some((index, node, seg)) = self.current.take() else {
            return Err(de::Error::custom("a value was asked for before its key"));
        };
        let trail = Trail {
            parent: Some(self.trail),
            link: Some((seg, index)),
        };
        seed.deserialize(NodeDe {
            node,
            trail: &trail,
            key: false,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

struct EnumDe<'de, 't> {
    variant: &'de str,
    value: Option<NodeDe<'de, 't>>,
}

impl<'de, 't> de::EnumAccess<'de> for EnumDe<'de, 't> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Error> {
        let variant = seed.deserialize(self.variant.into_deserializer())?;
        Ok((variant, self))
    }
}

impl<'de> de::VariantAccess<'de> for EnumDe<'de, '_> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.value {
            None => Ok(()),
            Some(de) => Err(de.invalid(&"a unit variant")),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        match self.value {
            Some(de) => seed.deserialize(de),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"a newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            Some(de) => de::Deserializer::deserialize_seq(de, visitor),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &visitor)),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.value {
            Some(de) => de::Deserializer::deserialize_map(de, visitor),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &visitor)),
        }
    }
}

/// Every typed request that is not a string, an option or a collection
/// reads the node as `deserialize_any` does; the visitor refuses what it
/// cannot take, with serde's usual "invalid type" message.
macro_rules! as_any {
    ($($method:ident),*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
                let result = self.any(visitor);
                result.map_err(|e| self.locate(e))
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for NodeDe<'de, '_> {
    type Error = Error;

    as_any!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64
    );

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match &self.node.kind {
            Kind::Scalar(s) => visitor.visit_borrowed_str(&s.text),
            _ => Err(self.invalid(&visitor)),
        };
        result.map_err(|e| self.locate(e))
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let err = self.invalid(&visitor);
        Err(self.locate(err))
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.node.is_null() {
            visitor.visit_none().map_err(|e| self.locate(e))
        } else {
            let trail = self.trail;
            let node = self.node;
            let key = self.key;
            visitor
                .visit_some(NodeDe { node, trail, key })
                .map_err(|e| self.locate(e))
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = if self.node.is_null() {
            visitor.visit_unit()
        } else {
            Err(self.invalid(&visitor))
        };
        result.map_err(|e| self.locate(e))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        let (node, trail, key) = (self.node, self.trail, self.key);
        visitor
            .visit_newtype_struct(NodeDe { node, trail, key })
            .map_err(|e| self.locate(e))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match &self.node.kind {
            Kind::Seq(items) => visitor.visit_seq(SeqDe {
                items: items.iter().enumerate(),
                trail: self.trail,
            }),
            _ => Err(self.invalid(&visitor)),
        };
        result.map_err(|e| self.locate(e))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match &self.node.kind {
            Kind::Map(entries) => visitor.visit_map(MapDe {
                entries: entries.iter().enumerate(),
                current: None,
                trail: self.trail,
            }),
            _ => Err(self.invalid(&visitor)),
        };
        result.map_err(|e| self.locate(e))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let result = match &self.node.kind {
            Kind::Scalar(s) => visitor.visit_enum(EnumDe {
                variant: &s.text,
                value: None,
            }),
            Kind::Map(entries) if entries.len() == 1 => {
                let (key, value) = &entries[0];
                match key.text() {
                    Some(variant) => visitor.visit_enum(EnumDe {
                        variant,
                        value: Some(NodeDe {
                            node: value,
                            trail: self.trail,
                            key: false,
                        }),
                    }),
                    None => Err(self.invalid(&visitor)),
                }
            }
            _ => Err(self.invalid(&visitor)),
        };
        result.map_err(|e| self.locate(e))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
}

/// A problem found by [`deserialize_all`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DeProblem {
    /// What is wrong.
    pub message: String,
    /// Where.
    pub pos: Pos,
    /// The path shown with the message.
    pub path: Vec<Seg>,
    /// The path of the entry or item taken out of the tree because of it
    /// (`None`: nothing was), so that what checks the rest does not say
    /// again, in other words, that it is missing.
    pub removed: Option<Vec<Seg>>,
    /// For an unknown key: the key just above it, at its indentation,
    /// that has no value, and its line (the key was likely meant under
    /// it).
    pub empty_above: Option<(String, usize)>,
}

/// Deserialises `root` as a `T`, once per problem: each error is recorded
/// and the entry or item it concerns removed, until the rest deserialises
/// (the value) or nothing more can be removed (`None`). `recover` may
/// repair the tree after an error that cannot be removed (an error at the
/// root): it returns false when it cannot.
///
/// Only the first problem of a node is said: a key found missing once
/// its entry was removed for a problem of its own, or once an unknown
/// key was taken for a misspelling of it, is not reported again.
pub(crate) fn deserialize_all<T: for<'de> Deserialize<'de>>(
    root: &mut Node,
    problems: &mut Vec<DeProblem>,
    mut recover: impl FnMut(&mut Node, &Error) -> bool,
) -> Option<T> {
    // Entries already accounted for: removed, or meant by a misspelt key.
    let mut accounted: Vec<Vec<Seg>> = Vec::new();
    for _ in 0..MAX_PROBLEMS {
        let top = Trail {
            parent: None,
            link: None,
        };
        let result = T::deserialize(NodeDe {
            node: root,
            trail: &top,
            key: false,
        });
        let err = match result {
            Ok(value) => return Some(value),
            Err(err) => err,
        };
        let at = err.at.clone().unwrap_or(Located {
            pos: root.pos,
            path: Vec::new(),
            entry: Vec::new(),
            steps: Vec::new(),
        });
        let follow_on = missing_field(&err.message).is_some_and(|field| {
            let mut entry = at.path.clone();
            entry.push(Seg::Key(field.to_owned()));
            accounted.contains(&entry)
        });
        let removed = root.remove(&at.steps);
        if !follow_on {
            let (mut message, meant) = with_hint(&err.message);
            if let Some(meant) = meant {
                let mut entry = at.path.clone();
                entry.push(Seg::Key(meant));
                accounted.push(entry);
            }
            let empty_above = if removed {
                empty_key_above(root, &at)
            } else {
                None
            };
            if let Some((name, line)) = &empty_above
                && let Some(Seg::Key(unknown)) = at.entry.last()
            {
                message.push_str(&format!(
                    "; `{name}` just above (line {line}) has no value: if `{unknown}` belongs \
                     to it, indent it under `{name}`"
                ));
            }
            problems.push(DeProblem {
                message,
                pos: at.pos,
                path: at.path,
                removed: removed.then(|| at.entry.clone()),
                empty_above,
            });
        }
        if removed {
            accounted.push(at.entry);
        } else if !recover(root, &err) {
            return None;
        }
    }
    None
}

/// The field of "missing field `x`".
fn missing_field(message: &str) -> Option<&str> {
    message.strip_prefix("missing field `")?.strip_suffix('`')
}

/// For an unknown key written just below a key with no value, at its
/// indentation (`contains` under an empty `expect:`): that key and its
/// line. The entry at `at` has been removed, so the one before it is at
/// the same index less one.
fn empty_key_above(root: &Node, at: &Located) -> Option<(String, usize)> {
    if at.entry.len() != at.path.len() + 1 {
        return None; // not an unknown key: a value that did not fit
    }
    let (&index, parents) = at.steps.split_last()?;
    let mut node = root;
    for &step in parents {
        node = match &node.kind {
            Kind::Seq(items) => items.get(step)?,
            Kind::Map(entries) => &entries.get(step)?.1,
            Kind::Scalar(_) => return None,
        };
    }
    let Kind::Map(entries) = &node.kind else {
        return None;
    };
    let (key, value) = entries.get(index.checked_sub(1)?)?;
    let empty = matches!(
        &value.kind,
        Kind::Scalar(s) if s.plain && s.text.is_empty() && s.tag.is_none()
    );
    (empty && key.pos.column == at.pos.column)
        .then(|| Some((key.text()?.to_owned(), key.pos.line)))
        .flatten()
}

/// For "unknown field `x`, expected one of `a`, `b`": the message with
/// "; did you mean `a`?" when a known key is close, and that key.
fn with_hint(message: &str) -> (String, Option<String>) {
    let best = (|| {
        let rest = message
            .split_once("unknown field `")
            .or_else(|| message.split_once("unknown variant `"))?
            .1;
        let (unknown, expected) = rest.split_once('`')?;
        let candidates: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
        closest(unknown, candidates.iter().copied()).map(str::to_owned)
    })();
    match best {
        Some(best) => (format!("{message}; did you mean `{best}`?"), Some(best)),
        None => (message.to_owned(), None),
    }
}

/// The keys a struct of the model takes, as serde's derive declares them
/// (empty for a type that is not a struct).
pub(crate) fn fields_of<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    /// A deserializer that only notes the fields it is asked for.
    struct Probe<'a>(&'a std::cell::Cell<&'static [&'static str]>);

    impl<'de> de::Deserializer<'de> for Probe<'_> {
        type Error = Error;

        fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Error> {
            Err(de::Error::custom("not a struct"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Error> {
            self.0.set(fields);
            Err(de::Error::custom("fields noted"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }

    let fields = std::cell::Cell::new(&[][..]);
    let _ = T::deserialize(Probe(&fields));
    fields.get()
}

/// The candidate closest to `wanted`, if any is close.
pub(crate) fn closest<'a>(
    wanted: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let mut best: Option<(f64, &str)> = None;
    for candidate in candidates {
        let distance = strsim::damerau_levenshtein(wanted, candidate);
        let score = strsim::jaro_winkler(wanted, candidate);
        let close = distance <= 2.max(wanted.len() / 3) || score >= 0.85;
        if close && best.is_none_or(|(s, _)| score > s) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, c)| c)
}
