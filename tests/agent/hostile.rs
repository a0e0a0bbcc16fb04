//! The hostile probes, through the `python` tool as the rollout loop calls it, under the
//! default limits: every one must be blocked. CI runs this suite as root and again as an
//! unprivileged user (`.ci/run`); it prints a `probe | blocked?` table to its log. Where the
//! machine refuses the sandbox (no user namespaces for that user), the clear refusal counts
//! as blocked: nothing ran.

use super::common::{python, runtime};
use rollscope::agent::tools::{SandboxLimits, ToolObservation, ToolRegistry, run_sandboxed};
use serde_json::{Map, Value};
use std::ffi::CString;
use std::io::Write;
use std::net::TcpListener;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a probe's result is judged: blocked or not, from the observation and the host.
type Verdict = Box<dyn Fn(&str) -> bool + Send + Sync>;

/// One hostile program and how to tell it was blocked.
struct Probe {
    name: &'static str,
    code: String,
    blocked: Verdict,
}

fn probe(name: &'static str, code: impl Into<String>, blocked: Verdict) -> Probe {
    Probe {
        name,
        code: code.into(),
        blocked,
    }
}

/// What the host side holds for the probes: a secret file, a file behind an inherited
/// descriptor, a loopback listener, and the paths escapes would write.
struct Host {
    _folder: tempfile::TempDir,
    secret: PathBuf,
    appended: PathBuf,
    inherited: libc::c_int,
    listener: Arc<TcpListener>,
    escapes: Vec<PathBuf>,
}

impl Host {
    fn new() -> Self {
        let folder = tempfile::tempdir().unwrap();
        let secret = folder
            .path()
            .join(format!("rollscope-secret-{}", std::process::id()));
        std::fs::write(&secret, "the answer is 7731").unwrap();
        let appended = folder.path().join("appended.txt");
        std::fs::write(&appended, "").unwrap();
        let path = CString::new(appended.as_os_str().as_bytes()).unwrap();
        // SAFETY: open on a valid C string, without O_CLOEXEC on purpose; closed on drop.
        let inherited = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_APPEND) };
        assert!(inherited >= 0, "{}", std::io::Error::last_os_error());
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
        let name = format!("rollscope-escape-{}", std::process::id());
        let escapes = vec![home.join(&name), Path::new("/tmp").join(&name)];
        Self {
            _folder: folder,
            secret,
            appended,
            inherited,
            listener: Arc::new(listener),
            escapes,
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        // SAFETY: closes the descriptor this value opened.
        unsafe {
            libc::close(self.inherited);
        }
    }
}

/// A number printed after `label ` in the output.
fn count(text: &str, label: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(label)?.trim().parse().ok())
}

/// Calls `CALL` (x86_64 number and arguments) and prints `allowed` or `refused`.
fn syscall(number: u32, arguments: &str) -> String {
    format!(
        "import ctypes, os\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         libc.syscall.restype = ctypes.c_long\n\
         pid = os.fork()\n\
         if pid == 0:\n\
         \x20   result = libc.syscall(ctypes.c_long({number}), *[ctypes.c_long(a) if isinstance(a, int) else a for a in ({arguments},)])\n\
         \x20   os._exit(0 if result >= 0 else 1)\n\
         print('allowed' if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0 else 'refused')\n"
    )
}

