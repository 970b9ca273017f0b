//! Loading a scenario file: every document of it, each read into a tree,
//! through serde, then validated into a [`Scenario`]; a valid document
//! still runs when another one of the same file is broken.

use std::collections::BTreeSet;
use std::path::Path;
use std::path::PathBuf;

use crate::agent::DEFAULT_SYSTEM_PROMPT;
use crate::agent::FauxScript;
use crate::scenario::de;
use crate::scenario::model::CallExpect;
use crate::scenario::model::LimitsSpec;
use crate::scenario::model::RunExpect;
use crate::scenario::model::ScenarioDoc;
use crate::scenario::model::ToolsSpec;
use crate::scenario::model::WorkspaceSpec;
use crate::scenario::text_file::read_regular;
use crate::scenario::yaml;
use crate::scenario::yaml::Kind;
use crate::scenario::yaml::Node;
use crate::scenario::yaml::Seg;
use crate::tools::Limits;

use super::error::Problem;
use super::error::ScenarioError;
use super::error::into_errors;
use super::scenario::Scenario;
use super::scenario::ServerPlan;
use super::scenario::ToolEntry;
use super::suite::SUITE_FILE;
use super::suite::Suite;
use super::validator::Validator;
use super::validator::k;

/// Loads every scenario of a file: the valid ones, and every problem of
/// the others, each located. A valid document still runs when another
/// document of the same file is broken.
pub(crate) fn load_file(path: &Path, suite: &Suite) -> (Vec<Scenario>, Vec<ScenarioError>) {
    match read_regular(path) {
        Ok(text) => load_text(path, &text, suite),
        Err(err) => (
            Vec::new(),
            vec![ScenarioError::at_start(
                path,
                format!("cannot read the scenario file: {err}"),
            )],
        ),
    }
}

/// Loads the scenarios of `text` as if read from `path`.
pub fn load_text(path: &Path, text: &str, suite: &Suite) -> (Vec<Scenario>, Vec<ScenarioError>) {
    let stream = yaml::parse(text);
    let documents: Vec<yaml::Document> = stream
        .documents
        .into_iter()
        .filter(|d| !d.root.is_null())
        .collect();
    let mut errors = Vec::new();
    if documents.is_empty() && stream.fatal.is_none() {
        errors.push(ScenarioError::at_start(
            path,
            "the file holds no scenario (it is empty or only comments); write one, or remove the \
             file",
        ));
    }
    let multi = documents.len() + usize::from(stream.fatal.is_some()) > 1;
    let mut scenarios = Vec::new();
    for document in documents {
        match load_document(path, document, multi, suite) {
            Ok(scenario) => scenarios.push(scenario),
            Err(problems) => errors.extend(into_errors(problems, path)),
        }
    }
    if let Some(fatal) = stream.fatal {
        errors.push(Problem::from(fatal).into_error(path));
    }
    (scenarios, errors)
}

/// One document: its tree problems, its serde problems (each removed from
/// the tree so the rest can be read), then the validation of what is left.
fn load_document(
    path: &Path,
    mut document: yaml::Document,
    multi: bool,
    suite: &Suite,
) -> Result<Scenario, Vec<Problem>> {
    let mut problems: Vec<Problem> = document.problems.drain(..).map(Problem::from).collect();
    let mut found = Vec::new();
    let mut no_model = false;
    let parsed = de::deserialize_all::<ScenarioDoc>(&mut document.root, &mut found, |root, err| {
        // Without `model` nothing else could be checked: go on with none.
        let at_root = err.at.as_ref().is_none_or(|at| at.steps.is_empty());
        if at_root
            && err.message == "missing field `model`"
            && !no_model
            && let Kind::Map(entries) = &mut root.kind
        {
            {
                let pos = root.pos;
                let node = |kind| Node { pos, kind };
                entries.push((
                    node(Kind::Scalar(yaml::Scalar {
                        text: "model".to_owned(),
                        plain: true,
                        tag: None,
                    })),
                    node(Kind::Seq(Vec::new())),
                ));
                no_model = true;
                return true;
            }
        }
        false
    });
    let mut v = Validator::new(&document.root);
    v.after(&found);
    problems.extend(found.into_iter().map(|mut p| {
        if p.message == "missing field `model`" {
            p.message
                .push_str("; give the faux model's script, `model:` with at least one step");
        }
        if let Some(message) = misplaced_key(&p) {
            p.message = message;
        }
        Problem::from(p)
    }));
    let Some(doc) = parsed else {
        return Err(problems);
    };
    v.no_model = no_model;
    v.reported = problems.iter().map(|p| p.path.clone()).collect();
    let scenario = v.scenario(path, document.index, multi, doc, suite);
    problems.extend(v.problems);
    if problems.is_empty() {
        Ok(scenario)
    } else {
        Err(problems)
    }
}

