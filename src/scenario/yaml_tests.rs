use std::path::Path;
use std::time::Instant;

use pretty_assertions::assert_eq;
use serde::Deserialize;
use serde_json::Value;
use serde_json::json;

use super::*;

/// Each document as JSON, read by the tree.
fn tree_json(text: &str) -> Vec<Value> {
    let stream = parse(text);
    assert_eq!(stream.fatal, None, "{text}");
    stream.documents.iter().map(|d| d.root.to_json()).collect()
}

/// Each document as JSON, read by serde_yaml 0.9 (what the loader used
/// before the tree).
fn serde_yaml_json(text: &str) -> Vec<Value> {
    serde_yaml::Deserializer::from_str(text)
        .map(|doc| Value::deserialize(doc).unwrap())
        .collect()
}

#[test]
fn scalars_read_as_serde_yaml_read_them() {
    let text = "plain: [yes, no, on, off, y, n, Yes, NO]\n\
                bools: [true, True, TRUE, false, False, FALSE]\n\
                nulls: [~, null, Null, NULL, \"null\"]\n\
                empty:\n\
                ints: [0, 7, -7, +7, 0x1F, 0o17, 0b101, 0123, -0123, 18446744073709551615]\n\
                floats: [1.5, -2.5e3, .5, 1e300, .inf, -.inf, 1e400, inf, nan]\n\
                strings: ['5', \"true\", 1.2.3, 0x, 12:30, a-b]\n\
                block: |\n  a\n  b\n\
                folded: >\n  a\n  b\n\
                tagged: [!!str 5, !!float 2]\n";
    let tree = tree_json(text);
    assert_eq!(tree, serde_yaml_json(text));
    assert_eq!(
        tree[0]["plain"],
        json!(["yes", "no", "on", "off", "y", "n", "Yes", "NO"])
    );
    assert_eq!(
        tree[0]["ints"],
        json!([
            0,
            7,
            -7,
            7,
            31,
            15,
            5,
            "0123",
            "-0123",
            18446744073709551615u64
        ])
    );
}

#[test]
fn documents_anchors_and_merge_keys_read_as_before() {
    let text = "a: &x { k: [1, 2] }\nb: *x\nc:\n  <<: *x\n  j: 3\n---\n---\n- &s text\n- *s\n...\n";
    let tree = tree_json(text);
    assert_eq!(tree, serde_yaml_json(text));
    assert_eq!(
        tree,
        vec![
            json!({"a": {"k": [1, 2]}, "b": {"k": [1, 2]}, "c": {"<<": {"k": [1, 2]}, "j": 3}}),
            Value::Null,
            json!(["text", "text"]),
        ]
    );
}

#[test]
fn every_shipped_and_test_scenario_reads_as_serde_yaml_read_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["scenarios", "tests/fixtures"] {
        collect_yaml(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "{}", files.len());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let stream = parse(&text);
        if stream.fatal.is_some() {
            // A deliberately broken fixture: serde_yaml refuses it too.
            assert!(
                serde_yaml::Deserializer::from_str(&text)
                    .any(|doc| Value::deserialize(doc).is_err()),
                "{}",
                file.display()
            );
            continue;
        }
        if stream.documents.iter().any(|d| !d.problems.is_empty()) {
            // A key written twice: serde_yaml kept the last, the tree refuses it.
            continue;
        }
        // Empty documents (an empty file is one for serde_yaml) hold nothing.
        let tree: Vec<Value> = stream
            .documents
            .iter()
            .map(|d| d.root.to_json())
            .filter(|v| !v.is_null())
            .collect();
        let without_bom = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let before: Vec<Value> = serde_yaml_json(without_bom)
            .into_iter()
            .filter(|v| !v.is_null())
            .collect();
        assert_eq!(tree, before, "{}", file.display());
    }
}

