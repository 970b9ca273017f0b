use pretty_assertions::assert_eq;

use super::*;

#[test]
fn files_loaded_on_several_threads_come_back_in_their_order() {
    for threads in [1, 2, 3, 8] {
        let loaded = load_all(1000, threads, |index| index * 3);
        assert_eq!(loaded, (0..1000).map(|index| index * 3).collect::<Vec<_>>());
    }
    assert_eq!(load_all(0, 4, |index| index), Vec::<usize>::new());
}

#[test]
fn a_suite_that_loads_on_threads_keeps_the_order_of_its_names_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let count = 4 * FILES_PER_THREAD;
    for index in 0..count {
        // File 50 takes file 10's name; file 70 is not YAML.
        let name = if index == 50 { 10 } else { index };
        let text = if index == 70 {
            "name: [unclosed\n".to_owned()
        } else {
            format!("name: n{name}\nmodel:\n  - say: hi\n")
        };
        std::fs::write(dir.path().join(format!("s_{index:03}.yaml")), text).unwrap();
    }
    let found = discover(&[dir.path().to_path_buf()], &Selection::default());
    let names: Vec<&str> = found.scenarios.iter().map(|s| s.name.as_str()).collect();
    let expected: Vec<String> = (0..count)
        .filter(|index| ![50, 70].contains(index))
        .map(|index| format!("n{index}"))
        .collect();
    assert_eq!(names, expected);
    let errors: Vec<(String, usize)> = found
        .errors
        .iter()
        .map(|err| {
            let file = err.path.file_name().unwrap().to_string_lossy().into_owned();
            (file, err.line)
        })
        .collect();
    assert_eq!(
        errors,
        [("s_050.yaml".to_owned(), 1), ("s_070.yaml".to_owned(), 2)]
    );
    let messages: Vec<String> = found.errors.iter().map(|err| err.message.clone()).collect();
    let first = dir.path().join("s_010.yaml");
    assert_eq!(
        messages,
        [
            format!(
                "name: the scenario name `n10` is also the name of the scenario at {}:1:7; names \
                 must be unique in the suite",
                first.display()
            ),
            "YAML syntax error: while parsing a flow sequence, expected ',' or ']'; check the \
             brackets, quotes and indentation around here"
                .to_owned(),
        ]
    );
}
