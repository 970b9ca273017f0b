//! A problem of a scenario, suite or limits file, located at
//! `file:line:col`, and the problems of one document before they are
//! placed in their file.

use std::fmt;
use std::path::Path;
use std::path::PathBuf;

use crate::scenario::de::DeProblem;
use crate::scenario::yaml;
use crate::scenario::yaml::PathText;
use crate::scenario::yaml::Pos;

/// A problem in a scenario or suite file, with where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong and what to change (after the path of the node in
    /// the document, when there is one: `model[2].expect: …`).
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.path.display(),
            self.line,
            self.column,
            self.message
        )
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    /// A problem with a whole file (or path), placed at its start.
    pub fn at_start(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: message.into(),
        }
    }
}

/// A problem found in one document: where, the path of its node, what.
#[derive(Clone, Debug)]
pub(super) struct Problem {
    pub(super) pos: Pos,
    pub(super) path: String,
    pub(super) message: String,
}

impl Problem {
    pub(super) fn into_error(self, file: &Path) -> ScenarioError {
        ScenarioError {
            path: file.to_path_buf(),
            line: self.pos.line,
            column: self.pos.column,
            message: if self.path.is_empty() {
                self.message
            } else {
                format!("{}: {}", self.path, self.message)
            },
        }
    }
}

impl From<yaml::TreeProblem> for Problem {
    fn from(p: yaml::TreeProblem) -> Self {
        Self {
            pos: p.pos,
            path: p.path,
            message: p.message,
        }
    }
}

impl From<DeProblem> for Problem {
    fn from(p: DeProblem) -> Self {
        Self {
            pos: p.pos,
            path: PathText(&p.path).to_string(),
            message: p.message,
        }
    }
}

/// Problems in position order, as a file is read.
pub(super) fn into_errors(mut problems: Vec<Problem>, file: &Path) -> Vec<ScenarioError> {
    problems.sort_by_key(|p| p.pos);
    problems.into_iter().map(|p| p.into_error(file)).collect()
}
