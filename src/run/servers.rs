//! A scenario's MCP servers: started after its workspace is built (or
//! taken from the run's pool, for `share: run`), their tools made registry
//! tools in the order `tools` names them, the names checked (two active
//! tools with one name, calls to names no server has), and stopped when
//! the scenario ends (a shared one goes back to the pool, and the pool
//! stops them all when the run ends).

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use serde::Deserialize;
use serde::Serialize;

use crate::agent::CallRecord;
use crate::base::vars::substitute;
use crate::judge::Failure;
use crate::mcp::client::Command;
use crate::mcp::client::DEFAULT_STOP_GRACE;
use crate::mcp::client::Launch;
use crate::mcp::client::McpClient;
use crate::mcp::client::ServerConfig;
use crate::mcp::client::ServerTool;
use crate::mcp::client::StopReport;
use crate::scenario::Scenario;
use crate::scenario::ServerLaunch;
use crate::scenario::ServerPlan;
use crate::scenario::ToolEntry;
use crate::tools::AnyTool;

/// What a report says of one server of a scenario.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct ServerOutcome {
    /// Its name in the scenario.
    pub name: String,
    /// `stdio` (started from `command`) or `streamable_http` (`url`).
    pub transport: String,
    /// Whether it came from the run's pool (`share: run`).
    pub shared: bool,
    /// Its `serverInfo.name`, once it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    /// Its `serverInfo.version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// The protocol version agreed on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// When it was started, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_ms: Option<u64>,
    /// From its start to its answer to `tools/list`, in milliseconds
    /// (for a shared server, of the start that made it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_ms: Option<u64>,
    /// Why it did not start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How its process ended, when it did during the scenario or at its
    /// stop (`exit status 0`, `killed by signal 9 (SIGKILL)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<String>,
    /// Whether it ended (crashed) before it was asked to stop.
    #[serde(default)]
    pub ended_early: bool,
    /// How the stop ended it: `input_closed` (it exited when its stdin
    /// closed), `terminated` (after SIGTERM), `killed` (SIGKILL), or
    /// `already_ended`; absent for a server reached by URL or given back
    /// to the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<crate::mcp::client::Stopped>,
    /// Its last stderr lines, when it failed to start, ended early, or
    /// its scenario failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
    /// Lines of its stdout that were not JSON-RPC messages.
    #[serde(default)]
    pub junk_lines: u64,
    /// Its active tools, as the model calls them (with the prefix).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Paths outside the places its sandbox lets it write that its error
    /// answers or stderr say it could not write (at most 5): most likely
    /// the sandbox refused them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_writes: Vec<String>,
    /// Tokens of the tool section of a request that carried only its
    /// active tools (`run::stats::ScenarioDefinitions`); absent when the
    /// scenario's tools were not set up (it did not start, or the tools
    /// could not be put together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition_tokens: Option<u64>,
    /// The scenario's tool calls sent to it (those of its active tools,
    /// `SERVER/NAME` and the names routed to it; not the check steps').
    #[serde(default)]
    pub calls: u64,
    /// Those it answered with an error: `isError: true` results, JSON-RPC
    /// errors, and calls it did not answer (timed out, or it ended).
    #[serde(default)]
    pub error_results: u64,
    /// Those of `error_results` that were JSON-RPC errors.
    #[serde(default)]
    pub jsonrpc_errors: u64,
    /// Tokens of its answers to those calls, as the model read them.
    #[serde(default)]
    pub result_tokens: u64,
}

impl ServerOutcome {
    /// What it says it is: `serverInfo`'s name and version
    /// (`secure-filesystem-server 0.2.0`), or the name alone; `None`
    /// before it answered.
    pub(crate) fn identity(&self) -> Option<String> {
        match (&self.server_name, &self.server_version) {
            (Some(name), Some(version)) => Some(format!("{name} {version}")),
            (name, _) => name.clone(),
        }
    }
}

/// The servers of a run shared between scenarios (`share: run`): idle ones
/// by what starts them, at most one per worker in use.
#[derive(Debug, Default)]
pub(crate) struct ServerPool {
    idle: Mutex<HashMap<String, Vec<Arc<McpClient>>>>,
}

