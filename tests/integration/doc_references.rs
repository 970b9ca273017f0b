//! References in the code's comments lead somewhere a reader can go: each
//! design decision named `D<n>` has its row in docs/tools.md, each
//! `docs/<page>.md` named exists, and each section of pi's tool layer
//! named `§<id>` (the reference behaviour the code follows) has its entry
//! in docs/pi-reference.md. That page, in turn, has entries only for the
//! sections the code cites (and the sections that hold them).

use std::collections::BTreeSet;
use std::path::Path;
use std::path::PathBuf;

use regex::Regex;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every comment line of the crate's sources, benches and tests, with
/// where it is.
fn comment_lines() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    for dir in ["src", "benches", "tests", "examples"] {
        if root.join(dir).is_dir() {
            files(&root.join(dir), &mut paths);
        }
    }
    paths.sort();
    let mut lines = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let shown = path.strip_prefix(root).unwrap().display().to_string();
        for (n, line) in text.lines().enumerate() {
            if let Some(at) = line.find("//") {
                lines.push((format!("{shown}:{}", n + 1), line[at..].to_owned()));
            }
        }
    }
    lines
}

#[test]
fn every_reference_in_a_comment_resolves_to_the_repository_s_docs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tools_md = std::fs::read_to_string(root.join("docs/tools.md")).unwrap();
    let row = Regex::new(r"(?m)^\| (D\d+) \|").unwrap();
    let decisions: BTreeSet<String> = row
        .captures_iter(&tools_md)
        .map(|c| c[1].to_owned())
        .collect();
    assert_eq!(decisions.len(), 21, "docs/tools.md's table of D1–D21");

    let pi_md = std::fs::read_to_string(root.join("docs/pi-reference.md")).unwrap();
    let heading = Regex::new(r"(?m)^#+ .*?§([a-z0-9]+(?:\.[0-9]+)*)\b").unwrap();
    let entries: Vec<String> = heading
        .captures_iter(&pi_md)
        .map(|c| c[1].to_owned())
        .collect();
    let sections: BTreeSet<String> = entries.iter().cloned().collect();
    let section = Regex::new(r"§([a-z0-9]+(?:\.[0-9]+)*)").unwrap();
    // A range cites every section in it: two sections of one parent joined
    // by an en dash or a hyphen, the second written in full or as its last
    // number only. (This file's comments write no real citation, so that
    // they keep no entry alive.)
    let range = Regex::new(
        r"§([a-z0-9]+(?:\.[0-9]+)*)\.([0-9]+)[–-](?:§([a-z0-9]+(?:\.[0-9]+)*)\.)?([0-9]+)\b",
    )
    .unwrap();
    let mut cited = BTreeSet::new();

    let decision = Regex::new(r"\b(D\d{1,2})\b").unwrap();
    let page = Regex::new(r"\bdocs/([A-Za-z0-9_-]+\.md)").unwrap();
    let mut unresolved = Vec::new();
    let mut named = BTreeSet::new();
    for (place, line) in comment_lines() {
        for c in decision.captures_iter(&line) {
            named.insert(c[1].to_owned());
            if !decisions.contains(&c[1]) {
                unresolved.push(format!("{place}: {} (no row in docs/tools.md)", &c[1]));
            }
        }
        for c in page.captures_iter(&line) {
            if !root.join("docs").join(&c[1]).is_file() {
                unresolved.push(format!("{place}: docs/{} (no such page)", &c[1]));
            }
        }
        let mut ids: Vec<String> = section
            .captures_iter(&line)
            .map(|c| c[1].to_owned())
            .collect();
        for c in range.captures_iter(&line) {
            let parent = &c[1];
            if c.get(3).is_some_and(|end| end.as_str() != parent) {
                unresolved.push(format!("{place}: {} (a range across sections)", &c[0]));
                continue;
            }
            let (first, last): (u32, u32) = (c[2].parse().unwrap(), c[4].parse().unwrap());
            if first >= last {
                unresolved.push(format!("{place}: {} (an empty range)", &c[0]));
                continue;
            }
            ids.extend((first..=last).map(|n| format!("{parent}.{n}")));
        }
        for id in ids {
            if !sections.contains(&id) {
                unresolved.push(format!("{place}: §{id} (no entry in docs/pi-reference.md)"));
            }
            cited.insert(id);
        }
    }
    assert_eq!(unresolved, Vec::<String>::new());

    // The page has one entry per section, and only for sections the code
    // cites or that hold a cited one (the tool's section for any of its
    // numbered ones, edit.4 for edit.4.2): an entry nobody cites would
    // describe behaviour no code claims to follow.
    let mut seen = BTreeSet::new();
    let twice: Vec<&String> = entries.iter().filter(|id| !seen.insert(*id)).collect();
    assert_eq!(twice, Vec::<&String>::new(), "sections with two entries");
    let uncited: Vec<&String> = sections
        .iter()
        .filter(|id| {
            let prefix = format!("{id}.");
            !cited.contains(*id) && !cited.iter().any(|c| c.starts_with(&prefix))
        })
        .collect();
    assert_eq!(
        uncited,
        Vec::<&String>::new(),
        "entries of docs/pi-reference.md no comment cites"
    );
    // The check saw the references (a regex that matched nothing would
    // pass any code).
    assert!(named.len() >= 15, "{named:?}");
    assert!(cited.len() >= 40, "{cited:?}");
}
