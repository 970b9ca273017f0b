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
use super::yaml::Seg;
use super::yaml::resolve;

/// Problems listed per document at most; the rest are not searched for.
pub const MAX_PROBLEMS: usize = 50;

/// Where an error is: the node's position, its path, and the indices
/// that lead to the entry or item holding it (for removing it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The node's position.
    pub pos: Pos,
    /// The path shown in the message.
    pub path: Vec<Seg>,
    /// Indices from the root to the entry or item to remove.
    pub steps: Vec<usize>,
}

/// A deserialisation error, located once it passes through the node it
/// concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
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
            let (mut path, steps) = self.trail.collect();
            if self.key {
                path.pop();
            }
            err.at = Some(Located {
                pos: self.node.pos,
                path,
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
pub struct DeProblem {
    /// What is wrong.
    pub message: String,
    /// Where.
    pub pos: Pos,
    /// The path shown with the message.
    pub path: Vec<Seg>,
}

/// Deserialises `root` as a `T`, once per problem: each error is recorded
/// and the entry or item it concerns removed, until the rest deserialises
/// (the value) or nothing more can be removed (`None`). `recover` may
/// repair the tree after an error that cannot be removed (an error at the
/// root): it returns false when it cannot.
pub fn deserialize_all<T: for<'de> Deserialize<'de>>(
    root: &mut Node,
    problems: &mut Vec<DeProblem>,
    mut recover: impl FnMut(&mut Node, &Error) -> bool,
) -> Option<T> {
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
            steps: Vec::new(),
        });
        problems.push(DeProblem {
            message: with_hint(&err.message),
            pos: at.pos,
            path: at.path,
        });
        let removed = root.remove(&at.steps);
        if !removed && !recover(root, &err) {
            return None;
        }
    }
    None
}

/// For "unknown field `x`, expected one of `a`, `b`": the message with
/// "; did you mean `a`?" when a known key is close.
fn with_hint(message: &str) -> String {
    let hint = (|| {
        let rest = message
            .split_once("unknown field `")
            .or_else(|| message.split_once("unknown variant `"))?
            .1;
        let (unknown, expected) = rest.split_once('`')?;
        let candidates: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
        closest(unknown, candidates.iter().copied()).map(|best| format!("; did you mean `{best}`?"))
    })();
    format!("{message}{}", hint.unwrap_or_default())
}

/// The candidate closest to `wanted`, if any is close.
pub fn closest<'a>(wanted: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
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
