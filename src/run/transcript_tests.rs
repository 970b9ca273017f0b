use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::agent::AssistantMessage;
use crate::agent::ToolResultMessage;
use crate::agent::Usage;
use crate::agent::faux::ServedCall;
use crate::agent::faux::Turn;
use crate::tools::ToolCall;
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

fn result(id: &str, tool: &str, content: Vec<Content>, details: Option<Value>) -> AgentEvent {
    AgentEvent::ToolResultMessage {
        message: ToolResultMessage {
            tool_call_id: id.to_owned(),
            tool_name: tool.to_owned(),
            content,
            details,
            is_error: false,
        },
    }
}

fn text(text: &str) -> Clip {
    Clip {
        text: text.to_owned(),
        ..Clip::default()
    }
}

#[test]
fn events_become_turns_with_results_updates_and_linked_retries() {
    let mut recorder = Recorder::new(Bounds::default());
    recorder.see(&AgentEvent::AgentStart);
    recorder.see(&AgentEvent::AssistantMessage {
        turn: 1,
        message: message(
            "looking",
            vec![
                ToolCall::new("c1", "read", json!({"path": "/workspace/a"})),
                ToolCall {
                    id: "c2".into(),
                    name: "bash".into(),
                    arguments: CallArguments::Text("{\"command\": \"ls".into()),
                },
            ],
        ),
    });
    recorder.see(&AgentEvent::ToolExecutionUpdate {
        call_id: "c2".into(),
        tool_name: "bash".into(),
        update: ToolUpdate {
            content: vec![],
            details: None,
        },
    });
    recorder.see(&AgentEvent::ToolExecutionUpdate {
        call_id: "c2".into(),
        tool_name: "bash".into(),
        update: ToolUpdate {
            content: vec![],
            details: None,
        },
    });
    recorder.see(&AgentEvent::ToolResultMessage {
        message: ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "read".into(),
            content: vec![Content::text("no such file")],
            details: None,
            is_error: true,
        },
    });
    recorder.see(&result(
        "c2",
        "bash",
        vec![
            Content::text("a\n"),
            Content::Image {
                data: "aGk=".into(),
                mime_type: "image/png".into(),
            },
        ],
        Some(json!({"exit_code": 0})),
    ));
    recorder.see(&AgentEvent::AssistantMessage {
        turn: 2,
        message: message(
            "",
            vec![ToolCall::new("c1-r1", "read", json!({"path": "b"}))],
        ),
    });
    recorder.see(&AgentEvent::AgentEnd {
        error: Some("the run was cancelled".into()),
    });
    let report = FauxReport {
        turns: vec![Turn {
            usage: Usage::default(),
            scripted: true,
            calls: vec![ServedCall {
                id: "c1-r1".into(),
                step: 0,
                retry: Some(1),
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
        finished: false,
        is_error: false,
        content: vec![],
        details: None,
        details_omitted_bytes: 0,
        streamed: false,
    };
    assert_eq!(
        recorder.finish(&report),
        Transcript {
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
    let mut recorder = Recorder::new(Bounds {
        text: 8,
        image: 4,
        details: 10,
        scenario: 20,
    });
    recorder.see(&AgentEvent::AssistantMessage {
        turn: 1,
        message: message("", vec![ToolCall::new("c", "read", json!({}))]),
    });
    recorder.see(&result(
        "c",
        "read",
        vec![
            Content::text("0123456789abcdef"),
            Content::Image {
                data: "AAAAAAAA".into(),
                mime_type: "image/png".into(),
            },
            Content::text("xyzxyzxyz"),
        ],
        Some(json!({"long": "details that do not fit"})),
    ));
    let transcript = recorder.finish(&FauxReport::default());
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
    let mut recorder = Recorder::new(Bounds {
        text: 8,
        image: 4,
        details: 10,
        scenario: 4,
    });
    recorder.see(&AgentEvent::AssistantMessage {
        turn: 1,
        message: message("abcdefgh", vec![]),
    });
    let transcript = recorder.finish(&FauxReport::default());
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
