//! The sandbox's own checks: policies refused where they enter, the plan
//! on this machine, the model's notice, the temporary directory's life.
//! What programs can and cannot do in one is tested through bash
//! (src/tools/bash/tests/sandbox.rs) and the command line
//! (tests/integration/sandbox.rs).

use std::path::Path;
use std::path::PathBuf;

use pretty_assertions::assert_eq;

use super::*;

fn base() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

fn error_of(policy: SandboxPolicy) -> String {
    match Sandbox::new(policy) {
        Ok(_) => panic!("accepted"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn bad_policies_are_refused_where_they_enter() {
    let (_dir, base) = base();
    let missing = base.join("missing");
    let cases = [
        SandboxPolicy::workspace("relative/ws"),
        SandboxPolicy::workspace(&missing),
        SandboxPolicy::workspace(&base).with_network(Network::Loopback(vec![80, 0])),
        SandboxPolicy::workspace(&base).with_network(Network::Loopback((1..=17).collect())),
        SandboxPolicy {
            tmpdir: Some(missing.clone()),
            ..SandboxPolicy::workspace(&base)
        },
    ];
    let errors: Vec<String> = cases.into_iter().map(error_of).collect();
    assert_eq!(
        errors,
        [
            "the sandbox's writable path relative/ws is not absolute".to_owned(),
            format!(
                "the sandbox's writable path {} cannot be used: No such file or directory (os \
                 error 2)",
                missing.display()
            ),
            "port 0 cannot be let through a sandbox".to_owned(),
            "a sandbox lets at most 16 loopback ports through, not 17".to_owned(),
            format!(
                "the sandbox's temporary directory {} cannot be used: No such file or directory \
                 (os error 2)",
                missing.display()
            ),
        ]
    );
}

#[test]
fn on_this_machine_everything_is_enforced_and_planned_as_asked() {
    let support = support();
    let abi = support
        .landlock
        .clone()
        .unwrap_or_else(|reason| panic!("this test needs Landlock: {reason}"));
    if let Err(reason) = &support.namespaces {
        panic!("this test needs user namespaces: {reason}");
    }
    let (_dir, base) = base();
    let report = |network, contain_processes| {
        let policy = SandboxPolicy {
            contain_processes,
            ..SandboxPolicy::workspace(&base).with_network(network)
        };
        Sandbox::new(policy).unwrap().report().clone()
    };
    assert_eq!(
        [
            report(Network::Loopback(vec![9000, 8080, 9000]), true),
            report(Network::Full, false),
        ],
        [
            SandboxReport {
                fs: FsGuard::Landlock { abi },
                network: NetGuard::Namespace {
                    ports: vec![8080, 9000]
                },
                processes: ProcessGuard::PidNamespace,
            },
            SandboxReport {
                fs: FsGuard::Landlock { abi },
                network: NetGuard::Open,
                processes: ProcessGuard::Off,
            },
        ]
    );
    let json = serde_json::to_value(report(Network::None, true)).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "fs": { "by": "landlock", "abi": abi },
            "network": { "by": "namespace", "ports": [] },
            "processes": { "by": "pid_namespace" }
        })
    );
}

#[test]
fn the_notice_names_the_writable_places_and_the_network() {
    let (_dir, base) = base();
    let ws = base.join("ws");
    let cache = base.join("cache");
    std::fs::create_dir_all(ws.join("build")).unwrap();
    std::fs::create_dir(&cache).unwrap();
    let policy = SandboxPolicy {
        writable: vec![ws.clone(), ws.join("build"), cache.clone()],
        ..SandboxPolicy::workspace(&ws).with_network(Network::Loopback(vec![8080, 9000]))
    };
    let sandbox = Sandbox::new(policy).unwrap();
    assert_eq!(
        sandbox.describe(&ws),
        Some(format!(
            "[Sandboxed: commands may write only in the workspace, build, {} and $TMPDIR; a \
             write anywhere else fails with \"Permission denied\"; their only network is \
             127.0.0.1 ports 8080 and 9000.]",
            cache.display()
        ))
    );
    assert_eq!(
        (sandbox.first_notice(), sandbox.first_notice()),
        (true, false)
    );
}

#[test]
fn a_temporary_directory_of_its_own_goes_with_the_sandbox_and_a_given_one_stays() {
    let (_dir, base) = base();
    // Nothing is made before it is needed.
    let temp = std::env::temp_dir();
    let before = sandbox_dirs(&temp);
    drop(Sandbox::new(SandboxPolicy::workspace(&base)).unwrap());
    assert_eq!(sandbox_dirs(&temp), before);
    let own = Sandbox::new(SandboxPolicy::workspace(&base)).unwrap();
    let made = own.tmpdir().unwrap().to_path_buf();
    let name = made.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("harness-sandbox-") && name.len() == "harness-sandbox-".len() + 16,
        "{name}"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&made).unwrap().permissions().mode() & 0o777,
        0o700
    );
    drop(own);
    assert!(!made.exists());

    let given = base.join("tmp");
    std::fs::create_dir(&given).unwrap();
    let sandbox = Sandbox::new(SandboxPolicy {
        tmpdir: Some(given.clone()),
        ..SandboxPolicy::workspace(&base)
    })
    .unwrap();
    assert_eq!(sandbox.tmpdir().unwrap(), given.as_path());
    drop(sandbox);
    assert!(Path::new(&given).is_dir());
}

/// The names of the sandboxes' directories in `dir`.
fn sandbox_dirs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("harness-sandbox-"))
        .collect();
    names.sort();
    names
}
