//! Launches shared by the runtime tests.
#![allow(dead_code)] // each test binary uses its own part

use clflow_core::{Access, ArgValue, ElementType, Launch, LaunchArg, NdRange, ScalarType};
use clflow_ocl::{select_device, DeviceSelector, OclDevice};

pub const VADD: &str = "\
__kernel void vadd(__global const float *a, __global const float *b,
                   __global float *c, const uint n)
{
    size_t i = get_global_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}
";

pub fn float_bytes(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

pub fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn buffer(scalar: ScalarType, access: Access, bytes: Vec<u8>) -> LaunchArg {
    LaunchArg {
        name: None,
        value: ArgValue::Buffer { ty: ElementType::scalar(scalar), access, bytes },
    }
}

pub fn scalar(name: &str, bytes: Vec<u8>) -> LaunchArg {
    LaunchArg { name: Some(name.into()), value: ArgValue::Scalar { bytes } }
}

pub fn range_1d(global: u64, local: Option<u64>) -> NdRange {
    NdRange {
        dims: 1,
        global: [global, 1, 1],
        local: local.map(|l| [l, 1, 1]),
        offset: [0; 3],
    }
}

/// c = a + b over n floats with a[i] = i and b[i] = 2i + 0.5.
pub fn vadd_launch(n: u32, local: Option<u64>) -> Launch {
    Launch {
        kernel: "vadd".into(),
        range: range_1d(n as u64, local),
        args: vec![
            buffer(
                ScalarType::Float,
                Access::ReadOnly,
                float_bytes((0..n).map(|i| i as f32)),
            ),
            buffer(
                ScalarType::Float,
                Access::ReadOnly,
                float_bytes((0..n).map(|i| 2.0 * i as f32 + 0.5)),
            ),
            buffer(
                ScalarType::Float,
                Access::WriteOnly,
                vec![0; n as usize * 4],
            ),
            scalar("n", n.to_le_bytes().to_vec()),
        ],
    }
}

pub fn vadd_expected(n: u32) -> Vec<f32> {
    (0..n).map(|i| 3.0 * i as f32 + 0.5).collect()
}

/// The PoCL CPU device; the tests need it and say so loudly when it is missing.
pub fn pocl() -> OclDevice {
    select_device(Some(&DeviceSelector::parse("portable computing language"))).unwrap_or_else(
        |err| {
            panic!("these tests need PoCL (Debian: pocl-opencl-icd, installed by ci/test): {err}")
        },
    )
}
