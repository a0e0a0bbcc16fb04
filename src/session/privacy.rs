//! Who may read a session. Private by default: every Rollscope process writes with umask 077
//! (folders 0700, files 0600), and opening a session tightens whatever is wider (files a
//! teammate's older Rollscope, an editor or `cp` left readable). `share = "GROUP"` in
//! `session.toml` (`rollscope sessions share GROUP`) lets one group read the session:
//! folders 2750 and files 0640, all of them that group's, umask 027. A session folder, or
//! anything in it, that belongs to another user is refused: its owner must share or copy it.

use super::{SessionConfig, SessionPaths};
use std::ffi::CString;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;

/// How a session's files may be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Privacy {
    /// By their owner only.
    Private,
    /// By the members of a group too.
    Shared {
        /// The group's name.
        group: String,
        /// Its id.
        gid: u32,
    },
}

impl Privacy {
    /// The privacy a session's config asks for (an unknown group is an error naming it).
    pub fn of(config: &SessionConfig) -> anyhow::Result<Self> {
        match &config.share {
            None => Ok(Self::Private),
            Some(group) => Ok(Self::Shared {
                gid: group_id(group)?,
                group: group.clone(),
            }),
        }
    }

    /// The umask this process writes the session's files with.
    fn umask(&self) -> libc::mode_t {
        match self {
            Self::Private => 0o077,
            Self::Shared { .. } => 0o027,
        }
    }

    /// The mode a file or folder of the session should have.
    fn wanted(&self, mode: u32, folder: bool, socket: bool) -> u32 {
        let permissions = mode & 0o7777;
        match self {
            Self::Private => permissions & !0o2077,
            Self::Shared { .. } if socket => permissions & !0o2077,
            Self::Shared { .. } if folder => (permissions & !0o027) | 0o2050,
            Self::Shared { .. } => (permissions & !0o037) | 0o040,
        }
    }
}

/// Sets this process's umask for writing the session, then brings every file and folder
/// of it to the modes its privacy asks for; returns how many were changed. Something in the
/// session that belongs to another user is an error that names it and says what to do.
pub fn protect(paths: &SessionPaths, config: &SessionConfig) -> anyhow::Result<usize> {
    let privacy = Privacy::of(config)?;
    // SAFETY: umask has no preconditions and cannot fail.
    unsafe {
        libc::umask(privacy.umask());
    }
    if !paths.dir.exists() {
        return Ok(0);
    }
    let mut changed = 0;
    protect_tree(&paths.dir, &privacy, &mut changed)?;
    Ok(changed)
}

fn protect_tree(path: &Path, privacy: &Privacy, changed: &mut usize) -> anyhow::Result<()> {
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => anyhow::bail!("cannot inspect {}: {error}", path.display()),
    };
    if metadata.file_type().is_symlink() {
        return Ok(());
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    anyhow::ensure!(
        metadata.uid() == uid,
        "{} belongs to user {}, not you (user {uid}): a session is its owner's alone; ask \
         them to run `rollscope sessions share GROUP` for a group you are in, or to copy it \
         for you",
        path.display(),
        metadata.uid()
    );
    let folder = metadata.is_dir();
    if let Privacy::Shared { gid, group } = privacy
        && metadata.gid() != *gid
    {
        std::os::unix::fs::lchown(path, None, Some(*gid)).map_err(|error| {
            anyhow::anyhow!(
                "cannot give {} to group {group}: {error} (you must be a member of it)",
                path.display()
            )
        })?;
        *changed += 1;
    }
    let wanted = privacy.wanted(metadata.mode(), folder, metadata.file_type().is_socket());
    if wanted != metadata.mode() & 0o7777 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(wanted))
            .map_err(|error| anyhow::anyhow!("cannot restrict {}: {error}", path.display()))?;
        *changed += 1;
    }
    if folder {
        let entries = std::fs::read_dir(path)
            .map_err(|error| anyhow::anyhow!("cannot read {}: {error}", path.display()))?;
        for entry in entries {
            let entry = entry
                .map_err(|error| anyhow::anyhow!("cannot read {}: {error}", path.display()))?;
            protect_tree(&entry.path(), privacy, changed)?;
        }
    }
    Ok(())
}

/// The id of a group, by name.
fn group_id(name: &str) -> anyhow::Result<u32> {
    let c_name = CString::new(name).map_err(|_| anyhow::anyhow!("`{name}` is not a group name"))?;
    let mut entry = std::mem::MaybeUninit::<libc::group>::uninit();
    let mut buffer = vec![0 as libc::c_char; 16 << 10];
    let mut found: *mut libc::group = std::ptr::null_mut();
    // SAFETY: every pointer is to memory this function owns, sized as passed; on success
    // `found` points at `entry`, filled by the call.
    let status = unsafe {
        libc::getgrnam_r(
            c_name.as_ptr(),
            entry.as_mut_ptr(),
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        )
    };
    anyhow::ensure!(
        status == 0 && !found.is_null(),
        "there is no group `{name}` on this machine (see `getent group`)"
    );
    // SAFETY: `found` is non-null, so `entry` was filled.
    Ok(unsafe { (*found).gr_gid })
}

/// Writes `share = "GROUP"` into the session's `session.toml` (or takes the line out, with
/// `None`), before its first table so it stays a top-level key.
pub fn set_share(paths: &SessionPaths, group: Option<&str>) -> anyhow::Result<()> {
    if let Some(group) = group {
        group_id(group)?;
    }
    let path = paths.config_path();
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut lines: Vec<String> = text
        .lines()
        .filter(|line| {
            !line.trim_start().starts_with("share ") && !line.trim_start().starts_with("share=")
        })
        .map(str::to_string)
        .collect();
    if let Some(group) = group {
        let line = format!("share = {}", toml::Value::String(group.to_string()));
        let first_table = lines
            .iter()
            .position(|line| line.trim_start().starts_with('['))
            .unwrap_or(lines.len());
        lines.insert(first_table, line);
    }
    let mut written = lines.join("\n");
    written.push('\n');
    std::fs::write(&path, written)
        .map_err(|error| anyhow::anyhow!("cannot write {}: {error}", path.display()))?;
    SessionConfig::load(&path)?;
    Ok(())
}
