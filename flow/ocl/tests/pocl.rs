//! Discovery and launches on the PoCL CPU device (Debian: pocl-opencl-icd,
//! installed by ci/test). Without it these tests fail, saying so.

mod common;

use clflow_core::Diagnostic;
use clflow_core::{Access, ArgValue, FailureKind, Launch, LaunchArg, NdRange, ScalarType};
use clflow_ocl::{
    discover, run_launch, select_device, time_repeated, DeviceKind, DeviceSelector, OclError,
    PreparedLaunch, ProgramSource, Session,
};
use common::*;

fn run(source: &str, launch: &Launch) -> clflow_ocl::Result<clflow_ocl::LaunchResult> {
    run_launch(
        &pocl(),
        &ProgramSource::from_text("test.cl", source, ""),
        launch,
    )
}

fn uints(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn discovery_describes_the_pocl_cpu_device() {
    let devices = discover().expect("PoCL must be installed (pocl-opencl-icd)");
    let pocl = devices
        .iter()
        .find(|d| d.platform_name == "Portable Computing Language")
        .unwrap_or_else(|| panic!("no PoCL device among {devices:#?}"));
    assert_eq!(pocl.kind, DeviceKind::Cpu);
    assert!(pocl.compute_units >= 1);
    assert!(pocl.global_mem_bytes > 0 && pocl.local_mem_bytes > 0);
    assert!(pocl.max_work_group_size >= 1);
    assert!(
        pocl.opencl_c_version.starts_with("OpenCL C "),
        "{}",
        pocl.opencl_c_version
    );
    assert!(pocl
        .extensions
        .iter()
        .any(|e| e == "cl_khr_global_int32_base_atomics"));
    assert_eq!(devices.iter().position(|d| d == pocl), Some(pocl.index));
    // The facts travel as JSON to later stages.
    let json = serde_json::to_string(&devices).unwrap();
    assert_eq!(
        serde_json::from_str::<Vec<clflow_ocl::DeviceInfo>>(&json).unwrap(),
        devices
    );
}

#[test]
fn vadd_on_pocl_gives_the_sums_and_a_kernel_time() {
    let n = 1000; // not a multiple of the local size the runtime picks
    let result = run(VADD, &vadd_launch(n, None)).unwrap();
    assert_eq!(
        floats(result.outputs[2].as_ref().unwrap()),
        vadd_expected(n)
    );
    assert_eq!(
        result.outputs[0], None,
        "read-only buffers are not read back"
    );
    assert_eq!(result.outputs[3], None, "scalars have no output");
    assert!(result.kernel_ns > 0);
    assert!(result.build_ns > 0);
}

#[test]
fn local_memory_null_pointers_offsets_and_two_dimensions() {
    // Each work-group sums its ids through local memory; the optional
    // `bias` buffer is NULL, which the kernel must see as 0.
    let source = "
__kernel void sums(__global uint *out, __local uint *scratch,
                   __global const uint *bias, const ulong width)
{
    size_t x = get_global_id(0), y = get_global_id(1);
    size_t lx = get_local_id(0);
    scratch[lx] = (uint)(x + 100 * y);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lx == 0) {
        uint s = bias ? bias[0] : 0u;
        for (size_t k = 0; k < get_local_size(0); k++) s += scratch[k];
        out[(y - get_global_offset(1)) * width + (x - get_global_offset(0)) / 4] = s;
    }
}";
    let launch = Launch {
        kernel: "sums".into(),
        range: NdRange {
            dims: 2,
            global: [8, 3, 1],
            local: Some([4, 1, 1]),
            offset: [4, 10, 0],
        },
        args: vec![
            buffer(ScalarType::UInt, Access::WriteOnly, vec![0; 6 * 4]),
            LaunchArg { name: None, value: ArgValue::Local { bytes: 16 } },
            LaunchArg { name: Some("bias".into()), value: ArgValue::NullPointer },
            scalar("width", 2u64.to_le_bytes().to_vec()),
        ],
    };
    let result = run(source, &launch).unwrap();
    // Group of x = 4..8 sums to 22 + 400y, x = 8..12 to 38 + 400y.
    let expected: Vec<u32> = (10..13)
        .flat_map(|y| [22 + 400 * y, 38 + 400 * y])
        .collect();
    assert_eq!(uints(result.outputs[0].as_ref().unwrap()), expected);
}

