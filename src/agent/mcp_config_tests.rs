use pretty_assertions::assert_eq;

use super::*;
use crate::agent::profiles::Placeholders;
use crate::agent::profiles::profile;

fn servers() -> Vec<McpServer> {
    vec![
        McpServer {
            name: "harness".to_owned(),
            transport: McpTransport::Stdio {
                command: "/opt/h \"x\"/harness".to_owned(),
                args: vec!["mcp".to_owned(), "--cwd".to_owned(), "/w".to_owned()],
                env: vec![("LOG".to_owned(), "a\\b\nc".to_owned())],
                cwd: "/w".to_owned(),
            },
            startup_timeout: Some(Duration::from_secs(10)),
            call_timeout: Some(Duration::from_millis(2500)),
        },
        McpServer {
            name: "web".to_owned(),
            transport: McpTransport::Http {
                url: "http://127.0.0.1:39217/mcp".to_owned(),
                headers: vec![("Authorization".to_owned(), "Bearer t".to_owned())],
            },
            startup_timeout: Some(Duration::from_secs(20)),
            call_timeout: None,
        },
    ]
}

/// Name and value pairs, as a launch's environment and files are.
type Pairs = Vec<(String, String)>;

/// The launch of the built-in `agent` with `servers` registered: its
/// arguments after the profile's own, its environment after the
/// profile's own, and its files.
fn registered(agent: &str, servers: &[McpServer]) -> (Vec<String>, Pairs, Pairs) {
    let profile = profile(agent).unwrap();
    let mut launch = profile.launch(&Placeholders {
        model_url: "http://127.0.0.1:4000".to_owned(),
        workspace: "/w".to_owned(),
        home: "/h".to_owned(),
        prompt: "Fix it.".to_owned(),
    });
    let (args, env) = (launch.args.len(), launch.env.len());
    register(
        profile.mcp.unwrap(),
        servers,
        "/h",
        LaunchParts {
            args: &mut launch.args,
            env: &mut launch.env,
            files: &mut launch.files,
        },
    )
    .unwrap();
    (
        launch.args.split_off(args),
        launch.env.split_off(env),
        launch.files,
    )
}

fn pairs(pairs: &[(&str, &str)]) -> Pairs {
    pairs
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn claude_code_gets_a_strict_mcp_config_file_and_the_longest_timeouts() {
    assert_eq!(
        registered("claude-code", &servers()),
        (
            [
                "--mcp-config",
                "/h/.claude/harness-mcp.json",
                "--strict-mcp-config"
            ]
            .map(str::to_owned)
            .to_vec(),
            pairs(&[("MCP_TIMEOUT", "20000"), ("MCP_TOOL_TIMEOUT", "2500")]),
            pairs(&[(
                "/h/.claude/harness-mcp.json",
                concat!(
                    r#"{"mcpServers":{"harness":{"type":"stdio","command":"/opt/h \"x\"/harness","#,
                    r#""args":["mcp","--cwd","/w"],"env":{"LOG":"a\\b\nc"}},"#,
                    r#""web":{"type":"http","url":"http://127.0.0.1:39217/mcp","#,
                    r#""headers":{"Authorization":"Bearer t"}}}}"#,
                    "\n"
                )
            )]),
        )
    );
}

#[test]
fn codex_gets_required_mcp_servers_tables_after_its_own_config() {
    let (args, env, files) = registered("codex", &servers());
    assert_eq!(
        (args, env),
        (
            vec!["-c".to_owned(), "model=\"scripted\"".to_owned()],
            Vec::new()
        )
    );
    assert_eq!(
        files,
        pairs(&[(
            "/h/.codex/config.toml",
            concat!(
                "model = \"gpt-5.5\"\nmodel_provider = \"harness\"\n",
                "check_for_update_on_startup = false\n\n[model_providers.harness]\n",
                "name = \"harness\"\nbase_url = \"http://127.0.0.1:4000/v1\"\n",
                "wire_api = \"responses\"\nenv_key = \"HARNESS_MODEL_KEY\"\n\n",
                "[analytics]\nenabled = false\n\n[features]\nplugins = false\n",
                "\n[mcp_servers.harness]\n",
                "command = \"/opt/h \\\"x\\\"/harness\"\n",
                "args = [\"mcp\", \"--cwd\", \"/w\"]\n",
                "cwd = \"/w\"\n",
                "env = { LOG = \"a\\\\b\\nc\" }\n",
                "startup_timeout_sec = 10\n",
                "tool_timeout_sec = 2.5\n",
                "required = true\n",
                "\n[mcp_servers.web]\n",
                "url = \"http://127.0.0.1:39217/mcp\"\n",
                "http_headers = { Authorization = \"Bearer t\" }\n",
                "startup_timeout_sec = 20\n",
                "required = true\n",
            )
        )])
    );
}

#[test]
fn gemini_cli_gets_trusted_mcp_servers_in_its_settings() {
    let (args, env, files) = registered("gemini-cli", &servers());
    assert_eq!((args, env), (Vec::new(), Vec::new()));
    assert_eq!(
        files,
        pairs(&[(
            "/h/.gemini/settings.json",
            concat!(
                r#"{"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"#,
                r#""general":{"disableAutoUpdate":true,"disableUpdateNag":true},"#,
                r#""security":{"auth":{"selectedType":"gemini-api-key"}},"#,
                r#""mcpServers":{"harness":{"command":"/opt/h \"x\"/harness","#,
                r#""args":["mcp","--cwd","/w"],"env":{"LOG":"a\\b\nc"},"cwd":"/w","#,
                r#""timeout":2500,"trust":true},"#,
                r#""web":{"httpUrl":"http://127.0.0.1:39217/mcp","#,
                r#""headers":{"Authorization":"Bearer t"},"trust":true}}}"#,
                "\n"
            )
        )])
    );
}

#[test]
fn no_servers_change_nothing_and_pi_has_no_format() {
    let profile = profile("codex").unwrap();
    let values = Placeholders {
        model_url: "http://127.0.0.1:4000".to_owned(),
        workspace: "/w".to_owned(),
        home: "/h".to_owned(),
        prompt: "Fix it.".to_owned(),
    };
    let mut launch = profile.launch(&values);
    let before = launch.clone();
    register(
        McpFormat::Codex,
        &[],
        "/h",
        LaunchParts {
            args: &mut launch.args,
            env: &mut launch.env,
            files: &mut launch.files,
        },
    )
    .unwrap();
    assert_eq!(launch, before);
    assert_eq!(crate::agent::profiles::profile("pi").unwrap().mcp, None);
}

#[test]
fn each_agent_names_a_servers_tool_its_own_way() {
    assert_eq!(
        [
            McpFormat::ClaudeCode,
            McpFormat::Codex,
            McpFormat::GeminiCli
        ]
        .map(|format| format.tool_name("harness", "read")),
        [
            "mcp__harness__read",
            "mcp__harness__read",
            "mcp_harness_read"
        ]
        .map(str::to_owned)
    );
}

#[test]
fn toml_strings_escape_quotes_backslashes_and_control_characters() {
    assert_eq!(
        toml_string("a\"b\\c\u{1}\td"),
        r#""a\"b\\c\u0001\td""#.to_owned()
    );
    assert_eq!(toml_key("a b"), r#""a b""#.to_owned());
    assert_eq!(toml_key("ok_key-1"), "ok_key-1".to_owned());
}
