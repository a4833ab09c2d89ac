//! The energy roofline (Choi, Bedard, Fowler, Vuduc: "A roofline model of
//! energy"): a kernel's energy is what its operations, its bytes and the
//! time it keeps the device on cost,
//!
//! ```text
//! E = W · ε_op + Q · ε_mem + π₀ · T
//! ```
//!
//! so the device's mean power while running at op rate F and byte rate B is
//! `P = ε_op · F + ε_mem · B + π₀`. Every microbenchmark run with a power
//! sensor gives one (F, B, P); [`fit`] finds ε_op, ε_mem and π₀ by least
//! squares over them. Its energy-efficiency roofline is
//! `W / E = 1 / (ε_op + ε_mem / I + π₀ · max(1/F̂, 1 / (I · B̂)))`.

use serde::{Deserialize, Serialize};

/// Mean power while one benchmark ran, and the rates it ran at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerSample {
    pub benchmark: String,
    pub ops_per_s: f64,
    pub bytes_per_s: f64,
    pub mean_w: f64,
}

/// The fitted coefficients of one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergyCoefficients {
    /// ε_op: joules per operation.
    pub op_j: f64,
    /// ε_mem: joules per byte of global-memory traffic.
    pub byte_j: f64,
    /// π₀: the power drawn whatever runs, watts.
    pub constant_w: f64,
    /// Root-mean-square difference between fitted and sampled power.
    pub rms_residual_w: f64,
    pub samples: usize,
    pub source: String,
}

impl EnergyCoefficients {
    /// The energy balance ε_mem / ε_op: operations per byte at which the
    /// two costs are equal.
    pub fn balance(&self) -> f64 {
        self.byte_j / self.op_j
    }

    /// Predicted energy of `work` operations and `bytes` of traffic over
    /// `time_s` seconds.
    pub fn energy(&self, work: f64, bytes: f64, time_s: f64) -> f64 {
        self.op_j * work + self.byte_j * bytes + self.constant_w * time_s
    }

