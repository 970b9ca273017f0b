//! Every tool call of a session file accounted for: the calls the file
//! holds, counted apart from the branch an importer follows (the first
//! pass over a JSONL session, [`super::lines::Tree::calls`], or the reader
//! itself where there is no first pass), set against what the importer
//! made of them: replayed, listed with the reason it is not replayed, or
//! met on a branch it does not follow (a side chain not imported, a branch
//! the session left). A call in none of these is lost, a bug of the
//! importer, which the import reports (docs/replay.md, "Every call
//! accounted for").

use std::collections::HashMap;
use std::collections::HashSet;

use super::lines::FileCall;
use super::session::Elsewhere;
use super::session::Recording;

/// What became of the calls of a session file. By construction
/// `in_file == replayed + listed + side_chains + other_branches +
/// unreadable` when nothing is lost or unseen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Accounting {
    /// Calls in the file (once for each id).
    pub in_file: usize,
    /// Replayed.
    pub replayed: usize,
    /// Listed in the scenario with the reason they are not replayed.
    pub listed: usize,
    /// In side chains (sub-agents) not imported.
    pub side_chains: usize,
    /// On branches the session left.
    pub other_branches: usize,
    /// On lines that could not be read (each a problem said).
    pub unreadable: usize,
    /// Calls listed under an id a call before them had used with other
    /// arguments (counted once, with that call, in `in_file`).
    pub reused: usize,
    /// Calls of the file the importer did not account for, in file order.
    pub lost: Vec<FileCall>,
    /// Ids of calls the importer met that the count of the file did not
    /// see, sorted.
    pub unseen: Vec<String>,
}

impl Accounting {
    /// The calls on branches not followed.
    pub(crate) fn elsewhere(&self) -> usize {
        self.side_chains + self.other_branches
    }

