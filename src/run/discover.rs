//! Finding scenario files and loading them: sorted paths, suite files,
//! filters by name, path and tag.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::Path;
use std::path::PathBuf;

use regex::Regex;

use crate::scenario::Scenario;
use crate::scenario::ScenarioError;
use crate::scenario::Suite;
use crate::scenario::load::SUITE_FILE;
use crate::scenario::load_file;
use crate::tools::place::spawn_helpers;

/// What to select. A scenario is selected when all of these hold:
///
/// - with `tags`, it carries one of them;
/// - with `filters` or `exact`, one filter matches somewhere in its name or
///   its file's path, or its name is one of `exact`;
/// - with `only`, its name is in that set (`--last-failed`);
/// - no `exclude` pattern matches its name or its file's path.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Regexes searched for in the name and the path (`--filter`).
    pub filters: Vec<Regex>,
    /// Whole names (`--exact`).
    pub exact: Vec<String>,
    /// Regexes that deselect (`--exclude`, `--skip`).
    pub exclude: Vec<Regex>,
    /// Only scenarios carrying one of these tags (empty: all).
    pub tags: Vec<String>,
    /// Only scenarios of these names (`--last-failed`).
    pub only: Option<BTreeSet<String>>,
}

/// A `--filter` or `--exclude` pattern that is not a regex.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{flag} `{pattern}` is not a valid regex: {reason}; escape special characters with `\\` \
     (`\\(D2\\)`), or select a whole name with --exact NAME"
)]
pub(crate) struct PatternError {
    /// The flag.
    pub flag: &'static str,
    /// The pattern as given.
    pub pattern: String,
    /// What the regex parser said.
    pub reason: String,
}

/// Compiles the patterns of `flag`, each a regex.
pub(crate) fn patterns(flag: &'static str, given: &[String]) -> Result<Vec<Regex>, PatternError> {
    given
        .iter()
        .map(|pattern| {
            Regex::new(pattern).map_err(|err| PatternError {
                flag,
                pattern: pattern.clone(),
                reason: match err {
                    regex::Error::Syntax(text) => text
                        .lines()
                        .rev()
                        .find(|line| line.starts_with("error: "))
                        .map_or(text.clone(), |line| line["error: ".len()..].to_owned()),
                    other => other.to_string(),
                },
            })
        })
        .collect()
}

impl Selection {
    /// Whether `scenario` is selected.
    pub fn matches(&self, scenario: &Scenario) -> bool {
        let path = scenario.file.display().to_string();
        let found = |re: &Regex| re.is_match(&scenario.name) || re.is_match(&path);
        if !self.tags.is_empty() && !scenario.tags.iter().any(|t| self.tags.contains(t)) {
            return false;
        }
        let by_name = !self.filters.is_empty() || !self.exact.is_empty();
        if by_name && !self.filters.iter().any(found) && !self.exact.contains(&scenario.name) {
            return false;
        }
        if let Some(only) = &self.only
            && !only.contains(&scenario.name)
        {
            return false;
        }
        !self.exclude.iter().any(found)
    }

    /// Whether anything narrows the selection.
    pub fn narrows(&self) -> bool {
        !(self.filters.is_empty()
            && self.exact.is_empty()
            && self.exclude.is_empty()
            && self.tags.is_empty()
            && self.only.is_none())
    }
}

/// Scenario files, loaded.
#[derive(Debug, Default)]
pub struct Discovery {
    /// The paths searched.
    pub(crate) paths: Vec<PathBuf>,
    /// Every valid scenario, in path order (documents in file order).
    pub(crate) scenarios: Vec<Scenario>,
    /// Every problem found while loading.
    pub(crate) errors: Vec<ScenarioError>,
    /// The suite files that applied, in the order first used.
    pub(crate) suites: Vec<Suite>,
    /// Whether selection flags narrowed what was found.
    pub(crate) narrowed: bool,
}

/// The suite file at `path` (`harness.yaml`), loaded and checked as
/// discovery loads it: its run settings (`jobs`, `tokenizer`, `gates`)
/// checked by this layer, every problem at file:line:col.
pub fn load_suite(path: &Path) -> Result<Suite, Vec<ScenarioError>> {
    Suite::load_all(path, &super::settings::suite_problems)
}

