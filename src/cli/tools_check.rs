//! `harness tools --check [--mcp CMD [ARGS…]]`: the audit of a server's
//! tool definitions (`mcp::audit`), what known clients reject or
//! mishandle, tool by tool, and what the definitions cost in tokens
//! against `--max-definition-tokens`. Exit 1 when a finding is an error.

use rmcp::model::Tool;
use serde::Serialize;

use crate::exit;
use crate::mcp::audit;
use crate::mcp::audit::Finding;
use crate::mcp::audit::Level;
use crate::tools::ToolSpec;

/// What `--check --json` prints.
#[derive(Debug, Serialize)]
struct Report<'a> {
    /// The name the audit took the server to be registered under.
    server: &'a str,
    /// How many tools it lists.
    tools: usize,
    /// Error-level findings.
    errors: usize,
    /// Warning-level findings.
    warnings: usize,
    /// The tool section of a request, in tokens.
    definition_tokens: u64,
    /// The tokenizer of `definition_tokens`.
    tokenizer: &'a str,
    /// `--max-definition-tokens`.
    max_definition_tokens: Option<u64>,
    /// Every finding, tool by tool.
    findings: &'a [Finding],
}

/// What to check, and how to print it.
pub(super) struct Check<'a> {
    /// The name the server is registered under in a client.
    pub server: &'a str,
    /// Its definitions as `tools/list` sends them.
    pub tools: &'a [Tool],
    /// The same as the specs a model is priced for.
    pub specs: &'a [ToolSpec],
    /// `--tokenizer`.
    pub tokenizer: &'a str,
    /// `--max-definition-tokens`.
    pub budget: Option<u64>,
    /// `--json`.
    pub json: bool,
}

pub(super) fn run(check: &Check<'_>) -> u8 {
    let tokens = match super::common::tokenizer(check.tokenizer) {
        Ok(t) => t,
        Err(err) => return super::common::usage_error(format!("--tokenizer: {err}")),
    };
    let costs = crate::run::stats::definition_costs(check.specs, tokens.as_ref());
    let mut findings = audit::audit(check.server, check.tools);
    if let Some(budget) = check.budget.filter(|budget| costs.total_tokens > *budget) {
        findings.push(Finding::new(
            audit::DEFINITION_TOKENS,
            "",
            format!(
                "the definitions cost {} tokens ({}), over the budget of {budget} \
                 (--max-definition-tokens); shorten descriptions and schemas, or serve fewer tools",
                costs.total_tokens, costs.tokenizer
            ),
        ));
    }
    let errors = findings.iter().filter(|f| f.level == Level::Error).count();
    let warnings = findings.len() - errors;
    let code = if errors > 0 {
        exit::FAILED
    } else {
        exit::SUCCESS
    };
    if check.json {
        let report = Report {
            server: check.server,
            tools: check.tools.len(),
            errors,
            warnings,
            definition_tokens: costs.total_tokens,
            tokenizer: &costs.tokenizer,
            max_definition_tokens: check.budget,
            findings: &findings,
        };
        match serde_json::to_string_pretty(&report) {
            Ok(json) => println!("{}", super::output::json_text(&json)),
            Err(err) => return super::common::usage_error(err),
        }
        return code;
    }
    for (tool, cost) in check.tools.iter().zip(&costs.tools) {
        let mine: Vec<&Finding> = findings
            .iter()
            .filter(|f| f.tool == tool.name.as_ref())
            .collect();
        let name = shown(&tool.name);
        let tokens = cost.definition_tokens;
        if mine.is_empty() {
            println!("{name} ({tokens} tokens): no findings");
            continue;
        }
        println!("{name} ({tokens} tokens)");
        for finding in mine {
            print_finding(finding);
        }
    }
    for finding in findings.iter().filter(|f| f.tool.is_empty()) {
        println!("all tools");
        print_finding(finding);
    }
    let budget = match check.budget {
        Some(budget) => format!("the budget is {budget}"),
        None => "no budget (--max-definition-tokens N)".to_owned(),
    };
    println!(
        "\n{}: {} tools, {errors} {}, {warnings} {}; the definitions cost {} tokens ({}), {budget}",
        shown(check.server),
        check.tools.len(),
        plural(errors, "error"),
        plural(warnings, "warning"),
        costs.total_tokens,
        costs.tokenizer
    );
    code
}

fn print_finding(finding: &Finding) {
    println!(
        "  {:<7}  {}  [{}] {}\n           source: {}",
        finding.level,
        finding.rule,
        finding.clients,
        shown(&finding.message),
        finding.source
    );
}

/// A text a server chose, on one line, with no control character raw.
fn shown(text: &str) -> String {
    crate::tools::show_name(text.as_bytes()).into_owned()
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}
