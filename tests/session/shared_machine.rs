//! A session on a machine other users share: its files are its owner's alone (or one
//! group's, when shared), a client checks the server before it sends a byte, a folder or
//! lock another user controls is refused, one process cannot take every connection, and an
//! idle connection is closed. Tests that need another user run as root (CI does) and take
//! uid 65534 for it.

use super::common::{binary, cli, connect, demo, session, stdout};
use rollscope::store::{ServerLauncher, Store};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Every file and folder under `dir` with its mode and owner (links left out).
fn tree(dir: &Path) -> Vec<(PathBuf, u32, u32)> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        let metadata = std::fs::symlink_metadata(&path).unwrap();
        if metadata.file_type().is_symlink() {
            continue;
        }
        if metadata.is_dir() {
            pending.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
        found.push((path, metadata.mode() & 0o7777, metadata.gid()));
    }
    found
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn a_fresh_session_is_its_owners_alone_and_wider_modes_are_tightened_on_open() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    demo(root.path(), 20);
    let entries = tree(&paths.dir);
    assert!(entries.len() > 10, "{entries:?}");
    for (path, mode, _) in &entries {
        assert_eq!(mode & 0o077, 0, "{} is {mode:o}", path.display());
    }
    for (path, _, _) in &entries {
        let wide = if path.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(wide)).unwrap();
    }
    stdout(cli(root.path(), "me", &["list"]).output().unwrap());
    for (path, mode, _) in tree(&paths.dir) {
        assert_eq!(mode & 0o077, 0, "{} still {mode:o}", path.display());
    }
}

#[test]
fn a_shared_session_is_readable_by_its_group_and_private_again_after() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    demo(root.path(), 10);
    // SAFETY: getegid has no preconditions.
    let gid = unsafe { libc::getegid() };
    let group = std::fs::read_to_string("/etc/group")
        .unwrap()
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.get(2) == Some(&gid.to_string().as_str())).then(|| fields[0].to_string())
        })
        .expect("this process's group has a name");
    let said = stdout(
        cli(root.path(), "me", &["sessions", "share", &group])
            .output()
            .unwrap(),
    );
    assert!(
        said.contains(&format!("readable by group {group}")),
        "{said}"
    );
    stdout(
        cli(root.path(), "me", &["demo-data", "--count", "5", "--force"])
            .output()
            .unwrap(),
    );
    for (path, mode, owner_group) in tree(&paths.dir) {
        assert_eq!(owner_group, gid, "{}", path.display());
        if path.extension().is_some_and(|e| e == "sock") {
            assert_eq!(mode & 0o077, 0, "the socket stays private");
        } else if path.is_dir() {
            assert_eq!(mode & 0o2077, 0o2050, "{} is {mode:o}", path.display());
        } else {
            assert_eq!(mode & 0o077, 0o040, "{} is {mode:o}", path.display());
        }
    }
    stdout(
        cli(root.path(), "me", &["sessions", "share", "--off"])
            .output()
            .unwrap(),
    );
    for (path, mode, _) in tree(&paths.dir) {
        assert_eq!(mode & 0o2077, 0, "{} is {mode:o}", path.display());
    }
    let unknown = cli(
        root.path(),
        "me",
        &["sessions", "share", "no-such-group-here"],
    )
    .output()
    .unwrap();
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("there is no group `no-such-group-here`")
    );
}

#[test]
fn a_session_folder_others_can_write_to_or_another_user_owns_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    demo(root.path(), 5);
    let _ = connect(&paths);
    std::fs::set_permissions(&paths.dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let error = Store::connect(&paths.store_dir(), ServerLauncher::rollscope(binary()))
        .err()
        .expect("a folder anyone may write to is refused");
    assert!(
        error.to_string().contains("other users may write to it"),
        "{error}"
    );
    std::fs::set_permissions(&paths.dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    if !is_root() {
        eprintln!("skipped the other-owner half: it needs root (CI runs as root)");
        return;
    }
    std::os::unix::fs::chown(&paths.dir, Some(65534), Some(65534)).unwrap();
    let output = cli(root.path(), "me", &["list"]).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("belongs to user 65534, not you (user 0)"),
        "{stderr}"
    );
}