fn collect_yaml(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_yaml(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

#[test]
fn nodes_keep_their_positions() {
    let stream = parse("\u{feff}name: x\nmodel:\n  - call: read\n    args: { path: \"a\" }\n");
    let root = &stream.documents[0].root;
    let path = [
        Seg::Key("model".into()),
        Seg::Index(0),
        Seg::Key("args".into()),
        Seg::Key("path".into()),
    ];
    assert_eq!(
        root.locate(&path, false),
        Pos {
            line: 4,
            column: 19
        }
    );
    assert_eq!(
        root.locate(&path, true),
        Pos {
            line: 4,
            column: 13
        }
    );
    assert_eq!(
        root.locate(&[Seg::Key("name".into())], false),
        Pos { line: 1, column: 7 }
    );
    // A path that is not in the tree: its deepest ancestor that is.
    let missing = [
        Seg::Key("model".into()),
        Seg::Index(0),
        Seg::Key("expect".into()),
    ];
    assert_eq!(root.locate(&missing, false), Pos { line: 3, column: 5 });
    assert_eq!(PathText(&path).to_string(), "model[0].args.path");
}

#[test]
fn a_key_written_twice_is_a_problem_at_the_second_and_the_first_stays() {
    let stream = parse("a: 1\nb:\n  c: 2\n  d: 3\n  c: 4\n");
    let doc = &stream.documents[0];
    assert_eq!(
        doc.problems,
        vec![TreeProblem {
            pos: Pos { line: 5, column: 3 },
            path: "b".into(),
            message: "the key `c` is written twice in this mapping (first at line 3, column 3); \
                      keep one"
                .into(),
        }]
    );
    assert_eq!(doc.root.to_json(), json!({"a": 1, "b": {"c": 2, "d": 3}}));
}

#[test]
fn deep_nesting_is_refused_early() {
    for text in [
        format!("a: {}{}", "[".repeat(100_000), "]".repeat(100_000)),
        (0..1000)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .collect::<String>(),
    ] {
        let started = Instant::now();
        let stream = parse(&text);
        let fatal = stream.fatal.unwrap();
        assert!(
            fatal
                .message
                .starts_with("the YAML nests deeper than 128 levels"),
            "{fatal:?}"
        );
        assert!(fatal.pos.line <= 130, "{fatal:?}");
        // Not a speed assertion: the text is read only up to the limit.
        let _ = started;
    }
    let ok = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert_eq!(parse(&ok).fatal, None);
}

#[test]
fn aliases_that_expand_too_far_are_refused() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    let fatal = parse(&text).fatal.unwrap();
    assert_eq!(fatal.pos.line, 5, "{fatal:?}");
    assert!(
        fatal
            .message
            .starts_with("aliases expand to more than 100000 nodes")
    );
}

#[test]
fn core_tags_set_the_type() {
    assert_eq!(
        tree_json("[!!str 5, !!int \"5\", !!float 2, !!bool \"true\", !!null \"\"]"),
        vec![json!(["5", 5, 2.0, true, null])]
    );
}

#[test]
fn tags_outside_the_core_schema_are_refused() {
    let fatal = parse("a: 1\nb: !custom x\n").fatal.unwrap();
    assert_eq!(
        (fatal.pos, fatal.path.as_str()),
        (Pos { line: 2, column: 4 }, "b")
    );
    assert!(
        fatal
            .message
            .starts_with("the YAML tag `!custom` is not supported")
    );
}

#[test]
fn a_syntax_error_keeps_the_documents_before_it() {
    let stream = parse("a: 1\n---\nb: [2\n");
    assert_eq!(stream.documents.len(), 1);
    let fatal = stream.fatal.unwrap();
    assert!(
        fatal.message.starts_with("YAML syntax error: "),
        "{fatal:?}"
    );
}

#[test]
fn a_tab_is_reported_where_it_is() {
    // Issue 25: the parser notices a tab late (at the scalar it was
    // reading, or at the line after a blank line holding it).
    let cases = [
        (
            "indenting a key",
            "name: a\nmodel:\n  - call: read\n    args:\n\t path: a\n",
        ),
        (
            "before a key of the step",
            "model:\n  - call: read\n\targs: {path: a}\n",
        ),
        ("a whole line of indentation", "model:\n\t- say: hi\n"),
        (
            "a blank line in a block scalar",
            "workspace:\n  files:\n    a.txt: |\n      hello\n\t\n      world\nmodel: []\n",
        ),
        ("the first line", "\tname: a\nmodel: []\n"),
        ("after a colon", "name:\ta\nmodel: []\n"),
    ];
    let mut out = Vec::new();
    for (name, text) in cases {
        let stream = parse(text);
        let fatal = stream.fatal.expect(name);
        let tab = text
            .lines()
            .enumerate()
            .find_map(|(i, l)| l.find('\t').map(|c| (i + 1, c + 1)))
            .unwrap();
        assert_eq!((fatal.pos.line, fatal.pos.column), tab, "{name}");
        out.push(format!(
            "{name} ({} documents before): {}:{}: {}",
            stream.documents.len(),
            fatal.pos.line,
            fatal.pos.column,
            fatal.message
        ));
    }
    insta::assert_snapshot!("tabs", out.join("\n"));
}

#[test]
fn a_tab_far_from_the_error_is_not_blamed() {
    // A tab inside a block scalar's text is text; the unclosed bracket
    // four lines below it is the problem.
    let text = "workspace:\n  files:\n    a.txt: |\n      \tindented\n      x\n      y\nmodel: [\n";
    let fatal = parse(text).fatal.unwrap();
    assert_eq!(
        (fatal.pos.line, fatal.message.contains("a tab")),
        (8, false),
        "{fatal:?}"
    );
}
