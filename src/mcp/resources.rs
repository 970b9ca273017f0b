//! `resources/list`, `resources/templates/list` and `resources/read`: the
//! workspace's files as `file:///{path}` resources, so that a client can
//! attach (@-mention) them.
//!
//! Both go through the tool layer, never around it: the list is the `find`
//! tool's walk (the same ignore rules: `.gitignore`, `.ignore`, hidden
//! files as `find` treats them), the read is the `read` tool's call (the
//! same confinement, whatever symlinks, the same limits, truncation and
//! notice, images as `read` returns them). Each has a private registry of
//! its one tool on the served workspace, so resources do not depend on
//! which tools are served, only on `read` being one of them: a server
//! without `read` offers no resources.
//!
//! A URI is `file:///` and the path relative to the workspace, each byte
//! outside `A-Z a-z 0-9 - . _ ~ /` percent-encoded (a name the tools show
//! with escapes, `bad\xFF.txt`, is listed as they show it). Reading
//! decodes it (`%2F` too: a client that expands the template by RFC 6570
//! encodes the slashes). No subscriptions: the capability says so.

use std::fmt::Write as _;

use rmcp::ErrorData;
use rmcp::model::ListResourceTemplatesResult;
use rmcp::model::ListResourcesResult;
use rmcp::model::ReadResourceResult;
use rmcp::model::Resource;
use rmcp::model::ResourceContents;
use rmcp::model::ResourceTemplate;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::tools::Content;
use crate::tools::Registry;
use crate::tools::ToolCall;
use crate::tools::ToolResult;
use crate::tools::UpdateSink;

/// The scheme and authority of every resource URI.
pub(super) const URI_PREFIX: &str = "file:///";

/// The one template: any workspace file by its relative path.
pub(super) const URI_TEMPLATE: &str = "file:///{path}";

/// Resources on one page of `resources/list`.
pub(super) const PAGE_SIZE: usize = 500;

/// The most files listed, over all pages (the first ones in `find`'s
/// order); every other file is still read through the template.
pub(super) const MAX_LISTED: usize = 10_000;

/// The bytes of paths the listing walk keeps (a cap on its memory; the
/// list ends earlier when the paths are longer than 200 bytes on average).
const MAX_LISTED_BYTES: usize = 2 * 1024 * 1024;

/// The workspace's files as resources.
pub(super) struct Resources {
    finder: Registry,
    reader: Registry,
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources").finish_non_exhaustive()
    }
}

impl Resources {
    /// The resources of `registry`'s workspace, when it serves `read`.
    pub(super) fn of(registry: &Registry) -> Option<Self> {
        registry.spec("read")?;
        let workspace = registry.workspace().clone();
        let mut find_limits = registry.limits().clone();
        find_limits.max_bytes = MAX_LISTED_BYTES;
        let finder = Registry::builder(workspace.clone())
            .limits(find_limits)
            .allow(["find"])
            .build()
            .ok()?;
        let reader = Registry::builder(workspace)
            .limits(registry.limits().clone())
            .allow(["read"])
            .build()
            .ok()?;
        Some(Self { finder, reader })
    }

    /// One page of the workspace's files, from `cursor` (the index of the
    /// page's first file, as the previous page's `nextCursor` gave it).
    pub(super) async fn list(
        &self,
        cursor: Option<&str>,
        cancel: CancellationToken,
    ) -> Result<ListResourcesResult, ErrorData> {
        let start = match cursor {
            None => 0,
            Some(text) => parse_cursor(text)?,
        };
        let call = ToolCall::new(
            "resources-list",
            "find",
            json!({ "pattern": "*", "limit": MAX_LISTED }),
        );
        let prepared = self
            .finder
            .prepare(&call)
            .map_err(|err| listing_failed(&err.into_result()))?;
        let result = prepared.execute(cancel, UpdateSink::discard()).await;
        if result.is_error {
            return Err(listing_failed(&result));
        }
        let text = result.text();
        let files: Vec<&str> = found_files(&text).collect();
        let end = start.saturating_add(PAGE_SIZE).min(files.len());
        let page = files
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .map(|path| resource(path))
            .collect();
        let mut answer = ListResourcesResult::with_all_items(page);
        if end < files.len() {
            answer.next_cursor = Some(end.to_string());
        }
        Ok(answer)
    }

    /// The one template, `file:///{path}`.
    pub(super) fn templates() -> ListResourceTemplatesResult {
        ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(URI_TEMPLATE, "workspace file")
                .with_title("A file of the workspace")
                .with_description(
                    "Any file of the workspace by its path relative to the workspace root, read \
                     as the read tool reads it (the same limits and truncation; images as \
                     base64).",
                ),
        ])
    }

    /// The contents of `uri`, as the `read` tool reads its path.
    pub(super) async fn read(
        &self,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<ReadResourceResult, ErrorData> {
        let path = path_of(uri)?;
        let call = ToolCall::new("resources-read", "read", json!({ "path": path }));
        let result = match self.reader.prepare(&call) {
            Ok(prepared) => prepared.execute(cancel, UpdateSink::discard()).await,
            Err(err) => err.into_result(),
        };
        if result.is_error {
            return Err(not_found(uri, &result.text()));
        }
        Ok(ReadResourceResult::new(contents(uri, result)))
    }
}

