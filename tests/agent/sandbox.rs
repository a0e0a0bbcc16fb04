//! Hostile programs in the Python sandbox: each ends as a recorded observation within its
//! limit, and nothing escapes (no file appears, no connection is made, no process is left).

use super::common::{python, sandboxed};
use rollscope::agent::tools::{
    OutputLimits, ProcessEnd, SandboxLimits, SandboxRun, ToolFailure, ToolOutput,
};
use std::net::TcpListener;
use std::time::Duration;

/// Tight limits so the hostile tests end quickly.
fn limits() -> SandboxLimits {
    SandboxLimits {
        wall: Duration::from_secs(3),
        cpu_seconds: 1,
        processes: 16,
        output: OutputLimits {
            keep_bytes: 4096,
            kill_after_bytes: 256 * 1024,
        },
        ..SandboxLimits::default()
    }
}

/// Runs `code` with the `python3` on `PATH` (see `common::sandboxed`).
fn run(code: &str, limits: &SandboxLimits) -> (SandboxRun, ToolOutput) {
    sandboxed(&python(), code, limits)
}

#[test]
fn a_plain_program_prints_its_result() {
    let (run, observation) = run("print(sum(range(101)))", &limits());
    assert_eq!(run.process.end, ProcessEnd::Exited(0));
    assert_eq!(observation, ToolOutput::ok("5050\n"));
}

#[test]
fn an_endless_loop_is_stopped_by_the_cpu_limit() {
    let generous_wall = SandboxLimits {
        wall: Duration::from_secs(120),
        ..limits()
    };
    let (run, observation) = run("while True:\n    pass\n", &generous_wall);
    assert_eq!(run.process.end, ProcessEnd::Signaled(libc::SIGXCPU));
    assert_eq!(observation.failure, Some(ToolFailure::Error));
    assert!(
        observation.text.contains("CPU time limit of 1 s exceeded"),
        "{}",
        observation.text
    );
}

#[test]
fn a_sleeping_program_is_killed_at_the_wall_clock_limit() {
    let code = "import time\nprint('going to sleep', flush=True)\ntime.sleep(600)\n";
    let (run, observation) = run(code, &limits());
    assert_eq!(run.process.end, ProcessEnd::TimedOut);
    assert_eq!(observation.failure, Some(ToolFailure::Timeout));
    assert!(
        observation.text.starts_with("going to sleep"),
        "{}",
        observation.text
    );
    let limit = limits().wall.as_millis();
    assert!(
        observation
            .text
            .contains(&format!("time limit of {limit} ms exceeded: killed after")),
        "{}",
        observation.text
    );
    let reported: f64 = observation
        .text
        .split("killed after ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        reported >= limits().wall.as_secs_f64(),
        "the wall time from the call's start, not less than the limit: {reported}"
    );
}

#[test]
fn a_fork_bomb_hits_the_process_limit_and_leaves_nothing_behind() {
    let code = "import os, time\n\
                refused = 0\n\
                for _ in range(200):\n\
                \x20   try:\n\
                \x20       os.fork()\n\
                \x20   except OSError as error:\n\
                \x20       refused += 1\n\
                if refused:\n\
                \x20   print('fork refused', flush=True)\n\
                time.sleep(600)\n";
    let (run, observation) = run(code, &limits());
    assert_eq!(run.process.end, ProcessEnd::TimedOut);
    assert_eq!(observation.failure, Some(ToolFailure::Timeout));
    assert!(
        observation.text.contains("fork refused"),
        "{}",
        observation.text
    );
    assert!(
        run.pid_namespace.is_some(),
        "run as root, the namespace is visible"
    );
}

#[test]
fn allocating_ten_gigabytes_fails_inside_the_program() {
    let (run, observation) = run("x = bytearray(10 * 1024**3)\nprint(len(x))\n", &limits());
    assert_eq!(run.process.end, ProcessEnd::Exited(1));
    assert_eq!(observation.failure, Some(ToolFailure::Error));
    assert!(
        observation.text.contains("MemoryError"),
        "{}",
        observation.text
    );
}

