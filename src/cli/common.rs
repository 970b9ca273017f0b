//! What the subcommands share, below all of them: the usage error and its
//! exit code, bounded reads of standard input and files the command line
//! names, and the workspace and registry of `--cwd`, `--no-confine` and
//! `--tools` (`harness call`, `tools`, `mcp`).

use crate::exit;

/// The most bytes read from standard input or a file given on the command
/// line (`harness call`'s arguments, `harness tokens`): a device such as
/// `/dev/zero` must end in an error, not in exhausted memory.
pub(super) const MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// Reads all of `reader` if it holds at most [`MAX_INPUT_BYTES`]; `what`
/// names it in the error ("standard input").
pub(super) fn read_bounded(reader: impl std::io::Read, what: &str) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    reader
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("cannot read {what}: {err}"))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(format!(
            "{what} holds more than {} MiB, the most harness reads from it",
            MAX_INPUT_BYTES >> 20
        ));
    }
    Ok(bytes)
}

/// Prints an error for a usage problem and returns the usage exit code.
pub(super) fn usage_error(message: impl std::fmt::Display) -> u8 {
    eprintln!("error: {message}");
    exit::USAGE
}

/// The workspace of `--cwd DIR` (the current directory without it),
/// confined unless `--no-confine`, its programs in the sandbox the flags
/// ask for, or what is wrong with it.
pub(super) fn workspace(
    cwd: Option<std::path::PathBuf>,
    no_confine: bool,
    sandbox: super::sandbox::SandboxFlags,
) -> Result<crate::tools::Workspace, String> {
    let root = match cwd {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(|err| format!("no current directory: {err}"))?,
    };
    let workspace = crate::tools::Workspace::local(&root)
        .map(|ws| ws.with_confine(!no_confine))
        .map_err(|err| format!("--cwd {}: {err}", root.display()))?;
    Ok(match sandbox.sandbox(workspace.root())? {
        Some(sandbox) => {
            let process = crate::tools::LocalProcess::default().with_sandbox(sandbox);
            workspace.with_process(std::sync::Arc::new(process))
        }
        None => workspace,
    })
}

/// The registry of `workspace` with the tools `--tools` names (all
/// without it), or what is wrong with the selection.
pub(super) fn registry(
    workspace: crate::tools::Workspace,
    tools: Option<&str>,
) -> Result<crate::tools::Registry, String> {
    tool_selection(crate::tools::Registry::builder(workspace), tools)
        .and_then(|builder| builder.build().map_err(|err| err.to_string()))
        .map_err(|err| format!("--tools: {err}"))
}

/// Parses `--tools`: a preset name or a comma-separated list of tool names.
/// A preset inside a list is refused (presets cannot be mixed with names),
/// and an unknown name is the one blamed.
pub(super) fn tool_selection(
    builder: crate::tools::RegistryBuilder,
    spec: Option<&str>,
) -> Result<crate::tools::RegistryBuilder, String> {
    use crate::tools::Preset;
    let Some(text) = spec else {
        return Ok(builder);
    };
    if let Some(preset) = Preset::parse(text.trim()) {
        return Ok(builder.preset(preset));
    }
    let names: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let presets: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| Preset::parse(name).is_some())
        .collect();
    if presets.is_empty() {
        return Ok(builder.allow(names));
    }
    let known: Vec<String> = crate::tools::builtin_tools()
        .iter()
        .map(|tool| {
            tool.spec(&crate::tools::Limits::default())
                .name
                .into_owned()
        })
        .collect();
    let unknown: Vec<String> = names
        .iter()
        .filter(|name| Preset::parse(name).is_none() && !known.iter().any(|k| k == *name))
        .map(|name| format!("`{name}`"))
        .collect();
    let quoted: Vec<String> = presets.iter().map(|p| format!("`{p}`")).collect();
    let (preset_words, verb) = match quoted.len() {
        1 => (format!("{} is a preset", quoted[0]), "it"),
        _ => (format!("{} are presets", quoted.join(", ")), "they"),
    };
    let mixing = format!(
        "{preset_words}, and {verb} cannot be mixed with tool names: give one preset (coding, \
         readonly, all) or a comma list of tool names"
    );
    Err(match unknown.len() {
        0 => mixing,
        1 => format!(
            "unknown tool {} (known tools: {}); {mixing}",
            unknown[0],
            known.join(", ")
        ),
        _ => format!(
            "unknown tools {} (known tools: {}); {mixing}",
            unknown.join(", "),
            known.join(", ")
        ),
    })
}

/// Parses a tokenizer name.
pub(super) fn tokenizer(
    name: &str,
) -> Result<std::sync::Arc<dyn crate::agent::TokenCounter>, String> {
    crate::run::settings::Tokenizer::parse(name).map(|t| t.counter())
}

/// The tool definitions of the MCP server `command` (program and
/// arguments), started in `cwd` (the current directory without it) in the
/// sandbox `flags` ask for (writes in `cwd` and a private TMPDIR; what
/// it starts ends with it), as its `tools/list` gave them.
pub(super) fn server_tools(
    command: &[String],
    cwd: Option<&std::path::Path>,
    flags: super::sandbox::SandboxFlags,
) -> Result<Vec<rmcp::model::Tool>, String> {
    let (program, rest) = command
        .split_first()
        .ok_or_else(|| "--mcp needs a command".to_owned())?;
    let cwd = match cwd {
        Some(cwd) => cwd.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|err| format!("cannot read the current directory: {err}"))?,
    };
    let real = cwd
        .canonicalize()
        .map_err(|err| format!("cannot use the directory {}: {err}", cwd.display()))?;
    let sandbox = flags.sandbox(&real)?;
    let hint = sandbox.as_ref().map(|_| {
        format!(
            " (in its sandbox it may write only in {} and $TMPDIR; --no-sandbox starts it \
             without one)",
            real.display()
        )
    });
    let config = crate::mcp::client::ServerConfig::new(
        program.clone(),
        crate::mcp::client::Launch::Command(crate::mcp::client::Command {
            program: program.clone(),
            args: rest.to_vec(),
            env: Vec::new(),
            cwd,
        }),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| format!("cannot start the async runtime: {err}"))?;
    runtime.block_on(async {
        let started = crate::mcp::client::McpClient::start_in(config, sandbox.clone()).await;
        let tools = match started {
            Ok(client) => {
                let tools = client.tools().to_vec();
                client.stop().await;
                Ok(tools)
            }
            Err(err) => Err(format!("{err}{}", hint.unwrap_or_default())),
        };
        // Nothing the server started outlives the listing.
        if let Some(sandbox) = &sandbox {
            sandbox.end();
        }
        tools
    })
}
