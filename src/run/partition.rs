//! Partitions: splitting one suite over several machines or CI jobs.
//!
//! `--partition hash:K/N` and `--partition slice:K/N` select partition `K`
//! (1-based) of `N`, after filters apply. Every scenario is in exactly one
//! partition of a given `N`.
//!
//! - `hash` puts a scenario in bucket `fnv1a64(name) mod N` (+ 1). The hash
//!   is FNV-1a, 64 bit, over the UTF-8 bytes of the scenario's name (not
//!   its path): it has no seed, so it is the same on every run, machine and
//!   platform, and a scenario never changes bucket when others are added,
//!   removed or moved to another file. Buckets are only roughly even.
//! - `slice` deals the selected scenarios out in discovery order, round
//!   robin: position `i` (0-based) goes to partition `i mod N` (+ 1).
//!   Partitions differ in size by one at most, but adding a scenario moves
//!   the ones after it.
//!
//! A partitioned run records which partition it was and how many scenarios
//! the whole selection held ([`PartitionInfo`]), and every outcome keeps its
//! position in the whole selection, so `harness report merge` can check that
//! no partition is missing and restore the unpartitioned order.

use std::fmt;
use std::str::FromStr;

use serde::Deserialize;
use serde::Serialize;

/// Serde and JSON Schema for a type that is written as its `Display` text
/// and read back through its `FromStr` (a string matching `pattern`).
macro_rules! as_text {
    ($type:ty, $description:literal, $pattern:literal) => {
        impl Serialize for $type {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $type {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }

        impl schemars::JsonSchema for $type {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($type).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "description": $description,
                    "type": "string",
                    "pattern": $pattern
                })
            }
        }
    };
}

/// The most partitions a suite may be split into (`N`): more than any CI
/// matrix runs, few enough that a merge can name each one.
pub(crate) const MAX_PARTITIONS: u64 = 1000;

/// How scenarios are assigned to partitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PartitionKind {
    /// By a stable hash of the scenario's name.
    Hash,
    /// Round robin over the selection, in discovery order.
    Slice,
}

impl PartitionKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Hash => "hash",
            Self::Slice => "slice",
        }
    }
}

/// One partition: `hash:K/N` or `slice:K/N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Partition {
    /// The assignment.
    pub kind: PartitionKind,
    /// Which partition, 1-based (`K`).
    pub index: u64,
    /// How many partitions (`N`).
    pub count: u64,
}

/// A `--partition` value that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid partition `{given}`: {reason} (expected hash:K/N or slice:K/N with 1 <= K <= N <= \
     {MAX_PARTITIONS})"
)]
pub struct PartitionError {
    /// The text given.
    pub given: String,
    /// What is wrong with it.
    pub reason: String,
}

impl FromStr for Partition {
    type Err = PartitionError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = |reason: &str| PartitionError {
            given: text.to_owned(),
            reason: reason.to_owned(),
        };
        let (kind, rest) = text
            .split_once(':')
            .ok_or_else(|| error("no `hash:` or `slice:` prefix"))?;
        let kind = match kind {
            "hash" => PartitionKind::Hash,
            "slice" => PartitionKind::Slice,
            _ => return Err(error("the kind must be `hash` or `slice`")),
        };
        let (index, count) = rest
            .split_once('/')
            .ok_or_else(|| error("no `/` between K and N"))?;
        let number = |s: &str| {
            s.parse::<u64>()
                .map_err(|_| error("K and N must be whole numbers"))
        };
        let (index, count) = (number(index)?, number(count)?);
        if count == 0 {
            return Err(error("N must be at least 1"));
        }
        if count > MAX_PARTITIONS {
            return Err(error(&format!("N must be at most {MAX_PARTITIONS}")));
        }
        if index == 0 || index > count {
            return Err(error("K must be between 1 and N"));
        }
        Ok(Self { kind, index, count })
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}/{}", self.kind.as_str(), self.index, self.count)
    }
}

as_text!(
    Partition,
    "A partition as given on the command line: `hash:K/N` or `slice:K/N`, N at most 1000.",
    "^(hash|slice):([1-9][0-9]{0,2}|1000)/([1-9][0-9]{0,2}|1000)$"
);

/// FNV-1a, 64 bit: the partition hash. Fixed constants, no seed.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(PRIME)
    })
}

impl Partition {
    /// Whether the scenario called `name`, at `position` (0-based) in the
    /// whole selection, belongs to this partition.
    pub fn contains(&self, position: usize, name: &str) -> bool {
        self.bucket(position, name) == self.index
    }

