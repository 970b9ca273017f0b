//! Failures to start, and the configured prefix, environment and directory.

use pretty_assertions::assert_eq;

use super::*;

// ---------------------------------------------------------------- failures

#[tokio::test]
async fn a_missing_working_directory_is_a_clear_error() {
    let mut h = Harness::local();
    let root = h.root().to_path_buf();
    h.remove_root();
    let r = bash(&h, "echo hi").await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            root.display()
        )
    );
}

fn registry_with_shell(dir: &Path, shell: &Path) -> Registry {
    let workspace = Workspace::new(
        Arc::new(LocalFs),
        Arc::new(LocalProcess::with_shell(shell)),
        dir,
        true,
    )
    .unwrap();
    Registry::builder(workspace).build().unwrap()
}

#[tokio::test]
async fn a_shell_that_cannot_start_is_named_with_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let call = ToolCall::new("c1", "bash", json!({"command": "echo hi"}));

    let registry = registry_with_shell(dir.path(), Path::new("/no/such/shell"));
    let r = registry
        .dispatch(&call, CancellationToken::new(), UpdateSink::discard())
        .await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "Custom shell path not found: /no/such/shell\nCould not start the command: the shell \
         configured for bash does not exist. Tell the user; commands cannot run until it is \
         fixed."
    );

    let not_executable = dir.path().join("shell.txt");
    disk::write(&not_executable, "not a program");
    let registry = registry_with_shell(dir.path(), &not_executable);
    let r = registry
        .dispatch(&call, CancellationToken::new(), UpdateSink::discard())
        .await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        format!(
            "Could not start the command: the shell {} could not be started: permission denied. \
             The shell or the working directory cannot be used: tell the user; commands cannot \
             run until it is fixed.",
            not_executable.display()
        )
    );
}

fn registry_with_bash(dir: &Path, config: crate::tools::BashConfig) -> Registry {
    let workspace = Workspace::local(dir).unwrap().with_bash(config);
    Registry::builder(workspace).build().unwrap()
}

async fn run_bash(registry: &Registry, command: &str) -> ToolResult {
    let call = ToolCall::new("c1", "bash", json!({ "command": command }));
    registry
        .dispatch(&call, CancellationToken::new(), UpdateSink::discard())
        .await
}

#[tokio::test]
async fn the_configured_prefix_env_and_directory_apply_to_every_command() {
    let dir = tempfile::tempdir().unwrap();
    disk::create_dir_all(dir.path().join("sub/dir"));
    let config = crate::tools::BashConfig {
        env: vec![("GREETING".to_owned(), "hello there".to_owned())],
        command_prefix: Some("echo prefixed; shopt -s expand_aliases".to_owned()),
        cwd: Some("sub/dir".to_owned()),
    };
    let registry = registry_with_bash(dir.path(), config);
    let r = run_bash(&registry, "echo \"$GREETING\"; basename \"$PWD\"").await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(r.text(), "prefixed\nhello there\ndir\n");
}

#[tokio::test]
async fn a_configured_directory_cannot_lead_out_of_a_confined_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    let config = crate::tools::BashConfig {
        cwd: Some("out".to_owned()),
        ..crate::tools::BashConfig::default()
    };
    let registry = registry_with_bash(dir.path(), config);
    let r = run_bash(&registry, "pwd").await;
    // The path came from the configuration: the model is not told to use
    // another path, and nothing names the machine's directories.
    assert_eq!(
        (r.is_error, r.text(), r.details),
        (
            true,
            "Cannot run the command: the working directory configured for bash, out, leads \
             outside the workspace through a symlink, and commands may only start inside it. No \
             call can change that setting: tell the user that the bash configuration must name \
             a directory inside the workspace."
                .to_owned(),
            Some(json!({ "error_class": "outside_workspace" }))
        )
    );
    let missing = crate::tools::BashConfig {
        cwd: Some("nowhere".to_owned()),
        ..crate::tools::BashConfig::default()
    };
    let r = run_bash(&registry_with_bash(dir.path(), missing), "pwd").await;
    let root = disk::canonicalize(dir.path());
    assert_eq!(
        (r.is_error, r.text()),
        (
            true,
            format!(
                "Working directory does not exist: {}\nCannot execute bash commands.",
                root.join("nowhere").display()
            )
        )
    );
}
