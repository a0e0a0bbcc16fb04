//! Live sessions: one server per session and any number of processes on it, real processes
//! throughout (the `rollscope` binary starts the servers), faults, hostile frames.

#[path = "session/common.rs"]
mod common;
#[path = "session/concurrent.rs"]
mod concurrent;
#[path = "support/copy_dir.rs"]
mod copy_dir;
#[path = "session/faults.rs"]
mod faults;
#[path = "session/follow.rs"]
mod follow;
#[path = "session/hostile.rs"]
mod hostile;
#[path = "session/live.rs"]
mod live;
#[path = "session/runs.rs"]
mod runs;
#[path = "session/shared_machine.rs"]
mod shared_machine;
