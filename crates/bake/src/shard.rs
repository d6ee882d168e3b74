//! `--shard auto`: the shard of a job-array task, from the variables its scheduler sets.
//!
//! The shard is a pure function of the task's index and the array's size, so a retried task
//! rebakes exactly the tiles the first try owned ([`Shard`] assigns tiles statelessly).

use crate::Shard;

/// What `--shard` names: one shard `K/N`, or `auto` / `auto/N`, the shard of this job-array
/// task read from the environment ([`ShardChoice::resolve`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardChoice {
    Fixed(Shard),
    /// `count` is `N` of `auto/N`: needed where the scheduler does not tell the array's size
    /// (a Kubernetes Indexed Job), checked against it where it does.
    Auto {
        count: Option<u32>,
    },
}

impl std::str::FromStr for ShardChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s == "auto" {
            return Ok(ShardChoice::Auto { count: None });
        }
        if let Some(n) = s.strip_prefix("auto/") {
            return match n.trim().parse::<u32>() {
                Ok(count) if count > 0 => Ok(ShardChoice::Auto { count: Some(count) }),
                _ => Err(format!("`{n}` is not a shard count (auto/N with N ≥ 1)")),
            };
        }
        s.parse::<Shard>().map(ShardChoice::Fixed).map_err(|e| format!("{e}, or auto, or auto/N"))
    }
}

/// The variables `--shard auto` reads, in the order it tries them: the scheduler, its index
/// variable (0-based unless noted) and the variable holding the array's size.
pub const SCHEDULERS: &[(&str, &str, Option<&str>)] = &[
    // Slurm: the index runs from SLURM_ARRAY_TASK_MIN (`--array=1-8` starts at 1) in steps
    // of SLURM_ARRAY_TASK_STEP.
    ("Slurm", "SLURM_ARRAY_TASK_ID", Some("SLURM_ARRAY_TASK_COUNT")),
    ("AWS Batch", "AWS_BATCH_JOB_ARRAY_INDEX", Some("AWS_BATCH_JOB_ARRAY_SIZE")),
    ("Cloud Run", "CLOUD_RUN_TASK_INDEX", Some("CLOUD_RUN_TASK_COUNT")),
    // Kubernetes Indexed Jobs tell the index only: the count comes from `auto/N`.
    ("Kubernetes", "JOB_COMPLETION_INDEX", None),
];

/// A shard read from the environment, with where it came from (for the user's log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedShard {
    pub shard: Shard,
    /// E.g. `Slurm (SLURM_ARRAY_TASK_ID=3, SLURM_ARRAY_TASK_MIN=1, SLURM_ARRAY_TASK_COUNT=8)`.
    pub source: String,
}

