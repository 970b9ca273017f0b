//! The selection flags that `run`, `check` and `list` share: `--filter`,
//! `--exact`, `--exclude` (`--skip`) and `--tag`.

use clap::Args;

use crate::run::Selection;
use crate::run::discover::patterns;

/// Which scenarios to take.
#[derive(Debug, Default, Args)]
pub(super) struct SelectionArgs {
    /// Only scenarios whose name or path matches this regex, searched
    /// anywhere in them (repeatable: any of them). Plain text matches as a
    /// substring; escape ( ) [ ] . * + ? | with \ to match them literally.
    #[arg(long = "filter", value_name = "REGEX")]
    pub filters: Vec<String>,
    /// Only the scenario with exactly this name (repeatable; together with
    /// --filter, a scenario is kept when either selects it).
    #[arg(long = "exact", value_name = "NAME")]
    pub exact: Vec<String>,
    /// Leave out scenarios whose name or path matches this regex
    /// (repeatable).
    #[arg(long = "exclude", visible_alias = "skip", value_name = "REGEX")]
    pub exclude: Vec<String>,
    /// Only scenarios with this tag (repeatable: any of them).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
}

impl SelectionArgs {
    /// The selection; an invalid regex is an error naming its flag.
    pub(super) fn selection(&self) -> Result<Selection, String> {
        Ok(Selection {
            filters: patterns("--filter", &self.filters).map_err(|e| e.to_string())?,
            exact: self.exact.clone(),
            exclude: patterns("--exclude", &self.exclude).map_err(|e| e.to_string())?,
            tags: self.tags.clone(),
            only: None,
        })
    }
}
