//! The main job's goals, checked against a session's finished SFT runs: the first is the
//! calculator SFT (≥ 95% held-out), the second the mixed SFT (leaves ≥ 40 points of room).

use super::common::{context, session};
use super::runs::SMALL_SFT;
use rollscope::run::{
    CALCULATOR_SFT_GOAL, ROOM_FOR_GRPO, RunConfig, cold_start_goals, grpo_goal, train_sft,
};

#[test]
fn goals_read_each_cold_start_stage_from_its_run() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    let context = context(&paths);
    assert!(cold_start_goals(&context).unwrap().is_empty());
    let config = RunConfig::parse(SMALL_SFT).unwrap();
    let first = train_sft(&context, &config, &mut |_| {}).unwrap();
    let second = train_sft(&context, &config, &mut |_| {}).unwrap();
    let checks = cold_start_goals(&context).unwrap();
    let measured = |outcome: &rollscope::run::RunOutcome| outcome.eval.as_ref().unwrap().accuracy;
    assert_eq!(checks.len(), 2);
    assert_eq!(checks[0].stage, "calculator SFT");
    assert_eq!(checks[0].accuracy, measured(&first));
    assert_eq!(checks[0].met, measured(&first) >= CALCULATOR_SFT_GOAL);
    assert_eq!(checks[1].stage, "mixed SFT");
    assert_eq!(checks[1].accuracy, measured(&second));
    assert_eq!(checks[1].met, measured(&second) <= 1.0 - ROOM_FOR_GRPO);
}

#[test]
fn grpo_must_add_ten_points() {
    assert!(grpo_goal(0.10, 0.20).met);
    assert!(!grpo_goal(0.10, 0.19).met);
    assert!(grpo_goal(0.06, 0.985).goal.contains("16%"));
}
