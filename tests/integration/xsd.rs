//! A small XML Schema validator for the subset of XSD that
//! tests/fixtures/reports/junit.xsd uses: global elements, each either
//! `type="xs:string"` (text only), a complex type with a `sequence` of
//! `ref` particles (with `minOccurs` / `maxOccurs`) and attributes, a
//! complex type with attributes only (empty), or `simpleContent` extending
//! `xs:string` with attributes. Attribute types: `xs:string`,
//! `xs:decimal`, `xs:nonNegativeInteger`. Anything else in the schema is
//! refused, so the validator never passes a document by not understanding
//! its schema.

use std::collections::BTreeMap;

const XS: &str = "http://www.w3.org/2001/XMLSchema";

#[derive(Debug)]
struct Attribute {
    name: String,
    kind: String,
    required: bool,
}

#[derive(Debug)]
enum Content {
    Text,
    Empty,
    Sequence(Vec<(String, usize, Option<usize>)>),
}

#[derive(Debug)]
struct Element {
    attributes: Vec<Attribute>,
    content: Content,
}

pub(crate) struct Schema {
    elements: BTreeMap<String, Element>,
}

fn xs<'a>(node: roxmltree::Node<'a, 'a>, name: &str) -> bool {
    node.is_element() && node.tag_name().name() == name && node.tag_name().namespace() == Some(XS)
}

fn children<'a>(node: roxmltree::Node<'a, 'a>) -> impl Iterator<Item = roxmltree::Node<'a, 'a>> {
    node.children().filter(roxmltree::Node::is_element)
}

fn attributes(node: roxmltree::Node<'_, '_>) -> Vec<Attribute> {
    children(node)
        .filter(|n| xs(*n, "attribute"))
        .map(|a| Attribute {
            name: a.attribute("name").unwrap().to_owned(),
            kind: a.attribute("type").unwrap_or("xs:string").to_owned(),
            required: a.attribute("use") == Some("required"),
        })
        .collect()
}

impl Schema {
    pub(crate) fn parse(text: &str) -> Self {
        let doc = roxmltree::Document::parse(text).unwrap();
        let root = doc.root_element();
        assert!(xs(root, "schema"));
        let mut elements = BTreeMap::new();
        for decl in children(root) {
            assert!(
                xs(decl, "element"),
                "unsupported top-level {:?}",
                decl.tag_name()
            );
            let name = decl.attribute("name").unwrap().to_owned();
            let element = if let Some(kind) = decl.attribute("type") {
                assert_eq!(kind, "xs:string", "{name}");
                Element {
                    attributes: Vec::new(),
                    content: Content::Text,
                }
            } else {
                let complex = children(decl).next().unwrap();
                assert!(xs(complex, "complexType"), "{name}");
                let first = children(complex).next();
                match first {
                    Some(n) if xs(n, "sequence") => Element {
                        attributes: attributes(complex),
                        content: Content::Sequence(
                            children(n)
                                .map(|p| {
                                    assert!(xs(p, "element"), "{name}");
                                    let min = p.attribute("minOccurs").unwrap_or("1");
                                    let max = p.attribute("maxOccurs").unwrap_or("1");
                                    (
                                        p.attribute("ref").unwrap().to_owned(),
                                        min.parse().unwrap(),
                                        (max != "unbounded").then(|| max.parse().unwrap()),
                                    )
                                })
                                .collect(),
                        ),
                    },
                    Some(n) if xs(n, "simpleContent") => {
                        let ext = children(n).next().unwrap();
                        assert!(xs(ext, "extension"), "{name}");
                        assert_eq!(ext.attribute("base"), Some("xs:string"), "{name}");
                        Element {
                            attributes: attributes(ext),
                            content: Content::Text,
                        }
                    }
                    Some(n) if xs(n, "attribute") => Element {
                        attributes: attributes(complex),
                        content: Content::Empty,
                    },
                    other => panic!("unsupported content of {name}: {other:?}"),
                }
            };
            elements.insert(name, element);
        }
        Self { elements }
    }

    /// Every problem of `xml` against the schema (empty when valid).
    pub(crate) fn validate(&self, xml: &str) -> Vec<String> {
        let doc = match roxmltree::Document::parse(xml) {
            Ok(doc) => doc,
            Err(err) => return vec![format!("not well-formed: {err}")],
        };
        let mut problems = Vec::new();
        self.check(doc.root_element(), "/", &mut problems);
        problems
    }

    fn check(&self, node: roxmltree::Node<'_, '_>, parent: &str, problems: &mut Vec<String>) {
        let name = node.tag_name().name();
        let path = format!("{parent}{name}");
        let Some(decl) = self.elements.get(name) else {
            problems.push(format!("{path}: undeclared element"));
            return;
        };
        for attr in node.attributes() {
            match decl.attributes.iter().find(|a| a.name == attr.name()) {
                None => problems.push(format!("{path}: undeclared attribute `{}`", attr.name())),
                Some(a) => {
                    let v = attr.value();
                    let ok = match a.kind.as_str() {
                        "xs:string" => true,
                        "xs:nonNegativeInteger" => {
                            !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())
                        }
                        "xs:decimal" => {
                            let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
                            let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
                            (!whole.is_empty() || !frac.is_empty())
                                && whole.bytes().all(|b| b.is_ascii_digit())
                                && frac.bytes().all(|b| b.is_ascii_digit())
                        }
                        other => panic!("unsupported attribute type {other}"),
                    };
                    if !ok {
                        problems.push(format!("{path}@{}: `{v}` is not {}", a.name, a.kind));
                    }
                }
            }
        }
        for a in decl.attributes.iter().filter(|a| a.required) {
            if node.attribute(a.name.as_str()).is_none() {
                problems.push(format!("{path}: missing required attribute `{}`", a.name));
            }
        }
        let elements: Vec<_> = children(node).collect();
        let text: String = node
            .children()
            .filter(roxmltree::Node::is_text)
            .filter_map(|n| n.text())
            .collect();
        match &decl.content {
            Content::Text => {
                if !elements.is_empty() {
                    problems.push(format!("{path}: elements inside a text-only element"));
                }
            }
            Content::Empty => {
                if !elements.is_empty() || !text.trim().is_empty() {
                    problems.push(format!("{path}: content inside an empty element"));
                }
            }
            Content::Sequence(particles) => {
                if !text.trim().is_empty() {
                    problems.push(format!("{path}: text inside an element-only element"));
                }
                let mut i = 0;
                for (child, min, max) in particles {
                    let mut n = 0;
                    while i < elements.len()
                        && elements[i].tag_name().name() == child
                        && max.is_none_or(|m| n < m)
                    {
                        self.check(elements[i], &format!("{path}/"), problems);
                        i += 1;
                        n += 1;
                    }
                    if n < *min {
                        problems.push(format!("{path}: needs at least {min} <{child}>, has {n}"));
                    }
                }
                for extra in &elements[i..] {
                    problems.push(format!(
                        "{path}: <{}> not allowed here",
                        extra.tag_name().name()
                    ));
                }
            }
        }
    }
}
