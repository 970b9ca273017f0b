//! Presentation: the names under which the model sees the machine.
//!
//! A harness run executes in directories whose paths depend on the
//! machine, on `TMPDIR` and on chance (`/tmp/harness-ws-k3J9x2`). If those
//! paths reached the model, every figure priced from what it reads would
//! move with them. A [`Presenter`] gives each such directory (a *root*)
//! one stable name, such as `/workspace`, and sits between the tool layer
//! and the conversation:
//!
//! - **towards the model** ([`Presenter::result`], [`Presenter::update`],
//!   [`Presenter::text`]): every spelling of a root's real path in a
//!   result's text blocks, its `details` strings and a streamed update's is
//!   replaced by the root's stable name;
//! - **towards the tools** ([`Presenter::for_execution`]): every stable
//!   name in the string arguments of a call is replaced by the root's real
//!   path before the call runs, so a path the model read in a result works
//!   when it sends it back.
//!
//! A name is replaced only where it stands as a whole path prefix: at the
//! start of the text or after a character that cannot be part of a file
//! name (`/`, a space, a quote, `=` …), and followed by the end of the
//! text, `/`, or a character that cannot continue a file name (a `.` counts
//! as continuing it when a name character follows, so `/workspace.` at the
//! end of a sentence is the root and `/workspace.txt` is not). Where names
//! overlap, the longest wins.
//!
//! The identity presenter ([`Presenter::default`]) changes nothing; that is
//! what a loop without roots, and `harness call`, use.

use std::path::Path;

use serde_json::Value;

use crate::tools::CallArguments;
use crate::tools::Content;
use crate::tools::ToolCall;
use crate::tools::ToolResult;
use crate::tools::ToolUpdate;

/// One directory and the name the model knows it by.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Root {
    /// The stable name, absolute (`/workspace`).
    shown: String,
    /// Every spelling of the real path (as created, canonical, …); the
    /// first is the one calls execute with.
    real: Vec<String>,
}

/// Maps real directories to stable names and back; see the module
/// documentation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Presenter {
    roots: Vec<Root>,
    /// `(real spelling, root index)`, longest spelling first.
    outward: Vec<(String, usize)>,
    /// `(stable name, root index)`, longest name first.
    inward: Vec<(String, usize)>,
}

impl Presenter {
    /// Adds a root: the model sees every spelling in `real` as `shown`, and
    /// `shown` in its arguments executes as the first spelling.
    ///
    /// Spellings that are empty or `/` are ignored (they would rename every
    /// path), as is a root without a usable spelling. `shown` should be an
    /// absolute path without a trailing `/`.
    pub fn with_root<P: AsRef<Path>>(
        mut self,
        shown: impl Into<String>,
        real: impl IntoIterator<Item = P>,
    ) -> Self {
        let mut spellings: Vec<String> = Vec::new();
        for path in real {
            let text = path.as_ref().to_string_lossy();
            let text = text.trim_end_matches('/');
            if !text.is_empty() && !spellings.iter().any(|s| s == text) {
                spellings.push(text.to_owned());
            }
        }
        let shown = shown.into();
        if spellings.is_empty() || shown.is_empty() {
            return self;
        }
        let index = self.roots.len();
        self.outward
            .extend(spellings.iter().map(|s| (s.clone(), index)));
        self.outward
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        self.inward.push((shown.clone(), index));
        self.inward
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        self.roots.push(Root {
            shown,
            real: spellings,
        });
        self
    }

    /// Whether it changes nothing.
    pub fn is_identity(&self) -> bool {
        self.roots.is_empty()
    }

    /// `text` as the model sees it: real paths of roots replaced by their
    /// stable names.
    pub fn text(&self, text: &str) -> String {
        replace_prefixes(
            text,
            self.outward
                .iter()
                .map(|(from, i)| (from.as_str(), self.roots[*i].shown.as_str())),
        )
    }

    /// `text` as the tools need it: stable names replaced by real paths.
    pub fn real_text(&self, text: &str) -> String {
        replace_prefixes(
            text,
            self.inward.iter().map(|(from, i)| {
                let root = &self.roots[*i];
                (from.as_str(), root.real[0].as_str())
            }),
        )
    }

