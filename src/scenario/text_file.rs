//! Reading the text files a user names or a suite holds (scenario files,
//! `harness.yaml`, snapshots, baselines, run reports): regular files only.
//!
//! A FIFO would block the read until a writer comes (for ever, in CI), a
//! device such as `/dev/zero` would never end; either is refused at once
//! with what it is. The file is opened without blocking and then checked
//! through its own descriptor, so what is checked is what is read.

use std::io;
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// What a file that is not a regular file is (`a FIFO (named pipe)`, `a
/// directory` …); `None` for a regular file.
pub(crate) fn not_regular(kind: std::fs::FileType) -> Option<&'static str> {
    if kind.is_file() {
        return None;
    }
    Some(if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    })
}

/// The text of the regular file at `path` (symlinks followed). Anything
/// else is an `InvalidInput` error that names what it is.
pub(crate) fn read_regular(path: &Path) -> io::Result<String> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|err| match std::fs::read_link(path) {
            Ok(target) if err.kind() == io::ErrorKind::NotFound => io::Error::new(
                err.kind(),
                format!(
                    "it is a symlink to {}, which does not exist",
                    target.display()
                ),
            ),
            _ => err,
        })?;
    if let Some(what) = not_regular(file.metadata()?.file_type()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {what}, and only a regular file can be read here"),
        ));
    }
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.yaml");
        std::fs::write(&file, "x: 1\n").unwrap();
        assert_eq!(read_regular(&file).unwrap(), "x: 1\n");
        let fifo = dir.path().join("f.yaml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_regular(&fifo).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is a FIFO (named pipe), and only a regular file can be read here"
        );
        let err = read_regular(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is a device, and only a regular file can be read here"
        );
        assert_eq!(
            read_regular(dir.path()).unwrap_err().to_string(),
            "it is a directory, and only a regular file can be read here"
        );
        let link = dir.path().join("l.yaml");
        std::os::unix::fs::symlink("gone.yaml", &link).unwrap();
        assert_eq!(
            read_regular(&link).unwrap_err().to_string(),
            "it is a symlink to gone.yaml, which does not exist"
        );
    }
}
