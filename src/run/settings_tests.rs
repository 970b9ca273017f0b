use std::time::Duration;

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn jobs_are_one_to_the_most_and_the_flag_says_which() {
    assert_eq!(Jobs::new(1).map(Jobs::get), Ok(1));
    assert_eq!(Jobs::new(Jobs::MAX).map(Jobs::get), Ok(1024));
    for bad in [0, Jobs::MAX + 1, usize::MAX] {
        assert_eq!(Jobs::new(bad), Err(OutOfRange));
    }
    assert_eq!(Jobs::parse(" 8 ").map(Jobs::get), Ok(8));
    assert_eq!(
        [
            Jobs::parse("0"),
            Jobs::parse("1025"),
            Jobs::parse("two"),
            Jobs::parse("-1")
        ],
        [
            Err("`0` is not a number of scenarios at once; use 1 to 1024".to_owned()),
            Err("`1025` is not a number of scenarios at once; use 1 to 1024".to_owned()),
            Err("`two` is not a whole number; use 1 to 1024".to_owned()),
            Err("`-1` is not a whole number; use 1 to 1024".to_owned()),
        ]
    );
    assert_eq!(
        Jobs::problem(0),
        "must be a whole number from 1 to 1024 (it is 0)"
    );
    assert!((1..=Jobs::MAX).contains(&Jobs::cores().get()));
}

#[test]
fn a_budget_is_more_than_nothing_and_at_most_a_day() {
    assert_eq!(
        Budget::from_secs(86_400.0).map(Budget::duration),
        Ok(Duration::from_secs(86_400))
    );
    assert_eq!(
        Budget::from_secs(5e-10).map(Budget::duration),
        Ok(Duration::from_nanos(1))
    );
    assert_eq!(Budget::DEFAULT.duration(), Duration::from_secs(60));
    for bad in [-1.0, 0.0, 86_400.5, 1e308, f64::INFINITY, f64::NAN] {
        assert_eq!(Budget::from_secs(bad), Err(OutOfRange), "{bad}");
    }
    // A file's value below half a nanosecond comes to no time, as it always
    // did; the flag refuses it.
    assert_eq!(
        Budget::from_secs(1e-12).map(Budget::duration),
        Ok(Duration::ZERO)
    );
    let range = "use a number of seconds greater than 0 and at most 86400";
    assert_eq!(
        [
            Budget::parse("1e-12"),
            Budget::parse("0"),
            Budget::parse("86400.5"),
            Budget::parse("inf"),
            Budget::parse("NaN"),
            Budget::parse("soon"),
        ],
        [
            Err(format!("`1e-12` is not a time budget; {range}")),
            Err(format!("`0` is not a time budget; {range}")),
            Err(format!("`86400.5` is not a time budget; {range}")),
            Err(format!("`inf` is not a time budget; {range}")),
            Err(format!("`NaN` is not a time budget; {range}")),
            Err(format!("`soon` is not a number; {range}")),
        ]
    );
    assert_eq!(
        Budget::parse("2.5").map(Budget::duration),
        Ok(Duration::from_millis(2500))
    );
}

#[test]
fn tokenizers_are_known_by_name() {
    assert_eq!(
        Tokenizer::parse("gpt2").map(|t| t.to_string()),
        Err("unknown tokenizer `gpt2` (known: o200k, cl100k, chars4)".to_owned())
    );
    assert_eq!(
        ["chars4", "cl100k_base", Tokenizer::DEFAULT].map(|name| Tokenizer::parse(name)
            .map(|t| (t.name().to_owned(), t.counter().name().to_owned()))),
        [
            Ok(("chars4".to_owned(), "chars4".to_owned())),
            Ok(("cl100k".to_owned(), "cl100k".to_owned())),
            Ok(("o200k".to_owned(), "o200k".to_owned())),
        ]
    );
}

#[test]
fn the_suites_gates_and_tokenizer_are_checked_where_they_are_written() {
    let bad = crate::scenario::Suite::from_text(
        std::path::Path::new("s/harness.yaml"),
        "tokenizer: o200K\ngates:\n  tokens: \"-5%\"\n  token: \"+1\"\n  retries: +0\n  errors: 5x\n", &suite_problems)
    .unwrap_err();
    insta::assert_snapshot!(
        "suite_gates",
        bad.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
    let good = crate::scenario::Suite::from_text(
        std::path::Path::new("s/harness.yaml"),
        "tokenizer: cl100k_base\ngates: { tokens: \"+5%\", retries: +0, errors: \"0\" }\n",
        &suite_problems,
    )
    .unwrap();
    assert_eq!(
        suite_gates(&good.doc)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["tokens=+5%", "retries=+0", "errors=+0"]
    );
}
