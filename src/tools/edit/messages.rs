//! The model-facing side of a failed match: pi's facts and wording, what
//! to do next (§edit.4), and the facts kept in `details`.

use std::fmt::Write as _;

use serde::Serialize;

use super::matching::Hint;
use super::matching::MatchError;
use crate::tools::facts::EditRule;

/// Characters of a line quoted in a hint.
const MAX_QUOTED_CHARS: usize = 160;

/// `details` of a failed match: which rule failed, for which edit.
#[derive(Debug, Serialize)]
#[serde(tag = "error", rename_all = "snake_case")]
enum MatchFacts<'a> {
    EmptyOldText {
        edit_index: usize,
    },
    NotFound {
        edit_index: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        closest_match_line: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none")]
        most_similar_line: Option<usize>,
    },
    Duplicate {
        edit_index: usize,
        occurrences: usize,
        lines: &'a [usize],
    },
    WhitespaceOnlyOldText {
        edit_index: usize,
    },
    Overlap {
        edit_indices: [usize; 2],
    },
    NoChange,
    Internal {
        message: &'a str,
    },
}

impl MatchError {
    /// The model-facing message: pi's facts and wording, then what to do
    /// next. `path` is the path as shown to the model; `total` is the number
    /// of edits in the call (1 selects pi's single-edit wording).
    pub(crate) fn message(&self, path: &str, total: usize) -> String {
        let single = total == 1;
        let none_applied = if single {
            String::new()
        } else {
            format!(
                " None of the {total} edits were applied; fix this one and send all of them again."
            )
        };
        match self {
            Self::EmptyOldText { index } => {
                let name = if single {
                    "oldText".to_owned()
                } else {
                    format!("edits[{index}].oldText")
                };
                format!(
                    "{name} must not be empty in {path}. Copy the exact text to replace from the \
                     file; to insert new text, use a neighbouring line as oldText and repeat it in \
                     newText.{none_applied}"
                )
            }
            Self::NotFound { index, hint } => {
                let mut text = if single {
                    format!(
                        "Could not find the exact text in {path}. The old text must match exactly \
                         including all whitespace and newlines."
                    )
                } else {
                    format!(
                        "Could not find edits[{index}] in {path}. The oldText must match exactly \
                         including all whitespace and newlines."
                    )
                };
                if let Some(hint) = hint {
                    text.push(' ');
                    text.push_str(&hint.describe(path));
                }
                let _ = write!(
                    text,
                    " Use read to see the current content of {path} and copy oldText from it \
                     exactly, including indentation.{none_applied}"
                );
                text
            }
            Self::Duplicate {
                index,
                count,
                lines,
            } => {
                let mut text = if single {
                    format!(
                        "Found {count} occurrences of the text in {path}. The text must be \
                         unique. Please provide more context to make it unique."
                    )
                } else {
                    format!(
                        "Found {count} occurrences of edits[{index}] in {path}. Each oldText must \
                         be unique. Please provide more context to make it unique."
                    )
                };
                let _ = write!(
                    text,
                    " The occurrences start at {}. Extend oldText with neighbouring lines that \
                     differ between these places.{none_applied}",
                    list_lines(lines, *count)
                );
                text
            }
            Self::WhitespaceOnly { index } => {
                let name = if single {
                    "oldText".to_owned()
                } else {
                    format!("edits[{index}].oldText")
                };
                format!(
                    "{name} is only spaces or tabs, which cannot identify a unique place in \
                     {path} (trailing whitespace is ignored when counting occurrences). Include \
                     the text around it, e.g. the whole line, in oldText and newText.{none_applied}"
                )
            }
            Self::Overlap {
                first,
                second,
                first_lines,
                second_lines,
            } => format!(
                "edits[{first}] and edits[{second}] overlap in {path}. Merge them into one edit \
                 or target disjoint regions. (edits[{first}] matches {}, edits[{second}] matches \
                 {}.){none_applied}",
                line_range(*first_lines),
                line_range(*second_lines)
            ),
            Self::NoChange => {
                if single {
                    format!(
                        "No changes made to {path}. The replacement produced identical content. \
                         This might indicate an issue with special characters or the text not \
                         existing as expected. Make newText differ from oldText, or skip the edit \
                         if the file already says what you want."
                    )
                } else {
                    format!(
                        "No changes made to {path}. The replacements produced identical content. \
                         Make each newText differ from its oldText, or skip the edit if the file \
                         already says what you want."
                    )
                }
            }
            Self::Internal(message) => message.clone(),
        }
    }
}