impl ServerPool {
    fn take(&self, key: &str) -> Option<Arc<McpClient>> {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        let clients = idle.get_mut(key)?;
        while let Some(client) = clients.pop() {
            if client.is_running() {
                return Some(client);
            }
        }
        None
    }

    fn give(&self, key: String, client: Arc<McpClient>) {
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key)
            .or_default()
            .push(client);
    }

    /// Stops every idle server (at the end of a run).
    pub(crate) async fn stop_all(&self) {
        let clients: Vec<Arc<McpClient>> = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .flat_map(|(_, clients)| clients)
            .collect();
        let mut stops = tokio::task::JoinSet::new();
        for client in clients {
            stops.spawn(async move { client.stop().await });
        }
        while stops.join_next().await.is_some() {}
    }
}

/// The registry tools of a scenario's servers, and the order of every
/// active name.
pub(super) struct ServerTools {
    /// The servers' tools, in `tools:` order.
    pub tools: Vec<Arc<dyn AnyTool>>,
    /// Every active name in prompt order, built-in ones included.
    pub order: Vec<String>,
    /// Where calls to other names go (see [`super::routes`]).
    pub router: crate::tools::Router,
}

/// One server of a running scenario.
struct Running {
    plan: ServerPlan,
    client: Arc<McpClient>,
    /// Its key in the pool, for a shared one.
    pool_key: Option<String>,
    /// Its active tools, as the model calls them.
    active: Vec<String>,
}

/// The servers of a running scenario.
#[derive(Default)]
pub(super) struct Servers {
    running: Vec<Running>,
    /// Whether a built-in tool is active (then only `SERVER/NAME` is
    /// routed to a server), once the tools are set up.
    builtin_active: bool,
}

/// The values of `${workspace}` and `${harness}`.
pub(super) struct Places<'a> {
    /// The workspace's real path.
    pub workspace: &'a Path,
    /// The harness binary.
    pub harness: &'a Path,
    /// The scenario's sandbox, which its own stdio servers start in
    /// (`None`: `sandbox: off`); a shared one gets one of its own.
    pub sandbox: Option<&'a Arc<crate::tools::Sandbox>>,
}

fn expand(text: &str, places: &Places<'_>) -> String {
    let vars = BTreeMap::from([
        (
            "workspace".to_owned(),
            places.workspace.display().to_string(),
        ),
        ("harness".to_owned(), places.harness.display().to_string()),
    ]);
    substitute(text, &vars)
}

/// The client configuration of `plan` for a scenario whose workspace is
/// `places.workspace`, answering its requests as `client` says; or why
/// it cannot be made (a variable of `headers` or `auth` not set).
fn config(
    plan: &ServerPlan,
    places: &Places<'_>,
    call_timeout: Option<std::time::Duration>,
    client: &crate::scenario::ClientPlan,
) -> Result<ServerConfig, String> {
    let launch = match &plan.launch {
        ServerLaunch::Command { argv, env } => Launch::Command(Command {
            program: expand(&argv[0], places),
            args: argv[1..].iter().map(|a| expand(a, places)).collect(),
            env: env
                .iter()
                .map(|(k, v)| (k.clone(), expand(v, places)))
                .collect(),
            cwd: if plan.share {
                plan.dir.clone()
            } else {
                places.workspace.to_path_buf()
            },
        }),
        ServerLaunch::Url { url, headers } => Launch::Url {
            url: url.clone(),
            headers: super::client_side::headers(&plan.name, headers)?,
        },
    };
    let auth = match &plan.auth {
        Some(auth) => Some(super::client_side::auth(&plan.name, auth)?),
        None => None,
    };
    Ok(ServerConfig {
        name: plan.name.clone(),
        launch,
        startup_timeout: plan.startup_timeout,
        call_timeout,
        stop_grace: DEFAULT_STOP_GRACE,
        answers: super::client_side::answers(client, places.workspace),
        auth,
    })
}