    /// A JSON value as the model sees it: every string at any depth
    /// presented (object keys are left alone).
    pub fn value(&self, value: &Value) -> Value {
        map_strings(value, &|s| self.text(s))
    }

    /// A tool result as the model sees it: text blocks, `details` strings
    /// and the internal error (for the people reading a failure).
    pub fn result(&self, result: ToolResult) -> ToolResult {
        if self.is_identity() {
            return result;
        }
        ToolResult {
            is_error: result.is_error,
            content: self.content(result.content),
            details: result.details.map(|d| self.value(&d)),
            internal_error: result.internal_error.map(|e| self.text(&e)),
            facts: result.facts,
            call_id: result.call_id,
        }
    }

    /// The result of `call` (as the model sent it) as the model sees it:
    /// [`Self::result`], and a size the tool reports of text this
    /// presenter rewrote on its way in is the size of the text as the model
    /// wrote it. That is `write`'s byte count (`Successfully wrote N bytes`
    /// and `details.bytes`): content naming `/workspace` is written with
    /// the real path, whose length depends on the machine, and the model
    /// must not see, nor pay for, that difference.
    pub fn result_for(&self, call: &ToolCall, result: ToolResult) -> ToolResult {
        let mut result = self.result(result);
        if self.is_identity() || call.name != "write" || result.is_error {
            return result;
        }
        let sent = match &call.arguments {
            CallArguments::Json(value) => value.get("content").cloned(),
            CallArguments::Text(text) => serde_json::from_str::<Value>(text)
                .ok()
                .and_then(|v| v.get("content").cloned()),
        };
        let Some(Value::String(sent)) = sent else {
            return result;
        };
        let (shown, real) = (sent.len(), self.real_text(&sent).len());
        if shown == real {
            return result;
        }
        let (from, to) = (
            format!("Successfully wrote {real} bytes"),
            format!("Successfully wrote {shown} bytes"),
        );
        for block in &mut result.content {
            if let Content::Text { text } = block
                && let Some(rest) = text.strip_prefix(&from)
            {
                *text = format!("{to}{rest}");
            }
        }
        if let Some(Value::Object(details)) = &mut result.details
            && details.get("bytes") == Some(&Value::from(real))
        {
            details.insert("bytes".to_owned(), Value::from(shown));
        }
        result
    }

    /// A streamed partial result as the model would see it.
    pub fn update(&self, update: ToolUpdate) -> ToolUpdate {
        if self.is_identity() {
            return update;
        }
        ToolUpdate {
            content: self.content(update.content),
            details: update.details.map(|d| self.value(&d)),
        }
    }

    /// The call the tools execute for `call` as the model sent it: stable
    /// names in its string arguments (JSON strings at any depth, or the
    /// raw argument text) replaced by real paths.
    pub fn for_execution(&self, call: &ToolCall) -> ToolCall {
        if self.is_identity() {
            return call.clone();
        }
        let arguments = match &call.arguments {
            CallArguments::Json(value) => {
                CallArguments::Json(map_strings(value, &|s| self.real_text(s)))
            }
            CallArguments::Text(text) => CallArguments::Text(self.real_text(text)),
        };
        ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments,
        }
    }

    fn content(&self, content: Vec<Content>) -> Vec<Content> {
        content
            .into_iter()
            .map(|block| match block {
                Content::Text { text } => Content::Text {
                    text: self.text(&text),
                },
                image @ Content::Image { .. } => image,
            })
            .collect()
    }
}

fn map_strings(value: &Value, f: &dyn Fn(&str) -> String) -> Value {
    match value {
        Value::String(s) => Value::String(f(s)),
        Value::Array(items) => Value::Array(items.iter().map(|v| map_strings(v, f)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), map_strings(v, f)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether `c` can be part of a file name as people write them in text.
fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '~' | '+' | '%')
}

/// Whether a path prefix may start at byte `at` of `text`.
fn starts_here(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !is_name_char(c))
}