/// A fake server as user 65534 listening on the session's own socket path: it reports every
/// byte it receives.
fn spoofed_server(socket: &Path, report: &Path) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let _ = std::fs::remove_file(socket);
    // Bound here (a root-owned socket file in a root-owned folder), listened on there: the
    // kernel gives a connecting client the credentials of the process that listens.
    let listener = std::os::unix::net::UnixListener::bind(socket).unwrap();
    let fd = std::os::fd::IntoRawFd::into_raw_fd(listener);
    let script = format!(
        "import os, socket\n\
         s = socket.socket(fileno={fd})\n\
         s.listen(8)\n\
         total = 0\n\
         s.settimeout(20)\n\
         try:\n\
         \x20   while True:\n\
         \x20       c, _ = s.accept()\n\
         \x20       c.settimeout(2)\n\
         \x20       try:\n\
         \x20           while True:\n\
         \x20               b = c.recv(65536)\n\
         \x20               if not b: break\n\
         \x20               total += len(b)\n\
         \x20       except OSError: pass\n\
         \x20       open({report:?}, 'w').write(str(total))\n\
         except OSError: pass\n",
        report = report.display().to_string()
    );
    let mut command = std::process::Command::new("python3");
    command.args(["-c", &script]).uid(65534).gid(65534);
    // SAFETY: only clears close-on-exec on a descriptor this process owns, between fork and exec.
    unsafe {
        command.pre_exec(move || {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
            Ok(())
        });
    }
    let child = command.spawn().unwrap();
    // SAFETY: the child holds its own copy; this process's copy is closed.
    unsafe {
        libc::close(fd);
    }
    child
}

#[test]
fn a_spoofed_server_of_another_user_receives_not_a_byte() {
    if !is_root() {
        eprintln!("skipped: a server of another user needs root (CI runs as root)");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    std::fs::create_dir_all(&paths.dir).unwrap();
    std::fs::write(paths.config_path(), "").unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let report = root.path().join("received");
    std::fs::write(&report, "none").unwrap();
    std::os::unix::fs::chown(&report, Some(65534), Some(65534)).unwrap();
    let socket = paths.dir.join("store.sock");
    let mut server = spoofed_server(&socket, &report);
    std::thread::sleep(Duration::from_millis(500));
    let output = cli(root.path(), "me", &["list"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "the client talked to the spoofed server"
    );
    assert!(
        stderr.contains("runs as user 65534, not you (user 0); nothing was sent to it"),
        "{stderr}"
    );
    let started = Instant::now();
    // The server truncates the report before it writes the count: an empty file is not yet
    // the answer.
    while matches!(
        std::fs::read_to_string(&report).unwrap().as_str(),
        "none" | ""
    ) && started.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(
        std::fs::read_to_string(&report).unwrap(),
        "0",
        "bytes the spoofed server received"
    );
}

#[test]
fn one_process_cannot_take_every_connection_and_idle_ones_are_closed() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    let made = cli(root.path(), "me", &["demo-data", "--count", "5"])
        .env("ROLLSCOPE_SERVER_IDLE_CONNECTION_SECS", "2")
        .output()
        .unwrap();
    stdout(made);
    let socket = paths.dir.join("store.sock");
    let mut held = Vec::new();
    for _ in 0..300 {
        if let Ok(stream) = UnixStream::connect(&socket) {
            held.push(stream);
        }
    }
    let listed = stdout(cli(root.path(), "me", &["list"]).output().unwrap());
    assert!(
        listed.contains("of 5 matching"),
        "another process still gets a connection: {listed}"
    );
    drop(held);
    std::thread::sleep(Duration::from_millis(500));
    let mut idle = UnixStream::connect(&socket).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let started = Instant::now();
    let mut bytes = [0u8; 512];
    let read = std::io::Read::read(&mut idle, &mut bytes);
    assert!(
        matches!(read, Ok(0) | Err(_)),
        "{read:?}: {}",
        String::from_utf8_lossy(&bytes)
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "closed after its idle time"
    );
}
