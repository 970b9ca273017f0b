//! Panics caught where one must not take more down with it (a tool's
//! task, a walk's helper thread): the one way to run code so, and the one
//! wording of what panicked.

use std::any::Any;

/// Runs `work`, and turns a panic inside it into its message: the caller
/// goes on, and reports it as an internal error.
pub(crate) fn isolate<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).map_err(|p| message(&*p))
}

/// The message a panic was raised with.
pub(crate) fn message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message_and_work_that_ends_its_value() {
        assert_eq!(isolate(|| 7), Ok(7));
        let words = isolate(|| -> u8 { std::panic::panic_any("plain") });
        let formatted = isolate(|| -> u8 { panic!("formatted {}", 1) });
        let other = isolate(|| -> u8 { std::panic::panic_any(5_u8) });
        assert_eq!(
            [words, formatted, other],
            [
                Err("plain".to_owned()),
                Err("formatted 1".to_owned()),
                Err("a panic without a message".to_owned())
            ]
        );
    }
}
