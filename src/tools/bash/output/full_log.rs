//! The full-output log of a bash call (D18): every raw byte, the ones
//! buffered before it was needed first, up to the log cap, in a `0600` file
//! of the workspace's scratch directory that the tool never deletes.

use std::fmt;
use std::io;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use crate::tools::fs_error::plain_reason;
use crate::tools::ops::FsOps;

/// The prefix of the bash full-output files (D18).
pub(crate) const BASH_FILE_PREFIX: &str = "harness-bash";

/// The suffix of the bash full-output files (D18).
const BASH_FILE_SUFFIX: &str = ".log";

/// Capacity of the buffered writer of the full-output file.
pub(super) const FILE_BUFFER: usize = 64 * 1024;

/// Where the full output goes, and what happened to it so far.
#[derive(Debug)]
pub(super) struct FullLog {
    fs: Arc<dyn FsOps>,
    prefix: String,
    pub(super) dir: PathBuf,
    /// The file's fixed name without its suffix; `None`: a random name.
    pub(super) stem: Option<String>,
    /// At most this many raw bytes go to the full-output file.
    pub(super) cap: u64,
    state: FullOutput,
}

/// What the full log says in a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct LogFacts {
    /// The file holding every raw byte, once one was opened.
    pub(super) path: Option<PathBuf>,
    /// Why the full output could not be saved (completely), if it could not.
    pub(super) error: Option<String>,
    /// Raw bytes were left out because of the log cap.
    pub(super) truncated: bool,
    /// Raw bytes in the file.
    pub(super) bytes: u64,
}

enum FullOutput {
    /// Not needed yet: the raw bytes so far (at most the limits plus one
    /// chunk).
    Buffered(Vec<u8>),
    /// Every raw byte goes here, up to the log cap.
    Open {
        path: PathBuf,
        file: io::BufWriter<Box<dyn Write + Send>>,
        /// Bytes written so far.
        written: u64,
        /// Bytes were left out because of the cap.
        cut: bool,
    },
    /// The log cap is 0: no file is kept.
    Off,
    /// Creating or writing the file failed; nothing more is kept.
    Failed {
        path: Option<PathBuf>,
        error: String,
    },
}

impl fmt::Debug for FullOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Buffered(buffer) => f.debug_tuple("Buffered").field(&buffer.len()).finish(),
            Self::Open {
                path, written, cut, ..
            } => f
                .debug_struct("Open")
                .field("path", path)
                .field("written", written)
                .field("cut", cut)
                .finish(),
            Self::Off => f.write_str("Off"),
            Self::Failed { path, error } => f
                .debug_struct("Failed")
                .field("path", path)
                .field("error", error)
                .finish(),
        }
    }
}

impl FullLog {
    /// A log not needed yet, whose file would be created through `fs` as
    /// `{temp dir}/{prefix}-{16 hex}.log`, without a cap.
    pub(super) fn new(prefix: &str, fs: Arc<dyn FsOps>) -> Self {
        Self {
            fs,
            prefix: prefix.to_owned(),
            dir: std::env::temp_dir(),
            stem: None,
            cap: u64::MAX,
            state: FullOutput::Buffered(Vec::new()),
        }
    }

    /// Takes the next raw chunk: buffered while no file is needed, written
    /// once one is open.
    pub(super) fn push(&mut self, chunk: &[u8]) {
        match &mut self.state {
            FullOutput::Buffered(buffer) => buffer.extend_from_slice(chunk),
            FullOutput::Open { .. } => self.write(chunk),
            FullOutput::Failed { .. } | FullOutput::Off => {}
        }
    }

    /// Whether no file was asked for yet.
    pub(super) fn is_buffered(&self) -> bool {
        matches!(self.state, FullOutput::Buffered(_))
    }

    /// Opens the file (or notes that none is kept, with a cap of 0) and
    /// writes the bytes buffered so far; does nothing once asked before.
    pub(super) fn open(&mut self) {
        if !self.is_buffered() {
            return;
        }
        if self.cap == 0 {
            self.state = FullOutput::Off;
            return;
        }
        let FullOutput::Buffered(buffer) = std::mem::replace(
            &mut self.state,
            FullOutput::Failed {
                path: None,
                error: String::new(),
            },
        ) else {
            return;
        };
        let created = match &self.stem {
            Some(stem) => self.fs.create_numbered(&self.dir, stem, BASH_FILE_SUFFIX),
            None => self
                .fs
                .create_temp(&self.dir, &self.prefix, BASH_FILE_SUFFIX),
        };
        self.state = match created {
            Ok((path, file)) => FullOutput::Open {
                path,
                file: io::BufWriter::with_capacity(FILE_BUFFER, file),
                written: 0,
                cut: false,
            },
            Err(err) => FullOutput::Failed {
                path: None,
                error: format!(
                    "could not create a file in {}: {}",
                    self.dir.display(),
                    plain_reason(&err)
                ),
            },
        };
        self.write(&buffer);
    }

    /// Writes what fits under the log cap; the rest is counted as cut.
    fn write(&mut self, bytes: &[u8]) {
        let cap = self.cap;
        if let FullOutput::Open {
            path,
            file,
            written,
            cut,
        } = &mut self.state
        {
            let room = cap.saturating_sub(*written);
            let fits = usize::try_from(room).map_or(bytes.len(), |room| room.min(bytes.len()));
            *cut |= fits < bytes.len();
            if fits == 0 {
                return;
            }
            *written += fits as u64;
            if let Err(err) = file.write_all(&bytes[..fits]) {
                self.state = FullOutput::Failed {
                    path: Some(std::mem::take(path)),
                    error: format!("writing it failed: {}", plain_reason(&err)),
                };
            }
        }
    }

    /// Flushes the file, so that its path can be handed out.
    pub(super) fn flush(&mut self) {
        if let FullOutput::Open { path, file, .. } = &mut self.state
            && let Err(err) = file.flush()
        {
            self.state = FullOutput::Failed {
                path: Some(std::mem::take(path)),
                error: format!("writing it failed: {}", plain_reason(&err)),
            };
        }
    }

    /// What a snapshot says of the log.
    pub(super) fn facts(&self) -> LogFacts {
        let (path, error, truncated, bytes) = match &self.state {
            FullOutput::Buffered(_) => (None, None, false, 0),
            FullOutput::Open {
                path, cut, written, ..
            } => (Some(path.clone()), None, *cut, *written),
            FullOutput::Failed { path, error } => (path.clone(), Some(error.clone()), false, 0),
            FullOutput::Off => (None, None, true, 0),
        };
        LogFacts {
            path,
            error,
            truncated,
            bytes,
        }
    }

    /// Bytes of memory held (the buffer's or the writer's capacity).
    #[cfg(test)]
    pub(super) fn retained_bytes(&self) -> usize {
        match &self.state {
            FullOutput::Buffered(buffer) => buffer.capacity(),
            FullOutput::Open { file, .. } => file.capacity(),
            FullOutput::Failed { .. } | FullOutput::Off => 0,
        }
    }
}
