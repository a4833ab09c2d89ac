//! The workload partitions (WPs) of an application on two devices and their
//! upper bounds: C alone, G alone, the perfect data partition (p-DP), and
//! each code partition (CP) that sends whole kernels to one side or the
//! other.
//!
//! An application is a suite of kernels. As in the paper, its work is their
//! sum {N_f, N_b} (eqs. 8–9), and one device's part of it is bounded by the
//! roofline of the summed part (eq. 2): compute and memory overlap across
//! the kernels a device runs, which is what makes the figure an upper bound.

use crate::error::SplitError;
use crate::model::{Bound, System, Transfers, Work};
use serde::{Deserialize, Deserializer, Serialize};

/// Kernels a code-partition enumeration accepts: 2^16 partitions.
pub const MAX_KERNELS: usize = 16;

/// One kernel of the application and its work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    pub name: String,
    pub work: Work,
}

/// The paper's execution models (Figure 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    /// The whole application on C (I_G = 0).
    COnly,
    /// The whole application on G (I_C = 0).
    GOnly,
    /// Every kernel's data sets divided so that both finish together
    /// (I_C = I_G = I).
    PerfectDataPartition,
    /// Each kernel wholly on one side, both sides at work at once.
    CodePartition,
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::COnly => "C only",
            Model::GOnly => "G only",
            Model::PerfectDataPartition => "perfect data partition",
            Model::CodePartition => "code partition",
        }
    }
}

/// One workload partition and its bound: a row of the paper's Table 2 with
/// its performance upper bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Partition {
    pub model: Model,
    /// The kernels C runs (all of them, in part, for the data partition).
    pub on_c: Vec<String>,
    /// The kernels G runs.
    pub on_g: Vec<String>,
    /// N_f-C / N_f: the share of the application's operations C does.
    pub c_share: f64,
    /// Eqs. 6–7: the intensities of C's and G's parts (0 for an idle side).
    #[serde(deserialize_with = "intensity")]
    pub i_c: f64,
    #[serde(deserialize_with = "intensity")]
    pub i_g: f64,
    /// C's and G's parts of the work.
    pub work_c: Work,
    pub work_g: Work,
    /// Eqs. 4–5.
    pub bound: Bound,
}

impl Partition {
    fn of(
        model: Model,
        on_c: Vec<String>,
        on_g: Vec<String>,
        work_c: Work,
        work_g: Work,
        system: &System,
        transfers: Transfers,
    ) -> Partition {
        let total = work_c.ops + work_g.ops;
        Partition {
            model,
            on_c,
            on_g,
            c_share: if total > 0.0 { work_c.ops / total } else { 0.0 },
            i_c: work_c.intensity(),
            i_g: work_g.intensity(),
            work_c,
            work_g,
            bound: system.bound(&work_c, &work_g, transfers),
        }
    }
}

/// Every partition of an application and the figures they share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub transfers: Transfers,
    /// The application's {N_f, N_b} and D: the kernels' sum.
    pub application: Work,
    /// Eq. 1: I of the whole application.
    #[serde(deserialize_with = "intensity")]
    pub intensity: f64,
    /// C only, G only, the perfect data partition, then the code partitions
    /// from the highest bound to the lowest.
    pub partitions: Vec<Partition>,
}

/// Reads an intensity back from JSON, which has no infinity: serde_json
/// writes the infinite I of work without traffic as `null`, and `null` is
/// read back as infinite (an intensity is never NaN).
fn intensity<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::INFINITY))
}

impl Analysis {
    /// The partition with the highest upper bound (the first on a tie, so
    /// the simpler model wins).
    pub fn best(&self) -> &Partition {
        let mut best = &self.partitions[0];
        for partition in &self.partitions[1..] {
            if partition.bound.performance > best.bound.performance {
                best = partition;
            }
        }
        best
    }

    pub fn find(&self, model: Model) -> Option<&Partition> {
        self.partitions.iter().find(|p| p.model == model)
    }
}

/// Bounds every partition of `kernels` on `system`: the two single-device
/// runs, the perfect data partition, and (for two kernels or more) every
/// code partition.
pub fn analyze(
    kernels: &[Kernel],
    system: &System,
    transfers: Transfers,
) -> Result<Analysis, SplitError> {
    if kernels.is_empty() {
        return Err(SplitError::NoKernels);
    }
    let application: Work = kernels.iter().map(|k| k.work).sum();
    if application.ops <= 0.0 {
        return Err(SplitError::NoWork);
    }
    let names = |ks: &[&Kernel]| ks.iter().map(|k| k.name.clone()).collect::<Vec<_>>();
    let all: Vec<&Kernel> = kernels.iter().collect();
    let idle = Work::default();
    let mut partitions = vec![
        Partition::of(
            Model::COnly,
            names(&all),
            Vec::new(),
            application,
            idle,
            system,
            transfers,
        ),
        Partition::of(
            Model::GOnly,
            Vec::new(),
            names(&all),
            idle,
            application,
            system,
            transfers,
        ),
        perfect_data_partition(kernels, system, transfers),
    ];
    let mut code = code_partitions(kernels, system, transfers)?;
    code.sort_by(|a, b| b.bound.performance.total_cmp(&a.bound.performance));
    partitions.extend(code);
    Ok(Analysis {
        transfers,
        application,
        intensity: application.intensity(),
        partitions,
    })
}

