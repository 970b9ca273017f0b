//! `--sync-reads` for an imported session (docs/replay.md): before a
//! replayed read or edit runs, the file it names is given the text the
//! recorded session saw, so a read of a file that changed since agrees.
//! (The comparison of the results themselves is the judge's:
//! `judge/drift.rs`.)

use std::path::Path;
use std::path::PathBuf;

use crate::agent::AgentEvent;
use crate::agent::Presenter;
use crate::judge::drift::recorded_text;
use crate::judge::drift::text_of;
use crate::scenario::replay::RecordedAnswer;
use crate::scenario::replay::ReplayPlan;
use crate::tools::CallArguments;
use crate::tools::ops::ConfinedFs;
use crate::tools::ops::FsOps;

/// `--sync-reads`: before a read marked `sync`, its recorded text is
/// written into the file it reads, through the same confined handle the
/// tools use (a path outside the workspace is never written).
pub(crate) struct Syncer<'a> {
    plan: &'a ReplayPlan,
    root: PathBuf,
    presenter: &'a Presenter,
    fs: Option<ConfinedFs>,
    /// Files written.
    pub synced: u64,
}

impl<'a> Syncer<'a> {
    /// A syncer for the workspace at `root` (its real path).
    pub(crate) fn new(plan: &'a ReplayPlan, root: &Path, presenter: &'a Presenter) -> Self {
        let wanted = plan.recorded.values().any(|r| r.sync);
        Self {
            plan,
            root: root.to_path_buf(),
            presenter,
            fs: wanted.then(|| ConfinedFs::new(root).ok()).flatten(),
            synced: 0,
        }
    }

    /// Sees an event of the loop; a call start is seen before the call is
    /// prepared.
    pub(crate) fn see(&mut self, event: &AgentEvent) {
        let AgentEvent::ToolExecutionStart {
            call_id,
            tool_name,
            args,
        } = event
        else {
            return;
        };
        let Some(fs) = &self.fs else {
            return;
        };
        let Some(recorded) = self.plan.recorded.get(call_id) else {
            return;
        };
        if !recorded.sync || !matches!(tool_name.as_str(), "read" | "edit") {
            return;
        }
        let CallArguments::Json(args) = args else {
            return;
        };
        let Some(path) = args.get("path").and_then(|p| p.as_str()) else {
            return;
        };
        let real = PathBuf::from(self.presenter.real_text(path));
        let rel = if real.is_absolute() {
            match real.strip_prefix(&self.root) {
                Ok(rel) => rel.to_path_buf(),
                Err(_) => return,
            }
        } else {
            real
        };
        // What the file held: an edit's recorded original, a read's answer
        // (the file's text, for a client whose read text is numbered), or
        // the read's text itself.
        let text = match (tool_name.as_str(), &recorded.original, &recorded.answer) {
            ("edit", Some(original), _) => text_of(original),
            ("edit", None, _) => return,
            (
                _,
                _,
                Some(RecordedAnswer {
                    text: Some(text), ..
                }),
            ) => text_of(text),
            _ => recorded_text(recorded),
        };
        let Ok(text) = text else {
            return;
        };
        let target = self.root.join(&rel);
        if let Some(parent) = target.parent()
            && fs.create_dir_all(parent).is_err()
        {
            return;
        }
        if fs.write(&target, text.as_bytes()).is_ok() {
            self.synced += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use std::collections::BTreeMap;

    use super::*;
    use crate::scenario::replay::Recorded;
    use crate::scenario::replay::RecordedText;

    fn plan(text: &str) -> ReplayPlan {
        let recorded = |sync| Recorded {
            is_error: false,
            text: RecordedText::Inline(text.to_owned()),
            images: 0,
            sync,
            answer: None,
            original: None,
            nonzero_exit: None,
        };
        ReplayPlan {
            recorded: BTreeMap::from([
                ("in".to_owned(), recorded(true)),
                ("out".to_owned(), recorded(true)),
                ("plain".to_owned(), recorded(false)),
            ]),
            ..ReplayPlan::default()
        }
    }

    fn start(id: &str, path: &str) -> AgentEvent {
        AgentEvent::ToolExecutionStart {
            call_id: id.to_owned(),
            tool_name: "read".to_owned(),
            args: CallArguments::Json(json!({ "path": path })),
        }
    }

    #[test]
    fn a_synced_read_writes_inside_the_workspace_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("ws")).unwrap();
        let ws = root.join("ws");
        let presenter = Presenter::default().with_root("/workspace", [&ws]);
        let plan = plan("as recorded\n");
        let mut syncer = Syncer::new(&plan, &ws, &presenter);
        syncer.see(&start("in", "/workspace/src/a.txt"));
        syncer.see(&start("out", "../outside.txt"));
        syncer.see(&start("plain", "b.txt"));
        assert_eq!(syncer.synced, 1);
        assert_eq!(
            std::fs::read_to_string(ws.join("src/a.txt")).unwrap(),
            "as recorded\n"
        );
        assert!(!root.join("outside.txt").exists());
        assert!(!ws.join("b.txt").exists());
    }
}
