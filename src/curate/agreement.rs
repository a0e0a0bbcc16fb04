//! Agreement between annotators: per error kind, Cohen's κ between two authors and
//! Krippendorff's α (nominal) across any number, over the steps of the trajectories each
//! author reviewed (labelled at least once); the rules can stand as one more author (their
//! suggestions made afresh). Also the steps where authors differ, for the `:disagree` queue.

use super::TaskIndex;
use super::suggest::suggest;
use crate::store::{Filter, Store, StoreResult};
use crate::trajectory::{ErrorKind, LabelStatus, Task, Trajectory, TrajectoryId};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The author name the rules' fresh suggestions are compared under.
pub const RULES_AUTHOR: &str = "rules";
/// The author name of confirmed labels that carry none.
pub const UNKNOWN_AUTHOR: &str = "(no author)";

/// Cohen's κ of two raters' binary ratings: (p_o − p_e) / (1 − p_e); `None` with no ratings
/// or when chance agreement is already perfect (both rated every unit the same way).
pub fn cohen_kappa(pairs: &[(bool, bool)]) -> Option<f64> {
    let n = pairs.len() as f64;
    if pairs.is_empty() {
        return None;
    }
    let agree = pairs.iter().filter(|(a, b)| a == b).count() as f64 / n;
    let first = pairs.iter().filter(|(a, _)| *a).count() as f64 / n;
    let second = pairs.iter().filter(|(_, b)| *b).count() as f64 / n;
    let chance = first * second + (1.0 - first) * (1.0 - second);
    (chance < 1.0).then(|| (agree - chance) / (1.0 - chance))
}

/// Krippendorff's α for nominal values: each unit holds the values its raters gave (units
/// with fewer than two are not pairable and are skipped); `None` when fewer than two values
/// are pairable or all pairable values are the same.
pub fn krippendorff_alpha(units: &[Vec<u32>]) -> Option<f64> {
    let mut coincidences: BTreeMap<(u32, u32), f64> = BTreeMap::new();
    for values in units.iter().filter(|values| values.len() >= 2) {
        let weight = 1.0 / (values.len() - 1) as f64;
        for (i, &c) in values.iter().enumerate() {
            for (j, &k) in values.iter().enumerate() {
                if i != j {
                    *coincidences.entry((c, k)).or_default() += weight;
                }
            }
        }
    }
    let mut marginals: BTreeMap<u32, f64> = BTreeMap::new();
    for (&(c, _), &count) in &coincidences {
        *marginals.entry(c).or_default() += count;
    }
    let n: f64 = marginals.values().sum();
    let observed: f64 = coincidences
        .iter()
        .filter(|((c, k), _)| c != k)
        .map(|(_, count)| count)
        .sum();
    let expected: f64 = marginals
        .iter()
        .flat_map(|(c, nc)| {
            marginals
                .iter()
                .filter(move |(k, _)| *k != c)
                .map(move |(_, nk)| nc * nk)
        })
        .sum();
    (n >= 2.0 && expected > 0.0).then(|| 1.0 - (n - 1.0) * observed / expected)
}

/// Who labelled which kinds on which step: per trajectory step, per author, a bit set of
/// kinds (bit = `ErrorKind::index`); a step of a trajectory an author reviewed without
/// labelling it holds 0.
#[derive(Clone, Debug, Default)]
pub struct Ratings {
    steps: BTreeMap<(TrajectoryId, u32), BTreeMap<String, u16>>,
}

