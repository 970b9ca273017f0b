use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::mcp::record::Call;

fn call(name: &str, arguments: Value, answer: Answer, step: usize) -> Call {
    Call {
        name: name.to_owned(),
        arguments,
        answer,
        step,
    }
}

fn traffic() -> Traffic {
    let text = |t: &str| Answer::Result(json!({"content": [{"type": "text", "text": t}]}));
    Traffic {
        calls: vec![
            call(
                "echo",
                json!({"message": "costs ${HOME}"}),
                text("Echo: costs ${HOME}"),
                0,
            ),
            call(
                "get-sum",
                json!({"a": 1, "b": 2}),
                text("The sum of 1 and 2 is 3."),
                1,
            ),
            call(
                "get-sum",
                json!({"a": 2, "b": 2}),
                text("The sum of 2 and 2 is 4."),
                1,
            ),
            call("slow", json!({}), Answer::Cancelled, 1),
            call(
                "nope",
                json!({}),
                Answer::Error {
                    code: -32602,
                    message: "Unknown tool: nope".to_owned(),
                    data: None,
                },
                2,
            ),
            call(
                "get-tiny-image",
                json!({}),
                Answer::Result(
                    json!({"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}], "isError": false}),
                ),
                3,
            ),
        ],
        other_lines: 0,
        overlong_lines: 0,
        listed: vec![
            "echo".to_owned(),
            "get-sum".to_owned(),
            "get-tiny-image".to_owned(),
        ],
    }
}

#[test]
fn the_traffic_as_a_scenario() {
    let command = ["mcp-server-everything".to_owned()];
    let (text, replayed) = scenario(
        "everything",
        &command,
        Path::new("/home/me/proj"),
        &traffic(),
    )
    .expect("a scenario");
    assert_eq!(replayed, 4);
    insta::assert_snapshot!("traffic_scenario", text);
}

#[test]
fn the_scenario_loads_with_its_recorded_results() {
    let command = ["mcp-server-everything".to_owned()];
    let (text, _) =
        scenario("everything", &command, Path::new("/p"), &traffic()).expect("a scenario");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("session.yaml"), text).expect("write");
    let found = crate::run::discover(
        &[dir.path().to_path_buf()],
        &crate::run::Selection::default(),
    );
    let errors: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(found.scenarios.len(), 1);
}

#[test]
fn no_answered_call_makes_no_scenario() {
    let traffic = Traffic {
        calls: vec![call("slow", json!({}), Answer::Unanswered, 0)],
        ..Traffic::default()
    };
    assert_eq!(
        scenario("s", &["s".to_owned()], Path::new("/"), &traffic),
        None
    );
}

#[test]
fn a_command_is_written_as_typed_with_files_of_the_current_directory_under_dir() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path().join("proj");
    std::fs::create_dir_all(cwd.join("srv")).expect("mkdir");
    std::fs::write(cwd.join("server.py"), "").expect("write");
    std::fs::write(cwd.join("srv/main.js"), "").expect("write");
    let out = cwd.join("tests/recorded");
    let typed = |words: &[&str]| {
        let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        suite_command(&words, &cwd, &out)
    };
    assert_eq!(
        typed(&["python3", "server.py", "--port", "1", "."]),
        ["python3", "${dir}/../../server.py", "--port", "1", "."]
    );
    assert_eq!(
        typed(&["./srv/main.js", "--root=${HOME}", "missing.py"]),
        ["${dir}/../../srv/main.js", "--root=$${HOME}", "missing.py"]
    );
    assert_eq!(
        typed(&["/usr/bin/env", "node", "srv/../server.py"]),
        ["/usr/bin/env", "node", "${dir}/../../server.py"]
    );
    // A program without a `/` is looked up on PATH, even when a file of
    // that name is here.
    assert_eq!(typed(&["server.py"]), ["server.py"]);
    // An output directory elsewhere.
    let other = dir.path().join("elsewhere");
    assert_eq!(
        suite_command(&["./server.py".to_owned()], &cwd, &other),
        ["${dir}/../proj/server.py"]
    );
}
