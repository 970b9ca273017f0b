//! `harness record -o DIR [--name NAME] -- CMD [ARGS…]`: an MCP server to
//! a real client (Claude Code, Codex, the Inspector) that starts the real
//! server CMD, relays every line both ways unchanged (`mcp::record`), and
//! when the session ends writes what passed as a scenario
//! (`import::traffic`) into `DIR/NAME.yaml`, which `harness run DIR`
//! replays against the server.
//!
//! Standard output carries only the server's lines; what `harness record`
//! says goes to standard error, as does the server's own standard error.
//! The server runs in the current directory with the environment the
//! client gave (`harness run` gives it its own). The end of the client's
//! input closes the server's; a server still running a grace later is
//! sent SIGTERM, then SIGKILL, to its process group. SIGTERM, SIGINT or
//! SIGHUP stop the server the same way at once. The scenario is written
//! in every case, to the first name not taken (`NAME.yaml`,
//! `NAME-2.yaml`…), so a client that starts the server again records
//! another file.

use std::io::Write as _;
use std::path::Path;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use tokio::io::BufReader;

use crate::exit;

/// How long a server may run on after the client's input ended (and after
/// SIGTERM) before the next step of the stop.
const STOP_GRACE: Duration = Duration::from_secs(1);

/// Flags of `harness record`.
#[derive(Debug, Args)]
pub(super) struct RecordArgs {
    /// The directory to write the scenario into (created if missing).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    out: PathBuf,
    /// The scenario file's name, without `.yaml` (default: session); a
    /// name taken gets -2, -3….
    #[arg(long, value_name = "NAME", default_value = "session")]
    name: String,
    /// The sandbox the server runs in (writes in the current directory
    /// and a private TMPDIR, the network kept, nothing it starts outlives
    /// the session).
    #[command(flatten)]
    sandbox: super::sandbox::SandboxFlags,
    /// The real server: the command and its arguments (after `--`).
    #[arg(
        value_name = "CMD",
        required = true,
        num_args = 1..,
        allow_hyphen_values = true,
        trailing_var_arg = true
    )]
    command: Vec<String>,
}

pub(super) fn run(args: &RecordArgs) -> u8 {
    if args.name.is_empty()
        || !args
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        || args.name.starts_with('.')
    {
        return super::common::usage_error(format!(
            "--name {:?}: give a file name of letters, digits, `_`, `-` and `.`",
            args.name
        ));
    }
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(err) => return super::common::usage_error(format!("no current directory: {err}")),
    };
    let command = absolute_program(&args.command, &cwd);
    let sandbox = match cwd
        .canonicalize()
        .map_err(|err| format!("cannot use the current directory: {err}"))
        .and_then(|real| args.sandbox.sandbox(&real))
    {
        Ok(sandbox) => sandbox,
        Err(err) => return super::common::usage_error(err),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            return super::common::usage_error(format!("cannot start the async runtime: {err}"));
        }
    };
    let traffic = runtime.block_on(relay(&command, sandbox.as_deref()));
    // Nothing the server started outlives the session.
    if let Some(sandbox) = &sandbox {
        sandbox.end();
    }
    // A read of standard input may still be waiting on a blocking thread.
    runtime.shutdown_background();
    let traffic = match traffic {
        Ok(traffic) => traffic,
        Err(err) => {
            eprintln!("harness record: {err}");
            return exit::FAILED;
        }
    };
    let program = command.first().map_or("server", String::as_str);
    let server = crate::import::server_suite::server_name(program);
    let written = crate::import::traffic::suite_command(&args.command, &cwd, &cwd.join(&args.out));
    let Some((text, replayed)) =
        crate::import::traffic::scenario(&server, &written, &cwd, &traffic)
    else {
        eprintln!(
            "harness record: no tools/call can be replayed ({} sent), so no scenario was written",
            traffic.calls.len()
        );
        return exit::SUCCESS;
    };
    match write_first_free(&args.out, &args.name, &text) {
        Ok(path) => {
            eprintln!(
                "harness record: {} tools/calls relayed, {replayed} written into {}; replay them \
                 with: harness run {}",
                traffic.calls.len(),
                path.display(),
                args.out.display()
            );
            exit::SUCCESS
        }
        Err(err) => {
            eprintln!(
                "harness record: cannot write into {}: {err}",
                args.out.display()
            );
            exit::FAILED
        }
    }
}

/// The command with a relative program path (`./server.py`) made
/// absolute, so the replay finds it from its own workspace.
fn absolute_program(command: &[String], cwd: &Path) -> Vec<String> {
    let mut command = command.to_vec();
    if let Some(program) = command.first_mut()
        && program.contains('/')
        && !program.starts_with('/')
    {
        *program = cwd.join(&*program).to_string_lossy().into_owned();
    }
    command
}

/// Starts the server and relays until its output ends.
async fn relay(
    command: &[String],
    sandbox: Option<&crate::tools::Sandbox>,
) -> Result<crate::mcp::record::Traffic, String> {
    let (program, rest) = command
        .split_first()
        .ok_or_else(|| "no server command was given".to_owned())?;
    let mut server = tokio::process::Command::new(program);
    if let Some(sandbox) = sandbox {
        sandbox
            .prepare(server.as_std_mut())
            .map_err(|err| format!("cannot start `{program}` in its sandbox: {err}"))?;
    }
    let mut child = server
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|err| format!("cannot start `{program}`: {err}"))?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    let (Some(server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the server's standard input and output could not be piped".to_owned());
    };
    let ended = Arc::new(tokio::sync::Notify::new());
    let relay = tokio::spawn(crate::mcp::record::relay(
        BufReader::new(tokio::io::stdin()),
        tokio::io::stdout(),
        server_in,
        BufReader::new(server_out),
        ended.clone(),
    ));
    let stop = async {
        tokio::select! {
            () = ended.notified() => tokio::time::sleep(STOP_GRACE).await,
            () = crate::base::signals::stop_signals() => {}
        }
        if let Some(pgid) = pgid {
            crate::mcp::client::signal_group(pgid, libc::SIGTERM);
            tokio::time::sleep(STOP_GRACE).await;
            crate::mcp::client::signal_group(pgid, libc::SIGKILL);
        }
        std::future::pending::<()>().await;
    };
    let traffic = tokio::select! {
        traffic = relay => traffic.map_err(|err| format!("the relay failed: {err}"))?,
        () = stop => unreachable_pending(),
    };
    // The server's output ended; whatever it left in its group goes too.
    if let Some(pgid) = pgid {
        crate::mcp::client::signal_group(pgid, libc::SIGKILL);
    }
    let _ = child.wait().await;
    Ok(traffic)
}

/// The branch of a future that never completes.
fn unreachable_pending() -> crate::mcp::record::Traffic {
    crate::mcp::record::Traffic::default()
}

/// Writes `text` into `dir/NAME.yaml`, or `NAME-2.yaml`… when taken, and
/// returns the path written.
fn write_first_free(dir: &Path, name: &str, text: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    for n in 1..10_000 {
        let file = if n == 1 {
            format!("{name}.yaml")
        } else {
            format!("{name}-{n}.yaml")
        };
        let path = dir.join(file);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut out) => {
                out.write_all(text.as_bytes())?;
                return Ok(path);
            }
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err),
        }
    }
    Err(std::io::Error::other(format!(
        "{name}.yaml to {name}-9999.yaml are all taken"
    )))
}
