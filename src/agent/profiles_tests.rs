use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;
use crate::base::vars::var_refs;

fn values() -> Placeholders {
    Placeholders {
        model_url: "http://127.0.0.1:4000".to_owned(),
        workspace: "/w".to_owned(),
        home: "/h".to_owned(),
        prompt: "Fix it.".to_owned(),
    }
}

fn strings(launch: &Launch) -> Vec<String> {
    launch.args.clone()
}

#[test]
fn codex_is_launched_with_its_config_in_its_home() {
    let launch = profile("codex").unwrap().launch(&values());
    let pairs = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    };
    assert_eq!(
        launch,
        Launch {
            command: "codex".to_owned(),
            args: [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--ephemeral",
                "--dangerously-bypass-approvals-and-sandbox",
                "Fix it.",
            ]
            .map(str::to_owned)
            .to_vec(),
            env: pairs(&[
                ("HOME", "/h"),
                ("CODEX_HOME", "/h/.codex"),
                ("HARNESS_MODEL_KEY", "harness"),
            ]),
            files: pairs(&[(
                "/h/.codex/config.toml",
                "model = \"gpt-5.5\"\nmodel_provider = \"harness\"\n\
                 check_for_update_on_startup = false\n\n[model_providers.harness]\n\
                 name = \"harness\"\nbase_url = \"http://127.0.0.1:4000/v1\"\n\
                 wire_api = \"responses\"\nenv_key = \"HARNESS_MODEL_KEY\"\n\n\
                 [analytics]\nenabled = false\n\n[features]\nplugins = false\n",
            )]),
        }
    );
}

#[test]
fn each_agent_speaks_its_format_and_gets_the_task() {
    let table: Vec<(&str, &str, Api, ErrorRule)> = PROFILES
        .iter()
        .map(|p| (p.name, p.command, p.api, p.errors))
        .collect();
    assert_eq!(
        table,
        vec![
            ("pi", "pi", Api::AnthropicMessages, ErrorRule::Flag),
            (
                "claude-code",
                "claude",
                Api::AnthropicMessages,
                ErrorRule::Flag
            ),
            ("codex", "codex", Api::OpenaiResponses, ErrorRule::Codex),
            ("gemini-cli", "gemini", Api::Gemini, ErrorRule::Flag),
        ]
    );
    for profile in &PROFILES {
        let launch = profile.launch(&values());
        // The task is one whole argument, and every agent has its own home.
        assert_eq!(
            strings(&launch).iter().filter(|a| *a == "Fix it.").count(),
            1,
            "{}",
            profile.name
        );
        assert!(
            launch.env.contains(&("HOME".to_owned(), "/h".to_owned())),
            "{}",
            profile.name
        );
        // Every file goes into the throwaway home.
        for (path, _) in &launch.files {
            assert!(path.starts_with("/h/"), "{path}");
        }
    }
    assert_eq!(profile("claude"), None);
}

#[test]
fn every_placeholder_is_a_known_one() {
    for profile in &PROFILES {
        let mut texts: Vec<&str> = profile.args.to_vec();
        texts.extend(profile.env.iter().map(|(_, value)| *value));
        for file in profile.files {
            texts.extend([file.path, file.contents]);
        }
        for text in texts {
            assert!(!text.contains("$${"), "{}: {text}", profile.name);
            for name in var_refs(text) {
                assert!(
                    Placeholders::NAMES.contains(&name.as_str()),
                    "{}: `${{{name}}}` in {text}",
                    profile.name
                );
            }
        }
    }
}

#[test]
fn json_config_files_are_json() {
    for profile in &PROFILES {
        for (path, contents) in profile.launch(&values()).files {
            if path.ends_with(".json") {
                serde_json::from_str::<serde_json::Value>(&contents).unwrap();
            }
        }
    }
}

/// A string as one double-quoted shell word in which the placeholders
/// stay shell variables of the same names.
fn shell_word(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if matches!(c, '"' | '\\' | '`' | '$') {
            out.push('\\');
        }
        out.push(c);
    }
    for name in Placeholders::NAMES {
        out = out.replace(&format!("\\${{{name}}}"), &format!("${{{name}}}"));
    }
    out.push('"');
    out
}

/// The table as the shell functions tests/agents/smoke.sh sources.
fn shell_recipes() -> String {
    let mut out = String::from(
        "# The built-in agent profiles of src/agent/profiles.rs as shell, for\n\
         # tests/agents/smoke.sh. Generated: `cargo test --lib agent::profiles`\n\
         # fails when this file and the table differ, and rewrites it when run\n\
         # with HARNESS_UPDATE_RECIPES=1.\n\
         #\n\
         # recipe_NAME sets, from $model_url, $workspace, $home and $prompt:\n\
         # command (the program looked for on PATH), api (the wire format), args\n\
         # and env (arrays; env holds NAME=VALUE words), helpers (programs its\n\
         # tools look for on PATH), and writes the agent's config files.\n\
         # shellcheck shell=bash disable=SC2034\n",
    );
    for profile in &PROFILES {
        let function = profile.name.replace('-', "_");
        out.push_str(&format!("\nrecipe_{function}() {{\n"));
        out.push_str(&format!("  command={}\n", shell_word(profile.command)));
        out.push_str(&format!("  api={}\n", shell_word(profile.api.name())));
        let args: Vec<String> = profile.args.iter().map(|a| shell_word(a)).collect();
        out.push_str(&format!("  args=({})\n", args.join(" ")));
        let env: Vec<String> = profile
            .env
            .iter()
            .map(|(name, value)| shell_word(&format!("{name}={value}")))
            .collect();
        out.push_str(&format!("  env=({})\n", env.join(" ")));
        let helpers: Vec<String> = profile.helpers.iter().map(|h| shell_word(h)).collect();
        out.push_str(&format!("  helpers=({})\n", helpers.join(" ")));
        for file in profile.files {
            let path = shell_word(file.path);
            out.push_str(&format!("  mkdir -p \"$(dirname {path})\"\n"));
            out.push_str(&format!(
                "  printf '%s' {} > {path}\n",
                shell_word(file.contents)
            ));
        }
        out.push_str("}\n");
    }
    out
}

#[test]
fn the_smoke_recipes_are_the_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/recipes.sh");
    let want = shell_recipes();
    if std::env::var_os("HARNESS_UPDATE_RECIPES").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        have, want,
        "tests/agents/recipes.sh differs from src/agent/profiles.rs: run \
         `HARNESS_UPDATE_RECIPES=1 cargo test --lib agent::profiles` to write it again"
    );
}

#[test]
fn shell_words_keep_only_the_placeholders() {
    assert_eq!(
        shell_word(r#"{"a":"${model_url}/v1","b":"$HOME `x` \ ${other}"}"#),
        r#""{\"a\":\"${model_url}/v1\",\"b\":\"\$HOME \`x\` \\ \${other}\"}""#
    );
}
