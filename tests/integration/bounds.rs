//! Bounds that hold under hostile input, measured on the real binary: the
//! peak resident memory of a `harness` process (`wait4`'s `ru_maxrss`, what
//! `/usr/bin/time -v` reports), with its data segment capped so that a
//! regression fails at once instead of swapping the machine. `harness` is
//! started by a small program in between, tests/fixtures/peak_rss.rs, that
//! reports its peak: started from the test binary itself, it would carry
//! in its figure the memory of every test `cargo test` runs at that time.

use std::io::Read;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;

use flate2::Compression;
use flate2::write::DeflateEncoder;
use serde_json::Value;

const MIB: u64 = 1024 * 1024;

/// What a measured process left: its exit status, output and peak memory.
struct Measured {
    success: bool,
    stdout: String,
    stderr: String,
    /// The most resident memory it held at once, in bytes.
    peak: u64,
}

/// Runs `cmd` (made by [`harness`]) to its end, at most `limit`, with its
/// data segment capped at `cap` bytes (RLIMIT_DATA: heap and private
/// mappings), and measures its peak resident memory.
fn measured(mut cmd: Command, cap: u64, limit: Duration) -> Measured {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit and setpgid are async-signal-safe; nothing else
    // runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: cap,
                rlim_max: cap,
            };
            if libc::setrlimit(libc::RLIMIT_DATA, &limit) != 0 || libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let pid = child.id() as i32;
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            pipe.read_to_end(&mut text).unwrap();
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let Ok(waited) = rx.recv_timeout(limit) else {
        // SAFETY: signalling our own child's process group (the child is
        // not yet reaped, so its group id is not reused).
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        panic!("harness did not finish within {limit:?}");
    };
    assert!(waited.unwrap().success(), "peak_rss failed");
    let stderr = stderr.join().unwrap();
    // The last line is peak_rss's: `peak_rss: KIB STATUS`, after a line
    // break of its own.
    let (stderr, report) = stderr
        .trim_end_matches('\n')
        .rsplit_once("\npeak_rss: ")
        .unwrap_or_else(|| panic!("no peak_rss line in {stderr:?}"));
    let (maxrss, status) = report.split_once(' ').unwrap();
    let status: i32 = status.parse().unwrap();
    Measured {
        success: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        stdout: stdout.join().unwrap(),
        stderr: stderr.to_owned(),
        // Linux reports KiB.
        peak: maxrss.parse::<u64>().unwrap() * 1024,
    }
}

/// Writes a PNG of `w × h` zero samples (colour type `colour`, `depth`
/// bits a sample) to `path`. The deflate stream of its rows is one
/// compressed run of zeros repeated: a segment that ends on a sync flush
/// refers to nothing before it, so copies of it follow each other, and
/// a 20000×20000 16-bit image takes milliseconds, not a 3.2 GB
/// compression.
fn zero_png(path: &Path, w: u32, h: u32, depth: u8, colour: u8) {
    let channels: u64 = match colour {
        0 | 3 => 1,
        4 => 2,
        2 => 3,
        _ => 4,
    };
    let row = (u64::from(w) * channels * u64::from(depth)).div_ceil(8) + 1;
    let total = row * u64::from(h);
    let segment_len: u64 = 16 * MIB;
    let zeros = vec![0u8; segment_len as usize];
    let mut segment = DeflateEncoder::new(Vec::new(), Compression::best());
    segment.write_all(&zeros).unwrap();
    segment.flush().unwrap();
    let segment = segment.get_ref().clone();
    let mut tail = DeflateEncoder::new(Vec::new(), Compression::best());
    tail.write_all(&zeros[..(total % segment_len) as usize])
        .unwrap();
    let tail = tail.finish().unwrap();
    let mut idat = vec![0x78, 0xDA];
    for _ in 0..total / segment_len {
        idat.extend_from_slice(&segment);
    }
    idat.extend_from_slice(&tail);
    // Adler-32 of zeros: the sum stays 1, the sum of sums is the length.
    let adler = ((total % 65521) << 16 | 1) as u32;
    idat.extend_from_slice(&adler.to_be_bytes());
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[depth, colour, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    for (kind, data) in [(b"IHDR", &ihdr[..]), (b"IDAT", &idat), (b"IEND", &[])] {
        png.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        png.extend_from_slice(kind);
        png.extend_from_slice(data);
        png.extend_from_slice(&crc.sum().to_be_bytes());
    }
    std::fs::write(path, png).unwrap();
}

fn harness(dir: &Path) -> Command {
    let mut cmd = Command::new(peak_rss());
    cmd.arg(env!("CARGO_BIN_EXE_harness"))
        .current_dir(dir)
        .env("TMPDIR", dir)
        .env("HARNESS_STATE_DIR", dir.join(".state"));
    cmd
}

/// The program that runs `harness` and reports its peak (an example
/// target: `cargo test` builds it beside the harness binary).
fn peak_rss() -> std::path::PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_harness"))
        .parent()
        .map(|dir| dir.join("examples").join("peak_rss"))
        .unwrap_or_default();
    assert!(
        path.is_file(),
        "{} is missing: `cargo test` builds it (or `cargo build --example peak_rss`)",
        path.display()
    );
    path
}

