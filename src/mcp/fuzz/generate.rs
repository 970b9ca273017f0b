//! The adversarial calls of one tool, made from its input schema,
//! deterministic by seed and bounded in size.
//!
//! Every case starts from a plausible object (each property of the
//! schema's top level given a value of its type: its first `enum` value,
//! `"a"`, `1`, `true`, `[]`, `{}`) and breaks one thing, its [`Class`]:
//! the whole `arguments` as `null` or not an object, a required property
//! left out, a property of the wrong type, `null`, an empty or a 64 KiB
//! string, a boundary number, an unknown extra property, a value nested 64
//! deep, an array where an object is expected, a value outside its enum.
//! The candidates are grouped by class, each group shuffled by the seed,
//! and taken round-robin across the classes so that a small `--cases`
//! still has every class; past the candidates, cases break two things at
//! once ([`Class::Combined`]), never the same arguments twice, so a tool
//! with few properties may get fewer calls than asked. The same schema,
//! seed and count give the same calls.

use serde_json::Map;
use serde_json::Number;
use serde_json::Value;
use serde_json::json;

/// The length of the huge string: 64 KiB.
pub const HUGE_STRING_BYTES: usize = 64 * 1024;

/// How deep the deeply nested values go.
pub const NESTING_DEPTH: usize = 64;

/// The most cases asked of one tool.
pub const MAX_CASES: usize = 10_000;

/// The name of the property no schema has.
pub const UNKNOWN_FIELD: &str = "harness_fuzz_unknown";

/// What a case breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// `arguments: null`.
    ArgumentsNull,
    /// `arguments` an array, a string or a number.
    ArgumentsNotObject,
    /// A required property left out (or `{}` for all of them).
    MissingRequired,
    /// A property given a value of another type.
    WrongType,
    /// A property given `null`.
    NullValue,
    /// A string property given `""`.
    EmptyString,
    /// A string property given 64 KiB.
    HugeString,
    /// A number property given 0, -1, the i64 bounds, ±1e308 or 0.5.
    BoundaryNumber,
    /// An extra property the schema does not name.
    UnknownField,
    /// A property given an array or object nested 64 deep.
    DeepNesting,
    /// An object property given an array.
    ArrayForObject,
    /// An enum property given a value outside its enum.
    EnumViolation,
    /// Two of the breaks above at once.
    Combined,
}

impl Class {
    /// Every class, in the order reports list them.
    pub const ALL: [Class; 13] = [
        Class::ArgumentsNull,
        Class::ArgumentsNotObject,
        Class::MissingRequired,
        Class::WrongType,
        Class::NullValue,
        Class::EmptyString,
        Class::HugeString,
        Class::BoundaryNumber,
        Class::UnknownField,
        Class::DeepNesting,
        Class::ArrayForObject,
        Class::EnumViolation,
        Class::Combined,
    ];

    /// Its name in reports (`arguments_null`).
    pub fn name(self) -> &'static str {
        match self {
            Class::ArgumentsNull => "arguments_null",
            Class::ArgumentsNotObject => "arguments_not_object",
            Class::MissingRequired => "missing_required",
            Class::WrongType => "wrong_type",
            Class::NullValue => "null_value",
            Class::EmptyString => "empty_string",
            Class::HugeString => "huge_string",
            Class::BoundaryNumber => "boundary_number",
            Class::UnknownField => "unknown_field",
            Class::DeepNesting => "deep_nesting",
            Class::ArrayForObject => "array_for_object",
            Class::EnumViolation => "enum_violation",
            Class::Combined => "combined",
        }
    }
}

/// One call to make.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Case {
    /// What it breaks.
    pub class: Class,
    /// The property it breaks, if one.
    pub field: Option<String>,
    /// Whether the schema refuses these arguments for certain (a value of
    /// the wrong type, a required property missing, `null` where `null` is
    /// not allowed); an empty string or a boundary number may be valid.
    pub invalid: bool,
    /// The value sent as `arguments`.
    pub arguments: Value,
}

/// A small deterministic generator (SplitMix64): the same seed gives the
/// same numbers on every machine.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The generator of `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 for `n` 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        usize::try_from(self.next_u64() % n as u64).unwrap_or(0)
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// The seed of one tool: the run's seed mixed with the tool's name, so
/// that restricting the run to some tools (`--tool`) leaves their calls
/// as they were.
pub fn tool_seed(seed: u64, tool: &str) -> u64 {
    // FNV-1a of the name.
    let mut hash: u64 = 0xCBF2_9CE4_8422_2325;
    for byte in tool.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01B3);
    }
    seed ^ hash
}