/// The perfect data partition (the paper's p-DP): C takes the share c of
/// every kernel's data sets and G the rest. A side's time is its share of
/// its time for the whole application, M_C or M_G (transfers included, as
/// they scale with the data too), so both finish together at
/// c = M_G / (M_C + M_G), and the bound is P_C + P_G: eq. 20 at its best
/// ratio (see [`crate::intensity::best_data_share`]).
pub fn perfect_data_partition(
    kernels: &[Kernel],
    system: &System,
    transfers: Transfers,
) -> Partition {
    let application: Work = kernels.iter().map(|k| k.work).sum();
    let m_c = system.c.time(&application, transfers);
    let m_g = system.g.time(&application, transfers);
    let c_share = if m_c + m_g > 0.0 {
        m_g / (m_c + m_g)
    } else {
        0.5
    };
    let names: Vec<String> = kernels.iter().map(|k| k.name.clone()).collect();
    Partition::of(
        Model::PerfectDataPartition,
        names.clone(),
        names,
        application.scaled(c_share),
        application.scaled(1.0 - c_share),
        system,
        transfers,
    )
}

/// Every code partition: each kernel wholly on C or on G, both sides busy
/// (the two one-sided assignments are C only and G only, not code
/// partitions). In the order of their assignment bits (kernel k on C where
/// bit k is clear); none for a single kernel.
pub fn code_partitions(
    kernels: &[Kernel],
    system: &System,
    transfers: Transfers,
) -> Result<Vec<Partition>, SplitError> {
    if kernels.len() > MAX_KERNELS {
        return Err(SplitError::TooManyKernels { count: kernels.len(), max: MAX_KERNELS });
    }
    let every = (1u32 << kernels.len()) - 1;
    Ok((1..every)
        .map(|on_g_bits| {
            let (mut on_c, mut on_g) = (Vec::new(), Vec::new());
            for (index, kernel) in kernels.iter().enumerate() {
                if on_g_bits & (1 << index) != 0 {
                    on_g.push(kernel);
                } else {
                    on_c.push(kernel);
                }
            }
            let work = |side: &[&Kernel]| side.iter().map(|k| k.work).sum::<Work>();
            let names = |side: &[&Kernel]| side.iter().map(|k| k.name.clone()).collect();
            Partition::of(
                Model::CodePartition,
                names(&on_c),
                names(&on_g),
                work(&on_c),
                work(&on_g),
                system,
                transfers,
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Processor;

    /// A host CPU and a card behind an 8 GB/s link.
    fn system() -> System {
        System {
            c: Processor::new("cpu", 100e9, 50e9, None).unwrap(),
            g: Processor::new("gpu", 1000e9, 200e9, Some(8e9)).unwrap(),
        }
    }

    fn kernel(name: &str, ops: f64, bytes: f64, transfer: f64) -> Kernel {
        Kernel {
            name: name.into(),
            work: Work::new(ops, bytes, transfer).unwrap(),
        }
    }

    #[test]
    fn one_kernel_has_the_three_homogeneous_and_data_partitions_only() {
        let kernels = [kernel("k", 1e9, 1e9, 0.0)];
        let analysis = analyze(&kernels, &system(), Transfers::Ignored).unwrap();
        let models: Vec<Model> = analysis.partitions.iter().map(|p| p.model).collect();
        assert_eq!(
            models,
            [Model::COnly, Model::GOnly, Model::PerfectDataPartition]
        );
        // I = 1: C is memory bound at 50 GFLOPS, G at 200; p-DP adds them.
        let p = |m| analysis.find(m).unwrap().bound.performance;
        assert!((p(Model::COnly) - 50e9).abs() < 1.0);
        assert!((p(Model::GOnly) - 200e9).abs() < 1.0);
        assert!((p(Model::PerfectDataPartition) - 250e9).abs() < 1.0);
        let p_dp = analysis.find(Model::PerfectDataPartition).unwrap();
        assert!((p_dp.c_share - 0.2).abs() < 1e-12);
        assert_eq!((p_dp.i_c, p_dp.i_g), (1.0, 1.0));
        let c_only = analysis.find(Model::COnly).unwrap();
        assert_eq!((c_only.i_c, c_only.i_g), (1.0, 0.0));
        assert_eq!(analysis.best().model, Model::PerfectDataPartition);
    }

    #[test]
    fn counted_transfers_move_the_data_partition_towards_the_host() {
        // 1e9 bytes over 8 GB/s cost G 125 ms against 5 ms of work.
        let kernels = [kernel("k", 1e9, 1e9, 1e9)];
        let ignored = analyze(&kernels, &system(), Transfers::Ignored).unwrap();
        let counted = analyze(&kernels, &system(), Transfers::Counted).unwrap();
        let share = |a: &Analysis| a.find(Model::PerfectDataPartition).unwrap().c_share;
        assert!(share(&counted) > share(&ignored));
        let g_only = counted.find(Model::GOnly).unwrap();
        assert!((g_only.bound.time - 0.130).abs() < 1e-12);
        // C alone (20 ms) now beats G alone; p-DP still beats both.
        assert!(counted.find(Model::COnly).unwrap().bound.performance > g_only.bound.performance);
        let p_dp = counted.find(Model::PerfectDataPartition).unwrap();
        assert!((p_dp.bound.time_c - p_dp.bound.time_g).abs() < 1e-15);
        assert!((p_dp.bound.time - 0.02 * 0.13 / 0.15).abs() < 1e-12);
    }

    #[test]
    fn code_partitions_cover_every_two_sided_assignment_best_first() {
        let kernels = [
            kernel("a", 4e9, 1e8, 0.0),
            kernel("b", 1e8, 5e8, 0.0),
            kernel("c", 1e9, 1e9, 0.0),
        ];
        let analysis = analyze(&kernels, &system(), Transfers::Ignored).unwrap();
        let code: Vec<&Partition> = analysis
            .partitions
            .iter()
            .filter(|p| p.model == Model::CodePartition)
            .collect();
        assert_eq!(code.len(), 6, "2^3 − 2 two-sided assignments");
        for pair in code.windows(2) {
            assert!(pair[0].bound.performance >= pair[1].bound.performance);
        }
        for p in &code {
            assert!(!p.on_c.is_empty() && !p.on_g.is_empty());
            assert_eq!(p.on_c.len() + p.on_g.len(), 3);
            // Eqs. 8–9: the parts add up to the application.
            assert!((p.work_c.ops + p.work_g.ops - analysis.application.ops).abs() < 1.0);
        }
        // Sending the compute-heavy `a` to the fast G and the streaming `b`
        // to C is best among the code partitions.
        assert_eq!(code[0].on_g, ["a", "c"]);
        assert_eq!(code[0].on_c, ["b"]);
        // Lemma 2: the intensities straddle the application's.
        let i = analysis.intensity;
        for p in &code {
            assert!((p.i_c - i) * (p.i_g - i) <= 0.0, "{p:?}");
        }
    }

    #[test]
    fn an_analysis_reads_back_from_json_as_written_infinite_intensities_too() {
        // `private` moves no global memory: a side that runs only it has an
        // infinite I, which JSON writes as null.
        let kernels = [kernel("a", 4e9, 1e8, 1e8), kernel("private", 1e9, 0.0, 0.0)];
        let analysis = analyze(&kernels, &system(), Transfers::Counted).unwrap();
        let json = serde_json::to_value(&analysis).unwrap();
        let private_on_g = json["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["on_g"] == serde_json::json!(["private"]))
            .unwrap();
        assert_eq!(private_on_g["i_g"], serde_json::Value::Null);
        assert_eq!(json["transfers"], "counted");
        let read: Analysis = serde_json::from_value(json).unwrap();
        assert_eq!(read, analysis);
        assert!(read.partitions.iter().any(|p| p.i_g.is_infinite()));

        let no_traffic = analyze(&kernels[1..], &system(), Transfers::Ignored).unwrap();
        let text = serde_json::to_string(&no_traffic).unwrap();
        assert!(text.contains("\"intensity\":null"), "{text}");
        let read: Analysis = serde_json::from_str(&text).unwrap();
        assert!(read.intensity.is_infinite());
        assert_eq!(read, no_traffic);
    }

    #[test]
    fn empty_idle_and_oversized_suites_are_refused() {
        assert_eq!(
            analyze(&[], &system(), Transfers::Ignored).unwrap_err(),
            SplitError::NoKernels
        );
        let idle = [kernel("k", 0.0, 1e6, 0.0)];
        assert_eq!(
            analyze(&idle, &system(), Transfers::Ignored).unwrap_err(),
            SplitError::NoWork
        );
        let many: Vec<Kernel> = (0..17)
            .map(|n| kernel(&n.to_string(), 1.0, 1.0, 0.0))
            .collect();
        let err = analyze(&many, &system(), Transfers::Ignored).unwrap_err();
        assert_eq!(err, SplitError::TooManyKernels { count: 17, max: 16 });
        assert!(err.to_string().starts_with("17 kernels give 2^17"));
    }
}
