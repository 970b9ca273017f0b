//! Directory handles for walks ([`FsOps::open_dir`](super::FsOps::open_dir)
//! and the methods after it): a directory opened once, listed into a
//! caller's buffer, and its children opened by one name each.
//!
//! A handle always knows its path, so a backend that works on paths
//! (the defaults of [`FsOps`](super::FsOps): [`MemoryFs`](super::MemoryFs),
//! [`LocalFs`](super::LocalFs), any wrapper) needs nothing else; a backend
//! on descriptors ([`ConfinedFs`](super::ConfinedFs)) also keeps the
//! directory's descriptor in it.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

use super::FileKind;

/// An open directory: its path, and for backends on descriptors the
/// descriptor it was opened as.
#[derive(Debug)]
pub struct DirHandle {
    path: PathBuf,
    fd: Option<OwnedFd>,
    /// Whether the descriptor has been read to its end once (a second
    /// listing rewinds it first).
    listed: AtomicBool,
}

impl DirHandle {
    /// A handle that is only a path: every operation on it goes through
    /// the backend's path operations.
    pub fn by_path(path: PathBuf) -> Self {
        Self {
            path,
            fd: None,
            listed: AtomicBool::new(false),
        }
    }

    /// A handle on the descriptor `fd`, opened as `path`.
    pub(crate) fn with_fd(path: PathBuf, fd: OwnedFd) -> Self {
        Self {
            path,
            fd: Some(fd),
            listed: AtomicBool::new(false),
        }
    }

    /// The directory's path (absolute, as the backend's paths are).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The descriptor, when the handle has one.
    pub(crate) fn fd(&self) -> Option<&OwnedFd> {
        self.fd.as_ref()
    }

    /// Marks the descriptor as listed; whether it had been before.
    pub(crate) fn mark_listed(&self) -> bool {
        self.listed.swap(true, Ordering::Relaxed)
    }
}

/// One entry of a [`Listing`]: where its name lies in the name buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Listed {
    start: u32,
    len: u32,
    kind: FileKind,
}

/// A directory's entries (without `.` and `..`): their names in one
/// buffer, and their kinds. A walk reuses one listing for every directory
/// (the buffers keep their capacity) and takes the names of each.
#[derive(Debug, Default)]
pub struct Listing {
    names: Vec<u8>,
    entries: Vec<Listed>,
    /// Scratch space of the backend (raw `getdents` records), kept from
    /// one listing to the next.
    pub(crate) scratch: Vec<u8>,
}

impl Listing {
    /// An empty listing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets the entries (keeping the buffers).
    pub fn clear(&mut self) {
        self.names.clear();
        self.entries.clear();
    }

    /// Adds one entry. Names longer than 4 GiB do not exist (a name is at
    /// most 255 bytes on every Unix file system); one is dropped.
    pub fn push(&mut self, name: &[u8], kind: FileKind) {
        let (Ok(start), Ok(len)) = (u32::try_from(self.names.len()), u32::try_from(name.len()))
        else {
            return;
        };
        self.names.extend_from_slice(name);
        self.entries.push(Listed { start, len, kind });
    }

    /// How many entries the listing holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the listing is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The name of entry `index`.
    pub fn name(&self, index: usize) -> &OsStr {
        OsStr::from_bytes(self.name_bytes(index))
    }

    /// The name of entry `index`, as bytes.
    pub(crate) fn name_bytes(&self, index: usize) -> &[u8] {
        let entry = self.entries[index];
        &self.names[entry.start as usize..(entry.start + entry.len) as usize]
    }

    /// Where the name of entry `index` lies in the buffer that
    /// [`Listing::take_names`] returns.
    pub(crate) fn name_span(&self, index: usize) -> (u32, u32) {
        let entry = self.entries[index];
        (entry.start, entry.len)
    }

    /// The kind of entry `index` (a symlink is a symlink).
    pub fn kind(&self, index: usize) -> FileKind {
        self.entries[index].kind
    }

    /// Sorts the entries by their names' bytes.
    pub fn sort(&mut self) {
        let names = &self.names;
        self.entries.sort_unstable_by(|a, b| {
            let name = |e: &Listed| &names[e.start as usize..(e.start + e.len) as usize];
            name(a).cmp(name(b))
        });
    }

    /// The name buffer, for a caller that keeps the names of this
    /// directory; the listing starts the next one with a new buffer.
    pub(crate) fn take_names(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_sorts_by_name_bytes_and_hands_over_its_names() {
        let mut listing = Listing::new();
        for (name, kind) in [
            ("b", FileKind::File),
            ("a-c", FileKind::Dir),
            ("a", FileKind::Dir),
            ("B", FileKind::Symlink),
        ] {
            listing.push(name.as_bytes(), kind);
        }
        listing.sort();
        let names: Vec<_> = (0..listing.len())
            .map(|i| (listing.name(i).to_str().unwrap(), listing.kind(i)))
            .collect();
        assert_eq!(
            names,
            [
                ("B", FileKind::Symlink),
                ("a", FileKind::Dir),
                ("a-c", FileKind::Dir),
                ("b", FileKind::File)
            ]
        );
        let span = listing.name_span(2);
        let buffer = listing.take_names();
        assert_eq!(&buffer[span.0 as usize..(span.0 + span.1) as usize], b"a-c");
    }
}
