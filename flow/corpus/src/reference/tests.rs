//! The references on tiny launches whose outputs are worked out by hand,
//! and the checker's verdicts on right, wrong and ill-fitting outputs.

use crate::args::to_bytes;
use crate::{check_outputs, expected_outputs, Case, CheckError, Expected};
use clflow_core::Diagnostic;
use clflow_core::{Access, ArgValue, ElementType, Launch, LaunchArg, NdRange, ScalarType};

fn buffer<T: crate::args::Element>(name: &str, ty: ScalarType, values: &[T]) -> LaunchArg {
    LaunchArg {
        name: Some(name.into()),
        value: ArgValue::Buffer {
            ty: ElementType::scalar(ty),
            access: Access::ReadWrite,
            bytes: to_bytes(values),
        },
    }
}

fn scalar<T: crate::args::Element>(name: &str, value: T) -> LaunchArg {
    LaunchArg {
        name: Some(name.into()),
        value: ArgValue::Scalar { bytes: to_bytes(&[value]) },
    }
}

fn launch(case: Case, global: [u64; 3], local: Option<[u64; 3]>, args: Vec<LaunchArg>) -> Launch {
    let dims = if global[2] > 1 {
        3
    } else if global[1] > 1 {
        2
    } else {
        1
    };
    Launch {
        kernel: case.kernel().into(),
        range: NdRange { dims, global, local, offset: [0; 3] },
        args,
    }
}

/// The one output's expected values as f64 (exact or not).
fn output_values(case: Case, launch: &Launch) -> Vec<f64> {
    let outputs = expected_outputs(case, launch).unwrap();
    assert_eq!(outputs.len(), 1);
    match &outputs[0].expected {
        Expected::Within { values, .. } => values.clone(),
        Expected::Exact { scalar: ScalarType::Double, bytes } => {
            crate::args::from_bytes::<f64>(bytes)
        }
        other => panic!("unexpected {other:?}"),
    }
}

fn sgemm_3x3(case: Case) -> Launch {
    let a: Vec<f32> = (1..=9).map(|v| v as f32).collect();
    let b: Vec<f32> = vec![1.0, 0.0, 2.0, 0.0, 1.0, 0.0, -1.0, 0.0, 1.0];
    launch(
        case,
        [3, 3, 1],
        None,
        vec![
            buffer("A", ScalarType::Float, &a),
            buffer("B", ScalarType::Float, &b),
            buffer("C", ScalarType::Float, &[0.0f32; 9]),
            scalar("n", 3u32),
        ],
    )
}

#[test]
fn sgemm_matches_a_naive_loop_and_a_hand_product() {
    let launch = sgemm_3x3(Case::Sgemm);
    // [1 2 3; 4 5 6; 7 8 9] x [1 0 2; 0 1 0; -1 0 1], worked by hand.
    let by_hand = [-2.0, 2.0, 5.0, -2.0, 5.0, 14.0, -2.0, 8.0, 23.0];
    let mut naive = [0.0f64; 9];
    let (a, b): (Vec<f64>, Vec<f64>) = (
        (1..=9).map(f64::from).collect(),
        vec![1.0, 0.0, 2.0, 0.0, 1.0, 0.0, -1.0, 0.0, 1.0],
    );
    for i in 0..3 {
        for j in 0..3 {
            for k in 0..3 {
                naive[i * 3 + j] += a[i * 3 + k] * b[k * 3 + j];
            }
        }
    }
    assert_eq!(naive, by_hand);
    assert_eq!(output_values(Case::Sgemm, &launch), by_hand);
}

#[test]
fn sgemm_tiled_refuses_a_size_that_is_not_whole_tiles() {
    let error = expected_outputs(Case::SgemmTiled, &sgemm_3x3(Case::SgemmTiled)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "sgemm-tiled: arg 3 (n): n = 3 is not a multiple of the tile size 16"
    );
}