fn probes(host: &Host, limits: &SandboxLimits, roots: &[PathBuf]) -> Vec<Probe> {
    let processes = limits.processes;
    let inodes = rollscope::agent::tools::scratch_inodes(limits.scratch_bytes);
    let secret = host.secret.display().to_string();
    let secret_name = host
        .secret
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let appended = host.appended.clone();
    let listener = host.listener.clone();
    let escapes = host.escapes.clone();
    let mut tops: Vec<String> = ["bin", "dev", "etc", "lib", "lib32", "lib64", "sandbox"]
        .into_iter()
        .chain(["sbin", "usr"])
        .map(String::from)
        .collect();
    tops.extend(roots.iter().filter_map(|root| {
        Some(
            root.components()
                .nth(1)?
                .as_os_str()
                .to_string_lossy()
                .into_owned(),
        )
    }));
    let escape_list: Vec<String> = escapes.iter().map(|p| p.display().to_string()).collect();
    let port = listener.local_addr().unwrap().port();
    vec![
        probe(
            "fork bomb",
            super::sandbox_bounds::FORK_BOMB,
            Box::new(move |text| count(text, "forked ").is_some_and(|n| n < processes)),
        ),
        probe(
            "10 GB allocation",
            "x = bytearray(10 * 1024**3)\nprint('allocated', len(x))\n",
            Box::new(|text| text.contains("MemoryError") && !text.contains("allocated")),
        ),
        probe(
            "memory across processes",
            super::sandbox_bounds::HOLD_MEMORY,
            Box::new(|text| count(text, "holding ").is_some_and(|n| n * (450 << 20) <= 2 << 30)),
        ),
        probe(
            "100 MB print",
            "import sys\nfor _ in range(100):\n    sys.stdout.write('x' * 1_000_000)\n",
            Box::new(|text| text.contains("output limit exceeded")),
        ),
        probe(
            "sockets",
            format!(
                "import socket\n\
                 for host, port in [('127.0.0.1', {port}), ('1.1.1.1', 53)]:\n\
                 \x20   try:\n\
                 \x20       socket.create_connection((host, port), timeout=1)\n\
                 \x20       print('connected', host)\n\
                 \x20   except OSError as error:\n\
                 \x20       print('refused', host)\n"
            ),
            Box::new(move |text| {
                text.matches("refused").count() == 2
                    && listener
                        .accept()
                        .is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock)
            }),
        ),
        probe(
            "/etc",
            "import os\n\
             for path in ['/etc/passwd', '/etc/shadow', '/etc/hostname']:\n\
             \x20   try:\n\
             \x20       print('READ', open(path).read())\n\
             \x20   except OSError:\n\
             \x20       print('refused', path)\n\
             print('etc holds', sorted(os.listdir('/etc')))\n",
            Box::new(|text| !text.contains("READ") && text.contains("etc holds ['ld.so.cache']")),
        ),
        probe(
            "the parent's /proc",
            format!(
                "for path in ['/proc/{pid}/environ', '/proc/1/environ', '/proc/self/mounts']:\n\
                 \x20   try:\n\
                 \x20       print('READ', open(path).read()[:40])\n\
                 \x20   except OSError:\n\
                 \x20       print('refused', path)\n",
                pid = std::process::id()
            ),
            Box::new(|text| !text.contains("READ") && text.matches("refused").count() == 3),
        ),
        probe(
            "$HOME and /tmp writes",
            format!(
                "for path in {escape_list:?}:\n\
                 \x20   try:\n\
                 \x20       open(path, 'w').write('out')\n\
                 \x20       print('WROTE', path)\n\
                 \x20   except OSError:\n\
                 \x20       print('refused', path)\n"
            ),
            Box::new(move |text| !text.contains("WROTE") && escapes.iter().all(|p| !p.exists())),
        ),
        probe(
            "symlinks",
            format!(
                "import os\n\
                 for index, target in enumerate([{secret:?}, '/proc/1/root/etc/passwd', '../../etc/passwd']):\n\
                 \x20   link = f'/sandbox/link{{index}}'\n\
                 \x20   os.symlink(target, link)\n\
                 \x20   try:\n\
                 \x20       print('READ', open(link).read())\n\
                 \x20   except OSError:\n\
                 \x20       print('refused', target)\n"
            ),
            Box::new(|text| !text.contains("READ") && text.matches("refused").count() == 3),
        ),
        probe(
            "rlimit raises",
            "import resource\n\
             for name in ['RLIMIT_AS', 'RLIMIT_CPU', 'RLIMIT_FSIZE', 'RLIMIT_NOFILE', 'RLIMIT_NPROC']:\n\
             \x20   limit = getattr(resource, name)\n\
             \x20   soft, hard = resource.getrlimit(limit)\n\
             \x20   if hard == resource.RLIM_INFINITY:\n\
             \x20       print('unbounded', name)\n\
             \x20       continue\n\
             \x20   try:\n\
             \x20       resource.setrlimit(limit, (hard + 1, hard + 1))\n\
             \x20       print('raised', name)\n\
             \x20   except (OSError, ValueError):\n\
             \x20       print('refused', name)\n",
            Box::new(|text| text.matches("refused").count() == 5),
        ),
        probe(
            "a walk of /",
            format!(
                "import os\n\
                 found, writable = [], []\n\
                 for folder, folders, files in os.walk('/'):\n\
                 \x20   if os.access(folder, os.W_OK) and not folder.startswith('/sandbox'):\n\
                 \x20       writable.append(folder)\n\
                 \x20   found += [os.path.join(folder, name) for name in files if name == {secret_name:?}]\n\
                 print('top', sorted(os.listdir('/')))\n\
                 print('secret', found)\n\
                 print('writable', writable)\n"
            ),
            Box::new(move |text| {
                let top = text.lines().find_map(|line| line.strip_prefix("top "));
                let visible_only_expected = top.is_some_and(|top| {
                    top.trim_matches(['[', ']'])
                        .split(", ")
                        .all(|name| tops.iter().any(|t| name.trim_matches('\'') == t))
                });
                visible_only_expected && text.contains("secret []") && text.contains("writable []")
            }),
        ),
        probe(
            "inherited descriptors",
            format!(
                "import os\n\
                 try:\n\
                 \x20   os.write({fd}, b'escaped')\n\
                 \x20   print('WROTE')\n\
                 except OSError:\n\
                 \x20   print('refused')\n",
                fd = host.inherited
            ),
            Box::new(move |text| {
                text.contains("refused") && std::fs::read(&appended).is_ok_and(|b| b.is_empty())
            }),
        ),
        probe(
            "io_uring",
            syscall(425, "8, ctypes.create_string_buffer(120)"),
            Box::new(|text| text == "refused\n"),
        ),
        probe(
            "kernel keys",
            syscall(248, "b'user', b'rollscope', b'secret', 6, -2"),
            Box::new(|text| text == "refused\n"),
        ),
        probe(
            "nested user namespace",
            syscall(272, "0x10000000"),
            Box::new(|text| text == "refused\n"),
        ),
        probe(
            "a million empty files",
            "import os\n\
             made = 0\n\
             try:\n\
             \x20   for made in range(1_000_000):\n\
             \x20       open(f'f{made}', 'w').close()\n\
             \x20   made = 1_000_000\n\
             except OSError as error:\n\
             \x20   print('stopped', error.errno)\n\
             print('made', made)\n",
            Box::new(move |text| {
                text.contains("stopped 28") && count(text, "made ").is_some_and(|n| n <= inodes)
            }),
        ),
    ]
}

