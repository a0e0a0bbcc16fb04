//! Hostile clients: random and truncated frames, huge lengths, malformed and mistyped
//! requests, unknown ids, a peer of another user. The server answers each with an error (or
//! closes the connection) and keeps serving; nothing stored changes.

use super::common::{binary, connect, demo, session};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rollscope::store::wire::{self, PROTOCOL_VERSION, Reply, Request, WireError};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

fn raw(socket: &Path) -> UnixStream {
    let stream = UnixStream::connect(socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

fn reply(stream: &mut UnixStream) -> Option<Reply> {
    let bytes = wire::read_frame_bytes(stream).ok()?;
    wire::decode(&bytes).ok()
}

fn failure(stream: &mut UnixStream) -> WireError {
    match reply(stream) {
        Some(Reply::Failed(error)) => error,
        other => panic!("expected an error reply, got {other:?}"),
    }
}

fn frame(bytes: &[u8]) -> Vec<u8> {
    let mut framed = (bytes.len() as u32).to_le_bytes().to_vec();
    framed.extend_from_slice(bytes);
    framed
}

#[test]
fn hostile_frames_get_errors_and_the_server_keeps_serving() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    demo(root.path(), 50);
    let store = connect(&paths);
    let pid = store.server_pid().unwrap();
    let before = store.trajectory_count().unwrap();
    let socket = paths.dir.join("store.sock");

    let mut huge = raw(&socket);
    huge.write_all(&u32::MAX.to_le_bytes()).unwrap();
    let error = failure(&mut huge);
    assert!(format!("{error:?}").contains("over the limit"), "{error:?}");

    let mut malformed = raw(&socket);
    malformed.write_all(&frame(b"{not json")).unwrap();
    assert!(matches!(failure(&mut malformed), WireError::Invalid(_)));
    malformed
        .write_all(&frame(br#"{"Get":{"id":"zz","trace":true}}"#))
        .unwrap();
    assert!(matches!(failure(&mut malformed), WireError::Invalid(_)));
    malformed
        .write_all(&frame(br#"{"Resolve":"ffffffffffffffff"}"#))
        .unwrap();
    assert_eq!(
        failure(&mut malformed),
        WireError::NotFound("ffffffffffffffff".into())
    );
    malformed
        .write_all(&frame(br#"{"Resolve":"not hex"}"#))
        .unwrap();
    assert!(matches!(failure(&mut malformed), WireError::Invalid(_)));
    let hello = Request::Hello {
        protocol: PROTOCOL_VERSION,
    };
    wire::write_frame(&mut malformed, &hello).unwrap();
    assert!(
        matches!(reply(&mut malformed), Some(Reply::Hello { .. })),
        "the same connection still answers after errors"
    );

    let mut truncated = raw(&socket);
    truncated.write_all(&100u32.to_le_bytes()).unwrap();
    truncated.write_all(b"{\"Tasks\"").unwrap();
    drop(truncated);

    let mut rng = StdRng::seed_from_u64(17);
    for case in 0..300 {
        let mut stream = raw(&socket);
        let length = rng.random_range(0..4096);
        let mut bytes: Vec<u8> = (0..length).map(|_| rng.random()).collect();
        if case % 3 == 0 && bytes.len() >= 4 {
            let claimed = (bytes.len() as u32 - 4).min(rng.random_range(0..8192));
            bytes[..4].copy_from_slice(&claimed.to_le_bytes());
        }
        let _ = stream.write_all(&bytes);
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
    }

    assert_eq!(store.server_pid(), Some(pid));
    assert_eq!(
        store.trajectory_count().unwrap(),
        before,
        "nothing stored changed"
    );
    let fresh = connect(&paths);
    assert_eq!(
        fresh.server_pid(),
        Some(pid),
        "the same server, never restarted"
    );
}

#[test]
fn a_peer_of_another_user_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: starting a server as another user needs root (CI runs as root)");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let open = |path: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
    };
    open(root.path());
    let program = root.path().join("rollscope");
    std::fs::copy(binary(), &program).unwrap();
    let paths = session(root.path());
    std::fs::create_dir_all(&paths.dir).unwrap();
    // The session is user 65534's own: its server refuses folders of another user.
    std::os::unix::fs::chown(&paths.dir, Some(65534), Some(65534)).unwrap();
    let mut server = {
        use std::os::unix::process::CommandExt;
        std::process::Command::new(&program)
            .arg(rollscope::store::SERVER_SUBCOMMAND)
            .arg(paths.store_dir())
            .args(["--idle-secs", "30"])
            .uid(65534)
            .gid(65534)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let socket = paths.dir.join("store.sock");
    let started = std::time::Instant::now();
    while UnixStream::connect(&socket).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the server for user 65534 never listened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stream = raw(&socket);
    let hello = Request::Hello {
        protocol: PROTOCOL_VERSION,
    };
    let _ = wire::write_frame(&mut stream, &hello);
    let error = failure(&mut stream);
    assert!(
        format!("{error:?}").contains("refused: the client runs as user 0"),
        "{error:?}"
    );
    server.kill().unwrap();
    server.wait().unwrap();
}
