//! The benchmarks on the PoCL CPU device (Debian: pocl-opencl-icd, installed
//! by ci/test), with a scripted power sensor. Without PoCL these tests fail,
//! saying so.

use clflow_bench::{run_benchmarks, Event, Mode, Plan};
use clflow_devices::power::{PowerSample, PowerSensor, PowerSource, PowerTrace, SensorError};
use clflow_ocl::{select_device, DeviceSelector, OclDevice};

fn pocl() -> OclDevice {
    select_device(Some(&DeviceSelector::parse("Portable Computing Language")))
        .expect("PoCL must be installed (pocl-opencl-icd)")
}

/// A sensor that reports a fixed peak per benchmark and remembers what it sampled.
struct Scripted {
    watts: f64,
    running: Option<String>,
    sampled: Vec<String>,
}

impl PowerSensor for Scripted {
    fn source(&self) -> PowerSource {
        PowerSource::Hwmon
    }

    fn describe(&self) -> String {
        "scripted test sensor".into()
    }

    fn start(&mut self, kernel: &str) -> Result<(), SensorError> {
        assert!(self.running.is_none(), "started twice");
        self.running = Some(kernel.to_string());
        Ok(())
    }

    fn stop(&mut self) -> Result<PowerTrace, SensorError> {
        let kernel = self.running.take().expect("stopped without a start");
        self.watts += 1.0;
        self.sampled.push(kernel.clone());
        Ok(PowerTrace {
            source: PowerSource::Hwmon,
            sensor: self.describe(),
            kernel,
            duration_s: 0.5,
            samples: vec![PowerSample { t_s: 0.0, watts: self.watts }],
            peak_w: Some(self.watts),
            mean_w: Some(self.watts - 0.5),
            energy_j: None,
            notes: vec![],
        })
    }
}

#[test]
fn power_is_sampled_around_every_benchmark_and_peaks_per_group() {
    let device = pocl();
    let mut sensor = Scripted { watts: 100.0, running: None, sampled: vec![] };
    let mut events = Vec::new();
    let measurement = run_benchmarks(
        &device,
        Mode::Quick,
        Some("triad/"),
        Some(&mut sensor),
        &mut |event| match event {
            Event::Starting { index, total, id } => {
                events.push(format!("start {index}/{total} {id}"))
            }
            Event::Finished { index, id, .. } => events.push(format!("done {index} {id}")),
        },
    )
    .unwrap();
    // Quick widths are 1 and 4; triad on float and uint.
    let ids: Vec<&str> = measurement.results.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        ["triad/float", "triad/float4", "triad/uint", "triad/uint4"]
    );
    assert_eq!(sensor.sampled, ids);
    assert_eq!(events[0], "start 0/4 triad/float");
    assert_eq!(events[7], "done 3 triad/uint4");
    for result in &measurement.results {
        assert_eq!(result.times_ns.len(), measurement.plan.repetitions);
        assert!(result.times_ns.iter().all(|&t| t > 0));
        assert!(result.rate.best >= result.rate.median && result.rate.median > 0.0);
        // Best rate = bytes of one launch over its shortest time.
        let fastest = *result.times_ns.iter().min().unwrap() as f64;
        let expected = result.work.bytes as f64 / (fastest * 1e-9);
        assert!((result.rate.best - expected).abs() / expected < 1e-12);
    }
    let profile = measurement.to_profile("test");
    assert_eq!(profile.power.len(), 1);
    assert_eq!(profile.power[0].during, "bandwidth");
    assert_eq!(profile.power[0].source, PowerSource::Hwmon);
    assert_eq!(profile.power[0].peak_w.best, 104.0);
    assert_eq!(profile.power[0].mean_w, Some(102.0));
}

#[test]
fn compute_work_counts_the_calibrated_repetitions() {
    let device = pocl();
    let measurement = run_benchmarks(
        &device,
        Mode::Quick,
        Some("add-chain/uint4"),
        None,
        &mut |_| {},
    )
    .unwrap();
    let [result] = measurement.results.as_slice() else {
        panic!("one benchmark expected, got {:?}", measurement.results);
    };
    let clflow_bench::Shape::Compute { work_items, reps, unroll } = result.shape else {
        panic!("a compute shape expected");
    };
    assert_eq!(work_items, measurement.plan.compute_work_items);
    assert!(reps >= 1);
    assert_eq!(
        result.work.ops,
        work_items * reps * unroll.chains * unroll.rounds * 4
    );
    assert!(result.power.is_none());
}

