//! The expectations: a call's `expect:` and the run's, checked and
//! compiled into lists of typed checks ([`crate::scenario::expect`]), their
//! regexes compiled in them (those without `${var}`).

use std::sync::Arc;

use base64::Engine;
use regex::Regex;

use crate::scenario::detail_spec::DetailCheck;
use crate::scenario::detail_spec::DetailMatchers;
use crate::scenario::detail_spec::ImageExpect;
use crate::scenario::detail_spec::ImagesExpect;
use crate::scenario::expect::CallCheck;
use crate::scenario::expect::CallExpectation;
use crate::scenario::expect::ContentCheck;
use crate::scenario::expect::DetailExpect;
use crate::scenario::expect::Figure;
use crate::scenario::expect::FileCheck;
use crate::scenario::expect::FileChecks;
use crate::scenario::expect::FileExpectation;
use crate::scenario::expect::ModeCheck;
use crate::scenario::expect::Pattern;
use crate::scenario::expect::Presence;
use crate::scenario::expect::RunCheck;
use crate::scenario::expect::StatBound;
use crate::scenario::expect::StatCheck;
use crate::scenario::model::CallExpect;
use crate::scenario::model::ErrorExpect;
use crate::scenario::model::FileExpect;
use crate::scenario::model::RunExpect;
use crate::scenario::model::StatsExpect;
use crate::scenario::vars;
use crate::scenario::yaml::Seg;
use crate::tools::ALL_TOOL_NAMES;

use super::validator::NUL_IN_PATH;
use super::validator::Validator;
use super::validator::is_inside;
use super::validator::join;
use super::validator::k;

