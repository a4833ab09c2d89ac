//! Absolute percentage error: how far a prediction lies from what was
//! measured, as a share of the measurement.

/// |predicted − measured| / measured; `None` without a positive measurement.
pub fn ape(predicted: f64, measured: f64) -> Option<f64> {
    (measured > 0.0 && measured.is_finite() && predicted.is_finite())
        .then(|| (predicted - measured).abs() / measured)
}

/// The mean of the errors given; `None` for none.
pub fn mean(errors: &[f64]) -> Option<f64> {
    (!errors.is_empty()).then(|| errors.iter().sum::<f64>() / errors.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest and largest (predicted − measured) / measured that
    /// numbers printed to two decimals could have had.
    fn printed_range(predicted: f64, measured: f64) -> (f64, f64) {
        let h = 0.005;
        (
            (predicted - h - (measured + h)) / (measured + h),
            (predicted + h - (measured - h)) / (measured - h),
        )
    }

    #[test]
    fn the_quantitative_papers_table_4_errors() {
        // R9-Nano: predicted vs measured milliseconds and the signed error
        // the paper prints; our APE is its magnitude, within the rounding of
        // the printed times.
        for (predicted, measured, printed) in [
            (7.75, 8.72, -11.18),
            (0.83, 0.94, -11.45),
            (46.27, 54.57, -15.21),
        ] {
            let (lo, hi) = printed_range(predicted, measured);
            let printed = printed / 100.0;
            assert!(
                lo <= printed && printed <= hi,
                "{printed} not in {lo}..{hi}"
            );
            let ours = ape(predicted, measured).unwrap();
            assert!((ours - printed.abs()).abs() < 0.006, "{ours} vs {printed}");
        }
        // lvmd-krn, with the most digits, agrees to 0.01 %.
        assert!((ape(46.27, 54.57).unwrap() - 0.1521).abs() < 1e-4);
    }

    #[test]
    fn no_error_without_a_measurement() {
        assert_eq!(ape(1.0, 0.0), None);
        assert_eq!(ape(f64::NAN, 1.0), None);
        assert_eq!(ape(1.5, 1.0), Some(0.5));
        assert_eq!(ape(0.5, 1.0), Some(0.5));
        assert_eq!(mean(&[0.1, 0.3]), Some(0.2));
        assert_eq!(mean(&[]), None);
    }
}