impl Discovery {
    /// Every valid scenario found, in path order (documents in file order).
    pub fn scenarios(&self) -> &[Scenario] {
        &self.scenarios
    }

    /// Every problem found while loading, at file:line:col.
    pub fn errors(&self) -> &[ScenarioError] {
        &self.errors
    }
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

/// The suite files of one discovery, each read and checked once, keyed by
/// its absolute path: searching the directories (for a suite's fixtures
/// root) and loading the scenarios (for its settings) share them.
#[derive(Debug, Default)]
struct Suites {
    loaded: BTreeMap<PathBuf, Result<Suite, Vec<ScenarioError>>>,
}

impl Suites {
    /// The suite file at `path` (absolute), loaded on first use.
    fn get(&mut self, path: &Path) -> &Result<Suite, Vec<ScenarioError>> {
        self.loaded
            .entry(path.to_path_buf())
            .or_insert_with(|| Suite::load_all(path, &super::settings::suite_problems))
    }

    /// The suite file at `path`, if [`Suites::get`] loaded it.
    fn peek(&self, path: &Path) -> Option<&Result<Suite, Vec<ScenarioError>>> {
        self.loaded.get(path)
    }
}

/// Fewest files each loading thread gets: below that, starting a thread
/// costs more than it saves.
const FILES_PER_THREAD: usize = 32;

/// Most threads loading scenario files.
const MAX_LOAD_THREADS: usize = 8;

/// How many threads load `count` files: one per core, each with at least
/// [`FILES_PER_THREAD`] of them.
fn load_threads(count: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (count / FILES_PER_THREAD).clamp(1, cores.min(MAX_LOAD_THREADS))
}

/// `load(index)` for every index below `count`, on `threads` threads, in
/// the indexes' order.
fn load_all<T: Send>(count: usize, threads: usize, load: impl Fn(usize) -> T + Sync) -> Vec<T> {
    if threads <= 1 {
        return (0..count).map(load).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let take = || {
        let mut mine = Vec::new();
        loop {
            let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if index >= count {
                return mine;
            }
            mine.push((index, load(index)));
        }
    };
    let mut all: Vec<(usize, T)> = std::thread::scope(|scope| {
        // Each helper starts on a CPU of its own, not queued behind this
        // thread, which starts loading at once.
        let helpers = spawn_helpers(scope, threads - 1, &take);
        let mut all = take();
        for helper in helpers {
            // A panic in a helper is a panic of the load, as it would be
            // on one thread.
            match helper.join() {
                Ok(part) => all.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    });
    all.sort_unstable_by_key(|(index, _)| *index);
    all.into_iter().map(|(_, loaded)| loaded).collect()
}

/// `path` made absolute against the current directory (`None` when the
/// current directory is unknown and `path` is relative).
fn absolute(path: &Path, cwd: Option<&Path>) -> Option<PathBuf> {
    if path.is_absolute() {
        Some(path.to_path_buf())
    } else {
        cwd.map(|cwd| cwd.join(path))
    }
}

/// Every scenario file under `paths`, sorted, and a problem for each path
/// that cannot be searched. Directories named like a fixtures root and
/// hidden directories are not searched.
///
/// Only regular files (or symlinks to them) are scenario files: a FIFO, a
/// socket or a device named `*.yaml` would block or never end when read,
/// so each is a problem at its path instead, and the others still load.
fn scenario_files(paths: &[PathBuf], suites: &mut Suites) -> (Vec<PathBuf>, Vec<ScenarioError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(err) => {
                errors.push(ScenarioError::at_start(
                    path,
                    format!("cannot open the scenario path: {err}"),
                ));
                continue;
            }
        };
        if meta.is_dir() {
            if let Err(err) = collect(path, &mut files, &mut errors, suites) {
                errors.push(ScenarioError::at_start(
                    path,
                    format!("cannot list the scenario directory: {err}"),
                ));
            }
        } else if let Some(kind) = not_regular(&meta) {
            errors.push(not_regular_error(path, kind));
        } else {
            files.push(path.clone());
        }
    }
    files.sort();
    files.dedup();
    // Directories list in no particular order; problems come by path.
    errors.sort_by(|a, b| a.path.cmp(&b.path));
    (files, errors)
}

/// What a file that is neither a directory nor a regular file is.
fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
    if meta.is_dir() {
        return None;
    }
    crate::scenario::text_file::not_regular(meta.file_type())
}

fn not_regular_error(path: &Path, kind: &str) -> ScenarioError {
    ScenarioError::at_start(
        path,
        format!(
            "{kind} cannot be a scenario file; only regular files are loaded (rename it, or \
             move it out of the scenario directories)"
        ),
    )
}

fn collect(
    dir: &Path,
    files: &mut Vec<PathBuf>,
    errors: &mut Vec<ScenarioError>,
    suites: &mut Suites,
) -> std::io::Result<()> {
    let fixtures = fixtures_dir_of(dir, suites);
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
            collect(&path, files, errors, suites)?;
        } else if is_scenario_file(&path) {
            // Follows a symlink: what matters is what reading would open.
            match std::fs::metadata(&path) {
                Ok(meta) => match not_regular(&meta) {
                    None if meta.is_file() => files.push(path),
                    None => {}
                    Some(kind) => errors.push(not_regular_error(&path, kind)),
                },
                Err(err) => errors.push(ScenarioError::at_start(
                    &path,
                    format!("cannot open the scenario file: {err}"),
                )),
            }
        }
    }
    Ok(())
}