    /// The partition (1-based) a scenario belongs to.
    pub fn bucket(&self, position: usize, name: &str) -> u64 {
        match self.kind {
            PartitionKind::Hash => fnv1a64(name.as_bytes()) % self.count + 1,
            PartitionKind::Slice => position as u64 % self.count + 1,
        }
    }

    /// Whether a scenario of this name belongs here, when that can be told
    /// from the name alone (hash partitions); `None` for slices.
    pub fn holds_name(&self, name: &str) -> Option<bool> {
        match self.kind {
            PartitionKind::Hash => Some(self.contains(0, name)),
            PartitionKind::Slice => None,
        }
    }

    /// The positions (0-based, in `names`' order) of the scenarios that
    /// belong to this partition.
    pub fn select<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<usize> {
        names
            .into_iter()
            .enumerate()
            .filter(|(position, name)| self.contains(*position, name))
            .map(|(position, _)| position)
            .collect()
    }
}

/// What a partitioned run records about its partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PartitionInfo {
    /// The partition, as given (`hash:2/4`).
    pub spec: Partition,
    /// Scenarios in the whole selection, before partitioning.
    pub suite_scenarios: usize,
    /// The fingerprint of the whole selection's scenario names, so that a
    /// merge can tell partitions of different selections apart. Absent in
    /// reports of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_fingerprint: Option<Fingerprint>,
}

/// A fingerprint of a set of scenario names: FNV-1a 64 over the names
/// sorted, each followed by a NUL byte. Written as `fnv1a64:` and 16 hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fingerprint(pub u64);

impl Fingerprint {
    /// The fingerprint of these names, in any order (duplicates count once).
    pub fn of<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let sorted: std::collections::BTreeSet<&str> = names.into_iter().collect();
        let mut bytes = Vec::new();
        for name in sorted {
            bytes.extend_from_slice(name.as_bytes());
            bytes.push(0);
        }
        Self(fnv1a64(&bytes))
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fnv1a64:{:016x}", self.0)
    }
}

impl FromStr for Fingerprint {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.strip_prefix("fnv1a64:")
            .filter(|hex| hex.len() == 16)
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .map(Self)
            .ok_or_else(|| {
                format!("`{text}` is not a suite fingerprint (fnv1a64: and 16 hex digits)")
            })
    }
}

