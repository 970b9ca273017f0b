//! Finding scenario files and loading them: sorted paths, suite files,
//! filters by name, path and tag.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use regex::Regex;

use crate::scenario::Scenario;
use crate::scenario::ScenarioError;
use crate::scenario::Suite;
use crate::scenario::load::SUITE_FILE;
use crate::scenario::load_file;

/// What to select.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Substring of, or regex matching, the name or the path.
    pub filter: Option<String>,
    /// Only scenarios carrying one of these tags (empty: all).
    pub tags: Vec<String>,
}

impl Selection {
    /// Whether `scenario` is selected.
    pub fn matches(&self, scenario: &Scenario) -> bool {
        if !self.tags.is_empty() && !scenario.tags.iter().any(|t| self.tags.contains(t)) {
            return false;
        }
        let Some(filter) = &self.filter else {
            return true;
        };
        let path = scenario.file.display().to_string();
        if scenario.name.contains(filter.as_str()) || path.contains(filter.as_str()) {
            return true;
        }
        Regex::new(filter).is_ok_and(|re| re.is_match(&scenario.name) || re.is_match(&path))
    }
}

/// Scenario files, loaded.
#[derive(Debug, Default)]
pub struct Discovery {
    /// The paths searched.
    pub paths: Vec<PathBuf>,
    /// Every valid scenario, in path order (documents in file order).
    pub scenarios: Vec<Scenario>,
    /// Every problem found while loading.
    pub errors: Vec<ScenarioError>,
    /// The suite files that applied, in the order first used.
    pub suites: Vec<Suite>,
}

/// Whether a file name is a scenario file.
fn is_scenario_file(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    (name.ends_with(".yaml") || name.ends_with(".yml"))
        && name != SUITE_FILE
        && !name.ends_with(".snap.yaml")
}

/// Every scenario file under `paths`, sorted, with the suite directory each
/// belongs to. Directories named like a fixtures root and hidden
/// directories are not searched.
pub fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ScenarioError> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|err| {
            ScenarioError::at_start(path, format!("cannot open the scenario path: {err}"))
        })?;
        if meta.is_dir() {
            collect(path, &mut files).map_err(|err| {
                ScenarioError::at_start(path, format!("cannot list the scenario directory: {err}"))
            })?;
        } else {
            files.push(path.clone());
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let fixtures = fixtures_dir_of(dir);
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if name.starts_with('.') || Some(&path) == fixtures.as_ref() {
                continue;
            }
            collect(&path, files)?;
        } else if is_scenario_file(&path) {
            files.push(path);
        }
    }
    Ok(())
}

/// The fixtures root declared by a suite file in `dir`, if any.
fn fixtures_dir_of(dir: &Path) -> Option<PathBuf> {
    let suite = dir.join(SUITE_FILE);
    if suite.is_file() {
        Suite::load(&suite).ok().map(|s| s.fixtures_root())
    } else {
        Some(dir.join("fixtures"))
    }
}

/// The nearest `harness.yaml` above `file`, looking no higher than the
/// current directory (or the file system root when `file` is outside it).
pub fn suite_file_for(file: &Path) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok();
    let absolute = if file.is_absolute() {
        file.to_path_buf()
    } else {
        cwd.as_ref()?.join(file)
    };
    let mut dir = absolute.parent();
    while let Some(d) = dir {
        let candidate = d.join(SUITE_FILE);
        if candidate.is_file() {
            return Some(candidate);
        }
        if cwd.as_deref() == Some(d) {
            break;
        }
        dir = d.parent();
    }
    None
}

/// Finds, loads and selects scenarios. Problems in one file do not stop
/// the others from loading.
pub fn discover(paths: &[PathBuf], selection: &Selection) -> Discovery {
    let mut discovery = Discovery {
        paths: paths.to_vec(),
        ..Discovery::default()
    };
    let files = match scenario_files(paths) {
        Ok(files) => files,
        Err(err) => {
            discovery.errors.push(err);
            return discovery;
        }
    };
    let mut suites: BTreeMap<Option<PathBuf>, Result<Suite, ScenarioError>> = BTreeMap::new();
    let mut names: BTreeMap<String, PathBuf> = BTreeMap::new();
    for file in files {
        let suite_path = suite_file_for(&file);
        let suite = suites
            .entry(suite_path.clone())
            .or_insert_with(|| match &suite_path {
                Some(p) => Suite::load(p),
                None => Ok(Suite::default()),
            });
        let suite = match suite {
            Ok(suite) => {
                if suite.dir.is_some() && !discovery.suites.iter().any(|s| s.dir == suite.dir) {
                    discovery.suites.push(suite.clone());
                }
                suite
            }
            Err(err) => {
                if !discovery.errors.contains(err) {
                    discovery.errors.push(err.clone());
                }
                continue;
            }
        };
        let (scenarios, errors) = load_file(&file, suite);
        discovery.errors.extend(errors);
        for scenario in scenarios {
            if let Some(other) = names.get(&scenario.name) {
                discovery.errors.push(ScenarioError::at_start(
                    &file,
                    format!(
                        "scenario name `{}` is also used in {}; names must be unique in the suite",
                        scenario.name,
                        other.display()
                    ),
                ));
                continue;
            }
            names.insert(scenario.name.clone(), file.clone());
            if selection.matches(&scenario) {
                discovery.scenarios.push(scenario);
            }
        }
    }
    discovery
}
