//! Reading a request body: the bounded parse, and a cursor over the JSON
//! that knows where it stands, so every error names its place
//! (`messages[2].content[0].id: expected a string, found a number`).

use serde_json::Map;
use serde_json::Value;

use super::request::WireError;
use super::request::WireLimits;

/// The body as a JSON object, within the limits: too large, not JSON
/// (nesting past serde_json's 128 levels included) or not an object is an
/// error.
pub(super) fn parse_body(body: &[u8], limits: WireLimits) -> Result<Value, WireError> {
    if body.len() > limits.max_body_bytes {
        return Err(WireError::new(format!(
            "the request body has {} bytes, more than the {} this server reads",
            body.len(),
            limits.max_body_bytes
        )));
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|err| WireError::new(format!("the request body is not JSON: {err}")))?;
    if !value.is_object() {
        return Err(WireError::new(format!(
            "the request body is {}, not a JSON object",
            kind(&value)
        )));
    }
    Ok(value)
}

/// What a value is, in words.
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value and where it is in the body.
#[derive(Clone, Debug)]
pub(super) struct At<'a> {
    value: &'a Value,
    path: String,
}

impl<'a> At<'a> {
    /// The body itself.
    pub(super) fn root(value: &'a Value) -> Self {
        Self {
            value,
            path: String::new(),
        }
    }

    /// The value.
    pub(super) fn value(&self) -> &'a Value {
        self.value
    }

    fn place(&self) -> &str {
        if self.path.is_empty() {
            "the body"
        } else {
            &self.path
        }
    }

    /// An error at this place.
    pub(super) fn error(&self, what: impl std::fmt::Display) -> WireError {
        WireError::new(format!("{}: {what}", self.place()))
    }

    fn expected(&self, what: &str) -> WireError {
        self.error(format!("expected {what}, found {}", kind(self.value)))
    }

    fn child_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// The object.
    pub(super) fn object(&self) -> Result<&'a Map<String, Value>, WireError> {
        self.value
            .as_object()
            .ok_or_else(|| self.expected("an object"))
    }

    /// The field `key`, absent when missing or null.
    pub(super) fn get(&self, key: &str) -> Result<Option<At<'a>>, WireError> {
        Ok(match self.object()?.get(key) {
            None | Some(Value::Null) => None,
            Some(value) => Some(At {
                value,
                path: self.child_path(key),
            }),
        })
    }

    /// The field `key`, which must be there.
    pub(super) fn field(&self, key: &str) -> Result<At<'a>, WireError> {
        self.get(key)?
            .ok_or_else(|| self.error(format!("`{key}` is missing")))
    }

    /// The string.
    pub(super) fn str(&self) -> Result<&'a str, WireError> {
        self.value.as_str().ok_or_else(|| self.expected("a string"))
    }

    /// The string field `key`, which must be there.
    pub(super) fn str_field(&self, key: &str) -> Result<&'a str, WireError> {
        self.field(key)?.str()
    }

    /// The string field `key`, if there.
    pub(super) fn opt_str(&self, key: &str) -> Result<Option<&'a str>, WireError> {
        self.get(key)?.map(|at| at.str()).transpose()
    }

    /// The boolean field `key`, if there.
    pub(super) fn opt_bool(&self, key: &str) -> Result<Option<bool>, WireError> {
        self.get(key)?
            .map(|at| at.value.as_bool().ok_or_else(|| at.expected("a boolean")))
            .transpose()
    }

    /// The elements of the array.
    pub(super) fn items(&self) -> Result<Vec<At<'a>>, WireError> {
        let items = self
            .value
            .as_array()
            .ok_or_else(|| self.expected("an array"))?;
        Ok(items
            .iter()
            .enumerate()
            .map(|(index, value)| At {
                value,
                path: format!("{}[{index}]", self.place()),
            })
            .collect())
    }

    /// The elements of the array field `key` (none when it is missing).
    pub(super) fn items_of(&self, key: &str) -> Result<Vec<At<'a>>, WireError> {
        match self.get(key)? {
            Some(at) => at.items(),
            None => Ok(Vec::new()),
        }
    }
}

/// The most characters of a request's own text an error quotes.
const SHOWN_CHARS: usize = 64;

/// A text from the request as an error quotes it: at most
/// [`SHOWN_CHARS`] characters, then `…`.
pub(super) fn shown(text: &str) -> String {
    let mut out: String = text.chars().take(SHOWN_CHARS).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Texts joined by newlines, empty ones left out.
pub(super) fn join_texts(texts: Vec<&str>) -> String {
    texts
        .into_iter()
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A `data:` URL's media type and base64 data (`data:image/png;base64,…`);
/// `None` for any other URL.
pub(super) fn data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (head, data) = rest.split_once(',')?;
    let media_type = head.strip_suffix(";base64")?;
    Some((media_type, data))
}