/// The fixtures root declared by a suite file in `dir`, if any, as a path
/// below `dir` (as the directory's entries are named). A suite file that
/// does not load declares none.
fn fixtures_dir_of(dir: &Path, suites: &mut Suites) -> Option<PathBuf> {
    let suite = dir.join(SUITE_FILE);
    if suite.symlink_metadata().is_err() {
        return Some(dir.join("fixtures"));
    }
    let cwd = std::env::current_dir().ok();
    let declared = |loaded: &Result<Suite, _>| loaded.as_ref().ok().map(|s| s.fixtures_in(dir));
    match absolute(&suite, cwd.as_deref()) {
        Some(path) => declared(suites.get(&path)),
        None => declared(&Suite::load_all(&suite, &super::settings::suite_problems)),
    }
}

/// The nearest `harness.yaml` above `file`, looking no higher than the
/// root of the git repository the current directory is in (the nearest
/// directory above it with a `.git`), or than the current directory when
/// it is in none (the file system root when `file` is outside it). So
/// `harness run .` in `scenarios/read/` uses `scenarios/harness.yaml`.
pub(crate) fn suite_file_for(file: &Path) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok();
    let absolute = absolute(file, cwd.as_deref())?;
    let top = cwd.as_deref().map(|cwd| {
        cwd.ancestors()
            .find(|d| d.join(".git").symlink_metadata().is_ok())
            .unwrap_or(cwd)
            .to_path_buf()
    });
    let mut dir = absolute.parent();
    while let Some(d) = dir {
        // Whatever is there is the suite file: one that cannot be read (a
        // FIFO, a dangling link) is a problem to report, not to pass by.
        let candidate = d.join(SUITE_FILE);
        if candidate.symlink_metadata().is_ok() {
            return Some(candidate);
        }
        if top.as_deref() == Some(d) {
            break;
        }
        dir = d.parent();
    }
    None
}

/// Where a scenario's name is written, for the problem of a name used
/// twice.
struct NameAt {
    file: PathBuf,
    /// 1-based, when the file holds several documents.
    document: Option<usize>,
    line: usize,
    column: usize,
}

impl NameAt {
    fn of(scenario: &Scenario) -> Self {
        Self {
            file: scenario.file.clone(),
            document: scenario
                .in_multi_document_file
                .then_some(scenario.document + 1),
            line: scenario.name_at.line,
            column: scenario.name_at.column,
        }
    }

