//! Streamed updates and their throttle, and memory under huge output.

use pretty_assertions::assert_eq;

use super::*;

// ---------------------------------------------------------------- updates

#[tokio::test]
async fn updates_start_empty_are_throttled_and_end_with_the_final_tail() {
    let h = Harness::local();
    let (r, updates) = h
        .call_recording(
            "bash",
            json!({"command": "for i in $(seq 5000); do echo $i; done"}),
        )
        .await;
    assert_eq!(
        updates[0],
        ToolUpdate {
            content: Vec::new(),
            details: None
        }
    );
    assert!(updates.len() >= 2);
    assert!(updates.len() < 60, "{} updates", updates.len());
    let last = updates.last().unwrap();
    let file = FullOutput::of(&r);
    assert_eq!(text_of(last), seq(3001, 5000));
    assert_eq!(
        last.details.as_ref().unwrap()["full_output_path"],
        file.display()
    );
    assert_eq!(
        last.details.as_ref().unwrap()["truncation"]["total_lines"],
        5000
    );
    // Every partial text is a tail of the final output.
    let all = format!("{}\n", seq(1, 5000));
    for update in &updates[1..] {
        let text = text_of(update);
        assert!(all.contains(text.as_str()), "not a piece of the output");
    }
}

/// A process double that writes scripted chunks, with pauses on the
/// (paused) tokio clock.
#[derive(Debug)]
struct Scripted {
    steps: Vec<Step>,
    end: ExecEnd,
}

#[derive(Clone, Debug)]
enum Step {
    Data(&'static str),
    Wait(u64),
}

impl ProcessOps for Scripted {
    fn exec(
        &self,
        _request: ExecRequest,
        mut on_data: DataSink,
        _cancel: CancellationToken,
    ) -> BoxFuture<'static, std::io::Result<ExecEnd>> {
        let steps = self.steps.clone();
        let end = self.end;
        Box::pin(async move {
            for step in steps {
                match step {
                    Step::Data(text) => on_data(text.as_bytes()),
                    Step::Wait(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                }
            }
            Ok(end)
        })
    }
}

async fn run_scripted(steps: Vec<Step>, end: ExecEnd) -> (ToolResult, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(
        Arc::new(LocalFs),
        Arc::new(Scripted { steps, end }),
        dir.path(),
        true,
    )
    .unwrap();
    let registry = Registry::builder(workspace).build().unwrap();
    let (sink, updates) = recording_sink();
    let r = registry
        .dispatch(
            &ToolCall::new("c1", "bash", json!({"command": "scripted"})),
            CancellationToken::new(),
            sink,
        )
        .await;
    let texts = updates.lock().unwrap().iter().map(text_of).collect();
    (r, texts)
}

const EXIT_0: ExecEnd = ExecEnd::Exited {
    code: Some(0),
    signal: None,
};

#[tokio::test(start_paused = true)]
async fn first_data_is_sent_at_once_and_the_rest_after_the_throttle() {
    let (r, texts) = run_scripted(
        vec![
            Step::Data("a"),
            Step::Data("b"),
            Step::Wait(250),
            Step::Data("c"),
            Step::Wait(10),
            Step::Data("d"),
        ],
        EXIT_0,
    )
    .await;
    // "a" at once; "b" by the timer at 100 ms while the command still runs;
    // "c" at once (the throttle has passed); "d" as the final update.
    assert_eq!(texts, ["", "a", "ab", "abc", "abcd"]);
    assert_eq!(r.text(), "abcd");
}

#[tokio::test(start_paused = true)]
async fn a_burst_of_chunks_gives_three_updates() {
    let mut steps = Vec::new();
    for _ in 0..5000 {
        steps.push(Step::Data("x\n"));
    }
    let (r, texts) = run_scripted(steps, EXIT_0).await;
    assert_eq!(texts.len(), 3, "{:?}", &texts[..3]);
    assert_eq!(texts[..2], ["", "x\n"]);
    assert_eq!(texts[2], "x\n".repeat(2000).trim_end());
    let _file = FullOutput::of(&r);
}

#[tokio::test(start_paused = true)]
async fn a_steady_stream_gives_one_update_per_interval() {
    let mut steps = Vec::new();
    for _ in 0..100 {
        steps.push(Step::Data("x"));
        steps.push(Step::Wait(10));
    }
    steps.pop();
    let (_, texts) = run_scripted(steps, EXIT_0).await;
    // Start, t = 0, one per 100 ms up to 900 ms, and the final one at 990.
    assert_eq!(texts.len(), 12, "{texts:?}");
    assert_eq!(texts.last().unwrap(), &"x".repeat(100));
}

#[tokio::test(start_paused = true)]
async fn nothing_new_at_the_end_means_no_final_update() {
    let (_, texts) = run_scripted(vec![Step::Data("a"), Step::Wait(500)], EXIT_0).await;
    assert_eq!(texts, ["", "a"]);
}

#[tokio::test(start_paused = true)]
async fn scripted_ends_map_to_results() {
    let (r, _) = run_scripted(vec![Step::Data("partial")], ExecEnd::Cancelled).await;
    assert_eq!(r.text(), "partial\n\nCommand aborted");
    let (r, _) = run_scripted(Vec::new(), ExecEnd::Cancelled).await;
    assert_eq!(r.text(), "Command aborted");
    let (r, _) = run_scripted(
        Vec::new(),
        ExecEnd::Exited {
            code: None,
            signal: Some(libc::SIGSEGV),
        },
    )
    .await;
    assert_eq!(
        r.text(),
        "(no output)\n\nCommand was killed by signal 11 (SIGSEGV)"
    );
}

// ---------------------------------------------------------------- memory

#[tokio::test]
async fn huge_output_keeps_memory_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let process = LocalProcess::default();
    let limits = Limits::default();
    let output = Arc::new(Mutex::new(
        OutputAccumulator::new(limits.truncation(), BASH_FILE_PREFIX, Arc::new(LocalFs))
            .in_dir(dir.path()),
    ));
    let peak = Arc::new(Mutex::new(0usize));
    let request = ExecRequest {
        command: "yes | head -c 200000000".to_owned(),
        cwd: dir.path().to_path_buf(),
        timeout: None,
        env: Vec::new(),
    };
    let sink = {
        let output = Arc::clone(&output);
        let peak = Arc::clone(&peak);
        Box::new(move |chunk: &[u8]| {
            let mut output = output.lock().unwrap();
            output.append(chunk);
            let mut peak = peak.lock().unwrap();
            *peak = (*peak).max(output.retained_bytes());
        })
    };
    let end = process
        .exec(request, sink, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(end, EXIT_0);
    let mut output = output.lock().unwrap();
    output.finish();
    let snapshot = output.snapshot();
    assert_eq!(output.raw_bytes(), 200_000_000);
    assert_eq!(snapshot.truncation.total_lines, 100_000_000);
    assert_eq!(snapshot.content, "y\n".repeat(2000).trim_end());
    let file = snapshot.full_output_path.unwrap();
    assert_eq!(disk::metadata(&file).len, 200_000_000);
    // Bounded by the limits (a few windows of 2 × 50 KB plus buffers), not
    // by the 200 MB that went through.
    let peak = *peak.lock().unwrap();
    assert!(peak < 1024 * 1024, "peak {peak} bytes");
}
