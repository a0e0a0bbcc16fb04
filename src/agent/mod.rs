//! The agent side of RL: tools the policy calls, the tool-call protocol, task sets, outcome
//! rewards (ORM) and rule-based process scores (PRM). The rollout loop and the policy
//! backends build on these.

pub mod answer;
pub mod arith;
pub mod claims;
pub mod prm_rule;
pub mod protocol;
pub mod reward;
pub mod rollout;
pub mod schema;
pub mod serve;
pub mod tasks;
pub mod tools;
pub mod verifier;
