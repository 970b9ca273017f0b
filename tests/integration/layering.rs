//! The single-crate stand-in for separate crates: a layer may use only the
//! layers above it, and no two modules of a folder use each
//! other (docs/architecture.md).

use std::path::Path;

/// Layers in order; each may use the ones before it.
const LAYERS: [&str; 10] = [
    "base", "tools", "mcp", "agent", "scenario", "judge", "run", "report", "import", "cli",
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_layer_uses_a_layer_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for (index, layer) in LAYERS.iter().enumerate() {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "layer {layer} has no files");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for lower in &LAYERS[index + 1..] {
                let needle = format!("crate::{lower}::");
                if text.contains(&needle) {
                    violations.push(format!("{} uses {needle}", file.display()));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "layering violations:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_tool_layer_has_no_clap_or_yaml() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for forbidden in ["clap::", "serde_yaml::"] {
            assert!(
                !text.contains(forbidden),
                "{} uses {forbidden}",
                file.display()
            );
        }
    }
}

/// A module's position: the path below `src/`, without `.rs` and without a
/// trailing `mod` (`tools/search/mod.rs` is `["tools", "search"]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Whether a file holds only tests (their imports are not the module's).
fn is_test_file(file: &Path) -> bool {
    let name = file.file_stem().unwrap().to_string_lossy();
    name == "tests"
        || name == "testutil"
        || name.ends_with("_tests")
        || name.ends_with("_properties")
}

/// The code of a file without its trailing `#[cfg(test)] mod …` block and
/// without declarations (`mod x;`, `pub use x::Y;` re-exports), which say
/// where a module lives, not what it uses.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().contains("mod "))
        {
            break;
        }
        let declaration = trimmed.starts_with("mod ")
            || trimmed.starts_with("pub mod ")
            || trimmed.starts_with("pub(crate) mod ")
            || trimmed.starts_with("pub use ")
            || trimmed.starts_with("pub(crate) use ");
        if !declaration && !trimmed.starts_with("//") {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The names each `mod.rs` re-exports, and the child they come from:
/// `crate::tools::Workspace` is a use of `tools/workspace`.
fn reexports(src: &Path, files: &[std::path::PathBuf]) -> Vec<(Vec<String>, String, String)> {
    let re = regex::Regex::new(r"(?m)^\s*pub(?:\(crate\))? use (\w+)::(?:\w+::)*(\w+);").unwrap();
    let mut out = Vec::new();
    for file in files.iter().filter(|f| f.file_name().unwrap() == "mod.rs") {
        let dir = module_path(src, file);
        let text = std::fs::read_to_string(file).unwrap();
        for cap in re.captures_iter(&text) {
            out.push((dir.clone(), cap[2].to_owned(), cap[1].to_owned()));
        }
    }
    out
}

/// Every path a file names through `crate::` or `super::`, made absolute.
fn named_paths(module: &[String], is_mod_rs: bool, code: &str) -> Vec<Vec<String>> {
    let re = regex::Regex::new(r"\b((?:crate|super)(?:::\w+)+)").unwrap();
    let mut out = Vec::new();
    for cap in re.captures_iter(code) {
        let mut parts = cap[1].split("::").peekable();
        let mut base: Vec<String> = if parts.peek() == Some(&"crate") {
            parts.next();
            Vec::new()
        } else {
            // `super` in `a/b.rs` and in `a/b/mod.rs` is `a`.
            parts.next();
            let mut base = module.to_vec();
            base.pop();
            base
        };
        for part in parts {
            if part == "super" {
                base.pop();
            } else {
                base.push(part.to_owned());
            }
        }
        out.push(base);
    }
    // `use child::Item;` in a `mod.rs` names a child without `self::`.
    if is_mod_rs {
        let child = regex::Regex::new(r"(?m)^\s*use (\w+)::").unwrap();
        for cap in child.captures_iter(code) {
            let name = &cap[1];
            if !["std", "crate", "super", "self"].contains(&name) {
                let mut path = module.to_vec();
                path.push(name.to_owned());
                out.push(path);
            }
        }
    }
    out
}

/// A cycle in a graph of named nodes, if there is one.
fn find_cycle(edges: &std::collections::BTreeSet<(String, String)>) -> Option<Vec<String>> {
    use std::collections::BTreeMap;
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        next.entry(a).or_default().push(b);
    }
    // 0 unvisited, 1 on the stack, 2 done.
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    fn visit<'a>(
        node: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        state: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        state.insert(node, 1);
        stack.push(node);
        for &to in next.get(node).into_iter().flatten() {
            match state.get(to).copied().unwrap_or(0) {
                1 => {
                    let start = stack.iter().position(|n| *n == to).unwrap();
                    let mut cycle: Vec<String> =
                        stack[start..].iter().map(|s| (*s).to_owned()).collect();
                    cycle.push(to.to_owned());
                    return Some(cycle);
                }
                0 => {
                    if let Some(cycle) = visit(to, next, state, stack) {
                        return Some(cycle);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node, 2);
        None
    }
    let nodes: Vec<&str> = next.keys().copied().collect();
    for node in nodes {
        if state.get(node).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(cycle) = visit(node, &next, &mut state, &mut stack) {
                return Some(cycle);
            }
        }
    }
    None
}

/// The modules of one folder use each other one way only: no two files or
/// subfolders of a folder import each other, directly or around a loop
/// (`ops` ↔ `search`, `ops` ↔ `path`, `report/gate` ↔ `report/json` were
/// such loops). A folder's `mod.rs` code counts as a node of its own.
#[test]
fn no_module_loops_inside_a_folder() {
    use std::collections::BTreeMap;
    use std::collections::BTreeSet;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let reexported = reexports(&src, &files);
    // Every module path that is a file or a folder.
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_path(&src, f)).collect();
    // Folder -> edges between its children.
    let mut edges: BTreeMap<Vec<String>, BTreeSet<(String, String)>> = BTreeMap::new();
    for file in files.iter().filter(|f| !is_test_file(f)) {
        let from = module_path(&src, file);
        let is_mod_rs = file.file_name().unwrap() == "mod.rs";
        let text = std::fs::read_to_string(file).unwrap();
        for mut target in named_paths(&from, is_mod_rs, &code_of(&text)) {
            // Resolve a re-exported name to the child it comes from.
            for (dir, name, child) in &reexported {
                if target.len() > dir.len() && target.starts_with(dir) && target[dir.len()] == *name
                {
                    target[dir.len()] = child.clone();
                }
            }
            // Cut the target back to the longest module it names.
            while !target.is_empty() && !modules.contains(&target) {
                target.pop();
            }
            // The folder both sit in, and the child of it each is in
            // (`mod` for the folder's own mod.rs).
            let common = from.iter().zip(&target).take_while(|(a, b)| a == b).count();
            let child = |path: &[String]| {
                path.get(common)
                    .cloned()
                    .unwrap_or_else(|| "mod".to_owned())
            };
            let (a, b) = (child(&from), child(&target));
            if a != b {
                edges
                    .entry(from[..common].to_vec())
                    .or_default()
                    .insert((a, b));
            }
        }
    }
    let mut loops = Vec::new();
    for (dir, edges) in &edges {
        if let Some(cycle) = find_cycle(edges) {
            loops.push(format!("src/{}: {}", dir.join("/"), cycle.join(" -> ")));
        }
    }
    assert!(loops.is_empty(), "module loops:\n{}", loops.join("\n"));
}

