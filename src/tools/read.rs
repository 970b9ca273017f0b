//! The `read` tool (§read, D2–D4, D6).
//!
//! Reads a text file as a page of lines, or an image as an image block.
//! Text is streamed: the lines before `offset` are only counted, the page
//! is kept (at most the byte cap), and the rest of the file is only counted
//! with `memchr`, so the first page of a huge file costs a line count, not
//! the file's size in memory.
//!
//! Differences from pi: non-image binary files are refused with what they
//! are and what to do instead (D2); a UTF-8 BOM is stripped (D3); a final
//! newline ends the last line instead of starting an empty one, so a
//! 2500-line file is "of 2500" (D4); a missing file names the closest
//! existing names (D6).

use std::io::Read;

use base64::Engine;
use serde::Deserialize;
use serde::Serialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::contract::Content;
use super::contract::ExecutionMode;
use super::contract::Limits;
use super::contract::Tool;
use super::contract::ToolContext;
use super::contract::ToolOutput;
use super::contract::ToolSpec;
use super::contract::object_schema;
use super::error::ToolError;
use super::error::facts_value;
use super::facts::ErrorClass;
use super::facts::ErrorKind;
use super::facts::Facts;
use super::facts::ToolDetails;
use super::facts::same_details;
use super::file_kind::BinaryKind;
use super::file_kind::ImageKind;
use super::file_kind::shell_quote;
use super::file_kind::sniff_binary;
use super::file_kind::sniff_image;
use super::fs_error::io_failure;
use super::image;
use super::image::DecodeBudget;
use super::image::Omitted;
use super::image::Plan;
use super::task::run_blocking;
use super::truncate::HeadTruncator;
use super::truncate::TruncatedBy;
use super::truncate::Truncation;
use super::truncate::format_number;
use super::truncate::format_size;
use super::workspace::Lookup;

/// Bytes examined to tell text from binary (D2).
pub(super) const SNIFF_BYTES: usize = 8 * 1024;
const CHUNK: usize = 256 * 1024;

/// The `read` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadTool;

/// Arguments of `read`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// The file to read.
    pub path: String,
    /// 1-based first line (at least 1: the schema says so). A number, so that every
    /// integer the schema accepts (`2.0`, `1e30`) deserialises.
    pub offset: Option<f64>,
    /// Maximum number of lines.
    pub limit: Option<f64>,
}

impl Tool for ReadTool {
    type Args = ReadArgs;

    fn spec(&self, limits: &Limits) -> ToolSpec {
        let max_lines = limits.max_lines;
        let max_bytes = format_size(limits.max_bytes);
        ToolSpec {
            name: "read".into(),
            label: "Read".into(),
            description: format!(
                "Read the contents of a file. Supports text files and images (jpg, png, gif, \
                 webp); images are returned as attachments. Text output is cut at {max_lines} \
                 lines or {max_bytes}, whichever comes first, with a notice saying how to get \
                 the rest. For large files use offset and limit, and keep reading with offset \
                 until you have what you need."
            ),
            prompt_snippet: "Read file contents".to_owned(),
            prompt_guidelines: vec!["Use read to look at files instead of cat or sed.".to_owned()],
            parameters: object_schema(
                json!({
                    "path": {
                        "type": "string",
                        "description": "Path of the file to read, relative to the workspace root (or absolute)"
                    },
                    "offset": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "Line number to start reading from (1-indexed)"
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "Maximum number of lines to read"
                    }
                }),
                &["path"],
            ),
            execution_mode: ExecutionMode::Parallel,
        }
    }

    async fn execute(&self, args: ReadArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        run_blocking("read", args, ctx, read_blocking).await
    }
}

/// How `read` looks up its path: a file, tried in the spellings a model
/// cannot type too (§common.3.4).
const LOOKUP: Lookup = Lookup {
    other_spellings: true,
    ..Lookup::new("File", "read")
};

/// What a call of `read` can show, as `harness run --coverage` counts it
/// (docs/reports.md, "Coverage").
pub(super) const BEHAVIOURS: &[&str] = &[
    "text",
    "offset",
    "limit",
    "image",
    "image converted (BMP to PNG)",
    "image resized",
    "image omitted (file too large)",
    "image omitted (not converted)",
    "image omitted (not resized)",
    "truncated by lines",
    "truncated by bytes",
    "first line over the byte cap",
    "arguments normalised",
    "error: path not found",
    "error: a directory",
    "error: not a regular file",
    "error: binary file",
    "error: offset beyond the end",
    "error: outside the workspace",
    "error: permission denied",
    "error: I/O error",
    "error: invalid arguments",
];