impl Ratings {
    /// The confirmed labels of `trajectories` by author, and with `rules` the rules' fresh
    /// suggestions as author `rules` on every trajectory a person reviewed.
    pub fn of<'a>(
        trajectories: impl IntoIterator<Item = (&'a Trajectory, Option<&'a Task>)>,
        rules: bool,
    ) -> Self {
        let mut ratings = Self::default();
        for (trajectory, task) in trajectories {
            let mut by_author: BTreeMap<String, Vec<(u32, ErrorKind)>> = BTreeMap::new();
            for label in trajectory
                .labels
                .iter()
                .filter(|l| l.status == LabelStatus::Confirmed)
            {
                let author = label
                    .author
                    .clone()
                    .unwrap_or_else(|| UNKNOWN_AUTHOR.into());
                by_author
                    .entry(author)
                    .or_default()
                    .push((label.step, label.kind));
            }
            if by_author.is_empty() {
                continue;
            }
            if rules {
                let found = suggest(trajectory, task, 0);
                by_author.insert(
                    RULES_AUTHOR.into(),
                    found.iter().map(|label| (label.step, label.kind)).collect(),
                );
            }
            let steps = trajectory.steps().len().max(1) as u32;
            for (author, labels) in by_author {
                for step in 0..steps {
                    let bits = labels
                        .iter()
                        .filter(|(at, _)| *at == step)
                        .fold(0u16, |bits, (_, kind)| bits | 1 << kind.index());
                    ratings
                        .steps
                        .entry((trajectory.id, step))
                        .or_default()
                        .insert(author.clone(), bits);
                }
            }
        }
        ratings
    }

    /// Every author, rules included when asked for.
    pub fn authors(&self) -> BTreeSet<String> {
        self.steps
            .values()
            .flat_map(|by| by.keys().cloned())
            .collect()
    }

    /// Steps whose reviewers gave different kinds, with each reviewer's kinds.
    pub fn disagreements(&self) -> Vec<Disagreement> {
        self.steps
            .iter()
            .filter(|(_, by)| by.len() >= 2 && by.values().collect::<BTreeSet<_>>().len() > 1)
            .map(|(&(trajectory, step), by)| Disagreement {
                trajectory,
                step,
                kinds: by
                    .iter()
                    .map(|(author, &bits)| (author.clone(), kinds_of(bits)))
                    .collect(),
            })
            .collect()
    }

    /// The figures of each kind, and of any error at all, among `authors` (all when empty).
    pub fn report(&self, authors: &[String]) -> AgreementReport {
        let chosen: BTreeSet<String> = if authors.is_empty() {
            self.authors()
        } else {
            authors.iter().cloned().collect()
        };
        let units: Vec<Vec<(&String, u16)>> = self
            .steps
            .values()
            .map(|by| {
                by.iter()
                    .filter(|(a, _)| chosen.contains(*a))
                    .map(|(a, &b)| (a, b))
                    .collect::<Vec<_>>()
            })
            .filter(|values: &Vec<_>| values.len() >= 2)
            .collect();
        let pair: Option<(&String, &String)> = match chosen.iter().collect::<Vec<_>>()[..] {
            [a, b] => Some((a, b)),
            _ => None,
        };
        let marked = units
            .iter()
            .flatten()
            .fold(0u16, |bits, (_, marks)| bits | marks);
        let mut rows: Vec<KindAgreement> = ErrorKind::EVERY
            .iter()
            .filter(|kind| kind.is_builtin() || marked & (1 << kind.index()) != 0)
            .map(|&kind| {
                KindAgreement::of(kind.as_str(), &units, pair, |bits| {
                    bits & (1 << kind.index()) != 0
                })
            })
            .collect();
        rows.push(KindAgreement::of("any error", &units, pair, |bits| {
            bits != 0
        }));
        AgreementReport {
            authors: chosen.into_iter().collect(),
            steps: units.len(),
            trajectories: self
                .steps
                .iter()
                .filter(|(_, by)| {
                    by.keys()
                        .filter(|a| authors.is_empty() || authors.contains(a))
                        .count()
                        >= 2
                })
                .map(|((id, _), _)| *id)
                .collect::<BTreeSet<_>>()
                .len(),
            kinds: rows,
        }
    }
}

/// The ratings of the trajectories `filter` selects that carry a confirmed label, read from
/// the store (with the rules as an author when `rules`).
pub fn load_ratings(store: &Store, filter: &Filter, rules: bool) -> StoreResult<Ratings> {
    let tasks = TaskIndex::load(store)?;
    let mut labelled = Vec::new();
    for id in store.ids(filter)? {
        if let Some(trajectory) = store.get_without_trace(id)?
            && trajectory
                .labels
                .iter()
                .any(|label| label.status == LabelStatus::Confirmed)
        {
            labelled.push(trajectory);
        }
    }
    Ok(Ratings::of(
        labelled
            .iter()
            .map(|trajectory| (trajectory, tasks.of(trajectory))),
        rules,
    ))
}

