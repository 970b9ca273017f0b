//! Results: exit codes, signals, truncation, the full-output file, cleaning, the shell.

use pretty_assertions::assert_eq;

use super::*;

// ---------------------------------------------------------------- results

#[tokio::test]
async fn output_is_returned_with_exit_code_details() {
    let h = Harness::local();
    let r = bash(&h, "echo hello").await;
    assert!(!r.is_error);
    assert_eq!(r.text(), "hello\n");
    assert_eq!(r.details, Some(json!({"exit_code": 0, "cleaned": false})));
}

#[tokio::test]
async fn no_output_says_so() {
    let h = Harness::local();
    let r = bash(&h, "true").await;
    assert!(!r.is_error);
    assert_eq!(r.text(), "(no output)");
}

#[tokio::test]
async fn non_zero_exit_is_an_error_that_keeps_its_details() {
    let h = Harness::local();
    let r = bash(&h, "echo out; echo err >&2; exit 3").await;
    assert!(r.is_error);
    assert_eq!(r.text(), "out\nerr\n\n\nCommand exited with code 3");
    assert_eq!(r.details, Some(json!({"exit_code": 3, "cleaned": false})));

    let r = bash(&h, "exit 7").await;
    assert_eq!(r.text(), "(no output)\n\nCommand exited with code 7");

    // D14: a truncated failing command keeps truncation and the file.
    let r = bash(&h, "seq 3000; exit 2").await;
    let file = FullOutput::of(&r);
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing lines 1001-3000 of 3000. Full output: {}]\n\nCommand exited with \
             code 2",
            seq(1001, 3000),
            file.display()
        )
    );
    let d = details(&r);
    assert_eq!(d["exit_code"], 2);
    assert_eq!(d["truncation"]["total_lines"], 3000);
    assert_eq!(d["cleaned"], false);
}

#[tokio::test]
async fn a_command_killed_by_a_signal_says_which() {
    let h = Harness::local();
    let r = bash(&h, "echo before; kill -9 $$").await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "before\n\n\nCommand was killed by signal 9 (SIGKILL)"
    );
    assert_eq!(r.details, Some(json!({"signal": 9, "cleaned": false})));
}

#[tokio::test]
async fn seq_3000_shows_the_last_2000_lines_and_saves_the_rest() {
    let h = Harness::local();
    let r = bash(&h, "seq 3000").await;
    let file = FullOutput::of(&r);
    assert!(!r.is_error);
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing lines 1001-3000 of 3000. Full output: {}]",
            seq(1001, 3000),
            file.display()
        )
    );
    let all = format!("{}\n", seq(1, 3000));
    assert_eq!(
        details(&r)["truncation"],
        json!({
            "truncated": true,
            "truncated_by": "lines",
            "total_lines": 3000,
            "total_bytes": all.len(),
            "output_lines": 2000,
            "output_bytes": seq(1001, 3000).len(),
            "last_line_partial": false,
            "first_line_exceeds_limit": false,
            "max_lines": 2000,
            "max_bytes": 51200
        })
    );
    // D18: private, in the temp dir, findable by name, every raw byte.
    assert_eq!(file.bytes(), all.as_bytes());
    assert_eq!(disk::metadata(&file.0).mode & 0o777, 0o600);
    assert_eq!(file.0.parent().unwrap(), std::env::temp_dir());
    let name = file.0.file_name().unwrap().to_str().unwrap();
    let hex = name
        .strip_prefix("harness-bash-")
        .and_then(|n| n.strip_suffix(".log"))
        .unwrap();
    assert_eq!(hex.len(), 16);
    assert!(
        hex.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
}

#[tokio::test]
async fn an_endless_command_leaves_a_log_no_larger_than_the_cap_and_says_so() {
    let h = Harness::local_with(Limits {
        max_log_bytes: 1024 * 1024,
        ..Limits::default()
    });
    let r = h
        .call("bash", json!({"command": "yes", "timeout": 1}))
        .await;
    let file = FullOutput::of(&r);
    assert_eq!(file.bytes(), "y\n".repeat(512 * 1024).as_bytes());
    assert_eq!(details(&r)["full_output_truncated"], json!(true));
    let total = details(&r)["truncation"]["total_lines"].as_u64().unwrap();
    assert!(total > 512 * 1024, "yes wrote only {total} lines");
    let text = r.text();
    let notice = text.lines().nth(2001).unwrap();
    assert_eq!(
        notice,
        format!(
            "[Showing lines {}-{total} of {total}. Full output (only its first 1.0MB, the log \
             limit): {}]",
            total - 1999,
            file.display()
        )
    );
}

