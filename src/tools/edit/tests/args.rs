//! Spec and argument preparation (§edit.1, §edit.2).

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn schema_requires_path_and_edits_without_min_items() {
    let spec = EditTool.spec(&Limits::default());
    assert_eq!(spec.name, "edit");
    let p = &spec.parameters;
    assert_eq!(p["required"], json!(["path", "edits"]));
    assert_eq!(p["additionalProperties"], json!(false));
    let edits = &p["properties"]["edits"];
    assert_eq!(edits["type"], "array");
    assert!(edits.get("minItems").is_none());
    assert_eq!(edits["items"]["required"], json!(["oldText", "newText"]));
    assert_eq!(edits["items"]["additionalProperties"], json!(false));
    assert!(p["properties"].get("oldText").is_none());
    let names: Vec<String> = builtin_tools()
        .iter()
        .map(|t| t.spec(&Limits::default()).name.into_owned())
        .collect();
    assert_eq!(&names[..3], &["read", "write", "edit"]);
}

#[test]
fn prepare_moves_legacy_fields_last_and_parses_json_text() {
    let t = EditTool;
    assert_eq!(
        t.prepare_arguments(json!({"path": "a", "oldText": "before", "newText": "after"})),
        json!({"path": "a", "edits": [{"oldText": "before", "newText": "after"}]})
    );
    assert_eq!(
        t.prepare_arguments(json!({
            "path": "a",
            "oldText": "legacy", "newText": "L",
            "edits": [{"oldText": "x", "newText": "y"}]
        })),
        json!({"path": "a", "edits": [
            {"oldText": "x", "newText": "y"},
            {"oldText": "legacy", "newText": "L"}
        ]})
    );
    assert_eq!(
        t.prepare_arguments(json!({
            "path": "a",
            "edits": "[{\"oldText\":\"x\",\"newText\":\"y\"}]",
            "oldText": "p", "newText": "q"
        })),
        json!({"path": "a", "edits": [
            {"oldText": "x", "newText": "y"},
            {"oldText": "p", "newText": "q"}
        ]})
    );
    // A single object keeps its edit; the legacy pair still comes last.
    assert_eq!(
        t.prepare_arguments(json!({
            "path": "a",
            "edits": {"oldText": "x", "newText": "y"},
            "oldText": "p", "newText": "q"
        })),
        json!({"path": "a", "edits": [
            {"oldText": "x", "newText": "y"},
            {"oldText": "p", "newText": "q"}
        ]})
    );
    // Not both strings: left alone (validation reports the missing edits).
    let only_old = json!({"path": "a", "oldText": "x"});
    assert_eq!(t.prepare_arguments(only_old.clone()), only_old);
    let numeric = json!({"path": "a", "oldText": "x", "newText": 5});
    assert_eq!(t.prepare_arguments(numeric.clone()), numeric);
    // Unparseable text and non-objects pass through unchanged.
    let text = json!({"path": "a", "edits": "not json"});
    assert_eq!(t.prepare_arguments(text.clone()), text);
    assert_eq!(t.prepare_arguments(json!("edit a")), json!("edit a"));
    assert_eq!(t.prepare_arguments(Value::Null), Value::Null);
}

#[tokio::test]
async fn legacy_only_call_edits_the_file() {
    let h = Harness::memory();
    h.add_file("a.txt", "before\n");
    let r = h
        .call(
            "edit",
            json!({"path": "a.txt", "oldText": "before", "newText": "after"}),
        )
        .await;
    assert_eq!(ok_text(&r), "Successfully replaced 1 block(s) in a.txt.");
    assert_eq!(h.file("a.txt"), "after\n");
    assert!(r.details.as_ref().unwrap().get("ignored_fields").is_none());
}

#[tokio::test]
async fn mixed_legacy_pair_is_applied_as_the_last_edit() {
    let h = Harness::memory();
    h.add_file("a.txt", "one\ntwo\n");
    let r = h
        .call(
            "edit",
            json!({
                "path": "a.txt",
                "edits": [{"oldText": "one", "newText": "1"}],
                "oldText": "one", "newText": "uno"
            }),
        )
        .await;
    // The legacy pair is edits[1]: both claim "one".
    assert_eq!(
        err_text(&r),
        "edits[0] and edits[1] overlap in a.txt. Merge them into one edit or target disjoint \
         regions. (edits[0] matches line 1, edits[1] matches line 1.) None of the 2 edits were \
         applied; fix this one and send all of them again."
    );
    let r = h
        .call(
            "edit",
            json!({
                "path": "a.txt",
                "edits": [{"oldText": "one", "newText": "1"}],
                "oldText": "two", "newText": "2"
            }),
        )
        .await;
    assert_eq!(ok_text(&r), "Successfully replaced 2 block(s) in a.txt.");
    assert_eq!(h.file("a.txt"), "1\n2\n");
}

#[tokio::test]
async fn json_text_and_single_object_edits_are_accepted() {
    let h = Harness::memory();
    h.add_file("a.txt", "abc");
    let r = h
        .call(
            "edit",
            json!({"path": "a.txt", "edits": "[{\"oldText\":\"a\",\"newText\":\"A\"}]"}),
        )
        .await;
    assert_eq!(ok_text(&r), "Successfully replaced 1 block(s) in a.txt.");
    let r = h
        .call(
            "edit",
            json!({"path": "a.txt", "edits": {"oldText": "b", "newText": "B"}}),
        )
        .await;
    assert_eq!(ok_text(&r), "Successfully replaced 1 block(s) in a.txt.");
    assert_eq!(h.file("a.txt"), "ABc");
}

#[tokio::test]
async fn missing_edits_and_bad_items_fail_validation() {
    let h = Harness::memory();
    h.add_file("a.txt", "abc");
    let r = h.call("edit", json!({"path": "a.txt"})).await;
    assert!(err_text(&r).contains("  - /edits: expected a value (the property is required)"));
    let r = h
        .call("edit", edit("a.txt", json!([{"oldText": "a"}])))
        .await;
    assert!(err_text(&r).contains("  - /edits/0/newText: expected a value"));
    let r = h
        .call("edit", json!({"path": "a.txt", "edits": null}))
        .await;
    assert!(err_text(&r).contains("/edits"));
    assert_eq!(h.file("a.txt"), "abc");
}

#[tokio::test]
async fn empty_edits_array_is_refused_by_the_tool() {
    let h = Harness::memory();
    h.add_file("a.txt", "abc");
    let r = h.call("edit", edit("a.txt", json!([]))).await;
    assert_eq!(
        err_text(&r),
        "Edit tool input is invalid. edits must contain at least one replacement. Send edits as \
         a list with one {\"oldText\", \"newText\"} object per change."
    );
}