/// `details` of a successful read: a page of text that was cut, or an
/// image (a page read whole has no details).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ReadDetails {
    /// A page of text cut at a limit.
    Page {
        /// What was cut.
        truncation: Truncation,
    },
    /// An image, inlined or not.
    Image(ImageDetails),
}

impl ToolDetails for ReadDetails {
    fn truncation(&self) -> Option<&Truncation> {
        match self {
            ReadDetails::Page { truncation } => Some(truncation),
            ReadDetails::Image(_) => None,
        }
    }

    fn same(&self, other: &dyn ToolDetails) -> bool {
        same_details(self, other)
    }
}

/// `details` of an image, inlined or not.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ImageDetails {
    /// The type sent (the file's when nothing was sent).
    pub mime_type: String,
    /// The file's size.
    pub bytes: u64,
    /// The image was not sent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub omitted: bool,
    /// Why it was not sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted_reason: Option<OmittedReason>,
    /// The file's type, when another was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub converted_from: Option<String>,
    /// `[width, height]` of the file's image, when it was resized.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resized_from: Option<[u32; 2]>,
    /// `[width, height]` of the image sent, when it was resized.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resized_to: Option<[u32; 2]>,
}

/// Why an image was not sent (`details.omitted_reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OmittedReason {
    /// The file is over the decoding limit.
    TooLarge,
    /// A BMP that could not be decoded, or would need more than the
    /// decoding budget.
    NotConverted,
    /// Too large an image that could not be decoded or made small enough,
    /// or would need more than the decoding budget.
    NotResized,
}

impl From<&Omitted> for OmittedReason {
    fn from(omitted: &Omitted) -> Self {
        match omitted {
            Omitted::NotConverted => OmittedReason::NotConverted,
            Omitted::NotResized => OmittedReason::NotResized,
        }
    }
}

/// `details` of a refused binary file.
#[derive(Debug, Serialize)]
struct BinaryDetails {
    binary: &'static str,
    bytes: u64,
}

fn read_blocking(args: &ReadArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let (resolved, meta) = ctx.workspace.resolve_existing(&args.path, LOOKUP)?;
    let fs = ctx.workspace.fs().as_ref();
    let display = resolved.display.clone();
    if meta.is_dir() {
        return Err(ToolError::failure(
            ErrorKind::Io(ErrorClass::IsADirectory),
            format!(
                "Cannot read {display}: it is a directory. Use ls to list it, or read a file inside it."
            ),
        ));
    }
    if !meta.is_file() {
        // A FIFO, socket or device could block forever or never end.
        return Err(ToolError::failure(
            ErrorKind::Io(ErrorClass::NotRegular),
            format!(
                "Cannot read {display}: it is not a regular file (a pipe, socket or device). Use bash \
             if you really need to read from it, with a timeout."
            ),
        ));
    }
    let mut file = fs
        .open(&resolved.real)
        .map_err(|err| io_failure("read", &display, &err))?;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    fill(&mut file, &mut head, SNIFF_BYTES).map_err(|err| io_failure("read", &display, &err))?;

    if let Some(image) = sniff_image(&head) {
        let reopen = || fs.open(&resolved.real);
        let budget = &image::DECODE_BUDGET;
        return read_image(
            image,
            file,
            head,
            meta.len,
            &display,
            &reopen,
            budget,
            &ctx.cancel,
        );
    }
    if let Some(kind) = sniff_binary(&head) {
        return Err(binary_error(kind, meta.len, &display));
    }

    // `as` saturates: huge offsets and limits become usize::MAX.
    let start = (args.offset.unwrap_or(1.0).max(1.0) - 1.0) as usize;
    let limit = args.limit.map(|l| l as usize);
    let mut scan = TextScan::new(start, limit, ctx.limits.truncation().max_bytes, ctx);
    let body = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head);
    scan.feed(body);
    let mut buf = vec![0u8; CHUNK];
    loop {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::cancelled());
        }
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(io_failure("read", &display, &err)),
        };
        scan.feed(&buf[..n]);
    }
    scan.finish(args.offset.map(format_number), &display)
}

