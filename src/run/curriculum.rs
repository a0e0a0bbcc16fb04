//! Which training tasks each GRPO step draws: a fixed pool walked in a seeded order, or, with
//! the curriculum on, fresh problems at a level that moves so group success stays near the
//! target (tasks at the edge of the model's ability carry the most signal).

use super::config::RunConfig;
use crate::agent::rollout::mix;
use crate::agent::tasks::{TaskSetSpec, arith};
use crate::train::CurriculumState;
use crate::trajectory::Task;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use std::sync::Arc;

/// How far success may stray from the target before the level moves.
const BAND: f64 = 0.2;

/// The task source of a GRPO run.
pub enum TaskDraw {
    /// A fixed pool, shuffled once by the run seed.
    Pool(Vec<Arc<Task>>),
    /// Generated problems at an adaptive level.
    Curriculum {
        /// The generated family and split (its level is replaced).
        spec: TaskSetSpec,
        /// The highest level.
        max_level: u32,
    },
}

impl TaskDraw {
    /// The task source of a config.
    pub fn new(config: &RunConfig) -> anyhow::Result<Self> {
        let spec = config.tasks.train_spec()?;
        if config.grpo.curriculum.enabled {
            let max_level = match &spec {
                TaskSetSpec::Arith { level: None, .. } => arith::MAX_LEVEL,
                TaskSetSpec::Lookup { level: None, .. } => 3,
                other => anyhow::bail!(
                    "grpo.curriculum needs a generated task set without a level (`arith` or \
                     `lookup`), not `{other}`"
                ),
            };
            return Ok(Self::Curriculum { spec, max_level });
        }
        let mut tasks = spec.load(Some(config.tasks.train_size), config.tasks.seed)?;
        anyhow::ensure!(!tasks.is_empty(), "tasks.train `{spec}` has no tasks");
        tasks.shuffle(&mut StdRng::seed_from_u64(config.seed));
        Ok(Self::Pool(tasks.into_iter().map(Arc::new).collect()))
    }

    /// The tasks of step `step` (1-based), `count` of them.
    pub fn tasks(
        &self,
        step: u64,
        count: usize,
        state: CurriculumState,
        config: &RunConfig,
    ) -> anyhow::Result<Vec<Arc<Task>>> {
        match self {
            Self::Pool(pool) => {
                let start = (step - 1) as usize * count;
                Ok((start..start + count)
                    .map(|index| pool[index % pool.len()].clone())
                    .collect())
            }
            Self::Curriculum { spec, .. } => {
                let at_level = match spec {
                    TaskSetSpec::Arith {
                        split, distractors, ..
                    } => TaskSetSpec::Arith {
                        level: Some(state.level),
                        distractors: *distractors,
                        split: *split,
                    },
                    TaskSetSpec::Lookup { split, .. } => TaskSetSpec::Lookup {
                        level: Some(state.level),
                        split: *split,
                    },
                    other => other.clone(),
                };
                let seed = mix(config.tasks.seed ^ config.seed, step).max(1);
                let tasks = at_level.load(Some(count), seed)?;
                Ok(tasks.into_iter().map(Arc::new).collect())
            }
        }
    }

    /// The state after a step whose groups succeeded `success` of the time.
    pub fn next(&self, state: CurriculumState, success: f64, target: f64) -> CurriculumState {
        let Self::Curriculum { max_level, .. } = self else {
            return state;
        };
        let level = if success > target + BAND {
            (state.level + 1).min(*max_level)
        } else if success < target - BAND {
            state.level.saturating_sub(1).max(1)
        } else {
            state.level
        };
        CurriculumState { level }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(curriculum: bool, train: &str) -> RunConfig {
        let mut config = RunConfig::default();
        config.tasks.train = train.into();
        config.tasks.train_size = 30;
        config.grpo.curriculum.enabled = curriculum;
        config
    }

    #[test]
    fn a_pool_is_walked_in_order_and_wraps() {
        let config = config(false, "arith:1");
        let draw = TaskDraw::new(&config).unwrap();
        let state = CurriculumState { level: 1 };
        let first = draw.tasks(1, 16, state, &config).unwrap();
        let second = draw.tasks(2, 16, state, &config).unwrap();
        assert_eq!(
            first[0].id,
            draw.tasks(1, 16, state, &config).unwrap()[0].id
        );
        assert_eq!(
            second[14].id, first[0].id,
            "30 tasks: step 2 wraps after 14"
        );
    }

    #[test]
    fn the_level_follows_success_within_bounds() {
        let config = config(true, "arith");
        let draw = TaskDraw::new(&config).unwrap();
        let mut state = CurriculumState { level: 1 };
        state = draw.next(state, 0.1, 0.5);
        assert_eq!(state.level, 1, "never below 1");
        state = draw.next(state, 0.9, 0.5);
        assert_eq!(state.level, 2);
        state = draw.next(state, 0.55, 0.5);
        assert_eq!(state.level, 2, "inside the band it stays");
        let tasks = draw.tasks(3, 4, state, &config).unwrap();
        assert!(tasks.iter().all(|t| t.difficulty == Some(2)));
        assert!(TaskDraw::new(&self::config(true, "arith:2")).is_err());
    }
}
