use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde::Deserialize;
use serde_json::json;

use super::*;
use crate::tools::Tool;
use crate::tools::ToolOutput;
use crate::tools::ops::LocalProcess;
use crate::tools::ops::MemoryFs;
use crate::tools::testutil::Harness;

fn workspace() -> Workspace {
    let fs = MemoryFs::new();
    fs.add_file("/ws/a.txt", "a\n");
    Workspace::new(Arc::new(fs), Arc::new(LocalProcess::default()), "/ws", true).unwrap()
}

struct Panicky;

#[derive(Deserialize)]
struct NoArgs {}

impl Tool for Panicky {
    type Args = NoArgs;

    fn spec(&self, _limits: &Limits) -> ToolSpec {
        ToolSpec {
            name: "panicky".into(),
            label: "Panicky".into(),
            description: "always panics".into(),
            prompt_snippet: "panic".into(),
            prompt_guidelines: vec![],
            parameters: json!({"type": "object", "properties": {}}),
            execution_mode: ExecutionMode::Parallel,
        }
    }

    async fn execute(&self, _args: NoArgs, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        panic!("boom")
    }
}

async fn dispatch(registry: &Registry, name: &str, args: serde_json::Value) -> ToolResult {
    registry
        .dispatch(
            &ToolCall::new("c", name, args),
            CancellationToken::new(),
            UpdateSink::discard(),
        )
        .await
}

#[test]
fn presets_allow_and_deny() {
    let names = |b: RegistryBuilder| {
        let registry = b.build().unwrap();
        registry
            .active_names()
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(Registry::builder(workspace())),
        ALL_TOOL_NAMES.to_vec()
    );
    assert_eq!(
        names(Registry::builder(workspace()).preset(Preset::Coding)),
        vec!["read", "bash", "edit", "write"]
    );
    assert_eq!(
        names(Registry::builder(workspace()).preset(Preset::Readonly)),
        vec!["read", "grep", "find", "ls"]
    );
    assert_eq!(
        names(Registry::builder(workspace()).allow(["ls", "read"])),
        vec!["ls", "read"]
    );
    assert_eq!(
        names(
            Registry::builder(workspace())
                .preset(Preset::Coding)
                .deny(["bash"])
        ),
        vec!["read", "edit", "write"]
    );
}

#[test]
fn unknown_names_in_lists_fail_at_build_time() {
    let err = Registry::builder(workspace())
        .allow(["read", "grpe"])
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown tool `grpe` (known tools: read, write, edit, bash, grep, find, ls)"
    );
    assert!(
        Registry::builder(workspace())
            .deny(["nope"])
            .build()
            .is_err()
    );
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_result() {
    let registry = Registry::builder(workspace())
        .tool(Arc::new(Panicky))
        .build()
        .unwrap();
    let r = dispatch(&registry, "panicky", json!({})).await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "Internal error in the tool layer: the tool panicked: boom. This is not caused by your \
         arguments; try the call again or use another tool."
    );
    assert_eq!(r.internal_error.as_deref(), Some("the tool panicked: boom"));
    // The registry still works afterwards.
    assert_eq!(
        dispatch(&registry, "read", json!({"path": "a.txt"}))
            .await
            .text(),
        "a\n"
    );
}

#[tokio::test]
async fn inactive_and_unknown_tools_list_what_is_available() {
    let registry = Registry::builder(workspace())
        .preset(Preset::Readonly)
        .build()
        .unwrap();
    let r = dispatch(&registry, "write", json!({})).await;
    assert_eq!(
        r.text(),
        "Tool \"write\" is not active in this session. Available tools: read, grep, find, ls. Use \
         one of those instead."
    );
    assert_eq!(
        r.details,
        Some(json!({"available_tools": ["read", "grep", "find", "ls"]}))
    );
    let r = dispatch(&registry, "Read", json!({})).await;
    assert!(
        r.text()
            .starts_with("Tool \"Read\" not found. Available tools: read, grep, find, ls.")
    );
}

#[tokio::test]
async fn a_cancelled_call_gets_a_cancelled_result_without_running() {
    let registry = Registry::builder(workspace()).build().unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let r = registry
        .dispatch(
            &ToolCall::new("c", "write", json!({"path": "b.txt", "content": "x"})),
            cancel,
            UpdateSink::discard(),
        )
        .await;
    assert!(r.is_error);
    assert_eq!(r.text(), crate::tools::error::CANCELLED_MESSAGE);
    assert!(
        registry
            .workspace()
            .fs()
            .metadata(std::path::Path::new("/ws/b.txt"))
            .is_err()
    );
}