/// Reads until `buf` holds `want` bytes or the reader ends.
fn fill(reader: &mut dyn Read, buf: &mut Vec<u8>, want: usize) -> std::io::Result<()> {
    let mut chunk = [0u8; 4096];
    while buf.len() < want {
        let room = (want - buf.len()).min(chunk.len());
        match reader.read(&mut chunk[..room]) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

/// Reads the image file `kind` of `len` bytes (its first bytes already in
/// `head`) within the process's decoding budget: its bytes and header are
/// held first, then what decoding needs, which the header tells. When
/// that much is not free at once, everything is let go, the read waits
/// for it whole, and the file is read again (`reopen`): holding part
/// while waiting for more could wait forever.
#[allow(clippy::too_many_arguments, reason = "each is one fact of the read")]
fn read_image(
    kind: ImageKind,
    file: Box<dyn Read + Send>,
    head: Vec<u8>,
    len: u64,
    display: &str,
    reopen: &dyn Fn() -> std::io::Result<Box<dyn Read + Send>>,
    budget: &DecodeBudget,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let mime = kind.mime_type();
    if len > image::MAX_DECODE_BYTES {
        return image_too_large(kind, len, display);
    }
    let failure = |err: std::io::Error| io_failure("read", display, &err);
    let mut hold = budget
        .acquire(image::first_hold(len), cancel)
        .ok_or_else(ToolError::cancelled)?;
    let mut data = read_at_most(file, head, len).map_err(failure)?;
    let mut plan = image::plan(kind, &data);
    if let Plan::Decode(decoding) = &plan
        && !budget.try_grow(&mut hold, decoding.need)
    {
        let need = decoding.need;
        drop(hold);
        drop(data);
        hold = budget
            .acquire(need, cancel)
            .ok_or_else(ToolError::cancelled)?;
        let file = reopen().map_err(failure)?;
        data = read_at_most(file, Vec::new(), len).map_err(failure)?;
        plan = match image::plan(kind, &data) {
            // Changed since: what it needs now may not be held.
            Plan::Decode(decoding) if decoding.need > hold.bytes() => Plan::Omit(Omitted::of(kind)),
            plan => plan,
        };
    }
    if cancel.is_cancelled() {
        return Err(ToolError::cancelled());
    }
    let len = data.len() as u64;
    let prepared = match plan {
        Plan::Send => Ok(image::Prepared::as_is(kind, data)),
        Plan::Decode(decoding) => image::prepare(&decoding, data),
        Plan::Omit(omitted) => Err(omitted),
    };
    drop(hold);
    match prepared {
        Ok(prepared) => {
            let mut text = format!("Read image file [{}]", prepared.mime);
            for note in prepared.notes() {
                text.push('\n');
                text.push_str(&note);
            }
            let details = ImageDetails {
                mime_type: prepared.mime.to_owned(),
                bytes: len,
                omitted: false,
                omitted_reason: None,
                converted_from: prepared.converted_from.map(str::to_owned),
                resized_from: prepared.resized.map(|((w, h), _)| [w, h]),
                resized_to: prepared.resized.map(|(_, (w, h))| [w, h]),
            };
            let encoded = base64::engine::general_purpose::STANDARD.encode(&prepared.data);
            Ok(ToolOutput {
                content: vec![
                    Content::text(text),
                    Content::Image {
                        data: encoded,
                        mime_type: prepared.mime.to_owned(),
                    },
                ],
                details: Some(facts_value(&details)?),
                facts: Some(Facts::of(ReadDetails::Image(details))),
            })
        }
        Err(omitted) => ToolOutput::text(format!("Read image file [{mime}]\n{}", omitted.note()))
            .with_facts(ReadDetails::Image(ImageDetails {
                mime_type: mime.to_owned(),
                bytes: len,
                omitted: true,
                omitted_reason: Some(OmittedReason::from(&omitted)),
                ..ImageDetails::default()
            })),
    }
}

/// The note for an image file over the decoding limit, never read.
fn image_too_large(kind: ImageKind, len: u64, display: &str) -> Result<ToolOutput, ToolError> {
    let mime = kind.mime_type();
    let text = format!(
        "Read image file [{mime}]\n[Image omitted: {display} is {}, too large to convert or \
         resize (the limit is {}). Make a smaller copy with bash (e.g. convert {} -resize 50% \
         small.png) and read that.]",
        format_size(usize::try_from(len).unwrap_or(usize::MAX)),
        format_size(usize::try_from(image::MAX_DECODE_BYTES).unwrap_or(usize::MAX)),
        shell_quote(display)
    );
    ToolOutput::text(text).with_facts(ReadDetails::Image(ImageDetails {
        mime_type: mime.to_owned(),
        bytes: len,
        omitted: true,
        omitted_reason: Some(OmittedReason::TooLarge),
        ..ImageDetails::default()
    }))
}

/// `head` and the rest of `file`, at most `len` bytes in all: the size the
/// file had when it was looked at, which is what the budget holds for (a
/// file that grew since is read as it was that long).
fn read_at_most(
    file: Box<dyn Read + Send>,
    mut head: Vec<u8>,
    len: u64,
) -> std::io::Result<Vec<u8>> {
    head.truncate(usize::try_from(len).unwrap_or(usize::MAX));
    file.take(len - head.len() as u64).read_to_end(&mut head)?;
    Ok(head)
}

fn binary_error(kind: BinaryKind, len: u64, display: &str) -> ToolError {
    let size = format_size(usize::try_from(len).unwrap_or(usize::MAX));
    ToolError::failure_with(
        ErrorKind::Binary,
        format!(
            "Cannot read {display}: it is a binary file ({}, {size}), and read only returns text \
             and images. To inspect it, use bash, e.g. `{}`.",
            kind.name(),
            kind.suggestion(&shell_quote(display))
        ),
        &BinaryDetails {
            binary: kind.name(),
            bytes: len,
        },
    )
}

/// The streaming line scanner behind text reads.
struct TextScan {
    /// First selected line, 0-based.
    start: usize,
    /// One past the last selected line.
    end: usize,
    head: HeadTruncator,
    /// Accepted lines joined by `\n`.
    out: Vec<u8>,
    /// Index of the line being read.
    line: usize,
    /// The current line's bytes, kept only up to `cap`.
    cur: Vec<u8>,
    cur_len: usize,
    cap: usize,
    /// Byte offset (after the BOM) of the first selected line.
    start_offset: Option<u64>,
    /// Byte offset of the newline that ends the selection, if before EOF.
    end_offset: Option<u64>,
    offset: u64,
    first_selected_len: Option<usize>,
    last_byte: Option<u8>,
    max_bytes: usize,
}

impl TextScan {
    fn new(start: usize, limit: Option<usize>, max_bytes: usize, ctx: &ToolContext) -> Self {
        Self {
            start,
            end: limit.map_or(usize::MAX, |l| start.saturating_add(l)),
            head: HeadTruncator::new(ctx.limits.truncation()),
            out: Vec::new(),
            line: 0,
            cur: Vec::new(),
            cur_len: 0,
            cap: max_bytes.saturating_add(1),
            start_offset: (start == 0).then_some(0),
            end_offset: None,
            offset: 0,
            first_selected_len: None,
            last_byte: None,
            max_bytes,
        }
    }

    fn wants_content(&self) -> bool {
        self.line >= self.start && self.line < self.end && !self.head.is_stopped()
    }

    fn feed(&mut self, chunk: &[u8]) {
        if let Some(&last) = chunk.last() {
            self.last_byte = Some(last);
        }
        let mut pos = 0;
        while pos < chunk.len() {
            if self.wants_content() {
                let rest = &chunk[pos..];
                match memchr::memchr(b'\n', rest) {
                    Some(i) => {
                        self.append(&rest[..i]);
                        pos += i + 1;
                        self.offset += (i + 1) as u64;
                        self.end_content_line();
                    }
                    None => {
                        self.append(rest);
                        self.offset += rest.len() as u64;
                        pos = chunk.len();
                    }
                }
                continue;
            }
            // Only counting: jump to the next line where the phase changes.
            let target = if self.line < self.start {
                self.start
            } else if self.line < self.end {
                self.end
            } else {
                usize::MAX
            };
            let rest = &chunk[pos..];
            let mut consumed = rest.len();
            // Count the chunk in bulk unless the phase changes inside it;
            // only then find the exact newline.
            let newlines = memchr::memchr_iter(b'\n', rest).count();
            if self.line.saturating_add(newlines) < target {
                self.line += newlines;
            } else {
                for i in memchr::memchr_iter(b'\n', rest) {
                    self.line += 1;
                    if self.line == target {
                        consumed = i + 1;
                        break;
                    }
                }
            }
            self.offset += consumed as u64;
            pos += consumed;
            if self.line == target {
                self.mark_boundary();
            }
        }
    }

    /// Records the offsets when the scan enters or leaves the selection.
    fn mark_boundary(&mut self) {
        if self.line == self.start && self.start_offset.is_none() {
            self.start_offset = Some(self.offset);
        }
        if self.line == self.end && self.end_offset.is_none() {
            self.end_offset = Some(self.offset - 1);
        }
    }

    fn append(&mut self, bytes: &[u8]) {
        let room = self.cap.saturating_sub(self.cur.len());
        self.cur.extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.cur_len += bytes.len();
    }

    fn end_content_line(&mut self) {
        let len = self.cur_len;
        self.first_selected_len.get_or_insert(len);
        if self.head.push_line(len) {
            if self.head.output_lines() > 1 {
                self.out.push(b'\n');
            }
            self.out.extend_from_slice(&self.cur);
        }
        self.cur.clear();
        self.cur_len = 0;
        self.line += 1;
        self.mark_boundary();
    }

    fn finish(
        mut self,
        offset_arg: Option<String>,
        display: &str,
    ) -> Result<ToolOutput, ToolError> {
        let partial_last = self.offset > 0 && self.last_byte != Some(b'\n');
        if partial_last && self.wants_content() {
            self.end_content_line();
        } else if partial_last {
            self.line += 1;
        }
        let total_lines = self.line;
        if self.start >= total_lines && !(self.start == 0 && total_lines == 0) {
            let shown = offset_arg.unwrap_or_else(|| "1".to_owned());
            let hint = if total_lines == 0 {
                format!("{display} is empty: read it without an offset.")
            } else {
                format!("Use an offset between 1 and {total_lines}.")
            };
            return Err(ToolError::failure(
                ErrorKind::OffsetBeyondEnd,
                format!(
                    "Offset {shown} is beyond the end of {display} ({total_lines} lines total). {hint}"
                ),
            ));
        }
        let start_offset = self.start_offset.unwrap_or(0);
        let reaches_eof = total_lines <= self.end;
        let selection_end = match self.end_offset {
            Some(end) if !reaches_eof => end,
            _ => self.offset,
        };
        let selected_lines = total_lines.min(self.end) - self.start.min(total_lines);
        let mut facts = self.head.facts();
        facts.total_lines = selected_lines;
        facts.total_bytes = usize::try_from(selection_end - start_offset).unwrap_or(usize::MAX);
        let first = self.start + 1;
        let text = String::from_utf8_lossy(&self.out).into_owned();

        if facts.first_line_exceeds_limit {
            let line_size = format_size(self.first_selected_len.unwrap_or(0));
            let notice = format!(
                "[Line {first} is {line_size}, exceeds {} limit. Use bash: sed -n '{first}p' {} | \
                 head -c {}]",
                format_size(self.max_bytes),
                shell_quote(display),
                self.max_bytes
            );
            return ToolOutput::text(notice).with_facts(ReadDetails::Page { truncation: facts });
        }
        if facts.truncated {
            let last = first + facts.output_lines - 1;
            let limit_note = match facts.truncated_by {
                Some(TruncatedBy::Bytes) => format!(" ({} limit)", format_size(self.max_bytes)),
                _ => String::new(),
            };
            let notice = format!(
                "{text}\n\n[Showing lines {first}-{last} of {total_lines}{limit_note}. Use \
                 offset={} to continue.]",
                last + 1
            );
            return ToolOutput::text(notice).with_facts(ReadDetails::Page { truncation: facts });
        }
        if !reaches_eof {
            let taken = selected_lines;
            let remaining = total_lines - self.start - taken;
            return Ok(ToolOutput::plain(format!(
                "{text}\n\n[{remaining} more lines in file. Use offset={} to continue.]",
                self.start + taken + 1
            )));
        }
        let mut text = text;
        // The selection runs to the end of the file: keep its final newline,
        // unless that one byte is what would break the byte cap (D13).
        if self.last_byte == Some(b'\n') && selected_lines > 0 && text.len() < self.max_bytes {
            text.push('\n');
        }
        Ok(ToolOutput::plain(text))
    }
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