fn kinds_of(bits: u16) -> Vec<ErrorKind> {
    ErrorKind::EVERY
        .into_iter()
        .filter(|kind| bits & (1 << kind.index()) != 0)
        .collect()
}

/// One step where reviewers differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Disagreement {
    /// The trajectory.
    pub trajectory: TrajectoryId,
    /// The step, 0-based.
    pub step: u32,
    /// Each reviewer's kinds there.
    pub kinds: BTreeMap<String, Vec<ErrorKind>>,
}

/// Agreement among a set of authors.
#[derive(Clone, Debug, Serialize)]
pub struct AgreementReport {
    /// The authors compared.
    pub authors: Vec<String>,
    /// Trajectories at least two of them reviewed.
    pub trajectories: usize,
    /// Their steps.
    pub steps: usize,
    /// Per kind, then "any error".
    pub kinds: Vec<KindAgreement>,
}

/// Agreement on one kind.
#[derive(Clone, Debug, Serialize)]
pub struct KindAgreement {
    /// The kind, or "any error".
    pub kind: String,
    /// Ratings that mark it, per author.
    pub marked: BTreeMap<String, usize>,
    /// Cohen's κ, for two authors.
    pub kappa: Option<f64>,
    /// Krippendorff's α.
    pub alpha: Option<f64>,
}

impl KindAgreement {
    fn of(
        kind: &str,
        units: &[Vec<(&String, u16)>],
        pair: Option<(&String, &String)>,
        marks: impl Fn(u16) -> bool,
    ) -> Self {
        let mut marked = BTreeMap::new();
        for (author, bits) in units.iter().flatten() {
            *marked.entry((*author).clone()).or_insert(0) += usize::from(marks(*bits));
        }
        let values: Vec<Vec<u32>> = units
            .iter()
            .map(|unit| {
                unit.iter()
                    .map(|(_, bits)| u32::from(marks(*bits)))
                    .collect()
            })
            .collect();
        let kappa = pair.and_then(|(a, b)| {
            let pairs: Vec<(bool, bool)> = units
                .iter()
                .filter_map(|unit| {
                    let of = |who: &String| {
                        unit.iter()
                            .find(|(author, _)| *author == who)
                            .map(|(_, bits)| marks(*bits))
                    };
                    Some((of(a)?, of(b)?))
                })
                .collect();
            cohen_kappa(&pairs)
        });
        Self {
            kind: kind.into(),
            marked,
            kappa,
            alpha: krippendorff_alpha(&values),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cohens_kappa_matches_the_textbook_example() {
        // 50 items: both yes 20, first only 5, second only 10, both no 15: p_o 0.7, p_e 0.5.
        let mut pairs = vec![(true, true); 20];
        pairs.extend(vec![(true, false); 5]);
        pairs.extend(vec![(false, true); 10]);
        pairs.extend(vec![(false, false); 15]);
        assert!((cohen_kappa(&pairs).unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(cohen_kappa(&[(true, true), (true, true)]), None);
        assert_eq!(cohen_kappa(&[]), None);
    }

    #[test]
    fn krippendorffs_alpha_matches_the_published_nominal_example() {
        // Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the nominal
        // example: 4 observers, 12 units, missing values; alpha = 0.743.
        let table: [[u32; 12]; 4] = [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, 0, 0, 0],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, 0, 3],
            [0, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 0],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, 0],
        ];
        let units: Vec<Vec<u32>> = (0..12)
            .map(|unit| {
                table
                    .iter()
                    .map(|row| row[unit])
                    .filter(|&v| v != 0)
                    .collect()
            })
            .collect();
        let alpha = krippendorff_alpha(&units).unwrap();
        assert!((alpha - 0.743).abs() < 5e-4, "{alpha}");
    }
}
