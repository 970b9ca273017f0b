//! Snapshot files over a whole run: stored files are read once and shared
//! by the scenarios of a file; new and changed values are written when the
//! run ends.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::Value;

use crate::judge::SnapshotOutcome;
use crate::scenario::snapshot;

use super::outcome::ScenarioOutcome;

/// The stored snapshots of one file, or why they could not be read.
pub(super) type StoredSnapshots = Result<BTreeMap<String, Value>, String>;

/// Stored snapshot files, read once per run.
#[derive(Debug, Default)]
pub(super) struct SnapshotCache {
    files: Mutex<BTreeMap<PathBuf, StoredSnapshots>>,
}

impl SnapshotCache {
    /// The stored snapshots of `path`.
    pub(super) fn get(&self, path: &Path) -> StoredSnapshots {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        files
            .entry(path.to_path_buf())
            .or_insert_with(|| snapshot::load(path))
            .clone()
    }
}

/// Writes snapshot files after the run: accepted values with
/// `update_snapshots`, otherwise a `.snap.yaml.new` beside any file whose
/// snapshots are missing or changed.
pub(super) fn write_snapshots(outcomes: &[ScenarioOutcome], update: bool) {
    let mut by_file: BTreeMap<&Path, Vec<&SnapshotOutcome>> = BTreeMap::new();
    for outcome in outcomes {
        if let Some(file) = &outcome.snapshot_file
            && !outcome.snapshots.is_empty()
        {
            by_file
                .entry(file.as_path())
                .or_default()
                .extend(outcome.snapshots.iter());
        }
    }
    for (file, entries) in by_file {
        let changed = entries.iter().any(|e| !e.matched);
        let new_file = snapshot::new_path(file);
        if !changed {
            let _ = std::fs::remove_file(&new_file);
            continue;
        }
        let mut stored = snapshot::load(file).unwrap_or_default();
        for entry in entries {
            stored.insert(entry.key.clone(), entry.value.clone());
        }
        let target = if update {
            file.to_path_buf()
        } else {
            new_file.clone()
        };
        if snapshot::save(&target, &stored).is_ok() && update {
            let _ = std::fs::remove_file(&new_file);
        }
    }
}
