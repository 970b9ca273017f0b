//! Model-facing wording of file-system errors: what failed, on which
//! workspace-relative path, and what to do about it (D6). Never the raw OS
//! text with an absolute path.

use std::io;

use super::ops::is_outside_workspace;

/// One sentence (or two) for an I/O error while trying to `action` the
/// path shown as `display`.
pub fn describe_io_error(action: &str, display: &str, err: &io::Error) -> String {
    if is_outside_workspace(err) {
        // The kernel refused a path that led out of the workspace root at
        // the moment of use (D1), e.g. a directory swapped for a symlink.
        return format!(
            "Path \"{display}\" is outside the workspace: a symlink on the way leads out of the \
             workspace root, and tools may only touch files under it. Use a path relative to the \
             workspace root."
        );
    }
    match err.kind() {
        io::ErrorKind::PermissionDenied => format!(
            "Permission denied: cannot {action} {display}. Check its permissions with bash \
             (ls -l) or use another file."
        ),
        io::ErrorKind::NotFound => {
            format!("Cannot {action} {display}: it does not exist. Use ls or find to locate it.")
        }
        io::ErrorKind::IsADirectory => format!(
            "Cannot {action} {display}: it is a directory. Give the path of a file inside it."
        ),
        io::ErrorKind::NotADirectory => format!(
            "Cannot {action} {display}: a part of the path that should be a directory is a file."
        ),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => {
            format!("Cannot {action} {display}: no space left on the device.")
        }
        io::ErrorKind::ReadOnlyFilesystem => {
            format!("Cannot {action} {display}: the file system is read-only.")
        }
        io::ErrorKind::InvalidFilename => {
            format!("Cannot {action} {display}: the file name is not valid on this system.")
        }
        _ => format!("Cannot {action} {display}: {err}."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wording_names_the_action_the_path_and_a_next_step() {
        let err = io::Error::from(io::ErrorKind::PermissionDenied);
        assert_eq!(
            describe_io_error("read", "secret.txt", &err),
            "Permission denied: cannot read secret.txt. Check its permissions with bash (ls -l) \
             or use another file."
        );
        let err = io::Error::from(io::ErrorKind::IsADirectory);
        assert_eq!(
            describe_io_error("write", "src", &err),
            "Cannot write src: it is a directory. Give the path of a file inside it."
        );
    }

    #[test]
    fn a_kernel_refusal_is_worded_like_the_outside_check() {
        let err = crate::tools::ops::outside_workspace();
        assert_eq!(
            describe_io_error("read", "d/r.txt", &err),
            "Path \"d/r.txt\" is outside the workspace: a symlink on the way leads out of the \
             workspace root, and tools may only touch files under it. Use a path relative to the \
             workspace root."
        );
        // The OS's own permission errors keep their wording.
        let err = io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(
            describe_io_error("read", "x", &err),
            "Permission denied: cannot read x. Check its permissions with bash (ls -l) or use \
             another file."
        );
    }
}
