use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::agent::Message;
use crate::agent::RunningCall;
use crate::agent::Streamed;
use crate::agent::ToolResultMessage;
use crate::agent::Usage;
use crate::agent::faux::ServedCall;
use crate::agent::faux::Turn;
use crate::tools::CallArguments;
use crate::tools::ToolCall;
use crate::tools::ToolResult;
use crate::tools::ToolUpdate;

fn message(text: &str, calls: Vec<ToolCall>) -> AssistantMessage {
    let mut content = vec![AssistantBlock::Text {
        text: text.to_owned(),
    }];
    content.extend(calls.into_iter().map(AssistantBlock::ToolCall));
    AssistantMessage {
        content,
        stop_reason: StopReason::ToolUse,
        usage: Usage::default(),
        error_message: None,
    }
}

/// The loop's record of a run, built as the loop builds it: a message a
/// turn, then the results of its calls.
#[derive(Default)]
struct Run(agent::Transcript);

impl Run {
    /// The model's next message.
    fn says(&mut self, message: AssistantMessage) -> &mut Self {
        self.0.messages.push(Message::Assistant(message));
        self
    }

    /// The latest message's call `id` and where it sits.
    fn sent(&self, id: &str) -> (usize, usize, ToolCall) {
        let turn = self.0.assistant_messages().count();
        let message = self.0.assistant_messages().last().unwrap();
        let (index, call) = message
            .tool_calls()
            .enumerate()
            .find(|(_, c)| c.id == id)
            .unwrap();
        (turn, index, call.clone())
    }

    /// The result of the latest message's call `id`, after it streamed
    /// `updates`.
    fn answers(&mut self, id: &str, result: ToolResult, updates: &[&str]) -> &mut Self {
        let (turn, index, call) = self.sent(id);
        self.0
            .messages
            .push(Message::ToolResult(ToolResultMessage::new(&call, &result)));
        self.0.calls.push(CallRecord {
            turn,
            index,
            call,
            result,
            duration: std::time::Duration::ZERO,
            updates: streamed(updates),
            completion: 0,
            cancelled: false,
            args_tokens: 0,
            result_tokens: 0,
        });
        self
    }

    /// The latest message's call `id` still running, after it streamed
    /// `updates`.
    fn running(&mut self, id: &str, updates: &[&str]) -> &mut Self {
        let (turn, index, call) = self.sent(id);
        self.0.running.push(RunningCall {
            turn,
            index,
            call,
            updates: streamed(updates),
        });
        self
    }

    fn kept(&self, report: &FauxReport, bounds: Bounds) -> KeptTranscript {
        let mut run = self.0.clone();
        run.model = report.clone();
        KeptTranscript::of(&run, bounds)
    }
}

fn streamed(texts: &[&str]) -> Streamed {
    let update = |text: &str| ToolUpdate {
        content: if text.is_empty() {
            vec![]
        } else {
            vec![Content::text(text)]
        },
        details: None,
    };
    Streamed {
        count: texts.len(),
        first: texts.first().map(|t| update(t)),
        last: (texts.len() > 1).then(|| update(texts[texts.len() - 1])),
        ..Streamed::default()
    }
}

fn result(content: Vec<Content>, details: Option<Value>) -> ToolResult {
    ToolResult {
        is_error: false,
        content,
        details,
        internal_error: None,
        facts: None,
        call_id: None,
    }
}

fn text(text: &str) -> Clip {
    Clip {
        text: text.to_owned(),
        ..Clip::default()
    }
}