#[test]
fn repeated_launches_restart_from_the_launch_inputs() {
    let source = "__kernel void bump(__global uint *x) { x[get_global_id(0)] += 1; }";
    let launch = Launch {
        kernel: "bump".into(),
        range: range_1d(16, Some(4)),
        args: vec![buffer(
            ScalarType::UInt,
            Access::ReadWrite,
            (0..16u32).flat_map(u32::to_le_bytes).collect(),
        )],
    };
    let device = pocl();
    let program = ProgramSource::from_text("bump.cl", source, "");
    let mut prepared = PreparedLaunch::new(&device, &program, &launch).unwrap();
    let times = prepared.time_repeated(4).unwrap();
    assert_eq!(times.len(), 4);
    assert!(times.iter().all(|&t| t > 0), "{times:?}");
    let after = uints(prepared.read_outputs().unwrap()[0].as_ref().unwrap());
    assert_eq!(after, (1..17).collect::<Vec<u32>>());

    let timings = time_repeated(&device, &program, &launch, 2, 5).unwrap();
    assert_eq!((timings.warmup_ns.len(), timings.runs_ns.len()), (2, 5));
    assert!(timings.runs_ns.iter().all(|&t| t > 0));
}

#[test]
fn a_build_error_carries_the_log_naming_the_line() {
    let source = "__kernel void broken(__global int *x)\n{\n    x[0] = undeclared;\n}\n";
    let err = run(
        source,
        &Launch {
            kernel: "broken".into(),
            range: range_1d(1, None),
            args: vec![],
        },
    )
    .unwrap_err();
    let OclError::Build { log, origin, .. } = &err else {
        panic!("expected a build error, got {err}");
    };
    assert_eq!(origin, "test.cl");
    assert!(log.contains(":3:") && log.contains("undeclared"), "{log}");
    let message = err.to_string();
    assert!(
        message.starts_with("test.cl: build failed on Portable Computing Language / "),
        "{message}"
    );
    assert!(
        message.contains(":3:") && message.contains("error"),
        "{message}"
    );
    assert_eq!(err.kind(), FailureKind::Input);
}

#[test]
fn launch_mismatches_are_named() {
    let mut launch = vadd_launch(8, None);
    launch.kernel = "vad".into();
    let err = run(VADD, &launch).unwrap_err();
    assert_eq!(
        err.to_string(),
        "test.cl: no kernel named 'vad' (the program has: vadd)"
    );

    let mut launch = vadd_launch(8, None);
    launch.args.pop();
    let err = run(VADD, &launch).unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel 'vadd': takes 4 arguments but the launch gives 3"
    );

    // `n` is a uint: eight bytes are refused, and the message names the argument.
    let mut launch = vadd_launch(8, None);
    launch.args[3] = scalar("n", 8u64.to_le_bytes().to_vec());
    let err = run(VADD, &launch).unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel 'vadd': setting arg 3 (n): CL_INVALID_ARG_SIZE (-51)"
    );
    assert_eq!(err.kind(), FailureKind::Input);

    // A local size that does not divide the global size: PoCL 3.1 takes
    // no non-uniform work-groups, and says so through clflow.
    let err = run(VADD, &vadd_launch(10, Some(4))).unwrap_err();
    assert_eq!(
        err.to_string(),
        "kernel 'vadd': the local size [4] leaves a last, smaller work-group of global size \
         [10], and this device takes no non-uniform work-groups (an OpenCL 2.0 feature, \
         optional in 3.0)"
    );
}

