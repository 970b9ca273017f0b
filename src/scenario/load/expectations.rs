//! The expectations: a call's `expect:` and the run's, their regexes
//! compiled (those without `${var}`), their values checked.

use std::collections::BTreeMap;
use std::sync::Arc;

use regex::Regex;

use crate::scenario::exact;
use crate::scenario::model::CallExpect;
use crate::scenario::model::DetailCheck;
use crate::scenario::model::ErrorExpect;
use crate::scenario::model::FileExpect;
use crate::scenario::model::RunExpect;
use crate::scenario::pointer;
use crate::scenario::vars;
use crate::scenario::yaml::Seg;
use crate::tools::ALL_TOOL_NAMES;

use super::scenario::CallCheck;
use super::scenario::RunCheck;
use super::validator::NUL_IN_PATH;
use super::validator::Validator;
use super::validator::is_inside;
use super::validator::join;
use super::validator::k;
use super::validator::unknown_tool_message;

impl Validator<'_> {
    /// The checks of one call, with their regexes compiled.
    pub(super) fn call_check(
        &mut self,
        expect: &CallExpect,
        at: &[Seg],
        label: &str,
        retry: bool,
    ) -> CallCheck {
        let error_regex = match &expect.error {
            Some(ErrorExpect::Matches(p)) => self.compile_expect(&join(at, [k("error")]), p),
            _ => None,
        };
        let matches = match &expect.matches {
            Some(p) => self.compile_expect(&join(at, [k("matches")]), p),
            None => None,
        };
        if expect.ok == Some(true)
            && matches!(
                expect.error,
                Some(ErrorExpect::Flag(true) | ErrorExpect::Matches(_))
            )
        {
            self.problem(
                &join(at, [k("ok")]),
                format!("{label}: `ok: true` and `error` contradict each other; keep one"),
            );
        }
        let details_regexes = self.details_at(expect, at, label);
        self.updates_bounds(expect, at, label);
        CallCheck {
            label: label.to_owned(),
            retry,
            expect: expect.clone(),
            error_regex,
            matches,
            details_regexes,
        }
    }

    /// `details_at`: pointers, matchers and regexes checked; the regexes
    /// compiled (those without `${var}`), by pointer.
    pub(super) fn details_at(
        &mut self,
        expect: &CallExpect,
        at: &[Seg],
        label: &str,
    ) -> BTreeMap<String, Arc<Regex>> {
        let mut regexes = BTreeMap::new();
        for (pointer, check) in expect.details_at.iter().flatten() {
            let entry = join(at, [k("details_at"), k(pointer)]);
            if let Some(problem) = pointer::pointer_problem(pointer) {
                self.problem_at_key(&entry, format!("{label}: {problem}"));
                continue;
            }
            let DetailCheck::Matchers(m) = check else {
                continue;
            };
            if let Some((key, problem)) = pointer::matchers_problem(m) {
                let place = if key.is_empty() {
                    entry.clone()
                } else {
                    join(&entry, [k(key)])
                };
                self.problem(&place, format!("{label}: {problem}"));
            }
            if let Some(pattern) = &m.matches
                && let Some(regex) = self.compile_expect(&join(&entry, [k("matches")]), pattern)
            {
                regexes.insert(pointer.clone(), regex);
            }
        }
        regexes
    }

    /// `updates: { min, max }`: a range that some count can be in.
    fn updates_bounds(&mut self, expect: &CallExpect, at: &[Seg], label: &str) {
        if let Some(u) = &expect.updates
            && let (Some(min), Some(max)) = (u.min, u.max)
            && min > max
        {
            self.problem(
                &join(at, [k("updates"), k("max")]),
                format!("{label}: `max: {max}` is below `min: {min}`, so no run could pass"),
            );
        }
    }

    /// The run checks, with their regexes compiled; `${var}` in them may be
    /// anything the script captures.
    pub(super) fn run_check(&mut self, expect: &RunExpect) -> RunCheck {
        let mut run_check = RunCheck {
            expect: expect.clone(),
            file_regexes: BTreeMap::new(),
            file_bytes: BTreeMap::new(),
        };
        let files_at = [k("expect"), k("files")];
        let known = self.known_vars.clone();
        for (rel, file) in &expect.files {
            let at = join(&files_at, [k(rel)]);
            if rel.contains('\0') {
                self.problem_at_key(&at, NUL_IN_PATH);
                continue;
            }
            if !is_inside(rel) {
                self.problem_at_key(
                    &at,
                    "a checked file is a relative path inside the workspace, without `..`",
                );
                continue;
            }
            let refs = vars::file_expect_refs(file);
            self.unknown_refs(&at, refs, &known, None, "in a step");
            let FileExpect::Checks(checks) = &**file else {
                continue;
            };
            if let Some(pattern) = &checks.matches
                && let Some(regex) = self.compile_expect(&join(&at, [k("matches")]), pattern)
            {
                run_check.file_regexes.insert(rel.clone(), regex);
            }
            if let Some(mode) = &checks.mode
                && parse_mode(mode).is_none()
            {
                self.problem(
                    &join(&at, [k("mode")]),
                    format!("`{mode}` is not an octal mode like \"644\""),
                );
            }
            if let Some(encoded) = &checks.bytes_base64 {
                match exact::decode_base64(encoded) {
                    Ok(bytes) => {
                        run_check.file_bytes.insert(rel.clone(), bytes);
                    }
                    Err(problem) => self.problem(&join(&at, [k("bytes_base64")]), problem),
                }
            }
            if let Some(digest) = &checks.sha256
                && !exact::is_sha256(digest)
            {
                self.problem(
                    &join(&at, [k("sha256")]),
                    format!(
                        "`{digest}` is not a SHA-256 digest: give 64 hex digits (`sha256sum \
                         FILE` prints them)"
                    ),
                );
            }
        }
        for (i, name) in expect.order.iter().flatten().enumerate() {
            if !ALL_TOOL_NAMES.contains(&name.as_str()) {
                self.problem(
                    &[k("expect"), k("order"), Seg::Index(i)],
                    unknown_tool_message(name),
                );
            }
        }
        run_check
    }
}

/// Octal permission bits for a check: up to four digits.
pub(super) fn parse_mode(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 4 {
        return None;
    }
    u32::from_str_radix(text, 8).ok()
}