/// A result's blocks as resource contents: its images as blobs when it has
/// any (the text beside them is for the model), else its text.
fn contents(uri: &str, result: ToolResult) -> Vec<ResourceContents> {
    let images: Vec<ResourceContents> = result
        .content
        .iter()
        .filter_map(|block| match block {
            Content::Image { data, mime_type } => {
                Some(ResourceContents::blob(data.clone(), uri).with_mime_type(mime_type.clone()))
            }
            Content::Text { .. } => None,
        })
        .collect();
    if images.is_empty() {
        vec![ResourceContents::text(result.text(), uri)]
    } else {
        images
    }
}

/// The files of `find`'s output: its lines up to the notices (after the
/// first blank line), directories (ending in `/`) left out.
fn found_files(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .take_while(|line| !line.is_empty())
        .filter(|line| !line.ends_with('/'))
}

/// The resource of a workspace path as `find` shows it.
fn resource(path: &str) -> Resource {
    let mut resource = Resource::new(uri_of(path), path);
    if let Some(mime) = image_mime(path) {
        resource = resource.with_mime_type(mime);
    }
    resource
}

/// The MIME type of an image `read` returns as an image, by its extension
/// (`read` itself decides by the bytes).
fn image_mime(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    })
}

/// `file:///` and the path, percent-encoded.
pub(super) fn uri_of(path: &str) -> String {
    let mut uri = String::with_capacity(URI_PREFIX.len() + path.len());
    uri.push_str(URI_PREFIX);
    for &byte in path.as_bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            uri.push(char::from(byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri
}

/// The workspace-relative path a resource URI names, or the JSON-RPC error
/// for a URI that names none.
pub(super) fn path_of(uri: &str) -> Result<String, ErrorData> {
    let Some(encoded) = uri.strip_prefix(URI_PREFIX) else {
        return Err(not_found(
            uri,
            "The resources of this server are the workspace's files, file:///{path} with the \
             path relative to the workspace.",
        ));
    };
    let Some(bytes) = percent_decode(encoded) else {
        return Err(not_found(
            uri,
            "The URI has a % that is not followed by two hexadecimal digits.",
        ));
    };
    let Ok(path) = String::from_utf8(bytes) else {
        return Err(not_found(
            uri,
            "The decoded path is not UTF-8; name the file as resources/list shows it.",
        ));
    };
    let leaves = path.starts_with('/')
        || path
            .split('/')
            .any(|part| part == ".." || part.contains('\0'));
    if path.is_empty() || leaves {
        return Err(not_found(
            uri,
            "A resource path is relative to the workspace and stays inside it (no leading /, \
             no ..).",
        ));
    }
    Ok(path)
}

/// `%XX` decoded; `None` for a `%` without two hex digits after it.
fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(byte);
            i += 1;
        }
    }
    Some(out)
}

/// A page cursor: the index of the page's first file.
fn parse_cursor(text: &str) -> Result<usize, ErrorData> {
    text.parse::<usize>()
        .ok()
        .filter(|start| *start <= MAX_LISTED)
        .ok_or_else(|| {
            ErrorData::invalid_params(
                "The cursor is not one this server gave: pass the nextCursor of the previous \
                 resources/list page, or none for the first page.",
                Some(json!({ "cursor": super::logging::shown(text) })),
            )
        })
}

/// -32002 Resource not found, the reason in plain words and the URI as
/// data.
fn not_found(uri: &str, why: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("Resource not found: {why}"),
        Some(json!({ "uri": super::logging::shown(uri) })),
    )
}

/// The error of a listing walk that failed (an unreadable workspace root).
fn listing_failed(result: &ToolResult) -> ErrorData {
    ErrorData::internal_error(
        format!("The workspace's files cannot be listed: {}", result.text()),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_round_trips_through_its_uri() {
        let uri = uri_of("dir/a b%c\\xFF☃.txt");
        assert_eq!(uri, "file:///dir/a%20b%25c%5CxFF%E2%98%83.txt");
        assert_eq!(path_of(&uri).ok(), Some("dir/a b%c\\xFF☃.txt".to_owned()));
    }

    #[test]
    fn a_template_expansion_with_encoded_slashes_is_the_same_path() {
        assert_eq!(
            path_of("file:///src%2Fmain.rs").ok(),
            Some("src/main.rs".to_owned())
        );
    }

    #[test]
    fn uris_that_name_no_workspace_file_are_not_found() {
        for uri in [
            "file:///",
            "file:////etc/passwd",
            "file:///../outside",
            "file:///a/%2E%2E/%2E%2E/b",
            "file:///a%00b",
            "file:///bad%zz",
            "file:///bad%",
            "file:///%FF",
            "test://static-text",
            "file://host/a",
        ] {
            let err = path_of(uri).err().map(|err| err.code.0);
            assert_eq!(err, Some(-32002), "{uri}");
        }
    }

    #[test]
    fn find_output_gives_the_files_only() {
        let text = "a.txt\nsrc/\nsrc/main.rs\n\n[2 results. Some notice]";
        assert_eq!(
            found_files(text).collect::<Vec<_>>(),
            vec!["a.txt", "src/main.rs"]
        );
    }

    #[test]
    fn cursors_are_indexes_this_server_gives() {
        assert_eq!(parse_cursor("500").ok(), Some(500));
        for bad in ["", "-1", "x", "10001", "1e3"] {
            let code = parse_cursor(bad).err().map(|err| err.code.0);
            assert_eq!(code, Some(-32602), "{bad}");
        }
    }
}
