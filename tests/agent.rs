//! Integration tests of the agent side: tools, sandbox, protocol, answers, tasks, rewards and
//! process scores.

mod agent {
    mod calculator;
    mod common;
    mod external;
    mod hostile;
    mod prm;
    mod protocol;
    mod reward;
    mod sandbox;
    mod sandbox_bounds;
    mod search;
    mod syscall_filter;
    mod tasks;
    mod tool_cli;
}
