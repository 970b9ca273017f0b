//! [`ConfinedFs`] against a real tree with symlinks that leave it, and the
//! replacing write and non-blocking open it shares with [`LocalFs`].

use std::ffi::CString;
use std::io::Read;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::path::PathBuf;

use pretty_assertions::assert_eq;

use super::ConfinedFs;
use crate::tools::ops::DirEntry;
use crate::tools::ops::FileKind;
use crate::tools::ops::FsOps;
use crate::tools::ops::LocalFs;
use crate::tools::ops::is_outside_workspace;

/// `tmp/outside/secret.txt`, and the workspace `tmp/ws` with
/// `dir/a.txt`, `in_link -> dir`, `rel_out -> ../outside`,
/// `abs_out -> <tmp>/outside`, `file_out -> ../outside/secret.txt`.
struct Tree {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
    fs: ConfinedFs,
}

impl Tree {
    fn new() -> Self {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let ws = base.join("ws");
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::create_dir_all(ws.join("dir")).unwrap();
        std::fs::write(base.join("outside/secret.txt"), "secret\n").unwrap();
        std::fs::write(ws.join("dir/a.txt"), "inside\n").unwrap();
        symlink("dir", ws.join("in_link")).unwrap();
        symlink("../outside", ws.join("rel_out")).unwrap();
        symlink(base.join("outside"), ws.join("abs_out")).unwrap();
        symlink("../outside/secret.txt", ws.join("file_out")).unwrap();
        let fs = ConfinedFs::new(&ws).unwrap();
        Self {
            _tmp: tmp,
            base,
            ws,
            fs,
        }
    }

    fn at(&self, rel: &str) -> PathBuf {
        self.ws.join(rel)
    }

    fn outside(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(self.base.join("outside"))
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let data = std::fs::read(&path).unwrap_or_default();
                (path, data)
            })
            .collect();
        out.sort();
        out
    }
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

fn assert_outside<T: std::fmt::Debug>(result: std::io::Result<T>, what: &str) {
    match result {
        Err(err) => assert!(is_outside_workspace(&err), "{what}: {err:?}"),
        Ok(value) => panic!("{what}: allowed, got {value:?}"),
    }
}

#[test]
fn every_operation_refuses_paths_that_lead_outside() {
    let t = Tree::new();
    let fs = &t.fs;
    let before = t.outside();
    for rel in [
        "rel_out/secret.txt",
        "abs_out/secret.txt",
        "file_out",
        "../outside/secret.txt",
    ] {
        let path = t.at(rel);
        assert_outside(fs.metadata(&path), &format!("metadata {rel}"));
        assert_outside(fs.canonicalize(&path), &format!("canonicalize {rel}"));
        assert_outside(fs.open(&path).map(|_| ()), &format!("open {rel}"));
        assert_outside(fs.read(&path), &format!("read {rel}"));
        assert_outside(fs.write(&path, b"x"), &format!("write {rel}"));
    }
    for rel in ["rel_out/new.txt", "abs_out/new.txt", "rel_out/sub/new.txt"] {
        let path = t.at(rel);
        assert_outside(fs.write(&path, b"x"), &format!("write {rel}"));
        assert_outside(
            fs.create_new(&path, 0o600).map(|_| ()),
            &format!("create_new {rel}"),
        );
    }
    assert_outside(fs.create_dir_all(&t.at("rel_out/made")), "create_dir_all");
    assert_outside(
        fs.create_dir_all(&t.at("rel_out")),
        "create_dir_all of a link",
    );
    assert_outside(fs.read_dir(&t.at("rel_out")), "read_dir rel_out");
    assert_outside(fs.read_dir(&t.at("abs_out")), "read_dir abs_out");
    assert_outside(
        fs.symlink_metadata(&t.at("rel_out/secret.txt")),
        "symlink_metadata through a link",
    );
    // Not under the root at all: refused before any system call.
    let secret = t.base.join("outside/secret.txt");
    assert_outside(fs.metadata(&secret), "metadata of an outside path");
    assert_outside(fs.read(&secret), "read of an outside path");
    assert_outside(fs.set_mode(&secret, 0o600), "set_mode");
    assert_outside(fs.remove_file(&secret), "remove_file");
    assert_eq!(t.outside(), before);
}

/// Issue 10, item 1, at the kernel: even opened by its own name (not by
/// the real path the check computes), `trick -> dlink/../pwned.txt` with
/// `dlink -> ../outside/odir` is refused, because the kernel follows
/// `dlink` out of the root before `..` could bring it back.
#[test]
fn a_dangling_link_that_climbs_through_another_link_is_refused_by_the_kernel() {
    let t = Tree::new();
    std::fs::create_dir(t.base.join("outside/odir")).unwrap();
    std::os::unix::fs::symlink("../outside/odir", t.at("dlink")).unwrap();
    std::os::unix::fs::symlink("dlink/../pwned.txt", t.at("trick")).unwrap();
    let before = t.outside();
    assert_outside(t.fs.write(&t.at("trick"), b"x"), "write trick");
    assert_outside(t.fs.read(&t.at("trick")), "read trick");
    assert_eq!(t.outside(), before);
}