#[test]
fn the_prompt_section_lists_tools_and_guidelines_once() {
    let registry = Registry::builder(workspace())
        .preset(Preset::Coding)
        .build()
        .unwrap();
    let text = registry.prompt_section();
    assert!(text.starts_with("Available tools:\n- read: "), "{text}");
    assert!(text.contains("\n- bash: "), "{text}");
    // bash without grep/find/ls gets the hint to use bash for searching.
    assert!(
        text.contains("- Use bash for file operations like ls, rg and find.\n"),
        "{text}"
    );
    let all = Registry::builder(workspace())
        .build()
        .unwrap()
        .prompt_section();
    assert!(!all.contains("Use bash for file operations"), "{all}");
}

#[test]
fn every_number_in_a_description_follows_the_limits() {
    let limits = Limits {
        max_lines: 123,
        max_bytes: 4096,
        grep_limit: 7,
        find_limit: 8,
        ls_limit: 9,
        grep_max_line: 77,
        bash_timeout: None,
        max_log_bytes: 3 * 1024 * 1024,
        grep_timeout: Some(11.0),
    };
    let registry = Registry::builder(workspace())
        .limits(limits)
        .build()
        .unwrap();
    let read = registry.spec("read").unwrap();
    assert!(
        read.description.contains("123 lines or 4.0KB"),
        "{}",
        read.description
    );
    let grep = &registry.spec("grep").unwrap().description;
    assert!(grep.contains('7') && grep.contains("77"), "{grep}");
    assert!(registry.spec("find").unwrap().description.contains('8'));
    assert!(registry.spec("ls").unwrap().description.contains('9'));
    for spec in registry.specs() {
        assert!(
            !spec.description.contains("2000"),
            "{}: {}",
            spec.name,
            spec.description
        );
        assert!(
            !spec.description.contains("50KB") && !spec.description.contains("50.0KB"),
            "{}: {}",
            spec.name,
            spec.description
        );
    }
}

#[tokio::test]
async fn every_limit_and_offset_below_its_minimum_is_refused_naming_the_rule() {
    // One rule for every count a model sends: limits and read's offset are
    // at least 1, grep's context at least 0; below that is a validation
    // error, never a silent clamp.
    let h = Harness::memory();
    h.add_file("a.txt", "x\n");
    let cases = [
        ("read", json!({"path": "a.txt", "limit": 0}), "/limit", 1, 0),
        (
            "read",
            json!({"path": "a.txt", "limit": -5}),
            "/limit",
            1,
            -5,
        ),
        (
            "read",
            json!({"path": "a.txt", "offset": 0}),
            "/offset",
            1,
            0,
        ),
        (
            "read",
            json!({"path": "a.txt", "offset": -1}),
            "/offset",
            1,
            -1,
        ),
        ("grep", json!({"pattern": "x", "limit": 0}), "/limit", 1, 0),
        (
            "grep",
            json!({"pattern": "x", "limit": -1}),
            "/limit",
            1,
            -1,
        ),
        (
            "grep",
            json!({"pattern": "x", "context": -2}),
            "/context",
            0,
            -2,
        ),
        ("find", json!({"pattern": "*", "limit": 0}), "/limit", 1, 0),
        (
            "find",
            json!({"pattern": "*", "limit": -1}),
            "/limit",
            1,
            -1,
        ),
        ("ls", json!({"limit": 0}), "/limit", 1, 0),
        ("ls", json!({"limit": "-1"}), "/limit", 1, -1),
    ];
    for (tool, args, pointer, minimum, sent) in cases {
        let r = h.call(tool, args.clone()).await;
        assert!(r.is_error, "{tool} {args}");
        let text = r.text();
        let head: Vec<&str> = text.lines().take(2).collect();
        assert_eq!(
            head,
            [
                format!("Validation failed for tool \"{tool}\":"),
                format!("  - {pointer}: expected a number >= {minimum}, received number {sent}"),
            ],
            "{tool} {args}"
        );
        let details = r.details.unwrap();
        assert_eq!(
            details["validation_errors"],
            json!([{
                "path": pointer,
                "expected": format!("a number >= {minimum}"),
                "received": format!("number {sent}")
            }]),
            "{tool} {args}"
        );
    }
}