as_text!(
    Fingerprint,
    "A fingerprint of the selected scenarios' names: `fnv1a64:` and 16 hex digits.",
    "^fnv1a64:[0-9a-f]{16}$"
);

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn fnv1a64_matches_the_reference_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn parses_and_prints() {
        let p: Partition = "hash:2/4".parse().unwrap();
        assert_eq!(
            p,
            Partition {
                kind: PartitionKind::Hash,
                index: 2,
                count: 4
            }
        );
        assert_eq!(p.to_string(), "hash:2/4");
        assert_eq!(
            "slice:1/1".parse::<Partition>().unwrap().to_string(),
            "slice:1/1"
        );
    }

    #[test]
    fn rejects_bad_values_with_the_reason() {
        let cases = [
            ("hash", "no `hash:` or `slice:` prefix"),
            ("count:1/2", "the kind must be `hash` or `slice`"),
            ("hash:1", "no `/` between K and N"),
            ("hash:a/2", "K and N must be whole numbers"),
            ("hash:1/0", "N must be at least 1"),
            ("hash:0/2", "K must be between 1 and N"),
            ("slice:3/2", "K must be between 1 and N"),
            ("hash:1/1001", "N must be at most 1000"),
            ("hash:1/18446744073709551615", "N must be at most 1000"),
            (
                "hash:1/18446744073709551616",
                "K and N must be whole numbers",
            ),
        ];
        for (given, reason) in cases {
            assert_eq!(
                given.parse::<Partition>().unwrap_err(),
                PartitionError {
                    given: given.to_owned(),
                    reason: reason.to_owned()
                },
                "{given}"
            );
        }
        assert_eq!(
            "hash:0/2".parse::<Partition>().unwrap_err().to_string(),
            "invalid partition `hash:0/2`: K must be between 1 and N (expected hash:K/N or \
             slice:K/N with 1 <= K <= N <= 1000)"
        );
        assert_eq!(
            "slice:1000/1000".parse::<Partition>().unwrap().to_string(),
            "slice:1000/1000"
        );
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("scenario number {i}")).collect()
    }

    #[test]
    fn every_scenario_is_in_exactly_one_partition() {
        let names = names(500);
        for kind in ["hash", "slice"] {
            for count in 1..=7u64 {
                let mut seen = Vec::new();
                for index in 1..=count {
                    let p: Partition = format!("{kind}:{index}/{count}").parse().unwrap();
                    seen.extend(p.select(names.iter().map(String::as_str)));
                }
                seen.sort_unstable();
                assert_eq!(
                    seen,
                    (0..names.len()).collect::<Vec<_>>(),
                    "{kind} /{count}"
                );
            }
        }
    }

    #[test]
    fn hash_buckets_do_not_move_when_scenarios_are_added() {
        let before = names(100);
        let mut after = vec!["a new one".to_owned(), "another".to_owned()];
        after.extend(before.iter().cloned());
        let p: Partition = "hash:2/3".parse().unwrap();
        let pick = |list: &[String]| -> BTreeSet<String> {
            p.select(list.iter().map(String::as_str))
                .into_iter()
                .map(|i| list[i].clone())
                .filter(|n| before.contains(n))
                .collect()
        };
        assert_eq!(pick(&before), pick(&after));
    }

    #[test]
    fn slices_deal_round_robin_and_are_balanced() {
        let p: Partition = "slice:2/3".parse().unwrap();
        let list = names(8);
        assert_eq!(p.select(list.iter().map(String::as_str)), vec![1, 4, 7]);
    }

    #[test]
    fn hash_buckets_are_fixed_values() {
        // Pinned so that a change of hash (which would reshuffle every CI
        // matrix) cannot go unnoticed.
        assert_eq!(fnv1a64(b"read a file"), 0x4662_4a98_896d_a148);
        let p: Partition = "hash:1/4".parse().unwrap();
        let buckets: Vec<u64> = ["read a file", "a", "", "a wrong path, then the right one"]
            .iter()
            .map(|name| p.bucket(0, name))
            .collect();
        assert_eq!(buckets, [1, 1, 2, 3]);
    }

    #[test]
    fn info_round_trips_through_json() {
        let info = PartitionInfo {
            spec: "slice:3/5".parse().unwrap(),
            suite_scenarios: 12,
            suite_fingerprint: Some(Fingerprint::of(["b", "a"])),
        };
        let json = serde_json::to_string(&info).unwrap();
        assert_eq!(
            json,
            r#"{"spec":"slice:3/5","suite_scenarios":12,"suite_fingerprint":"fnv1a64:ab40d7820d408076"}"#
        );
        assert_eq!(serde_json::from_str::<PartitionInfo>(&json).unwrap(), info);
        // Reports of older versions have no fingerprint.
        let old = r#"{"spec":"slice:3/5","suite_scenarios":12}"#;
        assert_eq!(
            serde_json::from_str::<PartitionInfo>(old).unwrap(),
            PartitionInfo {
                suite_fingerprint: None,
                ..info
            }
        );
        // The count is bounded in a file as on the command line.
        assert_eq!(
            serde_json::from_str::<PartitionInfo>(
                r#"{"spec":"hash:1/18446744073709551615","suite_scenarios":0}"#
            )
            .unwrap_err()
            .to_string(),
            "invalid partition `hash:1/18446744073709551615`: N must be at most 1000 (expected \
             hash:K/N or slice:K/N with 1 <= K <= N <= 1000) at line 1 column 37"
        );
        assert_eq!(
            serde_json::from_str::<PartitionInfo>(
                r#"{"spec":"slice:3/5","suite_scenarios":12,"suite_fingerprint":"x"}"#
            )
            .unwrap_err()
            .to_string(),
            "`x` is not a suite fingerprint (fnv1a64: and 16 hex digits) at line 1 column 65"
        );
    }

    #[test]
    fn a_fingerprint_depends_on_the_set_of_names_only() {
        assert_eq!(
            Fingerprint::of(["a", "b"]),
            Fingerprint::of(["b", "a", "a"])
        );
        assert_ne!(Fingerprint::of(["a", "b"]), Fingerprint::of(["a", "c"]));
        assert_ne!(Fingerprint::of(["ab"]), Fingerprint::of(["a", "b"]));
        // Pinned: reports written by other versions must keep comparing equal.
        assert_eq!(
            Fingerprint::of(["b", "a"]).to_string(),
            format!("fnv1a64:{:016x}", fnv1a64(b"a\0b\0"))
        );
    }
}
