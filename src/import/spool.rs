//! The large texts of a session's call arguments (a write's content, an
//! edit's old and new text, a long command), kept on disk from the moment
//! their call is read, so that an import holds no more of a session in
//! memory than its calls' short values, whatever the size of the file.
//!
//! Each string longer than [`MAX_INLINE_ARG`] bytes goes to the spool, an
//! unnamed file in the output directory (removed by the system when the
//! import ends), and a short marker takes its place in the call's
//! arguments. The marker begins with a tag drawn at random for this
//! spool, so no recorded text can be taken for one. When the scenario is
//! written ([`crate::import::yaml::write_yaml`]), each marker is written
//! as its text, read back a piece at a time, in the style chosen for it
//! when it was spooled: the file is the one an import that kept every
//! text in memory would write.

use std::fs::File;
use std::io;
use std::io::Write as _;
use std::os::unix::fs::FileExt as _;

use serde_json::Value;

use super::out::OutDir;
use super::yaml::Spooled;
use super::yaml::Style;

/// Argument strings longer than this (bytes) go to the spool.
pub(crate) const MAX_INLINE_ARG: usize = 4096;

/// Where large argument texts are kept.
#[derive(Debug)]
pub(crate) struct Spool {
    file: File,
    /// Bytes written so far.
    len: u64,
    /// What every marker of this spool begins with.
    tag: String,
    /// Each text: where it is, how long, and its style.
    texts: Vec<(u64, u64, Style)>,
}

impl Spool {
    /// A spool in an unnamed file of `dir`.
    pub(crate) fn new(dir: &OutDir) -> io::Result<Self> {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).map_err(|err| io::Error::other(err.to_string()))?;
        Ok(Self {
            file: dir.unnamed_file()?,
            len: 0,
            tag: format!("\u{0}spooled-{:016x}-", u64::from_le_bytes(bytes)),
            texts: Vec::new(),
        })
    }

    /// Moves every string of `value` longer than [`MAX_INLINE_ARG`] into
    /// the spool, leaving its marker in its place.
    pub(crate) fn take(&mut self, value: &mut Value) -> io::Result<()> {
        match value {
            Value::String(s) if s.len() > MAX_INLINE_ARG => {
                let style = Style::of(s);
                self.file.write_all(s.as_bytes())?;
                let len = s.len() as u64;
                self.texts.push((self.len, len, style));
                self.len += len;
                *s = format!("{}{}", self.tag, self.texts.len() - 1);
                Ok(())
            }
            Value::Array(items) => items.iter_mut().try_for_each(|v| self.take(v)),
            Value::Object(map) => map.values_mut().try_for_each(|v| self.take(v)),
            _ => Ok(()),
        }
    }

    /// `value` with each marker replaced by its text again.
    pub(crate) fn restored(&self, value: &Value) -> io::Result<Value> {
        Ok(match value {
            Value::String(s) => match self.text(s) {
                Some((start, len, _)) => {
                    let mut bytes = vec![0u8; usize::try_from(len).map_err(io::Error::other)?];
                    self.file.read_exact_at(&mut bytes, start)?;
                    Value::String(String::from_utf8(bytes).map_err(io::Error::other)?)
                }
                None => value.clone(),
            },
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|v| self.restored(v))
                    .collect::<io::Result<_>>()?,
            ),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), self.restored(v)?)))
                    .collect::<io::Result<_>>()?,
            ),
            other => other.clone(),
        })
    }

    /// The text `s` stands for, if it is a marker of this spool.
    fn text(&self, s: &str) -> Option<(u64, u64, &Style)> {
        let n: usize = s.strip_prefix(&self.tag)?.parse().ok()?;
        self.texts
            .get(n)
            .map(|(start, len, style)| (*start, *len, style))
    }
}

impl Spooled for Spool {
    fn spooled(&self, s: &str) -> Option<(Style, Box<dyn io::Read + '_>)> {
        let (start, len, style) = self.text(s)?;
        Some((
            style.clone(),
            Box::new(At {
                file: &self.file,
                at: start,
                end: start + len,
            }),
        ))
    }
}

/// A reader of the bytes from `at` to `end` of a file, which leaves the
/// file's own position alone.
struct At<'a> {
    file: &'a File,
    at: u64,
    end: u64,
}

impl io::Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = usize::try_from(self.end - self.at).unwrap_or(usize::MAX);
        let want = buf.len().min(left);
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.at)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the spool ends before its text",
            ));
        }
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::import::yaml::to_yaml;
    use crate::import::yaml::write_yaml;

    /// Issue 42 item 6: a large argument leaves memory when its call is
    /// read, and the scenario written from the spool is byte for byte the
    /// one written from memory.
    #[test]
    fn spooled_texts_are_written_as_they_would_be_from_memory() {
        let root = tempfile::tempdir().unwrap();
        let dir = OutDir::open(root.path()).unwrap();
        let mut spool = Spool::new(&dir).unwrap();
        let line = "x".repeat(79) + "\n";
        let big = line.repeat(100);
        let texts = [
            big.clone(),
            format!("  {big}"),
            format!("{big}\n\n"),
            big.trim_end().to_owned(),
            format!("{big}\r\u{2028}é\u{1b}\"\\ ü"),
            "é".repeat(40_000),
            format!("\n{big}"),
            format!("a\n\n\n{big}\n\nb\n"),
            "\t\n".repeat(3000),
        ];
        let value = json!({
            "model": [
                {"call": "write", "args": {"path": "a", "content": texts[0], "list": texts}},
                {"parallel": [{"call": "edit", "args": {"edits": [{"oldText": texts[4], "newText": "x"}]}}]},
            ],
            "short": "y",
        });
        let mut spooled = value.clone();
        spool.take(&mut spooled).unwrap();
        // Nothing long is left in memory.
        let longest = spooled.to_string().len();
        assert!(longest < 2000, "{longest}");
        let mut written = Vec::new();
        write_yaml(&spooled, Some(&spool), &mut written).unwrap();
        assert_eq!(String::from_utf8(written).unwrap(), to_yaml(&value));
        assert_eq!(spool.restored(&spooled).unwrap(), value);
        // No dangling name is left in the output directory.
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
    }
}