fn outcome_of(plan: &ServerPlan, client: &McpClient, shared: bool) -> ServerOutcome {
    let facts = client.facts();
    ServerOutcome {
        name: plan.name.clone(),
        transport: facts.transport.to_owned(),
        shared,
        server_name: facts.server_name.clone(),
        server_version: facts.server_version.clone(),
        protocol_version: Some(facts.protocol_version.clone()),
        started_at_ms: Some(facts.started_at_ms),
        startup_ms: Some(facts.startup_ms),
        ..ServerOutcome::default()
    }
}

fn transport_of(plan: &ServerPlan) -> &'static str {
    match plan.launch {
        ServerLaunch::Command { .. } => "stdio",
        ServerLaunch::Url { .. } => "streamable_http",
    }
}

impl Servers {
    /// Starts (or takes from `pool`) every server of `scenario`. On a
    /// failure the servers started so far are stopped, and the failure and
    /// what is known of each server are returned.
    pub(super) async fn start(
        scenario: &Scenario,
        places: &Places<'_>,
        pool: &Arc<ServerPool>,
    ) -> Result<Self, (Failure, Vec<ServerOutcome>)> {
        // Shared servers come from the pool; the others start at once, side
        // by side (a scenario's start costs its slowest server's).
        let mut starting = tokio::task::JoinSet::new();
        let mut slots: Vec<Option<Running>> = Vec::new();
        let mut first_error: Option<(usize, crate::mcp::client::StartError)> = None;
        for (index, plan) in scenario.servers.iter().enumerate() {
            let config = match config(plan, places, plan.call_timeout, &scenario.client) {
                Ok(config) => config,
                Err(message) => {
                    slots.push(None);
                    if first_error.is_none() {
                        first_error = Some((
                            index,
                            crate::mcp::client::StartError {
                                server: plan.name.clone(),
                                message,
                                exit_status: None,
                                stderr_tail: String::new(),
                            },
                        ));
                    }
                    continue;
                }
            };
            // A shared server is shared only with scenarios of the same
            // sandbox settings.
            let pool_key = plan
                .share
                .then(|| format!("{config:?} {:?}", scenario.sandbox));
            let taken = pool_key.as_deref().and_then(|key| pool.take(key));
            match taken {
                Some(client) => slots.push(Some(Running {
                    plan: plan.clone(),
                    client,
                    pool_key,
                    active: Vec::new(),
                })),
                None => {
                    slots.push(None);
                    let sandbox = if plan.share {
                        super::env::sandbox::for_shared_server(scenario)
                    } else {
                        Ok(places.sandbox.cloned())
                    };
                    starting.spawn(async move {
                        let started = match sandbox {
                            Ok(sandbox) => McpClient::start_in(config, sandbox).await,
                            Err(message) => Err(crate::mcp::client::StartError {
                                server: config.name.clone(),
                                message: format!(
                                    "its sandbox cannot be made: {message}; `sandbox: off` \
                                     starts it without one"
                                ),
                                exit_status: None,
                                stderr_tail: String::new(),
                            }),
                        };
                        (index, pool_key, started)
                    });
                }
            }
        }
        while let Some(done) = starting.join_next().await {
            let Ok((index, pool_key, started)) = done else {
                continue;
            };
            match started {
                Ok(client) => {
                    slots[index] = Some(Running {
                        plan: scenario.servers[index].clone(),
                        client: Arc::new(client),
                        pool_key,
                        active: Vec::new(),
                    });
                }
                Err(err) => {
                    if first_error.as_ref().is_none_or(|(at, _)| index < *at) {
                        first_error = Some((index, err));
                    }
                }
            }
        }
        let servers = Self {
            running: slots.into_iter().flatten().collect(),
            builtin_active: false,
        };
        let Some((index, err)) = first_error else {
            return Ok(servers);
        };
        let plan = &scenario.servers[index];
        let mut outcomes = servers.stop(pool, true).await;
        outcomes.push(ServerOutcome {
            name: plan.name.clone(),
            transport: transport_of(plan).to_owned(),
            shared: plan.share,
            error: Some(err.message.clone()),
            exit_status: err.exit_status.clone(),
            stderr_tail: (!err.stderr_tail.is_empty()).then(|| err.stderr_tail.clone()),
            ..ServerOutcome::default()
        });
        let failure = Failure::new(
            None,
            "servers",
            format!(
                "MCP server `{}` starts and lists its tools within {} s",
                plan.name,
                plan.startup_timeout.as_secs_f64()
            ),
            err.to_string(),
        );
        Err((failure, outcomes))
    }

