//! The `write` tool (§write, D5).
//!
//! Creates or overwrites a file with exactly the given text (no BOM, no
//! line-ending conversion, no added newline), creating missing parent
//! directories. Runs inside the mutation queue of the file's real path, so
//! it is ordered with `edit`s of the same file. Reports the true UTF-8 byte
//! count (pi reports UTF-16 code units, D5).

use serde::Deserialize;
use serde::Serialize;
use serde_json::json;

use super::contract::ExecutionMode;
use super::contract::Limits;
use super::contract::Tool;
use super::contract::ToolContext;
use super::contract::ToolOutput;
use super::contract::ToolSpec;
use super::contract::object_schema;
use super::error::ToolError;
use super::facts::ErrorClass;
use super::facts::ErrorKind;
use super::facts::ToolDetails;
use super::facts::same_details;
use super::fs_error::io_failure;
use super::task::run_blocking;

/// The `write` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteTool;

/// Arguments of `write`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// The file to write.
    pub path: String,
    /// The complete new contents.
    pub content: String,
}

impl Tool for WriteTool {
    type Args = WriteArgs;

    fn spec(&self, _limits: &Limits) -> ToolSpec {
        ToolSpec {
            name: "write".into(),
            label: "Write".into(),
            description: "Write content to a file. Creates the file if it does not exist and \
                          overwrites it if it does; missing parent directories are created. The \
                          content is written exactly as given."
                .to_owned(),
            prompt_snippet: "Create or overwrite files".to_owned(),
            prompt_guidelines: vec![
                "Use write only for new files or complete rewrites; use edit to change part of \
                 a file."
                    .to_owned(),
            ],
            parameters: object_schema(
                json!({
                    "path": {
                        "type": "string",
                        "description": "Path of the file to write, relative to the workspace root (or absolute)"
                    },
                    "content": {
                        "type": "string",
                        "description": "The complete content to write"
                    }
                }),
                &["path", "content"],
            ),
            execution_mode: ExecutionMode::Parallel,
        }
    }

    fn mutation_target<'a>(&self, args: &'a WriteArgs) -> Option<&'a str> {
        Some(&args.path)
    }

    async fn execute(&self, args: WriteArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        run_blocking("write", args, ctx, write_blocking).await
    }
}

/// What a call of `write` can show, as `harness run --coverage` counts it
/// (docs/reports.md, "Coverage").
pub(super) const BEHAVIOURS: &[&str] = &[
    "created",
    "overwritten",
    "arguments normalised",
    "error: a directory",
    "error: outside the workspace",
    "error: permission denied",
    "error: disk full",
    "error: read-only file system",
    "error: I/O error",
    "error: hard-linked file in place",
    "error: invalid arguments",
];

/// `details` of a write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteDetails {
    /// UTF-8 bytes written.
    pub bytes: usize,
    /// The file did not exist before.
    pub created: bool,
}

impl ToolDetails for WriteDetails {
    fn same(&self, other: &dyn ToolDetails) -> bool {
        same_details(self, other)
    }
}

fn write_blocking(args: &WriteArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let workspace = &ctx.workspace;
    let fs = workspace.fs().as_ref();
    let resolved = workspace.resolve(&args.path)?;
    let display = &resolved.display;
    // The real path: what the check resolved is what is opened, through
    // the workspace's handle when confined (D1).
    let target = &resolved.real;
    let existing = fs.metadata(target).ok();
    if existing.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(ToolError::failure(
            ErrorKind::Io(ErrorClass::IsADirectory),
            format!(
                "Cannot write {display}: it is a directory. Give the path of a file inside it."
            ),
        ));
    }
    if existing
        .as_ref()
        .is_some_and(|m| !m.is_dir() && !m.is_file())
    {
        return Err(ToolError::failure(
            ErrorKind::Io(ErrorClass::NotRegular),
            format!(
                "Cannot write {display}: it is not a regular file (a pipe, socket or device), and \
             writing to it could block. Write to a regular file instead."
            ),
        ));
    }
    if let Some(parent) = target.parent()
        && fs.metadata(parent).is_err()
    {
        fs.create_dir_all(parent).map_err(|err| {
            let parent_display = workspace.display(parent);
            io_failure("create the directory", &parent_display, &err)
        })?;
    }
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::cancelled());
    }
    fs.write(target, args.content.as_bytes())
        .map_err(|err| io_failure("write", display, &err))?;
    let bytes = args.content.len();
    ToolOutput::text(format!("Successfully wrote {bytes} bytes to {display}")).with_facts(
        WriteDetails {
            bytes,
            created: existing.is_none(),
        },
    )
}