/// `count` cases (at most [`MAX_CASES`]) for a tool whose input schema is
/// `schema`, from `seed`.
pub fn cases(schema: &Map<String, Value>, seed: u64, count: usize) -> Vec<Case> {
    let count = count.min(MAX_CASES);
    let mut rng = Rng::new(seed);
    let mut groups = candidates(schema);
    for group in &mut groups {
        rng.shuffle(group);
    }
    let singles: Vec<Case> = groups.iter().flatten().cloned().collect();
    let mut out = Vec::with_capacity(count);
    let mut round = 0;
    while out.len() < count {
        let mut took = false;
        for group in &groups {
            if let Some(case) = group.get(round) {
                took = true;
                if out.len() < count {
                    out.push(case.clone());
                }
            }
        }
        if !took {
            break;
        }
        round += 1;
    }
    let base = base_object(schema);
    let combinable: Vec<&Case> = singles
        .iter()
        .filter(|c| c.field.is_some() && c.arguments.is_object())
        .collect();
    let mut seen: std::collections::HashSet<u64> = out.iter().map(fingerprint).collect();
    // Past the candidates, two breaks at once; a tool with too few to
    // combine gets fewer calls rather than the same ones again.
    let mut attempts = 0;
    while out.len() < count && combinable.len() >= 2 && attempts < count * 4 {
        attempts += 1;
        let first = combinable[rng.below(combinable.len())];
        let second = combinable[rng.below(combinable.len())];
        if first.field == second.field {
            continue;
        }
        let case = combined(&base, first, second);
        if seen.insert(fingerprint(&case)) {
            out.push(case);
        }
    }
    out
}

/// A hash of a case's arguments, to send no call twice.
fn fingerprint(case: &Case) -> u64 {
    use std::hash::Hash as _;
    use std::hash::Hasher as _;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(&case.arguments)
        .unwrap_or_default()
        .hash(&mut hasher);
    hasher.finish()
}

/// Two cases' breaks in one object: the second's changed property applied
/// over the first's arguments.
fn combined(base: &Map<String, Value>, first: &Case, second: &Case) -> Case {
    let mut arguments = first.arguments.clone();
    if let (Value::Object(map), Value::Object(other), Some(field)) =
        (&mut arguments, &second.arguments, &second.field)
    {
        match other.get(field) {
            Some(value) => {
                map.insert(field.clone(), value.clone());
            }
            None if base.contains_key(field) => {
                map.remove(field);
            }
            None => {}
        }
    }
    let fields = [&first.field, &second.field]
        .iter()
        .filter_map(|f| f.as_deref())
        .collect::<Vec<_>>()
        .join("+");
    Case {
        class: Class::Combined,
        field: Some(fields),
        invalid: first.invalid || second.invalid,
        arguments,
    }
}

/// The properties of the schema's top level, in the schema's order.
fn properties(schema: &Map<String, Value>) -> Vec<(String, Map<String, Value>)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(k, v)| (k.clone(), v.as_object().cloned().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default()
}