impl Validator<'_> {
    /// A whole scenario document.
    pub(super) fn scenario(
        &mut self,
        path: &Path,
        index: usize,
        multi: bool,
        doc: ScenarioDoc,
        suite: &Suite,
    ) -> Scenario {
        self.base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let name = doc.name.clone().unwrap_or_else(|| {
            let stem = path.with_extension("");
            if multi {
                format!("{}#{}", stem.display(), index + 1)
            } else {
                stem.display().to_string()
            }
        });
        if name.contains('\n') {
            self.problem(&[k("name")], "must be one line");
        }
        // The suite's servers, then the scenario's (which replace those of
        // the same name).
        let mut servers = suite.servers.clone();
        servers.extend(self.servers(&doc.servers, &super::validator::dir_of(path)));
        // Every declared name, a broken one's too (its problem is reported
        // where it is declared, not again at each use).
        let server_names: BTreeSet<String> =
            servers.keys().chain(doc.servers.keys()).cloned().collect();
        self.declared_servers.clone_from(&server_names);
        let agent = doc.agent.clone().or_else(|| suite.doc.agent.clone());
        if let Some(name) = &doc.agent {
            self.agent_name(&[k("agent")], name, &suite.agents);
        }
        if let Some(name) = &agent {
            self.loop_keys_of_agent(&doc, name);
            self.servers_of_agent(&doc, name, &suite.agents);
            self.any_tool = true;
        }
        if doc.prompt.as_deref().is_some_and(|p| p.trim().is_empty()) {
            self.problem(
                &[k("prompt")],
                "is empty; give the task, or leave `prompt` out",
            );
        }
        let problems_before = self.problems.len();
        let tool_entries = match &doc.tools {
            Some(tools) => self.tools(&[k("tools")], tools, &server_names),
            None => {
                let spec = suite
                    .doc
                    .tools
                    .clone()
                    .unwrap_or(ToolsSpec::Preset("all".to_owned()));
                // Checked where the suite file was read.
                let mut quiet = Validator::new(self.root);
                quiet.tools(&[k("tools")], &spec, &server_names)
            }
        };
        // Calls are judged against `tools` only when it is all valid (a
        // misspelt preset makes no call's tool inactive: it is reported
        // once, where it is written).
        let tools_valid = self.problems.len() == problems_before;
        let given = match (&doc.tools, &suite.doc.tools) {
            _ if !tools_valid => None,
            (Some(tools), _) => Some(tools_text(tools)),
            (None, Some(tools)) => Some(format!("{SUITE_FILE} gives {}", tools_text(tools))),
            (None, None) => None,
        };
        self.active_builtins = given.map(|given| {
            let active = tool_entries
                .iter()
                .filter_map(|entry| match entry {
                    ToolEntry::Builtin(name) => Some(name.clone()),
                    _ => None,
                })
                .collect();
            (active, given)
        });
        let mut used: Vec<ServerPlan> = Vec::new();
        for entry in &tool_entries {
            let server = match entry {
                ToolEntry::Builtin(_) => continue,
                ToolEntry::Server(server) => {
                    self.open_tools = true;
                    server
                }
                ToolEntry::ServerTool { server, tool } => {
                    let prefix = servers.get(server).map_or("", |p| p.prefix.as_str());
                    self.server_tools.insert(format!("{prefix}{tool}"));
                    server
                }
            };
            if !used.iter().any(|p| &p.name == server)
                && let Some(plan) = servers.get(server)
            {
                used.push(plan.clone());
            }
        }
        // An agent is given every server declared: it has no `tools`.
        if agent.is_some() {
            used = servers.values().cloned().collect();
        }
        if let Some(limits) = &doc.limits {
            self.limits(&[k("limits")], limits);
        }
        let mut limits = Limits::default();
        for spec in [&suite.doc.limits, &doc.limits].into_iter().flatten() {
            spec.apply(&mut limits);
        }
        let steps = self.script(&doc.model);
        for server in std::mem::take(&mut self.checked_servers) {
            if !used.iter().any(|p| p.name == server)
                && let Some(plan) = servers.get(&server)
            {
                used.push(plan.clone());
            }
        }
        let workspace = self.workspace(&doc.workspace, suite);
        let run_check = self.run_check(&doc.expect);
        let conditions = self.conditions(&doc, &suite.doc);
        let replay_timeout = doc.replay.as_ref().and_then(|r| r.timeout);
        let timeout = self
            .budget(&[k("replay"), k("timeout")], replay_timeout)
            .or(suite.timeout)
            .unwrap_or(super::validator::DEFAULT_TIMEOUT);
        let replay = self.replay_plan(doc.replay.as_ref(), suite);
        self.count_in_range(&[k("max_turns")], doc.max_turns, super::suite::MAX_TURNS);
        let max_turns = doc.max_turns.or(suite.doc.max_turns);
        // The suite file's directory, as `${dir}` takes it (`.`, not empty).
        let suite_dir = suite.dir.as_deref().map(|dir| {
            if dir.as_os_str().is_empty() {
                Path::new(".").to_path_buf()
            } else {
                dir.to_path_buf()
            }
        });
        let sandbox = self.sandbox(
            doc.sandbox.as_ref(),
            &super::validator::dir_of(path),
            suite.doc.sandbox.as_ref().zip(suite_dir.as_deref()),
        );
        let client = self.client_plan(
            doc.sampling.as_deref(),
            doc.elicitation.as_deref(),
            doc.roots.as_deref(),
        );
        Scenario {
            client,
            snapshot_file: snapshot_path(path),
            snapshot_prefix: multi.then(|| name.clone()),
            name,
            file: path.to_path_buf(),
            document: index,
            in_multi_document_file: multi,
            name_at: self.root.locate(&[k("name")], false),
            description: doc.description,
            tags: doc.tags,
            tool_entries,
            servers: used,
            open_calls: std::mem::take(&mut self.open_calls),
            limits,
            confine: doc.confine.unwrap_or(true),
            // The scenario's own, else its suite file's.
            system: doc
                .system
                .or_else(|| suite.doc.system.clone())
                .unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_owned()),
            workspace,
            script: FauxScript { steps },
            call_checks: std::mem::take(&mut self.call_checks),
            call_labels: std::mem::take(&mut self.call_labels),
            run_check,
            skip: doc.skip,
            timeout,
            replay,
            conditions,
            max_turns,
            agent,
            agents: std::sync::Arc::clone(&suite.agents),
            prompt: doc.prompt,
            sandbox,
        }
    }
}