#[test]
fn lookup3_hashes_the_published_test_vector_keys() {
    let mut keys = crate::lookup3::KeySet::default();
    keys.push(b"");
    keys.push(b"Four score and seven years ago");
    let launch = |initval: u32| {
        launch(
            Case::Lookup3,
            [2, 1, 1],
            None,
            vec![
                buffer("key_words", ScalarType::UInt, &keys.words),
                buffer("key_offsets", ScalarType::UInt, &keys.offsets),
                buffer("key_lengths", ScalarType::UInt, &keys.lengths),
                scalar("initval", initval),
                buffer("hashes", ScalarType::UInt, &[0u32; 2]),
            ],
        )
    };
    let hashes = |initval| {
        let outputs = expected_outputs(Case::Lookup3, &launch(initval)).unwrap();
        crate::args::from_bytes::<u32>(outputs[0].expected.exact_bytes().unwrap())
    };
    assert_eq!(hashes(0), [0xdead_beef, 0x1777_0551]);
    assert_eq!(hashes(1)[1], 0xcd62_8161);

    // The checker accepts the right hashes and names the first wrong one.
    let right = Some(to_bytes(&[0xdead_beef_u32, 0x1777_0551]));
    let mut produced = vec![None, None, None, None, right];
    assert_eq!(check_outputs(Case::Lookup3, &launch(0), &produced), Ok(()));
    produced[4] = Some(to_bytes(&[0xdead_beef_u32, 0x1777_0552]));
    let error = check_outputs(Case::Lookup3, &launch(0), &produced).unwrap_err();
    assert_eq!(
        error.to_string(),
        "lookup3: arg 4 (hashes) element 1: expected 393676113 (0x17770551), got 393676114 (0x17770552)"
    );
    assert_eq!(error.kind(), clflow_core::FailureKind::Analysis);
    produced[4] = None;
    assert!(matches!(
        check_outputs(Case::Lookup3, &launch(0), &produced),
        Err(CheckError::MissingOutput { .. })
    ));
}

#[test]
fn lookup3_refuses_a_key_that_runs_past_the_words() {
    let launch = launch(
        Case::Lookup3,
        [1, 1, 1],
        None,
        vec![
            buffer("key_words", ScalarType::UInt, &[0u32; 2]),
            buffer("key_offsets", ScalarType::UInt, &[1u32]),
            buffer("key_lengths", ScalarType::UInt, &[5u32]),
            scalar("initval", 0u32),
            buffer("hashes", ScalarType::UInt, &[0u32]),
        ],
    );
    let error = expected_outputs(Case::Lookup3, &launch).unwrap_err();
    assert_eq!(
        error.to_string(),
        "lookup3: arg 0 (key_words): key 0 (5 bytes at word 1) ends past the 2 words"
    );
    assert_eq!(error.kind(), clflow_core::FailureKind::Input);
}

#[test]
fn the_committed_lookup3_data_is_the_generators_seed_1() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../../kernels/lookup3/data/");
    let read = |name: &str| {
        crate::args::from_bytes::<u32>(&std::fs::read(format!("{data}{name}")).unwrap())
    };
    let keys = crate::keys::generate(1, 4096);
    assert_eq!(read("words.bin"), keys.words);
    assert_eq!(read("offsets.bin"), keys.offsets);
    assert_eq!(read("lengths.bin"), keys.lengths);
}

