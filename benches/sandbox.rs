//! What the sandbox adds to a bash call: `echo` through the registry,
//! plain and in a sandbox, as a model calls it.
//!
//! Group `bash_echo`, one call per iteration:
//!
//! - `plain`: no sandbox (the command starts by `posix_spawn`);
//! - `sandboxed`: a sandbox with the network cut (Landlock, and the user,
//!   PID, mount and network namespaces joined; the command forks twice:
//!   see src/tools/ops/sandbox/enter.rs);
//! - `sandboxed_network_open`: the same with the network allowed (no
//!   network namespace to join), as `harness call` runs by default.
//!
//! Group `sandbox_start`: making a sandbox and running its first command
//! (the init started), against a first command without one: what a
//! scenario that runs bash pays once.
//!
//! Before measuring, the bench checks that the sandbox is in force (a
//! write outside the workspace is refused). After criterion, it runs 1000
//! calls of each kind alternately in blocks of 50 and prints the mean per
//! call, the figure benches/README.md records (the target: at most 1 ms
//! added per call).
//!
//! Run: `cargo bench --bench sandbox` (or `-- --test` for a quick check).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmark setup panics on failure"
)]

mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use harness::tools::LocalProcess;
use harness::tools::Network;
use harness::tools::Registry;
use harness::tools::Sandbox;
use harness::tools::SandboxPolicy;
use harness::tools::ToolCall;
use harness::tools::UpdateSink;
use harness::tools::Workspace;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn registry(root: &std::path::Path, network: Option<Network>) -> Registry {
    let mut workspace = Workspace::local(root).unwrap();
    if let Some(network) = network {
        let sandbox =
            Sandbox::new(SandboxPolicy::workspace(root.to_path_buf()).with_network(network))
                .unwrap();
        assert!(
            sandbox.report().shortfalls().is_empty(),
            "the kernel cannot sandbox here: {}",
            sandbox.report()
        );
        workspace = workspace.with_process(Arc::new(
            LocalProcess::default().with_sandbox(Arc::new(sandbox)),
        ));
    }
    Registry::builder(workspace).build().unwrap()
}

fn call(rt: &tokio::runtime::Runtime, registry: &Registry, command: &str) -> (bool, String) {
    let result = rt.block_on(registry.dispatch(
        &ToolCall::new("bench", "bash", json!({ "command": command })),
        CancellationToken::new(),
        UpdateSink::discard(),
    ));
    (result.is_error, result.text())
}

fn echo(rt: &tokio::runtime::Runtime, registry: &Registry) -> usize {
    let (is_error, text) = call(rt, registry, "echo hello");
    assert!(!is_error, "{text}");
    text.len()
}

/// CPU time (user and system) of this process and of its waited-for
/// children (the shells, and what they waited for).
fn cpu_time() -> Duration {
    let of = |who| {
        // SAFETY: a zeroed rusage is a valid out-parameter.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        unsafe { libc::getrusage(who, &mut usage) };
        let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
    };
    of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN)
}

/// The mean wall time and CPU time of one call of each registry over
/// `calls` calls, run alternately in blocks of 50 (the machine's speed
/// drifts; interleaving keeps the comparison fair; CPU time does not
/// count the waits of a busy machine).
fn interleaved(
    rt: &tokio::runtime::Runtime,
    registries: &[(&str, &Registry)],
    calls: usize,
) -> Vec<(String, Duration, Duration)> {
    let mut walls = vec![Duration::ZERO; registries.len()];
    let mut cpus = vec![Duration::ZERO; registries.len()];
    let block = 50.min(calls);
    for _ in 0..calls / block {
        for (index, (_, registry)) in registries.iter().enumerate() {
            let started = Instant::now();
            let cpu = cpu_time();
            for _ in 0..block {
                black_box(echo(rt, registry));
            }
            walls[index] += started.elapsed();
            cpus[index] += cpu_time().saturating_sub(cpu);
        }
    }
    registries
        .iter()
        .zip(walls.into_iter().zip(cpus))
        .map(|((name, _), (wall, cpu))| {
            (
                (*name).to_owned(),
                wall / (calls as u32),
                cpu / (calls as u32),
            )
        })
        .collect()
}

fn main() {
    let test_mode = common::test_mode();
    eprintln!("sandbox bench: {}", common::describe_machine());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("ws");
    std::fs::create_dir(&root).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let plain = registry(&root, None);
    let sandboxed = registry(&root, Some(Network::None));
    let open = registry(&root, Some(Network::Full));
    // The sandbox is in force before its cost means anything.
    for registry in [&sandboxed, &open] {
        let (refused, text) = call(&rt, registry, "touch ../x");
        assert!(refused && text.contains("Permission denied"), "{text}");
    }

    let mut criterion = common::criterion(50, 5);
    let mut group = criterion.benchmark_group("bash_echo");
    for (name, registry) in [
        ("plain", &plain),
        ("sandboxed", &sandboxed),
        ("sandboxed_network_open", &open),
    ] {
        group.bench_function(name, |b| b.iter(|| black_box(echo(&rt, registry))));
    }
    group.finish();

    let mut group = criterion.benchmark_group("sandbox_start");
    group.bench_function("plain_first_call", |b| {
        b.iter(|| black_box(echo(&rt, &registry(&root, None))))
    });
    group.bench_function("sandboxed_first_call", |b| {
        b.iter(|| black_box(echo(&rt, &registry(&root, Some(Network::None)))))
    });
    group.finish();
    criterion.final_summary();

    // What one sandbox costs to make, use once and end, by the
    // namespaces it needs (printed: what a scenario with bash pays).
    let starts = if test_mode { 5 } else { 100 };
    for (name, network, contain) in [
        ("plain", None, false),
        ("landlock only", Some(Network::Full), false),
        ("+ network namespace", Some(Network::None), false),
        ("+ PID and mount namespaces", Some(Network::Full), true),
        ("all", Some(Network::None), true),
    ] {
        let started = Instant::now();
        for _ in 0..starts {
            let registry = match network.clone() {
                None => registry(&root, None),
                Some(network) => {
                    let policy = SandboxPolicy {
                        contain_processes: contain,
                        ..SandboxPolicy::workspace(root.clone()).with_network(network)
                    };
                    let sandbox = Arc::new(Sandbox::new(policy).unwrap());
                    let workspace = Workspace::local(&root)
                        .unwrap()
                        .with_process(Arc::new(LocalProcess::default().with_sandbox(sandbox)));
                    Registry::builder(workspace).build().unwrap()
                }
            };
            black_box(echo(&rt, &registry));
        }
        eprintln!(
            "sandbox bench: a sandbox made, one echo call, ended ({name}): {:.3} ms",
            started.elapsed().as_secs_f64() * 1e3 / f64::from(starts)
        );
    }

    let calls = if test_mode { 50 } else { 1000 };
    let means = interleaved(
        &rt,
        &[
            ("plain", &plain),
            ("sandboxed", &sandboxed),
            ("sandboxed_network_open", &open),
        ],
        calls,
    );
    let (base_wall, base_cpu) = (means[0].1, means[0].2);
    for (name, wall, cpu) in &means {
        let ms = |d: &Duration| d.as_secs_f64() * 1e3;
        eprintln!(
            "sandbox bench: {calls} echo calls {name}: wall {:.3} ms per call ({:+.3} ms), CPU \
             {:.3} ms ({:+.3} ms)",
            ms(wall),
            ms(wall) - ms(&base_wall),
            ms(cpu),
            ms(cpu) - ms(&base_cpu)
        );
    }
}
