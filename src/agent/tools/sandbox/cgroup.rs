//! A cgroup v2 of its own for one sandboxed call, where the machine lets this process make
//! one: under its own cgroup, or (as root) under the hierarchy's root, and only where that
//! parent already hands the `memory` and `pids` controllers to its children (nothing of the
//! host's cgroup setup is changed). Its `memory.max` and `pids.max` then bound all the call's
//! processes together; the sandbox's first process joins it before anything else.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long removing the cgroup waits for its last processes to be gone.
const REMOVE_WAIT: Duration = Duration::from_secs(2);

/// A cgroup made for one call; removed (its processes killed first) when done.
pub struct RunCgroup {
    dir: PathBuf,
    cleaned: bool,
}

impl RunCgroup {
    /// Makes a cgroup named `name` bounded to `memory_bytes` (no swap) and `processes`, or
    /// `None` where this process cannot.
    pub fn create(name: &str, memory_bytes: u64, processes: u64) -> Option<Self> {
        let (mount, own) = locate()?;
        let mut parents = vec![own];
        if parents[0] != mount {
            parents.push(mount);
        }
        parents
            .iter()
            .find_map(|parent| Self::create_in(parent, name, memory_bytes, processes))
    }

    fn create_in(parent: &Path, name: &str, memory_bytes: u64, processes: u64) -> Option<Self> {
        let handed_out = std::fs::read_to_string(parent.join("cgroup.subtree_control")).ok()?;
        let handed_out: Vec<&str> = handed_out.split_whitespace().collect();
        if !handed_out.contains(&"memory") || !handed_out.contains(&"pids") {
            return None;
        }
        let dir = parent.join(name);
        std::fs::create_dir(&dir).ok()?;
        let cgroup = Self {
            dir,
            cleaned: false,
        };
        cgroup.write("memory.max", memory_bytes).ok()?;
        cgroup.write("pids.max", processes).ok()?;
        if cgroup.dir.join("memory.swap.max").exists() {
            cgroup.write("memory.swap.max", 0).ok()?;
        }
        Some(cgroup)
    }

    fn write(&self, file: &str, value: u64) -> std::io::Result<()> {
        std::fs::write(self.dir.join(file), value.to_string())
    }

    /// The file a process writes `0` to in order to join.
    pub fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// Kills whatever is left in it and removes it, waiting briefly for the processes to go.
    pub async fn remove(mut self) {
        let _ = self.write("cgroup.kill", 1);
        let until = tokio::time::Instant::now() + REMOVE_WAIT;
        while std::fs::remove_dir(&self.dir).is_err() && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.cleaned = true;
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        if !self.cleaned {
            let _ = self.write("cgroup.kill", 1);
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

/// The cgroup v2 mount point and this process's own cgroup folder under it.
fn locate() -> Option<(PathBuf, PathBuf)> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    parse(&membership, &mounts)
}

/// `locate` on the text of `/proc/self/cgroup` and `/proc/self/mountinfo`.
fn parse(membership: &str, mounts: &str) -> Option<(PathBuf, PathBuf)> {
    let own = membership
        .lines()
        .find_map(|line| line.strip_prefix("0::"))?;
    mounts.lines().find_map(|line| {
        let (fields, source) = line.split_once(" - ")?;
        if source.split(' ').next() != Some("cgroup2") {
            return None;
        }
        let fields: Vec<&str> = fields.split(' ').collect();
        let (root, mount) = (*fields.get(3)?, Path::new(fields.get(4)?));
        let relative = Path::new(own).strip_prefix(root).ok()?;
        Some((mount.to_path_buf(), mount.join(relative)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unified_hierarchy_and_the_own_cgroup_are_found() {
        let membership = "0::/user.slice/user-1000.slice/session-2.scope\n";
        let mounts = "24 30 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(
            parse(membership, mounts),
            Some((
                PathBuf::from("/sys/fs/cgroup"),
                PathBuf::from("/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope")
            ))
        );
    }

    #[test]
    fn a_hybrid_layout_finds_the_unified_mount_and_v1_alone_finds_none() {
        let membership = "4:memory:/job\n0::/\n";
        let hybrid = "33 25 0:29 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
                      41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let unified = PathBuf::from("/sys/fs/cgroup/unified");
        assert_eq!(parse(membership, hybrid), Some((unified.clone(), unified)));
        assert_eq!(parse("4:memory:/job\n", hybrid), None);
        assert_eq!(
            parse(
                membership,
                "33 25 0:29 / /sys/fs/cgroup/memory rw - cgroup cgroup rw\n"
            ),
            None
        );
    }

    #[test]
    fn a_parent_that_does_not_hand_out_memory_and_pids_is_not_used() {
        let parent = tempfile::tempdir().unwrap();
        std::fs::write(
            parent.path().join("cgroup.subtree_control"),
            "hugetlb pids\n",
        )
        .unwrap();
        assert!(RunCgroup::create_in(parent.path(), "run", 1 << 30, 16).is_none());
        assert!(!parent.path().join("run").exists());
    }

    #[test]
    fn a_parent_that_hands_out_both_gets_a_child_with_the_bounds() {
        let parent = tempfile::tempdir().unwrap();
        let handed_out = "cpu memory pids\n";
        std::fs::write(parent.path().join("cgroup.subtree_control"), handed_out).unwrap();
        let cgroup = RunCgroup::create_in(parent.path(), "run", 2 << 30, 16).unwrap();
        let read = |file: &str| std::fs::read_to_string(parent.path().join("run").join(file));
        assert_eq!(read("memory.max").unwrap(), "2147483648");
        assert_eq!(read("pids.max").unwrap(), "16");
        assert_eq!(cgroup.procs(), parent.path().join("run/cgroup.procs"));
    }
}
