//! The inputs of the PerDome model and its time on one device (eq. 2) and
//! on two devices working at once (eqs. 4–5).
//!
//! Units are SI throughout: operations, bytes, seconds. The paper writes a
//! device's peaks as times per operation and per byte (t_f = 1/F̂,
//! t_b = 1/B̂); [`Processor`] stores the peaks and derives the times.

use crate::error::SplitError;
use serde::{Deserialize, Serialize};
use std::ops::Add;

/// One device's ceilings and the link its data crosses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Processor {
    /// What reports call the device.
    pub name: String,
    /// F̂: peak operations per second (the inverse of the paper's t_f).
    pub peak_ops: f64,
    /// B̂: peak global-memory bandwidth in bytes per second (1/t_b).
    pub bandwidth: f64,
    /// Bytes per second over the host link that brings the device its data
    /// and takes its results back; `None` for a device whose memory already
    /// holds the data (the host CPU).
    pub link: Option<f64>,
}

impl Processor {
    /// Checks that the peaks are positive and finite: a zero peak would
    /// make every bound meaningless.
    pub fn new(
        name: impl Into<String>,
        peak_ops: f64,
        bandwidth: f64,
        link: Option<f64>,
    ) -> Result<Self, SplitError> {
        let name = name.into();
        let positive = |what: &'static str, value: f64| {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(SplitError::Ceiling { device: name.clone(), what, value })
            }
        };
        positive("peak operations per second", peak_ops)?;
        positive("memory bandwidth", bandwidth)?;
        if let Some(link) = link {
            positive("host-link bandwidth", link)?;
        }
        Ok(Processor { name, peak_ops, bandwidth, link })
    }

    /// t_f: seconds per operation at peak.
    pub fn time_per_op(&self) -> f64 {
        1.0 / self.peak_ops
    }

    /// t_b: seconds per byte of global-memory traffic at peak.
    pub fn time_per_byte(&self) -> f64 {
        1.0 / self.bandwidth
    }

    /// Eq. 2: T = max{N_f·t_f, N_b·t_b}, the roofline's time for `work`,
    /// plus, where `transfers` counts them, D/L for the data the work needs
    /// over this device's host link (as the boat hull model's t0 = d/B_bus,
    /// added rather than overlapped: the data must arrive before the work
    /// that reads it).
    pub fn time(&self, work: &Work, transfers: Transfers) -> f64 {
        let roofline = (work.ops * self.time_per_op()).max(work.bytes * self.time_per_byte());
        roofline + self.transfer_time(work, transfers)
    }

    /// D/L, or zero for a device that holds its data or when transfers are
    /// ignored.
    pub fn transfer_time(&self, work: &Work, transfers: Transfers) -> f64 {
        match (transfers, self.link) {
            (Transfers::Counted, Some(link)) => work.transfer / link,
            _ => 0.0,
        }
    }

    /// Eq. 3: P = N_f / T, the device's performance upper bound for `work`
    /// (zero for no work).
    pub fn performance(&self, work: &Work, transfers: Transfers) -> f64 {
        let time = self.time(work, transfers);
        if time > 0.0 {
            work.ops / time
        } else {
            0.0
        }
    }
}

/// Whether a device's time includes moving its data over its host link.
/// The paper ignores transfers; clflow counts them by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transfers {
    /// The paper's model: data is where the work runs.
    Ignored,
    /// Each device's data crosses its host link before it works.
    Counted,
}

/// An amount of work: the paper's {N_f, N_b}, plus the data it needs moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Work {
    /// N_f (clflow's W): operations.
    pub ops: f64,
    /// N_b (clflow's Q): bytes of global-memory traffic.
    pub bytes: f64,
    /// D: bytes that must cross the host link for a device that does not
    /// hold the data (inputs there, results back).
    pub transfer: f64,
}

impl Work {
    /// Checks that every amount is finite and not negative.
    pub fn new(ops: f64, bytes: f64, transfer: f64) -> Result<Self, SplitError> {
        for (what, value) in [
            ("operations", ops),
            ("traffic", bytes),
            ("transfer", transfer),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(SplitError::Work { what, value });
            }
        }
        Ok(Work { ops, bytes, transfer })
    }

    /// Eq. 1: I = N_f / N_b; zero for no work (the paper's convention for
    /// an unused device), infinite for work with no traffic.
    pub fn intensity(&self) -> f64 {
        if self.ops == 0.0 {
            0.0
        } else {
            self.ops / self.bytes
        }
    }

    /// The same work scaled by `fraction` (a share of the data sets).
    pub fn scaled(&self, fraction: f64) -> Work {
        Work {
            ops: self.ops * fraction,
            bytes: self.bytes * fraction,
            transfer: self.transfer * fraction,
        }
    }
}