/// The images of issue 21: a 3 MB PNG of 20000×20000 16-bit RGBA zeros
/// (3.2 GB of pixels) and a 48 KB one of 1-bit zeros (400 MB once
/// expanded) made `read` peak at 3.8 GB and 1 GB. Each is left out from its
/// header with pi's note, and the process stays small.
#[test]
fn an_image_too_large_to_decode_is_left_out_without_decoding_it() {
    let dir = tempfile::tempdir().unwrap();
    zero_png(&dir.path().join("rgba16.png"), 20_000, 20_000, 16, 6);
    zero_png(&dir.path().join("bit1.png"), 20_000, 20_000, 1, 0);
    for (name, size) in [
        ("rgba16.png", 3_110_000..3_120_000),
        ("bit1.png", 40_000..60_000),
    ] {
        let len = std::fs::metadata(dir.path().join(name)).unwrap().len();
        assert!(size.contains(&len), "{name} is {len} bytes");
        let mut cmd = harness(dir.path());
        cmd.args(["call", "read", &format!(r#"{{"path": "{name}"}}"#)]);
        let out = measured(cmd, 1024 * MIB, Duration::from_secs(120));
        assert!(out.success, "{}", out.stderr);
        let result: Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(
            result,
            serde_json::json!({
                "is_error": false,
                "content": [{
                    "type": "text",
                    "text": "Read image file [image/png]\n[Image omitted: could not be resized \
                             below the inline image size limit.]"
                }],
                "details": {
                    "mime_type": "image/png",
                    "bytes": len,
                    "omitted": true,
                    "omitted_reason": "not_resized"
                }
            })
        );
        assert!(out.peak < 64 * MIB, "{name}: peak {} MiB", out.peak / MIB);
    }
}

/// Three reads in one parallel batch share the 256 MiB budget: three of
/// the images above are all left out (11 GB before), and three 4000×4000
/// images that each need about 210 MiB to decode and resize take their
/// turns instead of decoding at once (about 700 MB at once without the
/// shared budget). Each is still sent, resized.
#[test]
fn parallel_image_reads_share_one_decoding_budget() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("fixtures/images");
    std::fs::create_dir_all(&fixture).unwrap();
    for name in ["a", "b", "c"] {
        zero_png(&fixture.join(format!("{name}.png")), 4000, 4000, 8, 6);
        zero_png(
            &fixture.join(format!("huge-{name}.png")),
            20_000,
            20_000,
            16,
            6,
        );
    }
    let read = |name: &str, expect: &str| {
        format!(
            "      - call: read\n        args: {{ path: {name}.png }}\n        expect: {expect}\n"
        )
    };
    let scenarios = [
        (
            "huge.yaml",
            "three images too large to decode",
            "huge-",
            "{ image: false, contains: \"[Image omitted: could not be resized\" }",
        ),
        (
            "large.yaml",
            "three large images",
            "",
            "{ image: { mime_type: image/png, width: 2000, height: 2000 } }",
        ),
    ];
    for (file, title, prefix, expect) in scenarios {
        let text = format!(
            "name: {title}\nworkspace:\n  fixture: images\nmodel:\n  - parallel:\n{}{}{}",
            read(&format!("{prefix}a"), expect),
            read(&format!("{prefix}b"), expect),
            read(&format!("{prefix}c"), expect)
        );
        std::fs::write(dir.path().join(file), text).unwrap();
    }
    for (file, bound) in [
        ("large.yaml", 256 * MIB + 128 * MIB),
        ("huge.yaml", 160 * MIB),
    ] {
        let mut cmd = harness(dir.path());
        cmd.args(["run", file, "--timeout", "600"]);
        let out = measured(cmd, 2048 * MIB, Duration::from_secs(600));
        assert!(out.success, "{file}: {}{}", out.stdout, out.stderr);
        assert!(out.stdout.contains("1 passed"), "{}", out.stdout);
        assert!(out.peak < bound, "{file}: peak {} MiB", out.peak / MIB);
    }
}

/// A run.json of partition `hash:1/18446744073709551615` (which `run
/// --partition` accepted) made `report merge` list every missing partition
/// and abort after 3.6 GB. The count is bounded where it enters, on the
/// command line and in a file alike, and a merge names at most ten missing
/// partitions, counting the rest.
#[test]
fn a_partition_count_is_bounded_where_it_enters() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("one.yaml"),
        "name: one\nmodel:\n  - say: hi\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let mut cmd = harness(dir.path());
        cmd.args(args);
        measured(cmd, 1024 * MIB, Duration::from_secs(60))
    };
    let huge = "hash:1/18446744073709551615";
    let out = run(&["run", "one.yaml", "--partition", huge]);
    assert_eq!(
        (out.success, out.stderr.as_str()),
        (
            false,
            "error: invalid value 'hash:1/18446744073709551615' for '--partition \
             <hash:K/N|slice:K/N>': invalid partition `hash:1/18446744073709551615`: N must be \
             at most 1000 (expected hash:K/N or slice:K/N with 1 <= K <= N <= 1000)\n\nFor more \
             information, try '--help'.\n"
        )
    );
    // A report of partition 1/1000, then the same report claiming 1 of
    // 18446744073709551615 partitions.
    let out = run(&[
        "run",
        "one.yaml",
        "--partition",
        "slice:1/1000",
        "--json",
        "part.json",
    ]);
    assert!(out.success, "{}", out.stderr);
    let part = std::fs::read_to_string(dir.path().join("part.json")).unwrap();
    assert!(part.contains("\"spec\": \"slice:1/1000\""), "{part}");
    std::fs::write(
        dir.path().join("forged.json"),
        part.replace("slice:1/1000", huge),
    )
    .unwrap();
    let out = run(&["report", "merge", "part.json"]);
    assert_eq!(
        (out.success, out.stderr.as_str()),
        (
            false,
            "error: cannot merge: missing partitions: slice:2/1000, slice:3/1000, slice:4/1000, \
             slice:5/1000, \
             slice:6/1000, slice:7/1000, slice:8/1000, slice:9/1000, slice:10/1000, \
             slice:11/1000 and 989 more (of 1000); every partition's run.json is needed\n"
        )
    );
    let out = run(&["report", "merge", "forged.json"]);
    assert_eq!(
        (out.success, out.stderr.as_str()),
        (
            false,
            "error: forged.json:8:41: invalid run report: invalid partition \
             `hash:1/18446744073709551615`: N must be at most 1000 (expected hash:K/N or \
             slice:K/N with 1 <= K <= N <= 1000)\n"
        )
    );
    assert!(out.peak < 64 * MIB, "peak {} MiB", out.peak / MIB);
}