    /// The error-level findings of the audit of every server's tool
    /// definitions (`mcp::audit`, as `harness tools --check` makes them,
    /// each server under its name in the scenario), as one failure.
    pub(super) fn audit(&self) -> Option<Failure> {
        let mut lines = Vec::new();
        let mut names = Vec::new();
        for running in &self.running {
            let findings = crate::mcp::audit::audit(&running.plan.name, running.client.tools());
            let errors: Vec<_> = findings
                .into_iter()
                .filter(|f| f.level == crate::mcp::audit::Level::Error)
                .collect();
            if !errors.is_empty() {
                names.push(format!("`{}`", running.plan.name));
            }
            lines.extend(errors.into_iter().map(|f| {
                format!(
                    "{}/{}: {} [{}] {}",
                    running.plan.name, f.tool, f.rule, f.clients, f.message
                )
            }));
        }
        (!lines.is_empty()).then(|| {
            Failure::new(
                None,
                "servers",
                format!(
                    "the tool definitions of MCP server {} pass the audit of `harness tools \
                     --check` (--audit-servers)",
                    names.join(", ")
                ),
                lines.join("\n"),
            )
        })
    }

    /// The registry tools of the servers, in the order of `scenario`'s
    /// `tools`, and that order of every active name (built-in ones
    /// included); a failure for a tool a server does not have, two active
    /// tools with one name, or a call to a name no active tool has.
    pub(super) fn tools(&mut self, scenario: &Scenario) -> Result<ServerTools, Box<Failure>> {
        let mut tools: Vec<Arc<dyn AnyTool>> = Vec::new();
        let mut order: Vec<String> = Vec::new();
        // Which server (none: built in) made each name active, and how
        // to say so in the duplicate's message.
        let mut sources: BTreeMap<String, (Option<String>, String)> = BTreeMap::new();
        let mut add =
            |name: String, server: Option<&str>, source: String, tool: Option<Arc<dyn AnyTool>>| {
                match sources.get(&name) {
                    Some((_, first)) if *first == source => Ok(()),
                    Some((_, first)) => Err(Box::new(duplicate(&name, first, &source))),
                    None => {
                        sources.insert(name.clone(), (server.map(str::to_owned), source));
                        order.push(name);
                        tools.extend(tool);
                        Ok(())
                    }
                }
            };
        for entry in &scenario.tool_entries {
            match entry {
                ToolEntry::Builtin(name) => {
                    add(
                        name.clone(),
                        None,
                        format!("the built-in tool `{name}`"),
                        None,
                    )?;
                }
                ToolEntry::Server(server) => {
                    let Some(running) = self.find(server) else {
                        continue;
                    };
                    for tool in ServerTool::all(&running.client, &running.plan.prefix) {
                        let name = format!("{}{}", running.plan.prefix, tool.remote_name());
                        let source = format!("`{}` of server `{server}`", tool.remote_name());
                        add(name, Some(server), source, Some(Arc::new(tool)))?;
                    }
                }
                ToolEntry::ServerTool { server, tool } => {
                    let Some(running) = self.find(server) else {
                        continue;
                    };
                    let Some(found) = ServerTool::new(&running.client, tool, &running.plan.prefix)
                    else {
                        return Err(Box::new(Failure::new(
                            None,
                            "tools",
                            format!("MCP server `{server}` has a tool `{tool}`"),
                            format!(
                                "it has no tool `{tool}`; its tools are {}",
                                running.client.tool_names()
                            ),
                        )));
                    };
                    let name = format!("{}{tool}", running.plan.prefix);
                    let source = format!("`{tool}` of server `{server}`");
                    add(name, Some(server), source, Some(Arc::new(found)))?;
                }
            }
        }
        // Each server's active names, for the reports and --coverage.
        for running in &mut self.running {
            let server = &running.plan.name;
            running.active = order
                .iter()
                .filter(|name| {
                    sources
                        .get(*name)
                        .is_some_and(|(from, _)| from.as_deref() == Some(server.as_str()))
                })
                .cloned()
                .collect();
        }
        // The tools of the steps that check resources and prompts, after
        // every other (only those the script uses).
        let clients: BTreeMap<String, Arc<McpClient>> = self
            .running
            .iter()
            .map(|r| (r.plan.name.clone(), Arc::clone(&r.client)))
            .collect();
        for name in super::client_steps::used(scenario) {
            order.push(name.to_owned());
            tools.push(Arc::new(super::client_steps::CheckTool::new(
                name,
                clients.clone(),
            )));
        }
        if let Some(failure) = super::fuzz_step::unknown_tools(scenario, &clients) {
            return Err(Box::new(failure));
        }
        for call in &scenario.open_calls {
            if !order.contains(&call.name) {
                return Err(Box::new(Failure::new(
                    Some(&call.label),
                    "tools",
                    format!("an active tool named `{}`", call.name),
                    format!(
                        "no active tool is named `{}`; the active tools are {} (to test the \
                         error for an unknown tool on purpose, add `expect: {{ error: true }}` \
                         to the call)",
                        call.name,
                        order.join(", ")
                    ),
                )));
            }
        }
        self.builtin_active = sources.values().any(|(server, _)| server.is_none());
        let routes = self
            .routes()
            .into_iter()
            .zip(self.running.iter().map(|r| Arc::clone(&r.client)))
            .collect();
        let router = super::routes::router(routes, self.builtin_active);
        Ok(ServerTools {
            tools,
            order,
            router,
        })
    }