/// Whether a path prefix that ends at byte `at` of `text` is whole: the
/// text ends, a `/` follows, or a character that cannot continue a name (a
/// `.` continues it only when a name character follows it).
fn ends_here(text: &str, at: usize) -> bool {
    let mut rest = text[at..].chars();
    match rest.next() {
        None | Some('/') => true,
        Some('.') => rest.next().is_none_or(|c| !is_name_char(c)),
        Some(c) => !is_name_char(c),
    }
}

/// Replaces each whole-path occurrence of a `from` by its `to`, trying the
/// pairs in the order given (longest first) at each position, in one pass.
fn replace_prefixes<'a>(
    text: &str,
    pairs: impl Iterator<Item = (&'a str, &'a str)> + Clone,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = text[at..].find('/') {
        let start = at + found;
        let hit = starts_here(text, start)
            .then(|| {
                pairs.clone().find(|(from, _)| {
                    text[start..].starts_with(from) && ends_here(text, start + from.len())
                })
            })
            .flatten();
        match hit {
            Some((from, to)) => {
                out.push_str(&text[copied..start]);
                out.push_str(to);
                copied = start + from.len();
                at = copied;
            }
            None => at = start + 1,
        }
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn presenter() -> Presenter {
        Presenter::default()
            .with_root(
                "/workspace",
                ["/tmp/x/harness-ws-AbC", "/private/tmp/x/harness-ws-AbC"],
            )
            .with_root("/scratch", ["/tmp/x/harness-scratch-Q1/"])
    }

    #[test]
    fn real_paths_become_stable_names_at_path_boundaries() {
        let p = presenter();
        assert_eq!(
            p.text(
                "cd /tmp/x/harness-ws-AbC && ls /private/tmp/x/harness-ws-AbC/src; \
                 root /tmp/x/harness-ws-AbC. log '/tmp/x/harness-scratch-Q1/bash-1.log'\n\
                 file:///tmp/x/harness-ws-AbC/a%20b PWD=/tmp/x/harness-ws-AbC"
            ),
            "cd /workspace && ls /workspace/src; root /workspace. log '/scratch/bash-1.log'\n\
             file:///workspace/a%20b PWD=/workspace"
        );
    }

    #[test]
    fn longer_or_neighbouring_names_are_left_alone() {
        let p = presenter();
        let untouched = "/tmp/x/harness-ws-AbCd /tmp/x/harness-ws-AbC.txt \
                         /tmp/x/harness-ws-AbC-old a/tmp/x/harness-ws-AbC \
                         ~/tmp/x/harness-ws-AbC /tmp/x/harness-ws-Ab";
        assert_eq!(p.text(untouched), untouched);
        assert_eq!(Presenter::default().text(untouched), untouched);
    }

    #[test]
    fn stable_names_in_arguments_execute_as_real_paths() {
        let p = presenter();
        let call = ToolCall::new(
            "c1",
            "bash",
            json!({"command": "cat '/scratch/bash-1.log' /workspace/a", "n": 3,
                   "list": ["/workspace", "./workspace/x", "/workspaces", "/a/workspace"]}),
        );
        assert_eq!(
            p.for_execution(&call).arguments,
            CallArguments::Json(json!({
                "command": "cat '/tmp/x/harness-scratch-Q1/bash-1.log' /tmp/x/harness-ws-AbC/a",
                "n": 3,
                "list": ["/tmp/x/harness-ws-AbC", "./workspace/x", "/workspaces", "/a/workspace"]
            }))
        );
        let raw = ToolCall {
            id: "c2".into(),
            name: "read".into(),
            arguments: CallArguments::Text(r#"{"path": "/workspace/a.txt"#.into()),
        };
        assert_eq!(
            p.for_execution(&raw).arguments,
            CallArguments::Text(r#"{"path": "/tmp/x/harness-ws-AbC/a.txt"#.into())
        );
    }

    #[test]
    fn results_and_updates_are_presented_in_text_and_details() {
        let p = presenter();
        let result = ToolResult {
            is_error: true,
            content: vec![
                Content::text("Full output: /tmp/x/harness-scratch-Q1/bash-1.log"),
                Content::Image {
                    data: "/tmp/x/harness-ws-AbC".into(),
                    mime_type: "image/png".into(),
                },
            ],
            details: Some(
                json!({"full_output_path": "/tmp/x/harness-scratch-Q1/bash-1.log",
                                 "nested": [{"/tmp/x/harness-ws-AbC": "/tmp/x/harness-ws-AbC"}]}),
            ),
            internal_error: Some("panic in /tmp/x/harness-ws-AbC".into()),
            facts: None,
            call_id: None,
        };
        assert_eq!(
            p.result(result),
            ToolResult {
                is_error: true,
                content: vec![
                    Content::text("Full output: /scratch/bash-1.log"),
                    Content::Image {
                        data: "/tmp/x/harness-ws-AbC".into(),
                        mime_type: "image/png".into(),
                    },
                ],
                details: Some(json!({"full_output_path": "/scratch/bash-1.log",
                                     "nested": [{"/tmp/x/harness-ws-AbC": "/workspace"}]})),
                internal_error: Some("panic in /workspace".into()),
                facts: None,
                call_id: None,
            }
        );
        let update = ToolUpdate {
            content: vec![Content::text("/tmp/x/harness-ws-AbC\n")],
            details: None,
        };
        assert_eq!(
            p.update(update).content,
            vec![Content::text("/workspace\n")]
        );
    }

    #[test]
    fn a_write_reports_the_bytes_of_the_content_as_the_model_sent_it() {
        let p = presenter();
        // "/workspace/run.sh" (17 bytes) is written as
        // "/tmp/x/harness-ws-AbC/run.sh" (28): 11 more per mention.
        let content = "cd /workspace/src\n";
        let call = ToolCall::new("c", "write", json!({"path": "a.sh", "content": content}));
        let real = p.for_execution(&call);
        let real_len = match &real.arguments {
            CallArguments::Json(v) => v["content"].as_str().unwrap().len(),
            CallArguments::Text(_) => unreachable!(),
        };
        assert_eq!((content.len(), real_len), (18, 29));
        let written = |bytes: usize| ToolResult {
            is_error: false,
            content: vec![Content::text(format!(
                "Successfully wrote {bytes} bytes to a.sh"
            ))],
            details: Some(json!({"bytes": bytes, "created": true})),
            internal_error: None,
            facts: None,
            call_id: None,
        };
        assert_eq!(p.result_for(&call, written(29)), written(18));
        // Raw argument text too; other tools and errors are left alone.
        let raw = ToolCall {
            arguments: CallArguments::Text(json!({"path": "a.sh", "content": content}).to_string()),
            ..call.clone()
        };
        assert_eq!(p.result_for(&raw, written(29)), written(18));
        let other = ToolCall::new("c", "edit", json!({"path": "a.sh", "content": content}));
        assert_eq!(p.result_for(&other, written(29)), written(29));
        let plain = ToolCall::new("c", "write", json!({"path": "a.sh", "content": "x"}));
        assert_eq!(p.result_for(&plain, written(1)), written(1));
        assert_eq!(
            Presenter::default().result_for(&call, written(29)),
            written(29)
        );
    }

    #[test]
    fn presenting_then_executing_gives_the_real_path_back() {
        let p = presenter();
        for real in [
            "/tmp/x/harness-ws-AbC/src/a.rs",
            "/private/tmp/x/harness-ws-AbC",
            "/tmp/x/harness-scratch-Q1/bash-1.log",
        ] {
            let shown = p.text(real);
            assert!(!shown.contains("/tmp/"), "{shown}");
            assert_eq!(p.text(&p.real_text(&shown)), shown);
        }
    }

    #[test]
    fn unusable_roots_change_nothing() {
        let p = Presenter::default()
            .with_root("/workspace", ["/"])
            .with_root("/scratch", Vec::<String>::new());
        assert!(p.is_identity());
        assert_eq!(p.text("/etc/passwd"), "/etc/passwd");
    }
}