#[test]
fn printing_a_hundred_megabytes_is_cut_off() {
    let code = "import sys\nfor _ in range(100):\n    sys.stdout.write('x' * 1_000_000)\n";
    let (run, observation) = run(code, &limits());
    assert_eq!(run.process.end, ProcessEnd::OutputLimit);
    assert!(run.process.stdout.total < 100_000_000);
    assert_eq!(run.process.stdout.kept.len(), 4096);
    assert_eq!(observation.failure, Some(ToolFailure::Error));
    assert!(
        observation.text.contains("output limit exceeded"),
        "{}",
        observation.text
    );
}

#[test]
fn sockets_reach_nothing_not_even_the_hosts_loopback() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let code = format!(
        "import socket\n\
         for host, port in [('127.0.0.1', {port}), ('1.1.1.1', 53), ('8.8.8.8', 443)]:\n\
         \x20   try:\n\
         \x20       socket.create_connection((host, port), timeout=1)\n\
         \x20       print('connected', host)\n\
         \x20   except OSError as error:\n\
         \x20       print('no connection to', host, '-', error)\n"
    );
    let (run, observation) = run(&code, &limits());
    assert_eq!(run.process.end, ProcessEnd::Exited(0));
    assert!(
        !observation.text.contains("connected"),
        "{}",
        observation.text
    );
    assert_eq!(observation.text.matches("no connection to").count(), 3);
    let accepted = listener.accept();
    assert!(accepted.is_err_and(|error| error.kind() == std::io::ErrorKind::WouldBlock));
}

#[test]
fn etc_passwd_and_the_ground_truth_are_out_of_reach() {
    let session = tempfile::tempdir().unwrap();
    let truth = session.path().join("ground_truth.txt");
    std::fs::write(&truth, "the answer is 7731").unwrap();
    let workdir = std::env::current_dir().unwrap();
    let code = format!(
        "import os\n\
         for path in ['/etc/passwd', {truth:?}, {session:?}, {workdir:?}, '/root/.cargo', '/proc/1/environ']:\n\
         \x20   try:\n\
         \x20       print(path, 'READ', os.listdir(path) if os.path.isdir(path) else open(path).read())\n\
         \x20   except OSError as error:\n\
         \x20       print(path, 'refused:', type(error).__name__)\n\
         print('visible at /:', sorted(os.listdir('/')))\n",
        truth = truth.display().to_string(),
        session = session.path().display().to_string(),
        workdir = workdir.display().to_string(),
    );
    let (_, observation) = run(&code, &limits());
    assert!(!observation.text.contains("7731"), "{}", observation.text);
    assert!(
        !observation.text.contains("root:x:0"),
        "{}",
        observation.text
    );
    assert!(!observation.text.contains("READ"), "{}", observation.text);
    assert_eq!(
        observation
            .text
            .matches("refused: FileNotFoundError")
            .count(),
        6,
        "{}",
        observation.text
    );
    assert!(
        observation
            .text
            .contains("visible at /: ['bin', 'dev', 'etc', 'lib',"),
        "{}",
        observation.text
    );
}

#[test]
fn writes_outside_the_scratch_folder_never_appear() {
    let outside = tempfile::tempdir().unwrap();
    let escaped = outside.path().join("escaped.txt");
    let marker = format!("/tmp/rollscope-escape-{}", std::process::id());
    let code = format!(
        "for path in [{escaped:?}, {marker:?}, '/escape.txt', '/usr/escape.txt', '/dev/escape']:\n\
         \x20   try:\n\
         \x20       open(path, 'w').write('out')\n\
         \x20       print('WROTE', path)\n\
         \x20   except OSError as error:\n\
         \x20       print(path, 'refused:', type(error).__name__)\n\
         open('/sandbox/inside.txt', 'w').write('in')\n\
         print('inside:', open('/sandbox/inside.txt').read())\n",
        escaped = escaped.display().to_string(),
    );
    let (_, observation) = run(&code, &limits());
    assert!(!observation.text.contains("WROTE"), "{}", observation.text);
    assert!(
        observation.text.contains("inside: in"),
        "{}",
        observation.text
    );
    assert!(!escaped.exists());
    assert!(!std::path::Path::new(&marker).exists());
    assert!(!std::path::Path::new("/escape.txt").exists());
    assert!(!std::path::Path::new("/usr/escape.txt").exists());
}