#[tokio::test]
async fn a_log_cap_of_zero_saves_nothing_and_says_so() {
    let h = Harness::local_with(Limits {
        max_log_bytes: 0,
        ..Limits::default()
    });
    let r = bash(&h, "seq 3000").await;
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing lines 1001-3000 of 3000. The full output was not saved (the log limit \
             is 0)]",
            seq(1001, 3000)
        )
    );
    assert_eq!(details(&r)["full_output_truncated"], json!(true));
    assert_eq!(details(&r).get("full_output_path"), None);
}

#[tokio::test]
async fn a_final_newline_is_not_an_extra_line() {
    let h = Harness::local();
    let r = bash(&h, "seq -f 'line-%04g' 4000").await;
    let file = FullOutput::of(&r);
    let shown: Vec<String> = (2001..=4000).map(|i| format!("line-{i:04}")).collect();
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing lines 2001-4000 of 4000. Full output: {}]",
            shown.join("\n"),
            file.display()
        )
    );
    assert_eq!(details(&r)["truncation"]["total_lines"], 4000);
}

#[tokio::test]
async fn output_cut_by_bytes_names_the_limit() {
    let h = Harness::local();
    // 2000 lines of 100 bytes: under the line cap, over the byte cap.
    let r = bash(&h, "for i in $(seq 1000); do printf '%099d\\n' $i; done").await;
    let file = FullOutput::of(&r);
    let t = &details(&r)["truncation"];
    assert_eq!(t["truncated_by"], "bytes");
    // 512 lines of 100 bytes (99 + newline) fit in 51200 bytes minus one.
    assert_eq!(t["output_lines"], 512);
    let text = r.text();
    assert!(
        text.ends_with(&format!(
            "\n\n[Showing lines 489-1000 of 1000 (50.0KB limit). Full output: {}]",
            file.display()
        )),
        "{}",
        &text[text.len() - 200..]
    );
    assert!(text.starts_with(&format!("{:099}\n", 489)));
}

#[tokio::test]
async fn one_long_line_without_newline_shows_its_end() {
    let h = Harness::local();
    let r = bash(&h, "head -c 60000 /dev/zero | tr '\\0' 0").await;
    let file = FullOutput::of(&r);
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {}]",
            "0".repeat(51_200),
            file.display()
        )
    );
    assert_eq!(file.bytes(), vec![b'0'; 60_000]);
}

#[tokio::test]
async fn one_long_line_with_newline_reports_its_true_size() {
    // D13: pi prints "(line is 0B)" here.
    let h = Harness::local();
    let r = bash(&h, "head -c 60000 /dev/zero | tr '\\0' 0; echo").await;
    let file = FullOutput::of(&r);
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {}]",
            "0".repeat(51_200),
            file.display()
        )
    );
    let t = &details(&r)["truncation"];
    assert_eq!(t["last_line_partial"], true);
    assert_eq!(t["total_lines"], 1);
    assert_eq!(t["total_bytes"], 60_001);
}

#[tokio::test]
async fn a_line_longer_than_the_window_still_shows_its_end() {
    // D13: pi shows "(no output)" and "[Showing lines 2-1 of 1 …]" here.
    let h = Harness::local();
    let r = bash(&h, "head -c 300000 /dev/zero | tr '\\0' X; echo").await;
    let file = FullOutput::of(&r);
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing last 50.0KB of line 1 (line is 293.0KB). Full output: {}]",
            "X".repeat(51_200),
            file.display()
        )
    );
    assert_eq!(file.bytes().len(), 300_001);
}

#[tokio::test]
async fn crlf_output_is_kept_as_written() {
    let h = Harness::local();
    let r = bash(&h, "printf 'a\\r\\nb\\r\\n'").await;
    assert_eq!(r.text(), "a\r\nb\r\n");
    assert_eq!(details(&r)["cleaned"], false);
}