/// Issue 22 item 6: a 100 MB Claude Code transcript (results of 28 KB,
/// each with its `toolUseResult`, batches of one to three calls on side
/// branches) streams: its import holds one line and the calls' short
/// texts at a time, whatever the file's size, and writes the large texts
/// to sidecars as it reads them.
#[test]
fn a_hundred_megabyte_transcript_imports_in_bounded_memory() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let cwd = "/home/dev/big";
    let body = "x".repeat(79) + "\n";
    let text = body.repeat(175);
    writeln!(
        file,
        "{}",
        serde_json::json!({"type": "user", "uuid": "u0", "parentUuid": null, "cwd": cwd,
            "message": {"role": "user", "content": "go"}})
    )
    .unwrap();
    let mut parent = "u0".to_owned();
    let (mut calls, mut message) = (0, 0);
    while calls < 3600 {
        message += 1;
        let batch: Vec<usize> = (calls..calls + 1 + message % 3).collect();
        for &n in &batch {
            writeln!(
                file,
                "{}",
                serde_json::json!({"type": "assistant", "uuid": format!("a{n}"),
                    "parentUuid": parent, "cwd": cwd,
                    "message": {"id": format!("msg_{message}"), "role": "assistant",
                        "content": [{"type": "tool_use", "id": format!("t{n}"), "name": "Read",
                            "input": {"file_path": format!("{cwd}/f{}.txt", n % 40)}}]}})
            )
            .unwrap();
            parent = format!("a{n}");
        }
        for &n in &batch {
            writeln!(
                file,
                "{}",
                serde_json::json!({"type": "user", "uuid": format!("r{n}"),
                    "parentUuid": format!("a{n}"), "cwd": cwd,
                    "message": {"role": "user", "content": [{"type": "tool_result",
                        "tool_use_id": format!("t{n}"), "content": text}]},
                    "toolUseResult": {"type": "text", "file": {"filePath": "f", "content": text,
                        "numLines": 175, "startLine": 1, "totalLines": 175}}})
            )
            .unwrap();
            parent = format!("r{n}");
        }
        calls += batch.len();
    }
    drop(file);
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(len > 100_000_000, "{len}");
    let mut cmd = harness(dir.path());
    cmd.args(["import", "claude", "big.jsonl", "-o", "out"]);
    let out = measured(cmd, 1024 * MIB, Duration::from_secs(300));
    assert!(out.success, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "wrote 1 scenario to out: {calls} calls replayed, 0 not replayed, {calls} recorded \
             texts in sidecar files\ncalls in file: {calls} = replayed {calls} + listed 0\n"
        )
    );
    // Far less than the file: what is held does not grow with it.
    assert!(out.peak < 96 * MIB, "peak {} MiB", out.peak / MIB);
}

