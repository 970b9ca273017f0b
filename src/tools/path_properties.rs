//! Path properties (§common.3, D1): whatever a model writes, a confined
//! path never leads outside the workspace, checked against where the
//! kernel would really go, on a real tree full of symlinks.

use std::path::Path;
use std::path::PathBuf;

use proptest::prelude::*;
use serde_json::json;

use super::PathError;
use super::PathPolicy;
use crate::tools::Registry;
use crate::tools::ToolCall;
use crate::tools::UpdateSink;
use crate::tools::Workspace;
use crate::tools::ops::FileKind;
use crate::tools::ops::LocalFs;
use crate::tools::testutil::cases;
use crate::tools::testutil::disk;
use crate::tools::testutil::manual_cases;

/// The names the path fixture creates under the workspace root (see
/// [`PathFixture`]), plus names that do not exist (`dangling_out` exists
/// only in the fixture with a dangling symlink to outside).
const PATH_NAMES: &[&str] = &[
    "a",
    "b",
    "dir",
    "sub",
    "file.txt",
    "missing",
    "new.txt",
    "sp ace",
    "in_link",
    "in_abs_link",
    "file_link",
    "out_link",
    "out_abs_link",
    "file_out_link",
    "up_link",
    "root_link",
    "chain_link",
    "dangling_in",
    "dangling_out",
    "loop_link",
    "ws-evil",
];

/// One component of a generated path.
fn arb_path_component() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(PATH_NAMES).prop_map(str::to_owned),
        2 => Just("..".to_owned()),
        1 => Just(".".to_owned()),
        1 => Just(String::new()),
        // Unicode spaces that normalisation turns into the ASCII space of
        // `sp ace`.
        1 => prop::sample::select(vec!["sp\u{00A0}ace", "sp\u{202F}ace", "sp\u{3000}ace"])
            .prop_map(str::to_owned),
    ]
}

/// How a generated path begins.
#[derive(Clone, Debug)]
enum PathStart {
    /// Relative to the workspace.
    Relative,
    /// The filesystem root `/`.
    Slash,
    /// The workspace root, absolute.
    Root,
    /// The directory holding the workspace, absolute.
    Parent,
    /// The outside directory, absolute.
    Outside,
    /// `~/` (the home directory).
    Tilde,
    /// `file://` followed by the workspace root.
    FileUrl,
}

/// A path argument: a start, components, and optionally a leading `@`.
fn arb_path_arg() -> impl Strategy<Value = (PathStart, Vec<String>, bool)> {
    let start = prop_oneof![
        6 => Just(PathStart::Relative),
        1 => Just(PathStart::Slash),
        2 => Just(PathStart::Root),
        1 => Just(PathStart::Parent),
        1 => Just(PathStart::Outside),
        1 => Just(PathStart::Tilde),
        1 => Just(PathStart::FileUrl),
    ];
    (
        start,
        prop::collection::vec(arb_path_component(), 0..6),
        prop::bool::weighted(0.2),
    )
}

/// A temporary directory holding a workspace and its surroundings:
///
/// ```text
/// tmp/
///   outside/secret.txt, outside/sub/
///   ws-evil/x.txt          a sibling whose name starts with the root's
///   ws/                    the workspace root
///     a/b/, dir/sub/file.txt, file.txt, "sp ace"/file.txt
///     in_link -> a                   in_abs_link -> <ws>/dir
///     file_link -> dir/sub/file.txt  chain_link -> in_link/b
///     out_link -> ../outside         out_abs_link -> <tmp>/outside
///     file_out_link -> ../outside/secret.txt
///     up_link -> ..                  root_link -> /
///     dangling_in -> a/missing       loop_link -> loop_link
///     ws-evil -> ../ws-evil
/// ```
///
/// With `dangling_outside`, also `dangling_out -> ../outside/missing.txt`
/// (see the regression tests below).
struct PathFixture {
    /// Keeps the directory alive.
    _tmp: tempfile::TempDir,
    /// The canonical temporary directory.
    base: PathBuf,
    /// The canonical workspace root.
    root: PathBuf,
}

impl PathFixture {
    /// Builds the tree.
    fn new(dangling_outside: bool) -> Self {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("ws");
        for dir in [
            "outside/sub",
            "ws-evil",
            "ws/a/b",
            "ws/dir/sub",
            "ws/sp ace",
        ] {
            disk::create_dir_all(base.join(dir));
        }
        for file in [
            "outside/secret.txt",
            "ws-evil/x.txt",
            "ws/file.txt",
            "ws/dir/sub/file.txt",
            "ws/sp ace/file.txt",
        ] {
            disk::write(base.join(file), "x\n");
        }
        let links: &[(&str, PathBuf)] = &[
            ("in_link", "a".into()),
            ("in_abs_link", root.join("dir")),
            ("file_link", "dir/sub/file.txt".into()),
            ("chain_link", "in_link/b".into()),
            ("out_link", "../outside".into()),
            ("out_abs_link", base.join("outside")),
            ("file_out_link", "../outside/secret.txt".into()),
            ("up_link", "..".into()),
            ("root_link", "/".into()),
            ("dangling_in", "a/missing".into()),
            ("loop_link", "loop_link".into()),
            ("ws-evil", "../ws-evil".into()),
        ];
        for (name, target) in links {
            symlink(target, root.join(name)).unwrap();
        }
        if dangling_outside {
            symlink("../outside/missing.txt", root.join("dangling_out")).unwrap();
        }
        Self {
            _tmp: tmp,
            base,
            root,
        }
    }