/// The cache-resident reads run on the device, count the bytes a stream
/// read of the same size would, and become the profile's cache levels,
/// apart from B̂.
#[test]
fn resident_reads_measure_the_caches_apart_from_global_memory() {
    let device = pocl();
    let measurement =
        run_benchmarks(&device, Mode::Quick, Some("resident-"), None, &mut |_| {}).unwrap();
    assert_eq!(
        measurement.results.len(),
        2 * measurement.plan.mode.widths().len()
    );
    for result in &measurement.results {
        let clflow_bench::Shape::Stream { elements } = result.shape else {
            panic!("a stream shape expected");
        };
        let element_bytes = result.work.bytes / elements;
        assert!([4, 8, 16, 32, 64].contains(&element_bytes), "{}", result.id);
        assert!(result.rate.best > 0.0, "{}", result.id);
    }
    let profile = measurement.to_profile("test");
    assert!(profile.bandwidth.is_empty(), "B̂ is global memory's alone");
    let levels: Vec<(String, u64)> = profile
        .cache_peaks()
        .into_iter()
        .map(|(level, window, _)| (level, window))
        .collect();
    assert_eq!(
        levels,
        [("L1".to_string(), 16 << 10), ("L2".to_string(), 256 << 10)]
    );
}

/// `launch/empty`: an empty kernel on one work-group and on 1,024, timed
/// from profiling events; the profile keeps both.
#[test]
fn launch_overhead_is_measured_on_one_and_many_work_groups() {
    let device = pocl();
    let measurement =
        run_benchmarks(&device, Mode::Quick, Some("launch"), None, &mut |_| {}).unwrap();
    assert!(measurement.results.is_empty());
    let launch = measurement.launch.expect("measured");
    assert!(launch.empty_s > 0.0 && launch.empty_s < 0.01, "{launch:?}");
    assert!(
        launch.per_group_s >= 0.0 && launch.per_group_s < 1e-4,
        "{launch:?}"
    );
    assert_eq!(measurement.to_profile("test").launch, Some(launch));
    // A run of other benchmarks alone leaves it out.
    let triad =
        run_benchmarks(&device, Mode::Quick, Some("triad/float"), None, &mut |_| {}).unwrap();
    assert!(triad.launch.is_none());
    assert!(triad.costs.is_none());
}