#[test]
fn the_program_runs_unprivileged_in_its_own_pid_namespace() {
    let code =
        "import os\nprint(os.getpid(), os.getppid(), os.getuid() != 0, os.environ.get('HOME'))\n";
    let (_, observation) = run(code, &limits());
    assert_eq!(observation.text, "2 1 True /sandbox\n");
}

#[test]
fn without_namespaces_nothing_runs() {
    let binary = env!("CARGO_BIN_EXE_rollscope");
    let script = format!(
        "echo 0 > /proc/sys/user/max_user_namespaces && exec {binary} --sessions-dir /nonexistent tool python '{{\"code\": \"print(6*7)\"}}'"
    );
    let output = std::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "sh", "-c", &script])
        .output()
        .expect("the unshare command");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success());
    assert!(!stdout.contains("42"), "{stdout}");
    assert!(stdout.contains("cannot be set up"), "{stdout}");
    assert!(stdout.contains("never run without them"), "{stdout}");
}

/// Pids of the processes descending from `parent`, from `/proc`.
fn descendants(parent: u32) -> Vec<u32> {
    let mut parents = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        if let Some(ppid) = rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok())
        {
            parents.insert(pid, ppid);
        }
    }
    let mut found = vec![parent];
    let mut index = 0;
    while index < found.len() {
        let of = found[index];
        found.extend(
            parents
                .iter()
                .filter(|(_, p)| **p == of)
                .map(|(pid, _)| *pid),
        );
        index += 1;
    }
    found.remove(0);
    found
}

#[test]
fn the_sandbox_processes_that_never_exec_show_none_of_the_callers_environment() {
    let own: Vec<String> = std::env::vars()
        .filter(|(key, _)| {
            ![
                "PATH",
                "HOME",
                "TMPDIR",
                "LANG",
                "OPENBLAS_NUM_THREADS",
                "OMP_NUM_THREADS",
            ]
            .contains(&key.as_str())
        })
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    assert!(
        !own.is_empty(),
        "the test process has an environment to leak"
    );
    let install = python();
    let running = std::thread::spawn(move || {
        super::common::runtime().block_on(rollscope::agent::tools::run_sandboxed(
            &install,
            "import time\ntime.sleep(2)\n",
            &limits(),
            super::common::in_seconds(30),
        ))
    });
    // The keepers and inits are this test binary forked, never exec'd (the programs exec
    // Python; other processes tests start exec other programs).
    let own_exe = std::env::current_exe().unwrap();
    let mut read = 0;
    let started = std::time::Instant::now();
    while started.elapsed() < Duration::from_millis(1800) {
        for pid in descendants(std::process::id()) {
            if std::fs::read_link(format!("/proc/{pid}/exe")).ok().as_ref() != Some(&own_exe) {
                continue;
            }
            let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
                continue;
            };
            read += 1;
            if let Some(entry) = leaked(&environ, &own) {
                // Another test's child between its fork and its exec also runs this binary
                // with our environment, for a moment: a sandbox process still shows it later.
                std::thread::sleep(Duration::from_millis(300));
                let still =
                    std::fs::read_link(format!("/proc/{pid}/exe")).ok() == Some(own_exe.clone());
                let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                assert!(
                    !still || leaked(&environ, &own).is_none(),
                    "process {pid} shows {entry}"
                );
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let run = running.join().unwrap().unwrap();
    assert_eq!(run.process.end, ProcessEnd::Exited(0));
    assert!(read > 0, "the sandbox's keeper and init were seen");
}

/// The first entry of a process's environment (`/proc/PID/environ`) that is one of `own`.
fn leaked(environ: &[u8], own: &[String]) -> Option<String> {
    environ
        .split(|&byte| byte == 0)
        .filter(|entry| !entry.is_empty())
        .map(|entry| String::from_utf8_lossy(entry).into_owned())
        .find(|entry| own.contains(entry))
}
