//! `harness init [DIR]`: writes a starter suite into `DIR/scenarios/`: one
//! passing scenario per tool, a `harness.yaml` and a small fixture, so that
//! `harness run` passes on the first try and each file shows a feature.
//!
//! The files are the ones under `src/cli/init/`, built into the binary.
//! Nothing is ever overwritten: when any of them exists, nothing is
//! written and the command exits 2 naming them. The files are written
//! whole or not at all, never through a `DIR/scenarios` that is a symlink
//! (`import::out::write_new_tree`).
//!
//! `harness init DIR --mcp CMD [ARGS…]` writes a suite for an MCP server
//! instead (`import::server_suite`): the server is started, its
//! `tools/list` read, and `DIR/scenarios/` gets `harness.yaml` declaring
//! it and one scenario per tool; the suite is loaded before it is moved
//! into place.

use std::path::Path;
use std::path::PathBuf;

use clap::Args;

use crate::exit;

/// Flags of `harness init`.
#[derive(Debug, Args)]
pub(super) struct InitArgs {
    /// The directory to write `scenarios/` into (default: the current
    /// directory; created if missing).
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
    /// A suite for this MCP server instead: the command and its arguments
    /// (everything after --mcp); one scenario per tool, with snapshots.
    #[arg(
        long,
        value_name = "CMD",
        num_args = 1..,
        allow_hyphen_values = true
    )]
    mcp: Vec<String>,
    /// With --mcp: write the scenarios of the tools that may change things
    /// to run too (by default they are written with `skip:`, since only
    /// tools annotated read-only are safe to call blind); before --mcp, or
    /// right after it (`--mcp --include-writes CMD …`).
    #[arg(long, requires = "mcp")]
    include_writes: bool,
    /// The sandbox the --mcp server starts in (writes in a temporary
    /// workspace and a private TMPDIR, the network kept, nothing it
    /// starts outlives the listing); give these before --mcp.
    #[command(flatten)]
    sandbox: super::sandbox::SandboxFlags,
}

/// Every file of the starter suite: its path under `DIR` and its text.
pub(super) const FILES: [(&str, &str); 11] = [
    (
        "scenarios/harness.yaml",
        include_str!("init/scenarios/harness.yaml"),
    ),
    (
        "scenarios/read.yaml",
        include_str!("init/scenarios/read.yaml"),
    ),
    (
        "scenarios/write.yaml",
        include_str!("init/scenarios/write.yaml"),
    ),
    (
        "scenarios/edit.yaml",
        include_str!("init/scenarios/edit.yaml"),
    ),
    (
        "scenarios/bash.yaml",
        include_str!("init/scenarios/bash.yaml"),
    ),
    (
        "scenarios/grep.yaml",
        include_str!("init/scenarios/grep.yaml"),
    ),
    (
        "scenarios/find.yaml",
        include_str!("init/scenarios/find.yaml"),
    ),
    ("scenarios/ls.yaml", include_str!("init/scenarios/ls.yaml")),
    (
        "scenarios/fixtures/starter/README.md",
        include_str!("init/scenarios/fixtures/starter/README.md"),
    ),
    (
        "scenarios/fixtures/starter/notes.txt",
        include_str!("init/scenarios/fixtures/starter/notes.txt"),
    ),
    (
        "scenarios/fixtures/starter/src/greet.py",
        include_str!("init/scenarios/fixtures/starter/src/greet.py"),
    ),
];

pub(super) fn run(args: &InitArgs) -> u8 {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    if !args.mcp.is_empty() {
        return server_suite(&dir, args);
    }
    let files: Vec<(String, String)> = FILES
        .iter()
        .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
        .collect();
    if let Err(code) = write_all(&dir, &files, |_| Ok(())) {
        return code;
    }
    let scenarios = dir.join("scenarios");
    println!(
        "wrote a starter suite of {} files into {}",
        FILES.len(),
        scenarios.display()
    );
    println!(
        "run it with: harness run {}\nthe scenario format: docs/scenarios.md in the harness \
         repository, or `harness schema` for its JSON Schema",
        scenarios.display()
    );
    exit::SUCCESS
}

/// Writes `files` (paths relative to `dir`), none of which may exist yet,
/// whole or not at all (`import::out::write_new_tree`), after `check`
/// passes them (in the folder they were staged in).
fn write_all(
    dir: &Path,
    files: &[(String, String)],
    check: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), u8> {
    use crate::import::out::NewTreeError;
    match crate::import::out::write_new_tree(dir, files, check) {
        Ok(()) => Ok(()),
        Err(NewTreeError::Exist(existing)) => {
            let existing: Vec<String> = existing.iter().map(|p| p.display().to_string()).collect();
            Err(super::common::usage_error(format!(
                "harness init writes nothing over existing files, and these exist: {}; move them \
                 away or choose another directory (harness init DIR)",
                existing.join(", ")
            )))
        }
        Err(NewTreeError::Link(path)) => Err(super::common::usage_error(format!(
            "{} is a symlink; harness init does not write through links (remove it, or choose \
             another directory)",
            path.display()
        ))),
        Err(NewTreeError::Failed(why)) => Err(super::common::usage_error(format!(
            "{why}; nothing was written"
        ))),
    }
}

