//! `harness run --agent NAME …`: each agent named is a lane of the run,
//! its scenarios served to that agent, side by side in every report as
//! `--variant`s are. An agent that is unknown or not installed is a usage
//! error before anything runs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::run::Discovery;
use crate::run::Selection;
use crate::run::agent::launch::resolve;
use crate::run::discover;
use crate::scenario::agent::AgentDef;

/// Why `--agent` is refused with `--variant`.
pub(super) const NO_VARIANTS: &str = "--agent cannot be combined with --variant: each agent is \
    a lane of the run already; run the variants of one agent with `agent:` in each variant's \
    harness.yaml";

/// The agents named, each with the selection's scenarios served to it:
/// `first` (the discovery made already) for the first, a new discovery
/// for each other. Every name must be known and its program installed.
pub(super) fn lanes(
    names: &[String],
    first: Discovery,
    paths: &[PathBuf],
    selection: &Selection,
) -> Result<Vec<(String, Discovery)>, String> {
    let path = std::env::var("PATH").unwrap_or_default();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            return Err(format!(
                "--agent {name} is given twice; name each agent once"
            ));
        }
        let defs = defs_of(&first, name);
        resolve(name, &defs, &path).map_err(|why| format!("--agent {name}: {why}"))?;
    }
    let mut lanes = Vec::new();
    let mut first = Some(first);
    for name in names {
        let mut discovery = match first.take() {
            Some(discovery) => discovery,
            None => discover(paths, selection),
        };
        for scenario in &mut discovery.scenarios {
            scenario.serve_to(name);
        }
        lanes.push((name.clone(), discovery));
    }
    Ok(lanes)
}

/// The `agents:` that define `name` in the first of the run's suite
/// files that does (none: the built-in's).
fn defs_of(discovery: &Discovery, name: &str) -> BTreeMap<String, AgentDef> {
    discovery
        .suites
        .iter()
        .find(|suite| suite.agents.contains_key(name))
        .map(|suite| (*suite.agents).clone())
        .unwrap_or_default()
}