fn required(schema: &Map<String, Value>) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The JSON types a property allows (`type` a string or a list; none
/// named: any).
fn types(prop: &Map<String, Value>) -> Vec<&str> {
    match prop.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// A plausible value of a property: its first enum value, else one of
/// its first type.
fn plausible(prop: &Map<String, Value>) -> Value {
    if let Some(first) = prop
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(value) = prop.get("const") {
        return value.clone();
    }
    match types(prop).first().copied() {
        Some("number" | "integer") => json!(1),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => json!({}),
        Some("null") => Value::Null,
        _ => json!("a"),
    }
}

/// The object every case starts from.
pub fn base_object(schema: &Map<String, Value>) -> Map<String, Value> {
    properties(schema)
        .iter()
        .map(|(name, prop)| (name.clone(), plausible(prop)))
        .collect()
}

/// Whether `value`'s JSON type is one of `allowed` (none: any).
fn type_allowed(value: &Value, allowed: &[&str]) -> bool {
    if allowed.is_empty() {
        return true;
    }
    let name = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    allowed.contains(&name) || (name == "integer" && allowed.contains(&"number"))
}

fn nested_array(depth: usize) -> Value {
    let mut value = json!(0);
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

fn nested_object(depth: usize) -> Value {
    let mut value = json!(0);
    for _ in 0..depth {
        let mut map = Map::new();
        map.insert("a".to_owned(), value);
        value = Value::Object(map);
    }
    value
}

fn boundary_numbers(integer: bool) -> Vec<Value> {
    let mut numbers = vec![json!(0), json!(-1), json!(i64::MIN), json!(i64::MAX)];
    for f in [1e308, -1e308] {
        if let Some(n) = Number::from_f64(f) {
            numbers.push(Value::Number(n));
        }
    }
    if integer && let Some(n) = Number::from_f64(0.5) {
        numbers.push(Value::Number(n));
    }
    numbers
}

/// Every candidate case, grouped by class in [`Class::ALL`]'s order.
fn candidates(schema: &Map<String, Value>) -> Vec<Vec<Case>> {
    let base = base_object(schema);
    let props = properties(schema);
    let required = required(schema);
    let with = |field: &str, value: Value| {
        let mut map = base.clone();
        map.insert(field.to_owned(), value);
        Value::Object(map)
    };
    let case = |class: Class, field: Option<&str>, invalid: bool, arguments: Value| Case {
        class,
        field: field.map(str::to_owned),
        invalid,
        arguments,
    };
    let mut groups: Vec<Vec<Case>> = Class::ALL.iter().map(|_| Vec::new()).collect();
    let mut push = |c: Case| {
        if let Some(i) = Class::ALL.iter().position(|k| *k == c.class) {
            groups[i].push(c);
        }
    };
    push(case(Class::ArgumentsNull, None, true, Value::Null));
    for other in [json!([]), json!([1]), json!("a"), json!(0)] {
        push(case(Class::ArgumentsNotObject, None, true, other));
    }
    if !required.is_empty() {
        push(case(Class::MissingRequired, None, true, json!({})));
    }
    for field in &required {
        let mut map = base.clone();
        map.remove(field);
        push(case(
            Class::MissingRequired,
            Some(field),
            true,
            Value::Object(map),
        ));
    }
    let samples = [
        json!("a"),
        json!(1),
        json!(1.5),
        json!(true),
        json!([]),
        json!({}),
    ];
    for (name, prop) in &props {
        let allowed = types(prop);
        let field = Some(name.as_str());
        for sample in &samples {
            if !allowed.is_empty() && !type_allowed(sample, &allowed) {
                push(case(
                    Class::WrongType,
                    field,
                    true,
                    with(name, sample.clone()),
                ));
            }
        }
        let null_ok = allowed.is_empty() || allowed.contains(&"null");
        push(case(
            Class::NullValue,
            field,
            !null_ok,
            with(name, Value::Null),
        ));
        if allowed.contains(&"string") {
            push(case(
                Class::EmptyString,
                field,
                false,
                with(name, json!("")),
            ));
            let huge = "x".repeat(HUGE_STRING_BYTES);
            push(case(
                Class::HugeString,
                field,
                false,
                with(name, json!(huge)),
            ));
        }
        if allowed.contains(&"number") || allowed.contains(&"integer") {
            let integer = !allowed.contains(&"number");
            for n in boundary_numbers(integer) {
                let invalid = integer && !(n.is_i64() || n.is_u64());
                push(case(Class::BoundaryNumber, field, invalid, with(name, n)));
            }
        }
        let array_ok = allowed.is_empty() || allowed.contains(&"array");
        let object_ok = allowed.is_empty() || allowed.contains(&"object");
        let deep = if array_ok || !object_ok {
            nested_array(NESTING_DEPTH)
        } else {
            nested_object(NESTING_DEPTH)
        };
        push(case(
            Class::DeepNesting,
            field,
            !allowed.is_empty() && !type_allowed(&deep, &allowed),
            with(name, deep),
        ));
        if allowed.contains(&"object") {
            push(case(
                Class::ArrayForObject,
                field,
                !array_ok,
                with(name, json!([{}])),
            ));
        }
        if let Some(values) = prop.get("enum").and_then(Value::as_array) {
            let outside = json!("harness-fuzz-not-in-enum");
            if !values.contains(&outside) {
                push(case(Class::EnumViolation, field, true, with(name, outside)));
            }
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    push(case(
        Class::UnknownField,
        Some(UNKNOWN_FIELD),
        closed,
        with(UNKNOWN_FIELD, json!("a")),
    ));
    push(case(
        Class::ArrayForObject,
        None,
        true,
        json!([Value::Object(base.clone())]),
    ));
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn sample() -> Map<String, Value> {
        match json!({
            "type": "object",
            "properties": {
                "path": { "type": "string" },
                "limit": { "type": "integer" },
                "mode": { "type": "string", "enum": ["fast", "slow"] },
                "options": { "type": "object" },
                "tags": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["path"],
            "additionalProperties": false
        }) {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_calls_and_another_seed_another_order() {
        let schema = sample();
        assert_eq!(cases(&schema, 7, 40), cases(&schema, 7, 40));
        assert_ne!(cases(&schema, 7, 40), cases(&schema, 8, 40));
    }

    #[test]
    fn thirty_cases_hold_every_class_but_combined() {
        let classes: std::collections::BTreeSet<Class> =
            cases(&sample(), 0, 30).iter().map(|c| c.class).collect();
        let expected: std::collections::BTreeSet<Class> = Class::ALL
            .iter()
            .copied()
            .filter(|c| *c != Class::Combined)
            .collect();
        assert_eq!(classes, expected);
    }

    #[test]
    fn past_the_candidates_cases_combine_two_breaks_and_never_repeat() {
        let all = cases(&sample(), 0, 200);
        assert_eq!(all.len(), 200);
        assert!(all.iter().any(|c| c.class == Class::Combined));
        let distinct: std::collections::BTreeSet<String> = all
            .iter()
            .map(|c| serde_json::to_string(&c.arguments).unwrap_or_default())
            .collect();
        assert_eq!(distinct.len(), 200);
    }

    #[test]
    fn a_tool_without_properties_gets_its_few_distinct_cases() {
        let schema = match json!({ "type": "object" }) {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let all: Vec<(Class, Value)> = cases(&schema, 0, 30)
            .into_iter()
            .map(|c| (c.class, c.arguments))
            .collect();
        let mut sorted = all;
        sorted.sort_by_key(|(class, value)| (*class, value.to_string()));
        assert_eq!(
            sorted,
            vec![
                (Class::ArgumentsNull, Value::Null),
                (Class::ArgumentsNotObject, json!("a")),
                (Class::ArgumentsNotObject, json!(0)),
                (Class::ArgumentsNotObject, json!([1])),
                (Class::ArgumentsNotObject, json!([])),
                (Class::UnknownField, json!({ UNKNOWN_FIELD: "a" })),
                (Class::ArrayForObject, json!([{}])),
            ]
        );
    }

    #[test]
    fn the_values_are_bounded_and_the_breaks_are_the_ones_named() {
        let all = cases(&sample(), 3, MAX_CASES + 5);
        assert!(all.len() <= MAX_CASES);
        let longest = all
            .iter()
            .map(|c| {
                serde_json::to_string(&c.arguments)
                    .unwrap_or_default()
                    .len()
            })
            .max()
            .unwrap_or(0);
        assert!(longest < 2 * HUGE_STRING_BYTES + 1024, "{longest}");
        let huge = all
            .iter()
            .find(|c| c.class == Class::HugeString && c.field.as_deref() == Some("path"))
            .and_then(|c| {
                c.arguments
                    .get("path")
                    .and_then(Value::as_str)
                    .map(str::len)
            });
        assert_eq!(huge, Some(HUGE_STRING_BYTES));
        let null = all
            .iter()
            .find(|c| c.class == Class::ArgumentsNull)
            .cloned();
        assert_eq!(
            null,
            Some(Case {
                class: Class::ArgumentsNull,
                field: None,
                invalid: true,
                arguments: Value::Null,
            })
        );
        let missing = all
            .iter()
            .find(|c| c.class == Class::MissingRequired && c.field.as_deref() == Some("path"))
            .map(|c| c.arguments.clone());
        assert_eq!(
            missing,
            Some(json!({ "limit": 1, "mode": "fast", "options": {}, "tags": [] }))
        );
        let enum_break = all
            .iter()
            .find(|c| c.class == Class::EnumViolation)
            .map(|c| c.arguments["mode"].clone());
        assert_eq!(enum_break, Some(json!("harness-fuzz-not-in-enum")));
        let unknown = all.iter().find(|c| c.class == Class::UnknownField);
        assert_eq!(unknown.map(|c| c.invalid), Some(true));
    }

    #[test]
    fn deep_values_nest_64_levels() {
        fn depth(value: &Value) -> usize {
            match value {
                Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
                Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
                _ => 0,
            }
        }
        let deep = cases(&sample(), 0, 60)
            .into_iter()
            .find(|c| c.class == Class::DeepNesting && c.field.as_deref() == Some("options"));
        assert_eq!(
            deep.map(|c| depth(&c.arguments["options"])),
            Some(NESTING_DEPTH)
        );
    }
}