    /// The accounting line: `calls in file: N = replayed R + listed L`,
    /// then what was elsewhere (`+ on other branches B (…)`) and on
    /// unreadable lines, when there were any.
    pub(crate) fn line(&self) -> String {
        let mut line = format!(
            "calls in file: {} = replayed {} + listed {}",
            self.in_file, self.replayed, self.listed
        );
        if self.elsewhere() > 0 {
            line.push_str(&format!(" + on other branches {}", self.elsewhere()));
            let parts: Vec<String> = [
                (self.side_chains, "in side chains not imported"),
                (self.other_branches, "on branches the session left"),
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
            line.push_str(&format!(" ({})", parts.join(", ")));
        }
        if self.unreadable > 0 {
            line.push_str(&format!(
                " + on unreadable lines {} (said above)",
                self.unreadable
            ));
        }
        if self.reused > 0 {
            line.push_str(&format!(
                "; {} more listed under an id used before",
                self.reused
            ));
        }
        line
    }

    /// The importer's own bug, said: the first call it lost, or the first
    /// it met that the count of the file did not see.
    pub(crate) fn problem(&self) -> Option<String> {
        let sum = self.replayed + self.listed + self.elsewhere() + self.unreadable;
        if let Some(call) = self.lost.first() {
            return Some(format!(
                "{} of the {} calls in the file {} not accounted for (a bug of the importer: \
                 please report it); the first is call `{}` ({}) on line {}",
                self.lost.len(),
                self.in_file,
                if self.lost.len() == 1 { "is" } else { "are" },
                call.id.escape_debug(),
                call.tool.escape_debug(),
                call.line
            ));
        }
        if let Some(id) = self.unseen.first() {
            return Some(format!(
                "the importer met {sum} call{} but the file counts {} (a bug of the importer: \
                 please report it); the first it met that the count did not see is call `{}`",
                if sum == 1 { "" } else { "s" },
                self.in_file,
                id.escape_debug()
            ));
        }
        None
    }
}

/// The accounting of a file whose calls are `in_file`, imported as
/// `recordings` (the main chain first, then the side chains imported).
pub(crate) fn account(in_file: &[FileCall], recordings: &[&Recording]) -> Accounting {
    let mut made: HashSet<&str> = HashSet::new();
    let mut elsewhere: HashMap<&str, Elsewhere> = HashMap::new();
    let mut unread: HashSet<usize> = HashSet::new();
    for rec in recordings {
        let (met, seen_elsewhere) = rec.met();
        made.extend(met);
        for (id, whence) in seen_elsewhere {
            elsewhere.entry(id).or_insert(whence);
        }
        unread.extend(rec.unread.iter().copied());
    }
    elsewhere.retain(|id, _| !made.contains(id));
    // A recorded call replayed as several (Codex's patch of several files:
    // `ID`, `ID#2`, …) is one call.
    let replayed: HashSet<&str> = recordings
        .iter()
        .flat_map(|rec| rec.replayed_ids())
        .map(|id| match id.rsplit_once('#') {
            Some((base, _)) if !made.contains(id) && made.contains(base) => base,
            _ => id,
        })
        .collect();
    let file: HashSet<&str> = in_file.iter().map(|c| c.id.as_str()).collect();
    let mut lost = Vec::new();
    let mut unreadable = 0;
    for call in in_file {
        let id = call.id.as_str();
        if made.contains(id) || elsewhere.contains_key(id) {
            continue;
        }
        if unread.contains(&call.line) {
            unreadable += 1;
        } else {
            lost.push(call.clone());
        }
    }
    let mut unseen: Vec<String> = made
        .iter()
        .chain(elsewhere.keys())
        .filter(|id| !file.contains(*id))
        .map(|id| (*id).to_owned())
        .collect();
    unseen.sort();
    let count = |whence: Elsewhere| elsewhere.values().filter(|w| **w == whence).count();
    let listed = made.len() - made.intersection(&replayed).count();
    let entries: usize = recordings.iter().map(|rec| rec.skipped.len()).sum();
    Accounting {
        in_file: in_file.len(),
        replayed: replayed.len(),
        listed,
        reused: entries.saturating_sub(listed),
        side_chains: count(Elsewhere::SideChain),
        other_branches: count(Elsewhere::OtherBranch),
        unreadable,
        lost,
        unseen,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(line: usize, id: &str, tool: &str) -> FileCall {
        FileCall {
            line,
            id: id.to_owned(),
            tool: tool.to_owned(),
        }
    }

    /// A recording with `replayed` calls in one batch, `listed` calls left
    /// out and calls met elsewhere.
    fn recording(replayed: &[&str], listed: &[&str], elsewhere: &[(&str, Elsewhere)]) -> Recording {
        let mut rec = Recording::new("claude", None);
        let block = |id: &str| serde_json::json!({"id": id, "name": "Read", "input": {}});
        let mut batch = Vec::new();
        for id in replayed {
            let raw = rec.take_call(1, &block(id), "input").unwrap();
            batch.push(raw.replayed_as("read", serde_json::json!({}), None));
        }
        rec.push_batch(batch, None);
        for id in listed {
            let raw = rec.take_call(2, &block(id), "input").unwrap();
            rec.skip(&raw, "no".to_owned(), "no".to_owned());
        }
        for (id, whence) in elsewhere {
            rec.elsewhere(3, id, *whence);
        }
        rec
    }

    #[test]
    fn every_call_is_replayed_listed_or_elsewhere_and_the_line_says_so() {
        let rec = recording(
            &["a", "b"],
            &["c"],
            &[("d", Elsewhere::SideChain), ("e", Elsewhere::OtherBranch)],
        );
        let in_file = ["a", "b", "c", "d", "e"].map(|id| call(1, id, "Read"));
        let accounting = account(&in_file, &[&rec]);
        assert_eq!(
            (accounting.line(), accounting.problem()),
            (
                "calls in file: 5 = replayed 2 + listed 1 + on other branches 2 (1 in side \
                 chains not imported, 1 on branches the session left)"
                    .to_owned(),
                None
            )
        );
    }

    #[test]
    fn a_call_in_none_of_them_is_the_importers_bug_named_with_its_line() {
        let rec = recording(&["a"], &[], &[]);
        let in_file = [
            call(1, "a", "Read"),
            call(7, "b", "Edit"),
            call(9, "c", "Bash"),
        ];
        let accounting = account(&in_file, &[&rec]);
        assert_eq!(
            (accounting.line(), accounting.problem()),
            (
                "calls in file: 3 = replayed 1 + listed 0".to_owned(),
                Some(
                    "2 of the 3 calls in the file are not accounted for (a bug of the importer: \
                     please report it); the first is call `b` (Edit) on line 7"
                        .to_owned()
                )
            )
        );
        // A call the importer met that the count of the file did not see.
        let accounting = account(&[], &[&rec]);
        assert_eq!(
            accounting.problem(),
            Some(
                "the importer met 1 call but the file counts 0 (a bug of the importer: please \
                 report it); the first it met that the count did not see is call `a`"
                    .to_owned()
            )
        );
    }

    #[test]
    fn calls_on_unreadable_lines_are_said_not_lost() {
        let mut rec = recording(&["a"], &[], &[]);
        rec.unread.push(4);
        let accounting = account(&[call(1, "a", "Read"), call(4, "b", "Bash")], &[&rec]);
        assert_eq!(
            (accounting.line(), accounting.problem()),
            (
                "calls in file: 2 = replayed 1 + listed 0 + on unreadable lines 1 (said above)"
                    .to_owned(),
                None
            )
        );
    }
}
