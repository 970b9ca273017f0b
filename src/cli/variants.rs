//! `harness run --variant NAME=FILE …`: what a variant is on the command
//! line (a name and a suite file, loaded and checked before anything
//! runs), and where each variant's baseline is.

use std::path::Path;
use std::path::PathBuf;

use crate::run::Gate;
use crate::run::RepeatSpec;
use crate::run::Selection;
use crate::run::Suite;
use crate::run::Tokenizer;

/// One `--variant NAME=FILE`, its suite file loaded.
#[derive(Debug)]
pub(super) struct Variant {
    /// The name.
    pub name: String,
    /// The suite file, as given.
    pub file: PathBuf,
    /// The suite file, loaded.
    pub suite: Suite,
}

/// What every variant's run shares: the paths and the selection, and the
/// command line's settings.
#[derive(Debug)]
pub(super) struct Lab<'a> {
    /// Scenario files and directories.
    pub paths: &'a [PathBuf],
    /// The selection flags.
    pub selection: &'a Selection,
    /// `--tokenizer`.
    pub tokenizer: Option<Tokenizer>,
    /// `--gate`.
    pub gates: Vec<Gate>,
    /// `--repeat`, `--min-pass`.
    pub repeat: Option<RepeatSpec>,
}

/// Why `--update-snapshots` is refused with `--variant`: a scenario has
/// one snapshot file, the expected values of its suite as it is, and a
/// variant's values differing from them is what a run of variants is for.
pub(super) const NO_SNAPSHOT_UPDATES: &str = "--update-snapshots cannot be combined with --variant: a \
    scenario has one snapshot file, which each variant would overwrite with its own values; a \
    variant whose values differ from the snapshots fails those checks, which the comparison \
    shows. Update the snapshots in a run without --variant";

/// The longest variant name.
const MAX_NAME: usize = 64;

/// Parses and loads the `--variant` flags: at least two, each
/// `NAME=FILE` with a name of letters, digits, `_`, `-` and `.` used once,
/// and a suite file that loads (its problems at their line and column).
pub(super) fn parse(given: &[String]) -> Result<Vec<Variant>, String> {
    if given.len() < 2 {
        return Err(format!(
            "--variant: give at least two variants to compare (got {}), e.g. --variant \
             default=a.yaml --variant tight=b.yaml",
            given.len()
        ));
    }
    let mut variants: Vec<Variant> = Vec::new();
    for flag in given {
        let Some((name, file)) = flag.split_once('=') else {
            return Err(format!(
                "--variant `{flag}`: expected NAME=FILE, a name and a suite file"
            ));
        };
        let good = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
        if name.is_empty() || name.len() > MAX_NAME || !name.chars().all(good) {
            return Err(format!(
                "--variant `{flag}`: the name must be 1 to {MAX_NAME} letters, digits, `_`, `-` \
                 or `.`"
            ));
        }
        if file.is_empty() {
            return Err(format!("--variant `{flag}`: no suite file after `=`"));
        }
        if variants.iter().any(|v| v.name == name) {
            return Err(format!(
                "--variant: the name `{name}` is given twice; each variant needs its own name"
            ));
        }
        let suite = Suite::load_all(Path::new(file), &crate::run::settings::suite_problems)
            .map_err(|problems| {
                let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
                format!("--variant {name}: {}", lines.join("\n"))
            })?;
        variants.push(Variant {
            name: name.to_owned(),
            file: PathBuf::from(file),
            suite,
        });
    }
    Ok(variants)
}

/// The baseline file of variant `name` for `--baseline FILE` or
/// `--save-baseline FILE`: the name inserted before the extension
/// (`reports/baseline.json` → `reports/baseline.tight.json`).
pub(super) fn baseline_file(file: &Path, name: &str) -> PathBuf {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let named = match file.extension() {
        Some(ext) => format!("{stem}.{name}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{name}"),
    };
    file.with_file_name(named)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn variant_flags_are_checked() {
        let err = |given: &[&str]| {
            parse(&given.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()).unwrap_err()
        };
        assert_eq!(
            err(&["a=x.yaml"]),
            "--variant: give at least two variants to compare (got 1), e.g. --variant \
             default=a.yaml --variant tight=b.yaml"
        );
        assert_eq!(
            err(&["a", "b=y.yaml"]),
            "--variant `a`: expected NAME=FILE, a name and a suite file"
        );
        assert_eq!(
            err(&["a b=x.yaml", "b=y.yaml"]),
            "--variant `a b=x.yaml`: the name must be 1 to 64 letters, digits, `_`, `-` or `.`"
        );
        assert_eq!(
            err(&["a=", "b=y.yaml"]),
            "--variant `a=`: no suite file after `=`"
        );
        let missing = err(&["a=/nonexistent/x.yaml", "b=y.yaml"]);
        assert!(
            missing.starts_with("--variant a: /nonexistent/x.yaml:1:1: cannot read the suite file"),
            "{missing}"
        );
    }

    #[test]
    fn each_variant_has_its_baseline_file() {
        assert_eq!(
            baseline_file(Path::new("reports/baseline.json"), "tight"),
            PathBuf::from("reports/baseline.tight.json")
        );
        assert_eq!(
            baseline_file(Path::new("base"), "a"),
            PathBuf::from("base.a")
        );
    }
}
