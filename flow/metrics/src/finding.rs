//! One sentence per kernel on a device: where it stands on the roofline,
//! and what would move it.

use crate::{format_number, Bound, Metrics};

/// "memory-bound at 7.6 % of attainable (7.832 of 103.1 GOPS/s): ...", or
/// `None` where the kernel was not timed or the device has no ceilings.
pub fn finding(m: &Metrics) -> Option<String> {
    let fraction = m.fraction_of_attainable.as_ref()?.value;
    let (achieved, attainable) = (m.performance.as_ref()?, m.attainable.as_ref()?);
    let bound = match m.bound? {
        Bound::Memory => "memory-bound",
        Bound::Compute => "compute-bound",
        Bound::Either => "memory- or compute-bound (its intensity range straddles the ridge)",
    };
    let position = format!(
        "{} on {}: {bound} at {} % of attainable ({} of {})",
        m.kernel,
        m.device,
        format_number(100.0 * fraction),
        achieved.display(),
        attainable.display()
    );
    // What the count says of where the bytes or the operations go.
    let h = &m.hotspots;
    let evidence: Vec<String> = match m.bound? {
        Bound::Memory | Bound::Either => [
            h.coalesced
                .map(|c| format!("{} % of bytes coalesce", format_number(100.0 * c))),
            h.traffic_line.as_ref().map(|(line, share)| {
                format!("{line} causes {} % of Q", format_number(100.0 * share))
            }),
        ]
        .into_iter()
        .flatten()
        .collect(),
        Bound::Compute => h
            .work_line
            .iter()
            .map(|(line, share)| format!("{line} does {} % of W", format_number(100.0 * share)))
            .collect(),
    };
    let position = std::iter::once(position)
        .chain(evidence)
        .collect::<Vec<_>>()
        .join("; ");
    let lever = if fraction > 1.0 {
        "above the roof, which no kernel can be: W likely counts operations the device spends \
         little on (index and compare arithmetic under --ops arith; try --ops fp32), or the \
         ceiling was measured low (run clflow bench)"
    } else {
        match m.bound? {
            Bound::Memory => {
                "fewer bytes per operation (reuse through local memory, coalesced \
                              accesses) would raise it"
            }
            Bound::Compute => "fewer operations, or cheaper ones, would raise it",
            Bound::Either => "the caches decide: fewer bytes from DRAM would raise it",
        }
    };
    Some(format!("{position}; {lever}."))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{evaluate, Ceilings, DeviceProfile, Figure, KernelCounts, OpKind, Run, Unit};

    fn metrics(work: f64, seconds: f64) -> Metrics {
        let (kernel, device) = parts(work);
        let run = Run {
            time: Some(Figure::measured(seconds, Unit::Seconds, "run")),
            ..Run::new("k", "d")
        };
        evaluate(&kernel, &device, Some(&run))
    }

    fn parts(work: f64) -> (KernelCounts, DeviceProfile) {
        let kernel = KernelCounts {
            kernel: "k".into(),
            ops: OpKind::Float,
            op_set: None,
            work: Figure::measured(work, Unit::Ops, "count"),
            traffic_accessed: Figure::measured(1e9, Unit::Bytes, "count"),
            traffic_compulsory: None,
            hotspots: Default::default(),
        };
        let device = DeviceProfile {
            name: "d".into(),
            kind: None,
            measured: Ceilings {
                float: Some(Figure::measured(100e9, Unit::OpsPerSecond, "bench")),
                bandwidth: Some(Figure::measured(10e9, Unit::BytesPerSecond, "bench")),
                ..Ceilings::default()
            },
            datasheet: Ceilings::default(),
        };
        (kernel, device)
    }

    #[test]
    fn a_sentence_says_the_bound_the_fraction_and_the_lever() {
        // I = 1 OPS/B on a ridge of 10: memory-bound, 10 GOPS/s attainable.
        let m = metrics(1e9, 0.5);
        assert_eq!(
            finding(&m).unwrap(),
            "k on d: memory-bound at 20 % of attainable (2 GOPS/s of 10 GOPS/s); fewer bytes per \
             operation (reuse through local memory, coalesced accesses) would raise it."
        );
        // Faster than the roof allows.
        let above = finding(&metrics(1e9, 0.05)).unwrap();
        assert!(
            above.contains("at 200 % of attainable") && above.contains("above the roof"),
            "{above}"
        );
        // Not timed: nothing to say.
        let (kernel, device) = parts(1e9);
        assert!(finding(&evaluate(&kernel, &device, None)).is_none());
    }

    #[test]
    fn the_count_names_the_lines_and_the_coalescing_behind_the_bound() {
        let hotspots = crate::Hotspots {
            work_line: Some(("k.cl:12".into(), 0.613)),
            traffic_line: Some(("k.cl:7".into(), 0.41)),
            coalesced: Some(0.28),
        };
        let mut memory = metrics(1e9, 0.5);
        memory.hotspots = hotspots.clone();
        assert_eq!(
            finding(&memory).unwrap(),
            "k on d: memory-bound at 20 % of attainable (2 GOPS/s of 10 GOPS/s); 28 % of bytes \
             coalesce; k.cl:7 causes 41 % of Q; fewer bytes per operation (reuse through local \
             memory, coalesced accesses) would raise it."
        );
        // I = 1,000 OPS/B: compute-bound, and the line doing the work is named.
        let mut compute = metrics(1e12, 20.0);
        compute.hotspots = hotspots;
        let text = finding(&compute).unwrap();
        assert!(
            text.contains("compute-bound at")
                && text.contains("; k.cl:12 does 61.3 % of W; fewer operations"),
            "{text}"
        );
    }
}