    /// The problem of this name, `name`, being `first`'s too: at this
    /// one, naming both documents and lines.
    fn duplicate_of(&self, first: &Self, name: &str) -> ScenarioError {
        let this = self
            .document
            .map(|d| format!(" (document {d} of this file)"))
            .unwrap_or_default();
        let other = if first.file == self.file {
            match first.document {
                Some(d) => format!("document {d}, at line {}", first.line),
                None => format!("the scenario at line {}", first.line),
            }
        } else {
            let document = first
                .document
                .map(|d| format!(" (document {d} of that file)"))
                .unwrap_or_default();
            format!(
                "the scenario at {}:{}:{}{document}",
                first.file.display(),
                first.line,
                first.column
            )
        };
        ScenarioError {
            path: self.file.clone(),
            line: self.line,
            column: self.column,
            message: format!(
                "name: the scenario name `{name}`{this} is also the name of {other}; names must \
                 be unique in the suite"
            ),
        }
    }
}

/// Finds, loads and selects scenarios. Problems in one file do not stop
/// the others from loading.
pub fn discover(paths: &[PathBuf], selection: &Selection) -> Discovery {
    discover_with(paths, selection, None)
}

/// [`discover`], with `variant` (a suite file of `harness run --variant`)
/// in the place of every scenario file's suite file: the scenarios load
/// with its defaults, and it gives the run's. Which files are scenario
/// files (and which directory is a fixtures root) is still found from
/// the suite files in the directories.
pub fn discover_with(
    paths: &[PathBuf],
    selection: &Selection,
    variant: Option<&Suite>,
) -> Discovery {
    let mut discovery = Discovery {
        paths: paths.to_vec(),
        narrowed: selection.narrows(),
        ..Discovery::default()
    };
    let mut suites = Suites::default();
    let (files, errors) = scenario_files(paths, &mut suites);
    discovery.errors.extend(errors);
    let no_suite = Ok(Suite::default());
    let mut names: BTreeMap<String, NameAt> = BTreeMap::new();
    let variant = variant.map(|suite| Ok::<_, Vec<ScenarioError>>(suite.clone()));
    // Each file's suite file, read once, before any file loads.
    let suite_paths: Vec<Option<PathBuf>> = files
        .iter()
        .map(|file| variant.is_none().then(|| suite_file_for(file)).flatten())
        .collect();
    for path in suite_paths.iter().flatten() {
        suites.get(path);
    }
    let suite_of = |index: usize| match (&variant, &suite_paths[index]) {
        (Some(variant), _) => variant,
        (None, Some(path)) => suites.peek(path).unwrap_or(&no_suite),
        (None, None) => &no_suite,
    };
    // The files load on several threads; what they hold is then taken in
    // the files' order, so names, errors and the selection do not depend
    // on which thread loaded what.
    let loaded = load_all(
        files.len(),
        load_threads(files.len()),
        |index| match suite_of(index) {
            Ok(suite) => Some(load_file(&files[index], suite)),
            Err(_) => None,
        },
    );
    for (index, loaded) in loaded.into_iter().enumerate() {
        let (scenarios, errors) = match suite_of(index) {
            Ok(suite) => {
                if suite.dir.is_some() && !discovery.suites.iter().any(|s| s.dir == suite.dir) {
                    discovery.suites.push(suite.clone());
                }
                // Loaded, since its suite is good.
                loaded.unwrap_or_default()
            }
            Err(errs) => {
                for err in errs.iter() {
                    if !discovery.errors.contains(err) {
                        discovery.errors.push(err.clone());
                    }
                }
                continue;
            }
        };
        discovery.errors.extend(errors);
        for scenario in scenarios {
            let here = NameAt::of(&scenario);
            if let Some(first) = names.get(&scenario.name) {
                discovery
                    .errors
                    .push(here.duplicate_of(first, &scenario.name));
                continue;
            }
            names.insert(scenario.name.clone(), here);
            if selection.matches(&scenario) {
                discovery.scenarios.push(scenario);
            }
        }
    }
    discovery
}

#[cfg(test)]
#[path = "discover_tests.rs"]
mod tests;