    /// The argument text for a generated path.
    fn arg(&self, start: &PathStart, parts: &[String], at: bool) -> String {
        let joined = parts.join("/");
        let text = match start {
            PathStart::Relative => joined,
            PathStart::Slash => format!("/{joined}"),
            PathStart::Root => format!("{}/{joined}", self.root.display()),
            PathStart::Parent => format!("{}/{joined}", self.base.display()),
            PathStart::Outside => format!("{}/outside/{joined}", self.base.display()),
            PathStart::Tilde => format!("~/{joined}"),
            PathStart::FileUrl => format!("file://{}/{joined}", self.root.display()),
        };
        if at { format!("@{text}") } else { text }
    }
}

/// Where opening `path` would really lead, found independently of the
/// crate: walk the components, following every symlink with `read_link`
/// the way the kernel does, dangling ones included (a write through a
/// dangling symlink creates its target). Components that do not exist are
/// appended as they are. `None` for a symlink loop (the kernel refuses to
/// open those, so they lead nowhere).
fn kernel_target(path: &Path) -> Option<PathBuf> {
    use std::collections::VecDeque;
    use std::path::Component;
    let mut todo: VecDeque<PathBuf> = path
        .components()
        .map(|c| PathBuf::from(c.as_os_str()))
        .collect();
    let mut current = PathBuf::from("/");
    let mut hops = 0;
    while let Some(part) = todo.pop_front() {
        match part.components().next() {
            Some(Component::RootDir) => current = PathBuf::from("/"),
            Some(Component::CurDir) | None => {}
            Some(Component::ParentDir) => {
                current.pop();
            }
            Some(Component::Normal(name)) => {
                let candidate = current.join(name);
                match disk::symlink_metadata(&candidate) {
                    Ok(meta) if meta.kind == FileKind::Symlink => {
                        hops += 1;
                        if hops > 40 {
                            return None;
                        }
                        let target = disk::read_link(&candidate).ok()?;
                        for component in target.components().rev() {
                            todo.push_front(PathBuf::from(component.as_os_str()));
                        }
                    }
                    _ => current = candidate,
                }
            }
            Some(Component::Prefix(_)) => return None,
        }
    }
    Some(current)
}

fn check_confinement(fixture: &PathFixture, arg: &str) -> Result<(), TestCaseError> {
    let policy = PathPolicy::new(&LocalFs, &fixture.root, true).unwrap();
    let abs = policy.absolute(arg);
    prop_assert!(abs.is_absolute());
    let target = kernel_target(&abs);
    let inside = target.as_ref().map(|t| t.starts_with(&fixture.root));
    match policy.resolve(&LocalFs, arg) {
        Ok(resolved) => {
            // What a tool opens is `abs`; where that really leads must be
            // inside the workspace.
            prop_assert_eq!(&resolved.abs, &abs);
            prop_assert!(resolved.real.starts_with(&fixture.root));
            prop_assert!(
                inside != Some(false),
                "accepted {:?}, which leads to {:?}",
                arg,
                target
            );
        }
        Err(PathError::Outside { .. }) => {
            prop_assert!(
                inside != Some(true),
                "refused {:?}, which leads to {:?} inside",
                arg,
                target
            );
        }
        // Only a symlink loop is unresolvable in this tree.
        Err(PathError::Unresolvable { .. }) => prop_assert!(target.is_none()),
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn confined_paths_never_lead_outside_the_workspace((start, parts, at) in arb_path_arg()) {
        thread_local! {
            static FIXTURE: PathFixture = PathFixture::new(false);
        }
        FIXTURE.with(|fixture| check_confinement(fixture, &fixture.arg(&start, &parts, at)))?;
    }
}

// Regression: a dangling symlink whose target is outside the workspace was
// once accepted (the real path came from the nearest ancestor that
// canonicalised), and `write` followed the link out of the workspace.

#[test]
fn confined_paths_never_lead_outside_even_through_dangling_symlinks() {
    let fixture = PathFixture::new(true);
    let mut runner = proptest::test_runner::TestRunner::new(manual_cases(256));
    let outcome = runner.run(&arb_path_arg(), |(start, parts, at)| {
        check_confinement(&fixture, &fixture.arg(&start, &parts, at))
    });
    if let Err(err) = outcome {
        panic!("{err}");
    }
    // The case the generator finds, stated directly.
    let result = check_confinement(&fixture, "dangling_out");
    assert!(result.is_ok(), "{result:?}");
}

#[test]
fn write_through_a_dangling_symlink_does_not_escape() {
    let fixture = PathFixture::new(true);
    let registry = Registry::builder(Workspace::local(&fixture.root).unwrap())
        .build()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let call = ToolCall::new(
        "w",
        "write",
        json!({ "path": "dangling_out", "content": "escaped\n" }),
    );
    let result = runtime.block_on(registry.dispatch(
        &call,
        tokio_util::sync::CancellationToken::new(),
        UpdateSink::discard(),
    ));
    let escaped = fixture.base.join("outside/missing.txt");
    assert!(
        !escaped.exists(),
        "write created {} outside the workspace: {}",
        escaped.display(),
        result.text()
    );
    assert!(result.is_error, "{}", result.text());
}