impl Validator<'_> {
    /// A regex of an expectation at `at`: checked, and compiled unless it
    /// holds `${var}`.
    fn pattern(&mut self, at: &[Seg], text: &str) -> Pattern {
        Pattern {
            text: text.to_owned(),
            regex: self.compile_expect(at, text),
        }
    }

    /// The checks of one call, in the order they are judged, with their
    /// regexes compiled.
    pub(super) fn call_check(
        &mut self,
        expect: &CallExpect,
        at: &[Seg],
        label: &str,
        retry: bool,
    ) -> CallCheck {
        let error = match &expect.error {
            Some(ErrorExpect::Flag(want)) => Some(CallExpectation::Error(*want)),
            Some(ErrorExpect::Matches(p)) => Some(CallExpectation::ErrorMatches(
                self.pattern(&join(at, [k("error")]), p),
            )),
            None => None,
        };
        let matches = expect
            .matches
            .as_ref()
            .map(|p| self.pattern(&join(at, [k("matches")]), p));
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
        let details_at = self.details_at(expect, at, label);
        self.updates_bounds(expect, at, label);
        let mut checks = Vec::new();
        checks.extend(expect.ok.map(CallExpectation::Ok));
        checks.extend(error);
        checks.extend(
            expect
                .contains
                .clone()
                .map(|l| CallExpectation::Contains(l.0)),
        );
        checks.extend(
            expect
                .not_contains
                .clone()
                .map(|l| CallExpectation::NotContains(l.0)),
        );
        checks.extend(matches.map(CallExpectation::Matches));
        checks.extend(expect.equals.clone().map(CallExpectation::Equals));
        checks.extend(expect.lines.map(CallExpectation::Lines));
        checks.extend(expect.truncated.map(CallExpectation::Truncated));
        checks.extend(expect.details.clone().map(CallExpectation::Details));
        checks.extend(details_at);
        if let Some(ImageExpect::Flag(want)) = expect.image {
            checks.push(CallExpectation::HasImage(want));
        }
        checks.extend(expect.max_tokens.map(CallExpectation::MaxTokens));
        if let Some(ImageExpect::Checks(want)) = &expect.image {
            checks.push(CallExpectation::EachImage(want.clone()));
        }
        match &expect.images {
            Some(ImagesExpect::Count(n)) => checks.push(CallExpectation::Images {
                count: *n,
                each: Vec::new(),
            }),
            Some(ImagesExpect::Each(list)) => checks.push(CallExpectation::Images {
                count: list.len(),
                each: list.clone(),
            }),
            None => {}
        }
        if let Some(u) = &expect.updates {
            checks.extend(u.min.map(CallExpectation::UpdatesMin));
            checks.extend(u.max.map(CallExpectation::UpdatesMax));
            checks.extend(
                u.contains
                    .clone()
                    .map(|l| CallExpectation::UpdatesContains(l.0)),
            );
            checks.extend(
                u.last_contains
                    .clone()
                    .map(|l| CallExpectation::UpdatesLastContains(l.0)),
            );
        }
        if expect.snapshot == Some(true) {
            checks.push(CallExpectation::Snapshot);
        }
        checks.extend(expect.cancelled.map(CallExpectation::Cancelled));
        CallCheck {
            label: label.to_owned(),
            retry,
            checks,
            has_vars: vars::call_expect_has_vars(expect),
            keeps_update_texts: expect
                .updates
                .as_ref()
                .is_some_and(|u| u.contains.is_some()),
        }
    }

    /// `details_at`: pointers, matchers and regexes checked; each entry a
    /// check, its regex compiled (unless it holds `${var}`).
    fn details_at(&mut self, expect: &CallExpect, at: &[Seg], label: &str) -> Vec<CallExpectation> {
        let mut checks = Vec::new();
        for (pointer, check) in expect.details_at.iter().flatten() {
            let entry = join(at, [k("details_at"), k(pointer)]);
            if let Some(problem) = pointer_problem(pointer) {
                self.problem_at_key(&entry, format!("{label}: {problem}"));
                continue;
            }
            let mut regex: Option<Arc<Regex>> = None;
            if let DetailCheck::Matchers(m) = check {
                if let Some((key, problem)) = matchers_problem(m) {
                    let place = if key.is_empty() {
                        entry.clone()
                    } else {
                        join(&entry, [k(key)])
                    };
                    self.problem(&place, format!("{label}: {problem}"));
                }
                if let Some(pattern) = &m.matches {
                    regex = self.compile_expect(&join(&entry, [k("matches")]), pattern);
                }
            }
            checks.push(CallExpectation::DetailsAt {
                pointer: pointer.clone(),
                check: DetailExpect::new(check, regex),
            });
        }
        checks
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
        let mut files = Vec::new();
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
            let expectation = match &**file {
                FileExpect::Equals(want) => FileExpectation::Equals(want.clone()),
                FileExpect::Checks(checks) => {
                    FileExpectation::Checks(self.file_checks(&at, checks))
                }
            };
            files.push(FileCheck {
                path: rel.clone(),
                expect: expectation,
                has_vars: vars::file_expect_has_vars(file),
            });
        }
        for (i, name) in expect.order.iter().flatten().enumerate() {
            let known = ALL_TOOL_NAMES.contains(&name.as_str())
                || self.server_tools.contains(name)
                || self.open_tools
                || self.any_tool
                || name
                    .split_once('/')
                    .is_some_and(|(server, _)| self.declared_servers.contains(server));
            if !known {
                self.problem(
                    &[k("expect"), k("order"), Seg::Index(i)],
                    self.unknown_tool(name),
                );
            }
        }
        RunCheck {
            files,
            order: expect.order.clone(),
            stats: expect.stats.as_ref().map(stat_checks).unwrap_or_default(),
        }
    }

    /// The object form of a file's checks (at `at`), checked and compiled.
    fn file_checks(
        &mut self,
        at: &[Seg],
        checks: &crate::scenario::model::FileChecks,
    ) -> FileChecks {
        let matches = checks
            .matches
            .as_ref()
            .map(|p| self.pattern(&join(at, [k("matches")]), p));
        if let Some(mode) = &checks.mode
            && parse_mode(mode).is_none()
        {
            self.problem(
                &join(at, [k("mode")]),
                format!("`{mode}` is not an octal mode like \"644\""),
            );
        }
        let bytes = match &checks.bytes_base64 {
            Some(encoded) => match decode_base64(encoded) {
                Ok(bytes) => Some(bytes),
                Err(problem) => {
                    self.problem(&join(at, [k("bytes_base64")]), problem);
                    None
                }
            },
            None => None,
        };
        if let Some(digest) = &checks.sha256
            && !is_sha256(digest)
        {
            self.problem(
                &join(at, [k("sha256")]),
                format!(
                    "`{digest}` is not a SHA-256 digest: give 64 hex digits (`sha256sum \
                     FILE` prints them)"
                ),
            );
        }
        let mut presence = Vec::new();
        presence.extend(checks.absent.map(Presence::Absent));
        presence.extend(checks.exists.map(Presence::Exists));
        let mut content = Vec::new();
        content.extend(checks.equals.clone().map(ContentCheck::Equals));
        content.extend(checks.contains.clone().map(|l| ContentCheck::Contains(l.0)));
        content.extend(
            checks
                .not_contains
                .clone()
                .map(|l| ContentCheck::NotContains(l.0)),
        );
        content.extend(matches.map(ContentCheck::Matches));
        content.extend(checks.bom.map(ContentCheck::Bom));
        content.extend(checks.eol.map(ContentCheck::Eol));
        content.extend(bytes.map(ContentCheck::Bytes));
        content.extend(checks.sha256.clone().map(ContentCheck::Sha256));
        FileChecks {
            presence,
            symlink: checks.symlink.clone(),
            content,
            mode: checks.mode.as_ref().map(|written| ModeCheck {
                octal: u32::from_str_radix(written, 8)
                    .map(|m| format!("{m:o}"))
                    .unwrap_or_else(|_| written.clone()),
                written: written.clone(),
            }),
        }
    }
}

