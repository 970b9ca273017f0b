//! What a suite exercised, over a run (`harness run --coverage`,
//! docs/reports.md "Coverage"): each scenario's behaviours (classified by
//! the judge, `judge/coverage.rs`) summed, with the known behaviours no
//! call showed.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use crate::judge::coverage::ScenarioCoverage;
use crate::judge::coverage::catalogue;
use crate::judge::coverage::server_area;

use super::outcome::RunSummary;

/// How one behaviour fared over a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct BehaviourCoverage {
    /// The behaviour (`truncated by lines`, `error: old text not found` …).
    pub behaviour: String,
    /// Calls that showed it.
    pub calls: u64,
    /// Scenarios with at least one such call.
    pub scenarios: u64,
    /// Whether it is in the catalogue (`false`: seen, but not a behaviour
    /// the harness lists, such as `error: other`).
    pub known: bool,
}

/// One area's coverage: a tool, or `loop`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct AreaCoverage {
    /// The tool's name, or `loop`.
    pub area: String,
    /// Behaviours in the catalogue.
    pub known: usize,
    /// Of those, how many some call showed.
    pub exercised: usize,
    /// Every catalogued behaviour in catalogue order (`calls: 0` when
    /// none showed it), then the others seen, by name.
    pub behaviours: Vec<BehaviourCoverage>,
    /// The catalogued behaviours no call showed, in catalogue order.
    pub not_exercised: Vec<String>,
}

/// The coverage of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Coverage {
    /// Scenarios whose calls were classified (those that ran with
    /// `--coverage`).
    pub scenarios: usize,
    /// Catalogued behaviours, over every area.
    pub known: usize,
    /// Of those, how many some call showed.
    pub exercised: usize,
    /// Each area, tools in prompt order (read, bash, edit, write, grep,
    /// find, ls), then `loop`, then any other tool name called.
    pub areas: Vec<AreaCoverage>,
}

/// The coverage of a run; `None` when no scenario recorded any (the run
/// was not asked for it).
pub(crate) fn summarize(summary: &RunSummary) -> Option<Coverage> {
    let recorded: Vec<&ScenarioCoverage> = summary
        .scenarios
        .iter()
        .filter_map(|s| s.coverage.as_ref())
        .collect();
    if recorded.is_empty() {
        return None;
    }
    // (calls, scenarios) by area and behaviour.
    let mut seen: BTreeMap<&str, BTreeMap<&str, (u64, u64)>> = BTreeMap::new();
    // The areas some scenario has: a built-in tool is one when a scenario
    // activated it (judge::coverage::mark_active), or called it.
    let present: std::collections::BTreeSet<&str> = recorded
        .iter()
        .flat_map(|scenario| scenario.keys().map(String::as_str))
        .collect();
    for scenario in &recorded {
        for (area, behaviours) in *scenario {
            for (behaviour, calls) in behaviours {
                let entry = seen
                    .entry(area.as_str())
                    .or_default()
                    .entry(behaviour.as_str())
                    .or_default();
                entry.0 = entry.0.saturating_add(*calls);
                entry.1 += 1;
            }
        }
    }
    // Each MCP server's active tools, in the order the scenarios list them.
    let mut servers: Vec<(String, Vec<&str>)> = Vec::new();
    for scenario in summary.scenarios.iter().filter(|s| s.coverage.is_some()) {
        for server in &scenario.servers {
            let area = server_area(&server.name);
            let at = match servers.iter().position(|(a, _)| *a == area) {
                Some(at) => at,
                None => {
                    servers.push((area, Vec::new()));
                    servers.len() - 1
                }
            };
            for tool in &server.tools {
                if !servers[at].1.contains(&tool.as_str()) {
                    servers[at].1.push(tool);
                }
            }
        }
    }
    // The servers first (what a server's author looks for), then the
    // built-in tools some scenario activated, then the loop.
    let mut areas = Vec::new();
    for (area, tools) in &servers {
        let seen_here = seen.remove(area.as_str()).unwrap_or_default();
        areas.push(area_coverage(area, tools, seen_here));
    }
    for (area, known) in catalogue() {
        if area != crate::judge::coverage::LOOP && !present.contains(area) {
            continue;
        }
        areas.push(area_coverage(
            area,
            known,
            seen.remove(area).unwrap_or_default(),
        ));
    }
    for (area, rest) in seen {
        areas.push(area_coverage(area, &[], rest));
    }
    Some(Coverage {
        scenarios: recorded.len(),
        known: areas.iter().map(|a| a.known).sum(),
        exercised: areas.iter().map(|a| a.exercised).sum(),
        areas,
    })
}