impl ShardChoice {
    /// The shard this choice names; `auto` reads the job array's variables through `env`
    /// (`|k| std::env::var(k).ok()` in a program; a map in tests). The first scheduler of
    /// [`SCHEDULERS`] whose index variable is set decides; none set is an error naming them.
    pub fn resolve(self, env: impl Fn(&str) -> Option<String>) -> Result<ResolvedShard, String> {
        let count = match self {
            ShardChoice::Fixed(shard) => return Ok(ResolvedShard { shard, source: "--shard".into() }),
            ShardChoice::Auto { count } => count,
        };
        let num = |name: &str| -> Result<Option<u64>, String> {
            match env(name) {
                None => Ok(None),
                Some(v) => v.trim().parse::<u64>().map(Some).map_err(|_| format!("{name}=`{v}` is not a whole number")),
            }
        };
        for &(scheduler, index_var, count_var) in SCHEDULERS {
            let Some(raw_index) = num(index_var)? else { continue };
            let mut shown = vec![format!("{index_var}={raw_index}")];
            let mut index = raw_index;
            if scheduler == "Slurm" {
                let min = num("SLURM_ARRAY_TASK_MIN")?.ok_or("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MIN is not")?;
                let step = num("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
                shown.push(format!("SLURM_ARRAY_TASK_MIN={min}"));
                if step != 1 {
                    shown.push(format!("SLURM_ARRAY_TASK_STEP={step}"));
                }
                if raw_index < min || (raw_index - min) % step != 0 {
                    return Err(format!("SLURM_ARRAY_TASK_ID={raw_index} is not on the array's range from SLURM_ARRAY_TASK_MIN={min} in steps of {step} (--shard auto needs a range such as --array=1-8 or 0-7)"));
                }
                index = (raw_index - min) / step;
            }
            let env_count = match count_var {
                Some(v) => {
                    let n = num(v)?;
                    if let Some(n) = n {
                        shown.push(format!("{v}={n}"));
                    }
                    n
                }
                None => None,
            };
            let n = match (env_count, count) {
                (Some(e), Some(c)) if e != u64::from(c) => {
                    return Err(format!("--shard auto/{c} but {} says the array has {e} tasks", count_var.unwrap_or(index_var)));
                }
                (Some(e), _) => e,
                (None, Some(c)) => u64::from(c),
                (None, None) => {
                    return Err(match count_var {
                        Some(v) => format!("{index_var} is set but {v} is not; give the task count as --shard auto/N"),
                        None => format!("{index_var} ({scheduler}) gives the task index only; give the task count as --shard auto/N (the Job's completions)"),
                    })
                }
            };
            if n == 0 || index >= n || n > u64::from(u32::MAX) {
                return Err(format!("{}: task {} of {n} is outside the array (the index is 0-based: 0..{n})", shown.join(", "), index));
            }
            let shard = Shard { index: index as u32 + 1, count: n as u32 };
            return Ok(ResolvedShard { shard, source: format!("{scheduler} ({})", shown.join(", ")) });
        }
        let vars: Vec<String> = SCHEDULERS
            .iter()
            .map(|(s, i, c)| match c {
                Some(c) if *s == "Slurm" => format!("{i} with SLURM_ARRAY_TASK_MIN and {c} ({s})"),
                Some(c) => format!("{i} with {c} ({s})"),
                None => format!("{i} with --shard auto/N ({s})"),
            })
            .collect();
        Err(format!("this is not a job-array task; none of these is set: {}. Outside a job array give --shard K/N", vars.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn resolve(choice: &str, vars: &[(&str, &str)]) -> Result<ResolvedShard, String> {
        let env: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        choice.parse::<ShardChoice>()?.resolve(|k| env.get(k).cloned())
    }

    fn shard(choice: &str, vars: &[(&str, &str)]) -> (u32, u32) {
        let r = resolve(choice, vars).unwrap();
        (r.shard.index, r.shard.count)
    }

    #[test]
    fn parses_fixed_and_auto() {
        assert_eq!("3/8".parse::<ShardChoice>(), Ok(ShardChoice::Fixed(Shard { index: 3, count: 8 })));
        assert_eq!("auto".parse::<ShardChoice>(), Ok(ShardChoice::Auto { count: None }));
        assert_eq!("auto/16".parse::<ShardChoice>(), Ok(ShardChoice::Auto { count: Some(16) }));
        assert!("auto/0".parse::<ShardChoice>().unwrap_err().contains("auto/N"));
        assert!("9/8".parse::<ShardChoice>().unwrap_err().contains("or auto"));
        // A fixed shard ignores the environment.
        assert_eq!(shard("2/4", &[("SLURM_ARRAY_TASK_ID", "7")]), (2, 4));
    }

    #[test]
    fn slurm_counts_from_the_array_minimum() {
        let one_based = [("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_COUNT", "8")];
        assert_eq!(shard("auto", &[&[("SLURM_ARRAY_TASK_ID", "1")], &one_based[..]].concat()), (1, 8));
        assert_eq!(shard("auto", &[&[("SLURM_ARRAY_TASK_ID", "8")], &one_based[..]].concat()), (8, 8));
        // --array=0-3
        let zero_based = [("SLURM_ARRAY_TASK_ID", "0"), ("SLURM_ARRAY_TASK_MIN", "0"), ("SLURM_ARRAY_TASK_COUNT", "4")];
        assert_eq!(shard("auto", &zero_based), (1, 4));
        // --array=10-16:2 → tasks 10, 12, 14, 16
        let stepped = [("SLURM_ARRAY_TASK_ID", "14"), ("SLURM_ARRAY_TASK_MIN", "10"), ("SLURM_ARRAY_TASK_STEP", "2"), ("SLURM_ARRAY_TASK_COUNT", "4")];
        assert_eq!(shard("auto", &stepped), (3, 4));
        let r = resolve("auto", &stepped).unwrap();
        assert_eq!(r.source, "Slurm (SLURM_ARRAY_TASK_ID=14, SLURM_ARRAY_TASK_MIN=10, SLURM_ARRAY_TASK_STEP=2, SLURM_ARRAY_TASK_COUNT=4)");
        // auto/N agrees with the array, or is refused.
        assert_eq!(shard("auto/4", &zero_based), (1, 4));
        assert!(resolve("auto/5", &zero_based).unwrap_err().contains("SLURM_ARRAY_TASK_COUNT says the array has 4 tasks"));
        // An index off the range, or no minimum.
        assert!(resolve("auto", &[("SLURM_ARRAY_TASK_ID", "3"), ("SLURM_ARRAY_TASK_MIN", "4"), ("SLURM_ARRAY_TASK_COUNT", "2")]).is_err());
        assert!(resolve("auto", &[("SLURM_ARRAY_TASK_ID", "9"), ("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_COUNT", "8")])
            .unwrap_err()
            .contains("outside the array"));
        assert!(resolve("auto", &[("SLURM_ARRAY_TASK_ID", "1"), ("SLURM_ARRAY_TASK_COUNT", "8")]).unwrap_err().contains("SLURM_ARRAY_TASK_MIN"));
        assert!(resolve("auto", &[("SLURM_ARRAY_TASK_ID", "x"), ("SLURM_ARRAY_TASK_MIN", "1")]).unwrap_err().contains("not a whole number"));
    }

    #[test]
    fn aws_batch_and_cloud_run_are_zero_based_with_their_size() {
        assert_eq!(shard("auto", &[("AWS_BATCH_JOB_ARRAY_INDEX", "0"), ("AWS_BATCH_JOB_ARRAY_SIZE", "3")]), (1, 3));
        assert_eq!(shard("auto", &[("AWS_BATCH_JOB_ARRAY_INDEX", "2"), ("AWS_BATCH_JOB_ARRAY_SIZE", "3")]), (3, 3));
        assert!(resolve("auto", &[("AWS_BATCH_JOB_ARRAY_INDEX", "3"), ("AWS_BATCH_JOB_ARRAY_SIZE", "3")]).is_err());
        assert!(resolve("auto", &[("AWS_BATCH_JOB_ARRAY_INDEX", "1")]).unwrap_err().contains("AWS_BATCH_JOB_ARRAY_SIZE is not"));
        assert_eq!(shard("auto", &[("CLOUD_RUN_TASK_INDEX", "4"), ("CLOUD_RUN_TASK_COUNT", "5")]), (5, 5));
        assert_eq!(shard("auto/5", &[("CLOUD_RUN_TASK_INDEX", "0"), ("CLOUD_RUN_TASK_COUNT", "5")]), (1, 5));
        assert!(resolve("auto/6", &[("CLOUD_RUN_TASK_INDEX", "0"), ("CLOUD_RUN_TASK_COUNT", "5")]).is_err());
    }

    #[test]
    fn kubernetes_needs_the_count_in_the_flag() {
        assert_eq!(shard("auto/4", &[("JOB_COMPLETION_INDEX", "0")]), (1, 4));
        assert_eq!(shard("auto/4", &[("JOB_COMPLETION_INDEX", "3")]), (4, 4));
        assert!(resolve("auto/4", &[("JOB_COMPLETION_INDEX", "4")]).unwrap_err().contains("outside the array"));
        let e = resolve("auto", &[("JOB_COMPLETION_INDEX", "1")]).unwrap_err();
        assert!(e.contains("JOB_COMPLETION_INDEX") && e.contains("--shard auto/N"), "{e}");
    }

    #[test]
    fn no_variable_is_an_error_naming_them_all() {
        let e = resolve("auto", &[]).unwrap_err();
        for v in [
            "SLURM_ARRAY_TASK_ID",
            "SLURM_ARRAY_TASK_MIN",
            "SLURM_ARRAY_TASK_COUNT",
            "AWS_BATCH_JOB_ARRAY_INDEX",
            "AWS_BATCH_JOB_ARRAY_SIZE",
            "CLOUD_RUN_TASK_INDEX",
            "CLOUD_RUN_TASK_COUNT",
            "JOB_COMPLETION_INDEX",
            "--shard K/N",
        ] {
            assert!(e.contains(v), "{v} missing from: {e}");
        }
        // The first scheduler set wins (Slurm over a stray Kubernetes index).
        let both = [("JOB_COMPLETION_INDEX", "0"), ("SLURM_ARRAY_TASK_ID", "2"), ("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_COUNT", "2")];
        assert_eq!(shard("auto/2", &both), (2, 2));
    }
}