#[test]
fn a_run_becomes_turns_with_results_updates_and_linked_retries() {
    let mut run = Run::default();
    run.says(message(
        "looking",
        vec![
            ToolCall::new("c1", "read", json!({"path": "/workspace/a"})),
            ToolCall {
                id: "c2".into(),
                name: "bash".into(),
                arguments: CallArguments::Text("{\"command\": \"ls".into()),
            },
        ],
    ))
    .answers("c1", ToolResult::error("no such file", None), &[])
    .answers(
        "c2",
        result(
            vec![
                Content::text("a\n"),
                Content::Image {
                    data: "aGk=".into(),
                    mime_type: "image/png".into(),
                },
            ],
            Some(json!({"exit_code": 0})),
        ),
        // The first and the last of three are kept.
        &["", "a", "a\n"],
    )
    .says(message(
        "",
        vec![ToolCall::new("c1-r1", "read", json!({"path": "b"}))],
    ));
    run.0.error = Some("the run was cancelled".into());
    let report = FauxReport {
        turns: vec![Turn {
            usage: Usage::default(),
            scripted: true,
            calls: vec![ServedCall {
                id: "c1-r1".into(),
                step: 0,
                retry: Some(0),
                origin: "c1".into(),
            }],
        }],
        ..FauxReport::default()
    };
    let call = |id: &str, tool: &str, args: &str| TranscriptCall {
        id: id.into(),
        tool: tool.into(),
        arguments: text(args),
        retry_of: None,
        answers: None,
        finished: false,
        is_error: false,
        content: vec![],
        details: None,
        details_omitted_bytes: 0,
        streamed: false,
        updates: None,
    };
    assert_eq!(
        run.kept(&report, Bounds::default()),
        KeptTranscript {
            turns: vec![
                TranscriptTurn {
                    turn: 1,
                    stop_reason: "tool_use".into(),
                    text: vec![text("looking")],
                    calls: vec![
                        TranscriptCall {
                            finished: true,
                            is_error: true,
                            content: vec![Block::Text {
                                clip: text("no such file")
                            }],
                            ..call("c1", "read", r#"{"path":"/workspace/a"}"#)
                        },
                        TranscriptCall {
                            finished: true,
                            content: vec![
                                Block::Text { clip: text("a\n") },
                                Block::Image {
                                    mime_type: "image/png".into(),
                                    data: Some("aGk=".into()),
                                    bytes: 4
                                }
                            ],
                            details: Some(json!({"exit_code": 0})),
                            streamed: true,
                            // The first and the last of three.
                            updates: Some(Updates {
                                first: text(""),
                                last: Some(text("a\n")),
                            }),
                            ..call("c2", "bash", "{\"command\": \"ls")
                        },
                    ],
                },
                TranscriptTurn {
                    turn: 2,
                    stop_reason: "tool_use".into(),
                    text: vec![text("")],
                    calls: vec![TranscriptCall {
                        retry_of: Some("c1".into()),
                        answers: Some("c1".into()),
                        ..call("c1-r1", "read", r#"{"path":"b"}"#)
                    }],
                },
            ],
            error: Some("the run was cancelled".into()),
            cut: false,
        }
    );
}

#[test]
fn long_texts_keep_their_ends_on_character_boundaries() {
    assert_eq!(clip("short", 5), text("short"));
    // 12 bytes of "é" (2 bytes each), cut to 8: 6 from the start, 2 from
    // the end, nothing split.
    assert_eq!(
        clip("éééééé", 8),
        Clip {
            text: "ééé".into(),
            omitted_bytes: 4,
            tail: "é".into(),
        }
    );
    // A cut inside a character moves the head's end back...
    assert_eq!(
        clip("ééééé", 5),
        Clip {
            text: "é".into(),
            omitted_bytes: 6,
            tail: "é".into(),
        }
    );
    // ...and the tail's start forward.
    assert_eq!(
        clip("aéééb", 7),
        Clip {
            text: "aé".into(),
            omitted_bytes: 2,
            tail: "éb".into(),
        }
    );
}

#[test]
fn bounds_keep_sizes_of_what_does_not_fit_and_mark_the_cut() {
    let bounds = |scenario| Bounds {
        text: 8,
        image: 4,
        details: 10,
        update: 8,
        scenario,
    };
    let mut run = Run::default();
    run.says(message("", vec![ToolCall::new("c", "read", json!({}))]))
        .answers(
            "c",
            result(
                vec![
                    Content::text("0123456789abcdef"),
                    Content::Image {
                        data: "AAAAAAAA".into(),
                        mime_type: "image/png".into(),
                    },
                    Content::text("xyzxyzxyz"),
                ],
                Some(json!({"long": "details that do not fit"})),
            ),
            &[],
        );
    let transcript = run.kept(&FauxReport::default(), bounds(20));
    let call = transcript.calls().next().cloned();
    assert_eq!(
        call.map(|c| (c.content, c.details, c.details_omitted_bytes)),
        Some((
            vec![
                // The text bound: 6 bytes then 2.
                Block::Text {
                    clip: Clip {
                        text: "012345".into(),
                        omitted_bytes: 8,
                        tail: "ef".into(),
                    }
                },
                // Over the image bound: its size only.
                Block::Image {
                    mime_type: "image/png".into(),
                    data: None,
                    bytes: 8,
                },
                // 2 ("{}") + 8 used, 10 left of the scenario's 20.
                Block::Text {
                    clip: Clip {
                        text: "xyzxyz".into(),
                        omitted_bytes: 1,
                        tail: "yz".into(),
                    }
                },
            ],
            None,
            34,
        ))
    );
    assert!(!transcript.cut);
    let mut run = Run::default();
    run.says(message("abcdefgh", vec![]));
    let transcript = run.kept(&FauxReport::default(), bounds(4));
    assert_eq!(
        transcript.turns[0].text,
        vec![Clip {
            text: "abc".into(),
            omitted_bytes: 4,
            tail: "h".into(),
        }]
    );
    assert!(transcript.cut);
}

fn served(id: &str, step: usize, retry: Option<usize>, origin: &str) -> ServedCall {
    ServedCall {
        id: id.into(),
        step,
        retry,
        origin: origin.into(),
    }
}

#[test]
fn each_retry_answers_the_attempt_before_it() {
    // Step 0 is a batch of two calls; "a" fails twice, "b" once.
    let ids = [vec!["a", "b"], vec!["a-1"], vec!["b-1"], vec!["a-2"]];
    let mut run = Run::default();
    for calls in &ids {
        run.says(message(
            "",
            calls
                .iter()
                .map(|id| ToolCall::new(*id, "read", json!({})))
                .collect(),
        ));
    }
    let turn = |calls: Vec<ServedCall>| Turn {
        usage: Usage::default(),
        scripted: true,
        calls,
    };
    let report = FauxReport {
        turns: vec![
            turn(vec![served("a", 0, None, "a"), served("b", 0, None, "b")]),
            turn(vec![served("a-1", 0, Some(0), "a")]),
            turn(vec![served("b-1", 0, Some(0), "b")]),
            turn(vec![served("a-2", 0, Some(1), "a")]),
        ],
        ..FauxReport::default()
    };
    let links: Vec<(String, Option<String>, Option<String>)> = run
        .kept(&report, Bounds::default())
        .calls()
        .map(|c| (c.id.clone(), c.retry_of.clone(), c.answers.clone()))
        .collect();
    let link = |id: &str, of: Option<&str>, answers: Option<&str>| {
        (
            id.to_owned(),
            of.map(str::to_owned),
            answers.map(str::to_owned),
        )
    };
    assert_eq!(
        links,
        vec![
            link("a", None, None),
            link("b", None, None),
            link("a-1", Some("a"), Some("a")),
            link("b-1", Some("b"), Some("b")),
            link("a-2", Some("a"), Some("a-1")),
        ]
    );
}

#[test]
fn updates_keep_their_first_and_last_texts_spent_in_call_order() {
    let mut run = Run::default();
    run.says(message(
        "",
        vec![
            ToolCall::new("p", "bash", json!({})),
            ToolCall::new("q", "bash", json!({})),
            ToolCall::new("r", "bash", json!({})),
        ],
    ));
    // "q" streamed first, but "p"'s result comes first: the budget is spent
    // in call order, whatever order the updates arrived in. "r" sent one.
    run.answers("p", result(vec![], None), &["p-first-long", "p2"])
        .answers("q", result(vec![], None), &["q1", "q2", "q3"])
        .answers("r", result(vec![], None), &["r1"]);
    // The arguments ("{}" three times) take 6 of the 16 bytes; "p" keeps
    // its first text within the update bound (3 bytes, then 3 from the
    // end) and its last, "q" its first; then nothing is left.
    let bounds = Bounds {
        text: 64,
        image: 64,
        details: 64,
        update: 6,
        scenario: 16,
    };
    let transcript = run.kept(&FauxReport::default(), bounds);
    let gone = |bytes: u64| Clip {
        omitted_bytes: bytes,
        ..Clip::default()
    };
    let updates: Vec<Option<Updates>> = transcript.calls().map(|c| c.updates.clone()).collect();
    assert_eq!(
        updates,
        vec![
            Some(Updates {
                first: Clip {
                    text: "p-f".into(),
                    omitted_bytes: 6,
                    tail: "ong".into(),
                },
                last: Some(text("p2")),
            }),
            Some(Updates {
                first: text("q1"),
                last: Some(gone(2)),
            }),
            Some(Updates {
                first: gone(2),
                last: None,
            }),
        ]
    );
    assert!(transcript.cut);
}

#[test]
fn a_transcript_within_fewer_bytes_keeps_its_ends_and_sizes() {
    let mut run = Run::default();
    run.says(message(
        "thinking aloud",
        vec![ToolCall::new("c", "bash", json!({}))],
    ))
    .answers(
        "c",
        result(
            vec![
                Content::text("0123456789"),
                Content::Image {
                    data: "AAAA".into(),
                    mime_type: "image/png".into(),
                },
            ],
            Some(json!({"n": 1})),
        ),
        &["partial"],
    );
    let whole = run.kept(&FauxReport::default(), Bounds::default());
    // 14 + 2 + 10 + 4 + 7 ("{"n":1}") + 7.
    assert_eq!(whole.kept_bytes(), 44);
    assert_eq!(whole.within(44), whole);
    assert_eq!(whole.within(1000), whole);
    // 20 bytes: the text (14) and the arguments (2), then 4 of the result
    // (3 from its start, 1 from its end); the image, details and update
    // keep their sizes only.
    let small = whole.within(20);
    assert_eq!(small.kept_bytes(), 20);
    assert!(small.cut);
    assert_eq!(small.turns[0].text, vec![text("thinking aloud")]);
    let call = &small.turns[0].calls[0];
    assert_eq!(
        (
            call.content.clone(),
            call.details.clone(),
            call.details_omitted_bytes,
            call.updates.clone()
        ),
        (
            vec![
                Block::Text {
                    clip: Clip {
                        text: "012".into(),
                        omitted_bytes: 6,
                        tail: "9".into(),
                    }
                },
                Block::Image {
                    mime_type: "image/png".into(),
                    data: None,
                    bytes: 4,
                },
            ],
            None,
            7,
            Some(Updates {
                first: Clip {
                    omitted_bytes: 7,
                    ..Clip::default()
                },
                last: None,
            }),
        )
    );
    // A kept clip cut again: its two ends shrink, the bytes left out add up.
    let kept = Clip {
        text: "abcdefgh".into(),
        omitted_bytes: 100,
        tail: "wxyz".into(),
    };
    assert_eq!(
        reclip(&kept, 8),
        Clip {
            text: "abcdef".into(),
            omitted_bytes: 104,
            tail: "yz".into(),
        }
    );
    assert_eq!(
        reclip(
            &Clip {
                text: "ab".into(),
                omitted_bytes: 5,
                tail: "uvwxyz".into(),
            },
            4
        ),
        Clip {
            text: "ab".into(),
            omitted_bytes: 9,
            tail: "yz".into(),
        }
    );
}

#[test]
fn a_run_stopped_in_a_batch_keeps_its_calls_unfinished_and_whether_they_streamed() {
    let mut run = Run::default();
    run.says(message("", vec![ToolCall::new("a", "read", json!({}))]))
        .answers("a", result(vec![Content::text("alpha")], None), &[])
        .says(message(
            "",
            vec![
                ToolCall::new("b", "read", json!({})),
                ToolCall::new("c", "bash", json!({})),
            ],
        ))
        .running("b", &[])
        .running("c", &["", "started"]);
    let kept = run.kept(&FauxReport::default(), Bounds::default());
    let calls: Vec<(&str, bool, bool, usize, bool)> = kept
        .calls()
        .map(|c| {
            let updates = c.updates.is_some();
            (
                c.id.as_str(),
                c.finished,
                c.streamed,
                c.content.len(),
                updates,
            )
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            ("a", true, false, 1, false),
            ("b", false, false, 0, false),
            ("c", false, true, 0, false),
        ]
    );
    assert_eq!(kept.turns.len(), 2);
    assert_eq!(kept.error, None);
}
