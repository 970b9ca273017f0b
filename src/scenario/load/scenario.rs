//! What loading makes of a scenario document: a [`Scenario`], ready to
//! run (its workspace plan, script, checks and conditions).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use regex::Regex;

use crate::agent::FauxScript;
use crate::scenario::model::CallExpect;
use crate::scenario::model::RunExpect;
use crate::scenario::replay::ReplayPlan;
use crate::scenario::template::Template;
use crate::tools::Limits;

/// What the temporary workspace is built from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkspacePlan {
    /// A fixture directory to copy first.
    pub fixture: Option<PathBuf>,
    /// Files to create, by relative path.
    pub files: Vec<(String, FileContent)>,
    /// Run `git init`.
    pub git: bool,
    /// Check out this repository at this revision first (`git_checkout`).
    pub git_checkout: Option<GitCheckout>,
}

/// A repository checked out at a revision into the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitCheckout {
    /// The repository's directory.
    pub repo: PathBuf,
    /// The revision.
    pub rev: String,
}

/// One file to create.
#[derive(Clone, Debug, PartialEq)]
pub enum FileContent {
    /// Bytes (BOM already added), with an optional mode.
    Bytes {
        /// The bytes.
        data: Vec<u8>,
        /// Permission bits.
        mode: Option<u32>,
    },
    /// A `repeat:` file, made only when the workspace is built (a suite
    /// of large generated files never holds them all in memory).
    Generated {
        /// A UTF-8 byte-order mark before the copies.
        bom: bool,
        /// The parsed template.
        template: Template,
        /// How many copies.
        times: usize,
        /// Written between two copies.
        join: String,
        /// Permission bits.
        mode: Option<u32>,
    },
    /// A symlink.
    Symlink(String),
    /// An empty directory, with an optional mode.
    Dir(Option<u32>),
}

impl FileContent {
    /// The bytes of a file (`None` for a symlink or a directory), made now
    /// for a generated one.
    pub fn bytes(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
        match self {
            Self::Bytes { data, .. } => Some(std::borrow::Cow::Borrowed(data)),
            Self::Generated {
                bom,
                template,
                times,
                join,
                ..
            } => {
                let mut text = String::new();
                if *bom {
                    text.push('\u{feff}');
                }
                template.render_into(&mut text, *times, join);
                Some(std::borrow::Cow::Owned(text.into_bytes()))
            }
            Self::Symlink(_) | Self::Dir(_) => None,
        }
    }
}

/// The checks of one call, with compiled regexes.
#[derive(Clone, Debug)]
pub struct CallCheck {
    /// Where the call is, for messages: `step 2 (grep)` or
    /// `step 2 (grep), retry 1`.
    pub label: String,
    /// Whether the call is a `retry:` of another, sent only when the call
    /// before it failed; a retry that was never sent is not a failure.
    pub retry: bool,
    /// The checks as written.
    pub expect: CallExpect,
    /// `error: REGEX`, compiled.
    pub error_regex: Option<Arc<Regex>>,
    /// `matches`, compiled.
    pub matches: Option<Arc<Regex>>,
    /// The `matches` of `details_at`, compiled, by pointer.
    pub details_regexes: BTreeMap<String, Arc<Regex>>,
}

/// The run checks, with compiled regexes.
#[derive(Clone, Debug, Default)]
pub struct RunCheck {
    /// As written.
    pub expect: RunExpect,
    /// Compiled `matches` of `files`, by path.
    pub file_regexes: BTreeMap<String, Arc<Regex>>,
    /// Decoded `bytes_base64` of `files`, by path.
    pub file_bytes: BTreeMap<String, Vec<u8>>,
}

/// A validated scenario, ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Unique name.
    pub name: String,
    /// The file it came from.
    pub file: PathBuf,
    /// Which document of the file (0-based).
    pub document: usize,
    /// Free text.
    pub description: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
    /// Active tool names, in order.
    pub tools: Vec<String>,
    /// Limits in force.
    pub limits: Limits,
    /// Confinement.
    pub confine: bool,
    /// The system prompt text before the tool section.
    pub system: String,
    /// What the workspace holds.
    pub workspace: WorkspacePlan,
    /// The faux model's script.
    pub script: FauxScript,
    /// Checks by call id.
    pub call_checks: BTreeMap<String, Box<CallCheck>>,
    /// Labels by call id (every scripted call, checked or not).
    pub call_labels: BTreeMap<String, String>,
    /// Run checks.
    pub run_check: RunCheck,
    /// Why it is skipped.
    pub skip: Option<String>,
    /// The snapshot file beside the scenario.
    pub snapshot_file: PathBuf,
    /// Snapshot key prefix (files with several scenarios).
    pub snapshot_prefix: Option<String>,
    /// Time budget.
    pub timeout: Duration,
    /// The suite's tokenizer, if set.
    pub tokenizer: Option<String>,
    /// For an imported session: the recorded results to compare with.
    pub replay: Option<ReplayPlan>,
    /// The conditions it runs under: faults, bash, cancellations.
    pub conditions: Conditions,
    /// Turns the model may take before the loop stops it (`None`: no
    /// limit).
    pub max_turns: Option<usize>,
}

/// What a scenario runs under besides its workspace: injected faults
/// (`faults:`), bash's configuration (`bash:`), scripted cancellations
/// (`cancel_after_ms:`).
#[derive(Clone, Debug, Default)]
pub struct Conditions {
    /// Injected faults, in order.
    pub faults: Vec<crate::tools::ops::FaultRule>,
    /// How bash runs its commands.
    pub bash: crate::tools::BashConfig,
    /// The shell bash runs commands with, if not the default.
    pub shell: Option<PathBuf>,
    /// Scripted cancellations by call id.
    pub cancel_after: BTreeMap<String, Duration>,
}
