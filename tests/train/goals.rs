//! The main job's goals, checked against the main job's own finished SFT runs (a user's
//! SFT run does not count): the calculator SFT (≥ 95% held-out), then the mixed SFT (leaves
//! ≥ 40 points of room); and what of the main job remains after each.

use super::common::{context, session};
use super::runs::SMALL_SFT;
use rollscope::run::{
    CALCULATOR_SFT_GOAL, ROOM_FOR_GRPO, RunConfig, cold_start_goals, grpo_goal, main_job_remaining,
    train_sft,
};
use rollscope::trajectory::MainJobStage;

#[test]
fn goals_read_each_cold_start_stage_from_its_run() {
    let root = tempfile::tempdir().unwrap();
    let paths = session(root.path());
    let context = context(&paths);
    assert!(cold_start_goals(&context).unwrap().is_empty());
    let mut config = RunConfig::parse(SMALL_SFT).unwrap();
    let stages = [
        MainJobStage::CalculatorSft,
        MainJobStage::MixedSft,
        MainJobStage::Grpo,
    ];
    assert_eq!(main_job_remaining(&context.store).unwrap(), stages);
    train_sft(&context, &config, &mut |_| {}).unwrap();
    assert!(
        cold_start_goals(&context).unwrap().is_empty(),
        "a user's own SFT run is not the cold start"
    );
    assert_eq!(main_job_remaining(&context.store).unwrap(), stages);
    config.stage = Some(MainJobStage::CalculatorSft);
    let first = train_sft(&context, &config, &mut |_| {}).unwrap();
    assert_eq!(main_job_remaining(&context.store).unwrap(), stages[1..]);
    config.stage = Some(MainJobStage::MixedSft);
    let second = train_sft(&context, &config, &mut |_| {}).unwrap();
    assert_eq!(main_job_remaining(&context.store).unwrap(), stages[2..]);
    let stored = context.store.get_run(&second.run).unwrap().unwrap();
    assert_eq!(stored.stage, Some(MainJobStage::MixedSft));
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