/// Issue 42 item 6: a session's bulk in its calls' arguments (a write's
/// content) was held until the scenario was written: `import gemini` of a
/// 99 MB session peaked at 335 MB, `import claude` of 300 MB at 1.1 GB.
/// Each large argument goes to a spool on disk as its call is read, and
/// the scenario is written from it a piece at a time: a 30 MB session of
/// each kind (Codex's added files are in its patches) imports in far less
/// memory than its size, and the scenario holds every text.
#[test]
fn sessions_whose_bulk_is_in_arguments_import_in_bounded_memory() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let cwd = "/home/dev/big";
    let calls = 750;
    let content = |n: usize| format!("{n}\n{}", ("y".repeat(79) + "\n").repeat(500));
    // Gemini CLI: one JSON document, a write_file call a message.
    let mut file =
        std::io::BufWriter::new(std::fs::File::create(dir.path().join("g.json")).unwrap());
    write!(file, "{{\"sessionId\": \"g\", \"messages\": [").unwrap();
    for n in 0..calls {
        let message = serde_json::json!({"id": format!("m{n}"), "type": "gemini", "toolCalls": [{
            "id": format!("w{n}"), "name": "write_file",
            "args": {"file_path": format!("{cwd}/f{n}.txt"), "content": content(n)},
            "status": "success",
            "result": [{"functionResponse": {"response": {"output": "Wrote it."}}}]}]});
        write!(file, "{}\n{message}", if n == 0 { "" } else { "," }).unwrap();
    }
    writeln!(file, "]}}").unwrap();
    drop(file);
    // Claude Code: a Write an entry, its result in the next.
    let mut file =
        std::io::BufWriter::new(std::fs::File::create(dir.path().join("c.jsonl")).unwrap());
    let mut parent = serde_json::Value::Null;
    for n in 0..calls {
        let call = serde_json::json!({"type": "assistant", "uuid": format!("a{n}"),
            "parentUuid": parent, "cwd": cwd,
            "message": {"id": format!("msg_{n}"), "role": "assistant", "content": [{
                "type": "tool_use", "id": format!("t{n}"), "name": "Write",
                "input": {"file_path": format!("{cwd}/f{n}.txt"), "content": content(n)}}]}});
        let result = serde_json::json!({"type": "user", "uuid": format!("r{n}"),
            "parentUuid": format!("a{n}"), "cwd": cwd,
            "message": {"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": format!("t{n}"), "content": "File created."}]}});
        writeln!(file, "{call}\n{result}").unwrap();
        parent = serde_json::Value::from(format!("r{n}"));
    }
    drop(file);
    // Codex CLI: a patch that adds the file, its result in the next line.
    let mut file =
        std::io::BufWriter::new(std::fs::File::create(dir.path().join("x.jsonl")).unwrap());
    let meta = serde_json::json!({"timestamp": "2026-01-01T00:00:00.000Z",
        "type": "session_meta", "payload": {"id": "x", "cwd": cwd}});
    writeln!(file, "{meta}").unwrap();
    for n in 0..calls {
        let added: String = content(n).lines().map(|l| format!("+{l}\n")).collect();
        let patch = format!("*** Begin Patch\n*** Add File: f{n}.txt\n{added}*** End Patch\n");
        let call = serde_json::json!({"type": "response_item", "payload": {
            "type": "custom_tool_call", "name": "apply_patch", "call_id": format!("c{n}"),
            "input": patch}});
        let result = serde_json::json!({"type": "response_item", "payload": {
            "type": "custom_tool_call_output", "call_id": format!("c{n}"),
            "output": format!("Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated \
                the following files:\nA f{n}.txt\n")}});
        writeln!(file, "{call}\n{result}").unwrap();
    }
    drop(file);
    for (format, session) in [
        ("gemini", "g.json"),
        ("claude", "c.jsonl"),
        ("codex", "x.jsonl"),
    ] {
        let len = std::fs::metadata(dir.path().join(session)).unwrap().len();
        assert!(len > 30_000_000, "{len}");
        let mut cmd = harness(dir.path());
        cmd.args(["import", format, session, "-o", format]);
        let out = measured(cmd, 512 * MIB, Duration::from_secs(300));
        assert!(out.success, "{}", out.stderr);
        assert!(
            out.stdout.starts_with(&format!(
                "wrote 1 scenario to {format}: {calls} calls replayed, 0 not replayed"
            )),
            "{}",
            out.stdout
        );
        // Far less than the file: what is held does not grow with it.
        assert!(out.peak < 48 * MIB, "{format}: peak {} MiB", out.peak / MIB);
        // Every text is in the scenario, once.
        let scenario = std::fs::read_to_string(
            dir.path()
                .join(format)
                .join(format!("{}.yaml", session.split('.').next().unwrap())),
        )
        .unwrap();
        assert_eq!(
            scenario.matches(&"y".repeat(79)).count(),
            calls * 500,
            "{format}"
        );
    }
}