/// The paths a file names resolve as the compiler resolves them, so a
/// loop written with `super::` is seen as well as one written with
/// `crate::`.
#[test]
fn named_paths_resolve_super_and_crate_like_the_compiler() {
    let module = |parts: &[&str]| parts.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>();
    let yaml = module(&["scenario", "yaml"]);
    assert_eq!(
        named_paths(
            &yaml,
            false,
            "use super::de::closest;\nuse crate::tools::Limits;\n"
        ),
        vec![
            module(&["scenario", "de", "closest"]),
            module(&["tools", "Limits"]),
        ]
    );
    // `super::super` in `tools/ops/mod.rs` is the crate root.
    assert_eq!(
        named_paths(
            &module(&["tools", "ops"]),
            true,
            "use super::super::agent::X;\nuse local::Y;\n"
        ),
        vec![module(&["agent", "X"]), module(&["tools", "ops", "local"])]
    );
}

/// The non-test files of `src/`, each with its text.
fn source_files() -> Vec<(std::path::PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .filter(|file| !is_test_file(file))
        .map(|file| {
            let text = std::fs::read_to_string(&file).unwrap();
            (file, text)
        })
        .collect()
}

/// No source file outside the tests is over 1000 lines: a file that
/// grows past that holds more than one concept.
#[test]
fn no_source_file_is_over_a_thousand_lines() {
    let long: Vec<String> = source_files()
        .iter()
        .filter(|(_, text)| text.lines().count() > 1000)
        .map(|(file, text)| format!("{} ({} lines)", file.display(), text.lines().count()))
        .collect();
    assert_eq!(long, Vec::<String>::new());
}

/// The judge reads a finished transcript: it names nothing of the layers
/// that produce one (the run, an MCP server), report it or import it.
#[test]
fn the_judge_reads_only_a_finished_transcript() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut uses = Vec::new();
    for (file, text) in source_files() {
        if !file.starts_with(src.join("judge")) {
            continue;
        }
        let code = code_of(&text);
        for room in ["run", "cli", "mcp", "report", "import"] {
            let needle = format!("crate::{room}::");
            if code.contains(&needle) {
                uses.push(format!("{} uses {needle}", file.display()));
            }
        }
    }
    assert_eq!(uses, Vec::<String>::new());
}

/// `scenario/` is the file format only: what executes a run (the
/// workspace, faults, conditions) and its settings live in `run/`.
#[test]
fn the_scenario_layer_is_the_format_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/scenario");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let found: Vec<String> = files
        .iter()
        .filter_map(|file| file.file_stem()?.to_str().map(str::to_owned))
        .filter(|stem| {
            ["workspace", "faults", "conditions", "settings", "gate"].contains(&stem.as_str())
        })
        .collect();
    assert_eq!(found, Vec::<String>::new());
}

/// One day has one owner (`base::bounds`): the literal `86400` is written
/// at most once in `src/`.
#[test]
fn one_day_is_written_once() {
    let count: usize = source_files()
        .iter()
        .map(|(_, text)| code_of(text).matches("86400").count())
        .sum();
    assert!(count <= 1, "86400 is written {count} times");
}
