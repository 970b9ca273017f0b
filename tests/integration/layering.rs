//! The single-crate stand-in for separate crates: a layer may use only the
//! layers above it (ARCHITECTURE.md).

use std::path::Path;

/// Layers in order; each may use the ones before it.
const LAYERS: [&str; 6] = ["tools", "agent", "scenario", "run", "report", "cli"];

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
