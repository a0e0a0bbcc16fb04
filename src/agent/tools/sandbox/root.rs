//! The sandbox's root, as a list of steps the child runs: read-only binds of the system
//! directories and the Python install (every mount below them read-only too), a few device
//! nodes, the loader's cache, and a fresh tmpfs at `/sandbox`, the one writable place.

use super::PythonInstall;
use super::child::Step;
use std::collections::BTreeSet;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Host directories exposed read-only (symbolic links are recreated as links).
const SYSTEM_PATHS: [&str; 6] = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32"];
/// Host files exposed read-only: the dynamic loader's cache only.
const SYSTEM_FILES: [&str; 1] = ["/etc/ld.so.cache"];
/// Device nodes exposed.
const DEVICES: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"];

/// `mount_setattr` attributes (linux/mount.h): read-only.
const MOUNT_ATTR_RDONLY: u64 = 0x1;
/// No set-user-id or set-group-id bits honoured.
const MOUNT_ATTR_NOSUID: u64 = 0x2;
/// No device nodes honoured.
const MOUNT_ATTR_NODEV: u64 = 0x4;
/// No programs executed.
const MOUNT_ATTR_NOEXEC: u64 = 0x8;

/// A path as a C string.
pub fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL byte"))
}

/// The steps that fill the new root at `root` (a host folder) for `install`, with the
/// scratch tmpfs at `workdir` mounted with `scratch_options`.
pub fn root_steps(
    root: &Path,
    install: &PythonInstall,
    workdir: &Path,
    scratch_options: CString,
) -> io::Result<Vec<Step>> {
    let mut builder = RootBuilder {
        root,
        steps: Vec::new(),
        made: BTreeSet::new(),
    };
    let read_only = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    let mut exposed: Vec<PathBuf> = Vec::new();
    for path in SYSTEM_PATHS {
        builder.expose(Path::new(path), read_only)?;
        exposed.push(PathBuf::from(path));
    }
    for python_root in &install.roots {
        if exposed.iter().any(|done| python_root.starts_with(done)) {
            continue;
        }
        builder.expose(python_root, read_only)?;
        exposed.push(python_root.clone());
    }
    for file in SYSTEM_FILES {
        builder.expose(Path::new(file), read_only)?;
    }
    for device in DEVICES {
        builder.expose(Path::new(device), MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)?;
    }
    builder.dir(workdir)?;
    builder.steps.push(Step::Tmpfs {
        target: c_path(&builder.inside(workdir))?,
        options: scratch_options,
    });
    Ok(builder.steps)
}

/// Builds the list of steps that fill the new root.
struct RootBuilder<'a> {
    root: &'a Path,
    steps: Vec<Step>,
    made: BTreeSet<PathBuf>,
}

impl RootBuilder<'_> {
    fn inside(&self, path: &Path) -> PathBuf {
        self.root.join(path.strip_prefix("/").unwrap_or(path))
    }

    fn dir(&mut self, path: &Path) -> io::Result<()> {
        for ancestor in path.ancestors().collect::<Vec<_>>().into_iter().rev() {
            if ancestor == Path::new("/") || !self.made.insert(ancestor.to_path_buf()) {
                continue;
            }
            self.steps.push(Step::Dir(c_path(&self.inside(ancestor))?));
        }
        Ok(())
    }

    /// Exposes a host path at the same place: links as links, directories and files as
    /// binds (with every mount below them) given `attributes` on top of their own.
    fn expose(&mut self, path: &Path, attributes: u64) -> io::Result<()> {
        let Ok(metadata) = std::fs::symlink_metadata(path) else {
            return Ok(());
        };
        if let Some(parent) = path.parent() {
            self.dir(parent)?;
        }
        if metadata.file_type().is_symlink() {
            let target = std::fs::read_link(path)?;
            self.steps.push(Step::Symlink {
                target: c_path(&target)?,
                link: c_path(&self.inside(path))?,
            });
            return Ok(());
        }
        let file = !metadata.is_dir();
        if !file {
            self.dir(path)?;
        }
        self.steps.push(Step::Bind {
            source: c_path(path)?,
            target: c_path(&self.inside(path))?,
            file,
            attributes,
        });
        Ok(())
    }
}