#[test]
fn a_launch_that_does_not_fit_names_the_argument() {
    let wrong_count = launch(Case::Vadd, [4, 1, 1], None, vec![scalar("n", 4u32)]);
    assert_eq!(
        expected_outputs(Case::Vadd, &wrong_count)
            .unwrap_err()
            .to_string(),
        "vadd: arg 1: the launch has 1 arguments, kernel `vadd` takes 4"
    );
    let short = launch(
        Case::Vadd,
        [4, 1, 1],
        None,
        vec![
            buffer("a", ScalarType::Float, &[1.0f32; 4]),
            buffer("b", ScalarType::Float, &[1.0f32; 3]),
            buffer("c", ScalarType::Float, &[0.0f32; 4]),
            scalar("n", 4u32),
        ],
    );
    assert_eq!(
        expected_outputs(Case::Vadd, &short)
            .unwrap_err()
            .to_string(),
        "vadd: arg 1 (b): has 3 elements but work-items up to 3 read or write it"
    );
    let mut wrong_kernel = short.clone();
    wrong_kernel.kernel = "hash".into();
    assert!(expected_outputs(Case::Vadd, &wrong_kernel)
        .unwrap_err()
        .to_string()
        .contains("the case's kernel is `vadd`"));
}

#[test]
fn vadd_leaves_elements_past_n_as_they_were() {
    let launch = launch(
        Case::Vadd,
        [4, 1, 1],
        None,
        vec![
            buffer("a", ScalarType::Float, &[1.0f32, 2.0, 3.0, 4.0]),
            buffer("b", ScalarType::Float, &[0.5f32, 0.25, 0.0, 9.0]),
            buffer("c", ScalarType::Float, &[7.0f32; 4]),
            scalar("n", 3u32),
        ],
    );
    assert_eq!(output_values(Case::Vadd, &launch), [1.5, 2.25, 3.0, 7.0]);
}

#[test]
fn reduction_sums_each_work_group() {
    let input: Vec<f32> = (1..=8).map(|v| v as f32).collect();
    let launch = launch(
        Case::Reduction,
        [8, 1, 1],
        Some([4, 1, 1]),
        vec![
            buffer("in", ScalarType::Float, &input),
            scalar("n", 7u32),
            buffer("partial", ScalarType::Float, &[0.0f32; 2]),
            LaunchArg {
                name: Some("scratch".into()),
                value: ArgValue::Local { bytes: 16 },
            },
        ],
    );
    // Groups {1,2,3,4} and {5,6,7} (8 is past n).
    assert_eq!(output_values(Case::Reduction, &launch), [10.0, 18.0]);
}

#[test]
fn stencil_averages_the_interior_and_copies_the_boundary() {
    let grid: Vec<f32> = (0..9).map(|v| v as f32).collect();
    let launch = launch(
        Case::Stencil,
        [3, 3, 1],
        None,
        vec![
            buffer("in", ScalarType::Float, &grid),
            buffer("out", ScalarType::Float, &[0.0f32; 9]),
            scalar("nx", 3u32),
            scalar("ny", 3u32),
            scalar("c0", 0.5f32),
            scalar("c1", 0.125f32),
        ],
    );
    // Centre 4, neighbours 1 + 7 + 3 + 5 = 16: 0.5 * 4 + 0.125 * 16 = 4.
    let mut expected: Vec<f64> = (0..9).map(f64::from).collect();
    expected[4] = 4.0;
    assert_eq!(output_values(Case::Stencil, &launch), expected);
}

#[test]
fn spmv_gathers_by_column_and_refuses_a_column_past_x() {
    let args = |col_idx: &[u32]| {
        vec![
            scalar("rows", 2u32),
            buffer("row_ptr", ScalarType::UInt, &[0u32, 2, 3]),
            buffer("col_idx", ScalarType::UInt, col_idx),
            buffer("values", ScalarType::Float, &[1.0f32, 2.0, 3.0]),
            buffer("x", ScalarType::Float, &[10.0f32, 20.0]),
            buffer("y", ScalarType::Float, &[0.0f32; 2]),
        ]
    };
    let good = launch(Case::Spmv, [2, 1, 1], None, args(&[1, 0, 1]));
    assert_eq!(output_values(Case::Spmv, &good), [40.0, 60.0]);
    let bad = launch(Case::Spmv, [2, 1, 1], None, args(&[1, 0, 2]));
    assert_eq!(
        expected_outputs(Case::Spmv, &bad).unwrap_err().to_string(),
        "spmv: arg 2 (col_idx): non-zero 2 (row 1) names column 2, x has 2 elements"
    );
}