/// Whether the sandbox refused to run at all, with its clear error.
fn refused_to_run(observation: &ToolObservation) -> bool {
    observation.failure.is_some()
        && observation.text.contains("cannot be set up here")
        && observation.text.contains("never run without them")
}

#[test]
fn every_hostile_probe_is_blocked() {
    let limits = SandboxLimits::default();
    let host = Host::new();
    let install = python();
    let roots = install.roots.clone();
    let registry = Arc::new(ToolRegistry::standard(limits.clone()).unwrap());
    let probes = probes(&host, &limits, &roots);
    let runtime = runtime();
    let observations: Vec<ToolObservation> = runtime.block_on(async {
        let calls: Vec<_> = probes
            .iter()
            .map(|probe| {
                let registry = registry.clone();
                let mut arguments = Map::new();
                arguments.insert("code".into(), Value::String(probe.code.clone()));
                tokio::spawn(async move {
                    let deadline = Instant::now() + Duration::from_secs(60);
                    registry.call("python", arguments, deadline).await
                })
            })
            .collect();
        let mut observations = Vec::new();
        for call in calls {
            observations.push(call.await.unwrap());
        }
        observations
    });
    let verdicts: Vec<bool> = probes
        .iter()
        .zip(&observations)
        .map(|(probe, observation)| {
            refused_to_run(observation) || (probe.blocked)(&observation.text)
        })
        .collect();
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let route = runtime
        .block_on(run_sandboxed(
            &install,
            "pass",
            &limits,
            Instant::now() + Duration::from_secs(30),
        ))
        .map_or_else(
            |error| format!("the sandbox refuses here: {error}"),
            |run| format!("limits by {}", run.route),
        );
    let mut table = format!("hostile probes as uid {uid} ({route})\nprobe | blocked?\n");
    for ((probe, observation), blocked) in probes.iter().zip(&observations).zip(&verdicts) {
        let answer = match (blocked, refused_to_run(observation)) {
            (true, true) => "yes (the sandbox refused to run)",
            (true, false) => "yes",
            (false, _) => "NO",
        };
        table.push_str(&format!("{} | {answer}\n", probe.name));
    }
    // Written past the test harness's capture, so CI's log shows the table.
    let _ = std::io::stderr().write_all(table.as_bytes());
    let escaped: Vec<String> = probes
        .iter()
        .zip(&observations)
        .zip(&verdicts)
        .filter(|(_, blocked)| !**blocked)
        .map(|((probe, observation), _)| format!("{}:\n{}", probe.name, observation.text))
        .collect();
    assert!(escaped.is_empty(), "{table}\n{}", escaped.join("\n\n"));
}