impl MatchError {
    /// The rule that failed (`details.error`); `None` for a broken
    /// invariant.
    pub(crate) fn rule(&self) -> Option<EditRule> {
        Some(match self {
            Self::EmptyOldText { .. } => EditRule::EmptyOldText,
            Self::NotFound { .. } => EditRule::NotFound,
            Self::Duplicate { .. } => EditRule::Duplicate,
            Self::WhitespaceOnly { .. } => EditRule::WhitespaceOnlyOldText,
            Self::Overlap { .. } => EditRule::Overlap,
            Self::NoChange => EditRule::NoChange,
            Self::Internal(_) => return None,
        })
    }

    /// Facts for people and checks: which rule failed, for which edit.
    pub(crate) fn facts(&self) -> impl Serialize + '_ {
        match self {
            Self::EmptyOldText { index } => MatchFacts::EmptyOldText { edit_index: *index },
            Self::NotFound { index, hint } => MatchFacts::NotFound {
                edit_index: *index,
                closest_match_line: match hint {
                    Some(Hint::Diverges { file_start, .. }) => Some(*file_start),
                    _ => None,
                },
                most_similar_line: match hint {
                    Some(Hint::Similar { file_line, .. }) => Some(*file_line),
                    _ => None,
                },
            },
            Self::Duplicate {
                index,
                count,
                lines,
            } => MatchFacts::Duplicate {
                edit_index: *index,
                occurrences: *count,
                lines,
            },
            Self::WhitespaceOnly { index } => {
                MatchFacts::WhitespaceOnlyOldText { edit_index: *index }
            }
            Self::Overlap { first, second, .. } => MatchFacts::Overlap {
                edit_indices: [*first, *second],
            },
            Self::NoChange => MatchFacts::NoChange,
            Self::Internal(message) => MatchFacts::Internal { message },
        }
    }
}

impl Hint {
    fn describe(&self, path: &str) -> String {
        match self {
            Self::Diverges {
                file_start,
                old_line,
                matching,
                old_lines,
                file_line,
                file_text,
                old_text,
            } => {
                let mut text = if *old_lines == 1 {
                    "The closest line".to_owned()
                } else {
                    format!(
                        "The closest match starts at line {file_start} of {path}: {matching} of \
                         the {old_lines} oldText lines match there, but"
                    )
                };
                match file_line {
                    Some(line) if *old_lines == 1 => {
                        let _ = write!(
                            text,
                            " is line {line}: {} (oldText: {}).",
                            quote(file_text),
                            quote(old_text)
                        );
                    }
                    Some(line) => {
                        let _ = write!(
                            text,
                            " oldText line {old_line} is {} where line {line} of the file is {}.",
                            quote(old_text),
                            quote(file_text)
                        );
                    }
                    None => {
                        let _ = write!(
                            text,
                            " oldText line {old_line} ({}) is past the end of the file.",
                            quote(old_text)
                        );
                    }
                }
                if file_line.is_some() && old_text.trim() == file_text.trim() {
                    text.push_str(
                        " Only the leading whitespace differs: copy the indentation exactly, tabs \
                         and spaces included.",
                    );
                }
                text
            }
            Self::Similar {
                old_text,
                file_line,
                file_text,
            } => format!(
                "No line of {path} contains the oldText line {}; the most similar is line \
                 {file_line}: {}.",
                quote(old_text),
                quote(file_text)
            ),
            Self::NoCloseMatch {
                matching,
                old_lines,
            } => format!(
                "No place in {path} comes close to the oldText: at most {matching} of its \
                 {old_lines} lines match in any one place, so the text may have changed or be in \
                 another file."
            ),
            Self::Nothing { old_text } => format!(
                "Nothing in {path} resembles the oldText line {}; the text may have changed or be \
                 in another file.",
                quote(old_text)
            ),
            Self::EscapedNewlines => "oldText contains the characters \\n or \\t written as \
                                      escape sequences; it matches when they are real line \
                                      breaks and tabs, so send real line breaks and tabs instead."
                .to_owned(),
        }
    }
}

/// `"..."` with escapes, cut to a readable length.
fn quote(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}…", &text[..cut]),
    }
}

fn line_range((first, last): (usize, usize)) -> String {
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    }
}

/// `lines 3, 9 and 12`, `lines 1, 2, … 10 and 5 more`.
fn list_lines(lines: &[usize], count: usize) -> String {
    let shown: Vec<String> = lines.iter().map(ToString::to_string).collect();
    let more = count.saturating_sub(lines.len());
    match (shown.as_slice(), more) {
        ([], _) => "several places".to_owned(),
        ([one], 0) => format!("line {one}"),
        (many, 0) => {
            let (last, rest) = many
                .split_last()
                .map_or(("", &[][..]), |(l, r)| (l.as_str(), r));
            format!("lines {} and {last}", rest.join(", "))
        }
        (many, more) => format!("lines {} and {more} more", many.join(", ")),
    }
}