/// Issue 21 item 2: every failing `contains` string of a file check
/// carried the whole file: a 20 MB file with 200 strings took 11.8 GB of
/// memory and gave 4 GB each of console, run.json and junit.xml (the
/// binary before the fix aborts at this test's cap). Each failure keeps at
/// most 64 KiB, one copy shared by all 200; the console and junit.xml show
/// it once.
#[test]
fn two_hundred_failures_on_a_twenty_megabyte_file_stay_small() {
    let dir = tempfile::tempdir().unwrap();
    let needles: String = (0..200)
        .map(|k| format!("        - \"missing string number {k:03}\"\n"))
        .collect();
    let chunk = "x".repeat(1000);
    std::fs::write(
        dir.path().join("big.yaml"),
        format!(
            "name: big\nworkspace:\n  files:\n    big.txt: {{ repeat: \"{chunk}\", times: 20000 }}\n\
             model:\n  - say: done\nexpect:\n  files:\n    big.txt:\n      contains:\n{needles}"
        ),
    )
    .unwrap();
    let mut cmd = harness(dir.path());
    cmd.args([
        "run",
        "big.yaml",
        "--jobs",
        "1",
        "--json",
        "run.json",
        "--junit",
        "junit.xml",
    ]);
    let out = measured(cmd, 1024 * MIB, Duration::from_secs(300));
    assert!(!out.success, "{}", out.stderr);
    assert!(out.stdout.contains("(200 failed checks)"), "{}", out.stdout);
    // The first failure shows the kept text, lines cut; the others say it
    // is the same.
    let omitted = 20_000_000 - (65_536 - 256);
    assert!(
        out.stdout.contains(&format!(
            "    actual:   {} … (48720 more characters)\n              [… {omitted} of \
             20000000 bytes not shown: part of line 1 of 1 …]\n",
            "x".repeat(240)
        )),
        "{}",
        &out.stdout[..out.stdout.len().min(4000)]
    );
    assert_eq!(
        out.stdout
            .matches("    actual:   the same 20000000-byte text as the failure above\n")
            .count(),
        199
    );
    assert!(out.stdout.len() < 64 * 1024, "console {}", out.stdout.len());
    let junit = std::fs::metadata(dir.path().join("junit.xml"))
        .unwrap()
        .len();
    assert!(junit < 64 * 1024, "junit.xml {junit}");
    // run.json: each failure's actual within the bound, the cut said.
    let text = std::fs::read_to_string(dir.path().join("run.json")).unwrap();
    assert!(text.len() < 200 * 66 * 1024, "run.json {}", text.len());
    let run: Value = serde_json::from_str(&text).unwrap();
    let failures = run["scenarios"][0]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 200);
    for failure in failures {
        assert!(failure["actual"].as_str().unwrap().len() <= 65_536);
        assert_eq!(
            failure["actual_cut"],
            serde_json::json!({"bytes": 20_000_000, "lines": 1, "omitted_bytes": omitted})
        );
    }
    // The file's bytes and its text as the model reads it, each once.
    assert!(out.peak < 128 * MIB, "peak {} MiB", out.peak / MIB);
}