fn area_coverage(area: &str, known: &[&str], mut seen: BTreeMap<&str, (u64, u64)>) -> AreaCoverage {
    let mut behaviours = Vec::new();
    let mut not_exercised = Vec::new();
    for name in known {
        let (calls, scenarios) = seen.remove(*name).unwrap_or_default();
        if calls == 0 {
            not_exercised.push((*name).to_owned());
        }
        behaviours.push(BehaviourCoverage {
            behaviour: (*name).to_owned(),
            calls,
            scenarios,
            known: true,
        });
    }
    for (name, (calls, scenarios)) in seen {
        behaviours.push(BehaviourCoverage {
            behaviour: name.to_owned(),
            calls,
            scenarios,
            known: false,
        });
    }
    AreaCoverage {
        area: area.to_owned(),
        known: known.len(),
        exercised: known.len() - not_exercised.len(),
        behaviours,
        not_exercised,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::ScenarioOutcome;
    use crate::run::Status;

    #[test]
    fn a_run_sums_its_scenarios_and_names_what_none_exercised() {
        let scenario = |name: &str, coverage: Option<ScenarioCoverage>| {
            let mut outcome = ScenarioOutcome::empty(name, "f.yaml", &[], Status::Passed);
            outcome.coverage = coverage;
            outcome
        };
        let one = ScenarioCoverage::from([(
            "write".to_owned(),
            BTreeMap::from([("created".to_owned(), 2), ("error: other".to_owned(), 1)]),
        )]);
        let two = ScenarioCoverage::from([
            (
                "write".to_owned(),
                BTreeMap::from([("created".to_owned(), 1)]),
            ),
            ("mystery".to_owned(), BTreeMap::from([("ok".to_owned(), 1)])),
            // Activated, never called (judge::coverage::mark_active).
            ("read".to_owned(), BTreeMap::new()),
        ]);
        let mut summary = RunSummary {
            scenarios: vec![scenario("a", None)],
            ..RunSummary::default()
        };
        assert_eq!(summarize(&summary), None);
        summary.scenarios.push(scenario("b", Some(one)));
        summary.scenarios.push(scenario("c", Some(two)));
        let coverage = summarize(&summary).unwrap();
        assert_eq!(coverage.scenarios, 2);
        let write = coverage.areas.iter().find(|a| a.area == "write").unwrap();
        let catalogued = |name: &str, calls: u64, scenarios: u64| BehaviourCoverage {
            behaviour: name.to_owned(),
            calls,
            scenarios,
            known: true,
        };
        let never = [
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
        let mut behaviours = vec![catalogued("created", 3, 2)];
        behaviours.extend(never.iter().map(|name| catalogued(name, 0, 0)));
        behaviours.push(BehaviourCoverage {
            behaviour: "error: other".to_owned(),
            calls: 1,
            scenarios: 1,
            known: false,
        });
        assert_eq!(
            write,
            &AreaCoverage {
                area: "write".to_owned(),
                known: 11,
                exercised: 1,
                behaviours,
                not_exercised: never.map(str::to_owned).to_vec(),
            }
        );
        let names: Vec<&str> = coverage.areas.iter().map(|a| a.area.as_str()).collect();
        // The built-in tools no scenario activated are left out.
        assert_eq!(names, ["read", "write", "loop", "mystery"]);
        assert_eq!(coverage.exercised, 1);
        assert_eq!(
            coverage.known,
            catalogue()
                .filter(|(area, _)| ["read", "write", "loop"].contains(area))
                .map(|(_, b)| b.len())
                .sum::<usize>()
        );
    }
}