#[test]
fn histogram_adds_to_what_the_bins_held() {
    let mut hist = vec![0u32; 256];
    hist[7] = 100;
    let launch = launch(
        Case::Histogram,
        [2, 1, 1],
        Some([2, 1, 1]),
        vec![
            buffer("data", ScalarType::UChar, &[7u8, 7, 255, 0, 7]),
            scalar("n", 4u32),
            buffer("hist", ScalarType::UInt, &hist),
        ],
    );
    let outputs = expected_outputs(Case::Histogram, &launch).unwrap();
    let bins = crate::args::from_bytes::<u32>(outputs[0].expected.exact_bytes().unwrap());
    // The fifth byte is past n.
    assert_eq!(
        (bins[7], bins[255], bins[0], bins.iter().sum::<u32>()),
        (102, 1, 1, 104)
    );
}

#[test]
fn daxpy_is_exact_and_triad_counts_four_lanes() {
    let daxpy = launch(
        Case::Daxpy,
        [2, 1, 1],
        None,
        vec![
            scalar("alpha", 2.0f64),
            buffer("x", ScalarType::Double, &[1.5f64, -1.0]),
            buffer("y", ScalarType::Double, &[0.25f64, 4.0]),
            scalar("n", 2u32),
        ],
    );
    assert_eq!(output_values(Case::Daxpy, &daxpy), [3.25, 2.0]);

    let triad = launch(
        Case::Triad,
        [1, 1, 1],
        None,
        vec![
            buffer("a", ScalarType::Float, &[0.0f32; 4]),
            buffer("b", ScalarType::Float, &[1.0f32, 2.0, 3.0, 4.0]),
            buffer("c", ScalarType::Float, &[1.0f32, 1.0, 0.5, 0.0]),
            scalar("scalar", 2.0f32),
        ],
    );
    assert_eq!(output_values(Case::Triad, &triad), [3.0, 4.0, 4.0, 4.0]);
}

#[test]
fn nbody_two_bodies_pull_each_other() {
    // Unit masses one apart on x, at rest, no softening, dt = 0.5:
    // a = +-1, v' = +-0.5, p' = p +- 0.25.
    let bodies = [
        0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0,
    ];
    let launch = launch(
        Case::Nbody,
        [2, 1, 1],
        None,
        vec![
            buffer("bodies", ScalarType::Float, &bodies),
            buffer("moved", ScalarType::Float, &[0.0f32; 16]),
            scalar("n", 2u32),
            scalar("dt", 0.5f32),
            scalar("softening2", 0.0f32),
        ],
    );
    // The self-interaction is 0/0 without softening: the kernel needs
    // softening2 > 0, and the reference says NaN just as the device would.
    assert!(output_values(Case::Nbody, &launch)[0].is_nan());
    let mut softened = launch.clone();
    softened.args[4] = scalar("softening2", 1e-30f32);
    let moved = output_values(Case::Nbody, &softened);
    let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert!(near(moved[0], 0.25) && near(moved[4], 0.5) && moved[3] == 1.0 && moved[7] == 0.0);
    assert!(near(moved[8], 0.75) && near(moved[12], -0.5));
}