#[test]
fn symlinks_inside_are_followed_and_links_themselves_are_seen() {
    let t = Tree::new();
    let fs = &t.fs;
    assert_eq!(fs.read(&t.at("in_link/a.txt")).unwrap(), b"inside\n");
    assert_eq!(
        fs.canonicalize(&t.at("in_link/a.txt")).unwrap(),
        t.at("dir/a.txt")
    );
    assert_eq!(fs.canonicalize(&t.ws).unwrap(), t.ws);
    fs.create_dir_all(&t.at("in_link")).unwrap();
    fs.create_dir_all(&t.at("in_link/made/deeper")).unwrap();
    assert!(t.at("dir/made/deeper").is_dir());
    assert_eq!(fs.metadata(&t.at("in_link")).unwrap().kind, FileKind::Dir);
    assert_eq!(
        fs.symlink_metadata(&t.at("rel_out")).unwrap().kind,
        FileKind::Symlink
    );
    assert_eq!(
        fs.read_link(&t.at("abs_out")).unwrap(),
        t.base.join("outside")
    );
    let mut names: Vec<DirEntry> = fs.read_dir(&t.ws).unwrap();
    names.sort_by(|a, b| a.name.cmp(&b.name));
    let names: Vec<(String, FileKind)> = names
        .into_iter()
        .map(|e| (e.name.to_string_lossy().into_owned(), e.kind))
        .collect();
    assert_eq!(
        names,
        [
            ("abs_out".to_owned(), FileKind::Symlink),
            ("dir".to_owned(), FileKind::Dir),
            ("file_out".to_owned(), FileKind::Symlink),
            ("in_link".to_owned(), FileKind::Symlink),
            ("rel_out".to_owned(), FileKind::Symlink),
        ]
    );
}

/// What both disk backends promise of `write`.
fn check_replacing_write(fs: &dyn FsOps, ws: &Path) {
    let file = ws.join("dir/a.txt");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let old_inode = std::fs::metadata(&file).unwrap().ino();
    fs.write(&file, b"replaced\n").unwrap();
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), b"replaced\n");
    assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
    assert_ne!(meta.ino(), old_inode, "a new file took the name");
    // Through a symlink: the target is replaced, the link stays.
    fs.write(&ws.join("in_link/a.txt"), b"via link\n").unwrap();
    std::os::unix::fs::symlink("a.txt", ws.join("dir/alias")).unwrap();
    fs.write(&ws.join("dir/alias"), b"via alias\n").unwrap();
    assert!(
        std::fs::symlink_metadata(ws.join("dir/alias"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"via alias\n");
    // A dangling symlink inside creates what it names.
    std::os::unix::fs::symlink("later.txt", ws.join("dir/dangling")).unwrap();
    fs.write(&ws.join("dir/dangling"), b"made\n").unwrap();
    assert_eq!(std::fs::read(ws.join("dir/later.txt")).unwrap(), b"made\n");
    // New files get the usual default mode; no temporary file is left.
    fs.write(&ws.join("dir/new.txt"), b"new\n").unwrap();
    let mut names: Vec<String> = std::fs::read_dir(ws.join("dir"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["a.txt", "alias", "dangling", "later.txt", "new.txt"]
    );
    let err = fs.write(&ws.join("dir"), b"x").unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::IsADirectory);
}

#[test]
fn write_replaces_the_file_whole_on_both_disk_backends() {
    let t = Tree::new();
    check_replacing_write(&t.fs, &t.ws);
    let t = Tree::new();
    check_replacing_write(&LocalFs, &t.ws);
}

#[test]
fn fifos_are_refused_without_blocking() {
    let t = Tree::new();
    let fifo = t.at("dir/fifo");
    mkfifo(&fifo);
    for fs in [&t.fs as &dyn FsOps, &LocalFs] {
        let err = fs.open(&fifo).err().unwrap();
        assert_eq!(
            err.to_string(),
            "not a regular file (a pipe, socket or device)"
        );
        let err = fs.write(&fifo, b"x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "not a regular file (a pipe, socket or device)"
        );
        let err = fs.read(&t.at("dir")).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::IsADirectory);
    }
    assert_eq!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_file(),
        false,
        "the FIFO is still there"
    );
}