#[cfg(test)]
mod tests {
    use crate::tools::testutil::Harness;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[tokio::test]
    async fn writes_exact_bytes_and_reports_utf8_length() {
        let h = Harness::memory();
        let r = h
            .call("write", json!({"path": "a.txt", "content": "héllo 🙂"}))
            .await;
        assert_eq!(r.text(), "Successfully wrote 11 bytes to a.txt");
        assert!(!r.is_error);
        assert_eq!(r.details, Some(json!({"bytes": 11, "created": true})));
        assert_eq!(h.file("a.txt"), "héllo 🙂");
    }

    #[tokio::test]
    async fn creates_parents_and_overwrites_without_touching_line_endings() {
        let h = Harness::memory();
        h.add_file("deep/x.txt", "old");
        let r = h
            .call(
                "write",
                json!({"path": "deep/er/y.txt", "content": "a\r\nb"}),
            )
            .await;
        assert_eq!(r.text(), "Successfully wrote 4 bytes to deep/er/y.txt");
        assert_eq!(h.file("deep/er/y.txt"), "a\r\nb");
        let r = h
            .call("write", json!({"path": "deep/x.txt", "content": ""}))
            .await;
        assert_eq!(r.text(), "Successfully wrote 0 bytes to deep/x.txt");
        assert_eq!(r.details, Some(json!({"bytes": 0, "created": false})));
        assert_eq!(h.file("deep/x.txt"), "");
    }

    #[tokio::test]
    async fn refuses_directories_and_paths_outside() {
        let h = Harness::memory();
        h.add_file("src/main.rs", "");
        let r = h
            .call("write", json!({"path": "src", "content": "x"}))
            .await;
        assert!(r.is_error);
        assert_eq!(
            r.text(),
            "Cannot write src: it is a directory. Give the path of a file inside it."
        );
        let r = h
            .call("write", json!({"path": "../evil.txt", "content": "x"}))
            .await;
        assert!(r.is_error);
        assert!(
            r.text()
                .starts_with("Path \"../evil.txt\" is outside the workspace")
        );
    }

    #[tokio::test]
    async fn permission_denied_and_parent_is_a_file() {
        let h = Harness::memory();
        h.add_file_with_mode("ro.txt", "x", 0o444);
        h.add_file("plain", "x");
        let r = h
            .call("write", json!({"path": "ro.txt", "content": "y"}))
            .await;
        assert_eq!(
            r.text(),
            "Permission denied: cannot write ro.txt. Check its permissions with bash (ls -l) or \
             use another file."
        );
        let r = h
            .call("write", json!({"path": "plain/x.txt", "content": "y"}))
            .await;
        assert!(r.is_error);
        assert!(r.text().contains("plain"), "{}", r.text());
    }

    #[tokio::test]
    async fn null_content_is_an_error_not_the_string_null() {
        // D17: pi writes the four characters "null".
        let h = Harness::memory();
        let r = h
            .call("write", json!({"path": "a.txt", "content": null}))
            .await;
        assert!(r.is_error);
        assert!(
            r.text()
                .contains("/content: expected a string, received null")
        );
        assert!(!h.exists("a.txt"));
    }

    #[tokio::test]
    async fn same_file_writes_in_one_batch_apply_in_call_order() {
        let h = Harness::memory();
        let first = h.prepare("write", json!({"path": "f.txt", "content": "first"}));
        let second = h.prepare("write", json!({"path": "./f.txt", "content": "second"}));
        // Run the second before the first: the queue still orders them.
        let b =
            tokio::spawn(second.execute(Default::default(), crate::tools::UpdateSink::discard()));
        tokio::task::yield_now().await;
        let a =
            tokio::spawn(first.execute(Default::default(), crate::tools::UpdateSink::discard()));
        assert!(!a.await.unwrap().is_error);
        assert!(!b.await.unwrap().is_error);
        assert_eq!(h.file("f.txt"), "second");
    }
}