#[test]
fn a_bad_selector_lists_the_candidates() {
    let err = select_device(Some(&DeviceSelector::parse("no such accelerator"))).unwrap_err();
    let OclError::Selector { candidates, .. } = &err else {
        panic!("expected a selector error, got {err}");
    };
    assert!(
        candidates
            .iter()
            .any(|c| c.contains("Portable Computing Language / ")),
        "{candidates:?}"
    );
    assert!(err
        .to_string()
        .starts_with("device selector 'no such accelerator' matches no device; devices: "));
    assert_eq!(err.kind(), FailureKind::Input);
    let err = select_device(Some(&DeviceSelector::Index(999))).unwrap_err();
    assert!(err.to_string().contains("is out of range"), "{err}");
}

#[test]
fn launches_in_one_session_share_its_buffers() {
    // One kernel doubles the shared array in place; another copies it out.
    let source = ProgramSource::from_text(
        "shared.cl",
        "__kernel void twice(__global uint *a) { a[get_global_id(0)] *= 2u; }\n\
         __kernel void out(__global const uint *a, __global uint *o) \
         { o[get_global_id(0)] = a[get_global_id(0)] + 1u; }",
        "",
    );
    let device = pocl();
    let session = Session::new(&device).unwrap();
    let values: Vec<u8> = (1u32..=8).flat_map(u32::to_le_bytes).collect();
    let shared = session.buffer(&values, "a").unwrap();
    let twice = Launch {
        kernel: "twice".into(),
        range: range_1d(8, None),
        args: vec![buffer(ScalarType::UInt, Access::ReadWrite, Vec::new())],
    };
    let mut doubling = PreparedLaunch::on(&session, &source, &twice, &[(0, &shared)]).unwrap();
    // A shared buffer is not restored between launches: twice is four times.
    assert_eq!(doubling.time_repeated(2).unwrap().len(), 2);
    assert_eq!(
        doubling.read_outputs().unwrap(),
        [None],
        "the caller's buffer"
    );
    let out = Launch {
        kernel: "out".into(),
        range: range_1d(8, None),
        args: vec![
            buffer(ScalarType::UInt, Access::ReadOnly, Vec::new()),
            buffer(ScalarType::UInt, Access::WriteOnly, vec![0; 32]),
        ],
    };
    let mut copying = PreparedLaunch::on(&session, &source, &out, &[(0, &shared)]).unwrap();
    copying.launch().unwrap();
    let outputs = copying.read_outputs().unwrap();
    assert_eq!(
        uints(outputs[1].as_ref().unwrap()),
        (1u32..=8).map(|v| 4 * v + 1).collect::<Vec<_>>()
    );
    // Only a buffer argument takes a shared buffer.
    let scalar = Launch {
        kernel: "twice".into(),
        range: range_1d(8, None),
        args: vec![scalar("a", 7u32.to_le_bytes().to_vec())],
    };
    let err = PreparedLaunch::on(&session, &source, &scalar, &[(0, &shared)])
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("argument 0 is given a shared buffer but is no buffer"),
        "{err}"
    );
}

/// Where the time of a first launch goes on PoCL: build, first launch
/// (PoCL specialises the kernel for the work-group size then), later runs.
#[test]
#[ignore = "a measurement: --ignored --nocapture, POCL_KERNEL_CACHE=0 for a cold compiler"]
fn vadd_timing_profile() {
    let n = 1 << 22;
    let device = pocl();
    let source = ProgramSource::from_text("vadd.cl", VADD, "");
    let launch = vadd_launch(n, None);
    let mut prepared = PreparedLaunch::new(&device, &source, &launch).unwrap();
    let started = std::time::Instant::now();
    let first_ns = prepared.launch().unwrap();
    let first_wall = started.elapsed();
    let started = std::time::Instant::now();
    let runs = prepared.time_repeated(10).unwrap();
    let runs_wall = started.elapsed() / 10;
    assert_eq!(runs.len(), 10);
    let mut sorted = runs.clone();
    sorted.sort_unstable();
    eprintln!(
        "vadd n={n}: build {:?}, first launch {:.3} ms kernel / {:?} wall, later median {:.3} ms, min {:.3} ms, mean wall {:?}",
        prepared.build_time,
        first_ns as f64 / 1e6,
        first_wall,
        sorted[5] as f64 / 1e6,
        sorted[0] as f64 / 1e6,
        runs_wall
    );
}