    /// The texts the scenario's servers got in answer to their sampling
    /// requests, server by server, each in order.
    pub(super) fn sampled(&self) -> Vec<String> {
        self.running
            .iter()
            // A shared server's answers are counted by the scenario that
            // started it.
            .filter(|r| r.pool_key.is_none())
            .flat_map(|r| r.client.served())
            .filter(|served| served.method == "sampling/createMessage")
            .filter_map(|served| {
                served
                    .result
                    .as_ref()?
                    .pointer("/content/text")?
                    .as_str()
                    .map(str::to_owned)
            })
            .collect()
    }

    /// Each server's active tools, as the model calls them.
    pub(super) fn active(&self) -> Vec<(String, Vec<String>)> {
        self.running
            .iter()
            .map(|r| (r.plan.name.clone(), r.active.clone()))
            .collect()
    }

    /// Each server's route, in order.
    fn routes(&self) -> Vec<super::routes::Route> {
        self.running
            .iter()
            .map(|r| super::routes::Route {
                server: r.plan.name.clone(),
                prefix: r.plan.prefix.clone(),
                active: !r.active.is_empty(),
            })
            .collect()
    }

    /// For each server, in order, the calls of `calls` that were sent to
    /// it: those of its active tools, and those the router sent it, less
    /// the ones the registry answered itself (argument text that is not
    /// JSON).
    pub(super) fn calls_by_server<'c>(&self, calls: &'c [CallRecord]) -> Vec<Vec<&'c CallRecord>> {
        let routes = self.routes();
        let mut sent: Vec<Vec<&CallRecord>> = vec![Vec::new(); self.running.len()];
        for call in calls {
            let name = call.call.name.as_str();
            if refused_before_sending(call) {
                continue;
            }
            let index = self
                .running
                .iter()
                .position(|r| r.active.iter().any(|a| a == name))
                .or_else(|| {
                    super::routes::target(&routes, self.builtin_active, name).map(|(i, _)| i)
                });
            if let Some(slot) = index.and_then(|i| sent.get_mut(i)) {
                slot.push(call);
            }
        }
        sent
    }

    /// For each server, in order, the paths outside `writable` that the
    /// error results of the calls sent to it (`sent`, from
    /// [`Self::calls_by_server`]), or its stderr so far, say it could not
    /// write ([`super::refusals`]).
    pub(super) fn refused_writes(
        &self,
        sent: &[Vec<&CallRecord>],
        writable: &[&Path],
    ) -> Vec<Vec<String>> {
        self.running
            .iter()
            .zip(sent)
            .map(|(running, calls)| {
                let answers = calls
                    .iter()
                    .filter(|c| c.result.is_error)
                    .map(|c| c.result.text());
                let mut texts: Vec<String> = answers.collect();
                texts.push(running.client.report_so_far().stderr_tail);
                super::refusals::refused_paths(texts.iter().map(String::as_str), writable)
            })
            .collect()
    }

    fn find(&self, server: &str) -> Option<&Running> {
        self.running.iter().find(|r| r.plan.name == server)
    }

    /// Stops the scenario's own servers and gives the shared ones back to
    /// `pool` (unless they ended); `failed`: the scenario failed, so the
    /// reports keep each server's last stderr lines.
    pub(super) async fn stop(self, pool: &Arc<ServerPool>, failed: bool) -> Vec<ServerOutcome> {
        let mut stops = tokio::task::JoinSet::new();
        for (index, running) in self.running.into_iter().enumerate() {
            let pool = Arc::clone(pool);
            stops.spawn(async move {
                let mut outcome =
                    outcome_of(&running.plan, &running.client, running.pool_key.is_some());
                outcome.tools = running.active;
                let report: StopReport = match running.pool_key {
                    Some(key) if running.client.is_running() => {
                        let report = running.client.report_so_far();
                        pool.give(key, Arc::clone(&running.client));
                        report
                    }
                    _ => running.client.stop().await,
                };
                outcome.exit_status = report.exit_status.clone();
                outcome.stopped = report.stopped;
                outcome.ended_early = report.ended_early;
                outcome.junk_lines = report.junk_lines;
                if (failed || report.ended_early) && !report.stderr_tail.is_empty() {
                    outcome.stderr_tail = Some(report.stderr_tail);
                }
                (index, outcome)
            });
        }
        let mut outcomes: Vec<(usize, ServerOutcome)> = Vec::new();
        while let Some(done) = stops.join_next().await {
            if let Ok(done) = done {
                outcomes.push(done);
            }
        }
        outcomes.sort_by_key(|(index, _)| *index);
        outcomes.into_iter().map(|(_, outcome)| outcome).collect()
    }
}