#[test]
fn smith_waterman_scores_each_query_and_refuses_bad_bases() {
    let args = |queries: &[u8]| {
        vec![
            buffer("queries", ScalarType::UChar, queries),
            scalar("query_len", 4u32),
            buffer("database", ScalarType::UChar, &[3u8, 3, 0, 1, 2, 3, 3, 3]),
            scalar("db_len", 8u32),
            buffer("scores", ScalarType::UShort, &[0u16; 2]),
        ]
    };
    let good = launch(
        Case::SmithWaterman,
        [2, 1, 1],
        None,
        args(&[0, 1, 2, 3, 1, 1, 1, 1]),
    );
    let outputs = expected_outputs(Case::SmithWaterman, &good).unwrap();
    // ACGT is in the database (20); CCCC matches one C (5).
    assert_eq!(
        crate::args::from_bytes::<u16>(outputs[0].expected.exact_bytes().unwrap()),
        [20, 5]
    );
    let bad = launch(
        Case::SmithWaterman,
        [2, 1, 1],
        None,
        args(&[0, 1, 2, 3, 1, 9, 1, 1]),
    );
    assert_eq!(
        expected_outputs(Case::SmithWaterman, &bad)
            .unwrap_err()
            .to_string(),
        "smith-waterman: arg 0 (queries): query 1 base 1 is 9; bases are coded 0-3"
    );
}

#[test]
fn mc_pi_counts_per_work_item() {
    let launch = launch(
        Case::McPi,
        [4, 1, 1],
        None,
        vec![
            scalar("seed", 5u64),
            scalar("samples", 100u32),
            buffer("hits", ScalarType::UInt, &[0u32; 4]),
        ],
    );
    let outputs = expected_outputs(Case::McPi, &launch).unwrap();
    let hits = crate::args::from_bytes::<u32>(outputs[0].expected.exact_bytes().unwrap());
    let by_function: Vec<u32> = (0..4).map(|g| super::mc_pi::hits(5, 100, g)).collect();
    assert_eq!(hits, by_function);
    assert!(hits.iter().all(|&h| (60..=95).contains(&h)), "{hits:?}");
}

#[test]
fn gram_schmidt_factors_a_hand_worked_matrix_with_growing_bounds() {
    // A = [3 0; 4 5] (column-major [3, 4, 0, 5]): q0 = (0.6, 0.8), r00 = 5;
    // r01 = q0 . (0, 5) = 4, (0, 5) - 4 q0 = (-2.4, 1.8), r11 = 3,
    // q1 = (-0.8, 0.6). R's lower triangle keeps what it held (7).
    let launch = launch(
        Case::GramSchmidt,
        [1, 1, 1],
        None,
        vec![
            buffer("Q", ScalarType::Float, &[3.0f32, 4.0, 0.0, 5.0]),
            buffer("R", ScalarType::Float, &[7.0f32; 4]),
            scalar("rows", 2u32),
            scalar("cols", 2u32),
        ],
    );
    let outputs = expected_outputs(Case::GramSchmidt, &launch).unwrap();
    let within = |k: usize| match &outputs[k].expected {
        Expected::Within { values, bounds, .. } => (values.clone(), bounds.clone()),
        other => panic!("unexpected {other:?}"),
    };
    let (q, q_bounds) = within(0);
    let (r, r_bounds) = within(1);
    let close =
        |got: &[f64], want: &[f64]| got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-12);
    assert!(close(&q, &[0.6, 0.8, -0.8, 0.6]), "{q:?}");
    assert!(close(&r, &[5.0, 4.0, 7.0, 3.0]), "{r:?}");
    // The untouched element allows no error beyond a flushed subnormal; the
    // last column, computed from the first, allows more than the first.
    assert!(r_bounds[2] < 1e-37);
    assert!(
        q_bounds[0] > 0.0 && q_bounds[2] > q_bounds[0],
        "{q_bounds:?}"
    );
    assert!(q_bounds.iter().all(|&b| b < 1e-5), "{q_bounds:?}");

    let wrong = vec![
        Some(to_bytes(&[0.6f32, 0.8, -0.8, 0.61])),
        Some(to_bytes(&[5.0f32, 4.0, 7.0, 3.0])),
    ];
    assert!(check_outputs(Case::GramSchmidt, &launch, &wrong).is_err());
    let right = vec![
        Some(to_bytes(&[0.6f32, 0.8, -0.8, 0.6])),
        Some(to_bytes(&[5.0f32, 4.0, 7.0, 3.0])),
    ];
    check_outputs(Case::GramSchmidt, &launch, &right).unwrap();
}