/// `harness init DIR --mcp CMD [ARGS…]`. The server is started in a
/// temporary directory, as a scenario's is in its workspace, with the
/// variables of a server's command (`${workspace}`, `${dir}`,
/// `${harness}`) standing for what they will in the suite.
fn server_suite(dir: &Path, args: &InitArgs) -> u8 {
    // `--mcp --include-writes CMD …` as well as `--include-writes --mcp
    // CMD …`: no server's program is called `--include-writes`.
    let (include_writes, command) = match args.mcp.split_first() {
        Some((first, rest)) if first == "--include-writes" => (true, rest),
        _ => (args.include_writes, &args.mcp[..]),
    };
    if command.is_empty() {
        return super::common::usage_error(
            "--mcp needs the server's command after it (`--mcp --include-writes CMD [ARGS…]`)",
        );
    }
    if let Some(unknown) = command.iter().find_map(|arg| unknown_variable(arg)) {
        return super::common::usage_error(format!(
            "the command holds `${{{}}}`, which the suite's `harness.yaml` cannot: a server's \
             command knows only `${{workspace}}`, `${{dir}}` and `${{harness}}` \
             (docs/scenarios.md); use the value itself, or a variable of the shell (`$HOME`)",
            super::output::terminal_text(unknown, &[])
        ));
    }
    let workspace = match tempfile::Builder::new().prefix("harness-init-").tempdir() {
        Ok(tmp) => tmp,
        Err(err) => {
            return super::common::usage_error(format!("cannot make a temporary directory: {err}"));
        }
    };
    let suite_dir =
        std::path::absolute(dir.join("scenarios")).unwrap_or_else(|_| dir.join("scenarios"));
    let harness = std::env::current_exe().map_or_else(
        |_| "harness".to_owned(),
        |p| p.to_string_lossy().into_owned(),
    );
    let vars = std::collections::BTreeMap::from([
        (
            "workspace".to_owned(),
            workspace.path().to_string_lossy().into_owned(),
        ),
        ("dir".to_owned(), suite_dir.to_string_lossy().into_owned()),
        ("harness".to_owned(), harness),
    ]);
    let started: Vec<String> = command
        .iter()
        .map(|arg| crate::base::vars::substitute(arg, &vars))
        .collect();
    let tools = match super::common::server_tools(&started, Some(workspace.path()), args.sandbox) {
        Ok(tools) => tools,
        Err(err) => {
            eprintln!("error: {err}");
            return exit::FAILED;
        }
    };
    let program = command.first().map_or("server", String::as_str);
    let server = crate::import::server_suite::server_name(program);
    let writes = if include_writes {
        crate::import::server_suite::Writes::Include
    } else {
        crate::import::server_suite::Writes::Skip
    };
    let suite = crate::import::server_suite::suite(&server, command, &tools, writes);
    let skipped = suite.iter().filter(|f| f.text.contains("\nskip: ")).count();
    let files: Vec<(String, String)> = suite
        .into_iter()
        .map(|f| (format!("scenarios/{}", f.path), f.text))
        .collect();
    if let Err(code) = write_all(dir, &files, loads) {
        return code;
    }
    let scenarios = dir.join("scenarios");
    let skipped = if include_writes {
        format!(
            "{} of them may change things and run, as --include-writes asks",
            tools.len() - suite_read_only(&tools)
        )
    } else {
        format!("{skipped} skipped: not annotated read-only; --include-writes runs them too")
    };
    println!(
        "wrote a suite for `{}` into {}: harness.yaml and {} scenarios, one per tool ({skipped})",
        super::output::terminal_text(&server, &[]),
        scenarios.display(),
        tools.len(),
    );
    println!(
        "record today's answers with: harness run {} --update-snapshots\nthen `harness run {}` \
         compares with them",
        scenarios.display(),
        scenarios.display()
    );
    exit::SUCCESS
}

/// How many of `tools` are annotated read-only.
fn suite_read_only(tools: &[rmcp::model::Tool]) -> usize {
    tools
        .iter()
        .filter(|t| crate::import::server_suite::skip_reason(t).is_none())
        .count()
}

/// The first `${name}` in `arg` that a server's command cannot hold (it
/// knows `${workspace}`, `${dir}` and `${harness}`).
fn unknown_variable(arg: &str) -> Option<&str> {
    let mut rest = arg;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let end = after.find('}')?;
        let name = &after[..end];
        if !matches!(name, "workspace" | "dir" | "harness") {
            return Some(name);
        }
        rest = &after[end + 1..];
    }
    None
}

/// Whether the suite staged in `staged` loads, as every suite `init --mcp`
/// writes must (an error here is a bug of the writer).
fn loads(staged: &Path) -> Result<(), String> {
    let found = crate::run::discover(
        &[staged.join("scenarios")],
        &crate::run::Selection::default(),
    );
    if found.errors.is_empty() {
        return Ok(());
    }
    let errors: Vec<String> = found
        .errors
        .iter()
        .map(|e| super::output::terminal_text(&e.to_string(), &[]).into_owned())
        .collect();
    Err(format!(
        "the suite made from the server's tools does not load, which is a bug of harness init \
         (please report it): {}",
        errors.join("; ")
    ))
}