#[tokio::test]
async fn invalid_utf8_becomes_replacement_characters_and_stays_raw_in_the_file() {
    let h = Harness::local();
    let r = bash(&h, "printf '\\377\\376A\\n'").await;
    assert_eq!(r.text(), "\u{FFFD}\u{FFFD}A\n");

    let h = Harness::local_with(Limits {
        max_lines: 1,
        ..Limits::default()
    });
    let r = bash(&h, "printf '\\377\\376A\\nB\\n'").await;
    let file = FullOutput::of(&r);
    assert_eq!(
        r.text(),
        format!(
            "B\n\n[Showing lines 2-2 of 2. Full output: {}]",
            file.display()
        )
    );
    assert_eq!(file.bytes(), b"\xff\xfeA\nB\n");
}

#[tokio::test]
async fn stdout_and_stderr_keep_their_order() {
    // D20: one pipe, so the order is the order of the writes.
    let h = Harness::local();
    let r = bash(&h, "echo a; echo b >&2; echo c").await;
    assert_eq!(r.text(), "a\nb\nc\n");
    let r = bash(
        &h,
        "for i in $(seq 300); do echo out$i; echo err$i >&2; done",
    )
    .await;
    let want: String = (1..=300).map(|i| format!("out{i}\nerr{i}\n")).collect();
    assert_eq!(r.text(), want);
}

#[tokio::test]
async fn escape_codes_and_redraws_are_cleaned_and_the_file_keeps_them() {
    // D12.
    let h = Harness::local();
    let r = bash(
        &h,
        "printf '\\033[1;31mred\\033[0m\\n10%%\\r50%%\\r100%%\\n\\033]0;title\\007done\\n'",
    )
    .await;
    assert_eq!(r.text(), "red\n100%\ndone\n");
    assert_eq!(r.details, Some(json!({"exit_code": 0, "cleaned": true})));

    let h = Harness::local_with(Limits {
        max_lines: 1,
        ..Limits::default()
    });
    let r = bash(&h, "printf '\\033[32mok\\033[0m\\n1\\r2\\n'").await;
    let file = FullOutput::of(&r);
    assert_eq!(
        r.text(),
        format!(
            "2\n\n[Showing lines 2-2 of 2. Full output: {}]",
            file.display()
        )
    );
    assert_eq!(file.bytes(), b"\x1b[32mok\x1b[0m\n1\r2\n");
    let d = details(&r);
    assert_eq!(d["cleaned"], true);
    // The facts describe the cleaned text.
    assert_eq!(d["truncation"]["total_bytes"], "ok\n2\n".len());
}

#[tokio::test]
async fn control_characters_reach_the_model_as_visible_pictures() {
    let h = Harness::local();
    let r = bash(&h, "printf 'bell\\a nul\\0 bs\\b del\\177\\ttab\\n'").await;
    assert_eq!(r.text(), "bell␇ nul␀ bs␈ del␡\ttab\n");
    assert_eq!(r.details, Some(json!({"exit_code": 0, "cleaned": true})));
}

#[tokio::test]
async fn an_unterminated_osc_string_cannot_hide_a_long_line() {
    // 10 MB without a newline after an OSC that never ends: the string
    // ends at its bound and the end of the line is shown.
    let h = Harness::local();
    let r = bash(
        &h,
        "printf '\\033]0;title'; head -c 10000000 /dev/zero | tr '\\0' x",
    )
    .await;
    let file = FullOutput::of(&r);
    let shown = 10_000_000 + "]0;title".len() - ansi::MAX_SEQUENCE_BYTES;
    assert_eq!(
        r.text(),
        format!(
            "{}\n\n[Showing last 50.0KB of line 1 (line is {}). Full output: {}]",
            "x".repeat(51_200),
            format_size(shown),
            file.display()
        )
    );
    assert_eq!(details(&r)["truncation"]["total_bytes"], json!(shown));
}

#[tokio::test]
async fn the_command_runs_in_the_workspace_root_with_stdin_closed() {
    let h = Harness::local();
    let r = bash(&h, "pwd").await;
    assert_eq!(r.text(), format!("{}\n", h.root().display()));
    // `cat` would wait forever on an open stdin.
    let r = bash(&h, "cat").await;
    assert_eq!(r.text(), "(no output)");
    let r = bash(&h, "read -r line; echo \"status=$?\"").await;
    assert_eq!(r.text(), "status=1\n");
}

#[tokio::test]
async fn each_call_is_a_fresh_shell() {
    let h = Harness::local();
    h.add_dir("sub");
    bash(&h, "cd sub; export X=1").await;
    let r = bash(&h, "pwd; echo \"x=$X\"").await;
    assert_eq!(r.text(), format!("{}\nx=\n", h.root().display()));
}