impl Add for Work {
    type Output = Work;
    fn add(self, other: Work) -> Work {
        Work {
            ops: self.ops + other.ops,
            bytes: self.bytes + other.bytes,
            transfer: self.transfer + other.transfer,
        }
    }
}

impl std::iter::Sum for Work {
    fn sum<I: Iterator<Item = Work>>(iter: I) -> Work {
        iter.fold(Work::default(), Add::add)
    }
}

/// The two devices. The paper's roles are C (a CPU) and G (a GPU); any two
/// devices can take them: `c` is the first one named, `g` the second.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct System {
    pub c: Processor,
    pub g: Processor,
}

/// What a workload partition's bound is made of.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    /// The time of C's and of G's part (eq. 5's inner maxima).
    pub time_c: f64,
    pub time_g: f64,
    /// Eq. 5: the slower device's time.
    pub time: f64,
    /// Eq. 4: P = N_f / T.
    pub performance: f64,
}

impl System {
    /// Eqs. 4–5: both devices start together; the application ends when
    /// the slower ends. `on_c` and `on_g` are each device's part of it.
    pub fn bound(&self, on_c: &Work, on_g: &Work, transfers: Transfers) -> Bound {
        let time_c = self.c.time(on_c, transfers);
        let time_g = self.g.time(on_g, transfers);
        let time = time_c.max(time_g);
        let ops = on_c.ops + on_g.ops;
        Bound {
            time_c,
            time_g,
            time,
            performance: if time > 0.0 { ops / time } else { 0.0 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(link: Option<f64>) -> Processor {
        Processor::new("d", 100e9, 10e9, link).unwrap()
    }

    #[test]
    fn the_roofline_time_is_the_slower_of_compute_and_memory() {
        let d = device(None);
        // 1e9 ops take 10 ms; 1e8 bytes take 10 ms; 2e8 bytes take 20 ms.
        let balanced = Work::new(1e9, 1e8, 0.0).unwrap();
        assert!((d.time(&balanced, Transfers::Counted) - 0.01).abs() < 1e-15);
        let memory_bound = Work::new(1e9, 2e8, 0.0).unwrap();
        assert!((d.time(&memory_bound, Transfers::Counted) - 0.02).abs() < 1e-15);
        assert!((d.performance(&memory_bound, Transfers::Counted) - 50e9).abs() < 1.0);
    }

    #[test]
    fn transfers_add_their_link_time_only_where_counted_and_needed() {
        let work = Work::new(1e9, 1e8, 4e8).unwrap();
        let remote = device(Some(8e9));
        // 10 ms of work + 400 MB over 8 GB/s = 50 ms.
        assert!((remote.time(&work, Transfers::Counted) - 0.06).abs() < 1e-12);
        assert!((remote.time(&work, Transfers::Ignored) - 0.01).abs() < 1e-15);
        let host = device(None);
        assert!((host.time(&work, Transfers::Counted) - 0.01).abs() < 1e-15);
    }

    #[test]
    fn the_system_waits_for_the_slower_device() {
        let system = System {
            c: Processor::new("c", 10e9, 10e9, None).unwrap(),
            g: Processor::new("g", 100e9, 100e9, None).unwrap(),
        };
        let on_c = Work::new(1e9, 1e8, 0.0).unwrap(); // 100 ms
        let on_g = Work::new(1e9, 1e8, 0.0).unwrap(); // 10 ms
        let bound = system.bound(&on_c, &on_g, Transfers::Ignored);
        assert!((bound.time - 0.1).abs() < 1e-15);
        assert!((bound.time_g - 0.01).abs() < 1e-15);
        assert!((bound.performance - 20e9).abs() < 1.0);
    }

    #[test]
    fn bad_peaks_and_amounts_are_refused_with_their_name() {
        let err = Processor::new("K20", 0.0, 1.0, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "device `K20`: peak operations per second is 0; it must be a positive number"
        );
        assert!(Processor::new("K20", 1.0, 1.0, Some(f64::NAN)).is_err());
        let err = Work::new(1.0, -2.0, 0.0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "traffic is -2; work amounts must be finite and not negative"
        );
    }

    #[test]
    fn intensity_follows_the_papers_conventions() {
        assert_eq!(Work::new(8.0, 4.0, 0.0).unwrap().intensity(), 2.0);
        assert_eq!(Work::default().intensity(), 0.0);
        assert!(Work::new(1.0, 0.0, 0.0).unwrap().intensity().is_infinite());
    }
}
