# The built-in agent profiles of src/agent/profiles.rs as shell, for
# tests/agents/smoke.sh. Generated: `cargo test --lib agent::profiles`
# fails when this file and the table differ, and rewrites it when run
# with HARNESS_UPDATE_RECIPES=1.
#
# recipe_NAME sets, from $model_url, $workspace, $home and $prompt:
# command (the program looked for on PATH), api (the wire format), args
# and env (arrays; env holds NAME=VALUE words), helpers (programs its
# tools look for on PATH), and writes the agent's config files.
# shellcheck shell=bash disable=SC2034

recipe_pi() {
  command="pi"
  api="anthropic-messages"
  args=("-p" "--offline" "--no-session" "--mode" "json" "--provider" "harness" "--model" "scripted" "--tools" "read,bash,edit,write,grep,find,ls" "${prompt}")
  env=("HOME=${home}" "PI_CODING_AGENT_DIR=${home}/.pi/agent" "PI_OFFLINE=1")
  helpers=("rg" "fd")
  mkdir -p "$(dirname "${home}/.pi/agent/models.json")"
  printf '%s' "{\"providers\":{\"harness\":{\"baseUrl\":\"${model_url}\",\"api\":\"anthropic-messages\",\"apiKey\":\"harness\",\"models\":[{\"id\":\"scripted\",\"contextWindow\":128000,\"maxTokens\":4096}]}}}
" > "${home}/.pi/agent/models.json"
}

recipe_claude_code() {
  command="claude"
  api="anthropic-messages"
  args=("-p" "${prompt}" "--output-format" "stream-json" "--verbose" "--dangerously-skip-permissions" "--model" "claude-sonnet-4-5")
  env=("HOME=${home}" "ANTHROPIC_BASE_URL=${model_url}" "ANTHROPIC_API_KEY=harness" "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1" "DISABLE_TELEMETRY=1" "DISABLE_AUTOUPDATER=1" "DISABLE_ERROR_REPORTING=1" "DISABLE_BUG_COMMAND=1" "IS_SANDBOX=1")
  helpers=()
}

recipe_codex() {
  command="codex"
  api="openai-responses"
  args=("exec" "--json" "--skip-git-repo-check" "--ephemeral" "--dangerously-bypass-approvals-and-sandbox" "${prompt}")
  env=("HOME=${home}" "CODEX_HOME=${home}/.codex" "HARNESS_MODEL_KEY=harness")
  helpers=()
  mkdir -p "$(dirname "${home}/.codex/config.toml")"
  printf '%s' "model = \"gpt-5.5\"
model_provider = \"harness\"
check_for_update_on_startup = false

[model_providers.harness]
name = \"harness\"
base_url = \"${model_url}/v1\"
wire_api = \"responses\"
env_key = \"HARNESS_MODEL_KEY\"

[analytics]
enabled = false

[features]
plugins = false
" > "${home}/.codex/config.toml"
}

recipe_gemini_cli() {
  command="gemini"
  api="gemini"
  args=("-p" "${prompt}" "--yolo" "--skip-trust" "--output-format" "stream-json" "-m" "gemini-2.5-pro")
  env=("HOME=${home}" "GEMINI_API_KEY=harness" "GOOGLE_GEMINI_BASE_URL=${model_url}")
  helpers=()
  mkdir -p "$(dirname "${home}/.gemini/settings.json")"
  printf '%s' "{\"privacy\":{\"usageStatisticsEnabled\":false},\"telemetry\":{\"enabled\":false},\"general\":{\"disableAutoUpdate\":true,\"disableUpdateNag\":true},\"security\":{\"auth\":{\"selectedType\":\"gemini-api-key\"}}}
" > "${home}/.gemini/settings.json"
}