/// `costs/...`: a dependent chain runs no faster than one operation a
/// cycle on each core (no core reaches 6 GHz), so the chain kernel was
/// neither vectorised nor overlapped; atomics, barriers and mispredicted
/// branches all cost time on a CPU, scattered loads from the last cache
/// come at a rate, and so do trips of a float sum through a call and loads
/// and stores a page apart in a work-item's walk; the profile keeps them.
#[test]
fn costs_are_measured_as_a_core_can_run_them() {
    let device = pocl();
    let plan = Plan::for_device(&device.info, Mode::Quick).unwrap();
    // One step a cost kernel, in the order planned.
    let mut done = Vec::new();
    let costs = clflow_bench::costs::measure(&device, &plan, &mut |event| {
        if let Event::Finished { id, .. } = event {
            done.push(id.to_string())
        }
    })
    .unwrap();
    let planned: Vec<String> = clflow_bench::costs::steps(&device.info, &plan)
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(done, planned);
    assert!(costs.quick);
    let cores = std::thread::available_parallelism().unwrap().get() as f64;
    assert!(
        costs.chain_ops_per_s > 1e8 && costs.chain_ops_per_s < cores * 6e9,
        "{costs:?}"
    );
    // An atomic or a barrier costs more than a dependent add.
    assert!(costs.local_atomics_per_s > 0.0 && costs.local_atomics_per_s < costs.chain_ops_per_s);
    assert!(costs.barriers_per_s > 0.0, "{costs:?}");
    let mispredicts = costs.mispredicts_per_s.expect("a CPU pays for them");
    assert!(
        mispredicts > 0.0 && mispredicts < costs.chain_ops_per_s,
        "{costs:?}"
    );
    let gathers = costs.cache_gathers_per_s.expect("measured");
    assert!(
        gathers > 0.0 && gathers < costs.chain_ops_per_s * 4.0,
        "{costs:?}"
    );
    // Timed from tables a quarter the size of the next, the last that
    // rate's; the caches above the last and the TLB hold more of the
    // smallest, which gives the most.
    let tables = costs.cache_gather_tables.expect("measured");
    assert_eq!(tables[3].per_s, gathers);
    for pair in tables.windows(2) {
        assert_eq!(pair[0].table_bytes * 4, pair[1].table_bytes, "{costs:?}");
    }
    assert!(tables[0].per_s > tables[3].per_s, "{costs:?}");
    // A trip whose float sum goes through a call and the stack takes
    // longer than the sum's add alone (3 cycles of dependent work).
    let calls = costs.carried_calls_per_s.expect("measured");
    assert!(
        calls > 0.0 && calls < costs.chain_ops_per_s / 3.0,
        "{costs:?}"
    );
    // A load a page away from the work-item's last waits longer than a
    // dependent add. (Not always longer than a scattered load from the
    // last cache: a virtual machine's driver may report the host's whole
    // shared cache, of which the table of a quarter of it outgrows the
    // machine's share.)
    let walk = costs.page_strides_per_s.expect("measured");
    assert!(walk > 0.0 && walk < costs.chain_ops_per_s, "{costs:?}");
    // So does the same walk's store, alone or after a load, at every
    // length; and a walk of 64 pages, which the TLB and caches keep for
    // the work-items after it, is faster than one of 4,096.
    let walks = costs.page_walks.expect("measured");
    assert_eq!(walks.map(|w| w.steps), [64, 256, 1024, 4096]);
    assert_eq!(walks[3].loads_per_s, walk);
    for w in walks {
        for rate in [w.loads_per_s, w.stores_per_s, w.copies_per_s] {
            assert!(rate > 0.0 && rate < costs.chain_ops_per_s, "{costs:?}");
        }
    }
    assert!(walks[0].loads_per_s > walks[3].loads_per_s, "{costs:?}");
    // A gathered local load takes a load port lane by lane: no core
    // gathers more than four a cycle.
    let lanes = costs.gathered_lanes_per_s.expect("measured");
    assert!(lanes > 1e8 && lanes < cores * 4.0 * 5e9, "{costs:?}");
    // Every math builtin's calls take time every way, a call lane by lane
    // no less than a dependent add (the vectoriser widens `exp`, 16 lanes
    // a call, which then runs faster than lane by lane, and about as fast
    // as the chain), and so does a step of the walk with a call a step.
    let builtins = costs.builtins.expect("measured");
    for rates in builtins.all() {
        assert!(rates.vector_per_s > 0.0, "{builtins:?}");
        for rate in [rates.scalar_per_s, rates.walk_per_s.expect("measured")] {
            assert!(rate > 0.0 && rate < costs.chain_ops_per_s, "{builtins:?}");
        }
    }
    // Line walks, from a quick plan's 64 KiB to its 4 MiB a work-item:
    // a shorter one stays in a nearer cache than the longest. Which is the
    // fastest varies with a quick plan's millisecond launches (64 KiB came
    // out below 256 KiB on one run), so the best of the shorter three.
    let lines = costs.line_walks.expect("measured");
    assert_eq!(lines.map(|w| w.walk_bytes >> 16), [1, 4, 16, 64]);
    assert!(lines.iter().all(|w| w.per_s > 0.0), "{lines:?}");
    let nearer = lines[..3].iter().map(|w| w.per_s).fold(0.0, f64::max);
    assert!(nearer > lines[3].per_s, "{lines:?}");
    assert!(
        builtins.exp.vector_per_s > builtins.exp.scalar_per_s,
        "{builtins:?}"
    );
    // A step of a walk with a kept call a step takes a call and a return
    // and at least one access a page away: slower than a dependent add.
    let calls = costs.call_walks.expect("measured");
    for rate in [calls.copies_per_s, calls.stores_per_s] {
        assert!(rate > 0.0 && rate < costs.chain_ops_per_s, "{calls:?}");
    }
    // Column walks of 1, 4 and 16 lines a visit, over a quick plan's 16
    // MiB: each line's first load takes at least a dependent add.
    let columns = costs.column_walks.expect("measured");
    assert_eq!(columns.map(|w| w.lines), [1, 4, 16]);
    for w in columns {
        assert!(
            w.per_s > 0.0 && w.per_s < costs.chain_ops_per_s,
            "{columns:?}"
        );
    }
}