#[test]
fn schemas_compile_once_per_process_and_limits() {
    let spec =
        |limits: &Limits| crate::tools::contract::Tool::spec(&crate::tools::ReadTool, limits);
    let a = validator_for("read", &spec(&Limits::default()).parameters).unwrap();
    let b = validator_for("read", &spec(&Limits::default()).parameters).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    let mut other = spec(&Limits::default()).parameters;
    other["description"] = serde_json::json!("another schema");
    let c = validator_for("read", &other).unwrap();
    assert!(!Arc::ptr_eq(&a, &c));
    assert_eq!(
        validator_for("x", &serde_json::json!({"type": 5})).map(|_| ()),
        Err("the parameter schema of tool x is invalid: 5 is not valid under any of the schemas listed in the 'anyOf' keyword".to_owned())
    );
}

/// A tool that checks its own arguments (as an MCP server's does): it
/// answers with what it got, and its name is made at run time.
struct OwnChecks {
    name: String,
}

impl Tool for OwnChecks {
    type Args = serde_json::Value;

    fn spec(&self, _limits: &Limits) -> ToolSpec {
        ToolSpec {
            name: self.name.clone().into(),
            label: self.name.clone().into(),
            description: "echoes its arguments".into(),
            prompt_snippet: String::new(),
            prompt_guidelines: vec![],
            // Not a schema the validator compiles: it is never compiled.
            parameters: json!({"type": 12, "properties": {"n": {"type": "integer"}}}),
            execution_mode: ExecutionMode::Parallel,
        }
    }

    fn checks_arguments(&self) -> bool {
        false
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        _ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(args.to_string()))
    }
}