/// `stats`, in the order they are judged: the exact figures, then the
/// bounds.
fn stat_checks(stats: &StatsExpect) -> Vec<StatCheck> {
    let all = [
        (
            "retries",
            Figure::Retries,
            stats.retries.map(StatBound::Exactly),
        ),
        (
            "errors",
            Figure::Errors,
            stats.errors.map(StatBound::Exactly),
        ),
        ("turns", Figure::Turns, stats.turns.map(StatBound::Exactly)),
        (
            "max_retries",
            Figure::Retries,
            stats.max_retries.map(StatBound::AtMost),
        ),
        (
            "max_errors",
            Figure::Errors,
            stats.max_errors.map(StatBound::AtMost),
        ),
        (
            "max_result_tokens",
            Figure::ResultTokens,
            stats.max_result_tokens.map(StatBound::AtMost),
        ),
        (
            "max_input_tokens",
            Figure::InputTokens,
            stats.max_input_tokens.map(StatBound::AtMost),
        ),
        (
            "max_output_tokens",
            Figure::OutputTokens,
            stats.max_output_tokens.map(StatBound::AtMost),
        ),
    ];
    all.into_iter()
        .filter_map(|(key, figure, want)| want.map(|want| StatCheck { key, figure, want }))
        .collect()
}

/// Octal permission bits for a check: up to four digits.
pub(super) fn parse_mode(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 4 {
        return None;
    }
    u32::from_str_radix(text, 8).ok()
}

/// Why `pointer` is not a JSON pointer, if it is not one.
fn pointer_problem(pointer: &str) -> Option<String> {
    if !pointer.is_empty() && !pointer.starts_with('/') {
        return Some(format!(
            "`{pointer}` is not a JSON pointer: it starts with `/` (`/{pointer}`), or is empty \
             for the whole details"
        ));
    }
    let mut chars = pointer.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return Some(format!(
                "`{pointer}` is not a JSON pointer: `~` is written `~0` and `/` inside a key \
                 `~1`"
            ));
        }
    }
    None
}

/// Why a matcher object is not usable (a number that is not finite, no
/// matcher at all, `exists` and `absent` saying the same thing twice), with
/// the key it concerns.
fn matchers_problem(m: &DetailMatchers) -> Option<(&'static str, String)> {
    for (key, bound) in [("lt", m.lt), ("le", m.le), ("gt", m.gt), ("ge", m.ge)] {
        if bound.is_some_and(|b| !b.is_finite()) {
            return Some((key, format!("`{key}` must be a finite number")));
        }
    }
    if *m == DetailMatchers::default() {
        return Some((
            "",
            "give at least one matcher: equals, contains, not_contains, matches, exists, \
             absent, lt, le, gt or ge"
                .to_owned(),
        ));
    }
    if let (Some(exists), Some(absent)) = (m.exists, m.absent)
        && exists == absent
    {
        return Some((
            "absent",
            format!("`exists: {exists}` and `absent: {absent}` contradict each other; keep one"),
        ));
    }
    None
}

/// Base64 text as `bytes_base64` takes it: whitespace is ignored.
fn decode_base64(text: &str) -> Result<Vec<u8>, String> {
    let cleaned: String = text.split_whitespace().collect();
    base64::engine::general_purpose::STANDARD
        .decode(cleaned)
        .map_err(|err| format!("`bytes_base64` is not valid base64: {err}; give the file's exact bytes in standard base64"))
}

/// Whether `text` is a SHA-256 digest as `sha256` takes it: 64 hex digits.
fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_are_checked() {
        assert_eq!(pointer_problem(""), None);
        assert_eq!(pointer_problem("/a~0b/c~1d/0"), None);
        assert_eq!(
            pointer_problem("diff"),
            Some(
                "`diff` is not a JSON pointer: it starts with `/` (`/diff`), or is empty for \
                 the whole details"
                    .to_owned()
            )
        );
        assert!(pointer_problem("/a~2").is_some());
        assert!(pointer_problem("/a~").is_some());
    }

    #[test]
    fn digests_and_base64_are_read_as_the_keys_take_them() {
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert!(is_sha256(abc));
        assert!(!is_sha256(&abc[1..]));
        assert!(!is_sha256(&format!("{}g", &abc[1..])));
        assert_eq!(decode_base64("YW\n Jj"), Ok(b"abc".to_vec()));
        assert!(decode_base64("YW=Jj").is_err());
    }

    #[test]
    fn matcher_objects_are_validated() {
        assert_eq!(
            matchers_problem(&DetailMatchers::default()).map(|p| p.0),
            Some("")
        );
        assert_eq!(
            matchers_problem(&DetailMatchers {
                lt: Some(f64::NAN),
                ..DetailMatchers::default()
            })
            .map(|p| p.0),
            Some("lt")
        );
        assert_eq!(
            matchers_problem(&DetailMatchers {
                exists: Some(true),
                absent: Some(true),
                ..DetailMatchers::default()
            })
            .map(|p| p.0),
            Some("absent")
        );
        assert_eq!(
            matchers_problem(&DetailMatchers {
                exists: Some(true),
                absent: Some(false),
                ..DetailMatchers::default()
            }),
            None
        );
    }
}