/// For an unknown key of a scenario or of a step that is a key of one
/// of its parts, written one level too far out (`contains` beside
/// `expect:` instead of under it): the message saying where it goes (in
/// place of the hints for a key that is not one: a "did you mean" of a
/// key of the step, the empty key above).
fn misplaced_key(problem: &de::DeProblem) -> Option<String> {
    let rest = problem.message.strip_prefix("unknown field `")?;
    let (key, _) = rest.split_once('`')?;
    let in_step = problem.path.first() == Some(&k("model"))
        && matches!(problem.path.last(), Some(Seg::Index(_)));
    let parts: Vec<(&str, &[&str])> = if problem.path.is_empty() {
        vec![
            ("workspace", de::fields_of::<WorkspaceSpec>()),
            ("limits", de::fields_of::<LimitsSpec>()),
            ("expect", de::fields_of::<RunExpect>()),
        ]
    } else if in_step {
        vec![("expect", de::fields_of::<CallExpect>())]
    } else {
        return None;
    };
    let homes: Vec<&str> = parts
        .iter()
        .filter(|(_, fields)| fields.contains(&key))
        .map(|(part, _)| *part)
        .collect();
    // The message without the hints after it.
    let base = problem.message.split("; ").next().unwrap_or_default();
    let hint = match (homes.as_slice(), &problem.empty_above) {
        ([], _) => return None,
        ([home], Some((above, line))) if above == home => format!(
            "`{key}` is a key of `{home}`, which has no value just above (line {line}): indent \
             `{key}` under `{home}`"
        ),
        ([home], _) => format!("`{key}` is a key of `{home}`: indent it under `{home}`"),
        _ => format!(
            "`{key}` is a key of {}: indent it under the one you mean",
            homes
                .iter()
                .map(|h| format!("`{h}`"))
                .collect::<Vec<_>>()
                .join(" and of ")
        ),
    };
    Some(format!("{base}; {hint}"))
}

/// `tools` as written, for messages: `` `tools: readonly` ``.
fn tools_text(tools: &ToolsSpec) -> String {
    match tools {
        ToolsSpec::Preset(name) => format!("`tools: {name}`"),
        ToolsSpec::List(names) => format!("`tools: [{}]`", names.join(", ")),
    }
}

/// `dir/name.yaml` → `dir/name.snap.yaml`.
pub(super) fn snapshot_path(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{stem}.snap.yaml"))
}