#[test]
fn read_capped_reads_at_most_one_byte_more_than_allowed() {
    let t = Tree::new();
    let file = t.at("dir/a.txt");
    assert_eq!(t.fs.read_capped(&file, 7).unwrap(), b"inside\n");
    let err = t.fs.read_capped(&file, 6).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::FileTooLarge);
    assert_eq!(err.to_string(), "larger than 6 bytes");
    // /dev/zero never ends; the cap ends the read (here through the
    // unconfined backend, which would reach it).
    let err = LocalFs.read_capped(Path::new("/dev/zero"), 16).unwrap_err();
    assert_eq!(
        err.to_string(),
        "not a regular file (a pipe, socket or device)"
    );
    let mut head = [0u8; 4];
    t.fs.open(&file).unwrap().read_exact(&mut head).unwrap();
    assert_eq!(&head, b"insi");
}

#[test]
fn created_files_have_exactly_the_mode_asked_for() {
    let t = Tree::new();
    let path = t.at("dir/log");
    let mut file = t.fs.create_new(&path, 0o600).unwrap();
    file.write_all(b"x").unwrap();
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777,
        0o600
    );
    assert_eq!(
        t.fs.create_new(&path, 0o600).err().unwrap().kind(),
        std::io::ErrorKind::AlreadyExists
    );
    // Never through a symlink, even one that stays inside.
    std::os::unix::fs::symlink("elsewhere", t.at("dir/link")).unwrap();
    assert_eq!(
        t.fs.create_new(&t.at("dir/link"), 0o600)
            .err()
            .unwrap()
            .kind(),
        std::io::ErrorKind::AlreadyExists
    );
}

/// The names and kinds of a handle's listing, sorted.
fn listed(fs: &dyn FsOps, dir: &crate::tools::ops::DirHandle) -> Vec<(String, FileKind)> {
    let mut listing = crate::tools::ops::Listing::new();
    fs.list_dir(dir, &mut listing).unwrap();
    listing.sort();
    (0..listing.len())
        .map(|i| {
            (
                listing.name(i).to_str().unwrap().to_owned(),
                listing.kind(i),
            )
        })
        .collect()
}

/// Issue 27: the directory handles of a confined walk list what
/// `read_dir` lists, open children by one name relative to their
/// directory, and never follow a symlink in a child's place.
#[test]
fn directory_handles_list_and_open_children_by_one_name_without_following_links() {
    let t = Tree::new();
    mkfifo(&t.at("dir/fifo"));
    std::fs::create_dir(t.at("dir/sub")).unwrap();
    let root = t.fs.open_dir(&t.ws).unwrap();
    assert_eq!(root.path(), t.ws);
    let expected = |fs: &dyn FsOps, path: &Path| {
        let mut entries: Vec<(String, FileKind)> = fs
            .read_dir(path)
            .unwrap()
            .into_iter()
            .map(|e: DirEntry| (e.name.to_str().unwrap().to_owned(), e.kind))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries
    };
    assert_eq!(listed(&t.fs, &root), expected(&t.fs, &t.ws));
    let dir = t.fs.open_child_dir(&root, "dir".as_ref()).unwrap();
    assert_eq!(dir.path(), t.at("dir"));
    assert_eq!(
        listed(&t.fs, &dir),
        [
            ("a.txt".to_owned(), FileKind::File),
            ("fifo".to_owned(), FileKind::Other),
            ("sub".to_owned(), FileKind::Dir),
        ]
    );
    let mut text = String::new();
    t.fs.open_child_file(&dir, "a.txt".as_ref())
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text, "inside\n");
    // A FIFO opened by mistake (swapped in after the listing) does not
    // block: it reads as empty.
    let mut fifo = Vec::new();
    t.fs.open_child_file(&dir, "fifo".as_ref())
        .unwrap()
        .read_to_end(&mut fifo)
        .unwrap();
    assert_eq!(fifo, b"");
    // Links in a child's place are not followed, inside or out.
    for link in ["in_link", "rel_out", "abs_out"] {
        let err = t.fs.open_child_dir(&root, link.as_ref()).unwrap_err();
        assert!(err.raw_os_error().is_some(), "{link}: {err:?}");
    }
    for link in ["file_out", "in_link"] {
        assert!(
            t.fs.open_child_file(&root, link.as_ref()).is_err(),
            "{link}"
        );
    }
    // One name only.
    for name in ["..", ".", "", "dir/a.txt", "../outside"] {
        let err = t.fs.open_child_dir(&root, name.as_ref()).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{name:?}");
        let err = t.fs.open_child_file(&root, name.as_ref()).err().unwrap();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{name:?}");
    }
    // The root handle itself is confined like every path.
    assert_outside(
        t.fs.open_dir(&t.at("rel_out")),
        "open_dir through a link out",
    );
    // The path defaults (LocalFs) agree on the listing.
    let local = LocalFs.open_dir(&t.at("dir")).unwrap();
    assert_eq!(listed(&LocalFs, &local), listed(&t.fs, &dir));
}
