use super::*;
use crate::train::LoraConfig;
use crate::train::schedule::LrSchedule;

#[test]
fn replay_takes_one_table_or_several_and_names_a_typo_in_either() {
    let one = RunConfig::read("[sft]\nreplay = { tasks = \"arith:1\", size = 5 }\n", "c").unwrap();
    let many = "[[sft.replay]]\ntasks = \"arith:1\"\nsize = 5\n[[sft.replay]]\ntasks = \"weather\"\nsize = 2\n";
    let many = RunConfig::read(many, "c").unwrap();
    assert_eq!(one.sft.replay, many.sft.replay[..1]);
    assert_eq!(many.sft.replay[1].tasks, "weather");
    let back = RunConfig::read(&many.to_toml().unwrap(), "config.toml").unwrap();
    assert_eq!(back, many);
    let typo = RunConfig::read("[sft]\nreplay = { tasks = \"arith:1\", sise = 5 }\n", "c");
    let error = typo.unwrap_err().to_string();
    let hint = "unknown key `sise` in [sft.replay]; did you mean `size`?";
    assert_eq!(error, format!("c:2: {hint}"));
    let typo = RunConfig::read("[[sft.replay]]\ntasks = \"arith:1\"\nsise = 5\n", "c");
    let error = typo.unwrap_err().to_string();
    assert!(error.starts_with("c:3: unknown key `sise`"), "{error}");
}

#[test]
fn a_recorded_config_reads_back_with_every_key_checked() {
    let mut config = RunConfig::parse(crate::run::GRPO_PRESET).unwrap();
    config.trainer.lora = Some(LoraConfig {
        rank: 4,
        alpha: 8.0,
        target_modules: vec!["q_proj".into()],
        use_rslora: true,
    });
    config.trainer.schedule = LrSchedule::warmup_then_decay(100);
    config.grpo.overlong_reward = Some(-1.0);
    config.sft.source = SftSource::File("export.jsonl".into());
    let back = RunConfig::read(&config.to_toml().unwrap(), "config.toml").unwrap();
    assert_eq!(back, config);
    let error = RunConfig::read("[trainer.schedule]\nkind = \"constant\"\nsteps = 3\n", "c")
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("c:3: unknown key `steps` in [trainer.schedule]"),
        "{error}"
    );
}
