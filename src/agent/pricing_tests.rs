use std::sync::Arc;

use pretty_assertions::assert_eq;
use proptest::prelude::*;

use super::*;
use crate::agent::tokens::tokenizer_by_name;

/// The usage as counted from the whole texts: the prompt, its common
/// prefix with the previous one, and the rest.
fn whole_text_usage(
    tokens: &dyn TokenCounter,
    previous: Option<&str>,
    prompt: &str,
    output: u64,
) -> Usage {
    let total = tokens.count(prompt);
    match previous {
        None => Usage {
            input: total,
            output,
            cache_read: 0,
            cache_write: total,
        },
        Some(previous) => {
            let common = common_prefix(previous, prompt);
            let cache_read = tokens.count(&prompt[..common]);
            Usage {
                input: total.saturating_sub(cache_read),
                output,
                cache_read,
                cache_write: tokens.count(&prompt[common..]),
            }
        }
    }
}

/// A counter that promises no measure: the pricer counts whole texts.
#[derive(Debug)]
struct Bytes;

impl TokenCounter for Bytes {
    fn name(&self) -> &str {
        "bytes"
    }

    fn count(&self, text: &str) -> u64 {
        text.len() as u64
    }
}

/// The usages of a conversation: each request's parts are the system
/// part, the messages so far, then the tool section.
fn usages(
    tokens: &dyn TokenCounter,
    system: &str,
    turns: &[Vec<String>],
    tools: &str,
) -> Vec<Usage> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut pricer = PromptPricer::default();
    let mut messages: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (i, turn) in turns.iter().enumerate() {
        messages.extend(turn.iter().cloned());
        let mut parts = vec![format!("system:{system}")];
        parts.extend(messages.iter().cloned());
        if !tools.is_empty() {
            parts.push(format!("tools:{tools}"));
        }
        out.push(runtime.block_on(pricer.usage(tokens, &parts, i as u64)));
    }
    out
}

fn reference(
    tokens: &dyn TokenCounter,
    system: &str,
    turns: &[Vec<String>],
    tools: &str,
) -> Vec<Usage> {
    let mut messages: Vec<String> = Vec::new();
    let mut previous: Option<String> = None;
    let mut out = Vec::new();
    for (i, turn) in turns.iter().enumerate() {
        messages.extend(turn.iter().cloned());
        let mut parts = vec![format!("system:{system}")];
        parts.extend(messages.iter().cloned());
        if !tools.is_empty() {
            parts.push(format!("tools:{tools}"));
        }
        let prompt = parts.join(PART_SEPARATOR);
        out.push(whole_text_usage(
            tokens,
            previous.as_deref(),
            &prompt,
            i as u64,
        ));
        previous = Some(prompt);
    }
    out
}

fn counters() -> Vec<Arc<dyn TokenCounter>> {
    ["o200k", "cl100k", "chars4"]
        .iter()
        .map(|name| tokenizer_by_name(name).unwrap())
        .chain([Arc::new(Bytes) as Arc<dyn TokenCounter>])
        .collect()
}

/// Text made of what moves BPE boundaries: spaces and newlines in runs,
/// `\r`, `/`, punctuation, digits, apostrophes, case changes, non-ASCII.
fn tricky_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just(" "),
            Just("  "),
            Just("\n"),
            Just("\n\n"),
            Just("\r\n"),
            Just("\t"),
            Just("/"),
            Just("//"),
            Just(":"),
            Just("{\""),
            Just("\"}"),
            Just("'s"),
            Just("'LL"),
            Just("123"),
            Just("4567"),
            Just("fn"),
            Just("Main"),
            Just("HTTPServer"),
            Just("é"),
            Just("日本"),
            Just("🙂"),
            Just("\u{301}"),
            Just("tool"),
            Just("Result"),
        ],
        0..24,
    )
    .prop_map(|pieces| pieces.concat())
}

/// A message part: a role prefix and tricky text.
fn message() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            Just("user:"),
            Just("assistant:"),
            Just("toolResult:read\n"),
            Just("toolResult:grep"),
            Just("tools:"),
        ],
        tricky_text(),
    )
        .prop_map(|(role, text)| format!("{role}{text}"))
}

proptest! {
    /// Priced part by part, every figure equals the whole-text count, for
    /// every counter, whatever the texts at the part boundaries.
    #[test]
    fn parts_price_as_the_whole_prompt(
        system in tricky_text(),
        turns in proptest::collection::vec(proptest::collection::vec(message(), 1..3), 1..5),
        tools in tricky_text(),
    ) {
        for tokens in counters() {
            prop_assert_eq!(
                usages(tokens.as_ref(), &system, &turns, &tools),
                reference(tokens.as_ref(), &system, &turns, &tools),
                "counter {}", tokens.name()
            );
        }
    }
}

#[test]
fn a_conversation_is_priced_as_counted_whole() {
    let turns = vec![
        vec!["user:Fix the bug in src/a.rs".to_owned()],
        vec![
            "assistant:read:{\"path\":\"src/a.rs\"}".to_owned(),
            "toolResult:read\nfn main() {\n    let x = 1;\n}\n".to_owned(),
        ],
        vec![
            "assistant:edit:{\"path\":\"src/a.rs\"}".to_owned(),
            "toolResult:edit\nSuccessfully replaced 1 block(s) in src/a.rs.".to_owned(),
        ],
    ];
    let tools = "[{\"name\":\"read\",\"description\":\"Read a file\"}]";
    let o200k = tokenizer_by_name("o200k").unwrap();
    let priced = usages(o200k.as_ref(), "You are a coding agent.", &turns, tools);
    assert_eq!(
        priced,
        reference(o200k.as_ref(), "You are a coding agent.", &turns, tools)
    );
    // Later requests read the earlier ones from the cache.
    assert_eq!(priced[0].cache_read, 0);
    assert!(priced[2].cache_read > priced[1].cache_read);
}

#[test]
fn common_prefixes_end_on_character_boundaries() {
    assert_eq!(common_prefix("", "abc"), 0);
    assert_eq!(common_prefix("abc", "abd"), 2);
    assert_eq!(common_prefix("abc", "abc"), 3);
    // "é" is C3 A9 and "ê" is C3 AA: the first byte agrees, the character does not.
    assert_eq!(common_prefix("aé", "aê"), 1);
    assert_eq!(common_prefix("🙂x", "🙂y"), 4);
}

#[test]
fn a_result_is_priced_as_its_texts_and_image_placeholders() {
    let content = vec![
        Content::text("Read image file [image/png]"),
        Content::Image {
            data: "AAAA".into(),
            mime_type: "image/png".into(),
        },
    ];
    assert_eq!(
        priced_text(&content),
        "Read image file [image/png]\n[image:image/png:4]"
    );
    assert_eq!(priced_text(&[]), "");
}

#[test]
fn a_call_is_priced_as_its_tool_and_arguments_as_sent() {
    let json = ToolCall::new(
        "c1",
        "read",
        serde_json::json!({"path": "a.txt", "limit": 2}),
    );
    assert_eq!(priced_call(&json), r#"read:{"path":"a.txt","limit":2}"#);
    let raw = ToolCall {
        id: "c2".into(),
        name: "bash".into(),
        arguments: crate::tools::CallArguments::Text("{\"command\": \"ls".into()),
    };
    assert_eq!(priced_call(&raw), "bash:{\"command\": \"ls");
}
