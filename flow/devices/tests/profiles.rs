//! The committed datasheet profiles, user overrides, and matching OpenCL
//! device names to profiles.

mod common;

use clflow_core::Diagnostic;
use clflow_core::FailureKind;
use clflow_devices::{DeviceClass, DevicesError, Metric, ProfileCatalog, ProfileOrigin};

fn catalog() -> ProfileCatalog {
    ProfileCatalog::embedded().unwrap()
}

fn value(catalog: &ProfileCatalog, id: &str, table: &str, metric: Metric) -> Option<f64> {
    let profile = catalog.get(id).unwrap();
    let figures = match table {
        "datasheet" => &profile.datasheet,
        _ => &profile.measured,
    };
    figures.get(metric).map(|f| f.value)
}

#[test]
fn the_papers_devices_carry_table_1() {
    let c = catalog();
    // (device, F̄_f, F̄_i, B̄, P̄, F̂_f, F̂_i, B̂, P̂) from the paper's Table 1.
    let table_1 = [
        (
            "tesla-k20",
            [3524.0, 587.0, 208.0, 225.0],
            [2903.0, 585.0, 143.0, 225.0],
        ),
        (
            "xeon-phi-5110p",
            [1988.0, 1988.0, 320.0, 245.0],
            [1189.0, 946.0, 119.0, 245.0],
        ),
        (
            "adm-pcie-7v3",
            [738.0, 8880.0, 21.0, 25.0],
            [200.0, 3032.0, 8.5, 25.0],
        ),
    ];
    for (id, theoretical, measured) in table_1 {
        let got_theoretical = [
            Metric::Fp32,
            Metric::Int32,
            Metric::MemoryBandwidth,
            Metric::Tdp,
        ]
        .map(|m| value(&c, id, "datasheet", m).unwrap());
        let got_measured = [
            Metric::Fp32,
            Metric::Int32,
            Metric::MemoryBandwidth,
            Metric::Power,
        ]
        .map(|m| value(&c, id, "measured", m).unwrap());
        assert_eq!(got_theoretical, theoretical, "{id} datasheet");
        assert_eq!(got_measured, measured, "{id} measured");
    }
    let k20 = c.get("tesla-k20").unwrap();
    assert_eq!(k20.class, DeviceClass::Gpu);
    assert_eq!(k20.origin, ProfileOrigin::Embedded);
    assert_eq!(k20.datasheet.fp32_ops_per_s(), Some(3.524e12));
    assert_eq!(k20.datasheet.memory_bandwidth_bytes_per_s(), Some(208e9));
    assert_eq!(k20.tdp_watts(), Some(225.0));
    assert_eq!(
        k20.datasheet.get(Metric::Fp32).unwrap().source,
        "paper Table 1"
    );
}

#[test]
fn every_committed_profile_has_a_bandwidth_and_a_power() {
    let c = catalog();
    assert!(c.profiles().len() >= 20, "{} profiles", c.profiles().len());
    for p in c.profiles() {
        assert!(
            p.datasheet.memory_bandwidth_bytes_per_s().is_some(),
            "{}",
            p.id
        );
        assert!(p.tdp_watts().is_some(), "{}", p.id);
    }
}

#[test]
fn device_names_find_the_most_specific_profile() {
    let c = catalog();
    let id = |name: &str| c.match_name(name).map(|m| m.profile.id.clone());
    // The names NVIDIA's OpenCL driver reports.
    assert_eq!(id("NVIDIA H100 PCIe").as_deref(), Some("nvidia-h100-pcie"));
    assert_eq!(
        id("NVIDIA H100 80GB HBM3").as_deref(),
        Some("nvidia-h100-sxm")
    );
    assert_eq!(
        id("NVIDIA A100-SXM4-80GB").as_deref(),
        Some("nvidia-a100-sxm")
    );
    assert_eq!(id("NVIDIA A100-SXM4-40GB"), None);
    assert_eq!(
        id("Tesla V100-PCIE-32GB").as_deref(),
        Some("nvidia-v100-pcie")
    );
    assert_eq!(
        id("Tesla V100-SXM2-16GB").as_deref(),
        Some("nvidia-v100-sxm2")
    );
    // "Tesla K20X" is longer than "Tesla K20", so it wins for a K20Xm.
    assert_eq!(id("Tesla K20Xm").as_deref(), Some("tesla-k20x"));
    assert_eq!(id("tesla k20c").as_deref(), Some("tesla-k20"));
    let m = c.match_name("Tesla K20Xm").unwrap();
    assert_eq!(m.pattern, "Tesla K20X");
    assert!(m.ties.is_empty());
    // The name the oneAPI runtime gives an OFS-based Agilex 7 board; the
    // platform part is every OFS board's and matches none alone.
    assert_eq!(
        id("ofs_n6001 : Intel OFS Platform (ofs_ee00000)").as_deref(),
        Some("intel-n6001")
    );
    assert_eq!(
        id("ofs_iseries-dk : Intel OFS Platform (ofs_ee00000)"),
        None
    );
    let n6001 = c.get("intel-n6001").unwrap();
    assert_eq!(n6001.class, DeviceClass::Fpga);
    assert_eq!(n6001.datasheet.memory_bandwidth_bytes_per_s(), Some(38.4e9));
    assert_eq!(n6001.datasheet.fp32_ops_per_s(), None);
    // The PoCL CPU device of a generic virtual machine has no datasheet.
    assert!(c
        .match_name("pthread-skylake-avx512-Intel(R) Xeon(R) Processor")
        .is_none());
}

#[test]
fn a_user_directory_adds_and_overrides_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let k20 = "model = \"NVIDIA Tesla K20 (site-measured)\"\nvendor = \"NVIDIA\"\ntype = \"gpu\"\n\
               match = [\"Tesla K20\"]\n\n[datasheet]\nmemory_bandwidth_gbs = { value = 200, source = \"our lab\" }\n";
    std::fs::write(dir.path().join("tesla-k20.toml"), k20).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a profile").unwrap();
    let c = ProfileCatalog::load(Some(dir.path())).unwrap();
    assert_eq!(c.profiles().len(), catalog().profiles().len());
    let p = c.get("tesla-k20").unwrap();
    assert_eq!(p.model, "NVIDIA Tesla K20 (site-measured)");
    assert_eq!(
        p.origin,
        ProfileOrigin::File(dir.path().join("tesla-k20.toml"))
    );
    assert_eq!(p.datasheet.memory_bandwidth_bytes_per_s(), Some(200e9));
    assert_eq!(c.user_dir(), Some(dir.path()));
}

#[test]
fn a_malformed_profile_names_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.toml");
    std::fs::write(
        &path,
        "model = \"Board\"\nvendor = \"V\"\ntype = \"gpu\"\nmatch = [\"Board\"]\n\n[datasheet]\n\
         fp32_gflops = { value = 10, source = \"sheet\" }\nfp32_tflops = { value = 1, source = \"sheet\" }\n",
    )
    .unwrap();
    let err = ProfileCatalog::load(Some(dir.path())).unwrap_err();
    assert!(
        matches!(err, DevicesError::Profile { line: 8, .. }),
        "{err:?}"
    );
    assert!(err.to_string().starts_with(&format!(
        "{}:8: unknown field `fp32_tflops` in [datasheet]",
        path.display()
    )));
    assert_eq!(err.kind(), FailureKind::Input);
    let missing = ProfileCatalog::load(Some(&dir.path().join("nope"))).unwrap_err();
    assert!(matches!(missing, DevicesError::ProfileDir { .. }));
}