#[tokio::test]
async fn a_tool_that_checks_its_own_arguments_gets_them_as_sent() {
    let registry = Registry::builder(workspace())
        .tool(Arc::new(OwnChecks {
            name: format!("srv_{}", "echo"),
        }))
        .build()
        .unwrap();
    let result = dispatch(&registry, "srv_echo", json!({"n": "5", "extra": true})).await;
    assert_eq!(
        (result.is_error, result.text(), result.details),
        (false, r#"{"n":"5","extra":true}"#.to_owned(), None)
    );
    // Left out of the system prompt's list, which has no snippet for it.
    assert!(!registry.prompt_section().contains("srv_echo"));
    assert!(registry.active_names().contains(&"srv_echo"));
}

#[tokio::test]
async fn a_tool_of_ones_own_takes_the_place_of_the_built_in_of_its_name() {
    let registry = Registry::builder(workspace())
        .tool(Arc::new(OwnChecks {
            name: "read".to_owned(),
        }))
        .allow(["read", "ls"])
        .build()
        .unwrap();
    let result = dispatch(&registry, "read", json!({"path": 5})).await;
    assert_eq!(result.text(), r#"{"path":5}"#);
    assert_eq!(registry.active_names(), ["read", "ls"]);
    let twice = Registry::builder(workspace())
        .tool(Arc::new(OwnChecks {
            name: "x".to_owned(),
        }))
        .tool(Arc::new(OwnChecks {
            name: "x".to_owned(),
        }))
        .build();
    assert_eq!(twice.err(), Some(RegistryError::Duplicate("x".to_owned())));
}

#[test]
fn the_builder_composes_the_same_whatever_the_order_of_its_calls() {
    let own = |name: &str| -> Arc<dyn AnyTool> {
        Arc::new(OwnChecks {
            name: name.to_owned(),
        })
    };
    let names = |b: RegistryBuilder| -> Vec<String> {
        let registry = b.build().unwrap();
        registry
            .active_names()
            .into_iter()
            .map(str::to_owned)
            .collect()
    };
    let builder = || Registry::builder(workspace());
    // A preset selects the tools added, before it or after it.
    let readonly_and_x = ["read", "grep", "find", "ls", "x"];
    assert_eq!(
        names(builder().tool(own("x")).preset(Preset::Readonly)),
        readonly_and_x
    );
    assert_eq!(
        names(builder().preset(Preset::Readonly).tool(own("x"))),
        readonly_and_x
    );
    // An allow list is exact, before the tools are added or after.
    assert_eq!(names(builder().tool(own("x")).allow(["ls"])), ["ls"]);
    assert_eq!(names(builder().allow(["ls"]).tool(own("x"))), ["ls"]);
    // Deny turns off whichever tool has the name, whenever it is given.
    let all_but_read = ["bash", "edit", "write", "grep", "find", "ls"];
    assert_eq!(
        names(builder().deny(["read"]).tool(own("read"))),
        all_but_read
    );
    assert_eq!(
        names(builder().tool(own("read")).deny(["read"])),
        all_but_read
    );
    // A tool under a built-in's name takes its place in the prompt order.
    let registry = builder()
        .tool(own("read"))
        .preset(Preset::Coding)
        .build()
        .unwrap();
    assert_eq!(registry.active_names(), ["read", "bash", "edit", "write"]);
    assert_eq!(
        registry.spec("read").map(|s| s.description.as_str()),
        Some("echoes its arguments")
    );
}

#[test]
fn a_refused_call_is_an_error_that_holds_the_models_result() {
    let registry = Registry::builder(workspace()).build().unwrap();
    let err = registry
        .prepare(&ToolCall::new("c7", "nope", json!({})))
        .unwrap_err();
    let text = "Tool \"nope\" not found. Available tools: read, bash, edit, write, grep, find, \
                ls. Call one of those by its exact name.";
    assert_eq!(err.to_string(), text);
    assert_eq!(err.result().call_id.as_deref(), Some("c7"));
    let boxed: Box<dyn std::error::Error> = Box::new(err.clone());
    assert_eq!(boxed.to_string(), text);
    let result = ToolResult::from(err);
    assert_eq!((result.is_error, result.text()), (true, text.to_owned()));
}

#[test]
fn io_failures_of_ones_own_are_worded_as_the_built_ins_word_them() {
    let err = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
    let result = ToolResult::from(ToolError::io("read", "secret.txt", &err));
    assert_eq!(
        (result.text(), result.details),
        (
            crate::tools::describe_io_error("read", "secret.txt", &err),
            Some(json!({"error_class": "permission_denied"}))
        )
    );
}

/// A router sends calls to names no active tool has to the tool it names,
/// with their arguments as written; a name it declines gets the usual
/// not-found error, and argument text that is not JSON is still refused.
#[tokio::test]
async fn unknown_names_go_where_the_router_says_with_their_arguments_as_written() {
    let router: Router = Arc::new(|name: &str| {
        let rest = name.strip_prefix("srv/")?;
        let tool: Arc<dyn AnyTool> = Arc::new(OwnChecks {
            name: format!("routed {rest}"),
        });
        Some(tool)
    });
    let registry = Registry::builder(workspace())
        .preset(Preset::Coding)
        .route_unknown(router)
        .build()
        .unwrap();
    let text = |r: ToolResult| (r.is_error, r.text());
    assert_eq!(
        text(dispatch(&registry, "srv/x", json!(null)).await),
        (false, "null".to_owned())
    );
    assert_eq!(
        text(dispatch(&registry, "srv/x", json!([1, {"n": "two"}])).await),
        (false, r#"[1,{"n":"two"}]"#.to_owned())
    );
    let raw = ToolCall {
        arguments: CallArguments::Text("\"text\"".to_owned()),
        ..ToolCall::new("c", "srv/x", json!({}))
    };
    let prepared = registry.prepare(&raw).unwrap();
    assert_eq!(prepared.name(), "srv/x");
    let result = prepared
        .execute(CancellationToken::new(), UpdateSink::discard())
        .await;
    assert_eq!(text(result), (false, "\"text\"".to_owned()));
    let cut = ToolCall {
        arguments: CallArguments::Text("{\"n\": ".to_owned()),
        ..ToolCall::new("c", "srv/x", json!({}))
    };
    let refused = registry.prepare(&cut).unwrap_err().into_result();
    assert!(refused.is_error);
    assert_eq!(
        refused.text().lines().next().unwrap_or_default(),
        "The arguments of tool \"srv/x\" are not valid JSON (EOF while parsing a value at line 1 \
         column 6). The text ends in the middle of a value, so the call was probably cut off. \
         Received: {\"n\": "
    );
    // A name the router declines: the registry's own answer.
    assert_eq!(
        text(dispatch(&registry, "other", json!({})).await),
        (
            true,
            "Tool \"other\" not found. Available tools: read, bash, edit, write. Call one of \
             those by its exact name."
                .to_owned()
        )
    );
}