fn duplicate(name: &str, first: &str, second: &str) -> Failure {
    Failure::new(
        None,
        "tools",
        "every active tool has a name of its own",
        format!(
            "two active tools are named `{name}`: {first} and {second}; give the server a \
             `prefix` (e.g. `prefix: srv_`) or activate only one of them"
        ),
    )
}

/// The harness binary `${harness}` names: this process's own, unless the
/// run says otherwise.
pub(super) fn harness_binary() -> PathBuf {
    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("harness"))
}

/// Counts the calls sent to one server (`calls`, from
/// [`Servers::calls_by_server`]) and their answers into `outcome`.
pub(super) fn count_calls(outcome: &mut ServerOutcome, calls: &[&CallRecord]) {
    outcome.calls = calls.len() as u64;
    for call in calls {
        outcome.result_tokens += call.result_tokens;
        if call.result.is_error {
            outcome.error_results += 1;
            let class = call
                .result
                .details
                .as_ref()
                .and_then(|d| d.get("error_class"))
                .and_then(serde_json::Value::as_str);
            if class == Some(crate::mcp::client::JSONRPC_ERROR_CLASS) {
                outcome.jsonrpc_errors += 1;
            }
        }
    }
}

/// Whether the registry answered `call` itself, before it reached a tool:
/// its argument text was not JSON, or no tool had its name.
fn refused_before_sending(call: &CallRecord) -> bool {
    use crate::tools::ErrorKind;
    let kind = call.result.facts.as_ref().and_then(|f| f.error.as_ref());
    matches!(
        kind,
        Some(ErrorKind::ArgumentsCutOff | ErrorKind::UnknownTool)
    )
}