    /// Operations per joule at intensity `i` on a device that runs at most
    /// `peak` ops/s and `bandwidth` bytes/s (the energy roofline's curve).
    pub fn efficiency_at(&self, i: f64, peak: f64, bandwidth: f64) -> f64 {
        let time_per_op = (1.0 / peak).max(1.0 / (i * bandwidth));
        1.0 / (self.op_j + self.byte_j / i + self.constant_w * time_per_op)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FitError {
    #[error("{found} power samples; the energy fit needs at least 3 (run `clflow bench` where a power sensor serves the device)")]
    TooFewSamples { found: usize },
    #[error("the power samples do not tell operations from bytes (every benchmark ran at proportional rates)")]
    Degenerate,
}

/// Least-squares fit of `P = ε_op · F + ε_mem · B + π₀` over the samples.
pub fn fit(samples: &[PowerSample], source: &str) -> Result<EnergyCoefficients, FitError> {
    let usable: Vec<&PowerSample> = samples
        .iter()
        .filter(|s| s.ops_per_s.is_finite() && s.bytes_per_s.is_finite() && s.mean_w.is_finite())
        .collect();
    if usable.len() < 3 {
        return Err(FitError::TooFewSamples { found: usable.len() });
    }
    // Columns scaled to unit maximum, so the normal equations stay
    // well conditioned with rates of 1e11 beside a constant of 1.
    let scale_of = |pick: fn(&PowerSample) -> f64| {
        usable
            .iter()
            .map(|s| pick(s).abs())
            .fold(0.0, f64::max)
            .max(f64::MIN_POSITIVE)
    };
    let scales = [scale_of(|s| s.ops_per_s), scale_of(|s| s.bytes_per_s), 1.0];
    let row = |s: &PowerSample| [s.ops_per_s / scales[0], s.bytes_per_s / scales[1], 1.0];
    let mut normal = [[0.0f64; 4]; 3];
    for s in &usable {
        let x = row(s);
        for i in 0..3 {
            for j in 0..3 {
                normal[i][j] += x[i] * x[j];
            }
            normal[i][3] += x[i] * s.mean_w;
        }
    }
    let solution = solve3(normal).ok_or(FitError::Degenerate)?;
    let coefficients = [
        solution[0] / scales[0],
        solution[1] / scales[1],
        solution[2],
    ];
    let squares: f64 = usable
        .iter()
        .map(|s| {
            let fitted =
                coefficients[0] * s.ops_per_s + coefficients[1] * s.bytes_per_s + coefficients[2];
            (fitted - s.mean_w).powi(2)
        })
        .sum();
    Ok(EnergyCoefficients {
        op_j: coefficients[0],
        byte_j: coefficients[1],
        constant_w: coefficients[2],
        rms_residual_w: (squares / usable.len() as f64).sqrt(),
        samples: usable.len(),
        source: source.to_string(),
    })
}

/// Gaussian elimination with partial pivoting on an augmented 3×4 system;
/// `None` when it is singular.
fn solve3(mut a: [[f64; 4]; 3]) -> Option<[f64; 3]> {
    let size = a.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    for col in 0..3 {
        let pivot = (col..3).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() <= 1e-10 * size {
            return None;
        }
        a.swap(col, pivot);
        let pivot_row = a[col];
        for row in a.iter_mut().skip(col + 1) {
            let factor = row[col] / pivot_row[col];
            for (value, above) in row.iter_mut().zip(pivot_row).skip(col) {
                *value -= factor * above;
            }
        }
    }
    let mut x = [0.0; 3];
    for r in (0..3).rev() {
        let rest: f64 = (r + 1..3).map(|c| a[r][c] * x[c]).sum();
        x[r] = (a[r][3] - rest) / a[r][r];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ops: f64, bytes: f64, watts: f64) -> PowerSample {
        PowerSample {
            benchmark: String::new(),
            ops_per_s: ops,
            bytes_per_s: bytes,
            mean_w: watts,
        }
    }

    /// A device with 50 pJ/op, 400 pJ/byte and 60 W constant.
    fn truth(ops: f64, bytes: f64) -> f64 {
        50e-12 * ops + 400e-12 * bytes + 60.0
    }

    #[test]
    fn the_fit_recovers_the_coefficients_that_made_the_samples() {
        let runs = [
            (2e12, 1e6), // mad chain
            (1e12, 5e5), // add chain
            (0.5e12, 0.0),
            (2e10, 150e9), // triad
            (0.0, 160e9),  // copy
            (1e10, 140e9), // read
        ];
        let samples: Vec<PowerSample> = runs
            .iter()
            .map(|&(f, b)| sample(f, b, truth(f, b)))
            .collect();
        let c = fit(&samples, "test").unwrap();
        assert!((c.op_j - 50e-12).abs() < 1e-18, "{}", c.op_j);
        assert!((c.byte_j - 400e-12).abs() < 1e-18, "{}", c.byte_j);
        assert!((c.constant_w - 60.0).abs() < 1e-6);
        assert!(c.rms_residual_w < 1e-6);
        assert!((c.balance() - 8.0).abs() < 1e-6);
        assert_eq!(c.samples, 6);
    }

    #[test]
    fn noise_moves_the_fit_by_little_and_shows_in_the_residual() {
        let mut samples = Vec::new();
        for (k, &(f, b)) in [
            (2e12, 0.0),
            (1e12, 0.0),
            (0.0, 150e9),
            (0.0, 100e9),
            (1e12, 100e9),
        ]
        .iter()
        .enumerate()
        {
            let noise = if k % 2 == 0 { 0.5 } else { -0.5 };
            samples.push(sample(f, b, truth(f, b) + noise));
        }
        let c = fit(&samples, "test").unwrap();
        // Least squares over these five runs gives 51 pJ/op, 412 pJ/byte
        // and 58.4 W, 0.149 W RMS from the samples.
        assert!((c.op_j - 51e-12).abs() < 1e-15);
        assert!((c.byte_j - 41.2222e-12 * 10.0).abs() < 1e-15);
        assert!((c.constant_w - 58.4444).abs() < 1e-3);
        assert!((c.rms_residual_w - 0.14907).abs() < 1e-4);
    }

    #[test]
    fn too_few_or_proportional_samples_are_refused() {
        let two = [sample(1e12, 0.0, 100.0), sample(0.0, 1e11, 90.0)];
        assert_eq!(
            fit(&two, "t").unwrap_err(),
            FitError::TooFewSamples { found: 2 }
        );
        // Bytes always 10 % of ops: ε_op and ε_mem cannot be told apart.
        let proportional: Vec<PowerSample> = [1e11, 2e11, 3e11, 4e11]
            .iter()
            .map(|&f| sample(f, f / 10.0, truth(f, f / 10.0)))
            .collect();
        assert_eq!(fit(&proportional, "t").unwrap_err(), FitError::Degenerate);
    }

    #[test]
    fn energy_and_efficiency_follow_the_model() {
        let c = EnergyCoefficients {
            op_j: 50e-12,
            byte_j: 400e-12,
            constant_w: 60.0,
            rms_residual_w: 0.0,
            samples: 3,
            source: String::new(),
        };
        // 1e12 ops and 1e11 bytes over 1 s: 50 + 40 + 60 J.
        assert!((c.energy(1e12, 1e11, 1.0) - 150.0).abs() < 1e-9);
        // High intensity, compute bound at 1 TFLOP/s: 50 pJ + 60 pJ per op,
        // plus 400 pJ / 1000 for the bytes.
        let high = c.efficiency_at(1000.0, 1e12, 100e9);
        assert!((1.0 / high - (50e-12 + 0.4e-12 + 60e-12)).abs() < 1e-18);
        // Low intensity, memory bound: each op waits 1 / (I · B̂).
        let low = c.efficiency_at(0.5, 1e12, 100e9);
        assert!((1.0 / low - (50e-12 + 800e-12 + 60.0 / 50e9)).abs() < 1e-15);
    }
}
